"""OpenTelemetry GenAI traces (OTLP JSON) as canonical messages: one session per trace.

Read: a ``{"resourceSpans": [...]}`` document (``resourceLogs`` beside it are read for events),
or a JSONL file of such documents (what the collector's file exporter writes). A *model call* is
a span that carries messages: the current semantic conventions (``gen_ai.input.messages``,
``gen_ai.output.messages``, ``gen_ai.system_instructions``, as JSON strings or OTLP arrays), or
the older event form (``gen_ai.system.message``, ``gen_ai.user.message``,
``gen_ai.assistant.message``, ``gen_ai.tool.message`` and ``gen_ai.choice``, as span events or
as log records of the span).

The calls of the trace, in start order, are one conversation: a call whose input starts with the
conversation so far continues it (its input is the whole history, as a client sends it); any other
call's input is appended. Each call's output follows, and holds the call's usage
(``gen_ai.usage.input_tokens``, ``gen_ai.usage.output_tokens``,
``gen_ai.usage.cache_read.input_tokens``, ``gen_ai.usage.cache_creation.input_tokens``).

One canonical message per OTel message (``tool`` messages are user turns of tool results), one
block per part (``text``, ``reasoning`` -> thinking, ``tool_call`` -> tool_use,
``tool_call_response`` -> tool_result, ``blob`` / ``uri`` / ``file`` -> image or document,
``server_tool_call(_response)`` -> server tool blocks; an unknown part is an empty text block
holding it). The OTel message is kept verbatim in ``meta["otel"]`` (it is not the API's own
wire form, so no request body is written from it). The provider is the trace's
``gen_ai.provider.name`` (or the older ``gen_ai.system``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC
from typing import Any

from ctxview.core.jsonfile import TextFile
from ctxview.sessions import gemini
from ctxview.sessions.model import LoadedSession, SessionError

FORMAT = "otel"

#: the object lines of a JSONL text, numbered, the others noted in the dict with why:
#: ``ctxview.sessions.readers.jsonl_objects``, the one rule for the lines of any JSONL file
JsonlObjects = Callable[[str | TextFile, dict[int, str]], Iterator[tuple[int, dict[str, Any]]]]

_EVENT_ROLES = {
    "gen_ai.system.message": "system",
    "gen_ai.user.message": "user",
    "gen_ai.assistant.message": "assistant",
    "gen_ai.tool.message": "tool",
}


def is_trace(data: Any) -> bool:
    return isinstance(data, dict) and (
        isinstance(data.get("resourceSpans"), list) or isinstance(data.get("resourceLogs"), list)
    )


def looks_like_trace_log(text: str) -> bool:
    """The JSONL form: its first line holding something is an OTLP document."""
    for raw in text.split("\n", 20):
        raw = raw.strip()
        if raw:
            return raw.startswith("{") and (
                '"resourceSpans"' in raw[:200] or '"resourceLogs"' in raw[:200]
            )
    return False


# -- OTLP values -----------------------------------------------------------------------------------


def any_value(value: Any) -> Any:
    """An OTLP ``AnyValue`` as plain JSON (``intValue`` is a string in OTLP JSON)."""
    if not isinstance(value, Mapping):
        return value
    if "stringValue" in value:
        return value["stringValue"]
    if "intValue" in value:
        try:
            return int(value["intValue"])
        except (TypeError, ValueError):
            return value["intValue"]
    if "doubleValue" in value:
        return value["doubleValue"]
    if "boolValue" in value:
        return value["boolValue"]
    if "arrayValue" in value:
        items = (
            value["arrayValue"].get("values", [])
            if isinstance(value["arrayValue"], Mapping)
            else []
        )
        return [any_value(v) for v in items]
    if "kvlistValue" in value:
        kv = (
            value["kvlistValue"].get("values", [])
            if isinstance(value["kvlistValue"], Mapping)
            else []
        )
        return attributes(kv)
    if "bytesValue" in value:
        return value["bytesValue"]
    return None


def attributes(items: Any) -> dict[str, Any]:
    """OTLP ``[{key, value}]`` as a dict (a dict already: as it is)."""
    if isinstance(items, Mapping):
        return dict(items)
    out: dict[str, Any] = {}
    if isinstance(items, list):
        for kv in items:
            if isinstance(kv, Mapping) and isinstance(kv.get("key"), str):
                out[kv["key"]] = any_value(kv.get("value"))
    return out


def _json(value: Any) -> Any:
    """A message attribute: a JSON string parsed, anything else as it is."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


# -- parts and messages ----------------------------------------------------------------------------


def _media(part: Mapping[str, Any]) -> dict[str, Any]:
    mime = part.get("mime_type") or ""
    modality = part.get("modality") or ""
    kind = "image" if modality == "image" or str(mime).startswith("image/") else "document"
    if part.get("type") == "blob":
        source = {"type": "base64", "media_type": mime, "data": part.get("content", "")}
    elif part.get("type") == "uri":
        source = {"type": "url", "url": part.get("uri", ""), "media_type": mime}
    else:
        source = {"type": "file", "file_id": part.get("file_id", ""), "media_type": mime}
    return {"type": kind, "source": source}


def _arguments(value: Any) -> dict[str, Any]:
    value = _json(value)
    return (
        dict(value) if isinstance(value, Mapping) else ({} if value is None else {"value": value})
    )


def _text_of(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def part_block(part: Any, where: str) -> dict[str, Any]:
    if not isinstance(part, Mapping):
        return {"type": "text", "text": _text_of(part)}
    kind = part.get("type")
    if kind == "text":
        return {"type": "text", "text": _text_of(part.get("content", ""))}
    if kind == "reasoning":
        return {"type": "thinking", "thinking": _text_of(part.get("content", "")), "signature": ""}
    if kind == "tool_call":
        cid = part.get("id")
        return {
            "type": "tool_use",
            "id": cid if isinstance(cid, str) and cid else f"{part.get('name')}#{where}",
            "name": str(part.get("name", "")),
            "input": _arguments(part.get("arguments")),
        }
    if kind == "tool_call_response":
        cid = part.get("id")
        return {
            "type": "tool_result",
            "tool_use_id": cid if isinstance(cid, str) and cid else f"response#{where}",
            "content": _text_of(part.get("response", "")),
        }
    if kind in ("blob", "uri", "file"):
        return _media(part)
    if kind == "server_tool_call":
        cid = part.get("id")
        call = part.get("server_tool_call")
        return {
            "type": "server_tool_use",
            "id": cid if isinstance(cid, str) and cid else f"server#{where}",
            "name": str(part.get("name", "")),
            "input": dict(call) if isinstance(call, Mapping) else {},
        }
    if kind == "server_tool_call_response":
        cid = part.get("id")
        return {
            "type": "code_execution_tool_result",
            "tool_use_id": cid if isinstance(cid, str) and cid else f"server#{where}",
            "content": part.get("server_tool_call_response"),
        }
    return {"type": "text", "text": "", "otel_part": dict(part)}


def message_of(
    message: Any, where: str, pairing: gemini.Pairing | None = None
) -> tuple[str, dict[str, Any]]:
    """(OTel role, canonical message) of one semantic-conventions message; an event whose
    ``content`` is the provider's own message (a Gemini ``Content``, as the Google GenAI
    instrumentation's events carry) is read as that provider's."""
    if not isinstance(message, Mapping):
        return "user", {"role": "user", "content": [{"type": "text", "text": _text_of(message)}]}
    role = str(message.get("role", "user"))
    native = message.get("content")
    if isinstance(native, Mapping) and isinstance(native.get("parts"), list):
        content = {k: v for k, v in native.items() if v is not None}
        if role == "assistant":
            content.setdefault("role", "model")
        turn, _ = gemini.content_message(content, 0, pairing or gemini.Pairing(), where)
        return ("system" if role == "system" else str(content.get("role") or role)), turn
    parts = message.get("parts")
    if not isinstance(parts, list):
        # an older instrumentation's {"role", "content"} message
        said = message.get("content")
        parts = [] if said is None or said == "" else [{"type": "text", "content": said}]
        for call in message.get("tool_calls") or []:
            if isinstance(call, Mapping):
                inner = call.get("function")
                fn: Mapping[str, Any] = inner if isinstance(inner, Mapping) else call
                parts.append(
                    {
                        "type": "tool_call",
                        "id": call.get("id"),
                        "name": fn.get("name"),
                        "arguments": fn.get("arguments"),
                    }
                )
        if role == "tool" and parts and parts[0].get("type") == "text":
            parts[0] = {
                "type": "tool_call_response",
                "id": message.get("id") or message.get("tool_call_id"),
                "response": parts[0]["content"],
            }
    blocks = [part_block(p, f"{where}.{j}") for j, p in enumerate(parts)]
    canonical_role = "assistant" if role in ("assistant", "model") else "user"
    return role, {"role": canonical_role, "content": blocks}


# -- spans ----------------------------------------------------------------------------------------


class _Call:
    """One model call: its messages in, out, system instructions, usage, provider and model."""

    def __init__(self, span: Mapping[str, Any], attrs: dict[str, Any], events: list[Any]) -> None:
        self.span = span
        self.attrs = attrs
        self.start = _nanos(span.get("startTimeUnixNano"))
        self.end = _nanos(span.get("endTimeUnixNano")) or self.start
        self.inputs: list[Any] = []
        self.outputs: list[Any] = []
        self.system: list[Any] = []
        inp = _json(attrs.get("gen_ai.input.messages"))
        out = _json(attrs.get("gen_ai.output.messages"))
        sysi = _json(attrs.get("gen_ai.system_instructions"))
        if isinstance(inp, list):
            self.inputs = inp
        if isinstance(out, list):
            self.outputs = out
        #: a messages attribute that is there but not an array of messages, or ""
        self.unreadable = next(
            (
                name
                for name, value in (
                    ("gen_ai.input.messages", inp),
                    ("gen_ai.output.messages", out),
                )
                if value is not None and not isinstance(value, list)
            ),
            "",
        )
        if isinstance(sysi, list):
            self.system = sysi
        elif isinstance(sysi, str):
            self.system = [{"type": "text", "content": sysi}]
        if not self.inputs and not self.outputs:
            self._from_events(events)
        self.form = "events" if events and not (inp or out) else "attributes"

    def _from_events(self, events: list[Any]) -> None:
        for name, body in events:
            body = _json(body)
            if name in _EVENT_ROLES:
                message = dict(body) if isinstance(body, Mapping) else {"content": body}
                message.setdefault("role", _EVENT_ROLES[name])
                message["content"] = _json(message.get("content"))
                self.inputs.append(message)
            elif name == "gen_ai.choice":
                choice = body if isinstance(body, Mapping) else {}
                said = _json(choice.get("message"))
                if not isinstance(said, Mapping):
                    # the choice itself holds the content (the Google GenAI instrumentation's)
                    said = {"content": choice.get("content")}
                answer = {"role": "assistant", **dict(said)}
                answer["content"] = _json(answer.get("content"))
                self.outputs.append(answer)

    def has_messages(self) -> bool:
        return bool(self.inputs or self.outputs)

    def usage(self) -> dict[str, Any] | None:
        a = self.attrs
        inp = a.get("gen_ai.usage.input_tokens", a.get("gen_ai.usage.prompt_tokens"))
        if not isinstance(inp, int) or isinstance(inp, bool) or inp < 0:
            return None
        read = a.get("gen_ai.usage.cache_read.input_tokens", 0)
        write = a.get("gen_ai.usage.cache_creation.input_tokens", 0)
        out = a.get("gen_ai.usage.output_tokens", a.get("gen_ai.usage.completion_tokens"))
        read = read if isinstance(read, int) and 0 <= read <= inp else 0
        write = write if isinstance(write, int) and 0 <= write <= inp - read else 0
        usage: dict[str, Any] = {
            # the semantic conventions count cached tokens inside input_tokens
            "input_tokens": inp - read - write,
            "cache_read_input_tokens": read,
            "cache_creation_input_tokens": write,
        }
        if isinstance(out, int) and out >= 0:
            usage["output_tokens"] = out
        return usage


def _shape(message: Mapping[str, Any]) -> str:
    """A message as compared across calls: its role and blocks, tool call ids left out (the
    instrumentation makes one up for a call the API answered without, the client sends its
    own), and thought signatures (a response's parts carry them, the instrumentation's record
    of the next call's input may not)."""
    blocks = [
        {k: v for k, v in b.items() if k not in ("id", "tool_use_id", "signature")}
        for b in message.get("content", [])
        if isinstance(b, Mapping)
    ]
    return json.dumps([message.get("role"), blocks], sort_keys=True, default=str)


def _iso(nanos: int) -> dict[str, str]:
    """``{"timestamp": ISO 8601}`` of a span time (nanoseconds since the epoch), or ``{}``."""
    if nanos <= 0:
        return {}
    from datetime import datetime

    try:
        when = datetime.fromtimestamp(nanos / 1e9, tz=UTC)
    except (OverflowError, OSError, ValueError):
        return {}
    return {"timestamp": when.isoformat().replace("+00:00", "Z")}


def _nanos(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def provider_of(system: Any) -> str:
    """``gen_ai.provider.name`` / ``gen_ai.system`` as a registry name (``gcp.gemini``,
    ``gcp.vertex_ai``, ``gemini``, ``vertex_ai`` -> ``gemini``; ``openai`` and
    ``azure.ai.openai`` -> ``openai``; anything else -> ``anthropic``, the default)."""
    name = str(system or "").lower()
    if any(k in name for k in ("gemini", "vertex", "gcp", "google")):
        return "gemini"
    if "openai" in name:
        return "openai"
    return "anthropic"


def _documents(
    text: str | TextFile, data: Any, jsonl_objects: JsonlObjects
) -> tuple[list[Any], dict[int, str]]:
    if data is not None:
        return [data], {}
    docs: list[Any] = []
    skipped: dict[int, str] = {}
    for number, record in jsonl_objects(text, skipped):
        if is_trace(record):
            docs.append(record)
        else:
            skipped[number] = "not an OTLP document"
    return docs, skipped


def _spans(
    docs: list[Any],
) -> tuple[list[tuple[dict[str, Any], dict[str, Any]]], dict[str, list[Any]]]:
    """Every span with its attributes (the resource's under it), and the log records of each
    span id as ``(event name, body)``."""
    spans: list[tuple[dict[str, Any], dict[str, Any]]] = []
    logs: dict[str, list[Any]] = {}
    for doc in docs:
        for rs in doc.get("resourceSpans") or []:
            if not isinstance(rs, Mapping):
                continue
            res = attributes((rs.get("resource") or {}).get("attributes"))
            for ss in rs.get("scopeSpans") or rs.get("instrumentationLibrarySpans") or []:
                for span in (ss or {}).get("spans") or []:
                    if isinstance(span, dict):
                        spans.append((span, {**res, **attributes(span.get("attributes"))}))
        for rl in doc.get("resourceLogs") or []:
            if not isinstance(rl, Mapping):
                continue
            for sl in rl.get("scopeLogs") or []:
                for rec in (sl or {}).get("logRecords") or []:
                    if not isinstance(rec, Mapping):
                        continue
                    attrs = attributes(rec.get("attributes"))
                    name = rec.get("eventName") or attrs.get("event.name")
                    body = any_value(rec.get("body"))
                    if isinstance(body, Mapping) or body is None:
                        body = {**attrs, **(body or {})}
                    logs.setdefault(str(rec.get("spanId", "")), []).append((name, body))
    return spans, logs


def read(path: str, text: str | TextFile, data: Any, jsonl_objects: JsonlObjects) -> LoadedSession:
    from ctxview.core.providers.registry import names

    docs, skipped = _documents(text, data, jsonl_objects)
    spans, logs = _spans(docs)
    traces: dict[str, list[_Call]] = {}
    unreadable = ""  # the first span's messages attribute that could not be read, named
    for span, attrs in spans:
        events = [
            (
                e.get("name"),
                {**attributes(e.get("attributes")), **({"body": e["body"]} if "body" in e else {})},
            )
            for e in span.get("events") or []
            if isinstance(e, Mapping)
        ]
        events = [
            (n, b.get("body", b) if isinstance(b, Mapping) and set(b) == {"body"} else b)
            for n, b in events
        ]
        events += logs.get(str(span.get("spanId", "")), [])
        call = _Call(
            span, attrs, [e for e in events if e[0] in _EVENT_ROLES or e[0] == "gen_ai.choice"]
        )
        if call.has_messages():
            traces.setdefault(str(span.get("traceId", "")), []).append(call)
        elif call.unreadable and not unreadable:
            unreadable = f"span {span.get('spanId')!s}: {call.unreadable}"
    if not traces and unreadable:
        raise SessionError(
            f"{path}: {unreadable} is not a JSON array of messages (its text is cut or not JSON?)"
        )
    if not traces:
        raise SessionError(
            f"{path}: no span of this OTLP trace carries GenAI messages (gen_ai.input.messages, "
            "gen_ai.output.messages or gen_ai.*.message events): was content capture on?"
        )
    trace_id, calls = next(iter(traces.items()))
    calls.sort(key=lambda c: c.start)
    messages: list[dict[str, Any]] = []
    metas: list[dict[str, Any]] = []
    system: list[dict[str, Any]] = []
    seen: list[str] = []  # the conversation so far, each message as canonical JSON
    for n, call in enumerate(calls):
        pairing = gemini.Pairing()
        for p in call.system:
            block = part_block(p, f"system.{n}")
            if block.get("type") == "text" and block not in system:
                system.append({"type": "text", "text": block["text"]})
        inputs: list[tuple[Any, dict[str, Any]]] = []
        for k, m in enumerate(call.inputs):
            role, canonical = message_of(m, f"{n}.in{k}", pairing)
            if role == "system":
                for b in canonical["content"]:
                    if b.get("type") == "text" and b not in system:
                        system.append({"type": "text", "text": b["text"]})
                continue
            inputs.append((m, canonical))
        keys = [_shape(c) for _, c in inputs]
        if seen and keys[: len(seen)] == seen:
            # the call sends the conversation so far again, then what is new: the messages it
            # sent stand for the earlier ones (a client re-sends a tool call with its own id
            # where the instrumentation recorded one it made up), their usage kept
            offset = len(messages) - len(seen)
            for k in range(len(seen)):
                m, canonical = inputs[k]
                messages[offset + k] = canonical
                metas[offset + k]["otel"] = m
            new = inputs[len(seen) :]
        else:
            new = inputs
        when = _iso(call.start)
        for m, canonical in new:
            messages.append(canonical)
            metas.append({"otel": m, "span": call.span.get("spanId"), **when})
        seen = [*seen, *[_shape(c) for _, c in new]]
        usage = call.usage()
        for k, m in enumerate(call.outputs):
            _, canonical = message_of(m, f"{n}.out{k}", pairing)
            meta: dict[str, Any] = {"otel": m, "span": call.span.get("spanId"), **_iso(call.end)}
            if k == 0 and usage is not None:
                meta["usage"] = usage
            model = call.attrs.get("gen_ai.response.model") or call.attrs.get(
                "gen_ai.request.model"
            )
            if isinstance(model, str):
                meta["model"] = model
            messages.append(canonical)
            metas.append(meta)
            seen.append(_shape(canonical))
    first = calls[0].attrs
    wanted = provider_of(first.get("gen_ai.provider.name") or first.get("gen_ai.system"))
    warnings = []
    if wanted not in names():
        warnings.append(f"provider {wanted} is not known to this ctxview: checked as anthropic")
        wanted = "anthropic"
    if len(traces) > 1:
        warnings.append(f"{len(traces)} traces in the file: the first ({trace_id}) is shown")
    model = next((m["model"] for m in reversed(metas) if isinstance(m.get("model"), str)), None)
    tools = _json(calls[-1].attrs.get("gen_ai.tool.definitions"))
    return LoadedSession(
        path,
        FORMAT,
        messages,
        metas,
        system=system or None,
        tools=tools if isinstance(tools, list) else [],
        model=model,
        title=f"trace {trace_id}",
        skipped_lines=sorted(skipped),
        skipped_reasons=skipped,
        warnings=warnings,
        provider=wanted,
    )
