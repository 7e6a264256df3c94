"""``ctxview config path|show|set KEY VALUE``: show or change config.toml."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ctxview.cli.common import EXIT_OK, EXIT_UNREADABLE, err
from ctxview.textfmt import escape_controls, one_line


def add_parsers(sub: Any) -> None:
    cfg = sub.add_parser("config", help="show or change config.toml")
    csub = cfg.add_subparsers(dest="action", required=True)
    csub.add_parser("path", help="print the config file's path")
    csub.add_parser("show", help="print the effective config as TOML")
    st = csub.add_parser("set", help="set KEY to VALUE in the config file")
    st.add_argument("key")
    st.add_argument("value")


def cmd_config(args: argparse.Namespace) -> int:
    from ctxview.config import (
        DEFAULTS,
        ConfigError,
        check_for_set,
        check_theme,
        config_path,
        load_config,
        parse_value,
        save_config_values,
    )

    if args.action == "path":
        print(config_path())
        return EXIT_OK
    if args.action == "show":
        import tomli_w
        from textual.theme import BUILTIN_THEMES  # the themes the app offers

        cfg = load_config()
        try:
            check_theme(cfg.values["theme"], BUILTIN_THEMES)
        except ConfigError as exc:  # shown as the app uses it: the default
            cfg.errors.append(f"{cfg.path}: {exc}; the app uses the default")
            cfg.values["theme"] = DEFAULTS["theme"]
        for e in cfg.errors:
            err(e)
        print(
            f"# {one_line(str(cfg.path), 1000)}"
            f"{'' if cfg.path.exists() else ' (not created yet: defaults)'}"
        )
        sys.stdout.write(escape_controls(tomli_w.dumps(cfg.values)))
        return EXIT_OK
    try:
        value = parse_value(args.key, args.value)
        from textual.theme import BUILTIN_THEMES  # the themes the app offers

        check_for_set(args.key, value, BUILTIN_THEMES)
        path = save_config_values({args.key: value})
    except ConfigError as exc:
        where = str(config_path())
        text = str(exc)
        err(text if text.startswith(where) else f"{where}: {text}")  # the path once
        return EXIT_UNREADABLE
    except OSError as exc:
        err(f"{config_path()}: cannot write ({exc.strerror or exc})")
        return EXIT_UNREADABLE
    print(one_line(f"{args.key} = {value!r} written to {path}", 1000))
    return EXIT_OK
