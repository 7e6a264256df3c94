"""Gemini's own vocabulary, where the user has it: exact token counts of text in place of the
word-count estimate.

Gemini 2.x and 3.x count text with the Gemma 3 vocabulary (262,144 pieces; the one google-genai's
``LocalTokenizer`` downloads at run time). ctxview does not ship it (it is Google's, under the
Gemma terms, and 33 MB); a user who has a copy as a Hugging Face ``tokenizer.json`` names it in
``$CTXVIEW_GEMINI_VOCABULARY`` or puts it at :func:`default_path`, with the ``tokenizers``
package installed (``pip install 'ctxview[gemini]'``). docs/gemini.md says where to get one and
what it changes (the figures of ``benchmarks.gemini_tokens`` with and without it).

Read once, on the first count, never from a view: a file that cannot be read leaves the estimate
as it was and says why in the token model's basis and note (the request log's notes:
:func:`active`), never an exception out of a count.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import platformdirs

#: the environment variable naming the vocabulary file (a Hugging Face ``tokenizer.json``)
ENV = "CTXVIEW_GEMINI_VOCABULARY"
#: the file name looked for in ctxview's data folder when the variable is not set
FILE_NAME = "gemini-tokenizer.json"
#: a vocabulary the size of Gemma 3's: another model's tokenizer.json would count wrongly
#: without an error, so a file whose vocabulary is not this size is refused
GEMMA3_SIZE = 262_144
#: the largest file read (Gemma 3's tokenizer.json is 33 MB and takes ten times that in memory):
#: a bigger one is no vocabulary of this size, and reading it whole could exhaust the memory
MAX_FILE_BYTES = 128 * 1024 * 1024


class VocabularyError(Exception):
    """A vocabulary file that cannot be used, with the file named and why."""


def default_path() -> Path:
    """Where ctxview looks when ``$CTXVIEW_GEMINI_VOCABULARY`` is not set."""
    return platformdirs.user_data_path("ctxview") / FILE_NAME


@dataclass(frozen=True, slots=True)
class Vocabulary:
    """A loaded vocabulary: :meth:`count` is the number of tokens of a text, no special tokens
    (the beginning-of-text token is no part of a prompt's count)."""

    path: Path
    tokenizer: Any

    def count(self, text: str) -> int:
        return len(self.tokenizer.encode(text, add_special_tokens=False).ids)


def load(path: Path) -> Vocabulary:
    """The vocabulary in ``path`` (a Hugging Face ``tokenizer.json`` of Gemma 3's vocabulary);
    :class:`VocabularyError` naming the file when it cannot be used."""
    try:
        from tokenizers import Tokenizer
    except ImportError as exc:
        raise VocabularyError(
            f"{path}: reading it needs the tokenizers package (pip install 'ctxview[gemini]')"
        ) from exc
    if not path.exists():
        raise VocabularyError(f"{path}: no such file")
    if not path.is_file():  # a folder, a FIFO (reading one would wait for a writer)
        raise VocabularyError(f"{path}: not a regular file")
    size_bytes = path.stat().st_size
    if size_bytes > MAX_FILE_BYTES:
        raise VocabularyError(
            f"{path}: {size_bytes:,} bytes, more than a vocabulary's {MAX_FILE_BYTES:,}"
        )
    try:
        tokenizer = Tokenizer.from_file(str(path))
    except Exception as exc:  # the library raises its own Exception for any bad file
        first = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
        raise VocabularyError(f"{path}: not a tokenizer.json ({first})") from exc
    size = tokenizer.get_vocab_size(with_added_tokens=False)
    if size != GEMMA3_SIZE:
        raise VocabularyError(
            f"{path}: a vocabulary of {size:,} pieces, not Gemma 3's {GEMMA3_SIZE:,}"
        )
    return Vocabulary(path, tokenizer)


@dataclass(frozen=True, slots=True)
class VocabularyState:
    """The vocabulary in use (None: the word-count estimate) and, when a file was named or
    found but could not be used, why."""

    vocabulary: Vocabulary | None
    problem: str | None = None


@functools.cache
def active() -> VocabularyState:
    """The vocabulary named by ``$CTXVIEW_GEMINI_VOCABULARY`` (an empty value: none, the
    estimate by words), else the one at :func:`default_path` if there is one; read once."""
    named = os.environ.get(ENV)
    if named is not None and not named.strip():
        return VocabularyState(None)
    path = Path(named).expanduser() if named else default_path()
    if named is None and not path.exists():
        return VocabularyState(None)
    try:
        return VocabularyState(load(path))
    except VocabularyError as exc:
        return VocabularyState(None, str(exc))


def reset() -> None:
    """Forget the vocabulary read, so the next count reads the environment again (tests, and a
    long-running process whose user installed one)."""
    active.cache_clear()
