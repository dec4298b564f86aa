"""Long-lived gRPC channels from the orchestrator to each leg, with retries, keepalive and size limits."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import grpc

from codesearch.common.local_rpc import LocalChannel, LocalServices
from codesearch.common.security import aio_channel, bearer_metadata
from codesearch.common.telemetry import client_interceptors
from codesearch.config import MAX_MESSAGE_BYTES, Settings
from codesearch.orchestrator.sharding import ShardedStub
from codesearch.v1 import graph_pb2_grpc, keyword_pb2_grpc, rerank_pb2_grpc, vector_pb2_grpc

KEEPALIVE_MS = 30_000  # matches the server's keepalive policy; below it the server would answer GOAWAY
RETRY_ATTEMPTS = 3  # a restarted leg is back within a second or two; more would outlive the deadline
# Reads are idempotent: retry them on UNAVAILABLE (a leg restarting). Index updates are client streams and
# are not retried by gRPC (streams are never replayed), so a failed update is reported, not repeated.
SERVICE_CONFIG = json.dumps(
    {
        # round_robin spreads calls over every address a name resolves to (the rerank pods behind a headless
        # Service); for a single address it is the same as pick_first.
        "loadBalancingConfig": [{"round_robin": {}}],
        "methodConfig": [
            {
                "name": [
                    {"service": "codesearch.v1.KeywordService"},
                    {"service": "codesearch.v1.VectorService"},
                    {"service": "codesearch.v1.GraphService"},
                    {"service": "codesearch.v1.RerankService"},
                ],
                "retryPolicy": {
                    "maxAttempts": RETRY_ATTEMPTS,
                    "initialBackoff": "0.05s",
                    "maxBackoff": "0.5s",
                    "backoffMultiplier": 2,
                    "retryableStatusCodes": ["UNAVAILABLE"],
                },
            }
        ],
    }
)
CHANNEL_OPTIONS = [
    ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
    ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
    ("grpc.keepalive_time_ms", KEEPALIVE_MS),
    ("grpc.keepalive_permit_without_calls", 0),
    ("grpc.enable_retries", 1),
    ("grpc.service_config", SERVICE_CONFIG),
    # Reconnect quickly after a leg restarts, so it is used again within seconds.
    ("grpc.initial_reconnect_backoff_ms", 200),
    ("grpc.max_reconnect_backoff_ms", 1000),
    # Own subchannels, not the process-wide pool: a connection that another channel saw refused at this address
    # (a leg or server that ran there before) is not shared in its backoff with a new server on the same port.
    ("grpc.use_local_subchannel_pool", 1),
]


SHARDED_LEGS = ("keyword", "vector", "graph")  # legs that hold per-repository data; rerank is stateless


@dataclass
class Leg:
    """One backend: its name, address and stub; stub is None when the leg is not configured."""

    name: str
    address: str
    # A generated stub (grpc_tools writes no type stubs: its methods are untyped) or a ShardedStub standing in for
    # one with the same methods (answered by __getattr__): duck-typed, hence Any.
    stub: Any | None
    channel: grpc.aio.Channel | None


class LegClients:
    """Stubs for every leg. An empty address in settings means 'hosted in this process' when `local` names it;
    given the services this server hosts (`served`), those legs' unary calls skip the network (common/local_rpc)."""

    def __init__(self, settings: Settings, local: set[str], served: LocalServices | None = None) -> None:
        stub_types = {
            "keyword": keyword_pb2_grpc.KeywordServiceStub,
            "vector": vector_pb2_grpc.VectorServiceStub,
            "graph": graph_pb2_grpc.GraphServiceStub,
            "rerank": rerank_pb2_grpc.RerankServiceStub,
        }
        self.legs: dict[str, Leg] = {}
        channels: dict[str, grpc.aio.Channel] = {}

        def channel_to(address: str) -> grpc.aio.Channel:
            if address not in channels:
                # TLS and the bearer token when configured (common/security.py).
                channels[address] = aio_channel(address, settings, CHANNEL_OPTIONS, client_interceptors())
            return channels[address]

        token = bearer_metadata(settings.auth_token)
        for name, stub_type in stub_types.items():
            if settings.shards and name in SHARDED_LEGS:
                shards = list(settings.shards)
                stub = ShardedStub(shards, [stub_type(channel_to(a)) for a in shards])
                self.legs[name] = Leg(name, f"shards {','.join(shards)}", stub, None)
                continue
            address = settings.leg_addrs.get(name, "") or (settings.listen_addr if name in local else "")
            if not address:
                self.legs[name] = Leg(name, "", None, None)
                continue
            channel = channel_to(address)
            calls: LocalChannel | grpc.aio.Channel = channel
            # Hosted in this process: its unary calls skip the network.
            if served is not None and name in local and not settings.leg_addrs.get(name):
                calls = LocalChannel(served, channel, token)
            self.legs[name] = Leg(name, address, stub_type(calls), channel)
        self._channels = list(channels.values())

    @property
    def keyword(self) -> keyword_pb2_grpc.KeywordServiceStub | None:
        return self.legs["keyword"].stub

    @property
    def vector(self) -> vector_pb2_grpc.VectorServiceStub | None:
        return self.legs["vector"].stub

    @property
    def graph(self) -> graph_pb2_grpc.GraphServiceStub | None:
        return self.legs["graph"].stub

    @property
    def rerank(self) -> rerank_pb2_grpc.RerankServiceStub | None:
        return self.legs["rerank"].stub

    async def close(self) -> None:
        for channel in self._channels:
            await channel.close(grace=None)
