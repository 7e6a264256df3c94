"""Compare two Messages API requests: message by message, block by block, and where their
prompt-cache prefixes part.

The API caches a request's prefix in the order ``tools`` → ``system`` → ``messages``: the first
difference in that order is where a second request stops reusing the first one's cache, and
everything after it is written again.

Headless: no Textual, no SDK.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import Any

from ctxview.core.body import request_body as body_of
from ctxview.core.tokens import estimate_message, estimate_system, estimate_tools

#: Request fields compared as whole values (everything but tools, system and messages).
_OWN = ("tools", "system", "messages")


def _canon(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def _blocks(message: Mapping[str, Any]) -> list[Any]:
    content = message.get("content")
    if isinstance(content, list):
        return content
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return []


def _system_blocks(system: Any) -> list[Any]:
    if isinstance(system, list):
        return system
    if isinstance(system, str) and system:
        return [{"type": "text", "text": system}]
    return []


def _system_text(system: Any) -> str:
    """A system prompt as the text its first differing character is counted in: its text (the
    text blocks joined by blank lines), or its JSON when a block is not plain text."""
    if system is None:
        return ""
    if isinstance(system, str):
        return system
    blocks = _system_blocks(system)
    if all(_btype(b) == "text" and isinstance(b.get("text"), str) for b in blocks) and all(
        set(b) <= {"type", "text"} for b in blocks
    ):
        return "\n\n".join(str(b["text"]) for b in blocks)
    return _canon(system)


def block_text(block: Any) -> str:
    """The text a block's first differing character is counted in: a text block's text, a
    thinking block's thinking, a tool_result's content (as text when it is text), else its JSON."""
    if isinstance(block, Mapping):
        t = block.get("type")
        if t == "text" and isinstance(block.get("text"), str):
            return str(block["text"])
        if t == "thinking" and isinstance(block.get("thinking"), str):
            return str(block["thinking"])
        if t == "tool_result" and isinstance(block.get("content"), str):
            return str(block["content"])
    return _canon(block)


def first_difference(a: str, b: str) -> int:
    """Index of the first character where ``a`` and ``b`` differ (the shorter's length when one
    is a prefix of the other)."""
    n = min(len(a), len(b))
    for i in range(n):
        if a[i] != b[i]:
            return i
    return n


def _snippet(text: str, at: int, width: int = 40) -> str:
    start = max(0, at - 10)
    s = text[start : start + width]
    return ("…" if start else "") + s + ("…" if start + width < len(text) else "")


def _btype(block: Any) -> str:
    t = block.get("type") if isinstance(block, Mapping) else None
    return str(t) if t is not None else "?"


@dataclass
class BlockChange:
    op: str  # "added" | "removed" | "changed"
    a_block: int | None
    b_block: int | None
    type: str
    #: changed: the first differing character of the block's text, and the text around it
    at: int | None = None
    a: str | None = None
    b: str | None = None

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "op": self.op,
            "a_block": self.a_block,
            "b_block": self.b_block,
            "type": self.type,
        }
        if self.op == "changed":
            d.update(at=self.at, a=self.a, b=self.b)
        return d


@dataclass
class MessageChange:
    op: str  # "added" | "removed" | "changed"
    a_index: int | None
    b_index: int | None
    role: str
    blocks: list[BlockChange] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "op": self.op,
            "a_index": self.a_index,
            "b_index": self.b_index,
            "role": self.role,
        }
        if self.op == "changed":
            d["blocks"] = [b.to_dict() for b in self.blocks]
        return d


@dataclass
class CachePart:
    """Where the prompt-cache prefixes of two requests part (None: they never do)."""

    section: str  # "tools" | "system" | "messages"
    index: int
    block: int | None
    #: estimated tokens of the prefix both share (tools, system, messages before the point)
    shared_tokens: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "section": self.section,
            "index": self.index,
            "block": self.block,
            "shared_tokens": self.shared_tokens,
        }

    def describe(self) -> str:
        where = f"{self.section}[{self.index}]"
        if self.block is not None:
            where += f".content[{self.block}]"
        return where


@dataclass
class RequestDiff:
    fields: list[dict[str, Any]]
    tools: dict[str, list[Any]]
    system: dict[str, Any] | None
    messages: list[MessageChange]
    cache: CachePart | None
    #: True when nothing differs (no field, tool, system or message)
    identical: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "identical": self.identical,
            "fields": self.fields,
            "tools": self.tools,
            "system": self.system,
            "messages": [m.to_dict() for m in self.messages],
            "cache_prefix": self.cache.to_dict() if self.cache else None,
        }


def _changed(a: Any, b: Any, a_i: int | None, b_i: int | None) -> BlockChange:
    ta, tb = block_text(a), block_text(b)
    at = first_difference(ta, tb)
    return BlockChange("changed", a_i, b_i, _btype(b), at, _snippet(ta, at), _snippet(tb, at))


#: Above this many (A × B) elements, a stretch with no unique anchor is not aligned by difflib
#: (quadratic on repeated elements): its elements are paired by position.
ALIGN_LIMIT = 4_000_000


def _lis(pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The longest run of pairs increasing in both coordinates (pairs sorted by the first)."""
    tails: list[int] = []  # tails[k] = index in pairs of the smallest tail of a run of k+1
    back: list[int] = [-1] * len(pairs)
    for n, (_, j) in enumerate(pairs):
        k = _bisect(pairs, tails, j)
        if k > 0:
            back[n] = tails[k - 1]
        if k == len(tails):
            tails.append(n)
        else:
            tails[k] = n
    out: list[tuple[int, int]] = []
    n = tails[-1] if tails else -1
    while n >= 0:
        out.append(pairs[n])
        n = back[n]
    return out[::-1]


def _bisect(pairs: list[tuple[int, int]], tails: list[int], j: int) -> int:
    lo, hi = 0, len(tails)
    while lo < hi:
        mid = (lo + hi) // 2
        if pairs[tails[mid]][1] < j:
            lo = mid + 1
        else:
            hi = mid
    return lo


def _matches(ka: list[str], kb: list[str]) -> list[tuple[int, int]]:
    """Matched positions of two sequences (a patience diff): the common prefix and suffix, then
    elements unique in both stretches as anchors (their longest increasing run), recursively
    between anchors; a stretch without anchors goes to difflib when small enough. O(n log n) for
    windows that differ by evictions, appends and edits."""
    out: list[tuple[int, int]] = []
    stack = [(0, len(ka), 0, len(kb))]
    while stack:
        a0, a1, b0, b1 = stack.pop()
        while a0 < a1 and b0 < b1 and ka[a0] == kb[b0]:
            out.append((a0, b0))
            a0 += 1
            b0 += 1
        while a0 < a1 and b0 < b1 and ka[a1 - 1] == kb[b1 - 1]:
            a1 -= 1
            b1 -= 1
            out.append((a1, b1))
        if a0 >= a1 or b0 >= b1:
            continue
        count_a: dict[str, int] = {}
        for i in range(a0, a1):
            count_a[ka[i]] = count_a.get(ka[i], 0) + 1
        count_b: dict[str, int] = {}
        pos_b: dict[str, int] = {}
        for j in range(b0, b1):
            count_b[kb[j]] = count_b.get(kb[j], 0) + 1
            pos_b[kb[j]] = j
        pairs = [
            (i, pos_b[ka[i]])
            for i in range(a0, a1)
            if count_a[ka[i]] == 1 and count_b.get(ka[i]) == 1
        ]
        anchors = _lis(pairs)
        if anchors:
            prev_a, prev_b = a0, b0
            for i, j in anchors:
                out.append((i, j))
                stack.append((prev_a, i, prev_b, j))
                prev_a, prev_b = i + 1, j + 1
            stack.append((prev_a, a1, prev_b, b1))
        elif (a1 - a0) * (b1 - b0) <= ALIGN_LIMIT:
            sm = SequenceMatcher(None, ka[a0:a1], kb[b0:b1], autojunk=False)
            for x, y, size in sm.get_matching_blocks():
                out.extend((a0 + x + k, b0 + y + k) for k in range(size))
    out.sort()
    return out


def _opcodes(ka: list[str], kb: list[str]) -> list[tuple[str, int, int, int, int]]:
    """difflib-style opcodes (equal, replace, delete, insert) from :func:`_matches`."""
    ops: list[tuple[str, int, int, int, int]] = []
    i = j = 0
    for mi, mj in [*_matches(ka, kb), (len(ka), len(kb))]:
        if i < mi and j < mj:
            ops.append(("replace", i, mi, j, mj))
        elif i < mi:
            ops.append(("delete", i, mi, j, j))
        elif j < mj:
            ops.append(("insert", i, i, j, mj))
        if mi < len(ka) and mj < len(kb):
            if ops and ops[-1][0] == "equal" and ops[-1][2] == mi and ops[-1][4] == mj:
                _, e1, _, f1, _ = ops[-1]
                ops[-1] = ("equal", e1, mi + 1, f1, mj + 1)
            else:
                ops.append(("equal", mi, mi + 1, mj, mj + 1))
        i, j = mi + 1, mj + 1
    return ops


def diff_blocks(a: Sequence[Any], b: Sequence[Any]) -> list[BlockChange]:
    ka, kb = [_canon(x) for x in a], [_canon(x) for x in b]
    out: list[BlockChange] = []
    for op, i1, i2, j1, j2 in _opcodes(ka, kb):
        if op == "equal":
            continue
        pairs = min(i2 - i1, j2 - j1) if op == "replace" else 0
        for k in range(pairs):
            out.append(_changed(a[i1 + k], b[j1 + k], i1 + k, j1 + k))
        for i in range(i1 + pairs, i2):
            out.append(BlockChange("removed", i, None, _btype(a[i])))
        for j in range(j1 + pairs, j2):
            out.append(BlockChange("added", None, j, _btype(b[j])))
    return out


def diff_messages(
    a: Sequence[Mapping[str, Any]],
    b: Sequence[Mapping[str, Any]],
    keys: tuple[list[str], list[str]] | None = None,
) -> list[MessageChange]:
    ka, kb = keys if keys is not None else ([_canon(m) for m in a], [_canon(m) for m in b])
    out: list[MessageChange] = []
    for op, i1, i2, j1, j2 in _opcodes(ka, kb):
        if op == "equal":
            continue
        i, j = i1, j1
        while i < i2 and j < j2:
            # a replaced pair of the same role is a changed message; else removed + added
            if a[i].get("role") == b[j].get("role"):
                blocks = diff_blocks(_blocks(a[i]), _blocks(b[j]))
                if not blocks:  # the same blocks, another key (cache_control on the message...)
                    blocks = [_changed(a[i], b[j], None, None)]
                out.append(MessageChange("changed", i, j, str(b[j].get("role")), blocks))
                i += 1
                j += 1
            elif i2 - i > j2 - j:
                out.append(MessageChange("removed", i, None, str(a[i].get("role"))))
                i += 1
            else:
                out.append(MessageChange("added", None, j, str(b[j].get("role"))))
                j += 1
        out.extend(MessageChange("removed", k, None, str(a[k].get("role"))) for k in range(i, i2))
        out.extend(MessageChange("added", None, k, str(b[k].get("role"))) for k in range(j, j2))
    return out


def _tool_name(tool: Any, k: int) -> str:
    name = tool.get("name") if isinstance(tool, Mapping) else None
    return str(name) if name is not None else f"#{k}"


def cache_part(
    a: Mapping[str, Any],
    b: Mapping[str, Any],
    keys: tuple[list[str], list[str]] | None = None,
) -> CachePart | None:
    """The first position, in tools → system → messages order, where the two requests differ."""
    tools_a, tools_b = a.get("tools") or [], b.get("tools") or []
    shared = 0
    for k in range(max(len(tools_a), len(tools_b))):
        if k >= len(tools_a) or k >= len(tools_b) or _canon(tools_a[k]) != _canon(tools_b[k]):
            return CachePart("tools", k, None, estimate_tools(tools_a[:k]))
    shared = estimate_tools(tools_a)
    sys_a, sys_b = _system_blocks(a.get("system")), _system_blocks(b.get("system"))
    for k in range(max(len(sys_a), len(sys_b))):
        if k >= len(sys_a) or k >= len(sys_b) or _canon(sys_a[k]) != _canon(sys_b[k]):
            return CachePart("system", k, None, shared + estimate_system(sys_a[:k]))
    shared += estimate_system(sys_a)
    msgs_a, msgs_b = a.get("messages") or [], b.get("messages") or []
    ka, kb = (
        keys if keys is not None else ([_canon(m) for m in msgs_a], [_canon(m) for m in msgs_b])
    )
    for k in range(max(len(msgs_a), len(msgs_b))):
        if k >= len(msgs_a) or k >= len(msgs_b):
            return CachePart("messages", k, None, shared)
        if ka[k] != kb[k]:
            ba, bb = _blocks(msgs_a[k]), _blocks(msgs_b[k])
            j = next(
                (j for j in range(min(len(ba), len(bb))) if _canon(ba[j]) != _canon(bb[j])),
                min(len(ba), len(bb)),
            )
            return CachePart("messages", k, j, shared)
        shared += estimate_message(msgs_a[k])
    return None


def diff_requests(a: Mapping[str, Any], b: Mapping[str, Any]) -> RequestDiff:
    fields = [
        {"key": k, "a": a.get(k), "b": b.get(k)}
        for k in sorted(set(a) | set(b), key=str)
        if k not in _OWN and _canon(a.get(k)) != _canon(b.get(k))
    ]
    tools_a, tools_b = a.get("tools") or [], b.get("tools") or []
    by_a = {_tool_name(t, k): t for k, t in enumerate(tools_a)}
    by_b = {_tool_name(t, k): t for k, t in enumerate(tools_b)}
    tools: dict[str, list[Any]] = {
        "added": [n for n in by_b if n not in by_a],
        "removed": [n for n in by_a if n not in by_b],
        "changed": [],
    }
    for n, t in by_a.items():
        if n in by_b and _canon(t) != _canon(by_b[n]):
            ta, tb = _canon(t), _canon(by_b[n])
            at = first_difference(ta, tb)
            tools["changed"].append(
                {"name": n, "at": at, "a": _snippet(ta, at), "b": _snippet(tb, at)}
            )
    system: dict[str, Any] | None = None
    sa, sb = a.get("system"), b.get("system")
    if _canon(sa) != _canon(sb):
        ta, tb = _system_text(sa), _system_text(sb)
        at = first_difference(ta, tb)
        system = {"at": at, "a": _snippet(ta, at), "b": _snippet(tb, at)}
    msgs_a, msgs_b = a.get("messages") or [], b.get("messages") or []
    keys = ([_canon(m) for m in msgs_a], [_canon(m) for m in msgs_b])
    messages = diff_messages(msgs_a, msgs_b, keys)
    cache = cache_part(a, b, keys)
    identical = not fields and cache is None
    return RequestDiff(fields, tools, system, messages, cache, identical)


def request_body(session: Any, log: Any, index: int, window: Sequence[int]) -> dict[str, Any]:
    """The request ``index`` of a :class:`~ctxview.core.requests.RequestLog` as a body: the
    messages of ``window`` (transcript ids), and the model, system and tools it was sent with
    (its response's meta where the file recorded them per request, else the session's)."""
    r = log.requests[index]
    meta = session.metas[r.response_id] if r.response_id is not None else {}
    return body_of(
        model=r.model or session.model,
        system=meta.get("system", session.system),
        tools=meta.get("tools", session.tools),
        messages=[session.messages[t] for t in window],
    )


def diff_logged_requests(session: Any, log: Any, a: int, b: int) -> RequestDiff:
    """Request ``a`` against request ``b`` of ``log`` (a RequestLog of ``session``), as
    ``ctxview diff`` compares two bodies. A request does not keep its window: the windows the log
    did not keep are rebuilt by simulating the session again with ``keep_windows``."""
    from ctxview.core.requests import simulate

    n = len(log.requests)
    for i in (a, b):
        if not 0 <= i < n:
            raise IndexError(f"no request #{i} (the log has {n})")
    windows = dict(log.windows)
    missing = [i for i in (a, b) if i not in windows]
    if missing:
        # the replay is causal: the session up to the later request's response gives the same
        # windows, and the repeated-content count is not needed for them
        resp = log.requests[max(missing)].response_id
        part = session
        if resp is not None and resp + 1 < len(session.messages):
            part = copy.copy(session)
            part.messages = session.messages[: resp + 1]
            part.metas = session.metas[: resp + 1]
        again = simulate(part, keep_windows=missing, redundancy=False, **log.settings)
        windows.update(again.windows)
    body_a = request_body(session, log, a, windows[a])
    out = diff_requests(body_a, request_body(session, log, b, windows[b]))
    part = out.cache
    if part is not None and part.section == "messages":
        # priced as the log prices its requests (calibrated rates, and the tools + system a
        # Claude Code transcript does not hold), so the shared prefix matches the view's input
        from ctxview.core.calibrate import message_features

        msgs = body_a.get("messages") or []
        part.shared_tokens = log.static_tokens + sum(
            log.rates.tokens(message_features(m)) for m in msgs[: part.index]
        )
    return out
