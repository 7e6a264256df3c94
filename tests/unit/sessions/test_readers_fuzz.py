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
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxview.cli import main
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

#: values known to break naive readers, or plausible hostile content
NASTY: list[Any] = [
    None,
    True,
    [],
    {},
    "",
    0,
    -1,
    2**80,
    1.5e308,
    "\x1b]0;pwned\x07\x1b[2J",
    "\x9b31m\x85\u202e\u2066",
    "toolu_\x1b]52;c;aGVsbG8=\x07",
    "[@click=app.quit]x[/]",
    "a" * 5000,
    {"type": "weird\x1b[2J"},
    {"type": "tool_use"},
    {"type": "tool_result"},
    {"type": "image", "source": {}},
    [{"type": "text"}],
    {"role": "user"},
    {"role": "assistant", "content": None},
]
#: raw text splices: the JSON they make is not representable as a Python value above
RAW = ["NaN", "-Infinity", "9" * 5000, "[" * 300 + "]" * 300, '{"a":' * 250 + "1" + "}" * 250]


def _paths(v: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(v, dict):
        for k, x in v.items():
            out += _paths(x, (*prefix, k))
    elif isinstance(v, list):
        for i, x in enumerate(v):
            out += _paths(x, (*prefix, i))
    return out


def _set(root: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    node = root
    for p in path[:-1]:
        node = node[p]
    node[path[-1]] = value
    return root


def mutate(text: str, rnd: random.Random, n: int) -> str:
    """n mutations of a JSON or JSONL document: values replaced, keys dropped, raw splices,
    byte-level damage."""
    jsonl = "\n" in text.strip() and text.lstrip().startswith("{") and text.count("\n{") > 0
    docs = text.splitlines() if jsonl else [text]
    for _ in range(n):
        k = rnd.randrange(len(docs))
        doc = docs[k]
        op = rnd.random()
        try:
            data = json.loads(doc) if doc.strip() else None
        except ValueError:
            data = None
        if data is not None and op < 0.55:
            paths = _paths(data)
            path = rnd.choice(paths)
            if op < 0.4:
                data = _set(data, path, rnd.choice(NASTY))
            elif path and isinstance(data, (dict, list)):  # drop a key / item
                node = data
                for p in path[:-1]:
                    node = node[p]
                del node[path[-1]]
            docs[k] = json.dumps(data, ensure_ascii=rnd.random() < 0.5)
        elif op < 0.8 and doc:
            # a raw splice where a value could start
            spots = [i for i, c in enumerate(doc) if c in ":[,"] or [0]
            i = rnd.choice(spots) + 1
            j = i
            while j < len(doc) and doc[j] not in ",}]":
                j += 1
            docs[k] = doc[:i] + rnd.choice(RAW) + doc[j:]
        elif doc:
            try:
                b = bytearray(doc.encode("utf-8", errors="surrogateescape"))
            except UnicodeEncodeError:
                b = bytearray(doc.encode("utf-8", errors="surrogatepass"))
            i = rnd.randrange(len(b))
            choice = rnd.random()
            if choice < 0.3:
                b = b[:i]  # truncated
            elif choice < 0.6:
                b[i] = rnd.choice(b'{}[]",:\\\x00\x1b\x85\xff')
            else:
                b[i:i] = rnd.choice([b"\n", b"\xef\xbb\xbf", b"\x00", "\u202e".encode()])
            docs[k] = b.decode("utf-8", errors="surrogateescape")
    out = "\n".join(docs)
    return out


def _write(path: Path, text: str) -> None:
    try:
        data = text.encode("utf-8", errors="surrogateescape")  # the damaged bytes, as they were
    except UnicodeEncodeError:
        data = text.encode("utf-8", errors="surrogatepass")  # lone surrogates: invalid UTF-8
    path.write_bytes(data)


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
    _write(p, text)
    check_inspect(capsys, p, *(["--json"] if as_json else []))


def corpus(count: int, salt: int = 9, most: int = 4) -> list[str]:
    rnd = random.Random(salt)
    seeds = SEED_TEXT
    return [mutate(seeds[i % len(seeds)], rnd, rnd.randint(1, most)) for i in range(count)]


def test_fuzz_inspect_as_a_user(tmp_path: Path) -> None:
    """A few of the same inputs through the real command line, in subprocesses."""
    for i, text in enumerate(corpus(6)):
        p = tmp_path / f"c{i}.jsonl"
        _write(p, text)
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
            _write(p, text)
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
