"""A seeded mutator of JSON and JSONL documents, for the fuzz tests: values replaced by ones known
to break naive readers or to carry hostile text, keys and items dropped, raw splices of JSON
Python cannot represent, byte-level damage (truncation, NUL, a BOM, invalid UTF-8)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

#: values known to break naive readers, or plausible hostile content
NASTY: list[Any] = [
    None,
    True,
    [],
    {},
    "",
    0,
    -1,
    2**80,
    1.5e308,
    "\x1b]0;pwned\x07\x1b[2J",
    "\x9b31m\x85\u202e\u2066",
    "toolu_\x1b]52;c;aGVsbG8=\x07",
    "[@click=app.quit]x[/]",
    "a" * 5000,
    {"type": "weird\x1b[2J"},
    {"type": "tool_use"},
    {"type": "tool_result"},
    {"type": "image", "source": {}},
    [{"type": "text"}],
    {"role": "user"},
    {"role": "assistant", "content": None},
]
#: raw text splices: the JSON they make is not representable as a Python value above
RAW = ["NaN", "-Infinity", "9" * 5000, "[" * 300 + "]" * 300, '{"a":' * 250 + "1" + "}" * 250]


def _paths(v: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(v, dict):
        for k, x in v.items():
            out += _paths(x, (*prefix, k))
    elif isinstance(v, list):
        for i, x in enumerate(v):
            out += _paths(x, (*prefix, i))
    return out


def _set(root: Any, path: tuple[Any, ...], value: Any) -> Any:
    if not path:
        return value
    node = root
    for p in path[:-1]:
        node = node[p]
    node[path[-1]] = value
    return root


def mutate(text: str, rnd: random.Random, n: int) -> str:
    """n mutations of a JSON or JSONL document: values replaced, keys dropped, raw splices,
    byte-level damage."""
    jsonl = "\n" in text.strip() and text.lstrip().startswith("{") and text.count("\n{") > 0
    docs = text.splitlines() if jsonl else [text]
    for _ in range(n):
        k = rnd.randrange(len(docs))
        doc = docs[k]
        op = rnd.random()
        try:
            data = json.loads(doc) if doc.strip() else None
        except ValueError:
            data = None
        if data is not None and op < 0.55:
            paths = _paths(data)
            path = rnd.choice(paths)
            if op < 0.4:
                data = _set(data, path, rnd.choice(NASTY))
            elif path and isinstance(data, (dict, list)):  # drop a key / item
                node = data
                for p in path[:-1]:
                    node = node[p]
                del node[path[-1]]
            docs[k] = json.dumps(data, ensure_ascii=rnd.random() < 0.5)
        elif op < 0.8 and doc:
            # a raw splice where a value could start
            spots = [i for i, c in enumerate(doc) if c in ":[,"] or [0]
            i = rnd.choice(spots) + 1
            j = i
            while j < len(doc) and doc[j] not in ",}]":
                j += 1
            docs[k] = doc[:i] + rnd.choice(RAW) + doc[j:]
        elif doc:
            try:
                b = bytearray(doc.encode("utf-8", errors="surrogateescape"))
            except UnicodeEncodeError:
                b = bytearray(doc.encode("utf-8", errors="surrogatepass"))
            i = rnd.randrange(len(b))
            choice = rnd.random()
            if choice < 0.3:
                b = b[:i]  # truncated
            elif choice < 0.6:
                b[i] = rnd.choice(b'{}[]",:\\\x00\x1b\x85\xff')
            else:
                b[i:i] = rnd.choice([b"\n", b"\xef\xbb\xbf", b"\x00", "\u202e".encode()])
            docs[k] = b.decode("utf-8", errors="surrogateescape")
    out = "\n".join(docs)
    return out


def write_mutated(path: Path, text: str) -> None:
    """The mutated text as bytes: damaged bytes and lone surrogates as they were made."""
    try:
        data = text.encode("utf-8", errors="surrogateescape")  # the damaged bytes, as they were
    except UnicodeEncodeError:
        data = text.encode("utf-8", errors="surrogatepass")  # lone surrogates: invalid UTF-8
    path.write_bytes(data)
