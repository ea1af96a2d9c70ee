"""JSON with comments edited in its text (server/cli/jsonc_text.py): what Zed's and Gemini CLI's settings files
hold reads as JSON values, one member is set or removed, and every other byte stays."""

from __future__ import annotations

import json
import time

import pytest

from server.cli.jsonc_text import MAX_DEPTH, JsoncError, parse, remove_member, set_member

PATH = ("context_servers", "truloop")
ENTRY = {"source": "custom", "command": "/abs/truloop-mcp", "args": ["--demo"]}

ZED_DEFAULT = """// Zed settings
//
// For information on how to configure Zed, see the Zed
// documentation: https://zed.dev/docs/configuring-zed
{
  "ui_font_size": 16, // bigger
  /* the theme */ "theme": { "mode": "system", "light": "One Light", "dark": "One Dark" },
  "languages": { "Python": { "tab_size": 4, }, },
}
"""


@pytest.mark.parametrize(
    "text",
    [
        ZED_DEFAULT,
        "{}",
        '{"a": 1}',
        '{\n    "context_servers": {\n        "other": {"command": "a", "args": []} // keep\n    }\n}\n',
        '{\n\t"context_servers": {\n\t\t"other": {"command": "a", "args": []},\n\t},\n}\n',
        '{\n  "context_servers": {}\n}\n',
        '{"context_servers": {"truloop": {"command": "old", "args": []}, "z": 1}}',
    ],
)
def test_set_then_remove_changes_only_our_member(text: str) -> None:
    installed = set_member(text, PATH, ENTRY)
    value = parse(installed).value
    expected = parse(text).value
    expected.setdefault("context_servers", {})["truloop"] = ENTRY
    assert value == expected
    assert set_member(installed, PATH, ENTRY) == installed  # the same entry again: the same text
    for comment in ("// bigger", "/* the theme */", "// keep"):
        assert (comment in installed) == (comment in text)

    removed = remove_member(installed, PATH)
    expected["context_servers"].pop("truloop")
    assert parse(removed).value == expected
    if "truloop" not in text and "context_servers" in text:
        assert removed == text  # what was there before, byte for byte


def test_the_entry_follows_the_files_indentation() -> None:
    text = '{\n    "context_servers": {\n        "other": {}\n    }\n}'
    installed = set_member(text, PATH, {"command": "x", "args": []})
    assert '\n        "truloop": {\n            "command": "x",' in installed


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ('{"a": 1,, }', "line 1, column 9"),
        ('{\n  "a": /* open\n}', "line 2, column 8"),
        ('{"a": tru}', "line 1, column 7"),
        ("{'a': 1}", "line 1, column 2"),
        ('{"a": 1} x', "line 1, column 10"),
        ('{"a": "\n"}', "line 1, column 7"),
    ],
)
def test_what_is_not_jsonc_is_an_error_naming_the_place(text: str, where: str) -> None:
    with pytest.raises(JsoncError, match=where):
        parse(text)


def test_nesting_is_bounded_and_reading_is_linear() -> None:
    with pytest.raises(JsoncError, match="nested deeper"):
        parse("[" * (MAX_DEPTH + 2) + "]" * (MAX_DEPTH + 2))
    big = "{" + ",".join(f'"k{i}": [1, "x", {{"y": null}}] // c' + "\n" for i in range(20000)) + "}"
    started = time.monotonic()
    assert len(parse(big).value) == 20000
    assert time.monotonic() - started < 5
    assert json.loads(json.dumps(parse('{"s": "\\u00e9\\n", "n": -1.5e3}').value)) == {"s": "é\n", "n": -1500.0}
