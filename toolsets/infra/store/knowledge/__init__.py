"""The knowledge index: the docs folder, chunked by heading, searched by BM25 relevance.

One module per job: `files` lists and reads the folder safely, `document` chunks one file's text,
`prepare` turns files into what is stored, `index` keeps the index in step with the folder and
searches it, through the tables of `contract` (`KnowledgeTables`), which `sqlite` (an FTS5 table in
the embedded store) and `postgres` (the shared store) fulfil.

Search terms come from the shared analyzer (`toolsets.infra.text`): the tables hold each chunk's
term strings, and its text (for snippets). Each chunk records the analyzer id it was analyzed with;
after an analyzer change, the next refresh re-analyzes the stored text in batches (no file is
re-read) and reports progress like indexing does.
"""

from toolsets.infra.store.errors import DocsFolderMissing
from toolsets.infra.store.knowledge.contract import KnowledgeTables
from toolsets.infra.store.knowledge.document import MAX_CHUNK_CHARS, Chunk, parse_document, split_notion_id
from toolsets.infra.store.knowledge.files import MAX_FILE_BYTES, SUFFIXES
from toolsets.infra.store.knowledge.index import IndexStats, KnowledgeHit, KnowledgeIndex, Progress
from toolsets.infra.store.knowledge.prepare import prepare_batch

__all__ = [
    "MAX_CHUNK_CHARS",
    "MAX_FILE_BYTES",
    "SUFFIXES",
    "Chunk",
    "DocsFolderMissing",
    "IndexStats",
    "KnowledgeHit",
    "KnowledgeIndex",
    "KnowledgeTables",
    "Progress",
    "parse_document",
    "prepare_batch",
    "split_notion_id",
]
