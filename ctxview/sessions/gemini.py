"""Gemini ``generateContent`` request and response bodies as canonical messages.

One canonical message per ``Content`` (role ``user`` / ``model``; ``function``, the older role of a
function response turn, is a user turn), one block per ``Part``, the ``Content`` kept verbatim in
the message's meta (``meta["wire"]``) so a request body is written back as it was read:

* ``text`` -> ``text``; ``text`` with ``thought: true`` -> ``thinking`` (its ``thoughtSignature``
  as the signature);
* ``functionCall`` -> ``tool_use``; ``functionResponse`` -> ``tool_result``;
* a ``thoughtSignature`` on a text or ``functionCall`` part -> the block's ``signature``;
* ``inlineData`` / ``fileData`` -> ``image`` (an image type) or ``document`` (anything else),
  with a ``base64`` or ``url`` source;
* ``executableCode`` / ``toolCall`` (a tool the API runs itself) -> ``server_tool_use``, and
  ``codeExecutionResult`` / ``toolResponse`` -> ``code_execution_tool_result``, paired by ``id``
  when the part has one, else with the latest unpaired call of the same ``Content``;
* a part with none of these (only a ``thoughtSignature``, or a field this module does not know)
  -> a ``text`` block with no text, ``gemini_part`` holding the part (nothing is dropped).

**Function calls and responses** are paired the way the API pairs them: a ``functionResponse``
answers a call of the latest model turn with function calls, by ``id`` when the response carries
one that a call of that turn has; otherwise by order and name, the first call of that name not
answered yet and not named by id by another response of the same turn. A call without an ``id`` gets one that names its place (``name#turn.part``); a
response that answers no call keeps its own ``id``, or one naming its place, so the protocol
check reports it as the API would.

Both spellings of the field names are read (``functionCall`` and ``function_call``: the API takes
either, as its JSON mapping of protobuf does).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ctxview.core.providers.gemini import parts_of, response_text, shown_whole, system_of
from ctxview.sessions.model import LoadedSession
from ctxview.sessions.validate import _kind

#: ``LoadedSession.format`` of a request or response body
FORMAT = "gemini"
PROVIDER = "gemini"

#: the request field the reader turns into messages; every other one (``systemInstruction``
#: and ``tools`` too, which are also shown as the system prompt and the tools) is kept verbatim
#: in ``request_params`` and written back as it was
REQUEST_OWN_FIELDS = frozenset({"contents"})


def _get(part: Mapping[str, Any], camel: str, snake: str) -> Any:
    value = part.get(camel)
    return part.get(snake) if value is None else value


def is_request(data: Any) -> bool:
    return isinstance(data, dict) and isinstance(data.get("contents"), list)


def _is_response_object(data: Any) -> bool:
    return isinstance(data, dict) and (
        isinstance(data.get("candidates"), list)
        or (isinstance(data.get("usageMetadata"), dict) and "modelVersion" in data)
    )


def is_response(data: Any) -> bool:
    """A ``generateContent`` response, or the JSON array ``streamGenerateContent`` answers."""
    if isinstance(data, list):
        return bool(data) and _is_response_object(data[0])
    return _is_response_object(data)


def _media(part: Mapping[str, Any]) -> dict[str, Any] | None:
    inline = _get(part, "inlineData", "inline_data")
    if isinstance(inline, Mapping):
        mime = _get(inline, "mimeType", "mime_type")
        source: dict[str, Any] = {
            "type": "base64",
            "media_type": mime if isinstance(mime, str) else "",
            "data": inline.get("data") if isinstance(inline.get("data"), str) else "",
        }
    else:
        ref = _get(part, "fileData", "file_data")
        if not isinstance(ref, Mapping):
            return None
        mime = _get(ref, "mimeType", "mime_type")
        uri = _get(ref, "fileUri", "file_uri")
        source = {
            "type": "url",
            "url": uri if isinstance(uri, str) else "",
            "media_type": mime if isinstance(mime, str) else "",
        }
    kind = "image" if source["media_type"].startswith("image/") else "document"
    return {"type": kind, "source": source}


def _is_error(response: Any) -> bool:
    return isinstance(response, Mapping) and "error" in response and "output" not in response


class Pairing:
    """Which function call each function response answers (see the module docstring): the
    calls of the latest model turn with calls, and which of them are answered."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []  # (name, id) in order
        self.answered: set[int] = set()
        #: calls a response of the turn being read names by id: not for another response to
        #: take by order and name
        self.reserved: set[int] = set()

    def new_turn(self) -> None:
        self.calls = []
        self.answered = set()
        self.reserved = set()

    def reserve(self, ids: set[str]) -> None:
        self.reserved = {k for k, (_, cid) in enumerate(self.calls) if cid in ids}

    def call(self, name: str, given: Any, where: str) -> str:
        cid = given if isinstance(given, str) and given else f"{name}#{where}"
        self.calls.append((name, cid))
        return cid

    def answer(self, name: str, given: Any, where: str) -> str:
        if isinstance(given, str) and given:
            for k, (_, cid) in enumerate(self.calls):
                if cid == given and k not in self.answered:
                    self.answered.add(k)
                    return cid
        for k, (cname, cid) in enumerate(self.calls):
            if cname == name and k not in self.answered and k not in self.reserved:
                self.answered.add(k)
                return cid
        return given if isinstance(given, str) and given else f"{name}#{where}!unanswered"


def _name(spec: Mapping[str, Any]) -> str:
    name = spec.get("name")
    return name if isinstance(name, str) else ""


def _signed(block: dict[str, Any], signature: Any) -> dict[str, Any]:
    """``block`` with the part's ``thoughtSignature`` as its ``signature``: Gemini 3 rejects a
    function call of the current turn sent back without it, so a message written from its
    blocks (edited, repaired) must carry it."""
    if isinstance(signature, str) and signature:
        block["signature"] = signature
    return block


def part_block(part: Any, pairing: Pairing, where: str, server: list[str]) -> dict[str, Any]:
    """The canonical block of one ``Part`` (``where``: ``turn.part``, naming it in made-up ids;
    ``server``: the unpaired server-side tool calls of this ``Content``)."""
    if not isinstance(part, Mapping):
        return {"type": "text", "text": "", "gemini_part": part}
    signature = _get(part, "thoughtSignature", "thought_signature")
    text = part.get("text")
    if isinstance(text, str):
        if part.get("thought") is True:
            return {
                "type": "thinking",
                "thinking": text,
                "signature": signature if isinstance(signature, str) else "",
            }
        return _signed({"type": "text", "text": text}, signature)
    call = _get(part, "functionCall", "function_call")
    if isinstance(call, Mapping):
        name = _name(call)
        args = call.get("args")
        return _signed(
            {
                "type": "tool_use",
                "id": pairing.call(name, call.get("id"), where),
                "name": name,
                "input": args if isinstance(args, Mapping) else {},
            },
            signature,
        )
    answer = _get(part, "functionResponse", "function_response")
    if isinstance(answer, Mapping):
        name = _name(answer)
        response = answer.get("response")
        block: dict[str, Any] = {
            "type": "tool_result",
            "tool_use_id": pairing.answer(name, answer.get("id"), where),
            "content": response_text(response),
        }
        if not shown_whole(response):
            # the answer as sent, written back while the block says the same (a repair or an
            # edit of another part of the turn must not turn ``{"t": 20}`` into a string)
            block["gemini_response"] = response
        extra = answer.get("parts")
        if isinstance(extra, list) and extra:
            # a multimodal function response: its own parts follow the answer
            items: list[dict[str, Any]] = [{"type": "text", "text": block["content"]}]
            items.extend(_media(p) or {"type": "text", "text": ""} for p in extra)
            block["content"] = items
        if _is_error(response):
            block["is_error"] = True
        return block
    media = _media(part)
    if media is not None:
        return media
    code = _get(part, "executableCode", "executable_code")
    tool = _get(part, "toolCall", "tool_call")
    if isinstance(code, Mapping) or isinstance(tool, Mapping):
        spec: Mapping[str, Any] = code if isinstance(code, Mapping) else tool
        given = spec.get("id")
        sid = given if isinstance(given, str) and given else f"server#{where}"
        server.append(sid)
        if isinstance(code, Mapping):
            name, body = "code_execution", {k: v for k, v in code.items() if k != "id"}
        else:
            kind = _get(spec, "toolType", "tool_type")
            name = kind if isinstance(kind, str) else "server_tool"
            args = spec.get("args")
            body = dict(args) if isinstance(args, Mapping) else {}
        return {"type": "server_tool_use", "id": sid, "name": name, "input": body}
    result = _get(part, "codeExecutionResult", "code_execution_result")
    if not isinstance(result, Mapping):
        result = _get(part, "toolResponse", "tool_response")
    if isinstance(result, Mapping):
        given = result.get("id")
        if isinstance(given, str) and given in server:
            server.remove(given)
            sid = given
        elif server and not (isinstance(given, str) and given):
            sid = server.pop()
        else:
            sid = given if isinstance(given, str) and given else f"server#{where}"
        return {
            "type": "code_execution_tool_result",
            "tool_use_id": sid,
            "content": {k: v for k, v in result.items() if k != "id"},
        }
    return {"type": "text", "text": "", "gemini_part": dict(part)}


def content_message(
    content: Any, index: int, pairing: Pairing, path: str
) -> tuple[dict[str, Any], dict[str, Any]]:
    """One ``Content`` as (canonical message, meta with the wire item); ValueError naming
    ``path`` when it is not an object with a ``parts`` array."""
    if not isinstance(content, Mapping):
        raise ValueError(f"{path}: expected a Content object, got {_kind(content)}")
    parts = parts_of(content)
    if not isinstance(parts, list):
        raise ValueError(f"{path}.parts: expected an array of parts, got {_kind(parts)}")
    for j, p in enumerate(parts):
        text = p.get("text") if isinstance(p, Mapping) else None
        if text is not None and not isinstance(text, str):
            raise ValueError(f"{path}.parts[{j}].text: expected a string, got {_kind(text)}")
    role = content.get("role")
    model = role == "model"
    if model and any(
        isinstance(p, Mapping) and _get(p, "functionCall", "function_call") is not None
        for p in parts
    ):
        pairing.new_turn()
    if not model:
        pairing.reserve(
            {
                str(answer.get("id"))
                for p in parts
                if isinstance(p, Mapping)
                and isinstance(answer := _get(p, "functionResponse", "function_response"), Mapping)
                and isinstance(answer.get("id"), str)
            }
        )
    server: list[str] = []
    blocks = [part_block(p, pairing, f"{index}.{j}", server) for j, p in enumerate(parts)]
    meta: dict[str, Any] = {"wire": content}
    if role not in ("user", "model"):
        meta["wire_role"] = role
    return {"role": "assistant" if model else "user", "content": blocks}, meta


def contents_messages(
    contents: list[Any], path: str, pairing: Pairing | None = None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    pairing = pairing or Pairing()
    messages: list[dict[str, Any]] = []
    metas: list[dict[str, Any]] = []
    for i, content in enumerate(contents):
        message, meta = content_message(content, i, pairing, f"{path}[{i}]")
        messages.append(message)
        metas.append(meta)
    return messages, metas


def model_of_uri(value: Any) -> str | None:
    """``models/gemini-2.5-pro`` (a request's ``model``) as ``gemini-2.5-pro``."""
    if not isinstance(value, str) or not value:
        return None
    return value.rsplit("/", 1)[-1]


def read_request(path: str, text: str, data: Any) -> LoadedSession:
    if not is_request(data):
        raise ValueError(f"expected a generateContent request object, got {_kind(data)}")
    messages, metas = contents_messages(data["contents"], "contents")
    instruction = data.get("systemInstruction", data.get("system_instruction"))
    tools = data.get("tools") or []
    params = {k: v for k, v in data.items() if k not in REQUEST_OWN_FIELDS}
    if isinstance(tools, dict):
        # one Tool object where an array is documented (the API takes it): shown as a list of
        # one, written back as it was
        tools = [tools]
    elif not isinstance(tools, list):
        raise ValueError(f"tools: expected an array, got {_kind(tools)}")
    warnings = []
    cached = data.get("cachedContent", data.get("cached_content"))
    if isinstance(cached, str):
        warnings.append(
            f"this request continues the explicit cache {cached}: the cached contents (and any "
            "system instruction and tools stored with them) come before these messages and are "
            "not in the file; the response's cachedContentTokenCount counts them"
        )
    return LoadedSession(
        path,
        FORMAT,
        messages,
        metas,
        warnings=warnings,
        system=system_of(instruction, "systemInstruction"),
        tools=tools,
        model=model_of_uri(data.get("model")),
        request_params=params,
        provider=PROVIDER,
    )


def _merge_stream(chunks: list[Any]) -> dict[str, Any]:
    """The chunks of ``streamGenerateContent`` as one response: the first candidate's parts in
    order (text of neighbouring text parts of the same kind joined, as the API streams them),
    the last chunk's usage, model and finish reason."""
    parts: list[dict[str, Any]] = []
    finish = None
    role = "model"
    for chunk in chunks:
        if not isinstance(chunk, Mapping):
            continue
        for cand in chunk.get("candidates") or []:
            if not isinstance(cand, Mapping):
                continue
            finish = cand.get("finishReason", finish)
            content = cand.get("content")
            if not isinstance(content, Mapping):
                continue
            role = content.get("role", role)
            for p in content.get("parts") or []:
                if not isinstance(p, Mapping):
                    continue
                last = parts[-1] if parts else None
                if (
                    last is not None
                    and isinstance(p.get("text"), str)
                    and set(p) <= {"text", "thought"}
                    and isinstance(last.get("text"), str)
                    and last.get("thought") == p.get("thought")
                ):
                    last["text"] += p["text"]
                else:
                    parts.append(dict(p))
            break
    last_chunk = next((c for c in reversed(chunks) if isinstance(c, Mapping)), {})
    out: dict[str, Any] = {"candidates": [{"content": {"parts": parts, "role": role}}]}
    if finish is not None:
        out["candidates"][0]["finishReason"] = finish
    for key in ("usageMetadata", "modelVersion", "responseId"):
        if key in last_chunk:
            out[key] = last_chunk[key]
    return out


def read_response(path: str, text: str, data: Any) -> LoadedSession:
    """A response body (or a streamed one): its first candidate as one assistant message, with
    the response's usage."""
    from ctxview.core.providers.gemini import usage_meta

    if not is_response(data):
        raise ValueError(f"expected a generateContent response, got {_kind(data)}")
    response = _merge_stream(data) if isinstance(data, list) else data
    candidates = response.get("candidates") or []
    content = candidates[0].get("content") if candidates and isinstance(candidates[0], dict) else {}
    if not isinstance(content, dict):
        content = {}
    content = {"role": "model", "parts": [], **content}
    message, meta = content_message(content, 0, Pairing(), "candidates[0].content")
    usage = usage_meta(response.get("usageMetadata"))
    if usage is not None:
        meta["usage"] = usage
    if candidates and isinstance(candidates[0], dict) and "finishReason" in candidates[0]:
        meta["stop_reason"] = candidates[0]["finishReason"]
    warnings = []
    if len(candidates) > 1:
        warnings.append(f"{len(candidates)} candidates: the first is shown")
    return LoadedSession(
        path,
        FORMAT,
        [message],
        [meta],
        model=model_of_uri(response.get("modelVersion")),
        warnings=warnings,
        provider=PROVIDER,
    )


def read(path: str, text: str, data: Any) -> LoadedSession:
    if is_request(data):
        return read_request(path, text, data)
    if not is_response(data):
        # ``--format gemini`` on another file: name both shapes the reader takes (it said
        # "expected a generateContent response, got an object" of an Anthropic body)
        raise ValueError(
            "expected a Gemini generateContent request (with `contents`) or response (with "
            f"`candidates`), got {_kind(data)}{' with neither' if isinstance(data, dict) else ''}"
        )
    return read_response(path, text, data)
