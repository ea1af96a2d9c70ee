"""Analyzer terms as `tsvector`/`tsquery` literals, and the BM25-like ranking every search shares.

The analyzer's terms go in verbatim (a literal, never `to_tsvector`), so PostgreSQL indexes exactly the
terms SQLite's FTS5 indexes, and neither side parses or stems anything. Ranking: for each query term,
its inverse document frequency (BM25's, over the rows searched) times `ts_rank` of that term with
length normalisation; summed over the terms. FTS5's bm25 ranks the same way (idf x saturating term
frequency x length), so both backends agree on what is relevant (bench/db_bench.py measures how well).
A query's other-language alternates count `alternate_weight` of an own term, as on SQLite.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from toolsets.infra.text import Query

MAX_POSITION = 16383  # PostgreSQL's largest tsvector position; later ones are stored as this


def _quoted(term: str, prefix: str = "") -> str:
    if not term:  # `''` is not a tsquery (a syntax error), and a bare owner key would match nothing by accident
        raise ValueError("an empty search term")
    scoped = prefix + term
    return "'" + scoped.replace("\\", "\\\\").replace("'", "''") + "'"


def tsvector_literal(fields: Sequence[tuple[str, str]], prefix: str = "") -> str:
    """`'term':1A 'other':2D ...` for (term string, weight letter) fields, positions running on across
    fields; `prefix` scopes every term (a memory owner's key)."""
    parts: list[str] = []
    position = 0
    for terms, weight in fields:
        label = "" if weight == "D" else weight
        for term in terms.split():
            position = min(position + 1, MAX_POSITION)
            parts.append(f"{_quoted(term, prefix)}:{position}{label}")
    return " ".join(parts)


def query_terms(terms: Iterable[str], prefix: str = "") -> list[str]:
    """Each term as a one-term `tsquery` literal (deduplicated, order kept). The analyzer makes no empty
    term; one given anyway raises ValueError rather than reaching PostgreSQL as `''`."""
    return [_quoted(term, prefix) for term in dict.fromkeys(terms)]


def search_params(query: Query, prefix: str = "") -> dict[str, Any]:
    """The parameters of `ranked_sql` for a query: its terms and alternates as one-term `tsquery` literals
    (%(terms)s), each one's weight (%(boosts)s: 1 for an own term) and their OR (%(any)s); {} when the query
    has no term."""
    own = query_terms(query.terms, prefix)
    if not own:
        return {}
    others = [term for term in query_terms(query.alternates, prefix) if term not in own]
    quoted = own + others
    boosts = [1.0] * len(own) + [query.alternate_weight] * len(others)
    return {"terms": quoted, "boosts": boosts, "any": any_of(quoted)}


def any_of(quoted: Sequence[str]) -> str:
    return " | ".join(quoted)


def all_of(quoted: Sequence[str]) -> str:
    return " & ".join(quoted)


def ranked_sql(table: str, *, weights: str, scope: str = "TRUE", columns: str = "t.*") -> str:
    """Rows of `table` (alias `t`, a `tsv` column) matching any query term, best first, with `score`.
    Parameters: %(terms)s (one-term tsquery literals), %(boosts)s (each term's weight), %(any)s (their OR),
    %(limit)s, and those `scope` (a condition on `t`) uses (`search_params` gives the first three). idf is
    BM25's: ln(1 + (N - df + 0.5) / (df + 0.5)) over the scoped rows, times the term's weight."""
    return f"""
        WITH q AS MATERIALIZED (
            SELECT term::tsquery AS tq, boost FROM unnest(%(terms)s::text[], %(boosts)s::float8[]) AS x(term, boost)
        ),
        total AS MATERIALIZED (SELECT count(*)::float8 AS n FROM {table} t WHERE {scope}),
        w AS MATERIALIZED (
            SELECT q.tq, q.boost * ln(1 + (total.n - d.df + 0.5) / (d.df + 0.5)) AS idf
            FROM q, total, LATERAL (SELECT count(*)::float8 AS df FROM {table} t WHERE {scope} AND t.tsv @@ q.tq) d
        )
        SELECT {columns}, (SELECT sum(w.idf * ts_rank('{weights}', t.tsv, w.tq, 1)) FROM w) AS score
        FROM {table} t
        WHERE {scope} AND t.tsv @@ %(any)s::tsquery
        ORDER BY score DESC, t.seq DESC
        LIMIT %(limit)s
    """
