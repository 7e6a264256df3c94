"""config.toml's values: every numeric key bounded by one table of ranges (an error names the
file, the key and the range, and the default is used), the theme checked against the app's."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ctxview.config import DEFAULTS, RANGES, load_config
from tests.support.cli import run

#: (TOML line, key, words of the range the error names)
OUT_OF_RANGE = [
    ("request_timeout = inf", "request_timeout", "above 0, at most 86,400"),
    ("request_timeout = nan", "request_timeout", "above 0, at most 86,400"),
    ("request_timeout = 0", "request_timeout", "above 0, at most 86,400"),
    ("request_timeout = 86401", "request_timeout", "above 0, at most 86,400"),
    ("tool_rounds = 100000000", "tool_rounds", "from 1 to 1,000"),
    ("tool_rounds = 0", "tool_rounds", "from 1 to 1,000"),
    ("tool_rounds = 3.0", "tool_rounds", "an integer from 1 to 1,000"),
    ("max_tokens = 1e26", "max_tokens", "from 1 to 1,000,000"),
    ("max_tokens = 100000000000000000000000000", "max_tokens", "from 1 to 1,000,000"),
    ("max_tokens = true", "max_tokens", "from 1 to 1,000,000"),
    ("max_context_messages = 10000001", "max_context_messages", "from 1 to 10,000,000"),
    ("max_context_tokens = -5", "max_context_tokens", "from 1 to 100,000,000"),
    ("file_tool_max_bytes = 67108865", "file_tool_max_bytes", "from 1 to 67,108,864"),
    ("low_water_fraction = 0", "low_water_fraction", "above 0, at most 1"),
    ("low_water_fraction = 1.5", "low_water_fraction", "above 0, at most 1"),
    ("low_water_fraction = -inf", "low_water_fraction", "above 0, at most 1"),
]


@pytest.mark.parametrize(("line", "key", "allowed"), OUT_OF_RANGE)
def test_a_value_out_of_range_names_file_key_and_range(
    tmp_path: Path, line: str, key: str, allowed: str
) -> None:
    path = tmp_path / "config.toml"
    path.write_text(line + "\n")
    cfg = load_config(path)
    (error,) = cfg.errors
    assert error.startswith(f"{path}: {key}: expected ") and allowed in error
    assert error.endswith("; using the default")
    assert cfg[key] == DEFAULTS[key]


def test_the_ends_of_each_range_are_taken(tmp_path: Path) -> None:
    path = tmp_path / "config.toml"
    for key, bounds in RANGES.items():
        ends = [bounds.high] if bounds.low_open else [bounds.low, bounds.high]
        for value in ends:
            text = str(int(value)) if bounds.integer else repr(float(value))
            path.write_text(f"{key} = {text}\n")
            cfg = load_config(path)
            assert cfg.errors == [] and cfg[key] == value, (key, value)


def test_every_numeric_key_has_a_range() -> None:
    numeric = {
        k for k, v in DEFAULTS.items() if isinstance(v, (int, float)) and not isinstance(v, bool)
    }
    assert numeric == set(RANGES)
    for key in numeric:
        assert RANGES[key].holds(DEFAULTS[key]), key


def test_set_refuses_a_value_out_of_range(capsys: pytest.CaptureFixture[str]) -> None:
    cfg = Path(os.environ["CTXVIEW_CONFIG"])
    for key, value in (("tool_rounds", "100000000"), ("request_timeout", "inf")):
        code, _, err = run(capsys, "config", "set", key, value)
        assert code == 2 and f"{key}: expected" in err and str(cfg) in err
    assert not cfg.exists()


def test_show_names_an_unknown_theme(capsys: pytest.CaptureFixture[str]) -> None:
    cfg = Path(os.environ["CTXVIEW_CONFIG"])
    cfg.write_text('theme = "no-such-theme"\n')
    code, out, err = run(capsys, "config", "show")
    assert code == 0
    assert f"{cfg}: theme: unknown theme 'no-such-theme' (known: " in err
    assert "textual-light" in err
    assert 'theme = "textual-dark"' in out  # what the app uses
