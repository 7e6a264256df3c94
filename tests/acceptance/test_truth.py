"""The request model against what the API recorded, measured by ``benchmarks/truth.py`` (the
same figures ``python -m benchmarks.truth --set tune`` and ``--set held-out`` print), with the
goals of the request model as thresholds:

| measure | goal |
|---|---|
| per-request input tokens, calibrated: median / p90 error | <= 2% / <= 8% |
| the same, fitted on the first half of each file only | <= 4% / <= 12% |
| predicted vs recorded cache break agrees | >= 99.7%, every disagreement named |
| tool_use / tool_result / text / thinking blocks lost in the rebuild | 0 |

On the real transcripts of ``claude_code/`` and ``tests/fixtures/claude_code/`` (MANIFEST.md),
each side of the tune / held-out split (``benchmarks.truth.TUNE`` / ``HELD_OUT``: the held-out
files were never looked at while tuning) is measured apart. A goal reached is a plain assert; a
goal not reached yet is a strict ``xfail`` (it fails the day it is reached: then drop the mark),
beside a test that holds today's figure so it cannot get worse. On hand-written files in the
shapes no recorded file here has (``tests/support/claude_code_shapes.py``: a 2.1.2xx
``/compact``, a compaction that kept messages, a parent missing from the file, a sub-agent
folder): nothing is lost, every compaction is found, no request is sent off the branch.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from benchmarks.truth import (
    BLOCK_TYPES,
    FOLDERS,
    FileFigures,
    in_set,
    measure,
    measure_file,
    render,
    transcripts,
    worst_misses,
)
from ctxview.core.requests import simulate
from ctxview.sessions import load_session
from tests.support import claude_code_shapes as shapes
from tests.support.paths import ACCEPTANCE

UNSEEN = ACCEPTANCE / "unseen" / "claude_code"
UNSEEN2 = ACCEPTANCE / "unseen2" / "claude_code"
UNSEEN3 = ACCEPTANCE / "unseen3" / "claude_code"

SETS = ["tune", "held_out"]


@pytest.fixture(scope="module")
def tune() -> dict[str, Any]:
    figs, s = measure(FOLDERS, "tune")
    return {"figs": figs, **s}


@pytest.fixture(scope="module")
def held_out() -> dict[str, Any]:
    figs, s = measure(FOLDERS, "held-out")
    return {"figs": figs, **s}


@pytest.fixture(scope="module")
def crafted(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[FileFigures], dict[str, Any]]:
    d = tmp_path_factory.mktemp("shapes")
    shapes.write(d / "manual_compact.jsonl", shapes.manual_compact())
    shapes.write(d / "preserved_tail.jsonl", shapes.preserved_compact("tail"))
    shapes.write(d / "preserved_before.jsonl", shapes.preserved_compact("before"))
    shapes.write(d / "dangling_progress.jsonl", shapes.dangling_progress())
    shapes.with_subagent(d / "with_subagent", sidecar=True)
    return measure([d])


def test_there_is_enough_to_measure(tune: dict[str, Any], held_out: dict[str, Any]) -> None:
    assert tune["files"] == 12 and tune["recorded_requests"] == 486
    assert held_out["files"] == 12 and held_out["recorded_requests"] == 441
    assert not tune["unreadable"] and not held_out["unreadable"]


def test_the_sets_do_not_overlap() -> None:
    for path, _ in transcripts(FOLDERS):
        assert not (in_set(path, "tune") and in_set(path, "held-out")), path


@pytest.mark.parametrize("which", SETS)
def test_no_block_is_lost_in_the_rebuild(which: str, request: pytest.FixtureRequest) -> None:
    s = request.getfixturevalue(which)
    assert s["blocks_lost"] == dict.fromkeys(BLOCK_TYPES, 0), s["files_losing_blocks"]
    assert s["blocks"]["tool_use"] > 250 and s["blocks"]["tool_result"] > 250


@pytest.mark.parametrize("which", SETS)
def test_calibrated_token_estimates_reach_the_goal(
    which: str, request: pytest.FixtureRequest
) -> None:
    te = request.getfixturevalue(which)["token_error"]
    assert te["median"] <= 0.02 and te["p90"] <= 0.08, te


def test_estimates_fitted_on_the_first_half_reach_the_goal_on_the_tune_set(
    tune: dict[str, Any],
) -> None:
    th = tune["token_error_first_half_fit"]
    assert th["requests"] >= 200
    assert th["median"] <= 0.04 and th["p90"] <= 0.12, th


def test_estimates_fitted_on_the_first_half_reach_the_goal_on_the_held_out_set(
    held_out: dict[str, Any],
) -> None:
    """Half the held-out second-half requests follow one of its two compactions: they start from
    what Claude Code re-attaches, each file measured against its limit by its content and sized
    as edited since its last read (4.5% / 8.9% overall, 7.3% / 9.4% after a compaction before;
    2.2% / 6.9% and 2.7% / 8.5% since)."""
    th = held_out["token_error_first_half_fit"]
    assert th["requests"] >= 200
    assert th["median"] <= 0.04 and th["p90"] <= 0.12, th
    assert th["unseen_segments"]["median"] <= 0.03 and th["unseen_segments"]["p90"] <= 0.09, th


@pytest.mark.parametrize("which", SETS)
def test_cache_breaks_reach_the_goal(which: str, request: pytest.FixtureRequest) -> None:
    s = request.getfixturevalue(which)
    assert s["break_agreement"] >= 0.997, s["break_disagreements"]


@pytest.mark.parametrize("which", SETS)
def test_every_cache_break_disagreement_is_named(
    which: str, request: pytest.FixtureRequest
) -> None:
    """A break recorded but not predicted carries the model's name for it (``unexplained`` or
    ``growth``); a break predicted but not recorded carries its predicted reason."""
    for d in request.getfixturevalue(which)["break_disagreements"]:
        if d["recorded"].startswith("break"):
            assert d["recorded_reason"] in ("unexplained", "growth"), d
        else:
            assert d["predicted"].startswith("break (") and d["recorded_reason"] is None, d


def test_no_recorded_break_is_a_silent_hit() -> None:
    """Every held-out request whose recorded read fell well short of the previous prompt carries
    a recorded break with a reason: the predicted one, or ``unexplained``."""
    for path, _ in transcripts(FOLDERS):
        if not in_set(path, "held-out"):
            continue
        log = simulate(load_session(path))
        prev: dict[Any, int] = {}
        for r in log.requests:
            if r.recorded is None:
                continue
            p = prev.get(r.model)
            if p is not None and r.recorded["cache_read_input_tokens"] < 0.5 * p:
                assert r.recorded_miss is not None, (path.name, r.index)
                assert r.recorded_miss.reason == (
                    r.cache_break.reason if r.cache_break else "unexplained"
                )
            prev[r.model] = r.recorded_total or 0


def test_hand_written_shapes_lose_nothing_and_find_every_compaction(
    crafted: tuple[list[FileFigures], dict[str, Any]],
) -> None:
    figs, s = crafted
    assert s["files"] == 6
    assert s["blocks_lost"] == dict.fromkeys(BLOCK_TYPES, 0), s["files_losing_blocks"]
    by_name = {f.name: f for f in figs}
    assert by_name["manual_compact.jsonl"].compactions == 1
    assert by_name["preserved_tail.jsonl"].compactions == 1
    assert by_name["preserved_before.jsonl"].compactions == 1
    assert all(f.off_branch_requests == 0 for f in figs)
    assert s["break_agreement"] == 1.0, s["break_disagreements"]
    dangling = by_name["dangling_progress.jsonl"]
    assert dangling.requests == 32 and max(dangling.errors) < 0.01


def test_the_largest_first_half_misses_are_listed_largest_first(tune: dict[str, Any]) -> None:
    figs = tune["figs"]
    misses = worst_misses(figs, 5)
    assert len(misses) == 5
    errors = [abs(m.error) for m in misses]
    assert errors == sorted(errors, reverse=True)
    every = [abs(m.error) for f in figs for m in f.half_misses]
    assert len(every) == tune["token_error_first_half_fit"]["requests"]
    assert errors[0] == max(every)
    text = render(figs, {k: v for k, v in tune.items() if k != "figs"}, False, 0, 5)
    first = misses[0]
    assert f"{first.file} #{first.request}: {first.estimate:,} / {first.recorded:,}" in text


def test_the_compaction_requests_match_their_agent_acompact_files_on_the_tune_set(
    tune: dict[str, Any],
) -> None:
    """Each compaction's summarising request, modelled from the main transcript, against the
    prompt its ``agent-acompact`` file recorded."""
    cr = tune["compaction_requests"]
    assert cr["modelled"] == tune["compactions"] == 3
    errors = cr["prompt_errors_vs_acompact"]
    # with the hook reminders the files recorded sent (within 1.2% without them)
    assert len(errors) == 3 and max(abs(e) for e in errors) < 0.01, errors


@pytest.fixture(scope="module")
def unseen() -> dict[str, Any]:
    figs, s = measure([UNSEEN])
    return {"figs": figs, **s}


def test_the_unseen_set_holds_todays_figures(unseen: dict[str, Any]) -> None:
    """The last session's judge (``unseen/claude_code``, Claude Code 2.0.x on Amazon Bedrock,
    examined since): calibrated within the goal, nothing lost, every disagreement named, the
    Bedrock breaks no rule predicts (``unexplained``) and the first-half tail (a drop nothing in
    the transcript explains) held where they are (docs/request-model.md)."""
    assert unseen["recorded_requests"] == 206
    te = unseen["token_error"]
    assert te["median"] <= 0.02 and te["p90"] <= 0.08, te
    assert unseen["blocks_lost"] == dict.fromkeys(BLOCK_TYPES, 0)
    th = unseen["token_error_first_half_fit"]
    assert th["median"] <= 0.04 and th["p90"] <= 0.25, th
    # after the compaction that dropped an unlogged @-mention: from the head plus what Claude
    # Code re-attaches (was 34% / 44%; 3.5% / 3.8% with the files capped rather than left out
    # above 5,000 tokens: the restored part 2.5k low then; 9.7% / 10.6% with files over 5,000
    # tokens as numbered left out, 2.1% / 5.3% with the limit measured on their content)
    assert th["unseen_segments"]["p90"] <= 0.06, th
    assert unseen["break_agreement"] >= 0.7378, unseen["break_disagreements"]
    for d in unseen["break_disagreements"]:
        assert d["recorded_reason"] in ("unexplained", "growth") or d["predicted"].startswith(
            "break ("
        ), d


@pytest.fixture(scope="module")
def unseen2() -> dict[str, Any]:
    _, s = measure([UNSEEN2])
    return s


def test_estimates_fitted_on_the_first_half_reach_the_goal_on_the_second_unseen_set(
    unseen2: dict[str, Any],
) -> None:
    """The second judge (``unseen2/claude_code``: Claude Code 2.0.76 to 2.1.42, 15 compactions,
    examined since): fitted on the first half, the requests after a compaction the first half
    did not see start from the first segment's static and what Claude Code re-attaches
    (``ctxview/core/compaction_restore.py``; 8.8% / 41.5% when the static was grown by a fixed
    share), and a microcompaction of results outside the file lowers the static after it (2.3% /
    23.0% overall before both). The tail left is named in docs/request-model.md."""
    th = unseen2["token_error_first_half_fit"]
    assert th["requests"] == 1_344  # (entire_b82405ba's thinking-only response: off the branch)
    assert th["median"] <= 0.04 and th["p90"] <= 0.12, th
    assert th["unseen_segments"]["median"] <= 0.045, th  # 5.0% before the content limit
    assert th["unseen_segments"]["p90"] <= 0.20, th


def test_the_unseen2_set_holds_todays_cache_break_figure(unseen2: dict[str, Any]) -> None:
    """The second judge (``unseen2/claude_code``: Claude Code 1.0.95 and 2.0.64-2.1.42 on the
    direct API, examined since): 18 disagreements of 2,678 (the TTL by when each request was
    sent, the assumed head, the static keyed apart at a microcompaction of results outside the
    file), every one named; the recorded breaks nothing in the transcript explains carry a
    note (docs/request-model.md)."""
    s = unseen2
    assert s["recorded_requests"] == 2678
    assert s["break_agreement"] >= 0.9932, s["break_disagreements"]
    for d in s["break_disagreements"]:
        # a recorded break carries a name (the predicted break's, where the model predicted one
        # but estimated its write below half the prompt); a predicted one its reason
        assert d["recorded_reason"] is not None or d["predicted"].startswith("break ("), d


@pytest.fixture(scope="module")
def unseen3() -> dict[str, Any]:
    _, s = measure([UNSEEN3])
    return s


def test_the_third_unseen_set_reaches_the_token_goals(unseen3: dict[str, Any]) -> None:
    """The third judge (``unseen3/claude_code``: Claude Code 2.1.38 to 2.1.219, Opus 4.6, Opus 5,
    Sonnet 5 and Fable 5; 4,608 requests, 3,583 once those two files of a session hold are
    counted once), measured before anyone looked at it: calibrated within 2% / 8% and fitted on
    the first half within 4% / 12% (1.7% / 8.2% and 5.9% / 11.9% before this set's sibling files
    were diagnosed), no block lost."""
    assert unseen3["recorded_requests"] == 3_583
    assert unseen3["repeated_requests"] == 1_025
    t = unseen3["token_error"]
    assert t["median"] <= 0.02 and t["p90"] <= 0.08, t
    th = unseen3["token_error_first_half_fit"]
    assert th["median"] <= 0.04 and th["p90"] <= 0.12, th
    assert unseen3["blocks_lost"] == dict.fromkeys(BLOCK_TYPES, 0), unseen3["files_losing_blocks"]


def test_the_third_unseen_set_holds_todays_cache_break_figure(unseen3: dict[str, Any]) -> None:
    """99.4% (22 disagreements of 3,583, each request counted once; 29 of 4,608 counting a
    resumed session's copied requests again; 99.3% and 34 before a notification of Claude Code
    2.1.49 on and the first tool search before 2.1.209 were told apart, 98.9% and 50 before a
    prompt after a turn its Stop hooks never closed was predicted a ``restart``) against the
    goal of 99.7%: every
    disagreement named, the recorded breaks nothing in the transcript explains carrying a
    note."""
    s = unseen3
    assert s["break_agreement"] >= 0.9938, s["break_disagreements"]
    for d in s["break_disagreements"]:
        assert d["recorded_reason"] is not None or d["predicted"].startswith("break ("), d


@pytest.mark.xfail(
    strict=True,
    reason="13 head-only reads the API called messages_changed after turns like those that hit, "
    "a 2.1.39 background-command notification that read everything and a 2.1.49 one that broke "
    "(docs/request-model.md)",
)
def test_the_third_unseen_set_reaches_the_cache_break_goal(unseen3: dict[str, Any]) -> None:
    assert unseen3["break_agreement"] >= 0.997, unseen3["break_disagreements"]


@pytest.mark.parametrize(
    "name",
    [
        "entire_847ff7d2-4a55-44d7-a3f5-a3afd89f1ee1.jsonl",
        "entire_fdd24234-3c2a-4958-91ed-59c63b12ba1e.jsonl",
    ],
)
def test_a_recorded_break_that_read_another_prefix_is_named_too(name: str) -> None:
    """The unseen2 breaks that read a prefix neither the head nor nothing (30,448 of 113,469;
    44,042 of 50,936) carry a note saying what was read of what."""
    log = simulate(load_session(UNSEEN2 / name))
    misses = [
        r.recorded_miss
        for r in log.requests
        if r.recorded_miss is not None and r.recorded_miss.reason == "unexplained"
    ]
    assert misses and all(m.note for m in misses), misses
    assert any(m.note and " of the previous prompt's " in m.note for m in misses)


def _resumed_after_exit(tmp_path: Any, command: str) -> Any:
    """A turn, then ``command`` typed as a local command (its caveat, command and output lines),
    then the session resumed: Claude Code hangs its next message off the caveat line, so the
    command's lines are on no branch."""
    w = shapes.Writer()
    u = w.user(None, "Fix the build.")
    last = shapes.grow(w, u, 3, 0, 20_000, 2_000)
    end = w.assistant(last, [{"type": "text", "text": "Done."}], (3, 26_000, 100), "msg_end")
    caveat = w.user(
        end, "<local-command-caveat>Caveat: local commands below.</local-command-caveat>"
    )
    cmd = w.user(caveat, command)
    w.user(cmd, "<local-command-stdout>Goodbye!</local-command-stdout>")
    q = w.user(caveat, "Is the gc invoked more often now?")
    w.assistant(q, [{"type": "text", "text": "No."}], (3, 26_100, 50), "msg_after")
    return shapes.write(tmp_path / "resumed.jsonl", w.records)


def test_a_local_command_the_resumed_session_skipped_is_not_lost(tmp_path: Any) -> None:
    fig = measure_file(_resumed_after_exit(tmp_path, "<command-name>/exit</command-name>"))
    assert fig.lost_blocks == {}, fig.lost_blocks
    # the command as typed, which Claude Code 2.1.2xx writes before its <command-name> line
    fig = measure_file(_resumed_after_exit(tmp_path, "/exit"))
    assert fig.lost_blocks == {}, fig.lost_blocks
    # a prompt left so is lost: it is not a local command
    fig = measure_file(_resumed_after_exit(tmp_path, "Actually, revert it."))
    assert fig.lost_blocks == {"text": 1}


def test_a_prompt_taken_back_before_its_reply_is_not_lost(tmp_path: Any) -> None:
    """Esc before the reply: Claude Code has written the prompt, hands it back for editing and
    hangs the one sent again off the same parent (unseen4 gitsync_3ee1ca7a: the second prompt
    extends the first; eskills_fe3ed705: the same text, 3 s later)."""
    w = shapes.Writer()
    u = w.user(None, "Fix the build.")
    end = w.assistant(u, [{"type": "text", "text": "Done."}], (3, 20_000, 100), "msg_1")
    w.user(end, "it was the other repo")
    again = w.user(end, "it was the other repo, and the push went through")
    w.assistant(again, [{"type": "text", "text": "I see."}], (3, 20_100, 50), "msg_2")
    fig = measure_file(shapes.write(tmp_path / "withdrawn.jsonl", w.records))
    assert fig.lost_blocks == {}, fig.lost_blocks
    assert fig.raw_blocks["text"] == 4


def test_a_predicted_growth_past_half_the_input_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A request predicted to keep its cache, whose new messages are estimated above half its
    input, is a predicted break by the write rule: the disagreement says ``growth``."""
    from types import SimpleNamespace

    import benchmarks.truth as truth
    from ctxview.core.requests import Request
    from ctxview.sessions.model import LoadedSession

    usage = {"input_tokens": 0, "cache_read_input_tokens": 90, "cache_creation_input_tokens": 10}
    req = Request(0, [0], 1, 100, 40, 60, 0, None, usage, None, None)
    session = LoadedSession(str(tmp_path / "t.jsonl"), "claude-code", [], [])
    monkeypatch.setattr(truth, "load_session", lambda _p: session)
    monkeypatch.setattr(
        truth, "simulate", lambda _s: SimpleNamespace(requests=[req], compactions=[])
    )
    (tmp_path / "t.jsonl").write_text("")
    fig = truth.measure_file(tmp_path / "t.jsonl")
    assert [d.predicted for d in fig.disagreements] == ["break (growth)"]


def test_a_request_two_files_of_a_set_hold_is_counted_once(tmp_path: Path) -> None:
    """A resumed session's new file copies the old one's lines (their response ids too) and
    goes on: unseen3's ohmyposh_6b6f4218 holds all 538 requests of ohmyposh_030df228. Each
    recorded request weighs once in a set's figures, in the first file that holds it."""
    w = shapes.Writer()
    u = w.user(None, "Fix the build.")
    end = w.assistant(u, [{"type": "text", "text": "Done."}], (3, 20_000, 100), "msg_1")
    old = list(w.records)
    q = w.user(end, "And the docs?")
    w.assistant(q, [{"type": "text", "text": "Updated."}], (3, 20_100, 50), "msg_2")
    (tmp_path / "set").mkdir()
    shapes.write(tmp_path / "set" / "a_old.jsonl", old)
    shapes.write(tmp_path / "set" / "b_resumed.jsonl", w.records)
    figs, s = measure([tmp_path / "set"])
    assert [f.recorded for f in figs] == [1, 1]
    assert [f.repeated for f in figs] == [0, 1]
    assert s["recorded_requests"] == 2 and s["repeated_requests"] == 1
    # measured alone, a file counts every request it holds
    assert measure_file(tmp_path / "set" / "b_resumed.jsonl").recorded == 2


def test_a_slash_command_taken_back_with_its_skill_text_is_not_lost(tmp_path: Any) -> None:
    """A skill's slash command writes the command line and the skill's text (isMeta) under it;
    taken back with Esc and run again off the same parent (judge7 fl_20-097234d4d7 lines 15-16,
    written again at 29-30), neither line of the first is on a branch a request carried."""
    w = shapes.Writer()
    u = w.user(None, "Fix the build.")
    end = w.assistant(u, [{"type": "text", "text": "Done."}], (3, 20_000, 100), "msg_1")
    for _ in range(2):
        cmd = w.user(end, "<command-message>research</command-message>")
        last = w.user(cmd, [{"type": "text", "text": "Base directory: /r"}], isMeta=True)
    w.assistant(last, [{"type": "text", "text": "Researching."}], (3, 20_100, 50), "msg_2")
    fig = measure_file(shapes.write(tmp_path / "withdrawn.jsonl", w.records))
    assert fig.lost_blocks == {}, fig.lost_blocks
    assert fig.raw_blocks["text"] == 5


def test_a_prompt_taken_back_for_a_command_beside_it_is_not_lost(tmp_path: Any) -> None:
    """The prompt taken back, then given as ``/goal <prompt>`` (judge7 fl_80-6f88b77226 line
    815): the command's first line beside the prompt is an attachment (its goal), not a user
    line, and the response descends from it."""
    w = shapes.Writer()
    u = w.user(None, "Fix the build.")
    end = w.assistant(u, [{"type": "text", "text": "Done."}], (3, 20_000, 100), "msg_1")
    w.user(end, "Implement the audit.")
    goal = w.base("attachment", end)
    goal["attachment"] = {"type": "goal_status", "met": False, "condition": "Implement the audit."}
    cmd = w.user(w.add(goal), "<command-name>/goal</command-name>")
    w.assistant(cmd, [{"type": "text", "text": "On it."}], (3, 20_100, 50), "msg_2")
    fig = measure_file(shapes.write(tmp_path / "goal.jsonl", w.records))
    assert fig.lost_blocks == {}, fig.lost_blocks
    # a prompt that a user line follows is not taken back
    w.user(w.records[2]["uuid"], "and the tests")
    fig = measure_file(shapes.write(tmp_path / "followed.jsonl", w.records))
    assert fig.lost_blocks == {"text": 2}, fig.lost_blocks


def _resumed_from_parent(w: shapes.Writer) -> tuple[str, str]:
    """A prompt, a response calling a tool and its result: (the prompt, the result)."""
    u = w.user(None, "Write the mail module.")
    a = w.assistant(
        u,
        [{"type": "tool_use", "id": "toolu_todo", "name": "TodoWrite", "input": {}}],
        (3, 20_000, 100),
        "msg_1",
    )
    r = w.user(a, [{"type": "tool_result", "tool_use_id": "toolu_todo", "content": "ok"}])
    return u, r


def _continue(w: shapes.Writer, parent: str) -> None:
    c = w.user(parent, [{"type": "text", "text": "Continue from where you left off."}], isMeta=True)
    p = w.user(c, "Commit Task 1 now.")
    w.assistant(p, [{"type": "text", "text": "Committing."}], (3, 20_000, 300), "msg_next")


def test_a_call_the_resumed_session_left_unanswered_is_not_lost(tmp_path: Any) -> None:
    """A Write call never answered (the process ended), the session resumed from the line
    before it (judge7 tc_1c-e402c8fe4b-7 line 183: the request after it billed 125,739 tokens,
    about the 125,638 of the call's own request; the call was 4,234 tokens)."""
    w = shapes.Writer()
    _, r = _resumed_from_parent(w)
    w.assistant(
        r,
        [{"type": "tool_use", "id": "toolu_write", "name": "Write", "input": {"content": "x"}}],
        (3, 20_100, 50),
        "msg_write",
    )
    _continue(w, r)
    fig = measure_file(shapes.write(tmp_path / "resumed.jsonl", w.records))
    assert fig.lost_blocks == {}, fig.lost_blocks
    assert fig.raw_blocks["tool_use"] == 1


def test_a_branch_a_second_process_left_is_kept_in_its_request(tmp_path: Any) -> None:
    """Two processes wrote one file (judge7 tc_1c-e402c8fe4b-18 lines 143-145): one went on
    with a TodoWrite round and a reply, the other resumed from the line before it. The round
    was sent with the reply's request (off the branch, rebuilt); the reply was sent by none."""
    w = shapes.Writer()
    _, r = _resumed_from_parent(w)
    a = w.assistant(
        r,
        [{"type": "tool_use", "id": "toolu_todo2", "name": "TodoWrite", "input": {}}],
        (3, 20_100, 50),
        "msg_todo2",
    )
    r2 = w.user(a, [{"type": "tool_result", "tool_use_id": "toolu_todo2", "content": "ok"}])
    w.assistant(r2, [{"type": "text", "text": "Plan complete."}], (3, 20_150, 30), "msg_plan")
    _continue(w, r)
    fig = measure_file(shapes.write(tmp_path / "two.jsonl", w.records))
    assert fig.lost_blocks == {}, fig.lost_blocks
    assert fig.off_branch_requests == 2


def test_a_response_that_forks_from_no_line_of_the_branch_is_still_lost(tmp_path: Any) -> None:
    """A response whose parents never reach the current branch is on no request the rebuild
    knows of: it stays counted."""
    w = shapes.Writer()
    _, r = _resumed_from_parent(w)
    w.assistant("not-in-the-file", [{"type": "text", "text": "Stray."}], (3, 100, 10), "msg_x")
    _continue(w, r)
    fig = measure_file(shapes.write(tmp_path / "stray.jsonl", w.records))
    assert fig.lost_blocks == {"text": 1}, fig.lost_blocks


def test_the_api_diagnoses_of_the_disagreements_are_counted_by_reason() -> None:
    from benchmarks.truth import _diagnosed_row, diagnosed_by_api

    dis = [
        {"recorded": "break (read 0, write 9)", "api_reason": "messages_changed"},
        {"recorded": "break (read 0, write 9)", "api_reason": "messages_changed"},
        {"recorded": "break (read 0, write 9)", "api_reason": "unavailable"},
        # a predicted break the usage did not show: the API's word on a hit is no miss
        {"recorded": "hit (read 9, write 0)", "api_reason": "messages_changed"},
        {"recorded": "break (read 0, write 9)", "api_reason": None},
    ]
    by = diagnosed_by_api(dis)
    assert by == {"messages_changed": 2, "unavailable": 1}
    row = _diagnosed_row(
        {
            "break_disagreements_diagnosed_by_api": by,
            "break_disagreements": dis,
            "recorded_requests": 1_000,
        }
    )
    # 2 client changes of 5 disagreements: 3 left over the other 998 requests
    assert row and "2 of 5" in row[0] and "99.7%" in row[0], row
    assert _diagnosed_row({"break_disagreements_diagnosed_by_api": {}}) == []
