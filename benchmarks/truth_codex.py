"""How closely the request model matches what OpenAI billed, over folders of real Codex CLI
rollouts (``rollout-*.jsonl``) whose ``token_count`` events recorded each response's usage.

    python -m benchmarks.truth_codex                   # tests/acceptance/codex
    python -m benchmarks.truth_codex DIR [DIR ...]     # every *.jsonl under the folders
    python -m benchmarks.truth_codex DIR --files       # a row per file as well
    python -m benchmarks.truth_codex DIR --worst 10    # the ten largest misses, named
    python -m benchmarks.truth_codex DIR --json        # the same figures as JSON

Each rollout is opened with ``load_session`` and replayed as sent (``simulate``), as ``ctxview
requests FILE`` prices it. The truth of a request is its response's ``last_token_usage``:
``input_tokens`` (the whole prompt: Codex's cached tokens are a part of it) and
``cached_input_tokens``. Printed, median and p90 over every request with recorded usage, pooled
over the files:

* **input tokens, calibrated**: ``|estimate - recorded| / recorded``, the request model as
  ``ctxview requests`` computes it (the system prompt + tools, which a rollout does not hold,
  calibrated from the file's recorded usage);
* **fitted on the first half**: the calibration reads the usage of the first half of each
  file's requests only; the error is measured on the second half (what the model predicts for
  requests it has not seen);
* **cached tokens**: ``|predicted read - recorded cached| / recorded input`` (OpenAI caches a
  prefix of 1,024 tokens or more in 128-token steps, by itself: the request model's prediction
  of what each request reads), and how many requests the prediction reads within one step of
  the recorded.

Rollouts with no usage (the oldest form), those published with their text replaced (their
counts do not belong to the text the file holds) and hand-written ones (:data:`SYNTHETIC`) are
listed with no figure. The figures are
what a user of ``ctxview requests --json`` sees; nothing here models a request.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.truth import _first_half_only, quantile
from ctxview.core.requests import Request, simulate
from ctxview.core.requests.points import calibrate, session_features
from ctxview.sessions import SessionError, load_session
from ctxview.sessions.codex import SERVER_TOOL_RUN

ROOT = Path(__file__).resolve().parent.parent
#: the repository's Codex rollouts (tests/acceptance/MANIFEST.md)
FOLDERS = (ROOT / "tests" / "acceptance" / "codex",)
#: the prefix step OpenAI caches in: a read within one step of the recorded one agrees
CACHE_STEP = 128
#: text replaced by its publisher: the recorded counts are not the file's text's
REDACTED = "[REDACTED_TEXT"
#: hand-written rollouts (file-name patterns): their usage is not what an API billed
SYNTHETIC = ("agenthistory_codex_*", "simonw_sample_codex_session*")


@dataclass
class Miss:
    """One request's estimate against its recorded usage."""

    file: str
    request: int
    line: int | None
    estimate: int
    recorded: int
    predicted_read: int
    recorded_read: int
    #: what the file shows of the miss's cause: the server-side tool the response ran (its
    #: results were billed to this request, not in the file), else ""
    note: str = ""

    @property
    def error(self) -> float:
        return abs(self.estimate - self.recorded) / self.recorded

    def to_dict(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "request": self.request,
            "line": self.line,
            "estimate": self.estimate,
            "recorded": self.recorded,
            "error": round(self.error, 4),
            "predicted_read": self.predicted_read,
            "recorded_read": self.recorded_read,
            "note": self.note,
        }


@dataclass
class FileFigures:
    name: str
    requests: int = 0
    recorded: int = 0
    misses: list[Miss] = field(default_factory=list)
    half_errors: list[float] = field(default_factory=list)
    error: str | None = None

    @property
    def errors(self) -> list[float]:
        return [m.error for m in self.misses]

    @property
    def cache_errors(self) -> list[float]:
        return [abs(m.predicted_read - m.recorded_read) / m.recorded for m in self.misses]

    @property
    def cache_agree(self) -> int:
        return sum(1 for m in self.misses if abs(m.predicted_read - m.recorded_read) < CACHE_STEP)


def _recorded(r: Request) -> tuple[int, int] | None:
    """(input tokens, cached tokens) the response recorded, or None."""
    rec = r.recorded
    total = r.recorded_total
    if rec is None or not total:
        return None
    return total, int(rec["cache_read_input_tokens"])


def _misses(
    name: str, requests: Iterable[Request], metas: Sequence[Mapping[str, Any]]
) -> list[Miss]:
    out = []
    for r in requests:
        rec = _recorded(r)
        if rec is None:
            continue
        meta = metas[r.response_id] if r.response_id is not None else {}
        line = meta.get("token_count_line")
        server = meta.get(SERVER_TOOL_RUN)
        out.append(
            Miss(
                name,
                r.index,
                line if isinstance(line, int) else None,
                r.input_tokens,
                rec[0],
                r.cache_read,
                rec[1],
                f"ran {server}: its results billed here, not in the file" if server else "",
            )
        )
    return out


def measure_file(path: Path, name: str | None = None) -> FileFigures:
    name = name or path.name
    try:
        session = load_session(path)
    except SessionError as exc:
        return FileFigures(name, error=str(exc))
    if session.format != "codex":
        return FileFigures(name, error=f"not a Codex rollout ({session.format})")
    if any(fnmatch.fnmatchcase(path.name, pat) for pat in SYNTHETIC):
        return FileFigures(name, error="hand-written: its usage is not what an API billed")
    if REDACTED in path.read_text(encoding="utf-8", errors="replace"):
        return FileFigures(name, error="text replaced by its publisher: not measurable")
    log = simulate(session)
    fig = FileFigures(name, len(log.requests))
    fig.misses = _misses(name, log.requests, session.metas)
    fig.recorded = len(fig.misses)
    if fig.recorded >= 4:
        partial, first_hidden = _first_half_only(session, log)
        cal = calibrate(partial, session_features(session))
        half = simulate(session, _calibration=cal)
        later = half.requests[first_hidden:]
        fig.half_errors = [m.error for m in _misses(name, later, session.metas)]
    return fig


def rollouts(folders: Iterable[Path]) -> list[Path]:
    out: list[Path] = []
    for folder in folders:
        out.extend(sorted(folder.rglob("*.jsonl")) if folder.is_dir() else [folder])
    return out


def _stats(values: Sequence[float]) -> dict[str, Any]:
    def r4(v: float | None) -> float | None:
        return None if v is None else round(v, 4)

    return {"n": len(values), "median": r4(quantile(values, 0.5)), "p90": r4(quantile(values, 0.9))}


def summary(figs: Sequence[FileFigures]) -> dict[str, Any]:
    misses = [m for f in figs for m in f.misses]
    return {
        "files": len(figs),
        "files_measured": sum(1 for f in figs if f.misses),
        "requests": sum(f.requests for f in figs),
        "recorded": len(misses),
        "calibrated": _stats([m.error for m in misses]),
        "first_half_fit": _stats([e for f in figs for e in f.half_errors]),
        "cached": {
            **_stats([e for f in figs for e in f.cache_errors]),
            "within_step": sum(f.cache_agree for f in figs),
        },
    }


def _pct(v: float | None) -> str:
    return "—" if v is None else f"{v * 100:.1f}%"


def _line(label: str, s: dict[str, Any]) -> str:
    return f"{label}: {s['n']} requests, median {_pct(s['median'])}, p90 {_pct(s['p90'])}"


def render(figs: Sequence[FileFigures], files: bool, worst: int) -> str:
    s = summary(figs)
    out = [
        f"{s['files']} rollouts ({s['files_measured']} with usage), {s['requests']} requests, "
        f"{s['recorded']} with recorded usage",
        _line("input tokens, calibrated", s["calibrated"]),
        _line("fitted on the first half (second half measured)", s["first_half_fit"]),
        _line("cached tokens (|predicted - recorded| / input)", s["cached"])
        + f"; within {CACHE_STEP} tokens: {s['cached']['within_step']} of {s['recorded']}",
    ]
    if files:
        out.append("")
        out.append(f"{'file':<58} {'req':>4} {'rec':>4} {'calibrated':>17} {'first half':>17}")
        for f in figs:
            if f.error:
                out.append(f"{f.name[:58]:<58} {f.error}")
                continue
            c, h = _stats(f.errors), _stats(f.half_errors)
            out.append(
                f"{f.name[:58]:<58} {f.requests:>4} {f.recorded:>4} "
                f"{_pct(c['median']):>8} {_pct(c['p90']):>8} "
                f"{_pct(h['median']):>8} {_pct(h['p90']):>8}"
            )
    if worst:
        out.append("")
        out.append(f"the {worst} largest misses (calibrated):")
        ranked = sorted((m for f in figs for m in f.misses), key=lambda m: -m.error)[:worst]
        for m in ranked:
            out.append(
                f"  {m.file[:50]} #{m.request} (line {m.line}): estimate {m.estimate:,}, "
                f"recorded {m.recorded:,} ({(m.estimate - m.recorded) / m.recorded:+.1%}); "
                f"read {m.predicted_read:,} against {m.recorded_read:,}"
                + (f"; {m.note}" if m.note else "")
            )
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.truth_codex", description=__doc__)
    ap.add_argument("folders", nargs="*", type=Path, help="folders of rollouts (or files)")
    ap.add_argument("--files", action="store_true", help="a row per file as well")
    ap.add_argument("--worst", type=int, default=0, metavar="N", help="the N largest misses")
    ap.add_argument("--json", action="store_true", help="the figures as one JSON object")
    args = ap.parse_args(argv)
    paths = rollouts(args.folders or FOLDERS)
    if not paths:
        print("no *.jsonl files found", file=sys.stderr)
        return 2
    figs = [measure_file(p) for p in paths]
    if args.json:
        out = summary(figs)
        out["per_file"] = [
            {
                "file": f.name,
                "requests": f.requests,
                "recorded": f.recorded,
                "calibrated": _stats(f.errors),
                "first_half_fit": _stats(f.half_errors),
                "error": f.error,
            }
            for f in figs
        ]
        ranked = sorted((m for f in figs for m in f.misses), key=lambda m: -m.error)
        out["worst"] = [m.to_dict() for m in ranked[: args.worst or 10]]
        print(json.dumps(out, indent=2))
    else:
        print(render(figs, args.files, args.worst))
    return 0


if __name__ == "__main__":
    sys.exit(main())
