"""The request after a session's last message, as the request model prices it: what ``inspect``
and the app's sidebar size (the window as it stands), beside the window's messages.

``simulate`` prices each request of the file with the tools + system of its segment and model,
its messages as sent at that point (a Claude Code microcompaction's cleared results, a Codex
rollout's hosted searches at what its usage measured, their results unbilled after an
interrupt: :func:`~.points.cleared_tokens`), what they carry in the current turn (a Codex
response's recorded reasoning: :class:`~.types.TurnCarry`) and its model's tokenizer scale.
:func:`next_request` gives the same four for the request that would follow the file, so the
window's figure and the request model's are one figure (``tests/unit/app/
test_next_request_figures.py`` holds ``inspect``, the sidebar and ``requests`` to it on recorded
files).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ctxview.core.calibrate import request_static, static_starts
from ctxview.core.requests.points import (
    Calibration,
    cleared_tokens,
    provider_tokens,
    segment_starts,
)
from ctxview.core.requests.types import CALIBRATED_FORMATS, SessionLike, TurnCarry, recorded_carry


@dataclass(frozen=True)
class NextRequest:
    """What the request after the session's messages is priced with beyond its messages'
    estimates."""

    #: the tools + system of its segment and model, calibrated from the recorded usage; None
    #: where nothing was calibrated (the session's own system prompt and tools are counted)
    static: int | None = None
    #: transcript id -> tokens as the request sends it, where the request model counts it
    #: otherwise than its estimate (the file's messages as recorded)
    sent: Mapping[int, int] = field(default_factory=dict)
    #: what the window's messages carry in the current turn, as the file recorded it (None:
    #: the provider's estimate, ``TokenModel.carried_tokens``)
    carry: TurnCarry | None = None
    #: its model's tokens for the same text relative to the calibrated rates' (1: alike)
    scale: float = 1.0

    def billed(self, messages: int) -> int:
        """``messages`` (the window's tokens, what they carry included) at the model's scale
        (the request model scales the messages, never the tools + system)."""
        return messages if self.scale == 1.0 else round(messages * self.scale)

    def carried(self, ids: Sequence[int], n: int) -> int | None:
        """What the window of transcript ``ids`` (in order) carries by the recorded carry, as
        the request model counts it (an edit or ctxview's context editing changes no recorded
        reasoning); None where the window holds a message past the file's ``n``."""
        carry = self.carry
        if carry is None or not ids:
            return None
        prev = -1
        for i in ids:
            if not prev < i < n:
                return None
            prev = i
        return carry.ids(ids, n)


def next_request(session: SessionLike, cal: Calibration, model: str | None = None) -> NextRequest:
    """The :class:`NextRequest` of ``session`` calibrated as ``cal`` (:func:`~.points.calibrate`)
    sent to ``model`` (default the session's), as ``simulate`` prices the request after its
    last message. (Under a context-editing strategy the request model sends the window as
    ctxview's editing clears it, not as the file's own clearing did: ``sent`` is not for it.)"""
    if session.format not in CALIBRATED_FORMATS:
        return NextRequest()
    model = model or session.model
    msgs = session.messages
    n = len(msgs)
    statics = cal.statics
    static = cal.static
    if static is not None and statics and len(set(statics.values())) > 1:
        # the segment the request is in: after the last compaction start before it
        segment = max((s for s in segment_starts(session) if s < n), default=0)
        static = request_static(statics, static_starts(statics), segment, n, model, static)
    counted = provider_tokens(session, cal.rates)
    sent: dict[int, int] = {}
    cleared = cleared_tokens(
        session, cal.rates, None if counted is None else counted.estimate, cal.search_tokens
    )
    # in the order the requests apply them: a later one wins (a search measured at its
    # message, then sent as its item alone after an interrupt)
    for i in sorted(cleared):
        sent.update(cleared[i])
    found = recorded_carry(session.metas)
    carry = (
        TurnCarry(msgs, counted.carry, found)
        if found is not None and counted is not None and counted.carry is not None
        else None
    )
    return NextRequest(static, sent, carry, (cal.scales or {}).get(model, 1.0))
