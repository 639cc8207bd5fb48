"""``publish``: a release dir -> the Hub, as ONE commit and ONE tag ``v<version>``.

Order of work (nothing is written on the Hub before every check passed):

1. check the release against its ``manifest.json`` (every file present, unchanged, nothing extra);
2. find a token (``--token-env VAR``, else ``HF_TOKEN``, else the stored login - huggingface_hub's own lookup);
3. create the dataset repo if needed; refuse when the tag ``v<version>`` exists already;
4. one ``create_commit``: a ``CommitOperationAdd`` per file, a ``CommitOperationDelete`` per stale file of an
   earlier version (under ``data/`` or ``plots/`` in the repo but not in this release), with ``parent_commit`` set
   to the head we looked at, so a concurrent push makes the commit fail instead of being silently mixed;
5. ``create_tag("v<version>", revision=<that commit's oid>)``.

If step 5 fails after step 4 succeeded, publishing again is safe: unchanged files make the commit a no-op and the
tag is created on the existing commit.

``plan_operations`` (``--dry-run``) lists the exact additions (path, size, sha256) without touching the network.
"""

from __future__ import annotations

import json
import os
from contextlib import contextmanager
from pathlib import Path, PurePosixPath
from typing import Any, Iterator

from sources.atomic import unfinished
from sources.errors import MirageError
from sources.hashing import file_sha256
from sources.jsonio import decode_problem

from .release import MANIFEST, SEMVER_RE

REPO_TYPE = "dataset"
STALE_PREFIXES = ("data/", "plots/")
"""Files under these folders belong to one version: the ones a new version lacks are deleted in its commit."""


def load_release(release_dir: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The manifest and ``[{path, size, sha256}]`` of every file (manifest last), checked against the manifest."""
    if not release_dir.is_dir():
        raise MirageError(f"{release_dir}: not a release directory")
    if unfinished(release_dir):
        raise MirageError(f"{release_dir}: an unfinished release (.partial); run `release` again")
    manifest_path = release_dir / MANIFEST
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise MirageError(f"{manifest_path}: missing; {release_dir} is not a release made by `python -m data_cards release`") from None
    except json.JSONDecodeError as exc:
        raise MirageError(f"{manifest_path}: {decode_problem(exc)}") from None
    version = manifest.get("version")
    if not isinstance(version, str) or not SEMVER_RE.match(version):
        raise MirageError(f"{manifest_path}: no valid 'version'")
    listed = manifest.get("files") or {}
    on_disk = {
        p.relative_to(release_dir).as_posix() for p in release_dir.rglob("*") if p.is_file()
    } - {MANIFEST}
    extra = sorted(on_disk - set(listed))
    if extra:
        raise MirageError(f"{release_dir}: file {extra[0]} is not in manifest.json; a release must not be changed")
    files = []
    for rel in sorted(listed):
        path = release_dir / rel
        if not path.is_file():
            raise MirageError(f"{release_dir}: {rel} is listed in manifest.json but missing")
        entry = listed[rel]
        size = path.stat().st_size
        digest = file_sha256(path)
        if size != entry.get("size") or digest != entry.get("sha256"):
            raise MirageError(f"{path}: changed since the release was made (sha256 differs from manifest.json)")
        files.append({"path": rel, "size": size, "sha256": digest})
    files.append({"path": MANIFEST, "size": manifest_path.stat().st_size, "sha256": file_sha256(manifest_path)})
    return manifest, files


def _commit_message(manifest: dict[str, Any]) -> str:
    return f"Release {manifest.get('name')} v{manifest['version']}"


def plan_operations(release_dir: Path, repo_id: str, *, private: bool = False) -> dict[str, Any]:
    """The exact operations ``publish`` would make, without touching the network (``--dry-run``)."""
    _check_repo_id(repo_id)
    manifest, files = load_release(release_dir)
    return {
        "repo_id": repo_id,
        "repo_type": REPO_TYPE,
        "revision": "main",
        "create_repo_if_missing": {"private": private},
        "private_note": "a repo that exists keeps its visibility; --private only applies when it is created",
        "commit_message": _commit_message(manifest),
        "operations": [{"op": "add", **f} for f in files],
        "delete_stale": {
            "rule": "in the same commit, delete every file under "
            + " or ".join(STALE_PREFIXES)
            + " on the repo's main branch that is not added above (shards and plots of earlier versions)",
            "paths": None,
            "note": "the repo's current files are only known online; publish prints the exact deletions it made",
        },
        "tag": {"name": f"v{manifest['version']}", "revision": "<oid of the commit above>"},
        "refuse_if_tag_exists": True,
        "total_bytes": sum(f["size"] for f in files),
    }


def _check_repo_id(repo_id: str) -> None:
    parts = repo_id.split("/")
    if len(parts) != 2 or not all(parts) or any(p.startswith(("-", ".")) for p in parts):
        raise MirageError(f"--repo {repo_id!r}: expected ORG/NAME (a dataset repo id on the Hub)")


def hub_endpoint() -> str:
    from huggingface_hub import constants

    return (os.environ.get("HF_ENDPOINT") or constants.ENDPOINT).rstrip("/")


def find_token(token_env: str | None = None) -> str:
    """``$VAR`` when ``--token-env VAR`` is given, else huggingface_hub's lookup (``HF_TOKEN``, stored login)."""
    if token_env:
        token = os.environ.get(token_env, "").strip()
        if not token:
            raise MirageError(f"no Hugging Face token: environment variable {token_env} (from --token-env) is not set")
        return token
    from huggingface_hub import get_token

    token = get_token()
    if not token:
        raise MirageError(
            "no Hugging Face token: set HF_TOKEN, run `hf auth login`, or pass --token-env VAR with a token "
            "that can write to the repo"
        )
    return token


@contextmanager
def hub_errors(repo_id: str, what: str) -> Iterator[None]:
    """Turn huggingface_hub / network exceptions into one-line :class:`MirageError`s."""
    from huggingface_hub.errors import HfHubHTTPError, OfflineModeIsEnabled

    try:
        yield
    except MirageError:
        raise
    except OfflineModeIsEnabled:
        raise MirageError("HF_HUB_OFFLINE is set: unset it to publish (or use --dry-run)") from None
    except HfHubHTTPError as exc:
        status = exc.response.status_code if exc.response is not None else None
        server = (getattr(exc, "server_message", None) or "").strip().splitlines()
        detail = f": {server[0]}" if server else ""
        if status in (401, 403):
            raise MirageError(
                f"authentication failed while trying to {what} {repo_id} (HTTP {status}){detail}; check that the "
                "token is valid and can write to this repo"
            ) from None
        if status == 412:
            raise MirageError(
                f"{repo_id} changed while publishing (HTTP 412, another push?); nothing was committed, try again"
            ) from None
        raise MirageError(f"the Hub refused to {what} {repo_id} (HTTP {status}){detail}") from None
    except Exception as exc:  # noqa: BLE001 - network failures come from several libraries
        if _is_network_error(exc):
            raise MirageError(
                f"cannot reach the Hub at {hub_endpoint()} to {what} {repo_id} ({type(exc).__name__}); "
                "check the network connection (and HF_ENDPOINT)"
            ) from None
        raise


def _is_network_error(exc: BaseException) -> bool:
    try:
        import httpx2

        if isinstance(exc, httpx2.TransportError):
            return True
    except ImportError:  # pragma: no cover - older huggingface_hub
        pass
    try:
        import httpx

        if isinstance(exc, httpx.TransportError):
            return True
    except ImportError:  # pragma: no cover
        pass
    try:
        import requests

        if isinstance(exc, (requests.ConnectionError, requests.Timeout)):
            return True
    except ImportError:  # pragma: no cover
        pass
    return isinstance(exc, (ConnectionError, TimeoutError))


def publish(
    release_dir: Path, repo_id: str, *, token_env: str | None = None, private: bool = False
) -> dict[str, Any]:
    """Publish a release (see the module docstring); returns what was done."""
    from huggingface_hub import CommitOperationAdd, CommitOperationDelete, HfApi

    _check_repo_id(repo_id)
    manifest, files = load_release(release_dir)
    version = manifest["version"]
    tag = f"v{version}"
    if manifest.get("repo_id") and manifest["repo_id"] != repo_id:
        print(
            f"warning: {release_dir} was made for {manifest['repo_id']} (its card says so); publishing to {repo_id}",
            file=__import__("sys").stderr,
        )
    token = find_token(token_env)
    # HF_ENDPOINT is read now, not only when huggingface_hub was imported: a later change is honoured.
    api = HfApi(endpoint=hub_endpoint(), token=token)

    with hub_errors(repo_id, "create"):
        api.create_repo(repo_id, repo_type=REPO_TYPE, exist_ok=True, private=private or None)
    with hub_errors(repo_id, "list the refs of"):
        refs = api.list_repo_refs(repo_id, repo_type=REPO_TYPE)
    if any(t.name == tag for t in refs.tags):
        raise MirageError(
            f"{repo_id}: tag {tag} already exists; a published version never changes, release a new version"
        )
    head = next((b.target_commit for b in refs.branches if b.name == "main"), None)
    with hub_errors(repo_id, "list the files of"):
        remote = api.list_repo_files(repo_id, repo_type=REPO_TYPE, revision="main") if head else []
    ours = {f["path"] for f in files}
    stale = sorted(p for p in remote if p.startswith(STALE_PREFIXES) and p not in ours)
    operations: list[Any] = [
        CommitOperationAdd(path_in_repo=f["path"], path_or_fileobj=str(release_dir / PurePosixPath(f["path"])))
        for f in files
    ]
    operations += [CommitOperationDelete(path_in_repo=p) for p in stale]
    description = (
        f"{manifest.get('name')} {tag}: {manifest.get('counts', {}).get('num_items')} items; "
        f"build {manifest.get('build', {}).get('name')} (seed {manifest.get('build', {}).get('seed')}, "
        f"code {manifest.get('build', {}).get('code_version')}). Files and SHA-256 in manifest.json."
    )
    with hub_errors(repo_id, "commit to"):
        commit = api.create_commit(
            repo_id,
            operations,
            commit_message=_commit_message(manifest),
            commit_description=description,
            repo_type=REPO_TYPE,
            revision="main",
            parent_commit=head,
        )
    try:
        with hub_errors(repo_id, f"tag {tag} in"):
            api.create_tag(
                repo_id, tag=tag, revision=commit.oid, tag_message=_commit_message(manifest), repo_type=REPO_TYPE
            )
    except MirageError as exc:
        raise MirageError(
            f"{exc} - commit {commit.oid} was made but not tagged; publish again to tag it"
        ) from None
    return {
        "repo_id": repo_id,
        "commit": commit.oid,
        "commit_url": str(commit.commit_url),
        "tag": tag,
        "added": len(files),
        "deleted": stale,
    }
