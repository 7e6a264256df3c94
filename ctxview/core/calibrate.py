"""Token estimates that learn from recorded usage.

A message is measured as characters per content kind (:data:`KINDS`: prose, code, tool inputs as
JSON, tool results, thinking) plus a fixed part (images and PDF documents, by the published
formulas in :mod:`ctxview.core.tokens`) and one framing overhead per message. :class:`Rates`
turns that into tokens; the default rates are the offline rule (4 characters a token, 4 tokens of
framing). Where a session recorded the API's usage, :func:`fit_rates` fits tokens-per-character
per kind from the growth between consecutive requests (the API billed ``R[k] - R[k-1]`` tokens
for the messages request ``k`` added), by least squares pulled towards the defaults so a
short session does not swing the rates wildly.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ctxview.core.pricing import normalise_model
from ctxview.core.tokens import MESSAGE_OVERHEAD_TOKENS, _json_len, block_tokens, thinking_chars

KINDS = ("prose", "code", "json", "tool_result", "thinking")
#: Features of a message: characters per kind, then fixed tokens (images, documents).
Features = tuple[float, float, float, float, float, float]

_CODE_MARKS = ("{", "}", "(", ")", ";", "=", "<", ">", "_", "[", "]", "/", "\\", "|", "`", "$")
_MARK_BYTES = "".join(_CODE_MARKS).encode()


def looks_like_code(text: str) -> bool:
    """Code, logs, JSON or markup rather than prose: a high share of symbol characters."""
    n = len(text)
    if n < 40:
        return False
    sample = text if n <= 2000 else text[:1000] + text[-1000:]
    # counted on the UTF-8 bytes (bytes.translate is a table look-up; str.translate with a dict
    # is 40x slower on non-ASCII text): the marks are ASCII, and no multi-byte sequence holds an
    # ASCII byte, so the count is the same
    raw = sample.encode("utf-8", "surrogatepass")
    marks = len(raw) - len(raw.translate(None, _MARK_BYTES))
    return marks / len(sample) > 0.035 or sample.count("\n    ") * 40 > len(sample)


def _text_features(text: str, acc: list[float], result: bool, classify: bool = True) -> None:
    if result:
        acc[3] += len(text)
    elif classify and looks_like_code(text):
        acc[1] += len(text)
    else:
        acc[0] += len(text)


def _block_features(
    block: Any, acc: list[float], in_result: bool = False, classify: bool = True
) -> None:
    if isinstance(block, str):
        _text_features(block, acc, in_result, classify)
        return
    if type(block) is not dict and not isinstance(block, Mapping):
        acc[2] += _json_len(block)
        return
    btype = block.get("type")
    if btype == "text":
        text = block.get("text")
        if isinstance(text, str):
            _text_features(text, acc, in_result, classify)
    elif btype == "thinking":
        acc[4] += thinking_chars(block)
    elif btype == "redacted_thinking":
        data = block.get("data")
        if isinstance(data, str):
            acc[4] += len(data)
    elif btype in ("tool_use", "server_tool_use"):
        acc[2] += len(str(block.get("name", ""))) + _json_len(block.get("input", {}))
    elif btype == "tool_result":
        content = block.get("content", "")
        if isinstance(content, list):
            for b in content:
                _block_features(b, acc, True, classify)
        elif isinstance(content, str):
            acc[3] += len(content)
        else:
            acc[3] += _json_len(content)
    elif btype in ("image", "document"):
        acc[5] += block_tokens(block)
    elif btype == "compaction":
        acc[0] += _json_len(block.get("content", ""))
    elif in_result:
        acc[3] += _json_len(block)
    else:
        acc[2] += _json_len(block)


def message_features(message: Mapping[str, Any], classify: bool = True) -> Features:
    """Characters per kind of ``message`` (and its fixed tokens). ``classify=False`` counts code
    as prose (no :func:`looks_like_code`): the same total, for rates that price every kind
    alike (:attr:`Rates.uniform`: the tokens are then the same)."""
    content = message.get("content", "")
    if type(content) is str:  # the common shapes first, without a call per block
        n = len(content)
        if classify and n >= 40 and looks_like_code(content):
            return (0.0, float(n), 0.0, 0.0, 0.0, 0.0)
        return (float(n), 0.0, 0.0, 0.0, 0.0, 0.0)
    acc = [0.0] * 6
    if isinstance(content, list):
        for b in content:
            if type(b) is dict:
                btype = b.get("type")
                if btype == "text":
                    text = b.get("text")
                    if type(text) is str:
                        if classify and len(text) >= 40 and looks_like_code(text):
                            acc[1] += len(text)
                        else:
                            acc[0] += len(text)
                        continue
                elif btype == "tool_result":
                    c = b.get("content", "")
                    if type(c) is str:
                        acc[3] += len(c)
                        continue
                elif btype == "tool_use":
                    acc[2] += len(str(b.get("name", ""))) + _json_len(b.get("input", {}))
                    continue
            _block_features(b, acc, False, classify)
    elif isinstance(content, str):
        _text_features(content, acc, False, classify)
    else:
        acc[2] += _json_len(content)
    return (acc[0], acc[1], acc[2], acc[3], acc[4], acc[5])


@dataclass(frozen=True, slots=True)
class Rates:
    """Tokens per character for each of :data:`KINDS`, and tokens of framing per message."""

    per_char: tuple[float, float, float, float, float] = (0.25, 0.25, 0.25, 0.25, 0.25)
    overhead: float = float(MESSAGE_OVERHEAD_TOKENS)
    #: True when fitted from recorded usage ("calibrated")
    calibrated: bool = False
    #: how many request-to-request deltas the fit used
    samples: int = 0

    @property
    def uniform(self) -> bool:
        """Every kind has the same rate: the split between prose and code does not matter (each
        ``f[k] * p`` is then exact for the character counts a session has, so the sums are the
        same whichever kind holds the characters)."""
        p = self.per_char
        return p[0] == p[1] == p[2] == p[3] == p[4] and p[0] in (0.25, 0.5, 0.125, 1.0)

    def tokens(self, f: Features) -> int:
        p = self.per_char
        return math.ceil(
            self.overhead
            + f[0] * p[0]
            + f[1] * p[1]
            + f[2] * p[2]
            + f[3] * p[3]
            + f[4] * p[4]
            + f[5]
        )

    def tokens_many(self, feats: Sequence[Features]) -> list[int]:
        """``[self.tokens(f) for f in feats]``, the same sums in the same order, in one pass."""
        ov = self.overhead
        p0, p1, p2, p3, p4 = self.per_char
        ceil = math.ceil
        return [
            ceil(ov + a * p0 + b * p1 + c * p2 + d * p3 + e * p4 + g) for a, b, c, d, e, g in feats
        ]

    def chars_per_token(self) -> dict[str, float | None]:
        return {
            k: (round(1 / r, 2) if r > 0 else None)
            for k, r in zip(KINDS, self.per_char, strict=True)
        }


DEFAULT_RATES = Rates()
#: the formats whose recorded usage calibrates the token estimates (a Claude Code transcript:
#: its windows grew by appending, so request-to-request deltas measure the added messages)
CALIBRATED_FORMATS = ("claude-code", "claude-code-web", "codex", "gemini-cli", "otel")


@dataclass
class Delta:
    """What one request added to the previous one: summed features, message count, and the
    recorded growth in billed input tokens."""

    features: list[float] = field(default_factory=lambda: [0.0] * 6)
    messages: int = 0
    recorded: int = 0


def _solve(a: list[list[float]], b: list[float]) -> list[float] | None:
    """Gaussian elimination with partial pivoting; None when singular."""
    n = len(b)
    m = [[*row, b[i]] for i, row in enumerate(a)]
    for col in range(n):
        piv = max(range(col, n), key=lambda r: abs(m[r][col]))
        if abs(m[piv][col]) < 1e-12:
            return None
        m[col], m[piv] = m[piv], m[col]
        for r in range(n):
            if r != col:
                f = m[r][col] / m[col][col]
                if f:
                    for c in range(col, n + 1):
                        m[r][c] -= f * m[col][c]
    return [m[i][n] / m[i][i] for i in range(n)]


#: the most tokens a character of each kind can bill: a byte each, but thinking, whose text in a
#: transcript is the summary the API returned while the input bills the whole thinking
_MOST = (1.0, 1.0, 1.0, 1.0, 4.0)


def _solve_held(
    ata: list[list[float]], atb: list[float], w0: list[float], held: set[int]
) -> list[float] | None:
    """The normal equations solved with the unknowns in ``held`` fixed at ``w0``."""
    free = [i for i in range(len(w0)) if i not in held]
    a = [[ata[i][j] for j in free] for i in free]
    b = [atb[i] - sum(ata[i][k] * w0[k] for k in held) for i in free]
    sol = _solve(a, b)
    if sol is None:
        return None
    out = list(w0)
    for i, v in zip(free, sol, strict=True):
        out[i] = v
    return out


def fit_rates(deltas: Sequence[Delta], prior: Rates = DEFAULT_RATES) -> Rates:
    """Rates fitted to recorded deltas (ridge regression towards ``prior``).

    Unknowns: the five tokens-per-character rates and the per-message overhead. Each delta is
    weighted by ``1 / sqrt(recorded)`` so a few huge tool results do not decide alone. With
    fewer than 3 usable deltas the prior is returned unchanged.
    """
    rows: list[tuple[list[float], float, float]] = []
    for d in deltas:
        if d.recorded <= 0 or d.messages <= 0:
            continue
        x = [d.features[0], d.features[1], d.features[2], d.features[3], d.features[4]]
        x.append(float(d.messages))
        y = d.recorded - d.features[5]
        rows.append((x, y, 1.0 / math.sqrt(max(d.recorded, 1.0))))
    if len(rows) < 3:
        return prior
    w0 = [*prior.per_char, prior.overhead]
    n = len(w0)
    # the prior's strength: worth about two typical deltas per unknown, scaled per column
    ata = [[0.0] * n for _ in range(n)]
    atb = [0.0] * n
    colsq = [0.0] * n
    assert n == 6
    for x, y, wt in rows:
        w2 = wt * wt
        x0, x1, x2, x3, x4, x5 = x
        for i in range(6):
            xv = x[i]
            xi = xv * w2
            if xi:
                atb[i] += xi * y
                row = ata[i]  # the same products, added in the same order (a loop unrolled)
                row[0] += xi * x0
                row[1] += xi * x1
                row[2] += xi * x2
                row[3] += xi * x3
                row[4] += xi * x4
                row[5] += xi * x5
            colsq[i] += xv * xv * w2
    for i in range(n):
        lam = 2.0 * colsq[i] / len(rows) + 1e-9
        ata[i][i] += lam
        atb[i] += lam * w0[i]
    # tokens per character stay physical: between 1/12 (very compressible) and 1 (bytes). A
    # rate the solution puts outside is held at the prior and the others solved again: clamped
    # alone, the per-message overhead it traded off against kept its share (a fit on half a
    # session put prose at 1 token a character, and the compaction summary after it 47% over)
    held: set[int] = {i for i in range(5) if colsq[i] <= 0}
    while True:  # at most five rounds: each holds one more rate or ends
        sol = _solve_held(ata, atb, w0, held)
        if sol is None:
            return prior
        out = {i for i in range(5) if i not in held and not (1 / 12 <= sol[i] <= _MOST[i])}
        if not out:
            break
        held |= out
    per = tuple(min(_MOST[i], max(1 / 12, v)) for i, v in enumerate(sol[:5]))
    overhead = min(200.0, max(0.0, sol[5]))
    return Rates(
        (per[0], per[1], per[2], per[3], per[4]), overhead, calibrated=True, samples=len(rows)
    )


# -- the tools + system per conversation segment and model --------------------------------------
#: how much the first segment's tools + system + context grow after a compaction beyond what
#: Claude Code is seen to re-attach (:func:`~ctxview.core.compaction_restore.restored_after`:
#: the files, skills, plan and todo list the transcript last showed), when the file records no
#: request after it to fit them on: what the transcript does not show of it (files read in part
#: or only edited, hook output, the task list). Fitted on the tune set of benchmarks/truth.py
#: (its three sessions with a compaction: +1.2%, +4.2%, +4.0% beyond the restored part).
POST_COMPACTION_GROWTH = 0.04
#: fewer recorded requests than this of one model in one segment: its tools + system are the
#: segment's (all models), not its own
MIN_STATIC_SAMPLES = 2
#: the first segment's static that a compaction carries is measured on its first this many
#: recorded requests too (:func:`_carried_static`)
START_SAMPLES = 5


#: a recorded prompt that fell by at least this many tokens and this share of the previous
#: request's (:func:`unlogged_drop`)
UNLOGGED_DROP_TOKENS = 10_000
UNLOGGED_DROP_SHARE = 0.10


def unlogged_drop(before: int, after: int) -> bool:
    """Whether a request's recorded prompt (``after``) fell from the previous request's
    (``before``, same model and segment, messages added since) by :data:`UNLOGGED_DROP_TOKENS`
    and :data:`UNLOGGED_DROP_SHARE`: the client sent less of the history than the transcript
    holds from there (a clearing it did not log: Claude Code 2.1.5 dropped 27.9k tokens at once
    with no ``microcompact_boundary``, 2.0.x 25.1k; the logged ones save 20k and more). The
    calibration keys the tools + system apart from there, as after a logged microcompaction of
    results outside the file; the messages are priced as the transcript holds them."""
    fall = before - after
    return fall >= UNLOGGED_DROP_TOKENS and fall >= UNLOGGED_DROP_SHARE * before


def _median(values: list[int]) -> int:
    return _med(values)


def _carried_static(first: Sequence[int], median: int) -> int:
    """The first segment's tools + system + context that a later segment starts from: the larger
    of its median residual and the median of its first :data:`START_SAMPLES` (``first``: its
    requests' residuals in file order). Within a segment the residual can sink below what the
    session started with when the requests sent less than the transcript shows (results cleared
    without a ``microcompact_boundary``, history dropped at a resume, rates fitted high): a
    compaction summarises those messages away, and the next segment starts from the tools,
    system and context again. A residual that rose within the segment (context added on the way,
    which Claude Code keeps) is kept by the median."""
    if not first:
        return median
    return max(median, _med(first[:START_SAMPLES]))


def segment_statics(
    by: Mapping[tuple[int, str | None], list[int]],
    keys: Iterable[tuple[int, str | None]],
    static: int,
    restarts: Mapping[int, int] | None = None,
    restored: Mapping[int, int] | None = None,
    drops: Mapping[int, int] | None = None,
    hidden: Mapping[int, int] | None = None,
) -> dict[tuple[int, str | None], int]:
    """The tools + system of each (segment, model) of ``keys``: its own recorded requests'
    median residual (:data:`MIN_STATIC_SAMPLES` of them), else its segment's (every model, each
    in its tokenizer's tokens: :func:`tokenizer_scale`),
    else — a segment the file recorded nothing of (a fit on part of a file) — the latest earlier
    segment's after a compaction, else what ``restarts`` gives the segment (per segment start:
    the evidence says the first segment's held what the compaction dropped), else the first
    segment's (:func:`_carried_static`) grown by :data:`POST_COMPACTION_GROWTH` plus what
    Claude Code re-attaches after the compaction (``restored``, per segment start), else the
    file's ``static``. ``by``'s residuals are in file order. ``drops``: starts of the keys that
    are no compaction but a point the static fell by that many tokens (a microcompaction of
    results outside the file): such a key with no request of its own takes the static before it
    less the drop. ``hidden``: per segment start, what its compaction's new history holds that
    the file does not show (a Codex summary: :func:`~ctxview.sessions.codex.compaction_hidden`):
    such a segment with no request of its own sends the first segment's tools + system and
    that, the rest of its history being in the file."""
    own = {k: _median(v) for k, v in by.items() if len(v) >= MIN_STATIC_SAMPLES}
    # a segment's residuals of every model, in the tokens of the tokenizer before Claude Opus 4.7
    # (each model's residuals are in its own tokens: the same tools + system bill about 1.3x on
    # the newer tokenizer), turned into a model's own tokens where it takes them
    per_seg: dict[int, list[float]] = {}
    for (seg, m), v in by.items():
        sc = tokenizer_scale(m)
        per_seg.setdefault(seg, []).extend(r / sc for r in v)
    seg_base = {seg: _med_float(v) for seg, v in per_seg.items()}

    def seg_static(seg: int, model: str | None) -> int:
        return round(seg_base[seg] * tokenizer_scale(model))

    out: dict[tuple[int, str | None], int] = {}
    for key in sorted(keys, key=lambda k: (k[0], k[1] or "")):
        seg, model = key
        found = own.get(key)
        if found is None and seg in seg_base:
            found = seg_static(seg, model)
        if found is None and hidden and seg in hidden and 0 in seg_base:
            found = (own.get((0, model)) or seg_static(0, model)) + hidden[seg]
        if found is None and drops and seg in drops:
            before = [s for s in seg_base if s < seg]
            if before:
                prior = own.get((max(before), model)) or seg_static(max(before), model)
                found = max(0, prior - drops[seg])
        if found is None:
            earlier = [s for s in seg_base if s < seg and not (drops and s in drops)]
            if not earlier:
                found = static
            else:
                last = max(earlier)
                found = own.get((last, model)) or seg_static(last, model)
                if last == 0 and seg > 0:
                    sc = tokenizer_scale(model)
                    first = (
                        by[(0, model)] if (0, model) in own else [round(r * sc) for r in per_seg[0]]
                    )
                    found = (restarts or {}).get(seg) or (
                        math.ceil(
                            _carried_static(first or [], found) * (1 + POST_COMPACTION_GROWTH)
                        )
                        + (restored or {}).get(seg, 0)
                    )
        out[key] = found
    return out


def static_starts(statics: Mapping[tuple[int, str | None], int] | None) -> list[int]:
    """The sorted starts of ``statics``' keys, for :func:`static_key_start`."""
    return sorted({k[0] for k in statics}) if statics else []


def static_key_start(starts: Sequence[int], segment: int, n: int) -> int:
    """The start of the tools + system key of a request holding messages ``[segment, n)``: the
    latest of ``starts`` (:func:`static_starts`) before ``n`` within the segment (a point the
    static dropped inside it), else the segment's first message."""
    k = bisect_right(starts, n - 1) - 1
    return starts[k] if k >= 0 and starts[k] > segment else segment


def request_static(
    statics: Mapping[tuple[int, str | None], int],
    starts: Sequence[int],
    segment: int,
    n: int,
    model: str | None,
    default: int,
) -> int:
    """The tools + system of a request of ``model`` holding messages ``[segment, n)``: its key's
    in ``statics`` (:func:`static_key_start`; ``starts``: :func:`static_starts`), else
    ``default`` (the median over the file). The one lookup of every request the request model
    prices, and of the next one (``ctxview.core.requests.next_request``)."""
    k0 = static_key_start(starts, segment, n) if starts else segment
    return statics.get((k0, model), default)


def _med_float(values: Sequence[float]) -> float:
    """The median (the mean of the middle two of an even count), at least 0."""
    v = sorted(values)
    n = len(v)
    if not n:
        return 0.0
    return max(0.0, v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2)


def _med(values: Sequence[int]) -> int:
    """The median (the mean of the middle two of an even count), at least 0."""
    v = sorted(values)
    n = len(v)
    if not n:
        return 0
    mid = v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2
    return max(0, int(mid))


# -- tokenizers ---------------------------------------------------------------------------------
TOKENIZER_SOURCE = (
    "Anthropic's Claude Opus 4.7 release notes and migration guide "
    "(platform.claude.com/docs/en/about-claude/models/migration-guide): 'This new tokenizer may "
    "use roughly 1x to 1.35x as many tokens when processing text compared to previous models "
    "(up to ~35% more, varying by content)'"
)
TOKENIZER_DATE = "2026-12-02 (as quoted that day; independent counts of Claude Code content: 1.3x)"
#: tokens for the same text on the tokenizer of Claude Opus 4.7 and later models, against the
#: one before it: the documented range is 1.0-1.35x, English and code sit near its top
NEW_TOKENIZER_SCALE = 1.3
#: the models on the newer tokenizer: Opus 4.7 as documented; the later ones (Opus 4.8, the 5.x
#: models) assumed to keep it
NEW_TOKENIZER = frozenset(
    {
        "claude-opus-4-7",
        "claude-opus-4-8",
        "claude-opus-5",
        "claude-opus-5-5",
        "claude-sonnet-5",
        "claude-sonnet-5-5",
        "claude-haiku-5-5",
        "claude-fable-5",
        "claude-fable-5-1",
        "claude-mythos-5",
        "claude-mythos-5-1",
    }
)


def tokenizer_scale(model: str | None) -> float:
    """Tokens for the same text on ``model``'s tokenizer, against the tokenizer of the models
    before Claude Opus 4.7 (:data:`NEW_TOKENIZER_SCALE` or 1)."""
    if not model:
        return 1.0
    return NEW_TOKENIZER_SCALE if normalise_model(model) in NEW_TOKENIZER else 1.0
