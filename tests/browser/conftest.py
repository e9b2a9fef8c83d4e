"""Fixtures for the real-browser tests: JupyterLab / Notebook 7 servers and Chromium.

jupyter_server / notebook_server (session): servers on 127.0.0.1, a free port and a
random token, with isolated config dirs. browser (module): Playwright driving Debian's
/usr/bin/chromium (never a downloaded browser). page (function): a fresh context;
``page.js_errors`` collects uncaught JS errors. Under ``CI`` a missing browser fails.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from jupyter_browser import CHROMIUM_ARGS, CHROMIUM_PATH, start_jupyter_server  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/browser" in str(item.fspath):
            item.add_marker(pytest.mark.browser)


@pytest.fixture(scope="session")
def artifacts_dir() -> Path:
    folder = Path(os.environ.get("BROWSER_TEST_ARTIFACTS") or ROOT / "test-artifacts")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture(scope="session")
def jupyter_server(tmp_path_factory: pytest.TempPathFactory):
    server = start_jupyter_server(tmp_path_factory.mktemp("jupyterlab"), app="jupyterlab")
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def notebook_server(tmp_path_factory: pytest.TempPathFactory):
    server = start_jupyter_server(tmp_path_factory.mktemp("notebook"), app="notebook")
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def browser():
    if not Path(CHROMIUM_PATH).exists():
        message = f"no chromium at {CHROMIUM_PATH} (make test installs Debian's chromium)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM_PATH, headless=True, args=CHROMIUM_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1280, "height": 1100})
    context.set_default_timeout(30_000)
    tab = context.new_page()
    tab.js_errors = []
    tab.on("pageerror", lambda error: tab.js_errors.append(str(error)))
    tab.jupyter_server = None
    try:
        yield tab
    finally:
        context.close()
        if tab.jupyter_server is not None:
            tab.jupyter_server.shutdown_kernels()
