"""The audit log (seed 003): every tool call and its result as a masked JSON line.

record.py (the line's schema), masking.py (what never reaches the log), notes.py (what a call learns on
its way down: deferred route, tool version), writer.py (bounded queue + background thread + rotation),
middleware.py (the pipeline's outermost layer). toolsets/profiles.py composes the middleware; the
deployment (server/app.py) gives `Services.audit` a writer.
"""
