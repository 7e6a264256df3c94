"""The request that writes a compaction's summary, priced.

Claude Code compacts by sending the conversation once more with its compact instruction appended
and taking the response as the summary the next request starts from. That request is not in the
main transcript (2.1.x keeps it in ``subagents/agent-acompact-*.jsonl``), but what it sent is:

* it reads the prompt of the last request before the compaction from the cache (the recorded
  reads of the ``agent-acompact`` files equal that request's recorded prompt, to the token);
* it writes what came after that prompt (the last response and its tool results) and the
  instruction (:data:`INSTRUCTION_CHARS`);
* its output is the summary (the compaction's first message).

The messages Claude Code adds from hooks (``isMeta`` reminders: a ``PostToolUse`` hook's
additional context) are sent too but are not in the main transcript; where the compaction's
``agent-acompact`` file holds them, :func:`with_reminders` adds them to the request.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from ctxview.core.cache_rules import TTL_GRACE_SECONDS, minimum
from ctxview.core.calibrate import Rates, message_features
from ctxview.core.pricing import PriceTable, costs
from ctxview.core.requests.points import parse_timestamp
from ctxview.core.requests.types import TTL_1H, TTL_5M, CacheBreak, Request

#: characters of Claude Code's compact instruction ("Your task is to create a detailed summary
#: of the conversation so far ..."): 8,579 and 8,669 in the ``agent-acompact`` files of Claude
#: Code 2.1.3x-2.1.4x
INSTRUCTION_CHARS = 8_600
#: the longest a summary takes to be written (the ``agent-acompact`` files: 70 s to 87 s from
#: the instruction to the summary)
WRITING_SECONDS = 180.0
#: the kind of a request that writes a compaction's summary (``Request.kind``)
COMPACTION = "compaction"


def compaction_requests(plan: Any, out: Sequence[Request]) -> list[Request]:
    """One request per compaction start of ``plan`` (a ``ReplayPlan`` replayed as sent) that
    follows a request of ``out``: what Claude Code sent to have the summary written."""
    starts = sorted(s for s in plan.starts if s > 0)
    if not starts:
        return []
    on_branch = [r for r in out if not r.off_branch and r.message_ids]
    metas = plan.session.metas
    prose = plan.rates.per_char[0]
    instruction = round(INSTRUCTION_CHARS * prose)
    found: list[Request] = []
    k = 0
    for s in starts:
        # the last request whose window ended before the summary
        while k < len(on_branch) and on_branch[k].message_ids[-1] < s:
            k += 1
        if k == 0:
            continue
        last = on_branch[k - 1]
        end = last.message_ids[-1]
        # sent before the request after it (its index: a request's place in ``out``)
        index = on_branch[k].index if k < len(on_branch) else out[-1].index + 1
        if found and found[-1].index == index:  # (two starts after one request: one counts)
            continue
        tail = sum(plan.tok[end + 1 : s])
        # sent after the last message before the summary, and at most WRITING_SECONDS before
        # the summary was logged (a /compact typed after a pause is sent after that pause)
        ts = _timestamp(metas, s - 1) or last.timestamp
        t0, t1 = parse_timestamp(last.timestamp), parse_timestamp(ts)
        done = parse_timestamp(_timestamp(metas, s))
        if done is not None and t1 is not None and done - WRITING_SECONDS > t1:
            t1 = done - WRITING_SECONDS
        ttl = TTL_1H if last.ttl == "1h" else TTL_5M
        live = t0 is None or t1 is None or t1 - t0 <= ttl + TTL_GRACE_SECONDS
        model = last.model
        floor, price = minimum(model).tokens, plan.prices.get(model)
        prompt = last.input_tokens
        total = prompt + tail + instruction
        read = prompt if live and prompt >= floor else 0
        write = total - read if total >= floor else 0
        output = plan.tok[s]
        cost = None
        if price is not None:
            w5, w1 = (write, 0) if ttl == TTL_5M else (0, write)
            cost = costs(price, total - read - write, read, w5, w1, output)[0]
        found.append(
            Request(
                index=index,
                message_ids=[],
                window_size=last.window_size + (s - 1 - end),
                input_tokens=total,
                cache_read=read,
                cache_write=write,
                uncached=total - read - write,
                cache_break=None if read else CacheBreak("ttl", 0),
                recorded=None,
                timestamp=_timestamp(metas, s) or ts,  # (a request's time is its response's)
                cost_usd=cost,
                model=model,
                response_id=s,
                output_tokens=output,
                ttl=last.ttl,
                kind=COMPACTION,
            )
        )
    return found


def _timestamp(metas: Sequence[Any], i: int) -> str | None:
    m = metas[i] if 0 <= i < len(metas) else None
    ts = m.get("timestamp") if isinstance(m, dict) else None
    return ts if isinstance(ts, str) else None


def reminder_tokens(first: Mapping[str, Any], rates: Rates) -> int:
    """Tokens under ``rates`` of the hook reminders an ``agent-acompact`` file's first message
    holds before the compact instruction (its last block; Claude Code logs the ``isMeta``
    reminders it sent and the instruction as consecutive user lines, read as one message)."""
    content = first.get("content")
    if first.get("role") != "user" or not isinstance(content, list) or len(content) < 2:
        return 0
    return rates.tokens(message_features({**first, "content": content[:-1]}))


def with_reminders(req: Request, tokens: int, prices: PriceTable) -> Request:
    """A modelled compaction request with ``tokens`` more sent after its cached prefix (the hook
    reminders, :func:`reminder_tokens`): written with the rest of what followed that prefix."""
    if tokens <= 0:
        return req
    total = req.input_tokens + tokens
    floor = minimum(req.model).tokens
    read = req.cache_read
    write = total - read if total >= floor else 0
    uncached = total - read - write
    price = prices.get(req.model)
    cost = None
    if price is not None:
        w5, w1 = (0, write) if req.ttl == "1h" else (write, 0)
        cost = costs(price, uncached, read, w5, w1, req.output_tokens or 0)[0]
    return replace(req, input_tokens=total, cache_write=write, uncached=uncached, cost_usd=cost)
