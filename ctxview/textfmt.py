"""Small text formats shared by the CLI and the app (headless)."""

from __future__ import annotations


def fmt_tokens(n: int) -> str:
    """1234 -> "1.2k", 45678 -> "46k", 2_500_000 -> "2.5M"."""
    if n >= 1_000_000:
        return f"{n / 1_000_000:.1f}M"
    if n >= 10_000:
        return f"{n / 1000:.0f}k"
    if n >= 1000:
        return f"{n / 1000:.1f}k"
    return str(n)


def id_ranges(ids: list[int], max_parts: int | None = None) -> str:
    """[1, 2, 3, 7] -> "#1–#3, #7"; with max_parts, the middle runs become "…"."""
    if not ids:
        return ""
    parts: list[str] = []
    start = prev = ids[0]
    for i in [*ids[1:], None]:
        if i is not None and i == prev + 1:
            prev = i
            continue
        parts.append(f"#{start}" if start == prev else f"#{start}–#{prev}")
        if i is not None:
            start = prev = i
    if max_parts is not None and len(parts) > max_parts:
        parts = [*parts[: max_parts - 1], "…", parts[-1]]
    return ", ".join(parts)
