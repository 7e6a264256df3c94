"""A literal, line-by-line port of the Java ``ConversationContext`` (the benchmark baseline).

Each truncation rebuilds the list, as ``_truncateIfNeeded`` does in Java. Tests use it as the
oracle for the ``seed`` strategy.
"""

from __future__ import annotations

from typing import Any


class LiteralJavaContext:
    def __init__(self, max_context_messages: int = 20) -> None:
        self.max_context_messages = max_context_messages
        self.messages: list[dict[str, Any]] = []

    def add_user_message(self, content: str) -> None:
        self.messages.append({"role": "user", "content": content})
        self._truncate_if_needed()

    def add_assistant_message(self, content: list[Any]) -> None:
        # Java: content.stream().map(ContentBlock::toParam); the same conversion as ours
        from ctxview.core.context import block_to_dict

        self.messages.append({"role": "assistant", "content": [block_to_dict(b) for b in content]})
        self._truncate_if_needed()

    def add_message(self, message: dict[str, Any]) -> None:
        self.messages.append(message)
        self._truncate_if_needed()

    def _truncate_if_needed(self) -> None:
        max_ = self.max_context_messages
        if len(self.messages) <= max_:
            return
        first = self.messages[0]
        # Java: new ArrayList<>(messages.subList(size - (max - 1), size))
        tail = list(self.messages[len(self.messages) - (max_ - 1) : len(self.messages)])
        self.messages.clear()
        self.messages.append(first)
        self.messages.extend(tail)
