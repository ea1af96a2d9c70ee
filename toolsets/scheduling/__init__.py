"""Scheduled tool runs: when a schedule fires (`when`), what it keeps (the store's `schedules` component) and the
model-facing tools (`toolsets.assistant.schedule_tools`). The engine that fires them is the server's."""
