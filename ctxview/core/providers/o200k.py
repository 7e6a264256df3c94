"""Exact token counts of text in ``o200k_base``, the encoding of every current OpenAI model
(GPT-4o, GPT-4.1, GPT-5, the o-series).

The vocabulary comes from the ``toktok-rs`` package (MIT; token ids identical to OpenAI's
``tiktoken``), which compiles it into its extension module: nothing is downloaded at run time,
so the count works offline, in tests and in CI. ``tiktoken`` itself fetches the encoding's file
from the network on first use, which ctxview cannot rely on.

The encoding is loaded on the first count (about half a second, 33 MB), never at import.
"""

from __future__ import annotations

from functools import cache
from typing import Any

ENCODING = "o200k_base"


@cache
def _encoding() -> Any:
    import toktok  # type: ignore[import-untyped]

    # ``_encoding`` is the loaded tokenizer toktok's public ``batch_count`` calls; counting one
    # string through it is 25x faster than through ``batch_count`` (no thread pool per call),
    # which matters for a session of 100,000 messages counted message by message
    return toktok._encoding(ENCODING)


def count(text: str) -> int:
    """Tokens of ``text`` as ordinary text (a special token's spelling in it is plain text, as
    the API reads user content)."""
    if not text:
        return 0
    return int(_encoding().count(text))
