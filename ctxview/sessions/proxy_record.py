"""One exchange of a proxy recording (:class:`RequestRecord`, one line of the log), the endpoints
and providers a record names, and where each endpoint's body holds its conversation.

Headless: imports neither Textual nor an SDK nor aiohttp.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ctxview.core.providers.base import Route

#: the providers whose traffic a recording holds (each has its own upstream and body shape)
PROVIDERS = ("anthropic", "openai", "gemini")
#: the endpoints a record names, and the provider whose body shape each carries (``other``:
#: any other path, forwarded as well, its provider the route it took)
ENDPOINT_PROVIDER = {
    "messages": "anthropic",
    "count_tokens": "anthropic",
    "chat_completions": "openai",
    "responses": "openai",
    "input_tokens": "openai",
    "generate_content": "gemini",
    "stream_generate_content": "gemini",
    "gemini_count_tokens": "gemini",
}
ENDPOINTS = (*ENDPOINT_PROVIDER, "other")
#: the endpoints that count a request's input tokens, no model answering it (Anthropic's
#: ``/v1/messages/count_tokens``, OpenAI's ``/v1/responses/input_tokens``, Gemini's
#: ``:countTokens``): never a request in cost or cache, their reply a measurement
COUNT_ENDPOINTS = frozenset(("count_tokens", "input_tokens", "gemini_count_tokens"))
#: the endpoints a model answers (a conversation's turns)
MODEL_CALLS = frozenset(ENDPOINT_PROVIDER) - COUNT_ENDPOINTS
#: the reply field holding a count endpoint's figure
_COUNT_FIELD = {
    "count_tokens": "input_tokens",
    "input_tokens": "input_tokens",
    "gemini_count_tokens": "totalTokens",
}


def counted_tokens(endpoint: str, reply: Any) -> int | None:
    """The input tokens a count endpoint's reply says the request holds (None: not a count
    endpoint, or no count in the reply)."""
    key = _COUNT_FIELD.get(endpoint)
    value = reply.get(key) if key is not None and isinstance(reply, dict) else None
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return None


def endpoint_of(method: str, path: str) -> str:
    """The endpoint (:data:`ENDPOINTS`) of a request's method and path. Matched on the path's
    end, so a gateway's prefix (``/openai/v1/chat/completions``, Codex's
    ``/backend-api/codex/responses``, Vertex's ``…/publishers/google/models/M:generateContent``)
    is the same endpoint."""
    if method != "POST":
        return "other"
    bare = path.split("?", 1)[0].rstrip("/")
    if bare.endswith("/v1/messages"):
        return "messages"
    if bare.endswith("/v1/messages/count_tokens"):
        return "count_tokens"
    if bare.endswith("/chat/completions"):
        return "chat_completions"
    if bare.endswith("/responses"):
        return "responses"
    if bare.endswith("/responses/input_tokens"):
        return "input_tokens"
    action = bare.rpartition("/")[2].rpartition(":")[2]
    if action == "generateContent":
        return "generate_content"
    if action == "streamGenerateContent":
        return "stream_generate_content"
    if action == "countTokens":
        return "gemini_count_tokens"
    return "other"


#: a Vertex AI path: ``…/projects/P/locations/L/publishers/google/models/M:…``, its express
#: mode's ``/v1/publishers/google/models/M:…``, a deployed model's ``…/locations/L/endpoints/E:…``
_VERTEX_PATH = re.compile(r"/publishers/[^/]+/models/|/projects/[^/]+/locations/[^/]+/")
#: a Gemini API path: ``/v1beta/models/M:…``, ``/v1/tunedModels/M:…`` (after any gateway prefix)
_GEMINI_API_PATH = re.compile(r"/v1(?:alpha|beta\d*)?/(?:models|tunedModels)/[^/]+$")


def route_of(path: str) -> Route | None:
    """The route (``ctxview.core.providers.base.Route``) of a request to a Gemini model
    endpoint: Vertex AI or the Gemini API by the path's form, streamed by its action
    (``streamGenerateContent``); None for any other endpoint."""
    from ctxview.core.providers.base import GEMINI_API, VERTEX_AI, Route

    endpoint = endpoint_of("POST", path)
    if endpoint not in ("generate_content", "stream_generate_content"):
        return None
    bare = path.split("?", 1)[0].rstrip("/")
    api = (
        VERTEX_AI
        if _VERTEX_PATH.search(bare)
        else GEMINI_API
        if _GEMINI_API_PATH.search(bare)
        else None
    )
    return Route(api, endpoint == "stream_generate_content")


def model_in_path(path: str) -> str | None:
    """Gemini names the model in the path (``/v1beta/models/gemini-2.5-flash:generateContent``)."""
    last = path.split("?", 1)[0].rstrip("/").rpartition("/")[2]
    model, colon, _ = last.partition(":")
    return model if colon and model else None


@dataclass
class RequestRecord:
    """One request through the proxy and what came back (one line of a recording)."""

    id: int
    started_at: str
    method: str
    path: str
    endpoint: str = "other"
    #: whose API it went to (:data:`PROVIDERS`): the endpoint's body shape, or the route taken
    provider: str = "anthropic"
    #: the request body as parsed JSON (None: no body, or see ``request_note``)
    request: Any = None
    #: why ``request`` is not the body: not JSON, or too large to record (with its size)
    request_note: str | None = None
    request_bytes: int = 0
    request_headers: dict[str, str] = field(default_factory=dict)
    #: the conversation this request belongs to (1, 2, …; None: it holds no messages)
    conversation: int | None = None
    status: int | None = None
    streamed: bool = False
    #: the assembled message (streamed or JSON), or the JSON body of any other response
    response: Any = None
    usage: dict[str, Any] | None = None
    stop_reason: str | None = None
    #: true only for a whole response: a stream that reached message_stop, a JSON message
    complete: bool = False
    #: why an incomplete response is incomplete (None when complete)
    incomplete: str | None = None
    #: the API error ({type, message}) of a 4xx/5xx or an SSE error event; the proxy's own for 502
    error: dict[str, Any] | None = None
    response_headers: dict[str, str] = field(default_factory=dict)
    ended_at: str | None = None
    first_byte_ms: float | None = None
    duration_ms: float | None = None
    #: the raw request body until the recording parses it (never written)
    body: bytes | bytearray | None = field(default=None, repr=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": "exchange",
            "id": self.id,
            "conversation": self.conversation,
            "endpoint": self.endpoint,
            "provider": self.provider,
            "method": self.method,
            "path": self.path,
            "started_at": self.started_at,
            "ended_at": self.ended_at,
            "first_byte_ms": self.first_byte_ms,
            "duration_ms": self.duration_ms,
            "request_headers": dict(self.request_headers),
            "request_bytes": self.request_bytes,
            "request_note": self.request_note,
            "request": self.request,
            "status": self.status,
            "streamed": self.streamed,
            "complete": self.complete,
            "incomplete": self.incomplete,
            "stop_reason": self.stop_reason,
            "usage": self.usage,
            "error": self.error,
            "response_headers": dict(self.response_headers),
            "response": self.response,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any], where: str) -> RequestRecord:
        """A record from its line (``where`` names it in errors); the older nested form (a
        ``response`` object holding status, usage, body…) is read too."""

        def text(key: str, value: Any, default: str = "") -> str:
            if value is None:
                return default
            if not isinstance(value, str):
                raise ValueError(f"{where}.{key}: expected a string, got {type(value).__name__}")
            return value

        def number(value: Any) -> float | None:
            ok = isinstance(value, (int, float)) and not isinstance(value, bool)
            return float(value) if ok else None

        def obj(value: Any) -> dict[str, Any] | None:
            return value if isinstance(value, dict) else None

        resp: dict[str, Any] = d
        body = d.get("response")
        if "status" not in d and isinstance(body, dict) and "body" in body:
            resp, body = body, body.get("body")  # the older nested form
        rid = d.get("id")
        if not isinstance(rid, int) or isinstance(rid, bool):
            raise ValueError(f"{where}.id: expected an integer, got {rid!r}"[:160])
        method = text("method", d.get("method"), "POST")
        path = text("path", d.get("path"), "")
        status = resp.get("status")
        endpoint = endpoint_of(method, path)
        provider = d.get("provider")
        if provider not in PROVIDERS:
            provider = ENDPOINT_PROVIDER.get(endpoint, "anthropic")
        return cls(
            id=rid,
            started_at=text("started_at", d.get("started_at")),
            method=method,
            path=path,
            endpoint=endpoint,
            provider=str(provider),
            request=d.get("request"),
            request_note=d.get("request_note") if isinstance(d.get("request_note"), str) else None,
            request_headers={
                str(k): str(v) for k, v in (obj(d.get("request_headers")) or {}).items()
            },
            status=status if isinstance(status, int) and not isinstance(status, bool) else None,
            streamed=resp.get("streamed") is True,
            response=body,
            usage=obj(resp.get("usage")),
            stop_reason=resp.get("stop_reason")
            if isinstance(resp.get("stop_reason"), str)
            else None,
            complete=resp.get("complete") is True,
            incomplete=resp.get("incomplete") if isinstance(resp.get("incomplete"), str) else None,
            error=obj(resp.get("error")),
            ended_at=d.get("ended_at") if isinstance(d.get("ended_at"), str) else None,
            first_byte_ms=number(resp.get("first_byte_ms")),
            duration_ms=number(resp.get("duration_ms")),
        )


def conversation_items(endpoint: str, body: Any) -> list[Any] | None:
    """The items a request's conversation is made of, in its provider's body shape: ``messages``
    (Messages API, count_tokens, Chat Completions), ``input`` (Responses: a string is one user
    message), ``contents`` (Gemini); None for an endpoint without a conversation or a body
    without them."""
    if not isinstance(body, dict):
        return None
    if endpoint in ("messages", "count_tokens", "chat_completions"):
        items = body.get("messages")
    elif endpoint == "responses":
        items = body.get("input")
        if isinstance(items, str):
            items = [{"role": "user", "content": items}]
    elif endpoint in ("generate_content", "stream_generate_content"):
        items = body.get("contents")
    else:
        return None
    return items if isinstance(items, list) and items else None
