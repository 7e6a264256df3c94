"""Small text formats shared by the CLI and the app (headless).

Untrusted text (sessions, model replies) goes through :func:`visible` before it reaches a
terminal: C0/C1 controls, DEL and bidi overrides become visible symbols, so an ANSI or OSC
sequence in a message is shown, never executed.
"""

from __future__ import annotations

import json
import re
from typing import Any


def fmt_usd(v: float | None, none: str = "—") -> str:
    """Money as every view shows it: ``$0.0225`` under a dollar, ``$15,606.00`` from one; a
    negative sum (a strategy that saves less than nothing) ``-$0.0001``, ``-$15.00``."""
    if v is None:
        return none
    sign, v = ("-", -v) if v < 0 else ("", v)
    return f"{sign}${v:.4f}" if v < 1 else f"{sign}${v:,.2f}"


def fmt_total_usd(totals: dict[str, Any]) -> str:
    """A request log's total cost: ``$0.0225``, ``$0.0005 + 1 unpriced`` when some requests have
    no price (the known sum is not dropped), ``—`` when none has one."""
    if totals["cost_usd"] is not None or not totals.get("priced_cost_usd"):
        return fmt_usd(totals["cost_usd"])
    return f"{fmt_usd(totals['priced_cost_usd'])} + {totals['unpriced_requests']:,} unpriced"


def fmt_tokens(n: int) -> str:
    """1234 -> "1.2k", 45678 -> "46k", 2_500_000 -> "2.5M", 6_296_200_000 -> "6.3B" (each unit
    from where the smaller one would round up to 1000: 999_999 -> "1.0M", not "1000k")."""
    if n >= 999_950_000:
        return f"{n / 1_000_000_000:.1f}B"
    if n >= 999_500:
        return f"{n / 1_000_000:.1f}M"
    if n >= 9_950:
        return f"{n / 1000:.0f}k"
    if n >= 1000:
        return f"{n / 1000:.1f}k"
    return str(n)


def plural(n: int, word: str, shown: str | None = None) -> str:
    """``1 token``, ``2 tokens``, ``~1.2k tokens`` (``shown`` replaces the number's text)."""
    return f"{n if shown is None else shown} {word}{'' if n == 1 else 's'}"


def counted(n: int, word: str) -> str:
    """``1 message``, ``1,024 messages``: :func:`plural` with the number's thousands marked."""
    return plural(n, word, f"{n:,}")


def tail_text(text: str, limit: int) -> str:
    """The end of ``text`` in at most ``limit`` characters, a leading ``…`` marking a cut (a
    path's last parts say most: ``…worktrees/spotter-gqc``)."""
    return text if len(text) <= limit else "…" + text[len(text) - limit + 1 :]


def tokens_text(n: int) -> str:
    """``~1 token``, ``~310 tokens``, ``~1.2k tokens``."""
    return plural(n, "token", "~" + fmt_tokens(n))


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


_TABLE: dict[int, str] = {c: chr(0x2400 + c) for c in range(0x20) if c not in (0x09, 0x0A)}
_TABLE[0x7F] = "␡"
_TABLE.update({c: f"\\x{c:02x}" for c in range(0x80, 0xA0)})
# bidi embedding/override/isolate controls can reorder what is displayed: show them
_TABLE.update(
    {c: f"⟨U+{c:04X}⟩" for c in (*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F)}
)
# a lone surrogate (a file name's undecodable byte, kept by Python as U+DC80..U+DCFF; an
# unpaired escape in a transcript) cannot be written as UTF-8: the byte is shown as \xNN
_TABLE.update({c: f"\\x{c - 0xDC00:02x}" for c in range(0xDC80, 0xDD00)})
_TABLE.update({c: f"⟨U+{c:04X}⟩" for c in range(0xD800, 0xE000) if c not in _TABLE})
_ONE_LINE = dict(_TABLE)
_ONE_LINE[0x0A] = "⏎"
_ONE_LINE[0x09] = " "


def visible(text: str) -> str:
    """Control characters made visible (newline and tab kept)."""
    if not text.isascii() and _NEEDS_VISIBLE.search(text) is None:
        # str.translate walks non-ASCII text a character at a time (20× slower than this scan)
        return text
    return text.translate(_TABLE)


def one_line(text: str, limit: int = 200) -> str:
    """A single-line preview: newlines shown as ⏎, runs of spaces collapsed."""
    s = text[: limit * 2].translate(_ONE_LINE)
    s = " ".join(s.split())
    return s[:limit]


# characters a POSIX shell word may hold unquoted (shlex.quote's set)
_SHELL_SAFE = re.compile(r"[\w@%+=:,./-]+", re.ASCII)
#: what visible() keeps but a pasted word must not hold raw (a newline or tab ends or splits
#: the command; the Unicode separators break the line on some terminals)
_LINE_BREAKS = frozenset("\n\t\u2028\u2029")


def shell_word(text: str) -> str:
    """``text`` (a path) as one word a shell takes back unchanged, and safe on a terminal: bare
    when it needs no quotes, in single quotes when it holds spaces or shell characters, and as
    ``$'…'`` (bash, zsh, ksh) when it holds a character a terminal would act on or that is not
    UTF-8: controls, DEL, bidi controls and line separators as ``\\xNN`` / ``\\uNNNN``, an
    undecodable byte of a file name (a lone surrogate ``U+DC80..U+DCFF``) as the byte
    ``\\xNN`` it was."""
    if text and _SHELL_SAFE.fullmatch(text):
        return text
    if _NEEDS_VISIBLE.search(text) is None and not _LINE_BREAKS.intersection(text):
        return "'" + text.replace("'", "'\"'\"'") + "'"
    out = []
    for ch in text:
        c = ord(ch)
        if ch in "\\'":
            out.append("\\" + ch)
        elif 0xDC80 <= c < 0xDD00:
            out.append(f"\\x{c - 0xDC00:02x}")
        elif c < 0x20 or c == 0x7F:
            out.append(f"\\x{c:02x}")
        elif c in _TABLE or ch in _LINE_BREAKS:
            out.append(f"\\u{c:04x}")
        else:
            out.append(ch)
    return "$'" + "".join(out) + "'"


# JSON (and TOML) output: C1 controls, DEL, bidi controls and the Unicode line/paragraph
# separators are written as \uXXXX escapes, so `cat report.json` cannot drive the terminal.
# These characters only ever occur inside strings there, where the escape is valid.
_JSON_ESCAPED_CODES = (
    0x7F,
    *range(0x80, 0xA0),
    *range(0x202A, 0x202F),
    *range(0x2066, 0x206A),
    0x200E,
    0x200F,
    0x2028,
    0x2029,
    # lone surrogates: not UTF-8 (a raw byte of a file name reached the output), valid
    # as JSON escapes (``json.loads`` gives the same string back)
    *range(0xD800, 0xE000),
)


def _char_class(codes: list[int]) -> str:
    """A regex character class of these code points written as ranges: a class of two thousand
    single characters takes milliseconds to compile, on every start of the app."""
    runs: list[list[int]] = []
    for c in sorted(codes):
        if runs and c == runs[-1][1] + 1:
            runs[-1][1] = c
        else:
            runs.append([c, c])
    return (
        "["
        + "".join(
            re.escape(chr(a)) if a == b else f"{re.escape(chr(a))}-{re.escape(chr(b))}"
            for a, b in runs
        )
        + "]"
    )


_JSON_ESCAPED = re.compile(_char_class(list(_JSON_ESCAPED_CODES)))
_NEEDS_VISIBLE = re.compile(_char_class(list(_TABLE)))


def _json_escape(m: re.Match[str]) -> str:
    return f"\\u{ord(m.group()):04x}"


def escape_controls(text: str) -> str:
    """C1 controls, DEL and bidi overrides in serialised JSON/TOML as ``\\uXXXX`` escapes."""
    if text.isascii():
        return text.replace("\x7f", "\\u007f") if "\x7f" in text else text
    # a regex scan, not str.translate (which walks non-ASCII text a character at a time, and
    # whose table of two thousand escapes would be built on every start)
    return _JSON_ESCAPED.sub(_json_escape, text)


def json_text(obj: Any, *, indent: int | None = None) -> str:
    """``obj`` as JSON for a terminal or a file: UTF-8 text kept, every control character and
    bidi override escaped, NaN/Infinity refused (ValueError)."""
    return escape_controls(json.dumps(obj, ensure_ascii=False, allow_nan=False, indent=indent))
