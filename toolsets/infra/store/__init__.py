"""The embedded store: SQLite in --data-dir, one module per kind of data."""
