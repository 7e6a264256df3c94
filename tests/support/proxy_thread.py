"""A recording proxy on a thread and event loop of its own, in front of a loopback fake API: one
per test module (the tests' own loops come and go; this one stays). Each test reads only the
records it made (:meth:`ProxyThread.mark`, :meth:`ProxyThread.lines_since`)."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ctxview.live.proxy import Proxy
from tests.support.fake_api import FakeAPI


class ProxyThread:
    def __init__(self, upstream: str, record: Path, **kwargs: Any) -> None:
        self.record = record
        #: the ids recorded so far, and a condition to wait for more on
        self._ids: list[int] = []
        self._done = threading.Condition()
        self.proxy = Proxy(upstream, record_path=str(record), on_record=self._note, **kwargs)
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        host, port = self._call(self.proxy.start("127.0.0.1", 0))
        self.url = f"http://{host}:{port}"

    def _call(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(30)

    def flush(self) -> None:
        self.proxy.log.wait_idle(10)

    def mark(self) -> int:
        """The id the next request will get."""
        self.flush()
        return self.proxy._counter

    def _note(self, rec: Any) -> None:
        with self._done:
            self._ids.append(rec.id)
            self._done.notify_all()

    def lines_since(self, mark: int, count: int = 0) -> list[dict[str, Any]]:
        """The recording's exchange lines of requests from ``mark`` on, in id order; waits
        until ``count`` of them are recorded (a client may have its whole reply before the proxy
        has seen the upstream's end)."""
        with self._done:
            ok = self._done.wait_for(lambda: sum(i >= mark for i in self._ids) >= count, 10)
        assert ok, f"{count} records from #{mark} never came"
        self.flush()
        lines = [json.loads(x) for x in self.record.read_text().splitlines()]
        return sorted(
            (x for x in lines if x.get("type") == "exchange" and x["id"] >= mark),
            key=lambda x: x["id"],
        )

    def close(self) -> None:
        self._call(self.proxy.close())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
        self.loop.close()


def running(tmp: Path, **kwargs: Any) -> Iterator[tuple[ProxyThread, FakeAPI]]:
    api = FakeAPI().start()
    px = ProxyThread(api.url, tmp / "shared.jsonl", **kwargs)
    try:
        yield px, api
    finally:
        px.close()
        api.stop()
