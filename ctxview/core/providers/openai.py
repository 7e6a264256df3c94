"""OpenAI (Chat Completions, the Responses API, and Codex CLI sessions) as a provider.

* rules: the tool-call pairing rules of :mod:`ctxview.core.protocol`, in OpenAI's words (each
  with its evidence, ``docs/protocol.md``); Anthropic's other rules (the first message a user's,
  roles alternating, non-empty content, thinking blocks' order, whitespace) are not OpenAI's and
  are not applied. A Responses body that continues a stored response (``previous_response_id``)
  may answer calls the file does not hold: its orphan results are not errors.
* usage: OpenAI's ``cached_tokens`` is a part of ``prompt_tokens`` / ``input_tokens`` (Codex:
  ``cached_input_tokens`` of ``input_tokens``); canonical counts split it off.
* cache: automatic prefix caching from 1,024 tokens in steps of 128, no write charge, cached
  tokens at a discount; ``prompt_cache_key`` routes requests to the same cache.
* prices: :data:`PRICES`, USD per million tokens, with source and dates.
* body: Chat Completions ``messages`` (the leading system/developer messages as read, or the
  system prompt as one ``system`` message) or Responses ``instructions`` + ``input``; each
  message's wire item back verbatim while unchanged (:mod:`ctxview.core.providers.openai_wire`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from functools import cache, partial
from typing import Any

from ctxview.core.cache_rules import Minimum
from ctxview.core.calibrate import CALIBRATED_FORMATS
from ctxview.core.content import system_text
from ctxview.core.pricing import Price, PriceBook, openai_model_name
from ctxview.core.protocol import Problem, Rule, RuleSet
from ctxview.core.providers.base import BodyParts, CacheModel, Provider, Route, TokenModel, Usage
from ctxview.core.providers.openai_tokens import (
    estimate_message,
    estimate_params,
    estimate_system,
    estimate_tools,
    message_estimate,
    reasoning_carry,
    unmeasured,
)
from ctxview.core.providers.openai_wire import item_id_of, stored_reasoning, wire_items
from ctxview.core.usage import MAX_RECORDED_TOKENS

#: the file formats of this provider
CHAT = "openai-chat"
RESPONSES = "openai-responses"
CODEX = "codex"
FORMATS = frozenset((CHAT, RESPONSES, CODEX))

# -- rules ---------------------------------------------------------------------------------------
_CHAT_ORPHAN = Rule(
    "orphan_tool_result",
    "Invalid parameter: messages with role 'tool' must be a response to a preceeding message "
    "with 'tool_calls'.",
    "miurla/morphic#136 (param messages.[3].role), smarter-sh/smarter#264 (gpt-4-turbo)",
)
_CHAT_UNANSWERED = Rule(
    "unanswered_tool_use",
    "An assistant message with 'tool_calls' must be followed by tool messages responding to "
    "each 'tool_call_id'. The following tool_call_ids did not have response messages: {ids}",
    "router-for-me/CLIProxyAPI#2798 (param messages.[6].role), BerriAI/litellm#10083, "
    "aliasrobotics/cai#111",
)
_CHAT_NOT_FOUND = Rule(
    "orphan_tool_result",
    "Invalid parameter: 'tool_call_id' of '{ids}' not found in 'tool_calls' of previous message.",
    "cline/cline src/core/api/transform/openai-format.ts (the rejection quoted where tool ids "
    "are made to match)",
)
_CHAT_DUPLICATE = Rule(
    "duplicate_tool_result",
    "Invalid parameter: Duplicate value for 'tool_call_id' of '{ids}' in messages.",
    "agno-agi/agno#5116 (\"... of 'call_gmd4…' in messages[7] and messages[8]\"), "
    "fatwang2/search2ai#30",
)


def _tool_results(message: Mapping[str, Any]) -> list[tuple[str, int]] | None:
    """The results of a canonical message read from (or written as) ``tool`` messages: a user
    message of tool_result blocks alone; None for any other message."""
    content = message.get("content")
    if message.get("role") != "user" or not isinstance(content, list) or not content:
        return None
    out = []
    for j, b in enumerate(content):
        if not isinstance(b, Mapping) or b.get("type") != "tool_result":
            return None
        tid = b.get("tool_use_id")
        out.append((tid if isinstance(tid, str) else "", j))
    return out


def _tool_uses(message: Mapping[str, Any]) -> list[str]:
    content = message.get("content")
    if message.get("role") != "assistant" or not isinstance(content, list):
        return []
    return [
        b["id"]
        for b in content
        if isinstance(b, Mapping) and b.get("type") == "tool_use" and isinstance(b.get("id"), str)
    ]


def chat_pairing(messages: Sequence[Any]) -> list[Problem]:
    """Chat Completions' pairing: an assistant message with ``tool_calls`` is followed at once
    by one ``tool`` message per call (a user, system or assistant message in between closes
    the run: its calls are unanswered), and a ``tool`` message answers a call of the assistant
    message before that run, once. A last assistant message's calls wait for their results
    (the response being recorded)."""
    out: list[Problem] = []
    calls: list[str] | None = None  # the open run's calls
    answered: set[str] = set()
    owner = -1

    def close() -> None:
        missing = [c for c in calls or () if c not in answered]
        if missing:
            p = Problem(owner, _CHAT_UNANSWERED.code, "error", "", None, tuple(missing))
            out.append(_CHAT_UNANSWERED.word(p))

    for i, m in enumerate(messages):
        if not isinstance(m, Mapping):
            close()
            calls, answered, owner = None, set(), -1
            continue
        results = _tool_results(m)
        if results is not None:
            for rid, j in results:
                if calls is None:
                    rule = _CHAT_ORPHAN
                elif rid not in calls:
                    rule = _CHAT_NOT_FOUND
                elif rid in answered:
                    rule = _CHAT_DUPLICATE
                else:
                    answered.add(rid)
                    continue
                out.append(rule.word(Problem(i, rule.code, "error", "", j, (rid,))))
            continue
        close()
        uses = _tool_uses(m)
        calls, answered, owner = (uses, set(), i) if uses else (None, set(), -1)
    if calls is not None and owner != len(messages) - 1:
        close()
    return out


_RESPONSES_ORPHAN = Rule(
    "orphan_tool_result",
    "No tool call found for function call output with call_id {ids}.",
    "james-6-23/codex2api#414 (param input), leookun/cursor-byok#307 (gpt-5.3-codex-spark, "
    "/v1/responses)",
)
_RESPONSES_UNANSWERED = Rule(
    "unanswered_tool_use",
    "No tool output found for function call {ids}.",
    "lace-ai/gai#49 (quoting the Responses API); the same rule on DeepSeek's Responses endpoint, "
    "recorded: pydantic-ai cassette test_deepseek_responses_rejects_interleaved_function_calls",
)


def _calls_and_results(
    message: Any,
) -> tuple[list[tuple[str, bool, int]], list[tuple[str, int]]]:
    """A canonical message's calls ``(call id, needs an output, block)`` and results ``(call
    id, block)``: tool_use / tool_result blocks, and the built-in items kept as blocks of their
    own type that carry a ``call_id`` (``tool_search_call``, ``computer_call_output`` ...)."""
    calls: list[tuple[str, bool, int]] = []
    results: list[tuple[str, int]] = []
    content = message.get("content") if isinstance(message, Mapping) else None
    if not isinstance(content, list):
        return calls, results
    for j, b in enumerate(content):
        if not isinstance(b, Mapping):
            continue
        t = b.get("type")
        if t == "tool_use" and isinstance(b.get("id"), str):
            calls.append((b["id"], True, j))
        elif t == "tool_result" and isinstance(b.get("tool_use_id"), str):
            results.append((b["tool_use_id"], j))
        elif isinstance(t, str) and isinstance(b.get("call_id"), str):
            if t.endswith("_output"):
                results.append((b["call_id"], j))
            else:
                calls.append((b["call_id"], False, j))
    return calls, results


#: a position past any message
_NEVER = 1 << 62

#: per message: its results ``(block, call id, the last message up to it holding a call with
#: that id, -1 if none)`` and its calls that need an output ``(block, call id, the first message
#: after it holding an output for that id, _NEVER if none)``
Links = tuple[list[list[tuple[int, str, int]]], list[list[tuple[int, str, int]]]]


def _links(messages: Sequence[Any]) -> Links:
    """Each output linked to the latest call with its id at or before it, each call to the first
    output after it: what the Responses pairing reads, for a whole input or, computed once over
    a conversation, for any window of it (:class:`ResponsesWindows`)."""
    scanned = [_calls_and_results(m) for m in messages]
    n = len(scanned)
    results: list[list[tuple[int, str, int]]] = [[] for _ in range(n)]
    calls: list[list[tuple[int, str, int]]] = [[] for _ in range(n)]
    last_call: dict[str, int] = {}
    for i, (c, r) in enumerate(scanned):
        for cid, _needs, _j in c:
            last_call[cid] = i
        if r:
            results[i] = [(j, rid, last_call.get(rid, -1)) for rid, j in r]
    next_result: dict[str, int] = {}
    for i in range(n - 1, -1, -1):
        c, r = scanned[i]
        if c:
            calls[i] = [(j, cid, next_result.get(cid, _NEVER)) for cid, needs, j in c if needs]
        for rid, _j in r:
            next_result[rid] = i
    return results, calls


def _is_assistant(m: Any) -> bool:
    return isinstance(m, Mapping) and m.get("role") == "assistant"


def _outputs_only(m: Any, results: list[tuple[int, str, int]]) -> bool:
    """A message that holds tool outputs and nothing else."""
    content = m.get("content") if isinstance(m, Mapping) else None
    return (
        not _is_assistant(m)
        and bool(results)
        and isinstance(content, list)
        and len(results) == len(content)
    )


def _pending_run(
    messages: Sequence[Any], results: Sequence[list[tuple[int, str, int]]], hi: int
) -> int:
    """Where the input ``messages[:hi]``'s last run of assistant items starts: the response
    being recorded, whose calls wait for their outputs. Outputs of its calls after it are part
    of the wait (parallel calls: the agent sends the next request once all have run; unseen4
    codex eskills_019dd4b9 ends with one of two outputs)."""
    k = hi
    while k > 0 and _outputs_only(messages[k - 1], results[k - 1]):
        k -= 1
    start = k
    while start > 0 and _is_assistant(messages[start - 1]):
        start -= 1
    if start == k or any(call < start for i in range(k, hi) for _, _, call in results[i]):
        # no assistant run before the outputs, or an output of an earlier call among them
        start = hi
        while start > 0 and _is_assistant(messages[start - 1]):
            start -= 1
    return start


def _pairing(messages: Sequence[Any], orphans: bool) -> list[Problem]:
    """The Responses API's pairing, by call id across the whole input (an output may come
    after other items, a developer message for one: Codex sends so, and the API accepts it):
    every output follows an item with its call id (``orphans``), and every function or custom
    tool call has an output after it, but those of the input's last run of assistant items (the
    response being recorded: its outputs come in the next request)."""
    out: list[Problem] = []
    results, calls = _links(messages)
    n = len(messages)
    tail = _pending_run(messages, results, n)
    for i in range(n):
        if orphans:
            for j, rid, call in results[i]:
                if call < 0:
                    p = Problem(i, _RESPONSES_ORPHAN.code, "error", "", j, (rid,))
                    out.append(_RESPONSES_ORPHAN.word(p))
        if i < tail:
            for j, cid, answer in calls[i]:
                if answer >= n:
                    p = Problem(i, _RESPONSES_UNANSWERED.code, "error", "", j, (cid,))
                    out.append(_RESPONSES_UNANSWERED.word(p))
    out.sort(key=lambda p: (p.index, p.block or 0))
    return out


def responses_pairing(messages: Sequence[Any]) -> list[Problem]:
    return _pairing(messages, orphans=True)


def continued_pairing(messages: Sequence[Any]) -> list[Problem]:
    return _pairing(messages, orphans=False)


_REASONING_ALONE = Rule(
    "reasoning_without_following_item",
    "Item '{ids}' of type 'reasoning' was provided without its required following item.",
    "recorded: pydantic-ai cassette test_openai_responses_thinking_with_modified_history "
    "(tests/acceptance/rejected/); continuedev/continue#8933, #10428, vercel/ai#7099, "
    "openai/openai-node#1567, openai/openai-agents-js#326",
)


def _reasoning_alone(m: Any, nxt: Any) -> str | None:
    """The id of ``m`` when it is a reasoning item of a stored response that ``nxt`` (the item
    after it) does not follow as its response's next item, else None."""
    rid = stored_reasoning(m) if isinstance(m, Mapping) else None
    if rid is None or (_is_assistant(nxt) and item_id_of(nxt) is not None):
        return None
    return rid


def reasoning_order(messages: Sequence[Any]) -> list[Problem]:
    """A reasoning item of a stored response (one with an ``id``) is followed at once by the
    item that followed it in that response: an assistant item of that response, which carries
    its own ``id``. A user or tool output item after it, or an assistant item with no ``id`` (a
    message rewritten, so no longer the stored one), and the API refuses the request. The
    input's last item may be a reasoning item: the response being recorded."""
    out: list[Problem] = []
    for i in range(len(messages) - 1):
        rid = _reasoning_alone(messages[i], messages[i + 1])
        if rid is not None:
            p = Problem(i, _REASONING_ALONE.code, "error", "", 0, (rid,))
            out.append(_REASONING_ALONE.word(p))
    return out


def _whole(rules: RuleSet, messages: Sequence[Any], first: int, lo: int, hi: int) -> bool:
    window = [messages[first], *messages[lo:hi]]
    return any(p.severity == "error" for c in rules.checks for p in c(window))


class ResponsesWindows:
    """Whether a window ``[first] + messages[lo:hi]`` of a Responses conversation breaks its
    rules (pairing, with or without orphans, and the reasoning rule), from the links of the
    whole conversation (:func:`_links`): an output of the window is an orphan when the latest
    call with its id before it is before ``lo``; a call before the window's last run of
    assistant items is unanswered when its first output is at or past ``hi``. Both are found
    for every ``lo`` and every ``hi`` in one sweep each (O(n log n)), so a window costs O(1)
    (a window whose first message holds calls, outputs or reasoning is checked whole)."""

    def __init__(self, messages: Sequence[Any], rules: RuleSet, orphans: bool) -> None:
        import heapq

        self.messages = messages
        self.rules = rules
        n = len(messages)
        results, calls = _links(messages)
        #: the first message is none of the pairing's or the reasoning rule's
        self.plain = [
            not results[i] and not _calls_and_results(m)[0] and stored_reasoning_of(m) is None
            for i, m in enumerate(messages)
        ]
        # orphan_from[lo]: the first message at or after lo holding an output whose latest call
        # is before lo (n: none)
        self.orphan_from: list[int] | None = None
        if orphans:
            joins: list[list[int]] = [[] for _ in range(n + 1)]
            for j, r in enumerate(results):
                if r:
                    joins[min(call for _, _, call in r) + 1].append(j)
            heap: list[int] = []
            orphan_from = [n] * (n + 1)
            for lo in range(n + 1):
                for j in joins[lo]:
                    heapq.heappush(heap, j)
                while heap and heap[0] < lo:
                    heapq.heappop(heap)
                if heap:
                    orphan_from[lo] = heap[0]
            self.orphan_from = orphan_from
        # a window ending in outputs of its last assistant run's calls (the rest still
        # running): pending_start[hi] is where that run starts in the conversation (-1: no
        # such end) and pending_least[hi] the earliest message holding a call those outputs
        # answer; a window starting after the run's start is checked against plain_below
        self.pending_start = [-1] * (n + 1)
        self.pending_least = [n] * (n + 1)
        for hi in range(1, n + 1):
            if _outputs_only(messages[hi - 1], results[hi - 1]):
                start = _pending_run(messages, results, hi)
                if start < hi:
                    self.pending_start[hi] = start
                    k = hi
                    while k > start and not _is_assistant(messages[k - 1]):
                        k -= 1
                    self.pending_least[hi] = min(
                        (call for i in range(k, hi) for _, _, call in results[i]), default=n
                    )
        self.plain_below = self._unanswered_below(messages, calls, pending=False)
        self.unanswered_below = self._unanswered_below(messages, calls, pending=True)
        alone = [0] * (n + 1)
        for i in range(n - 1):
            alone[i + 1] = alone[i] + (_reasoning_alone(messages[i], messages[i + 1]) is not None)
        alone[n] = alone[n - 1] if n else 0
        self.alone = alone

    def _unanswered_below(
        self, messages: Sequence[Any], calls: list[list[tuple[int, str, int]]], pending: bool
    ) -> list[int]:
        """Per ``hi``, the last message before the last assistant run of ``[.., hi)`` (with
        ``pending``: before the run the window's final outputs answer) holding a call whose
        first output is at or past ``hi`` (-1: none)."""
        import heapq

        n = len(messages)
        answered_at = [max((a for _, _, a in c), default=-1) for c in calls]
        unanswered_below = [-1] * (n + 1)
        tops: list[int] = []
        added = 0
        after_plain = 0  # past the last message that is no assistant item
        for hi in range(n + 1):
            if hi > 0 and not _is_assistant(messages[hi - 1]):
                after_plain = hi
            tail = after_plain
            if pending and self.pending_start[hi] >= 0:
                tail = self.pending_start[hi]
            while added < tail:
                if answered_at[added] >= 0:
                    heapq.heappush(tops, -added)
                added += 1
            while tops and answered_at[-tops[0]] < hi:
                heapq.heappop(tops)
            if tops:
                unanswered_below[hi] = -tops[0]
        return unanswered_below

    def rejected(self, first: int, lo: int, hi: int) -> bool:
        if not self.plain[first]:
            return _whole(self.rules, self.messages, first, lo, hi)
        if lo >= hi:
            return False
        if self.orphan_from is not None and self.orphan_from[lo] < hi:
            return True
        start = self.pending_start[hi]
        if start < 0 or lo <= start:
            if self.unanswered_below[hi] >= lo:
                return True
        elif self.pending_least[hi] < lo and self.plain_below[hi] >= lo:
            # the window cuts the run: its outputs of calls before lo answer nothing in it
            return True
        return self.alone[hi - 1] > self.alone[lo]


def stored_reasoning_of(m: Any) -> str | None:
    return stored_reasoning(m) if isinstance(m, Mapping) else None


class ChatWindows:
    """Whether a window ``[first] + messages[lo:hi]`` of a Chat Completions conversation breaks
    its pairing: the pairing runs from one message that is not a tool message to the next, so a
    run wholly inside the window has the errors it has in the whole conversation (prefix sums);
    the run the window starts in and the one it ends in are checked by :func:`chat_pairing`
    itself, on those runs alone."""

    def __init__(self, messages: Sequence[Any]) -> None:
        n = len(messages)
        self.messages = messages
        is_result = [isinstance(m, Mapping) and _tool_results(m) is not None for m in messages]
        counts = [0] * n
        for p in chat_pairing(messages):
            if p.severity == "error" and 0 <= p.index < n:
                counts[p.index] += 1
        self.prefix = [0] * (n + 1)
        for i in range(n):
            self.prefix[i + 1] = self.prefix[i] + counts[i]
        #: the first message at or after i that is not a tool message (n: none)
        self.run_end = [n] * (n + 1)
        for i in range(n - 1, -1, -1):
            self.run_end[i] = self.run_end[i + 1] if is_result[i] else i
        #: the last message at or before i that is not a tool message (-1: none)
        self.run_start = [-1] * n
        last = -1
        for i in range(n):
            if not is_result[i]:
                last = i
            self.run_start[i] = last

    def rejected(self, first: int, lo: int, hi: int) -> bool:
        msgs = self.messages
        if lo >= hi:
            return bool(errors_of(chat_pairing([msgs[first]])))
        a = min(self.run_end[lo], hi)  # the first run of the window: [first] + [lo, a)
        if a < hi:  # with the message closing it (last, it has no error here)
            if errors_of(chat_pairing([msgs[first], *msgs[lo : a + 1]])):
                return True
        else:
            return bool(errors_of(chat_pairing([msgs[first], *msgs[lo:hi]])))
        b = self.run_start[hi - 1]  # the last run: [b, hi), b >= a
        if self.prefix[b] > self.prefix[a]:
            return True
        return bool(errors_of(chat_pairing(msgs[b:hi])))


def errors_of(problems: Sequence[Problem]) -> list[Problem]:
    return [p for p in problems if p.severity == "error"]


#: Chat Completions: tool messages answer the assistant message with 'tool_calls' right before
#: them, each call once (none of the merged-turn rules of the Messages API)
CHAT_RULES = RuleSet("openai-chat", {}, (chat_pairing,), ChatWindows, results_follow_call=True)
#: the Responses API: every function_call has its output, every output its call, anywhere in
#: the input; a stored reasoning item keeps its following item (none of the merged-turn rules
#: of the Messages API)
RESPONSES_RULES: RuleSet = RuleSet(
    "openai-responses",
    {},
    (responses_pairing, reasoning_order),
    lambda messages: ResponsesWindows(messages, RESPONSES_RULES, orphans=True),
)
#: a Responses body that continues a stored response: its outputs may answer calls of that
#: response, which the file does not hold
CONTINUED_RULES: RuleSet = RuleSet(
    "openai-responses-continued",
    {},
    (continued_pairing, reasoning_order),
    lambda messages: ResponsesWindows(messages, CONTINUED_RULES, orphans=False),
)


#: a stateless Responses body (``store: false``) or a Codex rollout (Codex runs stateless):
#: the Responses API's pairing, not the reasoning rule, which resolves ids against stored
#: responses: bodies with ``store: false`` holding a reasoning item with an id before a
#: function_call without one were answered 200, and a rollout records ids whatever Codex sent
STATELESS_RULES: RuleSet = RuleSet(
    "openai-responses-stateless",
    {},
    (responses_pairing,),
    lambda messages: ResponsesWindows(messages, STATELESS_RULES, orphans=True),
)
#: a Codex rollout's rules
CODEX_RULES = STATELESS_RULES


def rules_for(fmt: str, params: Mapping[str, Any]) -> RuleSet:
    """The rule set of a session of format ``fmt`` with the request fields ``params``."""
    if fmt == CHAT:
        return CHAT_RULES
    if fmt == CODEX or params.get("store") is False:
        return STATELESS_RULES
    if params.get("previous_response_id") or params.get("conversation") or _stored_prompt(params):
        return CONTINUED_RULES
    return RESPONSES_RULES


def _stored_prompt(params: Mapping[str, Any]) -> str | None:
    """The id of the stored prompt a Responses body names (its messages are the API's)."""
    prompt = params.get("prompt")
    found = prompt.get("id") if isinstance(prompt, Mapping) else None
    return found if isinstance(found, str) and found else None


def request_notes(params: Mapping[str, Any]) -> list[Problem]:
    """A Responses body that continues a stored response or conversation: the turns before it
    are the API's, not the file's (a warning: nothing is wrong with the request)."""
    out = []
    for key in ("previous_response_id", "conversation"):
        value = params.get(key)
        if value:
            shown = (
                value
                if isinstance(value, str)
                else str(value.get("id", value))
                if isinstance(value, Mapping)
                else str(value)
            )
            out.append(
                Problem(
                    -1,
                    "continues_stored_response",
                    "warning",
                    f"{key} {shown[:80]}: this request continues a stored response; the turns "
                    "before it are not in the file (the API adds them), so its tokens, cost and "
                    "window cover only what the file holds",
                )
            )
    stored = _stored_prompt(params)
    if stored is not None:
        out.append(
            Problem(
                -1,
                "uses_stored_prompt",
                "warning",
                f"prompt {stored[:80]}: this request uses a prompt stored with the API; its "
                "instructions and messages are not in the file (the API adds them), so its "
                "tokens, cost and window cover only what the file holds",
            )
        )
    return out


# -- cache ---------------------------------------------------------------------------------------
CACHE_SOURCE = (
    "OpenAI's prompt caching guide (platform.openai.com/docs/guides/prompt-caching: caching is "
    "automatic for prompts of 1,024 tokens or more, cache hits in increments of 128 tokens, "
    "cached prefixes stay active 5 to 10 minutes of inactivity and up to an hour off-peak, "
    "prompt_cache_key to route requests sharing a prefix; no extra charge for writes)"
)
CACHE_DATE = "2026-12-02 (as read that day)"
_MINIMUM = Minimum(1024)

CACHE = CacheModel(
    kind="prefix",
    minimum=lambda model: _MINIMUM,
    step=128,
    write_charge=False,
    # an entry is taken to live an hour (the guide's "up to an hour"): each of the 17 Codex CLI
    # requests of the Codex diagnosis set (docs/providers.md) sent 5 to 38 minutes after the previous one read 17,792 to
    # 195,968 tokens of it (gpt-5.4 / gpt-5.5; up to where the API dropped the last turn's
    # reasoning), each of the 4 sent 59 minutes or more after read only 2,432 to 4,480
    ttls={"1h": 3600.0, "24h": 86400.0},
    key_field="prompt_cache_key",
    source=CACHE_SOURCE,
    date=CACHE_DATE,
)


# -- usage ---------------------------------------------------------------------------------------
def _count(v: Any) -> int | None:
    if v is None:
        return 0
    if type(v) is int and 0 <= v <= MAX_RECORDED_TOKENS:
        return v
    return None


def usage(u: Mapping[str, Any]) -> Usage | None:
    """A Chat Completions (``prompt_tokens`` + ``prompt_tokens_details.cached_tokens``),
    Responses (``input_tokens`` + ``input_tokens_details.cached_tokens``) or Codex
    (``input_tokens`` + ``cached_input_tokens``) usage in the canonical counts: the cached
    tokens are a part of the prompt's, split off as reads. OpenAI reports no writes: the rest of
    the prompt's cacheable prefix (from the minimum, in whole steps) is counted as written, as
    the cache keeps it (free: a write is priced at the input rate); what is past the last step,
    or a prompt below the minimum, is uncached."""
    if "prompt_tokens" in u:
        prompt = _count(u.get("prompt_tokens"))
        details = u.get("prompt_tokens_details")
        out = _count(u.get("completion_tokens"))
    elif "input_tokens" in u:
        prompt = _count(u.get("input_tokens"))
        details = u.get("input_tokens_details")
        out = _count(u.get("output_tokens"))
    else:
        return None
    cached: int | None = 0
    if isinstance(details, Mapping):
        cached = _count(details.get("cached_tokens"))
    elif "cached_input_tokens" in u:
        cached = _count(u.get("cached_input_tokens"))
    if prompt is None or cached is None or cached > prompt:
        return None
    write = max(0, CACHE.cached_length(prompt, None) - cached)
    return Usage(prompt - cached - write, cached, write, 0, out)


# -- prices --------------------------------------------------------------------------------------
def _p(input_: float, cached: float, output: float) -> Price:
    """OpenAI's prices: a cache write costs the input rate (no write charge)."""
    return Price(input_, input_, input_, cached, output)


#: USD per million tokens: input, cached input, output
PRICES: dict[str, Price] = {
    "gpt-5.5": _p(5.00, 0.50, 30.00),
    "gpt-5.4": _p(2.50, 0.25, 15.00),
    "gpt-5.4-mini": _p(0.75, 0.075, 4.50),
    "gpt-5.4-nano": _p(0.20, 0.02, 1.25),
    "gpt-5.2": _p(1.75, 0.175, 14.00),
    "gpt-5.2-codex": _p(1.75, 0.175, 14.00),
    "gpt-5.3-codex": _p(1.75, 0.175, 14.00),
    "gpt-5.1": _p(1.25, 0.125, 10.00),
    "gpt-5.1-codex": _p(1.25, 0.125, 10.00),
    "gpt-5": _p(1.25, 0.125, 10.00),
    "gpt-5-codex": _p(1.25, 0.125, 10.00),
    "gpt-5-mini": _p(0.25, 0.025, 2.00),
    "gpt-5-nano": _p(0.05, 0.005, 0.40),
    "gpt-4.1": _p(2.00, 0.50, 8.00),
    "gpt-4.1-mini": _p(0.40, 0.10, 1.60),
    "gpt-4.1-nano": _p(0.10, 0.025, 0.40),
    "gpt-4o": _p(2.50, 1.25, 10.00),
    "gpt-4o-mini": _p(0.15, 0.075, 0.60),
    "o3": _p(2.00, 0.50, 8.00),
    "o4-mini": _p(1.10, 0.275, 4.40),
    "o1": _p(15.00, 7.50, 60.00),
}
PRICE_BOOK = PriceBook(
    "openai",
    PRICES,
    openai_model_name,
    "OpenAI's API pricing page (standard tier, context under 270K), as quoted that day by "
    "benchlm.ai 'OpenAI API pricing' (GPT-5.4, 5.2, 5.1), chatgptpricing-akr.pages.dev "
    "(GPT-4o family) and benchr.org 'GPT-5.5 pricing explained' (GPT-5.5); the Codex models priced as their base model (an assumption: the page lists "
    "them with the same rates)",
    "https://developers.openai.com/api/docs/pricing",
    "2026-12-02 (as read that day; prices change)",
    effective={
        "gpt-5.5": "2026-04-23",
        "gpt-5": "2025-08-07",
        "gpt-4.1": "2025-04-14",
        "gpt-4.1-mini": "2025-04-14",
        "gpt-4.1-nano": "2025-04-14",
        "o3": "2025-06-10",
    },
)


# -- the request body ------------------------------------------------------------------------------
def _system_messages(parts: BodyParts) -> list[Any]:
    """The leading system messages of a Chat Completions body: as read while the system prompt
    is what they read as, else one ``system`` message."""
    text = system_text(parts.system) if parts.system else ""
    if parts.system_wire:
        read = "\n\n".join(
            system_text(m.get("content")) for m in parts.system_wire if isinstance(m, Mapping)
        )
        if read == text:
            return list(parts.system_wire)
    return [{"role": "system", "content": text}] if text else []


def write_body(parts: BodyParts) -> dict[str, Any]:
    """The Chat Completions or Responses body of a window (every other field of the file's body
    verbatim, in ``params``)."""
    responses = parts.format in (RESPONSES, CODEX)
    kind = "responses" if responses else "chat"
    items = wire_items(kind, parts.messages, [parts.wire(i) for i in range(len(parts.messages))])
    body: dict[str, Any] = {}
    if parts.model is not None:
        body["model"] = parts.model
    body.update(parts.params)
    if responses:
        text = system_text(parts.system) if parts.system else ""
        if text:
            body["instructions"] = text
        # a file whose input was one string gives it back as the string
        body["input"] = items[0] if len(items) == 1 and isinstance(items[0], str) else items
    else:
        body["messages"] = _system_messages(parts) + items
    if parts.tools:
        body["tools"] = list(parts.tools)
    return body


def wire_starts(parts: BodyParts) -> tuple[str, list[int]]:
    """The array of the body :func:`write_body` writes (``messages`` or ``input``) and where
    each message of the window starts in it, and where the last ends: the leading system
    messages of a Chat Completions body come first, and a message written as several items
    takes as many."""
    responses = parts.format in (RESPONSES, CODEX)
    kind = "responses" if responses else "chat"
    at = 0 if responses else len(_system_messages(parts))
    starts = []
    for i, m in enumerate(parts.messages):
        starts.append(at)
        at += len(wire_items(kind, [m], [parts.wire(i)]))
    starts.append(at)  # (where the next one would start: the last message's end)
    return ("input" if responses else "messages"), starts


#: what the estimate is (shown beside the figures)
TOKENS_BASIS = (
    "text counted exactly in o200k_base; OpenAI's framing by model family and API (4 tokens a "
    "message for GPT-4o, 3 for the reasoning models, 3 priming the reply, tool calls, function "
    "definitions and images by OpenAI's rules), the current turn's hidden reasoning by its "
    "sealed length; calibrated from a Codex session's recorded usage"
)


@cache
def token_model(model: str | None, fmt: str = "", route: Route | None = None) -> TokenModel:
    """The token estimate of a request to ``model`` from a file of format ``fmt``: framing by
    the model's family and the API (one object per combination; ``route`` changes nothing
    OpenAI bills)."""
    if route is not None:
        return token_model(model, fmt)
    return TokenModel(
        message_estimate(model, fmt),
        frozenset(CALIBRATED_FORMATS) & FORMATS,
        TOKENS_BASIS,
        system=partial(estimate_system, model=model),
        tools=partial(estimate_tools, model=model, responses=fmt in (RESPONSES, CODEX)),
        params=partial(estimate_params, model=model),
        carry=reasoning_carry,
        unmeasured=unmeasured,
        select=token_model,
        # o200k_base counts a rollout's text exactly: its usage fits only the unrecorded tools
        counts_own=True,
    )


PROVIDER = Provider(
    name="openai",
    label="OpenAI",
    rules=CHAT_RULES,
    # a model's or format's framing comes from ``tokens.of(model, fmt)``; unnamed, a message
    # is framed as a reasoning model frames it
    tokens=dataclasses.replace(token_model(None), estimate=estimate_message),
    cache=CACHE,
    prices=PRICE_BOOK,
    usage=usage,
    write_body=write_body,
    formats=FORMATS,
    select_rules=rules_for,
    wire_starts=wire_starts,
    request_notes=request_notes,
)
