"""The chat input: one line, with the history of what you sent (up / down)."""

from __future__ import annotations

from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.widgets import Input


class ChatInput(Input):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "history(-1)", "Previous message", show=False),
        Binding("down", "history(1)", "Next message", show=False),
    ]

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.history: list[str] = []
        self._pos: int | None = None
        self._draft = ""

    def remember(self, text: str) -> None:
        if text and (not self.history or self.history[-1] != text):
            self.history.append(text)
        self._pos = None

    def action_history(self, step: int) -> None:
        if not self.history:
            return
        if self._pos is None:
            if step > 0:
                return
            self._draft = self.value
            self._pos = len(self.history)
        self._pos = max(0, min(len(self.history), self._pos + step))
        self.value = self._draft if self._pos == len(self.history) else self.history[self._pos]
        self.cursor_position = len(self.value)
        if self._pos == len(self.history):
            self._pos = None
