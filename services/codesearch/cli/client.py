"""The CLI's connection to a server, and plain one-line messages for gRPC errors."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TypeVar

import grpc

from codesearch.common.security import sync_channel
from codesearch.config import MAX_MESSAGE_BYTES, Settings

T = TypeVar("T")

CONNECT_TIMEOUT_S = 5.0  # a server on this machine answers in milliseconds; 5 s covers a busy one


def channel(address: str, settings: Settings | None = None) -> grpc.Channel:
    """A channel to the server: TLS when CODESEARCH_TLS_CA is set, the bearer token when one is configured."""
    return sync_channel(
        address,
        settings or Settings.from_env(),
        options=[
            ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
            ("grpc.max_send_message_length", MAX_MESSAGE_BYTES),
        ],
    )


class CliError(Exception):
    """A failure to report as one line on stderr, with exit status 1."""


def call(address: str, fn: Callable[[], T]) -> T:
    """Runs an RPC; turns connection and status errors into CliError with a plain message."""
    try:
        return fn()
    except grpc.RpcError as e:
        code = e.code() if hasattr(e, "code") else None
        details = e.details() if hasattr(e, "details") else str(e)
        if code == grpc.StatusCode.UNAVAILABLE:
            raise CliError(
                f"cannot reach a codesearch server at {address} ({details}); start one with `codesearch serve`"
            ) from None
        name = code.name if code is not None else "ERROR"
        raise CliError(f"{name.lower().replace('_', ' ')}: {details}") from None


def fail(message: str) -> int:
    print(f"codesearch: {message}", file=sys.stderr)
    return 1
