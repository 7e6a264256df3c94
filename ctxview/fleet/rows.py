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
from operator import attrgetter
from pathlib import Path
from typing import Any

import pyarrow as pa

from ctxview.core.limits import context_size
from ctxview.core.pricing import PRICES_DATE, Price, PriceTable
from ctxview.core.requests import parse_timestamp
from ctxview.fleet.schema import PARTITION, REQUESTS, SESSIONS, STRATEGIES
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
    #: requests per agent in the file (all of them, also those left out by ``skip``)
    counts: dict[str, int] = field(default_factory=dict)
    error: str | None = None
    #: secrets replaced, per kind
    redactions: dict[str, int] = field(default_factory=dict)

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
        """Sent from a worker as an Arrow IPC stream (pickling a batch costs five times more)."""
        state = dict(self.__dict__)
        if self.requests is not None:
            sink = pa.BufferOutputStream()
            with pa.ipc.new_stream(sink, self.requests.schema) as w:
                w.write_batch(self.requests)
            state["requests"] = sink.getvalue()
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        if state["requests"] is not None:
            state["requests"] = pa.ipc.open_stream(state["requests"]).read_next_batch()
        self.__dict__.update(state)


def session_key(path: str) -> str:
    """The key naming a session file in every table: a hash of its absolute path (the same
    file scanned on another day, or by another shard, has the same key)."""
    return hashlib.sha256(os.path.abspath(path).encode("utf-8", "surrogatepass")).hexdigest()[:16]


def file_rows(
    path: str,
    options: ScanOptions | None = None,
    *,
    skip: Mapping[str, int] | None = None,
    project: str | None = None,
) -> FileRows:
    """The rows of one session file. ``skip``: requests per agent already in the dataset (a
    session that grew: only the requests after them are built); ``project``: the project's
    name when the caller knows it (else the ``cwd`` of the file's first lines, else its
    folder's name). Never raises for a bad file: ``FileRows.error`` says why."""
    from ctxview.sessions.model import load_error
    from ctxview.sessions.readers import load_session

    options = options or ScanOptions()
    key = session_key(path)
    try:
        session = load_session(path)
        return _rows(path, key, session, options, skip or {}, project)
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
def _rows(
    path: str,
    key: str,
    session: Any,
    options: ScanOptions,
    skip: Mapping[str, int],
    project: str | None,
) -> FileRows:
    from ctxview.sessions.request_model import session_requests

    prices = PriceTable(dict(options.price_overrides))
    defaults = dict(options.defaults)
    log, agent_logs = session_requests(session, prices=prices, defaults=defaults, check=True)
    st = os.stat(path)
    agents: list[tuple[str, Any, Any]] = [("main", session, log)]
    agents += [(al.agent.agent_id, al.agent.load(), al.log) for al in agent_logs if al.log]
    names = _names(
        {
            "file": os.path.abspath(path),
            "session_id": Path(path).stem,
            "project": project or session.cwd or Path(path).parent.name,
            "title": session.title
            or (one_line(session.first_prompt, 200) if session.first_prompt else None),
            "agents": [a for a, _, _ in agents],
            "models": sorted({str(m) for m in _models(agents)}),
        },
        options.redact,
    )
    strategy = AS_SENT if log.as_sent else str(log.strategy)
    provider = str(getattr(session, "provider", None) or "anthropic")
    fallback_date = datetime.fromtimestamp(st.st_mtime, UTC).strftime("%Y-%m-%d")
    cols: dict[str, list[Any]] = {f.name: [] for f in REQUEST_ROWS}
    counts: dict[str, int] = {}
    money: list[tuple[float | None, float | None]] = []
    for agent, agent_session, agent_log in agents:
        counts[agent] = len(agent_log.requests)
        _agent_columns(
            cols,
            agent,
            agent_session,
            agent_log,
            prices,
            start=skip.get(agent, 0),
            fallback_date=fallback_date,
            money=money,
        )
    n = len(cols["request_index"])
    consts = {
        "session_key": key,
        "session_id": names["session_id"],
        "file": names["file"],
        "project": names["project"],
        "provider": provider,
        "format": session.format,
        "strategy": strategy,
    }
    for name, value in consts.items():
        cols[name] = [value] * n
    cols["agent"] = [names["agents"][a] for a in cols["agent"]]
    cols["model"] = [None if m is None else names["models"][str(m)] for m in cols["model"]]
    requests = pa.RecordBatch.from_pydict(cols, schema=REQUEST_ROWS)
    return FileRows(
        path,
        key,
        requests,
        [_session_row(key, names, consts, session, agents, log, money, st.st_size)],
        _strategy_rows(key, names, session, log, options, prices) if options.compare else None,
        counts,
        redactions=names["_redactions"],
    )


def _models(agents: list[tuple[str, Any, Any]]) -> Iterator[Any]:
    for _, s, lg in agents:
        yield from (r.model for r in lg.requests if r.model is not None)
        if lg.model is not None:
            yield lg.model
        if s.model is not None:
            yield s.model


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


def _agent_columns(
    cols: dict[str, list[Any]],
    agent: str,
    session: Any,
    log: Any,
    prices: PriceTable,
    *,
    start: int,
    fallback_date: str,
    money: list[tuple[float | None, float | None]],
) -> None:
    """Append one agent's requests from ``start`` on to ``cols``; every request's (uncached
    cost, break's loss) to ``money`` (the session's totals count them all). The plain fields
    are taken column by column (attribute getters mapped in C: a million requests)."""
    reqs = log.requests
    per_model: dict[Any, tuple[Price | None, str | None, int]] = {}

    def model_facts(model: Any) -> tuple[Price | None, str | None, int]:
        found = per_model.get(model)
        if found is None:
            price = prices.get(model)
            version = None if price is None else _price_version(prices, model)
            found = per_model[model] = (price, version, context_size(model))
        return found

    models = [r.model or log.model for r in reqs]
    prev_input: int | None = None
    for r, model in zip(reqs, models, strict=True):
        price = model_facts(model)[0]
        if price is None:
            money.append((None, None))
        else:
            b = r.cache_break
            money.append(
                (
                    (r.input_tokens * price.input + r.output_tokens * price.output) / 1e6,
                    _break_lost(r, prev_input, price) if b is not None else 0.0,
                )
            )
        prev_input = r.input_tokens
    rs = reqs[start:]
    if not rs:
        return
    models = models[start:]
    for name, get in _ATTRS.items():
        cols[name].extend(map(get, rs))
    cols["agent"].extend([agent] * len(rs))
    cols["model"].extend(models)
    facts = [model_facts(m) for m in models]
    cols["price_table"].extend(f[1] for f in facts)
    cols["context_limit"].extend(f[2] for f in facts)
    cols["uncached_cost_usd"].extend(m[0] for m in money[len(money) - len(rs) :])
    cols["break_lost_usd"].extend(m[1] for m in money[len(money) - len(rs) :])
    stamps = [_epoch_ms(r.timestamp) for r in rs]
    cols["timestamp"].extend(stamps)
    days: dict[int, str] = {}
    cols[PARTITION].extend(
        fallback_date
        if ts is None
        else days.get(ts // 86_400_000)
        or days.setdefault(
            ts // 86_400_000, datetime.fromtimestamp(ts / 1000, UTC).strftime("%Y-%m-%d")
        )
        for ts in stamps
    )
    recs = [r.recorded for r in rs]
    cols["recorded_input_tokens"].extend(None if d is None else d["input_tokens"] for d in recs)
    cols["recorded_cache_read"].extend(
        None if d is None else d["cache_read_input_tokens"] for d in recs
    )
    cols["recorded_cache_write"].extend(
        None if d is None else d["cache_creation_input_tokens"] for d in recs
    )
    cols["cache_write_5m"].extend(r.cache_write if r.ttl == "5m" else 0 for r in rs)
    cols["cache_write_1h"].extend(0 if r.ttl == "5m" else r.cache_write for r in rs)
    breaks = [r.cache_break for r in rs]
    cols["cache_break"].extend(b is not None for b in breaks)
    cols["break_reason"].extend(None if b is None else b.reason for b in breaks)
    cols["break_position"].extend(None if b is None else b.position for b in breaks)
    misses = [r.recorded_miss for r in rs]
    cols["recorded_break_reason"].extend(None if m is None else m.reason for m in misses)
    cols["api_break_reason"].extend(
        m.api_reason if m is not None and m.reported else None for m in misses
    )
    cols["redundant_tokens"].extend(0 if r.redundancy is None else r.redundancy.tokens for r in rs)
    tools_at = _result_tools(session.messages)
    tools = cols["tools"]
    for r in rs:
        found: list[str] = []
        if tools_at:
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
    return CONFIG_PRICES if prices.source(model).startswith(CONFIG_PRICES) else PRICE_TABLE


def _ts_range(agents: list[tuple[str, Any, Any]]) -> tuple[int | None, int | None]:
    stamps = [
        t for _, _, lg in agents for r in lg.requests if (t := _epoch_ms(r.timestamp)) is not None
    ]
    return (min(stamps), max(stamps)) if stamps else (None, None)


def _sum_or_none(values: list[float | None]) -> float | None:
    return None if not values or None in values else float(sum(v for v in values if v is not None))


def _session_row(
    key: str,
    names: dict[str, Any],
    consts: dict[str, Any],
    session: Any,
    agents: list[tuple[str, Any, Any]],
    log: Any,
    money: list[tuple[float | None, float | None]],
    size: int,
) -> dict[str, Any]:
    """The session's one row: its totals over every agent's requests (all of them, also
    those a grown session had before)."""
    reqs = [r for _, _, lg in agents for r in lg.requests]
    first, last = _ts_range(agents)
    row = {
        "session_key": key,
        "session_id": consts["session_id"],
        "file": consts["file"],
        "project": consts["project"],
        "provider": consts["provider"],
        "format": consts["format"],
        "model": names["models"].get(str(log.model)) if log.model is not None else None,
        "strategy": consts["strategy"],
        "title": names["title"],
        "first_timestamp": first,
        "last_timestamp": last,
        "messages": sum(len(s.messages) for _, s, _ in agents),
        "agents": len(agents),
        "requests": len(reqs),
        "input_tokens": sum(r.input_tokens for r in reqs),
        "cache_read": sum(r.cache_read for r in reqs),
        "cache_write": sum(r.cache_write for r in reqs),
        "cost_usd": _sum_or_none([r.cost_usd for r in reqs]),
        "uncached_cost_usd": _sum_or_none([m[0] for m in money]),
        "break_lost_usd": _sum_or_none([m[1] for m in money]),
        "breaks": sum(1 for r in reqs if r.cache_break is not None),
        "rejected": sum(1 for r in reqs if r.rejected),
        "skipped_lines": len(session.skipped_lines),
        "file_size": size,
        "scanned_at": int(datetime.now(UTC).timestamp() * 1000),
    }
    return row


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
