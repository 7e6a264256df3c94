"""The fleet report's SQL over a dataset (``ctxview/fleet/query.py``, ``ctxview/fleet/sql/``)."""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path

import pytest

from ctxview.fleet.query import QUESTIONS
from ctxview.fleet.schema import TABLES
from tests.support.cli import run
from tests.support.fleet import fleet_files, fleet_report, request_rows, scan_quietly
from tests.support.paths import ROOT


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    tmp = tmp_path_factory.mktemp("fleet")
    files = fleet_files(tmp / "in")
    scan_quietly(files, tmp / "ds")
    return tmp / "ds", files


def test_the_totals_are_the_sums_of_every_files_requests(
    dataset: tuple[Path, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    out, files = dataset
    cost = requests = 0.0
    for f in files[:-1]:
        _, text, _ = run(capsys, "requests", f, "--json")
        report = json.loads(text)
        requests += report["totals"]["requests"]
        cost += sum(r["cost_usd"] or 0 for r in report["requests"])
    totals = fleet_report(out)["totals"]
    assert totals["requests"] == requests
    assert totals["sessions"] == len(files) - 1
    assert totals["cost_usd"] == pytest.approx(cost, abs=1e-5)  # the JSON's 6-place rounding
    assert totals["cache_saved_usd"] == pytest.approx(
        totals["uncached_cost_usd"] - totals["cost_usd"]
    )


def test_every_break_reason_and_day_adds_up_to_the_rows(dataset: tuple[Path, list[str]]) -> None:
    out, _ = dataset
    rows = request_rows(out)
    answers = fleet_report(out)
    by_reason: dict[str, int] = {}
    for r in rows:
        if r["cache_break"]:
            by_reason[r["break_reason"]] = by_reason.get(r["break_reason"], 0) + 1
    assert {b["reason"]: b["breaks"] for b in answers["break_reasons"]} == by_reason
    assert sum(d["requests"] for d in answers["by_day"]) == len(rows)
    assert [d["date"] for d in answers["by_day"]] == sorted({str(r["date"]) for r in rows})


def test_each_top_session_names_its_provider(dataset: tuple[Path, list[str]]) -> None:
    """As every per-file command's JSON does (the dataset's sessions hold it)."""
    out, _ = dataset
    top = fleet_report(out)["top_sessions"]
    assert top and {t["provider"] for t in top} == {"anthropic"}


def test_the_filters_keep_the_requests_they_name(dataset: tuple[Path, list[str]]) -> None:
    out, _ = dataset
    rows = request_rows(out)
    days = sorted({r["date"] for r in rows})
    since = dt.date.fromisoformat(str(days[-1]))
    assert fleet_report(out, since=since)["totals"]["requests"] == sum(
        1 for r in rows if str(r["date"]) >= str(since)
    )
    model = "haiku"
    assert fleet_report(out, model=model)["totals"]["requests"] == sum(
        1 for r in rows if r["model"] and model in r["model"]
    )
    project = rows[0]["project"]
    kept = fleet_report(out, project=project)
    assert kept["totals"]["requests"] == sum(1 for r in rows if project in r["project"])
    assert {p["project"] for p in kept["top_projects"]} == {project}


def test_a_dataset_with_no_request_answers_every_question_empty(tmp_path: Path) -> None:
    bad = tmp_path / "s.json"
    bad.write_text("[]", encoding="utf-8")
    scan_quietly([str(bad)], tmp_path / "ds")
    answers = fleet_report(tmp_path / "ds")
    assert answers["totals"]["requests"] == 0
    assert all(answers[q] == [] for q in QUESTIONS if q != "totals")


def _documented_columns(doc: str, table: str) -> list[str]:
    """The column names of ``### table`` in docs/fleet.md (its table's first cells)."""
    section = doc.split(f"### `{table}`", 1)[1].split("\n### ", 1)[0]
    return re.findall(r"^\| `([a-z_0-9]+)` \|", section, flags=re.M)


def test_the_docs_describe_every_column_and_quote_every_sql_file() -> None:
    doc = (ROOT / "docs" / "fleet.md").read_text(encoding="utf-8")
    for table, schema in TABLES.items():
        assert _documented_columns(doc, table) == schema.names, table
    sql = sorted(p.name for p in (ROOT / "ctxview" / "fleet" / "sql").glob("*.sql"))
    assert sql == sorted([*(f"{q}.sql" for q in QUESTIONS), *(f"view_{t}.sql" for t in TABLES)])
    for name in sql:
        assert f"(../ctxview/fleet/sql/{name})" in doc, name


def test_a_damaged_parquet_file_is_named_without_the_reports_own_sql(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "requests").mkdir()
    (tmp_path / "requests" / "x.parquet").write_text("garbage", encoding="utf-8")
    code, _, err = run(capsys, "report", str(tmp_path))
    assert code == 2
    assert "x.parquet' too small to be a Parquet file" in err
    # DuckDB's excerpt of the query (LINE n: FROM read_parquet(...) and a caret line) is not
    # the user's: it named no file and wrapped the one error line in ⏎ marks
    assert "LINE" not in err and "read_parquet" not in err and "^^^" not in err
