"""Google's Gemini API (``generateContent``) as a provider: its protocol rules in the API's own
error text, its usage counts, implicit caching and explicit cached contents, prices as data and
the request body.

Rules (evidence in ``docs/protocol.md`` and ``tests/acceptance/error_texts.md``): the checker's
rules that Gemini has, in Gemini's words. Rules Gemini does not have are not checked: recorded
requests it accepted have consecutive user turns, a function response turn followed by a user
text turn, empty text parts and a history that starts with a model turn, so the Messages API's
rules against those would be false errors here.

Usage: ``promptTokenCount`` holds the whole prompt, ``cachedContentTokenCount`` the part of it
read from a cache (implicit or explicit); a cache write is never charged apart (an explicit
cache is billed at the input rate when created, and for storage by the hour).
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ctxview.core.cache_rules import Minimum
from ctxview.core.pricing import Price, PriceBook
from ctxview.core.protocol import Problem, Rule, RuleSet
from ctxview.core.providers import gemini_vocabulary
from ctxview.core.providers.base import (
    TOKEN_NOTE,
    VERTEX_AI,
    BodyParts,
    CacheModel,
    Provider,
    Route,
    TokenModel,
    Usage,
)
from ctxview.core.tokens import _json_len
from ctxview.core.usage import MAX_RECORDED_TOKENS

# -- usage ---------------------------------------------------------------------------------------


def _count(value: Any) -> int | None:
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value if 0 <= value <= MAX_RECORDED_TOKENS else None


def _metadata(wire: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """``usageMetadata`` from a response, a meta holding one, or the object itself."""
    for key in ("usageMetadata", "usage_metadata"):
        inner = wire.get(key)
        if isinstance(inner, Mapping):
            return inner
    if "promptTokenCount" in wire or "prompt_token_count" in wire:
        return wire
    return None


def usage(wire: Mapping[str, Any]) -> Usage | None:
    """A response's ``usageMetadata`` (or the response, or a meta holding it) in the canonical
    counts: ``promptTokenCount - cachedContentTokenCount`` uncached, the cached part read;
    output is ``candidatesTokenCount + thoughtsTokenCount`` (thinking is billed as output).
    A meta already in the canonical keys (``meta["usage"]`` as the readers write it) is read as
    it is. None when the counts are missing or not believable."""
    meta = _metadata(wire)
    if meta is None:
        canonical = wire.get("usage") if isinstance(wire.get("usage"), Mapping) else None
        if canonical is not None and "input_tokens" in canonical:
            from ctxview.core.providers.anthropic import usage as canonical_usage

            return canonical_usage(wire)
        return None

    def get(camel: str, snake: str) -> int | None:
        return _count(meta.get(camel, meta.get(snake)))

    prompt = get("promptTokenCount", "prompt_token_count")
    cached = get("cachedContentTokenCount", "cached_content_token_count")
    out = get("candidatesTokenCount", "candidates_token_count")
    thoughts = get("thoughtsTokenCount", "thoughts_token_count")
    if prompt is None or cached is None or out is None or thoughts is None or cached > prompt:
        return None
    if "promptTokenCount" not in meta and "prompt_token_count" not in meta:
        return None
    return Usage(prompt - cached, cached, 0, 0, out + thoughts)


def usage_meta(metadata: Any) -> dict[str, Any] | None:
    """``usageMetadata`` as a message's ``meta["usage"]`` (the canonical keys the request model
    reads), the original counts kept under ``"gemini"``; None when it records nothing usable."""
    if not isinstance(metadata, Mapping):
        return None
    found = usage(metadata)
    if found is None:
        return None
    out = found.as_meta()
    out["gemini"] = dict(metadata)
    return out


# -- tokens --------------------------------------------------------------------------------------

#: tokens of an image (258 for one up to 384 px a side, 258 per 768 px tile above; the Gemini
#: API's "Image understanding" page): the dimensions are rarely known offline, so one tile
IMAGE_TOKENS = 258
#: a document part with no text to measure (a PDF is 258 tokens a page): assume 6 pages
DOCUMENT_TOKENS = 6 * 258
#: a ``Content`` costs nothing beyond its parts, a request one token: read off recorded usage
#: (a request of one user text "Hi" is billed 2 tokens, "What is the capital of France?" with a
#: system instruction "You are a helpful chatbot." 13, the text tokens and one)
#: what every request adds (the turn's framing)
REQUEST_OVERHEAD_TOKENS = 1


#: characters a token where a value is measured by its length alone (a block ctxview does not
#: know, a built-in tool's JSON)
CHARS_PER_TOKEN = 4.0


def _text_tokens(n: int) -> int:
    return math.ceil(n / CHARS_PER_TOKEN) if n > 0 else 0


#: a word this long is split once more per as many letters again
LONG_WORD_SHIFT = 3  # 8 letters
#: a symbol or a letter outside ASCII: a token of its own, or a part of one with a neighbour
#: (fitted: three of four are a token apart)
SYMBOL_WEIGHT = 0.75
#: a digit: Gemini's vocabulary splits numbers into single digits, a token each
DIGIT_WEIGHT = 1.0
#: a line's indentation (two spaces or more, or a tab, after a newline): one token (pretty
#: JSON and code bill theirs; a single space or a newline is part of the next token)
INDENT_TOKENS = 1
_LETTERS = frozenset(range(65, 91)) | frozenset(range(97, 123))
_DIGITS = bytes(range(48, 58))
#: bytes -> ASCII letters kept, everything else a space (what splits into words)
_WORD_TABLE = bytes(c if c in _LETTERS else 32 for c in range(256))
#: bytes that are not a symbol: letters, digits, whitespace, and UTF-8 continuation bytes (a
#: character outside ASCII counts once, by its first byte)
_NOT_SYMBOLS = bytes(sorted(_LETTERS)) + _DIGITS + b" \t\n\r\x0b\x0c" + bytes(range(0x80, 0xC0))


def text_tokens(text: str) -> int:
    """Tokens of a text: an ASCII word a token (a long word one more per 8 letters), each digit
    a token, each symbol and other character :data:`SYMBOL_WEIGHT` of one (a ``**`` or ``##``
    pair as one symbol), each indented line's indentation a token. Gemini's vocabulary holds most words whole: counting words is closer
    than counting characters, on short prose (a one-line prompt is a few tokens) as on code
    and tool output (docs/gemini.md has the figures). Byte translation and counting, not a
    regular expression: tens of MB a second."""
    if not text:
        return 0
    vocabulary = gemini_vocabulary.active().vocabulary
    if vocabulary is not None:
        return vocabulary.count(text)
    raw = text.encode("utf-8", "surrogatepass")
    words = raw.translate(_WORD_TABLE).split()
    n = len(words) + sum(len(w) >> LONG_WORD_SHIFT for w in words)
    digits = len(raw) - len(raw.translate(None, _DIGITS))
    indents = raw.count(b"\n  ") + raw.count(b"\n\t")
    # Markdown's bold and heading marks: a pair is one symbol (the vocabulary holds "**" and
    # "##" whole)
    symbols = len(raw.translate(None, _NOT_SYMBOLS)) - raw.count(b"**") - raw.count(b"##")
    return math.ceil(n + SYMBOL_WEIGHT * symbols + DIGIT_WEIGHT * digits + INDENT_TOKENS * indents)


def _data_tokens(value: Any) -> int:
    """Tokens of a function call's arguments or a function's response (its JSON's words)."""
    if isinstance(value, str):
        return text_tokens(value)
    try:
        return text_tokens(json.dumps(value, ensure_ascii=False))
    except (TypeError, ValueError, RecursionError):
        return text_tokens(repr(value))


def _data_words(value: Any, depth: int = 0) -> int:
    """Tokens of a call's arguments or a function's response by their keys and values alone,
    none of the JSON's quotes, colons, commas and brackets (:attr:`Family.data_words`)."""
    if depth > 64:  # deeper than any real response: its JSON's words
        return _data_tokens(value)
    if isinstance(value, Mapping):
        return sum(text_tokens(str(k)) + _data_words(v, depth + 1) for k, v in value.items())
    if isinstance(value, list):
        return sum(_data_words(v, depth + 1) for v in value)
    if isinstance(value, str):
        return text_tokens(value)
    return _data_tokens(value)


def _response_words(content: str) -> int:
    """A tool result's text by :func:`_data_words`: the reader gives a function's response as
    its JSON (or the string of a one-key answer), read back here."""
    if content[:1] in ("{", "["):
        try:
            return _data_words(json.loads(content))
        except (ValueError, RecursionError):
            pass
    return text_tokens(content)


@dataclass(frozen=True, slots=True)
class Family:
    """What a family of Gemini models bills beyond the text of a request, fitted to the prompt
    tokens recorded for real request bodies (the tune set of ``benchmarks.gemini_tokens``;
    docs/gemini.md gives the figures)."""

    name: str
    #: a request that declares functions: the fixed cost of the tool-use framing
    tools: int
    #: each function call of the contents, its framing and its response's, beyond the words
    #: of its name, arguments and response (those counted as JSON, or by their keys and values
    #: where :attr:`data_words` is set)
    call: int
    #: each function declaration and each of its parameters' properties (nested ones too),
    #: beyond their words: the form the model reads them in
    declaration: int = 0
    property: int = 0
    #: each declaration whose response schema (``response``, ``responseJsonSchema``) declares
    #: properties: what framing a function's returns costs beyond its properties
    returns: int = 0
    #: a declaration's ``parametersJsonSchema`` is read (Gemini 2.5 and newer take it; Gemini
    #: 2.0 accepts it and bills none of it: a body declaring two functions by it was billed
    #: their names and descriptions alone)
    json_schema: bool = True
    #: ``generationConfig.responseSchema`` (structured output) is billed, by its words as a
    #: declaration's parameters are (Gemini 2.0: Braintrust's adk bodies declaring one were
    #: billed 11 and 47 tokens more than their text; Gemini 2.5 and newer bill none of it: a
    #: request of "Hi" with a schema was billed 2 tokens, as without; nor does 2.0 bill a
    #: ``responseJsonSchema``, as it reads no ``parametersJsonSchema``)
    response_schema: bool = False
    #: a call's arguments and a function's response are billed by their keys and values, not
    #: their JSON's punctuation (Gemini 2.0: a call with its response was billed its names, keys
    #: and values and a few tokens more, where the JSON's words put a five-key response 25 over)
    data_words: bool = False
    #: what every request adds (:data:`REQUEST_OVERHEAD_TOKENS`; Gemini 2.0 adds nothing:
    #: "What is the capital of France?" is billed its 7 tokens, "Hello, world!" its 4)
    request: int = REQUEST_OVERHEAD_TOKENS
    #: a sealed (field-2) thought signature of an earlier turn is billed (Gemini 3.5 and newer,
    #: on a call or a text part); False: only while its part is in the current turn (Gemini 3
    #: and 3.1: the same adk-go conversations were billed a signature's tokens in the request
    #: answering its call and none of them after the next user text, where Gemini 3.5 Flash
    #: went on billing them; :func:`signature_carry`)
    kept_signatures: bool = True
    #: what each ``Content`` and a system instruction add beyond their parts. Seen only when the
    #: text is counted exactly (:data:`VOCABULARY_FAMILIES`): 1 from Gemini 2.5 on (a one-turn
    #: request is billed its text's tokens and 1, 2 with a system instruction, a three-turn one
    #: 3), none before (Gemini 2.0 and 1.5 bill the text alone); the estimate by words folds it
    #: into :attr:`request`
    content: int = 0


#: fitted per family on the real bodies of the tune set (``benchmarks.gemini_tokens``: the
#: integers of least mean relative error; docs/request-model.md has the figures)
FAMILIES: dict[str, Family] = {
    "3.5": Family("Gemini 3.5 and newer", 2, 16, declaration=11, property=11),
    # tools: every Gemini 3.1 Pro request declaring a function was billed 9 to 18 more than
    # Gemini 3's framing (median 11; ruby_llm's thought-signature requests, adk-go's parallel
    # calls, fantasy's tool and thinking requests: one declaration each), where Gemini 3 Pro's
    # were within a few tokens
    "3.1": Family("Gemini 3.1", 13, 16, declaration=11, property=11, kept_signatures=False),
    "3": Family("Gemini 3", 2, 16, declaration=11, property=11, kept_signatures=False),
    # returns: adk-go's Gemini 2.5 Flash requests declaring one function that returns an object
    # (four tests, one or two properties returned) were each billed 25 more than the same
    # count of a declaration's parts; one returning a string was billed as estimated
    "2.5": Family("Gemini 2.5", 6, 11, declaration=9, property=13, returns=25),
    # call: fitted with data_words on the tune set's Gemini 2.0 bodies with calls (pai's
    # iter_stream, multiple_agent_tool_calls, tool_config_any, structured_output)
    "2": Family(
        "Gemini 2.0", 1, 3, json_schema=False, response_schema=True, request=0, data_words=True
    ),
    # what Gemini 2.0 bills a call and its tools: no body of an older model tells otherwise
    "1": Family(
        "Gemini 1.5 and older", 1, 3, json_schema=False, response_schema=True, data_words=True
    ),
}
#: the same costs where Gemini's own vocabulary counts the text (:mod:`gemini_vocabulary`): the
#: framing constants above absorb the word estimate's bias on JSON and names, so they are
#: fitted again on exact text counts (``benchmarks.gemini_tokens``' bodies of the tune set and
#: the first four unseen sets, Gemini API route: the integers of least mean relative error by
#: coordinate descent; the fifth and sixth unseen sets judged; docs/gemini.md has the figures).
#: A request adds nothing beyond its ``Content``s and system instruction (:attr:`Family.content`)
VOCABULARY_FAMILIES: dict[str, Family] = {
    "3.5": dataclasses.replace(
        FAMILIES["3.5"],
        tools=0,
        call=10,
        declaration=20,
        property=19,
        returns=5,
        request=0,
        content=1,
    ),
    "3.1": dataclasses.replace(
        FAMILIES["3.1"], call=10, declaration=22, property=10, request=0, content=1
    ),
    "3": dataclasses.replace(FAMILIES["3"], call=12, property=18, request=0, content=1),
    "2.5": dataclasses.replace(
        FAMILIES["2.5"], tools=9, call=13, property=12, returns=27, request=0, content=1
    ),
    "2": dataclasses.replace(FAMILIES["2"], tools=2, call=2, property=1, request=0, content=0),
    "1": dataclasses.replace(FAMILIES["1"], request=0, content=0),
}
_FAMILY = re.compile(r"gemini-(\d+)(?:\.(\d+))?")


def family(model: str | None) -> Family:
    """The family of ``model``; an unknown one (a request body names none: the path did) is
    taken for the newest."""
    table = VOCABULARY_FAMILIES if gemini_vocabulary.active().vocabulary else FAMILIES
    return table[_family_key(model)]


def _family_key(model: str | None) -> str:
    found = _FAMILY.match(normalise(model)) if model else None
    if found is None:
        return "3.5"
    major, minor = int(found.group(1)), int(found.group(2) or 0)
    if (major, minor) >= (3, 5):
        return "3.5"
    if (major, minor) >= (3, 1):
        return "3.1"
    if major >= 3:
        return "3"
    if (major, minor) >= (2, 5):
        return "2.5"
    return "2" if major == 2 else "1"


def block_tokens(block: Any, fam: Family | None = None, thoughts: bool = False) -> int:
    """Estimated tokens of one canonical block. ``fam``: the model's family (None: only the
    block's text); ``thoughts``: a thought's text was sent (a request body holds it; a Gemini
    CLI session's thoughts are its records', which its requests' usage shows are not billed)."""
    if not isinstance(block, Mapping):
        return _text_tokens(_json_len(block))
    kind = block.get("type")
    if kind == "text":
        text = block.get("text")
        n = text_tokens(text) if isinstance(text, str) else 0
        if fam is not None and _field_2(block.get("signature")):
            # a text part's sealed signature, as a call's (Gemini 3.5 Flash's adk-go agents)
            n += _kept_signature_tokens(block, fam)
        return n
    if kind == "thinking":
        text = block.get("thinking")
        return text_tokens(text) if thoughts and isinstance(text, str) else 0
    words = fam is not None and fam.data_words
    if kind in ("tool_use", "server_tool_use"):
        data = block.get("input", {})
        n = text_tokens(str(block.get("name", ""))) + (
            _data_words(data) if words else _data_tokens(data)
        )
        if fam is not None and kind == "tool_use":
            n = max(0, n + fam.call) + _kept_signature_tokens(block, fam)
        return n
    if kind == "tool_result":
        content = block.get("content", "")
        if isinstance(content, list):
            return sum(block_tokens(b) for b in content)
        if words and isinstance(content, str):
            return _response_words(content)
        return _data_tokens(content)
    if kind == "image":
        return IMAGE_TOKENS
    if kind == "document":
        return DOCUMENT_TOKENS
    return _text_tokens(_json_len({k: v for k, v in block.items() if k != "type"}))


def estimate_message(
    message: Mapping[str, Any], fam: Family | None = None, thoughts: bool = False
) -> int:
    """Estimated prompt tokens of one canonical message read from a Gemini ``Content``."""
    framing = fam.content if fam is not None else 0
    content = message.get("content", "")
    if isinstance(content, str):
        return framing + text_tokens(content)
    if not isinstance(content, list):
        return framing + _text_tokens(_json_len(content))
    return framing + sum(block_tokens(b, fam, thoughts) for b in content)


#: characters of a thought signature's billed part per token (the growth of requests that
#: added one signed call, and of requests whose signatures were streamed chunks joined)
SIGNATURE_CHARS_PER_TOKEN = 6.0
_BASE64 = str.maketrans("-_", "+/")


def _leading_record(signature: str) -> int:
    """Characters of a signature's leading protobuf record of field 1 (``0x0A``, a length, the
    bytes), the form of a whole Gemini 2.5 or Vertex AI signature; 0 when it starts otherwise."""
    head = signature[:12].translate(_BASE64)
    try:
        raw = base64.b64decode(head[: len(head) // 4 * 4], validate=True)
    except (binascii.Error, ValueError):
        return 0
    if len(raw) < 2 or raw[0] != 0x0A:
        return 0
    length, shift, i = 0, 0, 1
    while i < len(raw) and i <= 5:
        byte = raw[i]
        length |= (byte & 0x7F) << shift
        shift += 7
        i += 1
        if not byte & 0x80:
            return min(len(signature), math.ceil((i + length) * 4 / 3))
    return 0


def _billed_chars(signature: Any) -> tuple[int, bool]:
    """(characters of a signature's billed part, whether that part is the records joined after
    a leading field-1 record)."""
    if not isinstance(signature, str) or not signature:
        return 0, False
    lead = _leading_record(signature)
    return max(0, len(signature.rstrip("=")) - lead), lead > 0  # padding is no data


def _chars_tokens(chars: int) -> int:
    return math.ceil(chars / SIGNATURE_CHARS_PER_TOKEN) if chars > 0 else 0


def signature_tokens(signature: Any) -> int:
    """Tokens a function call's thought signature is billed while its call is in the current
    turn: all of it but a leading field-1 record. Recorded usage shows three forms: one field-1
    record (Gemini 2.5, and Gemini 3 on Vertex AI) is billed nothing; a field-2 record (Gemini 3
    on the Gemini API) is billed whole, about its reasoning's tokens (in any turn by Gemini 3.5
    and newer, in its own turn by Gemini 3 and 3.1: :attr:`Family.kept_signatures`); several
    field-1 records joined (a client that concatenated a stream's per-chunk signatures) are
    billed all but the first, and only while the call is in the current turn
    (:func:`joined_signature_tokens`). :data:`SIGNATURE_CHARS_PER_TOKEN` characters a token
    (docs/gemini.md has the figures)."""
    return _chars_tokens(_billed_chars(signature)[0])


def sealed_signature_tokens(signature: Any) -> int:
    """The part of :func:`signature_tokens` of a signature that does not open with a field-1
    record (Gemini 3's on the Gemini API): billed in any turn by Gemini 3.5 and newer, while its
    part is in the current turn by Gemini 3 and 3.1 (:attr:`Family.kept_signatures`)."""
    chars, joined = _billed_chars(signature)
    return 0 if joined else _chars_tokens(chars)


def joined_signature_tokens(signature: Any) -> int:
    """The part of :func:`signature_tokens` billed only while its call is in the current turn:
    the records joined after a leading field-1 record. Recorded: Gemini 2.5 requests identical
    but for the turn a call with joined records was in were billed the records in its own turn
    (the request answering the call) and none of them once a user text had followed."""
    chars, joined = _billed_chars(signature)
    return _chars_tokens(chars) if joined else 0


def _field_2(signature: Any) -> bool:
    """A signature that opens with a record of field 2 (``0x12``: Gemini 3's on the Gemini
    API); not a client's placeholder such as ``skip_thought_signature_validator`` in base64,
    which the tune set's Gemini 3 Flash bodies were billed in earlier turns too."""
    if not isinstance(signature, str):
        return False
    head = signature[:4].translate(_BASE64)
    try:
        raw = base64.b64decode(head, validate=True)
    except (binascii.Error, ValueError):
        return False
    return raw[:1] == b"\x12"


def _turn_only(signature: Any, fam: Family | None) -> bool:
    """The family bills this sealed signature only while its part is in the current turn."""
    return fam is not None and not fam.kept_signatures and _field_2(signature)


def _kept_signature_tokens(block: Mapping[str, Any], fam: Family) -> int:
    """What a call's or a text part's signature is billed in any turn: its sealed part, unless
    the family bills it only in the current turn (carried: :func:`signature_carry`)."""
    signature = block.get("signature")
    return 0 if _turn_only(signature, fam) else sealed_signature_tokens(signature)


def _standard_user(message: Any) -> bool:
    """A user Content that is not only function responses: it starts a new turn."""
    if not isinstance(message, Mapping) or message.get("role") != "user":
        return False
    content = message.get("content")
    if not isinstance(content, list):
        return True
    return any(not (isinstance(b, Mapping) and b.get("type") == "tool_result") for b in content)


def turn_start(messages: Sequence[Any]) -> int:
    """Where the current turn starts: after the last user Content that is not only function
    responses (every step since is the current turn); 0 when there is none. Read from the end:
    a long session costs only its last turn."""
    for i in range(len(messages) - 1, -1, -1):
        if _standard_user(messages[i]):
            return i + 1
    return 0


def signature_carry(message: Mapping[str, Any], fam: Family | None = None) -> tuple[bool, int]:
    """A message's part in what a request's calls carry beyond their estimates
    (``TokenModel.carry``): a user Content that is not only function responses starts a turn;
    a model Content's calls carry their joined signature records
    (:func:`joined_signature_tokens`), and where the family bills a sealed signature only in
    the current turn (Gemini 3 and 3.1) its calls' and text parts' sealed signatures, billed
    while they are in the current turn."""
    if _standard_user(message):
        return True, 0
    content = message.get("content")
    if not isinstance(content, list) or message.get("role") != "assistant":
        return False, 0
    n = 0
    for b in content:
        if not isinstance(b, Mapping) or b.get("type") not in ("tool_use", "text"):
            continue
        signature = b.get("signature")
        if b.get("type") == "tool_use":
            n += joined_signature_tokens(signature)
        if _turn_only(signature, fam):
            n += sealed_signature_tokens(signature)
    return False, n


def estimate_system(system: Any, fam: Family | None = None) -> int:
    """A system instruction's tokens (its text alone), with what every request to the family
    adds (``fam`` None: :data:`REQUEST_OVERHEAD_TOKENS`)."""
    if fam is None:
        overhead = REQUEST_OVERHEAD_TOKENS
    else:
        # a system instruction adds what a Content does (:attr:`Family.content`)
        overhead = fam.request + (fam.content if system else 0)
    if isinstance(system, str):
        return overhead + text_tokens(system)
    if not isinstance(system, list):
        return overhead
    texts = (b.get("text") for b in system if isinstance(b, Mapping))
    return overhead + sum(text_tokens(t) for t in texts if isinstance(t, str))


#: the JSON Schema keys whose values are words the model reads (the others are structure)
_SCHEMA_WORDS = ("description", "title")


def _schema_words(schema: Any, out: list[str]) -> int:
    """The words of a parameters schema as billed, appended to ``out``: property names,
    descriptions and enum values (a declaration is not billed as its JSON: its structure costs
    next to nothing); returns how many properties it declares, nested ones too."""
    n = 0
    if isinstance(schema, list):
        for x in schema:
            n += _schema_words(x, out)
    elif isinstance(schema, Mapping):
        for key, value in schema.items():
            if key == "properties" and isinstance(value, Mapping):
                for name, sub in value.items():
                    out.append(str(name))
                    n += 1 + _schema_words(sub, out)
            elif key in _SCHEMA_WORDS and isinstance(value, str):
                out.append(value)
            elif key == "enum" and isinstance(value, list):
                out.extend(str(x) for x in value)
            elif isinstance(value, Mapping | list):
                n += _schema_words(value, out)
    return n


_DECLARATIONS = ("functionDeclarations", "function_declarations")
#: a declaration's parameters: an OpenAPI subset schema, or JSON Schema (the latter read by
#: the families whose ``json_schema`` is set)
_OPENAPI_PARAMETERS = ("parameters", "response")
_JSON_SCHEMA_PARAMETERS = (
    "parametersJsonSchema",
    "parameters_json_schema",
    "responseJsonSchema",
    "response_json_schema",
)


#: a declaration's response schema (what the function returns)
_RETURNS = frozenset(("response", "responseJsonSchema", "response_json_schema"))


def _declares_properties(schema: Any) -> bool:
    return isinstance(schema, Mapping) and isinstance(schema.get("properties"), Mapping)


def declarations_billed(route: Route | None) -> bool:
    """Whether a request's function declarations are in its recorded prompt tokens: not in
    Vertex AI's usage of a streamed request (``streamGenerateContent``). The same conversation
    was billed 73 on Vertex AI's stream and 181 on the Gemini API's (charmbracelet/fantasy's
    two-tool request, Gemini 2.5 Flash and Pro alike; its declarations estimated 98), 174
    against 238 and 76 against 120 (ruby_llm's streamed tool tests, the same bodies; 83 and 30
    estimated); Vertex AI's non-streamed requests bill them as the Gemini API does (ruby_llm's
    ``can_use_tools_without_parameters``: 90 on both). Unknown (a lone body): billed, as on
    the Gemini API and every non-streamed endpoint."""
    return route is None or not (route.api == VERTEX_AI and route.streamed)


def estimate_tools(tools: Any, fam: Family | None = None, billed: bool = True) -> int:
    """Tokens of the ``tools`` (a list of Tool objects): each function declaration's name,
    description, parameters' and response schema's words, with the family's tool-use framing
    once and its framing of each declaration, property and object returned; a built-in
    tool (Google Search, code execution) as its JSON. ``billed``: whether the route bills
    the function declarations (:func:`declarations_billed`; the built-in tools are
    counted either way)."""
    if not tools:
        return 0
    fam = fam or FAMILIES["3"]
    keys = _OPENAPI_PARAMETERS + (_JSON_SCHEMA_PARAMETERS if fam.json_schema else ())
    items = tools if isinstance(tools, list) else [tools]
    words: list[str] = []
    declarations = properties = returns = 0
    other = 0
    for tool in items:
        if not isinstance(tool, Mapping):
            other += _text_tokens(_json_len(tool))
            continue
        for key, value in tool.items():
            if key in _DECLARATIONS and isinstance(value, list):
                if not billed:
                    continue
                for d in value:
                    if not isinstance(d, Mapping):
                        continue
                    declarations += 1
                    words.append(str(d.get("name", "")))
                    words.append(str(d.get("description") or ""))
                    for k in keys:
                        if k in d:
                            properties += _schema_words(d[k], words)
                    returns += any(_declares_properties(d.get(k)) for k in keys if k in _RETURNS)
            else:
                other += _text_tokens(_json_len({key: value}))
    framing = (
        fam.tools
        + declarations * fam.declaration
        + properties * fam.property
        + returns * fam.returns
        if declarations
        else 0
    )
    return framing + sum(text_tokens(w) for w in words) + other


_GENERATION_CONFIG = ("generationConfig", "generation_config")
_RESPONSE_SCHEMA = ("responseSchema", "response_schema")


def estimate_params(params: Mapping[str, Any], fam: Family | None = None) -> int:
    """Tokens of a request's other fields billed as input: the structured-output schema of
    ``generationConfig`` where the family bills it (:attr:`Family.response_schema`), by its
    words and properties as a declaration's parameters."""
    fam = fam or FAMILIES["3.5"]
    if not fam.response_schema:
        return 0
    for key in _GENERATION_CONFIG:
        config = params.get(key)
        if not isinstance(config, Mapping):
            continue
        for name in _RESPONSE_SCHEMA:
            if name in config:
                words: list[str] = []
                properties = _schema_words(config[name], words)
                return properties * fam.property + sum(text_tokens(w) for w in words)
    return 0


def token_model(model: str | None, fmt: str = "gemini", route: Route | None = None) -> TokenModel:
    """The token estimate of a request to ``model`` of a file of format ``fmt`` sent by
    ``route`` (None: not known): its family's costs; thought text counted where the file holds
    what was sent (a request body); function declarations where the route bills them
    (:func:`declarations_billed`)."""
    fam = family(model)
    thoughts = fmt == "gemini"
    declarations = declarations_billed(route)
    state = gemini_vocabulary.active()
    basis = f"{BASIS}; {fam.name}"
    note = None
    if state.vocabulary is not None:
        basis = f"{VOCABULARY_BASIS} ({state.vocabulary.path}), {_BASIS_REST}; {fam.name}"
        note = f"{TOKEN_NOTE}Gemini text counted by Gemini's vocabulary ({state.vocabulary.path})"
    elif state.problem is not None:
        basis += f"; Gemini's vocabulary not used: {state.problem}"
        note = (
            f"{TOKEN_NOTE}Gemini's vocabulary not used, text estimated by its words: "
            f"{state.problem}"
        )
    if route is not None:
        basis += f"; sent by {route.label()}"
        if not declarations:
            basis += " (its usage leaves the function declarations out)"
    return TokenModel(
        lambda m: estimate_message(m, fam, thoughts),
        CALIBRATED_FORMATS,
        basis,
        system=lambda system: estimate_system(system, fam),
        tools=lambda tools: estimate_tools(tools, fam, declarations),
        params=lambda params: estimate_params(params, fam),
        carry=lambda m: signature_carry(m, fam),
        select=token_model,
        # a Gemini CLI session's messages: rates fitted to its recorded growth count the
        # thoughts its records hold and its requests do not bill (docs/gemini.md has the figures)
        counts_own=True,
        note=note,
    )


#: the formats whose recorded usage calibrates the estimate
CALIBRATED_FORMATS = frozenset(("gemini-cli", "otel"))
#: how everything but the text is counted
_BASIS_REST = (
    "258 an image (one tile), a function call's framing by model family, "
    "its thought signature by the part billed, function declarations by "
    "their words (Gemini 2.0's response schema too), calibrated from recorded usage where a "
    "Gemini CLI session or a trace has it"
)
BASIS = f"text by its words, {_BASIS_REST}"
#: what the basis says of the text when Gemini's own vocabulary counts it
VOCABULARY_BASIS = "text counted by Gemini's vocabulary"


# -- cache ---------------------------------------------------------------------------------------

CACHE_SOURCE = (
    "Gemini API 'Context caching' (ai.google.dev/gemini-api/docs/caching): implicit caching "
    "on Gemini 2.5 and newer, minimum input tokens per model"
)
CACHE_DATE = "2026-12-02 (the page as last updated 2026-07-07; an earlier version listed 1,024 "
"for 2.5 Flash and 3 Flash Preview, 4,096 for 2.5 Pro and 3 Pro Preview)"

#: the minimum prompt implicit caching needs, per model (names as :func:`normalise` leaves them)
MINIMUMS: dict[str, Minimum] = {
    "gemini-3.8-flash": Minimum(4096),
    "gemini-3.7-flash": Minimum(4096),
    "gemini-3.6-flash": Minimum(4096),
    "gemini-3.5-flash": Minimum(4096),
    "gemini-3.1-pro-preview": Minimum(4096),
    "gemini-3-pro-preview": Minimum(4096),
    "gemini-3-flash-preview": Minimum(1024),
    "gemini-2.5-flash": Minimum(2048),
    "gemini-2.5-pro": Minimum(2048),
}
#: Gemini 2.0 and 1.5 have explicit caching only (implicit caching starts with 2.5)
NO_IMPLICIT = Minimum(
    MAX_RECORDED_TOKENS, False, "no implicit caching before Gemini 2.5 (explicit caches only)"
)
DEFAULT_MINIMUM = Minimum(
    4096, False, "assumed 4,096 tokens, the largest minimum of the models the page lists"
)


def minimum(model: str | None) -> Minimum:
    if not model:
        return DEFAULT_MINIMUM
    name = normalise(model)
    found = MINIMUMS.get(name) or MINIMUMS.get(name.removesuffix("-preview"))
    if found is not None:
        return found
    if re.match(r"gemini-(1\.|2\.0)", name):
        return NO_IMPLICIT
    if re.match(r"gemini-2\.5-flash", name):
        return MINIMUMS["gemini-2.5-flash"]
    return DEFAULT_MINIMUM


CACHE = CacheModel(
    kind="prefix",
    minimum=minimum,
    step=1,
    write_charge=False,
    # how long an implicit cache lives is not documented (requests "in a short amount of time"
    # hit it): five minutes assumed, as the other providers' prefix caches; an explicit cache
    # lives an hour unless its ``ttl`` says otherwise
    ttls={"5m": 300.0, "1h": 3600.0},
    key_field="cachedContent",
    source=CACHE_SOURCE,
    date=CACHE_DATE,
)

# -- prices --------------------------------------------------------------------------------------

PRICES_URL = "https://ai.google.dev/gemini-api/docs/pricing"
PRICES_SOURCE = (
    "Gemini Developer API pricing, paid tier, prompts up to 200k tokens (models.dev @ f3fc692 "
    "providers/google/models/*.toml, which cites the page; the 3.x Flash and 3.1 Pro rows checked "
    "against a transcription of the page read 2026-10-07)"
)
PRICES_DATE = "2026-12-02 (as read that day; prompts over 200k tokens cost more on Pro models)"


def _price(inp: float, cached: float, out: float) -> Price:
    # no cache write charge: an explicit cache is created at the input rate (storage by the
    # hour is apart), an implicit one costs nothing to write
    return Price(inp, inp, inp, cached, out)


PRICES: dict[str, Price] = {
    "gemini-3.8-flash": _price(0.75, 0.075, 3.75),
    "gemini-3.6-flash": _price(0.75, 0.075, 3.75),
    "gemini-3.5-flash": _price(1.50, 0.15, 9.00),
    "gemini-3.1-pro-preview": _price(2.00, 0.20, 12.00),
    "gemini-3.1-flash-lite": _price(0.25, 0.025, 1.50),
    "gemini-3-pro-preview": _price(2.00, 0.20, 12.00),
    "gemini-3-flash-preview": _price(0.50, 0.05, 3.00),
    "gemini-2.5-pro": _price(1.25, 0.125, 10.00),
    "gemini-2.5-flash": _price(0.30, 0.03, 2.50),
    "gemini-2.5-flash-lite": _price(0.10, 0.01, 0.40),
    "gemini-2.0-flash": _price(0.10, 0.025, 0.40),
    "gemini-2.0-flash-lite": _price(0.075, 0.075, 0.30),
}
#: the day each price took effect (a model's release day, or the page's own date)
EFFECTIVE: dict[str, str] = {
    "gemini-3.8-flash": "introductory price through 2026-12-31 ($1.50 / $7.50 from 2027-01-01)",
    "gemini-3.6-flash": "introductory price through 2026-12-31 ($1.50 / $7.50 from 2027-01-01)",
    "gemini-3.5-flash": "2026-05-19",
    "gemini-3.1-pro-preview": "2026-02-19",
    "gemini-3.1-flash-lite": "2026-05-07",
    "gemini-3-pro-preview": "2025-11-18",
    "gemini-3-flash-preview": "2025-12-17",
    "gemini-2.5-flash-lite": "2025-06-17",
    "gemini-2.0-flash": "2024-12-11",
    "gemini-2.0-flash-lite": "2024-12-11",
}

_VERSION_SUFFIX = re.compile(r"-(\d{3}|latest|exp(-\d{4})?|preview-\d\d-\d\d(\d\d)?)$")


def normalise(model: str) -> str:
    """``models/gemini-2.0-flash-001`` -> ``gemini-2.0-flash``; a dated preview
    (``gemini-2.5-pro-preview-05-06``) -> its model (``gemini-2.5-pro``) when only that is
    listed."""
    name = model.strip().lower().rsplit("/", 1)[-1]
    if name in PRICES or name in MINIMUMS:
        return name
    base = _VERSION_SUFFIX.sub("", name)
    if base in PRICES or base in MINIMUMS:
        return base
    short = base.removesuffix("-preview")
    return short if short in PRICES else base


PRICE_BOOK = PriceBook(
    "gemini",
    PRICES,
    normalise,
    PRICES_SOURCE,
    PRICES_URL,
    PRICES_DATE,
    "",
    EFFECTIVE,
)

# -- rules ---------------------------------------------------------------------------------------

_ISSUES = "https://github.com/google-gemini/gemini-cli/issues/"

#: the API's text when a model turn with function calls does not follow a user turn (a user
#: text turn, or a function response turn)
CALL_TURN_ORDER = (
    "Please ensure that function call turn comes immediately after a user turn or after a "
    "function response turn."
)


def _calls(message: Any) -> list[str]:
    content = message.get("content") if isinstance(message, Mapping) else None
    if not isinstance(content, list):
        return []
    return [
        str(b.get("id")) for b in content if isinstance(b, Mapping) and b.get("type") == "tool_use"
    ]


def call_turn_order(messages: Sequence[Any]) -> list[Problem]:
    """A model turn with function calls comes after a user turn: a history must not start with
    one (google-gemini/gemini-cli#11814: "when the sent conversation history starts with a
    function call"). Consecutive model contents are one turn, as the API merges them (a recorded
    request it accepted, ``pai_cross_provider_capability_replay_openai_responses_*_req5``, holds
    two model contents with calls answered by one function response turn); a lone model turn is
    a response, not a history."""
    lead = 0
    while lead < len(messages):
        m = messages[lead]
        if not isinstance(m, Mapping) or m.get("role") != "assistant":
            break
        lead += 1
    if lead == len(messages):
        return []
    for i in range(lead):
        ids = _calls(messages[i])
        if ids:
            text = f"{CALL_TURN_ORDER} (contents[{i}])"
            return [Problem(i, "function_call_turn_order", "error", text, None, tuple(ids))]
    return []


#: the API's text when a function call of the current turn is sent back without the
#: ``thoughtSignature`` the model gave it (Gemini 3); ``{name}`` the call, ``{position}`` the
#: Content holding it, counted from 1 (every reported position is even: the model Contents of a
#: user/model history are the 2nd, 4th, ...)
MISSING_SIGNATURE = (
    "Function call is missing a thought_signature in functionCall parts. This is required for "
    "tools to work correctly, and missing thought_signature may lead to degraded model "
    "performance. Additional data, function call `default_api:{name}` , position {position}. "
    "Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details."
)


def thought_signatures(messages: Sequence[Any]) -> list[Problem]:
    """Gemini 3 validates the thought signatures of the current turn (every step since the last
    user Content that is not only function responses): the first function call of each model
    Content (a step) must carry the ``thoughtSignature`` the model gave it; the other calls of a
    step (parallel calls) have none. Earlier turns are not validated (Gemini API docs, "Thought
    signatures")."""
    start = turn_start(messages)
    out: list[Problem] = []
    for i in range(start, len(messages)):
        m = messages[i]
        content = m.get("content") if isinstance(m, Mapping) else None
        if not isinstance(content, list) or m.get("role") != "assistant":
            continue
        for j, b in enumerate(content):
            if isinstance(b, Mapping) and b.get("type") == "tool_use":
                signature = b.get("signature")
                if not (isinstance(signature, str) and signature):
                    text = MISSING_SIGNATURE.format(name=b.get("name", ""), position=i + 1)
                    out.append(
                        Problem(
                            i,
                            "missing_thought_signature",
                            "error",
                            f"{text} (contents[{i}].parts[{j}])",
                            j,
                            (str(b.get("id")),),
                        )
                    )
                break
    return out


#: the API's text for a Content with no parts (any role, any place: the final model Content too)
EMPTY_PARTS = "* GenerateContentRequest.contents[{index}].parts: contents.parts must not be empty."
#: the API's text for a part none of whose data fields (the ``data`` oneof) is set
NO_DATA = (
    "* GenerateContentRequest.contents[{index}].parts[{block}].data: required oneof field 'data' "
    "must have one initialized field"
)
#: the fields of a Part's ``data`` oneof (both spellings the API reads), and the Part's other
#: fields: a part holding only the latter (``{}``, ``{"thought": true}``, a null
#: ``text``) sets no data; a field of neither list is not judged (a newer data field). A part
#: with a thought signature and no data is accepted: ``{"thought": true, "thoughtSignature":
#: ...}`` (a client that kept a thought's signature and dropped its summary; Gemini 3 Flash
#: Preview answered it, on the Gemini API and on Vertex AI) and ``{"thoughtSignature": ...}``
#: alone (the closing part Gemini 3 returns; gemini-3.1-pro-preview answered it sent back)
_DATA_FIELDS = frozenset(
    {
        "text",
        "inlineData",
        "inline_data",
        "fileData",
        "file_data",
        "functionCall",
        "function_call",
        "functionResponse",
        "function_response",
        "executableCode",
        "executable_code",
        "codeExecutionResult",
        "code_execution_result",
        "toolCall",
        "tool_call",
        "toolResponse",
        "tool_response",
    }
)
_OTHER_FIELDS = frozenset(
    {
        "thought",
        "thoughtSignature",
        "thought_signature",
        "videoMetadata",
        "video_metadata",
        "partMetadata",
        "part_metadata",
        "mediaResolution",
        "media_resolution",
    }
)


def _sets_no_data(block: Any) -> bool:
    """A block read from a Part that sets no data field (the reader keeps such a part whole in
    ``gemini_part``)."""
    if not isinstance(block, Mapping) or "gemini_part" not in block:
        return False
    part = block["gemini_part"]
    if not isinstance(part, Mapping):
        return False
    if any(part.get(k) is not None for k in _DATA_FIELDS):
        return False
    if part.get("thoughtSignature") or part.get("thought_signature"):
        # the closing part Gemini 3 returns with a signature and no data, sent back as it came
        return False
    return all(k in _DATA_FIELDS or k in _OTHER_FIELDS for k in part)


def empty_parts(messages: Sequence[Any]) -> list[Problem]:
    """Every Content holds at least one part, and every part sets one data field. An empty
    text (``{"text": ""}``) is data: recorded requests the API accepted hold it in user and model
    Contents. Model Contents alone are a response (one blocked by safety has no parts), not a
    request."""
    out: list[Problem] = []
    if all(isinstance(m, Mapping) and m.get("role") == "assistant" for m in messages):
        return out
    for i, m in enumerate(messages):
        content = m.get("content") if isinstance(m, Mapping) else None
        if not isinstance(content, list):
            continue
        if not content:
            out.append(Problem(i, "empty_content", "error", EMPTY_PARTS.format(index=i)))
            continue
        for j, b in enumerate(content):
            if _sets_no_data(b):
                text = NO_DATA.format(index=i, block=j)
                out.append(Problem(i, "part_without_data", "error", text, j))
    return out


RULES = RuleSet(
    "gemini",
    {
        "unanswered_tool_use": Rule(
            "unanswered_tool_use",
            "Please ensure that the number of function response parts is equal to the number of "
            "function call parts of the function call turn. (contents[{index}]: {ids})",
            f"400 INVALID_ARGUMENT, {_ISSUES}4217, {_ISSUES}16415",
        ),
        "duplicate_tool_result": Rule(
            "duplicate_tool_result",
            "Please ensure that the number of function response parts is equal to the number of "
            "function call parts of the function call turn. (contents[{index}]: {ids})",
            f"400 INVALID_ARGUMENT, {_ISSUES}4217",
        ),
        "orphan_tool_result": Rule(
            "orphan_tool_result",
            "Please ensure that function response turn comes immediately after a function call "
            "turn. (contents[{index}]: {ids})",
            "400 INVALID_ARGUMENT, https://github.com/langchain-ai/langchain/issues/27799",
        ),
    },
    checks=(call_turn_order, empty_parts),
    # A call turn followed by a user Content of text alone is accepted: req_llm's recorded
    # tool_round_trip_2 bodies (Gemini 2.0 Flash, 2.0 Flash-Lite, 2.5 Flash, 2.5 Pro, Flash
    # latest: 8 bodies) sent the tool's result as a text part and were answered. The API's
    # error counts the function response parts of the turn that answers the calls.
    unanswered_without_results=False,
)
#: the rules of a model that validates thought signatures (Gemini 3 and newer)
SIGNED_RULES = dataclasses.replace(
    RULES, provider="gemini-3", checks=(*RULES.checks, thought_signatures)
)

_MAJOR = re.compile(r"gemini-(\d+)")


def validates_signatures(model: str | None) -> bool:
    """Gemini 3 and newer validate the thought signatures of function calls; Gemini 3 Pro Image
    does not (Vertex AI docs, "Thought signatures"), nor do earlier models. An unknown model is
    not checked."""
    if not model:
        return False
    name = normalise(model)
    found = _MAJOR.match(name)
    return found is not None and int(found.group(1)) >= 3 and "-image" not in name


def model_rules(rules: RuleSet, fmt: str, model: str | None) -> RuleSet:
    """The rule set of a request body (format ``gemini``) to ``model``: :data:`SIGNED_RULES`
    where the model validates thought signatures. A Gemini CLI session is not checked by that
    rule: its records hold the calls but never the signatures the CLI sent with them."""
    signed = fmt == "gemini" and validates_signatures(model)
    return SIGNED_RULES if rules is RULES and signed else rules


# -- request body --------------------------------------------------------------------------------


def parts_of(content: Mapping[str, Any]) -> Any:
    """A ``Content``'s ``parts``: one Part object where an array is documented is a list of one.
    The API reads a lone value for a repeated field (it answered a ``systemInstruction`` whose
    ``parts`` is one object, and a lone ``tools`` object): not an error of the file."""
    parts = content.get("parts", [])
    return [parts] if isinstance(parts, Mapping) else parts


def system_of(instruction: Any, path: str) -> str | list[dict[str, Any]] | None:
    """``systemInstruction`` (a ``Content``, or a plain string) as text blocks."""
    if instruction is None:
        return None
    if isinstance(instruction, str):
        return instruction
    if not isinstance(instruction, Mapping):
        raise ValueError(f"{path}: expected a Content object, got {type(instruction).__name__}")
    parts = parts_of(instruction)
    if not isinstance(parts, list):
        raise ValueError(f"{path}.parts: expected an array of parts, got {type(parts).__name__}")
    return [
        {"type": "text", "text": p["text"] if isinstance(p.get("text"), str) else ""}
        for p in parts
        if isinstance(p, Mapping)
    ]


_MADE_UP_ID = re.compile(r".+#\d+\.\d+(!unanswered)?$")


def _real_id(value: Any) -> str | None:
    return value if isinstance(value, str) and not _MADE_UP_ID.fullmatch(value) else None


def _sign(part: dict[str, Any], block: Mapping[str, Any]) -> dict[str, Any]:
    """``part`` with the block's ``signature`` as its ``thoughtSignature``: a signature is never
    dropped when a message is written from its blocks (:data:`MISSING_SIGNATURE`)."""
    signature = block.get("signature")
    if isinstance(signature, str) and signature:
        part["thoughtSignature"] = signature
    return part


def response_text(response: Any) -> str:
    """A ``functionResponse.response`` as the text shown: the string of a one-key ``output`` /
    ``result`` / ``content`` answer (how tools usually answer), else its JSON."""
    if isinstance(response, Mapping) and len(response) == 1:
        (key, value), *_ = response.items()
        if key in ("output", "result", "content") and isinstance(value, str):
            return value
    if isinstance(response, str):
        return response
    return json.dumps(response, ensure_ascii=False)


def shown_whole(response: Any) -> bool:
    """The answer is what :func:`block_part` writes for its text: ``{"output": text}``."""
    return (
        isinstance(response, Mapping)
        and len(response) == 1
        and isinstance(response.get("output"), str)
    )


def block_part(block: Mapping[str, Any], names: Mapping[str, str]) -> dict[str, Any]:
    """The ``Part`` of a canonical block (one ctxview built or edited: a block read from a
    file is written from its wire ``Content``)."""
    kind = block.get("type")
    if kind == "text":
        return _sign({"text": block.get("text", "")}, block)
    if kind == "thinking":
        part: dict[str, Any] = {"text": block.get("thinking", ""), "thought": True}
        if block.get("signature"):
            part["thoughtSignature"] = block["signature"]
        return part
    if kind == "tool_use":
        call: dict[str, Any] = {"name": block.get("name", ""), "args": block.get("input", {})}
        if _real_id(block.get("id")):
            call["id"] = block["id"]
        return _sign({"functionCall": call}, block)
    if kind == "tool_result":
        content = block.get("content", "")
        if isinstance(content, list):
            content = "\n".join(str(b.get("text", "")) for b in content if isinstance(b, Mapping))
        tid = block.get("tool_use_id")
        sent = block.get("gemini_response")
        answer: dict[str, Any] = {
            "name": names.get(tid, "") if isinstance(tid, str) else "",
            "response": sent
            if sent is not None and response_text(sent) == content
            else {"error" if block.get("is_error") else "output": content},
        }
        if _real_id(tid):
            answer["id"] = tid
        return {"functionResponse": answer}
    if kind in ("image", "document"):
        source = block.get("source")
        if isinstance(source, Mapping):
            mime = source.get("media_type", "")
            if source.get("type") == "base64":
                return {"inlineData": {"mimeType": mime, "data": source.get("data", "")}}
            if source.get("type") == "url":
                return {"fileData": {"mimeType": mime, "fileUri": source.get("url", "")}}
    gemini_part = block.get("gemini_part")
    if isinstance(gemini_part, Mapping):
        return dict(gemini_part)
    return {"text": str(block.get("text", ""))}


def message_content(message: Mapping[str, Any], names: Mapping[str, str]) -> dict[str, Any]:
    content = message.get("content", "")
    blocks: Sequence[Any] = (
        [{"type": "text", "text": content}] if isinstance(content, str) else content
    )
    return {
        "role": "model" if message.get("role") == "assistant" else "user",
        "parts": [block_part(b, names) for b in blocks if isinstance(b, Mapping)],
    }


def _same_system(instruction: Any, system: Any) -> bool:
    try:
        found = system_of(instruction, "systemInstruction")
    except ValueError:
        return False
    return found == system or (not found and not system)


def write_body(parts: BodyParts) -> dict[str, Any]:
    """The ``generateContent`` body of a window: each message's wire ``Content`` as read, or
    the one its canonical blocks give (a message ctxview built or edited); the system prompt
    as ``systemInstruction``; tools and every other field as they were."""
    names: dict[str, str] = {}
    for m in parts.messages:
        content = m.get("content")
        if isinstance(content, list):
            for b in content:
                if isinstance(b, Mapping) and b.get("type") == "tool_use":
                    names[str(b.get("id"))] = str(b.get("name", ""))
    contents = []
    for i, m in enumerate(parts.messages):
        wire = parts.wire(i)
        contents.append(wire if isinstance(wire, Mapping) else message_content(m, names))
    body: dict[str, Any] = {"contents": contents}
    params = dict(parts.params)
    system = parts.system
    for key in ("systemInstruction", "system_instruction"):
        if key in params and _same_system(params[key], system):
            body[key] = params.pop(key)
    params.pop("systemInstruction", None)
    params.pop("system_instruction", None)
    if system and "systemInstruction" not in body and "system_instruction" not in body:
        texts = (
            [system]
            if isinstance(system, str)
            else [str(b.get("text", "")) for b in system if isinstance(b, Mapping)]
        )
        body["systemInstruction"] = {"parts": [{"text": t} for t in texts]}
    read = params.pop("tools", None)
    shown = [read] if isinstance(read, Mapping) else read
    if read is not None and list(shown or []) == list(parts.tools):
        body["tools"] = read  # as it was read (one Tool object, where an array is documented)
    elif parts.tools:
        body["tools"] = list(parts.tools)
    body.update({k: v for k, v in params.items() if k not in body})
    return body


PROVIDER = Provider(
    name="gemini",
    label="Gemini",
    rules=RULES,
    tokens=token_model(None),
    cache=CACHE,
    prices=PRICE_BOOK,
    usage=usage,
    write_body=write_body,
    formats=frozenset(("gemini", "gemini-cli")),
    model_rules=model_rules,
)
