from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class RerankCandidate(_message.Message):
    __slots__ = ("id", "text", "path", "breadcrumb", "focus_lines")
    ID_FIELD_NUMBER: _ClassVar[int]
    TEXT_FIELD_NUMBER: _ClassVar[int]
    PATH_FIELD_NUMBER: _ClassVar[int]
    BREADCRUMB_FIELD_NUMBER: _ClassVar[int]
    FOCUS_LINES_FIELD_NUMBER: _ClassVar[int]
    id: str
    text: str
    path: str
    breadcrumb: _containers.RepeatedScalarFieldContainer[str]
    focus_lines: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, id: _Optional[str] = ..., text: _Optional[str] = ..., path: _Optional[str] = ..., breadcrumb: _Optional[_Iterable[str]] = ..., focus_lines: _Optional[_Iterable[int]] = ...) -> None: ...

class RerankRequest(_message.Message):
    __slots__ = ("query", "candidates", "top_n")
    QUERY_FIELD_NUMBER: _ClassVar[int]
    CANDIDATES_FIELD_NUMBER: _ClassVar[int]
    TOP_N_FIELD_NUMBER: _ClassVar[int]
    query: str
    candidates: _containers.RepeatedCompositeFieldContainer[RerankCandidate]
    top_n: int
    def __init__(self, query: _Optional[str] = ..., candidates: _Optional[_Iterable[_Union[RerankCandidate, _Mapping]]] = ..., top_n: _Optional[int] = ...) -> None: ...

class RerankScore(_message.Message):
    __slots__ = ("id", "index", "score")
    ID_FIELD_NUMBER: _ClassVar[int]
    INDEX_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    id: str
    index: int
    score: float
    def __init__(self, id: _Optional[str] = ..., index: _Optional[int] = ..., score: _Optional[float] = ...) -> None: ...

class RerankResponse(_message.Message):
    __slots__ = ("scores", "model")
    SCORES_FIELD_NUMBER: _ClassVar[int]
    MODEL_FIELD_NUMBER: _ClassVar[int]
    scores: _containers.RepeatedCompositeFieldContainer[RerankScore]
    model: str
    def __init__(self, scores: _Optional[_Iterable[_Union[RerankScore, _Mapping]]] = ..., model: _Optional[str] = ...) -> None: ...

class GetRerankerInfoRequest(_message.Message):
    __slots__ = ()
    def __init__(self) -> None: ...

class GetRerankerInfoResponse(_message.Message):
    __slots__ = ("model", "available", "unavailable_reason", "max_length")
    MODEL_FIELD_NUMBER: _ClassVar[int]
    AVAILABLE_FIELD_NUMBER: _ClassVar[int]
    UNAVAILABLE_REASON_FIELD_NUMBER: _ClassVar[int]
    MAX_LENGTH_FIELD_NUMBER: _ClassVar[int]
    model: str
    available: bool
    unavailable_reason: str
    max_length: int
    def __init__(self, model: _Optional[str] = ..., available: _Optional[bool] = ..., unavailable_reason: _Optional[str] = ..., max_length: _Optional[int] = ...) -> None: ...
