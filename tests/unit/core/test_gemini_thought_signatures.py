"""Gemini 3's thought-signature rule (``ctxview.core.providers.gemini.thought_signatures``): a
function call of the current turn sent back without its ``thoughtSignature`` is rejected; the
signature survives a message written from its blocks."""

from __future__ import annotations

from typing import Any

import pytest

from ctxview.core.protocol import check_protocol, errors
from ctxview.core.providers.base import BodyParts
from ctxview.core.providers.gemini import PROVIDER, validates_signatures, write_body
from ctxview.sessions.gemini import contents_messages

ASK = {"role": "user", "parts": [{"text": "weather in Paris and Rome?"}]}


def _call(name: str, signature: str | None = None) -> dict[str, Any]:
    part: dict[str, Any] = {"functionCall": {"name": name, "args": {}}}
    if signature is not None:
        part["thoughtSignature"] = signature
    return part


def _answer(*names: str) -> dict[str, Any]:
    return {
        "role": "user",
        "parts": [{"functionResponse": {"name": n, "response": {"output": "ok"}}} for n in names],
    }


def _errors(contents: list[Any], model: str) -> list[Any]:
    messages, _ = contents_messages(contents, "contents")
    rules = PROVIDER.rules_for("gemini", {}, model)
    return errors(check_protocol(messages, None, rules))


UNSIGNED = [ASK, {"role": "model", "parts": [_call("weather")]}, _answer("weather")]


def test_a_call_of_the_current_turn_without_its_signature_is_rejected_by_gemini_3() -> None:
    [problem] = _errors(UNSIGNED, "gemini-3-flash-preview")
    assert (problem.code, problem.index, problem.block) == ("missing_thought_signature", 1, 0)
    assert problem.message.startswith(
        "Function call is missing a thought_signature in functionCall parts. This is required "
        "for tools to work correctly, and missing thought_signature may lead to degraded model "
        "performance. Additional data, function call `default_api:weather` , position 2."
    )


@pytest.mark.parametrize(
    "model", ["gemini-2.5-flash", "gemini-2.0-flash", "gemini-3-pro-image-preview", None, ""]
)
def test_models_that_do_not_validate_signatures_accept_it(model: str | None) -> None:
    assert not validates_signatures(model)
    messages, _ = contents_messages(UNSIGNED, "contents")
    assert errors(check_protocol(messages, None, PROVIDER.rules_for("gemini", {}, model))) == []


@pytest.mark.parametrize(
    "model", ["gemini-3-flash-preview", "models/gemini-3.1-pro-preview", "gemini-3.6-flash"]
)
def test_gemini_3_models_validate_signatures(model: str) -> None:
    assert validates_signatures(model)


def test_only_the_first_call_of_a_step_carries_one() -> None:
    parallel = [
        ASK,
        {"role": "model", "parts": [_call("weather", "c2ln"), _call("time")]},
        _answer("weather", "time"),
    ]
    assert _errors(parallel, "gemini-3-flash-preview") == []


def test_every_step_of_the_current_turn_is_validated() -> None:
    steps = [
        ASK,
        {"role": "model", "parts": [_call("weather", "c2ln")]},
        _answer("weather"),
        {"role": "model", "parts": [{"text": "and now"}, _call("time")]},
        _answer("time"),
    ]
    [problem] = _errors(steps, "gemini-3-flash-preview")
    assert (problem.index, problem.block) == (3, 1)
    assert "position 4." in problem.message


def test_earlier_turns_are_not_validated() -> None:
    later = [*UNSIGNED, {"role": "model", "parts": [{"text": "sunny"}]}, ASK]
    assert _errors(later, "gemini-3-flash-preview") == []


def test_a_session_is_checked_by_its_models_rules(tmp_path: Any) -> None:
    import json

    from ctxview.sessions import load_session
    from ctxview.sessions.replay import replay

    path = tmp_path / "body.json"
    path.write_text(json.dumps({"model": "gemini-3-pro-preview", "contents": UNSIGNED}))
    rep = replay(load_session(path), as_sent=True)
    [problem] = errors(check_protocol(rep.session.messages, None, rep.protocol_rules))
    assert problem.code == "missing_thought_signature"


def test_a_message_written_from_its_blocks_keeps_its_signatures() -> None:
    contents = [
        ASK,
        {"role": "model", "parts": [{"text": "checking", "thoughtSignature": "dGV4dA"}]},
        {"role": "model", "parts": [_call("weather", "c2ln"), _call("time")]},
    ]
    messages, _ = contents_messages(contents, "contents")
    # no wire items: every Content is written from its canonical blocks (an edited message)
    body = write_body(BodyParts("gemini-3-flash-preview", messages))
    assert body["contents"][1]["parts"] == [{"text": "checking", "thoughtSignature": "dGV4dA"}]
    assert body["contents"][2]["parts"][0]["thoughtSignature"] == "c2ln"
    assert "thoughtSignature" not in body["contents"][2]["parts"][1]


def test_a_gemini_cli_session_is_not_checked_for_signatures_its_records_never_hold() -> None:
    assert PROVIDER.rules_for("gemini-cli", {}, "gemini-3-pro-preview") is PROVIDER.rules
    assert PROVIDER.rules_for("gemini", {}, "gemini-3-pro-preview") is not PROVIDER.rules
