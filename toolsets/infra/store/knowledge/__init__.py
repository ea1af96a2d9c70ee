"""The knowledge index: the docs folder, chunked by heading, in an SQLite FTS5 table ranked by BM25.

One module per job: `files` lists and reads the folder safely, `document` chunks one file's text,
`prepare` turns files into what is stored, `tables` reads and writes the index, `index` keeps it in
step with the folder and searches it (`schema` holds the migrations).

Search terms come from the shared analyzer (`toolsets.infra.text`): the FTS table holds each chunk's
term strings (split on spaces only), the chunk table its text (for snippets). Each chunk records
the analyzer id it was analyzed with; after an analyzer change, the next refresh re-analyzes the
stored text in batches (no file is re-read) and reports progress like indexing does.
"""

from toolsets.infra.store.errors import DocsFolderMissing
from toolsets.infra.store.knowledge.document import MAX_CHUNK_CHARS, Chunk, parse_document, split_notion_id
from toolsets.infra.store.knowledge.files import MAX_FILE_BYTES, SUFFIXES
from toolsets.infra.store.knowledge.index import IndexStats, KnowledgeHit, KnowledgeIndex, Progress
from toolsets.infra.store.knowledge.prepare import prepare_batch
from toolsets.infra.store.knowledge.schema import MIGRATIONS

__all__ = [
    "MAX_CHUNK_CHARS",
    "MAX_FILE_BYTES",
    "MIGRATIONS",
    "SUFFIXES",
    "Chunk",
    "DocsFolderMissing",
    "IndexStats",
    "KnowledgeHit",
    "KnowledgeIndex",
    "Progress",
    "parse_document",
    "prepare_batch",
    "split_notion_id",
]
