"""Where replies come from: the real API (anthropic SDK, imported lazily) or the offline demo.

Both stream text through ``on_text`` and return a :class:`Reply`; both raise :class:`ChatError`
naming the HTTP status (or the transport failure) with the API's message.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from ctxview.core.protocol import check_protocol, errors
from ctxview.core.tokens import estimate_window

STATUS_NAMES = {
    400: "400 bad request",
    401: "401 unauthorized (check ANTHROPIC_API_KEY)",
    403: "403 forbidden",
    404: "404 not found (unknown model?)",
    413: "413 request too large",
    429: "429 rate limited",
    500: "500 API error",
    529: "529 overloaded",
}


@dataclass
class Reply:
    content: list[Any]
    stop_reason: str | None
    usage: dict[str, Any] | None = None
    model: str | None = None
    id: str | None = None
    #: what the API's context editing did (``applied_edits``), when the request asked for it
    context_management: dict[str, Any] | None = None

    @property
    def complete(self) -> bool:
        """False for a stream cut before message_stop (the SDK then gives stop_reason None)."""
        return self.stop_reason is not None


@dataclass
class ChatError(Exception):
    status: int | None
    kind: str
    message: str
    retry_after: str | None = None
    partial: str = ""

    def __str__(self) -> str:
        head = STATUS_NAMES.get(self.status or 0, f"{self.status}" if self.status else self.kind)
        text = f"{head}: {self.message}"
        if self.retry_after:
            text += f" · retry after {self.retry_after} s"
        return text


TextCallback = Callable[[str], None]


class Backend(Protocol):
    name: str

    async def reply(
        self, body: dict[str, Any], on_text: TextCallback, on_thinking: TextCallback | None = None
    ) -> Reply: ...

    async def count_tokens(self, body: dict[str, Any]) -> int: ...


# -- offline --------------------------------------------------------------------------------------
_CALC = re.compile(
    r"^\s*(?:please\s+)?(?:calculate|calc|compute|what\s+is|what's)\s+(.+?)\s*\??\s*$", re.I
)
_MATH = re.compile(r"^[\d\s.+\-*/%()^]+$")


class OfflineBackend:
    """A deterministic local model: no network. Calls the built-in tools when asked, and fails
    with the API's 400 error when the request breaks the protocol (so the seed strategy's orphaned
    tool_result fails offline exactly as it does online)."""

    name = "offline"

    def __init__(
        self, delay: float = 0.02, model: str = "offline-demo", context_tokens: int = 200_000
    ) -> None:
        self.delay = delay
        self.context_tokens = context_tokens
        self.model = model
        self.calls = 0

    def _check(self, body: dict[str, Any]) -> None:
        probs = errors(check_protocol(body.get("messages", []), body.get("system")))
        if probs:
            raise ChatError(400, "invalid_request_error", probs[0].message)
        est = estimate_window(body.get("messages", []), body.get("system"), body.get("tools"))
        if est > self.context_tokens:
            raise ChatError(
                400,
                "invalid_request_error",
                f"prompt is too long: {est} tokens > {self.context_tokens} maximum",
            )

    async def count_tokens(self, body: dict[str, Any]) -> int:
        raise ChatError(
            None, "offline", "count_tokens needs the API; the offline model has only the estimate"
        )

    async def reply(
        self, body: dict[str, Any], on_text: TextCallback, on_thinking: TextCallback | None = None
    ) -> Reply:
        self._check(body)
        self.calls += 1
        messages = body.get("messages", [])
        tools = {t.get("name") for t in body.get("tools", []) if isinstance(t, dict)}
        last = messages[-1] if messages else {"role": "user", "content": ""}
        content: list[dict[str, Any]]
        if last.get("role") == "user" and _results(last):
            parts = []
            for r in _results(last):
                c = r.get("content")
                c = c if isinstance(c, str) else json.dumps(c)
                parts.append(("error: " if r.get("is_error") else "") + c)
            text = (
                "The tool says: " + "; ".join(parts)
                if len(parts) > 1
                else (
                    f"The tool failed: {parts[0]}"
                    if _results(last)[0].get("is_error")
                    else f"The result is {parts[0]}."
                )
            )
            return await self._text(text, on_text, body)
        prompt = _text_of(last)
        tool = _pick_tool(prompt, tools)
        if tool is not None:
            name, args, say = tool
            await self._stream(say, on_text)
            self.calls += 0
            content = [
                {"type": "text", "text": say},
                {
                    "type": "tool_use",
                    "id": f"toolu_offline_{self.calls:04d}",
                    "name": name,
                    "input": args,
                },
            ]
            return Reply(
                content,
                "tool_use",
                self._usage(body, say),
                self._answering(body),
                f"msg_offline_{self.calls:04d}",
            )
        n = len(messages)
        est = estimate_window(messages, body.get("system"), body.get("tools"))
        words = len(prompt.split())
        text = (
            f"(offline demo model) I read your {words}-word message. This request carried {n} "
            f"message{'s' if n != 1 else ''} (~{est:,} tokens). Ask me to `calculate 6*7`, for "
            "the time, or to count words, and watch the tool_use / tool_result pair join the window."
        )
        return await self._text(text, on_text, body)

    async def _stream(self, text: str, on_text: TextCallback) -> None:
        for word in re.findall(r"\S+\s*", text):
            on_text(word)
            if self.delay:
                await asyncio.sleep(self.delay)
            else:
                await asyncio.sleep(0)

    async def _text(self, text: str, on_text: TextCallback, body: dict[str, Any]) -> Reply:
        await self._stream(text, on_text)
        return Reply(
            [{"type": "text", "text": text}],
            "end_turn",
            self._usage(body, text),
            self._answering(body),
            f"msg_offline_{self.calls:04d}",
        )

    def _answering(self, body: dict[str, Any]) -> str:
        """The model a reply names: the one its request named, as the API answers. A request
        is priced as the model its reply names (``core.requests``: the next request, which has
        no reply yet, as the session's model), so an offline chat's requests so far and its
        next one are priced alike: what that model would charge for the estimated usage."""
        m = body.get("model")
        return m if isinstance(m, str) and m else self.model

    def _usage(self, body: dict[str, Any], out: str) -> dict[str, Any]:
        est = estimate_window(body.get("messages", []), body.get("system"), body.get("tools"))
        return {
            "input_tokens": est,
            "output_tokens": max(1, len(out) // 4),
            "cache_read_input_tokens": 0,
            "cache_creation_input_tokens": 0,
        }


def _results(message: dict[str, Any]) -> list[dict[str, Any]]:
    c = message.get("content")
    if not isinstance(c, list):
        return []
    return [b for b in c if isinstance(b, dict) and b.get("type") == "tool_result"]


def _text_of(message: dict[str, Any]) -> str:
    c = message.get("content")
    if isinstance(c, str):
        return c
    if isinstance(c, list):
        return " ".join(
            str(b.get("text", "")) for b in c if isinstance(b, dict) and b.get("type") == "text"
        )
    return ""


def _pick_tool(prompt: str, tools: set[Any]) -> tuple[str, dict[str, Any], str] | None:
    p = prompt.strip()
    m = _CALC.match(p)
    expr = (
        m.group(1)
        if m
        else (p if _MATH.match(p) and any(ch.isdigit() for ch in p) and len(p) > 2 else None)
    )
    if expr is not None and "calculator" in tools:
        return "calculator", {"expression": expr}, f"Let me calculate {expr}."
    low = p.lower()
    if "current_time" in tools and re.search(r"\b(time|date|clock)\b", low):
        return "current_time", {}, "Let me check the clock."
    wc = re.match(
        r"^\s*(?:count\s+(?:the\s+)?words(?:\s+in)?|word\s*count)\s*:?\s*(.+)$", p, re.I | re.S
    )
    if wc and "word_count" in tools:
        return "word_count", {"text": wc.group(1)}, "Counting."
    rf = re.match(r"^\s*(?:read|open|cat)\s+(?:the\s+file\s+)?(\S+)\s*$", p, re.I)
    if rf and "read_file" in tools:
        return "read_file", {"path": rf.group(1)}, f"Reading {rf.group(1)}."
    ld = re.match(
        r"^\s*(?:ls|list(?:\s+(?:the\s+)?(?:directory|folder|files))?)(?:\s+(?:in\s+)?(\S+))?\s*$",
        p,
        re.I,
    )
    if ld and "list_directory" in tools:
        return "list_directory", {"path": ld.group(1) or "."}, "Listing the directory."
    return None


# -- the real API ---------------------------------------------------------------------------------
def import_sdk() -> Any:
    """Import the anthropic SDK (over a second: call it from a thread, after the first paint)."""
    return importlib.import_module("anthropic")


class AnthropicBackend:
    """Claude through ``AsyncAnthropic().messages.stream``. ANTHROPIC_API_KEY and
    ANTHROPIC_BASE_URL are honoured (the SDK reads them when not given explicitly)."""

    name = "anthropic"

    def __init__(
        self,
        api_key: str | None = None,
        base_url: str | None = None,
        timeout: float = 120.0,
        max_retries: int = 0,
        http_client: Any = None,
    ) -> None:
        self._kwargs: dict[str, Any] = {"timeout": timeout, "max_retries": max_retries}
        if api_key is not None:
            self._kwargs["api_key"] = api_key
        if base_url is not None:
            self._kwargs["base_url"] = base_url
        if http_client is not None:
            self._kwargs["http_client"] = http_client
        self._client: Any = None
        self._sdk: Any = None

    async def client(self) -> Any:
        if self._client is None:
            self._sdk = await asyncio.to_thread(import_sdk)
            self._client = self._sdk.AsyncAnthropic(**self._kwargs)
        return self._client

    def _error(self, exc: BaseException, partial: str = "") -> ChatError:
        sdk = self._sdk
        if sdk is not None and isinstance(exc, sdk.APIStatusError):
            body = getattr(exc, "body", None)
            kind, msg = "api_error", str(getattr(exc, "message", exc))
            if isinstance(body, dict) and isinstance(body.get("error"), dict):
                kind = str(body["error"].get("type", kind))
                msg = str(body["error"].get("message", msg))
            retry = (
                exc.response.headers.get("retry-after")
                if getattr(exc, "response", None) is not None
                else None
            )
            return ChatError(exc.status_code, kind, msg, retry, partial)
        if sdk is not None and isinstance(exc, sdk.APITimeoutError):
            return ChatError(None, "timeout", "the request timed out", None, partial)
        if sdk is not None and isinstance(exc, sdk.APIConnectionError):
            cause = exc.__cause__ or exc
            return ChatError(None, "connection", f"cannot reach the API ({cause})", None, partial)
        return ChatError(None, type(exc).__name__, str(exc), None, partial)

    async def reply(
        self, body: dict[str, Any], on_text: TextCallback, on_thinking: TextCallback | None = None
    ) -> Reply:
        client = await self.client()
        partial: list[str] = []
        try:
            if "context_management" in body:
                # server-side context editing: the beta messages API, with its beta flag
                from ctxview.core.clearing import BETA

                opener = client.beta.messages.stream(**body, betas=[BETA])
            else:
                opener = client.messages.stream(**body)
            async with opener as stream:
                async for event in stream:
                    kind = getattr(event, "type", None)
                    if kind == "text":
                        partial.append(event.text)
                        on_text(event.text)
                    elif kind == "thinking" and on_thinking is not None:
                        on_thinking(event.thinking)
                msg = await stream.get_final_message()
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            raise self._error(exc, "".join(partial)) from exc
        usage = (
            msg.usage.model_dump(mode="json", exclude_none=True)
            if getattr(msg, "usage", None)
            else None
        )
        cm = getattr(msg, "context_management", None)
        return Reply(
            list(msg.content),
            msg.stop_reason,
            usage,
            getattr(msg, "model", None),
            getattr(msg, "id", None),
            cm.model_dump(mode="json", exclude_none=True) if cm is not None else None,
        )

    async def count_tokens(self, body: dict[str, Any]) -> int:
        client = await self.client()
        kwargs = {k: v for k, v in body.items() if k in ("model", "messages", "system", "tools")}
        try:
            result = await client.messages.count_tokens(**kwargs)
        except Exception as exc:
            raise self._error(exc) from exc
        return int(result.input_tokens)
