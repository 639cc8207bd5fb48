"""The Label Studio client of Mirage: the official ``label-studio-sdk`` (2.x) behind one-line errors.

Every call with an API token goes through ``label_studio_sdk.client.LabelStudio`` (projects, task import and
listing, the JSON export, local-files storages, users, annotations, the current user and its token). Hand-written
HTTP (``requests``) remains only where the SDK has no equivalent:

- the browser-like session login (``login``): the SDK authenticates with tokens only, while ``serve`` and the
  reviewer-side tests act as a person who signs in with an e-mail and a password (session cookie + CSRF);
- the calls such a session makes (its whoami, users, export, annotations, invite link and legacy token), since
  the SDK cannot carry a session cookie (it always sends an ``Authorization`` header, which Django REST framework
  checks first and rejects);
- the personal-access-token check at construction, so a wrong token fails at once with one line (the SDK
  refreshes lazily, on the first call).

Every failure becomes a :class:`~annotation.errors.ServerError` whose message is one line naming the server, the
request and the cause, whichever path made the call.
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable, Iterable, Iterator, Mapping
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
        self.sdk: Any = None
        if token:
            if _looks_like_jwt(token):
                self._refresh_access()
            else:
                self.session.headers["Authorization"] = f"Token {token}"
            from label_studio_sdk.client import LabelStudio

            self.sdk = LabelStudio(base_url=self.url, api_key=token, timeout=timeout, max_retries=0)

    # ------------------------------------------------------------------ plumbing
    @classmethod
    def login(cls, url: str, email: str, password: str, timeout: float = DEFAULT_TIMEOUT) -> "LabelStudioClient":
        """A client holding a logged-in session for ``email`` (as a browser would)."""
        client = cls(url, None, timeout)
        client._session_login(email, password)
        return client

    def cookie(self, name: str) -> str | None:
        """The session's cookie ``name`` (``csrftoken``, ``sessionid``), also under the name a room's front gives
        it (``csrftoken_8081``, see :mod:`annotation.front`)."""
        for c in self.session.cookies:
            if c.name == name or c.name.startswith(name + "_"):
                return c.value
        return None

    def _session_login(self, email: str, password: str) -> None:
        page = self._request("GET", "/user/login/", expect_json=False)
        del page
        csrf = self.cookie("csrftoken")
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
        if r.status_code not in (301, 302) or not self.cookie("sessionid"):
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
            hdrs.setdefault("X-CSRFToken", self.cookie("csrftoken") or "")
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
            raise self._not_json(method, path, r.status_code, r.headers.get("Content-Type")) from None

    def _not_json(self, method: str, path: str, status: int, ctype: str | None) -> ServerError:
        return ServerError(
            f"Label Studio at {self.url} answered {method} {path.split('?')[0]} with something that is not JSON "
            f"(HTTP {status}, {ctype or 'no content type'}): is {self.url} really Label Studio?",
            status,
        )

    def _sdk(self, method: str, path: str, call: Callable[[Any], Any], timeout: float | None = None) -> Any:
        """Run ``call(sdk)`` (an SDK call standing for ``method path``), mapping its failures to one line."""
        import httpx
        from label_studio_sdk.core.api_error import ApiError

        options = {"timeout": timeout or self.timeout, "max_retries": 0}
        try:
            return call(options)
        except ApiError as exc:
            status = int(exc.status_code or 0)
            if status < 400:  # a 2xx whose body did not parse: the SDK wraps the text in an ApiError
                ctype = (exc.headers or {}).get("content-type") if hasattr(exc, "headers") else None
                raise self._not_json(method, path, status, ctype) from None
            raise self._status_error(method, path, status, exc.body) from None
        except httpx.TimeoutException:
            raise ServerError(
                f"Label Studio did not answer within {timeout or self.timeout:g} s ({method} {self.url}{path})"
            ) from None
        except httpx.TransportError as exc:
            if isinstance(exc, httpx.ConnectError):
                raise ServerError(
                    f"cannot reach Label Studio at {self.url} ({method} {self.url}{path}): is it running? "
                    "Start one with: python -m annotation serve"
                ) from None
            raise ServerError(f"request to Label Studio failed ({method} {self.url}{path}): {_one_line(exc)}") from None
        except ValueError as exc:  # a body that is not JSON where the SDK parses it itself
            raise self._not_json(method, path, 200, None) from exc

    def _http_error(self, method: str, path: str, r: Any) -> ServerError:
        try:
            body: Any = r.json()
        except ValueError:
            body = "" if "html" in r.headers.get("Content-Type", "") else r.text
        return self._status_error(method, path, r.status_code, body)

    def _status_error(self, method: str, path: str, status: int, body: Any) -> ServerError:
        where = f"{method} {path.split('?')[0]}"
        if isinstance(body, Mapping):
            detail = body.get("detail") or body.get("validation_errors") or body.get("message") or body
        elif isinstance(body, str) and "<html" in body.lower():
            detail = ""
        else:
            detail = body
        if not isinstance(detail, str):
            detail = json.dumps(detail, ensure_ascii=False, default=str)
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
        if self.sdk is None:
            return self.get("/api/current-user/whoami")
        path = "/api/current-user/whoami"
        return _plain(self._sdk("GET", path, lambda o: self.sdk.users.whoami(request_options=o)))

    def legacy_token(self) -> str:
        if self.sdk is None:
            return self.get("/api/current-user/token")["token"]
        return self._sdk("GET", "/api/current-user/token", lambda o: self.sdk.users.get_token(request_options=o)).token

    def invite_url(self) -> str:
        """The organisation's invite path (``/user/signup/?token=...``), relative to the server URL."""
        invite = self.get("/api/invite")  # asked by `serve` in the admin's session
        return invite.get("invite_url") or f"/user/signup/?token={invite['token']}"

    def vote_ledger(self) -> bytes | None:
        """The room's vote ledger, as its front serves it to the maintainer (:mod:`annotation.ledger`); ``None``
        when nothing serves one (a Label Studio server without a room's front answers 404)."""
        from annotation.ledger import LEDGER_ROUTE

        try:
            return self._request("GET", LEDGER_ROUTE, expect_json=False).content
        except ServerError as exc:
            if exc.status == 404:
                return None
            raise

    def users(self) -> list[dict]:
        if self.sdk is None:
            body = self.get("/api/users/", params={"page_size": 10000})
            return body["results"] if isinstance(body, Mapping) and "results" in body else list(body)
        return [_plain(u) for u in self._sdk("GET", "/api/users/", lambda o: self.sdk.users.list(request_options=o))]

    def projects(self) -> list[dict]:
        return self._sdk(
            "GET", "/api/projects/", lambda o: [_plain(p) for p in self.sdk.projects.list(page_size=100, request_options=o)]
        )

    def find_project(self, title: str) -> dict | None:
        matches = [p for p in self.projects() if p.get("title") == title]
        if len(matches) > 1:
            ids = ", ".join(str(p["id"]) for p in matches)
            raise ServerError(f"{len(matches)} Label Studio projects are titled {title!r} (ids {ids}): rename all but one")
        return matches[0] if matches else None

    def create_project(self, body: Mapping[str, Any]) -> dict:
        return _plain(self._sdk("POST", "/api/projects/", lambda o: self.sdk.projects.create(**body, request_options=o)))

    def update_project(self, project_id: int, body: Mapping[str, Any]) -> dict:
        path = f"/api/projects/{project_id}/"
        return _plain(self._sdk("PATCH", path, lambda o: self.sdk.projects.update(project_id, **body, request_options=o)))

    def create_view(
        self, project_id: int, title: str, hidden_data_fields: Iterable[str], hidden_columns: Iterable[str] = ()
    ) -> dict:
        """A Data Manager tab hiding these task-data fields and task columns (in the table and the labeling list)."""
        hidden = [f"tasks:data.{f}" for f in hidden_data_fields] + [f"tasks:{c}" for c in hidden_columns]
        data = {"title": title, "hiddenColumns": {"explore": hidden, "labeling": hidden}}
        return _plain(self._sdk(
            "POST", "/api/dm/views/", lambda o: self.sdk.views.create(project=project_id, data=data, request_options=o)
        ))

    def local_storages(self, project_id: int) -> list[dict]:
        return [
            _plain(s)
            for s in self._sdk(
                "GET", "/api/storages/localfiles/",
                lambda o: self.sdk.import_storage.local.list(project=project_id, request_options=o),
            )
        ]

    def add_local_storage(self, project_id: int, path: str, title: str) -> dict:
        # this storage only authorises serving the images of pushed tasks; a "Sync" in the UI must not turn every
        # file under it into a task, so the filter matches nothing
        return _plain(self._sdk(
            "POST", "/api/storages/localfiles/",
            lambda o: self.sdk.import_storage.local.create(
                project=project_id, path=path, title=title, regex_filter="(?!)", use_blob_urls=True, request_options=o
            ),
        ))

    def iter_tasks(self, project_id: int, page_size: int = 1000) -> Iterator[dict]:
        """Every task of a project (``id`` and ``data``), page by page (the SDK's pager)."""
        pager = self._sdk(
            "GET", "/api/tasks/",
            lambda o: self.sdk.tasks.list(project=project_id, fields="task_only", page_size=page_size, request_options=o),
        )
        pages = iter(pager.iter_pages()) if hasattr(pager, "iter_pages") else iter([pager])
        seen = 0
        while True:
            try:
                page = self._sdk("GET", "/api/tasks/", lambda o: next(pages, None))
            except ServerError as exc:
                if exc.status == 404 and seen:  # Label Studio answers 404 "Invalid page" past the last page
                    return
                raise
            if page is None:
                return
            items = page.items or []
            seen += 1
            for t in items:
                yield {"id": t.id, "data": t.data}
            if len(items) < page_size:  # the last page: no request for the one after
                return

    def update_task_data(self, task_id: int, data: Mapping[str, Any]) -> dict:
        """Replace a task's data (what the reviewer is shown); its annotations stay."""
        path = f"/api/tasks/{task_id}/"
        return _plain(self._sdk("PATCH", path, lambda o: self.sdk.tasks.update(str(task_id), data=dict(data),
                                                                               request_options=o)))

    def import_tasks(self, project_id: int, tasks: Iterable[Mapping[str, Any]]) -> dict:
        return _plain(self._sdk(
            "POST", f"/api/projects/{project_id}/import",
            lambda o: self.sdk.projects.import_tasks(
                project_id, request=list(tasks), commit_to_project=True, return_task_ids=True, request_options=o
            ),
            timeout=max(self.timeout, 300.0),
        ))

    def export_raw(self, project_id: int) -> bytes:
        """The full JSON export of a project (every task, every annotation), as the bytes the server sent."""
        path = f"/api/projects/{project_id}/export"
        if self.sdk is None:
            r = self._request("GET", path, params={"exportType": "JSON", "download_all_tasks": "true"},
                              expect_json=False, timeout=max(self.timeout, EXPORT_TIMEOUT))
            return r.content
        return self._sdk(
            "GET", path,
            lambda o: b"".join(self.sdk.projects.exports.download_sync(
                project_id, export_type="JSON", download_all_tasks=True, request_options=o
            )),
            timeout=max(self.timeout, EXPORT_TIMEOUT),
        )

    def create_annotation(self, task_id: int, result: list, **extra: Any) -> dict:
        body = {"result": result, "was_cancelled": False, "ground_truth": False}
        body.update(extra)
        if self.sdk is None:
            return self.post(f"/api/tasks/{task_id}/annotations/", body)
        path = f"/api/tasks/{task_id}/annotations/"
        return _plain(self._sdk("POST", path, lambda o: self.sdk.annotations.create(task_id, **body, request_options=o)))


def _plain(model: Any) -> Any:
    """An SDK response model as the plain JSON dict the REST API sent (unset fields left out)."""
    if model is None or isinstance(model, (dict, list, str, int, float)):
        return model
    dump = getattr(model, "model_dump", None) or getattr(model, "dict")
    return dump(mode="json", exclude_unset=True) if getattr(model, "model_dump", None) else dump(exclude_unset=True)
