from codesearch.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class PatternSyntax(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    PATTERN_SYNTAX_UNSPECIFIED: _ClassVar[PatternSyntax]
    PATTERN_SYNTAX_LITERAL: _ClassVar[PatternSyntax]
    PATTERN_SYNTAX_REGEX: _ClassVar[PatternSyntax]
PATTERN_SYNTAX_UNSPECIFIED: PatternSyntax
PATTERN_SYNTAX_LITERAL: PatternSyntax
PATTERN_SYNTAX_REGEX: PatternSyntax

class UpdateKeywordIndexRequest(_message.Message):
    __slots__ = ("update",)
    UPDATE_FIELD_NUMBER: _ClassVar[int]
    update: _common_pb2.IndexUpdate
    def __init__(self, update: _Optional[_Union[_common_pb2.IndexUpdate, _Mapping]] = ...) -> None: ...

class UpdateKeywordIndexResponse(_message.Message):
    __slots__ = ("result",)
    RESULT_FIELD_NUMBER: _ClassVar[int]
    result: _common_pb2.IndexUpdateResult
    def __init__(self, result: _Optional[_Union[_common_pb2.IndexUpdateResult, _Mapping]] = ...) -> None: ...

class KeywordSearchRequest(_message.Message):
    __slots__ = ("repositories", "query", "limit", "languages", "path_glob", "path_weight", "stem_below_coverage")
    REPOSITORIES_FIELD_NUMBER: _ClassVar[int]
    QUERY_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    LANGUAGES_FIELD_NUMBER: _ClassVar[int]
    PATH_GLOB_FIELD_NUMBER: _ClassVar[int]
    PATH_WEIGHT_FIELD_NUMBER: _ClassVar[int]
    STEM_BELOW_COVERAGE_FIELD_NUMBER: _ClassVar[int]
    repositories: _containers.RepeatedScalarFieldContainer[str]
    query: str
    limit: int
    languages: _containers.RepeatedScalarFieldContainer[str]
    path_glob: str
    path_weight: float
    stem_below_coverage: float
    def __init__(self, repositories: _Optional[_Iterable[str]] = ..., query: _Optional[str] = ..., limit: _Optional[int] = ..., languages: _Optional[_Iterable[str]] = ..., path_glob: _Optional[str] = ..., path_weight: _Optional[float] = ..., stem_below_coverage: _Optional[float] = ...) -> None: ...

class KeywordSearchResponse(_message.Message):
    __slots__ = ("hits", "stemmed")
    HITS_FIELD_NUMBER: _ClassVar[int]
    STEMMED_FIELD_NUMBER: _ClassVar[int]
    hits: _containers.RepeatedCompositeFieldContainer[_common_pb2.Hit]
    stemmed: bool
    def __init__(self, hits: _Optional[_Iterable[_Union[_common_pb2.Hit, _Mapping]]] = ..., stemmed: _Optional[bool] = ...) -> None: ...

class GrepRequest(_message.Message):
    __slots__ = ("repositories", "pattern", "syntax", "case_sensitive", "limit", "languages", "path_glob")
    REPOSITORIES_FIELD_NUMBER: _ClassVar[int]
    PATTERN_FIELD_NUMBER: _ClassVar[int]
    SYNTAX_FIELD_NUMBER: _ClassVar[int]
    CASE_SENSITIVE_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    LANGUAGES_FIELD_NUMBER: _ClassVar[int]
    PATH_GLOB_FIELD_NUMBER: _ClassVar[int]
    repositories: _containers.RepeatedScalarFieldContainer[str]
    pattern: str
    syntax: PatternSyntax
    case_sensitive: bool
    limit: int
    languages: _containers.RepeatedScalarFieldContainer[str]
    path_glob: str
    def __init__(self, repositories: _Optional[_Iterable[str]] = ..., pattern: _Optional[str] = ..., syntax: _Optional[_Union[PatternSyntax, str]] = ..., case_sensitive: _Optional[bool] = ..., limit: _Optional[int] = ..., languages: _Optional[_Iterable[str]] = ..., path_glob: _Optional[str] = ...) -> None: ...

class GrepResponse(_message.Message):
    __slots__ = ("hits", "candidate_files", "total_files", "full_scan")
    HITS_FIELD_NUMBER: _ClassVar[int]
    CANDIDATE_FILES_FIELD_NUMBER: _ClassVar[int]
    TOTAL_FILES_FIELD_NUMBER: _ClassVar[int]
    FULL_SCAN_FIELD_NUMBER: _ClassVar[int]
    hits: _containers.RepeatedCompositeFieldContainer[_common_pb2.Hit]
    candidate_files: int
    total_files: int
    full_scan: bool
    def __init__(self, hits: _Optional[_Iterable[_Union[_common_pb2.Hit, _Mapping]]] = ..., candidate_files: _Optional[int] = ..., total_files: _Optional[int] = ..., full_scan: _Optional[bool] = ...) -> None: ...

class ReadFileRequest(_message.Message):
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

class ReadFileResponse(_message.Message):
    __slots__ = ("text", "total_lines", "language")
    TEXT_FIELD_NUMBER: _ClassVar[int]
    TOTAL_LINES_FIELD_NUMBER: _ClassVar[int]
    LANGUAGE_FIELD_NUMBER: _ClassVar[int]
    text: str
    total_lines: int
    language: str
    def __init__(self, text: _Optional[str] = ..., total_lines: _Optional[int] = ..., language: _Optional[str] = ...) -> None: ...

class ListFilesRequest(_message.Message):
    __slots__ = ("repository",)
    REPOSITORY_FIELD_NUMBER: _ClassVar[int]
    repository: str
    def __init__(self, repository: _Optional[str] = ...) -> None: ...

class FileEntry(_message.Message):
    __slots__ = ("path", "content_hash", "language", "lines")
    PATH_FIELD_NUMBER: _ClassVar[int]
    CONTENT_HASH_FIELD_NUMBER: _ClassVar[int]
    LANGUAGE_FIELD_NUMBER: _ClassVar[int]
    LINES_FIELD_NUMBER: _ClassVar[int]
    path: str
    content_hash: str
    language: str
    lines: int
    def __init__(self, path: _Optional[str] = ..., content_hash: _Optional[str] = ..., language: _Optional[str] = ..., lines: _Optional[int] = ...) -> None: ...

class ListFilesResponse(_message.Message):
    __slots__ = ("files",)
    FILES_FIELD_NUMBER: _ClassVar[int]
    files: _containers.RepeatedCompositeFieldContainer[FileEntry]
    def __init__(self, files: _Optional[_Iterable[_Union[FileEntry, _Mapping]]] = ...) -> None: ...

class GetKeywordStatsRequest(_message.Message):
    __slots__ = ("repositories",)
    REPOSITORIES_FIELD_NUMBER: _ClassVar[int]
    repositories: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, repositories: _Optional[_Iterable[str]] = ...) -> None: ...

class GetKeywordStatsResponse(_message.Message):
    __slots__ = ("bm25", "trigram")
    BM25_FIELD_NUMBER: _ClassVar[int]
    TRIGRAM_FIELD_NUMBER: _ClassVar[int]
    bm25: _containers.RepeatedCompositeFieldContainer[_common_pb2.LegIndexStats]
    trigram: _containers.RepeatedCompositeFieldContainer[_common_pb2.LegIndexStats]
    def __init__(self, bm25: _Optional[_Iterable[_Union[_common_pb2.LegIndexStats, _Mapping]]] = ..., trigram: _Optional[_Iterable[_Union[_common_pb2.LegIndexStats, _Mapping]]] = ...) -> None: ...

class DeleteKeywordRepositoryRequest(_message.Message):
    __slots__ = ("repository",)
    REPOSITORY_FIELD_NUMBER: _ClassVar[int]
    repository: str
    def __init__(self, repository: _Optional[str] = ...) -> None: ...

class DeleteKeywordRepositoryResponse(_message.Message):
    __slots__ = ("deleted",)
    DELETED_FIELD_NUMBER: _ClassVar[int]
    deleted: bool
    def __init__(self, deleted: _Optional[bool] = ...) -> None: ...

class StreamGrepRequest(_message.Message):
    __slots__ = ("repositories", "pattern", "syntax", "case_sensitive", "languages", "path_glob", "max_matches", "max_wall_ms", "explain")
    REPOSITORIES_FIELD_NUMBER: _ClassVar[int]
    PATTERN_FIELD_NUMBER: _ClassVar[int]
    SYNTAX_FIELD_NUMBER: _ClassVar[int]
    CASE_SENSITIVE_FIELD_NUMBER: _ClassVar[int]
    LANGUAGES_FIELD_NUMBER: _ClassVar[int]
    PATH_GLOB_FIELD_NUMBER: _ClassVar[int]
    MAX_MATCHES_FIELD_NUMBER: _ClassVar[int]
    MAX_WALL_MS_FIELD_NUMBER: _ClassVar[int]
    EXPLAIN_FIELD_NUMBER: _ClassVar[int]
    repositories: _containers.RepeatedScalarFieldContainer[str]
    pattern: str
    syntax: PatternSyntax
    case_sensitive: bool
    languages: _containers.RepeatedScalarFieldContainer[str]
    path_glob: str
    max_matches: int
    max_wall_ms: int
    explain: bool
    def __init__(self, repositories: _Optional[_Iterable[str]] = ..., pattern: _Optional[str] = ..., syntax: _Optional[_Union[PatternSyntax, str]] = ..., case_sensitive: _Optional[bool] = ..., languages: _Optional[_Iterable[str]] = ..., path_glob: _Optional[str] = ..., max_matches: _Optional[int] = ..., max_wall_ms: _Optional[int] = ..., explain: _Optional[bool] = ...) -> None: ...

class StreamGrepResponse(_message.Message):
    __slots__ = ("files", "stop_reason", "stats")
    FILES_FIELD_NUMBER: _ClassVar[int]
    STOP_REASON_FIELD_NUMBER: _ClassVar[int]
    STATS_FIELD_NUMBER: _ClassVar[int]
    files: _containers.RepeatedCompositeFieldContainer[_common_pb2.FileMatch]
    stop_reason: _common_pb2.StopReason
    stats: _common_pb2.LegSearchStats
    def __init__(self, files: _Optional[_Iterable[_Union[_common_pb2.FileMatch, _Mapping]]] = ..., stop_reason: _Optional[_Union[_common_pb2.StopReason, str]] = ..., stats: _Optional[_Union[_common_pb2.LegSearchStats, _Mapping]] = ...) -> None: ...
