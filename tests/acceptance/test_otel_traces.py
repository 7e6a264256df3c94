"""Acceptance on OpenTelemetry GenAI traces (tests/acceptance/otel/, MANIFEST.md there): the
official Google GenAI instrumentation's spans of real recorded exchanges, in the current
conventions and the older event form, open as the conversation of the last call, with each
call's recorded usage and zero protocol errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxview.core.protocol import check_protocol, errors
from ctxview.core.providers.gemini import PROVIDER
from ctxview.sessions import load_session
from tests.support.paths import ACCEPTANCE

OTEL = ACCEPTANCE / "otel"
GEMINI = ACCEPTANCE / "gemini"
#: each trace and the recorded exchanges it replays
REPLAYED = {
    "deferred_capability_3_calls": "pai_deferred_capability_announcement_live",
    "tool_loop_3_calls": "pai_instructions_only_with_tool_calls",
}


def _recorded(stem: str) -> tuple[int, list[int]]:
    """(contents of the last recorded request, promptTokenCount of each response)."""
    requests = sorted(GEMINI.glob(f"{stem}_req*.json"))
    last = json.loads(requests[-1].read_text())
    prompts = []
    for r in requests:
        response = json.loads(r.with_name(r.name.replace("_req", "_resp")).read_text())
        prompts.append(response["usageMetadata"]["promptTokenCount"])
    return len(last["contents"]), prompts


@pytest.mark.parametrize("form", ["semconv", "events"])
@pytest.mark.parametrize("case", sorted(REPLAYED))
def test_a_trace_opens_as_the_recorded_conversation(form: str, case: str) -> None:
    session = load_session(OTEL / f"genai_{form}_{case}.json")
    n_contents, prompts = _recorded(REPLAYED[case])
    assert (session.format, session.provider) == ("otel", "gemini")
    assert len(session.messages) == n_contents + 1  # the history sent last, and its answer
    usage = [m["usage"] for m in session.metas if "usage" in m]
    assert [u["input_tokens"] + u["cache_read_input_tokens"] for u in usage] == prompts
    assert errors(check_protocol(session.messages, session.system, PROVIDER.rules)) == []
    for message, meta in zip(session.messages, session.metas, strict=True):
        otel = meta["otel"]  # a part of the conventions' message, or of the event's Content
        parts = otel["parts"] if "parts" in otel else otel["content"]["parts"]
        assert len(parts) == len(message["content"])


@pytest.mark.parametrize("case", sorted(REPLAYED))
def test_both_forms_give_the_same_conversation(case: str) -> None:
    def shape(path: Path) -> list[list[str]]:
        s = load_session(path)
        return [[b["type"] for b in m["content"]] for m in s.messages]

    assert shape(OTEL / f"genai_semconv_{case}.json") == shape(OTEL / f"genai_events_{case}.json")
