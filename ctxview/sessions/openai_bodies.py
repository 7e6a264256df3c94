"""OpenAI request bodies: Chat Completions (``messages``) and the Responses API (``input``),
read into the canonical messages (:mod:`ctxview.core.providers.openai_wire`), one per wire
message or input item, each keeping its wire item in ``meta["wire"]`` so ``export`` gives the
body back.

Chat Completions: the leading ``system`` / ``developer`` messages are the session's system
prompt (their texts joined by a blank line; the messages themselves kept in ``system_wire``);
a later one is a canonical ``system`` message of its own, where it stands. Responses:
``instructions`` is the system prompt; every ``input`` item is a message (a ``developer``
item too). Every other top-level field is kept verbatim (``request_params``) and written back.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ctxview.core.content import system_text
from ctxview.core.providers.openai import CHAT, RESPONSES
from ctxview.core.providers.openai_wire import SYSTEM_ROLES, chat_message, responses_item
from ctxview.sessions.model import LoadedSession
from ctxview.sessions.validate import _kind

#: Chat Completions fields only OpenAI-style bodies have (an Anthropic body has none of them)
_CHAT_ONLY_FIELDS = frozenset(
    (
        "max_completion_tokens",
        "n",
        "response_format",
        "logprobs",
        "top_logprobs",
        "frequency_penalty",
        "presence_penalty",
        "logit_bias",
        "seed",
        "stream_options",
        "parallel_tool_calls",
        "reasoning_effort",
        "modalities",
        "audio",
        "prediction",
        "store",
        "user",
        "web_search_options",
        "prompt_cache_key",
        "safety_identifier",
        "service_tier",
        "verbosity",
    )
)
_CHAT_ONLY_PARTS = frozenset(("image_url", "input_audio", "file", "refusal"))
_OPENAI_MODELS = ("gpt-", "gpt4", "o1", "o3", "o4", "chatgpt", "codex-", "text-davinci")


def _openai_message(m: Any) -> bool:
    if not isinstance(m, Mapping):
        return False
    if m.get("role") in ("tool", "developer", "function") or "tool_calls" in m:
        return True
    content = m.get("content")
    if isinstance(content, list):
        # a part's type is untrusted: an object there is no type (and cannot be hashed)
        return any(
            isinstance(p, Mapping)
            and isinstance(p.get("type"), str)
            and p["type"] in _CHAT_ONLY_PARTS
            for p in content
        )
    return False


def is_chat_body(data: Mapping[str, Any]) -> bool:
    """A body with ``messages`` in OpenAI's Chat Completions form rather than Anthropic's: an
    OpenAI-only role, field, content part or tool form, an OpenAI model name, or a leading
    ``system`` message where Anthropic's body has a ``system`` field."""
    messages = data.get("messages")
    if not isinstance(messages, list):
        return False
    if "system" in data or "anthropic_version" in data:
        return False
    model = data.get("model")
    if isinstance(model, str) and model.lower().rsplit("/", 1)[-1].startswith(_OPENAI_MODELS):
        return True
    if any(k in data for k in _CHAT_ONLY_FIELDS):
        return True
    tools = data.get("tools")
    if isinstance(tools, list) and any(isinstance(t, Mapping) and "function" in t for t in tools):
        return True
    if any(_openai_message(m) for m in messages):
        return True
    first = messages[0] if messages else None
    return isinstance(first, Mapping) and first.get("role") in SYSTEM_ROLES


def is_responses_body(data: Mapping[str, Any]) -> bool:
    """A Responses API body: ``input`` (a string or a list of items) and no ``messages``, or no
    ``input`` and a stored prompt (``prompt: {id, version, variables}``: the prompt's messages
    are the API's)."""
    if "messages" in data:
        return False
    if "input" not in data:
        return uses_stored_prompt(data)
    return isinstance(data.get("input"), (str, list))


def uses_stored_prompt(data: Mapping[str, Any]) -> bool:
    """The body names a prompt stored with the API (``prompt.id``): its messages are not in it."""
    prompt = data.get("prompt")
    return isinstance(prompt, Mapping) and isinstance(prompt.get("id"), str)


def _objects(items: list[Any], path: str) -> None:
    for i, m in enumerate(items):
        if not isinstance(m, Mapping):
            raise ValueError(f"{path}[{i}]: expected an object, got {_kind(m)}")


#: the content parts whose ``text`` must be a string
TEXT_PARTS = ("text", "input_text", "output_text")
#: the roles whose messages the Chat Completions API refuses without content
NEEDS_CONTENT = ("user", "system", "developer", "tool")


def _content(content: Any, path: str) -> None:
    """A message's content: none, a string or an array of typed parts. Anything else is
    refused here, as the Anthropic reader refuses a block without a type: nothing downstream
    could show, check or repair it."""
    if content is None or isinstance(content, str):
        return
    if not isinstance(content, list):
        raise ValueError(f"{path}.content: expected a string or an array, got {_kind(content)}")
    for j, part in enumerate(content):
        if not isinstance(part, Mapping) or not isinstance(part.get("type"), str):
            raise ValueError(f"{path}.content[{j}]: content part without a type")
        if part["type"] in TEXT_PARTS and not isinstance(part.get("text"), str):
            raise ValueError(f"{path}.content[{j}]: text part without a text string")


def read_chat(path: str, data: Any) -> LoadedSession:
    """A Chat Completions request body."""
    if not isinstance(data, dict):
        raise ValueError(f"expected a request object, got {_kind(data)}")
    wire = data.get("messages")
    if not isinstance(wire, list):
        raise ValueError(f"messages: expected an array, got {_kind(wire)}")
    _objects(wire, "messages")
    for i, m in enumerate(wire):
        if not isinstance(m.get("role"), str):
            raise ValueError(f"messages[{i}].role: expected a string, got {_kind(m.get('role'))}")
        if m.get("content") is None and m["role"] in NEEDS_CONTENT:
            # only an assistant message (one that calls tools) may go without: the API answers
            # "Invalid value for 'content': expected a string, got null."
            raise ValueError(
                f"messages[{i}].content: a {m['role']} message needs a string or an"
                " array of parts, got " + ("null" if "content" in m else "none")
            )
        _content(m.get("content"), f"messages[{i}]")
    lead = 0
    while lead < len(wire) and wire[lead].get("role") in SYSTEM_ROLES:
        lead += 1
    system_wire = wire[:lead]
    system = "\n\n".join(system_text(m.get("content")) for m in system_wire) or None
    rest = wire[lead:]
    tools = data.get("tools") or []
    if not isinstance(tools, list):
        raise ValueError(f"tools: expected an array, got {_kind(tools)}")
    model = data.get("model")
    return LoadedSession(
        path,
        CHAT,
        [chat_message(m) for m in rest],
        [{"wire": m} for m in rest],
        system=system,
        tools=tools,
        model=model if isinstance(model, str) else None,
        request_params={
            k: v for k, v in data.items() if k not in _own(("model", "messages"), tools)
        },
        provider="openai",
        system_wire=system_wire,
    )


def _own(keys: tuple[str, ...], tools: list[Any]) -> tuple[str, ...]:
    """The body's fields a session holds apart from its other fields (``request_params``): an
    empty or null ``tools`` stays a field of its own, so the body is written back as read."""
    return (*keys, "tools") if tools else keys


def read_responses(path: str, data: Any) -> LoadedSession:
    """A Responses API request body."""
    if not isinstance(data, dict):
        raise ValueError(f"expected a request object, got {_kind(data)}")
    # a body that names a stored prompt may send no input at all
    raw = data.get("input", [] if uses_stored_prompt(data) else None)
    items: list[Any] = [raw] if isinstance(raw, str) else raw if isinstance(raw, list) else []
    if not isinstance(raw, (str, list)):
        raise ValueError(f"input: expected a string or an array, got {_kind(raw)}")
    for i, it in enumerate(items):
        if not isinstance(it, (Mapping, str)):
            raise ValueError(f"input[{i}]: expected an object, got {_kind(it)}")
        if isinstance(it, Mapping) and it.get("type", "message") == "message":
            _content(it.get("content"), f"input[{i}]")
    tools = data.get("tools") or []
    if not isinstance(tools, list):
        raise ValueError(f"tools: expected an array, got {_kind(tools)}")
    instructions = data.get("instructions")
    # instructions become the system prompt; an empty or non-text one stays a field of its own
    own = _own(("model", "input"), tools) + (
        ("instructions",) if isinstance(instructions, str) and instructions else ()
    )
    model = data.get("model")
    warnings = []
    if data.get("previous_response_id"):
        warnings.append(
            "this request continues a stored response (previous_response_id): the turns "
            "before it are not in the file"
        )
    if uses_stored_prompt(data):
        warnings.append(
            "this request uses a stored prompt (prompt.id): its instructions and messages are "
            "the API's, not in the file"
        )
    return LoadedSession(
        path,
        RESPONSES,
        [responses_item(it) for it in items],
        [{"wire": it} for it in items],
        system=instructions if isinstance(instructions, str) and instructions else None,
        tools=tools,
        model=model if isinstance(model, str) else None,
        request_params={k: v for k, v in data.items() if k not in own},
        provider="openai",
        warnings=warnings,
    )
