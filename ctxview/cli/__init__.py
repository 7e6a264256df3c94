"""The command line (``ctxview``, ``python -m ctxview``): parsers, the dispatch table and one
module per command family. Headless commands import neither Textual nor the anthropic SDK.

Nothing outside this package imports it: it is the top of the layers (sources → session →
views)."""

from ctxview.cli.main import main, run
from ctxview.cli.view import build_app_parser

__all__ = ["build_app_parser", "main", "run"]
