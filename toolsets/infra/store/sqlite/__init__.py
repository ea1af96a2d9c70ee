"""The embedded store's engine: one SQLite file in --data-dir (`database`), and the backend that opens
each component's SQLite implementation over it (`backend`)."""
