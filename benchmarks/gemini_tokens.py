"""How close the Gemini token estimate (``ctxview.core.providers.gemini.token_model``: the
request's model family's) comes to the prompt tokens Gemini recorded, on the real files in ``tests/acceptance/gemini_cli`` and
``tests/acceptance/gemini``:

    python -m benchmarks.gemini_tokens --set tune
    python -m benchmarks.gemini_tokens --set held-out
    python -m benchmarks.gemini_tokens FILE...          # any Gemini CLI sessions
    python -m benchmarks.gemini_tokens --unseen --worst 10   # and the bodies missed most
    python -m benchmarks.gemini_tokens --dir DIR             # a folder laid out as the unseen set

Gemini CLI sessions (every model record holds the usage of the request that produced it; the
request held every turn before that record, plus a system prompt and tools the file does not
keep), over every request after a session's first with recorded usage:

* **calibrated**: the previous request's recorded prompt plus the estimate of the turns added
  since (how ctxview calibrates from recorded usage), against the recorded prompt;
* **from the first request**: the first request's recorded prompt plus the estimate of every turn
  added since: the estimate's drift over a whole session;
* **growth**: the estimate of the turns added between two requests against the recorded growth
  (growths over 200 tokens);
* **each request as ``requests`` prices it**: the request model's input tokens (the system prompt
  + tools fitted to the recorded usage, plus the estimate of the messages sent) against the
  recorded prompt, for the requests before any turn the file does not keep.

API bodies (a request with its recorded response): the estimate of the whole request (system
instruction, tools, contents, as the token model of the model the response names counts them)
against ``promptTokenCount``, text-only requests without built-in
tools or an explicit cache (media, built-in tools and cached contents add tokens the body does
not show). Twice: for the route the response tells (:func:`answer_route`: the API and whether
it streamed, as a proxy recording knows them from the request's URL) and for the body alone
(no route: what a user opening a lone body gets).

Errors are ``|estimate - recorded| / recorded``; median and p90 pooled over the files. The
split was fixed before any tuning: see :data:`TUNE`.
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import statistics
from collections.abc import Iterable, Sequence
from pathlib import Path

from ctxview.core.providers.base import GEMINI_API, VERTEX_AI, Route
from ctxview.core.providers.gemini import PROVIDER, parts_of
from ctxview.sessions import SessionError, load_session

ROOT = Path(__file__).resolve().parents[1]
CLI = ROOT / "tests" / "acceptance" / "gemini_cli"
API = ROOT / "tests" / "acceptance" / "gemini"
#: the files tuned on; every other one is held out
TUNE = ("aim_control_",)
_MEDIA = ("inlineData", "inline_data", "fileData", "file_data")


def quantile(values: Sequence[float], q: float) -> float:
    xs = sorted(values)
    k = (len(xs) - 1) * q
    lo = int(k)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


def cli_errors(path: Path) -> tuple[list[float], list[float], list[float], int]:
    """(calibrated, from the first request, growth) relative errors of one session, and how many
    requests were not measured: those after turns the file does not keep (the reader marks them
    ``unkept_turns``: what the request added is not in the file). "From the first request" runs
    from the first request of each stretch the file holds whole."""
    session = load_session(path)
    estimate = PROVIDER.tokens.of(session.model, session.format).estimate
    running = [0]
    for m in session.messages:
        running.append(running[-1] + estimate(m))
    points = [
        (i, meta["usage"]["gemini"]["promptTokenCount"])
        for i, meta in enumerate(session.metas)
        if isinstance(meta.get("usage"), dict) and "gemini" in meta["usage"]
    ]
    unkept = [i for i, meta in enumerate(session.metas) if meta.get("unkept_turns")]
    calibrated, first, growth = [], [], []
    skipped = 0
    anchor = points[0] if points else None
    for (i0, p0), (i1, p1) in itertools.pairwise(points):
        if any(i0 < g <= i1 for g in unkept):
            skipped += 1
            anchor = (i1, p1)
            continue
        added = running[i1] - running[i0]
        calibrated.append((p0 + added - p1) / p1)
        if p1 - p0 > 200:
            growth.append((added - (p1 - p0)) / (p1 - p0))
        assert anchor is not None
        f0, fp = anchor
        first.append((fp + running[i1] - running[f0] - p1) / p1)
    return calibrated, first, growth, skipped


def request_errors(path: Path) -> list[float]:
    """The relative errors of a Gemini CLI session's requests as the request model prices them
    (``requests``: the system prompt + tools fitted to the recorded usage, plus the estimate of
    the messages sent) against their recorded prompts; the requests after turns the file does
    not keep are left out (their prompts hold what the file cannot show)."""
    from ctxview.core.requests import simulate

    session = load_session(path)
    first_unkept = next(
        (i for i, meta in enumerate(session.metas) if meta.get("unkept_turns")), None
    )
    return [
        (r.input_tokens - r.recorded_total) / r.recorded_total
        for r in simulate(session).requests
        if r.recorded_total and (first_unkept is None or r.window_size < first_unkept)
    ]


def _response(request: Path) -> Path | None:
    """The recorded response of a request body: ``X_respN.json`` beside ``X_reqN.json``, or
    (the unseen sets' layout) ``responses/X_reqN.json``."""
    m = re.fullmatch(r"(.*)_req(\d+)\.json", request.name)
    if m is None:
        return None
    response = request.with_name(f"{m.group(1)}_resp{m.group(2)}.json")
    if not response.exists():
        response = request.parent / "responses" / request.name
    return response if response.exists() else None


def vertex_answer(answer: object) -> bool:
    """A recorded response (or a stream's chunks) came from Vertex AI, not the Gemini API: it
    carries ``createTime`` or ``usageMetadata.trafficType``. Every Vertex AI response of the
    sets has both (pydantic-ai's ``google_vertex`` cassettes, ruby_llm's ``vertexai`` ones,
    OpenTelemetry's ``instrumentation-vertexai``), no Gemini API response either. The request
    body does not say which API it went to: its URL did (``…/projects/P/locations/L/publishers/
    google/models/M:generateContent`` against ``/v1beta/models/M:generateContent``)."""
    chunks = answer if isinstance(answer, list) else [answer]
    for chunk in chunks:
        if not isinstance(chunk, dict):
            continue
        usage = chunk.get("usageMetadata")
        if "createTime" in chunk or (isinstance(usage, dict) and "trafficType" in usage):
            return True
    return False


def on_vertex(request: Path) -> bool:
    """The request body's recorded response is Vertex AI's (:func:`vertex_answer`)."""
    response = _response(request)
    return response is not None and vertex_answer(json.loads(response.read_text()))


def answer_route(answer: object) -> Route:
    """The route a recorded response tells (as a proxy recording's path would): Vertex AI or
    the Gemini API (:func:`vertex_answer`), streamed when it was recorded as a stream's chunks
    (a JSON array: ``streamGenerateContent``; every streamed response of the sets is)."""
    return Route(VERTEX_AI if vertex_answer(answer) else GEMINI_API, isinstance(answer, list))


def api_error(request: Path, routed: bool = True) -> float | None:
    """The relative error of one request body with a recorded response, or None. ``routed``:
    estimated for the route its response tells (:func:`answer_route`, as a proxy recording
    knows it from the path); else for the body alone (no route known)."""
    response = _response(request)
    if response is None:
        return None
    data = json.loads(request.read_text())
    answer = json.loads(response.read_text())
    last = answer[-1] if isinstance(answer, list) else answer
    prompt = (last.get("usageMetadata") or {}).get("promptTokenCount")
    if not prompt or "cachedContent" in data:
        return None
    parts = [
        p
        for c in data["contents"]
        if isinstance(c, dict)
        for p in parts_of(c)
        if isinstance(p, dict)
    ]
    # a function response's own parts (a multimodal tool return) are media too
    parts += [
        q
        for p in parts
        for key in ("functionResponse", "function_response")
        if isinstance(p.get(key), dict)
        for q in p[key].get("parts") or []
        if isinstance(q, dict)
    ]
    tools = data.get("tools") or []
    tools = tools if isinstance(tools, list) else [tools]
    builtin = any(
        any(k not in ("functionDeclarations", "function_declarations") for k in t)
        for t in tools
        if isinstance(t, dict)
    )
    if builtin or any(k in p for p in parts for k in _MEDIA):
        return None
    session = load_session(request)
    # the model the response names (a body names none: the request path held it)
    route = answer_route(answer) if routed else None
    model = PROVIDER.tokens.of(last.get("modelVersion") or session.model, session.format, route)
    estimate = model.request_tokens(
        session.messages, session.system, session.tools, session.request_params
    )
    return float((estimate - prompt) / prompt)


def _line(label: str, errors: Iterable[float]) -> str:
    xs = [abs(e) for e in errors]
    if not xs:
        return f"{label}: no requests"
    return (
        f"{label}: {len(xs)} requests, median {statistics.median(xs):.2%}, "
        f"p90 {quantile(xs, 0.9):.2%}"
    )


def _chosen(paths: Iterable[Path], which: str) -> list[Path]:
    tuned = [p for p in paths if p.name.startswith(TUNE)]
    if which == "tune":
        return tuned
    return [p for p in paths if p not in tuned]


UNSEEN = ROOT / "tests" / "acceptance" / "unseen"


def _sessions(folder: Path) -> list[Path]:
    """The Gemini CLI sessions of a folder: the JSON form and the newer JSONL log."""
    return sorted([*folder.glob("*.json"), *folder.glob("*.jsonl")])


def sets(which: str, folder: Path = UNSEEN) -> tuple[list[Path], list[Path]]:
    """(Gemini CLI sessions, API request bodies) of ``tune``, ``held-out`` or ``unseen`` (the
    unseen set's layout, in ``folder``)."""
    if which == "unseen":
        return _sessions(folder / "gemini_cli"), sorted((folder / "gemini").glob("*_req*.json"))
    cli = _chosen(_sessions(CLI), which)
    api_all = sorted(API.glob("*_req*.json"))
    held = [p for p in api_all if "multimodal_tool_return" in p.name or "llmgemini" in p.name]
    return cli, held if which == "held-out" else [p for p in api_all if p not in held]


def api_errors(
    api: Sequence[Path], refused: list[str] | None = None, routed: bool = True
) -> list[float]:
    """The relative errors of the measurable bodies among ``api`` (``routed``: see
    :func:`api_error`). A body ctxview refuses to read is named in ``refused`` (when given) and
    measured no further: one such body must not take the figure of all the others with it."""
    out = []
    for p in api:
        try:
            e = api_error(p, routed)
        except SessionError as exc:
            if refused is None:
                raise
            refused.append(f"{p.name}: {exc}")
            continue
        if e is not None:
            out.append(e)
    return out


def worst(api: Sequence[Path], n: int) -> list[str]:
    """The ``n`` API bodies the estimate misses most, with their signed errors."""
    named = [(e, p) for p in api if (e := api_error(p)) is not None]
    named.sort(key=lambda t: -abs(t[0]))
    return [f"  {e:+.1%}  {p.name}{'  [Vertex AI]' if on_vertex(p) else ''}" for e, p in named[:n]]


def report(cli: Sequence[Path], api: Sequence[Path]) -> list[str]:
    calibrated: list[float] = []
    first: list[float] = []
    growth: list[float] = []
    requests: list[float] = []
    skipped = 0
    for path in cli:
        c, f, g, n = cli_errors(path)
        calibrated += c
        first += f
        growth += g
        skipped += n
        requests += request_errors(path)
    refused: list[str] = []
    errors = api_errors(api, refused)
    notes = [f"API bodies ctxview refuses to read: {len(refused)}"] if refused else []
    notes += [f"  {why}" for why in refused[:10]]
    # a lone body does not say where it went: the same bodies estimated with no route, as a
    # user opening one gets them (Vertex AI's streamed usage leaves the declarations out)
    notes.append(_line("  body alone (no route known)", api_errors(api, [], routed=False)))
    # Vertex AI bills some bodies differently from the Gemini API (docs/gemini.md): each API's
    # figure apart, as the recorded responses tell them
    vertex = [p for p in api if on_vertex(p)]
    if vertex and len(vertex) < len(api):
        gemini = [p for p in api if p not in vertex]
        notes += [
            _line("  of them sent to the Gemini API", api_errors(gemini, [])),
            _line(
                "  of them sent to Vertex AI (response createTime / trafficType)",
                api_errors(vertex, []),
            ),
            _line("  of them sent to Vertex AI, body alone", api_errors(vertex, [], routed=False)),
        ]
    return [
        _line(f"Gemini CLI ({len(cli)} sessions), calibrated", calibrated),
        _line("Gemini CLI, from the first request", first),
        _line("Gemini CLI, growth over 200 tokens", growth),
        f"Gemini CLI, not measured: {skipped} requests after turns the file does not keep",
        _line("Gemini CLI, each request as `requests` prices it (fitted system + tools)", requests),
        _line(
            f"API bodies ({len(api)} files), text-only with a recorded response, route known"
            " (from the response, as a proxy recording has it)",
            errors,
        ),
        *notes,
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.gemini_tokens")
    parser.add_argument("files", nargs="*", type=Path)
    parser.add_argument("--set", choices=("tune", "held-out"), default=None)
    parser.add_argument(
        "--worst",
        type=int,
        default=0,
        metavar="N",
        help="also list the N API bodies the estimate misses most (signed error, file)",
    )
    parser.add_argument(
        "--unseen",
        action="store_true",
        help="the unseen set (tests/acceptance/unseen: never tuned on) instead of the split",
    )
    parser.add_argument(
        "--dir",
        type=Path,
        help="a folder laid out as tests/acceptance/unseen (gemini/, gemini_cli/): a held-out"
        " set kept outside the repository",
    )
    args = parser.parse_args(argv)
    if args.files:
        api: list[Path] = []
        lines = report(args.files, [])[:5]
    else:
        which = "unseen" if args.unseen or args.dir else args.set or "held-out"
        cli, api = sets(which, args.dir or UNSEEN)
        lines = [f"set: {args.dir or which}", *report(cli, api)]
    if args.worst:
        lines += [f"the {args.worst} API bodies missed most:", *worst(api, args.worst)]
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
