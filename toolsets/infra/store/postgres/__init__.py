"""The shared store on PostgreSQL (`--database-url`): the same store contract as the embedded SQLite
store, for several replicas. Search terms come from the same analyzer and live in `tsvector` columns
(GIN-indexed, no server-side parsing or stemming)."""
