"""Push rate for 2,000 items; pull + resolve time for 2,000 items x 3 annotations, against a real Label Studio.

    python benchmarks/bench_annotation.py [--items 2000] [--url URL --token TOKEN]

Without --url it starts its own server in a temporary data dir (the first start migrates its database, about a
minute, not timed). Figures are printed, never asserted. What is timed:

- push: ``annotation.push.push`` of a fresh build (project creation, storage, task listing, batched import);
- re-push: the same build again (lists the project's tasks, imports nothing);
- pull: ``annotation.pull.pull`` of a project whose items each carry 3 annotations by 3 reviewers (export over
  HTTP, resolution, writing review.json and reviewed.jsonl), and inside it the pure resolution alone.

The annotated project is set up by importing tasks together with their annotations (``completed_by`` set to the
three reviewers), which Label Studio accepts in one request per batch; posting 6,000 annotations one by one
through the API would only time the setup.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from annotation.builddir import load_build  # noqa: E402
from annotation.client import LabelStudioClient  # noqa: E402
from annotation.config import correction_choices, item_kind, labeling_config, task_data  # noqa: E402
from annotation.pull import pull  # noqa: E402
from annotation.push import push, project_settings  # noqa: E402
from annotation.resolve import resolve  # noqa: E402
from builders.items import make_item, write_items  # noqa: E402
from tests.annotation.builds import draw_png  # noqa: E402
from tests.annotation.lshelpers import result, signup  # noqa: E402

ADMIN, PASSWORD = "bench-admin@mirage.test", "bench-pass-1234"
REVIEWERS = ["b1@mirage.test", "b2@mirage.test", "b3@mirage.test"]


def make_bench_build(root: Path, n: int) -> Path:
    """``n`` items of mixed kinds over a pool of 40 small PNGs (1 to 10 images each)."""
    build = root / "builds" / "bench" / f"n{n}"
    for k in range(40):
        draw_png(build / "images" / f"pool-{k:02d}.png", k)
    items = []
    for i in range(n):
        images = [f"images/pool-{(i + k) % 40:02d}.png" for k in range(1 + i % 10)]
        common = dict(benchmark="bench", task="existence", pressure="easy", images=images, provenance={"i": i})
        kind = i % 3
        if kind == 0:
            items.append(make_item(question_type="selective", question=f"Which image shows object {i}?",
                                   options=["Image 1", "Image 2", "Image 3", "None of the above"], answer="A",
                                   **common))
        elif kind == 1:
            items.append(make_item(question_type="yes_no", question=f"Is object {i} present?", options=[],
                                   answer="yes", **common))
        else:
            items.append(make_item(question_type="vqa", question=f"Where is object {i}?", options=[],
                                   answer=f"Object {i} is on the table", **common))
    write_items(build / "items.jsonl", items)
    (build / "build.json").write_text(json.dumps({"benchmark": "bench", "name": f"n{n}", "seed": 0, "config": {}}))
    return build


def annotated_tasks(build, user_ids: list[int], rng: random.Random) -> list[dict]:
    tasks = []
    for it in build.items:
        anns = []
        for uid in user_ids:
            r = rng.random()
            if r < 0.8:
                res = result(it, "accept")
            elif r < 0.9:
                other = [a for a in (correction_choices(it).values() or []) if a != it.answer]
                fix = other[0] if other else "something else"
                res = result(it, "fix", fix if item_kind(it) != "vqa" else "Object is under the table")
            else:
                res = result(it, "reject", issues=("ambiguous",), comment="unclear")
            anns.append({"result": res, "completed_by": uid, "was_cancelled": False, "lead_time": 3.0})
        tasks.append({"data": task_data(it, build.path, Path("/")), "annotations": anns})
    return tasks


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--items", type=int, default=2000)
    ap.add_argument("--url", default=None, help="a running Label Studio (default: start one)")
    ap.add_argument("--token", default=None, help="admin token of --url")
    ap.add_argument("--batch-size", type=int, default=250)
    args = ap.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="bench-annotation-"))
    server = None
    if args.url:
        url, token = args.url, args.token
    else:
        from annotation.serve import Server, ServerSpec, find_label_studio_bin, free_port

        (tmp / "files").mkdir()
        os.environ["LOCAL_FILES_DOCUMENT_ROOT"] = str(tmp / "files")  # where push links the images
        spec = ServerSpec(bin=find_label_studio_bin(), data_dir=tmp / "ls", port=free_port(),
                          files_root=tmp / "files", username=ADMIN, password=PASSWORD)
        t = time.perf_counter()
        server = Server(spec).start(timeout=600)
        print(f"server: started with a fresh data dir in {time.perf_counter() - t:.1f} s (migrations, not timed)")
        url = server.url
        token = LabelStudioClient.login(url, ADMIN, PASSWORD).legacy_token()
    try:
        client = LabelStudioClient(url, token, timeout=300)
        build_path = make_bench_build(tmp, args.items)
        build = load_build(build_path)
        n = len(build.items)
        n_images = sum(len(it.images) for it in build.items)
        print(f"build: {n} items, {n_images} image references, kinds mcq/yes_no/vqa in thirds")

        t = time.perf_counter()
        res = push(client, build, f"bench push {n}", batch_size=args.batch_size, progress=False)
        dt = time.perf_counter() - t
        print(f"push:    {res.imported} items in {dt:.2f} s = {res.imported / dt:.0f} items/s (batch {args.batch_size})")
        t = time.perf_counter()
        res2 = push(client, build, f"bench push {n}", batch_size=args.batch_size, progress=False)
        print(f"re-push: {res2.imported} new of {res2.total} in {time.perf_counter() - t:.2f} s")

        admin = client
        invite = admin.invite_url()
        for email in REVIEWERS:
            signup(url, invite, email)
        ids = {u["email"]: u["id"] for u in admin.users()}
        rng = random.Random(0)
        tasks = annotated_tasks(build, [ids[e] for e in REVIEWERS], rng)
        title = f"bench pull {n}"
        proj = admin.create_project(project_settings(title, build, labeling_config({item_kind(i) for i in build.items}), 3))
        t = time.perf_counter()
        for i in range(0, len(tasks), args.batch_size):
            admin.import_tasks(proj["id"], tasks[i : i + args.batch_size])
        print(f"setup:   {n} tasks with {3 * n} annotations imported in {time.perf_counter() - t:.2f} s (not a Mirage path)")

        t = time.perf_counter()
        raw = admin.export_raw(proj["id"])
        t_export = time.perf_counter() - t
        exported = json.loads(raw)
        t = time.perf_counter()
        users = {u["id"]: u["email"] for u in admin.users()}
        decided = resolve(build.items, exported, users)
        t_resolve = time.perf_counter() - t
        t = time.perf_counter()
        out = pull(admin, build, title, accept_unverified=True)  # a bare server: no vote ledger
        t_pull = time.perf_counter() - t
        c = out.review["counts"]
        print(f"pull:    {n} items x 3 annotations in {t_pull:.2f} s (export alone {t_export:.2f} s, "
              f"{len(raw) / 1e6:.1f} MB; resolve alone {t_resolve * 1000:.0f} ms)")
        print(f"         keep {c['keep']}, fix {c['fix']}, drop {c['drop']}, adjudicate {c['adjudicate']}, "
              f"pending {c['pending']}; kappa {out.review['fleiss_kappa']}; problems {len(out.review['problems'])}")
        assert decided["counts"] == c
        t = time.perf_counter()
        again = pull(admin, build, title, accept_unverified=True)
        print(f"re-pull: {time.perf_counter() - t:.2f} s, export unchanged: {not again.export_is_new}")
    finally:
        if server is not None:
            server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
