"""A Python port of the tutorial's ``ConversationContext`` (see ``../shared/seed``).

Behaviour is the Java class's, made observable: each add and each eviction is reported to
subscribers with stable message ids, and the truncation rule is a pluggable strategy (``seed`` is
the Java ``_truncateIfNeeded``, exactly).
"""

from __future__ import annotations

import bisect
import contextlib
import errno
import inspect
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, Self, cast

from ctxview.core.body import request_body
from ctxview.core.compaction import effective_messages, has_compaction
from ctxview.core.content import (
    ContentError,
    content_shape,
    json_value,
    message_content,
    response_parts,
    system_text,
    system_value,
    tools_value,
)
from ctxview.core.content import block as content_block
from ctxview.core.counting import Estimate, counter_for
from ctxview.core.events import ContextEvent as ContextEvent  # (imported from here by users)
from ctxview.core.events import Subscriber
from ctxview.core.protocol import Problem, check_protocol
from ctxview.core.strategies import STRATEGY_EDITS, Strategy, StrategyFunction, get_strategy
from ctxview.core.tokens import estimate_window
from ctxview.core.transcript import Record, Transcript
from ctxview.core.window import Entry, Window, json_copy

if TYPE_CHECKING:
    # context editing is imported when a clear-* strategy needs it, not by every context
    from ctxview.core.calibrate import Rates
    from ctxview.core.clearing import ContextEditing, SentForm
    from ctxview.core.counting import RequestCounter
    from ctxview.core.sdk_types import (
        Content,
        Message,
        MessageParam,
        TextBlockParam,
        ToolResultBlockParam,
        ToolUnionParam,
    )
    from ctxview.core.session_file import SavedSession

DEFAULT_MAX_CONTEXT_MESSAGES = 20
DEFAULT_STRATEGY = "seed"
DEFAULT_MAX_CONTEXT_TOKENS = 200_000
DEFAULT_LOW_WATER_FRACTION = 0.5


class ProtocolError(ValueError):
    """The API would reject the request (:meth:`ConversationContext.request` with
    ``check=True``): ``problems`` holds each error, its ``message`` in the API's words."""

    def __init__(self, problems: Sequence[Problem]) -> None:
        self.problems = list(problems)
        lines = [p.message for p in self.problems]  # (each names its place: messages.1...)
        super().__init__(
            f"the API would reject this request ({len(lines)} error"
            f"{'s' if len(lines) != 1 else ''}):\n  " + "\n  ".join(lines)
        )


_ASYNC_REFUSED = (
    "{name} is async: context events are delivered synchronously, in the thread that changes "
    "the context, and nothing would await it (hand each event to your loop instead, e.g. "
    "ctx.subscribe(queue.put_nowait))"
)


def _name_of(callback: object) -> str:
    return str(getattr(callback, "__qualname__", None) or type(callback).__qualname__)


def _check_max(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(
            f"max_context_messages must be an integer >= 1, got {value!r} ({type(value).__name__})"
        )
    if value < 1:
        raise ValueError(
            f"max_context_messages must be >= 1 (the first message is always kept), got {value}"
        )
    return value


def _check_max_tokens(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"max_context_tokens must be an integer >= 1, got {value!r}")
    return value


def _check_fraction(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 1:
        raise ValueError(f"low_water_fraction must be a number in (0, 1], got {value!r}")
    return float(value)


def block_to_dict(block: Any) -> dict[str, Any]:
    """An SDK content block (anything with pydantic's ``model_dump``) or a mapping, as a plain dict
    with no ``None``-valued keys and every other key kept (:func:`ctxview.core.content.block`)."""
    return content_block(block, "block")


def _blocks(message: Mapping[str, Any]) -> list[dict[str, Any]]:
    content = message.get("content")
    if not isinstance(content, list):
        return []
    return [b for b in content if isinstance(b, dict)]


def _partners(entries: Sequence[Entry], p: int) -> list[int]:
    """Window positions of the other halves of the tool pairs of the message at ``p``: the
    messages holding the results of its tool_uses (scanning forward through the user turn that
    answers them), the message holding the tool_use of each of its tool_results (scanning back).
    ValueError when a tool_result's tool_use is not in the window. O(1) for a well-formed loop."""
    msg = entries[p][1]
    role = msg.get("role")
    out: list[int] = []
    blocks = _blocks(msg)
    if role == "assistant":
        wanted = {str(b.get("id")) for b in blocks if b.get("type") == "tool_use"}
        found = False
        for q in range(p + 1, len(entries)) if wanted else ():
            other = entries[q][1]
            if other.get("role") != "user":
                if found:
                    break  # the user turn that answers them is over
                continue
            if any(
                b.get("type") == "tool_result" and str(b.get("tool_use_id")) in wanted
                for b in _blocks(other)
            ):
                out.append(q)
                found = True
    elif role == "user":
        for b in blocks:
            if b.get("type") != "tool_result":
                continue
            tid = str(b.get("tool_use_id"))
            use_at = next(
                (
                    q
                    for q in range(p - 1, -1, -1)
                    if entries[q][1].get("role") == "assistant"
                    and any(
                        c.get("type") == "tool_use" and str(c.get("id")) == tid
                        for c in _blocks(entries[q][1])
                    )
                ),
                None,
            )
            if use_at is None:
                raise ValueError(
                    f"#{entries[p][0]} holds a tool_result whose tool_use ({tid}) is not in the "
                    "window: pinning it would keep an orphan the API rejects"
                )
            out.append(use_at)
    return out


def _answers(message: Mapping[str, Any], uses: set[str]) -> bool:
    """True when a user ``message`` holds a tool_result answering one of ``uses``."""
    if not uses or message.get("role") != "user":
        return False
    return any(
        b.get("type") == "tool_result" and str(b.get("tool_use_id")) in uses
        for b in _blocks(message)
    )


_NO_HISTORY = (
    "saving needs the context's history: create Transcript(ctx) before the first add (it "
    "records every message and eviction the session file holds)"
)


class ConversationContext:
    """The agent loop's memory: messages in the Anthropic format, truncated by a strategy."""

    def __init__(
        self,
        max_context_messages: int = DEFAULT_MAX_CONTEXT_MESSAGES,
        system_prompt: str | Iterable[TextBlockParam] = "",
        strategy: str | Strategy | StrategyFunction = DEFAULT_STRATEGY,
        *,
        max_context_tokens: int = DEFAULT_MAX_CONTEXT_TOKENS,
        low_water_fraction: float = DEFAULT_LOW_WATER_FRACTION,
        context_editing: ContextEditing | Mapping[str, Any] | None = None,
        tools: Iterable[ToolUnionParam] | None = None,
        token_counter: Rates | Estimate | RequestCounter | Literal["estimate"] | None = None,
    ) -> None:
        self._window = Window(
            _check_max(max_context_messages),
            _check_max_tokens(max_context_tokens),
            _check_fraction(low_water_fraction),
            system_value(system_prompt),
        )
        self._window.set_counter(*counter_for(token_counter))
        #: (step, count) of the last request-callback count
        self._counted: tuple[int, int] | None = None
        self._strategy = get_strategy(strategy)
        self._tools: list[dict[str, Any]] = []
        if tools is not None:
            self._set_tools(tools)
        self._next_id = 0
        self._step = 0
        self._subscribers: list[Subscriber] = []
        #: ids of messages holding a ``compaction`` block (the API ignores what precedes one)
        self._compaction_ids: set[int] = set()
        #: the context-editing strategies' parameters, and their edited copy of the window
        #: (a mapping: the parameters' config/session form, validated where it was read and
        #: parsed on first use, so a context with a plain strategy never imports context editing)
        self._editing: ContextEditing | None = None
        self._editing_form: Mapping[str, Any] | None = None
        if isinstance(context_editing, Mapping):
            self._editing_form = context_editing
        else:
            self._editing = context_editing
        self._sent: SentForm | None = None
        #: the :class:`~ctxview.core.transcript.Transcript` attached last (its full history)
        self.transcript: Any = None
        #: a session shown as it was sent: max grows with the window, so nothing is evicted
        self._max_follows_size = False
        #: tool_use ids of pinned assistant messages (their results are pinned when added)
        self._pinned_uses: set[str] = set()
        #: ids pinned as the answers of the first message's tool_use (``_first_uses``)
        self._first_pins: set[int] = set()
        #: the session file this context was read from (:meth:`load`): :meth:`save` does not
        #: replace it unless forced
        self.loaded_from: str | None = None

    # -- observation ---------------------------------------------------------------------------
    # Events are delivered after the change is complete (the window consistent, the strategy
    # run), synchronously, in the thread that made the change. A subscriber that raises does not
    # stop the others, nor the events after it: the first exception is re-raised once every
    # subscriber had every event of the change (the change stands).
    def subscribe(self, callback: Subscriber) -> Callable[[], None]:
        """Call ``callback`` with every :class:`ContextEvent`; returns an unsubscribe function.

        TypeError for an ``async`` callback: events are delivered synchronously, and nothing
        would await it (hand the event to your loop instead:
        ``ctx.subscribe(queue.put_nowait)``)."""
        if not callable(callback):
            raise TypeError(f"subscribe takes a callable, got {type(callback).__name__}")
        if inspect.iscoroutinefunction(callback) or inspect.iscoroutinefunction(
            getattr(callback, "__call__", None)  # noqa: B004 (an async __call__ method)
        ):
            raise TypeError(_ASYNC_REFUSED.format(name=_name_of(callback)))
        self._subscribers.append(callback)

        def unsubscribe() -> None:
            if callback in self._subscribers:
                self._subscribers.remove(callback)

        return unsubscribe

    def _emit(self, *events: ContextEvent) -> None:
        errors: list[BaseException] = []
        for event in events:
            for callback in list(self._subscribers):
                try:
                    result = callback(event)
                except Exception as exc:
                    errors.append(exc)
                    continue
                if result is not None and inspect.isawaitable(result):
                    if inspect.iscoroutine(result):
                        result.close()  # never awaited: no "was never awaited" warning later
                    errors.append(TypeError(_ASYNC_REFUSED.format(name=_name_of(callback))))
        if errors:
            first = errors[0]
            for other in errors[1:]:
                first.add_note(f"another subscriber raised too: {other!r}")
            raise first

    # -- adding --------------------------------------------------------------------------------
    def _add(self, message: dict[str, Any], meta: Mapping[str, Any] | None) -> int:
        # The hot path (a million adds a second matters for replays): keep it flat.
        mid = self._next_id
        self._next_id = mid + 1
        self._step += 1
        window = self._window
        if message.get("role") == "assistant" and has_compaction(message):
            self._compaction_ids.add(mid)
        if window.first is None:
            self._pinned_uses = self._first_uses(message)
        auto_pin = bool(window.pins or self._pinned_uses) and self._pinned_with(message)
        if auto_pin:
            window.pins.add(mid)  # the results of a pinned tool_use are pinned with it
            if window.first is not None and _answers(message, self._first_uses(window.first[1])):
                self._first_pins.add(mid)
        if window.first is None or window._tail_tokens is not None:
            window.append((mid, message))
        else:
            window.tail.append((mid, message))
        if self._max_follows_size and window.max_messages <= window.size:
            # a session shown as it was sent: nothing is truncated, however long it grows
            window.max_messages = window.size + 1
        if window.released:
            window.evict_released()  # unpinned since the last add: the strategy passed them
        try:
            self._strategy.truncate(window)
        finally:
            # even when a strategy raised: what was added (and evicted) is reported
            if self._subscribers:
                events = [ContextEvent("added", self._step, (mid,), "add", message, meta)]
                if auto_pin:
                    events.append(ContextEvent("pinned", self._step, (mid,), "pin"))
                if window.evicted:
                    evicted, window.evicted = window.evicted, []
                    events.append(
                        ContextEvent(
                            "evicted",
                            self._step,
                            tuple(e[0] for e in evicted),
                            "add",
                            evicted_messages=tuple(e[1] for e in evicted),
                        )
                    )
                self._emit(*events)
            elif window.evicted:
                window.evicted.clear()
        return mid

    def add_user_message(self, content: Content, *, meta: Mapping[str, Any] | None = None) -> int:
        """Append a user message: ``content`` a string, or a list of content blocks (text,
        image, document, tool_result...: the SDK's params or objects, or dicts; every key kept).
        Returns the new message's id. ValueError (:class:`~ctxview.core.content.ContentError`,
        naming the path) for anything else, or a value inside that is not JSON."""
        return self._add({"role": "user", "content": message_content(content)}, meta)

    def add_assistant_message(
        self, content: Content, *, meta: Mapping[str, Any] | None = None
    ) -> int:
        """Append an assistant message: SDK content blocks (``response.content``) or dicts, or a
        string (``None``-valued keys of a block are dropped, every other key kept). For the
        whole response (its usage, id and stop reason too) use :meth:`add_response`."""
        return self._add({"role": "assistant", "content": message_content(content)}, meta)

    def add_response(self, message: Message, *, meta: Mapping[str, Any] | None = None) -> int:
        """Append the SDK's ``Message`` (what ``client.messages.create`` returns, or its dict):
        its content as the assistant message, its ``usage``, ``id``, ``model``,
        ``stop_reason`` and ``stop_sequence`` as the message's meta (what the Requests view and
        the cost figures read), ``meta`` added on top. Returns the new message's id."""
        blocks, kept = response_parts(message)
        if meta:
            kept.update(meta)
        return self._add({"role": "assistant", "content": blocks}, kept)

    def add_tool_results(
        self,
        results: Sequence[ToolResultBlockParam | Mapping[str, Any]],
        *,
        meta: Mapping[str, Any] | None = None,
    ) -> int:
        """Append ONE user message holding a tool_result block per item, in the given order.

        Each item needs ``tool_use_id``; ``content`` defaults to ``""`` and ``is_error`` to
        false; every other key (``cache_control``...) is kept as given."""
        if isinstance(results, (str, bytes, Mapping)):
            raise ValueError("add_tool_results takes a list of result mappings")
        items = list(results)
        if not items:
            raise ValueError("add_tool_results: empty list of results (nothing to add)")
        blocks: list[dict[str, Any]] = []
        for n, item in enumerate(items):
            if not isinstance(item, Mapping):
                raise ValueError(f"add_tool_results: item {n} is not a mapping: {item!r}")
            if item.get("tool_use_id") in (None, ""):
                raise ValueError(f"add_tool_results: item {n} has no 'tool_use_id': {dict(item)!r}")
            if item.get("type", "tool_result") != "tool_result":
                raise ValueError(
                    f"add_tool_results: item {n} is a {item.get('type')!r} block, not tool_result"
                )
            block: dict[str, Any] = {
                "type": "tool_result",
                "tool_use_id": str(item["tool_use_id"]),
                "content": item.get("content", ""),
                "is_error": bool(item.get("is_error", False)),
            }
            block.update((k, v) for k, v in item.items() if k not in block)
            blocks.append(json_value(block, f"results[{n}]"))
        return self._add({"role": "user", "content": blocks}, meta)

    def add_message(
        self,
        message: MessageParam | Mapping[str, Any],
        *,
        meta: Mapping[str, Any] | None = None,
        copy: bool = True,
    ) -> int:
        """Append an already-formed message (every key kept; used when replaying a file).

        ``role: "system"`` messages are carried as they are: current models accept them mid-
        conversation (the protocol checker applies their placement rules).

        The message is copied as JSON (ValueError naming the path of a value that is not
        JSON) unless ``copy=False``: a reader that hands over messages it just parsed saves a
        second copy of a large session that way (and they are JSON already).
        """
        if not isinstance(message, Mapping):
            raise ContentError("message", f"a message is a mapping, got {type(message).__name__}")
        role = message.get("role")
        if role not in ("user", "assistant", "system"):
            raise ValueError(f"message role must be 'user', 'assistant' or 'system', got {role!r}")
        if copy:
            stored: Any = json_value(message, "message")
            content_shape(stored.get("content"), "message.content")
        else:
            stored = message if type(message) is dict else dict(message)
        return self._add(stored, meta)

    def start_again(
        self,
        message: Mapping[str, Any],
        *,
        meta: Mapping[str, Any] | None = None,
        copy: bool = True,
    ) -> int:
        """Add ``message`` as the start of the conversation again: a Claude Code compaction's
        summary (:func:`~ctxview.core.compaction.claude_code_compaction`), whose next request
        holds only it and what follows. Every window message leaves first (one ``evicted``
        event, reason ``"compaction"``, at the step ``message`` is added; pins and context
        edits go with them), then ``message`` is added as :meth:`add_message` adds one and
        becomes the pinned first message, as ``requests.simulate`` starts a new segment
        there."""
        window = self._window
        ids = tuple(e[0] for e in window)
        msgs = tuple(e[1] for e in window)
        window.clear()
        window.pins = set()
        self._pinned_uses = set()
        self._first_pins = set()
        self._compaction_ids = set()
        self._sent = None
        if ids and self._subscribers:
            self._emit(
                ContextEvent("evicted", self._step + 1, ids, "compaction", evicted_messages=msgs)
            )
        return self.add_message(message, meta=meta, copy=copy)

    # -- edits ---------------------------------------------------------------------------------
    # Edits change the window in place, outside the strategy: they never evict, and the window
    # keeps its order (ids increasing). Each costs O(window): they are a user's actions.
    def _edit(
        self, entries: list[Entry], mid: int, reason: str, message: dict[str, Any] | None
    ) -> None:
        window = self._window
        cut = window.cut
        self._sent = None
        # what the eviction front had passed stays held (the window's shape does not change)
        held_to = window.held[-1][0] if window.held else -1
        window.clear()
        for k, entry in enumerate(entries):
            if k and entry[0] <= held_to:
                window.held.append(entry)
            else:
                window.append(entry)
        window.cut = cut or reason == "remove"
        if window.pins or window.held:
            self._pins_changed()
        self._compaction_ids = {
            e[0] for e in entries if e[1].get("role") == "assistant" and has_compaction(e[1])
        }
        self._step += 1
        if self._subscribers:
            self._emit(ContextEvent("edited", self._step, (mid,), reason, message))

    def replace_message(self, mid: int, message: Mapping[str, Any]) -> None:
        """Replace the window message ``mid`` with ``message`` (copied); emits ``edited``."""
        entries = list(self._window)
        k = next((k for k, e in enumerate(entries) if e[0] == mid), None)
        if k is None:
            raise KeyError(f"message #{mid} is not in the window")
        stored = json_copy(message)
        entries[k] = (mid, stored)
        self._edit(entries, mid, "replace", stored)

    def remove_message(self, mid: int) -> None:
        """Take the window message ``mid`` out of the window (an edit, not an eviction)."""
        entries = list(self._window)
        kept = [e for e in entries if e[0] != mid]
        if len(kept) == len(entries):
            raise KeyError(f"message #{mid} is not in the window")
        self._edit(kept, mid, "remove", None)

    def readmit_message(self, mid: int, message: Mapping[str, Any]) -> None:
        """Put a message an edit removed back in the window, in id order (for undo)."""
        if not 0 <= mid < self._next_id:
            raise KeyError(f"no message #{mid}")
        entries = [e for e in self._window if e[0] != mid]
        stored = json_copy(message)
        k = next((k for k, e in enumerate(entries) if e[0] > mid), len(entries))
        entries.insert(k, (mid, stored))
        self._edit(entries, mid, "readmit", stored)

    # -- pins ----------------------------------------------------------------------------------
    # A pinned message is never evicted (see ctxview.core.window). Pinning one half of a tool pair
    # pins the pair: the tool_use's assistant message and every message holding its results (a
    # result added later is pinned as it arrives), so a pin never leaves half a pair behind. A
    # pinned assistant message brings the user message after it (added later: pinned as it
    # arrives), so a pinned run never ends inside an assistant turn.
    # Unpinning releases the pair; the strategy may evict it at the next add or setting change
    # (an unpin evicts nothing by itself, so it stays an instant, undoable edit).
    @property
    def pinned_ids(self) -> list[int]:
        """Ids of the window messages a user pinned, increasing (the first message is always
        kept and is not listed unless pinned explicitly)."""
        pins = self._window.pins
        return [e[0] for e in self._window if e[0] in pins] if pins else []

    def is_pinned(self, mid: int) -> bool:
        return mid in self._window.pins

    def pin_group(self, mid: int) -> list[int]:
        """``mid`` and the window messages of its tool pairs (transitively), and the user
        message right after a pinned assistant message; increasing.

        KeyError when ``mid`` is not in the window; ValueError when a tool_result of the group
        answers a tool_use no longer in the window (pinning it would keep an orphan the API
        rejects)."""
        entries = list(self._window)
        ids = [e[0] for e in entries]
        k = bisect.bisect_left(ids, mid)
        if k == len(ids) or ids[k] != mid:
            raise KeyError(f"message #{mid} is not in the window")
        group = {k}  # window positions
        todo = [k]
        while True:
            while todo:
                p = todo.pop()
                for q in _partners(entries, p):
                    if q not in group:
                        group.add(q)
                        todo.append(q)
            # a pinned assistant message keeps the user message after it: the pinned run then
            # ends with a user turn, and whatever the strategy keeps next cannot merge into an
            # assistant turn (two assistant messages in a row are one turn to the API)
            q = max(group) + 1
            if (
                entries[q - 1][1].get("role") == "assistant"
                and q < len(entries)
                and entries[q][1].get("role") == "user"
            ):
                group.add(q)
                todo.append(q)
                continue
            return [ids[p] for p in sorted(group)]

    def _pinned_with(self, message: dict[str, Any]) -> bool:
        """A user message about to be added belongs to a pinned group: it answers a pinned
        tool_use, or it follows a pinned assistant message directly."""
        if message.get("role") != "user":
            return False
        window = self._window
        prev = window.tail[-1] if window.tail else (window.held[-1] if window.held else None)
        if prev is not None and prev[0] in window.pins and prev[1].get("role") == "assistant":
            return True
        return _answers(message, self._pinned_uses)

    def pin(self, mid: int) -> list[int]:
        """Pin window message ``mid`` with its tool pairs; returns the ids newly pinned (empty
        when already pinned). Emits ``pinned`` (reason ``"pin"``)."""
        group = self.pin_group(mid)
        window = self._window
        new = [i for i in group if i not in window.pins]
        if not new:
            return []
        window.pins.update(new)
        self._pins_changed()
        self._step += 1
        if self._subscribers:
            self._emit(ContextEvent("pinned", self._step, tuple(new), "pin"))
        return new

    def unpin(self, mid: int) -> list[int]:
        """Unpin ``mid`` and the pinned messages of its tool pairs; returns the ids unpinned.
        Nothing is evicted now: the strategy may evict them at the next add. Emits ``pinned``
        (reason ``"unpin"``)."""
        window = self._window
        if mid not in window.pins:
            return []
        group = self._unpin_group(mid)
        # the answers of the first message's tool_use stay pinned while the strategy keeps pairs
        gone = [i for i in group if i in window.pins and i not in self._first_pins]
        if not gone:
            return []
        window.pins.difference_update(gone)
        self._pins_changed()
        self._step += 1
        if self._subscribers:
            self._emit(ContextEvent("pinned", self._step, tuple(gone), "unpin"))
        return gone

    def set_pinned(self, ids: Iterable[int], pinned: bool) -> list[int]:
        """Pin (or unpin) exactly ``ids`` that are in the window, without the pair rules: for an
        undo, which puts back a state :meth:`pin` / :meth:`unpin` made. Returns the ids changed."""
        window = self._window
        in_window = {e[0] for e in window}
        changed = [i for i in ids if i in in_window and (i in window.pins) != pinned]
        if not changed:
            return []
        if pinned:
            window.pins.update(changed)
        else:
            window.pins.difference_update(changed)
        self._pins_changed()
        self._step += 1
        if self._subscribers:
            self._emit(
                ContextEvent("pinned", self._step, tuple(changed), "pin" if pinned else "unpin")
            )
        return changed

    def _unpin_group(self, mid: int) -> list[int]:
        """What :meth:`pin` would have pinned with ``mid``: its group, and the group of a pinned
        assistant message it follows."""
        window = self._window

        def group_of(i: int) -> set[int]:
            try:
                return set(self.pin_group(i))
            except (KeyError, ValueError):
                return {i}

        group = group_of(mid)
        entries = list(window)
        ids = [e[0] for e in entries]
        while True:
            first = min(group)
            k = bisect.bisect_left(ids, first)
            prev = entries[k - 1] if 0 < k <= len(ids) and ids[k - 1] < first else None
            if (
                prev is None
                or prev[0] in group
                or prev[0] not in window.pins
                or prev[1].get("role") != "assistant"
                or k >= len(ids)
                or entries[k][1].get("role") != "user"
            ):
                return sorted(group)
            group |= group_of(prev[0])

    def _pins_changed(self, settle: bool = True) -> None:
        """After the pins changed: the tool_use ids whose results are pinned as they come, and
        (``settle``) the pinned messages at the front of the tail passed to ``held``."""
        window = self._window
        first = self._first_uses(window.first[1]) if window.first is not None else set()
        if not window.pins and not window.held:
            self._pinned_uses = first
            return
        uses = first
        for eid, msg in window:
            if eid in window.pins and msg.get("role") == "assistant":
                uses.update(
                    str(b["id"]) for b in _blocks(msg) if b.get("type") == "tool_use" and "id" in b
                )
        self._pinned_uses = uses
        if settle:
            window.settle()
        else:  # (a restored window: an unpinned message left in held leaves at the next add)
            window.released = any(e[0] not in window.pins for e in window.held)

    # -- truncation ----------------------------------------------------------------------------
    def _drain(self, reason: str) -> list[int]:
        """Report what the last truncation evicted; returns the ids."""
        window = self._window
        if not self._subscribers:
            ids = [e[0] for e in window.evicted] if reason != "add" else []
            window.evicted.clear()
            return ids
        evicted, window.evicted = window.evicted, []
        ids_t = tuple(e[0] for e in evicted)
        msgs = tuple(e[1] for e in evicted)
        self._emit(ContextEvent("evicted", self._step, ids_t, reason, evicted_messages=msgs))
        return list(ids_t)

    def _truncate(self, reason: str) -> list[int]:
        if self._window.released:
            self._window.evict_released()
        self._strategy.truncate(self._window)
        return self._drain(reason) if self._window.evicted else []

    def _config_changed(self, reason: str) -> list[int]:
        self._step += 1
        evicted = self._truncate(reason)
        if not evicted and self._subscribers:
            self._emit(ContextEvent("config", self._step, (), reason))
        return evicted

    # -- settings ------------------------------------------------------------------------------
    @property
    def max_context_messages(self) -> int:
        return self._window.max_messages

    @max_context_messages.setter
    def max_context_messages(self, value: int) -> None:
        self.set_max_context_messages(value)

    def set_max_context_messages(self, value: int) -> list[int]:
        """Set max; lowering it truncates at once. Returns the ids evicted now."""
        self._window.max_messages = _check_max(value)
        return self._config_changed("max")

    @property
    def strategy(self) -> str:
        return self._strategy.name

    @strategy.setter
    def strategy(self, value: str | Strategy | StrategyFunction) -> None:
        self.set_strategy(value)

    def set_strategy(self, value: str | Strategy | StrategyFunction) -> list[int]:
        self._strategy = get_strategy(value)
        window = self._window
        uses = self._first_uses(window.first[1]) if window.first is not None else set()
        if uses:  # the first message's answers in the window are pinned with it from now on
            answers = [e[0] for e in window if _answers(e[1], uses)]
            changed = [i for i in answers if i not in window.pins]
            window.pins.update(changed)
            self._first_pins.update(answers)  # (one the user pinned too: held all the same)
            reason = "pin"
        else:  # ... or no longer: the strategy may drop them (``seed``)
            changed = sorted(self._first_pins & window.pins)
            window.pins.difference_update(changed)
            self._first_pins = set()
            reason = "unpin"
        if changed:
            self._pins_changed()
            if self._subscribers:
                self._emit(ContextEvent("pinned", self._step, tuple(changed), reason))
        return self._config_changed("strategy")

    def _first_uses(self, message: Mapping[str, Any]) -> set[str]:
        """The tool_use ids of the first message (always kept), under a strategy that keeps
        tool pairs: the messages answering them are pinned as they arrive, as a pinned
        tool_use's are, so the strategy never keeps the call and drops its answer (an
        unanswered tool_use is a 400). ``seed`` keeps the Java rule: it may drop the answer."""
        if message.get("role") != "assistant" or not getattr(
            self._strategy, "keeps_tool_pairs", False
        ):
            return set()
        return {str(b["id"]) for b in _blocks(message) if b.get("type") == "tool_use" and "id" in b}

    @property
    def context_editing(self) -> ContextEditing:
        """The parameters of the context-editing strategies (``clear-tool-uses``,
        ``clear-thinking``)."""
        if self._editing is None:
            from ctxview.core.clearing import parse_context_editing

            # the defaults when none were given (``clearing.DEFAULT_EDITING``)
            self._editing = parse_context_editing(self._editing_form)
        return self._editing

    def set_context_editing(self, value: ContextEditing) -> None:
        from ctxview.core.clearing import ContextEditing

        if not isinstance(value, ContextEditing):
            raise ValueError(
                f"context_editing must be a ContextEditing, got {type(value).__name__}"
            )
        self._editing, self._editing_form = value, None
        self._sent = None
        self._config_changed("context_editing")

    @property
    def edits_messages(self) -> bool:
        """True when the strategy sends an edited copy of the window (context editing)."""
        return self._strategy.name in STRATEGY_EDITS

    def sent_form(self, prompt_tokens: int | None = None) -> SentForm | None:
        """The edited copy of the window the strategy sends (None: the window is sent as it is).

        Kept up to date incrementally (appends cost what they add); ``prompt_tokens`` is the
        original prompt's size for the ``input_tokens`` trigger (default: the window's estimate,
        system prompt included).
        """
        name = self._strategy.name
        if name not in STRATEGY_EDITS:
            return None
        sf = self._sent
        if sf is None or sf.strategy != name:
            from ctxview.core.clearing import SentForm

            sf = self._sent = SentForm(name, self.context_editing)
        window = self._window
        sf.update(
            window.first, window.tail, window.tokens if prompt_tokens is None else prompt_tokens
        )
        return sf

    def sent_entries(self) -> list[Entry]:
        """The window's ``(id, message as sent)`` entries; do not mutate the messages."""
        sf = self.sent_form()
        if sf is None:
            return list(self._window)
        ed = sf.edited
        return [(e[0], ed.get(e[0], e[1])) for e in self._window]

    @property
    def max_context_tokens(self) -> int:
        return self._window.max_context_tokens

    @max_context_tokens.setter
    def max_context_tokens(self, value: int) -> None:
        self._window.max_context_tokens = _check_max_tokens(value)
        self._config_changed("tokens")

    @property
    def low_water_fraction(self) -> float:
        return self._window.low_water_fraction

    @low_water_fraction.setter
    def low_water_fraction(self, value: float) -> None:
        self._window.low_water_fraction = _check_fraction(value)
        self._config_changed("low_water")

    @property
    def tools(self) -> list[ToolUnionParam]:
        """The tool definitions every request sends (a copy): counted in
        :attr:`estimated_tokens` and the ``token-budget`` strategy's budget, sent by
        :meth:`request`. Set a list (SDK params or dicts)."""
        return cast("list[ToolUnionParam]", json_copy(self._tools))

    @tools.setter
    def tools(self, value: Iterable[ToolUnionParam] | None) -> None:
        self._set_tools(value or [])
        self._config_changed("tools")

    def _set_tools(self, value: Iterable[ToolUnionParam]) -> None:
        self._tools = tools_value(value)
        self._window.set_tools(self._tools)

    @property
    def system_sent(self) -> str | list[TextBlockParam]:
        """The system prompt as a request sends it (:attr:`system_prompt`)."""
        return self.system_prompt

    @property
    def system_prompt(self) -> str | list[TextBlockParam]:
        """The system prompt as it was set: a string, or a list of text blocks (their
        ``cache_control`` and every other key kept), sent as it is. Set either."""
        sp = self._window.system_prompt
        if isinstance(sp, list):
            return cast("list[TextBlockParam]", sp)
        return sp if isinstance(sp, str) else ""

    @system_prompt.setter
    def system_prompt(self, value: str | Iterable[TextBlockParam]) -> None:
        self._window.set_system_prompt(system_value(value))
        self._config_changed("system")

    @property
    def system_text(self) -> str:
        """The system prompt as text: the string, or its text blocks' text joined by a blank
        line (what a person reads; :attr:`system_prompt` is what is sent)."""
        return system_text(self._window.system_prompt)

    def load_system_prompt(self, path: str | os.PathLike[str]) -> str:
        """Read a UTF-8 file as the system prompt; ValueError naming the file when unreadable."""
        try:
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
        except FileNotFoundError:
            raise ValueError(f"{os.fspath(path)}: system prompt file not found") from None
        except IsADirectoryError:
            raise ValueError(
                f"{os.fspath(path)}: is a directory, not a system prompt file"
            ) from None
        except UnicodeDecodeError as exc:
            raise ValueError(
                f"{os.fspath(path)}: system prompt is not valid UTF-8 (byte {exc.start})"
            ) from None
        except OSError as exc:
            raise ValueError(
                f"{os.fspath(path)}: cannot read system prompt: {exc.strerror}"
            ) from None
        self.system_prompt = text
        return text

    # -- the request ---------------------------------------------------------------------------
    def request(
        self,
        *,
        model: str,
        max_tokens: int,
        tools: Iterable[ToolUnionParam] | None = None,
        check: bool = False,
        system: str | Iterable[TextBlockParam] | None = None,
        context_management: bool | None = None,
        **extra: Any,
    ) -> dict[str, Any]:
        """The keyword arguments of the next ``client.messages.create(**ctx.request(...))``:
        ``model``, ``max_tokens``, ``extra`` (thinking, tool_choice, temperature, metadata...
        verbatim), ``system`` (the context's system prompt, blocks and ``cache_control``
        kept, unless given), the window's ``messages`` and ``tools`` (the context's
        :attr:`tools` unless given): the body :func:`ctxview.core.body.request_body` builds,
        the one every ctxview command sends.

        ``check=True``: the window is checked first (:func:`~ctxview.core.protocol.check_protocol`)
        and :class:`ProtocolError` raised, holding the problems in the API's words, when the
        API would reject it.

        Under a context-editing strategy the messages are ctxview's edited copy, unless
        ``context_management`` (default: the parameters' ``server_side``): then the full
        messages and the ``context_management`` block that asks the API to edit them (beta
        ``context-management-2025-06-27``; ``client.beta.messages.create(**body, betas=[...])``).
        """
        sys_sent: Any = self.system_prompt if system is None else system_value(system)
        body = self.request_body(
            model=model,
            max_tokens=max_tokens,
            system=sys_sent,
            tools=self._tools if tools is None else tools_value(tools),
            params=extra,
            context_management=context_management,
        )
        if check:
            # what is sent is what is checked (the full messages when the API edits them)
            problems = check_protocol(body["messages"], body.get("system"))
            errors = [p for p in problems if p.severity == "error"]
            if errors:
                raise ProtocolError(errors)
        return body

    def request_body(
        self,
        *,
        model: Any,
        max_tokens: Any,
        system: Any,
        tools: list[Any] | None,
        params: Mapping[str, Any] | None,
        context_management: bool | None,
    ) -> dict[str, Any]:
        """:meth:`request` with every part as it is given (a file's system prompt and tools,
        unvalidated, for ``export``), unchecked: the one place a context's body is built."""
        if context_management is None and self.edits_messages:
            context_management = self.context_editing.server_side
        cm = self.context_editing.context_management(self.strategy) if context_management else None
        return request_body(
            model=model,
            max_tokens=max_tokens,
            params=params,
            system=system,
            messages=self.original_messages if cm is not None else self.messages,
            context_management=cm,
            tools=json_copy(tools) if tools else None,
        )

    def check(self) -> list[Problem]:
        """The protocol problems of the window as it would be sent (errors and warnings, in the
        API's words): ``[]`` when the API would accept it."""
        return check_protocol([e[1] for e in self.sent_entries()], self.system_prompt)

    # -- reading -------------------------------------------------------------------------------
    @property
    def messages(self) -> list[MessageParam]:
        """The window as sent, as plain dicts typed as the SDK's ``MessageParam`` (ready for
        ``client.messages.create(messages=...)``; a deep copy: changing it does not change the
        context). Under a context-editing strategy, the edited copy (:meth:`sent_form`); the
        originals are :meth:`entries`."""
        sf = self.sent_form() if self._strategy.name in STRATEGY_EDITS else None
        if sf is None or not sf.edited:
            out = [json_copy(e[1]) for e in self._window]
        else:
            ed = sf.edited
            out = [json_copy(ed.get(e[0], e[1])) for e in self._window]
        return cast("list[MessageParam]", out)

    @property
    def original_messages(self) -> list[MessageParam]:
        """The window's messages as recorded (before context editing), deep-copied."""
        return cast("list[MessageParam]", [json_copy(e[1]) for e in self._window])

    @property
    def window_ids(self) -> list[int]:
        window = self._window
        ids = [e[0] for e in window.tail]
        if window.held:
            ids[:0] = [e[0] for e in window.held]
        if window.first is not None:
            ids.insert(0, window.first[0])
        return ids

    @property
    def held_ids(self) -> list[int]:
        """The pinned messages the strategy has passed (kept, no longer counted against max),
        as a saved session records them (``window.held``)."""
        return [e[0] for e in self._window.held]

    @property
    def cut(self) -> bool:
        """True once anything left the window: it no longer follows the first message."""
        return self._window.cut

    @property
    def pinned_id(self) -> int | None:
        first = self._window.first
        return first[0] if first is not None else None

    def entries(self) -> list[Entry]:
        """The window's ``(id, message)`` entries; do not mutate the messages."""
        return list(self._window)

    @property
    def estimated_tokens(self) -> int:
        """Tokens of system prompt + tool definitions + window, by the ``token_counter``
        (the offline estimate unless another was given; cached per message, and a request
        callback is asked once per change of the window).

        With a ``compaction`` block in the window, only what the API reads counts: the last
        compaction block and what follows it.
        """
        window = self._window
        if window.request_counter is not None:
            if self._counted is None or self._counted[0] != self._step:
                self._counted = (self._step, window.counted_tokens())
            return self._counted[1]
        cids = self._compaction_ids
        if cids and any(e[0] in cids for e in window):
            return estimate_window(
                [e[1] for e in self.sent_entries()], window.system_prompt, self._tools
            )
        sf = self.sent_form()
        return window.tokens - (sf.cleared_tokens if sf is not None else 0)

    @property
    def compacted_ids(self) -> list[int]:
        """Ids of window messages before the last compaction block (the API ignores them)."""
        cids = self._compaction_ids
        if not cids:
            return []
        entries = list(self._window)
        start = effective_messages([e[1] for e in entries])[0]
        return [e[0] for e in entries[:start]]

    def window_notes(self) -> list[Problem]:
        """Warnings about the window itself (not the API's rules), for the sidebar and ``inspect``.

        ``newest_not_in_window``: the message added last was evicted (``seed`` at max 1).
        ``over_max``: the window holds more than max (``max+1: kept a tool pair``).
        ``over_token_budget``: ``token-budget`` could not fit the budget without dropping the
        newest message or its tool pair.
        """
        window = self._window
        notes: list[Problem] = []
        size = window.size
        last = self._next_id - 1
        if size and last >= 0 and not self._contains(last):
            notes.append(
                Problem(
                    -1,
                    "newest_not_in_window",
                    "warning",
                    f"the message just added (#{last}) is not in the window: max "
                    f"{window.max_messages} with {self._strategy.name} evicted it",
                )
            )
        over = window.over_max if not self.edits_messages else 0  # editing never evicts
        if over:
            tail = window.tail
            pair = (
                len(tail) >= 2
                and tail[-2][1].get("role") == "assistant"
                and any(
                    isinstance(b, dict) and b.get("type") == "tool_result"
                    for b in (tail[-1][1].get("content") or [])
                    if isinstance(tail[-1][1].get("content"), list)
                )
            )
            if window.pins:
                n_pins = len(window.pins)
                what = f"{n_pins} pinned message{'s' if n_pins != 1 else ''}, never evicted"
            elif over > 1:  # no strategy keeps more than max + 1: a file's own window
                what = "the window as the file saved it (no strategy keeps more than max+1)"
            else:
                what = "kept a tool pair" if pair else "kept the newest message"
            notes.append(Problem(-1, "over_max", "warning", f"max+{over}: {what}"))
        if self._strategy.name == "token-budget" and size and window.over_token_budget:
            notes.append(
                Problem(
                    -1,
                    "over_token_budget",
                    "warning",
                    f"~{window.tokens} tokens is over max_context_tokens "
                    f"({window.max_context_tokens}): the newest message (and its tool pair) "
                    "are never evicted for tokens",
                )
            )
        return notes

    def _contains(self, mid: int) -> bool:
        window = self._window
        if window.first is not None and window.first[0] == mid:
            return True
        if window.held and window.held[-1][0] == mid:
            return True
        return bool(window.tail) and window.tail[-1][0] == mid

    @property
    def step(self) -> int:
        return self._step

    @property
    def next_id(self) -> int:
        return self._next_id

    def __len__(self) -> int:
        return self._window.size

    def restore(
        self,
        messages: Sequence[tuple[int, dict[str, Any]]],
        next_id: int,
        cut: bool,
        step: int | None = None,
        pinned: Iterable[int] = (),
        held: Iterable[int] | None = None,
    ) -> None:
        """Set the window as saved (ids and messages, ``pinned`` ids), with no truncation; for
        session files. ``held``: the pinned messages the strategy had passed (no longer counted
        against max), as saved; None (a file without them): every pinned message at the front
        of the window is taken as passed.

        The messages are taken as they are (not copied): the reader owns them.
        """
        window = self._window
        window.clear()
        window.pins = set(pinned)
        self._compaction_ids = set()
        self._sent = None
        passed = set(held) if held is not None else set()
        for mid, msg in messages:
            if mid in passed and window.first is not None:
                window.held.append((mid, msg))
            else:
                window.append((mid, msg))
            if msg.get("role") == "assistant" and has_compaction(msg):
                self._compaction_ids.add(mid)
        self._window.cut = cut
        self._next_id = next_id
        self._step = step if step is not None else next_id
        first = self._window.first
        uses = self._first_uses(first[1]) if first is not None else set()
        # the pinned answers of the first message's tool call are held as they were when added
        self._first_pins = {
            mid for mid, msg in messages if mid in self._window.pins and _answers(msg, uses)
        }
        self._pins_changed(settle=held is None)

    # -- saving and reopening ------------------------------------------------------------------
    def restore_history(
        self,
        messages: Sequence[dict[str, Any]],
        metas: Sequence[dict[str, Any]],
        window: Sequence[int],
        *,
        cut: bool = False,
        added_steps: Mapping[int, int] | None = None,
        evicted_steps: Mapping[int, int] | None = None,
        step: int | None = None,
        pinned: Sequence[int] = (),
        held: Sequence[int] | None = None,
    ) -> Transcript:
        """Take a saved session at once: ``messages`` (the whole history, message ``i`` has id
        ``i``, ``metas[i]`` its metadata), the ``window`` ids (increasing), the ``pinned`` ids,
        when each message was added and evicted, the last ``step``, the pinned messages the
        strategy had passed (``held``: see :meth:`restore`); no truncation, no event.
        Returns the history as a :class:`~ctxview.core.transcript.Transcript`, attached.

        For session files (their reader checked the ids); the messages are taken as they are."""
        kept = set(window)
        added = added_steps or {}
        evicted = evicted_steps or {}
        transcript = Transcript()
        transcript.restore(
            [
                Record(i, msg, added.get(i, i + 1), None if i in kept else evicted.get(i), meta)
                for i, (msg, meta) in enumerate(zip(messages, metas, strict=True))
            ],
            list(window),
            list(pinned),
        )
        self.restore(
            [(i, messages[i]) for i in window],
            next_id=len(messages),
            cut=cut or len(kept) < len(messages),
            step=step,
            pinned=pinned,
            held=held,
        )
        transcript.attach(self)
        return transcript

    def replay_history(
        self,
        messages: Sequence[dict[str, Any]],
        metas: Sequence[dict[str, Any]],
        pinned: Iterable[int] = (),
    ) -> Transcript:
        """Add ``messages`` one by one (with their ``metas``) under this context's settings,
        recorded by a new :class:`~ctxview.core.transcript.Transcript` (returned, attached): a
        Claude Code compaction starts the conversation again at its summary, and the ids in
        ``pinned`` are pinned as they come. For session files: the messages are not copied."""
        from ctxview.core.compaction import claude_code_compaction

        transcript = Transcript(self)
        add = self.add_message
        pins = set(pinned)
        for msg, meta in zip(messages, metas, strict=True):
            if claude_code_compaction(meta) and len(self):
                # a Claude Code compaction: the conversation starts again at its summary (the
                # request model's segments; ``compacted`` in the timeline)
                mid = self.start_again(msg, meta=meta, copy=False)
            else:
                mid = add(msg, meta=meta, copy=False)
            if mid in pins:  # pinned from the start under these settings too
                with contextlib.suppress(KeyError, ValueError):
                    self.pin(mid)
        return transcript

    def session_document(
        self,
        transcript: Transcript | None = None,
        *,
        model: str | None = None,
        max_tokens: int | None = None,
        system: Any = None,
        tools: list[Any] | None = None,
        title: str | None = None,
        request_params: dict[str, Any] | None = None,
        as_sent: str | None = None,
        provider: str = "anthropic",
        wire_format: str | None = None,
        system_wire: list[Any] | None = None,
        route: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """The ctxview session document (docs/session-format.md) of this context and its full
        history (``transcript``; the one attached last unless given): the settings, every
        message with when it was added and evicted, the window and its pins, as :meth:`save`
        writes it. ``system``: this context's system prompt unless given; ``tools``: none
        unless given; ``as_sent``: the recorded format when the session is shown as it was sent
        (reopened so). ``provider``, ``wire_format``, ``system_wire``: a session of another API
        than Anthropic's (``ctxview.core.providers``), the body format it was read from and its
        system prompt's wire messages: it reopens under its provider's rules and exports its
        body. ``route``: where a Gemini session's requests went (``{"api", "streamed"}``, as
        :class:`~ctxview.core.providers.base.Route` holds it): its tokens are estimated so."""
        from ctxview.core.clearing import DEFAULT_EDITING
        from ctxview.core.session_file import document, record_item

        history = self.transcript if transcript is None else transcript
        if not isinstance(history, Transcript):
            raise ValueError(_NO_HISTORY)
        records = [
            record_item(rec.id, rec.message, rec.meta, rec.added_step, rec.evicted_step)
            for rec in history.records
        ]
        settings: dict[str, Any] = {
            "model": model,
            "max_tokens": max_tokens,
            "max_context_messages": self.max_context_messages,
            "strategy": self.strategy,
            "max_context_tokens": self.max_context_tokens,
            "low_water_fraction": self.low_water_fraction,
            "system_prompt": system if system is not None else self.system_prompt,
            "tools": tools or [],
            "request_params": request_params or {},
        }
        if as_sent:
            settings["as_sent"] = as_sent
        if provider != "anthropic":
            settings["provider"] = provider
            settings["wire_format"] = wire_format
            if system_wire:
                settings["system_wire"] = system_wire
            if route is not None:
                settings["route"] = route
        if self.edits_messages or self.context_editing != DEFAULT_EDITING:
            settings["context_editing"] = self.context_editing.to_dict()
        pins = self.pinned_ids
        held = [e[0] for e in self._window.held]
        return document(
            title=title,
            settings=settings,
            step=self.step,
            records=records,
            window={
                "ids": self.window_ids,
                "cut": self._window.cut,
                # which pinned messages the strategy had passed: reopened exactly there
                **({"pinned": pins, "held": held} if pins or held else {}),
            },
        )

    def save(
        self,
        path: str | os.PathLike[str],
        *,
        model: str = "",
        max_tokens: int | None = None,
        tools: Iterable[ToolUnionParam] | None = None,
        request_params: Mapping[str, Any] | None = None,
        title: str | None = None,
        force: bool = False,
    ) -> None:
        """Write this context and its full history (``ctx.transcript``: attach a
        :class:`~ctxview.core.transcript.Transcript` before the first add) to ``path`` in the
        ctxview session format, which the app opens (``ctxview FILE``) and :meth:`load` reopens
        as it is now: every message with when it was added and evicted, the window, pins,
        settings and strategy (by name), the system prompt and tools (this context's unless
        ``tools`` is given). ``model``, ``max_tokens`` and ``request_params`` are recorded for
        the next request the app would send.

        The file is written atomically (a crash leaves the old file or the new one, never half)
        and never with the ANTHROPIC_API_KEY value in it (ValueError, nothing written). The file
        this context was loaded from is not replaced unless ``force=True``; nor is a directory,
        FIFO or device, and no folder is created (:class:`~ctxview.core.atomic.WriteRefused`, an
        ``OSError`` naming the path). ValueError when the context has no history."""
        from ctxview.core.atomic import WriteRefused, check_output
        from ctxview.core.session_file import write_session_file

        if not isinstance(self.transcript, Transcript):
            raise ValueError(_NO_HISTORY)
        doc = self.session_document(
            model=model or None,
            max_tokens=max_tokens,
            tools=list(self.tools) if tools is None else tools_value(tools),
            title=title,
            request_params=dict(request_params or {}),
        )
        try:
            check_output(path, (self.loaded_from,), force=force)
            write_session_file(path, doc, make_parents=False)
        except WriteRefused as exc:
            # the reason alone is the app's and the commands' (they show the path beside it);
            # raised out of a library call, it names the file itself
            spath = os.fspath(path)
            hint = " (save(..., force=True) replaces it)" if exc.errno == errno.EEXIST else ""
            raise WriteRefused(spath, f"{spath}: {exc.reason}{hint}", exc.errno or 0) from None

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Self:
        """The context saved at ``path`` (by :meth:`save`, the app, or any ctxview session
        file), reopened as it was saved: the same window, evictions and their steps, pins,
        settings and strategy (a strategy of your own must be registered under its saved name
        first), its system prompt and tools; its history is ``ctx.transcript``.

        :class:`~ctxview.core.jsonfile.SessionError` when the file cannot be read or is not a
        ctxview session: one sentence naming the file and the place (the line and column of
        bad JSON, the JSON path of a bad value, a newer version, an unknown strategy)."""
        from ctxview.core.gc_pause import gc_paused
        from ctxview.core.session_file import read_session_file

        spath = os.fspath(path)
        with gc_paused():  # (100,000 messages load in about half the time)
            return cls._from_saved(spath, read_session_file(spath))

    @classmethod
    def _from_saved(cls, spath: str, saved: SavedSession) -> Self:
        from ctxview.core.jsonfile import SessionError

        if saved.recorded_requests is not None:
            raise SessionError(
                f"{spath}: is a proxy recording (a list of requests, not one context): "
                f"open it in the app, ctxview {spath}"
            )
        ctx = cls(
            saved.max_context_messages or DEFAULT_MAX_CONTEXT_MESSAGES,
            system_text(saved.system),
            saved.strategy or DEFAULT_STRATEGY,
            max_context_tokens=saved.max_context_tokens or DEFAULT_MAX_CONTEXT_TOKENS,
            low_water_fraction=saved.low_water_fraction or DEFAULT_LOW_WATER_FRACTION,
            context_editing=saved.context_editing,
            tools=saved.tools,
        )
        if isinstance(saved.system, list):
            # the blocks as saved (cache_control and all): what is sent and counted
            ctx._window.set_system_prompt(saved.system)
        if saved.window is not None:
            ctx.restore_history(
                saved.messages,
                saved.metas,
                saved.window,
                cut=saved.cut,
                added_steps=saved.added_steps,
                evicted_steps=saved.evicted_steps,
                step=saved.step,
                pinned=saved.pinned,
                held=saved.held,
            )
        else:
            ctx.replay_history(saved.messages, saved.metas, saved.pinned)
        ctx.loaded_from = spath
        return ctx
