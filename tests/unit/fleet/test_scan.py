"""The incremental scan (``ctxview/fleet/scan.py``, ``manifest.py``, ``dataset.py``)."""

from __future__ import annotations

import json
import os
import shutil
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow.dataset as ds
import pytest

from ctxview.fleet.dataset import parquet_files
from ctxview.fleet.manifest import Manifest
from ctxview.fleet.rows import session_key
from tests.support.fleet import (
    LONG,
    fleet_files,
    fleet_report,
    request_rows,
    scan_quietly,
)
from tests.support.paths import SAMPLES


def _keys(out: Path) -> Counter[tuple[str, str, int]]:
    return Counter((r["session_key"], r["agent"], r["request_index"]) for r in request_rows(out))


def test_a_second_scan_reads_nothing_and_writes_nothing(tmp_path: Path) -> None:
    files = fleet_files(tmp_path / "in")
    out = tmp_path / "ds"
    first = scan_quietly(files, out)
    assert (first.new, len(first.failed)) == (5, 1)
    before = sorted(p.name for t in ("requests", "sessions") for p in parquet_files(str(out), t))
    again = scan_quietly(files, out)
    assert (again.new, again.unchanged, again.requests_written) == (0, 5, 0)
    assert again.failed == [] and [f for f, _ in again.still_bad] == [files[-1]]
    after = sorted(p.name for t in ("requests", "sessions") for p in parquet_files(str(out), t))
    assert after == before
    assert max(_keys(out).values()) == 1


def _cut_point(lines: list[str]) -> int:
    """A line in the second half where a user turn follows an assistant line (a response
    written whole before it)."""
    kinds = [json.loads(ln).get("type") for ln in lines]
    for i in range(len(lines) // 2, len(lines)):
        if kinds[i] == "user" and kinds[i - 1] == "assistant":
            return i
    raise AssertionError("no cut point")


def test_a_transcript_that_grew_is_written_as_a_scan_from_scratch_writes_it(
    tmp_path: Path,
) -> None:
    """A live transcript scanned, grown, scanned again: its rows (every one once, the earlier
    ones estimated again with the rest: the calibration takes the new usage) are those of a
    scan of the grown file into an empty dataset, and its session's totals are their sums."""
    lines = LONG.read_text(encoding="utf-8").splitlines(keepends=True)
    cut = _cut_point(lines)
    live = tmp_path / "live.jsonl"
    live.write_text("".join(lines[:cut]), encoding="utf-8")
    out = tmp_path / "ds"
    scan_quietly([str(live)], out)
    before = request_rows(out)
    with live.open("a", encoding="utf-8") as f:
        f.write("".join(lines[cut:]))
    grown = scan_quietly([str(live)], out)
    assert (grown.grown, grown.changed, grown.new) == (1, 0, 0)
    whole = tmp_path / "whole"
    scan_quietly([str(live)], whole)
    after, fresh = request_rows(out), request_rows(whole)
    assert len(before) < len(after) and grown.requests_written == len(after)
    assert after == fresh
    # the earlier requests' estimates moved with the calibration (why they are written again)
    assert any(a["input_tokens"] != b["input_tokens"] for a, b in zip(before, after, strict=False))
    [session] = ds.dataset(str(out / "sessions"), format="parquet").to_table().to_pylist()
    assert session["requests"] == len(after)
    assert session["input_tokens"] == sum(r["input_tokens"] for r in after)


def test_a_rewritten_file_has_its_rows_replaced(tmp_path: Path) -> None:
    path = tmp_path / "s.json"
    shutil.copy(SAMPLES / "long_chat.json", path)
    out = tmp_path / "ds"
    scan_quietly([str(path)], out)
    shutil.copy(SAMPLES / "agent_loop.json", path)
    again = scan_quietly([str(path)], out)
    assert again.changed == 1
    fresh = tmp_path / "fresh"
    scan_quietly([str(path)], fresh)
    strip = lambda rows: [{k: v for k, v in r.items() if k != "date"} for r in rows]  # noqa: E731
    assert strip(request_rows(out)) == strip(request_rows(fresh))
    assert fleet_report(out) == fleet_report(fresh)


def test_an_interrupted_scan_leaves_a_readable_dataset_the_next_scan_completes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = fleet_files(tmp_path / "in")
    out = tmp_path / "ds"
    saves = []
    real_save = Manifest.save

    def interrupted(self: Manifest) -> None:
        saves.append(1)
        if len(saves) == 2:  # the second batch's files are written, its manifest is not
            raise KeyboardInterrupt
        real_save(self)

    monkeypatch.setattr(Manifest, "save", interrupted)
    with pytest.raises(KeyboardInterrupt):
        scan_quietly(files, out, flush_rows=1)
    monkeypatch.setattr(Manifest, "save", real_save)
    partial = fleet_report(out)  # readable, no request twice
    assert partial["totals"]["requests"] > 0
    assert max(_keys(out).values()) == 1
    done = scan_quietly(files, out)
    assert done.new >= 1
    whole = tmp_path / "whole"
    scan_quietly(files, whole)
    assert fleet_report(out) == fleet_report(whole)
    assert max(_keys(out).values()) == 1


def test_a_bad_file_is_tried_again_only_once_it_changed(tmp_path: Path) -> None:
    bad = tmp_path / "s.json"
    bad.write_text('{"messages": "no"}', encoding="utf-8")
    out = tmp_path / "ds"
    first = scan_quietly([str(bad)], out)
    assert [f for f, _ in first.failed] == [str(bad)]
    again = scan_quietly([str(bad)], out)
    assert (again.failed, [f for f, _ in again.still_bad]) == ([], [str(bad)])
    shutil.copy(SAMPLES / "agent_loop.json", bad)
    fixed = scan_quietly([str(bad)], out)
    assert (fixed.failed, fixed.changed, fixed.still_bad) == ([], 1, [])
    assert fleet_report(out)["totals"]["sessions"] == 1


def test_two_shards_written_apart_give_the_report_of_one_scan(tmp_path: Path) -> None:
    files = fleet_files(tmp_path / "in")
    one, two = tmp_path / "one", tmp_path / "two"
    scan_quietly(files, one, options=_compare())
    halves = [scan_quietly(files, two, shard=(k, 2), options=_compare()) for k in (1, 2)]
    assert [h.files for h in halves] != [0, 6] and sum(h.files for h in halves) == 6
    assert sorted(p.name for p in (two / "_ctxview").iterdir()) == [
        "local-1of2.json",
        "local-2of2.json",
    ]
    assert fleet_report(two) == fleet_report(one)
    assert fleet_report(two)["strategy_savings"]


def test_a_pool_of_two_processes_writes_what_one_process_does(tmp_path: Path) -> None:
    files = fleet_files(tmp_path / "in")
    pooled, single = tmp_path / "pooled", tmp_path / "single"
    scan_quietly(files, pooled, workers=2)
    scan_quietly(files, single, workers=1)
    assert fleet_report(pooled) == fleet_report(single)


def _megabyte(i: int) -> bytes:
    return bytes([i]) * 1_000_000


def test_the_scan_pool_waits_on_its_workers_and_its_state_never_on_the_result_pipe() -> None:
    import multiprocessing

    from ctxview.fleet.scan import _Pool

    pool = _Pool(2, context=multiprocessing.get_context("fork"))
    try:
        # the worker handler wakes for a worker's exit or a change of the pool (tasks all
        # done, closed, terminated); waking whenever results are unread makes it spin while
        # a large one streams through the pipe
        assert pool._outqueue._reader not in pool._get_sentinels()  # type: ignore[attr-defined]
        got = sorted(len(r) + r[0] for r in pool.imap_unordered(_megabyte, range(6)))
        pool.close()
        pool.join()  # (would hang if closing the pool could not wake the handler)
    finally:
        pool.terminate()
    assert got == [1_000_000 + i for i in range(6)]


def test_the_session_key_is_the_same_for_a_path_given_relative_or_absolute(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(SAMPLES)
    assert session_key("agent_loop.json") == session_key(str(SAMPLES / "agent_loop.json"))


def _compare() -> object:
    from ctxview.fleet.rows import ScanOptions

    return ScanOptions(compare=True)


def test_every_file_carries_the_schema_version_and_its_table(tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    from ctxview.fleet.schema import SCHEMA_VERSION, TABLES

    path = tmp_path / "s.json"
    shutil.copy(SAMPLES / "agent_loop.json", path)
    out = tmp_path / "ds"
    scan_quietly([str(path)], out, options=_compare())
    for table, schema in TABLES.items():
        [f] = parquet_files(str(out), table)
        meta = pq.read_schema(f).metadata
        assert meta[b"ctxview.schema_version"] == SCHEMA_VERSION.encode()
        assert meta[b"ctxview.table"] == table.encode()
        assert pq.read_schema(f).names == schema.names


def test_a_session_over_several_days_is_written_into_each_days_partition(
    tmp_path: Path,
) -> None:
    """A transcript whose requests fall on three days: each day's rows in its ``date=``
    folder, together with the rows of a one-day session, and every row once."""
    from datetime import UTC, datetime

    from tests.support.transcripts import rec, text

    def line(kind: str, n: int, parent: str | None, content: object, day: int) -> str:
        stamp = datetime(2026, 11, day, 12, tzinfo=UTC).isoformat().replace("+00:00", "Z")
        out = json.loads(rec(kind, f"u{n}", parent, content))
        out["timestamp"] = stamp
        if kind == "assistant":
            out["message"]["usage"] = {"input_tokens": 10, "output_tokens": 5}
        return json.dumps(out) + "\n"

    lines, parent = [], None
    for n, day in enumerate([28, 28, 29, 30, 30]):
        lines.append(line("user", 2 * n, parent, text(f"step {n}"), day))
        lines.append(line("assistant", 2 * n + 1, f"u{2 * n}", text("ok"), day))
        parent = f"u{2 * n + 1}"
    days = tmp_path / "days.jsonl"
    days.write_text("".join(lines), encoding="utf-8")
    out = tmp_path / "ds"
    scan_quietly([str(days), str(SAMPLES / "agent_loop.json")], out)
    rows = request_rows(out)
    mine = [(r["date"], r["request_index"]) for r in rows if r["file"] == str(days)]
    assert sorted(mine) == [
        ("2026-11-28", 0),
        ("2026-11-28", 1),
        ("2026-11-29", 2),
        ("2026-11-30", 3),
        ("2026-11-30", 4),
    ]
    folders = {p.parent.name for p in parquet_files(str(out), "requests")}
    assert {"date=2026-11-28", "date=2026-11-29", "date=2026-11-30"} <= folders
    assert max(_keys(out).values()) == 1


def test_a_fifo_among_the_files_is_not_read_and_never_waited_on(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    good = tmp_path / "s.json"
    shutil.copy(SAMPLES / "agent_loop.json", good)
    done: list[Any] = []
    worker = threading.Thread(
        target=lambda: done.append(scan_quietly([str(fifo), str(good)], tmp_path / "ds")),
        daemon=True,
    )
    worker.start()
    worker.join(timeout=30)
    if worker.is_alive():  # blocked opening the FIFO: a writer releases it
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        worker.join()
        pytest.fail("the scan waited for a writer of the FIFO")
    (result,) = done
    assert result.new == 1
    assert [(f, "FIFO" in why) for f, why in result.failed] == [(str(fifo), True)]
