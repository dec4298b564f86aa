"""Proto enum values as the short lower-case labels that metrics, spans, the CLI and JSON output print."""

from __future__ import annotations

from typing import Any


def label(enum: Any, value: int, prefix: str) -> str:
    """`label(search_pb2.Strategy, STRATEGY_RRF_AFTER_DIRECT, "STRATEGY_")` -> "rrf_after_direct"."""
    return str(enum.Name(value)).removeprefix(prefix).lower()
