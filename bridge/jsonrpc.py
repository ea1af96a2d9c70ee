"""The agent-rpc wire format: JSON-RPC 2.0 requests to the device, its responses,
error codes, and the legacy message envelope a device channel carries."""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictInt, StrictStr, ValidationError, model_validator

from toolsets.core import safe_json

# Device-side errors, defined beside their mapping to tool errors
from toolsets.core.device_answer import PERMISSION_DENIED as PERMISSION_DENIED
from toolsets.core.device_answer import PERMISSION_REQUIRED as PERMISSION_REQUIRED
from toolsets.core.device_answer import USER_CANCELED as USER_CANCELED
from toolsets.core.problems import problems

# Standard JSON-RPC codes for malformed input
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
# Implementation-defined (-32000..-32019): the shim's own refusals
UNAUTHORIZED = -32000
UNKNOWN_CALL = -32003
ALREADY_ANSWERED = -32004
TOO_LARGE = -32005
UNAVAILABLE = -32006
FORBIDDEN = -32007

RequestId = StrictStr | StrictInt  # never a float, bool, object or array


class RpcRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    jsonrpc: Literal["2.0"] = "2.0"
    id: RequestId
    method: str
    params: dict[str, Any] = Field(default_factory=dict)


class RpcErrorObject(BaseModel):
    code: int
    message: str
    data: Any = None


class RpcResponse(BaseModel):
    """A device's answer: exactly one of `result` or `error`."""

    model_config = ConfigDict(extra="forbid")

    jsonrpc: Literal["2.0"]
    id: RequestId
    result: Any = None
    error: RpcErrorObject | None = None

    @model_validator(mode="before")
    @classmethod
    def _one_of(cls, data: Any) -> Any:
        if isinstance(data, dict) and ("result" in data) == ("error" in data):
            raise ValueError("a JSON-RPC response carries exactly one of 'result' or 'error'")
        return data

    def wire(self) -> dict[str, Any]:
        body: dict[str, Any] = {"jsonrpc": "2.0", "id": self.id}
        if self.error is not None:
            body["error"] = self.error.model_dump(exclude_none=True)
        else:
            body["result"] = self.result
        return body


class BadMessage(Exception):  # noqa: N818
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def parse_response(body: bytes) -> RpcResponse:
    try:
        data = safe_json.loads(body)
    except safe_json.JsonDecodeError:
        raise BadMessage(
            PARSE_ERROR, f"Parse error: the body is not UTF-8 JSON (nested at most {safe_json.MAX_DEPTH} levels)"
        ) from None
    try:
        return RpcResponse.model_validate(data)
    except ValidationError as exc:
        where, problem = problems(exc, whole="body", limit=1)[0]
        raise BadMessage(
            INVALID_REQUEST,
            f"Invalid Request: expected a JSON-RPC 2.0 response {{jsonrpc, id, result|error}} ({where}: {problem})",
        ) from None


def error_body(request_id: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": request_id, "error": error}


class Envelope(BaseModel):
    """What a device channel carries: `data` is the JSON-RPC request as a string, so existing app
    code (`if (message.customType === 'agent-rpc') JSON.parse(message.data)`) works unchanged."""

    custom_type: Literal["agent-rpc"] = "agent-rpc"
    message: str
    data: str

    @classmethod
    def wrap(cls, request: RpcRequest | dict[str, Any], notification_message: str | None) -> Envelope:
        payload = request.model_dump(mode="json") if isinstance(request, RpcRequest) else request
        return cls(
            message=notification_message or "", data=json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
        )
