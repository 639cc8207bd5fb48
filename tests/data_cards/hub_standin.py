"""An in-process stand-in for the Hugging Face Hub, on loopback, for the real huggingface_hub / datasets clients.

It implements only the routes Mirage's publish and ``datasets.load_dataset(repo, revision=...)`` use, with the
Hub's JSON shapes and error headers (``X-Error-Code``), read from huggingface_hub's client code:

- ``POST /api/repos/create``; ``GET /api/datasets/{id}[/revision/{rev}]``; ``GET /api/datasets/{id}/refs``
- ``POST /api/validate-yaml``; ``POST /api/datasets/{id}/preupload/{rev}`` (every file "regular": no LFS/Xet)
- ``POST /api/datasets/{id}/commit/{rev}`` (ndjson: header, file, deletedFile, deletedFolder; ``parentCommit``)
- ``POST /api/datasets/{id}/tag/{rev}`` (409 when the tag exists)
- ``GET /api/datasets/{id}/tree/{rev}[/{path}]`` (``recursive``), ``POST /api/datasets/{id}/paths-info/{rev}``
- ``HEAD``/``GET /datasets/{id}/resolve/{rev}/{path}``

Auth: a request carrying ``Authorization: Bearer <token>`` with a token not in ``tokens`` gets 401; writes need a
valid token. Every request is logged in ``requests`` as ``(method, path)``.
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, unquote, urlparse

import yaml


def git_blob_oid(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


@dataclass
class Commit:
    oid: str
    parent: str | None
    files: dict[str, bytes]
    title: str
    date: str


@dataclass
class Repo:
    repo_id: str
    private: bool = False
    commits: dict[str, Commit] = field(default_factory=dict)
    branches: dict[str, str] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)

    def resolve(self, rev: str) -> Commit | None:
        rev = unquote(rev)
        for table in (self.branches, self.tags):
            if rev in table:
                return self.commits[table[rev]]
        for name, oid in list(self.branches.items()) + list(self.tags.items()):
            if rev in (f"refs/heads/{name}", f"refs/tags/{name}"):
                return self.commits[oid]
        if rev in self.commits:
            return self.commits[rev]
        matches = [c for oid, c in self.commits.items() if len(rev) >= 7 and oid.startswith(rev)]
        return matches[0] if len(matches) == 1 else None

    def new_commit(self, parent: str | None, files: dict[str, bytes], title: str) -> Commit:
        date = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())
        oid = hashlib.sha1(f"{parent}|{title}|{date}|{len(self.commits)}|{sorted(files)}".encode()).hexdigest()
        commit = Commit(oid=oid, parent=parent, files=files, title=title, date=date)
        self.commits[oid] = commit
        return commit


class HubStandIn:
    """Start with ``with HubStandIn() as hub: ...``; ``hub.url`` is the endpoint to put in ``HF_ENDPOINT``."""

    def __init__(self, tokens: tuple[str, ...] = ("hf_standin_write",), user: str = "mirage-tester") -> None:
        self.tokens = set(tokens)
        self.user = user
        self.repos: dict[str, Repo] = {}
        self.requests: list[tuple[str, str]] = []
        self.lock = threading.Lock()
        self.server: ThreadingHTTPServer | None = None
        self.thread: threading.Thread | None = None

    # ------------------------------------------------------------------ lifecycle
    def __enter__(self) -> "HubStandIn":
        hub = self

        class Handler(_Handler):
            pass

        Handler.hub = hub
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        assert self.server is not None
        self.server.shutdown()
        self.server.server_close()

    @property
    def url(self) -> str:
        assert self.server is not None
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    # ------------------------------------------------------------------ helpers for tests
    def commits_on(self, repo_id: str) -> int:
        return len(self.repos[repo_id].commits)

    def files_at(self, repo_id: str, rev: str = "main") -> dict[str, bytes]:
        commit = self.repos[repo_id].resolve(rev)
        assert commit is not None
        return dict(commit.files)

    def count(self, method: str, path_part: str) -> int:
        return sum(1 for m, p in self.requests if m == method and path_part in p)


class _Handler(BaseHTTPRequestHandler):
    hub: HubStandIn
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    # ------------------------------------------------------------------ plumbing
    def _send(self, status: int, body: Any = None, headers: dict[str, str] | None = None, head: bool = False) -> None:
        if isinstance(body, (dict, list)):
            data = json.dumps(body).encode()
            ctype = "application/json"
        elif isinstance(body, bytes):
            data, ctype = body, "application/octet-stream"
        else:
            data, ctype = (body or "").encode(), "text/plain"
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        if not head:
            self.wfile.write(data)

    def _error(self, status: int, message: str, code: str | None = None, head: bool = False) -> None:
        headers = {"X-Error-Message": message}
        if code:
            headers["X-Error-Code"] = code
        self._send(status, {"error": message}, headers, head=head)

    def _body(self) -> bytes:
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def _auth(self, write: bool) -> bool:
        """False (and a 401 sent) when the token is invalid, or missing for a write."""
        header = self.headers.get("Authorization") or ""
        token = header[7:] if header.startswith("Bearer ") else None
        if token is not None and token not in self.hub.tokens:
            self._error(401, "Invalid credentials in Authorization header")
            return False
        if write and token is None:
            self._error(401, "You must be authenticated to do this")
            return False
        return True

    def _repo(self, repo_id: str, head: bool = False) -> Repo | None:
        repo = self.hub.repos.get(repo_id)
        if repo is None:
            self._error(404, f"Repository {repo_id} not found", "RepoNotFound", head=head)
        return repo

    def _commit(self, repo: Repo, rev: str, head: bool = False) -> Commit | None:
        commit = repo.resolve(rev)
        if commit is None:
            self._error(404, f"Invalid rev id: {unquote(rev)}", "RevisionNotFound", head=head)
        return commit

    # ------------------------------------------------------------------ dispatch
    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_HEAD(self) -> None:
        self._dispatch("HEAD")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def _dispatch(self, method: str) -> None:
        parsed = urlparse(self.path)
        raw_path, query = parsed.path, parse_qs(parsed.query)
        with self.hub.lock:
            self.hub.requests.append((method, raw_path))
        body = self._body() if method == "POST" else b""
        if not self._auth(write=method == "POST" and raw_path != "/api/validate-yaml"):
            return
        parts = raw_path.split("/")
        try:
            with self.hub.lock:
                self._route(method, parts, query, body)
        except Exception as exc:  # pragma: no cover - a bug in the stand-in shows as a 500 with the reason
            self._error(500, f"stand-in error: {type(exc).__name__}: {exc}")

    def _route(self, method: str, parts: list[str], query: dict[str, list[str]], body: bytes) -> None:
        # parts[0] == "" (leading slash)
        if method == "POST" and parts[1:4] == ["api", "repos", "create"]:
            return self._create_repo(json.loads(body or b"{}"))
        if method == "POST" and parts[1:3] == ["api", "validate-yaml"]:
            return self._validate_yaml(json.loads(body or b"{}"))
        if method == "GET" and parts[1:3] == ["api", "whoami-v2"]:
            return self._send(200, {"name": self.hub.user, "type": "user", "auth": {}})
        if parts[1:3] == ["api", "datasets"] and len(parts) >= 5:
            repo_id = f"{parts[3]}/{parts[4]}"
            rest = parts[5:]
            if method == "GET" and not rest:
                return self._info(repo_id, "main")
            if method == "GET" and rest[0] == "revision" and len(rest) >= 2:
                return self._info(repo_id, "/".join(rest[1:]))
            if method == "GET" and rest == ["refs"]:
                return self._refs(repo_id)
            if method == "POST" and rest[0] == "preupload":
                return self._preupload(repo_id, "/".join(rest[1:]), json.loads(body))
            if method == "POST" and rest[0] == "commit":
                return self._commit_ndjson(repo_id, "/".join(rest[1:]), body)
            if method == "POST" and rest[0] == "tag":
                return self._tag(repo_id, "/".join(rest[1:]), json.loads(body))
            if method == "GET" and rest[0] == "tree":
                return self._tree(repo_id, rest[1], "/".join(unquote(p) for p in rest[2:]), query)
            if method == "POST" and rest[0] == "paths-info":
                return self._paths_info(repo_id, "/".join(rest[1:]), body)
        if parts[1:2] == ["datasets"] and len(parts) >= 6 and parts[4] == "resolve":
            return self._resolve(f"{parts[2]}/{parts[3]}", parts[5], "/".join(unquote(p) for p in parts[6:]), method)
        self._error(404, f"stand-in: no route for {method} {'/'.join(parts)}")

    # ------------------------------------------------------------------ endpoints
    def _create_repo(self, payload: dict[str, Any]) -> None:
        org = payload.get("organization") or self.hub.user
        repo_id = f"{org}/{payload['name']}"
        url = f"{self.hub.url}/datasets/{repo_id}"
        if payload.get("type") != "dataset":
            return self._error(400, "stand-in only serves dataset repos")
        if repo_id in self.hub.repos:
            # The Hub answers 409 with the repo's url: huggingface_hub reads it when exist_ok=True.
            msg = "You already created this dataset repo"
            return self._send(409, {"error": msg, "url": url}, {"X-Error-Message": msg})
        repo = Repo(repo_id, private=payload.get("visibility") == "private")
        first = repo.new_commit(None, {".gitattributes": b"*.parquet filter=lfs diff=lfs merge=lfs -text\n"}, "initial commit")
        repo.branches["main"] = first.oid
        self.hub.repos[repo_id] = repo
        self._send(200, {"url": url, "name": repo_id, "id": repo_id})

    def _validate_yaml(self, payload: dict[str, Any]) -> None:
        content = payload.get("content", "")
        if content.startswith("---\n"):
            try:
                yaml.safe_load(content[4 : content.index("\n---\n", 4)])
            except Exception as exc:
                return self._send(400, {"errors": [{"message": str(exc)}]})
        self._send(200, {"errors": [], "warnings": []})

    def _info(self, repo_id: str, rev: str) -> None:
        repo = self._repo(repo_id)
        if repo is None:
            return
        commit = self._commit(repo, rev)
        if commit is None:
            return
        card = {}
        readme = commit.files.get("README.md", b"").decode()
        if readme.startswith("---\n"):
            card = yaml.safe_load(readme[4 : readme.index("\n---\n", 4)]) or {}
        self._send(
            200,
            {
                "_id": hashlib.md5(repo_id.encode()).hexdigest()[:24],
                "id": repo_id,
                "author": repo_id.split("/")[0],
                "sha": commit.oid,
                "lastModified": commit.date,
                "private": repo.private,
                "gated": False,
                "disabled": False,
                "downloads": 0,
                "likes": 0,
                "tags": [],
                "cardData": card,
                "siblings": [{"rfilename": p} for p in sorted(commit.files)],
                "createdAt": commit.date,
            },
        )

    def _refs(self, repo_id: str) -> None:
        repo = self._repo(repo_id)
        if repo is None:
            return

        def refs(table: dict[str, str], kind: str) -> list[dict[str, str]]:
            return [{"name": n, "ref": f"refs/{kind}/{n}", "targetCommit": oid} for n, oid in sorted(table.items())]

        self._send(200, {"branches": refs(repo.branches, "heads"), "tags": refs(repo.tags, "tags"), "converts": [],
                         "pullRequests": []})

    def _preupload(self, repo_id: str, rev: str, payload: dict[str, Any]) -> None:
        repo = self._repo(repo_id)
        if repo is None:
            return
        commit = repo.resolve(rev)
        files = commit.files if commit else {}
        out = []
        for f in payload["files"]:
            existing = files.get(f["path"])
            out.append(
                {
                    "path": f["path"],
                    "uploadMode": "regular",
                    "shouldIgnore": False,
                    "oid": git_blob_oid(existing) if existing is not None else None,
                }
            )
        self._send(200, {"files": out, "commitOid": commit.oid if commit else None})

    def _commit_ndjson(self, repo_id: str, rev: str, body: bytes) -> None:
        repo = self._repo(repo_id)
        if repo is None:
            return
        branch = unquote(rev)
        if branch not in repo.branches:
            return self._error(404, f"Invalid rev id: {branch}", "RevisionNotFound")
        head = repo.commits[repo.branches[branch]]
        files = dict(head.files)
        header: dict[str, Any] = {}
        for line in body.splitlines():
            if not line.strip():
                continue
            entry = json.loads(line)
            key, value = entry["key"], entry["value"]
            if key == "header":
                header = value
            elif key == "file":
                if value.get("encoding") != "base64":
                    return self._error(400, "stand-in: only base64 file content")
                files[value["path"]] = base64.b64decode(value["content"])
            elif key == "deletedFile":
                if value["path"] not in files:
                    return self._error(404, "A file with this name doesn't exist", "EntryNotFound")
                del files[value["path"]]
            elif key == "deletedFolder":
                prefix = value["path"].rstrip("/") + "/"
                files = {p: d for p, d in files.items() if not p.startswith(prefix)}
            else:  # lfsFile: the stand-in never asks for LFS
                return self._error(400, f"stand-in: unsupported commit entry {key}")
        parent = header.get("parentCommit")
        if parent and not head.oid.startswith(parent):
            return self._error(412, "A commit has happened since. Please refresh and try again.")
        commit = repo.new_commit(head.oid, files, header.get("summary", ""))
        repo.branches[branch] = commit.oid
        self._send(
            200,
            {
                "success": True,
                "commitOid": commit.oid,
                "commitUrl": f"{self.hub.url}/datasets/{repo_id}/commit/{commit.oid}",
                "hookOutput": "",
            },
        )

    def _tag(self, repo_id: str, rev: str, payload: dict[str, Any]) -> None:
        repo = self._repo(repo_id)
        if repo is None:
            return
        commit = self._commit(repo, rev)
        if commit is None:
            return
        tag = payload["tag"]
        if tag in repo.tags:
            return self._error(409, f"Tag {tag} already exists")
        repo.tags[tag] = commit.oid
        self._send(200, {})

    def _entries(self, commit: Commit, path: str, recursive: bool) -> list[dict[str, Any]] | None:
        prefix = path.strip("/") + "/" if path.strip("/") else ""
        if prefix and not any(p.startswith(prefix) for p in commit.files):
            return None
        out: dict[str, dict[str, Any]] = {}
        for p, data in sorted(commit.files.items()):
            if not p.startswith(prefix):
                continue
            rest = p[len(prefix) :]
            segments = rest.split("/")
            # folders on the way
            for depth in range(1, len(segments)):
                folder = prefix + "/".join(segments[:depth])
                if depth == 1 or recursive:
                    out.setdefault(folder, {"type": "directory", "path": folder, "oid": git_blob_oid(folder.encode()),
                                            "size": 0})
                if not recursive:
                    break
            if len(segments) == 1 or recursive:
                out[p] = {"type": "file", "path": p, "oid": git_blob_oid(data), "size": len(data)}
        return list(out.values())

    def _tree(self, repo_id: str, rev: str, path: str, query: dict[str, list[str]]) -> None:
        repo = self._repo(repo_id)
        if repo is None:
            return
        commit = self._commit(repo, rev)
        if commit is None:
            return
        recursive = (query.get("recursive") or ["false"])[0].lower() in ("1", "true")
        entries = self._entries(commit, path, recursive)
        if entries is None:
            return self._error(404, f"{path} does not exist", "EntryNotFound")
        self._send(200, entries)

    def _paths_info(self, repo_id: str, rev: str, body: bytes) -> None:
        repo = self._repo(repo_id)
        if repo is None:
            return
        commit = self._commit(repo, rev)
        if commit is None:
            return
        ctype = self.headers.get("Content-Type", "")
        if "json" in ctype:
            paths = json.loads(body).get("paths", [])
        else:
            paths = parse_qs(body.decode()).get("paths", [])
        out = []
        for p in paths:
            p = p.strip("/")
            if p in commit.files:
                out.append({"type": "file", "path": p, "oid": git_blob_oid(commit.files[p]), "size": len(commit.files[p])})
            elif any(f.startswith(p + "/") for f in commit.files):
                out.append({"type": "directory", "path": p, "oid": git_blob_oid(p.encode()), "size": 0})
        self._send(200, out)

    def _resolve(self, repo_id: str, rev: str, path: str, method: str) -> None:
        head = method == "HEAD"
        repo = self._repo(repo_id, head=head)
        if repo is None:
            return
        commit = self._commit(repo, rev, head=head)
        if commit is None:
            return
        data = commit.files.get(path)
        if data is None:
            return self._error(404, f"Entry not found: {path}", "EntryNotFound", head=head)
        headers = {"X-Repo-Commit": commit.oid, "ETag": f'"{git_blob_oid(data)}"'}
        self._send(200, data, headers, head=head)
