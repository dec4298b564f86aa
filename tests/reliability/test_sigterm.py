"""SIGTERM under hostile load ends `codesearch serve` within its drain time plus 2 s (issue 20: it did not stop
within 35 s, only SIGKILL did). A real server process, real clients: the hostile queries that used to hang it and
the soak's fuzz client (bench/soak.py's random and pathological requests in every mode), all without deadlines."""

from __future__ import annotations

import random
import signal
import threading
import time
from pathlib import Path

import grpc
from codesearch.bench.procs import ServerProcess
from codesearch.bench.soak import fuzz_request
from codesearch.server import SHUTDOWN_GRACE_S
from codesearch.v1 import search_pb2, search_pb2_grpc

LOREM = (
    "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore. "
)
EXIT_MARGIN_S = 2.0
FUZZ_CLIENTS = 4  # beside the 12 hostile ones: each sends the soak's fuzz requests back to back
HOSTILE = [
    search_pb2.SearchRequest(query="a" * 27 + " x", no_cache=True),  # the router's old 2**n backtracking
    search_pb2.SearchRequest(query=(LOREM * 10)[:1000], mode=search_pb2.SEARCH_MODE_LITERAL, no_cache=True),
    search_pb2.SearchRequest(query=".", mode=search_pb2.SEARCH_MODE_REGEX, no_cache=True),
    search_pb2.SearchRequest(query="handler", no_cache=True),
]


def test_sigterm_under_hostile_load_stops_within_the_drain_time(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    root.mkdir()
    body = "".join(f"def handler_{j}(value):\n    return '{LOREM}' * {j}\n\n" for j in range(100))
    for i in range(100):
        (root / f"mod_{i:03d}.py").write_text(body)
    server = ServerProcess(["keyword", "graph", "orchestrator"], tmp_path / "home").start()
    try:
        channel = grpc.insecure_channel(server.address)
        stub = search_pb2_grpc.SearchServiceStub(channel)
        list(stub.IndexRepository(search_pb2.IndexRepositoryRequest(path=str(root), name="r"), timeout=300))
        stop = threading.Event()

        def client(request: search_pb2.SearchRequest) -> None:
            while not stop.is_set():
                try:
                    stub.Search(request)  # no deadline: only the server's drain ends these
                except grpc.RpcError:
                    time.sleep(0.05)

        fuzz_codes: list[grpc.StatusCode] = []

        def fuzz_client(seed: int) -> None:
            rng = random.Random(seed)
            while not stop.is_set():
                request, _deadline = fuzz_request(rng, "r")  # no deadline here either
                try:
                    stub.Search(request)
                    fuzz_codes.append(grpc.StatusCode.OK)
                except grpc.RpcError as e:
                    fuzz_codes.append(e.code())

        clients = [threading.Thread(target=client, args=(r,), daemon=True) for r in HOSTILE * 3]
        clients += [threading.Thread(target=fuzz_client, args=(i,), daemon=True) for i in range(FUZZ_CLIENTS)]
        for c in clients:
            c.start()
        time.sleep(2.0)
        assert server.proc is not None and server.proc.poll() is None
        assert fuzz_codes, "the fuzz clients sent nothing"
        assert not {grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN} & set(fuzz_codes), fuzz_codes
        sent = time.monotonic()
        server.proc.send_signal(signal.SIGTERM)
        server.proc.wait(timeout=SHUTDOWN_GRACE_S + 30)
        took = time.monotonic() - sent
        stop.set()
        for c in clients:  # the server is gone: their calls fail at once, then they see `stop`
            c.join(timeout=10)
        assert took <= SHUTDOWN_GRACE_S + EXIT_MARGIN_S, (
            f"exited {took:.1f} s after SIGTERM\n{server.log_tail()}"
        )
        channel.close()
    finally:
        server.kill9()
