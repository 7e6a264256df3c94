"""Editing the window in the TUI: repair a problem (``r``), repair everything (``A``), drop a
message pair-safely (``delete``), stub its content (``c``), pin / unpin it (``P``), undo (``u``).

Every edit goes through ConversationContext's edit API (``replace_message``, ``remove_message``,
``readmit_message``, ``pin`` / ``unpin``), so the transcript, the model and a saved session agree.
A repair that inserts a message (an answer to a call nothing answers) rebuilds the session with
it in its history (``ctxview.sessions.inserts``: ids are positions in it) and shows that one;
``u`` shows the session from before again.
Drops, stubs and pins are previewed first (``ctxview.core.edits``: ``preview`` and
``edit_cost``): the protocol verdict after the edit, the tokens it saves, the cache break it
causes with the tokens written again, and the cost difference over the next request.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

from ctxview.app.messages import ContextChanged
from ctxview.app.safe import visible
from ctxview.core.edits import (
    EditCost,
    EditPlan,
    Preview,
    drop_plan,
    edit_cost,
    preview,
    repair_plan,
    stub_plan,
)
from ctxview.textfmt import fmt_tokens

if TYPE_CHECKING:
    from textual.app import App

    from ctxview.app.model import SessionModel
    from ctxview.config import Config


@dataclass
class Change:
    mid: int
    before: dict[str, Any]
    after: dict[str, Any] | None  # None: removed from the window


_WINDOW_PLACE = re.compile(r"\bmessages\.(\d+)(?:\.content\.(\d+))?")


def timeline_places(
    text: str, window_ids: list[int], wire_place: Callable[[int, int | None], str]
) -> str:
    """``text`` (a fix's detail, whose places are the Messages API's ``messages.N.content.M``,
    N counted in the window) with each place named by its timeline row, then as the request
    body numbers it (``wire_place``): ``#14 = messages.1.content.1``. The timeline shows #14;
    messages.1 alone does not say which row that is."""

    def place(m: re.Match[str]) -> str:
        n = int(m.group(1))
        if not 0 <= n < len(window_ids):
            return m.group(0)
        block = int(m.group(2)) if m.group(2) is not None else None
        return f"#{window_ids[n]} = {wire_place(n, block)}"

    return _WINDOW_PLACE.sub(place, text)


@dataclass
class EditGroup:
    what: str
    changes: list[Change]
    #: a pin (True) or unpin (False) of ``pins``; None for message edits
    pinned: bool | None = None
    pins: tuple[int, ...] = ()
    #: a repair that inserted messages: the session shown before it (undo shows it again),
    #: and the history's length after it (messages added since would be lost: no undo then)
    before: SessionModel | None = None
    length: int = 0
    #: its id in the session after it of each message of the session before it
    new_id: list[int] = field(default_factory=list)
    #: the model's revision (:attr:`SessionModel.revision`) before and after it: undoing it
    #: while nothing else changed since brings the session back to ``rev_before``
    rev_before: int | None = None
    rev_after: int | None = None


def saved_words(saved: int, *, past: bool = False) -> str:
    """``saves ~31`` / ``adds ~1`` (a stub longer than a tiny result) / ``same size``."""
    if saved == 0:
        return "same size" if not past else "same size in tokens"
    verb = ("saved" if saved > 0 else "added") if past else ("saves" if saved > 0 else "adds")
    return f"{verb} ~{fmt_tokens(abs(saved))}" + (" tokens" if past else "")


class EditPreviewScreen(ModalScreen[bool]):
    """What an edit would do: enter applies it, escape cancels."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter,y", "answer(True)", "Apply"),
        Binding("escape,n", "answer(False)", "Cancel"),
    ]
    DEFAULT_CSS = """
    EditPreviewScreen { align: center middle; }
    EditPreviewScreen > Vertical {
        width: 80%; max-width: 100; height: auto; max-height: 100%; overflow-y: auto;
        background: $panel; border: thick $primary; padding: 1 2;
    }
    EditPreviewScreen .ok { color: $text-success; }
    EditPreviewScreen .bad { color: $text-error; }
    EditPreviewScreen .problem { text-wrap: nowrap; text-overflow: ellipsis; }
    EditPreviewScreen .hint { color: $text-muted; margin-top: 1; }
    """

    def __init__(self, what: str, pv: Preview, price: EditCost, note: str = "") -> None:
        super().__init__()
        self.what = what
        self.pv = pv
        self.price = price
        self.note = note

    def compose(self) -> ComposeResult:
        pv = self.pv
        with Vertical(id="edit-preview"):
            yield Static(Text(f"Edit: {visible(self.what)}", style="bold"))
            if self.note:
                yield Static(Text(visible(self.note)))
            yield Static(Text(pv.verdict()), classes="ok" if not pv.errors_after else "bad")
            for p in pv.errors_after[:3]:
                yield Static(Text(f"  {p.code}: {visible(p.message)}"), classes="bad problem")
            yield Static(
                Text(
                    # the window's messages, as the sidebar's "messages" figure: the request
                    # total above the timeline also counts the system prompt and the tools
                    f"message tokens: ~{fmt_tokens(pv.tokens_before)} → "
                    f"~{fmt_tokens(pv.tokens_after)} "
                    f"({saved_words(pv.tokens_saved)})"
                )
            )
            for line in self.price.lines():
                yield Static(Text(visible(line)))
            yield Static(Text("enter: apply · escape: cancel · u undoes it later"), classes="hint")

    def action_answer(self, value: bool) -> None:
        self.dismiss(value)


class Editor:
    """The edits of the open session (``model``) and their undo stack (unlimited within the
    session). The app passes the selected message to each action; after a change the editor
    posts :class:`~ctxview.app.messages.ContextChanged`. ``app`` serves the dialogs, notices
    and messages (Textual's services only); ``chat_busy`` tells when a reply is in flight (a
    repair that rebuilds the session waits for it)."""

    def __init__(
        self,
        app: App[Any],
        model: SessionModel,
        config: Config,
        chat_busy: Callable[[], bool] = lambda: False,
    ) -> None:
        self.app = app
        self.model = model
        self.config = config
        self.chat_busy = chat_busy
        self.undo_stack: list[EditGroup] = []
        #: the session an insert (or its undo) asked the app to show: its edits go on
        self._swapping: SessionModel | None = None

    def show(self, model: SessionModel) -> None:
        """Another session is shown: its edits start afresh (unless it is the one an insert or
        its undo put in place)."""
        self.model = model
        if model is self._swapping:
            self._swapping = None
            return
        self.undo_stack.clear()

    # -- planning -------------------------------------------------------------------------------
    def _selected(self, mid: int | None) -> int | None:
        if mid is None:
            self.app.notify("select a message first", markup=False)
            return None
        if not self.model.transcript.in_window(mid):
            self.app.notify(
                f"#{mid} is not in the window: only window messages are sent and edited",
                markup=False,
            )
            return None
        return mid

    def price(self, plan: EditPlan, kept_tokens: int = 0) -> EditCost:
        """The plan over the next request (``ctxview.core.edits.edit_cost``), at the session's
        model's prices (config.toml [pricing] on top of the list prices)."""
        from ctxview.config import price_overrides
        from ctxview.core.providers.registry import price_table

        model = self.model
        try:
            table = price_table(price_overrides(self.config))
        except ValueError:
            table = price_table()
        entries = model.context.entries()
        pred = model.cache_prediction
        if pred is not None and getattr(pred.rates, "calibrated", False):
            # the request model's estimates (calibrated on a recorded session), so the preview
            # prices the next request as the sidebar's cache line does
            from ctxview.core.calibrate import message_features

            rates = pred.rates

            def estimate(m: Mapping[str, Any]) -> int:
                return int(rates.tokens(message_features(m)))

            return edit_cost(
                entries,
                plan,
                # the next request's tools + system (its segment's and model's), as the sidebar
                # counts it; the file's median until the session's own are counted
                static_tokens=model.overhead_tokens
                if model.calibrated_static is not None
                else pred.static_tokens,
                model=model.model,
                prices=table,
                kept_tokens=kept_tokens,
                estimate=estimate,
                ttl=pred.ttl,
            )
        return edit_cost(
            entries,
            plan,
            static_tokens=model.overhead_tokens,
            model=model.model,
            prices=table,
            tokens=[model.tokens(i) for i, _ in entries],
            kept_tokens=kept_tokens,
            ttl=pred.ttl if pred is not None else "5m",
        )

    # -- actions --------------------------------------------------------------------------------
    def repair_selected(self, mid: int | None) -> None:
        model = self.model
        if mid is None or not any(p.severity == "error" for p in model.problems_for(mid)):
            if model.error_ids():
                self.app.notify(
                    "no protocol error on this message: n jumps to the next one, A repairs "
                    "the whole window",
                    markup=False,
                )
            else:
                self.app.notify("no protocol errors in the window: nothing to repair", markup=False)
            return
        entries = model.context.entries()
        plan = repair_plan(
            entries, model.system, only=mid, checker=model.checker, keys=model.check_keys(entries)
        )
        self._apply_now(plan, mid)

    def repair_all(self, selected: int | None = None) -> None:
        model = self.model
        if not model.error_ids():
            self.app.notify("no protocol errors in the window: nothing to repair", markup=False)
            return
        entries = model.context.entries()
        self._apply_now(
            repair_plan(
                entries, model.system, checker=model.checker, keys=model.check_keys(entries)
            ),
            selected,
        )

    def _apply_now(self, plan: EditPlan, selected: int | None = None) -> None:
        """Apply a repair at once (``selected``: the message selected, followed when a new
        message moves it)."""
        if plan.empty:
            self.app.notify(
                f"cannot repair here: {visible(plan.reason)}", severity="warning", markup=False
            )
            return
        if plan.inserts and self.chat_busy():
            self.app.notify(
                "a reply is in flight: wait, or press escape to cancel it", markup=False
            )
            return
        price = self.price(plan)  # before the window changes
        # the places as the timeline numbers them (#14, the row the user sees) and as the
        # request body does (a Chat body's system messages count), read before the window
        # changes; the undo notice says the same
        plan.what = timeline_places(
            plan.what,
            [i for i, _ in self.model.context.entries()],
            self.model.replay.wire_place,
        )
        what = plan.what
        if plan.inserts:
            self._insert(plan, selected)
        else:
            self.apply(plan)
        n = len(plan.fixes)
        self.app.notify(
            f"repaired ({n} fix{'es' if n != 1 else ''}): {visible(what)} · "
            f"{visible(price.short())} · u undoes",
            title="repair",
            markup=False,
            timeout=6,
        )

    def drop_selected(self, selected: int | None) -> None:
        mid = self._selected(selected)
        if mid is not None:
            self._preview(drop_plan(self.model.context.entries(), mid))

    def stub_selected(self, selected: int | None) -> None:
        mid = self._selected(selected)
        if mid is not None:
            self._preview(stub_plan(self.model.context.entries(), mid))

    def _preview(self, plan: EditPlan) -> None:
        if plan.empty:
            self.app.notify(f"nothing to do: {visible(plan.reason)}", markup=False)
            return
        model = self.model
        entries = model.context.entries()
        pv = preview(
            entries,
            plan,
            model.system,
            checker=model.checker,
            tokens_before=model.sum_ids(model.window_ids),
            keys=model.check_keys(entries),
            errors_before=sum(1 for p in model.problems if p.severity == "error"),
        )

        def answered(ok: bool | None) -> None:
            if ok:
                self.apply(plan)
                self.app.notify(
                    f"{visible(plan.what)} · {saved_words(pv.tokens_saved, past=True)} · u undoes",
                    markup=False,
                    timeout=5,
                )

        self.app.push_screen(EditPreviewScreen(plan.what, pv, self.price(plan)), answered)

    def pin_selected(self, selected: int | None) -> None:
        """Pin the selected message (with its tool pair) or unpin it, after a preview."""
        mid = self._selected(selected)
        if mid is None:
            return
        model = self.model
        ctx = model.context
        if mid == model.transcript.pinned_id and not ctx.is_pinned(mid):
            self.app.notify("the first message is always kept: nothing to pin", markup=False)
            return
        unpin = ctx.is_pinned(mid)
        if unpin:
            ids = [i for i in ctx._unpin_group(mid) if ctx.is_pinned(i)]
        else:
            try:
                ids = [i for i in ctx.pin_group(mid) if not ctx.is_pinned(i)]
            except (KeyError, ValueError) as exc:
                self.app.notify(
                    f"cannot pin #{mid}: {visible(str(exc.args[0]))}",
                    severity="warning",
                    markup=False,
                )
                return
        label = ", ".join(f"#{i}" for i in ids)
        what = f"{'unpin' if unpin else 'pin'} {label}"
        entries = ctx.entries()
        pv = preview(
            entries,
            EditPlan(what),
            model.system,
            checker=model.checker,
            tokens_before=model.sum_ids(model.window_ids),
            keys=model.check_keys(entries),
            errors_before=sum(1 for p in model.problems if p.severity == "error"),
        )
        kept = 0 if unpin else sum(model.tokens(i) for i in ids)
        note = (
            "unpinned messages stay until the strategy evicts them at the next add"
            if unpin
            else "pinned messages stay in the window whatever the strategy evicts; a tool "
            "pair, and the user turn after a pinned reply, are pinned together"
        )

        def answered(ok: bool | None) -> None:
            if not ok:
                return
            done = ctx.unpin(mid) if unpin else ctx.pin(mid)
            if not done:
                return
            self.undo_stack.append(EditGroup(what, [], not unpin, tuple(done)))
            self._changed(list(done))
            self.app.notify(f"{what} · u undoes", markup=False, timeout=4)

        self.app.push_screen(
            EditPreviewScreen(what, pv, self.price(EditPlan(what), kept), note), answered
        )

    # -- applying and undoing -------------------------------------------------------------------
    def apply(self, plan: EditPlan) -> None:
        model = self.model
        ctx = model.context
        group = EditGroup(plan.what, [])
        for mid in sorted(plan.changes):
            new = plan.changes[mid]
            group.changes.append(Change(mid, model.transcript[mid].message, new))
            if new is None:
                ctx.remove_message(mid)
            else:
                ctx.replace_message(mid, new)
        self.undo_stack.append(group)
        self._changed([c.mid for c in group.changes])

    def _insert(self, plan: EditPlan, selected: int | None) -> None:
        """Apply a plan with new messages: the session rebuilt with them in its history, its
        other changes made there (under the ids they have there), shown instead of this one
        with the same message selected."""
        from ctxview.app.model import SessionModel
        from ctxview.sessions.inserts import with_inserts

        old = self.model
        done = with_inserts(old.replay, plan.inserts, defaults=self.config.as_defaults())
        new = SessionModel(done.session, old.path, old.model, tools=old.tools)
        new.show_evicted = old.show_evicted
        ctx = new.context
        changed = list(done.ids)
        for mid in sorted(plan.changes):
            nid = done.new_id[mid]
            msg = plan.changes[mid]
            if msg is None:
                ctx.remove_message(nid)
            else:
                ctx.replace_message(nid, msg)
            changed.append(nid)
        new.after_change()
        self.undo_stack.append(
            EditGroup(plan.what, [], before=old, length=len(new.transcript), new_id=done.new_id)
        )
        keep = done.new_id[selected] if selected is not None and selected >= 0 else None
        self._show(new, sorted(changed), keep)

    def _undo_insert(self, group: EditGroup, selected: int | None) -> None:
        """Show the session from before the repair again, under the settings chosen since (max,
        strategy, model, evicted rows shown), unless messages were added since (a chat reply, a
        followed transcript): they would be lost."""
        assert group.before is not None
        if self.chat_busy():
            self.app.notify(
                "a reply is in flight: wait, or press escape to cancel it", markup=False
            )
            return
        self.undo_stack.pop()
        if len(self.model.transcript) != group.length:
            # the edits before it name messages by the ids of the session before it: gone too
            earlier = bool(self.undo_stack)
            self.undo_stack.clear()
            self.app.notify(
                f"cannot undo {visible(group.what)}: messages were added since (undoing it "
                "would lose them)" + ("; nor the edits before it" if earlier else ""),
                severity="warning",
                markup=False,
            )
            return
        # the message selected, under its id there (a new one: the message before it)
        back = {new: old for old, new in enumerate(group.new_id)}
        keep = None
        if selected is not None and selected >= 0:
            keep = back.get(selected)
            while keep is None and selected > 0:
                selected -= 1
                keep = back.get(selected)
        before = group.before
        now = self.model
        # the settings chosen since the repair stay: only its messages are undone
        before.model = now.model
        before.show_evicted = now.show_evicted
        if before.as_sent is None and now.as_sent is None:
            ctx, cur = before.context, now.context
            if ctx.strategy != cur.strategy:
                ctx.set_strategy(cur.strategy)
            if ctx.max_context_messages != cur.max_context_messages:
                ctx.set_max_context_messages(cur.max_context_messages)
            before.after_change()
        self._show(before, [], keep)
        self.app.notify(
            f"undone: {visible(group.what)} (the session as it was before the repair)",
            markup=False,
            timeout=4,
        )

    def _show(self, model: SessionModel, flash: list[int], keep: int | None) -> None:
        from ctxview.app.messages import SessionReplaced

        model.unsaved = True
        self._swapping = model
        self.app.post_message(SessionReplaced(self.model, model, at_end=False))
        self.app.post_message(ContextChanged(flash=flash, count_stale=True, keep=keep))

    def undo(self, selected: int | None = None) -> None:
        """Undo the last edit (``selected``: the message selected, followed when the undo of a
        new message moves it)."""
        if not self.undo_stack:
            self.app.notify("nothing to undo", markup=False)
            return
        top = self.undo_stack[-1]
        if top.before is not None:
            self._undo_insert(top, selected)
            return
        group = self.undo_stack.pop()
        ctx = self.model.context
        rev = self.model.revision
        if group.pinned is not None:
            done = ctx.set_pinned(group.pins, not group.pinned)
            self._changed(list(group.pins))
            if len(done) < len(group.pins):
                gone = ", ".join(f"#{i}" for i in group.pins if i not in done)
                self.app.notify(
                    f"undone in part: {visible(group.what)} ({gone} left the window since)",
                    severity="warning",
                    markup=False,
                )
                return
            self._restore(group, rev)
            self.app.notify(f"undone: {visible(group.what)}", markup=False, timeout=4)
            return
        try:
            for c in reversed(group.changes):
                if c.after is None:
                    ctx.readmit_message(c.mid, c.before)
                else:
                    ctx.replace_message(c.mid, c.before)
        except KeyError as exc:
            self.app.notify(
                f"cannot undo {visible(group.what)}: {exc.args[0]} (it left the window since)",
                severity="warning",
                markup=False,
            )
            self._changed([c.mid for c in group.changes])
            return
        self._changed([c.mid for c in group.changes])
        self._restore(group, rev)
        self.app.notify(f"undone: {visible(group.what)}", markup=False, timeout=4)

    def _restore(self, group: EditGroup, rev: int) -> None:
        """After undoing ``group`` fully: when nothing changed since it (``rev``: the revision
        before the undo), the session is back at its revision before it, saved if that was."""
        if group.rev_before is not None and group.rev_after == rev:
            self.model.restore_revision(group.rev_before)

    def _changed(self, ids: list[int]) -> None:
        before = self.model.revision
        self.model.unsaved = True
        top = self.undo_stack[-1] if self.undo_stack else None
        if top is not None and top.before is None and top.rev_after is None:
            # the edit just pushed: the revisions it goes between
            top.rev_before, top.rev_after = before, self.model.revision
        self.app.post_message(ContextChanged(flash=ids, count_stale=True))
