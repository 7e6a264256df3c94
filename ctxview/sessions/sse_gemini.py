"""Assemble a Gemini ``streamGenerateContent`` stream into one ``GenerateContentResponse``.

The stream (``alt=sse``: one ``data:`` event per chunk; without it, one JSON array of chunks) is a
sequence of whole ``GenerateContentResponse`` objects, each with the next parts of each candidate;
the last chunk of a candidate names its ``finishReason``, and ``usageMetadata`` grows as it goes.
The parts are joined per candidate (consecutive text parts of the same kind into one, as a
non-streamed call returns them; a ``functionCall`` arrives whole). The stream is whole once a
candidate has its ``finishReason`` (or the prompt was blocked: ``promptFeedback.blockReason``)
and no error came.
"""

from __future__ import annotations

from typing import Any

from ctxview.sessions.sse import Assembled, iter_events

#: keys a text part may hold and still be joined with the text part before it
_TEXT_KEYS = frozenset({"text", "thought", "thoughtSignature"})


def gemini_error(err: Any) -> dict[str, Any]:
    """A Google API error (``{code, message, status}``) as ``{type, message}``."""
    if not isinstance(err, dict):
        return {"type": "error", "message": str(err or "")}
    etype = err.get("status") or err.get("code") or "error"
    return {"type": str(etype), "message": str(err.get("message") or "")}


def _items(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _add_part(parts: list[dict[str, Any]], part: Any) -> None:
    if not isinstance(part, dict):
        return
    last = parts[-1] if parts else None
    if (
        last is not None
        and isinstance(part.get("text"), str)
        and isinstance(last.get("text"), str)
        and part.keys() <= _TEXT_KEYS
        and last.keys() <= _TEXT_KEYS
        and bool(part.get("thought")) == bool(last.get("thought"))
        and "thoughtSignature" not in last
    ):
        last["text"] = last["text"] + part["text"]
        if "thoughtSignature" in part:
            last["thoughtSignature"] = part["thoughtSignature"]
        return
    parts.append(dict(part))


def assemble_chunks(chunks: list[Any]) -> Assembled:
    """One response from a stream's chunks, as far as they got."""
    out = Assembled()
    merged: dict[str, Any] = {}
    candidates: dict[int, dict[str, Any]] = {}
    blocked = False
    for chunk in chunks:
        out.events += 1
        if not isinstance(chunk, dict):
            continue
        if chunk.get("error") is not None:
            out.error = gemini_error(chunk["error"])
            continue
        for key in ("modelVersion", "responseId", "createTime", "promptFeedback"):
            if key in chunk:
                merged[key] = chunk[key]
        feedback = chunk.get("promptFeedback")
        if isinstance(feedback, dict) and feedback.get("blockReason"):
            blocked = True
        if isinstance(chunk.get("usageMetadata"), dict):
            out.usage = dict(chunk["usageMetadata"])
        for cand in _items(chunk.get("candidates")):
            if not isinstance(cand, dict):
                continue
            idx = cand.get("index")
            idx = idx if isinstance(idx, int) and not isinstance(idx, bool) else 0
            into = candidates.setdefault(idx, {"content": {"role": "model", "parts": []}})
            content = cand.get("content")
            if isinstance(content, dict):
                if isinstance(content.get("role"), str):
                    into["content"]["role"] = content["role"]
                for part in _items(content.get("parts")):
                    _add_part(into["content"]["parts"], part)
            for key, value in cand.items():
                if key != "content":
                    into[key] = value
    if candidates or merged:
        response: dict[str, Any] = {}
        if candidates:
            response["candidates"] = [candidates[i] for i in sorted(candidates)]
        response.update(merged)
        if out.usage:
            response["usageMetadata"] = dict(out.usage)
        out.message = response
    first = candidates.get(min(candidates)) if candidates else None
    reason = first.get("finishReason") if first is not None else None
    if isinstance(reason, str):
        out.stop_reason = reason
    elif blocked and isinstance(merged.get("promptFeedback"), dict):
        out.stop_reason = str(merged["promptFeedback"]["blockReason"])
    out.complete = (isinstance(reason, str) or blocked) and out.error is None
    return out


def assemble_gemini(data: bytes) -> Assembled:
    """The response an ``alt=sse`` stream built, as far as it got."""
    events = [ev for _name, ev in iter_events(data)]
    return assemble_chunks(events)
