"""The compaction ledger and rewinds on a 100,000-message Claude Code transcript.

A transcript of tool rounds (each response written as two lines, as Claude Code does), with 10
abandoned branches (three rounds each, then the prompt edited) and 5 compact boundaries:
``load_session`` (which gathers the abandoned branches' responses too), ``simulate`` as sent
with the abandoned requests and without them, and the timeline's rows with the ledger markers
(the view model's first build scans every message once; later builds only new ones).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from benchmarks.common import Bench, Figure, best, cc_line, iso, report, say

MODEL = "claude-sonnet-4-5"


def usage(read: int = 20000) -> dict[str, int]:
    return {
        "input_tokens": 3,
        "cache_read_input_tokens": read,
        "cache_creation_input_tokens": 500,
        "output_tokens": 40,
    }


def make(path: Path, rounds: int, rewinds: int = 10, compactions: int = 5) -> None:
    def line(
        kind: str, uuid: str, parent: str | None, content: object, clock: float, **kw: object
    ) -> str:
        if kind == "assistant":
            kw.update(model=MODEL, usage=usage())
        return cc_line(kind, uuid, parent, content, iso(clock), isSidechain=False, **kw)  # type: ignore[arg-type]

    rewind_at = {rounds * (j + 1) // (rewinds + 1) for j in range(rewinds)}
    compact_at = {rounds * (j + 1) // (compactions + 1) + 7 for j in range(compactions)}
    out = [line("user", "p0", None, "start", 0)]
    parent, clock = "p0", 1.0
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
                        "timestamp": iso(clock),
                        "compactMetadata": {"trigger": "auto", "preTokens": 160000},
                    }
                )
                + "\n"
            )
            out.append(
                line("user", f"cs{k}", f"cb{k}", "summary " * 200, clock, isCompactSummary=True)
            )
            parent = f"cs{k}"
        if k in rewind_at:  # a prompt, three rounds on it, then back: the prompt edited
            fork = parent
            out.append(line("user", f"q{k}", fork, f"do thing {k}", clock))
            p = f"q{k}"
            for j in range(3):
                clock += 2
                tool_use = {"type": "tool_use", "id": f"xt{k}_{j}", "name": "Read", "input": {}}
                out.append(
                    line("assistant", f"xa{k}_{j}", p, [tool_use], clock, message_id=f"xm{k}_{j}")
                )
                result = {"type": "tool_result", "tool_use_id": f"xt{k}_{j}", "content": "y" * 600}
                out.append(line("user", f"xu{k}_{j}", f"xa{k}_{j}", [result], clock))
                p = f"xu{k}_{j}"
            clock += 60
            out.append(line("user", f"qe{k}", fork, f"do thing {k}, edited", clock))
            parent = f"qe{k}"
        clock += 2
        text = {"type": "text", "text": f"step {k} " + "r" * 200}
        out.append(line("assistant", f"a{k}", parent, [text], clock, message_id=f"m{k}"))
        tool_use = {"type": "tool_use", "id": f"t{k}", "name": "Read", "input": {"p": k}}
        out.append(line("assistant", f"b{k}", f"a{k}", [tool_use], clock, message_id=f"m{k}"))
        result = {"type": "tool_result", "tool_use_id": f"t{k}", "content": "x" * 800}
        out.append(line("user", f"u{k}", f"b{k}", [result], clock))
        parent = f"u{k}"
    path.write_text("".join(out))


def run(b: Bench) -> None:
    from ctxview.app.model import SessionModel
    from ctxview.core.requests import simulate
    from ctxview.sessions import load_session, replay

    path = b.data / f"ledger_{b.messages}.jsonl"
    make(path, b.messages // 2)
    t_load, s = best(lambda: load_session(str(path)))
    say(
        f"{len(s.messages):,} messages, {path.stat().st_size / 1e6:.1f} MB, "
        f"{len(s.off_branch)} abandoned responses"
    )
    report(Figure("load_session", t_load, "s"))
    t_sim, log = best(lambda: simulate(s), 1)
    breaks: dict[str, int] = {}
    for r in log.requests:
        if r.cache_break:
            breaks[r.cache_break.reason] = breaks.get(r.cache_break.reason, 0) + 1
    say(f"{len(log.requests):,} requests; breaks {breaks}")
    kept, s.off_branch = s.off_branch, []
    t_sim0, _ = best(lambda: simulate(s), 1)
    s.off_branch = kept
    report(Figure("simulate as sent", t_sim, "s"))
    report(Figure("simulate as sent, without the abandoned requests", t_sim0, "s"))
    rep = replay(s, max_context_messages=20)
    t0 = time.perf_counter()
    model = SessionModel(rep, str(path), MODEL)
    t_first = time.perf_counter() - t0
    t_again, _ = best(model.rebuild_rows)
    say(f"{len(model.ledger())} ledger markers")
    report(Figure("the view model's first build (rows, ledger scan), max 20", t_first * 1000, "ms"))
    report(Figure("timeline rows rebuilt", t_again * 1000, "ms"))
