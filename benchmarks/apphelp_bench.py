"""make_app for benchmarks (the tests' helper, without pytest)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from apphelp import make_app

__all__ = ["make_app"]
