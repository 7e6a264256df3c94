"""Editing the window in the TUI: repair a problem (``r``), repair everything (``R``), drop a
message pair-safely (``delete``), stub its content (``c``), undo (``u``).

Every edit goes through ConversationContext's edit API (``replace_message``, ``remove_message``,
``readmit_message``), so the transcript, the model and a saved session agree. Drops and stubs are
previewed first: the protocol verdict after the edit, the tokens it saves and the tokens the
prompt cache must write again from the first changed message.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

from ctxview.app.safe import visible
from ctxview.core.edits import EditPlan, Preview, drop_plan, preview, repair_plan, stub_plan
from ctxview.core.tokens import estimate_message
from ctxview.textfmt import fmt_tokens

if TYPE_CHECKING:
    from ctxview.app.app import CtxviewApp


@dataclass
class Change:
    mid: int
    before: dict[str, Any]
    after: dict[str, Any] | None  # None: removed from the window


@dataclass
class EditGroup:
    what: str
    changes: list[Change]


class EditPreviewScreen(ModalScreen[bool]):
    """What an edit would do: enter applies it, escape cancels."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter,y", "answer(True)", "Apply"),
        Binding("escape,n", "answer(False)", "Cancel"),
    ]
    DEFAULT_CSS = """
    EditPreviewScreen { align: center middle; }
    EditPreviewScreen > Vertical {
        width: 80%; max-width: 100; height: auto;
        background: $panel; border: thick $primary; padding: 1 2;
    }
    EditPreviewScreen .ok { color: $success; }
    EditPreviewScreen .bad { color: $error; }
    EditPreviewScreen .hint { color: $text-muted; margin-top: 1; }
    """

    def __init__(self, what: str, pv: Preview, cache_write: int, price_note: str = "") -> None:
        super().__init__()
        self.what = what
        self.pv = pv
        self.cache_write = cache_write
        self.price_note = price_note

    def compose(self) -> ComposeResult:
        pv = self.pv
        with Vertical(id="edit-preview"):
            yield Static(Text(f"Edit: {visible(self.what)}", style="bold"))
            yield Static(Text(pv.verdict()), classes="ok" if not pv.errors_after else "bad")
            for p in pv.errors_after[:3]:
                yield Static(Text(f"  {p.code}: {visible(p.message)}"), classes="bad")
            yield Static(
                Text(
                    f"tokens: ~{fmt_tokens(pv.tokens_before)} → ~{fmt_tokens(pv.tokens_after)} "
                    f"(saves ~{fmt_tokens(pv.tokens_saved)})"
                )
            )
            yield Static(
                Text(
                    f"prompt cache: ~{fmt_tokens(self.cache_write)} tokens written again "
                    "(everything from the first changed message on)"
                )
            )
            if self.price_note:
                yield Static(Text(self.price_note))
            yield Static(Text("enter: apply · escape: cancel · u undoes it later"), classes="hint")

    def action_answer(self, value: bool) -> None:
        self.dismiss(value)


class Editor:
    """The app's edits and their undo stack (unlimited within the session)."""

    def __init__(self, app: CtxviewApp) -> None:
        self.app = app
        self.undo_stack: list[EditGroup] = []

    def reset(self) -> None:
        self.undo_stack.clear()

    # -- planning -------------------------------------------------------------------------------
    def _selected(self) -> int | None:
        mid = self.app.timeline.selected_id
        if mid is None:
            self.app.notify("select a message first", markup=False)
            return None
        if not self.app.model.transcript.in_window(mid):
            self.app.notify(
                f"#{mid} is not in the window: only window messages are sent and edited",
                markup=False,
            )
            return None
        return mid

    def cache_write(self, plan: EditPlan) -> int:
        """Estimated tokens from the first message the plan changes to the end of the window:
        what the prompt cache must write again after the edit."""
        model = self.app.model
        first = min(plan.changes)
        total = 0
        for i in model.window_ids:
            if i < first:
                continue
            if i in plan.changes:
                new = plan.changes[i]
                total += estimate_message(new) if new is not None else 0
            else:
                total += model.tokens(i)
        return total

    # -- actions --------------------------------------------------------------------------------
    def repair_selected(self) -> None:
        mid = self.app.timeline.selected_id
        model = self.app.model
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
        self._apply_now(plan)

    def repair_all(self) -> None:
        model = self.app.model
        if not model.error_ids():
            self.app.notify("no protocol errors in the window: nothing to repair", markup=False)
            return
        entries = model.context.entries()
        self._apply_now(
            repair_plan(
                entries, model.system, checker=model.checker, keys=model.check_keys(entries)
            )
        )

    def _apply_now(self, plan: EditPlan) -> None:
        if plan.empty:
            self.app.notify(
                f"cannot repair here: {visible(plan.reason)}", severity="warning", markup=False
            )
            return
        self.apply(plan)
        n = len(plan.fixes)
        self.app.notify(
            f"repaired ({n} fix{'es' if n != 1 else ''}): {visible(plan.what)} · u undoes",
            title="repair",
            markup=False,
            timeout=6,
        )

    def drop_selected(self) -> None:
        mid = self._selected()
        if mid is not None:
            self._preview(drop_plan(self.app.model.context.entries(), mid))

    def stub_selected(self) -> None:
        mid = self._selected()
        if mid is not None:
            self._preview(stub_plan(self.app.model.context.entries(), mid))

    def _preview(self, plan: EditPlan) -> None:
        if plan.empty:
            self.app.notify(f"nothing to do: {visible(plan.reason)}", markup=False)
            return
        model = self.app.model
        entries = model.context.entries()
        pv = preview(
            entries,
            plan,
            model.system,
            checker=model.checker,
            tokens_before=model.sum_ids(model.window_ids),
            keys=model.check_keys(entries),
        )

        def answered(ok: bool | None) -> None:
            if ok:
                self.apply(plan)
                self.app.notify(
                    f"{visible(plan.what)} · saved ~{fmt_tokens(pv.tokens_saved)} tokens · u undoes",
                    markup=False,
                    timeout=5,
                )

        write = self.cache_write(plan)
        self.app.push_screen(
            EditPreviewScreen(plan.what, pv, write, self.price_note(write, pv.tokens_saved)),
            answered,
        )

    def price_note(self, write: int, saved: int) -> str:
        """The edit's price on the next request (core/pricing.py): the rewritten suffix is a
        5-minute cache write instead of a cache read, and the saved tokens are not sent."""
        from ctxview.config import price_overrides
        from ctxview.core.pricing import PriceTable

        model = self.app.model.model
        try:
            price = PriceTable(price_overrides(self.app.config)).get(model)
        except ValueError:
            price = PriceTable().get(model)
        if price is None:
            return f"price: no price known for {visible(model)} (config.toml [pricing] sets one)"
        kept = max(0, write)
        extra = kept * (price.cache_write_5m - price.cache_read) - max(0, saved) * price.cache_read
        return (
            f"next request: ~{fmt_tokens(kept)} tokens written to the cache instead of read "
            f"(${kept * price.cache_write_5m / 1e6:.4f} vs ${kept * price.cache_read / 1e6:.4f}"
            f"): {'+' if extra >= 0 else '-'}${abs(extra) / 1e6:.4f} at {visible(model)} prices; "
            "later requests read the shorter prefix"
        )

    # -- applying and undoing -------------------------------------------------------------------
    def apply(self, plan: EditPlan) -> None:
        model = self.app.model
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

    def undo(self) -> None:
        if not self.undo_stack:
            self.app.notify("nothing to undo", markup=False)
            return
        group = self.undo_stack.pop()
        ctx = self.app.model.context
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
        self.app.notify(f"undone: {visible(group.what)}", markup=False, timeout=4)

    def _changed(self, ids: list[int]) -> None:
        app = self.app
        keep = app.timeline.selected_id
        app.exact_tokens = None
        app.context_changed(keep=keep)
        app.timeline.flash(ids)
