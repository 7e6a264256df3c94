"""The per-file step: one session file (with its sub-agents) through the request model
(``ctxview.sessions.request_model``, what ``ctxview requests`` computes) into Arrow record
batches of the dataset's tables (:mod:`ctxview.fleet.schema`).

This is the library call an engine runs across a cluster (docs/fleet.md: Spark's
``mapInArrow``, Ray Data's ``map_batches``, Dask): :func:`file_rows` for one file,
:func:`record_batches` for many, :func:`map_paths` over batches of paths. It reads only the
file it is given and writes nothing.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import chain
from operator import attrgetter
from pathlib import Path
from typing import Any

import pyarrow as pa

from ctxview.core.limits import context_size
from ctxview.core.pricing import PRICES_DATE, Price, PriceTable
from ctxview.core.providers.openai import CODEX
from ctxview.core.providers.registry import price_table
from ctxview.core.requests import parse_timestamp
from ctxview.fleet.schema import PARTITION, REQUESTS, SESSIONS, STRATEGIES
from ctxview.sessions.gemini_cli import FORMAT as GEMINI_CLI
from ctxview.textfmt import one_line, visible

#: the rows of ``requests`` as the per-file step builds them: the partition column included
REQUEST_ROWS = REQUESTS.append(pa.field(PARTITION, pa.string(), nullable=False))
#: what the ``strategy`` column says of a session's own requests replayed as sent
AS_SENT = "as sent"
#: the version of the built-in price table (its date), or this for prices from config.toml
PRICE_TABLE = PRICES_DATE.split()[0]
CONFIG_PRICES = "config.toml"


@dataclass(frozen=True)
class ScanOptions:
    """How each file is turned into rows: the config's defaults and price overrides (what
    ``ctxview requests`` uses), ``compare`` (add the strategies' rows), ``redact`` (secrets in
    names and titles replaced by ``[REDACTED:kind]``)."""

    defaults: Mapping[str, Any] = field(default_factory=dict)
    price_overrides: Mapping[str, Price] = field(default_factory=dict)
    compare: bool = False
    redact: bool = True


@dataclass
class FileRows:
    """One file's rows (``error``: the one-line reason it could not be read, and no rows).
    The session's row and its strategies' rows are kept as dicts (a writer makes one table of
    many files' rows at once); :attr:`sessions` and :attr:`strategies` give them as batches."""

    path: str
    key: str
    requests: pa.RecordBatch | None = None
    session_rows: list[dict[str, Any]] = field(default_factory=list)
    #: None: not asked for (``ScanOptions.compare``)
    strategy_rows: list[dict[str, Any]] | None = None
    #: requests per agent in the file
    counts: dict[str, int] = field(default_factory=dict)
    error: str | None = None
    #: secrets replaced, per kind
    redactions: dict[str, int] = field(default_factory=dict)
    #: the days (``date`` partitions) of the ``requests`` rows, each once
    days: list[str] = field(default_factory=list)

    @property
    def request_rows(self) -> int:
        return 0 if self.requests is None else self.requests.num_rows

    @property
    def sessions(self) -> pa.RecordBatch | None:
        if self.error is not None:
            return None
        return pa.RecordBatch.from_pylist(self.session_rows, schema=SESSIONS)

    @property
    def strategies(self) -> pa.RecordBatch | None:
        if self.strategy_rows is None:
            return None
        return pa.RecordBatch.from_pylist(self.strategy_rows, schema=STRATEGIES)

    def __getstate__(self) -> dict[str, Any]:
        """Sent from a worker as an Arrow IPC message of the batch alone (pickling a batch
        costs five times more; its schema is :data:`REQUEST_ROWS`, known to both sides)."""
        state = dict(self.__dict__)
        if self.requests is not None:
            state["requests"] = self.requests.serialize()
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        if state["requests"] is not None:
            state["requests"] = pa.ipc.read_record_batch(state["requests"], REQUEST_ROWS)
        self.__dict__.update(state)


def session_key(path: str) -> str:
    """The key naming a session file in every table: a hash of its absolute path (the same
    file scanned on another day, or by another shard, has the same key)."""
    return hashlib.sha256(os.path.abspath(path).encode("utf-8", "surrogatepass")).hexdigest()[:16]


def file_rows(
    path: str,
    options: ScanOptions | None = None,
    *,
    project: str | None = None,
) -> FileRows:
    """The rows of one session file. ``project``: the project's name when the caller knows
    it (else the ``cwd`` of the file's first lines, else its folder's name). Never raises for
    a bad file: ``FileRows.error`` says why."""
    from ctxview.sessions.model import load_error
    from ctxview.sessions.readers import load_session

    options = options or ScanOptions()
    key = session_key(path)
    try:
        session = load_session(path)
        return _rows(path, key, session, options, project)
    except Exception as exc:  # one bad file never stops a scan: its one-line reason instead
        return FileRows(path, key, error=one_line(load_error(path, exc), 1000))


def record_batches(
    paths: Iterable[str], options: ScanOptions | None = None, *, table: str = "requests"
) -> Iterator[pa.RecordBatch]:
    """The ``table`` rows (``requests``, ``sessions`` or ``strategies``) of every readable file
    of ``paths``, one batch per file (the ``requests`` batches carry the ``date`` partition
    column). Files that cannot be read give no batch."""
    for p in paths:
        rows = file_rows(p, options)
        batch = getattr(rows, table)
        if batch is not None and batch.num_rows:
            yield batch


def map_paths(
    batches: Iterable[pa.RecordBatch],
    options: ScanOptions | None = None,
    *,
    column: str = "path",
    table: str = "requests",
) -> Iterator[pa.RecordBatch]:
    """Batches of file paths (a string column ``column``) in, the files' rows out: the
    function for Spark's ``mapInArrow`` or Ray Data's ``map_batches``."""
    for batch in batches:
        yield from record_batches(
            (p for p in batch.column(column).to_pylist() if p), options, table=table
        )


# -- building the rows ---------------------------------------------------------------------
def _listed_as(path: str, fmt: str) -> tuple[str | None, str | None]:
    """(project, first prompt) of a Codex or Gemini CLI session as ``ctxview sessions`` lists
    it: their readers name neither, and a rollout's folder is its day (``2026/02/23``), a
    Gemini CLI file's ``chats`` (its project hash is the folder above). (None, None) else."""
    from ctxview.core.fileio import FileRefused

    p = Path(path)
    try:
        if fmt == CODEX:
            from ctxview.live.sessions_codex import summarise_rollout

            s = summarise_rollout(p)
            return s.cwd, s.first_prompt or None
        if fmt == GEMINI_CLI:
            from ctxview.live.sessions_gemini import summarise_chat, summarise_log

            s = (summarise_log if p.suffix == ".jsonl" else summarise_chat)(p)
            return (p.parent.parent.name if p.parent.name == "chats" else None), (
                s.first_prompt or None
            )
    except (OSError, ValueError, FileRefused):
        pass
    return None, None


def _rows(
    path: str,
    key: str,
    session: Any,
    options: ScanOptions,
    project: str | None,
) -> FileRows:
    from ctxview.sessions.request_model import session_requests

    # every provider's prices (an OpenAI or Gemini session is priced as `requests` prices it)
    prices = price_table(dict(options.price_overrides))
    defaults = dict(options.defaults)
    log, agent_logs = session_requests(session, prices=prices, defaults=defaults, check=True)
    st = os.stat(path)
    agents: list[tuple[str, Any, Any]] = [("main", session, log)]
    agents += [(al.agent.agent_id, al.agent.load(), al.log) for al in agent_logs if al.log]
    # each agent's model per request, every model the file names
    models = [[r.model or lg.model for r in lg.requests] for _, _, lg in agents]
    named = {m for ms in models for m in ms}
    named.update(x for _, s, lg in agents for x in (lg.model, s.model))
    named.discard(None)
    listed_project, listed_prompt = _listed_as(path, session.format)
    prompt = session.first_prompt or listed_prompt
    names = _names(
        {
            "file": os.path.abspath(path),
            "session_id": Path(path).stem,
            "project": project or session.cwd or listed_project or Path(path).parent.name,
            "title": session.title or (one_line(prompt, 200) if prompt else None),
            "agents": [a for a, _, _ in agents],
            "models": sorted({str(m) for m in named}),
        },
        options.redact,
    )
    strategy = AS_SENT if log.as_sent else str(log.strategy)
    provider = str(getattr(session, "provider", None) or "anthropic")
    fallback_date = datetime.fromtimestamp(st.st_mtime, UTC).strftime("%Y-%m-%d")
    cols: dict[str, list[Any]] = {name: [] for name in _BUILT}
    counts: dict[str, int] = {}
    totals = _Totals()
    for (agent, agent_session, agent_log), agent_models in zip(agents, models, strict=True):
        counts[agent] = len(agent_log.requests)
        _agent_columns(
            cols,
            names["agents"][agent],
            {m: names["models"][str(m)] for m in set(agent_models) if m is not None},
            agent_session,
            agent_log,
            agent_models,
            prices,
            fallback_date=fallback_date,
            totals=totals,
        )
    consts = {
        "session_key": key,
        "session_id": names["session_id"],
        "file": names["file"],
        "project": names["project"],
        "provider": provider,
        "format": session.format,
        "strategy": strategy,
    }
    n = len(cols["request_index"])
    # the columns of one type converted in one call, then cut apart: a call costs as much as
    # converting a hundred values, and most sessions hold about a hundred requests
    arrays: dict[str, pa.Array] = {}
    for kind, group in _BY_TYPE:
        whole = pa.array(
            list(chain.from_iterable(cols[c] if c in cols else [consts[c]] * n for c in group)),
            kind,
        )
        for k, c in enumerate(group):
            arrays[c] = whole.slice(k * n, n)
    requests = pa.RecordBatch.from_arrays(
        [arrays[c] for c in REQUEST_ROWS.names], schema=REQUEST_ROWS
    )
    return FileRows(
        path,
        key,
        requests,
        [_session_row(names, consts, session, agents, log, totals, st.st_size)],
        _strategy_rows(key, names, session, log, options, prices) if options.compare else None,
        counts,
        redactions=names["_redactions"],
        days=list(dict.fromkeys(cols[PARTITION])),
    )


#: names found clean in this process (projects, models, agent ids repeat across sessions):
#: not searched for secrets again
_CLEAN: set[str] = set()
_CLEAN_MAX = 100_000


def _redacted(strings: list[str]) -> tuple[list[str], dict[str, int]]:
    """``strings`` with their secrets redacted (the one call of ``ctxview.core.redact``),
    and the secrets found per kind."""
    todo = [t for t in dict.fromkeys(strings) if t not in _CLEAN]
    if not todo:
        return strings, {}
    from ctxview.core.redact import redact_value

    cleaned, found = redact_value(todo)
    done = dict(zip(todo, cleaned, strict=True))
    if len(_CLEAN) < _CLEAN_MAX:
        _CLEAN.update(t for t, c in done.items() if t == c)
    return [done.get(t, t) for t in strings], dict(found.counts)


def _names(raw: dict[str, Any], redact: bool) -> dict[str, Any]:
    """The file's own names (path, ids, project, title, agents, models) as they are written:
    secrets redacted (unless ``redact`` is False), control characters made visible
    (``ctxview.textfmt``, the one sanitising boundary). ``agents`` and ``models`` become maps
    from the name as read to the name as written."""
    singles = ["file", "session_id", "project", "title"]
    strings = [raw[k] or "" for k in singles] + raw["agents"] + raw["models"]
    counts: dict[str, int] = {}
    if redact:
        strings, counts = _redacted(strings)
    one = dict(zip(singles, strings[:4], strict=True))
    agents = strings[4 : 4 + len(raw["agents"])]
    models = strings[4 + len(raw["agents"]) :]
    return {
        "file": visible(one["file"]),
        "session_id": visible(one["session_id"]),
        "project": visible(one["project"]),
        "title": one_line(one["title"], 200) if raw["title"] else None,
        "agents": {a: visible(c) for a, c in zip(raw["agents"], agents, strict=True)},
        "models": {m: visible(c) for m, c in zip(raw["models"], models, strict=True)},
        "_redactions": counts,
    }


def _epoch_ms(ts: Any) -> int | None:
    sec = parse_timestamp(ts)
    return None if sec is None else int(sec * 1000)


def _result_tools(messages: list[Any]) -> dict[int, list[str]]:
    """message position -> the tools whose results it carries (in order, each once), for the
    messages carrying any; a result's tool is named by its tool_use anywhere in the
    conversation. One walk over the messages (each request then looks up its own)."""
    names: dict[str, str] = {}
    results: dict[int, list[Any]] = {}
    for i, m in enumerate(messages):
        if type(m) is not dict:
            continue
        content = m.get("content")
        if type(content) is not list:
            continue
        assistant = m.get("role") == "assistant"
        ids = []
        for b in content:
            if type(b) is not dict:
                continue
            kind = b.get("type")
            if kind == "tool_result":
                ids.append(b.get("tool_use_id"))
            elif kind == "tool_use" and assistant:
                tid, name = b.get("id"), b.get("name")
                if isinstance(tid, str) and isinstance(name, str):
                    names[tid] = name
        if ids:
            results[i] = ids
    if not names:
        return {}
    as_shown = {name: visible(one_line(name, 100)) for name in set(names.values())}
    shown = {tid: as_shown[name] for tid, name in names.items()}
    out: dict[int, list[str]] = {}
    for i, ids in results.items():
        found: list[str] = []
        for tid in ids:
            name = shown.get(tid) if isinstance(tid, str) else None
            if name is not None and name not in found:
                found.append(name)
        if found:
            out[i] = found
    return out


_ATTRS = {
    "request_index": attrgetter("index"),
    "window_size": attrgetter("window_size"),
    "input_tokens": attrgetter("input_tokens"),
    "cache_read": attrgetter("cache_read"),
    "uncached": attrgetter("uncached"),
    "output_tokens": attrgetter("output_tokens"),
    "cost_usd": attrgetter("cost_usd"),
    "rejected": attrgetter("rejected"),
    "error_code": attrgetter("error_code"),
    "off_branch": attrgetter("off_branch"),
}
#: the columns of ``requests`` that differ from row to row (the others are the file's own)
_BUILT = [
    f.name
    for f in REQUEST_ROWS
    if f.name
    not in ("session_key", "session_id", "file", "project", "provider", "format", "strategy")
]
#: the columns of ``requests``, grouped by their Arrow type
_BY_TYPE: list[tuple[pa.DataType, list[str]]] = []
for _f in REQUEST_ROWS:
    _group = next((g for t, g in _BY_TYPE if t == _f.type), None)
    if _group is None:
        _BY_TYPE.append((_f.type, [_f.name]))
    else:
        _group.append(_f.name)
_INPUT = attrgetter("input_tokens")
_CACHE_READ = attrgetter("cache_read")
_CACHE_WRITE = attrgetter("cache_write")
_BREAK = attrgetter("cache_break")


@dataclass
class _Totals:
    """The session row's sums over every agent's requests, gathered as each agent's columns
    are built."""

    requests: int = 0
    input_tokens: int = 0
    cache_read: int = 0
    cache_write: int = 0
    breaks: int = 0
    rejected: int = 0
    costs: list[float | None] = field(default_factory=list)
    uncached_costs: list[float | None] = field(default_factory=list)
    lost: list[float | None] = field(default_factory=list)
    stamps: list[int] = field(default_factory=list)


def _agent_columns(
    cols: dict[str, list[Any]],
    agent: str,
    model_names: dict[Any, str],
    session: Any,
    log: Any,
    models: list[Any],
    prices: PriceTable,
    *,
    fallback_date: str,
    totals: _Totals,
) -> None:
    """Append one agent's requests to ``cols`` (``agent`` and ``model_names``: its name and
    its models' as written; ``models``: each request's model) and to ``totals``. Each column
    is taken in one pass (attribute getters mapped in C where they can be: a million
    requests)."""
    reqs = log.requests
    per_model: dict[Any, tuple[Price | None, str | None, int]] = {}
    for model in set(models):
        price = prices.get(model)
        version = None if price is None else _price_version(prices, model)
        per_model[model] = (price, version, context_size(model, getattr(session, "provider", None)))
    # every request's dollars without a cache, and what its break lost
    price_of = [per_model[m][0] for m in models]
    uncached_cost = [
        None if p is None else (r.input_tokens * p.input + r.output_tokens * p.output) / 1e6
        for r, p in zip(reqs, price_of, strict=True)
    ]
    breaks = list(map(_BREAK, reqs))
    lost: list[float | None] = [None if p is None else 0.0 for p in price_of]
    for i, b in enumerate(breaks):
        p = price_of[i]
        if b is not None and p is not None and i:
            lost[i] = _break_lost(reqs[i], reqs[i - 1].input_tokens, p)
    stamps = [_epoch_ms(r.timestamp) for r in reqs]
    rejected = list(map(_ATTRS["rejected"], reqs))
    totals.requests += len(reqs)
    totals.input_tokens += sum(map(_INPUT, reqs))
    totals.cache_read += sum(map(_CACHE_READ, reqs))
    totals.cache_write += sum(map(_CACHE_WRITE, reqs))
    totals.breaks += len(breaks) - breaks.count(None)
    totals.rejected += rejected.count(True)
    totals.costs += map(_ATTRS["cost_usd"], reqs)
    totals.uncached_costs += uncached_cost
    totals.lost += lost
    totals.stamps += [t for t in stamps if t is not None]
    for name, get in _ATTRS.items():
        cols[name] += map(get, reqs)
    cols["agent"] += [agent] * len(reqs)
    cols["model"] += map(model_names.get, models)
    facts = [per_model[m] for m in models]
    cols["price_table"] += [f[1] for f in facts]
    cols["context_limit"] += [f[2] for f in facts]
    cols["uncached_cost_usd"] += uncached_cost
    cols["break_lost_usd"] += lost
    cols["timestamp"] += stamps
    days: dict[int, str] = {}
    for ts in stamps:
        if ts is None:
            cols[PARTITION].append(fallback_date)
            continue
        day = days.get(ts // 86_400_000)
        if day is None:
            day = days[ts // 86_400_000] = datetime.fromtimestamp(ts / 1000, UTC).strftime(
                "%Y-%m-%d"
            )
        cols[PARTITION].append(day)
    recs = [r.recorded for r in reqs]
    cols["recorded_input_tokens"] += [None if d is None else d["input_tokens"] for d in recs]
    cols["recorded_cache_read"] += [
        None if d is None else d["cache_read_input_tokens"] for d in recs
    ]
    cols["recorded_cache_write"] += [
        None if d is None else d["cache_creation_input_tokens"] for d in recs
    ]
    cols["cache_write_5m"] += [r.cache_write if r.ttl == "5m" else 0 for r in reqs]
    cols["cache_write_1h"] += [0 if r.ttl == "5m" else r.cache_write for r in reqs]
    cols["cache_break"] += [b is not None for b in breaks]
    cols["break_reason"] += [None if b is None else b.reason for b in breaks]
    cols["break_position"] += [None if b is None else b.position for b in breaks]
    misses = [r.recorded_miss for r in reqs]
    cols["recorded_break_reason"] += [
        m.reason if m is not None and m.is_break else None for m in misses
    ]
    cols["api_break_reason"] += [
        m.api_reason if m is not None and m.reported else None for m in misses
    ]
    cols["redundant_tokens"] += [0 if r.redundancy is None else r.redundancy.tokens for r in reqs]
    tools_at = _result_tools(session.messages)
    tools = cols["tools"]
    if not tools_at:
        tools += [[] for _ in reqs]
        return
    for r in reqs:
        found: list[str] = []
        for mid in r.message_ids:
            at = tools_at.get(mid)
            if at is not None:
                found += [t for t in at if t not in found]
        tools.append(found)


def _break_lost(r: Any, prev_input: int | None, price: Price) -> float:
    """What a predicted break cost: the tokens of the previous request's prompt this one sent
    again but could not read (written again, or sent uncached below the cacheable minimum),
    priced at what they cost over a read. A first request has nothing to lose."""
    if prev_input is None:
        return 0.0
    missed = max(0, min(prev_input, r.input_tokens) - r.cache_read)
    written = min(missed, r.cache_write)
    write_rate = price.cache_write_5m if r.ttl == "5m" else price.cache_write_1h
    return (
        float(
            written * (write_rate - price.cache_read)
            + (missed - written) * (price.input - price.cache_read)
        )
        / 1e6
    )


def _price_version(prices: PriceTable, model: Any) -> str:
    """``config.toml``, else the date of the built-in book that priced ``model``."""
    if prices.source(model).startswith(CONFIG_PRICES):
        return CONFIG_PRICES
    book = prices.book(model)
    return PRICE_TABLE if book is None else book.date.split()[0]


def _sum_or_none(values: list[float | None]) -> float | None:
    return None if not values or None in values else float(sum(v for v in values if v is not None))


def _session_row(
    names: dict[str, Any],
    consts: dict[str, Any],
    session: Any,
    agents: list[tuple[str, Any, Any]],
    log: Any,
    totals: _Totals,
    size: int,
) -> dict[str, Any]:
    """The session's one row: its totals over every agent's requests."""
    stamps = totals.stamps
    return {
        "session_key": consts["session_key"],
        "session_id": consts["session_id"],
        "file": consts["file"],
        "project": consts["project"],
        "provider": consts["provider"],
        "format": consts["format"],
        "model": names["models"].get(str(log.model)) if log.model is not None else None,
        "strategy": consts["strategy"],
        "title": names["title"],
        "first_timestamp": min(stamps) if stamps else None,
        "last_timestamp": max(stamps) if stamps else None,
        "messages": sum(len(s.messages) for _, s, _ in agents),
        "agents": len(agents),
        "requests": totals.requests,
        "input_tokens": totals.input_tokens,
        "cache_read": totals.cache_read,
        "cache_write": totals.cache_write,
        "cost_usd": _sum_or_none(totals.costs),
        "uncached_cost_usd": _sum_or_none(totals.uncached_costs),
        "break_lost_usd": _sum_or_none(totals.lost),
        "breaks": totals.breaks,
        "rejected": totals.rejected,
        "skipped_lines": len(session.skipped_lines),
        "file_size": size,
        "scanned_at": int(datetime.now(UTC).timestamp() * 1000),
    }


def _strategy_rows(
    key: str,
    names: dict[str, Any],
    session: Any,
    log: Any,
    options: ScanOptions,
    prices: PriceTable,
) -> list[dict[str, Any]]:
    """``compare``'s rows of the main conversation, one per strategy, beside what its own
    requests cost (``baseline_cost_usd``: as sent, or under the session's own settings)."""
    from ctxview.core.requests import compare
    from ctxview.sessions.request_model import compare_max

    defaults = dict(options.defaults)
    max_ = compare_max(session, defaults)
    baseline = _sum_or_none([r.cost_usd for r in log.requests])
    rows = [
        {
            "session_key": key,
            "session_id": names["session_id"],
            "file": names["file"],
            "project": names["project"],
            "strategy": row["name"],
            "max_context_messages": max_,
            "requests": row["requests"],
            "rejected_requests": row["rejected_requests"],
            "mean_window": float(row["mean_window"]),
            "input_tokens": row["input_tokens"],
            "cache_read": row["cache_read"],
            "cache_write": row["cache_write"],
            "hit_rate": row["hit_rate"],
            "cost_usd": row["cost_usd"],
            "evicted_messages": row["evicted_messages"],
            "baseline_cost_usd": baseline,
        }
        for row in compare(session, max_context_messages=max_, defaults=defaults, prices=prices)
    ]
    return rows
