"""Shutdown hooks per server: background workers stop cleanly before the process exits."""

from __future__ import annotations

import logging
import weakref
from collections.abc import Callable

import grpc

log = logging.getLogger(__name__)
_HOOKS: weakref.WeakKeyDictionary[grpc.aio.Server, list[Callable[[], None]]] = weakref.WeakKeyDictionary()


def on_shutdown(server: grpc.aio.Server, hook: Callable[[], None]) -> None:
    """Runs `hook` (last registered first) when `run_shutdown(server)` is called after the server stopped."""
    _HOOKS.setdefault(server, []).append(hook)


def run_shutdown(server: grpc.aio.Server) -> None:
    for hook in reversed(_HOOKS.pop(server, [])):
        try:
            hook()
        except Exception:  # one failing hook must not keep the others from running
            log.exception("shutdown hook %r failed", hook)
