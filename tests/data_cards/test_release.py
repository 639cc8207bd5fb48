"""release: round trip through datasets.load_dataset, the card's numbers, immutability, review gating."""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import require_release_extra

require_release_extra()  # data_cards.card reads the card with huggingface_hub

from data_cards.card import split_card  # noqa: E402
from data_cards.cli import main  # noqa: E402
from data_cards.features import release_features  # noqa: E402
from data_cards.release import parse_version, release  # noqa: E402
from sources.errors import MirageError  # noqa: E402

from .conftest import REVIEWERS, make_build, pixel  # noqa: E402


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    rc = main(list(argv))
    out, err = capsys.readouterr()
    return rc, out, err


def _release(tmp_path: Path, build: Path, version: str = "1.0.0", *extra: str, capsys=None) -> Path:
    rc = main(["release", str(build), "--version", version, "--out", str(tmp_path / "releases"), *extra])
    assert rc == 0
    return tmp_path / "releases" / "mioh" / version


def _tree(root: Path) -> dict[str, tuple[str, int]]:
    return {
        p.relative_to(root).as_posix(): (hashlib.sha256(p.read_bytes()).hexdigest(), p.stat().st_mtime_ns)
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def _parquet_rows(release_dir: Path) -> list[dict]:
    import pyarrow.parquet as pq

    rows = []
    for path in sorted((release_dir / "data").rglob("*.parquet")):
        rows += pq.read_table(path, columns=["id", "task", "pressure", "question_type", "image_names", "options",
                                             "answer", "review_status"]).to_pylist()
    return rows


def _expected_pixels(name: str) -> np.ndarray:
    """Redraw the fixture image from its name (its index is in the name) to compare decoded pixels."""
    import io

    from PIL import Image

    i = int(re.search(r"(\d+)\.png$", name).group(1))
    buf = io.BytesIO()
    im = Image.new("RGB", (8, 8), pixel(i))
    im.putpixel((0, 0), (255 - pixel(i)[0], 0, 0))
    im.save(buf, format="PNG")
    return np.asarray(Image.open(io.BytesIO(buf.getvalue())).convert("RGB"))


def test_round_trip_load_dataset(tmp_path, build_dir, hf_env):
    import datasets

    rel = _release(tmp_path, build_dir)
    ds = datasets.load_dataset(str(rel), split="test")
    assert ds.features == release_features()
    meta, body = split_card((rel / "README.md").read_text())  # huggingface_hub's DatasetCard reads it
    infos = {d["config_name"]: d for d in meta["dataset_info"]}
    assert all(d["features"] == infos["all"]["features"] for d in infos.values())
    assert "&id0" not in (rel / "README.md").read_text()  # the features are written out, no YAML anchors
    assert ds.num_rows == infos["all"]["splits"][0]["num_examples"] == 10
    assert f"It holds **{ds.num_rows} items**" in body

    # Every image decodes to exactly the pixels the build drew, in order, including the source image given
    # by absolute path outside the build dir.
    seen_source = False
    for row in ds:
        assert 1 <= len(row["images"]) == len(row["image_names"])
        for im, name in zip(row["images"], row["image_names"]):
            assert np.array_equal(np.asarray(im.convert("RGB")), _expected_pixels(name)), name
            seen_source |= name.startswith("src-")
        prov = json.loads(row["provenance"])
        assert "source_ids" in prov
    assert seen_source

    # The reviewers' fix is released, dropped and pending items are not.
    by_status = Counter(ds["review_status"])
    assert by_status == {"keep": 9, "fix": 1}
    fixed = ds.filter(lambda r: r["review_status"] == "fix")
    assert fixed[0]["answer"] == "no"

    # One config per task, each loading exactly its task.
    for name in ("counting", "existence"):
        sub = datasets.load_dataset(str(rel), name, split="test")
        assert set(sub["task"]) == {name}
        assert sub.num_rows == infos[name]["splits"][0]["num_examples"]


def test_no_local_paths_or_reviewer_emails_in_release(tmp_path, build_dir, hf_env):
    rel = _release(tmp_path, build_dir)
    import pyarrow.parquet as pq

    for path in (rel / "data").rglob("*.parquet"):
        table = pq.read_table(path)
        for row in table.column("images").to_pylist():
            for image in row:
                assert "/" not in image["path"] and image["bytes"]
    for path in rel.rglob("*"):
        if not path.is_file():
            continue
        data = path.read_bytes()
        assert str(tmp_path).encode() not in data, path
        for email in REVIEWERS:
            assert email.encode() not in data, (path, email)
    card = (rel / "README.md").read_text()
    assert "reviewer-1" in card and "ls.internal.example" not in card
    manifest = json.loads((rel / "manifest.json").read_text())
    assert [r["id"] for r in manifest["review"]["reviewers"]] == ["reviewer-1", "reviewer-2", "reviewer-3"]


def test_card_numbers_equal_the_data(tmp_path, build_dir, hf_env):
    rel = _release(tmp_path, build_dir)
    rows = _parquet_rows(rel)
    meta, body = split_card((rel / "README.md").read_text())

    # YAML: configs, sizes, split counts.
    assert meta["license"] == "cc0-1.0"
    assert meta["size_categories"] == ["n<1K"]
    assert {c["config_name"] for c in meta["configs"]} == {"all", "counting", "existence"}
    tasks = Counter(r["task"] for r in rows)
    infos = {d["config_name"]: d for d in meta["dataset_info"]}
    assert infos["all"]["splits"][0]["num_examples"] == len(rows)
    for task, n in tasks.items():
        assert infos[task]["splits"][0]["num_examples"] == n
    shard_bytes = sum(p.stat().st_size for p in (rel / "data").rglob("*.parquet"))
    assert infos["all"]["download_size"] == shard_bytes

    # Prose tables, recomputed from the parquet rows.
    def table_counts(title: str) -> dict[str, int]:
        section = body.split(title, 1)[1]
        out = {}
        for line in section.splitlines()[2:]:
            if not line.startswith("|"):
                if out:
                    break
                continue
            cells = [c.strip() for c in line.strip("|").split("|")]
            if cells[0].startswith("`"):
                out[cells[0].strip("`")] = int(cells[-2] if len(cells) == 3 else cells[-1])
        return out

    assert table_counts("Items per pressure:") == dict(Counter(r["pressure"] for r in rows))
    assert table_counts("Items per question type:") == dict(Counter(r["question_type"] for r in rows))
    assert table_counts("Number of images per item:") == {
        str(k): v for k, v in Counter(len(r["image_names"]) for r in rows).items()
    }
    answers = Counter(  # a "no" given in review to a question declared open ("vqa") is an open answer
        r["answer"] if r["options"] else r["answer"] if r["answer"] in ("yes", "no") and r["question_type"] != "vqa"
        else "(open answer)" for r in rows
    )
    assert table_counts("Answer distribution") == dict(answers)
    assert table_counts("Items per task and pressure:") == dict(tasks)
    n_images = sum(len(r["image_names"]) for r in rows)
    import io

    import pyarrow.parquet as pq
    from PIL import Image

    blobs = {hashlib.sha256(im["bytes"]).hexdigest(): im["bytes"]
             for p in (rel / "data").rglob("*.parquet") for ims in pq.read_table(p, columns=["images"])["images"].to_pylist()
             for im in ims}
    assert f"**{n_images} image slots** showing\n**{len(blobs)} distinct images**" in body
    per_item = sorted({len(r["image_names"]) for r in rows})
    assert f"({', '.join(map(str, per_item[:-1]))} or {per_item[-1]} images per item;" in body
    sizes = {Image.open(io.BytesIO(b)).size for b in blobs.values()}
    assert sizes == {(8, 8)} and "every image 8x8 pixels" in body
    # agreement, recomputed from review.json's votes by hand: keep rows (3,0,0) x 8, fix (0,2,0), drop (0,0,3)
    review = json.loads((build_dir / "review.json").read_text())
    rows_votes = [e["votes"] for e in review["items"].values() if e["status"] != "pending"]
    pa = sum((sum(v * v for v in r.values()) - sum(r.values())) / (sum(r.values()) * (sum(r.values()) - 1))
             for r in rows_votes) / len(rows_votes)
    assert f"raw agreement **{100 * pa:.1f}%**" in body
    assert "Fleiss' kappa **0.812**" in body and "Gwet's AC1 **" in body and "kappa paradox" in body
    assert "No item was settled by adjudication." in body
    # MCQ answer letters per number of options, each with its uniform share
    mcq = Counter(r["answer"] for r in rows if len(r["options"]) == 3)
    assert f"- 3 options ({sum(mcq.values())} items; uniform 33.3% each)" in body
    assert "(plots/answers-3-options.png)" in body
    # unused options are left out, and the rationale does not cite CLIP
    assert "llm_" not in body.split("Construction parameters", 1)[1].split("Build statistics")[0].replace("`llm_*`", "")
    for plot in ("tasks", "pressures", "n_images", "answers", "answers-3-options"):
        assert f"(plots/{plot}.png)" in body
        assert (rel / "plots" / f"{plot}.png").read_bytes().startswith(b"\x89PNG")

    # Construction parameters from build.json.
    assert "| `seed` | `1234` |" in body
    assert "`config.thresholds.min_area` | `0.02`" in body

    # Manifest: sha256 and size of every other file.
    manifest = json.loads((rel / "manifest.json").read_text())
    files = {p.relative_to(rel).as_posix() for p in rel.rglob("*") if p.is_file()} - {"manifest.json"}
    assert set(manifest["files"]) == files
    for name, entry in manifest["files"].items():
        data = (rel / name).read_bytes()
        assert entry == {"sha256": hashlib.sha256(data).hexdigest(), "size": len(data)}
    assert manifest["version"] == "1.0.0" and manifest["build"]["seed"] == 1234
    assert manifest["counts"]["num_items"] == len(rows)
    assert "## v1.0.0" in (rel / "CHANGELOG.md").read_text()


def test_existing_version_is_never_overwritten(tmp_path, build_dir, hf_env, capsys):
    rel = _release(tmp_path, build_dir)
    capsys.readouterr()
    before = _tree(rel)
    rc, out, err = _run(capsys, "release", str(build_dir), "--version", "1.0.0", "--out", str(tmp_path / "releases"))
    assert rc == 2
    assert err.strip().count("\n") == 0 and "already exists" in err and "never overwritten" in err
    assert _tree(rel) == before
    assert sorted(p.name for p in rel.parent.iterdir()) == ["1.0.0", "reviewer-pseudonyms.json"]


def test_unreviewed_build_refused_without_flag(tmp_path, hf_env, capsys):
    build = make_build(tmp_path, reviewed=False)
    rc, out, err = _run(capsys, "release", str(build), "--version", "1.0.0", "--out", str(tmp_path / "releases"))
    assert rc == 2 and "--include-unreviewed" in err and err.count("\n") == 1
    assert not (tmp_path / "releases" / "mioh").exists() or not any((tmp_path / "releases" / "mioh").iterdir())

    rel = _release(tmp_path, build, "0.1.0", "--include-unreviewed")
    rows = _parquet_rows(rel)
    assert len(rows) == 12 and {r["review_status"] for r in rows} == {"unreviewed"}
    card = (rel / "README.md").read_text()
    assert "not reviewed by people" in card and "no item was reviewed by people" in card


def test_include_unreviewed_adds_pending_but_never_dropped(tmp_path, build_dir, hf_env):
    rel = _release(tmp_path, build_dir, "1.0.0-rc.1", "--include-unreviewed")
    rows = _parquet_rows(rel)
    assert Counter(r["review_status"] for r in rows) == {"keep": 9, "fix": 1, "unreviewed": 1}
    assert "1 of 11 items were not reviewed by people" in (rel / "README.md").read_text()


@pytest.mark.parametrize("bad", ["1.0", "v1.0.0", "01.0.0", "1.0.0.0", "1.0.0+build", ""])
def test_bad_semver_refused(tmp_path, build_dir, capsys, bad):
    rc, out, err = _run(capsys, "release", str(build_dir), "--version", bad, "--out", str(tmp_path / "r"))
    assert rc == 2 and "semantic version" in err
    assert not (tmp_path / "r").exists()


def test_semver_ordering():
    assert parse_version("1.0.0-rc.1") < parse_version("1.0.0") < parse_version("1.0.1") < parse_version("1.10.0")
    assert parse_version("1.0.0-alpha") < parse_version("1.0.0-alpha.1") < parse_version("1.0.0-beta")
    with pytest.raises(MirageError):
        parse_version("1.2")


def test_changelog_continues_and_diffs(tmp_path, hf_env):
    build = make_build(tmp_path)
    out = tmp_path / "releases"
    release(build, "1.0.0", out=out)
    # Reviewers change the fixed answer: the next version's changelog says one answer changed.
    build2 = make_build(tmp_path / "b2", fix_answer="yes")
    release(build2, "1.1.0", out=out, notes="Second review pass.")
    log = (out / "mioh" / "1.1.0" / "CHANGELOG.md").read_text()
    assert log.index("## v1.1.0") < log.index("Second review pass.") < log.index("## v1.0.0")
    assert "Since 1.0.0: 0 item(s) added, 0 removed, 1 answer(s) changed." in log
    assert json.loads((out / "mioh" / "1.1.0" / "manifest.json").read_text())["previous_version"] == "1.0.0"


def test_small_shards_and_single_task_layout(tmp_path, hf_env):
    import datasets

    build = make_build(tmp_path, n_items=8)
    res = release(build, "2.0.0", out=tmp_path / "rel", max_shard_bytes=300)
    shards = sorted(p.relative_to(res.path).as_posix() for p in (res.path / "data").rglob("*.parquet"))
    assert len(shards) > 2
    n = len([s for s in shards if s.startswith("data/counting/")])
    assert f"data/counting/test-00000-of-{n:05d}.parquet" in shards
    ds = datasets.load_dataset(str(res.path), split="test")
    assert ds.num_rows == res.num_items

    # One task only: no per-task configs, data/test-NNNNN-of-NNNNN.parquet.
    one = make_build(tmp_path / "one", tasks=("counting",))
    res1 = release(one, "1.0.0", out=tmp_path / "rel1")
    assert [p.name for p in (res1.path / "data").iterdir()] == ["test-00000-of-00001.parquet"]
    meta, _ = split_card((res1.path / "README.md").read_text())
    assert [c["config_name"] for c in meta["configs"]] == ["all"]
    assert datasets.load_dataset(str(res1.path), split="test").num_rows == res1.num_items == 10


def test_licence_from_sources_and_unknown_fallback(tmp_path, hf_env):
    b1 = make_build(tmp_path / "a", sources=[{"name": "coco"}, {"name": "visual_genome"}])
    r1 = release(b1, "1.0.0", out=tmp_path / "r")
    meta, _ = split_card((r1.path / "README.md").read_text())
    assert meta["license"] == "cc-by-4.0"

    b2 = make_build(tmp_path / "b", sources={"mystery": {"url": "https://example.org/data"}})
    r2 = release(b2, "1.0.1", out=tmp_path / "r")
    meta, body = split_card((r2.path / "README.md").read_text())
    assert meta["license"] == "unknown"
    assert "**Licence unknown**" in body and "mystery" in body

    b3 = make_build(tmp_path / "c", sources=[{"name": "x", "license": "MIT"}, {"name": "y", "license": "cc-by-4.0"}])
    r3 = release(b3, "1.0.2", out=tmp_path / "r", license=None)
    assert split_card((r3.path / "README.md").read_text())[0]["license"] == ["cc-by-4.0", "mit"]
    r4 = release(b3, "1.0.3", out=tmp_path / "r", license="cc-by-sa-4.0")
    assert split_card((r4.path / "README.md").read_text())[0]["license"] == "cc-by-sa-4.0"


def test_missing_image_is_one_clear_error_and_leaves_nothing(tmp_path, build_dir, capsys):
    victim = next((build_dir / "images").iterdir())
    victim.unlink()
    rc, out, err = _run(capsys, "release", str(build_dir), "--version", "1.0.0", "--out", str(tmp_path / "r"))
    assert rc == 2 and "image not found" in err and victim.name in err
    assert not any((tmp_path / "r" / "mioh").iterdir())


def test_inconsistent_review_refused(tmp_path, build_dir, capsys):
    review = json.loads((build_dir / "review.json").read_text())
    some_kept = next(k for k, v in review["items"].items() if v["status"] == "keep")
    review["items"][some_kept]["status"] = "drop"
    (build_dir / "review.json").write_text(json.dumps(review))
    rc, out, err = _run(capsys, "release", str(build_dir), "--version", "1.0.0", "--out", str(tmp_path / "r"))
    assert rc == 2 and some_kept in err and "annotation pull" in err


def test_help_documents_every_option(capsys):
    for cmd, options in {
        "release": ["--version", "--name", "--include-unreviewed", "--out", "--license", "--repo", "--notes",
                    "--max-shard-size"],
        "publish": ["--repo", "--dry-run", "--token-env", "--private"],
    }.items():
        with pytest.raises(SystemExit) as exc:
            main([cmd, "--help"])
        assert exc.value.code == 0
        text = capsys.readouterr().out
        for opt in options:
            assert opt in text, (cmd, opt)


def test_unreadable_image_refused(tmp_path, build_dir, capsys):
    victim = sorted((build_dir / "images").iterdir())[0]
    victim.write_bytes(b"this is not an image")
    rc, out, err = _run(capsys, "release", str(build_dir), "--version", "1.0.0", "--out", str(tmp_path / "r"))
    assert rc == 2 and "not a readable image" in err and victim.name in err and err.count("\n") == 1


def test_sources_found_in_a_builder_build_json_without_sources(tmp_path, hf_env):
    """MIOH's build.json lists no `sources`: they come from stats.generated_sources and the source options."""
    build = make_build(tmp_path)
    meta = json.loads((build / "build.json").read_text())
    del meta["config"]["sources"]
    meta["stats"]["generated_sources"] = ["demo", "demo"]
    (build / "build.json").write_text(json.dumps(meta))
    r1 = release(build, "1.0.0", out=tmp_path / "r")
    assert split_card((r1.path / "README.md").read_text())[0]["license"] == "cc0-1.0"

    meta["config"]["coco_rem"] = str(tmp_path / "coco_rem" / "instances_valrem.json")
    (build / "build.json").write_text(json.dumps(meta))
    r2 = release(build, "1.0.1", out=tmp_path / "r")
    head, body = split_card((r2.path / "README.md").read_text())
    assert head["license"] == "unknown" and "| `coco_rem` | `unknown` |" in body
    assert str(tmp_path) not in (r2.path / "README.md").read_text()
    assert "`.../instances_valrem.json`" in body


def test_reviewer_pseudonyms_stay_stable_between_versions(tmp_path, hf_env):
    """Issue 15: reviewer-3 of 1.0.0 must not become reviewer-2 of 1.0.1 when annotation counts change."""
    build = make_build(tmp_path)
    first = json.loads((_release(tmp_path, build, "1.0.0") / "manifest.json").read_text())
    review = json.loads((build / "review.json").read_text())
    counts = {r: review["reviewers"][r]["annotations"] for r in REVIEWERS}
    review["reviewers"][REVIEWERS[2]]["annotations"] = 100  # now the busiest
    review["reviewers"]["dave@example.org"] = {"annotations": 50, "agreement_with_majority": 1.0}
    (build / "review.json").write_text(json.dumps(review))
    second = json.loads((_release(tmp_path, build, "1.0.1") / "manifest.json").read_text())
    before = {r["annotations"]: r["id"] for r in first["review"]["reviewers"]}
    after = {r["id"]: r["annotations"] for r in second["review"]["reviewers"]}
    assert after[before[counts[REVIEWERS[2]]]] == 100  # carol kept her pseudonym
    assert after["reviewer-4"] == 50  # a new reviewer takes the next number
    mapping = tmp_path / "releases" / "mioh" / "reviewer-pseudonyms.json"
    assert mapping.stat().st_mode & 0o077 == 0  # holds the e-mails: the maintainer's only, never in a version
    texts = [p.read_text(errors="ignore") for p in (tmp_path / "releases" / "mioh" / "1.0.1").rglob("*.*")
             if p.suffix in (".md", ".json")]
    assert not any("example.org" in t for t in texts)


def test_card_shows_adjudications_issue_tags_citation_and_large_plots(tmp_path, hf_env, capsys):
    from PIL import Image

    build = make_build(tmp_path)
    review = json.loads((build / "review.json").read_text())
    entries = list(review["items"].values())
    entries[0]["adjudicated"] = {"status": "fix", "answer": "no", "note": ""}
    entries[1]["issues"] = ["wording"]  # a dropped item: counted, and said to be dropped
    entries[3]["issues"] = ["wording", "ambiguous"]
    entries[4]["issues"] = ["wording"]
    (build / "review.json").write_text(json.dumps(review))
    rc = main(["release", str(build), "--version", "1.0.0", "--out", str(tmp_path / "releases"), "--repo", "org/mioh",
               "--project-url", "https://example.org/mirage", "--maintainers", "A. One and B. Two"])
    assert rc == 0
    rel = tmp_path / "releases" / "mioh" / "1.0.0"
    _, body = split_card((rel / "README.md").read_text())
    assert "**1 item(s) had no majority and were settled by the maintainer's adjudication**" in body
    assert "| issue | items | kept or fixed | dropped | undecided |" in body
    assert "| wording | 3 | 2 | 1 | 0 |" in body and "| ambiguous | 1 | 1 | 0 | 0 |" in body
    assert "**including the items they dropped**, which are not in this release" in body
    assert "author = {A. One and B. Two}" in body and "url    = {https://example.org/mirage}" in body
    assert "title  = {Fine-Grained Multi Image Object Hallucination Benchmark}" in body  # the published paper
    assert "author = {Min, Kim, Choi, Kim, Kim, Jo and Lee}" in body and "howpublished = {CVPR 2026, https:" in body
    assert "**Curated by:** A. One and B. Two" in body
    for png in (rel / "plots").glob("*.png"):
        assert Image.open(png).width >= 1200, png


def test_dry_run_lists_what_the_release_writes_and_writes_nothing(tmp_path, build_dir, hf_env, capsys):
    out = tmp_path / "releases"
    before = _tree(tmp_path)
    rc, text, err = _run(capsys, "release", str(build_dir), "--version", "1.0.0", "--out", str(out), "--dry-run",
                         "--max-shard-size", "1")
    assert rc == 0 and err == "" and _tree(tmp_path) == before and not out.exists()
    assert "dry run: nothing written" in text and max(map(len, text.splitlines())) <= 80
    files_table = text.split("items per task")[0]
    listed = {line.split("│")[1].strip() for line in files_table.splitlines() if line.startswith("│ ")}
    rel = _release(tmp_path, build_dir, "1.0.0", "--max-shard-size", "1")
    written = {p.relative_to(rel).as_posix() for p in rel.rglob("*") if p.is_file()}
    folders = {name for name in listed if name.endswith("/")}
    assert {name for name in written if not name.startswith(tuple(folders))} == \
        listed - folders - {"../reviewer-pseudonyms.json"}
    assert all(any(name.startswith(folder) for name in written) for folder in folders)
    assert (rel.parent / "reviewer-pseudonyms.json").exists() and "../reviewer-pseudonyms.json" in listed
    assert {"data/counting/test-00000-of-00001.parquet", "plots/tasks.png", "manifest.json"} <= listed

    capsys.readouterr()
    rc, text, err = _run(capsys, "release", str(build_dir), "--version", "1.0.0", "--out", str(out), "--dry-run")
    assert rc == 2 and "already exists" in err and err.count("\n") == 1  # the checks of a real release


def test_items_with_an_empty_seat_stay_out_of_the_agreement_figures():
    """An item decided by two votes (a skip or an author's refused vote left the third seat empty) has fewer
    ratings: kappa, raw agreement and AC1 are computed without it, as ``annotation pull`` computes them."""
    from data_cards.inputs import Scrubber, public_review_summary

    full = {"status": "keep", "votes": {"accept": 3, "fix": 0, "reject": 0}}
    split = {"status": "drop", "votes": {"accept": 1, "fix": 0, "reject": 2}}
    seated = {"status": "keep", "votes": {"accept": 2, "fix": 0, "reject": 0},
              "empty_seats": [{"room": 3, "reviewer": "x@example.org", "annotation": 4, "reason": "skipped (unsure)"}]}
    summary = public_review_summary({"items": {"a": full, "b": split, "c": seated}}, Scrubber({}))
    assert summary["rated_items"] == 2
    assert summary["raw_agreement"] == pytest.approx((1 + 1 / 3) / 2)
    assert summary["fleiss_kappa"] is not None  # with the 2-vote item it would be undefined
