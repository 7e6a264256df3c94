"""``ctxview repair``: repair an opened file's window and write it back in its own format.

The window repaired is the one ``inspect`` checks (the final window of the replay). What is
written:

* a request body: the same body (every other top-level field kept) with the repaired messages;
* a bare messages list: the repaired window as a list;
* a ctxview session: the same session, whose transcript keeps every message; changed messages
  hold the sent version and keep the original under ``meta.original`` (``meta.edited`` names the
  fix), dropped ones leave the window (``meta.edited``), inserted answers become new records;
* a Claude Code transcript (which ctxview cannot write): the request body of the repaired window;
* a file of another API (Gemini, OpenAI): that API's request body of the repaired window.

Headless: no Textual, no SDK.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ctxview.core.body import request_body
from ctxview.core.repair import RepairResult, inserted_meta, repair
from ctxview.sessions.session import Session
from ctxview.sessions.store import record_item, session_document


@dataclass
class RepairedFile:
    result: RepairResult
    #: the format written (``request`` for a Claude Code transcript)
    format: str
    #: the JSON document to write
    document: Any
    #: window positions -> transcript ids (for reporting)
    window_ids: list[int]


def request_document(
    rep: Session, result: RepairResult, defaults: dict[str, Any]
) -> dict[str, Any]:
    """A request body: the session's fields (as ``export`` writes them) with the repaired
    messages and system."""
    session = rep.session
    return request_body(
        model=rep.model_name(defaults),
        max_tokens=rep.max_tokens(defaults),
        params=session.request_params,
        system=result.system,
        messages=result.messages,
        tools=session.tools,
    )


def _edited_session(rep: Session, result: RepairResult) -> dict[str, Any]:
    session = rep.session
    ctx = rep.context
    doc = session_document(
        ctx,
        rep.transcript,
        model=session.model,
        max_tokens=session.max_tokens,
        system=result.system if session.system is not None else None,
        tools=session.tools,
        title=session.title,
        request_params=session.request_params,
    )
    step = int(doc["step"]) + 1
    window_ids = ctx.window_ids
    notes: dict[int, list[str]] = {}
    for fix in result.fixes:
        for pos in fix.touched:
            notes.setdefault(window_ids[pos], []).append(f"{fix.code}: {fix.detail}")
    old_records: list[dict[str, Any]] = doc["transcript"]
    by_old = {r["id"]: r for r in old_records}
    kept_pos = {o for o in result.origin if o is not None}
    # changed messages: the sent version, with the original kept beside it
    for out, o in zip(result.messages, result.origin, strict=True):
        if o is None or o not in result.touched:
            continue
        rec = by_old[window_ids[o]]
        meta = dict(rec.get("meta") or {})
        meta.setdefault("original", rec["message"])
        meta["edited"] = notes.get(window_ids[o], [])
        rec["meta"] = meta
        rec["message"] = out
    # dropped messages: out of the window, the reason noted
    for pos in result.touched - kept_pos:
        rec = by_old[window_ids[pos]]
        meta = dict(rec.get("meta") or {})
        meta["edited"] = [*notes.get(window_ids[pos], []), "dropped from the window by repair"]
        meta["removed"] = True
        rec["meta"] = meta
        rec["evicted_at_step"] = step
    # inserted messages: new records just before the window message that follows them (ids are
    # transcript positions, so the records after them are renumbered)
    before: dict[int, list[dict[str, Any]]] = {}
    pending: list[dict[str, Any]] = []
    for out, o in zip(result.messages, result.origin, strict=True):
        if o is None:
            pending.append(out)
        elif pending:
            before[window_ids[o]] = pending
            pending = []
    records: list[dict[str, Any]] = []
    inserted: list[int] = []
    new_id: dict[int, int] = {}

    def insert(messages: list[dict[str, Any]]) -> None:
        for m in messages:
            inserted.append(len(records))
            records.append(record_item(len(records), m, inserted_meta(), step, None))

    for rec in old_records:
        insert(before.get(rec["id"], []))
        new_id[rec["id"]] = len(records)
        rec["id"] = len(records)
        records.append(rec)
    insert(pending)
    it = iter(inserted)
    ids = [next(it) if o is None else new_id[window_ids[o]] for o in result.origin]
    doc["transcript"] = records
    pinned = [new_id[i] for i in doc["window"].get("pinned", []) if i in new_id]
    doc["window"] = {"ids": ids, "cut": bool(doc["window"]["cut"]) or bool(result.removed)}
    if kept_pins := [i for i in pinned if i in set(ids)]:
        doc["window"]["pinned"] = kept_pins  # pins survive a repair (a dropped one is unpinned)
    doc["step"] = step
    return doc


def repair_replay(rep: Session, defaults: dict[str, Any]) -> RepairedFile:
    """Repair the final window of a replayed file and build the document to write."""
    entries = rep.context.entries()
    window = [m for _, m in entries]
    window_ids = [mid for mid, _ in entries]
    session = rep.session
    result = repair(window, rep.system, checker=rep.repair_checker())
    fmt = session.format
    if fmt == "messages":
        return RepairedFile(result, "messages", result.messages, window_ids)
    if fmt == "ctxview":
        return RepairedFile(result, "ctxview", _edited_session(rep, result), window_ids)
    if rep.provider != "anthropic":
        from ctxview.sessions.readers import detect

        body = _provider_body(rep, result, window, defaults)
        # the format of the body written (a Gemini CLI session is repaired into a Gemini body,
        # a Codex rollout into a Responses one)
        return RepairedFile(result, detect(session.path, "", body), body, window_ids)
    return RepairedFile(result, "request", request_document(rep, result, defaults), window_ids)


def _provider_body(
    rep: Session, result: RepairResult, window: list[Any], defaults: dict[str, Any]
) -> dict[str, Any]:
    """Another API's request body of the repaired window, in that API's own form (a Gemini
    file is repaired into a Gemini body, never silently into a Messages API one): a message the
    repair left as it was keeps its wire item, a changed or inserted one is written from its
    blocks."""
    from ctxview.core.providers.base import BodyParts
    from ctxview.core.providers.registry import provider

    session = rep.session
    ids = [mid for mid, _ in rep.context.entries()]
    metas: list[Any] = []
    for k, o in enumerate(result.origin):
        same = o is not None and result.messages[k] == window[o]
        metas.append(rep.transcript[ids[o]].meta if same and o is not None else {})
    return provider(rep.provider).write_body(
        BodyParts(
            model=rep.model_name(defaults),
            messages=result.messages,
            metas=metas,
            system=result.system,
            tools=session.tools,
            params=session.request_params,
            format=session.format,
            system_wire=session.system_wire,
        )
    )
