"""Where the secrets of a text are: API keys, tokens, private keys, passwords.

:func:`find_secrets` gives their spans and kinds (``ctxview.core.redact`` replaces them). The
detectors are ``detect-secrets``' plugins (their regular expressions, run over the text, and
their heuristics that tell a JWT or a placeholder from a secret), with a short list of our own
only for what they lack: Anthropic and current OpenAI key shapes, Google API keys, GitHub
fine-grained tokens, Hugging Face tokens, Stripe test keys, bearer and basic ``Authorization``
values, whole PEM private key blocks (the plugin sees only the ``BEGIN`` line) and
``.env``-style ``NAME=value`` lines whose name says secret. The entropy plugins are not used:
on agent sessions (ids, signatures, base64 images) they flag far more than they find
(``python -m benchmarks --only redact``).

detect-secrets is imported on first use: it pulls in ``requests`` (~0.1 s) that no other
command needs. A text is searched for every detector's triggers at once by ``ahocorasick-rs``
(one pass instead of one a trigger: a quarter of the time on real sessions).
"""

from __future__ import annotations

import bisect
import importlib
import re
import string
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from ahocorasick_rs import AhoCorasick

#: a redaction marker already in the text (``[REDACTED:kind]``): never redacted again, never cut
MARKER_RE = re.compile(r"\[REDACTED:[a-z0-9-]+\]")


@dataclass(frozen=True)
class _Detector:
    """One way of finding a secret: a regex, the group(s) that hold the secret, a check."""

    kind: str
    regex: re.Pattern[str]
    #: substrings one of which the text must hold for the regex to be tried (a quick skip:
    #: most texts hold none); one in lower case is looked for in any case, one holding a
    #: capital as it is
    triggers: tuple[str, ...]
    #: a span whose secret fails this is not one (a placeholder, a JWT that is not base64 JSON)
    check: Callable[[str], bool] | None = None
    #: the secret runs on over these characters past the regex's end (a key longer than the
    #: plugin's fixed length must not leave its tail behind)
    extend: str = ""
    #: specific detectors win over generic ones (``NAME=value``, bearer) on the same span
    generic: bool = False
    #: the group that holds the secret (the keyword plugin's regexes number it); None: every
    #: non-empty group, as the plugins' ``findall`` takes them, or the whole match if none
    group: int | None = None
    #: a secret does not start right after one of these (``AKIA...`` inside a longer word or
    #: a base64 image is not an AWS key)
    not_after: str = ""
    #: tried on each line holding a trigger, not on the whole text: detect-secrets runs its
    #: plugins a line at a time, and the keyword plugin's ``[^\v'"]*`` would run across lines
    #: (the token plugins' regexes cannot: they run on the whole text, once)
    per_line: bool = False
    #: a quick test of the text (a line) before the regex runs: the regex cannot match where
    #: this finds nothing (the plugin's regex starts with a character class, costly to scan)
    gate: re.Pattern[str] | None = None
    #: where a match can begin, found in the lowered text: the regex is tried there alone
    #: (the keyword plugin's regexes begin with their words, in any case)
    starts: re.Pattern[str] | None = None


_ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
_TOKEN_TAIL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"
_JWT_TAIL = _TOKEN_TAIL + ".+/="

#: detect-secrets' plugin (``module.Class`` under ``detect_secrets.plugins``) -> our kind, and
#: its triggers. Left out: IPPublicDetector (an address is not a secret), the entropy plugins
#: (see the module docstring), KeywordDetector (its regexes are used below, a line at a time).
_PLUGINS: dict[str, tuple[str, tuple[str, ...]]] = {
    "artifactory.ArtifactoryDetector": ("artifactory-token", ("AKC", "AP")),
    "aws.AWSKeyDetector": ("aws-access-key", ("A3T", "ABIA", "ACCA", "AKIA", "ASIA", "aws")),
    "azure_storage_key.AzureStorageKeyDetector": ("azure-storage-key", ("accountkey=",)),
    "basic_auth.BasicAuthDetector": ("url-password", ("://",)),
    "cloudant.CloudantDetector": ("cloudant-password", ("cloud",)),
    "discord.DiscordBotTokenDetector": ("discord-token", (".",)),
    "github_token.GitHubTokenDetector": ("github-token", ("gh",)),
    # one trigger for a family of prefixes (each regex starts with its literal: a fast search)
    "gitlab_token.GitLabTokenDetector": ("gitlab-token", ("gl", "gr1348941")),
    "ibm_cloud_iam.IbmCloudIamDetector": ("ibm-cloud-key", ("ibm", "cloud", "iam")),
    "ibm_cos_hmac.IbmCosHmacDetector": ("ibm-cos-hmac", ("secret",)),
    "jwt.JwtTokenDetector": ("jwt", ("eyj",)),
    "mailchimp.MailchimpDetector": ("mailchimp-key", ("-us",)),
    "npm.NpmDetector": ("npm-token", ("_authtoken",)),
    "openai.OpenAIDetector": ("openai-key", ("sk-",)),
    "pypi_token.PypiTokenDetector": ("pypi-token", ("pypi-",)),
    "sendgrid.SendGridDetector": ("sendgrid-key", ("sg.",)),
    "slack.SlackDetector": ("slack-token", ("xox", "hooks.slack.com")),
    "softlayer.SoftlayerDetector": ("softlayer-key", ("softlayer", "sl_", "sl-")),
    "square_oauth.SquareOAuthDetector": ("square-secret", ("sq0csp-",)),
    "stripe.StripeDetector": ("stripe-key", ("k_live_",)),
    "telegram_token.TelegramBotTokenDetector": ("telegram-token", (":",)),
    "twilio.TwilioKeyDetector": ("twilio-key", ("AC", "SK")),
}

# Our own, for what the plugins lack. Each comment says which shape and why the plugin misses it.
_OWN: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    # Anthropic: sk-ant-api03-... / sk-ant-admin01-... (no plugin)
    ("anthropic-key", r"sk-ant-[a-z]+\d*-[A-Za-z0-9_-]{32,}", ("sk-",)),
    # OpenAI: sk-proj-/sk-svcacct-/sk-admin- and legacy sk- + 48 (the plugin wants the
    # T3BlbkFJ infix, which not every key carries); a random key mixes cases and digits, which
    # ``_looks_random`` holds, so ``sk-learn-estimators-for-...`` in prose is not one
    (
        "openai-key",
        r"(?<![A-Za-z0-9_-])sk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_-]{32,}",
        ("sk-",),
    ),
    # Google API keys (Gemini, Maps...): AIza + 35
    ("google-api-key", r"AIza[0-9A-Za-z_-]{35}", ("AIza",)),
    # GitHub fine-grained personal access tokens (the plugin knows only ghp_/gho_/...)
    ("github-token", r"github_pat_[A-Za-z0-9_]{22,}", ("github_pat_",)),
    # Hugging Face user access tokens
    ("huggingface-token", r"(?<![A-Za-z0-9_])hf_[A-Za-z0-9]{34,}", ("hf_",)),
    # Stripe test-mode secret keys (the plugin knows live ones only; a test key still acts)
    ("stripe-key", r"[rs]k_test_[0-9a-zA-Z]{24,}", ("k_test_",)),
    # AWS secret access key assigned without quotes (``.env``, shell): the plugin wants quotes
    (
        "aws-secret-key",
        r"(?i:aws_?secret_?access_?key|aws_?secret_?key)[\"']?\s*[:=]\s*[\"']?"
        r"([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])",
        ("aws",),
    ),
)

_GENERIC: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    # ``Authorization: Bearer <token>`` / ``-H "Authorization: Basic <b64>"`` and bare
    # ``Bearer <token>``: the token, not the word
    (
        "bearer-token",
        r"(?i:\bbearer)\s+([A-Za-z0-9._~+/-]{16,}=*)",
        ("bearer",),
    ),
    (
        "basic-auth",
        r"(?i:authorization[\"']?\s*[:=]\s*[\"']?basic)\s+([A-Za-z0-9+/]{8,}=*)",
        ("basic",),
    ),
    # API-key headers: ``x-api-key: ...``, ``x-goog-api-key: ...``
    (
        "api-key-header",
        r"(?i:x-(?:goog-)?api-key)[\"']?\s*[:=]\s*[\"']?([A-Za-z0-9._~+/-]{16,})",
        ("api-key",),
    ),
)


def _looks_random(secret: str) -> bool:
    """A generated key mixes upper case, lower case and digits (prose and identifiers do not)."""
    return (
        any(c.isdigit() for c in secret)
        and any(c.isupper() for c in secret)
        and any(c.islower() for c in secret)
        and not _is_example(secret)
    )


def _is_example(token: str) -> bool:
    """A key in documentation, not a secret: ``AKIAIOSFODNN7EXAMPLE``, ``sk-xxxxxxxx...``,
    ``ghp_0000...``, ``ABCDEFGHIJ...`` (detect-secrets' sequential-string heuristic)."""
    from detect_secrets.filters import heuristic

    lowered = token.lower()
    return (
        any(word in lowered for word in _EXAMPLE_WORDS)
        or _REPEATED.search(token) is not None
        or heuristic.is_sequential_string(token)
    )


#: words a placeholder holds and a generated secret (almost) never does
_EXAMPLE_WORDS = ("example", "your", "placeholder", "dummy", "changeme", "sample", "redacted")
#: the same character 6 times running: ``xxxxxx``, ``000000``, ``******``, ``......``
_REPEATED = re.compile(r"(.)\1{5}")


def _not_example(token: str) -> bool:
    return not _is_example(token)


def _is_jwt(token: str) -> bool:
    """The plugin's test (each part base64, the first two JSON), and not a docs example."""
    from detect_secrets.plugins.jwt import JwtTokenDetector

    return JwtTokenDetector.is_formally_valid(token) and not _is_example(token)


def _is_url_password(password: str) -> bool:
    """``user:PASSWORD@host``: not a placeholder (``<password>``, ``${DB_PASS}``, ``****``)."""
    from detect_secrets.filters import heuristic

    return not (
        password.lower() in _PLAIN_VALUES
        or _is_example(password)
        or heuristic.is_templated_secret(password)
        or heuristic.is_prefixed_with_dollar_sign(password)
        or password.startswith(("<", "{", "%"))
    )


def is_secret_value(secret: str) -> bool:
    """Whether the value of ``password = ...`` / ``API_KEY=...`` is one, not a reference to one:
    detect-secrets' heuristics (``${VAR}``, ``{{x}}``, ``$VAR``, a UUID, a sequence), and our
    own: too short or too plain (``true``, ``none``), a placeholder (``your-key-here``, ``***``),
    another variable's name (``OPENAI_API_KEY``, ``settings.SECRET_KEY``), a call or an index
    (``os.environ["X"]``, ``getpass()``), words with spaces (prose, a description)."""
    from detect_secrets.filters import heuristic

    value = secret.strip().strip("\"'`")
    if len(value) < 6 or value.lower() in _PLAIN_VALUES or _is_example(value):
        return False
    if not any(c.isalnum() for c in value) or any(c.isspace() for c in value):
        return False
    if _REFERENCE.fullmatch(value):
        return False
    return not (
        heuristic.is_templated_secret(value)
        or heuristic.is_prefixed_with_dollar_sign(value)
        or heuristic.is_potential_uuid(value)
        or value.startswith(("<", "{", "%", "[", "!", "~", "/", "./", "../"))
    )


#: a name, not a value: ``OPENAI_API_KEY``, ``settings.SECRET_KEY``, ``os.environ[...``,
#: ``getpass()``, ``config.get(``
_REFERENCE = re.compile(r"[A-Z][A-Z0-9_]*|[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)+|[\w.]+[\[(].*")

_PLAIN_VALUES = frozenset(
    [
        "true",
        "false",
        "none",
        "null",
        "nil",
        "undefined",
        "required",
        "optional",
        "string",
        "password",
        "secret",
        "hidden",
        "unset",
        "empty",
        "default",
        "pass",
        "passwd",
        "pwd",
    ]
)


def _keyword_value_regex() -> re.Pattern[str]:
    """``.env`` and shell lines: ``export DB_PASSWORD=...``, ``OPENAI_API_KEY="..."``, ``secret:
    ...`` in YAML: a name holding one of the keyword plugin's words, then ``=`` or ``:``, then a
    value with no space (a sentence after ``password:`` is prose, not a value)."""
    from detect_secrets.plugins import keyword

    words = "|".join(keyword.DENYLIST)
    return re.compile(
        r"(?im)^[ \t]*(?:export[ \t]+|set[ \t]+|-[ \t]+)?[\"']?"
        rf"[A-Za-z0-9_.-]*(?:{words})[A-Za-z0-9_.-]*"
        r"[\"']?[ \t]*(?:=|:(?!//))[ \t]*([\"']?)([^\s\"'#]{1,500})\1[ \t]*,?[ \t]*(?:#.*)?$"
    )


@lru_cache(maxsize=1)
def _detectors() -> tuple[_Detector, ...]:
    # imported on first use: detect-secrets pulls in requests (~0.1 s) that no other command needs
    from detect_secrets.plugins import keyword
    from detect_secrets.plugins.base import RegexBasedDetector
    from detect_secrets.plugins.jwt import JwtTokenDetector

    found: list[_Detector] = []
    # the PEM block first: a key's body would otherwise be left behind (the plugin matches the
    # BEGIN line alone); a cut block (no END) goes to the end of its base64
    found.append(
        _Detector(
            "private-key",
            re.compile(
                r"-----BEGIN ((?:[A-Z0-9]+ )*)PRIVATE KEY((?: BLOCK)?)-----"
                r"(?:[\s\S]*?-----END \1PRIVATE KEY\2-----"
                r"|(?:(?:\s|\\[rn])*(?:[A-Za-z0-9+/=]{16,}|[A-Za-z-]+: [^\n\\]*))*)"
            ),
            ("private key",),
        )
    )
    found.append(
        _Detector(
            "private-key",
            re.compile(r"PuTTY-User-Key-File-\d:[\s\S]*?(?:Private-MAC: [0-9a-f]+|$)"),
            ("putty-user-key-file",),
        )
    )
    for kind, pattern, triggers in _OWN:
        found.append(
            _Detector(
                kind,
                re.compile(pattern),
                triggers,
                check=_looks_random if kind == "openai-key" else _not_example,
                extend=_TOKEN_TAIL,
                # the AWS secret is a group after ``=``: its start is not a token's
                not_after="" if kind == "aws-secret-key" else _TOKEN_START,
            )
        )
    for where, (kind, triggers) in _PLUGINS.items():
        module, name = where.split(".")
        plugin: type[RegexBasedDetector] = getattr(
            importlib.import_module(f"detect_secrets.plugins.{module}"), name
        )
        check: Callable[[str], bool] = _not_example
        extend, not_after = _TOKEN_TAIL, _TOKEN_START
        if plugin is JwtTokenDetector:
            check, extend = _is_jwt, _JWT_TAIL
        elif name == "BasicAuthDetector":
            check, extend, not_after = _is_url_password, "", ""
        elif name in ("NpmDetector", "AWSKeyDetector"):
            extend = ""
        elif name == "ArtifactoryDetector":
            # its password shape (``AP`` + a hex digit + 8 letters) is also a word in capitals
            # (``APACHECONFIG``): a generated token mixes cases and digits
            check = _looks_random
        elif name == "TelegramBotTokenDetector":
            # ``/bot123456789:AA...`` in an API URL: a letter before it is fine, a digit is not
            not_after = "0123456789"
        denylist: Iterable[re.Pattern[str]] = plugin.denylist  # type: ignore[assignment]
        for regex in denylist:
            found.append(
                _Detector(
                    kind,
                    regex,
                    triggers,
                    check=check,
                    extend=extend,
                    not_after=not_after,
                    gate=_GATES.get(name),
                )
            )
    for kind, pattern, triggers in _GENERIC:
        found.append(_Detector(kind, re.compile(pattern), triggers, generic=True))
    # the keyword plugin's quoted assignments (``password = "..."``, ``"api_key": "..."``)
    words = re.compile("|".join(keyword.DENYLIST))
    for regex, group in keyword.QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP.items():
        found.append(
            _Detector(
                "secret-assignment",
                regex,
                _KEYWORD_TRIGGERS,
                group=group,
                check=is_secret_value,
                generic=True,
                per_line=True,
                # all but ``"value" == password`` begin with the word
                starts=words if regex.pattern.startswith("(" + keyword.DENYLIST[0]) else None,
            )
        )
    found.append(
        _Detector(
            "secret-assignment",
            _keyword_value_regex(),
            _KEYWORD_TRIGGERS,
            group=2,
            check=is_secret_value,
            generic=True,
            per_line=True,
        )
    )
    return tuple(found)


_KEYWORD_TRIGGERS = ("key", "pass", "pwd", "secret", "contrase")


#: the plugins whose regex starts with a character class, and a cheap test that must hold for
#: it to match (a literal first character, searched fast)
_GATES = {
    # ``[MNO]…{23,25}\.{6}\.{27}``: the six characters between two dots
    "DiscordBotTokenDetector": re.compile(r"\.[a-zA-Z0-9_-]{6}\."),
    # ``\d{8,10}:{35}``: the 35 after the colon
    "TelegramBotTokenDetector": re.compile(r":[0-9A-Za-z_-]{35}"),
    # ``(?:\s|=|:|"|^)AKC…`` / ``…AP[\dABCDEF]…``: the prefix and 8 more
    "ArtifactoryDetector": re.compile(r"A(?:KC|P[\dA-F])[a-zA-Z0-9]{8}"),
    # ``[0-9a-z]{32}-us[0-9]{1,2}``: the data centre suffix
    "MailchimpDetector": re.compile(r"-us\d"),
}


def _matches(det: _Detector, text: str, lowered: str) -> Iterator[re.Match[str]]:
    if det.gate is not None and det.gate.search(text) is None:
        return
    if det.starts is None:
        yield from det.regex.finditer(text)
        return
    done = 0
    for start in det.starts.finditer(lowered):
        if start.start() < done:
            continue
        m = det.regex.match(text, start.start())
        if m is not None:
            done = m.end()
            yield m


def _secret_spans(det: _Detector, text: str, lowered: str) -> Iterable[tuple[int, int]]:
    for m in _matches(det, text, lowered):
        if det.group is not None:
            groups: Iterable[int] = (det.group,)
        elif m.re.groups and det.kind != "private-key":
            # like the plugin's findall: each non-empty group is a secret (the password of a
            # URL, not the URL)
            groups = [g for g in range(1, m.re.groups + 1) if m.group(g)]
        else:
            groups = (0,)
        for g in groups:
            start, end = m.span(g)
            # a match that takes its delimiters (artifactory's ``(?:\s|=|:|"|^)``): the token only
            while start < end and text[start] in " \t\r\n=:\"'":
                start += 1
            while end > start and text[end - 1] in " \t\r\n\"'":
                end -= 1
            if end <= start:
                continue
            if start and text[start - 1] in det.not_after:
                continue
            if det.extend:
                while end < len(text) and text[end] in det.extend:
                    end += 1
            if det.not_after and _in_blob(text, start, end):
                continue
            if det.check is not None and not det.check(text[start:end]):
                continue
            if det.group is not None and _names_a_setting(text[m.start() : start]):
                continue
            yield start, end


def _names_a_setting(name: str) -> bool:
    """Whether the name before ``=``/``:`` is about a secret rather than holding one:
    ``password_min_length``, ``private_key_path``, ``passwordHashAlgorithm``, ``secret_type``."""
    words = _NAME.findall(name.lower())
    return bool(words) and words[-1].replace("-", "_").endswith(_SETTING_SUFFIXES)


_NAME = re.compile(r"[a-z0-9_.-]+")
_SETTING_SUFFIXES = tuple(
    [
        "path",
        "file",
        "dir",
        "length",
        "len",
        "type",
        "name",
        "algorithm",
        "hash",
        "env",
        "id",
        "count",
        "policy",
        "field",
        "url",
        "hint",
        "prompt",
        "label",
        "format",
        "min",
        "max",
        "expires",
        "expiry",
        "ttl",
        "version",
        "enabled",
        "required",
        "rotation",
    ]
)


def _in_blob(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` lies inside a long run of base64 (an image, a file's bytes):
    random text that long holds key-shaped strings by chance."""
    before = start
    while before > 0 and start - before <= _BLOB_MARGIN and text[before - 1] in _BASE64:
        before -= 1
    after = end
    while after < len(text) and after - end <= _BLOB_MARGIN and text[after] in _BASE64:
        after += 1
    return (start - before) + (after - end) > _BLOB_MARGIN


#: a key's first character does not follow one of these: it would be the middle of a word
_TOKEN_START = _ALNUM + "+"
_BASE64 = frozenset(_ALNUM + "+/=")
#: base64 characters around a key, beyond which it is taken for part of a blob
_BLOB_MARGIN = 64


class _Plan(NamedTuple):
    detectors: tuple[_Detector, ...]
    #: the triggers looked for in the lowered text at once (Aho-Corasick: one pass for all),
    #: and their names by index
    any_case: AhoCorasick
    any_case_names: tuple[str, ...]
    #: looked for one by one in the lowered text: the ones nearly every text holds (one pass
    #: each, rather than a match reported at every dot)
    common: tuple[str, ...]
    #: looked for in the text as they are (at once): those holding a capital
    as_is: AhoCorasick
    as_is_names: tuple[str, ...]
    #: trigger -> the detectors (their indexes) it lets run
    runs: dict[str, tuple[int, ...]]


#: triggers nearly every text holds: looked for by themselves (see _Plan.common)
_COMMON = (".", ":")


@lru_cache(maxsize=1)
def _plan() -> _Plan:
    from ahocorasick_rs import AhoCorasick

    detectors = _detectors()
    assert all(det.triggers for det in detectors)
    runs: dict[str, list[int]] = {}
    for i, det in enumerate(detectors):
        for t in det.triggers:
            runs.setdefault(t, []).append(i)
    as_is = {t for t in runs if t != t.lower()}
    names = tuple(sorted(set(runs) - as_is - set(_COMMON)))
    cased = tuple(sorted(as_is))
    return _Plan(
        detectors,
        AhoCorasick(list(names)),
        names,
        tuple(t for t in _COMMON if t in runs),
        AhoCorasick(list(cased)),
        cased,
        {t: tuple(ids) for t, ids in runs.items()},
    )


def _lines_holding(text: str, lowered: str, triggers: tuple[str, ...]) -> list[tuple[int, int]]:
    """The (start, end) of each line of ``text`` that holds one of ``triggers``, in order."""
    lines: set[tuple[int, int]] = set()
    for trigger in triggers:
        within = lowered if trigger == trigger.lower() else text
        at = within.find(trigger)
        while at != -1:
            start = text.rfind("\n", 0, at) + 1
            end = text.find("\n", at)
            end = len(text) if end == -1 else end
            lines.add((start, end))
            at = within.find(trigger, end)
    return sorted(lines)


class _Taken:
    """Spans kept so far, sorted, none overlapping: an overlap test in log time."""

    def __init__(self) -> None:
        self.starts: list[int] = []
        self.spans: list[tuple[int, int, str]] = []

    def overlaps(self, start: int, end: int) -> bool:
        i = bisect.bisect_right(self.starts, start)
        if i and self.spans[i - 1][1] > start:
            return True
        return i < len(self.starts) and self.starts[i] < end

    def add(self, span: tuple[int, int, str]) -> None:
        i = bisect.bisect_right(self.starts, span[0])
        self.starts.insert(i, span[0])
        self.spans.insert(i, span)


_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)
#: the shortest text a detector can find a secret in (``a://b:c@``: 8 characters)
_SHORTEST = 8
_ALL_BASE64 = re.compile(r"[A-Za-z0-9+/=\r\n]*")


def _find(text: str) -> list[tuple[int, int, str]]:
    """The secrets' spans in ``text``, sorted, none overlapping another or a marker."""
    if len(text) < _SHORTEST or (len(text) > 4 * _BLOB_MARGIN and _ALL_BASE64.fullmatch(text)):
        # too short to hold a secret, or all base64 (an image, a file's bytes): every key-shaped
        # run in it would be inside the blob (see _in_blob), and none of the rest can match
        return []
    lowered = text.lower()
    if len(lowered) != len(text):
        # a character whose lower case is longer (``İ``): positions must stay those of ``text``
        lowered = text.translate(_ASCII_LOWER)
    plan = _plan()
    # most texts hold no trigger at all: one look for each, and done
    names = plan.any_case_names
    present = {names[i] for i, _, _ in plan.any_case.find_matches_as_indexes(lowered, True)}
    present.update(t for t in plan.common if t in lowered)
    cased = plan.as_is_names
    present.update(cased[i] for i, _, _ in plan.as_is.find_matches_as_indexes(text, True))
    if not present:
        return []
    specific: list[tuple[int, int, str]] = []
    generic: list[tuple[int, int, str]] = []
    lines: dict[tuple[str, ...], list[tuple[int, int]]] = {}
    for i in sorted({i for t in present for i in plan.runs[t]}):
        det = plan.detectors[i]
        into = generic if det.generic else specific
        if not det.per_line:
            into.extend((start, end, det.kind) for start, end in _secret_spans(det, text, lowered))
            continue
        if det.triggers not in lines:
            lines[det.triggers] = _lines_holding(text, lowered, det.triggers)
        for line_start, line_end in lines[det.triggers]:
            whole = line_end - line_start == len(text)
            line = text if whole else text[line_start:line_end]
            low = lowered if whole else lowered[line_start:line_end]
            into.extend(
                (line_start + start, line_start + end, det.kind)
                for start, end in _secret_spans(det, line, low)
            )
    if not specific and not generic:
        return []
    taken = _Taken()
    # a marker already in the text (an earlier run's) is never cut nor redacted again
    if "[redacted:" in lowered:
        for m in MARKER_RE.finditer(text):
            taken.add((m.start(), m.end(), ""))
    # specific first (a key's own kind beats ``NAME=value``); at one start the longer span
    for group in (specific, generic):
        group.sort(key=lambda s: (s[0], -s[1]))
        for span in group:
            if not taken.overlaps(span[0], span[1]):
                taken.add(span)
    return [span for span in taken.spans if span[2]]


#: texts up to this long have their spans remembered (most of a session's strings, by count)
_SHORT_TEXT = 64


@lru_cache(maxsize=8192)
def _find_short(text: str) -> tuple[tuple[int, int, str], ...]:
    return tuple(_find(text))


def find_secrets(text: str) -> Sequence[tuple[int, int, str]]:
    """The secrets in ``text``: (start, end, kind), sorted, none overlapping another or a
    redaction marker already there. Short texts repeat (roles, block types, model names,
    paths): their spans are remembered."""
    return _find_short(text) if len(text) <= _SHORT_TEXT else _find(text)


@lru_cache(maxsize=4096)
def names_a_secret(key: str) -> bool:
    """A JSON key that names a secret (the keyword plugin's words: ``password``, ``api_key``,
    ``client_secret``…), not a setting about one (``password_min_length``)."""
    if _secret_word().search(key) is None and _TOKEN_KEY.search(key) is None:
        return False
    return not _names_a_setting(key)


#: what the keyword plugin's words leave out: ``token``, ``access_token``, ``authToken``,
#: ``apikey`` (a key that ends so; ``tokenizer``, ``max_tokens`` do not)
_TOKEN_KEY = re.compile(r"(?:token|apikey|api-key)$", re.IGNORECASE)


@lru_cache(maxsize=1)
def _secret_word() -> re.Pattern[str]:
    from detect_secrets.plugins import keyword

    return re.compile("|".join(keyword.DENYLIST), re.IGNORECASE)
