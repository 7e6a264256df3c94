"""Every headless command on mutated real files, in the test's process.

Each case mutates one recorded file (``sample_sessions/``, ``tests/acceptance/``,
``tests/fixtures/``) with the seeded mutator of ``tests.support.mutate`` (case ``k`` is
``random.Random(k)``: a failure names its case, and ``mutated_case(k)`` rebuilds the input), then
runs ``inspect``, ``requests``, ``compare``, ``repair``, ``export`` and ``diff`` on it, with and
without ``--json``, and the Claude Code reader and ``--follow``'s reader on it. Each run must end
with exit 0, 1 or 2, never a traceback; exit 2 is one line on stderr naming the file; nothing
written holds an ESC; each run ends within PER_RUN_SECONDS (a hang fails, it does not block
the suite). ``sessions`` lists a fake home of mutated transcripts, then again with its cache
mutated. The quick cases run every time; the ``slow`` ones add ten times as many.
"""

from __future__ import annotations

import gc
import json
import random
import signal
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import pytest

from ctxview.cli import main
from ctxview.live.follow import Follower
from ctxview.sessions import SessionError, load_session
from tests.support.mutate import mutate, write_mutated
from tests.support.paths import ACCEPTANCE, FIXTURES, SAMPLES

#: the recorded files mutated: every JSON and JSONL file under 200 kB (bigger ones make a case
#: slow without reaching more code)
SEEDS: list[Path] = sorted(
    p
    for root in (SAMPLES, ACCEPTANCE, FIXTURES)
    for p in root.rglob("*.json*")
    if p.suffix in (".json", ".jsonl") and p.stat().st_size < 200_000
)
QUICK_CASES = 48
SLOW_CASES = 480
#: a run of one command on one small file takes tens of milliseconds; this is a hang
PER_RUN_SECONDS = 10


def mutated_case(k: int) -> tuple[Path, str]:
    """Case ``k``: the recorded file it starts from and the mutated text."""
    rnd = random.Random(k)
    seed = SEEDS[k % len(SEEDS)]
    return seed, mutate(seed.read_text(encoding="utf-8"), rnd, rnd.randint(1, 4))


class Hang(Exception):
    pass


@contextmanager
def time_limit(seconds: float, what: str) -> Iterator[None]:
    """Hang raised in the test's (main) thread after ``seconds``."""

    def expired(signum: int, frame: object) -> None:
        raise Hang(f"{what}: still running after {seconds} s")

    old = signal.signal(signal.SIGALRM, expired)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def run_checked(
    capsys: pytest.CaptureFixture[str], argv: list[str], names: tuple[str, ...], case: str
) -> int:
    """``ctxview ARGV`` in process: exit 0, 1 or 2, no traceback, exit 2 a single line naming
    one of ``names``, no ESC in any output."""
    what = f"{case}: ctxview {' '.join(argv)}"
    with time_limit(PER_RUN_SECONDS, what):
        try:
            code = main(argv)
        except SystemExit as exc:  # argparse only
            code = int(exc.code or 0)
    out, err = capsys.readouterr()
    assert code in (0, 1, 2), (what, code, err)
    assert "Traceback" not in err and "internal error" not in err, (what, err)
    assert "\x1b" not in out and "\x1b" not in err, what
    if code == 2:
        lines = [ln for ln in err.splitlines() if ln.strip()]
        assert len(lines) == 1 and lines[0].startswith("ctxview: "), (what, err)
        assert any(n in lines[0] for n in names), (what, lines[0])
    if "--json" in argv and out.strip():
        json.loads(out)
    return code


def commands(f: str, seed: str, out: Path) -> list[list[str]]:
    return [
        ["inspect", f],
        ["inspect", f, "--json"],
        ["requests", f],
        ["requests", f, "--json"],
        ["compare", f],
        ["compare", f, "--json"],
        ["repair", f, "-o", str(out / "repaired.json"), "--json"],
        ["repair", f],
        ["export", f, "-o", str(out / "exported.json")],
        ["export", f],
        ["diff", f, seed, "--json"],
        ["diff", seed, f],
    ]


def check_readers(path: Path, case: str) -> None:
    """The Claude Code reader (forced on any file) and ``--follow``'s: a SessionError or a
    replay, never another exception."""
    with time_limit(PER_RUN_SECONDS, f"{case}: the readers"):
        with suppress(SessionError):
            load_session(path, "claude-code")
        follower = Follower(str(path))
        follower.poll()
        follower.step(quiet=True)


def fuzz_commands(k: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    seed, text = mutated_case(k)
    case = f"case {k} (from {seed.name})"
    f = tmp_path / f"case{k}{seed.suffix}"
    write_mutated(f, text)
    for argv in commands(str(f), str(seed), tmp_path):
        run_checked(capsys, argv, (str(f), str(seed)), case)
    check_readers(f, case)
    # what the commands left is in the oldest generation (sessions.model.gc_paused ages every
    # load), collected only by a full pass: without one a worker grows ~50 MB every 70 cases
    gc.collect()


@pytest.mark.parametrize("k", range(QUICK_CASES))
def test_every_command_on_a_mutated_file(
    k: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fuzz_commands(k, tmp_path, capsys)


@pytest.mark.slow
@pytest.mark.fuzz
@pytest.mark.parametrize("k", range(QUICK_CASES, QUICK_CASES + SLOW_CASES))
def test_every_command_on_more_mutated_files(
    k: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fuzz_commands(k, tmp_path, capsys)


def _fake_home(home: Path, cases: range) -> None:
    proj = home / ".claude" / "projects" / "-work-fuzz"
    proj.mkdir(parents=True)
    for k in cases:
        _, text = mutated_case(k)
        name = f"agent-{k}.jsonl" if k % 5 == 0 else f"s{k}.jsonl"
        write_mutated(proj / name, text)
    sub = proj / f"s{cases.start + 1}" / "subagents"
    sub.mkdir(parents=True)
    write_mutated(sub / "agent-x.jsonl", mutated_case(cases.start + 2)[1])


def fuzz_sessions(
    cases: range,
    home: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CTXVIEW_STATE_DIR", str(home / "state"))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    _fake_home(home, cases)
    cache = home / "state" / "sessions-list.json"
    rnd = random.Random(cases.start)
    for round_ in range(4):
        for argv in (["sessions", "--json"], ["sessions"]):
            run_checked(capsys, argv, (str(cache),), f"sessions, round {round_}")
        # the cache as an editor or a crash might leave it: every field of it fair game
        original = cache.read_text(encoding="utf-8")
        write_mutated(cache, mutate(original, rnd, rnd.randint(1, 6)))


def test_sessions_on_mutated_transcripts_and_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    fuzz_sessions(range(0, 24), tmp_path, monkeypatch, capsys)


@pytest.mark.slow
@pytest.mark.fuzz
@pytest.mark.parametrize("start", range(100, 1100, 100))
def test_sessions_on_more_mutated_transcripts_and_caches(
    start: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    fuzz_sessions(range(start, start + 40), tmp_path, monkeypatch, capsys)
