"""Scanned datasets for the fleet's tests: the files they scan, and what they compare."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pyarrow.dataset as ds

from ctxview.fleet.query import Filters, report
from ctxview.fleet.rows import ScanOptions
from ctxview.fleet.scan import ScanResult, scan
from tests.support.paths import ACCEPTANCE, SAMPLES
from tests.support.transcripts import session_folder

CLAUDE_CODE = ACCEPTANCE / "claude_code"
#: a recorded Claude Code session with a sub-agent and a compaction's summarising agent
WITH_AGENTS = "spotter_258c7280-ae70-4798-800f-63464d01a85d"
TOOL_HEAVY = CLAUDE_CODE / "spotter_tool_heavy.jsonl"
#: the main transcript of WITH_AGENTS alone (152 requests)
LONG = CLAUDE_CODE / f"{WITH_AGENTS}.jsonl"


def fleet_files(folder: Path) -> list[str]:
    """A small fleet: a transcript with sub-agents, a tool-heavy one, two ctxview sessions,
    a request body, and a file that is no session."""
    folder.mkdir(parents=True, exist_ok=True)
    main = session_folder(folder, WITH_AGENTS)
    out = [str(main)]
    for src in (
        TOOL_HEAVY,
        SAMPLES / "agent_loop.json",
        SAMPLES / "tool_errors.json",
        ACCEPTANCE / "anthropic_requests" / "pai_compaction_system_blocks_req1.json",
    ):
        dst = folder / src.name
        shutil.copy(src, dst)
        out.append(str(dst))
    bad = folder / "not_a_session.json"
    bad.write_text('{"partners": []}\n', encoding="utf-8")
    out.append(str(bad))
    return out


def scan_quietly(paths: list[str], out: Path, **kw: Any) -> ScanResult:
    """One scan in this process (``workers`` 1 unless given), redaction on."""
    kw.setdefault("workers", 1)
    options = kw.pop("options", ScanOptions())
    return scan(paths, str(out), options, **kw)


def request_rows(out: Path) -> list[dict[str, Any]]:
    """Every row of ``requests`` (the partition column included), sorted by session, agent and
    index."""
    table = ds.dataset(str(out / "requests"), format="parquet", partitioning="hive").to_table()
    return sorted(
        table.to_pylist(), key=lambda r: (r["session_key"], r["agent"], r["request_index"])
    )


def _rounded(value: Any) -> Any:
    """Dollars summed in another order differ in their last bits: compared to 9 places."""
    if isinstance(value, float):
        return round(value, 9)
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    return value


def fleet_report(out: Path, **filters: Any) -> dict[str, Any]:
    """``ctxview report``'s answers over the dataset ``out`` (floats to 9 places)."""
    return dict(_rounded(report(str(out), Filters(**filters))))
