"""The deployment's wiring and lifecycle: the composition root, the serving loops, the in-process tools, and what a
deployment builds from its settings (audit log, metrics, plugin catalog, canary store, feedback recorder, store checks,
cold start)."""
