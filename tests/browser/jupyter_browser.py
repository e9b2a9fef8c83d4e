"""Helpers for real-browser tests of Jupyter notebooks (fixtures: conftest.py).

Adapted from the team's proven recipe (``shared/examples/browser-test``).

start_jupyter_server(): `python -m jupyterlab` or `python -m notebook` on
127.0.0.1, a free port, a random token, a temporary root directory and
isolated config/data/settings/workspace/runtime/IPython directories; stopped
with JupyterServer.stop() (POST /api/shutdown, then SIGTERM/SIGKILL).

Page helpers: open_notebook(), run_all_cells(), wait_all_cells_executed(),
start_width_sampler()/read_samples(), bar_percent().

Environment knobs:
  CHROMIUM_PATH            default /usr/bin/chromium
  BROWSER_TEST_ARTIFACTS   where screenshots/timings go (default: pytest's basetemp/artifacts)
  JUPYTER_START_TIMEOUT    seconds to wait for the server (default 60)
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent

CHROMIUM_PATH = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
# Flags required on this kind of machine (root, no GPU, closed network).
# Playwright adds its own fresh --user-data-dir for every launch().
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

# JupyterLab user settings written into the isolated settings dir.
LAB_SETTINGS = {
    # no "Would you like to get notified about official Jupyter news?" toast,
    # no request to the outside world
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false",
        "checkForUpdates": False,
    },
    # keep every cell attached to the DOM (default in 4.6 is contentVisibility;
    # "full"/"defer" detach off-screen cells, which breaks selectors)
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {
        "windowingMode": "none",
    },
}


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class JupyterServer:
    proc: subprocess.Popen
    port: int
    token: str
    root: Path
    log_path: Path
    startup_s: float
    timings: dict = field(default_factory=dict)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def url(self, path: str) -> str:
        sep = "&" if "?" in path else "?"
        return f"{self.base_url}{path}{sep}token={self.token}"

    def api(self, method: str, path: str, body=None, timeout=10):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(
            self.base_url + path,
            data=data,
            method=method,
            headers={"Authorization": f"token {self.token}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(req, timeout=timeout) as r:
            raw = r.read()
        return json.loads(raw) if raw else None

    def add_notebook(self, src: Path, name: str | None = None) -> str:
        """Copy a notebook into the server root under a unique name.

        A unique name per test means a fresh session and a fresh kernel:
        JupyterLab re-attaches to an existing kernel session for the same path.
        """
        name = name or f"{src.stem}-{uuid.uuid4().hex[:8]}.ipynb"
        shutil.copy(src, self.root / name)
        return name

    def add_notebook_from_sources(self, sources: list[str], name: str | None = None) -> str:
        """Write a notebook made of these code cells into the server root; return its name."""
        import nbformat
        from nbformat.v4 import new_code_cell, new_notebook

        nb = new_notebook(
            cells=[new_code_cell(src) for src in sources],
            metadata={"kernelspec": {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}},
        )
        name = name or f"generated-{uuid.uuid4().hex[:8]}.ipynb"
        nbformat.write(nb, self.root / name)
        return name

    def shutdown_kernels(self) -> None:
        for s in self.api("GET", "/api/sessions") or []:
            try:
                self.api("DELETE", f"/api/sessions/{s['id']}")
            except urllib.error.URLError:
                pass

    def stop(self) -> None:
        if self.proc.poll() is None:
            try:  # graceful: shuts kernels + terminals down, then exits
                self.api("POST", "/api/shutdown", timeout=5)
            except (urllib.error.URLError, OSError):
                pass
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.send_signal(signal.SIGTERM)
                try:
                    self.proc.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait(timeout=10)


def start_jupyter_server(base: Path, app: str = "jupyterlab", attempts: int = 3) -> JupyterServer:
    """Start `python -m <app>` (jupyterlab or notebook) and wait until /api/status answers."""
    root = base / "root"
    root.mkdir(parents=True, exist_ok=True)
    env = os.environ.copy()
    dirs = {
        "JUPYTER_CONFIG_DIR": base / "config",
        "JUPYTER_DATA_DIR": base / "data",
        "JUPYTER_RUNTIME_DIR": base / "runtime",
        "JUPYTERLAB_SETTINGS_DIR": base / "lab-settings",
        "JUPYTERLAB_WORKSPACES_DIR": base / "lab-workspaces",
        "IPYTHONDIR": base / "ipython",
    }
    for k, d in dirs.items():
        d.mkdir(parents=True, exist_ok=True)
        env[k] = str(d)
    env["JUPYTER_PLATFORM_DIRS"] = "1"  # silence the jupyter_core deprecation warning
    env.pop("JUPYTER_TOKEN", None)
    # page_config.json in the config dir: no build check on page load (it
    # spawns node/npm/yarn through jupyter_builder when node is on PATH)
    labconfig = dirs["JUPYTER_CONFIG_DIR"] / "labconfig"
    labconfig.mkdir(parents=True, exist_ok=True)
    (labconfig / "page_config.json").write_text(json.dumps({"buildCheck": False, "buildAvailable": False}))
    for rel, content in LAB_SETTINGS.items():
        p = dirs["JUPYTERLAB_SETTINGS_DIR"] / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(json.dumps(content))

    token = uuid.uuid4().hex
    timeout = float(os.environ.get("JUPYTER_START_TIMEOUT", "60"))
    last_err = ""
    for attempt in range(attempts):
        port = _free_port()
        log_path = base / f"server-{attempt}.log"
        cmd = [
            sys.executable,
            "-m",
            app,
            "--no-browser",
            "--allow-root",  # CI and this machine run as root
            "--ip=127.0.0.1",
            f"--port={port}",
            "--ServerApp.port_retries=0",  # fail instead of silently taking another port
            f"--ServerApp.root_dir={root}",
            f"--IdentityProvider.token={token}",
            "--ServerApp.password=",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
            # window.jupyterapp: lets tests ask the app itself (kernel state, commands)
            "--LabApp.expose_app_in_browser=True",
            "--JupyterNotebookApp.expose_app_in_browser=True",
        ]
        t0 = time.monotonic()
        log = open(log_path, "wb")
        proc = subprocess.Popen(cmd, env=env, cwd=root, stdout=log, stderr=subprocess.STDOUT)
        log.close()
        server = JupyterServer(proc, port, token, root, log_path, startup_s=0.0)
        while time.monotonic() - t0 < timeout:
            if proc.poll() is not None:
                last_err = log_path.read_text(errors="replace")[-3000:]
                break  # died (e.g. port taken between _free_port() and bind): retry
            try:
                server.api("GET", "/api/status", timeout=2)
                server.startup_s = time.monotonic() - t0
                return server
            except (urllib.error.URLError, ConnectionError, OSError):
                time.sleep(0.1)
        else:
            server.stop()
            raise RuntimeError(f"jupyter server not ready after {timeout}s; log: {log_path}")
    raise RuntimeError(f"jupyter server failed to start {attempts}x; last log tail:\n{last_err}")


# --------------------------------------------------------------------------
# helpers


KERNEL_READY_JS = """() => {
  // window.jupyterapp exists because of expose_app_in_browser=True
  const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  const ctx = w && w.sessionContext;
  const k = ctx && ctx.session && ctx.session.kernel;
  return !!k && ctx.isReady && k.connectionStatus === 'connected' && k.status === 'idle';
}"""

ALL_CELLS_EXECUTED_JS = """() => {
  // scope to the notebook in front: other (hidden) notebook panels may exist
  const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;
  const root = w ? w.node : document;
  const prompts = [...root.querySelectorAll('.jp-Notebook .jp-CodeCell .jp-InputArea-prompt')];
  return prompts.length > 0 && prompts.every(p => /^\\[\\d+\\]:$/.test(p.textContent.trim()));
}"""


def open_notebook(page, server: JupyterServer, name: str, ui: str = "lab", timeout: float = 60_000):
    """Open a notebook in JupyterLab (ui='lab') or Notebook 7 (ui='notebook'); wait for its kernel."""
    if ui == "lab":
        # A fresh, named workspace per page: with /lab/tree/<name> JupyterLab
        # restores the "default" workspace, i.e. re-opens the notebooks of
        # earlier tests (and starts kernels for them).  ("?reset" also works.)
        path = f"/lab/workspaces/t-{uuid.uuid4().hex[:8]}/tree/{name}"
    else:
        path = f"/notebooks/{name}"  # Notebook 7: one document per page, no workspaces
    page.jupyter_server = server
    page.goto(server.url(path))
    page.locator(".jp-NotebookPanel .jp-Notebook .jp-Cell").first.wait_for(timeout=timeout)
    # NB: .jp-Notebook-ExecutionIndicator[data-status=idle] shows up *before* the
    # kernel exists ("No Kernel | Initializing"), so ask the app instead.
    page.wait_for_function(KERNEL_READY_JS, timeout=timeout)


def run_all_cells(page) -> None:
    """Run > Run All Cells, through the menu bar, as a user would (same in Lab and Notebook 7)."""
    page.get_by_role("menuitem", name="Run", exact=True).click()
    page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
    # alternative: page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")


def wait_all_cells_executed(page, timeout: float = 120_000) -> None:
    page.wait_for_function(ALL_CELLS_EXECUTED_JS, timeout=timeout)
    page.wait_for_function(KERNEL_READY_JS, timeout=timeout)


def start_width_sampler(page, selector: str, name: str) -> None:
    """Record every distinct style.width of `selector` (every 20 ms) in window.__samples[name]."""
    page.evaluate(
        """([sel, name]) => {
          window.__samples = window.__samples || {};
          const s = window.__samples[name] = [];
          const t0 = performance.now();
          setInterval(() => {
            const el = document.querySelector(sel);
            if (!el || !el.style.width) return;
            const v = parseFloat(el.style.width);
            if (!s.length || s[s.length - 1].v !== v) s.push({t: Math.round(performance.now() - t0), v});
          }, 20);
        }""",
        [selector, name],
    )


def read_samples(page, name: str) -> list[dict]:
    return page.evaluate("(name) => (window.__samples || {})[name] || []", name)


def bar_percent(page, selector: str) -> float:
    return page.evaluate("(sel) => parseFloat(document.querySelector(sel).style.width)", selector)
