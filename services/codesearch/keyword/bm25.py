"""BM25 over chunks with tantivy, on code-aware tokens.

Text is tokenised by the native `code_tokens` (identifiers whole and split into camelCase/snake_case parts,
lower-cased) and handed to tantivy with a whitespace tokenizer, so indexing and querying split identically.
Each searched field is indexed twice: as written, and as word stems (English Snowball: "signing", "signed" and
"signs" are one term), which a search asks for with `stemmed=True`.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

import tantivy

from codesearch import _native

TOKENIZER = "code_ws"
STEM_TOKENIZER = "code_stem"
# Code comments and identifiers are overwhelmingly English; tantivy's Snowball stemmer for it.
STEM_LANGUAGE = "english"
# Searched fields and their stemmed twins (written with STEM_TOKENIZER from the same code tokens).
STEMMED_FIELD = {"body": "body_stem", "symbol_tokens": "symbol_stem", "path_tokens": "path_stem"}
# Field weights, measured on the dev set (keyword mode, MRR@10 ALL): body alone 0.818; + symbol names at 0.5
# 0.881 (definitions 0.716 → 0.931); symbol at 1.0 0.857 and at 3.0 with path 2.0 0.594 (names drown the text of
# exact-message and docstring queries); any path or breadcrumb weight lowered impact and concept queries.
SYMBOL_BOOST = 0.5
# The path field is asked only when the query names a path ("email/utils.py"): then it is strong evidence.
PATH_BOOST = 2.0
PATH_LIKE = re.compile(r"/|\.[A-Za-z]{1,5}\b")
MAX_TOKEN_CHARS = 64  # longer "tokens" are hashes or data, not words anyone searches for
WRITER_HEAP_BYTES = 64 << 20  # tantivy's minimum is 15 MB per thread; 64 MB keeps segments few on big repos
WRITER_THREADS = 1  # the indexer already runs legs in parallel on 2 cores
# The searched fields record term frequencies, not positions: BM25 reads frequencies and field lengths, and no
# query asks for a phrase. On the standard library the BM25 index went 9.6 -> 5.8 MB, the same hits and scores for
# all 950 dev-set searches (as written and stemmed).
SEARCHED_RECORD = "freq"


@dataclass(frozen=True)
class ChunkDoc:
    path: str
    start_line: int
    end_line: int
    language: str
    text: str
    symbol: str
    breadcrumb: tuple[str, ...]
    # False: `text` is lines start..end of the file as the trigram store holds it, so the index does not store it
    # a second time (the snippet is read from there); a reader then sees "" here.
    text_stored: bool = True


@dataclass(frozen=True)
class Bm25Hit:
    doc: ChunkDoc
    score: float


def _schema() -> tantivy.Schema:
    b = tantivy.SchemaBuilder()
    b.add_text_field("path", stored=True, tokenizer_name="raw")  # exact path, for deletes and filters
    b.add_text_field("path_tokens", stored=False, tokenizer_name=TOKENIZER, index_option=SEARCHED_RECORD)
    b.add_text_field("language", stored=True, tokenizer_name="raw")
    b.add_integer_field("start_line", stored=True)
    b.add_integer_field("end_line", stored=True)
    b.add_text_field("body", stored=False, tokenizer_name=TOKENIZER, index_option=SEARCHED_RECORD)
    b.add_text_field("symbol_tokens", stored=False, tokenizer_name=TOKENIZER, index_option=SEARCHED_RECORD)
    # For snippets only, and only where the chunk is not the file's own lines (ChunkDoc.text_stored): the body
    # field is what is searched.
    b.add_bytes_field("text", stored=True, indexed=False)
    b.add_text_field("symbol", stored=True, tokenizer_name="raw")
    b.add_text_field("breadcrumb", stored=True, tokenizer_name="raw")
    for stemmed in STEMMED_FIELD.values():
        b.add_text_field(stemmed, stored=False, tokenizer_name=STEM_TOKENIZER, index_option=SEARCHED_RECORD)
    return b.build()


def _analyzer() -> tantivy.TextAnalyzer:
    return (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.whitespace())
        .filter(tantivy.Filter.remove_long(MAX_TOKEN_CHARS))
        .build()
    )


def _stem_analyzer() -> tantivy.TextAnalyzer:
    return (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.whitespace())
        .filter(tantivy.Filter.remove_long(MAX_TOKEN_CHARS))
        .filter(tantivy.Filter.stemmer(STEM_LANGUAGE))
        .build()
    )


def _register(index: tantivy.Index) -> None:
    index.register_tokenizer(TOKENIZER, _analyzer())
    index.register_tokenizer(STEM_TOKENIZER, _stem_analyzer())


def _open(path: Path) -> tantivy.Index:
    index = tantivy.Index(_schema(), path=str(path), reuse=True)
    _register(index)
    return index


_STEMMER = _stem_analyzer()


def stems(words: set[str]) -> set[str]:
    """The word stems of code tokens, as the stemmed fields index them."""
    return {term for w in words for term in _STEMMER.analyze(w)}


def _has_stems(schema: tantivy.Schema) -> bool:
    """False for indexes written before the stemmed fields (they answer stemmed searches as written)."""
    try:
        tantivy.Query.term_query(schema, STEMMED_FIELD["body"], "x")
    except ValueError:
        return False
    return True


def _schema_is_current(path: Path) -> bool:
    """Whether an index on disk has this schema (the stemmed fields; frequencies, not positions, searched)."""
    fields = {f["name"]: f for f in json.loads((path / "meta.json").read_text())["schema"]}
    record = fields.get("body", {}).get("options", {}).get("indexing", {}).get("record")
    return STEMMED_FIELD["body"] in fields and record == SEARCHED_RECORD


def write(
    path: Path,
    base: Path | None,
    docs: list[ChunkDoc],
    drop_paths: set[str],
    lines_of: Callable[[ChunkDoc], str] | None = None,
) -> int:
    """Builds the index in `path` (empty): `base`'s segments hard-linked in, `drop_paths` deleted, `docs` added.
    `lines_of` reads the text of a chunk of `base` that is its file's own lines (not stored here).

    Returns the number of documents in the committed index.
    """
    path.mkdir(parents=True, exist_ok=True)
    if base is not None and base.is_dir() and not _schema_is_current(base):
        # Written with an older schema (before the stemmed fields, or recording positions): its segments cannot
        # join this one, so its chunks are written again from their text (nothing is lost, no file is re-read).
        kept = [d for d in Bm25Reader(base).all_docs() if d.path not in drop_paths]
        if lines_of is not None:
            kept = [d if d.text_stored else replace(d, text=lines_of(d)) for d in kept]
        docs = kept + docs
        base, drop_paths = None, set()
    if base is not None and base.is_dir():
        for f in base.iterdir():
            if f.is_file() and not f.name.startswith(".tantivy-"):  # lock files belong to the old writer
                os.link(f, path / f.name)  # segments are immutable: sharing them is safe and free
    index = _open(path)
    writer = index.writer(heap_size=WRITER_HEAP_BYTES, num_threads=WRITER_THREADS)
    for p in sorted(drop_paths):
        writer.delete_documents_by_term("path", p)
    bodies = _native.code_tokens_joined([d.text for d in docs])
    paths = _native.code_tokens_joined([d.path for d in docs])
    symbols = _native.code_tokens_joined([d.symbol.replace(".", " ") for d in docs])
    for d, body, path_tok, symbol_tok in zip(docs, bodies, paths, symbols, strict=True):
        fields: dict[str, object] = {
            "path": d.path,
            "path_tokens": path_tok,
            "language": d.language,
            "start_line": d.start_line,
            "end_line": d.end_line,
            "body": body,
            "symbol_tokens": symbol_tok,
            "symbol": d.symbol,
            "breadcrumb": "\x1f".join(d.breadcrumb),
            "body_stem": body,
            "symbol_stem": symbol_tok,
            "path_stem": path_tok,
        }
        if d.text_stored:
            fields["text"] = d.text.encode()
        writer.add_document(tantivy.Document(**fields))
    writer.commit()
    writer.wait_merging_threads()
    index.reload()
    return index.searcher().num_docs


class Bm25Reader:
    """A searcher over one committed BM25 index."""

    def __init__(self, path: Path) -> None:
        # Index.open only reads: a committed generation can be served from a read-only data directory.
        self.index = tantivy.Index.open(str(path))
        _register(self.index)
        self.searcher = self.index.searcher()
        self.schema = self.index.schema
        self.has_stems = _has_stems(self.schema)

    @property
    def num_docs(self) -> int:
        return int(self.searcher.num_docs)

    def query_tokens(self, query: str, stemmed: bool = False) -> list[str]:
        seen: dict[str, None] = {}
        for t in _native.code_tokens(query):
            if len(t) <= MAX_TOKEN_CHARS:
                for term in _STEMMER.analyze(t) if stemmed else [t]:
                    seen.setdefault(term, None)
        return list(seen)

    def search(
        self, query: str, limit: int, languages: list[str], path_weight: float = 0.0, stemmed: bool = False
    ) -> list[Bm25Hit]:
        """`path_weight`: how much the query's words count in file paths when the query names no path;
        `stemmed`: match word stems (as written where the index has no stemmed fields)."""
        stemmed = stemmed and self.has_stems
        tokens = self.query_tokens(query, stemmed)
        if not tokens:
            return []
        fields = [("body", 1.0), ("symbol_tokens", SYMBOL_BOOST)]
        if PATH_LIKE.search(query):
            fields.append(("path_tokens", PATH_BOOST))
        elif path_weight > 0:
            fields.append(("path_tokens", path_weight))
        if stemmed:
            fields = [(STEMMED_FIELD[field], boost) for field, boost in fields]
        should: list[tuple[tantivy.Occur, tantivy.Query]] = []
        for t in tokens:
            for field, boost in fields:
                q = tantivy.Query.term_query(self.schema, field, t)
                should.append(
                    (tantivy.Occur.Should, q if boost == 1.0 else tantivy.Query.boost_query(q, boost))
                )
        query_obj = tantivy.Query.boolean_query(should)
        if languages:
            lang = tantivy.Query.boolean_query(
                [
                    (tantivy.Occur.Should, tantivy.Query.term_query(self.schema, "language", x))
                    for x in languages
                ]
            )
            query_obj = tantivy.Query.boolean_query(
                [(tantivy.Occur.Must, query_obj), (tantivy.Occur.Must, lang)]
            )
        result = self.searcher.search(query_obj, limit=limit, count=False)
        return [Bm25Hit(self._stored(address), float(score)) for score, address in result.hits]

    def all_docs(self) -> list[ChunkDoc]:
        """Every chunk, from its stored fields."""
        result = self.searcher.search(tantivy.Query.all_query(), limit=max(1, self.num_docs), count=False)
        return [self._stored(address) for _score, address in result.hits]

    def _stored(self, address: tantivy.DocAddress) -> ChunkDoc:
        doc = self.searcher.doc(address)
        crumb = doc.get_first("breadcrumb") or ""
        text = doc.get_first("text")
        return ChunkDoc(
            path=str(doc.get_first("path")),
            start_line=int(doc.get_first("start_line") or 0),
            end_line=int(doc.get_first("end_line") or 0),
            language=doc.get_first("language") or "",
            text="" if text is None else bytes(text).decode(errors="replace"),
            symbol=doc.get_first("symbol") or "",
            breadcrumb=tuple(crumb.split("\x1f")) if crumb else (),
            text_stored=text is not None,
        )
