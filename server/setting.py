"""A setting declared once: field, environment variable, parser, default and one line of help.

`setting(...)` keeps a `Setting` in the dataclass field's metadata; reading the environment,
docs/configuration.md and `memorywiki config --server` are all derived from those declarations.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

TRUE = ("1", "true", "yes", "on")
MISSING = object()
URL_PASSWORD = re.compile(r"^([a-z][a-z0-9+.-]*://[^:/@]*:)[^@/]*@", re.IGNORECASE)


class SettingsError(ValueError):
    """An environment variable holds a value the server cannot use."""


@dataclass(frozen=True)
class Setting:
    env: str
    help: str
    parse: Callable[[str], Any]
    expects: str  # what a bad value is told it must be
    section: str
    secret: bool = False
    fold_case: bool = False  # choices are compared (and quoted back) in lower case
    shown_default: str | None = None  # the default as the environment spells it, when the field's is not
    listed: bool = True  # False: a second field read from a variable already listed

    def read(self, env: Mapping[str, str]) -> Any:
        """The parsed value, or MISSING when the variable is unset or blank."""
        value = env.get(self.env, "").strip()
        if self.fold_case:
            value = value.lower()
        if not value:
            return MISSING
        try:
            return self.parse(value)
        except ValueError:
            raise SettingsError(f"{self.env} must be {self.expects}, not {value!r}") from None


_section = [""]


def section(title: str) -> None:
    """Settings declared after this call (in the class body) are listed under `title`."""
    _section[0] = title


def _flag(value: str) -> bool:
    return value.lower() in TRUE


def _choice(choices: tuple[str, ...], then: Callable[[str], Any]) -> Callable[[str], Any]:
    def parse(value: str) -> Any:
        if value not in choices:
            raise ValueError(value)
        return then(value)

    return parse


def _parser_for(default: Any) -> tuple[Callable[[str], Any], str]:
    if isinstance(default, bool):
        return _flag, "on or off"
    if isinstance(default, int):
        return int, "a whole number"
    if isinstance(default, float):
        return float, "a number"
    if isinstance(default, Path):
        return Path, "a path"
    return str, "text"


def setting(
    default: Any,
    env: str,
    help: str,
    *,
    factory: Callable[[], Any] | None = None,
    choices: tuple[str, ...] | None = None,
    parse: Callable[[str], Any] | None = None,
    expects: str | None = None,
    secret: bool = False,
    shown_default: str | None = None,
    listed: bool = True,
) -> Any:
    """A dataclass field read from `env`; the parser follows the default's type unless given."""
    guessed, kind = _parser_for(factory() if factory is not None else default)
    parser = parse or guessed
    if choices is not None:
        parser, kind = _choice(choices, parse or str), "one of " + ", ".join(choices)
    meta = Setting(
        env=env,
        help=help,
        parse=parser,
        expects=expects or kind,
        section=_section[0],
        secret=secret,
        fold_case=choices is not None,
        shown_default=shown_default,
        listed=listed,
    )
    if factory is not None:
        return field(default_factory=factory, repr=not secret, metadata={"setting": meta})
    return field(default=default, repr=not secret, metadata={"setting": meta})


def declared(cls: type) -> Iterator[tuple[dataclasses.Field[Any], Setting]]:
    """(field, setting) for every field of `cls` read from the environment, in order."""
    for f in dataclasses.fields(cls):
        meta = f.metadata.get("setting")
        if meta is not None:
            yield f, meta


def read_env(cls: type, env: Mapping[str, str]) -> dict[str, Any]:
    """Field values for the variables `env` sets; unset ones are left to the defaults."""
    values = {}
    for f, meta in declared(cls):
        value = meta.read(env)
        if value is not MISSING:
            values[f.name] = value
    return values


def default_text(f: dataclasses.Field[Any], meta: Setting, *, here: bool = False) -> str:
    """The default as one would write it in the environment ("" when there is none); `here`:
    a computed default (a path) as on this machine, not as the docs spell it."""
    factory = f.default_factory  # dataclasses.MISSING (not callable) when the default is a value
    if meta.shown_default is not None and not (here and callable(factory)):
        return meta.shown_default
    value = factory() if callable(factory) else f.default
    if isinstance(value, bool):
        return "on" if value else "off"
    return "" if value is None else str(value)


def shown_value(meta: Setting, env: Mapping[str, str]) -> str:
    """A variable's value in `env` as a listing may show it: secrets and the passwords in URLs
    masked, "" when unset."""
    value = env.get(meta.env, "").strip()
    if meta.secret and value:
        return "(set)"
    return URL_PASSWORD.sub(r"\1****@", value)


def listing(cls: type, env: Mapping[str, str]) -> list[tuple[str, str, str, str, str]]:
    """(section, variable, value in `env` or "", default, help) for each listed setting."""
    return [
        (meta.section, meta.env, shown_value(meta, env), default_text(f, meta, here=True), meta.help)
        for f, meta in declared(cls)
        if meta.listed
    ]


def markdown(cls: type, intro: str) -> str:
    """The settings of `cls` as markdown tables, one per section."""
    lines = [intro.strip()]
    current = None
    for f, meta in declared(cls):
        if not meta.listed:
            continue
        if meta.section != current:
            current = meta.section
            lines += ["", f"## {current}", "", "| Variable | Default | What it sets |", "|---|---|---|"]
        shown = default_text(f, meta)
        default = f"`{shown}`" if shown else "unset"
        cell = meta.help.replace("|", "\\|")
        lines.append(f"| `{meta.env}` | {default} | {cell} |")
    return "\n".join(lines) + "\n"
