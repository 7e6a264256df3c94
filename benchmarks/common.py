"""What every benchmark shares: the figures it reports, the files it measures, and the ways to
time a command.

The files are written in ctxview's documented formats (``docs/session-format.md``, Claude
Code's JSONL) by plain code here, not through ctxview's own writers, so a change inside
ctxview cannot change the file it is measured on. Commands are timed as whole processes
(``python -m ctxview …``, interpreter start and exit included, as a user's shell sees them)
and ``json.load`` of the same file is timed the same way: the ratio of the two is the figure.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
# The working folder of every process a benchmark starts: not a checkout, where `python -m`
# would import that checkout's ctxview first, whatever PYTHONPATH says (see bench_env's tree).
ELSEWHERE = Path(tempfile.gettempdir())
MODEL = "claude-sonnet-5-5"


# --- figures ---------------------------------------------------------------------------------


@dataclass
class Figure:
    """One measured figure and, when it has one, its target (``value <= target``, or
    ``value >= target`` when ``higher_is_better``)."""

    name: str
    value: float
    unit: str  # "s", "ms", "x" (a ratio), "MB", "/s", "" (a count)
    target: float | None = None
    higher_is_better: bool = False
    note: str = ""

    @property
    def verdict(self) -> str:
        if self.target is None or self.value != self.value:  # no target, or NaN
            return ""
        ok = self.value >= self.target if self.higher_is_better else self.value <= self.target
        return "ok" if ok else "MISSED"

    def shown(self) -> str:
        return _number(self.value, self.unit)

    def target_shown(self) -> str:
        if self.target is None:
            return ""
        sign = "≥" if self.higher_is_better else "≤"
        return f"{sign} {_number(self.target, self.unit)}"

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> Figure:
        return cls(**json.loads(text))


def _number(v: float, unit: str) -> str:
    if unit == "x":
        return f"{v:.2f}×"
    if unit == "s":
        return f"{v:.3f} s"
    if unit == "ms":
        return f"{v:.1f} ms"
    if unit == "MB":
        return f"{v:.0f} MB"
    if unit == "/s":
        return f"{v:,.0f}/s"
    text = f"{v:,.3g}" if isinstance(v, float) and not v.is_integer() else f"{v:,.0f}"
    return f"{text} {unit}" if unit else text


FIGURE_PREFIX = "FIGURE "


def report(figure: Figure) -> None:
    """Hand a figure to the runner (one line on stdout that the runner reads back)."""
    print(FIGURE_PREFIX + figure.to_json(), flush=True)


def say(text: str) -> None:
    """A line of detail under the benchmark's heading."""
    print("    " + text, flush=True)


# --- the run's settings and its files --------------------------------------------------------


@dataclass
class Bench:
    """What a benchmark is given: the size to run at and a folder where the files it measures
    are made once and shared with the other benchmarks of the run."""

    quick: bool
    data: Path
    file: Path | None = None  # an existing agent-loop session given with --file
    rounds: int = 3
    env: dict[str, str] = field(default_factory=dict)

    @property
    def messages(self) -> int:
        """The size of the big sessions: 100,000 messages (10,000 with --quick)."""
        return 10_000 if self.quick else 100_000

    @property
    def runs(self) -> int:
        return 1 if self.quick else 3

    def agent_loop(self) -> Path:
        """The 100,000-message agent loop (~91 MB): a ctxview session at max 5000 / seed."""
        if self.file is not None:
            return self.file
        return self._made("agent_loop.json", lambda p: write_session(p, agent_loop(self.messages)))

    def tool_loop(self) -> Path:
        """A tool loop of short messages (rounds of 1-2-1 tool calls, ~39 MB at 100,000)."""
        return self._made("tool_loop.json", lambda p: write_session(p, tool_loop(self.messages)))

    def transcript(self) -> Path:
        """A Claude Code transcript of tool rounds with recorded usage (JSONL)."""
        return self._made("transcript.jsonl", lambda p: write_transcript(p, self.messages))

    def _made(self, name: str, make: Callable[[Path], None]) -> Path:
        path = self.data / f"{self.messages}_{name}"
        if not path.exists():
            t0 = time.perf_counter()
            part = path.with_suffix(".part")
            make(part)
            part.rename(path)
            say(
                f"made {path.name}: {path.stat().st_size / 1e6:.1f} MB "
                f"in {time.perf_counter() - t0:.1f} s"
            )
        return path


def bench_env(data: Path, tree: Path | None = None) -> dict[str, str]:
    """The environment of every process a benchmark starts: ctxview's defaults (not the user's
    config), no animations, and bytecode cached as an installed ctxview's is (a sandbox's
    PYTHONDONTWRITEBYTECODE would make every run compile ctxview again).

    ``tree``: measure the ctxview of another checkout (the code before a change, say) with these
    benchmarks. The two share a folder layout, so this checkout's ``benchmarks`` is reached
    through a folder that holds only a link to it, and the other checkout comes next."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["CTXVIEW_CONFIG"] = str(data / "no-config.toml")
    env["TEXTUAL_ANIMATIONS"] = "none"
    env.pop("ANTHROPIC_API_KEY", None)
    env.pop("ANTHROPIC_BASE_URL", None)
    first = [str(ROOT)]
    if tree is not None:
        only_benchmarks = data / "benchmarks-only"
        only_benchmarks.mkdir(exist_ok=True)
        link = only_benchmarks / "benchmarks"
        if not link.exists():
            link.symlink_to(ROOT / "benchmarks", target_is_directory=True)
        first = [str(only_benchmarks), str(tree.resolve())]
    path = env.get("PYTHONPATH")
    env["PYTHONPATH"] = os.pathsep.join(first + ([path] if path else []))
    return env


def measured_ctxview(env: dict[str, str], cwd: Path) -> str:
    """Where the processes a benchmark starts import ctxview from."""
    out = subprocess.run(
        [sys.executable, "-c", "import ctxview; print(ctxview.__file__)"],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        check=False,
    )
    return out.stdout.strip() or out.stderr.strip()[-300:]


def use_bench_env(data: Path, tree: Path | None = None) -> None:
    """The same settings for code measured inside this process (which must import ctxview
    from ``tree`` when one is given)."""
    os.environ.update(bench_env(data, tree))
    if tree is not None:
        sys.path.insert(0, str(tree.resolve()))
    os.environ.pop("ANTHROPIC_API_KEY", None)
    os.environ.pop("ANTHROPIC_BASE_URL", None)


def test_helper(name: str) -> Any:
    """A module of the test suite's helpers (message generators, the fake API), wherever the
    suite keeps them."""
    import importlib

    for folder in (ROOT / "tests" / "support", ROOT / "tests"):
        if (folder / f"{name}.py").exists():
            if str(folder) not in sys.path:
                sys.path.insert(0, str(folder))
            return importlib.import_module(name)
    raise SystemExit(f"tests/{name}.py not found (looked in tests/support/ and tests/)")


def test_helper_path(name: str) -> Path:
    for folder in (ROOT / "tests" / "support", ROOT / "tests"):
        if (folder / f"{name}.py").exists():
            return folder / f"{name}.py"
    raise SystemExit(f"tests/{name}.py not found (looked in tests/support/ and tests/)")


# --- generated sessions ----------------------------------------------------------------------


def agent_loop(n: int) -> list[dict[str, Any]]:
    """An agent loop of ``n`` messages: user turns, tool_use rounds with ~1.8 KB results,
    replies."""
    filler = ("lorem ipsum dolor sit amet " * 80)[:1800]
    msgs: list[dict[str, Any]] = []
    for i in range(n):
        if i % 4 == 0:
            msgs.append({"role": "user", "content": f"step {i}: {filler[:400]}"})
        elif i % 4 == 1:
            msgs.append(
                {
                    "role": "assistant",
                    "content": [
                        {"type": "text", "text": "checking"},
                        {
                            "type": "tool_use",
                            "id": f"toolu_{i}",
                            "name": "read_file",
                            "input": {"path": f"f{i}.txt"},
                        },
                    ],
                }
            )
        elif i % 4 == 2:
            result = {"type": "tool_result", "tool_use_id": f"toolu_{i - 1}", "content": filler}
            msgs.append({"role": "user", "content": [{**result, "is_error": False}]})
        else:
            msgs.append(
                {
                    "role": "assistant",
                    "content": [{"type": "text", "text": f"done {i}. {filler[:300]}"}],
                }
            )
    return msgs


def tool_loop(n: int) -> list[dict[str, Any]]:
    """Short messages: an instruction, rounds of 1-2-1 tool calls, a reply (the tests'
    ``agent_loop`` generator)."""
    gen = test_helper("agentgen")
    return list(gen.agent_loop([[1, 2, 1]] * (n // 8 + 1), seed=1)[:n])


def rounds_loop(n: int, result: str = "x" * 80, tool: str = "read") -> list[dict[str, Any]]:
    """Rounds of four messages: a user step, a text + tool_use, its result, a text reply."""
    msgs: list[dict[str, Any]] = []
    i = 0
    while len(msgs) < n:
        msgs.append({"role": "user", "content": f"step {i}"})
        msgs.append(
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": f"calling {i}"},
                    {"type": "tool_use", "id": f"t{i}", "name": tool, "input": {"i": i}},
                ],
            }
        )
        msgs.append(
            {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": f"t{i}", "content": result}],
            }
        )
        msgs.append({"role": "assistant", "content": [{"type": "text", "text": f"done {i}"}]})
        i += 1
    return msgs[:n]


def write_session(path: Path, messages: Sequence[dict[str, Any]], max_messages: int = 5000) -> None:
    """``messages`` as a ctxview session that a ``seed`` context at ``max_messages`` saved: the
    first message plus the newest ``max_messages - 1`` in the window, every other one evicted
    at the step its successor pushed it out."""
    n = len(messages)
    keep_from = max(1, n - (max_messages - 1))
    transcript = []
    for i, m in enumerate(messages):
        evicted = None
        if 0 < i < keep_from:
            evicted = i + max_messages  # message i leaves when message i + max - 1 is added
        transcript.append(
            {
                "id": i,
                "message": m,
                "timestamp": None,
                "usage": None,
                "added_at_step": i + 1,
                "evicted_at_step": evicted,
            }
        )
    doc = {
        "format": "ctxview.session",
        "version": 1,
        "saved_at": "2026-01-01T00:00:00+00:00",
        "title": None,
        "settings": {
            "model": MODEL,
            "max_tokens": None,
            "max_context_messages": max_messages,
            "strategy": "seed",
            "max_context_tokens": 200000,
            "low_water_fraction": 0.5,
            "system_prompt": "",
            "tools": [],
            "request_params": {},
        },
        "step": n,
        "transcript": transcript,
        "window": {"ids": [0, *range(keep_from, n)] if n else [], "cut": keep_from > 1},
    }
    path.write_text(json.dumps(doc, indent=1, ensure_ascii=False))


def cc_line(
    kind: str,
    uuid: str,
    parent: str | None,
    content: Any,
    timestamp: str = "2026-01-01T00:00:00.000Z",
    *,
    message_id: str | None = None,
    model: str = "claude-sonnet-4-6",
    usage: dict[str, int] | None = None,
    **extra: Any,
) -> str:
    """One line of a Claude Code transcript (a user or assistant record)."""
    msg: dict[str, Any] = {"role": kind, "content": content}
    if kind == "assistant":
        msg.update(id=message_id or f"msg_{uuid}", type="message", model=model)
        if usage is not None:
            msg["usage"] = usage
    rec: dict[str, Any] = {
        "type": kind,
        "uuid": uuid,
        "parentUuid": parent,
        "sessionId": "s",
        "timestamp": timestamp,
        "message": msg,
        **extra,
    }
    return json.dumps(rec) + "\n"


def iso(seconds: float) -> str:
    """A transcript timestamp ``seconds`` after 2026-01-01T00:00:00Z."""
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(1_767_225_600 + seconds)) + ".000Z"


def write_transcript(path: Path, n: int) -> None:
    """A Claude Code transcript of ``n`` messages: tool rounds (text + tool_use as one
    response, then its result), each response with recorded usage, 20 s apart (the prompt
    cache stays warm)."""
    cached = 20_000
    parent = "u-start"
    with path.open("w") as f:
        f.write(cc_line("user", parent, None, "Read every file and summarise it.", iso(0)))
        count, k = 1, 0
        while count < n:
            k += 1
            usage = {
                "input_tokens": 3,
                "cache_read_input_tokens": cached,
                "cache_creation_input_tokens": 420,
                "output_tokens": 60,
            }
            cached += 420
            content = [
                {"type": "text", "text": f"Reading f{k}.py next. " + "r" * 200},
                {"type": "tool_use", "id": f"t{k}", "name": "Read", "input": {"path": f"f{k}"}},
            ]
            f.write(
                cc_line(
                    "assistant",
                    f"a{k}",
                    parent,
                    content,
                    iso(20 * k),
                    message_id=f"msg_{k}",
                    usage=usage,
                )
            )
            parent, count = f"a{k}", count + 1
            if count >= n:
                break
            result = [{"type": "tool_result", "tool_use_id": f"t{k}", "content": "x = 1\n" * 200}]
            f.write(cc_line("user", f"u{k}", parent, result, iso(20 * k)))
            parent, count = f"u{k}", count + 1


# --- timing ----------------------------------------------------------------------------------


def best(
    fn: Callable[[], Any], runs: int = 3, clock: Callable[[], float] = time.perf_counter
) -> tuple[float, Any]:
    """(the fastest of ``runs`` calls in seconds, the last call's result)."""
    times, out = [], None
    for _ in range(runs):
        t0 = clock()
        out = fn()
        times.append(clock() - t0)
    return min(times), out


@dataclass
class Timed:
    wall: float  # seconds, spawn to exit
    cpu: float  # user + system seconds of the process
    peak_rss: int  # bytes
    code: int


# A small interpreter (no site) starts the measured process and waits for it: the peak RSS
# Linux reports for a child includes the memory of the process that exec'd it, so the
# benchmark's own process (which may hold a 100,000-message session) must not be that one.
_SPAWN = """
import os, sys, time
t0 = time.perf_counter()
pid = os.posix_spawn(sys.argv[1], sys.argv[1:], os.environ,
                     file_actions=[(os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0)])
_, status, ru = os.wait4(pid, 0)
wall = time.perf_counter() - t0
print("TIMED", wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss * 1024,
      os.waitstatus_to_exitcode(status), file=sys.stderr)
"""


def run_timed(argv: Sequence[str], env: dict[str, str], ok: Iterable[int] = (0, 1)) -> Timed:
    """A whole process, its output thrown away as ``> /dev/null`` does."""
    out = subprocess.run(
        [sys.executable, "-S", "-c", _SPAWN, *argv],
        capture_output=True,
        text=True,
        env=env,
        cwd=ELSEWHERE,
        check=False,
    )
    last = out.stderr.strip().splitlines()[-1] if out.stderr.strip() else ""
    if not last.startswith("TIMED"):
        raise SystemExit(f"{' '.join(argv)}: no timing\n{out.stderr[-2000:]}")
    _, wall, cpu, rss, code = last.split()
    if int(code) not in ok:
        raise SystemExit(f"{' '.join(argv)}: exit {code}\n{out.stderr[-2000:]}")
    return Timed(float(wall), float(cpu), int(rss), int(code))


def ctxview_argv(*args: str) -> list[str]:
    return [sys.executable, "-m", "ctxview", *args]


def json_load_argv(path: Path) -> list[str]:
    return [sys.executable, "-c", f"import json\nwith open({str(path)!r}, 'rb') as f: json.load(f)"]


@dataclass
class Ratio:
    """A command against json.load of the same file, over interleaved rounds: each round times
    json.load and then the command, and the ratio is taken within the round, so a machine
    whose speed drifts moves both sides alike."""

    median: float
    cpu_median: float  # the same with CPU time (user + system) on both sides
    low: float
    high: float
    best_over_best: float
    command: Timed  # the command's fastest round
    baseline: Timed  # json.load's fastest round


def against_json_load(argv: Sequence[str], path: Path, env: dict[str, str], rounds: int) -> Ratio:
    base: list[Timed] = []
    cmd: list[Timed] = []
    for _ in range(rounds):
        base.append(run_timed(json_load_argv(path), env))
        cmd.append(run_timed(argv, env))
    ratios = [c.wall / b.wall for c, b in zip(cmd, base, strict=True)]
    fastest = min(cmd, key=lambda t: t.wall)
    fastest_base = min(base, key=lambda t: t.wall)
    return Ratio(
        statistics.median(ratios),
        statistics.median(c.cpu / b.cpu for c, b in zip(cmd, base, strict=True)),
        min(ratios),
        max(ratios),
        fastest.wall / fastest_base.wall,
        fastest,
        fastest_base,
    )


def spawn_until(argv: Sequence[str], env: dict[str, str], marker: str = "PAINTED") -> float:
    """Seconds from spawning a process to the first line it prints (which must hold
    ``marker``); the rest of its run is not counted."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        list(argv),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ELSEWHERE,
        env=env,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    dt = time.perf_counter() - t0
    _out, err = proc.communicate()
    if proc.returncode != 0 or marker not in line:
        raise SystemExit(f"{' '.join(argv)}: exit {proc.returncode}\n{err[-2000:]}")
    return dt


def first_paint(what: Sequence[str], env: dict[str, str], runs: int) -> float:
    """Best of ``runs``: seconds from spawning ``python -m benchmarks.probe paint …`` to its
    first painted frame (see ``probe.py``)."""
    argv = [sys.executable, "-m", "benchmarks.probe", "paint", *what]
    return min(spawn_until(argv, env) for _ in range(runs))


def probe(scenario: str, path: Path, env: dict[str, str], *extra: str) -> dict[str, Any]:
    """Run a TUI scenario of ``probe.py`` on ``ctxview FILE`` in a fresh process."""
    out_file = Path(tempfile.mkstemp(suffix=".json")[1])
    try:
        res = subprocess.run(
            [sys.executable, "-m", "benchmarks.probe", scenario, str(path), str(out_file), *extra],
            capture_output=True,
            text=True,
            cwd=ELSEWHERE,
            env=env,
            check=False,
        )
        if res.returncode != 0 or not out_file.read_text():
            raise SystemExit(f"probe {scenario}: exit {res.returncode}\n{res.stderr[-3000:]}")
        return dict(json.loads(out_file.read_text()))
    finally:
        out_file.unlink(missing_ok=True)
