"""ctxview.core.providers.gemini_vocabulary: Gemini's own vocabulary counts the text where the
user has one; a file that cannot be used is named with why, and the estimate stays by words."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxview.core.providers import gemini_vocabulary
from ctxview.core.providers.gemini import PROVIDER, text_tokens
from ctxview.core.providers.gemini_vocabulary import VocabularyError, load

HI = [{"role": "user", "content": [{"type": "text", "text": "Hi"}]}]
CAPITAL = [
    {"role": "user", "content": [{"type": "text", "text": "What is the capital of France?"}]}
]


def _small_tokenizer(path: Path) -> Path:
    """A real tokenizer.json of another vocabulary (three words): not Gemma 3's."""
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel
    from tokenizers.pre_tokenizers import Whitespace

    tokenizer = Tokenizer(WordLevel({"[UNK]": 0, "hello": 1, "world": 2}, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = Whitespace()
    tokenizer.save(str(path))
    return path


def _use(monkeypatch: pytest.MonkeyPatch, value: str) -> gemini_vocabulary.VocabularyState:
    monkeypatch.setenv(gemini_vocabulary.ENV, value)
    gemini_vocabulary.reset()
    return gemini_vocabulary.active()


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(VocabularyError, match=r"nowhere\.json: no such file"):
        load(tmp_path / "nowhere.json")


def test_a_fifo_is_refused_without_waiting_for_a_writer(tmp_path: Path) -> None:
    import os

    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    with pytest.raises(VocabularyError, match=r"pipe\.json: not a regular file"):
        load(fifo)


def test_a_file_too_big_for_a_vocabulary_is_refused_unread(tmp_path: Path) -> None:
    huge = tmp_path / "huge.json"
    with huge.open("wb") as f:  # sparse: no disk, and never read
        f.truncate(gemini_vocabulary.MAX_FILE_BYTES + 1)
    with pytest.raises(VocabularyError, match=r"huge\.json: 134,217,729 bytes, more than"):
        load(huge)


def test_a_file_that_is_no_tokenizer_is_named(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"not": "a tokenizer"}))
    with pytest.raises(VocabularyError, match=r"bad\.json: not a tokenizer\.json"):
        load(bad)


def test_another_models_vocabulary_is_refused(tmp_path: Path) -> None:
    # a three-word vocabulary would count every word as one token without an error
    path = _small_tokenizer(tmp_path / "small.json")
    with pytest.raises(VocabularyError, match="a vocabulary of 3 pieces, not Gemma 3's 262,144"):
        load(path)


def test_an_unusable_file_leaves_the_estimate_by_words_and_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    by_words = text_tokens("What is the capital of France?")
    state = _use(monkeypatch, str(_small_tokenizer(tmp_path / "small.json")))
    assert state.vocabulary is None and state.problem is not None
    assert text_tokens("What is the capital of France?") == by_words
    basis = PROVIDER.tokens.of("gemini-2.5-flash", "gemini", None).basis
    assert "Gemini's vocabulary not used: " in basis and "small.json" in basis


def test_the_data_folder_is_looked_in_when_no_file_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(gemini_vocabulary, "default_path", lambda: tmp_path / "gemini.json")
    monkeypatch.delenv(gemini_vocabulary.ENV)
    gemini_vocabulary.reset()
    assert gemini_vocabulary.active() == gemini_vocabulary.VocabularyState(None)  # none there
    _small_tokenizer(tmp_path / "gemini.json")
    gemini_vocabulary.reset()
    assert "gemini.json" in (gemini_vocabulary.active().problem or "")


def test_an_empty_variable_turns_the_vocabulary_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(gemini_vocabulary, "default_path", lambda: tmp_path / "gemini.json")
    _small_tokenizer(tmp_path / "gemini.json")
    assert _use(monkeypatch, "") == gemini_vocabulary.VocabularyState(None)


@pytest.mark.usefixtures("with_gemini_vocabulary")
def test_the_vocabulary_counts_what_gemini_billed() -> None:
    """Recorded: "Hi" to Gemini 2.5 Flash billed 2 (its token and the Content's), "What is the
    capital of France?" to Gemini 2.0 Flash billed its 7 tokens alone."""
    assert text_tokens("Hi") == 1
    assert text_tokens("What is the capital of France?") == 7
    flash25 = PROVIDER.tokens.of("gemini-2.5-flash", "gemini", None)
    assert flash25.request_tokens(HI, None, None, {}) == 2
    flash20 = PROVIDER.tokens.of("gemini-2.0-flash", "gemini", None)
    assert flash20.request_tokens(CAPITAL, None, None, {}) == 7
    assert flash25.basis.startswith("text counted by Gemini's vocabulary (")


def test_the_request_log_says_which_count_it_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ctxview.core.requests import simulate
    from ctxview.sessions.readers import load_session
    from tests.support.paths import ACCEPTANCE

    body = sorted((ACCEPTANCE / "unseen6" / "gemini").glob("*_req1.json"))[0]
    assert not [n for n in simulate(load_session(body)).notes if n.startswith("tokens:")]
    _use(monkeypatch, str(tmp_path / "missing.json"))
    notes = simulate(load_session(body)).notes
    assert any(
        n.startswith("tokens: Gemini's vocabulary not used") and "missing.json: no such file" in n
        for n in notes
    )
