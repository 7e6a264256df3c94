"""OpenAI's offline token estimate: content by characters, framing by OpenAI's documented rules.

Without the tokenizer's vocabulary (no network), content is counted from its characters; the
fixed costs the API adds around it follow the openai-cookbook "How to count tokens with
tiktoken", and dominate small requests:

* every message (system, developer, user, assistant, tool; a Responses input item) costs
  :data:`MESSAGE_OVERHEAD_TOKENS` for its role and framing;
* every request costs :data:`REPLY_PRIMING_TOKENS` once, priming the reply
  (``<|start|>assistant<|message|>``), counted with the system prompt;
* function definitions: :data:`FUNCTION_INIT_TOKENS` each, ``name:description``,
  :data:`PROPERTIES_INIT_TOKENS` when it has parameters, :data:`PROPERTY_TOKENS` per parameter
  and ``name:type:description``, :data:`ENUM_ITEM_TOKENS` per enum value beyond the first
  (the cookbook's ``enum_init`` is -3), and :data:`FUNCTIONS_END_TOKENS` once for the list;
* images: 85 tokens at ``detail: low``; at high, 85 + 170 per 512 px tile of the image fitted
  in 2048 px and its short side scaled to 768 px (the cookbook / OpenAI "Images and vision");
* a structured-output schema (Chat ``response_format.json_schema``, Responses ``text.format``)
  as a definition: :data:`FUNCTION_INIT_TOKENS` and its JSON;
* a compaction item (the earlier conversation, encrypted) by the length of its
  ``encrypted_content`` (:data:`ENCRYPTED_CHARS_PER_TOKEN`, fitted on the tune set).

:data:`CHARS_PER_TOKEN` was fitted on the tune half of the recorded bodies only
(``python -m benchmarks.truth_openai --set tune``; docs/providers.md).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from ctxview.core.tokens import _json_len, image_info

MESSAGE_OVERHEAD_TOKENS = 3
REPLY_PRIMING_TOKENS = 3
FUNCTION_INIT_TOKENS = 7
PROPERTIES_INIT_TOKENS = 3
PROPERTY_TOKENS = 3
ENUM_ITEM_TOKENS = 3
ENUM_INIT_TOKENS = -3
FUNCTIONS_END_TOKENS = 12
IMAGE_BASE_TOKENS = 85
IMAGE_TILE_TOKENS = 170
#: an image whose size cannot be read offline (a URL): two tiles, close to the median billed
#: for such images on the tune set (252 to 655 tokens, median about 430)
IMAGE_UNKNOWN_TOKENS = IMAGE_BASE_TOKENS + 2 * IMAGE_TILE_TOKENS
#: a file part with no text to measure (a PDF: its pages' text and images): the median billed
#: for one on the tune set (6 to 1,055 tokens, median 218)
FILE_UNKNOWN_TOKENS = 220

#: characters a token of o200k_base on the recorded English prose, JSON and code
CHARS_PER_TOKEN = 4.0
#: characters of an item's ``encrypted_content`` (a compaction item: the earlier conversation,
#: encrypted) a billed token: 0.085 to 0.11 tokens a character on the tune set's compactions
ENCRYPTED_CHARS_PER_TOKEN = 10.0


def chars_tokens(n: int) -> int:
    return math.ceil(n / CHARS_PER_TOKEN) if n > 0 else 0


def image_tokens(width: int, height: int, detail: str = "high") -> int:
    """OpenAI's image cost: 85 at low detail; at high (and auto) the image is fitted in
    2048 x 2048, its short side scaled down to 768, then 85 + 170 per 512 px tile."""
    if detail == "low":
        return IMAGE_BASE_TOKENS
    w, h = float(width), float(height)
    if max(w, h) > 2048:
        scale = 2048 / max(w, h)
        w, h = w * scale, h * scale
    if min(w, h) > 768:
        scale = 768 / min(w, h)
        w, h = w * scale, h * scale
    tiles = math.ceil(w / 512) * math.ceil(h / 512)
    return IMAGE_BASE_TOKENS + IMAGE_TILE_TOKENS * tiles


def _image(block: Mapping[str, Any]) -> int:
    detail = block.get("detail")
    if detail == "low":
        return IMAGE_BASE_TOKENS
    info = image_info(block)
    if info.get("width") and info.get("height"):
        return image_tokens(info["width"], info["height"])
    return IMAGE_UNKNOWN_TOKENS


def block_tokens(block: Any) -> int:
    if not isinstance(block, Mapping):
        return chars_tokens(_json_len(block))
    kind = block.get("type")
    if kind == "text":
        text = block.get("text")
        return chars_tokens(len(text) if isinstance(text, str) else _json_len(text))
    if kind == "compaction":
        sealed = block.get("encrypted_content")
        if isinstance(sealed, str):
            return math.ceil(len(sealed) / ENCRYPTED_CHARS_PER_TOKEN)
    if kind == "thinking":
        # reasoning is not sent back as prompt text (an encrypted item is not billed as input)
        return 0
    if kind in ("tool_use", "server_tool_use"):
        return chars_tokens(len(str(block.get("name", ""))) + _json_len(block.get("input", {})))
    if kind == "tool_result":
        content = block.get("content", "")
        if isinstance(content, list):
            return sum(block_tokens(b) for b in content)
        return chars_tokens(_json_len(content))
    if kind == "image":
        return _image(block)
    if kind == "document":
        source = block.get("source")
        if isinstance(source, Mapping) and source.get("type") == "text":
            return chars_tokens(_json_len(source.get("data", "")))
        return FILE_UNKNOWN_TOKENS
    return chars_tokens(_json_len({k: v for k, v in block.items() if k != "type"}))


def content_tokens(content: Any) -> int:
    if isinstance(content, str):
        return chars_tokens(len(content))
    if isinstance(content, Sequence):
        return sum(block_tokens(b) for b in content)
    return chars_tokens(_json_len(content))


def estimate_message(message: Mapping[str, Any]) -> int:
    """Estimated prompt tokens of one canonical message read from an OpenAI message or item."""
    return MESSAGE_OVERHEAD_TOKENS + content_tokens(message.get("content", ""))


def estimate_system(system: Any) -> int:
    """The system prompt as one system message, plus the reply priming every request costs
    (so a request with no system prompt still counts the priming)."""
    if not system:
        return REPLY_PRIMING_TOKENS
    return REPLY_PRIMING_TOKENS + MESSAGE_OVERHEAD_TOKENS + content_tokens(system)


def _line(*parts: str) -> int:
    """``name:description`` as the cookbook counts it (a description's final full stop off)."""
    return chars_tokens(len(":".join(p.removesuffix(".") for p in parts)))


def _property(name: str, spec: Any) -> int:
    if not isinstance(spec, Mapping):
        return PROPERTY_TOKENS + _line(name) + chars_tokens(_json_len(spec))
    n = PROPERTY_TOKENS
    enum = spec.get("enum")
    if isinstance(enum, list) and enum:
        n += ENUM_INIT_TOKENS + sum(ENUM_ITEM_TOKENS + chars_tokens(_json_len(e)) for e in enum)
    n += _line(name, str(spec.get("type", "")), str(spec.get("description", "")))
    # nested schemas (objects, arrays' items, anyOf) are beyond the cookbook's rule: their JSON
    rest = {k: v for k, v in spec.items() if k not in ("type", "description", "enum")}
    if rest:
        n += chars_tokens(_json_len(rest))
    return n


def _function(fn: Mapping[str, Any]) -> int:
    n = FUNCTION_INIT_TOKENS + _line(str(fn.get("name", "")), str(fn.get("description") or ""))
    params = fn.get("parameters")
    props = params.get("properties") if isinstance(params, Mapping) else None
    if isinstance(props, Mapping) and props:
        n += PROPERTIES_INIT_TOKENS + sum(_property(str(k), v) for k, v in props.items())
    return n


def estimate_tools(tools: Any) -> int:
    """Function definitions by the cookbook's rule (a Chat ``{"type": "function", "function":
    {...}}`` or a Responses ``{"type": "function", "name": ...}``); any other tool by its
    JSON."""
    if not tools or not isinstance(tools, Sequence):
        return 0
    n = FUNCTIONS_END_TOKENS
    for tool in tools:
        if not isinstance(tool, Mapping):
            n += chars_tokens(_json_len(tool))
            continue
        fn = tool.get("function") if isinstance(tool.get("function"), Mapping) else None
        if fn is None and "name" in tool and tool.get("type", "function") == "function":
            fn = tool
        if fn is None and "input_schema" in tool:  # a canonical (Anthropic-shaped) tool
            fn = {**tool, "parameters": tool.get("input_schema")}
        n += _function(fn) if fn is not None else chars_tokens(_json_len(tool))
    return n


def output_schema(params: Mapping[str, Any]) -> Any:
    """The structured-output schema a request's other fields hold (Chat
    ``response_format.json_schema``, Responses ``text.format`` of type ``json_schema``), or
    None."""
    fmt = params.get("response_format")
    if isinstance(fmt, Mapping) and isinstance(fmt.get("json_schema"), Mapping):
        return fmt["json_schema"]
    text = params.get("text")
    fmt = text.get("format") if isinstance(text, Mapping) else None
    if isinstance(fmt, Mapping) and fmt.get("type") == "json_schema":
        return fmt
    return None


def estimate_params(params: Mapping[str, Any]) -> int:
    """Tokens of the request fields beyond system, tools and messages that are billed as input:
    the structured-output schema, counted as a definition."""
    schema = output_schema(params)
    if schema is None:
        return 0
    return FUNCTION_INIT_TOKENS + chars_tokens(_json_len(schema))
