"""The command line: help, and one-line errors with status 2 (no server needed)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from annotation.cli import main
from annotation.serve import free_port
from tests.annotation.builds import make_build
from tests.conftest import have, require

REPO = Path(__file__).resolve().parents[2]


def run(*args, env=None):
    import os

    e = dict(os.environ)
    e.pop("LABEL_STUDIO_API_KEY", None)
    e.pop("LABEL_STUDIO_TOKEN", None)
    e.update(env or {})
    return subprocess.run([sys.executable, "-m", "annotation", *args], cwd=REPO, capture_output=True, text=True,
                          env=e, timeout=120)


def test_help_documents_every_option():
    top = run("--help")
    assert top.returncode == 0 and all(c in top.stdout for c in ("serve", "push", "pull"))
    for cmd, options in {
        "serve": ["--data-dir", "--host", "--port", "--files-root", "--public-url", "--label-studio-bin"],
        "push": ["--project", "--url", "--token", "--timeout", "--overlap", "--files-root", "--batch-size",
                 "--no-progress"],
        "pull": ["--project", "--url", "--token", "--timeout", "--overlap", "--show-problems", "--accept-unverified"],
    }.items():
        out = run(cmd, "--help")
        assert out.returncode == 0
        for opt in options:
            assert opt in out.stdout, (cmd, opt)


def one_line_error(capsys, code):
    out, err = capsys.readouterr()
    assert code == 2, err
    assert err.startswith("error: ") and err.count("\n") == 1, err
    return err


def test_missing_build_dir(capsys, tmp_path):
    err = one_line_error(capsys, main(["push", str(tmp_path / "nope"), "--project", "p", "--token", "t"]))
    assert "no such build directory" in err


def test_malformed_build(capsys, tmp_path):
    (tmp_path / "build.json").write_text("[1, 2]")
    (tmp_path / "items.jsonl").write_text("")
    err = one_line_error(capsys, main(["push", str(tmp_path), "--project", "p", "--token", "t"]))
    assert "build.json: expected a JSON object" in err
    (tmp_path / "build.json").write_text(json.dumps({"benchmark": "demo", "name": "x"}))
    (tmp_path / "items.jsonl").write_text('{"id": "1"}\n')
    err = one_line_error(capsys, main(["pull", str(tmp_path), "--project", "p", "--token", "t"]))
    assert "items.jsonl: line 1: not a valid item" in err


def test_no_token(capsys, tmp_path, monkeypatch):
    monkeypatch.delenv("LABEL_STUDIO_API_KEY", raising=False)
    monkeypatch.delenv("LABEL_STUDIO_TOKEN", raising=False)
    build = make_build(tmp_path, 2)
    err = one_line_error(capsys, main(["push", str(build), "--project", "p"]))
    assert "no API token" in err


def test_server_down(capsys, tmp_path):
    require(have("requests"), "requests (the annotation extra)", "pip install -e '.[annotation]'")
    build = make_build(tmp_path, 2)
    url = f"http://127.0.0.1:{free_port()}"
    err = one_line_error(capsys, main(["push", str(build), "--project", "p", "--url", url, "--token", "t"]))
    assert f"cannot reach Label Studio at {url}" in err


def test_missing_image_is_reported_before_anything_is_sent(capsys, tmp_path):
    build = make_build(tmp_path, 3)
    victim = sorted((build / "images").iterdir())[0]
    victim.unlink()
    from annotation.builddir import load_build
    from annotation.errors import AnnotationError
    from annotation.push import item_images

    with pytest.raises(AnnotationError, match=f"image images/{victim.name} not found"):
        item_images(load_build(build))


def test_files_root_must_be_a_dedicated_folder(tmp_path):
    from annotation.errors import AnnotationError
    from annotation.serving import check_files_root

    with pytest.raises(AnnotationError, match="file system root"):
        check_files_root(Path("/"))
    with pytest.raises(AnnotationError, match="no such directory"):
        check_files_root(tmp_path / "absent")


def test_serving_folder_holds_links_to_the_task_images_only(tmp_path):
    """What push connects as storage: links to the item images, none of the build's review files."""
    from annotation.builddir import load_build
    from annotation.push import item_images
    from annotation.serving import link_images, serving_folder

    build = make_build(tmp_path, 5, external=tmp_path / "source-images")
    for name in ("review.json", "adjudications.json", "reviews/export-x.json"):
        (build / name).parent.mkdir(parents=True, exist_ok=True)
        (build / name).write_text("{}")
    root = tmp_path / "files"
    root.mkdir()
    images = item_images(load_build(build))
    folder = serving_folder(build, root)
    links = link_images(images, folder)
    served = sorted(p for p in folder.rglob("*") if not p.is_dir())
    assert sorted(links.values()) == served and len(served) == len(set(images))
    assert all(p.read_bytes() == s.read_bytes() for s, p in links.items())
    assert not any(p.suffix == ".json" for p in root.rglob("*"))
    assert link_images(images, folder) == links  # a re-push finds them in place
    # what members read in the image URLs names neither the build nor any folder of the maintainer's
    shown = folder.relative_to(root.resolve()).as_posix()
    assert re.fullmatch(r"images/[0-9a-f]{12}", shown) and "test" not in shown


def test_serve_without_label_studio(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("MIRAGE_LABEL_STUDIO_BIN", str(tmp_path / "no-such-label-studio"))
    err = one_line_error(capsys, main(["serve", "--data-dir", str(tmp_path / "d")]))
    assert "MIRAGE_LABEL_STUDIO_BIN" in err and "not an executable" in err


def test_find_label_studio_bin_says_how_to_install(monkeypatch, tmp_path):
    from annotation import serve
    from annotation.errors import AnnotationError

    monkeypatch.delenv("MIRAGE_LABEL_STUDIO_BIN", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(serve, "REPO_ROOT", tmp_path)
    with pytest.raises(AnnotationError, match="label-studio==1.23.2"):
        serve.find_label_studio_bin()
