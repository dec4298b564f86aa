"""An Extraction to and from its message (common.v1.ParsedFile): the indexer parses once, the graph leg reads it."""

from __future__ import annotations

from codesearch.common.parsing.model import CallSite, Definition, Extraction, ImportRef
from codesearch.v1 import common_pb2


def to_message(ex: Extraction) -> common_pb2.ParsedFile:
    return common_pb2.ParsedFile(
        definitions=[
            common_pb2.ParsedDefinition(
                name=d.name,
                qualified_name=d.qualified_name,
                kind=d.kind,
                start_line=d.start_line,
                end_line=d.end_line,
                signature=d.signature,
                parent=d.parent,
            )
            for d in ex.definitions
        ],
        calls=[
            common_pb2.ParsedCall(callee=c.callee, receiver=c.receiver, line=c.line, enclosing=c.enclosing)
            for c in ex.calls
        ],
        imports=[
            common_pb2.ParsedImport(
                module=i.module,
                line=i.line,
                names=i.names,
                level=i.level,
                alias=i.alias,
                aliases=i.aliases,
                kind=i.kind,
            )
            for i in ex.imports
        ],
        error_count=ex.error_count,
        module=ex.module,
        calls_skipped=ex.calls_skipped,
        symbols=ex.symbols,
    )


def from_message(path: str, language: str, msg: common_pb2.ParsedFile) -> Extraction:
    return Extraction(
        path=path,
        language=language,
        definitions=[
            Definition(d.name, d.qualified_name, d.kind, d.start_line, d.end_line, d.signature, d.parent)
            for d in msg.definitions
        ],
        calls=[CallSite(c.callee, c.receiver, c.line, c.enclosing) for c in msg.calls],
        imports=[
            ImportRef(i.module, i.line, list(i.names), i.level, i.alias, list(i.aliases), i.kind)
            for i in msg.imports
        ],
        error_count=msg.error_count,
        module=msg.module,
        calls_skipped=msg.calls_skipped,
        symbols=msg.symbols,
    )
