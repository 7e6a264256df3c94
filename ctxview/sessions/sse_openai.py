"""Assemble OpenAI streams into the object a non-streamed call returns.

* Chat Completions (``stream: true``): ``data:`` chunks (``chat.completion.chunk``: deltas per
  choice, tool calls in pieces by index, usage on the last chunk with
  ``stream_options.include_usage``) ending with ``data: [DONE]``; rebuilt as a
  ``chat.completion``. Whole only once ``[DONE]`` arrived.
* Responses (``stream: true``): typed events (``response.created``, ``response.output_item.added``,
  ``response.output_text.delta``, ``response.function_call_arguments.delta``,
  ``response.output_item.done``, …) ending with ``response.completed`` (or
  ``response.incomplete``: a whole response cut by a limit, or ``response.failed``), which
  carries the whole response; a stream cut before it keeps the items as far as they got.
"""

from __future__ import annotations

from typing import Any

from ctxview.sessions.sse import Assembled, iter_events, merge_usage


def openai_error(err: Any) -> dict[str, Any]:
    """An OpenAI error object (``{message, type, code, param}``) as ``{type, message}``."""
    if not isinstance(err, dict):
        return {"type": "error", "message": str(err or "")}
    etype = err.get("type") or err.get("code") or "error"
    return {"type": str(etype), "message": str(err.get("message") or "")}


def _index(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _obj(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _items(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _append(into: dict[str, Any], key: str, piece: Any) -> None:
    if isinstance(piece, str):
        into[key] = str(into.get(key) or "") + piece


def assemble_chat(data: bytes) -> Assembled:
    """The ``chat.completion`` a Chat Completions stream built, as far as it got."""
    out = Assembled()
    head: dict[str, Any] | None = None
    choices: dict[int, dict[str, Any]] = {}
    calls: dict[tuple[int, int], dict[str, Any]] = {}
    done = False
    for _name, ev in iter_events(data):
        out.events += 1
        if ev == "[DONE]":
            done = True
            continue
        if not isinstance(ev, dict):
            continue
        if "error" in ev and ev.get("error") is not None:
            out.error = openai_error(ev["error"])
            continue
        if head is None:
            head = {
                k: ev[k]
                for k in ("id", "created", "model", "system_fingerprint", "service_tier")
                if k in ev
            }
        merge_usage(out.usage, ev.get("usage"))
        for ch in _items(ev.get("choices")):
            if not isinstance(ch, dict):
                continue
            idx = _index(ch.get("index"), 0)
            choice = choices.setdefault(
                idx,
                {
                    "index": idx,
                    "message": {"role": "assistant", "content": None},
                    "finish_reason": None,
                },
            )
            delta = _obj(ch.get("delta"))
            msg = choice["message"]
            if isinstance(delta.get("role"), str):
                msg["role"] = delta["role"]
            for key in ("content", "refusal", "reasoning_content", "reasoning"):
                _append(msg, key, delta.get(key))
            for tc in _items(delta.get("tool_calls")):
                if not isinstance(tc, dict):
                    continue
                at = _index(tc.get("index"), len(calls))
                call = calls.get((idx, at))
                if call is None:
                    call = calls[(idx, at)] = {
                        "id": "",
                        "type": "function",
                        "function": {"name": "", "arguments": ""},
                    }
                    msg.setdefault("tool_calls", []).append(call)
                if isinstance(tc.get("id"), str):
                    call["id"] = tc["id"]
                if isinstance(tc.get("type"), str):
                    call["type"] = tc["type"]
                fn = _obj(tc.get("function"))
                _append(call["function"], "name", fn.get("name"))
                _append(call["function"], "arguments", fn.get("arguments"))
            if ch.get("finish_reason") is not None:
                choice["finish_reason"] = ch["finish_reason"]
    if head is not None or choices:
        message: dict[str, Any] = {"object": "chat.completion", **(head or {})}
        message["choices"] = [choices[i] for i in sorted(choices)]
        if out.usage:
            message["usage"] = dict(out.usage)
        out.message = message
        first = choices.get(min(choices)) if choices else None
        if first is not None and isinstance(first.get("finish_reason"), str):
            out.stop_reason = first["finish_reason"]
    out.complete = done and out.error is None
    return out


def responses_stop(response: dict[str, Any]) -> str | None:
    """A Responses API response's nearest thing to a stop reason: why it is incomplete
    (``max_output_tokens``, ``content_filter``), else its status (``completed``)."""
    details = response.get("incomplete_details")
    if isinstance(details, dict) and isinstance(details.get("reason"), str):
        return str(details["reason"])
    status = response.get("status")
    return status if isinstance(status, str) else None


def assemble_responses(data: bytes) -> Assembled:
    """The ``response`` a Responses stream built: the one its last event carried whole, else
    the output items as far as they arrived."""
    out = Assembled()
    response: dict[str, Any] | None = None
    items: dict[int, dict[str, Any]] = {}
    whole = False
    for name, ev in iter_events(data):
        out.events += 1
        if not isinstance(ev, dict):
            continue
        etype = ev.get("type", name)
        at = ev.get("output_index")
        item = items.get(at) if isinstance(at, int) else None
        if etype in ("response.created", "response.in_progress", "response.queued"):
            if isinstance(ev.get("response"), dict):
                response = dict(ev["response"])
        elif etype in ("response.output_item.added", "response.output_item.done"):
            if isinstance(at, int) and isinstance(ev.get("item"), dict):
                items[at] = dict(ev["item"])
        elif etype == "response.content_part.added" and item is not None:
            part = ev.get("part")
            ci = ev.get("content_index")
            if isinstance(part, dict) and isinstance(ci, int):
                content = item.setdefault("content", [])
                if isinstance(content, list):
                    while len(content) <= ci:
                        content.append({})
                    content[ci] = dict(part)
        elif etype in ("response.output_text.delta", "response.refusal.delta") and item:
            ci = ev.get("content_index")
            content = item.get("content")
            if isinstance(ci, int) and isinstance(content, list) and ci < len(content):
                key = "text" if etype == "response.output_text.delta" else "refusal"
                _append(content[ci], key, ev.get("delta"))
        elif etype == "response.function_call_arguments.delta" and item is not None:
            _append(item, "arguments", ev.get("delta"))
        elif etype in ("response.completed", "response.incomplete", "response.failed"):
            if isinstance(ev.get("response"), dict):
                response = dict(ev["response"])
                whole = True
            if etype == "response.failed":
                err = response.get("error") if response is not None else None
                out.error = openai_error(err or {"type": "response.failed"})
        elif etype == "error":
            out.error = openai_error(ev.get("error") if isinstance(ev.get("error"), dict) else ev)
    if response is not None:
        if not whole:
            response["output"] = [items[i] for i in sorted(items)]
        merge_usage(out.usage, response.get("usage"))
        out.stop_reason = responses_stop(response) if whole else None
        out.message = response
    out.complete = whole and out.error is None
    return out
