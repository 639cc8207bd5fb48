"""A thin client for the few Label Studio REST endpoints Mirage needs, with one-line errors.

Plain ``requests`` rather than ``label-studio-sdk``: the endpoints used here (projects, import, export, local-files
storage, users, invite) have been stable for years, while the SDK's generated client changed shape between major
versions and pulls in a large dependency tree (pandas, OpenCV, NLTK, ...). Every failure becomes a
:class:`~annotation.errors.ServerError` whose message is one line naming the server, the request and the cause.

Authentication: a legacy API token (``Authorization: Token ...``), a personal access token (a JWT refresh token,
exchanged for short-lived access tokens), or a browser-like session (``login``; used by ``serve`` and the tests).
"""

from __future__ import annotations

import json
import re
from typing import Any, Iterable, Iterator, Mapping
from urllib.parse import urlencode

from annotation.errors import ServerError

DEFAULT_TIMEOUT = 60.0
EXPORT_TIMEOUT = 600.0


def _one_line(text: str, limit: int = 300) -> str:
    text = re.sub(r"\s+", " ", str(text)).strip()
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _looks_like_jwt(token: str) -> bool:
    return token.count(".") == 2 and token.startswith("ey")


class LabelStudioClient:
    """Calls to one Label Studio server. Create it with a token, or with :meth:`login` for a session."""

    def __init__(self, url: str, token: str | None = None, timeout: float = DEFAULT_TIMEOUT) -> None:
        import requests

        if not re.match(r"^https?://", url or ""):
            raise ServerError(f"Label Studio URL {url!r} must start with http:// or https://")
        self.url = url.rstrip("/")
        self.timeout = timeout
        self.session = requests.Session()
        self.session.headers["Accept"] = "application/json"
        self._token = token
        self._jwt_access: str | None = None
        self._csrf = False
        if token:
            if _looks_like_jwt(token):
                self._refresh_access()
            else:
                self.session.headers["Authorization"] = f"Token {token}"

    # ------------------------------------------------------------------ plumbing
    @classmethod
    def login(cls, url: str, email: str, password: str, timeout: float = DEFAULT_TIMEOUT) -> "LabelStudioClient":
        """A client holding a logged-in session for ``email`` (as a browser would)."""
        client = cls(url, None, timeout)
        client._session_login(email, password)
        return client

    def _session_login(self, email: str, password: str) -> None:
        page = self._request("GET", "/user/login/", expect_json=False)
        del page
        csrf = self.session.cookies.get("csrftoken")
        if not csrf:
            raise ServerError(f"Label Studio at {self.url}: the login page set no CSRF cookie")
        r = self._request(
            "POST",
            "/user/login/",
            data={"email": email, "password": password, "csrfmiddlewaretoken": csrf},
            headers={"Referer": self.url + "/user/login/"},
            expect_json=False,
            allow_redirects=False,
        )
        if r.status_code not in (301, 302) or not self.session.cookies.get("sessionid"):
            raise ServerError(f"Label Studio at {self.url} refused the login of {email}: wrong e-mail or password")
        self._csrf = True

    def _refresh_access(self) -> None:
        import requests

        try:
            r = self.session.post(
                self.url + "/api/token/refresh/", json={"refresh": self._token}, timeout=self.timeout
            )
        except requests.RequestException as exc:
            raise self._transport_error("POST", "/api/token/refresh/", exc) from None
        if r.status_code != 200:
            raise ServerError(
                f"Label Studio at {self.url} rejected the personal access token (HTTP {r.status_code}): "
                "check LABEL_STUDIO_API_KEY / --token",
                r.status_code,
            )
        self._jwt_access = r.json()["access"]
        self.session.headers["Authorization"] = f"Bearer {self._jwt_access}"

    def _transport_error(self, method: str, path: str, exc: Exception) -> ServerError:
        import requests

        where = f"{method} {self.url}{path.split('?')[0]}"
        if isinstance(exc, requests.Timeout):
            return ServerError(f"Label Studio did not answer within {self.timeout:g} s ({where})")
        if isinstance(exc, requests.ConnectionError):
            return ServerError(
                f"cannot reach Label Studio at {self.url} ({where}): is it running? "
                "Start one with: python -m annotation serve"
            )
        return ServerError(f"request to Label Studio failed ({where}): {_one_line(exc)}")

    def _request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        json_body: Any = None,
        data: Any = None,
        headers: Mapping[str, str] | None = None,
        expect_json: bool = True,
        timeout: float | None = None,
        allow_redirects: bool = True,
        _retried: bool = False,
    ) -> Any:
        import requests

        url = self.url + path
        if params:
            url += ("&" if "?" in url else "?") + urlencode(params)
        hdrs = dict(headers or {})
        if self._csrf and method not in ("GET", "HEAD"):
            hdrs.setdefault("X-CSRFToken", self.session.cookies.get("csrftoken", ""))
            hdrs.setdefault("Referer", self.url + "/")
        try:
            r = self.session.request(
                method,
                url,
                json=json_body,
                data=data,
                headers=hdrs,
                timeout=timeout or self.timeout,
                allow_redirects=allow_redirects,
            )
        except requests.RequestException as exc:
            raise self._transport_error(method, path, exc) from None
        if r.status_code == 401 and self._jwt_access and not _retried:
            self._refresh_access()
            return self._request(
                method, path, params=params, json_body=json_body, data=data, headers=headers,
                expect_json=expect_json, timeout=timeout, allow_redirects=allow_redirects, _retried=True,
            )
        if r.status_code >= 400:
            raise self._http_error(method, path, r)
        if not expect_json:
            return r
        if r.status_code == 204 or not r.content:
            return None
        try:
            return r.json()
        except ValueError:
            raise ServerError(
                f"Label Studio at {self.url} answered {method} {path.split('?')[0]} with something that is not JSON "
                f"(HTTP {r.status_code}, {r.headers.get('Content-Type', 'no content type')}): is {self.url} really "
                "Label Studio?",
                r.status_code,
            ) from None

    def _http_error(self, method: str, path: str, r: Any) -> ServerError:
        where = f"{method} {path.split('?')[0]}"
        status = r.status_code
        detail = ""
        try:
            body = r.json()
            if isinstance(body, Mapping):
                detail = body.get("detail") or body.get("validation_errors") or body.get("message") or body
            else:
                detail = body
            if not isinstance(detail, str):
                detail = json.dumps(detail, ensure_ascii=False)
        except ValueError:
            detail = "" if "html" in r.headers.get("Content-Type", "") else r.text
        detail = _one_line(detail, 200)
        if status in (401, 403) and not self._csrf:
            how = "no API token given: pass --token or set LABEL_STUDIO_API_KEY" if not self._token else (
                "check LABEL_STUDIO_API_KEY / --token (the admin's token is printed by `python -m annotation serve`)"
            )
            return ServerError(f"Label Studio at {self.url} rejected the request {where} (HTTP {status}): {how}", status)
        if status >= 500:
            return ServerError(
                f"Label Studio at {self.url} failed on {where} with HTTP {status}"
                + (f": {detail}" if detail else "; see the server log"),
                status,
            )
        return ServerError(
            f"Label Studio at {self.url} refused {where} (HTTP {status})" + (f": {detail}" if detail else ""), status
        )

    def get(self, path: str, **kw: Any) -> Any:
        return self._request("GET", path, **kw)

    def post(self, path: str, body: Any = None, **kw: Any) -> Any:
        return self._request("POST", path, json_body=body, **kw)

    def patch(self, path: str, body: Any = None, **kw: Any) -> Any:
        return self._request("PATCH", path, json_body=body, **kw)

    def delete(self, path: str, **kw: Any) -> Any:
        return self._request("DELETE", path, **kw)

    # ------------------------------------------------------------------ endpoints
    def health(self) -> bool:
        """Whether the server answers ``/health``."""
        r = self._request("GET", "/health", expect_json=False)
        return r.status_code == 200

    def whoami(self) -> dict:
        """The user the credentials belong to (checks the token early, with a clear message)."""
        return self.get("/api/current-user/whoami")

    def legacy_token(self) -> str:
        return self.get("/api/current-user/token")["token"]

    def invite_url(self) -> str:
        """The organisation's invite path (``/user/signup/?token=...``), relative to the server URL."""
        invite = self.get("/api/invite")
        url = invite.get("invite_url") or f"/user/signup/?token={invite['token']}"
        return url

    def users(self) -> list[dict]:
        body = self.get("/api/users/", params={"page_size": 10000})
        return body["results"] if isinstance(body, Mapping) and "results" in body else list(body)

    def projects(self) -> list[dict]:
        out: list[dict] = []
        page = 1
        while True:
            body = self.get("/api/projects/", params={"page": page, "page_size": 100})
            if isinstance(body, list):
                return body
            out.extend(body.get("results", []))
            if not body.get("next"):
                return out
            page += 1

    def find_project(self, title: str) -> dict | None:
        matches = [p for p in self.projects() if p.get("title") == title]
        if len(matches) > 1:
            ids = ", ".join(str(p["id"]) for p in matches)
            raise ServerError(f"{len(matches)} Label Studio projects are titled {title!r} (ids {ids}): rename all but one")
        return matches[0] if matches else None

    def create_project(self, body: Mapping[str, Any]) -> dict:
        return self.post("/api/projects/", dict(body))

    def update_project(self, project_id: int, body: Mapping[str, Any]) -> dict:
        return self.patch(f"/api/projects/{project_id}/", dict(body))

    def local_storages(self, project_id: int) -> list[dict]:
        return self.get("/api/storages/localfiles/", params={"project": project_id})

    def add_local_storage(self, project_id: int, path: str, title: str) -> dict:
        return self.post(
            "/api/storages/localfiles/",
            {
                "project": project_id,
                "path": path,
                "title": title,
                # this storage only authorises serving the images of pushed tasks; a "Sync" in the UI must not
                # turn every file under it into a task, so the filter matches nothing
                "regex_filter": "(?!)",
                "use_blob_urls": True,
            },
        )

    def iter_tasks(self, project_id: int, page_size: int = 1000) -> Iterator[dict]:
        """Every task of a project (``id`` and ``data``), page by page."""
        page = 1
        while True:
            try:
                body = self.get(
                    "/api/tasks/",
                    params={"project": project_id, "page": page, "page_size": page_size, "fields": "task_only"},
                )
            except ServerError as exc:
                if exc.status == 404 and page > 1:  # past the last page
                    return
                raise
            tasks = body.get("tasks", []) if isinstance(body, Mapping) else body
            yield from tasks
            total = body.get("total") if isinstance(body, Mapping) else None
            if not tasks or len(tasks) < page_size or (total is not None and page * page_size >= total):
                return
            page += 1

    def import_tasks(self, project_id: int, tasks: Iterable[Mapping[str, Any]]) -> dict:
        return self.post(
            f"/api/projects/{project_id}/import",
            list(tasks),
            params={"commit_to_project": "true", "return_task_ids": "true"},
            timeout=max(self.timeout, 300.0),
        )

    def export_raw(self, project_id: int) -> bytes:
        """The full JSON export of a project (every task, every annotation), as the bytes the server sent."""
        r = self._request(
            "GET",
            f"/api/projects/{project_id}/export",
            params={"exportType": "JSON", "download_all_tasks": "true"},
            expect_json=False,
            timeout=max(self.timeout, EXPORT_TIMEOUT),
        )
        return r.content

    def create_annotation(self, task_id: int, result: list, **extra: Any) -> dict:
        body = {"result": result, "was_cancelled": False, "ground_truth": False}
        body.update(extra)
        return self.post(f"/api/tasks/{task_id}/annotations/", body)
