"""Hostile queries through the whole query path: only OK or INVALID_ARGUMENT may come back, within a deadline.

Default: FUZZ_EXAMPLES examples; more with CODESEARCH_FUZZ_EXAMPLES=5000.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import grpc
import pytest
from codesearch.config import MAX_QUERY_CHARS, Settings
from codesearch.server import registrars
from codesearch.v1 import search_pb2, search_pb2_grpc
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

FUZZ_EXAMPLES = int(os.environ.get("CODESEARCH_FUZZ_EXAMPLES", "300"))  # a few seconds of server time
CALL_DEADLINE_S = 10.0  # a pathological regex must be refused or bounded long before this
ALLOWED = {grpc.StatusCode.OK, grpc.StatusCode.INVALID_ARGUMENT}
PATHOLOGICAL = [
    "(a*)*b",
    "(?:x+x+)+y",
    "a{1000}{1000}",
    "(a|aa)*c",
    "((((((((((((((((((((((((((((((x))))))))))))))))))))))))))))))",
    "(" * 5000 + "x" + ")" * 5000,
    "(" * 3000,
    "[" * 100,
    r"\\",
    "\\",
    "x{99999999}",
    "(?P<n>a)(?P=n)",
    r"(\w+\s?)*$",
    ".*" * 500,
    "[^\x00-\uffff]",
    "\ud7ff\ue000",
    "a" * MAX_QUERY_CHARS,
    "a" * (MAX_QUERY_CHARS + 1),
    "\x00",
    "def \x00 x",
    "who calls " + "x." * 600,
    '"' * 50,
    "what breaks if I change " + "(" * 100,
]
# By name: SearchRequest takes an enum's label as well as its number, and the stubs type .values() as plain int.
MODES = search_pb2.SearchMode.keys()
PRESETS = search_pb2.Preset.keys()


@pytest.fixture(scope="module")
def stub(tmp_path_factory: pytest.TempPathFactory) -> Iterator[search_pb2_grpc.SearchServiceStub]:
    from codesearch.common.aio_thread import ThreadedServer

    tmp = tmp_path_factory.mktemp("fuzz")
    settings_ = Settings.from_env({"CODESEARCH_HOME": str(tmp / "home")})
    server = ThreadedServer(registrars(settings_, ("keyword", "graph", "orchestrator"))).start()
    root = tmp / "repo"
    root.mkdir()
    (root / "a.py").write_text(
        "def parse(x):\n    return x * 2  # aaaa aaab (a) [x]\n\n\nparse('aaaaaaaaaaaaaaaaaaaaaaaac')\n"
    )
    (root / "b.go").write_text('package b\n\nfunc Run() { fmt.Println("héllo\\x00 wörld") }\n')
    (root / "c.txt").write_text("\u202e mixed ǅ unicode 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 \ufeff line\n" * 20)
    channel = grpc.insecure_channel(server.address)
    stub_ = search_pb2_grpc.SearchServiceStub(channel)
    list(stub_.IndexRepository(search_pb2.IndexRepositoryRequest(path=str(root), name="fuzz"), timeout=60))
    yield stub_
    channel.close()
    server.stop()


def _check(
    stub: search_pb2_grpc.SearchServiceStub,
    query: str,
    mode: str,
    preset: str = "PRESET_UNSPECIFIED",
    case: bool = False,
) -> None:
    request = search_pb2.SearchRequest(
        query=query, mode=mode, preset=preset, case_sensitive=case, no_cache=True
    )
    try:
        stub.Search(request, timeout=CALL_DEADLINE_S)
    except grpc.RpcError as e:
        assert e.code() in ALLOWED, f"{e.code().name}: {e.details()} for mode {mode} query {query[:80]!r}"


@pytest.mark.parametrize("query", PATHOLOGICAL, ids=range(len(PATHOLOGICAL)))
def test_pathological_queries_in_every_mode(stub: search_pb2_grpc.SearchServiceStub, query: str) -> None:
    for mode in MODES:
        _check(stub, query, mode)


query_text = st.one_of(
    st.text(min_size=0, max_size=200),
    st.text(alphabet=st.sampled_from("()[]{}*+?|.^$\\ax0-:,\"'"), max_size=60),
    st.builds(
        lambda a, b: a + b,
        st.sampled_from(["who calls ", "how does ", "where is ", '"', "what breaks if I change "]),
        st.text(max_size=80),
    ),
    st.binary(max_size=120).map(
        lambda b: (
            b.decode("utf-8", errors="surrogateescape").encode("utf-8", "replace").decode("utf-8", "replace")
        )
    ),
)


@settings(
    max_examples=FUZZ_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(query=query_text, mode=st.sampled_from(MODES), preset=st.sampled_from(PRESETS), case=st.booleans())
def test_random_queries(
    stub: search_pb2_grpc.SearchServiceStub, query: str, mode: str, preset: str, case: bool
) -> None:
    _check(stub, query, mode, preset, case)
