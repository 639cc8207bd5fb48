"""`python -m annotation serve` on a copy of the migrated template: prints URL, invite link and token; stops on Ctrl-C."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from annotation.client import LabelStudioClient
from annotation.serve import free_port, port_is_free
from tests.annotation.conftest import ADMIN_EMAIL, ADMIN_PASSWORD
from tests.annotation.lshelpers import signup, stop_serve, three_free_ports

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[2]


def test_serve_starts_three_rooms_prints_how_to_join_and_stops_cleanly(ls_template, label_studio_bin, tmp_path):
    data = tmp_path / "data"
    for k in (1, 2, 3):
        shutil.copytree(ls_template, data / f"room-{k}")
    port = three_free_ports()
    env = dict(os.environ, LABEL_STUDIO_USERNAME=ADMIN_EMAIL, LABEL_STUDIO_PASSWORD=ADMIN_PASSWORD,
               MIRAGE_LABEL_STUDIO_BIN=str(label_studio_bin))
    proc = subprocess.Popen(
        [sys.executable, "-m", "annotation", "serve", "--data-dir", str(data), "--port", str(port)],
        cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    lines: list[str] = []
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:  # serve ended before saying how to join: its stderr says why
                proc.wait(60)
                logs = {k: (data / f"room-{k}" / "label-studio.log") for k in (1, 2, 3)}
                tails = "".join(f"\nroom {k}'s log ends:\n" + "\n".join(f.read_text().splitlines()[-15:])
                                for k, f in logs.items() if f.exists())
                pytest.fail(f"serve exited with status {proc.returncode} before printing how to join:\n"
                            f"{proc.stderr.read()}\nstdout:\n" + "\n".join(lines) + tails)
            lines.append(line.rstrip("\n"))
            if line.startswith("Press Ctrl-C"):
                break
        text = "\n".join(lines)
        urls = [f"http://127.0.0.1:{port + k}" for k in range(3)]
        assert "Label Studio is running in 3 rooms" in text and ", ".join(urls) in text, text
        invites = re.findall(r"Reviewer slot \d joins through the invite link: (\S+)", text)
        assert [i.split("/user/")[0] for i in invites] == urls, text
        exported = dict(re.findall(r"(\w+)=(\S+)", text.split("export ", 1)[1].splitlines()[0]))
        assert exported["LABEL_STUDIO_URL"].split(",") == urls
        assert exported["LOCAL_FILES_DOCUMENT_ROOT"] == str((data / "files").resolve())
        tokens = exported["LABEL_STUDIO_API_KEY"].split(",")
        assert len(tokens) == 3  # (equal here: the three rooms are copies of one template data dir)
        for url, token in zip(urls, tokens):
            assert LabelStudioClient(url, token).whoami()["email"] == ADMIN_EMAIL
        url = urls[0]
        signup(url, invites[0][len(url):], "joined@mirage.test")  # the printed link works
        # signup without the link is disabled
        import requests

        s = requests.Session()
        s.get(url + "/user/signup/", timeout=30)
        r = s.post(url + "/user/signup/", data={"email": "x@mirage.test", "password": "some-pass-1234",
                                                 "csrfmiddlewaretoken": s.cookies.get("csrftoken", "")},
                   headers={"Referer": url + "/user/signup/"}, allow_redirects=False, timeout=30)
        assert r.status_code == 403

        # a second server on the same port: one clear line, status 2
        second = subprocess.run(
            [sys.executable, "-m", "annotation", "serve", "--data-dir", str(tmp_path / "other"), "--port", str(port),
             "--rooms", "1"],
            cwd=REPO, env=env, capture_output=True, text=True, timeout=60,
        )
        assert second.returncode == 2
        assert second.stderr.strip().splitlines()[-1] == f"error: port {port} on 127.0.0.1 is already in use: pass another --port"
    finally:
        stop_serve(proc, 60)
    assert proc.returncode == 0
    deadline = time.monotonic() + 30  # the OS frees a closed port a moment after the process ends
    while not all(port_is_free("127.0.0.1", port + k) for k in range(3)):
        assert time.monotonic() < deadline, "the servers' ports are still taken 30 s after serve ended"
        time.sleep(0.05)


def test_new_data_dir_needs_admin_credentials(label_studio_bin, tmp_path, capsys, monkeypatch):
    from annotation.cli import main

    monkeypatch.delenv("LABEL_STUDIO_USERNAME", raising=False)
    monkeypatch.delenv("LABEL_STUDIO_PASSWORD", raising=False)
    code = main(["serve", "--data-dir", str(tmp_path / "fresh"), "--port", str(free_port()),
                 "--label-studio-bin", str(label_studio_bin)])
    err = capsys.readouterr().err
    assert code == 2 and err.strip().splitlines()[-1].startswith("error: ") and "LABEL_STUDIO_USERNAME" in err
