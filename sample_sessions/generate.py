"""Generate the bundled sample sessions (deterministic): ``python sample_sessions/generate.py``.

Each session is built by driving the real ConversationContext, so the saved window and eviction
steps are exactly what ctxview computes live.
"""

from __future__ import annotations

import base64
import struct
import sys
import zlib
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from ctxview.core.cache_rules import min_cacheable  # noqa: E402
from ctxview.core.context import ConversationContext  # noqa: E402
from ctxview.core.tokens import estimate_tools  # noqa: E402
from ctxview.core.transcript import Transcript  # noqa: E402
from ctxview.sessions.store import save_session, session_document  # noqa: E402

T0 = datetime(2026, 11, 2, 9, 30, tzinfo=UTC)
MODEL = "claude-sonnet-5-5"

TOOLS = [
    {
        "name": "read_file",
        "description": "Read a UTF-8 text file inside the working directory.",
        "input_schema": {
            "type": "object",
            "properties": {"path": {"type": "string"}},
            "required": ["path"],
        },
    },
    {
        "name": "list_directory",
        "description": "List the entries of a directory inside the working directory.",
        "input_schema": {
            "type": "object",
            "properties": {"path": {"type": "string"}},
            "required": ["path"],
        },
    },
    {
        "name": "run_tests",
        "description": "Run the test suite and return its summary.",
        "input_schema": {"type": "object", "properties": {"filter": {"type": "string"}}},
    },
]


class Builder:
    def __init__(
        self, max_: int, system: str, strategy: str = "seed", tools: list[Any] | None = None
    ) -> None:
        self.ctx = ConversationContext(
            max_context_messages=max_, system_prompt=system, strategy=strategy
        )
        self.tr = Transcript(self.ctx)
        self.t = T0
        self.n = 0
        self.system = system
        self.cached = 0  #: the prompt tokens the last request wrote to the cache
        #: the tools' tokens: part of every request's prompt (sent before the messages)
        self.tools_tokens = estimate_tools(tools) if tools else 0

    def _meta(self, usage: dict[str, int] | None = None) -> dict[str, Any]:
        self.t += timedelta(seconds=7 + (self.n * 13) % 40)
        meta: dict[str, Any] = {"timestamp": self.t.isoformat().replace("+00:00", "Z")}
        if usage:
            meta["usage"] = usage
        return meta

    def usage(self, out: int) -> dict[str, int]:
        """What the API reports for a request of this window: below the model's minimum
        cacheable length nothing is cached (every token is plain input); above it the prefix the
        previous request wrote is read and the rest written (a breakpoint on the last message)."""
        inp = self.ctx.estimated_tokens + self.tools_tokens
        if inp < min_cacheable(MODEL)[0]:
            self.cached = 0
            return {
                "input_tokens": inp,
                "output_tokens": out,
                "cache_read_input_tokens": 0,
                "cache_creation_input_tokens": 0,
            }
        read = min(self.cached, inp)
        self.cached = inp
        return {
            "input_tokens": 0,
            "output_tokens": out,
            "cache_read_input_tokens": read,
            "cache_creation_input_tokens": inp - read,
        }

    def user(self, text: str) -> None:
        self.ctx.add_user_message(text, meta=self._meta())

    def assistant(self, *blocks: dict[str, Any], out: int = 120) -> None:
        self.n += 1
        self.ctx.add_assistant_message(list(blocks), meta=self._meta(self.usage(out)))

    def tool(self, name: str, **inp: Any) -> dict[str, Any]:
        self.n += 1
        return {
            "type": "tool_use",
            "id": f"toolu_01{self.n:04d}{name[:4]}",
            "name": name,
            "input": inp,
        }

    def results(self, *items: tuple[str, str, bool]) -> None:
        self.ctx.add_tool_results(
            [{"tool_use_id": t, "content": c, "is_error": e} for t, c, e in items],
            meta=self._meta(),
        )

    def save(self, name: str, title: str, tools: list[Any] | None = None) -> None:
        doc = session_document(
            self.ctx, self.tr, model=MODEL, max_tokens=4096, tools=tools, title=title
        )
        doc["saved_at"] = "2026-11-02T12:00:00+00:00"
        save_session(HERE / name, doc)
        print(f"{name}: {len(self.tr)} messages, window {len(self.ctx)}")


def text(t: str) -> dict[str, Any]:
    return {"type": "text", "text": t}


def agent_loop() -> None:
    b = Builder(
        14,
        "You are a careful coding agent. Use the tools to inspect the repository before answering.",
        tools=TOOLS,
    )
    b.user(
        "The test suite fails on CI with a KeyError in the config loader. Find the cause and tell me the fix."
    )
    files = [
        (
            "src/config/loader.py",
            "def load(path):\n    data = toml.load(path)\n    return data['settings']['timeout']\n",
        ),
        ("src/config/defaults.toml", "[settings]\nretries = 3\n"),
        ("tests/test_loader.py", "def test_timeout():\n    assert load('defaults.toml') == 30\n"),
        ("CHANGELOG.md", "## 2.3.0\n- moved timeout to [network]\n"),
        ("src/config/__init__.py", "from .loader import load\n"),
    ]
    tu = b.tool("list_directory", path="src/config")
    b.assistant(text("I'll start by looking at the config package."), tu)
    b.results((tu["id"], "loader.py\ndefaults.toml\n__init__.py", False))
    for path, body in files:
        tu = b.tool("read_file", path=path)
        b.assistant(text(f"Reading {path}."), tu, out=60)
        b.results((tu["id"], body, False))
    tu1 = b.tool("run_tests", filter="loader")
    tu2 = b.tool("read_file", path="src/config/network.toml")
    b.assistant(
        text("Let me run the loader tests and read the new network section at the same time."),
        tu1,
        tu2,
    )
    b.results(
        (
            tu1["id"],
            "FAILED tests/test_loader.py::test_timeout - KeyError: 'timeout'\n1 failed, 14 passed",
            False,
        ),
        (tu2["id"], "[network]\ntimeout = 30\n", False),
    )
    b.assistant(
        text(
            "Found it. Release 2.3.0 moved `timeout` from `[settings]` to `[network]` "
            "(CHANGELOG.md), but `loader.load` still reads `data['settings']['timeout']`.\n\n"
            "Fix: read `data['network']['timeout']`, falling back to the old key for old files."
        ),
        out=180,
    )
    b.user("Good. Apply the fix and run the full suite.")
    tu = b.tool("read_file", path="src/config/loader.py")
    b.assistant(text("Re-reading the loader before editing."), tu)
    b.results((tu["id"], files[0][1], False))
    tu = b.tool("run_tests")
    b.assistant(text("Running the whole suite."), tu)
    b.results((tu["id"], "15 passed in 0.84s", False))
    b.assistant(text("All 15 tests pass with the fallback in place."), out=40)
    b.user("Thanks! Summarise what changed in one line for the commit message.")
    tu = b.tool("list_directory", path=".")
    b.assistant(text("Checking the tree once more."), tu)
    b.results((tu["id"], "src\ntests\nCHANGELOG.md\npyproject.toml", False))
    tu = b.tool("read_file", path="CHANGELOG.md")
    b.assistant(text("And the changelog."), tu)
    # At max 14 the seed's cut now lands on a tool_result whose tool_use was evicted:
    # `ctxview inspect sample_sessions/agent_loop.json` exits 1 with orphan_tool_result.
    b.results((tu["id"], files[3][1], False))
    b.save("agent_loop.json", "Agent loop: a KeyError in the config loader", TOOLS)


def long_chat() -> None:
    b = Builder(20, "You are a friendly tutor. Keep answers short.")
    topics = [
        "sliding windows",
        "prompt caching",
        "tokenisers",
        "rate limits",
        "tool use",
        "streaming",
        "system prompts",
        "temperature",
        "stop sequences",
        "context length",
        "embeddings",
        "batching",
        "retries",
        "JSON mode",
        "vision",
        "evaluation",
        "latency",
        "cost",
        "fine-tuning",
        "agents",
        "memory",
        "summaries",
        "citations",
        "safety",
        "logging",
        "prefill",
        "thinking",
        "compaction",
        "pagination",
        "webhooks",
    ]
    b.user("I'm learning how LLM APIs work. Can you explain one concept at a time when I ask?")
    b.assistant(text("Of course. Name a concept and I'll explain it in a few sentences."))
    for i, topic in enumerate(topics):
        b.user(
            f"Explain {topic}, please."
            if i % 3
            else f"Next: {topic}. Why does it matter for agents?"
        )
        b.assistant(
            text(
                f"**{topic.capitalize()}** — in short: it shapes what the model sees and how you pay for it. "
                f"For an agent loop, {topic} decides how much history survives each turn "
                f"and how predictable the next request is. (Answer {i + 1} of {len(topics)}.)"
            ),
            out=90 + i,
        )
    b.save("long_chat.json", "Long chat: thirty concepts, one at a time")


def _png(w: int, h: int) -> str:
    raw = b"".join(
        b"\x00" + bytes((x * 255 // max(1, w - 1), y * 255 // max(1, h - 1), 160) * 1)
        for y in range(h)
        for x in range(w)
        if False
    )  # no pixels: header matters
    rows = b"".join(
        b"\x00" + b"".join(bytes((x * 8 % 256, y * 8 % 256, 160)) for x in range(w))
        for y in range(h)
    )
    del raw

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
    png += chunk(b"IDAT", zlib.compress(rows, 9)) + chunk(b"IEND", b"")
    return base64.b64encode(png).decode()


def thinking_image() -> None:
    b = Builder(10, "You are a data-visualisation reviewer.")
    b.ctx.add_user_message(
        "Here is the chart from our dashboard. What is wrong with it?", meta=b._meta()
    )
    b.ctx.add_message(
        {
            "role": "user",
            "content": [
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/png", "data": _png(32, 24)},
                },
                text("(the chart is attached above; it is scaled down)"),
            ],
        },
        meta=b._meta(),
    )
    b.assistant(
        {
            "type": "thinking",
            "thinking": "The user sent two user turns in a row: the API merges them. The image is a small "
            "gradient; the axes carry no labels, and the colour ramp runs red-to-green, which is hard "
            "for colour-blind readers. I should list the problems in order of impact.",
            "signature": "EqQBCkYIBxgCKkBvS2lnbmF0dXJlLWV4YW1wbGUtbm90LWEtcmVhbC1zaWduYXR1cmUtYnV0LWxvbmctZW5vdWdoLXRvLXNob3J0ZW4=",
        },
        text(
            "Three problems: no axis labels, a red-green ramp (hard for colour-blind readers), and no legend."
        ),
        out=240,
    )
    b.user("Which one first?")
    b.assistant(
        {
            "type": "redacted_thinking",
            "data": "EmwKAhgBEgy3va3pzix/LafPsn4aDFls3DW3brr8Xd8NWjyL6ZW1bHoA1WcAbm1kXp+PLkFxEu0CblNx",
        },
        text("Axis labels: without them nobody knows what is measured."),
        out=60,
    )
    for q in (
        "And the colours?",
        "Would a log scale help?",
        "Thanks, one last check: is the title fine?",
    ):
        b.user(q)
        b.assistant(
            {
                "type": "thinking",
                "thinking": f"Considering: {q}",
                "signature": "EqQBCkYIBxgCKkBzaWc=",
            },
            text(f"On '{q}': yes, with a viridis-like ramp and a clear unit in the title."),
        )
    b.save("thinking_image.json", "Thinking blocks and an image")


def tool_errors() -> None:
    b = Builder(
        14, "You are an ops assistant with read-only tools.", strategy="pair-safe", tools=TOOLS
    )
    b.user("Why did last night's backup job fail? Check the logs.")
    tu = b.tool("read_file", path="/var/log/backup.log")
    b.assistant(text("Reading the backup log."), tu)
    b.results(
        (tu["id"], "PermissionError: '/var/log/backup.log' is outside the working directory", True)
    )
    tu = b.tool("list_directory", path="logs")
    b.assistant(text("That path is not allowed. I'll look in the project's logs folder."), tu)
    b.results((tu["id"], "backup-2026-11-01.log\nbackup-2026-11-02.log", False))
    tu = b.tool("read_file", path="logs/backup-2026-11-02.log")
    b.assistant(text("Opening last night's log."), tu)
    b.results(
        (tu["id"], "FileNotFoundError: logs/backup-2026-11-02.log (rotated while reading)", True)
    )
    tu1 = b.tool("read_file", path="logs/backup-2026-11-01.log")
    tu2 = b.tool("run_tests", filter="backup")
    b.assistant(text("Trying the previous log and the backup tests together."), tu1, tu2)
    b.results(
        (
            tu1["id"],
            "02:00 start\n02:14 upload s3://backups … 403 Forbidden\n02:14 job failed",
            False,
        ),
        (tu2["id"], "TimeoutError: test run exceeded 120 s", True),
    )
    b.assistant(
        text("The upload got 403 Forbidden at 02:14: the bucket credentials were rejected.")
    )
    b.user("The credentials rotated yesterday. Anything else failing?")
    for path in ("logs/cron.log", "logs/disk.log", "logs/network.log"):
        tu = b.tool("read_file", path=path)
        b.assistant(text(f"Checking {path}."), tu)
        ok = path != "logs/disk.log"
        b.results(
            (
                tu["id"],
                "no errors in the last 24 h"
                if ok
                else "OSError: [Errno 28] No space left on device",
                not ok,
            )
        )
    b.assistant(
        text("One more: the disk log shows ENOSPC. Free space before re-running the backup.")
    )
    b.save("tool_errors.json", "Tool errors: a failed backup", TOOLS)


def untrusted_text() -> None:
    b = Builder(8, "Show every string literally.")
    b.user(
        "[@click=app.quit]click me[/] and [bold red]not red[/bold red] and a stray [/] and [$accent]x[/$accent]"
    )
    b.assistant(
        text(
            "Escapes: \x1b[31mANSI red\x1b[0m, OSC \x1b]0;pwned title\x07, bell \x07, [link=https://example.com]link[/link], [B]UPPER[/B]"
        )
    )
    b.user("Done?")
    b.assistant(text("Yes."))
    b.save("untrusted_text.json", "Untrusted text: markup and escape sequences")


if __name__ == "__main__":
    agent_loop()
    long_chat()
    thinking_image()
    tool_errors()
    untrusted_text()
