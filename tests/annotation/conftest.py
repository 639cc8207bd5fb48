"""Fixtures: a real Label Studio server (migrated once per session, copied for each start), small builds."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.annotation.builds import make_build
from tests.conftest import skip_or_fail

ADMIN_EMAIL = "admin@mirage.test"
ADMIN_PASSWORD = "admin-pass-1234"
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"


@dataclass
class LiveServer:
    url: str
    token: str
    invite: str
    data_dir: Path
    server: object

    def client(self):
        from annotation.client import LabelStudioClient

        return LabelStudioClient(self.url, self.token)


@pytest.fixture(scope="session")
def label_studio_bin() -> Path:
    from annotation.errors import AnnotationError
    from annotation.serve import find_label_studio_bin

    try:
        return find_label_studio_bin()
    except AnnotationError as exc:
        skip_or_fail(f"no Label Studio server installed ({exc}); .ci/install-annotation.sh installs it")


@pytest.fixture(scope="session")
def files_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The dedicated LOCAL_FILES_DOCUMENT_ROOT of every test server; ``push`` finds it in the environment."""
    root = tmp_path_factory.mktemp("ls-files")
    old = os.environ.get("LOCAL_FILES_DOCUMENT_ROOT")
    os.environ["LOCAL_FILES_DOCUMENT_ROOT"] = str(root)
    yield root
    if old is None:
        os.environ.pop("LOCAL_FILES_DOCUMENT_ROOT", None)
    else:
        os.environ["LOCAL_FILES_DOCUMENT_ROOT"] = old


def _spec(bin_path: Path, data_dir: Path, files_root: Path):
    from annotation.serve import ServerSpec, free_port

    return ServerSpec(
        bin=bin_path,
        data_dir=data_dir,
        port=free_port(),
        files_root=files_root,
        username=ADMIN_EMAIL,
        password=ADMIN_PASSWORD,
    )


@pytest.fixture(scope="session")
def ls_template(label_studio_bin: Path, files_root: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data dir migrated once (about a minute), with the admin created; copied for every server."""
    from annotation.serve import Server

    data = tmp_path_factory.mktemp("ls-template") / "data"
    server = Server(_spec(label_studio_bin, data, files_root), log_path=data.parent / "template.log")
    server.start(timeout=600)
    server.stop()
    return data


@pytest.fixture(scope="session")
def start_ls(label_studio_bin: Path, ls_template: Path, files_root: Path, tmp_path_factory: pytest.TempPathFactory):
    """Start a server on a fresh copy of the template: ``start_ls() -> LiveServer``; all stopped at teardown."""
    from annotation.client import LabelStudioClient
    from annotation.serve import Server

    servers = []

    def start() -> LiveServer:
        data = tmp_path_factory.mktemp("ls") / "data"
        shutil.copytree(ls_template, data)
        server = Server(_spec(label_studio_bin, data, files_root), log_path=data.parent / "server.log")
        servers.append(server)
        server.start(timeout=300)
        admin = LabelStudioClient.login(server.url, ADMIN_EMAIL, ADMIN_PASSWORD)
        return LiveServer(server.url, admin.legacy_token(), admin.invite_url(), data, server)

    yield start
    for s in servers:
        s.stop()


@pytest.fixture(scope="session")
def ls_server(start_ls) -> LiveServer:
    """One server shared by the tests of the session (each uses its own project)."""
    return start_ls()


@pytest.fixture
def build_dir(tmp_path: Path) -> Path:
    return make_build(tmp_path, 30, external=tmp_path / "source-images")


CHROMIUM = os.environ.get("MIRAGE_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]


@pytest.fixture(scope="module")
def browser():
    """Debian's Chromium driven by Playwright (never a browser Playwright downloads); one per module."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        skip_or_fail("playwright is not installed; .ci/install-annotation.sh installs it")
    if not (Path(CHROMIUM).is_file() and os.access(CHROMIUM, os.X_OK)):
        skip_or_fail(f"no Chromium at {CHROMIUM}; .ci/install-annotation.sh installs it")
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()
