"""Language-aware text handling for search: one analyzer (Korean + English + mixed), snippets, names."""

from toolsets.infra.text.analyzer import MAX_QUERY_TERMS, Analyzer, analyzer
from toolsets.infra.text.crosslang import Query
from toolsets.infra.text.fts import match_expression
from toolsets.infra.text.normalize import canonical_key, fold, strip_invisible

__all__ = [
    "MAX_QUERY_TERMS",
    "Analyzer",
    "Query",
    "analyzer",
    "canonical_key",
    "fold",
    "match_expression",
    "strip_invisible",
]
