"""How the settings are told to people: one line for bad values, and the README's configuration table
(`python -m server.settings_text --markdown`). `--help` needs only server/settings.py (`shown_default`,
`choices_of`), so a start that parses its flags without an error does not load this module."""

from __future__ import annotations

import sys
import typing

from pydantic import SecretStr, ValidationError
from pydantic.fields import FieldInfo

from server.settings import Settings, choices_of, shown_default, sources
from toolsets.core.problems import problems


def names_of(field_name: str) -> str:
    """`--flag / VARIABLE`, as a person would type it."""
    source = sources()[field_name]
    return " / ".join(name for name in (source.flag, source.env) if name)


def is_secret(field_name: str) -> bool:
    annotation = Settings.model_fields[field_name].annotation
    return SecretStr in (annotation, *typing.get_args(annotation))


def _expected(field: FieldInfo) -> str:
    """What a valid value of a choice or number setting looks like."""
    if choices := choices_of(field):
        return "one of " + ", ".join(choices)
    whole = field.annotation is int
    limits = {
        attr: getattr(item, attr) for item in field.metadata for attr in ("ge", "gt", "le", "lt") if hasattr(item, attr)
    }
    shown = {attr: (str(value) if whole else f"{value:g}") for attr, value in limits.items()}
    if "ge" in shown and "le" in shown:
        bounds = f"from {shown['ge']} to {shown['le']}"
    else:
        bounds = " and ".join(f"{_BOUND_WORDS[attr]} {value}" for attr, value in shown.items())
    example = field.default if whole else f"{field.default:g}"
    return f"{'a whole number' if whole else 'a number'} {bounds}, such as {example}".replace("  ", " ")


_BOUND_WORDS = {"ge": "at least", "gt": "above", "le": "at most", "lt": "below"}
_SHAPE_ERRORS = {"int_parsing", "int_type", "int_from_float", "float_parsing", "float_type", "finite_number"}
_SHAPE_ERRORS |= {"literal_error", "enum", "greater_than", "greater_than_equal", "less_than", "less_than_equal"}


def explain(exc: ValidationError) -> str:
    """One line naming each bad setting by its flag / variable and saying what is expected; a secret's value
    is never repeated."""
    parts = []
    for error, (location, message) in zip(exc.errors(include_url=False), problems(exc, whole=""), strict=True):
        field_name = str(error["loc"][0]) if error["loc"] else ""
        if field_name not in Settings.model_fields:
            parts.append(message)
            continue
        if error["type"] in _SHAPE_ERRORS:
            message = "must be " + _expected(Settings.model_fields[field_name])
            if not is_secret(field_name):
                message += f"; got {error['input']!r}"
        entry = location.partition(".")[2]
        parts.append(f"{names_of(field_name)}{f' (entry {int(entry) + 1})' if entry.isdigit() else ''}: {message}")
    return "; ".join(parts)


# -- the README table ----------------------------------------------------------------------------------------


def markdown_table() -> str:
    rows = ["| flag / env | default | meaning |", "|---|---|---|"]
    for field_name, source in sources().items():
        metavar = source.metavar or "|".join(choices_of(Settings.model_fields[field_name]))
        flag = f"`{source.flag}{' ' + metavar if metavar else ''}`" if source.flag else ""
        env = f"`{source.env}`" if source.env else ""
        where = " / ".join(part for part in (flag, env) if part).replace("|", "\\|")
        rows.append(f"| {where} | {shown_default(field_name)} | {source.help} |")
    return "\n".join(rows) + "\n"


if __name__ == "__main__":
    if sys.argv[1:] != ["--markdown"]:
        sys.exit("usage: python -m server.settings_text --markdown  (prints the README's configuration table)")
    sys.stdout.write(markdown_table())
