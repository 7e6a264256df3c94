"""The prompt-cache rules as data (``ctxview.core.cache_rules``) and the cache step reading them:
minimums per model, whether a request asks for caching at all, breakpoints, the TTL's grace, a
first request that read a warm cache, the recorded breaks ctxview did not predict and the API's
own cache diagnostics."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ctxview.core import cache_rules
from ctxview.core.cache_rules import (
    API_REASON,
    API_REASONS,
    INVALIDATES,
    PARTS,
    cache_mode,
    min_cacheable,
    minimum,
)
from ctxview.core.limits import MODEL_CONTEXT
from ctxview.core.pricing import PRICES, PriceTable
from ctxview.core.requests import BREAK_REASONS, simulate
from ctxview.core.requests.cache import breakpoint_cut, window_cut
from ctxview.core.usage import api_diagnosis
from ctxview.sessions.model import LoadedSession
from tests.support.cli import run
from tests.unit.core.test_requests import BIG, convo, ts

MODEL = "claude-sonnet-4-5"


# -- the data ----------------------------------------------------------------------------------
def test_documented_minimums() -> None:
    assert min_cacheable("claude-opus-4-1") == (1024, True)
    assert min_cacheable("claude-sonnet-4-5-20250929") == (1024, True)
    assert min_cacheable("claude-opus-4-5") == (4096, True)
    assert min_cacheable("claude-haiku-4-5-20251001") == (4096, True)
    assert min_cacheable("claude-3-5-haiku-20241022") == (2048, True)
    assert min_cacheable("claude-3-haiku-20240307") == (2048, True)


def test_every_model_ctxview_prices_or_sizes_has_a_minimum_documented_or_with_its_basis() -> None:
    for name in [*PRICES, *(m for m in MODEL_CONTEXT if m != "default")]:
        found = minimum(name)
        assert found is not cache_rules.DEFAULT_MINIMUM, name
        assert found.documented or "assumed" in found.basis, name


def test_an_unknown_model_is_an_assumption_named_in_the_notes() -> None:
    assert min_cacheable("made-up-model") == (1024, False)
    log = simulate(convo(2, model="claude-haiku-5-5"))
    assert any("'claude-haiku-5-5'" in n and "assumed 4,096" in n for n in log.notes)


def test_a_change_breaks_its_part_and_every_later_one() -> None:
    # tools -> system -> messages: a tools change loses everything, a system change the
    # system and messages, a messages change the messages
    assert PARTS == ("tools", "system", "messages")
    for change, lost in INVALIDATES.items():
        assert lost == PARTS[PARTS.index(lost[0]) :], change
    assert INVALIDATES["tools"] == PARTS and INVALIDATES["model"] == PARTS
    assert INVALIDATES["system"] == ("system", "messages")
    assert cache_rules.MAX_BREAKPOINTS == 4 and cache_rules.LOOKBACK_BLOCKS == 20
    assert cache_rules.TTL_SECONDS == {"5m": 300.0, "1h": 3600.0}


def test_every_break_reason_maps_to_an_api_reason_or_none() -> None:
    for reason in BREAK_REASONS:
        assert reason in API_REASON
        assert API_REASON[reason] is None or API_REASON[reason] in API_REASONS
    assert API_REASON["system"] == "system_changed" and API_REASON["tools"] == "tools_changed"
    assert API_REASON["model"] == "model_changed" and API_REASON["evicted"] == "messages_changed"


# -- whether a request asks for caching ------------------------------------------------------
def _body(**kw: Any) -> LoadedSession:
    msgs = kw.pop("messages", [{"role": "user", "content": BIG}])
    return LoadedSession(
        "req.json",
        "request",
        msgs,
        [{} for _ in msgs],
        system=kw.pop("system", None),
        tools=kw.pop("tools", []),
        model=MODEL,
        request_params=kw.pop("params", {}),
    )


def test_cache_mode_of_each_shape() -> None:
    user = [{"role": "user", "content": "hi"}]
    marked = [{"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": {}}]}]
    top = {"cache_control": {"type": "ephemeral"}}
    assert cache_mode("request", user) == "none"
    assert cache_mode("messages", user) == "none"
    assert cache_mode("request", user, params=top) == "automatic"
    assert cache_mode("request", marked) == "breakpoints"
    assert cache_mode("request", user, system=[{"type": "text", "text": "s", **marked[0]["content"][0]}]) == "breakpoints"  # fmt: skip
    assert cache_mode("claude-code", user) == "automatic"
    assert cache_mode("ctxview", user) == "automatic"


def test_a_request_body_without_cache_control_is_priced_uncached() -> None:
    log = simulate(_body(), prices=PriceTable())
    (r,) = log.requests
    assert (r.cache_read, r.cache_write, r.uncached) == (0, 0, r.input_tokens)
    assert r.cache_break is None
    assert r.cost_usd == pytest.approx(r.input_tokens * PRICES[MODEL].input / 1e6 + r.output_tokens * PRICES[MODEL].output / 1e6)  # fmt: skip
    assert log.cache_assumption()["mode"] == "none"
    assert any("nothing cached" in n for n in log.notes)


def test_a_request_body_with_top_level_cache_control_writes_its_whole_prompt() -> None:
    (r,) = simulate(_body(params={"cache_control": {"type": "ephemeral"}})).requests
    assert r.cache_write == r.input_tokens and r.uncached == 0


def test_a_breakpoint_caches_up_to_its_block_only() -> None:
    cc = {"type": "ephemeral"}
    msgs = [
        {"role": "user", "content": [{"type": "text", "text": BIG, "cache_control": cc}]},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": BIG},
    ]
    (r,) = simulate(_body(messages=msgs)).requests
    assert 0 < r.cache_write < r.input_tokens and r.uncached == r.input_tokens - r.cache_write
    sys_only = _body(system=[{"type": "text", "text": BIG, "cache_control": cc}])
    (s,) = simulate(sys_only).requests
    assert 0 < s.cache_write < s.input_tokens  # the system prompt alone
    assert simulate(sys_only).static_tokens == s.cache_write


def test_breakpoint_cut_counts_window_messages_up_to_the_last_mark() -> None:
    marks = [2, 7]
    assert breakpoint_cut(marks, 1, 10, False) == 7  # messages 1..7
    assert breakpoint_cut(marks, 1, 10, False, first=0) == 8  # [0] + 1..7
    assert breakpoint_cut(marks, 3, 7, False) == -1  # no mark, nothing marked before
    assert breakpoint_cut(marks, 3, 7, True) == 0  # the tools or system only
    assert breakpoint_cut(marks, 3, 7, False, first=2) == 1  # the first message is marked
    assert window_cut(marks, [0, 2, 3, 9], False) == 2
    assert window_cut(marks, [0, 3], True) == 0


def test_a_bare_message_list_states_its_assumption_and_can_be_priced_as_automatic(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "list.json"
    turns = [[{"role": "user", "content": BIG}, {"role": "assistant", "content": "a"}]] * 3
    path.write_text(json.dumps([m for t in turns for m in t]))
    code, out, _ = run(capsys, "requests", str(path), "--json")
    doc = json.loads(out)
    assert doc["cache_assumption"]["mode"] == "none"
    assert any("bare message list" in n for n in doc["notes"])
    assert all(r["cache_read"] == r["cache_write"] == 0 for r in doc["requests"])
    code, out, _ = run(capsys, "requests", str(path), "--json", "--cache", "automatic")
    doc = json.loads(out)
    assert doc["cache_assumption"]["mode"] == "automatic"
    assert doc["requests"][1]["cache_read"] > 0
    code, out, _ = run(capsys, "requests", str(path))
    assert code == 0 and "nothing cached" in out


# -- the first request, the TTL ---------------------------------------------------------------
def _usage(read: int, write: int, ttl: str = "5m") -> dict[str, Any]:
    split = {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0}
    split[f"ephemeral_{ttl}_input_tokens"] = write
    return {
        "input_tokens": 3,
        "cache_read_input_tokens": read,
        "cache_creation_input_tokens": write,
        "cache_creation": split,
        "output_tokens": 5,
    }


def test_a_first_request_that_read_the_cache_is_not_a_first_break() -> None:
    s = convo(2)
    s.metas[1]["usage"] = _usage(2000, 600)
    r = simulate(s).requests[0]
    assert r.cache_break is None and r.cache_read == 2000
    assert r.recorded_miss is None
    cold = convo(2)
    cold.metas[1]["usage"] = _usage(0, 2600)
    r = simulate(cold).requests[0]
    assert r.cache_break is not None and r.cache_break.reason == "first"
    assert r.recorded_miss is not None and r.recorded_miss.reason == "first"


def test_the_ttl_of_each_write_comes_from_its_usage_split() -> None:
    s = convo(3, gaps={2: 30 * 60.0})  # half an hour between the second and third request
    for i in (1, 3, 5):
        s.metas[i]["usage"] = _usage(0, 100, "1h")
    r = simulate(s).requests
    assert r[1].ttl == "1h" and r[2].cache_break is None and r[2].cache_read > 0
    for i in (1, 3, 5):
        s.metas[i]["usage"] = _usage(0, 100, "5m")
    r = simulate(s).requests
    assert r[2].cache_break is not None and r[2].cache_break.reason == "ttl"


# -- recorded breaks -------------------------------------------------------------------------
def _recorded_session() -> LoadedSession:
    """Four requests; the third read only 1,000 tokens of the previous 40,000."""
    s = convo(4)
    for k, (read, write) in enumerate([(0, 20_000), (20_000, 10_000), (1_000, 39_000), (40_000, 5)]):  # fmt: skip
        s.metas[2 * k + 1]["usage"] = _usage(read, write)
    return s


def test_a_recorded_break_ctxview_did_not_predict_is_unexplained() -> None:
    log = simulate(_recorded_session())
    r = log.requests
    assert r[2].cache_break is None  # nothing ctxview knows of changed
    miss = r[2].recorded_miss
    assert miss is not None and miss.reason == "unexplained" and miss.api_reason is None
    assert (miss.read, miss.previous) == (1_000, 30_003)
    assert r[1].recorded_miss is None and r[3].recorded_miss is None
    assert any("1 recorded cache break ctxview did not predict" in n for n in log.notes)
    d = r[2].to_dict()["recorded_break"]
    assert d["reason"] == "unexplained" and d["reported_by_api"] is False


def test_a_recorded_break_ctxview_predicted_takes_its_reason() -> None:
    s = _recorded_session()
    s.metas[5]["model"] = "claude-opus-4-1"  # the model changed: a break ctxview predicts
    s.metas[5]["usage"] = _usage(0, 40_000)
    r = simulate(s).requests[2]
    assert r.cache_break is not None and r.cache_break.reason == "model"
    assert r.recorded_miss is not None and r.recorded_miss.reason == "model"
    assert r.recorded_miss.api_reason == "model_changed"


def test_the_apis_cache_diagnostics_are_read_beside_the_prediction(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    s = _recorded_session()
    s.metas[5]["diagnostics"] = {
        "cache_miss_reason": {"type": "system_changed", "cache_missed_input_tokens": 29_000}
    }
    miss = simulate(s).requests[2].recorded_miss
    assert miss is not None and miss.reason == "unexplained" and miss.reported
    assert miss.api_reason == "system_changed" and miss.cache_missed_input_tokens == 29_000
    # the API's word replaces ctxview's guess between the client and the cache
    assert miss.note is not None and "the client changed its system prompt" in miss.note
    s.metas[5]["diagnostics"] = {"cache_miss_reason": {"type": "unavailable"}}
    miss = simulate(s).requests[2].recorded_miss
    assert miss is not None and miss.note is not None and "client changed" not in miss.note
    # in the usage, as some clients log it
    assert api_diagnosis({"usage": {"cache_miss_reason": {"type": "tools_changed"}, "cache_missed_input_tokens": 7}}) == ("tools_changed", 7)  # fmt: skip
    # a type the API does not document, or a count that is not one, is not believed
    assert api_diagnosis({"diagnostics": {"cache_miss_reason": {"type": "\x1b[31mx"}}}) is None
    assert api_diagnosis({"usage": {"cache_missed_input_tokens": -4}}) is None
    assert api_diagnosis({"usage": {"input_tokens": 3}}) is None


def test_a_claude_code_transcript_keeps_the_apis_diagnostics(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    def line(k: int, role: str, content: Any, **msg: Any) -> str:
        return json.dumps(
            {
                "type": role,
                "uuid": f"u{k}",
                "parentUuid": f"u{k - 1}" if k else None,
                "timestamp": ts(k * 10.0),
                "sessionId": "s",
                "message": {"role": role, "content": content, **msg},
            }
        )

    lines = []
    for k in range(3):
        lines.append(line(2 * k, "user", f"question {k} {BIG}"))
        usage = _usage(0, 3000 * (k + 1))  # each reads nothing: the second is a recorded break
        extra: dict[str, Any] = {"id": f"m{k}", "model": MODEL, "usage": usage}
        if k == 1:
            extra["diagnostics"] = {
                "cache_miss_reason": {"type": "messages_changed", "cache_missed_input_tokens": 2}
            }
        lines.append(line(2 * k + 1, "assistant", [{"type": "text", "text": "a"}], **extra))
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(lines) + "\n")
    _, out, _ = run(capsys, "requests", str(path), "--json")
    rb = json.loads(out)["requests"][1]["recorded_break"]
    assert rb["api_reason"] == "messages_changed" and rb["reported_by_api"] is True
    assert rb["cache_missed_input_tokens"] == 2
    code, out, _ = run(capsys, "requests", str(path))
    assert code == 0 and "rec:messages_changed" in out


def test_a_hit_that_carries_the_apis_diagnostics_is_not_called_a_break(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Claude Code's responses carry ``unavailable`` or ``previous_message_not_found`` on
    requests that read the whole previous prompt: the diagnosis is shown as it came, the
    request is no recorded break (reason ``none``), and no log counts it as unexplained."""
    lines = []
    for k in range(3):
        lines.append(
            json.dumps(
                {
                    "type": "user",
                    "uuid": f"u{2 * k}",
                    "parentUuid": f"u{2 * k - 1}" if k else None,
                    "timestamp": ts(20.0 * k),
                    "sessionId": "s",
                    "message": {"role": "user", "content": f"question {k} {BIG}"},
                }
            )
        )
        # each reads the whole previous prompt and writes its own question
        extra: dict[str, Any] = {
            "id": f"m{k}",
            "model": MODEL,
            "usage": _usage(3000 * k, 3000),
        }
        if k == 2:
            extra["diagnostics"] = {"cache_miss_reason": {"type": "unavailable"}}
        lines.append(
            json.dumps(
                {
                    "type": "assistant",
                    "uuid": f"u{2 * k + 1}",
                    "parentUuid": f"u{2 * k}",
                    "timestamp": ts(20.0 * k + 5),
                    "sessionId": "s",
                    "message": {
                        "role": "assistant",
                        "content": [{"type": "text", "text": "a"}],
                        **extra,
                    },
                }
            )
        )
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(lines) + "\n")
    _, out, _ = run(capsys, "requests", str(path), "--json")
    report = json.loads(out)
    rb = report["requests"][2]["recorded_break"]
    assert rb["reason"] == "none" and rb["api_reason"] == "unavailable"
    assert rb["reported_by_api"] is True
    assert not any("did not predict" in n for n in report.get("notes", []))


def test_an_unexplained_break_through_amazon_bedrock_says_so() -> None:
    """No documented rule predicts the breaks of Bedrock's route: each is ``unexplained`` and
    carries a note naming the route, and the log's note counts them."""
    s = _recorded_session()
    s.metas[5]["message_id"] = "msg_bdrk_01NQ4nZ9"
    log = simulate(s)
    miss = log.requests[2].recorded_miss
    assert miss is not None and miss.reason == "unexplained"
    assert miss.note is not None and miss.note.startswith("Amazon Bedrock")
    assert log.requests[2].to_dict()["recorded_break"]["note"] == miss.note
    assert any("1 through Amazon Bedrock" in n for n in log.notes)
    # the same break on Anthropic's API: the shorter prefix it read, named
    plain = simulate(_recorded_session()).requests[2].recorded_miss
    assert plain is not None and plain.note is not None
    assert plain.note.startswith("read 1,000 of the previous prompt's 30,003 tokens")


def test_an_unexplained_break_that_read_only_the_head_or_nothing_says_so() -> None:
    from ctxview.core.requests.diagnose import HEAD_NOTE, NOTHING_NOTE, unexplained_note

    model = "claude-opus-4-5-20251101"
    assert unexplained_note({}, model, 16_496, 16_496) == HEAD_NOTE.format(head=16_496)
    assert unexplained_note({}, model, 16_500, 16_496) == HEAD_NOTE.format(head=16_496)
    assert unexplained_note({}, model, 0, 16_496) == NOTHING_NOTE
    assert unexplained_note({}, model, 40_000, 16_496) is None
    assert unexplained_note({}, model, 16_496, None) is None
    bedrock = unexplained_note({}, "us.anthropic.claude-sonnet-4-5-20250929-v1:0", 0, None)
    assert bedrock is not None and bedrock.startswith("Amazon Bedrock")


def test_an_unexplained_break_at_the_ttl_edge_says_how_far_past_it_was_sent() -> None:
    """A break within the grace past the TTL: named as the TTL edge, for 1-hour entries too;
    beyond the grace it is a predicted ``ttl`` break, no note needed."""
    from ctxview.core.requests.diagnose import unexplained_note

    model = "claude-opus-4-6"
    note = unexplained_note({}, model, 0, None, 122_057, 121_596, gap=3605.0, ttl=3600.0)
    assert note is not None and note.startswith("sent 5.0 s past its entry's 1-hour TTL")
    note = unexplained_note({}, model, 0, None, 30_000, 29_000, gap=310.0)
    assert note is not None and "5-minute TTL" in note
    # within the TTL: what was read says it
    assert unexplained_note({}, model, 0, None, 30_000, 29_000, gap=290.0) == (
        "read nothing within the TTL: the entry was not found"
    )
    s = _recorded_session()
    s.metas[5]["timestamp"] = s.metas[5]["request_sent"] = ts(10 * 3 + 305.0)
    s.metas[7]["timestamp"] = ts(10 * 3 + 320.0)
    miss = simulate(s).requests[2].recorded_miss
    assert miss is not None and miss.note is not None
    assert miss.note.startswith("sent ") and "5-minute TTL" in miss.note


def test_a_break_that_read_less_than_a_previous_partial_read_names_it() -> None:
    """The first request read 23,326 tokens other sessions cached; the next read 10,419
    seconds later: its prefix changed within what the first had read."""
    from ctxview.core.requests.diagnose import unexplained_note

    note = unexplained_note({}, "claude-opus-4-6", 10_419, None, 37_948, 35_834, before=23_326)
    assert note is not None and note.startswith("read less than the previous request read")
    assert "23,326" in note


def test_an_unexplained_break_whose_prompt_shrank_says_so() -> None:
    """A recorded prompt smaller than the previous one, with nothing in the transcript that
    removed history: the client left out what the transcript does not record."""
    from ctxview.core.requests.diagnose import SHRANK_NOTE, unexplained_note

    model = "claude-opus-4-5-20251101"
    note = unexplained_note({}, model, 33_572, 33_572, total=126_920, previous=151_584)
    assert note == SHRANK_NOTE.format(tokens=24_664)
    # grown, as every other request: the head note
    assert unexplained_note({}, model, 33_572, 33_572, total=152_000, previous=151_584) != note
    s = _recorded_session()
    s.metas[5]["usage"] = _usage(1_000, 20_000)  # 21,003 billed after 30,003
    log = simulate(s)
    miss = log.requests[2].recorded_miss
    assert miss is not None and miss.note == SHRANK_NOTE.format(tokens=9_000)
    assert any("1 where the recorded prompt shrank" in n for n in log.notes)
