"""Which spec a plugin file declares (`TOOL_SPEC`, `RESOURCE_SPEC` or `PROMPT_SPEC`), checked as that kind."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeAlias

from pydantic import BaseModel, ValidationError

from toolsets.core.problems import describe
from toolsets.extensions.plugins.prompt_spec import PromptSpec
from toolsets.extensions.plugins.resource_spec import ResourceSpec
from toolsets.extensions.plugins.spec import PluginSpec
from toolsets.extensions.plugins.spec_common import PluginSpecError

AnySpec: TypeAlias = PluginSpec | ResourceSpec | PromptSpec
SPEC_NAMES = {"tool": "TOOL_SPEC", "resource": "RESOURCE_SPEC", "prompt": "PROMPT_SPEC"}


def parse_spec(raw: Mapping[str, Any]) -> AnySpec:
    """The spec of whichever kind `raw` is (its `kind`, set by the loader from the variable the file defines)."""
    kind = raw.get("kind", "tool")
    models: dict[str, type[BaseModel]] = {"tool": PluginSpec, "resource": ResourceSpec, "prompt": PromptSpec}
    model = models.get(str(kind), PluginSpec)
    whole = SPEC_NAMES.get(str(kind), "TOOL_SPEC")
    try:
        return model.model_validate(dict(raw))  # type: ignore[return-value]  # one of the three models above
    except ValidationError as exc:
        described = describe(exc, whole=whole, limit=5)
        if any(error["type"] == "extra_forbidden" for error in exc.errors()):
            keys = ", ".join(name for name in model.model_fields if name != "kind")
            described += f" ({whole} keys: {keys})"
        raise PluginSpecError(f"invalid {whole}: {described}") from None
