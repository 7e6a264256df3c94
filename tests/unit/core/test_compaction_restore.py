"""What Claude Code re-attaches after a compaction (``ctxview/core/compaction_restore.py``) and
the static a segment the file recorded nothing of starts from (``segment_statics``)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from ctxview.core.calibrate import (
    DEFAULT_RATES,
    POST_COMPACTION_GROWTH,
    message_features,
    segment_statics,
    tokenizer_scale,
)
from ctxview.core.compaction_restore import (
    LINE_NUMBER,
    RESTORE_TOKENS,
    RESTORE_TOKENS_PER_FILE,
    SKILL_OPENING,
    SKILL_TOKENS_PER_SKILL,
    restored_after,
)
from ctxview.core.requests import simulate
from ctxview.core.requests.points import calibrate
from ctxview.core.requests.restart import assumed_head
from ctxview.sessions import load_session
from ctxview.sessions.model import LoadedSession
from tests.support import claude_code_shapes as shapes
from tests.unit.core.test_requests import ts

RATES = DEFAULT_RATES


def _use(tid: str, name: str, **inp: Any) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": tid, "name": name, "input": inp}],
    }


def _result(tid: str, text: str, **extra: Any) -> dict[str, Any]:
    block = {"type": "tool_result", "tool_use_id": tid, "content": text, **extra}
    return {"role": "user", "content": [block]}


def _tokens(text: str, result: bool = True) -> int:
    block = {"type": "tool_result", "content": text} if result else {"type": "text", "text": text}
    return RATES.tokens(message_features({"role": "user", "content": [block]}))


def _numbered(first: int, last: int, width: int = 40) -> str:
    return "\n".join(f"{n:6d}\u2192" + "x" * width for n in range(first, last + 1))


def test_the_files_read_or_written_last_come_back_each_whole_if_small() -> None:
    small = _numbered(1, 20)
    msgs = [
        _use("a", "Read", file_path="/r/a.go"),
        _result("a", small),
        _use("w", "Write", file_path="/r/w.go", content="y" * 800),
        _result("w", "File created"),
        _use("big", "Read", file_path="/r/big.go"),  # over 5,000 tokens: its path alone
        _result("big", _numbered(1, 600)),
        _use("m", "Read", file_path="/r/CLAUDE.md"),  # sent as context of its own
        _result("m", small),
        _use("e", "Read", file_path="/r/gone.go"),  # an error result restores nothing
        _result("e", "<tool_use_error>File does not exist.</tool_use_error>", is_error=True),
    ]
    got = restored_after(msgs, [2, len(msgs)], RATES)
    assert got[2] == _tokens(small)
    assert got[len(msgs)] == _tokens(small) + _tokens("y" * 800)
    assert _tokens(_numbered(1, 600)) > RESTORE_TOKENS_PER_FILE


def test_a_file_read_in_part_is_sized_by_its_last_line_number() -> None:
    part = _numbered(101, 120)  # 20 lines shown of a file of at least 120
    msgs = [_use("p", "Read", file_path="/r/p.go", offset=100, limit=20), _result("p", part)]
    assert restored_after(msgs, [2], RATES)[2] == round(_tokens(part) / 20 * 120)
    # a part of a file past 5,000 tokens: the path alone
    far = _numbered(5_001, 5_020)
    msgs = [_use("p", "Read", file_path="/r/p.go", offset=5_000, limit=20), _result("p", far)]
    assert restored_after(msgs, [2], RATES)[2] == 0


def test_a_files_limit_is_measured_on_its_content_and_it_comes_back_numbered() -> None:
    # Claude Code measures a restored file against 5,000 tokens by its content; the attachment
    # sends it as a Read result, each line numbered
    shown = _numbered(1, 480)
    content = "\n".join(line.split("\u2192", 1)[1] for line in shown.split("\n"))
    assert _tokens(content) <= RESTORE_TOKENS_PER_FILE < _tokens(shown)
    msgs = [_use("a", "Read", file_path="/r/a.go"), _result("a", shown)]
    assert restored_after(msgs, [2], RATES)[2] == _tokens(shown)


def test_a_file_edited_after_it_was_read_comes_back_as_edited() -> None:
    # Claude Code reads the file from disk when it compacts: the read with the edits since
    shown = _numbered(1, 20)
    old, new = "x" * 40, "y" * 440
    msgs = [
        _use("a", "Read", file_path="/r/a.go"),
        _result("a", shown),
        _use("e", "Edit", file_path="/r/a.go", old_string=old, new_string=new),
        _result("e", "The file /r/a.go has been updated."),
        _use("m", "MultiEdit", file_path="/r/a.go", edits=[{"old_string": new, "new_string": old}]),
        _result("m", "Applied 1 edit."),
    ]
    grown = _tokens(shown) + _tokens(new) - _tokens(old)
    assert restored_after(msgs, [4, len(msgs)], RATES) == {4: grown, len(msgs): _tokens(shown)}
    # an edit of a file the transcript never showed leaves it unknown: nothing comes back
    assert restored_after(msgs[2:4], [2], RATES)[2] == 0


def test_only_the_five_files_used_last_come_back() -> None:
    msgs: list[dict[str, Any]] = []
    for k in range(7):
        msgs += [
            _use(f"t{k}", "Read", file_path=f"/r/f{k}.go"),
            _result(f"t{k}", "z" * 400 * (k + 1)),
        ]
    # an edit makes a file recent again
    msgs += [_use("e", "Edit", file_path="/r/f0.go", old_string="z", new_string="q")]
    msgs += [_result("e", "The file /r/f0.go has been updated.")]
    got = restored_after(msgs, [len(msgs)], RATES)[len(msgs)]
    assert got == sum(_tokens("z" * 400 * (k + 1)) for k in (0, 3, 4, 5, 6))


def test_skills_plan_and_todo_list_come_back() -> None:
    body = SKILL_OPENING + " /skills/tdd\n\n# TDD\n" + "rule " * 200
    huge = SKILL_OPENING + " /skills/huge\n\n# Huge\n" + "rule " * 8_000
    plan = "# Plan\n" + "step " * 300
    todos = [{"content": "write the test", "status": "in_progress", "activeForm": "Writing"}]
    msgs = [
        {"role": "user", "content": [{"type": "text", "text": body}]},
        {"role": "user", "content": [{"type": "text", "text": huge}]},
        _use("x", "ExitPlanMode", plan=plan),
        _use("t", "TodoWrite", todos=todos),
        _use("t2", "TodoWrite", todos=todos * 2),  # the latest list
    ]
    want = (
        _tokens(body, result=False)
        + SKILL_TOKENS_PER_SKILL
        + _tokens(plan, result=False)
        + _tokens(json.dumps(todos * 2), result=False)
    )
    assert restored_after(msgs, [len(msgs)], RATES)[len(msgs)] == want
    cleared = [*msgs, _use("t3", "TodoWrite", todos=[])]
    assert restored_after(cleared, [len(cleared)], RATES)[len(cleared)] == want - _tokens(
        json.dumps(todos * 2), result=False
    )


def test_a_segment_no_request_recorded_starts_from_the_first_segments_static_and_the_restored() -> (
    None
):
    key0, key1 = (0, "m"), (40, "m")
    # the first segment's residuals sank in its second half (requests sent less than the
    # transcript shows): the static carried is the one it started with
    by = {key0: [30_000] * 5 + [10_000] * 8}
    out = segment_statics(by, [key0, key1], 0, None, {40: 4_000})
    assert out[key0] == 10_000
    assert out[key1] == round(30_000 * (1 + POST_COMPACTION_GROWTH)) + 4_000
    # a residual that rose within the segment is kept by the median
    by = {key0: [30_000] * 5 + [36_000] * 8}
    out = segment_statics(by, [key0, key1], 0, None, {40: 0})
    assert out[key1] == round(36_000 * (1 + POST_COMPACTION_GROWTH))


def _session(read_before_compaction: bool) -> LoadedSession:
    """A first segment with usage (static 30,000), a compaction, a request after it with none."""
    msgs: list[dict[str, Any]] = []
    metas: list[dict[str, Any]] = []
    t, chars = 0.0, 0
    for k in range(6):
        msgs.append({"role": "user", "content": [{"type": "text", "text": f"q{k} " + "w " * 200}]})
        metas.append({"timestamp": ts(t)})
        msgs.append({"role": "assistant", "content": [{"type": "text", "text": "ok"}]})
        chars += 400
        usage = {
            "input_tokens": 3,
            "cache_read_input_tokens": 0,
            "cache_creation_input_tokens": 30_000 + chars // 4 + 8 * (k + 1) - 3,
        }
        metas.append({"timestamp": ts(t + 5), "model": "m", "usage": usage})
        t += 10
    if read_before_compaction:
        msgs += [_use("r", "Read", file_path="/r/a.go"), _result("r", _numbered(1, 100))]
        metas += [{"timestamp": ts(t), "model": "m"}, {"timestamp": ts(t + 1)}]
    msgs.append({"role": "user", "content": "summary " * 50})
    metas.append({"timestamp": ts(t + 2), "compact_summary": True, "compact_boundary": {}})
    msgs.append({"role": "assistant", "content": [{"type": "text", "text": "ok"}]})
    metas.append({"timestamp": ts(t + 5), "model": "m"})
    return LoadedSession("t.jsonl", "claude-code", msgs, metas, model="m")


def test_the_calibration_adds_the_files_read_before_the_compaction_to_the_next_segment() -> None:
    plain = calibrate(_session(False))
    read = calibrate(_session(True))
    assert plain.statics is not None and read.statics is not None
    after_plain = plain.statics[(len(_session(False).messages) - 2, "m")]
    after_read = read.statics[(len(_session(True).messages) - 2, "m")]
    assert after_read - after_plain == read.rates.tokens(
        message_features(_result("r", _numbered(1, 100)))
    )


def _mid_session(drop: int, usage_after: bool, logged: bool = True) -> LoadedSession:
    """A transcript that starts mid-session (a static of 60,000: the history before the file),
    a microcompaction that cleared results none of its lines holds (``tokens_saved`` 20,000),
    after which the recorded prompt is ``drop`` tokens smaller; usage after it or not."""
    msgs: list[dict[str, Any]] = []
    metas: list[dict[str, Any]] = []
    t, chars = 0.0, 0
    for k in range(12):
        msgs.append({"role": "user", "content": [{"type": "text", "text": f"q{k} " + "w " * 200}]})
        meta: dict[str, Any] = {"timestamp": ts(t)}
        if k == 6 and logged:
            meta["microcompact"] = {"cleared": ["toolu_elsewhere"], "tokens_saved": 20_000}
        metas.append(meta)
        msgs.append({"role": "assistant", "content": [{"type": "text", "text": "ok"}]})
        chars += 400
        total = 60_000 + chars // 4 + 8 * (k + 1) - (drop if k >= 6 else 0)
        usage = {
            "input_tokens": 3,
            "cache_read_input_tokens": 0,
            "cache_creation_input_tokens": total - 3,
        }
        rmeta: dict[str, Any] = {"timestamp": ts(t + 5), "model": "m"}
        if k < 6 or usage_after:
            rmeta["usage"] = usage
        metas.append(rmeta)
        t += 10
    return LoadedSession("t.jsonl", "claude-code", msgs, metas, model="m")


def test_a_microcompaction_of_results_outside_the_file_lowers_the_static_after_it() -> None:
    # recorded on both sides: each side's static is its own
    log = simulate(_mid_session(26_000, usage_after=True))
    errors = [abs(r.input_tokens - t) / t for r in log.requests if (t := r.recorded_total)]
    assert max(errors) < 0.01, errors
    # nothing recorded after it: the static before it less what Claude Code says it saved
    cal = calibrate(_mid_session(20_000, usage_after=False))
    assert cal.statics is not None
    before, after = cal.statics[(0, "m")], cal.statics[(12, "m")]
    assert abs(before - 60_000) < 300 and after == before - 20_000
    log = simulate(_mid_session(20_000, usage_after=True), _calibration=cal)
    late = [abs(r.input_tokens - t) / t for r in log.requests[6:] if (t := r.recorded_total)]
    assert max(late) < 0.01, late


def test_a_model_without_requests_of_its_own_takes_the_segments_static_in_its_tokenizer() -> None:
    # one request of Opus 4.7 (too few for a static of its own) beside Opus 4.6's: the tools +
    # system it takes are the segment's, in its own tokenizer's tokens (about 1.3x)
    old, new = "claude-opus-4-6", "claude-opus-4-7"
    by = {(0, old): [30_000] * 6, (0, new): [39_000]}
    out = segment_statics(by, [(0, old), (0, new), (50, new)], 0)
    assert out[(0, old)] == 30_000
    assert out[(0, new)] == round(30_000 * tokenizer_scale(new))
    assert out[(50, new)] == round(30_000 * tokenizer_scale(new) * (1 + POST_COMPACTION_GROWTH))


_READ = st.tuples(
    st.sampled_from(["Read", "Write", "Edit"]),
    st.integers(0, 9),  # which file
    st.integers(0, 30_000),  # characters shown or written
    st.booleans(),  # a read of a part
)


@settings(max_examples=60, deadline=None)
@given(st.lists(_READ, max_size=25), st.lists(st.integers(0, 60), max_size=4))
def test_the_restored_files_stay_within_claude_codes_limits(
    uses: list[tuple[str, int, int, bool]], ends: list[int]
) -> None:
    msgs: list[dict[str, Any]] = []
    for k, (name, f, size, part) in enumerate(uses):
        inp: dict[str, Any] = {"file_path": f"/r/f{f}.go"}
        if name == "Write":
            inp["content"] = "c" * size
        if name == "Read" and part:
            inp.update(offset=10, limit=size // 40 + 1)
        shown = _numbered(11, 11 + size // 40) if part else "r" * size
        msgs += [_use(f"t{k}", name, **inp), _result(f"t{k}", shown)]
    got = restored_after(msgs, ends, RATES)
    assert set(got) == set(ends)
    for e in ends:
        # files only: at most five, each at most 5,000 tokens of content (sent numbered)
        assert 0 <= got[e] <= RESTORE_TOKENS
    # what a later compaction restores is what the messages up to it show: the same messages
    # cut there give the same figure
    for e in ends:
        assert restored_after(msgs[:e], [e], RATES)[e] == got[e]


def test_a_recorded_prompt_that_fell_with_nothing_logged_keys_the_static_apart() -> None:
    # the prompt fell 26,000 tokens at request 6 with no microcompact_boundary in the file:
    # the calibration fits the static on each side
    session = _mid_session(26_000, usage_after=True, logged=False)
    log = simulate(session)
    errors = [abs(r.input_tokens - t) / t for r in log.requests if (t := r.recorded_total)]
    assert max(errors) < 0.01, errors
    cal = calibrate(session)
    assert cal.statics is not None and len(cal.statics) == 2
    # a fall below the threshold (a few thousand tokens: a resume's context) is no such point
    small = calibrate(_mid_session(4_000, usage_after=True, logged=False))
    assert small.statics is not None and len(small.statics) == 1


def test_the_plan_a_session_was_started_to_implement_comes_back() -> None:
    plan = "# Plan: add the thing\n\n" + "step " * 400
    for content in (
        f"Implement the following plan:\n\n{plan}",
        [{"type": "text", "text": f"Implement the following plan:\n\n{plan}"}],
    ):
        msgs = [{"role": "user", "content": content}, {"role": "assistant", "content": "ok"}]
        assert restored_after(msgs, [2], RATES)[2] == _tokens(plan, result=False)
    # a plan written in plan mode later replaces it
    later = "# Plan v2\n" + "step " * 50
    msgs = [{"role": "user", "content": f"Implement the following plan:\n\n{plan}"}]
    msgs.append(_use("x", "ExitPlanMode", plan=later))
    assert restored_after(msgs, [2], RATES)[2] == _tokens(later, result=False)


def test_a_kept_response_sent_before_the_compaction_is_no_drop(tmp_path: Any) -> None:
    # a compaction that kept its last messages: the kept response (44k, sent with the history
    # before the compaction) is in the segment after it, and the next request bills 21k; that
    # is the compaction, not a fall inside the segment
    session = load_session(shapes.write(tmp_path / "kept.jsonl", shapes.preserved_compact("tail")))
    cal = calibrate(session)
    assert cal.statics is not None
    assert sorted(k[0] for k in cal.statics) == [0, 18]


def test_a_line_number_is_read_on_its_own_line() -> None:
    # the pattern never runs over a line end (a result of blank lines is scanned once)
    text = "  \n\t\n   7\u2192x\n"
    found = LINE_NUMBER.search(text)
    assert found is not None and found.group(1) == "7"
    assert found.start() == text.index("   7")
    assert LINE_NUMBER.search("\n" * 50 + "x") is None


def test_the_assumed_head_is_a_share_of_the_smallest_first_segment_static() -> None:
    # a file that starts mid-session: its first static (60,000) carries the history before it,
    # which a microcompaction clears (34,000 after it); no read shows the head, so it is
    # assumed: the tools and system are within every static, the smaller one too
    cal = calibrate(_mid_session(26_000, usage_after=True))
    assert cal.statics is not None and not cal.head_seen
    smallest = min(cal.statics.values())
    assert smallest < 40_000
    assert cal.head == assumed_head(smallest)
