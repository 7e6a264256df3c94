"""The Messages API's own parameter types, for annotations only.

ctxview's public surface is typed against the anthropic SDK's ``TypedDict`` params (so
``messages=ctx.messages`` type-checks with no cast), while the core never imports the SDK when it
runs: the names below exist for a type checker alone (``TYPE_CHECKING``), and every other core
module imports them from here, under ``TYPE_CHECKING`` too. ``.importlinter`` allows this one
module's SDK import; ``tests/unit/core/test_sdk_types.py`` checks it stays annotation-only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from typing import Any, TypeAlias

    from anthropic.types import ContentBlock as ContentBlock
    from anthropic.types import ContentBlockParam as ContentBlockParam
    from anthropic.types import Message as Message
    from anthropic.types import MessageContentParam as MessageContentParam
    from anthropic.types import MessageParam as MessageParam
    from anthropic.types import TextBlockParam as TextBlockParam
    from anthropic.types import ToolResultBlockParam as ToolResultBlockParam
    from anthropic.types import ToolUnionParam as ToolUnionParam

    #: what ``add_user_message`` and ``add_assistant_message`` take: the SDK's content (a string,
    #: block params or response blocks), or plain dicts
    Content: TypeAlias = MessageContentParam | Iterable[Mapping[str, Any]]
