"""Infrastructure below the tools: the store, upstream clients, text analysis, clocks and contacts."""
