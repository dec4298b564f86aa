"""Training data mined from a repository's own code: documented definitions, the train / blend / test split
of their files, and groups of one right definition with its hardest wrong ones (BM25 and bi-encoder ranked).

Pairs: a docstring's (or, outside Python, a doc comment's) first sentence -> its definition (half of them with
that sentence removed, so the task is not copying), and an identifier -> its definition.
"""

from __future__ import annotations

import ast
import hashlib
import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import bm25s
import numpy as np

from codesearch.common.languages import HEADER_SCAN_BYTES, detect_language
from codesearch.common.text import first_sentence, subwords
from codesearch.common.walker import is_hidden, walk
from codesearch.config import DEFAULT_MAX_FILE_BYTES
from codesearch.rerank.doc_comments import documented_definitions

MIN_QUERY_WORDS = 3  # shorter first sentences ("Return x.") say too little to be a query
MAX_QUERY_WORDS = 40  # longer ones are paragraphs, not questions
# Definitions the models read with the query sentence left in. Searched code carries its docstrings; when every
# positive lost its sentence while BM25-mined negatives kept their overlap, the model learned that sharing the
# query's words means wrong (dev concept MRR@10 0.967 -> 0.933 when reranked, measured).
KEEP_SENTENCE_SHARE = 0.5
# Markup and data files: their "definitions" are headings and keys, whose comments are not questions about code.
UNDOCUMENTED_LANGUAGES = frozenset({"markdown", "yaml", "graphql", "protobuf", "sql", "dockerfile", "make"})
IDENT_SHARE = 0.2  # share of queries that are an identifier instead of a sentence (definition lookups)
TEST_SHARE = 0.2  # files held out for the final table
BLEND_SHARE = 0.15  # files held apart to fit the blend: scores on training pairs are overconfident
GROUP_NEGATIVES = 19  # held-out groups are 1 right + 19 wrong, as in the earlier baseline
HARD_POOL = 15  # training negatives are sampled from this many hardest per query
BM25_K1, BM25_B = 1.2, 0.75  # textbook BM25 parameters
SEED = 13


@dataclass
class Definition:
    path: str
    breadcrumb: list[str]
    name: str
    sentence: str
    code: str  # the definition with the query sentence removed
    full_code: str = ""  # the definition as written
    text: str = ""  # what the models read: header + trimmed code


@dataclass
class Group:
    query: str
    kind: str  # "doc" or "ident"
    positive: int
    negatives: list[int]


def _strip_sentence(lines: list[str], doc_node: ast.Expr, start: int, doc: str, sentence: str) -> list[str]:
    """The definition's lines with the docstring replaced by the docstring minus its first sentence."""
    n = len(sentence.split())
    m = re.match(r"\s*(?:\S+\s+){" + str(n - 1) + r"}\S+", doc)
    rest = doc[m.end() :].strip() if m else doc.strip()
    a, b = doc_node.lineno - 1 - start, (doc_node.end_lineno or doc_node.lineno) - start
    indent = lines[a][: len(lines[a]) - len(lines[a].lstrip())]
    new = [f'{indent}"""{rest}"""'] if rest else []
    return lines[:a] + new + lines[b:]


def mine_python_file(root: Path, file: Path) -> list[Definition]:
    try:
        source = file.read_text(encoding="utf-8")
        tree = ast.parse(source)
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
        return []
    lines = source.splitlines()
    rel = file.relative_to(root).as_posix()
    out: list[Definition] = []

    def visit(node: ast.AST, crumbs: list[str]) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                doc = ast.get_docstring(child, clean=True)
                body0 = child.body[0] if child.body else None
                if doc and isinstance(body0, ast.Expr):
                    sentence = first_sentence(doc)
                    n_words = len(sentence.split())
                    start = child.lineno - 1
                    code_lines = lines[start : child.end_lineno]
                    if MIN_QUERY_WORDS <= n_words <= MAX_QUERY_WORDS and len(code_lines) >= 3:
                        code = "\n".join(_strip_sentence(code_lines, body0, start, doc, sentence))
                        full = "\n".join(code_lines)
                        out.append(
                            Definition(rel, list(crumbs), child.name, sentence.rstrip("."), code, full)
                        )
                visit(child, [*crumbs, child.name])

    visit(tree, [])
    return out


def mine_commented_file(root: Path, file: Path, language: str) -> list[Definition]:
    """Definitions with a doc comment right above them, in any language the shared parser reads."""
    try:
        source = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return []
    rel = file.relative_to(root).as_posix()
    out: list[Definition] = []
    for d in documented_definitions(rel, language, source):
        sentence = first_sentence(d.doc)
        words = sentence.split()
        if words and words[0].strip("`'\"") == d.name:  # Go and C# open with the name: the query must not
            sentence = " ".join(words[1:])
        if MIN_QUERY_WORDS <= len(sentence.split()) <= MAX_QUERY_WORDS and len(d.code) >= 3:
            code = "\n".join(d.code)
            full = "\n".join((*d.comment, *d.code))
            out.append(Definition(rel, list(d.crumbs), d.name, sentence.rstrip("."), code, full))
    return out


def mine(root: Path) -> list[Definition]:
    """Definitions with a usable docstring or doc comment under root (Python via `ast`, the rest via the
    shared parser)."""
    found: list[Definition] = []
    for f in walk(root, DEFAULT_MAX_FILE_BYTES).files:  # the files the indexer would index
        if is_hidden(f.rel_path):
            continue
        if f.rel_path.endswith(".py"):
            found.extend(mine_python_file(root, root / f.rel_path))
            continue
        try:
            with open(f.abs_path, "rb") as fh:
                head = fh.read(HEADER_SCAN_BYTES)
        except OSError:
            continue
        language = detect_language(f.rel_path, head)
        if language and language not in UNDOCUMENTED_LANGUAGES:
            found.extend(mine_commented_file(root, root / f.rel_path, language))
    return found


def keeps_sentence(d: Definition) -> bool:
    """Whether the models read this definition with its docstring whole (stable per definition)."""
    h = int(hashlib.sha1(f"{d.path}:{d.name}".encode()).hexdigest()[8:16], 16) / 0xFFFFFFFF
    return h < KEEP_SENTENCE_SHARE


def split_of(path: str) -> str:
    """train / blend / test by a hash of the file path: no file contributes to two splits."""
    h = int(hashlib.sha1(path.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF
    return "test" if h < TEST_SHARE else "blend" if h < TEST_SHARE + BLEND_SHARE else "train"


class BM25:
    """BM25 over the pool's texts (bm25s, Lucene's formula) on the same sub-words the rest of the trainer reads.

    Scores are Lucene's: the textbook BM25 divided by (k1 + 1), so every ranking is the textbook one."""

    def __init__(self, texts: Sequence[str]) -> None:
        self._index = bm25s.BM25(k1=BM25_K1, b=BM25_B, method="lucene", idf_method="lucene")
        self._index.index([subwords(t) for t in texts], show_progress=False)
        self._size = len(texts)

    def scores(self, query: str) -> np.ndarray:
        terms = list(dict.fromkeys(subwords(query)))  # each query term counts once
        if not terms:
            return np.zeros(self._size)
        return np.asarray(self._index.get_scores(terms), dtype=np.float64)


def groups(
    defs: list[Definition],
    ids: list[int],
    bm25: BM25,
    emb: np.ndarray,
    encode: Callable[[list[str]], np.ndarray],
) -> list[Group]:
    rng = random.Random(SEED)
    queries, kinds = [], []
    for i in ids:
        ident = rng.random() < IDENT_SHARE
        queries.append(defs[i].name if ident else defs[i].sentence)
        kinds.append("ident" if ident else "doc")
    q_emb = encode(queries)
    out: list[Group] = []
    for i, q, kind, qe in zip(ids, queries, kinds, q_emb, strict=True):
        lex_rank = np.argsort(-bm25.scores(q), kind="stable")[: 3 * GROUP_NEGATIVES]
        cos_rank = np.argsort(-(emb @ qe), kind="stable")[: 3 * GROUP_NEGATIVES]
        negs: list[int] = []
        for j in (int(x) for pair in zip(lex_rank, cos_rank, strict=True) for x in pair):
            same = (
                defs[j].sentence == defs[i].sentence
                or defs[j].name == defs[i].name
                or defs[j].code == defs[i].code
            )
            if j != i and j not in negs and not same:
                negs.append(j)
            if len(negs) >= max(GROUP_NEGATIVES, HARD_POOL):
                break
        if len(negs) >= GROUP_NEGATIVES:
            out.append(Group(q, kind, i, negs))
    return out
