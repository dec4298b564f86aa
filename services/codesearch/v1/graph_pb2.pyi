from codesearch.v1 import common_pb2 as _common_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class SymbolKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    SYMBOL_KIND_UNSPECIFIED: _ClassVar[SymbolKind]
    SYMBOL_KIND_FUNCTION: _ClassVar[SymbolKind]
    SYMBOL_KIND_METHOD: _ClassVar[SymbolKind]
    SYMBOL_KIND_CLASS: _ClassVar[SymbolKind]
    SYMBOL_KIND_STRUCT: _ClassVar[SymbolKind]
    SYMBOL_KIND_INTERFACE: _ClassVar[SymbolKind]
    SYMBOL_KIND_TRAIT: _ClassVar[SymbolKind]
    SYMBOL_KIND_ENUM: _ClassVar[SymbolKind]
    SYMBOL_KIND_TYPE_ALIAS: _ClassVar[SymbolKind]
    SYMBOL_KIND_CONSTANT: _ClassVar[SymbolKind]
    SYMBOL_KIND_MODULE: _ClassVar[SymbolKind]

class Resolution(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    RESOLUTION_UNSPECIFIED: _ClassVar[Resolution]
    RESOLUTION_EXACT: _ClassVar[Resolution]
    RESOLUTION_AMBIGUOUS: _ClassVar[Resolution]
    RESOLUTION_CASE_INSENSITIVE: _ClassVar[Resolution]
    RESOLUTION_FUZZY: _ClassVar[Resolution]
    RESOLUTION_NOT_FOUND: _ClassVar[Resolution]
SYMBOL_KIND_UNSPECIFIED: SymbolKind
SYMBOL_KIND_FUNCTION: SymbolKind
SYMBOL_KIND_METHOD: SymbolKind
SYMBOL_KIND_CLASS: SymbolKind
SYMBOL_KIND_STRUCT: SymbolKind
SYMBOL_KIND_INTERFACE: SymbolKind
SYMBOL_KIND_TRAIT: SymbolKind
SYMBOL_KIND_ENUM: SymbolKind
SYMBOL_KIND_TYPE_ALIAS: SymbolKind
SYMBOL_KIND_CONSTANT: SymbolKind
SYMBOL_KIND_MODULE: SymbolKind
RESOLUTION_UNSPECIFIED: Resolution
RESOLUTION_EXACT: Resolution
RESOLUTION_AMBIGUOUS: Resolution
RESOLUTION_CASE_INSENSITIVE: Resolution
RESOLUTION_FUZZY: Resolution
RESOLUTION_NOT_FOUND: Resolution

class Symbol(_message.Message):
    __slots__ = ("name", "qualified_name", "kind", "location", "signature", "parent", "language", "centrality")
    NAME_FIELD_NUMBER: _ClassVar[int]
    QUALIFIED_NAME_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    LOCATION_FIELD_NUMBER: _ClassVar[int]
    SIGNATURE_FIELD_NUMBER: _ClassVar[int]
    PARENT_FIELD_NUMBER: _ClassVar[int]
    LANGUAGE_FIELD_NUMBER: _ClassVar[int]
    CENTRALITY_FIELD_NUMBER: _ClassVar[int]
    name: str
    qualified_name: str
    kind: SymbolKind
    location: _common_pb2.Location
    signature: str
    parent: str
    language: str
    centrality: float
    def __init__(self, name: _Optional[str] = ..., qualified_name: _Optional[str] = ..., kind: _Optional[_Union[SymbolKind, str]] = ..., location: _Optional[_Union[_common_pb2.Location, _Mapping]] = ..., signature: _Optional[str] = ..., parent: _Optional[str] = ..., language: _Optional[str] = ..., centrality: _Optional[float] = ...) -> None: ...

class Reference(_message.Message):
    __slots__ = ("location", "callee_name", "receiver", "caller", "snippet", "resolution")
    LOCATION_FIELD_NUMBER: _ClassVar[int]
    CALLEE_NAME_FIELD_NUMBER: _ClassVar[int]
    RECEIVER_FIELD_NUMBER: _ClassVar[int]
    CALLER_FIELD_NUMBER: _ClassVar[int]
    SNIPPET_FIELD_NUMBER: _ClassVar[int]
    RESOLUTION_FIELD_NUMBER: _ClassVar[int]
    location: _common_pb2.Location
    callee_name: str
    receiver: str
    caller: str
    snippet: str
    resolution: Resolution
    def __init__(self, location: _Optional[_Union[_common_pb2.Location, _Mapping]] = ..., callee_name: _Optional[str] = ..., receiver: _Optional[str] = ..., caller: _Optional[str] = ..., snippet: _Optional[str] = ..., resolution: _Optional[_Union[Resolution, str]] = ...) -> None: ...

class UpdateGraphIndexRequest(_message.Message):
    __slots__ = ("update",)
    UPDATE_FIELD_NUMBER: _ClassVar[int]
    update: _common_pb2.IndexUpdate
    def __init__(self, update: _Optional[_Union[_common_pb2.IndexUpdate, _Mapping]] = ...) -> None: ...

class UpdateGraphIndexResponse(_message.Message):
    __slots__ = ("result", "files_with_errors")
    RESULT_FIELD_NUMBER: _ClassVar[int]
    FILES_WITH_ERRORS_FIELD_NUMBER: _ClassVar[int]
    result: _common_pb2.IndexUpdateResult
    files_with_errors: int
    def __init__(self, result: _Optional[_Union[_common_pb2.IndexUpdateResult, _Mapping]] = ..., files_with_errors: _Optional[int] = ...) -> None: ...

class FindDefinitionsRequest(_message.Message):
    __slots__ = ("repositories", "name", "kind", "language", "limit", "languages", "path_glob")
    REPOSITORIES_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    LANGUAGE_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    LANGUAGES_FIELD_NUMBER: _ClassVar[int]
    PATH_GLOB_FIELD_NUMBER: _ClassVar[int]
    repositories: _containers.RepeatedScalarFieldContainer[str]
    name: str
    kind: SymbolKind
    language: str
    limit: int
    languages: _containers.RepeatedScalarFieldContainer[str]
    path_glob: str
    def __init__(self, repositories: _Optional[_Iterable[str]] = ..., name: _Optional[str] = ..., kind: _Optional[_Union[SymbolKind, str]] = ..., language: _Optional[str] = ..., limit: _Optional[int] = ..., languages: _Optional[_Iterable[str]] = ..., path_glob: _Optional[str] = ...) -> None: ...

class FindDefinitionsResponse(_message.Message):
    __slots__ = ("symbols", "resolution")
    SYMBOLS_FIELD_NUMBER: _ClassVar[int]
    RESOLUTION_FIELD_NUMBER: _ClassVar[int]
    symbols: _containers.RepeatedCompositeFieldContainer[Symbol]
    resolution: Resolution
    def __init__(self, symbols: _Optional[_Iterable[_Union[Symbol, _Mapping]]] = ..., resolution: _Optional[_Union[Resolution, str]] = ...) -> None: ...

class FindReferencesRequest(_message.Message):
    __slots__ = ("repositories", "name", "limit", "languages", "path_glob")
    REPOSITORIES_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    LANGUAGES_FIELD_NUMBER: _ClassVar[int]
    PATH_GLOB_FIELD_NUMBER: _ClassVar[int]
    repositories: _containers.RepeatedScalarFieldContainer[str]
    name: str
    limit: int
    languages: _containers.RepeatedScalarFieldContainer[str]
    path_glob: str
    def __init__(self, repositories: _Optional[_Iterable[str]] = ..., name: _Optional[str] = ..., limit: _Optional[int] = ..., languages: _Optional[_Iterable[str]] = ..., path_glob: _Optional[str] = ...) -> None: ...

class FindReferencesResponse(_message.Message):
    __slots__ = ("references", "resolution", "targets")
    REFERENCES_FIELD_NUMBER: _ClassVar[int]
    RESOLUTION_FIELD_NUMBER: _ClassVar[int]
    TARGETS_FIELD_NUMBER: _ClassVar[int]
    references: _containers.RepeatedCompositeFieldContainer[Reference]
    resolution: Resolution
    targets: _containers.RepeatedCompositeFieldContainer[Symbol]
    def __init__(self, references: _Optional[_Iterable[_Union[Reference, _Mapping]]] = ..., resolution: _Optional[_Union[Resolution, str]] = ..., targets: _Optional[_Iterable[_Union[Symbol, _Mapping]]] = ...) -> None: ...

class FindCalleesRequest(_message.Message):
    __slots__ = ("repositories", "name", "limit", "languages", "path_glob")
    REPOSITORIES_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    LANGUAGES_FIELD_NUMBER: _ClassVar[int]
    PATH_GLOB_FIELD_NUMBER: _ClassVar[int]
    repositories: _containers.RepeatedScalarFieldContainer[str]
    name: str
    limit: int
    languages: _containers.RepeatedScalarFieldContainer[str]
    path_glob: str
    def __init__(self, repositories: _Optional[_Iterable[str]] = ..., name: _Optional[str] = ..., limit: _Optional[int] = ..., languages: _Optional[_Iterable[str]] = ..., path_glob: _Optional[str] = ...) -> None: ...

class FindCalleesResponse(_message.Message):
    __slots__ = ("callees", "resolution", "calls")
    CALLEES_FIELD_NUMBER: _ClassVar[int]
    RESOLUTION_FIELD_NUMBER: _ClassVar[int]
    CALLS_FIELD_NUMBER: _ClassVar[int]
    callees: _containers.RepeatedCompositeFieldContainer[Symbol]
    resolution: Resolution
    calls: _containers.RepeatedCompositeFieldContainer[Reference]
    def __init__(self, callees: _Optional[_Iterable[_Union[Symbol, _Mapping]]] = ..., resolution: _Optional[_Union[Resolution, str]] = ..., calls: _Optional[_Iterable[_Union[Reference, _Mapping]]] = ...) -> None: ...

class ImpactRequest(_message.Message):
    __slots__ = ("repositories", "target", "max_depth", "limit", "languages", "path_glob")
    REPOSITORIES_FIELD_NUMBER: _ClassVar[int]
    TARGET_FIELD_NUMBER: _ClassVar[int]
    MAX_DEPTH_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    LANGUAGES_FIELD_NUMBER: _ClassVar[int]
    PATH_GLOB_FIELD_NUMBER: _ClassVar[int]
    repositories: _containers.RepeatedScalarFieldContainer[str]
    target: str
    max_depth: int
    limit: int
    languages: _containers.RepeatedScalarFieldContainer[str]
    path_glob: str
    def __init__(self, repositories: _Optional[_Iterable[str]] = ..., target: _Optional[str] = ..., max_depth: _Optional[int] = ..., limit: _Optional[int] = ..., languages: _Optional[_Iterable[str]] = ..., path_glob: _Optional[str] = ...) -> None: ...

class ImpactItem(_message.Message):
    __slots__ = ("location", "distance", "via", "symbol")
    LOCATION_FIELD_NUMBER: _ClassVar[int]
    DISTANCE_FIELD_NUMBER: _ClassVar[int]
    VIA_FIELD_NUMBER: _ClassVar[int]
    SYMBOL_FIELD_NUMBER: _ClassVar[int]
    location: _common_pb2.Location
    distance: int
    via: str
    symbol: str
    def __init__(self, location: _Optional[_Union[_common_pb2.Location, _Mapping]] = ..., distance: _Optional[int] = ..., via: _Optional[str] = ..., symbol: _Optional[str] = ...) -> None: ...

class ImpactResponse(_message.Message):
    __slots__ = ("items", "resolution", "resolved_targets")
    ITEMS_FIELD_NUMBER: _ClassVar[int]
    RESOLUTION_FIELD_NUMBER: _ClassVar[int]
    RESOLVED_TARGETS_FIELD_NUMBER: _ClassVar[int]
    items: _containers.RepeatedCompositeFieldContainer[ImpactItem]
    resolution: Resolution
    resolved_targets: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, items: _Optional[_Iterable[_Union[ImpactItem, _Mapping]]] = ..., resolution: _Optional[_Union[Resolution, str]] = ..., resolved_targets: _Optional[_Iterable[str]] = ...) -> None: ...

class NeighborsRequest(_message.Message):
    __slots__ = ("location", "limit")
    LOCATION_FIELD_NUMBER: _ClassVar[int]
    LIMIT_FIELD_NUMBER: _ClassVar[int]
    location: _common_pb2.Location
    limit: int
    def __init__(self, location: _Optional[_Union[_common_pb2.Location, _Mapping]] = ..., limit: _Optional[int] = ...) -> None: ...

class Neighbor(_message.Message):
    __slots__ = ("symbol", "relation")
    SYMBOL_FIELD_NUMBER: _ClassVar[int]
    RELATION_FIELD_NUMBER: _ClassVar[int]
    symbol: Symbol
    relation: str
    def __init__(self, symbol: _Optional[_Union[Symbol, _Mapping]] = ..., relation: _Optional[str] = ...) -> None: ...

class NeighborsResponse(_message.Message):
    __slots__ = ("neighbors",)
    NEIGHBORS_FIELD_NUMBER: _ClassVar[int]
    neighbors: _containers.RepeatedCompositeFieldContainer[Neighbor]
    def __init__(self, neighbors: _Optional[_Iterable[_Union[Neighbor, _Mapping]]] = ...) -> None: ...

class CentralityRequest(_message.Message):
    __slots__ = ("locations",)
    LOCATIONS_FIELD_NUMBER: _ClassVar[int]
    locations: _containers.RepeatedCompositeFieldContainer[_common_pb2.Location]
    def __init__(self, locations: _Optional[_Iterable[_Union[_common_pb2.Location, _Mapping]]] = ...) -> None: ...

class CentralityResponse(_message.Message):
    __slots__ = ("values",)
    VALUES_FIELD_NUMBER: _ClassVar[int]
    values: _containers.RepeatedScalarFieldContainer[float]
    def __init__(self, values: _Optional[_Iterable[float]] = ...) -> None: ...

class GetGraphStatsRequest(_message.Message):
    __slots__ = ("repositories",)
    REPOSITORIES_FIELD_NUMBER: _ClassVar[int]
    repositories: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, repositories: _Optional[_Iterable[str]] = ...) -> None: ...

class GetGraphStatsResponse(_message.Message):
    __slots__ = ("repositories",)
    REPOSITORIES_FIELD_NUMBER: _ClassVar[int]
    repositories: _containers.RepeatedCompositeFieldContainer[_common_pb2.LegIndexStats]
    def __init__(self, repositories: _Optional[_Iterable[_Union[_common_pb2.LegIndexStats, _Mapping]]] = ...) -> None: ...

class DeleteGraphRepositoryRequest(_message.Message):
    __slots__ = ("repository",)
    REPOSITORY_FIELD_NUMBER: _ClassVar[int]
    repository: str
    def __init__(self, repository: _Optional[str] = ...) -> None: ...

class DeleteGraphRepositoryResponse(_message.Message):
    __slots__ = ("deleted",)
    DELETED_FIELD_NUMBER: _ClassVar[int]
    deleted: bool
    def __init__(self, deleted: _Optional[bool] = ...) -> None: ...
