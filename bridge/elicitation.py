"""Asking the MCP client's user a question, in whichever protocol era the call runs.

Handshake era (2025-06-18, 2025-11-25): an inline `elicitation/create` on the session.
2026-07-28: there is no back-channel, so the question leaves as an `InputRequiredResult` and
the client calls again with `inputResponses`. Those responses are not integrity-protected;
only `requestState` is (the SDK seals it and binds it to the tool, its arguments and the
caller). So an answer is trusted only when the sealed state names the question it answers,
and answers from earlier rounds travel inside the sealed state, never from the client.
"""

from __future__ import annotations

import json
import logging
from typing import Any, Protocol

import mcp.types as types
from mcp.server.mcpserver import Context
from mcp.shared.exceptions import MCPError

from toolsets.core.context import ConfirmRequest, Decision
from toolsets.core.errors import InputRequired
from toolsets.words.catalog import tr

logger = logging.getLogger("truloop.elicitation")

_STATE_VERSION = 1
OWN_KEYS = "truloop/"  # the server's own questions (confirmation, composing): answered only when asked


class CannotAsk(Exception):  # noqa: N818
    """This client cannot be asked (no elicitation capability, or no back-channel)."""


class AskContext(Protocol):
    """What an asker reads of its request: the SDK's `Context`, or an MCP task's stand-in (server/tasks/ports.py)."""

    @property
    def client_capabilities(self) -> types.ClientCapabilities | None: ...
    @property
    def session(self) -> Any: ...
    @property
    def request_id(self) -> Any: ...
    @property
    def request_state(self) -> str | None: ...
    @property
    def input_responses(self) -> Any: ...


class McpAsker:
    """One tool call's questions to the client, valid for that call only."""

    def __init__(self, context: Context | AskContext, *, modern: bool, answers: dict[str, Any] | None = None) -> None:
        """`modern`: the request speaks 2026-07-28 or later (the server's `server.mcp.protocol_era.is_modern`).
        `answers`: the answers of earlier rounds, from a trusted place (an MCP task's record), instead of the request's
        sealed state."""
        self._ctx = context
        self.modern = modern
        self._answers: dict[str, dict[str, Any]] = {}
        self._offered: dict[str, dict[str, Any]] = {}  # answers a first round carried unasked (plugin questions only)
        if answers is not None:
            self._answers = dict(answers)
        elif self.modern:
            self._restore(context.request_state, context.input_responses)

    def _restore(self, sealed_state: str | None, responses: Any) -> None:
        if not sealed_state:
            # a first round: answers sent with it were never asked for. The server's own questions (confirmation,
            # composing: keys under `truloop/`) ignore them; a plugin's questions (`ask_many`) may take them, as the
            # client's word, like any input it sends
            if isinstance(responses, dict):
                self._offered = {
                    str(key): _as_dict(value)
                    for key, value in responses.items()
                    if isinstance(key, str) and not key.startswith(OWN_KEYS) and value is not None
                }
            return
        try:
            state = json.loads(sealed_state)
            if state.get("v") != _STATE_VERSION:
                return
            self._answers = dict(state.get("answers") or {})
            pending = state.get("pending")
        except (ValueError, AttributeError, TypeError):
            return
        for key in [pending] if isinstance(pending, str) else list(pending or []):
            answer = (responses or {}).get(key)
            if answer is not None:
                self._answers[key] = _as_dict(answer)

    def answers(self) -> dict[str, Any]:
        """Every answer (and remembered value) of this call so far, by key."""
        return dict(self._answers)

    def recall(self, key: str) -> Any:
        """A value remembered earlier in this call (from the sealed state on 2026-07-28)."""
        return self._answers.get(key)

    def remember(self, key: str, value: Any) -> None:
        """Keep a JSON value for the rest of this call; on 2026-07-28 it rides in the sealed state."""
        self._answers[key] = value

    def can_sample(self, *, with_tools: bool = False) -> bool:
        caps = self._ctx.client_capabilities
        sampling = caps.sampling if caps is not None else None
        if sampling is None or (with_tools and sampling.tools is None):
            return False
        return self.modern or self._ctx.session.can_send_request

    async def sample(self, key: str, params: types.CreateMessageRequestParams) -> types.CreateMessageResultWithTools:
        """The client's model answer; raises `CannotAsk`, or `InputRequired` on 2026-07-28 until answered."""
        if key in self._answers:
            return types.CreateMessageResultWithTools.model_validate(self._answers[key])
        if not self.can_sample(with_tools=bool(params.tools)):
            raise CannotAsk(key)
        if self.modern:
            self._suspend(key, types.CreateMessageRequest(params=params))
        import warnings

        from mcp.shared.exceptions import MCPDeprecationWarning

        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", MCPDeprecationWarning)
                result = await self._ctx.session.create_message(
                    params.messages,
                    max_tokens=params.max_tokens,
                    system_prompt=params.system_prompt,
                    tools=params.tools,
                    tool_choice=params.tool_choice,
                    related_request_id=self._ctx.request_id,
                )
        except MCPError as exc:
            logger.info("client refused sampling %s: %s", key, exc.error.code)
            raise CannotAsk(key) from None
        answer = _as_dict(result)
        self._answers[key] = answer
        return types.CreateMessageResultWithTools.model_validate(answer)

    def _suspend(self, key: str, request: Any) -> None:
        self._suspend_all({key: request})

    def _suspend_all(self, requests: dict[str, Any]) -> None:
        pending = list(requests)
        state = json.dumps({"v": _STATE_VERSION, "answers": self._answers, "pending": pending}, separators=(",", ":"))
        raise InputRequired(types.InputRequiredResult(input_requests=requests, request_state=state))

    def missing(self, methods: list[str]) -> list[str]:
        """The client capabilities these request methods need that the client did not declare."""
        caps = self._ctx.client_capabilities
        declared = caps.model_dump(exclude_none=True) if caps is not None else {}
        return sorted({NEEDS[method] for method in methods if method in NEEDS and NEEDS[method] not in declared})

    async def ask_many(self, requests: dict[str, dict[str, Any]]) -> dict[str, Any]:
        """The client's results for raw MCP requests by key (`{"method", "params"}`): a handshake-era client is asked
        in turn on its session; on 2026-07-28 the unanswered ones leave together as one `InputRequired`. Raises
        `CannotAsk` naming the capabilities the client did not declare (or that it refused)."""
        for key in requests:
            if key not in self._answers and key in self._offered:
                self._answers[key] = self._offered[key]
        unanswered = {key: request for key, request in requests.items() if key not in self._answers}
        missing = self.missing([str(request.get("method")) for request in unanswered.values()])
        if missing:
            raise CannotAsk(*missing)
        if unanswered and self.modern:
            self._suspend_all({key: _request_model(request) for key, request in unanswered.items()})
        if unanswered and not self._ctx.session.can_send_request:
            raise CannotAsk(*sorted({NEEDS[str(r.get("method"))] for r in unanswered.values()}))
        from mcp.shared.message import ServerMessageMetadata

        for key, request in unanswered.items():
            model = _request_model(request)
            try:
                related = ServerMessageMetadata(related_request_id=self._ctx.request_id)
                result = await self._ctx.session.send_request(model, RESULTS[model.method], metadata=related)
            except MCPError as exc:
                logger.info("client refused %s %s: %s", model.method, key, exc.error.code)
                raise CannotAsk(NEEDS[model.method]) from None
            self._answers[key] = _as_dict(result)
        return {key: self._answers[key] for key in requests}

    def can_ask(self) -> bool:
        caps = self._ctx.client_capabilities
        elicitation = caps.elicitation if caps is not None else None
        if elicitation is None:
            return False
        if elicitation.form is None and elicitation.url is not None:
            return False  # declared URL mode only
        return self.modern or self._ctx.session.can_send_request

    async def ask(
        self, key: str, message: str, schema: dict[str, Any], meta: dict[str, Any] | None = None
    ) -> types.ElicitResult:
        """The user's answer; raises `CannotAsk`, or `InputRequired` on 2026-07-28 until answered. `meta`: the request's
        `_meta` on 2026-07-28, where an app rendering the held call reads it (the handshake era's dialog is the
        host's own)."""
        if key in self._answers:
            return types.ElicitResult.model_validate(self._answers[key])
        if not self.can_ask():
            raise CannotAsk(key)
        if self.modern:
            fields: dict[str, Any] = {"message": message, "requested_schema": schema}
            if meta:
                fields["_meta"] = meta
            params = types.ElicitRequestFormParams.model_validate(fields, by_name=True, by_alias=True)
            self._suspend(key, types.ElicitRequest(params=params))
        try:
            result = await self._ctx.session.elicit_form(message, schema, related_request_id=self._ctx.request_id)
        except MCPError as exc:
            logger.info("client refused elicitation %s: %s", key, exc.error.code)
            raise CannotAsk(key) from None
        self._answers[key] = _as_dict(result)
        return result


def questions_of(payload: Any) -> tuple[dict[str, dict[str, Any]], dict[str, Any]] | None:
    """The questions an asker's `InputRequiredResult` puts to the client (as JSON, by key) and the answers of earlier
    rounds its state carries (None: not such a payload). An MCP task keeps both on its record, not in the request."""
    requests = getattr(payload, "input_requests", None)
    if not requests:
        return None
    try:
        state = json.loads(getattr(payload, "request_state", None) or "{}")
        answers = dict(state.get("answers") or {}) if state.get("v") == _STATE_VERSION else {}
    except (ValueError, AttributeError, TypeError):
        answers = {}
    return {str(key): _as_dict(request) for key, request in requests.items()}, answers


NEEDS = {"elicitation/create": "elicitation", "sampling/createMessage": "sampling", "roots/list": "roots"}
RESULTS: dict[str, Any] = {
    "elicitation/create": types.ElicitResult,
    "sampling/createMessage": types.CreateMessageResult,
    "roots/list": types.ListRootsResult,
}


def _request_model(request: dict[str, Any]) -> Any:
    """A raw `{"method", "params"}` as the SDK's request model (ValueError when it is not a valid one)."""
    from pydantic import ValidationError

    method = request.get("method")
    try:
        if method == "elicitation/create":
            return types.ElicitRequest.model_validate({"method": method, "params": request.get("params") or {}})
        if method == "sampling/createMessage":
            return types.CreateMessageRequest.model_validate({"method": method, "params": request.get("params") or {}})
        if method == "roots/list":
            return types.ListRootsRequest()
    except ValidationError as exc:
        raise ValueError(f"{method}: {exc.errors()[0].get('msg')} at {exc.errors()[0].get('loc')}") from None
    raise ValueError(f"{method!r} is not a request a server may send a client")


def _as_dict(answer: Any) -> dict[str, Any]:
    if hasattr(answer, "model_dump"):
        return answer.model_dump(mode="json", by_alias=True, exclude_none=True)
    return dict(answer)


CONFIRM_KEY = "truloop/confirm"  # + "/<tool>/<digest of its arguments>"
# what a confirmation card reads beside the question: the person's language, and the call's values under labels
LOCALE_META = "truloop/locale"
FIELDS_META = "truloop/fields"


def confirm_schema(locale: str | None) -> dict[str, Any]:
    """The confirmation's form: one yes/no, labelled in the person's language."""
    label = {"type": "boolean", "title": tr(locale, "Confirm"), "description": tr(locale, "Allow this action to run")}
    return {"type": "object", "properties": {"confirm": label}, "required": ["confirm"]}


CONFIRM_SCHEMA: dict[str, Any] = confirm_schema("en")


class ElicitationConfirmer:
    """The `Confirmer` port over MCP elicitation: a boolean form."""

    def __init__(self, asker: McpAsker) -> None:
        self._asker = asker

    async def confirm(self, request: ConfirmRequest) -> Decision:
        try:
            meta = {LOCALE_META: request.locale, FIELDS_META: [list(row) for row in request.fields]}
            schema = confirm_schema(request.locale)
            answer = await self._asker.ask(f"{CONFIRM_KEY}/{request.key}", request.message, schema, meta)
        except CannotAsk:
            return Decision.UNAVAILABLE
        if answer.action == "accept":
            return Decision.ACCEPTED if (answer.content or {}).get("confirm") is True else Decision.DECLINED
        if answer.action == "decline":
            return Decision.DECLINED
        return Decision.CANCELLED
