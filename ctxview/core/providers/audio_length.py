"""How long an audio clip lasts, read from its own header (no decoding): a WAV's format chunk
(its byte rate) and data size, an MP3's first frame header (its bit rate: a constant-rate
file's length is its size over it). OpenAI bills audio input by its length, not its bytes.
"""

from __future__ import annotations

import struct

#: MPEG audio bit rates (kbit/s) by version and layer, per the frame header's 4-bit index
#: (ISO 11172-3 and 13818-3; 0 is "free", 15 invalid)
_MPEG1 = {
    1: (0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448),
    2: (0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384),
    3: (0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320),
}
_MPEG2 = {
    1: (0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256),
    2: (0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160),
    3: (0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160),
}


def seconds(data: bytes) -> float | None:
    """The clip's length in seconds, or None when its header is not one read here."""
    if data[:4] == b"RIFF" and data[8:12] == b"WAVE":
        return _wav_seconds(data)
    return _mp3_seconds(data)


def _wav_seconds(data: bytes) -> float | None:
    at, byte_rate = 12, 0
    while at + 8 <= len(data):
        chunk, size = data[at : at + 4], struct.unpack("<I", data[at + 4 : at + 8])[0]
        if chunk == b"fmt " and at + 20 <= len(data):
            byte_rate = struct.unpack("<I", data[at + 16 : at + 20])[0]
        elif chunk == b"data":
            # a streamed WAV states an unknown size (0xFFFFFFFF): the bytes present count
            present = len(data) - at - 8
            return min(size, present) / byte_rate if byte_rate else None
        at += 8 + size + (size & 1)
    return None


def _mp3_seconds(data: bytes) -> float | None:
    start = 0
    if data[:3] == b"ID3" and len(data) >= 10:  # a tag before the first frame: its size
        b = data[6:10]
        start = 10 + (b[0] << 21 | b[1] << 14 | b[2] << 7 | b[3])
    head = data[start : start + 4]
    if len(head) < 4 or head[0] != 0xFF or head[1] & 0xE0 != 0xE0:
        return None
    version, layer = (head[1] >> 3) & 3, 4 - ((head[1] >> 1) & 3)
    index = head[2] >> 4
    if version == 1 or layer == 4 or not 0 < index < 15:
        return None
    kbps = (_MPEG1 if version == 3 else _MPEG2)[layer][index]
    return (len(data) - start) * 8 / (kbps * 1000)
