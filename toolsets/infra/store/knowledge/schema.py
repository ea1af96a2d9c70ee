"""The knowledge index's tables, as ordered migrations."""

from __future__ import annotations

MIGRATIONS = [
    """
    CREATE TABLE knowledge_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE TABLE knowledge_files (
        path TEXT PRIMARY KEY,
        mtime_ns INTEGER NOT NULL,
        size INTEGER NOT NULL,
        digest TEXT NOT NULL,
        title TEXT NOT NULL,
        page_id TEXT,
        chunks INTEGER NOT NULL
    );
    CREATE TABLE knowledge_chunks (
        id INTEGER PRIMARY KEY,
        path TEXT NOT NULL REFERENCES knowledge_files(path) ON DELETE CASCADE,
        ordinal INTEGER NOT NULL,
        heading TEXT NOT NULL
    );
    CREATE INDEX knowledge_chunks_by_path ON knowledge_chunks(path);
    CREATE VIRTUAL TABLE knowledge_fts USING fts5(
        title, heading, body, tokenize = 'porter unicode61 remove_diacritics 2'
    );
    """,
    # 2: the app's analyzer computes the terms; FTS5 only splits them on spaces. Old chunks kept no text,
    # so the files are read again on the next refresh (which reports progress).
    """
    DROP TABLE knowledge_fts;
    DELETE FROM knowledge_chunks;
    DELETE FROM knowledge_files;
    ALTER TABLE knowledge_chunks ADD COLUMN body TEXT NOT NULL DEFAULT '';
    ALTER TABLE knowledge_chunks ADD COLUMN analyzer TEXT NOT NULL DEFAULT '';
    CREATE INDEX knowledge_chunks_by_analyzer ON knowledge_chunks(analyzer);
    CREATE VIRTUAL TABLE knowledge_fts USING fts5(title, heading, body, tokenize = 'ascii');
    """,
]
