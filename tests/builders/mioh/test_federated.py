"""MIOH on federated (PACO) and open-vocabulary (SVG) sources: absent is not unannotated (issue 19).

Builds from the full documented PACO layout and from SVG scene graphs (alone, and verified by an overlapping COCO
file) must pass the independent checker, which reads the raw files itself; no item may rest on the absence of a
category nobody verified; and a builder that takes unannotated for absent must be caught.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from builders import mioh
from builders.mioh import rules
from tests.builders.mioh.checker import Checker, paco_truth, svg_truth
from tests.fixtures.real_formats import make_coco_for_svg, make_paco, make_svg

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

ARGS = ("--n-images", "2", "--n-questions", "2", "--no-progress")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    root = tmp_path_factory.mktemp("federated")
    return make_paco(root / "paco"), make_svg(root / "svg"), make_coco_for_svg(root / "coco")


def build(out: Path, *argv: str) -> tuple[list[dict], dict]:
    assert mioh.main([*argv, *ARGS, "--out", str(out)]) == 0
    path = out / "n2-seed0"
    items = [json.loads(line) for line in (path / "items.jsonl").read_text().splitlines()]
    return items, json.loads((path / "build.json").read_text())


def paco_args(paco) -> tuple[str, ...]:
    return ("--paco", str(paco.annotations), "--paco-images", str(paco.images_dir))


def svg_args(svg, coco=None) -> tuple[str, ...]:
    verify = ("--verify-absence-with", str(coco.annotations)) if coco is not None else ()
    return ("--svg", str(svg.annotations), "--svg-images", str(svg.images_dir), *verify)


def disagreements(checker: Checker, items: list[dict]) -> dict[str, list[str]]:
    return {it["id"]: p for it in items if (p := checker.check(it))}


def unverified_negatives(checker: Checker, items: list[dict]) -> list[tuple[str, str, object]]:
    """(item, image, probe) where an item labels an image negative for a category that is neither annotated nor
    verified absent there (attributes: verified by either pass)."""
    bad = []
    for it in items:
        task, probe = it["task"], it["provenance"]["probe"]
        cats = [probe[1]] if task == "attribute" else [probe[0], probe[2]] if task == "position" else [probe]
        for entry in it["provenance"]["images"]:
            if entry.get("label") != "neg":
                continue
            img = checker.images[entry["id"]]
            missing = [c for c in cats if not checker._objs(img, c)]
            if missing and not any(checker.verified_absent(img, c, task == "attribute") for c in missing):
                bad.append((it["id"], entry["id"], probe))
    return bad


# ------------------------------------------------------------------------------------------------------ PACO


@pytest.fixture(scope="module")
def paco_build(files, tmp_path_factory):
    paco, _, _ = files
    return build(tmp_path_factory.mktemp("paco-build"), *paco_args(paco))


def test_paco_build_passes_the_checker_reading_the_raw_file(files, paco_build):
    paco, _, _ = files
    items, _ = paco_build
    truth, types = paco_truth(paco.annotations)
    assert {it["task"] for it in items} == {"attribute"} and len(items) >= 15  # distractors: one per object, same type
    assert disagreements(Checker(truth, types, exhaustive=False), items) == {}
    assert unverified_negatives(Checker(truth, types, exhaustive=False), items) == []


def test_paco_refusals_are_counted_by_reason(paco_build):
    _, build_json = paco_build
    refused = build_json["stats"]["federated_refusals"]["attribute"]
    assert refused["source"] == "paco" and refused["exhaustive"] is False
    reasons = refused["reasons"]
    assert set(reasons) == {"absence not verified", "instances not all annotated", "attributes not all annotated",
                            "attribute type unknown"}
    assert refused["refused"] == sum(reasons.values()) and 0 < refused["refused"] < refused["pairs"]


def test_the_checker_reads_what_the_fixture_wrote(files):
    """The checker's raw-file reading and the fixture's own description agree (two independent readings)."""
    paco, _, _ = files
    truth, types = paco_truth(paco.annotations)
    assert types == paco.truth["attribute_types"]
    for iid, img in paco.truth["images"].items():
        mine = truth["images"][iid]
        for key in ("verified_absent", "not_exhaustive", "attributes_verified_absent", "attributes_not_exhaustive"):
            assert sorted(mine[key]) == img[key]
        assert [sorted(o["unknown_types"]) for o in mine["objects"]] == [list(o["unknown_types"]) for o in img["objects"]]


# ------------------------------------------------------------------------------------------------------- SVG


@pytest.fixture(scope="module")
def svg_builds(files, tmp_path_factory):
    _, svg, coco = files
    return (build(tmp_path_factory.mktemp("svg-alone"), *svg_args(svg)),
            build(tmp_path_factory.mktemp("svg-verified"), *svg_args(svg, coco)))


def test_svg_builds_pass_the_checker_with_and_without_verification(files, svg_builds):
    _, svg, coco = files
    (alone, alone_json), (verified, verified_json) = svg_builds
    for items, checker in ((alone, Checker(svg_truth(svg.annotations), {}, exhaustive=False)),
                           (verified, Checker(svg_truth(svg.annotations, coco.annotations), {}, exhaustive=False))):
        assert items and {it["task"] for it in items} == {"position"}
        assert disagreements(checker, items) == {}
        assert unverified_negatives(checker, items) == []
    refused_alone = alone_json["stats"]["federated_refusals"]["position"]
    refused_verified = verified_json["stats"]["federated_refusals"]["position"]
    assert 0 < refused_verified["refused"] < refused_alone["refused"]
    report = verified_json["stats"]["verify_absence"]
    assert report["images_matched"] == 6 and report["images"] == 10
    assert report["mapping"] == {"cat": "cat", "chair": "chair", "cup": "cup", "dog": "dog", "person": "person"}
    assert str(coco.annotations) in verified_json["input_hashes"]


def test_svg_negatives_without_verification_are_contradictions(files, svg_builds):
    """With SVG alone, an image labelled negative shows both objects (the opposite relation is annotated)."""
    _, svg, _ = files
    (alone, _), _ = svg_builds
    truth = svg_truth(svg.annotations)
    for it in alone:
        subject, _, obj = it["provenance"]["probe"]
        for entry in it["provenance"]["images"]:
            if entry.get("label") == "neg":
                shown = {o["category"] for o in truth["images"][entry["id"]]["objects"]}
                assert {subject, obj} <= shown


# ------------------------------------------------------------------------------------------- planted wrong rule


def test_the_checker_catches_unannotated_taken_for_absent(files, tmp_path, monkeypatch):
    """A builder that treats every unannotated category as absent (the old rule) is caught on both sources."""
    paco, svg, _ = files

    def everything_missing_is_absent(source, present, could_be, lists=("verified_absent",)):
        return ~np.asarray(present)

    monkeypatch.setattr(rules, "verified_absence", everything_missing_is_absent)
    monkeypatch.setenv("MIRAGE_CACHE_DIR", str(tmp_path / "cache"))  # pools prepared by the real rule: not these
    paco_items, _ = build(tmp_path / "paco", *paco_args(paco))
    truth, types = paco_truth(paco.annotations)
    assert disagreements(Checker(truth, types, exhaustive=False), paco_items)
    svg_items, _ = build(tmp_path / "svg", *svg_args(svg))
    assert disagreements(Checker(svg_truth(svg.annotations), {}, exhaustive=False), svg_items)


def pair_disagreements(pools, checker: Checker, task: str) -> list[tuple[str, object, object, object]]:
    """Every (image, probe) pair of ``task`` whose pools label differs from the checker's fact (status and
    difficulty; ``None`` for undecidable): no sampling luck involved."""
    out = []
    for img in range(pools.n_images):
        for probe in pools.probes(task):
            lab = pools.label(task, img, probe)
            mine = None if lab is None else (lab.status == "pos", lab.hard)
            theirs = checker.fact(task, pools.image_id(img), probe)
            if mine != theirs:
                out.append((pools.image_id(img), probe, mine, theirs))
    return out


def make_pools(records, task):
    from builders.mioh.config import MiohConfig
    from builders.mioh.pools import Pools
    from filters.geometry import measure
    from sources.tables import tables_of

    config = MiohConfig().pool_config(False)
    tables = tables_of(records)
    return Pools.build(tables, measure(tables, config.geometry), config, [task])


def paco_pools(paco):
    from sources.paco import read_paco

    return make_pools(read_paco(paco.annotations, paco.images_dir), "attribute")


def test_every_attribute_pair_agrees_with_the_checker(files):
    paco, _, _ = files
    truth, types = paco_truth(paco.annotations)
    assert pair_disagreements(paco_pools(paco), Checker(truth, types, exhaustive=False), "attribute") == []


def test_every_position_pair_agrees_with_the_checker(files):
    from sources.absence import verify_absence
    from sources.svg import read_svg

    _, svg, coco = files
    records = read_svg(svg.annotations, svg.images_dir)
    for recs, verify in ((records, None), (verify_absence(records, coco.annotations)[0], coco.annotations)):
        checker = Checker(svg_truth(svg.annotations, verify), {}, exhaustive=False)
        assert pair_disagreements(make_pools(recs, "position"), checker, "position") == []


def test_the_checker_catches_ignored_attribute_lists(files, monkeypatch):
    """A builder that ignores the not-exhaustive lists and unknown_* flags disagrees on exactly those pairs."""
    from builders.mioh.labels import NEG_HARD, SIGNALS

    paco, _, _ = files
    original = rules.attributes

    def ignoring_refusals(*args, **kwargs):
        cells = original(*args, **kwargs)
        refused = cells.refusals > 0
        cells.labels.codes[refused] = NEG_HARD
        cells.labels.signals[refused] = SIGNALS.index("attribute")
        return cells

    monkeypatch.setattr(rules, "attributes", ignoring_refusals)
    truth, types = paco_truth(paco.annotations)
    wrong = pair_disagreements(paco_pools(paco), Checker(truth, types, exhaustive=False), "attribute")
    assert sorted((iid, tuple(p)) for iid, p, _, _ in wrong) == [
        ("2", ("plastic", "mug")),  # unknown_material on the mug
        ("4", ("striped", "mug")),  # more mugs than annotated
        ("7", ("brown", "dog")),  # the dog's attributes not all annotated
    ]


# --------------------------------------------------------------------------------------------------- summary


def test_summary_reports_the_undecidable_pairs(files, tmp_path, capsys):
    paco, svg, _ = files
    assert mioh.main([*paco_args(paco), *svg_args(svg), *ARGS, "--pressures", "easy", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    build_json = json.loads((tmp_path / "n2-seed0" / "build.json").read_text())
    assert "Pairs left undecidable" in out
    for task in ("attribute", "position"):
        r = build_json["stats"]["federated_refusals"][task]
        assert f"undecidable of {r['pairs']} pairs" in out and f"{r['refused']} (" in out
    table = out[out.index("Pairs left undecidable"):].split("Skipped")[0]
    assert max(len(line) for line in table.splitlines()) <= 80, table


def test_verify_absence_needs_svg(tmp_path, capsys):
    assert mioh.main(["--verify-absence-with", "x.json", "--out", str(tmp_path)]) == 2
    assert "--svg" in capsys.readouterr().err


def test_a_broken_verification_file_is_one_line_exit_2(files, tmp_path, capsys):
    _, svg, _ = files
    missing = tmp_path / "no-such-instances.json"
    assert mioh.main([*svg_args(svg), "--verify-absence-with", str(missing), *ARGS, "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no-such-instances.json" in err[0]
    assert not (tmp_path / "o").exists() or not any((tmp_path / "o").iterdir())
