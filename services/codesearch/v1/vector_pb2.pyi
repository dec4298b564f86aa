from codesearch.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class UpdateVectorIndexRequest(_message.Message):
    __slots__ = ("update",)
    UPDATE_FIELD_NUMBER: _ClassVar[int]
    update: _common_pb2.IndexUpdate
    def __init__(self, update: _Optional[_Union[_common_pb2.IndexUpdate, _Mapping]] = ...) -> None: ...

class UpdateVectorIndexResponse(_message.Message):
    __slots__ = ("result", "pending")
    RESULT_FIELD_NUMBER: _ClassVar[int]
    PENDING_FIELD_NUMBER: _ClassVar[int]
    result: _common_pb2.IndexUpdateResult
    pending: int
    def __init__(self, result: _Optional[_Union[_common_pb2.IndexUpdateResult, _Mapping]] = ..., pending: _Optional[int] = ...) -> None: ...

class VectorSearchRequest(_message.Message):
    __slots__ = ("repositories", "text", "vector", "limit", "languages", "path_glob", "plain_static_query", "semantic_static_model", "late_interaction")
    REPOSITORIES_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    VECTOR_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    LANGUAGES_FIELD_NUMBER: _ClassVar[int]
    PATH_GLOB_FIELD_NUMBER: _ClassVar[int]
    PLAIN_STATIC_QUERY_FIELD_NUMBER: _ClassVar[int]
    SEMANTIC_STATIC_MODEL_FIELD_NUMBER: _ClassVar[int]
    LATE_INTERACTION_FIELD_NUMBER: _ClassVar[int]
    repositories: _containers.RepeatedScalarFieldContainer[str]
    text: str
    vector: _containers.RepeatedScalarFieldContainer[float]
    limit: int
    languages: _containers.RepeatedScalarFieldContainer[str]
    path_glob: str
    plain_static_query: bool
    semantic_static_model: bool
    late_interaction: bool
    def __init__(self, repositories: _Optional[_Iterable[str]] = ..., text: _Optional[str] = ..., vector: _Optional[_Iterable[float]] = ..., limit: _Optional[int] = ..., languages: _Optional[_Iterable[str]] = ..., path_glob: _Optional[str] = ..., plain_static_query: _Optional[bool] = ..., semantic_static_model: _Optional[bool] = ..., late_interaction: _Optional[bool] = ...) -> None: ...

class VectorSearchResponse(_message.Message):
    __slots__ = ("hits", "partial", "embedded", "total", "tier", "model", "upgrading", "query_encoder", "query_boosted", "rescored_by")
    HITS_FIELD_NUMBER: _ClassVar[int]
    PARTIAL_FIELD_NUMBER: _ClassVar[int]
    EMBEDDED_FIELD_NUMBER: _ClassVar[int]
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    TIER_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    UPGRADING_FIELD_NUMBER: _ClassVar[int]
    QUERY_ENCODER_FIELD_NUMBER: _ClassVar[int]
    QUERY_BOOSTED_FIELD_NUMBER: _ClassVar[int]
    RESCORED_BY_FIELD_NUMBER: _ClassVar[int]
    hits: _containers.RepeatedCompositeFieldContainer[_common_pb2.Hit]
    partial: bool
    embedded: int
    total: int
    tier: str
    model: str
    upgrading: bool
    query_encoder: str
    query_boosted: bool
    rescored_by: str
    def __init__(self, hits: _Optional[_Iterable[_Union[_common_pb2.Hit, _Mapping]]] = ..., partial: _Optional[bool] = ..., embedded: _Optional[int] = ..., total: _Optional[int] = ..., tier: _Optional[str] = ..., model: _Optional[str] = ..., upgrading: _Optional[bool] = ..., query_encoder: _Optional[str] = ..., query_boosted: _Optional[bool] = ..., rescored_by: _Optional[str] = ...) -> None: ...

class EmbedRequest(_message.Message):
    __slots__ = ("texts", "is_query", "tier")
    TEXTS_FIELD_NUMBER: _ClassVar[int]
    IS_QUERY_FIELD_NUMBER: _ClassVar[int]
    TIER_FIELD_NUMBER: _ClassVar[int]
    texts: _containers.RepeatedScalarFieldContainer[str]
    is_query: bool
    tier: str
    def __init__(self, texts: _Optional[_Iterable[str]] = ..., is_query: _Optional[bool] = ..., tier: _Optional[str] = ...) -> None: ...

class Embedding(_message.Message):
    __slots__ = ("values",)
    VALUES_FIELD_NUMBER: _ClassVar[int]
    values: _containers.RepeatedScalarFieldContainer[float]
    def __init__(self, values: _Optional[_Iterable[float]] = ...) -> None: ...

class EmbedResponse(_message.Message):
    __slots__ = ("embeddings", "model")
    EMBEDDINGS_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    embeddings: _containers.RepeatedCompositeFieldContainer[Embedding]
    model: str
    def __init__(self, embeddings: _Optional[_Iterable[_Union[Embedding, _Mapping]]] = ..., model: _Optional[str] = ...) -> None: ...

class GetVectorStatsRequest(_message.Message):
    __slots__ = ("repositories",)
    REPOSITORIES_FIELD_NUMBER: _ClassVar[int]
    repositories: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, repositories: _Optional[_Iterable[str]] = ...) -> None: ...

class GetVectorStatsResponse(_message.Message):
    __slots__ = ("repositories", "model", "dimensions", "backend", "unavailable_reason", "tiers", "repository_tiers")
    REPOSITORIES_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    DIMENSIONS_FIELD_NUMBER: _ClassVar[int]
    BACKEND_FIELD_NUMBER: _ClassVar[int]
    UNAVAILABLE_REASON_FIELD_NUMBER: _ClassVar[int]
    TIERS_FIELD_NUMBER: _ClassVar[int]
    REPOSITORY_TIERS_FIELD_NUMBER: _ClassVar[int]
    repositories: _containers.RepeatedCompositeFieldContainer[_common_pb2.LegIndexStats]
    model: str
    dimensions: int
    backend: str
    unavailable_reason: str
    tiers: _containers.RepeatedCompositeFieldContainer[VectorTier]
    repository_tiers: _containers.RepeatedCompositeFieldContainer[RepositoryTier]
    def __init__(self, repositories: _Optional[_Iterable[_Union[_common_pb2.LegIndexStats, _Mapping]]] = ..., model: _Optional[str] = ..., dimensions: _Optional[int] = ..., backend: _Optional[str] = ..., unavailable_reason: _Optional[str] = ..., tiers: _Optional[_Iterable[_Union[VectorTier, _Mapping]]] = ..., repository_tiers: _Optional[_Iterable[_Union[RepositoryTier, _Mapping]]] = ...) -> None: ...

class VectorTier(_message.Message):
    __slots__ = ("tier", "model", "dimensions", "backend", "unavailable_reason")
    TIER_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    DIMENSIONS_FIELD_NUMBER: _ClassVar[int]
    BACKEND_FIELD_NUMBER: _ClassVar[int]
    UNAVAILABLE_REASON_FIELD_NUMBER: _ClassVar[int]
    tier: str
    model: str
    dimensions: int
    backend: str
    unavailable_reason: str
    def __init__(self, tier: _Optional[str] = ..., model: _Optional[str] = ..., dimensions: _Optional[int] = ..., backend: _Optional[str] = ..., unavailable_reason: _Optional[str] = ...) -> None: ...

class RepositoryTier(_message.Message):
    __slots__ = ("repository", "tier", "embedded", "total", "memory_bytes", "answering")
    REPOSITORY_FIELD_NUMBER: _ClassVar[int]
    TIER_FIELD_NUMBER: _ClassVar[int]
    EMBEDDED_FIELD_NUMBER: _ClassVar[int]
    TOTAL_FIELD_NUMBER: _ClassVar[int]
    MEMORY_BYTES_FIELD_NUMBER: _ClassVar[int]
    ANSWERING_FIELD_NUMBER: _ClassVar[int]
    repository: str
    tier: str
    embedded: int
    total: int
    memory_bytes: int
    answering: bool
    def __init__(self, repository: _Optional[str] = ..., tier: _Optional[str] = ..., embedded: _Optional[int] = ..., total: _Optional[int] = ..., memory_bytes: _Optional[int] = ..., answering: _Optional[bool] = ...) -> None: ...

class DeleteVectorRepositoryRequest(_message.Message):
    __slots__ = ("repository",)
    REPOSITORY_FIELD_NUMBER: _ClassVar[int]
    repository: str
    def __init__(self, repository: _Optional[str] = ...) -> None: ...

class DeleteVectorRepositoryResponse(_message.Message):
    __slots__ = ("deleted",)
    DELETED_FIELD_NUMBER: _ClassVar[int]
    deleted: bool
    def __init__(self, deleted: _Optional[bool] = ...) -> None: ...
