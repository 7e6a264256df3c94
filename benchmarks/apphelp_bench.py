"""make_app for benchmarks: the tests' helper, plus what ``launch`` does after loading
(``gc.freeze()``), so the timings are those of the real app."""

from __future__ import annotations

import gc
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "support"))

from apphelp import make_app as _make_app


def make_app(*args: Any, **kwargs: Any) -> Any:
    app = _make_app(*args, **kwargs)
    gc.freeze()
    return app


__all__ = ["make_app"]
