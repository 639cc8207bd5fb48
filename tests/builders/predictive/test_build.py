"""``python -m builders.predictive`` end to end: the independent checker passes on demo builds (built-in and
user icons) and catches planted wrong answers and pixels; builds are byte-identical per seed; malformed icon
folders and authored files end in one line, exit status 2 and no build left behind."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Callable

import numpy as np
import pytest
from PIL import Image, ImageDraw

from builders import predictive
from builders.items import read_items
from sources.demo.video import load_demo_videos
from tests.builders.predictive import clip_checker
from tests.builders.predictive.checker import check_build, check_clips_against_scripts


def run(root: Path, *args: str) -> int:
    return predictive.main(["--out", str(root / "out"), "--cache-dir", str(root / "cache"), "--no-progress", *args])


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("predictive")
    assert run(root, "--patterns", "78", "--demo-videos", "14") == 0
    return root / "out" / "demo-seed0"


def test_demo_build_has_all_three_tasks_and_passes_the_checker(demo: Path) -> None:
    items = read_items(demo / "items.jsonl")
    tasks = {t: [i for i in items if i.task == t] for t in ("abstract_pattern", "human_activity", "physical_interaction")}
    assert len(tasks["abstract_pattern"]) == 78 and tasks["human_activity"] and tasks["physical_interaction"]
    assert all(i.benchmark == "predictive" and i.options == () and (demo / i.images[0]).is_file() for i in items)
    assert tasks["abstract_pattern"][0].question.startswith("As an artificial intelligence assistant")
    assert "collision course" in tasks["physical_interaction"][0].question
    assert check_build(demo) == []
    build = json.loads((demo / "build.json").read_text())
    assert build["stats"]["tasks"]["abstract_pattern"] == 78


def test_demo_build_lints_clean(demo: Path) -> None:
    """Issue 16: every builder's demo build lints clean (open references: wording, duplicates, contradictions)."""
    lint = json.loads((demo / "build.json").read_text())["lint"]
    assert lint["clean"] and lint["items"] == len(read_items(demo / "items.jsonl")), lint["findings"]


@pytest.fixture(scope="module")
def scripts(demo: Path) -> tuple[dict, Callable]:
    """The raw scripts of the demo videos and their decoded frames (every frame, read once)."""
    from sources.video import read_frames

    records = load_demo_videos(seed=0, n_videos=14, cache_dir=demo.parent.parent / "cache")
    decoded = {r.id: r for r in records}
    cache: dict[str, list] = {}

    def frames(video: str) -> Callable[[int], np.ndarray]:
        if video not in cache:
            rec = decoded[video]
            cache[video] = read_frames(rec.file, list(range(rec.frame_count)))
        return lambda t: np.asarray(cache[video][t])

    return {r.id: dict(r.meta) for r in records}, frames


def test_clips_rederived_from_the_demo_scripts(demo: Path, scripts: tuple[dict, Callable]) -> None:
    meta, frames = scripts
    assert check_clips_against_scripts(demo, meta, frames) == []
    problems, counted = clip_checker.check(demo, {v: m["cast"] for v, m in meta.items()})
    assert problems == [] and counted["human_activity"] >= 5 and counted["physical_interaction"] >= 5
    items = [json.loads(x) for x in (demo / "items.jsonl").read_text().splitlines()]
    physics = [i for i in items if i["task"] == "physical_interaction"]
    activity = [i for i in items if i["task"] == "human_activity"]
    assert "people" not in activity[0]["question"] and "shapes" in activity[0]["question"]
    assert len({i["provenance"]["cue"]["kind"] for i in activity}) >= 4
    assert all(i["provenance"]["cue"]["said"].startswith("The ") for i in activity)
    assert len({i["answer"].split(".")[0].split(" ", 3)[-1] for i in physics}) >= 3


def _plant(demo: Path, tmp_path: Path, change: Callable[[dict], bool]) -> tuple[Path, str]:
    """A copy of the build with ``change`` applied to the first item it accepts (returns True for)."""
    build = _copy(demo, tmp_path)
    lines = (build / "items.jsonl").read_text().splitlines()
    for n, line in enumerate(lines):
        item = json.loads(line)
        if change(item):
            lines[n] = json.dumps(item)
            (build / "items.jsonl").write_text("\n".join(lines) + "\n")
            return build, item["id"]
    raise AssertionError("no item to plant a fault in")


def _swap_shapes(item: dict) -> bool:
    if item["task"] != "physical_interaction":
        return False
    hit = item["provenance"]["held_out_events"][0]
    item["answer"] = item["answer"].replace(hit["object"], "X").replace(hit["target"], hit["object"]) \
        .replace("X", hit["target"])
    return True


def _random_outcome(item: dict) -> bool:
    """The outcome drawn at random, as the old builder did: a steady collision course said to stop short."""
    if item["task"] != "physical_interaction" or "collides with" not in item["answer"]:
        return False
    hit = item["provenance"]["held_out_events"][0]
    item["answer"] = (f"The {hit['object']} slows down moving {clip_checker.way(hit.get('direction', 'left'))} and "
                      f"stops before it reaches the {hit['target']}: they do not collide.")
    return True


@pytest.mark.parametrize("fault", ["swapped shapes", "random outcome", "uncued next event", "seen event"])
def test_planted_golds_are_caught(demo: Path, scripts: tuple[dict, Callable], tmp_path: Path, fault: str) -> None:
    meta, _ = scripts
    casts = {v: m["cast"] for v, m in meta.items()}

    def uncued(item: dict) -> bool:
        """A later scripted event with no cue in the context (a jump or a turn after the routine), said as next."""
        if item["task"] != "human_activity":
            return False
        cut = item["provenance"]["frame_indices"][-1]
        later = [e for e in meta[item["provenance"]["video_id"]]["events"]
                 if e["action"] in ("jumps", "rotates") and e["start"] > cut]
        if not later:
            return False
        e = later[0]
        item["answer"] = f"The {e['object']} {e['action']}{' ' + e['direction'] if 'direction' in e else ''}."
        return True

    def seen(item: dict) -> bool:
        """An event the context already showed, said as the prediction."""
        if item["task"] != "human_activity":
            return False
        shown = [s for s in item["provenance"]["context_captions"][1:] if not s.endswith("appears.")]
        if not shown or shown[-1] == item["answer"]:
            return False
        item["answer"] = shown[-1]
        return True

    change = {"swapped shapes": _swap_shapes, "random outcome": _random_outcome, "uncued next event": uncued,
              "seen event": seen}[fault]
    build, planted = _plant(demo, tmp_path, change)
    problems, _ = clip_checker.check(build, casts)
    assert [p for p in problems if p.startswith(planted)] and all(p.startswith(planted) for p in problems)


def test_a_planted_invisible_prediction_is_caught(demo: Path, scripts: tuple[dict, Callable], tmp_path: Path) -> None:
    """A held-out event that starts at the cut but whose effect the frames after it do not show (a jump judged
    without its middle frame: the same test with the middle frame left out) is caught by the pixel checker."""
    from tests.builders.shown_checker import ShownChecker

    meta, frames = scripts
    jumps = [(vid, e) for vid, m in meta.items() for e in m["events"] if e["action"] == "jumps"]
    assert jumps
    vid, e = jumps[0]
    assert not ShownChecker(meta[vid], [e["start"] - 1, e["end"]], frames(vid)).shows(e)
    assert ShownChecker(meta[vid], [e["start"] - 1, (e["start"] + e["end"]) // 2, e["end"]], frames(vid)).shows(e)


def _copy(demo: Path, tmp_path: Path) -> Path:
    out = tmp_path / "copy"
    shutil.copytree(demo, out)
    return out


def _rewrite(build: Path, scenario: str, change) -> str:
    lines = (build / "items.jsonl").read_text().splitlines()
    for n, line in enumerate(lines):
        item = json.loads(line)
        if item["provenance"].get("scenario") == scenario:
            change(item)
            lines[n] = json.dumps(item)
            break
    (build / "items.jsonl").write_text("\n".join(lines) + "\n")
    return item["id"]


def test_checker_catches_a_wrong_prediction(demo: Path, tmp_path: Path) -> None:
    build = _copy(demo, tmp_path)

    def wrong(item: dict) -> None:
        item["answer"] = item["provenance"]["pred"] = item["answer"].replace("there will be", "there will be 1")

    changed = _rewrite(build, "quantity/increase", wrong)
    assert check_build(demo, {changed}) == []
    assert any("pred does not say" in p for p in check_build(build, {changed}))


def test_checker_catches_wrong_pixels(demo: Path, tmp_path: Path) -> None:
    build = _copy(demo, tmp_path)
    items = [json.loads(x) for x in (build / "items.jsonl").read_text().splitlines()]
    by = {i["provenance"].get("scenario"): i for i in items}
    # a rotation shown in the wrong order, an icon nudged one square, a clock digit changed
    a, b = by["rotation/clockwise"]["images"][1:3]
    (build / a).rename(build / "tmp.png"); (build / b).rename(build / a); (build / "tmp.png").rename(build / b)
    path = build / by["motion/uniform"]["images"][0]
    img = np.asarray(Image.open(path).convert("RGB")).copy()
    img = np.roll(img, 40, axis=1)
    Image.fromarray(img).save(path)
    clock = build / by["games/digital_clock"]["images"][0]
    draw = Image.open(clock).convert("RGB")
    ImageDraw.Draw(draw).rectangle((0, 40, 319, 120), fill=(255, 255, 255))
    draw.save(clock)
    problems = check_build(build, {by[s]["id"] for s in ("rotation/clockwise", "motion/uniform", "games/digital_clock")})
    assert any("rotation/clockwise" in p and "not turned" in p for p in problems)
    assert any("motion/uniform" in p for p in problems)
    assert any("digital_clock" in p and "segment" in p for p in problems)


def test_same_seed_same_bytes_other_seed_other_items(tmp_path: Path) -> None:
    for name in ("a", "b"):
        assert run(tmp_path / name, "--tasks", "abstract_pattern", "--patterns", "60") == 0
    first, second = (tmp_path / n / "out" / "demo-seed0" for n in ("a", "b"))
    assert (first / "items.jsonl").read_bytes() == (second / "items.jsonl").read_bytes()
    digest = lambda d: sorted(hashlib.sha256(p.read_bytes()).hexdigest() for p in (d / "images").iterdir())
    assert digest(first) == digest(second)
    assert run(tmp_path / "c", "--tasks", "abstract_pattern", "--patterns", "60", "--seed", "3") == 0
    other = read_items(tmp_path / "c" / "out" / "demo-seed3" / "items.jsonl")
    shared = {i.id for i in other} & {i.id for i in read_items(first / "items.jsonl")}
    assert len(shared) <= 3  # scenarios with few random factors (a clock hand) may draw the same sequence again


def icon_folder(root: Path, categories: dict[str, str] | None = None) -> Path:
    """An Icon645-style folder: category folders of RGBA PNG icons (a lopsided blob per category)."""
    root.mkdir(parents=True)
    for k, (cat, colour) in enumerate((categories or {"sail_boat": "#1f6fd0", "umbrella": "#d02f6f",
                                                       "hot-air balloon": "#2fa040"}).items()):
        (root / cat).mkdir()
        img = Image.new("RGBA", (64, 48), (0, 0, 0, 0))
        d = ImageDraw.Draw(img)
        d.polygon([(4, 4), (60, 10 + 4 * k), (40, 44), (10, 30)], fill=colour)
        d.rectangle((6, 6, 14, 14), fill="#202020")
        img.save(root / cat / f"{cat}_1.png")
    return root


def test_user_icons_build_and_pass_the_checker(tmp_path: Path) -> None:
    icons = icon_folder(tmp_path / "icons")
    assert run(tmp_path, "--tasks", "abstract_pattern", "--patterns", "52", "--icons", str(icons)) == 0
    build = tmp_path / "out" / "demo-seed0"
    items = read_items(build / "items.jsonl")
    texts = " ".join(i.provenance["pattern"] for i in items)
    assert "sail boat" in texts and "hot air balloon" in texts
    assert check_build(build) == []


def _fails(tmp_path: Path, capsys: pytest.CaptureFixture[str], *args: str) -> str:
    assert run(tmp_path, "--tasks", "abstract_pattern", "--patterns", "26", *args) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and err.startswith("error: ")
    assert not (tmp_path / "out" / "demo-seed0").exists() and not (tmp_path / "out" / "demo-seed0.partial").exists()
    return err


def test_malformed_icon_folders(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert "Icon645 layout" in _fails(tmp_path / "a", capsys, "--icons", str(tmp_path / "missing"))
    one = icon_folder(tmp_path / "one", {"kite": "#ff0000"})
    assert "at least 2" in _fails(tmp_path / "b", capsys, "--icons", str(one))
    empty = icon_folder(tmp_path / "empty")
    (empty / "blank").mkdir()
    assert "blank: category folder has no PNG icons" in _fails(tmp_path / "c", capsys, "--icons", str(empty))
    opaque = icon_folder(tmp_path / "opaque")
    Image.new("RGB", (32, 32), (10, 200, 10)).save(opaque / "umbrella" / "umbrella_1.png")
    assert "no transparency" in _fails(tmp_path / "d", capsys, "--icons", str(opaque))
    broken = icon_folder(tmp_path / "broken")
    (broken / "sail_boat" / "sail_boat_1.png").write_bytes(b"\x89PNG not really")
    assert "sail_boat_1.png: not a readable PNG icon" in _fails(tmp_path / "e", capsys, "--icons", str(broken))


def authored_file(root: Path, records: list[dict]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for k in range(5):
        Image.new("RGB", (40, 40), (40 * k, 90, 200)).save(root / f"cube{k}.png")
    path = root / "authored.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n")
    return path


GOOD = {"id": "cube", "images": ["cube0.png", "cube1.png", "cube2.png", "cube3.png"],
        "pattern": "Each of these four images has a blue cube in it. The volume of the cube is decreasing.",
        "pred": "In the next image, the volume of the cube will be further reduced.", "dimension": "properties"}


def test_authored_entries_become_items(tmp_path: Path) -> None:
    path = authored_file(tmp_path / "auth", [GOOD])
    assert run(tmp_path, "--tasks", "abstract_pattern", "--patterns", "0", "--authored", str(path)) == 0
    items = read_items(tmp_path / "out" / "demo-seed0" / "items.jsonl")
    assert len(items) == 1 and items[0].answer == GOOD["pred"] and items[0].provenance["source"] == "authored"
    assert items[0].provenance["pattern"] == GOOD["pattern"] and len(items[0].images) == 4
    assert all((tmp_path / "out" / "demo-seed0" / rel).is_file() for rel in items[0].images)
    assert items[0].provenance["files"] == GOOD["images"]  # as the file gives them: the same wherever it lies
    assert "author" not in items[0].provenance  # no sidecar, no recorded author


def test_the_author_recorded_beside_the_authored_file_lands_in_provenance(tmp_path: Path) -> None:
    other = {**GOOD, "id": "other", "images": [*GOOD["images"][1:], "cube4.png"]}
    path = authored_file(tmp_path / "auth", [GOOD, other])
    Path(str(path) + ".authors.json").write_text(json.dumps({"authors": {"cube": "pwriter@mirage.test"}}))
    assert run(tmp_path, "--tasks", "abstract_pattern", "--patterns", "0", "--authored", str(path)) == 0
    items = read_items(tmp_path / "out" / "demo-seed0" / "items.jsonl")
    assert {it.provenance["authored_id"]: it.provenance.get("author") for it in items} == {
        "cube": "pwriter@mirage.test", "other": None}


@pytest.mark.parametrize("change, message", [
    ({"pred": ""}, "'pred' must be a non-empty string"),
    ({"images": ["cube0.png", "cube1.png"]}, "2 images; an entry has 3 to 5"),
    ({"images": ["cube0.png", "cube1.png", "nope.png"]}, "nope.png not found"),
    ({"colour": "blue"}, "unknown key(s) colour"),
    ({"dimension": "time"}, "dimension 'time' is not one of"),
])
def test_malformed_authored_entries(tmp_path: Path, capsys: pytest.CaptureFixture[str], change: dict,
                                    message: str) -> None:
    path = authored_file(tmp_path / "auth", [{**GOOD, "id": "ok"}, {**GOOD, **change}])
    err = _fails(tmp_path, capsys, "--authored", str(path))
    assert "authored.jsonl: line 2 (id=cube)" in err and message in err


def test_authored_file_not_json_and_duplicate_ids(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = authored_file(tmp_path / "auth", [GOOD, GOOD])
    assert "line 2 (id=cube): duplicate id (first on line 1)" in _fails(tmp_path / "a", capsys, "--authored", str(path))
    copy = tmp_path / "auth" / "copy.png"  # another file of the same bytes is the same image
    copy.write_bytes((tmp_path / "auth" / "cube0.png").read_bytes())
    authored_file(tmp_path / "auth", [GOOD, {**GOOD, "id": "again", "images": ["copy.png", *GOOD["images"][1:]]}])
    assert "line 2 (id=again): the same images as line 1 (id=cube): the two would be one item" in _fails(
        tmp_path / "c", capsys, "--authored", str(path))
    path.write_text('{"id": "x", \n')
    assert "line 1: not valid JSON" in _fails(tmp_path / "b", capsys, "--authored", str(path))
