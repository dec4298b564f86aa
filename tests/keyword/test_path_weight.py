"""KeywordSearch's path_weight through a real gRPC server: a query's words count in file paths only when asked."""

from __future__ import annotations

import grpc
import pytest
from codesearch.v1 import keyword_pb2, keyword_pb2_grpc

from tests.fixture_types import KeywordRepo

# The answer to QUESTION is the file under queue/, whose text never says
# "queue"; jobs.py says "queue" twice and never "resolve".
REPO = {
    "queue/manager.py": "def resolve(name):\n    return CONNECTORS[name]\n",
    "jobs.py": "def run(queue):\n    return queue.pop()\n",
}
QUESTION = "where does the queue resolve things"


@pytest.fixture
def stub(keyword_repo: KeywordRepo) -> keyword_pb2_grpc.KeywordServiceStub:
    return keyword_repo(REPO)


def paths(stub: keyword_pb2_grpc.KeywordServiceStub, path_weight: float) -> list[str]:
    request = keyword_pb2.KeywordSearchRequest(query=QUESTION, limit=10, path_weight=path_weight)
    return [h.location.path for h in stub.KeywordSearch(request).hits]


def test_path_words_count_only_when_asked(stub: keyword_pb2_grpc.KeywordServiceStub) -> None:
    assert paths(stub, 0.0) == ["jobs.py", "queue/manager.py"]
    assert paths(stub, 1.0) == ["queue/manager.py", "jobs.py"]


@pytest.mark.parametrize("bad", [-0.5, float("nan"), float("inf")])
def test_a_bad_path_weight_is_an_invalid_argument(
    stub: keyword_pb2_grpc.KeywordServiceStub, bad: float
) -> None:
    with pytest.raises(grpc.RpcError) as e:
        paths(stub, bad)
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "path_weight" in str(e.value.details())
