"""The app's keys: its bindings, which of them wait while the user types, the help screen's
table of every key, and the command palette's provider."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.binding import Binding, BindingType

if TYPE_CHECKING:
    from textual.command import Provider


def palette() -> type[Provider]:
    """The command palette's provider (ctrl+p), imported when the palette first opens."""
    from ctxview.app.commands import CtxviewCommands

    return CtxviewCommands


BINDINGS: list[BindingType] = [
    Binding("ctrl+q", "quit", "Quit", priority=True),
    Binding("ctrl+o", "open", "Open"),
    Binding("ctrl+s", "save", "Save"),
    Binding("S", "save_as", "Save as", show=False),
    Binding("plus,equals_sign", "max_delta(1)", "+max", key_display="+"),
    Binding("minus", "max_delta(-1)", "-max", key_display="-"),
    Binding("e", "toggle_evicted", "Evicted"),
    Binding("s", "cycle_strategy", "Strategy", show=False),
    Binding("p", "jump_pinned", "Pinned", show=False),
    Binding("P", "pin", "Pin", show=False),
    Binding("n", "next_problem", "Problem", show=False),
    Binding("N", "previous_match", "Previous", show=False),
    Binding("slash", "search", "Search", show=False),
    Binding("t", "partner", "Tool pair", show=False),
    Binding("y", "copy_message", "Copy", show=False),
    Binding("Y", "copy_json", "Copy JSON", show=False),
    Binding("v", "view_message", "Pager", show=False),
    Binding("backspace", "jump_back", "Back", show=False),
    Binding("enter", "open_subagent", "Sub-agent", show=False),
    Binding("b", "subagent_back", "Parent", show=False),
    Binding("r", "repair", "Repair", show=False),
    Binding("A", "repair_all", "Repair all", show=False),
    Binding("delete", "drop", "Drop", show=False),
    Binding("c", "stub", "Stub", show=False),
    Binding("u", "undo", "Undo", show=False),
    Binding("x", "export", "Export", show=False),
    Binding("R", "requests", "Requests", show=False),
    Binding("C", "compare", "Compare", show=False),
    Binding("a", "as_sent", "As sent", show=False),
    Binding("d", "toggle_detail", "Detail", show=False),
    Binding("i", "focus_chat", "Chat", show=False),
    Binding("ctrl+b", "toggle_sidebar", "Sidebar", show=False),
    # priority: the chat input would eat these (go to end / delete to end of line)
    Binding("ctrl+e", "edit_system", "System", show=False, priority=True),
    Binding("ctrl+k", "count_tokens", "Count", show=False, priority=True),
    Binding("ctrl+r", "retry", "Retry", show=False),
    Binding("escape", "escape", "Cancel", show=False),
    Binding("f", "follow", "Follow", show=False),
    Binding("ctrl+l", "sessions", "Sessions", show=False),
    Binding("L", "skipped_lines", "Skipped lines", show=False),
    Binding("question_mark,f1", "help", "Help"),
]

#: actions that are plain keys: not while typing in an input
TYPING_SENSITIVE: set[str] = {
    "max_delta",
    "toggle_evicted",
    "cycle_strategy",
    "as_sent",
    "jump_pinned",
    "pin",
    "next_problem",
    "previous_match",
    "search",
    "partner",
    "copy_message",
    "copy_json",
    "view_message",
    "jump_back",
    "open_subagent",
    "subagent_back",
    "repair",
    "repair_all",
    "drop",
    "stub",
    "undo",
    "export",
    "save_as",
    "toggle_detail",
    "focus_chat",
    "help",
    "follow",
    "compare",
    "skipped_lines",
}

#: priority-bound actions: everywhere on the main screen, the chat input included
MAIN_SCREEN_ONLY: set[str] = {"edit_system", "count_tokens"}

KEYS_HELP: list[tuple[str, str]] = [
    ("j / k, ↓ / ↑", "next / previous message"),
    ("PgDn / PgUp", "page down / up"),
    ("Home / g, End / G", "first / last message"),
    ("mouse wheel, click", "scroll, select a row"),
    ("+ / -", "raise / lower max messages (live; from as sent: simulate at the config's max)"),
    ("s", "next eviction strategy (a recorded session: as sent → each strategy → as sent)"),
    ("a", "a recorded session as it was sent (back from a simulation under max / strategy)"),
    ("e", "show / hide evicted rows"),
    ("p", "jump to the first message, then to each pinned message in turn"),
    ("P", "pin / unpin the selected message (and its tool pair): never evicted (preview first)"),
    (
        "/",
        'search the timeline: words, "a phrase", tool:Bash, is:error, role:user '
        "(enter keeps it, escape clears it)",
    ),
    ("n / N", "next / previous search match (no search: next / previous protocol error)"),
    ("t", "jump from a tool_result to its tool_use (and from a tool_use to its result)"),
    ("backspace", "jump back"),
    ("enter", "open the sub-agent a Task / Agent tool call started (on the call or its result)"),
    ("b", "back from a sub-agent to the session that started it (escape too)"),
    ("y", "copy the selected message's text to the clipboard (the terminal's: OSC 52)"),
    ("Y", "copy the selected message as JSON"),
    ("v", "the selected message in your $PAGER (each block, then its JSON)"),
    (
        "r",
        "repair: apply the fix of the selected message's protocol error (an answer it inserts "
        "is a new row, 'added ·')",
    ),
    ("A", "repair all: every protocol error of the window"),
    ("delete", "drop the selected message pair-safely (preview first)"),
    ("c", "stub the selected message's tool_results or long text (preview first)"),
    ("u", "undo the last edit or repair (as many as you like)"),
    ("tab / shift+tab", "move focus between panes"),
    ("i", "focus the chat input"),
    ("enter (chat input)", "send the message"),
    ("↑ / ↓ (chat input)", "recall the messages you sent"),
    ("escape", "cancel a reply in flight / leave the chat input"),
    ("ctrl+r", "retry the last failed send (without duplicating your message)"),
    ("ctrl+k", "exact window tokens via the API's count_tokens (works in the chat input too)"),
    ("ctrl+o", "open a file"),
    (
        "ctrl+l",
        "agent sessions (Claude Code, Codex, Gemini CLI), newest first (enter opens, f opens "
        "and follows)",
    ),
    ("f", "follow the open Claude Code transcript or Codex rollout as it grows / stop"),
    ("L", "the lines of the open file that were skipped, and why"),
    (
        "ctrl+s",
        "save the session (ctxview format, atomic; asks before overwriting a file "
        "this session did not create)",
    ),
    ("S", "save as… (a new name)"),
    ("x", "export the request body ctxview would send next"),
    ("R", "requests: every API request with its predicted cache, breaks and cost"),
    ("C", "compare: every strategy on this session (errors, context kept, cost); enter applies"),
    ("ctrl+e", "edit the system prompt (works in the chat input too)"),
    ("ctrl+b", "show / hide the config sidebar"),
    ("d", "show / hide the block detail pane"),
    ("ctrl+p", "command palette (every action, themes)"),
    ("? / F1", "this help"),
    ("ctrl+q", "quit (asks first when there are unsaved changes)"),
]
