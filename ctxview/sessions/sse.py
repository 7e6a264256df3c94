"""Assemble a Messages API server-sent-event stream into the message it describes.

The proxy passes the bytes through untouched and keeps a copy; once the stream ends, this turns
the copy into ``{message, usage, stop_reason, complete, error}``. ``complete`` is true only when
``message_stop`` arrived: a stream cut before it is incomplete (a plain 200 with
``stop_reason: null`` would hide that).
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass, field
from typing import Any


def iter_events(data: bytes) -> list[tuple[str, Any]]:
    """(event name, parsed data) for every complete event of an SSE byte stream.

    A trailing event without its blank line is ignored (it never fully arrived); data that is not
    JSON is kept as the raw string.
    """
    text = data.decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n")
    out: list[tuple[str, Any]] = []
    blocks = text.split("\n\n")
    for block in blocks[:-1]:  # the last piece has no terminating blank line yet
        name = "message"
        payload: list[str] = []
        for line in block.split("\n"):
            if line.startswith(":"):
                continue
            key, _, value = line.partition(":")
            if value.startswith(" "):
                value = value[1:]
            if key == "event":
                name = value
            elif key == "data":
                payload.append(value)
        if not payload:
            continue
        raw = "\n".join(payload)
        try:
            parsed: Any = json.loads(raw)
        except (json.JSONDecodeError, RecursionError):  # (RecursionError: nested too deep)
            parsed = raw
        out.append((name, parsed))
    return out


@dataclass
class Assembled:
    message: dict[str, Any] | None = None
    usage: dict[str, Any] = field(default_factory=dict)
    stop_reason: str | None = None
    complete: bool = False
    error: dict[str, Any] | None = None
    events: int = 0


def merge_usage(into: dict[str, Any], usage: Any) -> None:
    if isinstance(usage, dict):
        for k, v in usage.items():
            if v is not None:
                into[k] = v


def assemble(data: bytes) -> Assembled:
    """The message an SSE stream built, as far as it got."""
    out = Assembled()
    message: dict[str, Any] | None = None
    blocks: dict[int, dict[str, Any]] = {}
    partial_json: dict[int, str] = {}
    for name, ev in iter_events(data):
        out.events += 1
        if not isinstance(ev, dict):
            continue
        etype = ev.get("type", name)
        if etype == "message_start" and isinstance(ev.get("message"), dict):
            message = dict(ev["message"])
            message["content"] = []
            merge_usage(out.usage, message.get("usage"))
        elif etype == "content_block_start" and isinstance(ev.get("content_block"), dict):
            idx = ev.get("index")
            if isinstance(idx, int):
                blocks[idx] = dict(ev["content_block"])
        elif etype == "content_block_delta" and isinstance(ev.get("delta"), dict):
            idx = ev.get("index")
            block = blocks.get(idx) if isinstance(idx, int) else None
            if block is None:
                continue
            delta = ev["delta"]
            dtype = delta.get("type")
            if dtype == "text_delta":
                block["text"] = str(block.get("text", "")) + str(delta.get("text", ""))
            elif dtype == "thinking_delta":
                block["thinking"] = str(block.get("thinking", "")) + str(delta.get("thinking", ""))
            elif dtype == "signature_delta":
                block["signature"] = str(delta.get("signature", ""))
            elif dtype == "input_json_delta" and isinstance(idx, int):
                partial_json[idx] = partial_json.get(idx, "") + str(delta.get("partial_json", ""))
            elif dtype == "citations_delta" and isinstance(delta.get("citation"), dict):
                block.setdefault("citations", []).append(delta["citation"])
        elif etype == "content_block_stop":
            idx = ev.get("index")
            if isinstance(idx, int) and idx in partial_json and idx in blocks:
                with contextlib.suppress(json.JSONDecodeError):
                    blocks[idx]["input"] = json.loads(partial_json.pop(idx) or "{}")
        elif etype == "message_delta":
            delta = ev.get("delta")
            if isinstance(delta, dict) and delta.get("stop_reason") is not None:
                out.stop_reason = str(delta["stop_reason"])
                if message is not None:
                    message["stop_reason"] = delta["stop_reason"]
                    message["stop_sequence"] = delta.get("stop_sequence")
            merge_usage(out.usage, ev.get("usage"))
        elif etype == "message_stop":
            out.complete = True
        elif etype == "error":
            err = ev.get("error")
            out.error = dict(err) if isinstance(err, dict) else {"type": "error", "message": ""}
    if message is not None:
        for idx in sorted(blocks):
            block = blocks[idx]
            if idx in partial_json:  # the block never stopped: keep what arrived, as text
                block["partial_input_json"] = partial_json[idx]
            message["content"].append(block)
        if out.usage:
            message["usage"] = dict(out.usage)
        out.message = message
    if out.error is not None:
        out.complete = False
    return out
