"""Readers of video sources on small files in the real layouts: NExT-QA CSV + map, robot episodes, comics."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sources.comics import read_comics
from sources.errors import SourceError
from sources.nextqa import COLUMNS, read_nextqa
from sources.robot import read_robot_episodes
from sources.video import Robotics, Uniform, sample_video
from tests.sources.test_video import _png, frame_number, make_folder, make_video

# --- NExT-QA --------------------------------------------------------------------------------------------

ROWS = [
    # video, frame_count, width, height, question, answer, qid, type, a0..a4
    ["4010069381", "480", "96", "48", "why did the boy pick up the ball", "2", "4", "CW",
     "to eat it", "to sleep", "to throw it", "to hide", "to clean"],
    ["4010069381", "480", "96", "48", "what did the boy do after throwing", "0", "7", "TN",
     "run", "sit", "cry", "jump", "sing"],
    ["2435100235", "30", "96", "48", "how many dogs are there", "4", "1", "DC", "one", "two", "three", "four", "five"],
]


def _write_csv(path: Path, rows: list[list[str]], columns: tuple[str, ...] = COLUMNS) -> Path:
    import csv

    with open(path, "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(columns)
        writer.writerows(rows)
    return path


@pytest.fixture()
def nextqa(tmp_path):
    videos = tmp_path / "NExTVideo"
    (videos / "1022").mkdir(parents=True)
    (videos / "0001").mkdir()
    make_video(videos / "1022" / "4010069381.mp4", 480, fourcc="mp4v")
    make_video(videos / "0001" / "2435100235.mp4", 30, fourcc="mp4v")
    (tmp_path / "map_vid_vidorID.json").write_text(json.dumps({"4010069381": "1022/4010069381",
                                                               "2435100235": "0001/2435100235"}))
    return tmp_path, _write_csv(tmp_path / "val.csv", ROWS), videos


def test_nextqa_groups_questions_per_video(nextqa):
    root, csv_path, videos = nextqa
    records = read_nextqa(csv_path, videos)  # the map is found beside the CSV
    assert [r.id for r in records] == ["4010069381", "2435100235"]
    first = records[0]
    assert first.file == str(videos / "1022" / "4010069381.mp4") and first.source == "nextqa"
    assert (first.frame_count, first.width, first.height) == (480, 96, 48)
    assert [q["qid"] for q in first.meta["qa"]] == ["4", "7"] and first.meta["split"] == "val"
    assert first.meta["qa"][0] == {"qid": "4", "type": "CW", "question": "why did the boy pick up the ball",
                                   "options": ["to eat it", "to sleep", "to throw it", "to hide", "to clean"],
                                   "answer": 2, "answer_text": "to throw it"}
    assert records[1].meta["qa"][0]["answer_text"] == "five"
    assert read_nextqa(csv_path, videos, root / "map_vid_vidorID.json") == records
    sampled = sample_video(first, "daily_life", root / "cache")
    assert [frame_number(_png(f)) for f in sampled.frames] == [0, 100, 200, 300, 400]


@pytest.mark.parametrize("edit, message", [
    (lambda rows: [r[:5] + r[6:] for r in rows], "header: missing column(s): answer"),
    (lambda rows: [rows[0], rows[1][:5] + ["x"] + rows[1][6:]], "line 3 (qid=7): answer 'x' is not an integer"),
    (lambda rows: [rows[0][:5] + ["5"] + rows[0][6:]], "line 2 (qid=4): answer 5 is outside the option indices 0..4"),
    (lambda rows: [rows[0], rows[1][:1] + ["481"] + rows[1][2:]], "line 3 (qid=7): video 4010069381 has"),
    (lambda rows: [["999"] + rows[0][1:]], "line 2 (qid=4): video 999 is not in the video map"),
    (lambda rows: [rows[0][:1] + ["0"] + rows[0][2:]], "line 2 (qid=4): frame_count 0 is not positive"),
])
def test_nextqa_errors_name_file_row_and_problem(nextqa, edit, message):
    _, csv_path, videos = nextqa
    rows = edit([list(r) for r in ROWS])
    columns = COLUMNS if len(rows[0]) == len(COLUMNS) else COLUMNS[:5] + COLUMNS[6:]
    _write_csv(csv_path, rows, columns)
    with pytest.raises(SourceError) as error:
        read_nextqa(csv_path, videos)
    assert str(error.value).startswith(f"{csv_path}: ") and message in str(error.value)


def test_nextqa_missing_video_file_and_no_map(nextqa):
    root, csv_path, videos = nextqa
    (videos / "0001" / "2435100235.mp4").unlink()
    with pytest.raises(SourceError, match=r"line 4 \(qid=1\): video file not found: .*0001/2435100235\.mp4"):
        read_nextqa(csv_path, videos)
    (root / "map_vid_vidorID.json").unlink()  # no map: <videos_dir>/<video>.mp4
    make_video(videos / "4010069381.mp4", 5)
    make_video(videos / "2435100235.mp4", 5)
    assert [r.file for r in read_nextqa(csv_path, videos)] == [str(videos / "4010069381.mp4"),
                                                               str(videos / "2435100235.mp4")]


# --- robot episodes -------------------------------------------------------------------------------------


def test_robot_episodes_from_files_and_frame_folders(tmp_path):
    root = tmp_path / "robot"
    (root / "kitchen").mkdir(parents=True)
    make_video(root / "kitchen" / "ep10.avi", 25)
    make_video(root / "kitchen" / "ep2.mp4", 120, fourcc="mp4v")
    (root / "kitchen" / "ep2.txt").write_text("The robot arm picks up the cup.\n")
    make_folder(root / "lab" / "ep1", 22, pattern="{}.jpg")
    (root / "lab" / "ep1" / "description.txt").write_text("The gripper opens the drawer.")
    (root / "lab" / "notes.md").write_text("ignored")
    records = read_robot_episodes(root)
    assert [r.id for r in records] == ["kitchen/ep2", "kitchen/ep10", "lab/ep1"]
    assert records[0].meta == {"description": "The robot arm picks up the cup."}
    assert records[2].frame_count == 22 and records[2].meta["description"] == "The gripper opens the drawer."
    sampled = sample_video(records[2], Robotics(), tmp_path / "cache")  # jpg frames: lossy, the stamp survives
    assert [frame_number(_png(f)) for f in sampled.frames] == [0, 5, 10, 15, 20]
    assert [frame_number(_png(f)) for f in sample_video(records[0], Robotics(), tmp_path / "cache").frames] == \
        [k * 120 // 20 for k in range(20)]
    with pytest.raises(SourceError, match="no robot episodes found"):
        read_robot_episodes(_empty(tmp_path / "empty"))
    with pytest.raises(SourceError, match="robot episodes folder not found"):
        read_robot_episodes(tmp_path / "nowhere")


def _empty(path: Path) -> Path:
    path.mkdir()
    (path / "readme.txt").write_text("nothing here")
    return path


def test_lerobot_v2_layout(tmp_path):
    root = tmp_path / "lerobot"
    (root / "meta").mkdir(parents=True)
    (root / "meta" / "info.json").write_text(json.dumps({
        "codebase_version": "v2.1", "fps": 10,
        "video_path": "videos/chunk-{episode_chunk:03d}/{video_key}/episode_{episode_index:06d}.mp4"}))
    (root / "meta" / "episodes.jsonl").write_text(
        '{"episode_index": 0, "tasks": ["pick up the red block"], "length": 30}\n'
        '{"episode_index": 1, "tasks": ["open the drawer"], "length": 21}\n')
    for index, n in ((0, 30), (1, 21)):
        for camera in ("observation.images.wrist", "observation.images.top"):
            folder = root / "videos" / "chunk-000" / camera
            folder.mkdir(parents=True, exist_ok=True)
            make_video(folder / f"episode_{index:06d}.mp4", n, fps=10, fourcc="mp4v")
    records = read_robot_episodes(root)
    assert [r.id for r in records] == ["episode_000000/observation.images.top",
                                       "episode_000000/observation.images.wrist",
                                       "episode_000001/observation.images.top",
                                       "episode_000001/observation.images.wrist"]
    assert records[2].fps == 10.0 and records[2].meta == {
        "episode_index": 1, "camera": "observation.images.top", "layout": "lerobot v2.1",
        "tasks": ["open the drawer"], "length": 21}
    assert sample_video(records[2], Robotics(), tmp_path / "cache").indices == (0, 5, 10, 15, 20)


def test_lerobot_v3_is_refused_clearly(tmp_path):
    root = tmp_path / "lerobot3"
    (root / "meta").mkdir(parents=True)
    (root / "meta" / "info.json").write_text(json.dumps({"codebase_version": "v3.0", "fps": 30}))
    (root / "videos" / "observation.images.top" / "chunk-000").mkdir(parents=True)
    make_video(root / "videos" / "observation.images.top" / "chunk-000" / "file-000.mp4", 5, fourcc="mp4v")
    with pytest.raises(SourceError, match="LeRobot v3 stores several episodes per video file: not supported"):
        read_robot_episodes(root)


# --- comics ---------------------------------------------------------------------------------------------


def test_comics_in_natural_reading_order(tmp_path):
    root = tmp_path / "comics"
    make_folder(root / "comic10", 3, pattern="p{}.png")
    make_folder(root / "comic2", 11, pattern="panel{}.png")
    (root / "comic2" / "description.txt").write_text("A cat chases a mouse.")
    (root / "empty").mkdir()
    records = read_comics(root)
    assert [r.id for r in records] == ["comic2", "comic10"]
    panels = [Path(p).name for p in records[0].meta["panels"]]
    assert panels[:3] == ["panel0.png", "panel1.png", "panel2.png"] and panels[-1] == "panel10.png"
    assert records[0].frame_count == 11 and records[0].meta["description"] == "A cat chases a mouse."
    sampled = sample_video(records[0], Uniform(11), tmp_path / "cache")
    assert [frame_number(_png(f)) for f in sampled.frames] == list(range(11))
    make_folder(root / "single", 1)
    with pytest.raises(SourceError, match="single: a comic needs at least 2 panels, found 1"):
        read_comics(root)
    with pytest.raises(SourceError, match="comics folder not found"):
        read_comics(tmp_path / "none")
