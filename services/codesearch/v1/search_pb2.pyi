from codesearch.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class IndexPhase(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    INDEX_PHASE_UNSPECIFIED: _ClassVar[IndexPhase]
    INDEX_PHASE_SCANNING: _ClassVar[IndexPhase]
    INDEX_PHASE_INDEXING: _ClassVar[IndexPhase]
    INDEX_PHASE_COMMITTING: _ClassVar[IndexPhase]
    INDEX_PHASE_DONE: _ClassVar[IndexPhase]

class Intent(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    INTENT_UNSPECIFIED: _ClassVar[Intent]
    INTENT_FIND_DEFINITION: _ClassVar[Intent]
    INTENT_FIND_REFERENCES: _ClassVar[Intent]
    INTENT_UNDERSTAND_CODE: _ClassVar[Intent]
    INTENT_FIND_SIMILAR: _ClassVar[Intent]
    INTENT_IMPACT_ANALYSIS: _ClassVar[Intent]
    INTENT_EXACT_MATCH: _ClassVar[Intent]

class SearchMode(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SEARCH_MODE_UNSPECIFIED: _ClassVar[SearchMode]
    SEARCH_MODE_AUTO: _ClassVar[SearchMode]
    SEARCH_MODE_KEYWORD: _ClassVar[SearchMode]
    SEARCH_MODE_LITERAL: _ClassVar[SearchMode]
    SEARCH_MODE_REGEX: _ClassVar[SearchMode]
    SEARCH_MODE_SEMANTIC: _ClassVar[SearchMode]
    SEARCH_MODE_DEFINITION: _ClassVar[SearchMode]
    SEARCH_MODE_CALLERS: _ClassVar[SearchMode]
    SEARCH_MODE_CALLEES: _ClassVar[SearchMode]
    SEARCH_MODE_IMPACT: _ClassVar[SearchMode]
    SEARCH_MODE_NAIVE_HYBRID: _ClassVar[SearchMode]

class Preset(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    PRESET_UNSPECIFIED: _ClassVar[Preset]
    PRESET_QUICK: _ClassVar[Preset]
    PRESET_DEFAULT: _ClassVar[Preset]
    PRESET_THOROUGH: _ClassVar[Preset]

class RerankPolicy(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    RERANK_POLICY_UNSPECIFIED: _ClassVar[RerankPolicy]
    RERANK_POLICY_AUTO: _ClassVar[RerankPolicy]
    RERANK_POLICY_ON: _ClassVar[RerankPolicy]
    RERANK_POLICY_OFF: _ClassVar[RerankPolicy]

class Strategy(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    STRATEGY_UNSPECIFIED: _ClassVar[Strategy]
    STRATEGY_DIRECT: _ClassVar[Strategy]
    STRATEGY_RRF: _ClassVar[Strategy]
    STRATEGY_RRF_AFTER_DIRECT: _ClassVar[Strategy]
    STRATEGY_NAIVE_RRF: _ClassVar[Strategy]
    STRATEGY_FORCED: _ClassVar[Strategy]
    STRATEGY_SCORE_FUSION: _ClassVar[Strategy]
INDEX_PHASE_UNSPECIFIED: IndexPhase
INDEX_PHASE_SCANNING: IndexPhase
INDEX_PHASE_INDEXING: IndexPhase
INDEX_PHASE_COMMITTING: IndexPhase
INDEX_PHASE_DONE: IndexPhase
INTENT_UNSPECIFIED: Intent
INTENT_FIND_DEFINITION: Intent
INTENT_FIND_REFERENCES: Intent
INTENT_UNDERSTAND_CODE: Intent
INTENT_FIND_SIMILAR: Intent
INTENT_IMPACT_ANALYSIS: Intent
INTENT_EXACT_MATCH: Intent
SEARCH_MODE_UNSPECIFIED: SearchMode
SEARCH_MODE_AUTO: SearchMode
SEARCH_MODE_KEYWORD: SearchMode
SEARCH_MODE_LITERAL: SearchMode
SEARCH_MODE_REGEX: SearchMode
SEARCH_MODE_SEMANTIC: SearchMode
SEARCH_MODE_DEFINITION: SearchMode
SEARCH_MODE_CALLERS: SearchMode
SEARCH_MODE_CALLEES: SearchMode
SEARCH_MODE_IMPACT: SearchMode
SEARCH_MODE_NAIVE_HYBRID: SearchMode
PRESET_UNSPECIFIED: Preset
PRESET_QUICK: Preset
PRESET_DEFAULT: Preset
PRESET_THOROUGH: Preset
RERANK_POLICY_UNSPECIFIED: RerankPolicy
RERANK_POLICY_AUTO: RerankPolicy
RERANK_POLICY_ON: RerankPolicy
RERANK_POLICY_OFF: RerankPolicy
STRATEGY_UNSPECIFIED: Strategy
STRATEGY_DIRECT: Strategy
STRATEGY_RRF: Strategy
STRATEGY_RRF_AFTER_DIRECT: Strategy
STRATEGY_NAIVE_RRF: Strategy
STRATEGY_FORCED: Strategy
STRATEGY_SCORE_FUSION: Strategy

class IndexRepositoryRequest(_message.Message):
    __slots__ = ("path", "name", "force_full", "exclude", "ref", "changed_paths", "watch")
    PATH_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    FORCE_FULL_FIELD_NUMBER: _ClassVar[int]
    EXCLUDE_FIELD_NUMBER: _ClassVar[int]
    REF_FIELD_NUMBER: _ClassVar[int]
    CHANGED_PATHS_FIELD_NUMBER: _ClassVar[int]
    WATCH_FIELD_NUMBER: _ClassVar[int]
    path: str
    name: str
    force_full: bool
    exclude: _containers.RepeatedScalarFieldContainer[str]
    ref: str
    changed_paths: _containers.RepeatedScalarFieldContainer[str]
    watch: bool
    def __init__(self, path: _Optional[str] = ..., name: _Optional[str] = ..., force_full: _Optional[bool] = ..., exclude: _Optional[_Iterable[str]] = ..., ref: _Optional[str] = ..., changed_paths: _Optional[_Iterable[str]] = ..., watch: _Optional[bool] = ...) -> None: ...

class IndexRepositoryResponse(_message.Message):
    __slots__ = ("repository", "phase", "files_total", "files_done", "files_changed", "files_deleted", "files_unchanged", "files_skipped", "chunks", "elapsed_seconds", "index_version", "warnings", "degraded_legs", "files_read", "commit", "ref", "delta_from_commit", "skipped_reasons")
    class SkippedReasonsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: int
        def __init__(self, key: _Optional[str] = ..., value: _Optional[int] = ...) -> None: ...
    REPOSITORY_FIELD_NUMBER: _ClassVar[int]
    PHASE_FIELD_NUMBER: _ClassVar[int]
    FILES_TOTAL_FIELD_NUMBER: _ClassVar[int]
    FILES_DONE_FIELD_NUMBER: _ClassVar[int]
    FILES_CHANGED_FIELD_NUMBER: _ClassVar[int]
    FILES_DELETED_FIELD_NUMBER: _ClassVar[int]
    FILES_UNCHANGED_FIELD_NUMBER: _ClassVar[int]
    FILES_SKIPPED_FIELD_NUMBER: _ClassVar[int]
    CHUNKS_FIELD_NUMBER: _ClassVar[int]
    ELAPSED_SECONDS_FIELD_NUMBER: _ClassVar[int]
    INDEX_VERSION_FIELD_NUMBER: _ClassVar[int]
    WARNINGS_FIELD_NUMBER: _ClassVar[int]
    DEGRADED_LEGS_FIELD_NUMBER: _ClassVar[int]
    FILES_READ_FIELD_NUMBER: _ClassVar[int]
    COMMIT_FIELD_NUMBER: _ClassVar[int]
    REF_FIELD_NUMBER: _ClassVar[int]
    DELTA_FROM_COMMIT_FIELD_NUMBER: _ClassVar[int]
    SKIPPED_REASONS_FIELD_NUMBER: _ClassVar[int]
    repository: str
    phase: IndexPhase
    files_total: int
    files_done: int
    files_changed: int
    files_deleted: int
    files_unchanged: int
    files_skipped: int
    chunks: int
    elapsed_seconds: float
    index_version: int
    warnings: _containers.RepeatedScalarFieldContainer[str]
    degraded_legs: _containers.RepeatedScalarFieldContainer[str]
    files_read: int
    commit: str
    ref: str
    delta_from_commit: str
    skipped_reasons: _containers.ScalarMap[str, int]
    def __init__(self, repository: _Optional[str] = ..., phase: _Optional[_Union[IndexPhase, str]] = ..., files_total: _Optional[int] = ..., files_done: _Optional[int] = ..., files_changed: _Optional[int] = ..., files_deleted: _Optional[int] = ..., files_unchanged: _Optional[int] = ..., files_skipped: _Optional[int] = ..., chunks: _Optional[int] = ..., elapsed_seconds: _Optional[float] = ..., index_version: _Optional[int] = ..., warnings: _Optional[_Iterable[str]] = ..., degraded_legs: _Optional[_Iterable[str]] = ..., files_read: _Optional[int] = ..., commit: _Optional[str] = ..., ref: _Optional[str] = ..., delta_from_commit: _Optional[str] = ..., skipped_reasons: _Optional[_Mapping[str, int]] = ...) -> None: ...

class SearchRequest(_message.Message):
    __slots__ = ("query", "repositories", "mode", "preset", "limit", "case_sensitive", "languages", "path_glob", "rerank", "no_cache", "refs")
    QUERY_FIELD_NUMBER: _ClassVar[int]
    REPOSITORIES_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    PRESET_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    CASE_SENSITIVE_FIELD_NUMBER: _ClassVar[int]
    LANGUAGES_FIELD_NUMBER: _ClassVar[int]
    PATH_GLOB_FIELD_NUMBER: _ClassVar[int]
    RERANK_FIELD_NUMBER: _ClassVar[int]
    NO_CACHE_FIELD_NUMBER: _ClassVar[int]
    REFS_FIELD_NUMBER: _ClassVar[int]
    query: str
    repositories: _containers.RepeatedScalarFieldContainer[str]
    mode: SearchMode
    preset: Preset
    limit: int
    case_sensitive: bool
    languages: _containers.RepeatedScalarFieldContainer[str]
    path_glob: str
    rerank: RerankPolicy
    no_cache: bool
    refs: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, query: _Optional[str] = ..., repositories: _Optional[_Iterable[str]] = ..., mode: _Optional[_Union[SearchMode, str]] = ..., preset: _Optional[_Union[Preset, str]] = ..., limit: _Optional[int] = ..., case_sensitive: _Optional[bool] = ..., languages: _Optional[_Iterable[str]] = ..., path_glob: _Optional[str] = ..., rerank: _Optional[_Union[RerankPolicy, str]] = ..., no_cache: _Optional[bool] = ..., refs: _Optional[_Iterable[str]] = ...) -> None: ...

class SearchBudget(_message.Message):
    __slots__ = ("max_matches", "max_wall_ms")
    MAX_MATCHES_FIELD_NUMBER: _ClassVar[int]
    MAX_WALL_MS_FIELD_NUMBER: _ClassVar[int]
    max_matches: int
    max_wall_ms: int
    def __init__(self, max_matches: _Optional[int] = ..., max_wall_ms: _Optional[int] = ...) -> None: ...

class StreamSearchRequest(_message.Message):
    __slots__ = ("query", "mode", "case_sensitive", "repositories", "refs", "languages", "path_glob", "budget", "explain")
    QUERY_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    CASE_SENSITIVE_FIELD_NUMBER: _ClassVar[int]
    REPOSITORIES_FIELD_NUMBER: _ClassVar[int]
    REFS_FIELD_NUMBER: _ClassVar[int]
    LANGUAGES_FIELD_NUMBER: _ClassVar[int]
    PATH_GLOB_FIELD_NUMBER: _ClassVar[int]
    BUDGET_FIELD_NUMBER: _ClassVar[int]
    EXPLAIN_FIELD_NUMBER: _ClassVar[int]
    query: str
    mode: SearchMode
    case_sensitive: bool
    repositories: _containers.RepeatedScalarFieldContainer[str]
    refs: _containers.RepeatedScalarFieldContainer[str]
    languages: _containers.RepeatedScalarFieldContainer[str]
    path_glob: str
    budget: SearchBudget
    explain: bool
    def __init__(self, query: _Optional[str] = ..., mode: _Optional[_Union[SearchMode, str]] = ..., case_sensitive: _Optional[bool] = ..., repositories: _Optional[_Iterable[str]] = ..., refs: _Optional[_Iterable[str]] = ..., languages: _Optional[_Iterable[str]] = ..., path_glob: _Optional[str] = ..., budget: _Optional[_Union[SearchBudget, _Mapping]] = ..., explain: _Optional[bool] = ...) -> None: ...

class StreamSearchDone(_message.Message):
    __slots__ = ("stop_reason", "legs", "files_matched", "lines_matched", "duration_ms")
    STOP_REASON_FIELD_NUMBER: _ClassVar[int]
    LEGS_FIELD_NUMBER: _ClassVar[int]
    FILES_MATCHED_FIELD_NUMBER: _ClassVar[int]
    LINES_MATCHED_FIELD_NUMBER: _ClassVar[int]
    DURATION_MS_FIELD_NUMBER: _ClassVar[int]
    stop_reason: _common_pb2.StopReason
    legs: _containers.RepeatedCompositeFieldContainer[_common_pb2.LegSearchStats]
    files_matched: int
    lines_matched: int
    duration_ms: float
    def __init__(self, stop_reason: _Optional[_Union[_common_pb2.StopReason, str]] = ..., legs: _Optional[_Iterable[_Union[_common_pb2.LegSearchStats, _Mapping]]] = ..., files_matched: _Optional[int] = ..., lines_matched: _Optional[int] = ..., duration_ms: _Optional[float] = ...) -> None: ...

class StreamSearchResponse(_message.Message):
    __slots__ = ("files", "done")
    FILES_FIELD_NUMBER: _ClassVar[int]
    DONE_FIELD_NUMBER: _ClassVar[int]
    files: FileMatches
    done: StreamSearchDone
    def __init__(self, files: _Optional[_Union[FileMatches, _Mapping]] = ..., done: _Optional[_Union[StreamSearchDone, _Mapping]] = ...) -> None: ...

class FileMatches(_message.Message):
    __slots__ = ("files",)
    FILES_FIELD_NUMBER: _ClassVar[int]
    files: _containers.RepeatedCompositeFieldContainer[_common_pb2.FileMatch]
    def __init__(self, files: _Optional[_Iterable[_Union[_common_pb2.FileMatch, _Mapping]]] = ...) -> None: ...

class ModalityWeight(_message.Message):
    __slots__ = ("modality", "weight")
    MODALITY_FIELD_NUMBER: _ClassVar[int]
    WEIGHT_FIELD_NUMBER: _ClassVar[int]
    modality: str
    weight: float
    def __init__(self, modality: _Optional[str] = ..., weight: _Optional[float] = ...) -> None: ...

class SearchResponse(_message.Message):
    __slots__ = ("hits", "intent", "intent_confidence", "strategy", "weights", "legs", "total_latency_ms", "confidence", "cache_hit", "topk_reason", "stage_ms")
    class StageMsEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: float
        def __init__(self, key: _Optional[str] = ..., value: _Optional[float] = ...) -> None: ...
    HITS_FIELD_NUMBER: _ClassVar[int]
    INTENT_FIELD_NUMBER: _ClassVar[int]
    INTENT_CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    STRATEGY_FIELD_NUMBER: _ClassVar[int]
    WEIGHTS_FIELD_NUMBER: _ClassVar[int]
    LEGS_FIELD_NUMBER: _ClassVar[int]
    TOTAL_LATENCY_MS_FIELD_NUMBER: _ClassVar[int]
    CONFIDENCE_FIELD_NUMBER: _ClassVar[int]
    CACHE_HIT_FIELD_NUMBER: _ClassVar[int]
    TOPK_REASON_FIELD_NUMBER: _ClassVar[int]
    STAGE_MS_FIELD_NUMBER: _ClassVar[int]
    hits: _containers.RepeatedCompositeFieldContainer[_common_pb2.Hit]
    intent: Intent
    intent_confidence: float
    strategy: Strategy
    weights: _containers.RepeatedCompositeFieldContainer[ModalityWeight]
    legs: _containers.RepeatedCompositeFieldContainer[_common_pb2.LegReport]
    total_latency_ms: float
    confidence: float
    cache_hit: bool
    topk_reason: str
    stage_ms: _containers.ScalarMap[str, float]
    def __init__(self, hits: _Optional[_Iterable[_Union[_common_pb2.Hit, _Mapping]]] = ..., intent: _Optional[_Union[Intent, str]] = ..., intent_confidence: _Optional[float] = ..., strategy: _Optional[_Union[Strategy, str]] = ..., weights: _Optional[_Iterable[_Union[ModalityWeight, _Mapping]]] = ..., legs: _Optional[_Iterable[_Union[_common_pb2.LegReport, _Mapping]]] = ..., total_latency_ms: _Optional[float] = ..., confidence: _Optional[float] = ..., cache_hit: _Optional[bool] = ..., topk_reason: _Optional[str] = ..., stage_ms: _Optional[_Mapping[str, float]] = ...) -> None: ...

class BuildContextRequest(_message.Message):
    __slots__ = ("query", "repositories", "budget_chars", "options")
    QUERY_FIELD_NUMBER: _ClassVar[int]
    REPOSITORIES_FIELD_NUMBER: _ClassVar[int]
    BUDGET_CHARS_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    query: str
    repositories: _containers.RepeatedScalarFieldContainer[str]
    budget_chars: int
    options: ContextOptions
    def __init__(self, query: _Optional[str] = ..., repositories: _Optional[_Iterable[str]] = ..., budget_chars: _Optional[int] = ..., options: _Optional[_Union[ContextOptions, _Mapping]] = ...) -> None: ...

class ContextOptions(_message.Message):
    __slots__ = ("no_neighbors", "no_breadcrumbs", "no_graph", "max_segments_per_file")
    NO_NEIGHBORS_FIELD_NUMBER: _ClassVar[int]
    NO_BREADCRUMBS_FIELD_NUMBER: _ClassVar[int]
    NO_GRAPH_FIELD_NUMBER: _ClassVar[int]
    MAX_SEGMENTS_PER_FILE_FIELD_NUMBER: _ClassVar[int]
    no_neighbors: bool
    no_breadcrumbs: bool
    no_graph: bool
    max_segments_per_file: int
    def __init__(self, no_neighbors: _Optional[bool] = ..., no_breadcrumbs: _Optional[bool] = ..., no_graph: _Optional[bool] = ..., max_segments_per_file: _Optional[int] = ...) -> None: ...

class ContextChunk(_message.Message):
    __slots__ = ("location", "score", "reason", "expanded_from")
    LOCATION_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    EXPANDED_FROM_FIELD_NUMBER: _ClassVar[int]
    location: _common_pb2.Location
    score: float
    reason: str
    expanded_from: _common_pb2.Location
    def __init__(self, location: _Optional[_Union[_common_pb2.Location, _Mapping]] = ..., score: _Optional[float] = ..., reason: _Optional[str] = ..., expanded_from: _Optional[_Union[_common_pb2.Location, _Mapping]] = ...) -> None: ...

class ContextSegment(_message.Message):
    __slots__ = ("start_line", "end_line", "text")
    START_LINE_FIELD_NUMBER: _ClassVar[int]
    END_LINE_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    start_line: int
    end_line: int
    text: str
    def __init__(self, start_line: _Optional[int] = ..., end_line: _Optional[int] = ..., text: _Optional[str] = ...) -> None: ...

class ContextFile(_message.Message):
    __slots__ = ("repository", "path", "language", "segments")
    REPOSITORY_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    LANGUAGE_FIELD_NUMBER: _ClassVar[int]
    SEGMENTS_FIELD_NUMBER: _ClassVar[int]
    repository: str
    path: str
    language: str
    segments: _containers.RepeatedCompositeFieldContainer[ContextSegment]
    def __init__(self, repository: _Optional[str] = ..., path: _Optional[str] = ..., language: _Optional[str] = ..., segments: _Optional[_Iterable[_Union[ContextSegment, _Mapping]]] = ...) -> None: ...

class BuildContextResponse(_message.Message):
    __slots__ = ("seeds", "expanded", "files", "text", "used_chars", "debug")
    class DebugEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: float
        def __init__(self, key: _Optional[str] = ..., value: _Optional[float] = ...) -> None: ...
    SEEDS_FIELD_NUMBER: _ClassVar[int]
    EXPANDED_FIELD_NUMBER: _ClassVar[int]
    FILES_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    USED_CHARS_FIELD_NUMBER: _ClassVar[int]
    DEBUG_FIELD_NUMBER: _ClassVar[int]
    seeds: _containers.RepeatedCompositeFieldContainer[ContextChunk]
    expanded: _containers.RepeatedCompositeFieldContainer[ContextChunk]
    files: _containers.RepeatedCompositeFieldContainer[ContextFile]
    text: str
    used_chars: int
    debug: _containers.ScalarMap[str, float]
    def __init__(self, seeds: _Optional[_Iterable[_Union[ContextChunk, _Mapping]]] = ..., expanded: _Optional[_Iterable[_Union[ContextChunk, _Mapping]]] = ..., files: _Optional[_Iterable[_Union[ContextFile, _Mapping]]] = ..., text: _Optional[str] = ..., used_chars: _Optional[int] = ..., debug: _Optional[_Mapping[str, float]] = ...) -> None: ...

class ListRepositoriesRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class Repository(_message.Message):
    __slots__ = ("name", "root", "files", "chunks", "index_version", "indexed_at", "embeddings_pending", "commit", "ref", "watched", "embeddings_unknown")
    NAME_FIELD_NUMBER: _ClassVar[int]
    ROOT_FIELD_NUMBER: _ClassVar[int]
    FILES_FIELD_NUMBER: _ClassVar[int]
    CHUNKS_FIELD_NUMBER: _ClassVar[int]
    INDEX_VERSION_FIELD_NUMBER: _ClassVar[int]
    INDEXED_AT_FIELD_NUMBER: _ClassVar[int]
    EMBEDDINGS_PENDING_FIELD_NUMBER: _ClassVar[int]
    COMMIT_FIELD_NUMBER: _ClassVar[int]
    REF_FIELD_NUMBER: _ClassVar[int]
    WATCHED_FIELD_NUMBER: _ClassVar[int]
    EMBEDDINGS_UNKNOWN_FIELD_NUMBER: _ClassVar[int]
    name: str
    root: str
    files: int
    chunks: int
    index_version: int
    indexed_at: str
    embeddings_pending: int
    commit: str
    ref: str
    watched: bool
    embeddings_unknown: bool
    def __init__(self, name: _Optional[str] = ..., root: _Optional[str] = ..., files: _Optional[int] = ..., chunks: _Optional[int] = ..., index_version: _Optional[int] = ..., indexed_at: _Optional[str] = ..., embeddings_pending: _Optional[int] = ..., commit: _Optional[str] = ..., ref: _Optional[str] = ..., watched: _Optional[bool] = ..., embeddings_unknown: _Optional[bool] = ...) -> None: ...

class ListRepositoriesResponse(_message.Message):
    __slots__ = ("repositories",)
    REPOSITORIES_FIELD_NUMBER: _ClassVar[int]
    repositories: _containers.RepeatedCompositeFieldContainer[Repository]
    def __init__(self, repositories: _Optional[_Iterable[_Union[Repository, _Mapping]]] = ...) -> None: ...

class DeleteRepositoryRequest(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class DeleteRepositoryResponse(_message.Message):
    __slots__ = ("deleted",)
    DELETED_FIELD_NUMBER: _ClassVar[int]
    deleted: bool
    def __init__(self, deleted: _Optional[bool] = ...) -> None: ...

class GetStatusRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class ServiceStatus(_message.Message):
    __slots__ = ("name", "address", "available", "detail")
    NAME_FIELD_NUMBER: _ClassVar[int]
    ADDRESS_FIELD_NUMBER: _ClassVar[int]
    AVAILABLE_FIELD_NUMBER: _ClassVar[int]
    DETAIL_FIELD_NUMBER: _ClassVar[int]
    name: str
    address: str
    available: bool
    detail: str
    def __init__(self, name: _Optional[str] = ..., address: _Optional[str] = ..., available: _Optional[bool] = ..., detail: _Optional[str] = ...) -> None: ...

class GetStatusResponse(_message.Message):
    __slots__ = ("version", "services", "repositories", "leg_stats", "data_dir")
    VERSION_FIELD_NUMBER: _ClassVar[int]
    SERVICES_FIELD_NUMBER: _ClassVar[int]
    REPOSITORIES_FIELD_NUMBER: _ClassVar[int]
    LEG_STATS_FIELD_NUMBER: _ClassVar[int]
    DATA_DIR_FIELD_NUMBER: _ClassVar[int]
    version: str
    services: _containers.RepeatedCompositeFieldContainer[ServiceStatus]
    repositories: _containers.RepeatedCompositeFieldContainer[Repository]
    leg_stats: _containers.RepeatedCompositeFieldContainer[_common_pb2.LegIndexStats]
    data_dir: str
    def __init__(self, version: _Optional[str] = ..., services: _Optional[_Iterable[_Union[ServiceStatus, _Mapping]]] = ..., repositories: _Optional[_Iterable[_Union[Repository, _Mapping]]] = ..., leg_stats: _Optional[_Iterable[_Union[_common_pb2.LegIndexStats, _Mapping]]] = ..., data_dir: _Optional[str] = ...) -> None: ...
