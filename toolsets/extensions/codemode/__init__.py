"""Code mode: `execute_code` runs one short Python program the model wrote, in the sandbox, and each of the program's
`tools.NAME(...)` calls goes through the front door as the caller (docs/code-mode.md).

- child.py: the interpreter inside the sandbox (standard library only)
- pool.py: warm sandboxed interpreters, one per program
- program.py: one program's exchange with its interpreter, bounded and timed
- engine.py: `CodeMode`, the per-program and per-user bounds, the calls through the door
- outcome.py: what `execute_code` answers
- tools.py: the `code` toolset
"""

CODE_TOOL = "execute_code"
