"""How closely ctxview's token estimate matches what OpenAI billed, over the recorded Chat
Completions and Responses bodies of ``tests/acceptance/openai_chat`` and ``openai_responses``
(each body's recorded response is in ``responses/`` beside it, MANIFEST.md there).

    python -m benchmarks.truth_openai                  # both sets
    python -m benchmarks.truth_openai --set held-out   # the files never tuned on
    python -m benchmarks.truth_openai --files          # a row per file as well
    python -m benchmarks.truth_openai --unseen         # tests/acceptance/unseen, never tuned on
    python -m benchmarks.truth_openai --dir DIR        # a folder laid out as the unseen set

Each body is opened with ``load_session`` and replayed as sent; its estimate is what
``ctxview inspect --json`` prints (``window.estimated_tokens``: system + tools + messages), its
truth the response's prompt tokens (``prompt_tokens``, or ``input_tokens`` of the Responses API:
cached tokens included). Printed: the median and p90 of ``|estimate - recorded| / recorded``

* over **text** bodies: measurable (below) and with no image, file or audio part;
* over **measurable** bodies: those whose estimate names nothing billed that the file does not
  show (``inspect --json``'s ``window.billed_not_in_file`` is empty: no stored response
  continued, no server-side tool or its results, no file id, PDF or image by URL);
* over the bodies **not measurable from the file** (the rest: each is in the figures, apart);
* over the bodies **billed under an earlier rule** of the API (:data:`SUPERSEDED`: recorded
  while the API billed the same body differently than it does now; apart, like the above);
* over **all** bodies with recorded usage.

The split (``held-out`` when the SHA-1 of the file name is 0 mod 4) was fixed before looking at
any figure. The Codex rollouts of ``tests/acceptance/codex`` are not measured: the real ones are
published with their text replaced (their token counts are the originals'), the others are
synthetic.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1] / "tests" / "acceptance"
#: real bodies collected after the estimate was tuned, never tuned on (INDEX.md there)
UNSEEN = ROOT / "unseen"
MEDIA = ('"image_url"', '"input_image"', '"input_file"', '"file"', '"input_audio"', '"file_data"')


#: (folder, the recorded response's model prefix, recorded from this day, and before this
#: one): requests billed under a rule the API has since dropped, which no estimate of today's
#: billing can match. The Responses API's first weeks on GPT-4o and GPT-4o mini: 18 tokens more
#: a request, about 190 more with function tools that may be called in parallel (a rendered
#: ``multi_tool_use`` namespace is 194; with ``parallel_tool_calls: false``, the 18 alone). The
#: same body, "What is the capital of France?" under "You are a helpful assistant.", was billed
#: 42 tokens on 2025-03-27 (pai_openai_responses_system_prompt_req1) and 24 on 2025-04-07
#: (pai_openai_responses_model_instructions_req1). In the tune, unseen and fresh sets, every
#: GPT-4o Responses body the file measures recorded on 2025-03-10 to 03-27 was billed 17 to 32
#: more than its estimate without function tools (16 of 18 by 17 or 18), 206 to 221 more with
#: them (10 of 11; one with handoffs 641); the last so billed is of 2025-03-28 12:05 UTC (one
#: function tool, no parallel calls: 17 more), and every one recorded since 2025-04-07 with
#: function tools (89) is within 44. The API opened on 2025-03-11 (a launch partner's
#: recordings are of 03-10): a response dated before March 2025 bears a date the API never
#: gave (a fixture's own; lmnr_test_simple_agent_req1 of fresh2, "2024-02-27", is billed as
#: today), and is measured.
SUPERSEDED = (("openai_responses", "gpt-4o", "2025-03-01", "2025-03-29"),)


def superseded(folder: str, response: dict[str, Any]) -> bool:
    """A recorded response billed under a rule of :data:`SUPERSEDED`."""
    created = response.get("created_at") or response.get("created")
    model = response.get("model")
    if not isinstance(created, (int, float)) or not isinstance(model, str):
        return False
    day = datetime.fromtimestamp(created, UTC).date().isoformat()
    return any(
        folder == f and model.startswith(m) and since <= day < before
        for f, m, since, before in SUPERSEDED
    )


def held_out(name: str) -> bool:
    return int(hashlib.sha1(name.encode()).hexdigest(), 16) % 4 == 0


def _media(body: dict[str, Any]) -> bool:
    raw = json.dumps(body)
    return any(k in raw for k in MEDIA)


def rows(root: Path = ROOT) -> list[dict[str, Any]]:
    from ctxview.core.providers.openai import usage
    from ctxview.sessions import load_session
    from ctxview.sessions.replay import replay

    out = []
    for folder in ("openai_chat", "openai_responses"):
        for path in sorted((root / folder).glob("*.json")):
            resp = root / folder / "responses" / path.name
            if not resp.exists():
                continue
            response = json.loads(resp.read_text())
            u = response.get("usage")
            recorded = usage(u) if isinstance(u, dict) else None
            if recorded is None or recorded.prompt == 0:
                continue
            body = json.loads(path.read_text())
            summary = replay(load_session(path), as_sent=True).summary()
            # a body the file cannot measure stays with those (the earlier rule adds tokens it
            # does not explain)
            shown = not summary["window"]["billed_not_in_file"]
            earlier = shown and superseded(folder, response)
            measurable = shown and not earlier
            out.append(
                {
                    "file": f"{folder}/{path.name}",
                    "estimate": summary["window"]["estimated_tokens"],
                    "recorded": recorded.prompt,
                    "measurable": measurable,
                    "superseded": earlier,
                    "text": measurable and not _media(body),
                    "held_out": held_out(path.name),
                }
            )
    return out


def _figures(rs: list[dict[str, Any]]) -> str:
    errs = sorted(abs(r["estimate"] - r["recorded"]) / r["recorded"] for r in rs)
    if not errs:
        return "no files"
    med = errs[len(errs) // 2]
    p90 = errs[int(0.9 * (len(errs) - 1))]
    return f"{len(errs):3d} bodies · median {med:6.1%} · p90 {p90:7.1%}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--set", choices=("tune", "held-out"), help="one side of the split")
    ap.add_argument("--files", action="store_true", help="a row per file as well")
    ap.add_argument(
        "--unseen",
        action="store_true",
        help="the unseen set (tests/acceptance/unseen: never tuned on) instead of the split",
    )
    ap.add_argument(
        "--dir",
        type=Path,
        help="a folder laid out as tests/acceptance/unseen (openai_chat/ and openai_responses/,"
        " each body's response under responses/): a held-out set kept outside the repository",
    )
    args = ap.parse_args(argv)
    rs = rows(args.dir or (UNSEEN if args.unseen else ROOT))
    if args.set and not (args.unseen or args.dir):
        rs = [r for r in rs if r["held_out"] == (args.set == "held-out")]
    for api in ("openai_chat", "openai_responses"):
        mine = [r for r in rs if r["file"].startswith(api + "/")]
        print(f"{api:17s} text:           {_figures([r for r in mine if r['text']])}")
        print(f"{api:17s} measurable:     {_figures([r for r in mine if r['measurable']])}")
        not_measurable = [r for r in mine if not r["measurable"] and not r["superseded"]]
        print(f"{api:17s} not measurable: {_figures(not_measurable)} (not in the file)")
        earlier = [r for r in mine if r["superseded"]]
        print(f"{api:17s} earlier rule:   {_figures(earlier)} (billed as the API no longer bills)")
        print(f"{api:17s} all:            {_figures(mine)}")
    if args.files:
        for r in rs:
            flag = (
                "text"
                if r["text"]
                else "    "
                if r["measurable"]
                else "old "
                if r["superseded"]
                else "n/m "
            )
            print(f"  {flag} {r['estimate']:>7,} vs {r['recorded']:>7,}  {r['file']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
