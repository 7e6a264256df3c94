"""Anthropic's context editing (``context_management.edits``), modelled offline.

The API's server-side edits (beta ``context-management-2025-06-27``, see docs/context-editing.md
for the sources) never remove a message: they send an edited copy of the conversation.

* ``clear_tool_uses_20250919``: once the prompt exceeds ``trigger`` (input tokens, or a number of
  tool uses), the results of the oldest tool uses are replaced by :data:`PLACEHOLDER`, all but the
  ``keep`` most recent tool uses; uses of ``exclude_tools`` are never cleared;
  ``clear_tool_inputs`` (true, or a list of tool names) also clears the tool_use's ``input``;
  nothing is cleared unless at least ``clear_at_least`` input tokens can be.
* ``clear_thinking_20251015``: the thinking blocks of all but the ``keep`` most recent assistant
  turns holding thinking are dropped (``keep = "all"``: none).

The model here is the API's as documented: each request is edited afresh from the full history
(the client keeps the originals). Two rules of ctxview's own keep the sent form valid whenever the
original is: the pinned first message and the newest message are never changed, and an
assistant message made only of thinking blocks keeps them (it would be empty otherwise).

:class:`SentForm` computes the edits incrementally: appending messages costs amortised O(new
blocks), so a 100,000-message replay stays linear; any other change of the window rebuilds it.
"""

from __future__ import annotations

import gc
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

# the strategy -> edit names live with the strategies (a context with a plain strategy needs
# them, not this module); re-exported for the modules that apply the edits
from ctxview.core.strategies import STRATEGY_EDITS as STRATEGY_EDITS
from ctxview.core.strategies import THINKING_EDIT as THINKING_EDIT
from ctxview.core.strategies import TOOL_USES_EDIT as TOOL_USES_EDIT
from ctxview.core.tokens import block_tokens

Entry = tuple[int, dict[str, Any]]

#: what a cleared tool_result's content becomes. The API's docs say only that cleared results are
#: replaced "with placeholder text to let Claude know the tool result was removed"; this is
#: ctxview's stand-in (a few tokens, as the API's).
PLACEHOLDER = "[cleared by context editing]"
BETA = "context-management-2025-06-27"

_PLACEHOLDER_TOKENS = block_tokens({"type": "tool_result", "content": PLACEHOLDER})
_THINKING = ("thinking", "redacted_thinking")


@dataclass(frozen=True, slots=True)
class ClearToolUses:
    trigger_type: str = "input_tokens"  #: or "tool_uses"
    trigger: int = 100_000
    keep: int = 3
    clear_at_least: int = 0
    exclude_tools: tuple[str, ...] = ()
    #: True: every cleared use's input too; a tuple: only those tools' inputs
    clear_tool_inputs: bool | tuple[str, ...] = False

    def clears_input(self, name: Any) -> bool:
        c = self.clear_tool_inputs
        return c if isinstance(c, bool) else name in c

    def to_api(self) -> dict[str, Any]:
        edit: dict[str, Any] = {
            "type": TOOL_USES_EDIT,
            "trigger": {"type": self.trigger_type, "value": self.trigger},
            "keep": {"type": "tool_uses", "value": self.keep},
        }
        if self.clear_at_least:
            edit["clear_at_least"] = {"type": "input_tokens", "value": self.clear_at_least}
        if self.exclude_tools:
            edit["exclude_tools"] = list(self.exclude_tools)
        c = self.clear_tool_inputs
        if c:
            edit["clear_tool_inputs"] = c if isinstance(c, bool) else list(c)
        return edit


@dataclass(frozen=True, slots=True)
class ClearThinking:
    keep: int | None = 1  #: None: "all"

    def to_api(self) -> dict[str, Any]:
        keep: Any = "all" if self.keep is None else {"type": "thinking_turns", "value": self.keep}
        return {"type": THINKING_EDIT, "keep": keep}


@dataclass(frozen=True, slots=True)
class ContextEditing:
    """The parameters of both edits, and whether the chat sends them to the API (``server_side``)
    instead of sending the edited messages."""

    clear_tool_uses: ClearToolUses = field(default_factory=ClearToolUses)
    clear_thinking: ClearThinking = field(default_factory=ClearThinking)
    server_side: bool = False

    def context_management(self, strategy: str) -> dict[str, Any] | None:
        """The request's ``context_management`` block for ``strategy`` (None: not an editing
        strategy)."""
        edit = STRATEGY_EDITS.get(strategy)
        if edit == TOOL_USES_EDIT:
            return {"edits": [self.clear_tool_uses.to_api()]}
        if edit == THINKING_EDIT:
            return {"edits": [self.clear_thinking.to_api()]}
        return None

    def to_dict(self) -> dict[str, Any]:
        """The config / session form (``parse_context_editing`` reads it back)."""
        tu = self.clear_tool_uses.to_api()
        th = self.clear_thinking.to_api()
        del tu["type"], th["type"]
        tu.setdefault("clear_at_least", {"type": "input_tokens", "value": 0})
        tu.setdefault("exclude_tools", [])
        tu.setdefault("clear_tool_inputs", False)
        return {"server_side": self.server_side, "clear_tool_uses": tu, "clear_thinking": th}


DEFAULT_EDITING = ContextEditing()


def _int(value: Any, where: str, lo: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < lo:
        raise ValueError(f"{where}: expected an integer >= {lo}, got {_quote(value)}")
    return value


def _quote(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:59] + "…"


def _typed(value: Any, where: str, kinds: tuple[str, ...], lo: int) -> tuple[str, int]:
    """``{"type": kind, "value": n}`` or a bare integer (the first kind)."""
    if isinstance(value, Mapping):
        unknown = set(value) - {"type", "value"}
        if unknown:
            raise ValueError(f"{where}: unknown key {_quote(sorted(unknown)[0])}")
        kind = value.get("type", kinds[0])
        if kind not in kinds:
            raise ValueError(
                f"{where}.type: expected one of {', '.join(kinds)}, got {_quote(kind)}"
            )
        return str(kind), _int(value.get("value"), f"{where}.value", lo)
    if isinstance(value, int) and not isinstance(value, bool):
        return kinds[0], _int(value, where, lo)
    raise ValueError(
        f"{where}: expected an integer or {{type: {kinds[0]!r}, value: N}}, got {_quote(value)}"
    )


def _names(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ValueError(f"{where}: expected a list of tool names, got {_quote(value)}")
    return tuple(value)


def parse_context_editing(value: Any, where: str = "context_editing") -> ContextEditing:
    """``ContextEditing`` from its config / session form; ValueError naming the key otherwise.

    Every part is optional (the API's defaults: trigger 100,000 input tokens, keep 3 tool uses,
    keep 1 thinking turn). ``trigger``, ``keep`` and ``clear_at_least`` take the API's
    ``{type, value}`` objects or a bare integer.
    """
    if value is None:
        return DEFAULT_EDITING
    if not isinstance(value, Mapping):
        raise ValueError(f"{where}: expected a table, got {_quote(value)}")
    for key in value:
        if key not in ("server_side", "clear_tool_uses", "clear_thinking"):
            raise ValueError(
                f"{where}.{str(key)[:40]}: unknown key (known: server_side, clear_tool_uses, "
                "clear_thinking)"
            )
    server = value.get("server_side", False)
    if not isinstance(server, bool):
        raise ValueError(f"{where}.server_side: expected true or false, got {_quote(server)}")
    tu_raw = value.get("clear_tool_uses", {})
    w = f"{where}.clear_tool_uses"
    if not isinstance(tu_raw, Mapping):
        raise ValueError(f"{w}: expected a table, got {_quote(tu_raw)}")
    known = ("trigger", "keep", "clear_at_least", "exclude_tools", "clear_tool_inputs", "type")
    for key in tu_raw:
        if key not in known:
            raise ValueError(f"{w}.{str(key)[:40]}: unknown key (known: {', '.join(known[:5])})")
    d = ClearToolUses()
    ttype, trig = d.trigger_type, d.trigger
    if "trigger" in tu_raw:
        ttype, trig = _typed(tu_raw["trigger"], f"{w}.trigger", ("input_tokens", "tool_uses"), 1)
    keep = d.keep
    if "keep" in tu_raw:
        keep = _typed(tu_raw["keep"], f"{w}.keep", ("tool_uses",), 0)[1]
    least = 0
    if tu_raw.get("clear_at_least") is not None:
        least = _typed(tu_raw["clear_at_least"], f"{w}.clear_at_least", ("input_tokens",), 0)[1]
    exclude = _names(tu_raw.get("exclude_tools", []), f"{w}.exclude_tools")
    cti = tu_raw.get("clear_tool_inputs", False)
    inputs: bool | tuple[str, ...] = (
        cti if isinstance(cti, bool) else _names(cti, f"{w}.clear_tool_inputs")
    )
    th_raw = value.get("clear_thinking", {})
    w2 = f"{where}.clear_thinking"
    if not isinstance(th_raw, Mapping):
        raise ValueError(f"{w2}: expected a table, got {_quote(th_raw)}")
    for key in th_raw:
        if key not in ("keep", "type"):
            raise ValueError(f"{w2}.{str(key)[:40]}: unknown key (known: keep)")
    tkeep: int | None = 1
    if "keep" in th_raw:
        raw = th_raw["keep"]
        if raw == "all" or (isinstance(raw, Mapping) and raw.get("type") == "all"):
            tkeep = None
        else:
            tkeep = _typed(raw, f"{w2}.keep", ("thinking_turns",), 1)[1]
    return ContextEditing(
        ClearToolUses(ttype, trig, keep, least, exclude, inputs), ClearThinking(tkeep), server
    )


# -- the sent form -------------------------------------------------------------------------------
@dataclass(slots=True)
class _Use:
    name: Any
    use_mid: int
    use_block: int
    result_mid: int | None = None
    result_block: int = -1
    savings: int = 0  #: estimated tokens clearing it saves
    cleared: bool = False
    pending: bool = False


class SentForm:
    """The edited copies of a window's messages under one editing strategy.

    ``edited`` maps a message id to the message as sent, for the messages that differ; ``changes``
    logs the ids whose sent version changed, in order (``generation`` changes when the log starts
    again), so a reader can follow it incrementally. ``cleared_tokens`` is the estimated tokens
    saved; ``cleared_units`` the tool uses (or thinking turns) cleared.
    """

    def __init__(self, strategy: str, settings: ContextEditing) -> None:
        if strategy not in STRATEGY_EDITS:
            raise ValueError(f"not an editing strategy: {strategy!r}")
        self.strategy = strategy
        self.settings = settings
        self.generation = 0
        self._reset()

    def _reset(self) -> None:
        self.generation += 1
        self.edited: dict[int, dict[str, Any]] = {}
        self.changes: list[int] = []
        self.cleared_tokens = 0
        self.cleared_units = 0
        self._delta: dict[int, int] = {}
        self._orig: dict[int, dict[str, Any]] = {}
        self._n = 0
        self._last: int | None = None
        self._first: int | None = None
        #: blocks cleared per message id, and those waiting for their message to stop being the
        #: newest (or the pinned first) before they are
        self._cleared_blocks: dict[int, set[int]] = {}
        self._deferred: dict[int, set[int]] = {}
        # tool uses
        self._uses: list[_Use] = []
        self._by_tool: dict[str, _Use] = {}
        #: estimated tokens of the tool_result blocks taken, by (message id, block)
        self._result_tokens: dict[tuple[int, int], int] = {}
        self._next = 0
        self._pending: list[_Use] = []
        self._pending_savings = 0
        self._cleared_savings = 0
        # thinking: turns (lists of ids holding thinking), the indices of those with thinking
        self._turns: list[list[int]] = []
        self._thinking_turns: list[int] = []
        self._turn_open = False
        self._tnext = 0  #: thinking turns [0, _tnext) are cleared

    # -- following the window ----------------------------------------------------------------
    def update(self, first: Entry | None, tail: deque[Entry], prompt_tokens: int) -> None:
        """Bring the edits up to date with the window (its pinned ``first`` entry and its
        ``tail``, oldest first) and the original prompt's estimated size (the ``input_tokens``
        trigger). Appends cost O(what was appended); any other change rebuilds."""
        n = len(tail) + (first is not None)
        if n == 0:
            if self._n:
                self._restart()
            return
        first_id = first[0] if first is not None else tail[0][0]
        last = tail[-1][0] if tail else first_id
        if n == self._n and last == self._last and first_id == self._first:
            self._decide(prompt_tokens)
            return
        off = 1 if first is not None else 0
        appended = (
            self._n > 0
            and n > self._n
            and first_id == self._first
            and (tail[self._n - 1 - off][0] if self._n - 1 >= off else first_id) == self._last
        )
        if not appended:
            self._restart()
        if self._n == 0:
            # a whole window at once: no cyclic GC meanwhile (each collection would walk the whole
            # heap of a big session; nothing built here is a cycle)
            was_enabled = gc.isenabled()
            gc.disable()
            try:
                if first is not None:
                    self._take(*first)
                for entry in tail:
                    self._take(*entry)
                self._n, self._last, self._first = n, last, first_id
                self._decide(prompt_tokens)
            finally:
                if was_enabled:
                    gc.enable()
            return
        else:  # the new entries are the newest of the tail (a deque: walk it from the right end)
            new = list(islice(reversed(tail), n - self._n))
            for entry in reversed(new):
                self._take(*entry)
        self._n, self._last, self._first = n, last, first_id
        self._decide(prompt_tokens)

    def follow(
        self, messages: Sequence[dict[str, Any]], offset: int, n: int, prompt_tokens: int
    ) -> None:
        """:meth:`update` for the window ``messages[offset:offset + n]`` with ids ``0 .. n-1``,
        the first one pinned: a window that only grows (an editing strategy evicts nothing), so
        no entries are built. The same steps and results as :meth:`update` on that window."""
        if n == 0:
            if self._n:
                self._restart()
            return
        last = n - 1
        if n == self._n and last == self._last and self._first == 0:
            self._decide(prompt_tokens)
            return
        if not (self._n > 0 and n > self._n and self._first == 0 and self._last == self._n - 1):
            self._restart()
        if self.strategy == "clear-tool-uses":  # _take, without a call per message
            take_tools = self._take_tools
            for k in range(self._n, n):
                m = messages[offset + k]
                content = m.get("content")
                if isinstance(content, list):
                    take_tools(k, m, content)
        else:
            take = self._take
            for k in range(self._n, n):
                take(k, messages[offset + k])
        self._n, self._last, self._first = n, last, 0
        self._decide(prompt_tokens)

    def _restart(self) -> None:
        changed = list(self.edited)
        self._reset()
        self.changes.extend(changed)  # the readers' old edits are gone

    def _take(self, mid: int, message: dict[str, Any]) -> None:
        content = message.get("content")
        if self.strategy == "clear-tool-uses":  # (turns matter to the thinking edit only)
            if isinstance(content, list):
                self._take_tools(mid, message, content)
            return
        role = message.get("role")
        if role == "user" and not (
            isinstance(content, list)
            and any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content)
        ):
            self._turn_open = False  # a person's message: the next assistant turn is new
        if not isinstance(content, list):
            return
        if role == "assistant":
            if not self._turn_open:
                self._turns.append([])
                self._turn_open = True
            blocks = {
                k
                for k, b in enumerate(content)
                if isinstance(b, dict) and b.get("type") in _THINKING
            }
            if blocks:
                self._orig[mid] = message
                turn = self._turns[-1]
                if not turn:
                    self._thinking_turns.append(len(self._turns) - 1)
                turn.append(mid)
                if len(self._thinking_turns) - 1 < self._tnext:  # a cleared turn (keep 0)
                    self._deferred[mid] = blocks

    def _take_tools(self, mid: int, message: dict[str, Any], content: list[Any]) -> None:
        s = self.settings.clear_tool_uses
        role = message.get("role")
        if role == "assistant":
            inputs = s.clear_tool_inputs is not False
            for k, b in enumerate(content):
                if type(b) is dict or isinstance(b, dict):
                    tid = b.get("id")
                    if b.get("type") == "tool_use" and isinstance(tid, str):
                        self._orig[mid] = message
                        u = _Use(b.get("name"), mid, k)
                        if inputs and s.clears_input(u.name):
                            u.savings += max(0, block_tokens(b) - block_tokens({**b, "input": {}}))
                        self._uses.append(u)
                        self._by_tool[tid] = u
            return
        if role != "user":
            return
        for k, b in enumerate(content):
            if not isinstance(b, dict):
                continue
            if b.get("type") == "tool_result":
                u2 = self._by_tool.get(str(b.get("tool_use_id")))
                if u2 is None or u2.result_mid is not None:
                    continue
                self._orig[mid] = message
                u2.result_mid, u2.result_block = mid, k
                tokens = block_tokens(b)
                self._result_tokens[mid, k] = tokens
                saved = max(0, tokens - _PLACEHOLDER_TOKENS)
                u2.savings += saved
                if u2.cleared:  # the result of a use cleared before it came
                    self._cleared_savings += saved
                    self._deferred.setdefault(mid, set()).add(k)
                elif u2.pending:
                    self._pending_savings += saved

    # -- deciding ----------------------------------------------------------------------------
    def _decide(self, prompt_tokens: int) -> None:
        if self.strategy == "clear-tool-uses":
            self._decide_tools(prompt_tokens)
        else:
            self._decide_thinking()
        if self._deferred:
            for mid in sorted(self._deferred):
                if mid in (self._last, self._first):
                    continue  # never change the pinned or the newest message
                self._cleared_blocks.setdefault(mid, set()).update(self._deferred.pop(mid))
                self._render(mid)

    def _decide_tools(self, prompt_tokens: int) -> None:
        s = self.settings.clear_tool_uses
        limit = len(self._uses) - s.keep
        uses = self._uses
        while self._next < limit:
            u = uses[self._next]
            self._next += 1
            if u.name in s.exclude_tools:
                continue
            u.pending = True
            self._pending.append(u)
            self._pending_savings += u.savings
        if s.trigger_type == "tool_uses":
            triggered = len(uses) > s.trigger
        else:
            triggered = prompt_tokens > s.trigger
        if not triggered:
            if self.cleared_units:
                self._unclear_all()
            return
        if self._pending and self._cleared_savings + self._pending_savings >= s.clear_at_least:
            for u in self._pending:
                u.cleared, u.pending = True, False
                self.cleared_units += 1
                if u.result_mid is not None:
                    self._deferred.setdefault(u.result_mid, set()).add(u.result_block)
                if s.clears_input(u.name):
                    self._deferred.setdefault(u.use_mid, set()).add(u.use_block)
            self._cleared_savings += self._pending_savings
            self._pending, self._pending_savings = [], 0

    def _unclear_all(self) -> None:
        for u in self._uses[: self._next]:
            if u.cleared:
                u.cleared, u.pending = False, True
                self._pending.append(u)
                self._pending_savings += u.savings
        self._pending.sort(key=lambda u: (u.use_mid, u.use_block))
        self._cleared_savings = 0
        self.cleared_units = 0
        self._cleared_blocks.clear()
        self._deferred.clear()
        for mid in sorted(self.edited):
            self._set(mid, None)

    def _render(self, mid: int) -> None:
        orig = self._orig.get(mid)
        blocks = self._cleared_blocks.get(mid)
        if orig is None or not blocks:
            return
        content = list(orig["content"])
        delta = 0  # the estimated tokens the edit saves (block by block, as estimate_message)
        for k in blocks:
            b = content[k]
            t = b.get("type")
            if t == "tool_result":
                content[k] = {**b, "content": PLACEHOLDER}
                found = self._result_tokens.get((mid, k))
                delta += (block_tokens(b) if found is None else found) - _PLACEHOLDER_TOKENS
            elif t == "tool_use":
                content[k] = {**b, "input": {}}
                delta += block_tokens(b) - block_tokens(content[k])
            else:
                delta += block_tokens(b)
        if self.strategy == "clear-thinking":
            content = [b for k, b in enumerate(content) if k not in blocks]
            if not content:  # a message of thinking only keeps it (it would be empty)
                return
        self._set(mid, {**orig, "content": content}, delta)

    def _set(self, mid: int, message: dict[str, Any] | None, delta: int = 0) -> None:
        old = self._delta.pop(mid, 0)
        self.cleared_tokens -= old
        if message is None:
            if self.edited.pop(mid, None) is not None:
                self.changes.append(mid)
            return
        self.edited[mid] = message
        self._delta[mid] = delta
        self.cleared_tokens += delta
        self.changes.append(mid)

    def _decide_thinking(self) -> None:
        keep = self.settings.clear_thinking.keep
        if keep is None:
            return
        limit = len(self._thinking_turns) - keep
        while self._tnext < limit:
            turn = self._turns[self._thinking_turns[self._tnext]]
            self._tnext += 1
            self.cleared_units += 1
            for mid in turn:
                content = self._orig[mid]["content"]
                self._deferred[mid] = {
                    k
                    for k, b in enumerate(content)
                    if isinstance(b, dict) and b.get("type") in _THINKING
                }

    # -- reading -------------------------------------------------------------------------------
    def sent(self, mid: int, message: dict[str, Any]) -> dict[str, Any]:
        return self.edited.get(mid, message)

    def original(self, mid: int) -> dict[str, Any] | None:
        """The original of an edited message (None when it is sent as it is)."""
        return self._orig.get(mid) if mid in self.edited else None

    def applied_edits(self) -> list[dict[str, Any]]:
        """What the API's response reports (``context_management.applied_edits``), estimated."""
        if not self.cleared_units:
            return []
        edit = STRATEGY_EDITS[self.strategy]
        unit = "cleared_tool_uses" if edit == TOOL_USES_EDIT else "cleared_thinking_turns"
        return [
            {"type": edit, unit: self.cleared_units, "cleared_input_tokens": self.cleared_tokens}
        ]
