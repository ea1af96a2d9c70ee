"""The assistant's toolsets (one module per toolset) and the helpers only they use."""
