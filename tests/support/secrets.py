"""The secrets corpus: fake secrets of real shapes, and look-alikes that are not secrets.

``secrets_corpus/secrets.txt`` holds entries ``=== kind`` then a text whose one secret is marked
``«...»``; ``lookalikes.txt`` holds ``=== what it is`` then a text with no secret in it. The
random parts were drawn from a seeded generator: none is a real credential.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

CORPUS = Path(__file__).parent / "secrets_corpus"


@dataclass(frozen=True)
class Secret:
    kind: str
    before: str
    secret: str
    after: str

    @property
    def text(self) -> str:
        return self.before + self.secret + self.after

    @property
    def redacted(self) -> str:
        """What redaction must give: the secret replaced, nothing else changed."""
        return f"{self.before}[REDACTED:{self.kind}]{self.after}"


def _entries(name: str) -> list[tuple[str, str]]:
    entries: list[tuple[str, list[str]]] = []
    for line in (CORPUS / name).read_text(encoding="utf-8").split("\n"):
        if line.startswith("=== "):
            entries.append((line[4:], []))
        elif entries:
            entries[-1][1].append(line)
    return [(head, "\n".join(lines).removesuffix("\n")) for head, lines in entries]


def secrets() -> list[Secret]:
    found = []
    for kind, text in _entries("secrets.txt"):
        before, rest = text.split("«", 1)
        secret, after = rest.split("»", 1)
        found.append(Secret(kind, before, secret, after))
    return found


def lookalikes() -> list[tuple[str, str]]:
    """(what it is, text) pairs."""
    return _entries("lookalikes.txt")
