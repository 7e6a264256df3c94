"""Gemini CLI sessions (``~/.gemini/tmp/<project>/chats/session-*.json`` or ``.jsonl``) as
canonical messages.

Two forms, both read:

* one JSON object ``{sessionId, projectHash, startTime, lastUpdated, messages: [...]}``;
* a JSONL log (newer versions): a first line with the session's metadata, then one line per
  message record (a record written again replaces the earlier one of the same ``id``, in its
  first place), ``{"$set": {...}}`` lines updating the metadata (``$set.messages`` replaces
  every message) and ``{"$rewindTo": id}`` lines dropping that message and every later one.

Each record becomes the API turns the CLI itself sends when it resumes a session (its
``convertSessionToClientHistory``): a ``user`` record is one user turn (the ignored ones, and
``info`` / ``error`` / ``warning`` records, are no turn at all: they are counted in the
warnings); a ``gemini`` record is a model turn (its content parts, or, in the older form, its
thoughts as thought parts, its text, then a ``functionCall`` per tool call) followed, when its
tool calls have results, by a user turn holding every ``functionResponse``. Each turn is one
canonical message (:mod:`ctxview.sessions.gemini`), its ``Content`` in ``meta["wire"]`` and the
record it came from in ``meta["record"]``; the record's ``tokens`` are the usage of the request
that produced it. A ``gemini`` record right after another (no user record, no tool results
between: CLI versions of late 2025 kept no ``toolCalls``) came from a request that also held
turns the file does not keep: its first turn is marked ``meta["unkept_turns"]`` and a warning
counts them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from ctxview.core.jsonfile import TextFile
from ctxview.core.providers.gemini import usage_meta
from ctxview.sessions.gemini import Pairing, content_message
from ctxview.sessions.model import LoadedSession, SessionError
from ctxview.sessions.validate import _kind

FORMAT = "gemini-cli"
PROVIDER = "gemini"

#: a user record whose text starts so is not sent (the CLI's ``isIgnoredUserContent``: slash
#: commands, ``?`` help, injected context); nor is one with no text at all
_IGNORED_PREFIXES = ("/", "?", "<session_context>", "<hook_context>")


def is_session(data: Any) -> bool:
    """The JSON form: an object with ``sessionId`` and a ``messages`` array of records."""
    if not isinstance(data, dict) or "sessionId" not in data:
        return False
    messages = data.get("messages")
    return isinstance(messages, list) and all(
        isinstance(m, dict) and "type" in m for m in messages[:3]
    )


def is_log_head(record: Any) -> bool:
    """The first line of the JSONL form: the session's metadata."""
    return isinstance(record, dict) and "sessionId" in record and "projectHash" in record


def _parts(value: Any) -> list[Any]:
    """A ``PartListUnion`` (a string, a part, or a list of either) as a list of parts; an empty
    one (``""``: a model record with tool calls and no text) is no part, as the CLI sends it."""
    if value is None or value == "":
        return []
    if isinstance(value, str):
        return [{"text": value}]
    if isinstance(value, list):
        return [{"text": v} if isinstance(v, str) else v for v in value]
    return [value]


def _text(parts: list[Any]) -> str:
    """The text of a record's parts; a ``text`` that is not a string is refused (ValueError
    naming the part), as it cannot be told from an ignored command."""
    texts = []
    for k, p in enumerate(parts):
        if isinstance(p, Mapping) and "text" in p:
            if not isinstance(p["text"], str):
                raise ValueError(f"content[{k}].text: expected a string, got {_kind(p['text'])}")
            texts.append(p["text"])
    return "".join(texts)


def record_turns(record: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The API ``Content`` turns one record gives (see the module docstring)."""
    kind = record.get("type")
    content = _parts(record.get("content"))
    if kind == "user":
        said = _text(content).strip()
        if not said or said.startswith(_IGNORED_PREFIXES):
            return []
        return [{"role": "user", "parts": content}]
    if kind != "gemini":
        return []
    model: list[Any] = []
    modern = any(
        isinstance(p, Mapping) and (p.get("functionCall") or p.get("thought")) for p in content
    )
    calls = record.get("toolCalls") or []
    if not isinstance(calls, list):
        calls = []
    if modern:
        model.extend(content)
    else:
        for thought in record.get("thoughts") or []:
            if not isinstance(thought, Mapping):
                continue
            subject, description = thought.get("subject"), thought.get("description", "")
            text = f"**{subject}** {description}" if subject else str(description)
            model.append({"text": text, "thought": True})
        model.extend(content)
        for call in calls:
            if isinstance(call, Mapping):
                model.append(
                    {
                        "functionCall": {
                            "id": call.get("id"),
                            "name": call.get("name"),
                            "args": call.get("args"),
                        }
                    }
                )
    if not model:
        return []
    turns = [{"role": "model", "parts": model}]
    answers: list[Any] = []
    for call in calls:
        if not isinstance(call, Mapping) or not call.get("result"):
            continue
        result = call["result"]
        if isinstance(result, str):
            answers.append(
                {
                    "functionResponse": {
                        "id": call.get("id"),
                        "name": call.get("name"),
                        "response": {"output": result},
                    }
                }
            )
        elif isinstance(result, list):
            answers.extend(_parts(result))
        else:
            answers.append(result)
    if answers:
        turns.append({"role": "user", "parts": answers})
    return turns


#: the object lines of a JSONL text, numbered, the others noted in the dict with why:
#: ``ctxview.sessions.readers.jsonl_objects``, the one rule for the lines of any JSONL file
JsonlObjects = Callable[[str | TextFile, dict[int, str]], Iterator[tuple[int, dict[str, Any]]]]


def _records_of_log(
    text: str | TextFile, jsonl_objects: JsonlObjects
) -> tuple[dict[str, Any], list[Any], dict[int, str]]:
    """(metadata, message records in order, skipped lines) of the JSONL form."""
    meta: dict[str, Any] = {}
    records: dict[str, Any] = {}
    unnamed: list[Any] = []
    skipped: dict[int, str] = {}
    for number, record in jsonl_objects(text, skipped):
        if isinstance(record.get("$rewindTo"), str):
            target = record["$rewindTo"]
            keys = list(records)
            if target in records:
                for key in keys[keys.index(target) :]:
                    del records[key]
            else:
                records.clear()
        elif isinstance(record.get("$set"), dict):
            update = record["$set"]
            if isinstance(update.get("messages"), list):
                records = {}
                for m in update["messages"]:
                    if isinstance(m, dict) and isinstance(m.get("id"), str):
                        records[m["id"]] = m
            meta.update({k: v for k, v in update.items() if k != "messages"})
        elif isinstance(record.get("id"), str) and "type" in record:
            records[record["id"]] = record
        elif "type" in record:
            unnamed.append(record)
        elif is_log_head(record):
            meta.update({k: v for k, v in record.items() if k != "messages"})
            for m in record.get("messages") or []:
                if isinstance(m, dict) and isinstance(m.get("id"), str):
                    records[m["id"]] = m
        else:
            skipped[number] = "not a Gemini CLI record"
    return meta, [*records.values(), *unnamed], skipped


def read(path: str, text: str | TextFile, data: Any, jsonl_objects: JsonlObjects) -> LoadedSession:
    if is_session(data):
        head = data
        records = data["messages"]
        skipped: dict[int, str] = {}
    else:
        head, records, skipped = _records_of_log(text, jsonl_objects)
    messages: list[dict[str, Any]] = []
    metas: list[dict[str, Any]] = []
    pairing = Pairing()
    left_out: dict[str, int] = {}
    unkept = 0
    for r, record in enumerate(records):
        if not isinstance(record, dict):
            raise ValueError(f"messages[{r}]: expected a message record, got {_kind(record)}")
        try:
            turns = record_turns(record)
        except ValueError as exc:
            raise ValueError(f"messages[{r}].{exc}") from None
        if not turns:
            kind = str(record.get("type"))
            kind = "ignored user" if kind == "user" else kind
            left_out[kind] = left_out.get(kind, 0) + 1
            continue
        for k, turn in enumerate(turns):
            i = len(messages)
            message, meta = content_message(turn, i, pairing, f"messages[{r}]")
            meta["record"] = record if k == 0 else {"id": f"{record.get('id')}_response"}
            if isinstance(record.get("timestamp"), str):
                meta["timestamp"] = record["timestamp"]
            if k == 0 and record.get("type") == "gemini":
                if messages and messages[-1].get("role") == "assistant":
                    # a model turn right after a model turn: the request between them sent
                    # turns the file does not keep (older CLI versions recorded no tool calls)
                    meta["unkept_turns"] = True
                    unkept += 1
                found = usage_meta(_tokens_metadata(record.get("tokens")))
                if found is not None:
                    meta["usage"] = found
                if isinstance(record.get("model"), str):
                    meta["model"] = record["model"]
            messages.append(message)
            metas.append(meta)
    if not messages:
        raise SessionError(f"{path}: no user or model turn in this Gemini CLI session")
    warnings = []
    if left_out:
        shown = ", ".join(f"{n} {kind}" for kind, n in sorted(left_out.items()))
        warnings.append(
            f"records the CLI does not send to the model were left out: {shown} "
            "(ignored user commands, info, error and warning records)"
        )
    if unkept:
        warnings.append(
            f"{unkept} model records follow another model record with no turn between: the "
            "requests that produced them also sent turns this file does not keep (tool calls "
            "and their results, which this Gemini CLI version did not record); their recorded "
            "usage counts those turns, the estimate of what the file holds cannot"
        )
    model = next((m["model"] for m in reversed(metas) if isinstance(m.get("model"), str)), None)
    summary = head.get("summary")
    return LoadedSession(
        path,
        FORMAT,
        messages,
        metas,
        model=model,
        title=summary if isinstance(summary, str) else None,
        skipped_lines=sorted(skipped),
        skipped_reasons=skipped,
        warnings=warnings,
        provider=PROVIDER,
    )


def _tokens_metadata(tokens: Any) -> dict[str, Any] | None:
    """A record's ``tokens`` summary in ``usageMetadata``'s names (the CLI copies them from it:
    input <- promptTokenCount, cached <- cachedContentTokenCount, output <- candidates,
    thoughts, tool <- toolUsePromptTokenCount). A summary of all zeros (the CLI writes one when
    it has no usage yet) is no usage."""
    if not isinstance(tokens, Mapping):
        return None
    if not tokens.get("input") and not tokens.get("total"):
        return None
    return {
        "promptTokenCount": tokens.get("input"),
        "cachedContentTokenCount": tokens.get("cached"),
        "candidatesTokenCount": tokens.get("output"),
        "thoughtsTokenCount": tokens.get("thoughts"),
        "toolUsePromptTokenCount": tokens.get("tool"),
        "totalTokenCount": tokens.get("total"),
    }


def looks_like_log(text: str) -> bool:
    """The JSONL form: its first line holding something is the session's metadata."""
    for raw in text.split("\n", 20):
        raw = raw.strip()
        if raw:
            try:
                return is_log_head(json.loads(raw))
            except ValueError:
                return False
    return False
