"""OpenAI's offline token estimate: text counted exactly in o200k_base, the framing the API adds
around it by model family and API, fitted on the tune half of the recorded bodies
(``python -m benchmarks.truth_openai --set tune``; docs/providers.md has the figures).

* Text, tool arguments and JSON are counted by the o200k_base tokenizer (:mod:`.o200k`: the
  encoding of GPT-4o, GPT-4.1, GPT-5 and the o-series), exactly.
* Every message (system, developer, user, assistant, tool; a Responses input item) costs its
  framing: :data:`GPT4O_MESSAGE_OVERHEAD_TOKENS` for the GPT-4o generation (ChatML),
  :data:`MESSAGE_OVERHEAD_TOKENS` for the reasoning models (and a model not named); every
  request :data:`REPLY_PRIMING_TOKENS` once, priming the reply, counted with the system prompt.
* A tool call costs its framing: :data:`CHAT_TOOL_CALL_TOKENS` in a Chat Completions body,
  :data:`RESPONSES_REASONING_CALL_TOKENS` for a reasoning model's call on either API
  (GPT-4o's Responses ``function_call`` none); a GPT-4o Chat message's parallel calls
  :data:`CHAT_PARALLEL_CALLS_TOKENS` and one a call more.
* Function definitions follow the openai-cookbook "How to count tokens with tiktoken":
  :data:`FUNCTION_INIT_TOKENS` each, ``name:description``, :data:`PROPERTIES_INIT_TOKENS` when
  it has parameters, :data:`PROPERTY_TOKENS` per parameter and ``name:type:description``,
  :data:`ENUM_ITEM_TOKENS` per enum value (:data:`ENUM_INIT_TOKENS` once), and
  :data:`FUNCTIONS_END_TOKENS` once for the list; a reasoning model's Chat Completions tools
  cost :data:`CHAT_REASONING_TOOLS_TOKENS` more (the o-series' not). A structured-output schema (Chat
  ``response_format.json_schema``, Responses ``text.format``) is counted by its JSON, without
  its ``additionalProperties`` keys.
  Tools added mid-conversation (an ``additional_tools`` item) cost twice their JSON.
* Images (OpenAI "Images and vision"), by the model's rule (:func:`image_rule`): a base and a
  price per 512 px tile (85 + 170 for GPT-4o, 2,833 + 5,667 for GPT-4o mini, ...; the base
  alone at ``detail: low``), or 32 px patches times a multiplier for the models of
  :data:`PATCH_MULTIPLIERS`.
* Hidden reasoning: the current turn's reasoning items (after the last user message) are
  billed as input, by the length of their ``encrypted_content`` (:func:`reasoning_tokens`);
  an earlier turn's are dropped by the API. A compaction item is counted by its sealed length
  (:data:`ENCRYPTED_CHARS_PER_TOKEN`).
* What a body cannot show (a stored response it continues, server-side tools, files the API
  reads, images by URL) is named by :func:`unmeasured`: no estimate from the file covers it.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

from ctxview.core.compaction import KEEPS_HISTORY
from ctxview.core.providers import audio_length, o200k
from ctxview.core.providers.base import carried_by
from ctxview.core.tokens import image_info

# -- framing -------------------------------------------------------------------------------------
#: a reasoning model's framing of a message (harmony: ``<|start|>role<|message|>...<|end|>``)
MESSAGE_OVERHEAD_TOKENS = 3
#: GPT-4o's framing of a message (ChatML), a token more: every GPT-4o body of one or two
#: messages on the tune set was billed one token a message above 3
GPT4O_MESSAGE_OVERHEAD_TOKENS = 4
GPT4O_PREFIXES = ("gpt-4", "chatgpt-4o")
REASONING_PREFIXES = ("gpt-5", "o1", "o3", "o4", "codex", "gpt-oss")
REPLY_PRIMING_TOKENS = 3
#: a tool call's framing in a Chat Completions assistant message (its id, the recipient): 7 to
#: 18 a call on the tune set, on either family; a reasoning model's costs its Responses framing
#: (:data:`RESPONSES_REASONING_CALL_TOKENS`) on Chat Completions too
CHAT_TOOL_CALL_TOKENS = 8
#: a reasoning model's function_call on the Responses API (the call and its output on the
#: commentary channel, each naming the function): 3 to 20 a call on the tune set, median 15;
#: GPT-4o's cost none there (-3 to +2). A reasoning model's Chat Completions call is framed
#: alike: at 8 a call, GPT-5, GPT-5.4, GPT-5 mini and nano and o4-mini Chat bodies answering
#: calls were 1 to 14 tokens a call under their billing (median 6; 15 bodies of the tune,
#: unseen, unseen3 and diag 4 sets, fantasy's GPT-5 and o4-mini ones 11 to 12)
RESPONSES_REASONING_CALL_TOKENS = 14
#: a GPT-4o-generation Chat Completions assistant message with more than one tool call (parallel
#: calls, rendered as one ``multi_tool_use.parallel`` call naming each function) costs this
#: and a token a call more: such bodies answering two calls were 6 to 22 under (median 13; 21
#: bodies of pai, crewai, openinference, activeagent, opentelemetry, ellmer and fantasy in the
#: tune, unseen, unseen2, unseen3 and diag 4 sets), their single-call neighbours within a few
#: tokens. Two bodies answering three calls were not (0 and 20 over): it is fitted on two.
#: The reasoning models' calls are framed one by one (their two-call bodies fit without it),
#: and a Responses body's function_call items are billed apart (GPT-4o's within 1)
CHAT_PARALLEL_CALLS_TOKENS = 11
#: the file format of a Chat Completions body (``ctxview.core.providers.openai.CHAT``)
CHAT_FORMAT = "openai-chat"

# -- tools ---------------------------------------------------------------------------------------
FUNCTION_INIT_TOKENS = 7
PROPERTIES_INIT_TOKENS = 3
PROPERTY_TOKENS = 3
ENUM_ITEM_TOKENS = 3
ENUM_INIT_TOKENS = -3
FUNCTIONS_END_TOKENS = 12
#: what a reasoning model's Chat Completions request costs more with tools than the same tools
#: on the Responses API (its tool-calling instructions): 73 to 98 on the tune set, all GPT-5
#: bodies. The o-series do not add them: o4-mini's Chat body with one tool and one call was
#: billed 95 tokens where GPT-5's twin was billed 176 and GPT-4o's 86 (diag set 4, fantasy
#: TestOpenAICommon tool), its Responses twin 89
CHAT_REASONING_TOOLS_TOKENS = 80
#: the reasoning models whose Chat Completions tools cost no tool-calling instructions
O_SERIES_PREFIXES = ("o1", "o3", "o4")

# -- images and files ----------------------------------------------------------------------------
#: the models that count an image in 32 px patches, and their multipliers. OpenAI's "Images and
#: vision" gives GPT-4.1 mini and nano and o4-mini theirs; for GPT-5 mini and nano it gives 1.62
#: and 2.46, but the API bills 1.2 and 1.5 (measured by image-minus-text usage in the OpenAI
#: developer forum, "GPT-5-mini image input token calculation discrepancy" and "Introducing
#: GPT-5.4 mini and nano", which also measured GPT-5.4 mini's and nano's 1.2; the pricing
#: calculator agrees; the tune set's 597 x 566 image on GPT-5 mini, 342 patches, was billed
#: about 420 tokens)
PATCH_MULTIPLIERS = (
    ("gpt-5-mini", 1.2),
    ("gpt-5-nano", 1.5),
    ("gpt-5.4-mini", 1.2),
    ("gpt-5.4-nano", 1.2),
    ("gpt-4.1-mini", 1.62),
    ("gpt-4.1-nano", 2.46),
    ("o4-mini", 1.72),
    ("codex-mini", 1.72),
)
IMAGE_MAX_PATCHES = 1536
IMAGE_BASE_TOKENS = 85
IMAGE_TILE_TOKENS = 170
#: the tile-counting models whose base and tile prices are not GPT-4o's 85 and 170 ("Images and
#: vision"'s table); GPT-4o mini's make an image cost what it costs on GPT-4o at its lower
#: price: 2,833 + 2 x 5,667 = 14,167 tokens, what the unseen set's 640 x 480 images were
#: billed on it, to the token
TILE_PRICES = (
    ("gpt-4o-mini", 2833, 5667),
    ("gpt-5-chat", 70, 140),
    ("o1", 75, 150),
    ("o3", 75, 150),
    ("computer-use-preview", 65, 129),
)
#: GPT-5 itself (``gpt-5``, ``gpt-5-2025-08-07``) counts tiles at 70 + 140; a later GPT-5.x
#: is not in the table, and is counted as GPT-4o is
GPT5_TILE_PRICES = (70, 140)


@dataclass(frozen=True, slots=True)
class ImageRule:
    """How a model counts an image: 32 px patches times ``multiplier`` (when set), else
    ``base`` + ``tile`` per 512 px tile."""

    base: int = IMAGE_BASE_TOKENS
    tile: int = IMAGE_TILE_TOKENS
    multiplier: float | None = None


TILES = ImageRule()
#: an image whose size cannot be read offline (a URL): two tiles, close to the median billed
#: for such images on the tune set (252 to 655 tokens, median about 430)
IMAGE_UNKNOWN_TOKENS = IMAGE_BASE_TOKENS + 2 * IMAGE_TILE_TOKENS
#: a file part with no text to measure (a PDF: its pages' text and images): the median billed
#: for one on the tune set (6 to 1,055 tokens, median 218)
FILE_UNKNOWN_TOKENS = 220

#: audio input is billed by its length: "1 token per 100 ms of audio" (OpenAI, "Managing costs"
#: of the Realtime API, developers.openai.com/api/docs/guides/realtime-costs); Chat
#: Completions bills it so to the token (WAVs of 0.2, 0.4 and 3.7 s billed 2, 4 and 37 audio
#: tokens, an MP3 of 4.32 s 43, in the recorded responses' ``audio_tokens``)
AUDIO_TOKENS_PER_SECOND = 10
#: a clip whose header is not read: its size as a 128 kbit/s MP3's
AUDIO_UNKNOWN_BYTES_PER_SECOND = 16_000

# -- sealed content ------------------------------------------------------------------------------
#: a reasoning item's encrypted form: characters of any item, and characters a hidden token.
#: Fitted on the responses that return one sealed reasoning item beside the reasoning tokens
#: that made it (29 of the tune and unseen sets: sealed length = 967 + 6.4 a token; median
#: error 7%): a carried item is billed as the reasoning that made it (the few tune bodies that
#: carry one are too few to fit two constants on)
REASONING_SEAL_CHARS = 967
REASONING_CHARS_PER_TOKEN = 6.4
#: characters of an item's ``encrypted_content`` (a compaction item: the earlier conversation,
#: encrypted) a billed token: 0.085 to 0.11 tokens a character on the tune set's compactions
ENCRYPTED_CHARS_PER_TOKEN = 10.0
#: what a hosted web search's results are billed as input, a ``web_search_call`` item (a
#: search, an opened page) while it is in the conversation: the API ran it and holds its
#: results, which no file shows. Fitted on the ten Codex CLI responses of the Codex diagnosis set (docs/providers.md) that ran
#: one (gpt-5.5): the recorded prompt jumped by 178 to 7,207 tokens a call (median 4,346) at
#: the response that searched, and stayed so in every later request, across user turns
WEB_SEARCH_RESULT_TOKENS = 4_300


def search_results(block: Any) -> int:
    """The tokens of the hosted results a block's web search is billed for while in the
    conversation (:data:`WEB_SEARCH_RESULT_TOKENS`); 0 for any other block, and for a
    ``web_search_call`` that records no ``action`` (nor an ``id``): Codex CLI 0.118 wrote such
    items (diag4's gitsync rollouts, gpt-5.4: four distinct searches), and neither the
    response that ran one nor any later request was billed more than the item (the error
    jumped by 4.3k after each while they were counted)."""
    if not isinstance(block, Mapping) or block.get("type") != "web_search_call":
        return 0
    if "action" not in block and "id" not in block:
        return 0
    return WEB_SEARCH_RESULT_TOKENS


def message_search_results(message: Mapping[str, Any]) -> int:
    """:func:`search_results` of each block of a message."""
    content = message.get("content")
    if not isinstance(content, list):
        return 0
    return sum(search_results(b) for b in content)


def billed_searches(message: Mapping[str, Any]) -> int:
    """How many of a message's blocks are web searches whose results are billed
    (:func:`search_results`)."""
    content = message.get("content")
    if not isinstance(content, list):
        return 0
    return sum(1 for b in content if search_results(b))


def text_tokens(text: str) -> int:
    """Tokens of ``text`` in o200k_base, exactly."""
    return o200k.count(text)


def json_tokens(value: Any) -> int:
    """Tokens of a value as compact JSON (a string as itself)."""
    if isinstance(value, str):
        return o200k.count(value)
    return o200k.count(_json_text(value))


def arguments_tokens(arguments: Any) -> int:
    """Tokens of a tool call's arguments as sent. Arguments that are no JSON object are read as
    ``{"arguments": text}`` (``openai_wire``); where the text is a JSON string (a client that
    encoded the object twice) the API bills the text alone: such bodies were billed 2 tokens
    more than their twins sending the object (GPT-4o 83 / 81, o4-mini 91 / 89, GPT-5 94 / 92:
    the two texts differ by 2 tokens), not the wrapper's 12 more. Other texts (``[]``) keep
    the wrapper's count: gpt-5.4-nano bodies with ``[]`` were billed more than the text."""
    if isinstance(arguments, Mapping) and len(arguments) == 1:
        text = arguments.get("arguments")
        if isinstance(text, str) and text.lstrip().startswith('"'):
            return o200k.count(text)
    return json_tokens(arguments)


def _json_text(value: Any) -> str:
    try:
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        return repr(value)


def image_tokens(
    width: int,
    height: int,
    detail: str = "high",
    base: int = IMAGE_BASE_TOKENS,
    tile: int = IMAGE_TILE_TOKENS,
) -> int:
    """A tile-counting model's image cost: ``base`` at low detail; at high (and auto) the image
    is fitted in 2048 x 2048, its short side scaled down to 768, then ``base`` + ``tile`` per
    512 px tile (GPT-4o's 85 and 170 unless given)."""
    if detail == "low":
        return base
    w, h = float(width), float(height)
    if max(w, h) > 2048:
        scale = 2048 / max(w, h)
        w, h = w * scale, h * scale
    if min(w, h) > 768:
        scale = 768 / min(w, h)
        w, h = w * scale, h * scale
    tiles = math.ceil(w / 512) * math.ceil(h / 512)
    return base + tile * tiles


def patch_image_tokens(width: int, height: int, multiplier: float) -> int:
    """The image cost of the models that count 32 px patches (GPT-4.1 mini and nano, o4-mini,
    GPT-5 mini and nano; OpenAI "Images and vision"): the patches covering the image, at most
    :data:`IMAGE_MAX_PATCHES` (a bigger image is scaled down to fit), times the model's
    multiplier."""
    w, h = float(width), float(height)
    if math.ceil(w / 32) * math.ceil(h / 32) > IMAGE_MAX_PATCHES:
        shrink = math.sqrt(32 * 32 * IMAGE_MAX_PATCHES / (w * h))
        w, h = w * shrink, h * shrink
        # then down to whole patches on the side that overflows
        shrink *= min(math.floor(w / 32) / (w / 32), math.floor(h / 32) / (h / 32))
        w, h = width * shrink, height * shrink
    patches = min(IMAGE_MAX_PATCHES, math.ceil(w / 32) * math.ceil(h / 32))
    return math.ceil(patches * multiplier)


@cache
def image_rule(model: str | None) -> ImageRule:
    """How ``model`` counts an image (GPT-4o's tiles when the model is not named or not known)."""
    if not isinstance(model, str):
        return TILES
    for prefix, multiplier in PATCH_MULTIPLIERS:
        if model.startswith(prefix):
            return ImageRule(multiplier=multiplier)
    for prefix, base, tile in TILE_PRICES:
        if model.startswith(prefix):
            return ImageRule(base, tile)
    if model == "gpt-5" or model.startswith("gpt-5-20"):
        return ImageRule(*GPT5_TILE_PRICES)
    return TILES


def _image(block: Mapping[str, Any], rule: ImageRule = TILES) -> int:
    patches = rule.multiplier is not None
    detail = block.get("detail")
    if detail == "low" and not patches:  # a patch-counting model ignores ``low``
        return rule.base
    info = image_info(block)
    if info.get("width") and info.get("height"):
        if rule.multiplier is not None:
            return patch_image_tokens(info["width"], info["height"], rule.multiplier)
        return image_tokens(info["width"], info["height"], base=rule.base, tile=rule.tile)
    if patches:
        return IMAGE_UNKNOWN_TOKENS
    return rule.base + 2 * rule.tile  # two tiles, as IMAGE_UNKNOWN_TOKENS at GPT-4o's prices


def block_tokens(block: Any, rule: ImageRule = TILES) -> int:
    """One canonical block's tokens (``rule``: how the model counts an image)."""
    if not isinstance(block, Mapping):
        return json_tokens(block)
    kind = block.get("type")
    if kind == "text":
        text = block.get("text")
        return json_tokens(text)
    if kind == "compaction":
        sealed = block.get("encrypted_content")
        if isinstance(sealed, str):
            return math.ceil(len(sealed) / ENCRYPTED_CHARS_PER_TOKEN)
        return json_tokens({k: v for k, v in block.items() if k not in ("type", KEEPS_HISTORY)})
    if kind == "additional_tools":
        # tools given mid-conversation are billed twice their JSON (the item, and the tool list
        # the API renders again with them): within 2 tokens on the two tune bodies that show it
        return 2 * json_tokens({k: v for k, v in block.items() if k != "type"})
    if kind == "thinking":
        # reasoning is not sent back as prompt text (an encrypted item is not billed as input)
        return 0
    if kind == "web_search_call":
        return json_tokens(block) + search_results(block)
    if kind == "input_audio":
        return audio_tokens(block.get("input_audio"))
    if kind in ("tool_use", "server_tool_use"):
        args = block.get("input", {})
        raw = freeform_input(args)
        return text_tokens(str(block.get("name", ""))) + (
            text_tokens(raw) if raw is not None else arguments_tokens(args)
        )
    if kind == "tool_result":
        content = block.get("content", "")
        if isinstance(content, list):
            return sum(block_tokens(b, rule) for b in content)
        return json_tokens(content)
    if kind == "image":
        return _image(block, rule)
    if kind == "document":
        source = block.get("source")
        if isinstance(source, Mapping) and source.get("type") == "text":
            return json_tokens(source.get("data", ""))
        return FILE_UNKNOWN_TOKENS
    return json_tokens({k: v for k, v in block.items() if k != "type"})


def freeform_input(args: Any) -> str | None:
    """The text a custom (freeform) tool was called with: its call's input as the readers keep
    it, ``{"input": text}`` (``openai_wire``: a Responses ``custom_tool_call``, a Chat
    ``custom`` call), which the API bills as the text itself, not as a JSON string; None for
    a function's arguments."""
    if type(args) is dict and len(args) == 1:
        text = args.get("input")
        if type(text) is str:
            return text
    return None


def audio_tokens(audio: Any) -> int:
    """An ``input_audio`` part's audio tokens: :data:`AUDIO_TOKENS_PER_SECOND` a second of its
    length, read from the clip's header (WAV, MP3), never its base64 counted as text; a clip
    whose header is not read counts its size at :data:`AUDIO_UNKNOWN_BYTES_PER_SECOND`."""
    raw = _audio_bytes(audio)
    length = audio_length.seconds(raw)
    if length is None:
        length = len(raw) / AUDIO_UNKNOWN_BYTES_PER_SECOND
    return round(length * AUDIO_TOKENS_PER_SECOND)


def _audio_bytes(audio: Any) -> bytes:
    data = audio.get("data") if isinstance(audio, Mapping) else None
    if not isinstance(data, str):
        return b""
    try:
        return base64.b64decode(data, validate=False)
    except (binascii.Error, ValueError):
        return b""


def content_tokens(content: Any, rule: ImageRule = TILES) -> int:
    if isinstance(content, str):
        return text_tokens(content)
    if isinstance(content, Sequence):
        return sum(block_tokens(b, rule) for b in content)
    return json_tokens(content)


def is_gpt4o(model: str | None) -> bool:
    """A model of the GPT-4o generation (GPT-4o, GPT-4.1, GPT-4.5 and their minis), framed by
    ChatML; the others (GPT-5, the o-series, unnamed) by the reasoning models' format."""
    return isinstance(model, str) and model.startswith(GPT4O_PREFIXES)


def is_reasoning(model: str | None) -> bool:
    """A reasoning model (GPT-5, the o-series, Codex's)."""
    return isinstance(model, str) and model.startswith(REASONING_PREFIXES)


def chat_tool_instructions(model: str | None) -> bool:
    """Whether ``model``'s Chat Completions function tools cost
    :data:`CHAT_REASONING_TOOLS_TOKENS` of instructions: a reasoning model's, the o-series'
    not."""
    return is_reasoning(model) and not str(model).startswith(O_SERIES_PREFIXES)


def message_overhead(model: str | None) -> int:
    return GPT4O_MESSAGE_OVERHEAD_TOKENS if is_gpt4o(model) else MESSAGE_OVERHEAD_TOKENS


@cache
def _estimator(
    overhead: int, per_call: int, rule: ImageRule = TILES, parallel: int = 0
) -> Callable[[Mapping[str, Any]], int]:
    def estimate(message: Mapping[str, Any]) -> int:
        content = message.get("content", "")
        n = overhead + content_tokens(content, rule)
        if per_call and isinstance(content, list):
            calls = sum(
                1 for b in content if isinstance(b, Mapping) and b.get("type") == "tool_use"
            )
            n += per_call * calls
            if parallel and calls > 1:
                n += parallel + calls
        return n

    return estimate


#: a Responses item or Chat message under a reasoning model's framing (also the estimate when
#: neither the model nor the API is named)
estimate_message = _estimator(MESSAGE_OVERHEAD_TOKENS, 0)


def message_estimate(model: str | None, fmt: str = "") -> Callable[[Mapping[str, Any]], int]:
    """The estimate of one message for ``model``'s family and the API of the file's format
    (``fmt``: a Chat Completions message's tool calls cost their framing), its images by the
    model's rule (one function per combination: the same one for every message)."""
    gpt4o, chat = is_gpt4o(model), fmt == CHAT_FORMAT
    if chat:
        per_call = RESPONSES_REASONING_CALL_TOKENS if is_reasoning(model) else CHAT_TOOL_CALL_TOKENS
    else:
        per_call = 0 if gpt4o else RESPONSES_REASONING_CALL_TOKENS
    return _estimator(
        GPT4O_MESSAGE_OVERHEAD_TOKENS if gpt4o else MESSAGE_OVERHEAD_TOKENS,
        per_call,
        image_rule(model),
        CHAT_PARALLEL_CALLS_TOKENS if chat and gpt4o else 0,
    )


def estimate_system(system: Any, model: str | None = None) -> int:
    """The system prompt as one system message, plus the reply priming every request costs
    (so a request with no system prompt still counts the priming)."""
    if not system:
        return REPLY_PRIMING_TOKENS
    return (
        REPLY_PRIMING_TOKENS + message_overhead(model) + content_tokens(system, image_rule(model))
    )


def reasoning_tokens(encrypted: str) -> int:
    """A reasoning item's hidden tokens from the length of its ``encrypted_content``: the
    sealed form adds about :data:`REASONING_SEAL_CHARS` characters to any item, then
    :data:`REASONING_CHARS_PER_TOKEN` a token (fitted on the tune and unseen sets' responses,
    whose usage gives each reasoning item's tokens beside its encrypted form)."""
    return max(0, math.ceil((len(encrypted) - REASONING_SEAL_CHARS) / REASONING_CHARS_PER_TOKEN))


#: how a message Codex CLI writes into the running turn when a sub-agent it spawned ends opens:
#: a user message, but no turn of the user's
SUBAGENT_NOTIFICATION = "<subagent_notification>"


def _user_turn(message: Mapping[str, Any]) -> bool:
    """A user message that starts a turn: not one carrying tool results, nor Codex's notice
    that a sub-agent ended (:data:`SUBAGENT_NOTIFICATION`), after which the turn's reasoning
    is still billed: on diag4's gitsync_019d7d08 the estimate fell below the recorded prompt by
    the turn's carried reasoning at each of its 12 notices (15 to 7,444 tokens), and no
    recorded prompt fell there."""
    if message.get("role") != "user":
        return False
    content = message.get("content")
    if isinstance(content, str):
        return not content.startswith(SUBAGENT_NOTIFICATION)
    if isinstance(content, Sequence):
        for b in content:
            if not isinstance(b, Mapping):
                continue
            if b.get("type") == "tool_result":
                return False
            text = b.get("text")
            if isinstance(text, str) and text.startswith(SUBAGENT_NOTIFICATION):
                return False
        return True
    return True


def reasoning_carry(message: Mapping[str, Any]) -> tuple[bool, int]:
    """A message's part in the hidden reasoning a request carries (``TokenModel.carry``): a
    user message starts a turn; the encrypted reasoning items of the current turn (after the
    last user message) are billed as input, those of earlier turns are dropped by the API and
    cost nothing."""
    if _user_turn(message):
        return True, 0
    content = message.get("content")
    if not isinstance(content, Sequence) or isinstance(content, str):
        return False, 0
    n = 0
    for block in content:
        if isinstance(block, Mapping) and block.get("type") == "thinking":
            sealed = block.get("signature")
            if isinstance(sealed, str) and sealed:
                n += reasoning_tokens(sealed)
    return False, n


def carried_reasoning(messages: Sequence[Mapping[str, Any]]) -> int:
    """The hidden reasoning the request carries: the current turn's (:func:`reasoning_carry`)."""
    return carried_by(reasoning_carry, messages)


def _line(*parts: str) -> int:
    """``name:description`` as the cookbook counts it (a description's final full stop off)."""
    return text_tokens(":".join(p.removesuffix(".") for p in parts))


def _property(name: str, spec: Any) -> int:
    if not isinstance(spec, Mapping):
        return PROPERTY_TOKENS + _line(name) + json_tokens(spec)
    n = PROPERTY_TOKENS
    enum = spec.get("enum")
    if isinstance(enum, list) and enum:
        n += ENUM_INIT_TOKENS + sum(ENUM_ITEM_TOKENS + json_tokens(e) for e in enum)
    n += _line(name, str(spec.get("type", "")), str(spec.get("description", "")))
    # nested schemas (objects, arrays' items, anyOf) are beyond the cookbook's rule: their JSON
    rest = {k: v for k, v in spec.items() if k not in ("type", "description", "enum")}
    if rest:
        n += json_tokens(rest)
    return n


def _function(fn: Mapping[str, Any]) -> int:
    n = FUNCTION_INIT_TOKENS + _line(str(fn.get("name", "")), str(fn.get("description") or ""))
    params = fn.get("parameters")
    props = params.get("properties") if isinstance(params, Mapping) else None
    if isinstance(props, Mapping) and props:
        n += PROPERTIES_INIT_TOKENS + sum(_property(str(k), v) for k, v in props.items())
    return n


def estimate_tools(tools: Any, model: str | None = None, responses: bool = False) -> int:
    """Function definitions by the cookbook's rule (a Chat ``{"type": "function", "function":
    {...}}`` or a Responses ``{"type": "function", "name": ...}``); any other tool by its
    JSON. ``responses``: the tools of a Responses API body, whose function tools are read from
    their own fields alone: a Chat-shaped ``function`` object inside one is not read."""
    if not tools or not isinstance(tools, Sequence):
        return 0
    n = FUNCTIONS_END_TOKENS
    if (
        not responses
        and chat_tool_instructions(model)
        and any(isinstance(t, Mapping) and "function" in t for t in tools)
    ):
        n += CHAT_REASONING_TOOLS_TOKENS
    for tool in tools:
        if not isinstance(tool, Mapping):
            n += json_tokens(tool)
            continue
        fn = None
        if not responses and isinstance(tool.get("function"), Mapping):
            fn = tool["function"]
        if fn is None and "name" in tool and tool.get("type", "function") == "function":
            # The Responses API reads a function tool's name, description and parameters
            # from the tool itself and ignores a Chat-shaped ``function`` object beside them:
            # req_llm's 80 Responses bodies that sent ``{"type", "name", "function": {...}}``
            # were billed 25-58 tokens, and each response echoed the tool back with
            # ``description: null`` and no properties (estimated from the nested object: 107-186)
            fn = {k: v for k, v in tool.items() if k != "function"} if responses else tool
        if fn is None and "input_schema" in tool:  # a canonical (Anthropic-shaped) tool
            fn = {**tool, "parameters": tool.get("input_schema")}
        n += _function(fn) if fn is not None else json_tokens(tool)
    return n


def output_schema(params: Mapping[str, Any]) -> Any:
    """The structured-output schema a request's other fields hold (Chat
    ``response_format.json_schema``, Responses ``text.format`` of type ``json_schema``), or
    None."""
    fmt = params.get("response_format")
    if isinstance(fmt, Mapping) and isinstance(fmt.get("json_schema"), Mapping):
        return fmt["json_schema"]
    text = params.get("text")
    fmt = text.get("format") if isinstance(text, Mapping) else None
    if isinstance(fmt, Mapping) and fmt.get("type") == "json_schema":
        return fmt
    return None


def estimate_params(params: Mapping[str, Any], model: str | None = None) -> int:
    """Tokens of the request fields beyond system, tools and messages that are billed as input:
    the structured-output schema (:func:`schema_tokens`), and Chat Completions' older
    ``functions`` list, counted as tools are (the cookbook's rule was written for it)."""
    n = 0
    functions = params.get("functions")
    if isinstance(functions, list) and functions and not params.get("tools"):
        n += estimate_tools(functions, model)
    schema = output_schema(params)
    if schema is None:
        return n
    return n + schema_tokens(schema.get("schema"))


def schema_tokens(schema: Any) -> int:
    """A structured output's JSON schema as the API bills it: its compact JSON, without the
    ``additionalProperties`` keys (strict mode requires them false everywhere, so they say
    nothing). Within 2 tokens (median) and 13 (at most) of the 25 text bodies of the tune and
    unseen sets with one; counting it as a function definition, the rule of the tools, missed
    nested schemas (``$defs``, arrays of objects) by up to 49. A ``$schema`` key (the draft the
    schema follows) is dropped by the API: the response echoes the schema without it."""
    if isinstance(schema, Mapping):
        schema = {k: v for k, v in schema.items() if k != "$schema"}
    return json_tokens(_without(schema, "additionalProperties"))


def _without(value: Any, key: str) -> Any:
    if isinstance(value, Mapping):
        return {k: _without(v, key) for k, v in value.items() if k != key}
    if isinstance(value, list):
        return [_without(v, key) for v in value]
    return value


# -- what a body cannot show --------------------------------------------------------------------
#: tool types the API runs itself: what they find or make is billed as input the next request
#: does not hold (a hosted ``tool_search`` also loads deferred definitions of its choosing)
SERVER_TOOLS = (
    "web_search",
    "file_search",
    "code_interpreter",
    "image_generation",
    "mcp",
    "computer_use",
    "tool_search",
)


def _server_tool(tool: Any) -> str | None:
    if not isinstance(tool, Mapping):
        return None
    kind = tool.get("type")
    if not isinstance(kind, str) or not kind.startswith(SERVER_TOOLS):
        return None
    if kind == "tool_search" and tool.get("execution") == "client":
        return None  # the client searches: what it found is in the body
    # the known name, never the file's text (it is shown)
    return next(name for name in SERVER_TOOLS if kind.startswith(name))


def server_tool_call(item: Mapping[str, Any]) -> str | None:
    """The server-side tool an item (or a block kept in its wire form) is a call of, by its
    known name; None for any other item (a client-run ``tool_search`` too: what it found is in
    the file)."""
    kind = item.get("type")
    if not (isinstance(kind, str) and kind.endswith("_call") and kind.startswith(SERVER_TOOLS)):
        return None
    if item.get("execution") == "client":
        return None
    return next(n for n in SERVER_TOOLS if kind.startswith(n))


def _unmeasured_block(block: Any) -> str | None:
    if not isinstance(block, Mapping):
        return None
    kind = block.get("type")
    if kind in ("image", "document"):
        source = block.get("source")
        where = source.get("type") if isinstance(source, Mapping) else None
        if kind == "image" and where == "base64":
            return None  # its size is read from its header
        if kind == "document" and where == "text":
            return None
        if where == "file":
            return "a file id (its content is stored with the API)"
        if kind == "image":
            return "an image by URL (its size, and so its tokens, is not in the file)"
        return "a PDF or file (the API reads its pages' text and images)"
    if kind == "input_audio":
        if audio_length.seconds(_audio_bytes(block.get("input_audio"))) is not None:
            return None  # its length is read from its header
        return "audio whose length is not read from its header (billed by its length)"
    name = server_tool_call(block)
    if name is not None:
        return f"a server-side tool's call ({name}: its results are billed, not in the file)"
    if kind == "tool_result":
        content = block.get("content")
        if isinstance(content, list):
            return next((r for r in map(_unmeasured_block, content) if r is not None), None)
    return None


def unmeasured(
    messages: Sequence[Mapping[str, Any]], tools: Any, params: Mapping[str, Any] | None
) -> list[str]:
    """What a request is billed for that its body does not show, each once: the stored turns
    it continues, server-side tools and their results, files and images whose content is the
    API's to read. Empty: the body holds everything billed, and the estimate can be checked
    against its usage."""
    out: list[str] = []
    for key in ("previous_response_id", "conversation"):
        if params and params.get(key):
            out.append(f"{key} (the stored turns it continues are billed, not in the file)")
    prompt = params.get("prompt") if params else None
    if isinstance(prompt, Mapping) and prompt.get("id"):
        out.append("prompt (a stored prompt: its messages are billed, not in the file)")
    if params and params.get("web_search_options"):
        out.append("web_search_options (a search model's prompt is built by the API)")
    server = sorted({k for k in map(_server_tool, tools or ()) if k is not None})
    if server:
        out.append(f"server-side tools ({', '.join(server)}: what they add is billed as input)")
    for message in messages:
        content = message.get("content")
        if isinstance(content, str) or not isinstance(content, Sequence):
            continue
        for block in content:
            reason = _unmeasured_block(block)
            if reason is not None and reason not in out:
                out.append(reason)
    return out
