"""Acting as a reviewer against real servers: the review files are not fetchable, others' votes are not visible.

Three rooms (one Label Studio server per reviewer slot, as ``serve --rooms 3`` starts them); the build is pushed
to each; the maintainer's review files lie in the build dir. Each reviewer, logged in to their own room, tries
what the web UI and the API allow any member: fetch the build's files through ``/data/local-files/``, connect a
storage of their own to reach them, open the Data Manager's task list, the task's annotations and the project
export, and log in to another room.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conftest import require_annotation_extra

require_annotation_extra()  # the review loop's client (label-studio-sdk, requests)

from annotation.builddir import load_build  # noqa: E402
from annotation.client import LabelStudioClient  # noqa: E402
from annotation.config import ITEM_ID_FIELD  # noqa: E402
from annotation.pull import pull  # noqa: E402
from annotation.push import push  # noqa: E402
from annotation.serving import serving_folder  # noqa: E402
from tests.annotation.builds import make_build  # noqa: E402
from tests.annotation.lshelpers import REVIEWER_PASSWORD, result, signup  # noqa: E402

pytestmark = pytest.mark.slow

REVIEWERS = ("room1@mirage.test", "room2@mirage.test", "room3@mirage.test")
SECRETS = ("review.json", "adjudications.json", "reviews/export-20260101T000000.000000Z-0123456789ab.json")


@pytest.fixture(scope="module")
def rooms(start_ls, files_root, tmp_path_factory):
    root = tmp_path_factory.mktemp("rooms")
    build_path = make_build(root, 6, external=root / "source-images")
    for name in SECRETS:  # what the maintainer keeps beside the build
        (build_path / name).parent.mkdir(parents=True, exist_ok=True)
        secret = {} if name == "adjudications.json" else {"secret": "every vote and every e-mail"}
        (build_path / name).write_text(json.dumps(secret))
    servers = [start_ls() for _ in REVIEWERS]
    build = load_build(build_path)
    admins = [ls.client() for ls in servers]
    pushes = [push(a, build, "independent review", overlap=1, progress=False) for a in admins]
    reviewers = []
    for ls, email in zip(servers, REVIEWERS):
        signup(ls.url, ls.invite, email)
        reviewers.append(LabelStudioClient.login(ls.url, email, REVIEWER_PASSWORD))
    item = build.items[0]
    task_ids = []
    for k, (admin, rev, res) in enumerate(zip(admins, reviewers, pushes)):
        tid = next(t["id"] for t in admin.iter_tasks(res.project_id) if t["data"][ITEM_ID_FIELD] == item.id)
        verdict = ("accept", "reject", "accept")[k]
        rev.create_annotation(tid, result(item, verdict, comment=f"secret comment of room {k + 1}"), lead_time=1.0)
        task_ids.append(tid)
    return dict(servers=servers, build=build, admins=admins, pushes=pushes, reviewers=reviewers, item=item,
                task_ids=task_ids, files_root=files_root)


def _local_file(client: LabelStudioClient, path: Path, files_root: Path) -> set[int]:
    """HTTP statuses of fetching ``path`` as the absolute path, and as a ``..`` path from the files root."""
    path = Path(path).resolve()
    tries = (str(path).lstrip("/"), os.path.relpath(path, files_root.resolve()))
    return {client.session.get(f"{client.url}/data/local-files/", params={"d": d}, timeout=30).status_code
            for d in tries}


def test_review_files_cannot_be_fetched_by_a_reviewer(rooms):
    build, rev, files_root = rooms["build"], rooms["reviewers"][0], rooms["files_root"]
    # the images the tasks show are served ...
    task = rev.get(f"/api/tasks/{rooms['task_ids'][0]}")
    url = task["data"]["images"][0]["url"]
    assert rev.session.get(rev.url + url, timeout=30).status_code == 200
    # ... from a folder of links to them only; the build dir and its review files are not
    folder = serving_folder(build.path, files_root)
    assert url.startswith("/data/local-files/?d=" + str(folder.relative_to(files_root.resolve())))
    assert not any(p.suffix == ".json" for p in folder.rglob("*"))
    for name in (*SECRETS, "items.jsonl", "build.json"):
        assert 200 not in _local_file(rev, build.path / name, files_root), name  # 404, or 500 for a ".." path
    # a reviewer cannot connect a storage of their own to reach the build dir: it lies outside the files root
    pid = rooms["pushes"][0].project_id
    r = rev.session.post(f"{rev.url}/api/storages/localfiles/", json={"project": pid, "path": str(build.path),
                         "title": "peek"}, headers={"X-CSRFToken": rev.session.cookies["csrftoken"],
                                                     "Referer": rev.url + "/"}, timeout=30)
    assert r.status_code == 400, r.text
    assert 200 not in _local_file(rev, build.path / "review.json", files_root)


def test_a_reviewer_sees_no_other_reviewer_s_annotation(rooms):
    item = rooms["item"]
    for k, rev in enumerate(rooms["reviewers"]):
        mine = REVIEWERS[k]
        pid, tid = rooms["pushes"][k].project_id, rooms["task_ids"][k]
        # the task's annotations, the Data Manager's task list and the full export: only their own vote
        anns = rev.get(f"/api/tasks/{tid}/annotations/")
        assert [a["completed_by"] for a in anns] == [rev.whoami()["id"]]
        dm = rev.get("/api/tasks/", params={"project": pid, "fields": "all", "page_size": 100})
        dm_text = json.dumps(dm)
        export = json.loads(rev.export_raw(pid))
        annotated = [t for t in export if t["data"][ITEM_ID_FIELD] == item.id]
        assert len(annotated) == 1 and len(annotated[0]["annotations"]) == 1
        for j in range(3):
            if j != k:
                assert f"secret comment of room {j + 1}" not in json.dumps(export)
                assert f"secret comment of room {j + 1}" not in dm_text
                # and their own account does not exist in another room
                other = rooms["servers"][j].url
                with pytest.raises(Exception, match="refused the login"):
                    LabelStudioClient.login(other, mine, REVIEWER_PASSWORD)
        assert all(u["email"] not in REVIEWERS or u["email"] == mine for u in rev.users())


def test_pull_merges_the_rooms(rooms):
    out = pull(rooms["admins"], rooms["build"], "independent review", overlap=3,
               accept_unverified=True)  # bare servers: no ledgers
    entry = out.review["items"][rooms["item"].id]
    assert entry["status"] == "keep" and entry["votes"] == {"accept": 2, "fix": 0, "reject": 1}
    assert [(a["room"], a["reviewer"]) for a in entry["annotations"]] == list(zip((1, 2, 3), REVIEWERS))
    assert [r["room"] for r in out.review["rooms"]] == [1, 2, 3]
    assert out.review["problems"] == []
    assert all(p["maximum_annotations"] == 1 for p in (a.find_project("independent review") for a in rooms["admins"]))
