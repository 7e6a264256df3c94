from __future__ import annotations

import base64
import struct
import time
import zlib

from ctxview import ConversationContext
from ctxview.core import tokens


def png(w: int, h: int) -> str:
    ihdr = struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0)
    chunk = b"IHDR" + ihdr
    data = (
        b"\x89PNG\r\n\x1a\n"
        + struct.pack(">I", len(ihdr))
        + chunk
        + struct.pack(">I", zlib.crc32(chunk))
    )
    return base64.b64encode(data + b"\x00" * 64).decode()


def test_text_is_chars_over_four() -> None:
    assert tokens.estimate_content("a" * 400) == 100
    assert tokens.estimate_content("a" * 401) == 101
    assert (
        tokens.estimate_message({"role": "user", "content": "a" * 400})
        == 100 + tokens.MESSAGE_OVERHEAD_TOKENS
    )


def test_image_formula_from_png_header() -> None:
    block = {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": png(750, 100)},
    }
    assert tokens.block_tokens(block) == 100
    info = tokens.image_info(block)
    assert (info["width"], info["height"], info["media_type"]) == (750, 100, "image/png")


def test_large_image_is_scaled() -> None:
    block = {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": png(3136, 3136)},
    }
    assert tokens.block_tokens(block) == (1568 * 1568 + 749) // 750


def test_unknown_image_fixed() -> None:
    block = {"type": "image", "source": {"type": "url", "url": "https://x/y.png"}}
    assert tokens.block_tokens(block) == tokens.IMAGE_FALLBACK_TOKENS


def test_tool_use_and_result_are_json_chars() -> None:
    assert (
        tokens.block_tokens({"type": "tool_use", "name": "abcd", "input": {"k": "v"}}) == 4
    )  # 4 + 9 chars
    assert tokens.block_tokens({"type": "tool_result", "tool_use_id": "x", "content": "a" * 8}) == 2


def test_window_estimate_is_cached() -> None:
    ctx = ConversationContext(max_context_messages=200_000, system_prompt="s" * 40)
    for _ in range(100_000):
        ctx.add_user_message("x" * 40)
    t0 = time.perf_counter()
    first = ctx.estimated_tokens
    cold = time.perf_counter() - t0
    assert first == 10 + 100_000 * (10 + tokens.MESSAGE_OVERHEAD_TOKENS)
    t0 = time.perf_counter()
    for _ in range(100):
        assert ctx.estimated_tokens == first
    warm = (time.perf_counter() - t0) / 100
    assert warm < cold  # the running total makes re-estimation O(1)
    ctx.add_user_message("x" * 4)
    assert ctx.estimated_tokens == first + 1 + tokens.MESSAGE_OVERHEAD_TOKENS


def test_thinking_with_its_display_omitted_counts_its_signature() -> None:
    # an empty thinking text with a signature: the signature carries the thinking the API bills
    omitted = {"type": "thinking", "thinking": "", "signature": "S" * 4000}
    shown = {"type": "thinking", "thinking": "t" * 400, "signature": "S" * 4000}
    assert tokens.block_tokens(omitted) == 1000
    assert tokens.block_tokens(shown) == 100
    assert tokens.block_tokens({"type": "thinking", "thinking": ""}) == 0


def test_calibration_features_count_an_omitted_thinking_by_its_signature() -> None:
    from ctxview.core.calibrate import message_features

    msg = {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "", "signature": "S" * 3000},
            {"type": "thinking", "thinking": "abc", "signature": "S" * 3000},
        ],
    }
    assert message_features(msg)[4] == 3003
