"""VCR cassettes (YAML: vcrpy's record/replay files, as the OpenAI, Anthropic and Gemini SDKs'
users and pydantic-ai's tests keep them): every interaction a request and the response it got,
opened as a proxy recording is (:func:`ctxview.sessions.proxylog.open_recording`): the
conversation of the most requests, its longest request plus that request's reply as the
assistant turn, each reply's usage as the recorded usage of its request.

An interaction's body is read from ``parsed_body`` (pydantic-ai's cassettes) or ``body`` (a JSON
text, or ``{"string": text}``). A reply is whole when its status is 2xx and its body a JSON
object, or a whole stream (server-sent events, or Gemini's JSON array of chunks), assembled as
the proxy assembles one (:mod:`ctxview.sessions.replies`) into the object a non-streamed call
returns: its reply is the assistant turn and its usage the request's, as for a JSON reply. A
stream cut before its end is kept as no reply. Headers are not read (a cassette may still hold
a cookie or a key).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from ctxview.sessions.model import LoadedSession, SessionError
from ctxview.sessions.proxy_record import ENDPOINT_PROVIDER, RequestRecord, endpoint_of
from ctxview.sessions.replies import json_reply, stream_reply

#: where a reply's usage is, by the provider whose body it is
_USAGE_KEY = {"anthropic": "usage", "openai": "usage", "gemini": "usageMetadata"}


def is_cassette(first_line: str) -> bool:
    """A file whose first line holding something is this is a VCR cassette."""
    return first_line.rstrip() == "interactions:"


def _text(part: Mapping[str, Any]) -> str | None:
    """A request's or response's body as recorded text (None: none)."""
    body = part.get("body")
    if isinstance(body, Mapping):
        body = body.get("string")
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    return body if isinstance(body, str) and body.strip() else None


def _body(part: Mapping[str, Any]) -> Any:
    """The JSON value of a request's or response's body (None: none, or not JSON)."""
    if "parsed_body" in part:
        return part["parsed_body"]
    body = _text(part)
    if body is None:
        return None
    try:
        return json.loads(body)
    except (ValueError, RecursionError):
        return None


def _chunks(rec: RequestRecord, chunks: list[Any]) -> None:
    """Read a 2xx reply that is a JSON array of chunks (Gemini's ``streamGenerateContent``
    without ``alt=sse``), as the proxy reads one."""
    rec.streamed = True
    got, problem = json_reply(rec.endpoint, chunks, 0)
    if problem is not None or not isinstance(got.message, dict):
        rec.incomplete = problem or "no JSON reply recorded (a JSON array)"
        return
    rec.response = got.message
    rec.complete = True
    rec.usage = dict(got.usage) if got.usage else None
    rec.stop_reason = got.stop_reason


def _streamed(rec: RequestRecord, text: str | None) -> None:
    """Read a 2xx reply that is a server-sent-event stream, as the proxy reads one."""
    if text is None or not text.lstrip().startswith(("data:", "event:", ":")):
        rec.incomplete = "no JSON reply recorded (a failed response)"
        return
    rec.streamed = True
    got, end = stream_reply(rec.endpoint, text.encode("utf-8"))
    if not got.complete or got.error is not None or not isinstance(got.message, dict):
        rec.incomplete = f"a streamed reply that ended before {end}"
        return
    rec.response = got.message
    rec.complete = True
    rec.usage = dict(got.usage) if got.usage else None
    rec.stop_reason = got.stop_reason


def _record(n: int, interaction: Any) -> RequestRecord | None:
    if not isinstance(interaction, Mapping):
        return None
    request, response = interaction.get("request"), interaction.get("response")
    if not isinstance(request, Mapping):
        return None
    method = request.get("method")
    method = method.upper() if isinstance(method, str) else "POST"
    uri = request.get("uri")
    path = urlsplit(uri).path if isinstance(uri, str) else ""
    endpoint = endpoint_of(method, path)
    provider = ENDPOINT_PROVIDER.get(endpoint, "anthropic")
    rec = RequestRecord(
        id=n, started_at="", method=method, path=path, endpoint=endpoint, provider=provider
    )
    rec.request = _body(request)
    if isinstance(response, Mapping):
        status = response.get("status")
        code = status.get("code") if isinstance(status, Mapping) else status
        rec.status = code if isinstance(code, int) and not isinstance(code, bool) else None
        reply = _body(response)
        ok = rec.status is not None and 200 <= rec.status < 300
        if isinstance(reply, dict) and ok:
            rec.response = reply
            rec.complete = True
            usage = reply.get(_USAGE_KEY.get(provider, "usage"))
            rec.usage = dict(usage) if isinstance(usage, Mapping) else None
        elif ok and reply is None:
            _streamed(rec, _text(response))
        elif ok and isinstance(reply, list):
            _chunks(rec, reply)
        else:
            rec.incomplete = "no JSON reply recorded (a failed response)"
    return rec


def read_cassette(path: str, text: str, conversation: int | None) -> LoadedSession:
    """The session of a cassette's text (``conversation``: which one, as ``FILE#N``)."""
    import yaml

    from ctxview.sessions.proxylog import open_recording

    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        raise SessionError(f"{path}: not a readable VCR cassette{where}: YAML error") from None
    interactions = data.get("interactions") if isinstance(data, Mapping) else None
    if not isinstance(interactions, list):
        raise SessionError(f"{path}: a VCR cassette without a list of interactions")
    records: list[RequestRecord] = []
    bad: list[int] = []
    for n, interaction in enumerate(interactions, 1):
        rec = _record(n, interaction)
        if rec is None:
            bad.append(n)
        else:
            records.append(rec)
    session = open_recording(path, records, bad, {}, conversation)
    session.title = (session.title or "").replace("proxy recording", "VCR cassette", 1)
    return session
