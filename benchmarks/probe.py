"""The TUI measured from inside: ``ctxview FILE`` started as the console script starts it
(``python -m ctxview``), with Textual's ``App.run`` replaced by a scenario. Run in a fresh
process by ``common.first_paint`` and ``common.probe``:

    python -m benchmarks.probe paint bare | bare-json FILE | bare-jsonl FILE | ctxview FILE
    python -m benchmarks.probe requests-view | max-change | cache-line | switch FILE OUT
    CTXVIEW_SCREENSHOT=docs/screenshot.svg python -m benchmarks.probe screenshot FILE OUT

``paint`` prints ``PAINTED`` on the first frame that draws a row of text in the widget that
matters (the timeline; a bare app's one Static) and exits: the parent times spawn to that line.
The other scenarios drive the app with Pilot and write their figures (JSON) to ``OUT``.

Widgets are found by class name when they first render, so the probe needs no import of
ctxview's modules: it measures what the console script does, whatever module holds what.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import runpy
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

from textual.app import App
from textual.widget import Widget

_drawn: dict[str, float] = {}  # class name -> when it first drew a line with text in it
_watched: set[str] = set()
_original_render_lines = Widget.render_lines


def watch(*names: str) -> None:
    """Note the first time a widget of one of these classes draws a non-blank line."""
    _watched.update(names)

    def render_lines(self: Widget, crop: Any) -> Any:
        cls = type(self)
        if cls.__name__ in _watched and not cls.__dict__.get("_bench_probed"):
            cls._bench_probed = True  # type: ignore[attr-defined]
            draw_line = cls.render_line
            name = cls.__name__

            def render_line(widget: Widget, y: int) -> Any:
                strip = draw_line(widget, y)
                if name not in _drawn and strip.text.strip():
                    _drawn[name] = time.perf_counter()
                    _on_drawn(widget, name)
                return strip

            cls.render_line = render_line  # type: ignore[method-assign,assignment]
        return _original_render_lines(self, crop)

    Widget.render_lines = render_lines  # type: ignore[method-assign]


def _on_drawn(widget: Widget, name: str) -> None:
    if _paint_exit:
        print("PAINTED", flush=True)
        widget.app.call_later(widget.app.exit, 0)


_paint_exit = False


def run_ctxview(path: str, *flags: str) -> None:
    sys.argv = ["ctxview", path, "--offline", *flags]
    try:
        runpy.run_module("ctxview", run_name="__main__", alter_sys=True)
    except SystemExit as exc:
        if exc.code not in (0, None):
            raise


def paint(what: str, path: str | None = None) -> None:
    global _paint_exit
    _paint_exit = True
    if what == "ctxview":
        assert path is not None
        watch("Timeline")
        original = App.run

        def run(self: App[Any], *args: Any, **kwargs: Any) -> Any:
            return original(self, headless=True, size=(120, 40))

        App.run = run  # type: ignore[method-assign]
        run_ctxview(path)
        if "Timeline" not in _drawn:
            raise SystemExit("the timeline was never drawn")
        return
    if what == "bare-json":
        with open(str(path), "rb") as f:
            json.load(f)
    elif what == "bare-jsonl":
        with open(str(path), "rb") as f:
            for line in f:
                json.loads(line)
    from textual.widgets import Static

    class Bare(App[None]):
        def compose(self) -> Any:
            yield Static("hello")

    watch("Static")
    Bare().run(headless=True, size=(120, 40))


Scenario = Callable[[App[Any], Any], Awaitable[dict[str, Any]]]


def drive(path: str, out: str, scenario: Scenario, *flags: str) -> None:
    """``ctxview FILE`` with its ``App.run`` replaced by ``scenario`` under Pilot."""
    result: dict[str, Any] = {}

    def run(self: App[Any], *args: Any, **kwargs: Any) -> Any:
        async def go() -> None:
            async with self.run_test(size=(140, 45)) as pilot:
                result.update(await scenario(self, pilot))

        asyncio.run(go())
        return None

    App.run = run  # type: ignore[method-assign]
    t0 = time.perf_counter()
    result["started"] = t0
    run_ctxview(path, *flags)
    with open(out, "w") as f:
        json.dump(result, f)


async def settle(app: App[Any], pilot: Any) -> None:
    await pilot.pause()
    await app.workers.wait_for_complete()
    await pilot.pause()


async def requests_view(app: App[Any], pilot: Any) -> dict[str, Any]:
    """From the key R to the first drawn request row."""
    watch("RequestList")
    await settle(app, pilot)
    t0 = time.perf_counter()
    await pilot.press("R")
    while "RequestList" not in _drawn and time.perf_counter() - t0 < 60:
        await asyncio.sleep(0.005)
    screen = app.screen
    reqlog = getattr(screen, "reqlog", None)
    return {
        "seconds": _drawn["RequestList"] - t0,
        "requests": len(reqlog.requests) if reqlog is not None else None,
        "worker": getattr(app, "last_prediction_seconds", None),
    }


async def max_change(app: App[Any], pilot: Any) -> dict[str, Any]:
    """A max change of -50 (median of 7) and one of 5,000 -> 10: ms to apply it, and until
    the timeline's rows were drawn again."""
    renders: list[float] = []
    watch("Timeline")
    await settle(app, pilot)
    await pilot.pause(0.2)
    timeline_cls = next(
        type(w) for w in app.screen.walk_children(Widget) if type(w).__name__ == "Timeline"
    )
    draw_line = timeline_cls.render_line

    def render_line(widget: Widget, y: int) -> Any:
        renders.append(time.perf_counter())
        return draw_line(widget, y)

    timeline_cls.render_line = render_line  # type: ignore[method-assign,assignment]

    async def change(delta: int) -> tuple[float, float]:
        renders.clear()
        t0 = time.perf_counter()
        await app.run_action(f"max_delta({delta})")
        t1 = time.perf_counter()
        await pilot.pause(0.15)
        after = [t for t in renders if t >= t1]
        drawn = max(t for t in after if t - after[0] < 0.05) if after else float("nan")
        return (t1 - t0) * 1000, (drawn - t0) * 1000

    steps = [await change(-50) for _ in range(7)]
    applied = sorted(a for a, _ in steps)
    drawn = sorted(d for _, d in steps)
    now = 5000 - 7 * 50
    drastic = await change(-(now - 10))
    return {
        "apply": applied[3],
        "drawn": drawn[3],
        "drastic_apply": drastic[0],
        "drastic_drawn": drastic[1],
    }


async def cache_line(app: App[Any], pilot: Any) -> dict[str, Any]:
    """The sidebar's cache figures: from the process's start until they are shown, and the
    seconds of the worker that computed them."""
    while getattr(app, "model").cache_prediction is None:  # noqa: B009
        await pilot.pause(0.01)
    shown = time.perf_counter()
    return {
        "shown": shown,
        "worker": getattr(app, "last_prediction_seconds", None),
        "requests": app.model.cache_prediction.requests,  # type: ignore[attr-defined]
    }


async def switch(app: App[Any], pilot: Any) -> dict[str, Any]:
    """As sent -> simulated (a max key): seconds until the simulation is installed, and the
    longest the UI thread was held meanwhile (gaps between ticks of a 10 ms timer)."""
    await settle(app, pilot)
    await pilot.pause(0.3)
    await app.workers.wait_for_complete()
    ticks: list[float] = []
    timer = app.set_interval(0.01, lambda: ticks.append(time.perf_counter()))
    old = app.model  # type: ignore[attr-defined]
    t0 = time.perf_counter()
    await app.run_action("max_delta(-1)")
    while app.model is old:  # type: ignore[attr-defined]
        await pilot.pause(0.005)
    seconds = time.perf_counter() - t0
    timer.stop()
    gaps = [b - a for a, b in itertools.pairwise(ticks)]
    return {
        "switch": seconds,
        "max_ui_gap": max(gaps) if gaps else float("nan"),
        "window": len(app.model.context),  # type: ignore[attr-defined]
    }


async def screenshot(app: App[Any], pilot: Any) -> dict[str, Any]:
    """The opening screen, settled (workers done, the cache line in), saved as SVG to the
    path in $CTXVIEW_SCREENSHOT (the README's picture)."""
    import os

    await settle(app, pilot)
    await pilot.pause(0.5)
    await settle(app, pilot)
    target = os.environ["CTXVIEW_SCREENSHOT"]
    app.save_screenshot(os.path.basename(target), path=os.path.dirname(os.path.abspath(target)))
    return {"saved": target}


SCENARIOS: dict[str, Scenario] = {
    "screenshot": screenshot,
    "requests-view": requests_view,
    "max-change": max_change,
    "cache-line": cache_line,
    "switch": switch,
}


def main(argv: list[str]) -> None:
    if argv[0] == "paint":
        paint(argv[1], argv[2] if len(argv) > 2 else None)
        return
    scenario, path, out, *flags = argv
    drive(path, out, SCENARIOS[scenario], *flags)


if __name__ == "__main__":
    main(sys.argv[1:])
