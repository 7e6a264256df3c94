"""The timeline's search bar (``/``): the query being typed, and how many messages match it."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import Input, Static

PLACEHOLDER = 'words, "a phrase", tool:Bash, is:error, role:user · enter keeps · esc clears'


class SearchBar(Horizontal):
    DEFAULT_CSS = """
    SearchBar { height: 1; background: $boost; display: none; }
    SearchBar.-shown { display: block; }
    SearchBar > #search-slash { width: 2; color: $accent; text-style: bold; }
    SearchBar > Input { border: none; height: 1; padding: 0; width: 1fr; background: $boost; }
    SearchBar > Input:focus { border: none; }
    SearchBar > #search-count { width: auto; max-width: 60%; padding: 0 1; color: $text-muted; }
    SearchBar > #search-count.-error { color: $text-error; }
    """

    def compose(self) -> ComposeResult:
        yield Static("/", id="search-slash")
        yield Input(placeholder=PLACEHOLDER, id="search-input")
        yield Static("", id="search-count")

    @property
    def input(self) -> Input:
        return self.query_one("#search-input", Input)

    def show_count(self, text: str, error: bool = False) -> None:
        count = self.query_one("#search-count", Static)
        count.set_class(error, "-error")
        count.update(Text(text))  # (a query error quotes what was typed: never markup)
