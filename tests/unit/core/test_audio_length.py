"""An audio clip's length read from its header: WAV (also streamed, its data size unknown) and
MP3 (its first frame's bit rate, after an ID3 tag)."""

from __future__ import annotations

import io
import struct
import wave

from hypothesis import given
from hypothesis import strategies as st

from ctxview.core.providers.audio_length import seconds


def _wav(frames: int, rate: int = 16000) -> bytes:
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(b"\0\0" * frames)
    return out.getvalue()


def test_a_wavs_length_is_its_data_over_its_byte_rate() -> None:
    assert seconds(_wav(6400)) == 0.4
    assert seconds(_wav(24000 * 3, rate=24000)) == 3.0


def test_a_streamed_wav_of_unknown_size_counts_the_bytes_it_holds() -> None:
    clip = bytearray(_wav(24000, rate=24000))
    at = clip.index(b"data")
    clip[at + 4 : at + 8] = struct.pack("<I", 0xFFFFFFFF)
    assert seconds(bytes(clip)) == 1.0


def test_an_mp3s_length_is_its_size_over_its_first_frames_bit_rate() -> None:
    # MPEG-2 layer III at 128 kbit/s (index 12): 16,000 bytes a second
    frame = bytes([0xFF, 0xF3, 0xC4, 0xC4])
    assert seconds(frame + b"\0" * 15_996) == 1.0
    # MPEG-1 layer III at 128 kbit/s (index 9) after a 6-byte ID3 tag
    tag = b"ID3\x04\x00\x00\x00\x00\x00\x06" + b"\0" * 6
    assert seconds(tag + bytes([0xFF, 0xFB, 0x90, 0x64]) + b"\0" * 31_996) == 2.0


def test_a_clip_whose_header_is_not_read_has_no_length() -> None:
    assert seconds(b"OggS" + b"\0" * 100) is None
    assert seconds(b"") is None
    assert seconds(b"RIFF\x00\x00\x00\x00WAVE") is None


@given(st.binary(max_size=64))
def test_any_bytes_give_a_length_or_none_never_an_error(tail: bytes) -> None:
    for head in (b"", b"RIFF\x00\x00\x00\x00WAVE", b"RIFF\x00\x00\x00\x00WAVEfmt ", b"ID3"):
        length = seconds(head + tail)
        assert length is None or length >= 0


@given(st.integers(1, 20_000), st.sampled_from((8000, 16000, 22050, 24000, 44100)))
def test_a_wav_of_any_size_and_rate_lasts_its_frames_over_its_rate(frames: int, rate: int) -> None:
    assert seconds(_wav(frames, rate)) == frames / rate
