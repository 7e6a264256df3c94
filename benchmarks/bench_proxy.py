"""The recording proxy's overhead against the loopback fake Messages API.

Time to first streamed text via the proxy and direct (the real AsyncAnthropic client,
alternating, after a warm-up): the median of the paired differences. Then 200 concurrent
streams through the proxy: every reply arrives, each the reply to its own request, and the
recording holds all of them, each matched. Then one growing conversation of 300 requests, sent
once with one key and once with a new key on every request (rotating bearer tokens): each
record is redacted once, so the second costs what the first does. The fake and ``ctxview proxy
--no-tui --record`` run as separate processes, as a user runs them.
"""

from __future__ import annotations

import asyncio
import json
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import anthropic

from benchmarks.common import Bench, Figure, report, say, test_helper_path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_port(port: int, timeout: float = 15) -> None:
    end = time.time() + timeout
    while time.time() < end:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise SystemExit(f"nothing listens on {port}")


async def ttft(client: anthropic.AsyncAnthropic, text: str) -> float:
    t0 = time.perf_counter()
    async with client.messages.stream(
        model="claude-bench", max_tokens=16, messages=[{"role": "user", "content": text}]
    ) as stream:
        async for event in stream:
            if event.type == "text":
                dt = time.perf_counter() - t0
                break
        else:
            raise RuntimeError("no text")
        async for _ in stream:
            pass
    return dt * 1000


async def one_stream(client: anthropic.AsyncAnthropic, k: int) -> tuple[int, str]:
    async with client.messages.stream(
        model="claude-bench",
        max_tokens=16,
        messages=[{"role": "user", "content": f"concurrent stream {k}"}],
    ) as stream:
        return k, "".join([t async for t in stream.text_stream])


async def conversation(proxy_url: str, n: int, rotate: bool) -> tuple[float, float]:
    """(wall seconds, slowest request in ms) of one conversation of ``n`` requests, each
    holding every earlier message; ``rotate``: a new API key on every request."""
    msgs: list[Any] = []
    slowest = 0.0
    t0 = time.perf_counter()
    tag = "rotating" if rotate else "one key"
    for k in range(n):
        key = f"sk-ant-bench-{tag.replace(' ', '-')}-{k if rotate else 0:06d}-0123456789"
        client = anthropic.AsyncAnthropic(api_key=key, base_url=proxy_url, max_retries=0)
        msgs.append({"role": "user", "content": f"{tag} turn {k}: " + "lorem ipsum " * 40})
        t1 = time.perf_counter()
        async with client.messages.stream(
            model="claude-bench", max_tokens=16, messages=msgs
        ) as stream:
            text = "".join([t async for t in stream.text_stream])
        slowest = max(slowest, (time.perf_counter() - t1) * 1000)
        await client.close()
        msgs.append({"role": "assistant", "content": text})
    return time.perf_counter() - t0, slowest


def recorded_lines(rec: Path) -> list[dict[str, Any]]:
    try:
        text = rec.read_text()
    except OSError:
        return []
    out = []
    for line in text.splitlines():
        try:
            item = json.loads(line)
        except json.JSONDecodeError:
            continue  # the last line, being written
        if item.get("type") == "exchange":
            out.append(item)
    return out


async def main_async(args: SimpleNamespace, fake_url: str, proxy_url: str, rec: Path) -> None:
    direct = anthropic.AsyncAnthropic(api_key="bench", base_url=fake_url, max_retries=0)
    proxied = anthropic.AsyncAnthropic(api_key="bench", base_url=proxy_url, max_retries=0)
    for _ in range(20):
        await ttft(direct, "warm up")
        await ttft(proxied, "warm up")
    d: list[float] = []
    p: list[float] = []
    for k in range(args.rounds):
        if k % 2:
            d.append(await ttft(direct, f"ttft {k}"))
            p.append(await ttft(proxied, f"ttft {k}"))
        else:
            p.append(await ttft(proxied, f"ttft {k}"))
            d.append(await ttft(direct, f"ttft {k}"))
    diffs = [b - a for a, b in zip(d, p, strict=True)]
    say(
        f"time to first text, {args.rounds} rounds each: direct median {statistics.median(d):.2f} ms "
        f"(p90 {sorted(d)[int(len(d) * 0.9)]:.2f}), proxy median {statistics.median(p):.2f} ms "
        f"(p90 {sorted(p)[int(len(p) * 0.9)]:.2f})"
    )
    report(
        Figure(
            "time to first text: proxy - direct (median of paired differences)",
            statistics.median(diffs),
            "ms",
            2.0,
        )
    )
    n = args.concurrent
    for label, client in (("direct", direct), ("proxy", proxied)):
        t0 = time.perf_counter()
        results = await asyncio.gather(
            *(one_stream(client, k) for k in range(n)), return_exceptions=True
        )
        wall = time.perf_counter() - t0
        ok = sum(
            1
            for r in results
            if isinstance(r, tuple) and r[1] == f"Fake API reply to: concurrent stream {r[0]}"
        )
        errors = [r for r in results if isinstance(r, BaseException)]
        say(
            f"{n} concurrent streams {label}: {ok}/{n} complete and matched, "
            f"{len(errors)} errors, {wall:.2f} s"
            + (f" (first error: {errors[0]!r})" if errors else "")
        )
        if label == "proxy":
            report(
                Figure(
                    f"{n} concurrent streams through the proxy: complete and matched",
                    ok,
                    "",
                    n,
                    higher_is_better=True,
                )
            )
    # the recording: appended as each request ends, by a thread of its own
    want = {f"concurrent stream {k}" for k in range(n)}
    matched = 0
    lines: list[dict[str, Any]] = []
    for _ in range(100):
        lines = recorded_lines(rec)
        matched = 0
        for r in lines:
            asked = (r.get("request") or {}).get("messages", [{}])[0].get("content")
            body = r.get("response") or {}
            texts = [b.get("text") for b in body.get("content", [])]
            if asked in want and r["complete"] and texts == [f"Fake API reply to: {asked}"]:
                matched += 1
        if matched == n:
            break
        time.sleep(0.1)
    say(f"recording: {len(lines)} requests")
    report(
        Figure(
            "concurrent requests in the recording, matched", matched, "", n, higher_is_better=True
        )
    )
    one, one_max = await conversation(proxy_url, args.turns, rotate=False)
    many, many_max = await conversation(proxy_url, args.turns, rotate=True)
    say(
        f"one conversation of {args.turns} requests: one key {one:.2f} s (slowest "
        f"{one_max:.0f} ms), a new key each {many:.2f} s (slowest {many_max:.0f} ms)"
    )
    report(
        Figure(
            f"{args.turns} requests with a new key each / with one key (wall time)",
            many / one,
            "×",
            1.5,
        )
    )


def run(b: Bench) -> None:
    args = SimpleNamespace(
        rounds=20 if b.quick else 200,
        concurrent=50 if b.quick else 200,
        turns=60 if b.quick else 300,
    )
    fake_port, proxy_port = free_port(), free_port()
    rec = b.data / "recording.jsonl"
    rec.unlink(missing_ok=True)
    fake = subprocess.Popen(
        [sys.executable, str(test_helper_path("fake_api")), str(fake_port)],
        stdout=subprocess.DEVNULL,
    )
    proxy = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "ctxview",
            "proxy",
            "--no-tui",
            "--port",
            str(proxy_port),
            "--upstream",
            f"http://127.0.0.1:{fake_port}",
            "--record",
            str(rec),
        ],
        stdout=subprocess.DEVNULL,
    )
    try:
        wait_port(fake_port)
        wait_port(proxy_port)
        asyncio.run(
            main_async(args, f"http://127.0.0.1:{fake_port}", f"http://127.0.0.1:{proxy_port}", rec)
        )
    finally:
        proxy.terminate()
        fake.terminate()
        proxy.wait(10)
        fake.wait(10)
