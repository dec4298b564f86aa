"""A call's deadline and cancellation, handed to the work it starts (native searches, worker threads)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import grpc

from codesearch import _native
from codesearch.common.errors import ServiceError


@dataclass(frozen=True)
class CallBudget:
    """What a native call may spend: the seconds left (None: no deadline) and a token set when the call ends."""

    timeout_s: float | None
    cancel: _native.CancelToken


def budget_of(context: grpc.aio.ServicerContext) -> CallBudget:
    """The client's deadline, and a token cancelled when the RPC ends (done, cancelled or timed out), so work
    a worker thread still does for it stops within a budget check (milliseconds)."""
    token = _native.CancelToken()
    done: Any = lambda _ctx: token.cancel()  # noqa: E731 - grpc's stubs type the callback narrowly
    context.add_done_callback(done)
    return CallBudget(context.time_remaining(), token)


def stopped(e: TimeoutError | InterruptedError, what: str) -> ServiceError:
    """The status for native work stopped by its budget."""
    if isinstance(e, InterruptedError):
        return ServiceError(grpc.StatusCode.CANCELLED, f"{what} was cancelled")
    return ServiceError(grpc.StatusCode.DEADLINE_EXCEEDED, f"{what} ran out of time: {e}")
