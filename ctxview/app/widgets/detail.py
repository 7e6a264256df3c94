"""Block detail: the selected message's blocks in full, problems inline, usage where known."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from rich.text import Text
from textual.containers import VerticalScroll
from textual.content import Content
from textual.highlight import highlight
from textual.widget import Widget
from textual.widgets import Collapsible, Static

from ctxview.app.model import GAP, Draft, SessionModel
from ctxview.app.safe import literal, marked, visible
from ctxview.core.ledger import Compaction
from ctxview.core.tokens import estimate_message, image_info
from ctxview.core.usage import prompt_terms
from ctxview.textfmt import fmt_tokens, id_ranges, one_line, plural, tokens_text


def compaction_text(c: Compaction) -> Text:
    """The ledger entry of one compaction, in words (session text made visible)."""
    what = "Claude Code compaction" if c.kind == "claude-code" else "compaction block"
    trigger = f" · trigger: {visible(c.trigger)}" if c.trigger else ""
    before = "not recorded" if c.tokens_before is None else f"{fmt_tokens(c.tokens_before)}"
    after = "not recorded" if c.tokens_after is None else f"{fmt_tokens(c.tokens_after)}"
    gone = c.replaced
    n = len(gone)
    replaced = (
        f"replaced {id_ranges(list(gone))} ({plural(n, 'message')})"
        if n
        else "replaced nothing in this file"
    )
    summary = f" · summary: #{c.summary_id}" if c.summary_id is not None else ""
    return Text(
        f"{what} before #{c.id}{trigger}\n"
        f"tokens before: {before} · after (the next request's recorded input): {after}\n"
        f"{replaced}{summary}"
    )


MAX_SHOWN_CHARS = 50_000  #: longer text is cut in the pane (the session keeps it all)


def _cut(text: str) -> str:
    if len(text) <= MAX_SHOWN_CHARS:
        return text
    return text[:MAX_SHOWN_CHARS] + f"\n… ({len(text) - MAX_SHOWN_CHARS:,} more characters)"


def _short(sig: str, keep: int = 10) -> str:
    return sig if len(sig) <= 2 * keep + 1 else f"{sig[:keep]}…{sig[-keep:]} ({len(sig)} chars)"


def _json(value: Any) -> Content:
    try:
        text = json.dumps(value, ensure_ascii=False, indent=2)
    except (TypeError, ValueError, RecursionError):
        text = (
            repr(value)[:MAX_SHOWN_CHARS] if not isinstance(value, (dict, list)) else "(too deep)"
        )
    return marked(highlight(visible(_cut(text)), language="json"))


class BlockDetail(VerticalScroll, can_focus=True):
    """Everything in one message, block by block."""

    DEFAULT_CSS = """
    BlockDetail { background: $surface; padding: 0 1; }
    BlockDetail .head { text-style: bold; color: $text; margin-bottom: 1; }
    BlockDetail .block-title { color: $primary; text-style: bold; margin-top: 1; }
    BlockDetail .block-title.-error { color: $error; }
    BlockDetail .problem { color: $error; background: $error 10%; padding: 0 1; margin-bottom: 1; }
    BlockDetail .warning { color: $warning; background: $warning 10%; padding: 0 1; margin-bottom: 1; }
    BlockDetail .usage { color: $text-muted; }
    BlockDetail .fix { color: $success; background: $success 10%; padding: 0 1; margin-bottom: 1; }
    BlockDetail .hint { color: $text-muted; text-style: italic; }
    BlockDetail .body { padding-left: 2; }
    BlockDetail Collapsible { padding: 0; margin: 0; border: none; background: $surface; }
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.model: SessionModel | None = None
        self.mid: int | None = None
        self._draft_view: tuple[Draft, Static, Static] | None = None
        self._shown_key: tuple[Any, ...] | None = None

    def show_selected(
        self, model: SessionModel, mid: int | None, *, marker: int | None, on_draft: bool
    ) -> None:
        """What the timeline's cursor is on: the reply draft, a compaction ledger marker (what
        the compaction did), or message ``mid`` (None: the system prompt)."""
        if on_draft and model.draft is not None:
            self._shown_key = None
            self.show_draft(model.draft)
            return
        if marker is not None:
            key_m = (id(model), "ledger", marker, len(model.transcript))
            if key_m != self._shown_key:
                self._shown_key = key_m
                self.show_compaction(model.compaction_at(marker))
            return
        # rebuilding the pane costs a remount: skip it when what it shows has not changed
        key = (
            id(model),
            mid,
            model.status(mid) if mid is not None else None,
            tuple(p.message for p in model.problems_for(mid)) if mid is not None else (),
            model.context.system_prompt if mid is None else None,
            id(model.transcript[mid].message) if mid is not None else None,  # edits
        )
        if key == self._shown_key:
            return
        self._shown_key = key
        self.show(model, mid)

    def show(self, model: SessionModel | None, mid: int | None) -> None:
        self.model = model
        self.mid = mid
        self._draft_view = None
        self.remove_children()
        if model is None or mid is None:
            if model is not None and not model.rows:
                hint = "No messages yet: type one below and press enter."
            elif model is not None and GAP in model.rows:
                hint = "No message selected. A gap row stands for messages that left the window."
            else:
                hint = "No message selected."
            self.mount(Static(Text(hint), classes="hint"))
            return
        self.mount_all(list(self._widgets(model, mid)))
        self.scroll_home(animate=False)

    def show_compaction(self, c: Compaction | None) -> None:
        """A compaction ledger marker: trigger, tokens before and after, what it replaced."""
        self.model = None
        self.mid = None
        self._draft_view = None
        self.remove_children()
        if c is None:
            self.mount(Static(Text("No message selected."), classes="hint"))
            return
        out: list[Widget] = [Static(compaction_text(c), classes="head")]
        if c.kind == "claude-code":
            hint = (
                "Claude Code summarised the conversation and started again from the summary: "
                "the requests after it hold the summary and what followed, not the messages it "
                "replaced (marked compacted)."
            )
        else:
            hint = (
                "A compaction block (server-side compaction, context_management): the API "
                "ignores everything before the last one (those messages are marked compacted)."
            )
        out.append(Static(Text(hint), classes="hint"))
        self.mount_all(out)
        self.scroll_home(animate=False)

    def show_draft(self, draft: Draft) -> None:
        """The reply in flight (or the one that did not complete).

        While it streams, the same widgets are updated in place: a chunk costs one re-render,
        not a remount of the pane.
        """
        state = {
            "streaming": "streaming…",
            "incomplete": "incomplete: not added to the context",
            "cancelled": "cancelled: not added to the context",
            "failed": "failed: not added to the context",
        }
        head = Text(f"reply · {state.get(draft.state, draft.state)}")
        body = literal(_cut(draft.text)) if draft.text else Text("(no text yet)")
        if draft.thinking:
            body = Text.assemble(
                Text("thinking:\n", style="bold"),
                literal(_cut(draft.thinking), style="italic"),
                "\n\n",
                body,
            )
        current = self._draft_view
        if (
            current is not None
            and current[0] is draft
            and current[1].is_attached
            and not draft.reason
        ):
            current[1].update(head)
            current[2].update(body)
            if self.scroll_offset.y >= self.max_scroll_y - 2:
                self.call_after_refresh(self.scroll_end, animate=False)
            return
        self.mid = None
        self.remove_children()
        head_w = Static(head, classes="head")
        body_w = Static(body, classes="body")
        widgets: list[Widget] = [head_w]
        if draft.reason:
            widgets.append(Static(Text(visible(draft.reason)), classes="problem"))
        widgets.append(body_w)
        self.mount_all(widgets)
        self._draft_view = (draft, head_w, body_w)

    def _widgets(self, model: SessionModel, mid: int) -> list[Widget]:
        rec = model.transcript[mid]
        msg = rec.message
        status = model.status(mid)
        out: list[Widget] = []
        head = Text.assemble(
            (f"#{mid} ", "bold"),
            (str(msg.get("role", "?")), "bold"),
            " · ",
            (
                status,
                {
                    "pinned": "bold",
                    "evicted": "italic",
                    "compacted": "italic",
                    "cleared": "bold",
                }.get(status, ""),
            ),
            f" · {tokens_text(model.tokens(mid))}",
        )
        ts = rec.meta.get("timestamp")
        if isinstance(ts, str):
            head.append(f" · {visible(ts)}")
        if status == "evicted" and rec.evicted_step is not None:
            head.append(f" · evicted at step {rec.evicted_step}", style="italic")
        if status == "compacted":
            cc = model.claude_code_compaction_of(mid)
            head.append(
                f" · replaced by Claude Code's compaction at #{cc.id}: the requests after it "
                "held its summary instead"
                if cc is not None
                else " · before the last compaction block: the API ignores it (not checked, "
                "not billed)",
                style="italic",
            )
        out.append(Static(head, classes="head"))
        problems = model.problems_for(mid)
        for p in problems:
            cls = "problem" if p.severity == "error" else "warning"
            out.append(
                Static(
                    Text(f"{'✗' if p.severity == 'error' else '⚠'} {p.code}: {visible(p.message)}"),
                    classes=cls,
                )
            )
        if any(p.severity == "error" for p in problems):
            out.append(self._fix(model, mid))
        original = rec.meta.get("original")
        original_title = "original (as recorded, not sent)"
        sent = model.sent_message(mid)
        if sent is not None:
            # context editing: what is sent is an edited copy; the record keeps the original
            out.append(
                Static(
                    Text(
                        f"cleared by context editing ({model.context.strategy}): the blocks below "
                        f"are what is sent ({tokens_text(estimate_message(sent))}); the original "
                        f"as recorded ({tokens_text(model.tokens(mid))}) is underneath"
                    ),
                    classes="hint",
                )
            )
            original, msg = msg, sent
            original_title = "original (as recorded; context editing does not send it)"
        elif original is not None:
            out.append(
                Static(
                    Text(
                        "edited: the blocks below are what is sent; the original as recorded is "
                        "underneath (u undoes an edit made in this session)"
                    ),
                    classes="hint",
                )
            )
        meta = rec.meta
        if meta.get("inserted_by"):
            out.append(
                Static(
                    Text(
                        "added by repair: not in the recorded session, sent after the message "
                        "before it (u undoes a repair made in this session)"
                    ),
                    classes="hint",
                )
            )
        if meta.get("compact_boundary") is not None:
            cb = meta["compact_boundary"]
            desc = ", ".join(f"{k}={v}" for k, v in cb.items()) if isinstance(cb, Mapping) else ""
            out.append(
                Static(Text(f"── compaction boundary ({visible(desc)}) ──"), classes="warning")
            )
        if meta.get("compact_summary"):
            out.append(
                Static(
                    Text(
                        "This message is Claude Code's compaction summary of the history before it."
                    ),
                    classes="hint",
                )
            )
        if meta.get("is_meta"):
            out.append(
                Static(
                    Text("Marked isMeta: text injected by the client, not typed by the user."),
                    classes="hint",
                )
            )
        if meta.get("forked_history"):
            out.append(
                Static(
                    Text(
                        "Replayed from the parent thread: this forked thread sends it, but its "
                        "usage was the parent's request."
                    ),
                    classes="hint",
                )
            )
        usage = meta.get("usage")
        if isinstance(usage, Mapping):
            out.append(Static(Text(self._usage(usage, model.session.provider)), classes="usage"))
        content = msg.get("content")
        if isinstance(content, str):
            out.append(Static(Text("text", style="bold"), classes="block-title"))
            out.append(Static(literal(_cut(content)), classes="body"))
            if original is not None:
                out.append(self._original(original, original_title, sent is None))
            return out
        if not isinstance(content, list):
            out.append(Static(Text("(no content)"), classes="hint"))
            return out
        for j, block in enumerate(content):
            out.extend(self._block(model, mid, j, block))
        if original is not None:
            out.append(self._original(original, original_title, sent is None))
        return out

    @staticmethod
    def _fix(model: SessionModel, mid: int) -> Widget:
        """The fix ``r`` applies to this message's errors (core/repair.py), named."""
        from ctxview.core.repair import fix_summary

        follow = model.checker.rules.results_follow_call
        # its places as the request body numbers them (a Chat body's system messages count)
        lines = [
            f"fix (r): {visible(model.replay.wire_text(fix_summary(p, follow)))}"
            for p in model.problems_for(mid)
            if p.severity == "error"
        ]
        return Static(Text("\n".join(lines)), classes="fix")

    @staticmethod
    def _original(
        original: Any, title: str = "original (as recorded, not sent)", collapsed: bool = True
    ) -> Widget:
        label: Any = Content(title)
        return Collapsible(
            Static(_json(original), classes="body"), title=label, collapsed=collapsed
        )

    @staticmethod
    def _usage(u: Mapping[str, Any], provider: str = "anthropic") -> str:
        """The usage the API reported, in its own terms: OpenAI and Gemini report a prompt and
        the cached part of it (the written part ctxview keeps for OpenAI is its own model of the
        cache, not what the API said)."""
        if provider != "anthropic" and (terms := prompt_terms(u)) is not None:
            prompt, cached, out = terms
            return f"API usage: prompt {prompt:,} ({cached:,} cached) · output {out:,}"
        parts = []
        for key, label in (
            ("input_tokens", "input"),
            ("output_tokens", "output"),
            ("cache_read_input_tokens", "cache read"),
            ("cache_creation_input_tokens", "cache write"),
        ):
            v = u.get(key)
            if isinstance(v, int):
                parts.append(f"{label} {v:,}")
        return "API usage: " + (" · ".join(parts) if parts else "(none reported)")

    def _title(self, text: str, error: bool = False) -> Static:
        return Static(Text(visible(text)), classes="block-title -error" if error else "block-title")

    def _block(self, model: SessionModel, mid: int, j: int, block: Any) -> list[Widget]:
        if not isinstance(block, Mapping):
            return [self._title(f"[{j}] ?"), Static(_json(block), classes="body")]
        t = str(block.get("type", "?"))
        role = model.transcript[mid].message.get("role")
        tok = tokens_text(model.block_tokens(block, role if isinstance(role, str) else "user"))
        if t == "text":
            out: list[Widget] = [self._title(f"[{j}] text · {tok}")]
            out.append(Static(literal(_cut(str(block.get("text", "")))), classes="body"))
            if block.get("citations"):
                out.append(Static(_json(block["citations"]), classes="body"))
            return out
        if t in ("tool_use", "server_tool_use"):
            title = f"[{j}] {t} {visible(str(block.get('name', '?')))} · id {visible(str(block.get('id', '?')))} · {tok}"
            hint = (
                "t: jump to its tool_result"
                if model.partner(mid) is not None
                else "no tool_result yet"
            )
            agent = model.replay.subagent_for(str(block.get("id"))) if t == "tool_use" else None
            if agent is not None:
                hint += f" · enter: open its sub-agent ({one_line(agent.label, 60)})"
            return [
                self._title(title),
                Static(_json(block.get("input", {})), classes="body"),
                Static(Text(hint), classes="hint"),
            ]
        if t == "tool_result":
            err = bool(block.get("is_error"))
            title = f"[{j}] tool_result{' ✗ error' if err else ''} · for {visible(str(block.get('tool_use_id', '?')))} · {tok}"
            out = [self._title(title, err)]
            c = block.get("content", "")
            if isinstance(c, str):
                out.append(Static(literal(_cut(c)), classes="body"))
            elif isinstance(c, list):
                for k, sub in enumerate(c):
                    out.extend(self._block(model, mid, k, sub))
            else:
                out.append(Static(_json(c), classes="body"))
            partner = model.partner(mid)
            out.append(
                Static(
                    Text(
                        f"t: jump to its tool_use (#{partner}) · backspace: back"
                        if partner is not None
                        else "its tool_use is not in this transcript"
                    ),
                    classes="hint",
                )
            )
            return out
        if t == "thinking":
            sig = str(block.get("signature", ""))
            thinking = str(block.get("thinking", ""))
            label = Content(
                f"[{j}] thinking · {len(thinking):,} chars · {tok} · signature {visible(_short(sig))}"
            )
            # a Content title is shown literally (a str title would be parsed as markup)
            label_any: Any = label
            return [
                Collapsible(
                    Static(literal(_cut(thinking)), classes="body"),
                    title=label_any,
                    collapsed=False,
                )
            ]
        if t == "redacted_thinking":
            data = str(block.get("data", ""))
            return [
                self._title(f"[{j}] redacted thinking · {tok}"),
                Static(Text(visible(_short(data, 24))), classes="body"),
            ]
        if t in ("image", "document"):
            info = image_info(block) if t == "image" else {}
            src = block.get("source") if isinstance(block.get("source"), Mapping) else {}
            assert isinstance(src, Mapping)
            parts = [f"source {visible(str(src.get('type', '?')))}"]
            mt = src.get("media_type")
            if mt:
                parts.append(f"media type {visible(str(mt))}")
            if info.get("bytes") is not None:
                parts.append(f"{info['bytes']:,} bytes")
            elif isinstance(src.get("data"), str):
                parts.append(f"{len(src['data']) * 3 // 4:,} bytes")
            if info.get("width"):
                parts.append(f"{info['width']}×{info['height']} px")
            if src.get("url"):
                parts.append(f"url {visible(str(src['url']))}")
            return [
                self._title(f"[{j}] {t} · {tok}"),
                Static(Text(" · ".join(parts)), classes="body"),
            ]
        if t == "compaction":
            return [
                self._title(f"[{j}] compaction · {tok}"),
                Static(literal(_cut(str(block.get("content", "")))), classes="body"),
            ]
        return [
            self._title(f"[{j}] {visible(t)} · {tok}"),
            Static(_json(dict(block)), classes="body"),
        ]
