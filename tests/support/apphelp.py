"""Build the app for Pilot tests: offline or against the fake API, no autosave unless asked."""

from __future__ import annotations

from typing import Any

from ctxview.app.app import CtxviewApp
from ctxview.app.chat import ChatController
from ctxview.app.model import SessionModel
from ctxview.chat.backends import AnthropicBackend, OfflineBackend
from ctxview.config import load_config
from ctxview.sessions import LoadedSession, load_session, replay


def make_app(
    path: str | None = None,
    *,
    max_: int | None = None,
    strategy: str | None = None,
    api_url: str | None = None,
    autosave: bool = False,
    animation: str = "none",
    system: str | None = None,
    as_sent: bool = False,
    **kw: Any,
) -> CtxviewApp:
    """The app on ``path``; ``as_sent=True`` opens a recorded session as ``ctxview FILE`` does
    (as it was sent, unless ``max_`` or ``strategy`` is given)."""
    cfg = load_config()
    cfg.values["animation"] = animation
    if path:
        session = load_session(path)
    else:
        session = LoadedSession(path="", format="new", messages=[], metas=[])
    rep = replay(
        session,
        max_context_messages=max_,
        strategy=strategy,
        system_prompt=system,
        defaults=cfg.as_defaults(),
        as_sent=as_sent,
    )
    model = SessionModel(rep, path, session.model or "claude-sonnet-5-5")
    app = CtxviewApp(model, cfg, opened_file=bool(path), offline=api_url is None, **kw)
    if api_url is None:
        backend: Any = OfflineBackend(delay=0)
    else:
        backend = AnthropicBackend(api_key="sk-test-not-real", base_url=api_url, timeout=5)
    app.chat = ChatController(app, offline=api_url is None, backend=backend, autosave=autosave)
    return app


def row_texts(app: CtxviewApp) -> list[str]:
    """What the timeline shows now, one string per visible row."""
    tl = app.timeline
    return [tl.render_line(y).text for y in range(tl.scrollable_content_region.height)]


async def settle(pilot: Any, n: int = 3) -> None:
    for _ in range(n):
        await pilot.pause()
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


async def screen_after(pilot: Any, key: str, screen_type: type[Any]) -> Any:
    """Press ``key``, settle, and return the active screen, which must be a ``screen_type`` (the one
    the key opens, or the one it goes back to)."""
    await pilot.press(key)
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, screen_type), screen
    return screen


async def wait_until(pilot: Any, cond: Any, timeout: float = 15.0) -> None:
    """Until ``cond()`` holds: a condition, never a fixed sleep, so a loaded machine only makes
    the test slower, never wrong."""
    for _ in range(int(timeout / 0.05)):
        if cond():
            return
        await pilot.pause(0.05)
    raise AssertionError(f"timed out after {timeout} s")


def text_of(app: Any, selector: str) -> str:
    from textual.widgets import Static

    return str(app.query_one(selector, Static).render())


async def wait_prediction(pilot: Any, timeout: float = 60.0) -> None:
    """Until the sidebar's cache figures (computed in a worker after a debounce) are in: by the
    clock, not a count of polls, so a loaded machine (two workers beside other work) only makes
    a long transcript's request model slower, never the test wrong."""
    import time

    end = time.monotonic() + timeout
    while time.monotonic() < end:
        await settle(pilot)
        if pilot.app.model.cache_prediction is not None and pilot.app._predict_timer is None:
            return
        await pilot.pause(0.05)
    raise AssertionError(f"the cache figures never came ({timeout:.0f} s)")


#: what must never be drawn: C0 controls (ESC, BEL, ...), DEL, C1 controls, bidi controls
FORBIDDEN = {
    *map(chr, range(0x20)),
    "\x7f",
    *map(chr, range(0x80, 0xA0)),
    *map(chr, range(0x202A, 0x202F)),
    *map(chr, range(0x2066, 0x206A)),
    "\u200e",
    "\u200f",
}


def drawn(app: Any) -> str:
    """Everything the active screen draws now, as text (one line per row)."""
    strips = app.screen._compositor.render_strips()
    return "\n".join("".join(seg.text for seg in strip) for strip in strips)


def assert_clean(app: Any, where: str) -> str:
    text = drawn(app)
    bad = {c for c in text.replace("\n", "") if c in FORBIDDEN}
    assert not bad, f"{where}: {sorted(map(hex, map(ord, bad)))} reached the screen"
    for s in (app.title, app.sub_title):
        assert not (set(s) & FORBIDDEN), f"{where}: title {s!r}"
    return text
