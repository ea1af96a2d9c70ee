"""Gates: which tools may run, given what this conversation has done so far."""

from toolsets.pipeline.gates.gate_middleware import GateMiddleware
from toolsets.pipeline.gates.spec import BUILTIN_GATES, Gate, GateFileError, GateSet, load_gates

__all__ = ["BUILTIN_GATES", "Gate", "GateFileError", "GateMiddleware", "GateSet", "load_gates"]
