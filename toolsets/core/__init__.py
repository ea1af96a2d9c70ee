"""The tool framework: tools, toolsets and their wrappers, the call, its context, dispatch and envelope."""
