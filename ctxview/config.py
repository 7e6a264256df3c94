"""``config.toml``: read with tomllib, written with tomli-w, atomically.

Location: ``$CTXVIEW_CONFIG`` or ``platformdirs.user_config_path("ctxview")/config.toml``.
The API key is never read from or written to this file (``ANTHROPIC_API_KEY`` only).
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import platformdirs

from ctxview.core.strategies import STRATEGIES
from ctxview.sessions.fileio import FileRefused, read_regular
from ctxview.textfmt import one_line

#: config.toml and system_prompt_file are read up to this size (a FIFO or device is refused)
MAX_CONFIG_BYTES = 1024 * 1024
#: how much of an invalid value an error message quotes
QUOTE_LIMIT = 80


def quote(value: Any, limit: int = QUOTE_LIMIT) -> str:
    """An invalid value for an error message: repr'd, on one line, at most ``limit`` characters."""
    try:
        text = repr(value) if not isinstance(value, (list, dict)) else repr(value)[: limit * 4]
    except ValueError:  # an int past the int -> str limit
        text = "<a very long number>"
    text = one_line(text, limit * 2)
    return text if len(text) <= limit else text[: limit - 1] + "…"


DEFAULTS: dict[str, Any] = {
    "model": "claude-sonnet-5-5",
    "max_tokens": 4096,
    "max_context_messages": 20,
    "strategy": "seed",
    "max_context_tokens": 200_000,
    "low_water_fraction": 0.5,
    "system_prompt": "",
    "system_prompt_file": "",
    "theme": "textual-dark",
    "animation": "full",
    "tool_rounds": 8,
    "tools_enabled": ["calculator", "current_time", "word_count"],
    "file_tools": False,
    "file_tool_max_bytes": 65536,
    "request_timeout": 120.0,
    # the clear-tool-uses / clear-thinking strategies (Anthropic's context editing); the API's
    # defaults. server_side: the chat sends the full messages plus a context_management block
    # (beta API) instead of the edited messages
    "context_editing": {
        "server_side": False,
        "clear_tool_uses": {
            "trigger": {"type": "input_tokens", "value": 100_000},
            "keep": {"type": "tool_uses", "value": 3},
            "clear_at_least": {"type": "input_tokens", "value": 0},
            "exclude_tools": [],
            "clear_tool_inputs": False,
        },
        "clear_thinking": {"keep": {"type": "thinking_turns", "value": 1}},
    },
}


@dataclass(frozen=True)
class Range:
    """The values a numeric key takes: an integer or a finite number from ``low`` (excluded when
    ``low_open``) to ``high``."""

    integer: bool
    low: float
    high: float
    low_open: bool = False
    unit: str = ""

    def holds(self, value: Any) -> bool:
        if isinstance(value, bool) or not isinstance(value, int if self.integer else (int, float)):
            return False
        above = value > self.low if self.low_open else value >= self.low
        return above and value <= self.high  # NaN fails both; inf fails the second

    def describe(self) -> str:
        what = "an integer" if self.integer else "a number"
        unit = f" {self.unit}" if self.unit else ""
        low = f"{self.low:,g}" if not self.integer else f"{int(self.low):,}"
        high = f"{self.high:,g}" if not self.integer else f"{int(self.high):,}"
        if self.low_open:
            return f"{what}{unit} above {low}, at most {high}"
        return f"{what}{unit} from {low} to {high}"


#: every numeric key and its range (what the API or a person could use, with room to spare;
#: beyond it a value is a typo or a hostile file: ``tool_rounds = 100000000``, ``inf``)
RANGES: dict[str, Range] = {
    "max_tokens": Range(True, 1, 1_000_000),  # the largest output of any model: 128k
    "max_context_messages": Range(True, 1, 10_000_000),
    "max_context_tokens": Range(True, 1, 100_000_000),  # context windows: up to 1M
    "tool_rounds": Range(True, 1, 1_000),
    "file_tool_max_bytes": Range(True, 1, 64 * 1024**2),  # a request holds at most 32 MB
    "low_water_fraction": Range(False, 0, 1, low_open=True),
    "request_timeout": Range(False, 0, 24 * 3600, low_open=True, unit="of seconds"),
}

ANIMATIONS = ("full", "basic", "none")
KNOWN_TOOLS = ("calculator", "current_time", "word_count", "read_file", "list_directory")
FORBIDDEN_KEYS = ("api_key", "anthropic_api_key", "ANTHROPIC_API_KEY")


class ConfigError(Exception):
    pass


def config_path() -> Path:
    env = os.environ.get("CTXVIEW_CONFIG")
    if env:
        return Path(env)
    return platformdirs.user_config_path("ctxview") / "config.toml"


def state_dir() -> Path:
    env = os.environ.get("CTXVIEW_STATE_DIR")
    if env:
        return Path(env)
    return platformdirs.user_state_path("ctxview")


def _check(key: str, value: Any) -> Any:
    """The value if valid for key; ConfigError naming the key otherwise."""
    if key in FORBIDDEN_KEYS:
        raise ConfigError(f"{key}: the API key is never kept in the config; use ANTHROPIC_API_KEY")
    if key == "pricing":
        return _check_pricing(value)
    if key == "context_editing":
        from ctxview.core.clearing import parse_context_editing

        try:
            parse_context_editing(value, key)
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
        return value
    if key not in DEFAULTS:
        raise ConfigError(f"{one_line(key, 60)}: unknown key (known: {', '.join(DEFAULTS)})")
    default = DEFAULTS[key]

    def need(cond: bool, what: str) -> None:
        if not cond:
            raise ConfigError(f"{key}: expected {what}, got {quote(value)}")

    if key in RANGES:
        bounds = RANGES[key]
        need(bounds.holds(value), bounds.describe())
        if not bounds.integer:
            value = float(value)
    elif key == "strategy":
        need(isinstance(value, str) and value in STRATEGIES, f"one of {', '.join(STRATEGIES)}")
    elif key == "animation":
        need(isinstance(value, str) and value in ANIMATIONS, f"one of {', '.join(ANIMATIONS)}")
    elif key == "tools_enabled":
        need(
            isinstance(value, list) and all(isinstance(v, str) and v in KNOWN_TOOLS for v in value),
            f"a list of tool names from {', '.join(KNOWN_TOOLS)}",
        )
    elif isinstance(default, bool):
        need(isinstance(value, bool), "true or false")
    elif isinstance(default, str):
        need(isinstance(value, str), "a string")
    return value


def _check_pricing(value: Any) -> dict[str, Any]:
    """``[pricing."model-name"]`` tables: USD per million tokens (input, output, and optionally
    cache_write_5m, cache_write_1h, cache_read), overriding ctxview's price table."""
    from ctxview.core.pricing import parse_price

    if not isinstance(value, dict):
        raise ConfigError('pricing: expected tables like [pricing."claude-sonnet-5"]')
    for model, table in value.items():
        try:
            parse_price(table, f'pricing."{model}"')
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
    return value


def context_editing(cfg: Config) -> Any:
    """The config's ``context_editing`` as a :class:`ctxview.core.clearing.ContextEditing`."""
    from ctxview.core.clearing import parse_context_editing

    return parse_context_editing(cfg.values.get("context_editing"))


def price_overrides(cfg: Config) -> dict[str, Any]:
    """The config's ``[pricing]`` tables as ``{model: Price}``."""
    from ctxview.core.pricing import parse_price

    raw = cfg.values.get("pricing") or {}
    return {m: parse_price(t, f'pricing."{m}"') for m, t in raw.items()}


@dataclass
class Config:
    values: dict[str, Any] = field(default_factory=lambda: dict(DEFAULTS))
    path: Path = field(default_factory=config_path)
    #: problems met while reading (each names the file and key); defaults were used for them
    errors: list[str] = field(default_factory=list)
    #: the keys whose value came from the file (the others are ctxview's defaults)
    from_file: set[str] = field(default_factory=set)

    def __getitem__(self, key: str) -> Any:
        return self.values[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self.values.get(key, default)

    def as_defaults(self) -> dict[str, Any]:
        return dict(self.values)

    def system_prompt(self) -> str:
        """system_prompt, or the file named by system_prompt_file (UTF-8)."""
        if self.values.get("system_prompt_file"):
            p = Path(os.path.expanduser(self.values["system_prompt_file"]))
            try:
                return read_regular(p, MAX_CONFIG_BYTES, what="text file").decode("utf-8")
            except FileRefused as exc:
                self.errors.append(f"{self.path}: system_prompt_file: {exc}")
            except UnicodeDecodeError:
                self.errors.append(f"{self.path}: system_prompt_file: {p} is not UTF-8 text")
        return str(self.values.get("system_prompt", ""))


def load_config(path: Path | None = None) -> Config:
    """Read the config; invalid parts are reported in ``errors`` and replaced by defaults. The
    file itself is never modified here."""
    cfg = Config(path=path or config_path())
    if not os.path.exists(cfg.path):
        return cfg
    try:
        raw = read_regular(cfg.path, MAX_CONFIG_BYTES, what="config file")
    except FileRefused as exc:
        cfg.errors.append(f"cannot read the config: {exc}; using defaults")
        return cfg
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        cfg.errors.append(f"{cfg.path}: the config is not UTF-8; using defaults")
        return cfg
    except (ValueError, RecursionError) as exc:  # TOMLDecodeError, an int past the digit limit
        reason = one_line(str(exc), 160) if not isinstance(exc, RecursionError) else "too deep"
        cfg.errors.append(f"{cfg.path}: invalid TOML ({reason}); using defaults")
        return cfg
    for key, value in data.items():
        try:
            cfg.values[key] = _check(key, value)
            cfg.from_file.add(key)
        except ConfigError as exc:
            cfg.errors.append(f"{cfg.path}: {exc}; using the default")
    return cfg


def parse_value(key: str, text: str) -> Any:
    """A command-line string as the type ``key`` takes."""
    if key not in DEFAULTS:
        _check(key, text)  # raises the unknown-key error
    default = DEFAULTS[key]
    if isinstance(default, bool):
        if text.lower() in ("true", "yes", "1", "on"):
            return True
        if text.lower() in ("false", "no", "0", "off"):
            return False
        raise ConfigError(f"{key}: expected true or false, got {text!r}")
    if isinstance(default, int):
        try:
            return int(text)
        except ValueError:
            raise ConfigError(f"{key}: expected an integer, got {quote(text)}") from None
    if isinstance(default, float):
        try:
            return float(text)
        except ValueError:
            raise ConfigError(f"{key}: expected a number, got {quote(text)}") from None
    if isinstance(default, list):
        return [t.strip() for t in text.split(",") if t.strip()]
    if isinstance(default, dict):  # a TOML inline table: '{clear_tool_uses = {keep = 5}}'
        try:
            return tomllib.loads(f"v = {text}")["v"]
        except (ValueError, RecursionError):
            raise ConfigError(
                f"{key}: expected a TOML inline table like {{clear_tool_uses = {{keep = 5}}}}, "
                f"got {quote(text)}"
            ) from None
    return text


def check_theme(value: Any, themes: Collection[str]) -> None:
    """ConfigError unless ``value`` names one of ``themes`` (the UI's: the config is headless,
    so the app, ``config show`` and ``config set`` pass them)."""
    if not isinstance(value, str) or value not in themes:
        raise ConfigError(
            f"theme: unknown theme {quote(value)} (known: {', '.join(sorted(themes))})"
        )


def check_for_set(key: str, value: Any, themes: Collection[str]) -> None:
    """Checks that only make sense when a user sets a value (``config set``), beyond its type:
    the theme must be one of ``themes`` (the caller knows the UI's; the config stays headless),
    the system prompt file must be readable. ConfigError otherwise."""
    if key == "theme":
        check_theme(value, themes)
    elif key == "system_prompt_file" and value:
        p = Path(os.path.expanduser(str(value)))
        try:  # the same reader as at start-up: a FIFO or a device is refused, never read
            read_regular(p, MAX_CONFIG_BYTES, what="text file").decode("utf-8")
        except FileRefused as exc:
            raise ConfigError(f"system_prompt_file: {exc}") from None
        except UnicodeDecodeError:
            raise ConfigError(f"system_prompt_file: {p} is not UTF-8 text") from None


def save_config_values(updates: dict[str, Any], path: Path | None = None) -> Path:
    """Merge ``updates`` into the file (keeping its other keys) and write it atomically.

    Refuses (ConfigError) when the existing file is invalid TOML, so it is never clobbered.
    """
    import tomli_w

    target = path or config_path()
    current: dict[str, Any] = {}
    if os.path.exists(target):
        try:
            current = tomllib.loads(
                read_regular(target, MAX_CONFIG_BYTES, what="config file").decode("utf-8")
            )
        except FileRefused as exc:
            raise ConfigError(f"not saving: {exc}") from None
        except (ValueError, RecursionError) as exc:  # TOMLDecodeError, UnicodeDecodeError
            raise ConfigError(
                f"{target}: not saving, the existing config is invalid "
                f"({one_line(str(exc), 160)}); fix or remove it"
            ) from None
    for key, value in updates.items():
        current[key] = _check(key, value)
    for key in FORBIDDEN_KEYS:
        current.pop(key, None)
    from ctxview.sessions.store import atomic_write

    atomic_write(target, tomli_w.dumps(current).encode("utf-8"))
    return target
