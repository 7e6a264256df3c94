"""OpenAI's wire items and ctxview's canonical messages, both ways, written once: the readers
(``ctxview.sessions.openai_chat``, ``openai_responses``, ``codex``) turn each wire message or
input item into ONE canonical message; the body writer (:mod:`ctxview.core.providers.openai`)
gives a message's wire item back verbatim while the message is what its wire item reads as, and
writes a changed or new message from its canonical form.

The canonical form is Anthropic-shaped (role user/assistant/system; blocks ``text``, ``image``,
``document``, ``tool_use``, ``tool_result``, ``thinking``). What has no canonical block (audio,
built-in tool calls such as ``web_search_call``, ``item_reference``) is kept as a block of its
own wire type holding the wire part, so no part is lost and the views show it as it is.

Chat Completions messages:

* ``system`` / ``developer`` → a ``system`` message with the text (the readers take the leading
  ones as the session's system prompt instead);
* ``user`` → ``user``: a string stays a string; parts ``text`` → text, ``image_url`` → image
  (an URL source, or base64 from a ``data:`` URL), ``file`` → document, others (``input_audio``)
  kept as they are;
* ``assistant`` → ``assistant``: its text (or ``refusal``) as a text block, then one
  ``tool_use`` per ``tool_calls`` entry (``input``: the parsed ``arguments``; arguments that are
  not a JSON object are kept as ``{"arguments": text}``); a string with no tool call stays a
  string;
* ``tool`` → ``user`` holding one ``tool_result`` (``tool_use_id``: its ``tool_call_id``);
  ``function`` (the older form) likewise, paired by the function's name.

Responses API input items:

* ``message`` (or an item with a ``role`` and no type) → its role, parts ``input_text`` /
  ``output_text`` / ``refusal`` → text, ``input_image`` → image, ``input_file`` → document;
  ``system`` / ``developer`` → ``system``;
* ``function_call`` / ``custom_tool_call`` → ``assistant`` holding a ``tool_use`` (id: the
  ``call_id``); ``function_call_output`` / ``custom_tool_call_output`` → ``user`` holding a
  ``tool_result``;
* ``reasoning`` → ``assistant`` holding a ``thinking`` block (its summary, or its content, as
  the text; ``encrypted_content`` as the signature);
* every other item → ``user`` when its type ends in ``_output`` (or is ``item_reference``), else
  ``assistant``, holding the item itself as a block;
* an item's ``id`` (the item of a stored response: ``rs_…``, ``fc_…``, ``msg_…``) as the
  ``item_id`` of the message's first block (its text made a text block when it was a string);
  a message written from its canonical form carries none (changed, it is no longer that
  stored item).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

#: the canonical role of a system or developer message
#: a tuple: a message's ``role`` is untrusted JSON (a list there cannot be looked up in a set)
SYSTEM_ROLES = ("system", "developer")


def _text(t: Any) -> dict[str, Any]:
    return {"type": "text", "text": t if isinstance(t, str) else json.dumps(t)}


def _data_url(url: str) -> tuple[str, str] | None:
    """(media type, base64 data) of a ``data:<type>;base64,<data>`` URL."""
    if not url.startswith("data:"):
        return None
    head, sep, data = url.partition(",")
    if not sep or not head.endswith(";base64"):
        return None
    return head[5:-7], data


def _image(url: Any) -> dict[str, Any]:
    if isinstance(url, str):
        found = _data_url(url)
        if found is not None:
            return {
                "type": "image",
                "source": {"type": "base64", "media_type": found[0], "data": found[1]},
            }
        return {"type": "image", "source": {"type": "url", "url": url}}
    return {"type": "image", "source": {"type": "url", "url": str(url)}}


def _document(file_id: Any, file_data: Any, file_url: Any, filename: Any) -> dict[str, Any]:
    source: dict[str, Any]
    if isinstance(file_data, str):
        found = _data_url(file_data)
        source = (
            {"type": "base64", "media_type": found[0], "data": found[1]}
            if found is not None
            else {"type": "text", "media_type": "text/plain", "data": file_data}
        )
    elif isinstance(file_id, str):
        source = {"type": "file", "file_id": file_id}
    else:
        source = {"type": "url", "url": file_url if isinstance(file_url, str) else ""}
    block: dict[str, Any] = {"type": "document", "source": source}
    if isinstance(filename, str):
        block["title"] = filename
    return block


def _arguments(raw: Any) -> dict[str, Any]:
    """A tool call's ``arguments`` (a JSON text) as the tool_use's input object."""
    if isinstance(raw, Mapping):
        return dict(raw)
    if isinstance(raw, str):
        try:
            value = json.loads(raw)
        except ValueError:
            return {"arguments": raw}
        if isinstance(value, dict):
            return value
    return {"arguments": raw}


# -- Chat Completions ---------------------------------------------------------------------------
def _chat_part(p: Any) -> Any:
    if not isinstance(p, Mapping):
        return _text(p)
    t = p.get("type")
    if t == "text":
        return _text(p.get("text"))
    if t == "image_url":
        iu = p.get("image_url")
        return _image(iu.get("url") if isinstance(iu, Mapping) else iu)
    if t == "file":
        f = p.get("file")
        f = f if isinstance(f, Mapping) else {}
        return _document(f.get("file_id"), f.get("file_data"), None, f.get("filename"))
    return dict(p)


def _chat_content(content: Any) -> Any:
    """A user or tool message's content: a string as it is, parts as blocks."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return [_chat_part(p) for p in content]
    return json.dumps(content)


def _chat_tool_use(tc: Any, k: int) -> dict[str, Any]:
    if not isinstance(tc, Mapping):
        return {"type": "tool_use", "id": f"tool_call_{k}", "name": "", "input": {}}
    fn = tc.get("function")
    custom = tc.get("custom")
    if isinstance(fn, Mapping):
        name, args = fn.get("name"), _arguments(fn.get("arguments"))
    elif isinstance(custom, Mapping):
        name, args = custom.get("name"), {"input": custom.get("input")}
    else:
        name, args = tc.get("type"), {}
    cid = tc.get("id")
    return {
        "type": "tool_use",
        "id": cid if isinstance(cid, str) else f"tool_call_{k}",
        "name": name if isinstance(name, str) else "",
        "input": args,
    }


def chat_message(m: Mapping[str, Any]) -> dict[str, Any]:
    """One Chat Completions message as a canonical message (see the module docstring)."""
    role = m.get("role")
    content = m.get("content")
    if role in SYSTEM_ROLES:
        return {"role": "system", "content": _chat_content(content)}
    if role == "tool" or role == "function":
        tid = m.get("tool_call_id") if role == "tool" else f"function:{m.get('name')}"
        return {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": tid if isinstance(tid, str) else "",
                    "content": _chat_content(content),
                }
            ],
        }
    if role != "assistant":
        return {
            "role": role if isinstance(role, str) else "user",
            "content": _chat_content(content),
        }
    calls = m.get("tool_calls")
    legacy = m.get("function_call")
    refusal = m.get("refusal")
    if isinstance(content, str) and not calls and not legacy and not refusal:
        return {"role": "assistant", "content": content}
    blocks: list[Any] = []
    if isinstance(content, str):
        if content:
            blocks.append(_text(content))
    elif isinstance(content, list):
        for p in content:
            if isinstance(p, Mapping) and p.get("type") == "refusal":
                blocks.append(_text(p.get("refusal")))
            else:
                blocks.append(_chat_part(p))
    if isinstance(refusal, str) and refusal:
        blocks.append(_text(refusal))
    if isinstance(calls, list):
        blocks.extend(_chat_tool_use(tc, k) for k, tc in enumerate(calls))
    if isinstance(legacy, Mapping):
        blocks.append(
            {
                "type": "tool_use",
                "id": f"function:{legacy.get('name')}",
                "name": str(legacy.get("name") or ""),
                "input": _arguments(legacy.get("arguments")),
            }
        )
    return {"role": "assistant", "content": blocks}


def _plain_text(content: Any) -> str | None:
    """The text of canonical content made of text alone, else None."""
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(
        isinstance(b, Mapping) and b.get("type") == "text" for b in content
    ):
        return "".join(str(b.get("text", "")) for b in content)
    return None


def _chat_part_out(b: Any) -> Any:
    t = b.get("type") if isinstance(b, Mapping) else None
    if t == "text":
        return {"type": "text", "text": b.get("text", "")}
    if t == "image":
        src = b.get("source") or {}
        url = (
            f"data:{src.get('media_type')};base64,{src.get('data')}"
            if src.get("type") == "base64"
            else src.get("url", "")
        )
        return {"type": "image_url", "image_url": {"url": url}}
    if t == "document":
        src = b.get("source") or {}
        f: dict[str, Any] = {}
        if src.get("type") == "file":
            f["file_id"] = src.get("file_id")
        elif src.get("type") == "base64":
            f["file_data"] = f"data:{src.get('media_type')};base64,{src.get('data')}"
        if b.get("title"):
            f["filename"] = b["title"]
        return {"type": "file", "file": f}
    if isinstance(b, Mapping):
        return dict(b)
    return {"type": "text", "text": str(b)}


def _chat_content_out(content: Any) -> Any:
    text = _plain_text(content)
    if isinstance(content, str) or (text is not None and len(content) <= 1):
        return text
    return [_chat_part_out(b) for b in content]


def to_chat(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A canonical message as Chat Completions messages (a user message holding tool_results is
    one ``tool`` message per result, then a user message for what else it holds)."""
    role = message.get("role")
    content = message.get("content")
    if role == "system":
        return [{"role": "system", "content": _plain_text(content) or ""}]
    if role == "assistant":
        blocks = content if isinstance(content, list) else []
        if isinstance(content, str):
            return [{"role": "assistant", "content": content}]
        texts = [b for b in blocks if isinstance(b, Mapping) and b.get("type") == "text"]
        uses = [b for b in blocks if isinstance(b, Mapping) and b.get("type") == "tool_use"]
        out: dict[str, Any] = {
            "role": "assistant",
            "content": "".join(str(b.get("text", "")) for b in texts) if texts else None,
        }
        if uses:
            out["tool_calls"] = [
                {
                    "id": u.get("id"),
                    "type": "function",
                    "function": {
                        "name": u.get("name"),
                        "arguments": json.dumps(u.get("input") or {}, ensure_ascii=False),
                    },
                }
                for u in uses
            ]
        return [out]
    if isinstance(content, list):
        results = [b for b in content if isinstance(b, Mapping) and b.get("type") == "tool_result"]
        rest = [
            b for b in content if not (isinstance(b, Mapping) and b.get("type") == "tool_result")
        ]
        msgs: list[dict[str, Any]] = [
            {
                "role": "tool",
                "tool_call_id": r.get("tool_use_id"),
                "content": _chat_content_out(r.get("content", "")) or "",
            }
            for r in results
        ]
        if rest:
            msgs.append({"role": "user", "content": _chat_content_out(rest)})
        return msgs or [{"role": "user", "content": ""}]
    return [{"role": "user", "content": content if isinstance(content, str) else ""}]


# -- Responses API ------------------------------------------------------------------------------
def _responses_part(p: Any) -> Any:
    if isinstance(p, str):
        return _text(p)
    if not isinstance(p, Mapping):
        return _text(json.dumps(p))
    t = p.get("type")
    if t in ("input_text", "output_text", "text"):
        return _text(p.get("text"))
    if t == "refusal":
        return _text(p.get("refusal"))
    if t == "input_image":
        url = p.get("image_url")
        if url is None and isinstance(p.get("file_id"), str):
            return {"type": "image", "source": {"type": "file", "file_id": p["file_id"]}}
        return _image(url)
    if t == "input_file":
        return _document(p.get("file_id"), p.get("file_data"), p.get("file_url"), p.get("filename"))
    return dict(p)


def _responses_content(content: Any) -> Any:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return [_responses_part(p) for p in content]
    return json.dumps(content)


def _reasoning_text(item: Mapping[str, Any]) -> str:
    parts: list[str] = []
    for key in ("summary", "content"):
        v = item.get(key)
        if isinstance(v, list):
            parts.extend(str(p.get("text", "")) for p in v if isinstance(p, Mapping))
    return "\n\n".join(parts)


#: item types whose canonical role is the user's though their name does not end in _output
_USER_ITEMS = frozenset(("item_reference",))


#: the key, on the first block of a canonical message read from a Responses item with an
#: ``id`` (``rs_…``, ``fc_…``, ``msg_…``), of that id: the item of a stored response it is, which
#: the reasoning rule reads (a block's key: the Messages API's rules check no block key they do
#: not know, where a message's own keys are refused)
ITEM_ID = "item_id"


def item_id_of(message: Mapping[str, Any]) -> str | None:
    """The id of the stored item a canonical message was read from, else None (an item kept as
    a block of its own type carries its ``id`` itself)."""
    content = message.get("content")
    first = content[0] if isinstance(content, list) and content else None
    if not isinstance(first, Mapping):
        return None
    iid = first.get(ITEM_ID)
    if iid is None and first.get("type") not in _CANONICAL_BLOCKS:
        iid = first.get("id")
    return iid if isinstance(iid, str) and iid else None


#: the canonical block types (any other block is a wire item or part kept as it is)
_CANONICAL_BLOCKS = ("text", "image", "document", "tool_use", "tool_result", "thinking")


def stored_reasoning(message: Mapping[str, Any]) -> str | None:
    """The item id of a canonical message read from a ``reasoning`` item of a stored response
    (one with an ``id``), else None."""
    content = message.get("content")
    if (
        message.get("role") == "assistant"
        and isinstance(content, list)
        and content
        and all(isinstance(b, Mapping) and b.get("type") == "thinking" for b in content)
    ):
        return item_id_of(message)
    return None


def responses_item(item: Any) -> dict[str, Any]:
    """One Responses API input item as a canonical message (see the module docstring)."""
    if isinstance(item, str):
        return {"role": "user", "content": item}
    if not isinstance(item, Mapping):
        return {"role": "user", "content": json.dumps(item)}
    message = _responses_message(item)
    iid = item.get("id")
    content = message["content"]
    if isinstance(iid, str) and iid and content:
        if isinstance(content, str):
            message["content"] = content = [_text(content)]
        first = content[0]
        if isinstance(first, dict) and first.get("type") in _CANONICAL_BLOCKS:
            content[0] = {**first, ITEM_ID: iid}
    return message


def _responses_message(item: Mapping[str, Any]) -> dict[str, Any]:
    t = item.get("type")
    if t is None or t == "message":
        role = item.get("role")
        content = _responses_content(item.get("content"))
        if role in SYSTEM_ROLES:
            return {"role": "system", "content": content}
        return {"role": role if role in ("user", "assistant") else "user", "content": content}
    if t in ("function_call", "custom_tool_call"):
        cid = item.get("call_id")
        name = item.get("name")
        args = (
            _arguments(item.get("arguments"))
            if t == "function_call"
            else {"input": item.get("input")}
        )
        return {
            "role": "assistant",
            "content": [
                {
                    "type": "tool_use",
                    "id": cid if isinstance(cid, str) else "",
                    "name": name if isinstance(name, str) else "",
                    "input": args,
                }
            ],
        }
    if t in ("function_call_output", "custom_tool_call_output"):
        cid = item.get("call_id")
        out = item.get("output")
        return {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": cid if isinstance(cid, str) else "",
                    "content": _responses_content(out)
                    if isinstance(out, (str, list))
                    else json.dumps(out),
                }
            ],
        }
    if t == "reasoning":
        sig = item.get("encrypted_content")
        return {
            "role": "assistant",
            "content": [
                {
                    "type": "thinking",
                    "thinking": _reasoning_text(item),
                    "signature": sig if isinstance(sig, str) else "",
                }
            ],
        }
    role = (
        "user"
        if (isinstance(t, str) and t.endswith("_output")) or t in _USER_ITEMS
        else "assistant"
    )
    return {"role": role, "content": [dict(item)]}


def _responses_part_out(b: Any, role: str) -> Any:
    t = b.get("type") if isinstance(b, Mapping) else None
    if t == "text":
        return {
            "type": "output_text" if role == "assistant" else "input_text",
            "text": b.get("text", ""),
        }
    if t == "image":
        src = b.get("source") or {}
        if src.get("type") == "file":
            return {"type": "input_image", "file_id": src.get("file_id")}
        url = (
            f"data:{src.get('media_type')};base64,{src.get('data')}"
            if src.get("type") == "base64"
            else src.get("url", "")
        )
        return {"type": "input_image", "image_url": url}
    if t == "document":
        src = b.get("source") or {}
        out: dict[str, Any] = {"type": "input_file"}
        if src.get("type") == "file":
            out["file_id"] = src.get("file_id")
        elif src.get("type") == "base64":
            out["file_data"] = f"data:{src.get('media_type')};base64,{src.get('data')}"
        elif src.get("type") == "url":
            out["file_url"] = src.get("url")
        if b.get("title"):
            out["filename"] = b["title"]
        return out
    if isinstance(b, Mapping):
        return dict(b)
    return {"type": "input_text", "text": str(b)}


def to_responses(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    """A canonical message as Responses API input items (one per tool call, result and
    reasoning block; the rest of a message as one message item)."""
    role = str(message.get("role") or "user")
    content = message.get("content")
    if isinstance(content, str):
        wire_role = "developer" if role == "system" else role
        return [{"role": wire_role, "content": content}]
    items: list[dict[str, Any]] = []
    parts: list[Any] = []

    def flush() -> None:
        if parts:
            items.append(
                {
                    "type": "message",
                    "role": "developer" if role == "system" else role,
                    "content": [_responses_part_out(p, role) for p in parts],
                }
            )
            parts.clear()

    for b in content if isinstance(content, list) else []:
        t = b.get("type") if isinstance(b, Mapping) else None
        if t == "tool_use":
            flush()
            items.append(
                {
                    "type": "function_call",
                    "call_id": b.get("id"),
                    "name": b.get("name"),
                    "arguments": json.dumps(b.get("input") or {}, ensure_ascii=False),
                }
            )
        elif t == "tool_result":
            flush()
            c = b.get("content", "")
            items.append(
                {
                    "type": "function_call_output",
                    "call_id": b.get("tool_use_id"),
                    "output": c
                    if isinstance(c, str)
                    else [_responses_part_out(p, "user") for p in c],
                }
            )
        elif t == "thinking":
            flush()
            item: dict[str, Any] = {
                "type": "reasoning",
                "summary": [{"type": "summary_text", "text": b.get("thinking", "")}],
            }
            if b.get("signature"):
                item["encrypted_content"] = b["signature"]
            items.append(item)
        elif (
            isinstance(b, Mapping)
            and isinstance(t, str)
            and t
            not in (
                "text",
                "image",
                "document",
            )
        ):
            flush()
            items.append(dict(b))  # a wire item kept as a block of its own type
        else:
            parts.append(b)
    flush()
    return items


def canonical_of(kind: str, wire: Any) -> dict[str, Any]:
    """The canonical message a wire item of ``kind`` (``"chat"`` or ``"responses"``) reads as."""
    if kind == "chat":
        return chat_message(wire if isinstance(wire, Mapping) else {})
    return responses_item(wire)


def to_wire(kind: str, message: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The wire items of a canonical message for ``kind``."""
    return to_chat(message) if kind == "chat" else to_responses(message)


def wire_items(kind: str, messages: Sequence[Mapping[str, Any]], wires: Sequence[Any]) -> list[Any]:
    """The wire items of a window: each message's own wire item while the message is what that
    item reads as (an opened file's messages come back verbatim), else written from the
    canonical form (a message edited, cleared by context editing, or added)."""
    out: list[Any] = []
    for i, m in enumerate(messages):
        wire = wires[i] if i < len(wires) else None
        if wire is not None and canonical_of(kind, wire) == m:
            out.append(wire)
        else:
            out.extend(to_wire(kind, m))
    return out
