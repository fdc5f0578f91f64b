"""The chat panel in a real browser (issue 12): long sessions render in close to flat time.

Runs ``bench/panel.mjs``: the extension's webview bundle, stylesheet and document in headless
Chromium (playwright-core from the e2e tools), with the host stubbed to answer ``ready`` with a state
of N entries, as the extension host does. Ratios in one run:

1. resume render: a ``state`` with 2,400 entries vs 100 → the next drawn frame (target <= 10x);
2. typing: keydown → next frame p95 with 2,400 entries shown vs the empty panel (target <= 2x);
3. hide/show: a fresh webview document drawing 2,400 vs 100 entries from the host's state (<= 3x).

Skipped, with a line saying why, when node, Chromium or playwright-core is missing.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

from bench.common import ROOT, Result, e2e_tools


def _modules_current(client: Path) -> str | None:
    """Bring ``vscode-client/node_modules`` up to its lockfile (``npm ci`` when the lockfile is newer,
    as scripts/package.sh does); None when it is current, else one line saying how to fix it."""
    lock, installed = client / "package-lock.json", client / "node_modules" / ".package-lock.json"
    if installed.is_file() and installed.stat().st_mtime >= lock.stat().st_mtime:
        return None
    npm = shutil.which("npm")
    if npm is None:
        return "vscode-client/node_modules is older than package-lock.json; run `cd vscode-client && npm ci`"
    print("  vscode-client/node_modules is older than package-lock.json: npm ci", flush=True)
    done = subprocess.run(
        [npm, "ci", "--no-audit", "--no-fund"], cwd=client, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        return f"`npm ci` in vscode-client failed ({done.stderr.strip()[-200:]}); run it by hand"
    return None


def run() -> list[Result]:
    node = shutil.which("node")
    chromium = os.environ.get("CHROMIUM") or shutil.which("chromium")
    tools = e2e_tools()
    esbuild = ROOT / "vscode-client" / "node_modules" / "esbuild"
    missing = [
        what
        for what, ok in (
            ("node", node),
            ("chromium (scripts/e2e-setup.sh)", chromium),
            ("playwright-core (scripts/e2e-setup.sh, or SHIRO_TOOLS)", tools),
            ("vscode-client/node_modules (npm ci)", esbuild.is_dir()),
        )
        if not ok
    ]
    if missing:
        print(f"skipped: the panel benchmark needs {', '.join(missing)}", flush=True)
        return []
    assert node and chromium and tools
    stale = _modules_current(ROOT / "vscode-client")
    if stale is not None:
        print(f"skipped: {stale}", flush=True)
        return []
    done = subprocess.run(
        [node, str(ROOT / "bench" / "panel.mjs"), str(tools), chromium],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    if done.returncode != 0:
        unresolved = re.search(r'Could not resolve "([^"]+)"', done.stderr)
        if unresolved:  # a package the webview imports is not installed
            print(
                f"skipped: the webview imports {unresolved.group(1)}, which vscode-client/node_modules lacks; "
                "run `cd vscode-client && npm ci`",
                flush=True,
            )
        else:
            print(f"skipped: the panel benchmark failed: {done.stderr.strip()[-400:]}", flush=True)
        return []
    out = json.loads(done.stdout.strip().splitlines()[-1])
    resume = out["resume"]["2400"] / out["resume"]["100"]
    typing = out["typing"]["2400"] / max(out["typing"]["0"], 1e-3)
    reopen = out["reopen"]["2400"] / out["reopen"]["100"]
    print(
        f"  resume {out['resume']['100']:.0f} / {out['resume']['2400']:.0f} ms, "
        f"typing p95 {out['typing']['0']:.0f} / {out['typing']['2400']:.0f} ms, "
        f"hide/show {out['reopen']['100']:.0f} / {out['reopen']['2400']:.0f} ms, "
        f"DOM at 2,400: {out['dom']['2400']} nodes",
        flush=True,
    )
    return [
        Result("panel: resume render, 2,400 vs 100 messages", resume, "x", "<= 10x", resume <= 10),
        Result("panel: typing p95, 2,400 shown vs empty", typing, "x", "<= 2x", typing <= 2),
        Result("panel: hide/show, 2,400 vs 100 messages", reopen, "x", "<= 3x", reopen <= 3),
    ]
