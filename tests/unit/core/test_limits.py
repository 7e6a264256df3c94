"""The context window of each model, and the problem a window over it is."""

from __future__ import annotations


def test_context_sizes_and_the_over_context_problem() -> None:
    """The one rule the sidebar's verdict, inspect and compare call."""
    from ctxview.core.limits import context_problem, context_size

    # the table, by the names sessions carry (dated ids, Claude Code's [1m] variant)
    sizes = {
        "claude-sonnet-5-5": 1_000_000,
        "claude-opus-4-6": 1_000_000,
        "claude-opus-4-8-20260528": 1_000_000,
        "claude-haiku-4-5-20251001": 200_000,
        "claude-sonnet-4-5": 200_000,
        "claude-sonnet-4-5[1m]": 1_000_000,
        "claude-opus-4-0": 200_000,
        "some-new-model": 200_000,
        None: 200_000,
    }
    assert {m: context_size(m) for m in sizes} == sizes

    size = context_size("claude-sonnet-5-5")
    assert context_problem(size, "claude-sonnet-5-5") is None
    p = context_problem(size + 1, "claude-sonnet-5-5")
    assert p is not None and (p.code, p.severity) == ("over_context_window", "error")
