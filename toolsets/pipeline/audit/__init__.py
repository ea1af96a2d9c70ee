"""The audit log: every tool call and its result as a masked JSON line.

record.py (the line's schema), masking.py (what never reaches the log), writer.py (bounded queue + background
thread + rotation), middleware.py (`AuditMiddleware(sink)`, near the outside of the pipeline). What a call
learns on its way down (deferred route, tool version) is on the call (`toolsets/core/call_notes.py`).
"""
