"""What a Codex rollout's hosted web searches were billed, measured by its recorded usage."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ctxview.core.providers.openai_tokens import WEB_SEARCH_RESULT_TOKENS
from ctxview.core.requests import simulate
from ctxview.core.requests.points import calibrate
from ctxview.sessions import load_session


def _line(kind: str, payload: dict[str, Any]) -> str:
    return json.dumps({"timestamp": "2026-07-01T00:00:00Z", "type": kind, "payload": payload})


def _item(role: str, text: str) -> str:
    return _line("response_item", {"type": "message", "role": role, "content": text})


def _search(query: str) -> str:
    action = {"type": "search", "query": query}
    return _line(
        "response_item", {"type": "web_search_call", "status": "completed", "action": action}
    )


def _count(prompt: int, total: int) -> str:
    usage = {"input_tokens": prompt, "cached_input_tokens": 0, "output_tokens": 5}
    info = {"total_token_usage": {"input_tokens": total}, "last_token_usage": usage}
    return _line("event_msg", {"type": "token_count", "info": info})


def _rollout(tmp_path: Path, results: int) -> Path:
    """Three requests, a response that ran two searches (its own request billed their
    ``results`` each), then four more requests holding them."""
    lines = [_line("session_meta", {"id": "s"}), _line("turn_context", {"model": "gpt-5.5"})]
    total, prompt = 0, 10_000
    for k in range(3):
        lines += [_item("user", f"q{k}"), _item("assistant", f"a{k}")]
        prompt += 10
        total += prompt
        lines.append(_count(prompt, total))
    lines += [_item("user", "look it up"), _search("x"), _search("y"), _item("assistant", "found")]
    prompt += 10 + 2 * results  # the response that searched: its own request billed them
    total += prompt
    lines.append(_count(prompt, total))
    for k in range(4):
        lines += [_item("user", f"r{k}"), _item("assistant", f"b{k}")]
        prompt += 10
        total += prompt
        lines.append(_count(prompt, total))
    path = tmp_path / "rollout-s.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_each_search_is_counted_at_what_the_usage_shows_it_billed(tmp_path: Path) -> None:
    s = load_session(_rollout(tmp_path, 6_800))
    cal = calibrate(s)
    assert cal.search_tokens is not None
    searches = [
        i for i, m in enumerate(s.metas) if (m.get("wire") or {}).get("type") == "web_search_call"
    ]
    assert sorted(cal.search_tokens) == searches
    # within the items' own tokens of the truth (the messages between are counted, not known)
    assert all(abs(v - 6_800) < 60 for v in cal.search_tokens.values()), cal.search_tokens
    log = simulate(s)
    after = [r for r in log.requests if r.recorded_total][-4:]
    assert all(abs(r.input_tokens - r.recorded_total) < 60 for r in after), [
        (r.input_tokens, r.recorded_total) for r in after
    ]
    # the request that ran them was billed their results beyond its window, too
    own = log.requests[3]
    assert own.recorded_total is not None
    assert abs(own.input_tokens - own.recorded_total) < 120, (own.input_tokens, own.recorded_total)
    assert cal.statics is None or len(set(cal.statics.values())) == 1  # nothing fell after it


def test_searches_no_later_usage_measures_keep_the_constant(tmp_path: Path) -> None:
    path = _rollout(tmp_path, 6_800)
    lines = path.read_text().splitlines()
    searched = max(k for k, ln in enumerate(lines) if "web_search_call" in ln)
    # no request holding the searches recorded its usage
    kept = [ln for k, ln in enumerate(lines) if k < searched or "token_count" not in ln]
    path.write_text("\n".join(kept) + "\n")
    s = load_session(path)
    assert calibrate(s).search_tokens is None
    log = simulate(s)
    # each search counts the provider's constant beyond its item, from the request that ran
    # them on (billed their results beyond its window)
    grown = log.requests[3].input_tokens - log.requests[2].input_tokens
    assert abs(log.requests[4].input_tokens - log.requests[3].input_tokens) < 200
    assert 2 * WEB_SEARCH_RESULT_TOKENS <= grown < 2 * WEB_SEARCH_RESULT_TOKENS + 200, grown
