"""The dataset's tables as Arrow schemas: one row per request (``requests/``, partitioned by
day), one per session (``sessions/``) and one per session and strategy (``strategies/``, with
``scan --compare``). docs/fleet.md describes every column; a test holds the two together.

The schema's version is written into every Parquet file's key-value metadata
(``ctxview.schema_version``): a reader can refuse a dataset it does not know. A change that
renames, drops or retypes a column raises the major version; adding a column raises the minor.
"""

from __future__ import annotations

import pyarrow as pa

SCHEMA_VERSION = "1.0"
#: the Parquet key-value metadata every file carries
METADATA_KEY = b"ctxview.schema_version"
TABLE_KEY = b"ctxview.table"

#: the partition column of ``requests/`` (``date=YYYY-MM-DD`` folders; not inside the files)
PARTITION = "date"

_TS = pa.timestamp("ms", tz="UTC")

#: the columns that name a session in every table
_SESSION_COLUMNS = [
    pa.field("session_key", pa.string(), nullable=False),
    pa.field("session_id", pa.string()),
    pa.field("file", pa.string()),
    pa.field("project", pa.string()),
]

REQUESTS = pa.schema(
    [
        *_SESSION_COLUMNS,
        pa.field("agent", pa.string(), nullable=False),
        pa.field("provider", pa.string(), nullable=False),
        pa.field("format", pa.string()),
        pa.field("model", pa.string()),
        pa.field("strategy", pa.string(), nullable=False),
        pa.field("request_index", pa.int32(), nullable=False),
        pa.field("timestamp", _TS),
        pa.field("window_size", pa.int32(), nullable=False),
        pa.field("input_tokens", pa.int64(), nullable=False),
        pa.field("recorded_input_tokens", pa.int64()),
        pa.field("recorded_cache_read", pa.int64()),
        pa.field("recorded_cache_write", pa.int64()),
        pa.field("cache_read", pa.int64(), nullable=False),
        pa.field("cache_write_5m", pa.int64(), nullable=False),
        pa.field("cache_write_1h", pa.int64(), nullable=False),
        pa.field("uncached", pa.int64(), nullable=False),
        pa.field("output_tokens", pa.int64(), nullable=False),
        pa.field("cache_break", pa.bool_(), nullable=False),
        pa.field("break_reason", pa.string()),
        pa.field("break_position", pa.int32()),
        pa.field("recorded_break_reason", pa.string()),
        pa.field("api_break_reason", pa.string()),
        pa.field("cost_usd", pa.float64()),
        pa.field("uncached_cost_usd", pa.float64()),
        pa.field("break_lost_usd", pa.float64()),
        pa.field("redundant_tokens", pa.int64(), nullable=False),
        pa.field("price_table", pa.string()),
        pa.field("context_limit", pa.int64(), nullable=False),
        pa.field("rejected", pa.bool_(), nullable=False),
        pa.field("error_code", pa.string()),
        pa.field("off_branch", pa.bool_(), nullable=False),
        pa.field("tools", pa.list_(pa.string()), nullable=False),
    ]
)

SESSIONS = pa.schema(
    [
        *_SESSION_COLUMNS,
        pa.field("provider", pa.string(), nullable=False),
        pa.field("format", pa.string()),
        pa.field("model", pa.string()),
        pa.field("strategy", pa.string(), nullable=False),
        pa.field("title", pa.string()),
        pa.field("first_timestamp", _TS),
        pa.field("last_timestamp", _TS),
        pa.field("messages", pa.int64(), nullable=False),
        pa.field("agents", pa.int32(), nullable=False),
        pa.field("requests", pa.int64(), nullable=False),
        pa.field("input_tokens", pa.int64(), nullable=False),
        pa.field("cache_read", pa.int64(), nullable=False),
        pa.field("cache_write", pa.int64(), nullable=False),
        pa.field("cost_usd", pa.float64()),
        pa.field("uncached_cost_usd", pa.float64()),
        pa.field("break_lost_usd", pa.float64()),
        pa.field("breaks", pa.int64(), nullable=False),
        pa.field("rejected", pa.int64(), nullable=False),
        pa.field("skipped_lines", pa.int64(), nullable=False),
        pa.field("file_size", pa.int64(), nullable=False),
        pa.field("scanned_at", _TS, nullable=False),
    ]
)

STRATEGIES = pa.schema(
    [
        *_SESSION_COLUMNS,
        pa.field("strategy", pa.string(), nullable=False),
        pa.field("max_context_messages", pa.int32(), nullable=False),
        pa.field("requests", pa.int64(), nullable=False),
        pa.field("rejected_requests", pa.int64(), nullable=False),
        pa.field("mean_window", pa.float64(), nullable=False),
        pa.field("input_tokens", pa.int64(), nullable=False),
        pa.field("cache_read", pa.int64(), nullable=False),
        pa.field("cache_write", pa.int64(), nullable=False),
        pa.field("hit_rate", pa.float64()),
        pa.field("cost_usd", pa.float64()),
        pa.field("evicted_messages", pa.int64(), nullable=False),
        pa.field("baseline_cost_usd", pa.float64()),
    ]
)

#: table name -> its schema (the folder of the dataset it is written to)
TABLES: dict[str, pa.Schema] = {
    "requests": REQUESTS,
    "sessions": SESSIONS,
    "strategies": STRATEGIES,
}


def with_metadata(schema: pa.Schema, table: str) -> pa.Schema:
    """``schema`` carrying the dataset's version and the table's name."""
    return schema.with_metadata({METADATA_KEY: SCHEMA_VERSION.encode(), TABLE_KEY: table.encode()})
