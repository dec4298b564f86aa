"""One file as the legs receive it: its chunks and its parse, from one tree-sitter parse.

The indexer makes it in a worker process or a thread (orchestrator/parse_pool.py); benchmarks and tests call it
directly.
"""

from __future__ import annotations

import hashlib

from codesearch.common.doc_text import doc_text
from codesearch.common.languages import ProjectHint, detect_language
from codesearch.common.parsing import extract
from codesearch.common.parsing.wire import to_message
from codesearch.orchestrator.chunker import chunk_lines
from codesearch.v1 import common_pb2


def index_file(
    repository: str, rel_path: str, data: bytes, project: ProjectHint | None = None
) -> tuple[common_pb2.IndexedFile, common_pb2.ParsedFile | None]:
    """A file's chunks and its parse (None without a grammar), from one tree-sitter parse.

    The chunks go to every leg; the parse goes to the graph leg, which then does not parse the file again.
    """
    language = detect_language(rel_path, data, project)
    text = data.decode("utf-8", errors="replace")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    parsed = extract(rel_path, language, data, project.macros if project is not None else None)
    spans = chunk_lines(lines, list(parsed.definitions) if parsed is not None else [])
    chunks = []
    for s in spans:
        chunk_text = "\n".join(lines[s.start_line - 1 : s.end_line])
        chunks.append(
            common_pb2.Chunk(
                repository=repository,
                path=rel_path,
                start_line=s.start_line,
                end_line=s.end_line,
                language=language,
                content_hash=hashlib.sha256(chunk_text.encode()).hexdigest(),
                text=chunk_text,
                breadcrumb=list(s.breadcrumb),
                symbol=s.symbol,
                # Made here, in the parse workers, rather than in the vector leg, whose update runs beside the
                # others under one GIL in the one-process server.
                doc_text=doc_text(rel_path, chunk_text, list(s.breadcrumb), s.symbol),
            )
        )
    indexed = common_pb2.IndexedFile(
        path=rel_path,
        language=language,
        content_hash=hashlib.sha256(data).hexdigest(),
        content=data,
        chunks=chunks,
    )
    return indexed, (to_message(parsed) if parsed is not None else None)


def make_indexed_file(repository: str, rel_path: str, data: bytes) -> common_pb2.IndexedFile:
    """The file as the keyword and vector legs receive it (chunks, no parse)."""
    return index_file(repository, rel_path, data)[0]


def graph_file(
    indexed: common_pb2.IndexedFile, parsed: common_pb2.ParsedFile | None
) -> common_pb2.IndexedFile:
    """The file as the graph leg receives it: its bytes and its parse; it reads no chunks."""
    return common_pb2.IndexedFile(
        path=indexed.path,
        language=indexed.language,
        content_hash=indexed.content_hash,
        content=indexed.content,
        parsed=parsed,
    )
