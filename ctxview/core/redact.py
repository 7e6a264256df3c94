"""Secrets out of text before it leaves the machine: API keys, tokens, private keys, passwords.

:func:`redact_text` replaces every secret it finds in a string by ``[REDACTED:kind]``;
:func:`redact_value` does it to every string of a JSON value (dict keys kept, the structure
unchanged); both return what they replaced as :class:`Redactions` (a count per kind) and never
change their input.

The detectors are ``detect-secrets``' plugins (their regular expressions, run over the whole
text, and their heuristics that tell a JWT or a placeholder from a secret), with a short list of
our own only for what they lack: Anthropic and current OpenAI key shapes, Google API keys,
GitHub fine-grained tokens, Hugging Face tokens, bearer and basic ``Authorization`` values, whole
PEM private key blocks (the plugin sees only the ``BEGIN`` line) and ``.env``-style
``NAME=value`` lines whose name says secret. The entropy plugins are not used: on agent sessions
(commit hashes, file digests, base64 images) they flag far more than they find.

Redacting twice gives what redacting once gave: a span touching a ``[REDACTED:...]`` already in
the text is left alone, and no detector matches the marker.
"""

from __future__ import annotations

import bisect
import importlib
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, NamedTuple

#: what a secret becomes; ``kind`` is one of :data:`KINDS`' values
MARKER = "[REDACTED:{kind}]"
#: a marker already in the text (from an earlier run): never redacted again, never cut
MARKER_RE = re.compile(r"\[REDACTED:[a-z0-9-]+\]")


@dataclass
class Redactions:
    """What a redaction replaced: how many secrets of each kind."""

    counts: dict[str, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def add(self, kind: str, n: int = 1) -> None:
        self.counts[kind] = self.counts.get(kind, 0) + n

    def merge(self, other: Redactions) -> Redactions:
        """Add ``other``'s counts to these (in place) and return self, so both
        ``total.merge(r)`` and ``total = total.merge(r)`` sum them."""
        for kind, n in other.counts.items():
            self.add(kind, n)
        return self

    def note(self) -> str:
        """One line for a file or a terminal: ``redacted 3 secrets (2 openai-key, 1 jwt)``."""
        if not self.total:
            return "redacted 0 secrets: none found"
        parts = ", ".join(
            f"{n} {kind}" for kind, n in sorted(self.counts.items(), key=lambda kv: (-kv[1], kv[0]))
        )
        noun = "secret" if self.total == 1 else "secrets"
        return f"redacted {self.total} {noun} ({parts})"

    def to_json(self) -> dict[str, Any]:
        """The field a JSON output carries: ``{"total": 3, "counts": {...}, "note": "..."}``."""
        return {
            "total": self.total,
            "counts": dict(sorted(self.counts.items())),
            "note": self.note(),
        }


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
    #: plugins a line at a time (their ``\s*``, ``[^\v'"]*`` would run across lines), and
    #: the keyword plugin's case-blind alternations cost ~0.3 s a megabyte where they run
    per_line: bool = False


_ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
_TOKEN_TAIL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"
_JWT_TAIL = _TOKEN_TAIL + ".+/="

#: detect-secrets' plugin (module.class under ``detect_secrets.plugins``) -> our kind, and the lowercase text one of its matches holds
#: (the skip test). Plugins left out: IPPublicDetector (an address is not a secret), the
#: entropy plugins (see the module docstring), KeywordDetector (used below, line-wise).
_PLUGINS: dict[str, tuple[str, tuple[str, ...]]] = {
    "artifactory.ArtifactoryDetector": ("artifactory-token", ("AKC", "AP")),
    "aws.AWSKeyDetector": ("aws-access-key", ("A3T", "ABIA", "ACCA", "AKIA", "ASIA", "aws")),
    "azure_storage_key.AzureStorageKeyDetector": ("azure-storage-key", ("accountkey=",)),
    "basic_auth.BasicAuthDetector": ("url-password", ("://",)),
    "cloudant.CloudantDetector": ("cloudant-password", ("cloudant",)),
    "discord.DiscordBotTokenDetector": ("discord-token", (".",)),
    "github_token.GitHubTokenDetector": ("github-token", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_")),
    "gitlab_token.GitLabTokenDetector": (
        "gitlab-token",
        (
            "glpat-",
            "gldt-",
            "glft-",
            "glsoat-",
            "glrt-",
            "glcbt-",
            "glimt-",
            "glptt-",
            "glagent-",
            "gloas-",
            "GR1348941",
        ),
    ),
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
    ("anthropic-key", r"sk-ant-[a-z]+\d*-[A-Za-z0-9_-]{32,}", ("sk-ant-",)),
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
        r"(?i:aws_?secret_?access_?key|aws_?secret_?key)[\"']?\s*[:=]\s*[\"']?([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])",
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


def _is_secret_value(secret: str) -> bool:
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
        rf"(?im)^[ \t]*(?:export[ \t]+|set[ \t]+|-[ \t]+)?[\"']?[A-Za-z0-9_.-]*(?:{words})[A-Za-z0-9_.-]*"
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
                    per_line=True,
                )
            )
    for kind, pattern, triggers in _GENERIC:
        found.append(_Detector(kind, re.compile(pattern), triggers, generic=True))
    # the keyword plugin's quoted assignments (``password = "..."``, ``"api_key": "..."``)
    for regex, group in keyword.QUOTES_REQUIRED_DENYLIST_REGEX_TO_GROUP.items():
        found.append(
            _Detector(
                "secret-assignment",
                regex,
                _KEYWORD_TRIGGERS,
                group=group,
                check=_is_secret_value,
                generic=True,
                per_line=True,
            )
        )
    found.append(
        _Detector(
            "secret-assignment",
            _keyword_value_regex(),
            _KEYWORD_TRIGGERS,
            group=2,
            check=_is_secret_value,
            generic=True,
            per_line=True,
        )
    )
    return tuple(found)


_KEYWORD_TRIGGERS = ("key", "pass", "pwd", "secret", "contrase")


def _secret_spans(det: _Detector, text: str) -> Iterable[tuple[int, int]]:
    for m in det.regex.finditer(text):
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
    #: triggers looked for in the lowered text, and those looked for as they are
    any_case: tuple[str, ...]
    as_is: tuple[str, ...]
    #: trigger -> the detectors (their indexes) it lets run
    runs: dict[str, tuple[int, ...]]


@lru_cache(maxsize=1)
def _plan() -> _Plan:
    detectors = _detectors()
    assert all(det.triggers for det in detectors)
    runs: dict[str, list[int]] = {}
    for i, det in enumerate(detectors):
        for t in det.triggers:
            runs.setdefault(t, []).append(i)
    as_is = {t for t in runs if t != t.lower()}
    return _Plan(
        detectors,
        tuple(sorted(set(runs) - as_is)),
        tuple(sorted(as_is)),
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
    plan = _plan()
    # most texts hold no trigger at all: one look for each, and done
    present = [t for t in plan.any_case if t in lowered]
    present += [t for t in plan.as_is if t in text]
    if not present:
        return []
    specific: list[tuple[int, int, str]] = []
    generic: list[tuple[int, int, str]] = []
    lines: dict[tuple[str, ...], list[tuple[int, int]]] = {}
    for i in sorted({i for t in present for i in plan.runs[t]}):
        det = plan.detectors[i]
        into = generic if det.generic else specific
        if not det.per_line:
            into.extend((start, end, det.kind) for start, end in _secret_spans(det, text))
            continue
        if det.triggers not in lines:
            lines[det.triggers] = _lines_holding(text, lowered, det.triggers)
        for line_start, line_end in lines[det.triggers]:
            line = text[line_start:line_end] if line_end - line_start < len(text) else text
            into.extend(
                (line_start + start, line_start + end, det.kind)
                for start, end in _secret_spans(det, line)
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


def redact_text(text: str) -> tuple[str, Redactions]:
    """``text`` with every secret found replaced by ``[REDACTED:kind]``, and what was replaced."""
    found = _find(text)
    redactions = Redactions()
    if not found:
        return text, redactions
    out: list[str] = []
    at = 0
    for start, end, kind in found:
        out.append(text[at:start])
        out.append(MARKER.format(kind=kind))
        redactions.add(kind)
        at = end
    out.append(text[at:])
    return "".join(out), redactions


def redact_value(value: Any) -> tuple[Any, Redactions]:
    """A JSON value with every string redacted (dict keys kept as they are), as a new value:
    ``value`` itself is never changed. Numbers, booleans and ``None`` pass through."""
    total = Redactions()

    def walk(v: Any) -> Any:
        if isinstance(v, str):
            new, found = redact_text(v)
            if found.counts:
                total.merge(found)
            return new
        if isinstance(v, dict):
            return {k: walk(item) for k, item in v.items()}
        if isinstance(v, list):
            return [walk(item) for item in v]
        if isinstance(v, tuple):
            return tuple(walk(item) for item in v)
        return v

    return walk(value), total
