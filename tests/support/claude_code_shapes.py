"""Claude Code transcripts written by hand in the shapes real files have: the fields, the
``parentUuid`` links and the order of lines of Claude Code 2.1.x (the recorded files in
``tests/acceptance/claude_code`` show the same fields), for the shapes no recorded file here has:

* :func:`manual_compact` — a ``/compact`` as 2.1.2xx writes it: the ``compact_boundary`` system
  line (``parentUuid: null``, ``logicalParentUuid``: the pre-compaction line), the summary
  (``isCompactSummary``, ``isVisibleInTranscriptOnly``) under it, then the command's caveat,
  command and output lines hanging off the *pre-compaction* line, and the next prompt under them;
* :func:`dangling_progress` — a ``progress`` line whose ``parentUuid`` names a line the file does
  not have, and the rest of the conversation hanging off it;
* :func:`with_subagent` — a main session whose ``Task`` tool call started a sub-agent, and the
  sub-agent's own transcript (``<session>/subagents/agent-<id>.jsonl``).

Each returns the records (dicts); :func:`write` puts them in a file.
"""

from __future__ import annotations

import json
import zlib
from pathlib import Path
from typing import Any

VERSION = "2.1.219"
SESSION = "6f1c2a9e-3b7d-4e21-9a55-0c8d2e4f7b13"
MODEL = "claude-opus-4-5-20251101"


class Writer:
    """Records of one session, with uuids and timestamps counted up."""

    def __init__(self, session: str = SESSION, sidechain: bool = False, agent: str | None = None):
        self.records: list[dict[str, Any]] = []
        self.session = session
        self.sidechain = sidechain
        self.agent = agent
        self.n = 0
        self.seconds = 0

    def uuid(self) -> str:
        self.n += 1
        tag = zlib.crc32(f"{self.session}/{self.agent}".encode())
        return f"{self.n:08x}-0000-4000-8000-{tag:012x}"

    def ts(self, gap: int = 3) -> str:
        self.seconds += gap
        m, s = divmod(self.seconds, 60)
        h, m = divmod(m, 60)
        return f"2026-11-20T1{h}:{m:02d}:{s:02d}.000Z"

    def base(self, kind: str, parent: str | None, gap: int = 3) -> dict[str, Any]:
        rec: dict[str, Any] = {
            "parentUuid": parent,
            "isSidechain": self.sidechain,
            "userType": "external",
            "cwd": "/home/user/project",
            "sessionId": self.session,
            "version": VERSION,
            "gitBranch": "main",
        }
        if self.agent:
            rec["agentId"] = self.agent
        rec.update(type=kind, uuid=self.uuid(), timestamp=self.ts(gap))
        return rec

    def add(self, rec: dict[str, Any]) -> str:
        self.records.append(rec)
        return str(rec["uuid"])

    def user(self, parent: str | None, content: Any, **extra: Any) -> str:
        rec = self.base("user", parent)
        rec["message"] = {"role": "user", "content": content}
        rec.update(extra)
        return self.add(rec)

    def assistant(
        self,
        parent: str | None,
        blocks: list[dict[str, Any]],
        usage: tuple[int, int, int] | None,
        mid: str,
        gap: int = 5,
    ) -> str:
        """One response, one line per block (as Claude Code writes it), the usage on each."""
        last = parent
        for b in blocks:
            rec = self.base("assistant", last, gap)
            gap = 1
            msg: dict[str, Any] = {
                "model": MODEL,
                "id": mid,
                "type": "message",
                "role": "assistant",
                "content": [b],
                "stop_reason": None,
                "stop_sequence": None,
            }
            if usage is not None:
                inp, read, write = usage
                msg["usage"] = {
                    "input_tokens": inp,
                    "cache_creation_input_tokens": write,
                    "cache_read_input_tokens": read,
                    "cache_creation": {
                        "ephemeral_5m_input_tokens": 0,
                        "ephemeral_1h_input_tokens": write,
                    },
                    "output_tokens": 40,
                    "service_tier": "standard",
                }
            rec["message"] = msg
            rec["requestId"] = f"req_{mid}"
            last = self.add(rec)
        assert last is not None
        return last

    def progress(self, parent: str | None, tool_use_id: str) -> str:
        rec = self.base("progress", parent, 1)
        rec.update(
            data={"type": "hook_progress", "hookEvent": "PostToolUse", "hookName": "PostToolUse"},
            parentToolUseID=tool_use_id,
            toolUseID=tool_use_id,
        )
        return self.add(rec)

    def tool_round(
        self, parent: str, k: int, usage: tuple[int, int, int], text: str = "x" * 400
    ) -> str:
        """A response calling a tool (``Read``), and its result."""
        tid = f"toolu_{self.agent or 'main'}_{k:04d}"
        a = self.assistant(
            parent,
            [
                {"type": "text", "text": f"Reading file {k}."},
                {"type": "tool_use", "id": tid, "name": "Read", "input": {"file_path": f"/f{k}"}},
            ],
            usage,
            f"msg_{self.agent or 'main'}_{k:04d}",
        )
        r = self.user(
            a,
            [{"tool_use_id": tid, "type": "tool_result", "content": f"{k}: {text}"}],
            toolUseResult={"type": "text", "file": {"filePath": f"/f{k}"}},
            sourceToolAssistantUUID=a,
        )
        return r


def write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))
    return path


def grow(w: Writer, parent: str, rounds: int, start: int, total: int, step: int) -> str:
    """``rounds`` tool rounds, each request billing ``step`` more than the last (cache hits)."""
    body = ("lorem ipsum dolor sit amet " * (step // 6))[: step * 4 - 120]
    for k in range(rounds):
        parent = w.tool_round(parent, start + k, (3, total, step), body)
        total += step
    return parent


def manual_compact(pre_rounds: int = 12, post_rounds: int = 6) -> list[dict[str, Any]]:
    """A session compacted by ``/compact`` in the 2.1.2xx shape; the request after it billed the
    summary, not the history."""
    w = Writer()
    u = w.user(None, "Refactor the parser module.")
    last = grow(w, u, pre_rounds, 0, 20_000, 3_000)
    pre = w.assistant(
        last, [{"type": "text", "text": "Done with the parser."}], (3, 56_000, 400), "msg_pre"
    )
    boundary = w.base("system", None, 40)
    boundary.update(
        subtype="compact_boundary",
        content="Conversation compacted",
        isMeta=False,
        level="info",
        logicalParentUuid=pre,
        compactMetadata={"trigger": "manual", "preTokens": 56_500},
    )
    w.add(boundary)
    w.user(
        boundary["uuid"],
        "This session is being continued from a previous conversation that ran out of context. "
        "The summary below covers the earlier portion of the conversation.\n\nSummary:\n"
        + "The user asked to refactor the parser. "
        * 40,
        isVisibleInTranscriptOnly=True,
        isCompactSummary=True,
    )
    caveat = w.user(
        pre,
        "<local-command-caveat>Caveat: The messages below were generated by the user while "
        "running local commands. DO NOT respond to these messages or otherwise consider them in "
        "your response unless the user explicitly asks you to.</local-command-caveat>",
        isMeta=True,
    )
    command = w.user(
        caveat,
        "<command-name>/compact</command-name>\n            <command-message>compact"
        "</command-message>\n            <command-args></command-args>",
    )
    stdout = w.user(
        command,
        "<local-command-stdout>\x1b[2mCompacted (ctrl+o to see full summary)\x1b[22m"
        "</local-command-stdout>",
    )
    prompt = w.user(stdout, "Now add tests for the parser.")
    # after the compaction: system + tools (18,000) + the summary and what follows
    grow(w, prompt, post_rounds, 100, 19_500, 1_200)
    return w.records


def preserved_compact(logical_parent: str = "tail") -> list[dict[str, Any]]:
    """A compaction that kept its last messages verbatim (``compactMetadata.preservedSegment``,
    2.1.x): the kept lines are written *before* the boundary, the first of them hanging off the
    summary written after it; the boundary's ``logicalParentUuid`` is the kept segment's tail
    (``logical_parent="tail"``) or the line before the segment (``"before"``)."""
    w = Writer()
    u = w.user(None, "Port the tokenizer.")
    last = grow(w, u, 8, 0, 20_000, 3_000)
    before = w.assistant(last, [{"type": "text", "text": "Ported."}], (3, 44_000, 300), "msg_pre")
    summary_uuid = "5a5a5a5a-0000-4000-8000-00000000cafe"
    head = w.user(summary_uuid, "Keep the old API as a shim.")
    tail = w.assistant(head, [{"type": "text", "text": "Shim kept."}], (3, 44_300, 200), "msg_kept")
    boundary = w.base("system", None, 40)
    boundary.update(
        subtype="compact_boundary",
        content="Conversation compacted",
        isMeta=False,
        level="info",
        logicalParentUuid=tail if logical_parent == "tail" else before,
        compactMetadata={
            "trigger": "auto",
            "preTokens": 44_600,
            "postTokens": 1_700,
            "durationMs": 10_550,
            "preservedSegment": {"headUuid": head, "anchorUuid": summary_uuid, "tailUuid": tail},
            "preservedMessages": {"anchorUuid": summary_uuid, "uuids": [head, tail]},
        },
    )
    w.add(boundary)
    summary = w.base("user", boundary["uuid"])
    summary.update(
        uuid=summary_uuid,
        message={
            "role": "user",
            "content": "This session is being continued from a previous conversation that ran "
            "out of context. The summary below covers the earlier portion of the conversation."
            + " The tokenizer was ported."
            * 30,
        },
        isCompactSummary=True,
    )
    w.add(summary)
    prompt = w.user(tail, "Now benchmark it.")
    grow(w, prompt, 4, 200, 19_800, 1_000)
    return w.records


def dangling_progress(rounds: int = 30) -> list[dict[str, Any]]:
    """A long tool loop; late in it a ``progress`` line names a parent the file does not have,
    and the last rounds hang off that progress line."""
    w = Writer()
    u = w.user(None, "Audit every module.")
    last = grow(w, u, rounds, 0, 20_000, 2_000)
    lost_parent = "ffffffff-dead-4000-8000-000000000000"
    p = w.progress(lost_parent, f"toolu_main_{rounds - 1:04d}")
    grow(w, p, 2, rounds, 20_000 + 2_000 * rounds, 2_000)
    del last
    return w.records


def with_subagent(
    folder: Path, sidecar: bool = False, link: bool = True, beside: bool = False
) -> tuple[Path, Path]:
    """``<folder>/<session>.jsonl`` whose ``Task`` tool call ran a sub-agent, and the sub-agent's
    ``<folder>/<session>/subagents/agent-<id>.jsonl`` (with its ``agent-<id>.meta.json`` when
    ``sidecar``; ``link=False``: the tool_result records no ``agentId``, as 1.0.x wrote it;
    ``beside``: ``<folder>/agent-<id>.jsonl``, as 2.0 wrote it)."""
    agent_id = "a1b2c3d"
    prompt = "Find every caller of parse() and list them."
    w = Writer()
    u = w.user(None, "Who calls parse()?")
    tid = "toolu_task_0001"
    a = w.assistant(
        u,
        [
            {"type": "text", "text": "I'll ask an agent to search."},
            {
                "type": "tool_use",
                "id": tid,
                "name": "Task",
                "input": {
                    "description": "Find callers",
                    "subagent_type": "general-purpose",
                    "prompt": prompt,
                },
            },
        ],
        (3, 0, 20_000),
        "msg_main_task",
    )
    answer = "parse() is called from cli.py and app.py."
    r = w.user(
        a,
        [
            {
                "tool_use_id": tid,
                "type": "tool_result",
                "content": [{"type": "text", "text": answer}],
            }
        ],
        toolUseResult={
            "status": "completed",
            "prompt": prompt,
            **({"agentId": agent_id} if link else {}),
            "content": [{"type": "text", "text": answer}],
            "totalDurationMs": 9000,
            "totalTokens": 12_000,
            "totalToolUseCount": 2,
            "usage": {"input_tokens": 3, "output_tokens": 80},
        },
        sourceToolAssistantUUID=a,
    )
    w.assistant(r, [{"type": "text", "text": answer}], (3, 20_000, 300), "msg_main_end")
    main = write(folder / f"{SESSION}.jsonl", w.records)
    sub = Writer(sidechain=True, agent=agent_id)
    su = sub.user(None, prompt)
    last = grow(sub, su, 2, 0, 9_000, 800)
    sub.assistant(last, [{"type": "text", "text": answer}], (3, 10_600, 200), "msg_sub_end")
    where = folder if beside else folder / SESSION / "subagents"
    agent = write(where / f"agent-{agent_id}.jsonl", sub.records)
    if sidecar:
        agent.with_suffix(".meta.json").write_text(
            json.dumps(
                {
                    "agentType": "general-purpose",
                    "description": "Find callers",
                    "toolUseId": tid,
                    "spawnDepth": 1,
                    "model": "haiku",
                }
            )
        )
    return main, agent


def first_prompt_loop(
    path: Path, version: str, first: tuple[int, int, int], second: tuple[int, int, int], read: int
) -> Path:
    """A long first prompt written by Claude Code ``version`` whose requests billed ``first``
    then ``second`` (input, cache read, cache write), then four tool rounds reading ``read``
    and 2,000 more each, writing 2,000."""
    w = Writer()
    last = w.user(None, "Review the branch. " + "context " * 3_000, version=version)
    body = "lorem ipsum dolor sit amet " * 300
    usages = [first, second, *((3, read + 2_000 * k, 2_000) for k in range(4))]
    for k, usage in enumerate(usages):
        last = w.tool_round(last, k, usage, body)
    return write(path, w.records)
