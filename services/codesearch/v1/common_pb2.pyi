from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Leg(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    LEG_UNSPECIFIED: _ClassVar[Leg]
    LEG_KEYWORD: _ClassVar[Leg]
    LEG_TRIGRAM: _ClassVar[Leg]
    LEG_VECTOR: _ClassVar[Leg]
    LEG_DEFINITION: _ClassVar[Leg]
    LEG_REFERENCES: _ClassVar[Leg]
    LEG_IMPACT: _ClassVar[Leg]
    LEG_RERANK: _ClassVar[Leg]

class LegStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    LEG_STATUS_UNSPECIFIED: _ClassVar[LegStatus]
    LEG_STATUS_OK: _ClassVar[LegStatus]
    LEG_STATUS_DEGRADED: _ClassVar[LegStatus]
    LEG_STATUS_SKIPPED: _ClassVar[LegStatus]
    LEG_STATUS_PARTIAL: _ClassVar[LegStatus]

class StopReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    STOP_REASON_UNSPECIFIED: _ClassVar[StopReason]
    STOP_REASON_COMPLETED: _ClassVar[StopReason]
    STOP_REASON_MAX_MATCHES: _ClassVar[StopReason]
    STOP_REASON_MAX_WALL_TIME: _ClassVar[StopReason]
    STOP_REASON_DEADLINE: _ClassVar[StopReason]
    STOP_REASON_LEG_FAILED: _ClassVar[StopReason]
LEG_UNSPECIFIED: Leg
LEG_KEYWORD: Leg
LEG_TRIGRAM: Leg
LEG_VECTOR: Leg
LEG_DEFINITION: Leg
LEG_REFERENCES: Leg
LEG_IMPACT: Leg
LEG_RERANK: Leg
LEG_STATUS_UNSPECIFIED: LegStatus
LEG_STATUS_OK: LegStatus
LEG_STATUS_DEGRADED: LegStatus
LEG_STATUS_SKIPPED: LegStatus
LEG_STATUS_PARTIAL: LegStatus
STOP_REASON_UNSPECIFIED: StopReason
STOP_REASON_COMPLETED: StopReason
STOP_REASON_MAX_MATCHES: StopReason
STOP_REASON_MAX_WALL_TIME: StopReason
STOP_REASON_DEADLINE: StopReason
STOP_REASON_LEG_FAILED: StopReason

class Location(_message.Message):
    __slots__ = ("repository", "path", "start_line", "end_line")
    REPOSITORY_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    START_LINE_FIELD_NUMBER: _ClassVar[int]
    END_LINE_FIELD_NUMBER: _ClassVar[int]
    repository: str
    path: str
    start_line: int
    end_line: int
    def __init__(self, repository: _Optional[str] = ..., path: _Optional[str] = ..., start_line: _Optional[int] = ..., end_line: _Optional[int] = ...) -> None: ...

class Chunk(_message.Message):
    __slots__ = ("repository", "path", "start_line", "end_line", "language", "content_hash", "text", "breadcrumb", "symbol", "doc_text")
    REPOSITORY_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    START_LINE_FIELD_NUMBER: _ClassVar[int]
    END_LINE_FIELD_NUMBER: _ClassVar[int]
    LANGUAGE_FIELD_NUMBER: _ClassVar[int]
    CONTENT_HASH_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    BREADCRUMB_FIELD_NUMBER: _ClassVar[int]
    SYMBOL_FIELD_NUMBER: _ClassVar[int]
    DOC_TEXT_FIELD_NUMBER: _ClassVar[int]
    repository: str
    path: str
    start_line: int
    end_line: int
    language: str
    content_hash: str
    text: str
    breadcrumb: _containers.RepeatedScalarFieldContainer[str]
    symbol: str
    doc_text: str
    def __init__(self, repository: _Optional[str] = ..., path: _Optional[str] = ..., start_line: _Optional[int] = ..., end_line: _Optional[int] = ..., language: _Optional[str] = ..., content_hash: _Optional[str] = ..., text: _Optional[str] = ..., breadcrumb: _Optional[_Iterable[str]] = ..., symbol: _Optional[str] = ..., doc_text: _Optional[str] = ...) -> None: ...

class LegScore(_message.Message):
    __slots__ = ("leg", "rank", "score")
    LEG_FIELD_NUMBER: _ClassVar[int]
    RANK_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    leg: Leg
    rank: int
    score: float
    def __init__(self, leg: _Optional[_Union[Leg, str]] = ..., rank: _Optional[int] = ..., score: _Optional[float] = ...) -> None: ...

class Boost(_message.Message):
    __slots__ = ("name", "factor")
    NAME_FIELD_NUMBER: _ClassVar[int]
    FACTOR_FIELD_NUMBER: _ClassVar[int]
    name: str
    factor: float
    def __init__(self, name: _Optional[str] = ..., factor: _Optional[float] = ...) -> None: ...

class Hit(_message.Message):
    __slots__ = ("location", "snippet", "score", "leg_scores", "found_by", "boosts", "language", "breadcrumb", "symbol", "match_lines", "commit", "match_ranges", "also_in")
    LOCATION_FIELD_NUMBER: _ClassVar[int]
    SNIPPET_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    LEG_SCORES_FIELD_NUMBER: _ClassVar[int]
    FOUND_BY_FIELD_NUMBER: _ClassVar[int]
    BOOSTS_FIELD_NUMBER: _ClassVar[int]
    LANGUAGE_FIELD_NUMBER: _ClassVar[int]
    BREADCRUMB_FIELD_NUMBER: _ClassVar[int]
    SYMBOL_FIELD_NUMBER: _ClassVar[int]
    MATCH_LINES_FIELD_NUMBER: _ClassVar[int]
    COMMIT_FIELD_NUMBER: _ClassVar[int]
    MATCH_RANGES_FIELD_NUMBER: _ClassVar[int]
    ALSO_IN_FIELD_NUMBER: _ClassVar[int]
    location: Location
    snippet: str
    score: float
    leg_scores: _containers.RepeatedCompositeFieldContainer[LegScore]
    found_by: _containers.RepeatedScalarFieldContainer[Leg]
    boosts: _containers.RepeatedCompositeFieldContainer[Boost]
    language: str
    breadcrumb: _containers.RepeatedScalarFieldContainer[str]
    symbol: str
    match_lines: _containers.RepeatedScalarFieldContainer[int]
    commit: str
    match_ranges: _containers.RepeatedCompositeFieldContainer[MatchRange]
    also_in: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, location: _Optional[_Union[Location, _Mapping]] = ..., snippet: _Optional[str] = ..., score: _Optional[float] = ..., leg_scores: _Optional[_Iterable[_Union[LegScore, _Mapping]]] = ..., found_by: _Optional[_Iterable[_Union[Leg, str]]] = ..., boosts: _Optional[_Iterable[_Union[Boost, _Mapping]]] = ..., language: _Optional[str] = ..., breadcrumb: _Optional[_Iterable[str]] = ..., symbol: _Optional[str] = ..., match_lines: _Optional[_Iterable[int]] = ..., commit: _Optional[str] = ..., match_ranges: _Optional[_Iterable[_Union[MatchRange, _Mapping]]] = ..., also_in: _Optional[_Iterable[str]] = ...) -> None: ...

class LegReport(_message.Message):
    __slots__ = ("leg", "status", "reason", "latency_ms", "hits", "weight", "detail", "upgrading")
    LEG_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    LATENCY_MS_FIELD_NUMBER: _ClassVar[int]
    HITS_FIELD_NUMBER: _ClassVar[int]
    WEIGHT_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    UPGRADING_FIELD_NUMBER: _ClassVar[int]
    leg: Leg
    status: LegStatus
    reason: str
    latency_ms: float
    hits: int
    weight: float
    detail: str
    upgrading: bool
    def __init__(self, leg: _Optional[_Union[Leg, str]] = ..., status: _Optional[_Union[LegStatus, str]] = ..., reason: _Optional[str] = ..., latency_ms: _Optional[float] = ..., hits: _Optional[int] = ..., weight: _Optional[float] = ..., detail: _Optional[str] = ..., upgrading: _Optional[bool] = ...) -> None: ...

class IndexedFile(_message.Message):
    __slots__ = ("path", "language", "content_hash", "content", "chunks", "parsed")
    PATH_FIELD_NUMBER: _ClassVar[int]
    LANGUAGE_FIELD_NUMBER: _ClassVar[int]
    CONTENT_HASH_FIELD_NUMBER: _ClassVar[int]
    CONTENT_FIELD_NUMBER: _ClassVar[int]
    CHUNKS_FIELD_NUMBER: _ClassVar[int]
    PARSED_FIELD_NUMBER: _ClassVar[int]
    path: str
    language: str
    content_hash: str
    content: bytes
    chunks: _containers.RepeatedCompositeFieldContainer[Chunk]
    parsed: ParsedFile
    def __init__(self, path: _Optional[str] = ..., language: _Optional[str] = ..., content_hash: _Optional[str] = ..., content: _Optional[bytes] = ..., chunks: _Optional[_Iterable[_Union[Chunk, _Mapping]]] = ..., parsed: _Optional[_Union[ParsedFile, _Mapping]] = ...) -> None: ...

class ParsedFile(_message.Message):
    __slots__ = ("definitions", "calls", "imports", "error_count", "module", "calls_skipped", "symbols")
    DEFINITIONS_FIELD_NUMBER: _ClassVar[int]
    CALLS_FIELD_NUMBER: _ClassVar[int]
    IMPORTS_FIELD_NUMBER: _ClassVar[int]
    ERROR_COUNT_FIELD_NUMBER: _ClassVar[int]
    MODULE_FIELD_NUMBER: _ClassVar[int]
    CALLS_SKIPPED_FIELD_NUMBER: _ClassVar[int]
    SYMBOLS_FIELD_NUMBER: _ClassVar[int]
    definitions: _containers.RepeatedCompositeFieldContainer[ParsedDefinition]
    calls: _containers.RepeatedCompositeFieldContainer[ParsedCall]
    imports: _containers.RepeatedCompositeFieldContainer[ParsedImport]
    error_count: int
    module: str
    calls_skipped: bool
    symbols: bool
    def __init__(self, definitions: _Optional[_Iterable[_Union[ParsedDefinition, _Mapping]]] = ..., calls: _Optional[_Iterable[_Union[ParsedCall, _Mapping]]] = ..., imports: _Optional[_Iterable[_Union[ParsedImport, _Mapping]]] = ..., error_count: _Optional[int] = ..., module: _Optional[str] = ..., calls_skipped: _Optional[bool] = ..., symbols: _Optional[bool] = ...) -> None: ...

class ParsedDefinition(_message.Message):
    __slots__ = ("name", "qualified_name", "kind", "start_line", "end_line", "signature", "parent")
    NAME_FIELD_NUMBER: _ClassVar[int]
    QUALIFIED_NAME_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    START_LINE_FIELD_NUMBER: _ClassVar[int]
    END_LINE_FIELD_NUMBER: _ClassVar[int]
    SIGNATURE_FIELD_NUMBER: _ClassVar[int]
    PARENT_FIELD_NUMBER: _ClassVar[int]
    name: str
    qualified_name: str
    kind: str
    start_line: int
    end_line: int
    signature: str
    parent: str
    def __init__(self, name: _Optional[str] = ..., qualified_name: _Optional[str] = ..., kind: _Optional[str] = ..., start_line: _Optional[int] = ..., end_line: _Optional[int] = ..., signature: _Optional[str] = ..., parent: _Optional[str] = ...) -> None: ...

class ParsedCall(_message.Message):
    __slots__ = ("callee", "receiver", "line", "enclosing")
    CALLEE_FIELD_NUMBER: _ClassVar[int]
    RECEIVER_FIELD_NUMBER: _ClassVar[int]
    LINE_FIELD_NUMBER: _ClassVar[int]
    ENCLOSING_FIELD_NUMBER: _ClassVar[int]
    callee: str
    receiver: str
    line: int
    enclosing: str
    def __init__(self, callee: _Optional[str] = ..., receiver: _Optional[str] = ..., line: _Optional[int] = ..., enclosing: _Optional[str] = ...) -> None: ...

class ParsedImport(_message.Message):
    __slots__ = ("module", "line", "names", "level", "alias", "aliases", "kind")
    MODULE_FIELD_NUMBER: _ClassVar[int]
    LINE_FIELD_NUMBER: _ClassVar[int]
    NAMES_FIELD_NUMBER: _ClassVar[int]
    LEVEL_FIELD_NUMBER: _ClassVar[int]
    ALIAS_FIELD_NUMBER: _ClassVar[int]
    ALIASES_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    module: str
    line: int
    names: _containers.RepeatedScalarFieldContainer[str]
    level: int
    alias: str
    aliases: _containers.RepeatedScalarFieldContainer[str]
    kind: str
    def __init__(self, module: _Optional[str] = ..., line: _Optional[int] = ..., names: _Optional[_Iterable[str]] = ..., level: _Optional[int] = ..., alias: _Optional[str] = ..., aliases: _Optional[_Iterable[str]] = ..., kind: _Optional[str] = ...) -> None: ...

class IndexUpdateHeader(_message.Message):
    __slots__ = ("repository", "replace_all", "index_version")
    REPOSITORY_FIELD_NUMBER: _ClassVar[int]
    REPLACE_ALL_FIELD_NUMBER: _ClassVar[int]
    INDEX_VERSION_FIELD_NUMBER: _ClassVar[int]
    repository: str
    replace_all: bool
    index_version: int
    def __init__(self, repository: _Optional[str] = ..., replace_all: _Optional[bool] = ..., index_version: _Optional[int] = ...) -> None: ...

class IndexUpdate(_message.Message):
    __slots__ = ("header", "file", "deleted_path", "commit")
    HEADER_FIELD_NUMBER: _ClassVar[int]
    FILE_FIELD_NUMBER: _ClassVar[int]
    DELETED_PATH_FIELD_NUMBER: _ClassVar[int]
    COMMIT_FIELD_NUMBER: _ClassVar[int]
    header: IndexUpdateHeader
    file: IndexedFile
    deleted_path: str
    commit: bool
    def __init__(self, header: _Optional[_Union[IndexUpdateHeader, _Mapping]] = ..., file: _Optional[_Union[IndexedFile, _Mapping]] = ..., deleted_path: _Optional[str] = ..., commit: _Optional[bool] = ...) -> None: ...

class IndexUpdateResult(_message.Message):
    __slots__ = ("repository", "files_upserted", "files_deleted", "chunks_total", "index_version")
    REPOSITORY_FIELD_NUMBER: _ClassVar[int]
    FILES_UPSERTED_FIELD_NUMBER: _ClassVar[int]
    FILES_DELETED_FIELD_NUMBER: _ClassVar[int]
    CHUNKS_TOTAL_FIELD_NUMBER: _ClassVar[int]
    INDEX_VERSION_FIELD_NUMBER: _ClassVar[int]
    repository: str
    files_upserted: int
    files_deleted: int
    chunks_total: int
    index_version: int
    def __init__(self, repository: _Optional[str] = ..., files_upserted: _Optional[int] = ..., files_deleted: _Optional[int] = ..., chunks_total: _Optional[int] = ..., index_version: _Optional[int] = ...) -> None: ...

class LegIndexStats(_message.Message):
    __slots__ = ("repository", "files", "items", "disk_bytes", "index_version", "detail", "pending")
    REPOSITORY_FIELD_NUMBER: _ClassVar[int]
    FILES_FIELD_NUMBER: _ClassVar[int]
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    DISK_BYTES_FIELD_NUMBER: _ClassVar[int]
    INDEX_VERSION_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    PENDING_FIELD_NUMBER: _ClassVar[int]
    repository: str
    files: int
    items: int
    disk_bytes: int
    index_version: int
    detail: str
    pending: int
    def __init__(self, repository: _Optional[str] = ..., files: _Optional[int] = ..., items: _Optional[int] = ..., disk_bytes: _Optional[int] = ..., index_version: _Optional[int] = ..., detail: _Optional[str] = ..., pending: _Optional[int] = ...) -> None: ...

class MatchRange(_message.Message):
    __slots__ = ("start_column", "end_column", "line_number")
    START_COLUMN_FIELD_NUMBER: _ClassVar[int]
    END_COLUMN_FIELD_NUMBER: _ClassVar[int]
    LINE_NUMBER_FIELD_NUMBER: _ClassVar[int]
    start_column: int
    end_column: int
    line_number: int
    def __init__(self, start_column: _Optional[int] = ..., end_column: _Optional[int] = ..., line_number: _Optional[int] = ...) -> None: ...

class LineScoreExplanation(_message.Message):
    __slots__ = ("score", "match_count", "whole_word", "definition_line", "path_match", "file_lines", "text")
    SCORE_FIELD_NUMBER: _ClassVar[int]
    MATCH_COUNT_FIELD_NUMBER: _ClassVar[int]
    WHOLE_WORD_FIELD_NUMBER: _ClassVar[int]
    DEFINITION_LINE_FIELD_NUMBER: _ClassVar[int]
    PATH_MATCH_FIELD_NUMBER: _ClassVar[int]
    FILE_LINES_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    score: float
    match_count: int
    whole_word: bool
    definition_line: bool
    path_match: bool
    file_lines: int
    text: str
    def __init__(self, score: _Optional[float] = ..., match_count: _Optional[int] = ..., whole_word: _Optional[bool] = ..., definition_line: _Optional[bool] = ..., path_match: _Optional[bool] = ..., file_lines: _Optional[int] = ..., text: _Optional[str] = ...) -> None: ...

class LineMatch(_message.Message):
    __slots__ = ("line_number", "line", "ranges", "score", "explanation")
    LINE_NUMBER_FIELD_NUMBER: _ClassVar[int]
    LINE_FIELD_NUMBER: _ClassVar[int]
    RANGES_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    EXPLANATION_FIELD_NUMBER: _ClassVar[int]
    line_number: int
    line: str
    ranges: _containers.RepeatedCompositeFieldContainer[MatchRange]
    score: float
    explanation: LineScoreExplanation
    def __init__(self, line_number: _Optional[int] = ..., line: _Optional[str] = ..., ranges: _Optional[_Iterable[_Union[MatchRange, _Mapping]]] = ..., score: _Optional[float] = ..., explanation: _Optional[_Union[LineScoreExplanation, _Mapping]] = ...) -> None: ...

class FileMatch(_message.Message):
    __slots__ = ("repository", "path", "commit", "ref", "language", "score", "lines")
    REPOSITORY_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    COMMIT_FIELD_NUMBER: _ClassVar[int]
    REF_FIELD_NUMBER: _ClassVar[int]
    LANGUAGE_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    LINES_FIELD_NUMBER: _ClassVar[int]
    repository: str
    path: str
    commit: str
    ref: str
    language: str
    score: float
    lines: _containers.RepeatedCompositeFieldContainer[LineMatch]
    def __init__(self, repository: _Optional[str] = ..., path: _Optional[str] = ..., commit: _Optional[str] = ..., ref: _Optional[str] = ..., language: _Optional[str] = ..., score: _Optional[float] = ..., lines: _Optional[_Iterable[_Union[LineMatch, _Mapping]]] = ...) -> None: ...

class LegSearchStats(_message.Message):
    __slots__ = ("leg", "files_considered", "bytes_considered", "files_loaded", "files_matched", "lines_matched", "matches", "shards_visited", "shards_total", "duration_ms", "error")
    LEG_FIELD_NUMBER: _ClassVar[int]
    FILES_CONSIDERED_FIELD_NUMBER: _ClassVar[int]
    BYTES_CONSIDERED_FIELD_NUMBER: _ClassVar[int]
    FILES_LOADED_FIELD_NUMBER: _ClassVar[int]
    FILES_MATCHED_FIELD_NUMBER: _ClassVar[int]
    LINES_MATCHED_FIELD_NUMBER: _ClassVar[int]
    MATCHES_FIELD_NUMBER: _ClassVar[int]
    SHARDS_VISITED_FIELD_NUMBER: _ClassVar[int]
    SHARDS_TOTAL_FIELD_NUMBER: _ClassVar[int]
    DURATION_MS_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    leg: Leg
    files_considered: int
    bytes_considered: int
    files_loaded: int
    files_matched: int
    lines_matched: int
    matches: int
    shards_visited: int
    shards_total: int
    duration_ms: float
    error: str
    def __init__(self, leg: _Optional[_Union[Leg, str]] = ..., files_considered: _Optional[int] = ..., bytes_considered: _Optional[int] = ..., files_loaded: _Optional[int] = ..., files_matched: _Optional[int] = ..., lines_matched: _Optional[int] = ..., matches: _Optional[int] = ..., shards_visited: _Optional[int] = ..., shards_total: _Optional[int] = ..., duration_ms: _Optional[float] = ..., error: _Optional[str] = ...) -> None: ...
