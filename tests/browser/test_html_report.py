"""The HTML report in a real browser (headless Chromium, opened from a file as a mail
attachment is): it draws with no console error and asks for nothing over the network; a click
on a row shows that message's blocks; hostile session text stays text."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.browser import screenshot_path
from tests.support.cli import cli
from tests.support.html_report import HOSTILE
from tests.support.paths import SAMPLES

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The sample session's report (with --compare) and a hostile session's."""
    folder = tmp_path_factory.mktemp("reports")
    hostile = folder / "hostile.json"
    hostile.write_text(json.dumps(HOSTILE))
    made = {}
    for name, source, extra in (
        ("sample", SAMPLES / "agent_loop.json", ["--compare"]),
        ("hostile", hostile, []),
    ):
        out = folder / f"{name}.html"
        done = cli("report", str(source), "-o", str(out), *extra, timeout=60)
        assert done.returncode in (0, 1), done.stderr
        made[name] = out
    return made


class Opened:
    """A report opened in a page, with every console error and every request it made."""

    def __init__(self, page: Any, path: Path) -> None:
        self.page = page
        self.errors: list[str] = []
        self.fetched: list[str] = []
        page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: self.errors.append(str(e)))

        def route(r: Any) -> None:
            if r.request.url == path.as_uri():
                r.continue_()
            else:  # anything else (a font, a script, an image, a beacon) is a failure
                self.fetched.append(r.request.url)
                r.abort()

        page.route("**/*", route)
        page.goto(path.as_uri())
        page.wait_for_selector("body[data-ready=true]", timeout=30_000)


@pytest.fixture
def dark_page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1400, "height": 900}, color_scheme="dark")
    yield context.new_page()
    context.close()


def test_the_report_draws_without_errors_or_network_and_a_click_shows_the_blocks(
    page: Any, reports: dict[str, Path]
) -> None:
    from playwright.sync_api import expect

    opened = Opened(page, reports["sample"])
    assert page.inner_text("#verdict") == "✗ 2 problems: the API will reject this request"
    assert page.locator("#rows .row").count() > 10  # drawn on demand: the visible ones
    page.locator("#rows .row", has_text="Reading src/config/loader.py.").click()
    expect(page.locator("#detail h3")).to_have_text("#3 assistant · evicted · ~22 tokens")
    expect(page.locator("#detail")).to_contain_text("tool_use read_file · toolu_010003read")
    page.keyboard.press("j")
    expect(page.locator("#detail h3")).to_have_text("#4 user · evicted · ~25 tokens")
    page.fill("#goto", "20")
    page.press("#goto", "Enter")
    expect(page.locator("#detail h3")).to_have_text("#20 user · kept · ~9 tokens")
    assert page.locator("#compare table tbody tr").count() == 6
    page.screenshot(path=screenshot_path("report-light"), full_page=True)
    assert (opened.errors, opened.fetched) == ([], [])


def test_the_report_reads_in_the_dark(dark_page: Any, reports: dict[str, Path]) -> None:
    opened = Opened(dark_page, reports["sample"])
    background = dark_page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert background == "rgb(17, 20, 23)"
    dark_page.screenshot(path=screenshot_path("report-dark"), full_page=True)
    assert (opened.errors, opened.fetched) == ([], [])


def test_a_printout_lists_the_window_rows(page: Any, reports: dict[str, Path]) -> None:
    opened = Opened(page, reports["sample"])
    page.emulate_media(media="print")
    page.evaluate("window.dispatchEvent(new Event('beforeprint'))")
    rows = page.locator("#print-rows .row")
    assert rows.count() == 14  # the window: the pinned first message and the 13 kept
    assert rows.first.inner_text().split()[:2] == ["0", "user"]
    assert page.locator("#timeline").is_hidden() and page.locator(".toolbar").first.is_hidden()
    page.screenshot(path=screenshot_path("report-print"), full_page=True)
    assert (opened.errors, opened.fetched) == ([], [])


def test_hostile_text_is_shown_as_text_and_runs_nothing(
    page: Any, reports: dict[str, Path]
) -> None:
    from playwright.sync_api import expect

    opened = Opened(page, reports["hostile"])
    assert page.evaluate("window.pwned") is None
    assert page.locator("#detail img, #rows img, #rows b").count() == 0
    page.locator("#rows .row").first.click()
    expect(page.locator("#detail pre")).to_have_text(
        "</script><script>window.pwned = 1</script><img src=x onerror=window.pwned=2>"
    )
    page.locator("#rows .row").nth(1).click()
    detail = page.locator("#detail")
    expect(detail).to_contain_text("␛]0;title␇ ⟨U+202E⟩gnp.exe <!-- {{messages}}")
    expect(detail).to_contain_text("tool_use <b>Bash</b> · toolu_1")
    assert page.evaluate("window.pwned") is None
    assert (opened.errors, opened.fetched) == ([], [])
