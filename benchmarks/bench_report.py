"""The HTML report (``ctxview report FILE -o report.html``) of the agent loop at 1,000 and
100,000 messages (1,000 and 10,000 with --quick): the command's time, the file's size, and the
time headless Chromium takes to open it and to show a clicked row's blocks.

The command is a whole process (``run_timed``), redaction on as by default. The page is opened
from the file as a browser opens an attachment (Playwright driving the system's Chromium,
``$CTXVIEW_CHROMIUM`` or ``chromium`` on the PATH): the figure is the time from the navigation to
the page's script marking it ready (the data parsed, the timeline drawn, the selected message's
blocks shown). Without Chromium or Playwright the browser figures are left out, and said so.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path
from typing import Any

from benchmarks.common import Bench, Figure, agent_loop, ctxview_argv, report, run_timed, say
from benchmarks.common import write_session as write


def _chromium() -> str | None:
    return os.environ.get("CTXVIEW_CHROMIUM") or shutil.which("chromium")


def _open(browser: Any, path: Path) -> tuple[float, float]:
    """(seconds to ready, seconds a click on a row takes to show its blocks) for one fresh page."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    t0 = time.perf_counter()
    page.goto(path.as_uri(), wait_until="commit")
    page.wait_for_selector("body[data-ready=true]", timeout=300_000)
    ready = time.perf_counter() - t0
    # the click's own work, timed in the page (Playwright's actionability checks left out):
    # the handler draws the rows and the message's blocks before it returns
    click = page.evaluate(
        """() => {
            const row = document.querySelectorAll('#rows .row')[2];
            const t0 = performance.now();
            row.click();
            const took = performance.now() - t0;
            const id = row.querySelector('.c-id').textContent.replace('! ', '');
            if (!document.querySelector('#detail h3').textContent.startsWith('#' + id + ' ')) {
                throw new Error('the click did not show row ' + id);
            }
            return took / 1000;
        }"""
    )
    page.close()
    if errors:
        raise SystemExit(f"{path}: the page failed: {errors[0]}")
    return ready, click


def run(b: Bench) -> None:
    small = b.data / "1000_agent_loop.json"
    if not small.exists():
        write(small, agent_loop(1000))
    sizes = [(1000, small), (b.messages, b.agent_loop())]
    made: list[tuple[int, Path]] = []
    for n, source in sizes:
        out = b.data / f"{n}_report.html"
        times = [
            run_timed(ctxview_argv("report", str(source), "-o", str(out), "--force"), b.env)
            for _ in range(b.runs)
        ]
        best = min(times, key=lambda t: t.wall)
        mb = out.stat().st_size / 1e6
        say(
            f"{n:,} messages: report in {best.wall:.2f} s (CPU {best.cpu:.2f} s, peak RSS "
            f"{best.peak_rss / 1e6:.0f} MB), {mb:.1f} MB of HTML from {source.stat().st_size / 1e6:.1f} MB"
        )
        report(
            Figure(
                f"{n:,} messages: ctxview report (redacting)",
                best.wall,
                "s",
                note=f"best of {b.runs}",
            )
        )
        report(Figure(f"{n:,} messages: the HTML file", mb, "MB"))
        made.append((n, out))
    path = _chromium()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        path = None
    if path is None:
        say("no Chromium or no Playwright: the time to open the report is not measured")
        return
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=path, args=["--no-sandbox"])
        for n, out in made:
            runs = [_open(browser, out) for _ in range(b.runs)]
            ready = min(r[0] for r in runs)
            click = min(r[1] for r in runs)
            say(
                f"{n:,} messages: open to ready {ready:.2f} s, a click to its blocks {click * 1000:.0f} ms"
            )
            report(
                Figure(
                    f"{n:,} messages: Chromium opens the report",
                    ready,
                    "s",
                    3.0,
                    note=f"best of {b.runs}",
                )
            )
            report(
                Figure(f"{n:,} messages: a click on a row to its blocks", click * 1000, "ms", 50.0)
            )
        browser.close()
