"""The HTML report: one self-contained page (no network, no external script or font) showing a
session as ctxview sees it: the timeline, each message's blocks, the protocol verdict, the
per-request chart, the compaction ledger, the sub-agents and ``compare``'s table.

A view: it renders what the session and request model computed (``inspect``'s summary,
``requests``' and ``compare``'s reports, the session's statuses and ledger); it computes none
of it. Headless: imports neither Textual nor an SDK."""

from ctxview.html.report import build_report

__all__ = ["build_report"]
