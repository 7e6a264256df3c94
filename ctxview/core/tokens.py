"""Offline token estimates.

The rule (documented in the README, "Token estimates"):

* text, thinking, JSON (tool inputs, tool results, unknown blocks): ``ceil(chars / 4)``;
* images: Anthropic's published formula ``width * height / 750`` when the dimensions can be read
  from the base64 data (PNG, GIF, JPEG and WebP headers are parsed; images larger than 1568 px on
  the long edge are scaled down first, as the API does); otherwise a fixed
  :data:`IMAGE_FALLBACK_TOKENS`;
* PDF documents: a fixed :data:`DOCUMENT_FALLBACK_TOKENS` per document (text documents by chars);
* every message costs :data:`MESSAGE_OVERHEAD_TOKENS` for its role and framing.

A context keeps its window's total as a running sum (a deque of per-message estimates beside the
window, see :mod:`ctxview.core.window`), so re-estimating a 100,000-message window costs a
look-up, not a re-serialisation.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import struct
from collections.abc import Mapping, Sequence
from json.encoder import c_make_encoder, encode_basestring  # type: ignore[attr-defined]
from typing import Any

from ctxview.core.compaction import effective_messages, has_compaction

CHARS_PER_TOKEN = 4
MESSAGE_OVERHEAD_TOKENS = 4
IMAGE_FALLBACK_TOKENS = 1600
DOCUMENT_FALLBACK_TOKENS = 1500
IMAGE_MAX_EDGE = 1568


def _chars(n: int) -> int:
    return math.ceil(n / CHARS_PER_TOKEN) if n > 0 else 0


#: ``json.dumps(value, ensure_ascii=False, separators=(",", ":"))`` without building an encoder
#: per call (a token estimate measures every tool input this way)
_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


#: the C encoder ``_COMPACT.encode`` builds per call, built once (no circular check: parsed
#: JSON has no cycles, and a cyclic value fails with RecursionError and is measured by repr)
_C_COMPACT = (
    c_make_encoder(None, _COMPACT.default, encode_basestring, None, ":", ",", False, False, True)
    if c_make_encoder is not None
    else None
)


def _json_len(value: Any) -> int:
    if isinstance(value, str):
        return len(value)
    try:
        if _C_COMPACT is not None:
            return len("".join(_C_COMPACT(value, 0)))
        return len(_COMPACT.encode(value))
    except (TypeError, ValueError, RecursionError):
        return len(repr(value))


def image_dimensions(data: bytes) -> tuple[int, int] | None:
    """Width and height from the header of a PNG, GIF, JPEG or WebP image, else None."""
    try:
        if data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) >= 24:
            w, h = struct.unpack(">II", data[16:24])
            return int(w), int(h)
        if data[:6] in (b"GIF87a", b"GIF89a") and len(data) >= 10:
            w, h = struct.unpack("<HH", data[6:10])
            return int(w), int(h)
        if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
            chunk = data[12:16]
            if chunk == b"VP8X" and len(data) >= 30:
                w = int.from_bytes(data[24:27], "little") + 1
                h = int.from_bytes(data[27:30], "little") + 1
                return w, h
            if chunk == b"VP8 " and len(data) >= 30:
                w, h = struct.unpack("<HH", data[26:30])
                return int(w) & 0x3FFF, int(h) & 0x3FFF
            if chunk == b"VP8L" and len(data) >= 25:
                bits = int.from_bytes(data[21:25], "little")
                return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
            return None
        if data[:2] == b"\xff\xd8":
            i = 2
            while i + 9 < len(data):
                if data[i] != 0xFF:
                    i += 1
                    continue
                marker = data[i + 1]
                if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
                    i += 2
                    continue
                seg_len = struct.unpack(">H", data[i + 2 : i + 4])[0]
                if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
                    h, w = struct.unpack(">HH", data[i + 5 : i + 9])
                    return int(w), int(h)
                i += 2 + seg_len
    except (struct.error, IndexError):
        return None
    return None


def _b64_bytes(data: str, start: int, end: int) -> bytes:
    """Bytes ``[start, end)`` of base64 ``data``, decoding only the quanta that hold them."""
    q0, q1 = start // 3, (end + 2) // 3
    try:
        chunk = base64.b64decode(data[q0 * 4 : q1 * 4], validate=False)
    except (binascii.Error, ValueError):
        return b""
    return chunk[start - q0 * 3 : end - q0 * 3]


def _jpeg_dimensions_b64(data: str) -> tuple[int, int] | None:
    """Walk a base64 JPEG's segment chain to its SOF marker, decoding 9 bytes per segment.

    EXIF (APP1) and ICC (APP2) segments of up to 64 KB each can push the size header far past
    the first kilobytes, so the header is found by following segment lengths, not by scanning.
    """
    total = len(data) * 3 // 4
    i = 2
    for _ in range(10_000):  # a bound on segments: a corrupt chain cannot loop
        head = _b64_bytes(data, i, i + 9)
        if len(head) < 4 or head[0] != 0xFF:
            return None
        marker = head[1]
        if marker == 0xFF:  # fill byte
            i += 1
            continue
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
            i += 2
            continue
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            if len(head) < 9:
                return None
            h, w = struct.unpack(">HH", head[5:9])
            return int(w), int(h)
        if marker in (0xD9, 0xDA):  # end of image, or start of scan before any SOF
            return None
        i += 2 + struct.unpack(">H", head[2:4])[0]
        if i >= total:
            return None
    return None


def image_tokens(width: int, height: int) -> int:
    """Anthropic's published estimate: width*height/750, after scaling to a 1568 px long edge."""
    if width <= 0 or height <= 0:
        return IMAGE_FALLBACK_TOKENS
    long_edge = max(width, height)
    if long_edge > IMAGE_MAX_EDGE:
        scale = IMAGE_MAX_EDGE / long_edge
        width, height = max(1, int(width * scale)), max(1, int(height * scale))
    return max(1, math.ceil(width * height / 750))


def image_info(block: Mapping[str, Any]) -> dict[str, Any]:
    """Media type, decoded byte size and pixel dimensions (where known) of an image block."""
    source = block.get("source")
    info: dict[str, Any] = {"media_type": None, "bytes": None, "width": None, "height": None}
    if not isinstance(source, Mapping):
        return info
    info["media_type"] = source.get("media_type")
    data = source.get("data")
    if source.get("type") == "base64" and isinstance(data, str):
        info["bytes"] = len(data) * 3 // 4 - data[-2:].count("=")
        try:
            head = base64.b64decode(data[: 4 * 1024], validate=False)
        except (binascii.Error, ValueError):
            head = b""
        dims = image_dimensions(head)
        if dims is None and head[:2] == b"\xff\xd8":
            dims = _jpeg_dimensions_b64(data)
        if dims is not None:
            info["width"], info["height"] = dims
    return info


def thinking_chars(block: Mapping[str, Any]) -> int:
    """Characters a ``thinking`` block bills for when it is sent again: its text; when the text
    is empty and a signature is there, the signature's. A client that asks for the thinking's
    display omitted (Claude Code 2.1.205 with Fable 5 logs every thinking block so) gets an
    empty text and a signature that carries the whole thinking encrypted, which the API bills
    when the block goes back: in those transcripts each request's recorded prompt grew by
    about a token per 3.8 signature characters beyond what its visible messages hold."""
    text = block.get("thinking")
    if isinstance(text, str) and text:
        return len(text)
    sig = block.get("signature")
    return len(sig) if isinstance(sig, str) else 0


def block_tokens(block: Any) -> int:
    """Estimated tokens of one content block (a dict; anything else is measured as JSON)."""
    if type(block) is not dict:  # (a dict, the usual block: no ABC check)
        if isinstance(block, str):
            return _chars(len(block))
        if not isinstance(block, Mapping):
            return _chars(_json_len(block))
    btype = block.get("type")
    if btype == "text":
        text = block.get("text")
        return _chars(len(text)) if isinstance(text, str) else 0
    if btype == "thinking":
        return _chars(thinking_chars(block))
    if btype == "redacted_thinking":
        data = block.get("data")
        return _chars(len(data)) if isinstance(data, str) else 0
    if btype in ("tool_use", "server_tool_use"):
        return _chars(len(str(block.get("name", ""))) + _json_len(block.get("input", {})))
    if btype == "tool_result":
        content = block.get("content", "")
        if isinstance(content, list):
            return sum(block_tokens(b) for b in content)
        return _chars(_json_len(content))
    if btype == "image":
        info = image_info(block)
        if info["width"] and info["height"]:
            return image_tokens(info["width"], info["height"])
        return IMAGE_FALLBACK_TOKENS
    if btype == "document":
        source = block.get("source")
        if isinstance(source, Mapping) and source.get("type") == "text":
            return _chars(_json_len(source.get("data", "")))
        return DOCUMENT_FALLBACK_TOKENS
    if btype == "compaction":
        return _chars(_json_len(block.get("content", "")))
    return _chars(_json_len(block))


def estimate_content(content: Any) -> int:
    if isinstance(content, str):
        return _chars(len(content))
    if type(content) is list or isinstance(content, Sequence):  # the list check is the fast path
        return sum(block_tokens(b) for b in content)
    return _chars(_json_len(content))


def estimate_message(message: Mapping[str, Any]) -> int:
    """Estimated tokens of one message, framing included."""
    return MESSAGE_OVERHEAD_TOKENS + estimate_content(message.get("content", ""))


def estimate_system(system: Any) -> int:
    """Estimated tokens of a system prompt (a string or a list of text blocks)."""
    if not system:
        return 0
    return estimate_content(system)


def estimate_tools(tools: Any) -> int:
    if not tools:
        return 0
    return _chars(_json_len(tools))


def estimate_window(
    messages: Sequence[Mapping[str, Any]], system: Any = None, tools: Any = None
) -> int:
    """Estimated tokens of a whole request: system + tools + messages (uncached).

    Messages before the last ``compaction`` block are not counted: the API ignores them.
    """
    if any(has_compaction(m) for m in messages):
        messages = effective_messages(messages)[1]
    return (
        estimate_system(system) + estimate_tools(tools) + sum(estimate_message(m) for m in messages)
    )
