"""Fuzzing the readers with mutated sessions.

``inspect`` on every mutated JSON / JSONL session: exit 0, 1 or 2; on error exactly one line on
stderr, never a traceback; under 5 s each. The same inputs are opened in the TUI (a handful, it is
slower): nothing drawn holds an ESC. Bounded: hypothesis draws a fixed number of examples
(derandomised, so CI is reproducible), plus a few subprocess runs as a user would type them.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxview.cli import main
from tests.support.mutate import mutate, write_mutated
from tests.support.paths import FIXTURES, ROOT

# fuzzers: hundreds of mutated sessions, through inspect and the TUI
pytestmark = pytest.mark.slow

SAMPLES = ROOT / "sample_sessions"

#: small seeds of every format: ctxview, request, messages, Claude Code JSONL, web
SEEDS: list[Path] = [
    SAMPLES / "tool_errors.json",
    SAMPLES / "untrusted_text.json",
    *sorted((FIXTURES / "anthropic_requests").glob("*.json"))[:3],
    *sorted((FIXTURES / "claude_code").rglob("*.jsonl"))[:2],
]
SEED_TEXT = [p.read_text(encoding="utf-8") for p in SEEDS if p.stat().st_size < 200_000]


def check_inspect(capsys: pytest.CaptureFixture[str], path: Path, *extra: str) -> int:
    t0 = time.monotonic()
    try:
        code = main(["inspect", str(path), *extra])
    except SystemExit as exc:  # argparse only
        code = int(exc.code or 0)
    elapsed = time.monotonic() - t0
    out, err = capsys.readouterr()
    assert code in (0, 1, 2), (code, err)
    assert elapsed < 5, f"inspect took {elapsed:.1f} s"
    assert "Traceback" not in err and "Traceback" not in out
    assert "internal error" not in err, err  # a bug somewhere behind the readers
    if code == 2:
        lines = [ln for ln in err.splitlines() if ln.strip()]
        assert len(lines) == 1 and lines[0].startswith("ctxview: "), err
        assert "\x1b" not in err
    if "--json" in extra and code in (0, 1):
        json.loads(out)
        assert "\x1b" not in out and "\x85" not in out and "\u202e" not in out
    return code


@settings(
    max_examples=150,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    seed=st.integers(0, len(SEED_TEXT) - 1),
    salt=st.integers(0, 2**32),
    n=st.integers(1, 4),
    as_json=st.booleans(),
)
def test_fuzz_inspect(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], seed: int, salt: int, n: int, as_json: bool
) -> None:
    text = mutate(SEED_TEXT[seed], random.Random(salt), n)
    p = tmp_path / f"fuzz{salt}.json"
    write_mutated(p, text)
    check_inspect(capsys, p, *(["--json"] if as_json else []))


def corpus(count: int, salt: int = 9, most: int = 4) -> list[str]:
    rnd = random.Random(salt)
    seeds = SEED_TEXT
    return [mutate(seeds[i % len(seeds)], rnd, rnd.randint(1, most)) for i in range(count)]


def test_fuzz_inspect_as_a_user(tmp_path: Path) -> None:
    """A few of the same inputs through the real command line, in subprocesses."""
    for i, text in enumerate(corpus(6)):
        p = tmp_path / f"c{i}.jsonl"
        write_mutated(p, text)
        t0 = time.monotonic()
        r = subprocess.run(
            [sys.executable, "-m", "ctxview", "inspect", str(p)],
            capture_output=True,
            text=True,
            timeout=20,
            cwd=ROOT,
        )
        assert time.monotonic() - t0 < 5 + 2  # + interpreter start-up on a loaded machine
        assert r.returncode in (0, 1, 2) and "Traceback" not in r.stderr
        if r.returncode == 2:
            assert len(r.stderr.strip().splitlines()) == 1, r.stderr


async def test_fuzz_tui_draws_no_escape(tmp_path: Path) -> None:
    """The same kind of inputs opened in the TUI: what opens is drawn with no ESC, C1 or bidi
    control; what does not open leaves a notification and the app running."""
    from tests.support.apphelp import assert_clean, make_app, settle

    app = make_app(str(SAMPLES / "tool_errors.json"))
    async with app.run_test(size=(120, 36), notifications=True) as pilot:
        await settle(pilot)
        opened = 0
        for i, text in enumerate(corpus(8, salt=21, most=1)):
            p = tmp_path / f"t{i}.json"
            write_mutated(p, text)
            before = app.model
            app.open_path(str(p))
            await settle(pilot)
            opened += app.model is not before
            for key in ("end", "k", "k", "home"):
                await pilot.press(key)
                await pilot.pause(0.05)
                assert_clean(app, f"fuzz input {i}")
            assert app.is_running
        assert app.notice_log  # opened or refused: each said so
        assert opened >= 2  # some mutated sessions did open and were drawn
