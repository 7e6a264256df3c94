"""Secrets out of text before it leaves the machine: API keys, tokens, private keys, passwords.

:func:`redact_text` replaces every secret it finds in a string by ``[REDACTED:kind]``;
:func:`redact_value` does it to every string of a JSON value (dict keys kept, the structure
unchanged); both return what they replaced as :class:`Redactions` (a count per kind) and never
change their input.

What is a secret is :mod:`ctxview.core.secret_scan`'s to say (detect-secrets' plugins and a
few of our own); a string under a JSON key that names a secret (``{"password": "…"}``) is one
as well.

Redacting twice gives what redacting once gave: a span touching a ``[REDACTED:...]`` already in
the text is left alone, and no detector matches the marker.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ctxview.core.secret_scan import MARKER_RE, find_secrets, is_secret_value, names_a_secret

__all__ = [
    "MARKER",
    "MARKER_RE",
    "RedactMemo",
    "Redactions",
    "changed_thinking",
    "redact_text",
    "redact_value",
]

#: what a secret becomes (``kind``: ``openai-key``, ``private-key``…: docs/redaction.md)
MARKER = "[REDACTED:{kind}]"


@dataclass
class Redactions:
    """What a redaction replaced: how many secrets of each kind."""

    counts: dict[str, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def add(self, kind: str, n: int = 1) -> None:
        self.counts[kind] = self.counts.get(kind, 0) + n

    def merge(self, other: Redactions) -> Redactions:
        """Add ``other``'s counts to these (in place) and return self, so both
        ``total.merge(r)`` and ``total = total.merge(r)`` sum them."""
        for kind, n in other.counts.items():
            self.add(kind, n)
        return self

    def note(self) -> str:
        """One line for a file or a terminal: ``redacted 3 secrets (2 openai-key, 1 jwt)``."""
        if not self.total:
            return "redacted 0 secrets: none found"
        parts = ", ".join(
            f"{n} {kind}" for kind, n in sorted(self.counts.items(), key=lambda kv: (-kv[1], kv[0]))
        )
        noun = "secret" if self.total == 1 else "secrets"
        return f"redacted {self.total} {noun} ({parts})"

    def to_json(self) -> dict[str, Any]:
        """The field a JSON output carries: ``{"total": 3, "counts": {...}, "note": "..."}``."""
        return {
            "total": self.total,
            "counts": dict(sorted(self.counts.items())),
            "note": self.note(),
        }


def redact_text(text: str) -> tuple[str, Redactions]:
    """``text`` with every secret found replaced by ``[REDACTED:kind]``, and what was replaced."""
    redactions = Redactions()
    return _replaced(text, redactions), redactions


#: scans of a text at most: a secret that overlapped one replaced (two written without a
#: separator) is found by the next scan of the redacted text
_PASSES = 4


def _replaced(text: str, into: Redactions) -> str:
    """``text`` redacted, what was added to ``into`` (the text itself when nothing was found).
    Scanned again while a scan finds something, so redacting the result finds nothing more."""
    for _ in range(_PASSES):
        found = find_secrets(text)
        if not found:
            break
        out: list[str] = []
        at = 0
        for start, end, kind in found:
            out.append(text[at:start])
            out.append(MARKER.format(kind=kind))
            into.add(kind)
            at = end
        out.append(text[at:])
        text = "".join(out)
    return text


class RedactMemo:
    """Texts already redacted, for a caller that sees the same texts again and again (the
    proxy's recording: every request of a conversation repeats its history): a text is looked
    up instead of scanned. Bounded: past ``max_chars`` of texts held, the oldest go."""

    #: shorter texts are scanned again (cheaper than holding them)
    SHORTEST = 256

    def __init__(self, max_chars: int = 32_000_000) -> None:
        self.max_chars = max_chars
        self._held = 0
        self._texts: dict[str, tuple[str, dict[str, int]]] = {}

    def replaced(self, text: str, into: Redactions) -> str:
        """As :func:`_replaced`, looked up when seen before."""
        if len(text) < self.SHORTEST:
            return _replaced(text, into)
        known = self._texts.get(text)
        if known is None:
            found = Redactions()
            new = _replaced(text, found)
            self._texts[text] = (new, found.counts)
            self._held += len(text)
            while self._held > self.max_chars and self._texts:
                oldest = next(iter(self._texts))
                self._held -= len(oldest)
                del self._texts[oldest]
            into.merge(found)
            return new
        for kind, n in known[1].items():
            into.add(kind, n)
        return known[0]


def redact_value(value: Any, memo: RedactMemo | None = None) -> tuple[Any, Redactions]:
    """A JSON value with every string redacted (dict keys kept as they are), as a new value:
    ``value`` itself is never changed. Numbers, booleans and ``None`` pass through. ``memo``:
    texts redacted before, looked up rather than scanned again."""
    total = Redactions()
    one = memo.replaced if memo is not None else _replaced

    def walk(v: Any) -> Any:
        if isinstance(v, str):
            return one(v, total)
        if isinstance(v, dict):
            return {
                k: named(k, item) if isinstance(item, str) else walk(item) for k, item in v.items()
            }
        if isinstance(v, list):
            return [walk(item) for item in v]
        if isinstance(v, tuple):
            return tuple(walk(item) for item in v)
        return v

    def named(key: Any, v: str) -> str:
        # ``{"password": "hunter2hunter"}`` (a tool's input, a config read as JSON): the key
        # says what the value is, as the name of a ``.env`` line does
        new: str = walk(v)
        if isinstance(key, str) and names_a_secret(key) and new == v and is_secret_value(v):
            total.add("secret-assignment")
            return MARKER.format(kind="secret-assignment")
        return new

    return walk(value), total


def changed_thinking(before: Any, after: Any) -> list[str]:
    """Where a redaction changed a thinking block of a request body's messages
    (``messages.N.content.M``): the API checks a thinking block against its signature, and
    rejects a changed one (``Invalid `signature` in `thinking` block``)."""
    places: list[str] = []
    old = before.get("messages") if isinstance(before, dict) else before
    new = after.get("messages") if isinstance(after, dict) else after
    if not isinstance(old, list) or not isinstance(new, list):
        return places
    for n, (a, b) in enumerate(zip(old, new, strict=False)):
        blocks_a = a.get("content") if isinstance(a, dict) else None
        blocks_b = b.get("content") if isinstance(b, dict) else None
        if not isinstance(blocks_a, list) or not isinstance(blocks_b, list):
            continue
        for m, (x, y) in enumerate(zip(blocks_a, blocks_b, strict=False)):
            if isinstance(x, dict) and x.get("type") == "thinking" and x != y:
                places.append(f"messages.{n}.content.{m}")
    return places
