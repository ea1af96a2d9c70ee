"""JSON with comments (`//`, `/* */`) and trailing commas, as Zed's and Gemini CLI's settings files are: read into
Python values with the position of every object member, and one member of a nested object set or removed by
editing the text, so every other byte of the file (comments, order, layout) stays as it was.

The reader is a single pass, linear in the text, with nesting bounded by `MAX_DEPTH`; what it cannot read is a
`JsoncError` naming the line and column.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

MAX_DEPTH = 200
_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
_STRING = re.compile(r'"(?:[^"\\\x00-\x1f]|\\.)*"', re.DOTALL)
_LITERALS = {"true": True, "false": False, "null": None}


class JsoncError(ValueError):
    def __init__(self, message: str, text: str, at: int) -> None:
        line = text.count("\n", 0, at) + 1
        column = at - (text.rfind("\n", 0, at) + 1) + 1
        super().__init__(f"line {line}, column {column}: {message}")


@dataclass(slots=True)
class Node:
    start: int
    end: int
    value: Any
    members: list[Member] = field(default_factory=list)  # an object's, in order


@dataclass(slots=True)
class Member:
    key: str
    start: int  # where its key starts
    node: Node
    comma: int | None  # the comma after its value, if any


def parse(text: str) -> Node:
    reader = _Reader(text)
    reader.pos = 1 if text.startswith("\ufeff") else 0
    node = reader.value(0)
    reader.skip()
    if reader.pos != len(text):
        raise JsoncError("more after the value", text, reader.pos)
    return node


class _Reader:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def fail(self, message: str) -> JsoncError:
        return JsoncError(message, self.text, self.pos)

    def skip(self) -> None:
        """Past whitespace and comments."""
        text = self.text
        while self.pos < len(text):
            char = text[self.pos]
            if char in " \t\r\n":
                self.pos += 1
            elif text.startswith("//", self.pos):
                newline = text.find("\n", self.pos)
                self.pos = len(text) if newline < 0 else newline
            elif text.startswith("/*", self.pos):
                close = text.find("*/", self.pos + 2)
                if close < 0:
                    raise self.fail("a /* comment is not closed")
                self.pos = close + 2
            else:
                return

    def value(self, depth: int) -> Node:
        if depth > MAX_DEPTH:
            raise self.fail(f"nested deeper than {MAX_DEPTH}")
        self.skip()
        text, start = self.text, self.pos
        if start >= len(text):
            raise self.fail("a value was expected")
        char = text[start]
        if char == "{":
            return self.container(depth, "}")
        if char == "[":
            return self.container(depth, "]")
        if char == '"':
            return Node(start, self.string_end(), json.loads(text[start : self.pos]))
        number = _NUMBER.match(text, start)
        if number:
            self.pos = number.end()
            return Node(start, self.pos, json.loads(number.group()))
        for word, literal in _LITERALS.items():
            if text.startswith(word, start):
                self.pos = start + len(word)
                return Node(start, self.pos, literal)
        raise self.fail(f"unexpected {char!r}")

    def string_end(self) -> int:
        match = _STRING.match(self.text, self.pos)
        if not match:
            raise self.fail("a string is not closed, or holds a control character")
        self.pos = match.end()
        return self.pos

    def container(self, depth: int, close: str) -> Node:
        text, start = self.text, self.pos
        self.pos += 1
        node = Node(start, start, {} if close == "}" else [])
        member: Member | None = None
        while True:
            self.skip()
            if self.pos < len(text) and text[self.pos] == close:
                self.pos += 1
                node.end = self.pos
                return node
            if close == "}":
                if self.pos >= len(text) or text[self.pos] != '"':
                    raise self.fail("a key in double quotes was expected")
                key_start = self.pos
                key = json.loads(text[key_start : self.string_end()])
                self.skip()
                if self.pos >= len(text) or text[self.pos] != ":":
                    raise self.fail("':' was expected")
                self.pos += 1
                item = self.value(depth + 1)
                node.value[key] = item.value
                member = Member(key, key_start, item, None)
                node.members.append(member)
            else:
                node.value.append(self.value(depth + 1).value)
            self.skip()
            if self.pos < len(text) and text[self.pos] == ",":
                if member is not None:
                    member.comma = self.pos
                self.pos += 1
            elif self.pos >= len(text) or text[self.pos] != close:
                raise self.fail(f"',' or {close!r} was expected")


def set_member(text: str, path: tuple[str, str], value: Any) -> str:
    """The text with `path[0]` (an object at the top level, made when missing) mapping `path[1]` to `value`."""
    root = parse(text)
    outer_key, key = path
    unit = _indent_unit(text, root)
    parent = _member(root, outer_key)
    if parent is None:
        return _insert(text, root, outer_key, {key: value}, unit)
    if not isinstance(parent.node.value, dict):
        raise ValueError(f"its {outer_key!r} is not an object")
    existing = _member(parent.node, key)
    if existing is None:
        return _insert(text, parent.node, key, value, unit)
    indent = _line_indent(text, existing.start)
    rendered = _render(value, indent, unit)
    return text[: existing.node.start] + rendered + text[existing.node.end :]


def remove_member(text: str, path: tuple[str, str]) -> str:
    """The text without `path[1]` in the top-level object `path[0]` (unchanged when it is not there)."""
    root = parse(text)
    parent = _member(root, path[0])
    if parent is None or not isinstance(parent.node.value, dict):
        return text
    members = parent.node.members
    gone = {i for i, member in enumerate(members) if member.key == path[1]}  # a duplicate key goes too
    if not gone:
        return text
    edits: list[tuple[int, int]] = []
    for index in gone:
        member = members[index]
        start, end = member.start, (member.comma + 1 if member.comma is not None else member.node.end)
        line_start = text.rfind("\n", 0, start) + 1
        if not text[line_start:start].strip():  # alone on its line: the whole line goes
            start = line_start
            while end < len(text) and text[end] in " \t\r":
                end += 1
            if end < len(text) and text[end] == "\n":
                end += 1
        edits.append((start, end))
    kept = [i for i in range(len(members)) if i not in gone]
    last_kept = members[kept[-1]] if kept else None
    if last_kept is not None and kept[-1] < len(members) - 1 and members[-1].comma is None:
        assert last_kept.comma is not None  # a member followed by another has its comma
        edits.append((last_kept.comma, last_kept.comma + 1))  # it is the last now, as the removed one was
    for start, end in sorted(edits, reverse=True):
        text = text[:start] + text[end:]
    if not kept:  # nothing but whitespace left between the braces: `{}`
        node = _member(parse(text), path[0])
        if node is not None and not text[node.node.start + 1 : node.node.end - 1].strip():
            text = text[: node.node.start] + "{}" + text[node.node.end :]
    return text


def _member(node: Node, key: str) -> Member | None:
    found = [member for member in node.members if member.key == key]
    return found[-1] if found else None  # the last of duplicate keys is the one read


def _insert(text: str, node: Node, key: str, value: Any, unit: str) -> str:
    if not isinstance(node.value, dict):
        raise ValueError("the file holds no JSON object")
    close = node.end - 1
    outer = _line_indent(text, node.start)
    inner = _line_indent(text, node.members[0].start) if node.members else outer + unit
    if node.members and text.rfind("\n", 0, node.members[0].start) < node.start:
        inner = outer + unit  # members on the brace's line: no indentation to follow
    at = close
    while at > node.start + 1 and text[at - 1] in " \t\r\n":
        at -= 1
    addition = "\n" + inner + json.dumps(key, ensure_ascii=False) + ": " + _render(value, inner, unit)
    if node.members and node.members[-1].comma is not None:
        addition += ","  # the file ends its members with a comma: so does this one
    if "\n" not in text[at:close]:
        addition += "\n" + outer
    if node.members and node.members[-1].comma is None:  # the last member gets the comma it now needs
        comma_at = node.members[-1].node.end
        return text[:comma_at] + "," + text[comma_at:at] + addition + text[at:]
    return text[:at] + addition + text[at:]


def _render(value: Any, indent: str, unit: str) -> str:
    return json.dumps(value, indent=unit, ensure_ascii=False).replace("\n", "\n" + indent)


def _line_indent(text: str, at: int) -> str:
    line_start = text.rfind("\n", 0, at) + 1
    line = text[line_start:at]
    return line[: len(line) - len(line.lstrip(" \t"))]


def _indent_unit(text: str, root: Node) -> str:
    """The file's own indentation step, from its first member on a line of its own; two spaces otherwise."""
    if root.members:
        first = root.members[0].start
        if text.rfind("\n", 0, first) > root.start:
            indent = _line_indent(text, first)
            if indent and indent == text[text.rfind("\n", 0, first) + 1 : first]:
                return indent
    return "  "
