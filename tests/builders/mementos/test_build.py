"""The Mementos builder end to end: demo build (re-derived from the raw event scripts), determinism, the paper's
sources in their real formats (NExT-QA CSV + videos, robot frame folders, comic panels), skip/fail on unreadable
videos, the offline QA merge rules, and the LLM path through a loopback OpenAI-compatible stub."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path
from typing import Callable

import numpy as np
import pytest
from PIL import Image

from builders import mementos
from builders.mementos.builder import image_name
from builders.mementos.config import Draft
from builders.items import read_items
from builders.mementos.descriptions import declarative, gerund, template_merge, third_person
from filters.text import normalise_keyword
from sources.demo.video import load_demo_videos
from sources.records import VideoRecord
from sources.video_backends import have_opencv, write_video
from tests.builders.shown_checker import COLOURS, ShownChecker, event_of, events_of, missing, sentences
from tests.conftest import have, in_ci, require

QUESTION = "Write a description for the given image sequence in a single paragraph, what is happening in this episode?"


def run(tmp_path: Path, *args: str, cache: Path | None = None) -> int:
    return mementos.main(["--out", str(tmp_path / "out"), "--cache-dir", str(cache or tmp_path / "cache"),
                          "--no-progress", *args])


@pytest.fixture(scope="module")
def demo_build(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("mementos-demo")
    assert mementos.main(["--out", str(root / "out"), "--cache-dir", str(root / "cache"), "--demo-videos", "4",
                          "--no-progress"]) == 0
    return root / "out" / "demo-seed0", root / "cache"


def _frames_of(build: Path, item) -> Callable[[int], np.ndarray]:
    by_index = dict(zip(item.provenance["frame_indices"], item.images))
    return lambda t: np.asarray(Image.open(build / by_index[t]).convert("RGB"))


def test_demo_build_items_rederived_from_the_scripts(demo_build: tuple[Path, Path]) -> None:
    build, cache = demo_build
    items = read_items(build / "items.jsonl")
    raw = {r.id: r for r in load_demo_videos(seed=0, n_videos=4, cache_dir=cache)}
    assert len(items) == 4
    for it in items:
        rec = raw[it.provenance["video_id"]]
        # independent checker: every sentence states a script event that the build's own images show
        check = ShownChecker(rec.meta, it.provenance["frame_indices"], _frames_of(build, it))
        assert check.problems(it.answer) == [] and missing(check, it.answer) == [], it.id
        stated = [event_of(s, rec.meta) for s in sentences(it.answer)[1:]]
        assert stated and all(stated)
        lemma = {"appears": "appear", "disappears": "disappear", "moves": "move", "jumps": "jump",
                 "rotates": "rotate", "grows": "grow", "shrinks": "shrink", "collides with": "collide"}
        seen = [c["category"] for c in rec.meta["cast"] if any(check.seen(c["name"], i) for i in check.indices)]
        assert it.provenance["keywords"] == {"objects": list(dict.fromkeys(seen)),
                                             "behaviours": list(dict.fromkeys(lemma[e["action"]] for e in stated))}
        assert (it.benchmark, it.task, it.question_type, it.pressure) == ("mementos", "daily_life", "description", "easy")
        assert it.question == QUESTION and it.options == ()
        assert it.provenance["policy"] == "uniform:8" and len(it.images) == 8
        n = rec.frame_count
        assert it.provenance["frame_indices"] == [(2 * k * (n - 1) + 7) // 14 for k in range(8)]
        for rel, idx in zip(it.images, it.provenance["frame_indices"]):
            assert rel.startswith("images/") and rel.endswith(f"-f{idx:06d}.png")
            assert (build / rel).is_file()
            Image.open(build / rel).verify()
        assert it.provenance["episode_length"] == len(it.provenance["keywords"]["behaviours"])
    record = json.loads((build / "build.json").read_text())
    assert record["benchmark"] == "mementos" and record["items"] == 4 and record["skipped"] == []
    assert record["stats"]["generated_sources"] == ["demo"]
    assert record["stats"]["descriptions"] == {"script (shown frames)": 4}


def test_checker_catches_an_event_the_frames_do_not_show(demo_build: tuple[Path, Path]) -> None:
    """A sentence of the script whose event happens between the sampled frames (or is there in no frame) is
    caught, as is an opening that names a shape the first frame does not hold."""
    build, cache = demo_build
    raw = {r.id: r for r in load_demo_videos(seed=0, n_videos=4, cache_dir=cache)}
    planted = left_out = 0
    for it in read_items(build / "items.jsonl"):
        rec = raw[it.provenance["video_id"]]
        # judged against every other frame, some events of the script happen between the frames given
        check = ShownChecker(rec.meta, it.provenance["frame_indices"][::2], _frames_of(build, it))
        for sentence in rec.meta["description"][1:]:
            same = events_of(sentence, rec.meta)  # a routine says the same sentence for each of its steps
            if same and not any(check.shows(x) for x in same):
                assert check.problems(sentence, opening=False) == [f"{sentence!r} does not show in frames "
                                                                   f"{check.indices}"]
                planted += 1
        # the other way: a visible move or size change left out of the description is missed
        full = ShownChecker(rec.meta, it.provenance["frame_indices"], _frames_of(build, it))
        said = sentences(it.answer)
        for k, sentence in enumerate(said[1:], 1):
            e = event_of(sentence, rec.meta)
            if e is not None and e["action"] in ("moves", "grows", "shrinks", "appears", "disappears"):
                found = missing(full, " ".join(said[:k] + said[k + 1:]))
                if e["action"] in ("appears", "disappears") or found:
                    assert any(e["object"] in p for p in found), (it.id, sentence)
                    left_out += 1
        # the same event, judged against only the first and last frames, mostly does not show
        ends = ShownChecker(rec.meta, it.provenance["frame_indices"][:1], _frames_of(build, it))
        assert ends.problems(it.answer), it.id
        ghost = f"At the start, there is a {next(iter(COLOURS))} heptagon."
        assert check.problems(ghost + " " + " ".join(sentences(it.answer)[1:]))
    assert planted >= 1 and left_out >= 4


def test_rerun_is_byte_identical(demo_build: tuple[Path, Path], tmp_path: Path) -> None:
    build, cache = demo_build
    # same cache (frames read back) and a fresh cache (rendered and sampled again) give the same bytes
    for c in (cache, tmp_path / "fresh"):
        assert run(tmp_path, "--demo-videos", "4", "--name", "again", cache=c) == 0
        assert (tmp_path / "out" / "again" / "items.jsonl").read_bytes() == (build / "items.jsonl").read_bytes()
        assert sorted(p.name for p in (tmp_path / "out" / "again" / "images").iterdir()) == \
            sorted(p.name for p in (build / "images").iterdir())


def test_build_function_and_config_file(tmp_path: Path) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text("demo_videos: 2\npolicy: robotics\nseed: 3\n")
    assert run(tmp_path, "--config", str(cfg)) == 0
    items = read_items(tmp_path / "out" / "demo-seed3" / "items.jsonl")
    assert len(items) == 2 and {it.provenance["policy"] for it in items} == {"robotics"}
    stats: dict = {}
    config = mementos.MementosConfig(demo_videos=2, policy="robotics", seed=3, cache_dir=str(tmp_path / "cache"),
                                     progress=False)
    assert [it.id for it in sorted(mementos.build(config, stats), key=lambda i: i.id)] == [it.id for it in items]
    assert stats["items"] == 2


@pytest.mark.parametrize(("args", "message"), [
    (["--nextqa", "x.csv"], "--nextqa and --videos go together"),
    (["--policy", "every_other"], "unknown frame-sampling policy 'every_other'"),
    (["--on-error", "ignore"], None),
])
def test_bad_options_are_one_line_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str],
                                         message: str | None) -> None:
    if message is None:  # argparse rejects the choice itself
        with pytest.raises(SystemExit):
            run(tmp_path, *args)
        return
    assert run(tmp_path, *args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]


# --------------------------------------------------------------------------------- the paper's sources


def frame(i: int, size: int = 32) -> np.ndarray:
    img = np.zeros((size, size, 3), np.uint8)
    img[:, :, 0] = (i * 7) % 256
    img[: size // 2, :, 1] = 200
    return img


def write_nextqa(root: Path, videos: dict[str, int]) -> Path:
    """A NExT-QA CSV and its videos (mp4v .mp4, ``frames`` frames each), in the release's columns."""
    (root / "videos").mkdir(parents=True)
    rows = []
    qa = [("what is the man doing", "holding a cup"), ("what did the man do after drinking", "put the cup down")]
    for vid, frames in videos.items():
        if frames:
            write_video(root / "videos" / f"{vid}.mp4", (frame(i) for i in range(frames)), 30.0, "mp4v")
        else:
            (root / "videos" / f"{vid}.mp4").write_bytes(b"not a video at all")
        for n, (q, a) in enumerate(qa):
            rows.append({"video": vid, "frame_count": max(frames, 1), "width": 32, "height": 32, "question": q,
                         "answer": 1, "qid": n, "type": "TC", "a0": "nothing", "a1": a, "a2": "x", "a3": "y", "a4": "z"})
    with open(root / "val.csv", "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return root / "val.csv"


def write_folder(root: Path, n: int, description: str | None) -> Path:
    root.mkdir(parents=True)
    for i in range(n):
        Image.fromarray(frame(i)).save(root / f"frame{i}.png")
    if description:
        (root / "description.txt").write_text(description)
    return root


def test_paper_sources_offline(tmp_path: Path) -> None:
    require(have_opencv(), "OpenCV", "bash .ci/install")
    csv_path = write_nextqa(tmp_path / "nextqa", {"1001": 401, "1002": 100, "1003": 0})
    write_folder(tmp_path / "robot" / "ep_0", 25, "The robot arm picks up the cup and places it on the table.")
    write_folder(tmp_path / "robot" / "ep_1", 25, None)
    write_folder(tmp_path / "comics" / "c1", 3, "A cat chases a mouse and the mouse hides in a box.")
    sidecar = tmp_path / "comics" / "c1" / "description.txt.authors.json"  # as `annotation author pull` writes it
    sidecar.write_text(json.dumps({"authors": {"description.txt": "writer@mirage.test"}}))
    assert run(tmp_path, "--nextqa", str(csv_path), "--videos", str(tmp_path / "nextqa" / "videos"),
               "--robot", str(tmp_path / "robot"), "--comics", str(tmp_path / "comics")) == 0
    build = tmp_path / "out" / "data-seed0"
    items = {it.provenance["video_id"]: it for it in read_items(build / "items.jsonl")}
    assert set(items) == {"1001", "ep_0", "c1"}

    daily = items["1001"]
    assert daily.task == "daily_life" and daily.provenance["frame_indices"] == [0, 100, 200, 300, 400]
    assert daily.answer == "The man is holding a cup. The man puts the cup down after drinking."
    assert daily.provenance["description_from"] == "qa_template" and daily.provenance["needs_review"]
    assert daily.provenance["qa_ids"] == ["0", "1"]
    assert daily.provenance["keywords"] == {"objects": ["man", "cup"], "behaviours": ["hold", "put down"]}
    assert daily.provenance["keywords_from"].startswith("spacy:")

    robot = items["ep_0"]
    assert robot.task == "robotics" and robot.provenance["frame_indices"] == [0, 5, 10, 15, 20]
    assert robot.provenance["keywords"]["objects"] == ["robot arm", "cup", "table"]
    assert [normalise_keyword(b) for b in robot.provenance["keywords"]["behaviours"]] == ["pick up", "place"]

    comic = items["c1"]
    assert comic.task == "comics" and comic.provenance["policy"] == "panels"
    assert comic.provenance["author"] == "writer@mirage.test" and "author" not in robot.provenance
    # the user's panels stay where they are, named relative to the build folder (it can move with them)
    assert tuple((build / p).resolve() for p in comic.images) == tuple(
        (tmp_path / "comics" / "c1" / f"frame{i}.png").resolve() for i in range(3))

    record = json.loads((build / "build.json").read_text())
    skipped = {(s["video"], s["stage"]): s["reason"] for s in record["skipped"]}
    assert "outside the daily-life range" in skipped[("1002", "frames")]
    assert ("1003", "frames") in skipped
    assert "no description" in skipped[("ep_1", "description")]
    assert record["input_hashes"][str(csv_path)].startswith("sha256:")
    # every copied frame is in images/, comic panels are not copied
    assert len(list((build / "images").iterdir())) == 5 + 5


def test_unreadable_video_fails_with_on_error_fail(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    require(have_opencv(), "OpenCV", "bash .ci/install")
    csv_path = write_nextqa(tmp_path / "nextqa", {"2001": 0})
    args = ["--nextqa", str(csv_path), "--videos", str(tmp_path / "nextqa" / "videos")]
    assert run(tmp_path, *args, "--on-error", "fail") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error:") and "2001.mp4" in err[0]
    assert run(tmp_path, *args) == 2  # skipped, so nothing is left to build
    assert "produced no items" in capsys.readouterr().err
    assert not (tmp_path / "out" / "data-seed0").exists()


def test_llm_writes_descriptions_from_frames_and_keywords(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    require(have_opencv(), "OpenCV", "bash .ci/install")
    try:
        import openai  # noqa: F401
    except ImportError:
        require(False, "openai")
    from tests.support.openai_stub import StubOpenAI

    def responder(body: dict) -> str:
        content = body["messages"][0]["content"]
        if isinstance(content, list):  # the merge prompt, with the frames
            assert content[0]["text"].startswith("Write a description for this image based on the following")
            assert "Question: what is the man doing Answer: holding a cup" in content[0]["text"]
            images = [c for c in content if c["type"] == "image_url"]
            assert len(images) == 5 and images[0]["image_url"]["url"].startswith("data:image/jpeg;base64,")
            return "A man holds a cup, drinks, and puts it down."
        assert "Here is the paragraph:\n1. A man holds a cup, drinks, and puts it down." in content
        return "Object list 1: [man, cup]\nAction list 1: [hold, drink, put down]"

    csv_path = write_nextqa(tmp_path / "nextqa", {"3001": 401})
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with StubOpenAI(responder=responder) as stub:
        assert run(tmp_path, "--nextqa", str(csv_path), "--videos", str(tmp_path / "nextqa" / "videos"),
                   "--llm-base-url", stub.base_url, "--llm-model", "stub-model") == 0
    [it] = read_items(tmp_path / "out" / "data-seed0" / "items.jsonl")
    assert it.answer == "A man holds a cup, drinks, and puts it down."
    assert it.provenance["description_from"] == "qa_llm"
    assert it.provenance["keywords"] == {"objects": ["man", "cup"], "behaviours": ["hold", "drink", "put down"]}
    assert it.provenance["keywords_from"] == "llm:stub-model"


# ------------------------------------------------------------------------------------ offline QA merge


@pytest.mark.parametrize(("question", "answer", "sentence"), [
    ("what is the man doing", "playing guitar", "The man is playing guitar."),
    ("what did the lady do after the baby fell", "pick the baby up", "The lady picks the baby up after the baby fell."),
    ("why did the boy run to the door", "open it", "The boy runs to the door to open it."),
    ("why did the dog run away", "it was scared", "The dog runs away because it was scared."),
    ("how did the boy go down the slide", "sit down", "The boy goes down the slide by sitting down."),
    ("how many children are there in the video", "three", "There are three children in the video."),
    ("who is holding the baby", "the man in black", "The man in black is holding the baby."),
    ("what is the colour of the dog", "brown", "What is the colour of the dog? Brown."),
])
def test_declarative_rules(question: str, answer: str, sentence: str) -> None:
    from filters.text import NlpUnavailable, load_nlp

    try:
        nlp = load_nlp()
    except NlpUnavailable:
        require(False, "spaCy with an English model", "bash .ci/install-nlp.sh")
    assert declarative(question, answer, nlp) == sentence


def test_merge_without_spacy_and_inflection_rules() -> None:
    qa = [("what is the colour of the dog?", "brown"), ("what is the colour of the dog?", "brown"),
          ("how many dogs are there", "two")]
    assert template_merge(qa, nlp=None) == "What is the colour of the dog? Brown. There are two dogs."
    assert [third_person(w) for w in ("watch tv", "carry it", "pass", "play", "cries", "have fun")] == \
        ["watches tv", "carries it", "passes", "plays", "cries", "has fun"]
    assert [gerund(w) for w in ("sit down", "use it", "tie", "see", "play")] == \
        ["sitting down", "using it", "tying", "seeing", "playing"]


def test_image_names_are_unique_and_safe() -> None:
    seq = Draft("robot", VideoRecord("kitchen/ep 3", "robot", "f"), (), (), "robotics",
                             "frames", "ab" * 32, 0, None)
    assert image_name(seq, 7) == "kitchen_ep_3-abababab-f000007.png"
    assert re.fullmatch(r"[A-Za-z0-9_.-]+", image_name(seq, 0))


# ------------------------------------------------------------------------------- a build, then its scores


RENAMED = {"circle": "disc", "square": "box", "triangle": "wedge", "star": "asterisk", "heart": "badge",
           "hexagon": "nut", "diamond": "gem", "cross": "crucifix", "crescent": "moon", "pentagon": "plate",
           "ring": "hoop", "arrow": "pointer", "octagon": "tile", "trapezoid": "block"}
"""Another everyday noun for each demo shape category (sources.demo.world.CATEGORIES)."""


def test_scoring_a_demo_build(demo_build: tuple[Path, Path], tmp_path: Path) -> None:
    """The reference description as the prediction scores 1 (spaCy recovers the script's lists); renaming the
    objects loses them until a synonym graph maps the new names back to the human roots."""
    from filters.text import NlpUnavailable, load_nlp
    from scoring.__main__ import main as score_main
    from scoring.synonyms import SynonymGraph, graph_path

    try:
        load_nlp()
    except NlpUnavailable:
        require(False, "spaCy with an English model", "bash .ci/install-nlp.sh")
    build, _ = demo_build
    items = read_items(build / "items.jsonl")
    perfect = tmp_path / "perfect.jsonl"
    perfect.write_text("".join(json.dumps({"id": it.id, "prediction": it.answer}) + "\n" for it in items))
    def mementos(predictions: Path, out: str, *options: str) -> dict:
        """``mirage score mementos`` on the build: its results.json."""
        assert score_main(["mementos", "--release", str(build), "--predictions", str(predictions), "--out",
                           str(tmp_path / out), *options]) == 0
        return json.loads((tmp_path / out / "results.json").read_text())

    report = mementos(perfect, "r", "--no-plots")
    assert report["overall"]["n"] == len(items)
    # nearly every keyword is recovered: the small model sometimes reads a verb as a noun ("the square moves")
    for kind in ("objects", "behaviours"):
        assert min(report["overall"][kind]["recall"], report["overall"][kind]["precision"]) >= 0.75, kind

    renamed = tmp_path / "renamed.jsonl"
    graphs = tmp_path / "graphs"
    g = SynonymGraph("daily_life", "objects")
    lines = []
    for it in items:
        text = it.answer
        for obj in it.provenance["keywords"]["objects"]:
            text = re.sub(rf"\b{obj}\b", RENAMED[obj], text)
            g.add_edge(RENAMED[obj], obj)
        lines.append(json.dumps({"id": it.id, "prediction": text}) + "\n")
    renamed.write_text("".join(lines))
    g.save(graph_path(graphs, "daily_life", "objects"))
    assert mementos(renamed, "r2", "--no-plots")["overall"]["objects"]["recall"] == 0.0
    # CI installs matplotlib: there the figure is drawn, or the test fails
    plots: tuple[str, ...] = () if have("matplotlib") or in_ci() else ("--no-plots",)
    # every renamed object maps back to its root (precision may dip where the small model misparses a sentence)
    assert mementos(renamed, "r3", "--graphs", str(graphs), *plots)["overall"]["objects"]["recall"] == 1.0
    if not plots:
        Image.open(tmp_path / "r3" / "recall_by_episode.png").verify()


def test_scoring_reads_a_release(demo_build: tuple[Path, Path], tmp_path: Path) -> None:
    """A release made from the build (parquet, provenance as JSON strings) gives the scorer the same references."""
    try:
        import pyarrow  # noqa: F401
        import datasets  # noqa: F401
    except ImportError:
        require(False, "the release extra (datasets, pyarrow)")
    from data_cards.cli import main as release_main
    from scoring.mementos_inputs import read_reference

    build, _ = demo_build
    assert release_main(["release", str(build), "--version", "0.1.0", "--include-unreviewed",
                         "--out", str(tmp_path / "releases")]) == 0
    released = {r.id: r for r in read_reference(tmp_path / "releases" / "mementos" / "0.1.0")}
    built = {r.id: r for r in read_reference(build)}
    assert released == built


def test_max_videos_is_a_seeded_sample(tmp_path: Path) -> None:
    assert run(tmp_path, "--demo-videos", "6", "--max-videos", "3", "--name", "a") == 0
    assert run(tmp_path, "--demo-videos", "6", "--max-videos", "3", "--name", "b") == 0
    a = read_items(tmp_path / "out" / "a" / "items.jsonl")
    assert len(a) == 3
    assert (tmp_path / "out" / "a" / "items.jsonl").read_bytes() == (tmp_path / "out" / "b" / "items.jsonl").read_bytes()
    assert run(tmp_path, "--demo-videos", "6", "--max-videos", "3", "--seed", "1", "--name", "c") == 0
    assert len(read_items(tmp_path / "out" / "c" / "items.jsonl")) == 3


def test_a_missing_description_names_the_file_the_reader_reads(tmp_path: Path) -> None:
    """Issue 38: the message said "write description.txt beside it" where a video file's description is read
    from ``<video name>.txt``."""
    require(have_opencv(), "OpenCV", "bash .ci/install")
    robot = tmp_path / "robot"
    write_folder(robot / "ep_0", 25, "The robot arm picks up the cup and places it on the table.")
    write_folder(robot / "ep_1", 25, None)
    write_video(robot / "ep_2.mp4", (frame(i) for i in range(25)), 10.0, "mp4v")
    assert run(tmp_path, "--robot", str(robot)) == 0
    record = json.loads((tmp_path / "out" / "data-seed0" / "build.json").read_text())
    skipped = {s["video"]: s for s in record["skipped"] if s["stage"] == "description"}
    assert skipped["ep_2"]["file"] == str(robot / "ep_2.txt")
    assert skipped["ep_2"]["reason"] == "no description (write <video name>.txt beside the video)"
    assert skipped["ep_1"]["file"] == str(robot / "ep_1" / "description.txt")
    assert skipped["ep_1"]["reason"] == "no description (write description.txt in its folder)"
    # what the message names is what the reader reads: written there, the video is described
    (robot / "ep_2.txt").write_text("The robot arm pushes the cup across the table.")
    assert run(tmp_path, "--robot", str(robot), "--name", "again") == 0
    items = read_items(tmp_path / "out" / "again" / "items.jsonl")
    assert {it.provenance["video_id"] for it in items} == {"ep_0", "ep_2"}


def test_a_second_decoder_decodes_again_and_is_recorded(tmp_path: Path) -> None:
    """Issue 38: ``--backend decord`` after an OpenCV build reused OpenCV's cached frames, recorded "opencv" and
    wrote items that differ from a clean decord build."""
    require(have_opencv(), "OpenCV", "bash .ci/install")
    from sources.video_backends import have_decord

    require(have_decord(), "decord", "bash .ci/install-video.sh")
    robot = tmp_path / "robot"
    robot.mkdir()
    write_video(robot / "ep_0.mp4", (frame(i) for i in range(25)), 10.0, "mp4v")
    (robot / "ep_0.txt").write_text("The robot arm picks up the cup and places it on the table.")
    shared, clean = tmp_path / "cache", tmp_path / "clean-cache"
    assert run(tmp_path, "--robot", str(robot), "--backend", "opencv", "--name", "cv", cache=shared) == 0
    assert run(tmp_path, "--robot", str(robot), "--backend", "decord", "--name", "after", cache=shared) == 0
    assert run(tmp_path, "--robot", str(robot), "--backend", "decord", "--name", "clean", cache=clean) == 0
    after, first = (read_items(tmp_path / "out" / n / "items.jsonl")[0] for n in ("after", "cv"))
    assert (first.provenance["backend"], after.provenance["backend"]) == ("opencv", "decord")
    assert ((tmp_path / "out" / "after" / "items.jsonl").read_bytes()
            == (tmp_path / "out" / "clean" / "items.jsonl").read_bytes())


def test_a_nearly_static_sequence_is_left_out(tmp_path: Path, spacy_model: None) -> None:
    """A robot episode whose sampled frames are mostly the same picture has nothing to describe: skipped with the
    count of equal consecutive frames; one in which two of four pairs are equal is kept."""
    still = tmp_path / "robot" / "ep_still"
    still.mkdir(parents=True)
    for i in range(25):  # the sampled frames 0, 5, 10, 15, 20: three equal pairs
        Image.fromarray(frame(0 if i < 20 else i)).save(still / f"frame{i}.png")
    (still / "description.txt").write_text("The robot arm waits, then picks up the cup.")
    moving = write_folder(tmp_path / "robot" / "ep_moving", 25, "The robot arm picks up the cup.")
    for i in range(15):  # two equal pairs
        Image.fromarray(frame(0)).save(moving / f"frame{i}.png")
    assert run(tmp_path, "--robot", str(tmp_path / "robot")) == 0
    build = tmp_path / "out" / "data-seed0"
    assert [it.provenance["video_id"] for it in read_items(build / "items.jsonl")] == ["ep_moving"]
    skipped = json.loads((build / "build.json").read_text())["skipped"]
    assert [(s["video"], s["reason"]) for s in skipped] == [
        ("ep_still", "3 of 4 consecutive sampled frames are the same: the sequence is nearly static")]
