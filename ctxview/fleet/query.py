"""The fleet report's questions, answered by DuckDB (embedded) over a scanned dataset.

The SQL lives in ``sql/`` (docs/fleet.md quotes those files): ``view_*.sql`` make the views
``requests``, ``sessions`` and ``strategies`` over the dataset's Parquet files with the
report's filters (DuckDB variables ``dataset``, ``since``, ``model``, ``project``, ``top``), and
each other file is one question over those views, run as it is (``top``: rows of each
"top" question; ``rank``: ``cost`` or ``waste``, the order of ``top_sessions``).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from importlib import resources
from typing import Any

import duckdb
import pyarrow as pa

from ctxview.fleet.dataset import parquet_files
from ctxview.fleet.schema import PARTITION, TABLES

#: the report's questions, in the order it answers them (each ``sql/<name>.sql``)
QUESTIONS = (
    "totals",
    "break_reasons",
    "top_sessions",
    "top_projects",
    "top_tools",
    "hit_rate_by_model",
    "by_day",
    "limits",
    "strategy_savings",
)
#: rows of each "top" question
TOP = 10


def sql(name: str) -> str:
    """The text of ``sql/<name>.sql``."""
    return resources.files("ctxview.fleet").joinpath("sql", f"{name}.sql").read_text("utf-8")


@dataclass(frozen=True)
class Filters:
    since: dt.date | None = None
    model: str | None = None
    project: str | None = None
    top: int = TOP
    #: the order of ``top_sessions``: ``cost`` or ``waste`` (lost to cache breaks)
    rank: str = "cost"

    def to_dict(self) -> dict[str, Any]:
        return {
            "since": self.since.isoformat() if self.since else None,
            "model": self.model,
            "project": self.project,
        }


def query_error(exc: BaseException) -> str:
    """What went wrong reading a dataset, without DuckDB's excerpt of ctxview's own SQL (its
    ``LINE n:`` and caret lines name no file and mean nothing to the user)."""
    text = str(exc)
    cut = text.find("\nLINE ")
    return (text[:cut] if cut >= 0 else text).strip()


def connect(dataset: str, filters: Filters | None = None) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB with the dataset's views (a table with no file yet: an empty one of
    its schema, so every question runs)."""
    f = filters or Filters()
    con = duckdb.connect(":memory:")
    values: dict[str, Any] = {
        "dataset": dataset.rstrip("/") or "/",
        "since": f.since.isoformat() if f.since else None,
        "model": f.model,
        "project": f.project,
        "top": f.top,
        "rank": f.rank,
    }
    for name, value in values.items():
        con.execute(f"SET VARIABLE {name} = ?", [value])
    for table in TABLES:
        if parquet_files(dataset, table):
            con.execute(sql(f"view_{table}"))
        else:
            schema = TABLES[table]
            if table == "requests":
                schema = schema.append(pa.field(PARTITION, pa.date32()))
            empty = schema.empty_table()  # noqa: F841 (read by DuckDB by its name)
            con.execute(f"CREATE OR REPLACE TEMP TABLE {table} AS SELECT * FROM empty")
    return con


def rows(con: duckdb.DuckDBPyConnection, name: str) -> list[dict[str, Any]]:
    """The answer to one question, as JSON-ready dicts (dates as ISO text)."""
    cur = con.execute(sql(name))
    cols = [d[0] for d in cur.description]
    return [
        {c: v.isoformat() if isinstance(v, dt.date) else v for c, v in zip(cols, r, strict=True)}
        for r in cur.fetchall()
    ]


def report(dataset: str, filters: Filters | None = None) -> dict[str, Any]:
    """Every question's rows: ``{"totals": {...}, "break_reasons": [...], ...}``."""
    con = connect(dataset, filters)
    try:
        out: dict[str, Any] = {name: rows(con, name) for name in QUESTIONS}
    finally:
        con.close()
    out["totals"] = out["totals"][0] if out["totals"] else {}
    return out
