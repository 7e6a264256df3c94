"""The compaction ledger and the rewind tracking on a 100,000-message Claude Code transcript.

    python benchmarks/bench_ledger_rewind.py [--rounds 50000] [--rewinds 10] [--compactions 5]

Generates a transcript of tool rounds (each response written as two lines, as Claude Code
does), with ``--rewinds`` abandoned branches (three rounds each, then the prompt edited) and
``--compactions`` compact boundaries, then measures, best of 3, in-process:

* ``load_session`` (which now also gathers the abandoned branches' responses), and the part of
  it that is ``off_branch_responses``;
* ``simulate`` as sent, with the abandoned requests and without them;
* the timeline's rows: ``SessionModel.rebuild_rows`` with the ledger markers (first build: the
  ledger scans every message once; later builds: only new ones), against the rows alone.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _line(kind: str, uuid: str, parent: str | None, content: Any, ts: str, **kw: Any) -> str:
    msg: dict[str, Any] = {"role": kind, "content": content}
    rec: dict[str, Any] = {
        "type": kind,
        "uuid": uuid,
        "parentUuid": parent,
        "isSidechain": False,
        "sessionId": "s",
        "timestamp": ts,
        "message": msg,
    }
    if kind == "assistant":
        msg.update(
            id=kw.pop("mid"),
            type="message",
            model="claude-sonnet-4-5",
            usage={
                "input_tokens": 3,
                "cache_read_input_tokens": kw.pop("read", 20000),
                "cache_creation_input_tokens": 500,
                "output_tokens": 40,
            },
        )
    rec.update(kw)
    return json.dumps(rec) + "\n"


def make(path: Path, rounds: int, rewinds: int, compactions: int) -> None:
    t0 = 1_767_225_600.0  # 2026-01-01

    def ts(k: float) -> str:
        return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t0 + k)) + ".000Z"

    rewind_at = {rounds * (j + 1) // (rewinds + 1) for j in range(rewinds)}
    compact_at = {rounds * (j + 1) // (compactions + 1) + 7 for j in range(compactions)}
    out: list[str] = [_line("user", "p0", None, "start", ts(0))]
    parent = "p0"
    clock = 1.0
    for k in range(rounds):
        if k in compact_at:
            out.append(
                json.dumps(
                    {
                        "type": "system",
                        "subtype": "compact_boundary",
                        "uuid": f"cb{k}",
                        "parentUuid": None,
                        "logicalParentUuid": parent,
                        "isSidechain": False,
                        "timestamp": ts(clock),
                        "compactMetadata": {"trigger": "auto", "preTokens": 160000},
                    }
                )
                + "\n"
            )
            out.append(
                _line(
                    "user", f"cs{k}", f"cb{k}", "summary " * 200, ts(clock), isCompactSummary=True
                )
            )
            parent = f"cs{k}"
        if k in rewind_at:
            # a prompt, three rounds on it, then back: the prompt edited, the session goes on
            fork = parent
            out.append(_line("user", f"q{k}", fork, f"do thing {k}", ts(clock)))
            p = f"q{k}"
            for j in range(3):
                clock += 2
                out.append(
                    _line(
                        "assistant",
                        f"xa{k}_{j}",
                        p,
                        [{"type": "tool_use", "id": f"xt{k}_{j}", "name": "Read", "input": {}}],
                        ts(clock),
                        mid=f"xm{k}_{j}",
                    )
                )
                out.append(
                    _line(
                        "user",
                        f"xu{k}_{j}",
                        f"xa{k}_{j}",
                        [
                            {
                                "type": "tool_result",
                                "tool_use_id": f"xt{k}_{j}",
                                "content": "y" * 600,
                            }
                        ],
                        ts(clock),
                    )
                )
                p = f"xu{k}_{j}"
            clock += 60
            out.append(_line("user", f"qe{k}", fork, f"do thing {k}, edited", ts(clock)))
            parent = f"qe{k}"
        clock += 2
        out.append(
            _line(
                "assistant",
                f"a{k}",
                parent,
                [{"type": "text", "text": f"step {k} " + "r" * 200}],
                ts(clock),
                mid=f"m{k}",
            )
        )
        out.append(
            _line(
                "assistant",
                f"b{k}",
                f"a{k}",
                [{"type": "tool_use", "id": f"t{k}", "name": "Read", "input": {"p": k}}],
                ts(clock),
                mid=f"m{k}",
            )
        )
        out.append(
            _line(
                "user",
                f"u{k}",
                f"b{k}",
                [{"type": "tool_result", "tool_use_id": f"t{k}", "content": "x" * 800}],
                ts(clock),
            )
        )
        parent = f"u{k}"
    path.write_text("".join(out))


def best(fn: Callable[[], Any], n: int = 3) -> tuple[float, Any]:
    times, result = [], None
    for _ in range(n):
        t = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t)
    return min(times), result


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=50_000)
    ap.add_argument("--rewinds", type=int, default=10)
    ap.add_argument("--compactions", type=int, default=5)
    args = ap.parse_args()

    from ctxview.app.model import SessionModel
    from ctxview.core.requests import simulate
    from ctxview.sessions import load_session, replay
    from ctxview.sessions.claude_code import Line, _select, off_branch_responses, rebuild

    path = Path(tempfile.mkdtemp()) / "big.jsonl"
    make(path, args.rounds, args.rewinds, args.compactions)
    size = path.stat().st_size
    t_load, s = best(lambda: load_session(str(path)))
    print(
        f"transcript: {len(s.messages):,} messages, {size / 1e6:.1f} MB, "
        f"{len(s.off_branch)} abandoned responses"
    )
    lines = [Line(k + 1, json.loads(x)) for k, x in enumerate(path.read_text().splitlines())]
    selected = _select(lines)
    _, (_m, metas, _u, _w) = best(lambda: rebuild(lines), 1)
    t_off, _off = best(lambda: off_branch_responses(lines, selected, metas))
    print(f"load_session                 {t_load:7.3f} s")
    print(f"  of which off_branch        {t_off:7.3f} s ({100 * t_off / t_load:.1f}%)")
    t_sim, log = best(lambda: simulate(s), 1)
    breaks: dict[str, int] = {}
    for r in log.requests:
        if r.cache_break:
            breaks[r.cache_break.reason] = breaks.get(r.cache_break.reason, 0) + 1
    kept = s.off_branch
    s.off_branch = []
    t_sim0, _ = best(lambda: simulate(s), 1)
    s.off_branch = kept
    print(f"simulate as sent             {t_sim:7.3f} s ({len(log.requests):,} requests; {breaks})")
    print(f"simulate, no abandoned reqs  {t_sim0:7.3f} s")
    rep = replay(s, max_context_messages=20)
    model = SessionModel(rep, str(path), "claude-sonnet-4-5")
    model.replay._ledger.reset()
    t0 = time.perf_counter()
    model.rebuild_rows()
    t_first = time.perf_counter() - t0
    t_again, _ = best(model.rebuild_rows)
    t_rows, _ = best(model._build_rows)
    print(
        f"timeline rows (max 20)       first {t_first * 1e3:6.1f} ms (ledger scan), "
        f"then {t_again * 1e3:6.1f} ms; rows alone {t_rows * 1e3:6.1f} ms; "
        f"{len(model.ledger())} ledger markers"
    )


if __name__ == "__main__":
    main()
