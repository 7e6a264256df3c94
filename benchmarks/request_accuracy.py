"""How close the request model comes to what the API billed, on real Claude Code transcripts:
per-request input-token error (calibrated on the whole file, and fitted on its first half only,
measured on the second half) and predicted vs recorded cache break, each on a tune set and a
held-out set of files chosen before any tuning (:data:`TUNE`, :data:`HELD_OUT`).

    python -m benchmarks.request_accuracy            # both sets
    python -m benchmarks.request_accuracy --list     # every disagreement, named

Not a timing: a figure of accuracy, for the commit message and docs/request-model.md.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from ctxview.core.requests import simulate
from ctxview.core.requests.points import calibrate, request_points, session_features
from ctxview.core.requests.types import _quantile
from ctxview.sessions import load_session
from ctxview.sessions.model import LoadedSession

ROOT = Path(__file__).resolve().parent.parent
ACC = ROOT / "tests" / "acceptance" / "claude_code"
SHARED = Path("/work/shared/fixtures/claude_code")

#: the files the cache and calibration rules were tuned on (one spotter project's sessions,
#: their sub-agents, and the shared fixtures); chosen by project before any tuning
TUNE = (
    "spotter_258c7280-ae70-4798-800f-63464d01a85d*.jsonl",
    "spotter_4d5611e5-241a-462a-8d15-5122611a9569*.jsonl",
    "spotter_8463c716-a2ea-4c14-9efa-87158ebd9f20*.jsonl",
    "spotter_short.jsonl",
    "spotter_6c2214d7_subagent_agent-afc096d.jsonl",
    "spotter_tool_heavy_L26-36_parallel_tools_out_of_order.jsonl",
)
#: held out: never looked at while tuning (two more spotter sessions, and claude-code-viewer's
#: transcripts: another project, Claude Code 1.0.x, Sonnet 4)
HELD_OUT = (
    "spotter_ae4a77f8-aedd-4bc1-888f-c94edc91af04*.jsonl",
    "spotter_fa812bfe-b295-4cca-9c2f-fdf01028cb46*.jsonl",
    "spotter_subagent.jsonl",
    "spotter_tool_heavy.jsonl",
    "ccviewer_*.jsonl",
)


def files(patterns: Iterable[str]) -> list[Path]:
    out: list[Path] = []
    for pat in patterns:
        for d in (ACC, SHARED):
            out.extend(sorted(d.glob(pat)))
    return out


def _first_half(session: LoadedSession) -> tuple[LoadedSession, set[int]]:
    """The session with the usage of its second half of recorded requests removed, and the
    index of the first request point measured."""
    ids = [p.response for p in request_points(session) if p.response is not None]
    rec = [i for i in ids if "usage" in session.metas[i]]
    half = len(rec) // 2
    metas = [dict(m) for m in session.metas]
    for i in rec[half:]:
        metas[i].pop("usage", None)
    return dataclasses.replace(session, metas=metas), set(rec[half:])


def measure(paths: list[Path], listing: bool) -> dict[str, object]:
    errs: list[float] = []
    half_errs: list[float] = []
    agree = total = 0
    misses: Counter[str] = Counter()
    for path in paths:
        s = load_session(path)
        log = simulate(s)
        for r in log.requests:
            t = r.recorded_total
            if not t:
                continue
            errs.append(abs(r.input_tokens - t) / t)
            total += 1
            if r.predicted_break == r.recorded_break:
                agree += 1
            else:
                rm = r.recorded_miss
                pred = r.cache_break.reason if r.cache_break else "growth"
                why = (
                    f"recorded {'break' if r.recorded_break else 'hit'}"
                    f" ({rm.reason if rm else 'growth: the new messages billed above half'})"
                    f", predicted {pred if r.predicted_break else 'hit'}"
                )
                misses[why] += 1
                if listing:
                    print(f"  {path.name} #{r.index} {r.timestamp}: {why}", file=sys.stderr)
        # fitted on the first half only, measured on the second half (files of 10+ requests)
        if sum(1 for r in log.requests if r.recorded_total) >= 10:
            cut, later = _first_half(s)
            cal = calibrate(cut, session_features(cut))
            log2 = simulate(s, _calibration=cal)
            for r in log2.requests:
                t = r.recorded_total
                if t and r.response_id in later:
                    half_errs.append(abs(r.input_tokens - t) / t)
    errs.sort()
    half_errs.sort()
    return {
        "files": len(paths),
        "requests": total,
        "median": _quantile(errs, 0.5),
        "p90": _quantile(errs, 0.9),
        "half_median": _quantile(half_errs, 0.5),
        "half_p90": _quantile(half_errs, 0.9),
        "half_requests": len(half_errs),
        "agree": agree,
        "disagreements": dict(misses),
    }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--list", action="store_true", help="name every disagreement")
    args = ap.parse_args(argv)
    for name, pats in (("tune", TUNE), ("held-out", HELD_OUT)):
        m = measure(files(pats), args.list)
        n = int(m["requests"])  # type: ignore[call-overload]
        print(
            f"{name}: {m['files']} files, {n} requests with usage; error median "
            f"{m['median']:.2%} p90 {m['p90']:.2%}; first half fitted "
            f"({m['half_requests']} requests): median {m['half_median']:.2%} p90 "
            f"{m['half_p90']:.2%}; breaks agree {m['agree']}/{n} "
            f"({int(m['agree']) / max(n, 1):.2%}); disagreements {m['disagreements']}"  # type: ignore[call-overload]
        )


if __name__ == "__main__":
    main()
