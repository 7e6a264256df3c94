"""The dataset on disk: Parquet files written atomically into Hive-style folders
(``requests/date=YYYY-MM-DD/``, ``sessions/``, ``strategies/``), rows of sessions that
changed taken out of the files holding them, and the files an interrupted scan left.

Every file is written under a hidden temporary name in its folder and renamed into place: a
reader (DuckDB, Spark, a scan running meanwhile) sees a whole file or none. Engines skip names
starting with ``.`` or ``_`` (the manifest's folder is ``_ctxview``).
"""

from __future__ import annotations

import contextlib
import os
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ctxview.fleet.rows import FileRows
from ctxview.fleet.schema import PARTITION, TABLES, with_metadata

COMPRESSION = "zstd"


def write_atomic(table: pa.Table, path: Path) -> None:
    """``table`` to ``path`` as Parquet, all or nothing."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        pq.write_table(table, tmp, compression=COMPRESSION)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def parquet_files(root: str, table: str) -> list[Path]:
    """The Parquet files of one table (hidden and temporary files left out)."""
    base = Path(root, table)
    if not base.is_dir():
        return []
    return sorted(
        p
        for p in base.rglob("*.parquet")
        if not any(part.startswith((".", "_")) for part in p.relative_to(base).parts)
    )


def is_dataset(path: str) -> bool:
    """Does ``path`` hold a scanned dataset (a ``requests`` folder)?"""
    return Path(path, "requests").is_dir()


class Writer:
    """Buffers the rows of whole sessions and writes them, a file per table and partition, on
    :meth:`flush`. File names: ``<prefix><run>-<n>.parquet`` (``prefix``: the writer and
    shard, so their scans into one dataset never collide)."""

    def __init__(self, root: str, prefix: str, run: str) -> None:
        self.root = root
        self.prefix = prefix
        self.run = run
        self.seq = 0
        #: the ``requests`` rows buffered per day (a session's rows are split by day as they
        #: come: most hold one, and are kept whole)
        self.days: dict[str, list[pa.RecordBatch]] = defaultdict(list)
        self.dicts: dict[str, list[dict[str, Any]]] = defaultdict(list)
        self.rows = 0

    def add(self, rows: FileRows) -> None:
        batch = rows.requests
        if batch is not None and batch.num_rows:
            if len(rows.days) == 1:
                self.days[rows.days[0]].append(batch)
            else:
                parts = batch.column(PARTITION)
                for day in rows.days:
                    self.days[day].append(batch.filter(pc.equal(parts, day)))
            self.rows += batch.num_rows
        self.dicts["sessions"] += rows.session_rows
        self.dicts["strategies"] += rows.strategy_rows or []
        self.rows += len(rows.session_rows) + len(rows.strategy_rows or [])

    def _name(self) -> str:
        self.seq += 1
        return f"{self.prefix}{self.run}-{self.seq}.parquet"

    def flush(self) -> dict[str, dict[str, list[str]]]:
        """Write what is buffered; session key -> table -> the files (relative to the
        dataset) now holding its rows."""
        where: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
        if self.days:
            metadata = with_metadata(TABLES["requests"], "requests").metadata
            for day in sorted(self.days):
                # one chunk per file: the Parquet writer takes it several times quicker than
                # a chunk per session
                rows = pa.Table.from_batches(self.days[day]).combine_chunks()
                self.days[day] = []  # (its sessions' batches freed as the day is written)
                rows = rows.drop_columns([PARTITION])
                rel = f"requests/{PARTITION}={day}/{self._name()}"
                self._write(rows.replace_schema_metadata(metadata), rel, where)
        for table, dicts in self.dicts.items():
            if dicts:
                schema = with_metadata(TABLES[table], table)
                self._write(
                    pa.Table.from_pylist(dicts, schema=schema), f"{table}/{self._name()}", where
                )
        self.days.clear()
        self.dicts.clear()
        self.rows = 0
        return {k: dict(v) for k, v in where.items()}

    def _write(self, rows: pa.Table, rel: str, where: dict[str, dict[str, list[str]]]) -> None:
        write_atomic(rows, Path(self.root, rel))
        table = rel.split("/", 1)[0]
        for key in pc.unique(rows.column("session_key")).to_pylist():
            where[key][table].append(rel)


def remove_sessions(root: str, rel_files: Iterable[str], keys: set[str]) -> None:
    """Take the rows of the sessions ``keys`` out of these dataset files (each rewritten
    atomically without them; removed when nothing is left)."""
    for rel in sorted(set(rel_files)):
        path = Path(root, rel)
        try:
            table = pq.read_table(path)
        except FileNotFoundError:
            continue
        keep = table.filter(
            pc.invert(pc.is_in(table.column("session_key"), pa.array(sorted(keys))))
        )
        if keep.num_rows == table.num_rows:
            continue
        if keep.num_rows == 0:
            path.unlink()
        else:
            write_atomic(keep.replace_schema_metadata(table.schema.metadata), path)


def remove_unnamed(root: str, prefix: str, named: set[str]) -> list[str]:
    """Remove this writer's files the manifest does not name (an interrupted scan's), and any
    temporary file left; the removed files, relative to the dataset."""
    gone = []
    for table in TABLES:
        base = Path(root, table)
        if not base.is_dir():
            continue
        for p in base.rglob("*"):
            rel = p.relative_to(root).as_posix()
            if p.is_file() and (
                (p.name.startswith(prefix) and p.suffix == ".parquet" and rel not in named)
                or (p.name.startswith(f".{prefix}") and p.name.endswith(".tmp"))
            ):
                with contextlib.suppress(OSError):
                    p.unlink()
                    gone.append(rel)
    return gone
