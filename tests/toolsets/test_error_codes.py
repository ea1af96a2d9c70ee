"""The error vocabulary: ErrorCode, ToolError's defaults, the envelope, and docs/errors.md agree."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from toolsets.core.envelope import ToolCancelled, ToolErr
from toolsets.core.errors import ErrorCode, ToolError, ToolInputError

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "errors.md"
DOC_ROW = re.compile(r"^\| `(?P<code>[a-z_]+)` \| (?P<retryable>yes|no) \| (?P<meaning>.+) \|$")


def doc_rows() -> dict[str, tuple[bool, str]]:
    rows = {}
    for line in DOC.read_text(encoding="utf-8").splitlines():
        match = DOC_ROW.match(line)
        if match:
            rows[match["code"]] = (match["retryable"] == "yes", match["meaning"])
    return rows


def test_the_doc_lists_every_code_with_its_meaning_and_retryability() -> None:
    expected = {code.value: (code.retryable, code.meaning) for code in ErrorCode}
    documented = doc_rows()
    for value, (retryable, meaning) in expected.items():
        line = f"| `{value}` | {'yes' if retryable else 'no'} | {meaning} |"
        assert documented.get(value) == (retryable, meaning), f"docs/errors.md needs the row: {line}"
    assert set(documented) == set(expected), (
        f"docs/errors.md documents unknown codes: {set(documented) - set(expected)}"
    )


def test_every_code_has_a_meaning() -> None:
    for code in ErrorCode:
        assert code.meaning.endswith(".") and isinstance(code.retryable, bool)


def test_every_code_the_source_raises_is_in_the_vocabulary() -> None:
    literal = re.compile(r'\bcode="([a-z_]+)"')
    for folder in ("toolsets", "bridge", "server"):
        for path in (ROOT / folder).rglob("*.py"):
            for value in literal.findall(path.read_text(encoding="utf-8")):
                assert value in ErrorCode._value2member_map_, (
                    f"{path.relative_to(ROOT)}: code {value!r} is not an ErrorCode"
                )


@pytest.mark.parametrize("code", list(ErrorCode))
def test_tool_error_defaults_retryable_from_its_code(code: ErrorCode) -> None:
    by_member = ToolError("no", code=code)
    by_value = ToolError("no", code=code.value)
    assert by_member.code is by_value.code is code
    assert by_member.retryable is by_value.retryable is code.retryable


def test_the_raiser_may_override_retryable() -> None:
    assert ToolError("later", code=ErrorCode.NOT_FOUND, retryable=True).retryable is True
    assert ToolError("never", code=ErrorCode.TIMEOUT, retryable=False).retryable is False
    assert ToolError("plain").code is ErrorCode.TOOL_ERROR
    assert ToolInputError("bad").code is ErrorCode.VALIDATION


def test_an_unknown_code_fails_loudly() -> None:
    with pytest.raises(ValueError, match="not_a_code"):
        ToolError("x", code="not_a_code")
    with pytest.raises(ValueError, match="not_a_code"):
        ToolErr("not_a_code", "x")  # type: ignore[arg-type]


def test_the_envelope_carries_the_same_wire_strings() -> None:
    err = ToolErr("rate_limited", "wait", True)  # type: ignore[arg-type]
    assert err.code is ErrorCode.RATE_LIMITED and err == ToolErr(ErrorCode.RATE_LIMITED, "wait", True)
    structured = err.structured()
    assert structured == {"status": "error", "code": "rate_limited", "reason": "wait", "retryable": True}
    assert type(structured["code"]) is str  # a plain string on the wire, not the enum
    cancelled = ToolCancelled("declined").structured()
    assert type(cancelled["code"]) is str and json.loads(json.dumps(cancelled))["code"] == "cancelled"
