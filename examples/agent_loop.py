"""A complete agent loop on the anthropic SDK, its memory a ctxview ConversationContext.

    ANTHROPIC_API_KEY=... python examples/agent_loop.py --save run.json "What is 1234 * 5678 + 42?"
    ctxview run.json        # then see what the window held, evicted and sent
    python examples/agent_loop.py --resume run.json --save run.json "And times 2?"

The SDK reads ``ANTHROPIC_API_KEY`` and ``ANTHROPIC_BASE_URL`` from the environment (the tests run
this file against a loopback fake of the Messages API). It type-checks under ``mypy --strict``
as it is: no cast, no ignore comment.
"""

from __future__ import annotations

import argparse
import sys

import anthropic
from anthropic.types import Message, TextBlockParam, ToolParam, ToolResultBlockParam

from ctxview import ContextEvent, ConversationContext, ProtocolError, SessionError, Transcript

MAX_TOKENS = 1024

SYSTEM: list[TextBlockParam] = [
    {
        "type": "text",
        "text": "You are a careful calculator. Use the tools for every operation.",
        # kept as it is: ctxview sends the blocks back with their cache_control
        "cache_control": {"type": "ephemeral"},
    }
]


def _number_schema(what: str) -> ToolParam:
    return {
        "name": what,
        "description": f"{what.capitalize()} two numbers.",
        "input_schema": {
            "type": "object",
            "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
            "required": ["a", "b"],
        },
    }


TOOLS: list[ToolParam] = [_number_schema("add"), _number_schema("multiply")]


def run_tool(name: str, tool_input: object) -> tuple[str, bool]:
    """The tool's result as text, and whether it is an error."""
    if not isinstance(tool_input, dict):
        return "input must be an object", True
    a, b = tool_input.get("a"), tool_input.get("b")
    if not isinstance(a, (int, float)) or not isinstance(b, (int, float)):
        return "a and b must be numbers", True
    if name == "add":
        return repr(a + b), False
    if name == "multiply":
        return repr(a * b), False
    return f"unknown tool {name!r}", True


def log_eviction(event: ContextEvent) -> None:
    if event.kind == "evicted":
        print(f"[ctxview] evicted {list(event.ids)} (~{event.tokens} tokens)", file=sys.stderr)


def agent(
    client: anthropic.Anthropic,
    question: str,
    *,
    model: str,
    ctx: ConversationContext | None = None,
    max_turns: int = 10,
) -> tuple[ConversationContext, str]:
    """Ask ``question`` with the tools, going on in ``ctx`` (a context reopened by
    ``ConversationContext.load``) or a new one; returns the context and the answer's text."""
    if ctx is None:
        ctx = ConversationContext(
            max_context_messages=12, system_prompt=SYSTEM, strategy="pair-safe", tools=TOOLS
        )
        Transcript(ctx)  # the full history, for ctx.save: attach it before the first add
    ctx.subscribe(log_eviction)
    ctx.add_user_message(question)
    answer = ""
    for _ in range(max_turns):
        # check=True: a window the API would reject raises ProtocolError here, not a 400 there
        response: Message = client.messages.create(
            **ctx.request(model=model, max_tokens=MAX_TOKENS, check=True)
        )
        ctx.add_response(response)  # content, with usage, id and stop reason as its meta
        answer = "".join(b.text for b in response.content if b.type == "text")
        if response.stop_reason != "tool_use":
            break
        results: list[ToolResultBlockParam] = []
        for block in response.content:
            if block.type == "tool_use":
                text, is_error = run_tool(block.name, block.input)
                results.append(
                    {
                        "type": "tool_result",
                        "tool_use_id": block.id,
                        "content": text,
                        "is_error": is_error,
                    }
                )
        ctx.add_tool_results(results)
    return ctx, answer


def send_typed(client: anthropic.Anthropic, ctx: ConversationContext, model: str) -> Message:
    """The same request with every argument typed: the window's messages, system prompt and
    tools are the SDK's param types, no cast needed."""
    return client.messages.create(
        model=model,
        max_tokens=MAX_TOKENS,
        system=ctx.system_prompt,
        messages=ctx.messages,
        tools=ctx.tools,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("question", nargs="?", default="What is 1234 * 5678 + 42?")
    parser.add_argument("--model", default="claude-sonnet-4-5")
    parser.add_argument("--save", metavar="PATH", help="save the session for ctxview")
    parser.add_argument("--resume", metavar="PATH", help="go on from a session saved by --save")
    args = parser.parse_args(argv)
    try:
        # the window, evictions, pins, settings and tools as they were saved
        resumed = ConversationContext.load(args.resume) if args.resume else None
    except SessionError as exc:  # names the file and the place
        print(f"cannot resume: {exc}", file=sys.stderr)
        return 2
    client = anthropic.Anthropic()  # ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL
    try:
        ctx, answer = agent(client, args.question, model=args.model, ctx=resumed)
    except ProtocolError as exc:
        print(f"not sent: {exc}", file=sys.stderr)
        return 1
    print(answer)
    print(f"[ctxview] window {len(ctx)} messages, ~{ctx.estimated_tokens} tokens", file=sys.stderr)
    if args.save:
        # atomic, never the API key; replacing the session it resumed from is said with force
        ctx.save(args.save, model=args.model, max_tokens=MAX_TOKENS, force=args.save == args.resume)
    return 0


if __name__ == "__main__":
    sys.exit(main())
