"""publish: the real huggingface_hub client against an in-process Hub stand-in on loopback.

Covers one commit + one tag, refusal of an existing tag (before any commit), stale-shard deletion on the next
version, ``load_dataset(repo, revision="v1.0.0")`` through ``HF_ENDPOINT``, the dry run, and the one-line errors
for a missing token, a refused token (401) and a Hub that cannot be reached. A test against the real Hub runs only
when ``MIRAGE_HF_TOKEN`` and ``MIRAGE_HF_SCRATCH_REPO`` are set.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from data_cards.cli import main
from data_cards.release import release
from tests.conftest import require_release_extra

from .conftest import make_build
from .hub_standin import HubStandIn

TOKEN = "hf_standin_write"
REPO = "mirage-org/mioh"
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def hub_env(tmp_path, monkeypatch):
    """A fresh HF_HOME, no stored login, no token unless a test sets one; XET off; not offline."""
    require_release_extra()
    from huggingface_hub import constants

    home = tmp_path / "hf_home"
    monkeypatch.setenv("HF_HOME", str(home))
    monkeypatch.setenv("HF_HUB_DISABLE_XET", "1")
    monkeypatch.setenv("HF_HUB_DISABLE_TELEMETRY", "1")
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.delenv("HUGGING_FACE_HUB_TOKEN", raising=False)
    # huggingface_hub reads these at import time; another test may have imported it with other values.
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(constants, "HF_HUB_DISABLE_XET", True)
    monkeypatch.setattr(constants, "HF_TOKEN_PATH", str(home / "token"))
    monkeypatch.setattr(constants, "HF_STORED_TOKENS_PATH", str(home / "stored_tokens"))
    return home


@pytest.fixture
def hub(hub_env, monkeypatch):
    from huggingface_hub import constants

    with HubStandIn(tokens=(TOKEN,)) as stand_in:
        monkeypatch.setenv("HF_ENDPOINT", stand_in.url)
        monkeypatch.setattr(constants, "ENDPOINT", stand_in.url)
        yield stand_in


@pytest.fixture
def released(tmp_path) -> Path:
    build = make_build(tmp_path)
    return release(build, "1.0.0", out=tmp_path / "releases").path


def _publish(capsys, release_dir: Path, *extra: str) -> tuple[int, str, str]:
    rc = main(["publish", str(release_dir), "--repo", REPO, *extra])
    out, err = capsys.readouterr()
    return rc, out, err


def _release_files(release_dir: Path) -> dict[str, bytes]:
    return {p.relative_to(release_dir).as_posix(): p.read_bytes() for p in release_dir.rglob("*") if p.is_file()}


def _load_in_subprocess(endpoint: str, hf_home: Path, repo: str, revision: str, config: str | None = None) -> dict:
    """``datasets.load_dataset(repo, revision=...)`` in a fresh interpreter with HF_ENDPOINT set before import."""
    code = textwrap.dedent(
        f"""
        import json, hashlib, datasets
        ds = datasets.load_dataset({repo!r}, {config!r}, revision={revision!r}, split="test")
        first = ds[0]
        print(json.dumps({{
            "num_rows": ds.num_rows,
            "features": sorted(ds.features),
            "ids": sorted(ds["id"]),
            "pixels": [list(first["images"][0].convert("RGB").getpixel((1, 1))), first["image_names"][0]],
        }}))
        """
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGING"))}
    env.update(
        HF_ENDPOINT=endpoint,
        HF_HOME=str(hf_home),
        HF_DATASETS_CACHE=str(hf_home / "datasets"),
        HF_HUB_DISABLE_XET="1",
        HF_HUB_DISABLE_TELEMETRY="1",
        PYTHONPATH=str(ROOT),
    )
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_publish_commit_tag_and_load_by_revision(tmp_path, hub, released, capsys, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    rc, out, err = _publish(capsys, released)
    assert rc == 0, err
    result = json.loads(out)
    repo = hub.repos[REPO]
    assert result["tag"] == "v1.0.0" and repo.tags["v1.0.0"] == result["commit"] == repo.branches["main"]
    # Exactly one commit on top of the repo's initial one, holding every file of the release, unchanged.
    assert hub.commits_on(REPO) == 2 and hub.count("POST", "/commit/") == 1
    files = hub.files_at(REPO, "v1.0.0")
    files.pop(".gitattributes")
    assert files == _release_files(released)

    # load_dataset through HF_ENDPOINT, at the tag: same rows as the local release, images decode.
    import pyarrow.parquet as pq

    local_ids = sorted(i for p in (released / "data").rglob("*.parquet") for i in pq.read_table(p, columns=["id"])["id"].to_pylist())
    got = _load_in_subprocess(hub.url, tmp_path / "hf_load", REPO, "v1.0.0")
    assert got["num_rows"] == len(local_ids) and got["ids"] == local_ids
    assert "images" in got["features"]
    from .conftest import pixel
    import re

    idx = int(re.search(r"(\d+)\.png$", got["pixels"][1]).group(1))
    assert tuple(got["pixels"][0]) == pixel(idx)
    one_task = _load_in_subprocess(hub.url, tmp_path / "hf_load2", REPO, "v1.0.0", "counting")
    assert 0 < one_task["num_rows"] < got["num_rows"]


def test_existing_tag_refused_before_any_commit(hub, released, capsys, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    assert _publish(capsys, released)[0] == 0
    commits, posts = hub.commits_on(REPO), hub.count("POST", "/commit/")
    rc, out, err = _publish(capsys, released)
    assert rc == 2
    assert err.startswith("error: ") and err.count("\n") == 1 and "tag v1.0.0 already exists" in err
    assert hub.commits_on(REPO) == commits and hub.count("POST", "/commit/") == posts
    assert hub.count("POST", "/preupload/") == 1  # no upload was even prepared the second time


def test_next_version_deletes_stale_shards_in_one_commit(tmp_path, hub, released, capsys, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    assert _publish(capsys, released)[0] == 0
    v1_files = set(hub.files_at(REPO, "v1.0.0"))
    # v1.1.0 with small shards: its shard names differ, so v1.0.0's shards are stale on main.
    build = released.parents[2] / "builds" / "mioh" / "demo"
    v2 = release(build, "1.1.0", out=released.parents[1].parent, max_shard_bytes=300).path
    rc, out, err = _publish(capsys, v2)
    assert rc == 0, err
    result = json.loads(out)
    old_shards = sorted(p for p in v1_files if p.startswith("data/"))
    assert result["deleted"] == old_shards
    main_files = set(hub.files_at(REPO, "main"))
    assert main_files == set(_release_files(v2)) | {".gitattributes"}
    assert hub.commits_on(REPO) == 3  # initial + v1.0.0 + v1.1.0: the deletions were in the same commit
    assert set(hub.files_at(REPO, "v1.0.0")) == v1_files  # the old tag still serves the old version
    assert hub.repos[REPO].tags["v1.1.0"] == hub.repos[REPO].branches["main"]


def test_dry_run_writes_exact_operations_without_network(tmp_path, hub_env, released, capsys, monkeypatch):
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{_closed_port()}")
    plan_file = tmp_path / "ops.json"
    rc, out, err = _publish(capsys, released, "--dry-run", str(plan_file))
    assert rc == 0, err
    plan = json.loads(plan_file.read_text())
    assert json.loads(out) == plan
    ops = {op["path"]: op for op in plan["operations"]}
    assert set(ops) == set(_release_files(released))
    for path, op in ops.items():
        data = (released / path).read_bytes()
        assert op == {"op": "add", "path": path, "size": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    assert plan["tag"]["name"] == "v1.0.0" and plan["repo_type"] == "dataset"
    assert plan["total_bytes"] == sum(op["size"] for op in ops.values())
    assert plan["create_repo_if_missing"] == {"private": False}
    rc, out, err = _publish(capsys, released, "--dry-run", str(plan_file), "--private")
    assert rc == 0 and json.loads(plan_file.read_text())["create_repo_if_missing"] == {"private": True}


def test_missing_token_is_one_line(hub, released, capsys):
    rc, out, err = _publish(capsys, released)
    assert rc == 2 and err.count("\n") == 1 and "no Hugging Face token" in err and "HF_TOKEN" in err
    assert hub.requests == []

    rc, out, err = _publish(capsys, released, "--token-env", "MIRAGE_TEST_NO_SUCH_VAR")
    assert rc == 2 and "MIRAGE_TEST_NO_SUCH_VAR" in err and err.count("\n") == 1


def test_token_from_stored_login_and_token_env(hub, hub_env, released, capsys, monkeypatch):
    (hub_env).mkdir(parents=True, exist_ok=True)
    (hub_env / "token").write_text(TOKEN)
    assert _publish(capsys, released)[0] == 0
    v = release(released.parents[2] / "builds" / "mioh" / "demo", "1.0.1", out=released.parents[1].parent).path
    (hub_env / "token").unlink()
    monkeypatch.setenv("MY_TOKEN", TOKEN)
    rc, out, err = _publish(capsys, v, "--token-env", "MY_TOKEN")
    assert rc == 0, err


def test_refused_token_is_one_line(hub, released, capsys, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", "hf_wrong")
    rc, out, err = _publish(capsys, released)
    assert rc == 2 and err.count("\n") == 1
    assert "authentication failed" in err and "401" in err and REPO in err
    assert REPO not in hub.repos


def test_hub_down_is_one_line(hub_env, released, capsys, monkeypatch):
    from huggingface_hub import constants

    url = f"http://127.0.0.1:{_closed_port()}"
    monkeypatch.setenv("HF_ENDPOINT", url)
    monkeypatch.setattr(constants, "ENDPOINT", url)
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    start = time.monotonic()
    rc, out, err = _publish(capsys, released)
    assert rc == 2 and err.count("\n") == 1 and "cannot reach the Hub" in err and url in err
    assert time.monotonic() - start < 30


def test_changed_release_is_refused(hub, released, capsys, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    card = released / "README.md"
    card.write_text(card.read_text() + "\nedited by hand\n")
    rc, out, err = _publish(capsys, released)
    assert rc == 2 and "changed since the release was made" in err
    assert hub.requests == []


def test_bad_repo_id(hub_env, released, capsys):
    rc = main(["publish", str(released), "--repo", "no-slash", "--dry-run", "x.json"])
    err = capsys.readouterr().err
    assert rc == 2 and "ORG/NAME" in err


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
@pytest.mark.real_hub  # skips without its token, in CI too: tests/conftest.py CI_MAY_SKIP
@pytest.mark.skipif(
    not (os.environ.get("MIRAGE_HF_TOKEN") and os.environ.get("MIRAGE_HF_SCRATCH_REPO")),
    reason="real-Hub test: set MIRAGE_HF_TOKEN (a write token) and MIRAGE_HF_SCRATCH_REPO (ORG/NAME of a scratch "
    "dataset repo) to run it",
)
def test_publish_to_the_real_hub(tmp_path, capsys, monkeypatch):
    from huggingface_hub import HfApi, constants

    repo = os.environ["MIRAGE_HF_SCRATCH_REPO"]
    monkeypatch.delenv("HF_ENDPOINT", raising=False)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(constants, "ENDPOINT", "https://huggingface.co")
    version = f"0.0.{int(time.time())}"
    rel = release(make_build(tmp_path), version, out=tmp_path / "releases", repo_id=repo).path
    rc = main(["publish", str(rel), "--repo", repo, "--token-env", "MIRAGE_HF_TOKEN"])
    out, err = capsys.readouterr()
    assert rc == 0, err
    api = HfApi(token=os.environ["MIRAGE_HF_TOKEN"], endpoint="https://huggingface.co")
    try:
        tags = {t.name: t.target_commit for t in api.list_repo_refs(repo, repo_type="dataset").tags}
        assert tags[f"v{version}"] == json.loads(out)["commit"]
        # Publishing the same version again is refused before committing.
        assert main(["publish", str(rel), "--repo", repo, "--token-env", "MIRAGE_HF_TOKEN"]) == 2
        assert "already exists" in capsys.readouterr().err
    finally:
        api.delete_tag(repo, tag=f"v{version}", repo_type="dataset")
