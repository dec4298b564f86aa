"""Writing a static delta (the format codesearch/vector/static_delta.py reads and applies): the trained rows,
int8-quantised with a scale per row, the fold, and a sample of the base rows to align another machine's base."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from codesearch.vector import npz_record
from codesearch.vector.static_delta import FORMAT, StaticDelta

CHECK_ROWS = 512  # base rows kept to align a local base: twice the dimensions, so the fit is well determined
INT8_MAX = 127


def sample_ids(table: np.ndarray) -> np.ndarray:
    """Token ids of the rows kept to align another machine's table: CHECK_ROWS live rows, evenly spread."""
    live = np.flatnonzero(np.linalg.norm(table, axis=1) > 0)  # special and unused tokens are zero rows
    return live[np.linspace(0, len(live) - 1, min(CHECK_ROWS, len(live))).astype(int)].astype(np.int32)


def make(base: np.ndarray, trained_rows: dict[int, np.ndarray], fold: np.ndarray, meta: dict) -> StaticDelta:
    """The delta of a table equal to base @ fold except at `trained_rows` (token id -> trained row)."""
    rows = np.asarray(sorted(trained_rows), dtype=np.int32)
    dense = np.stack([trained_rows[int(r)] for r in rows]).astype(np.float32)
    scales = np.maximum(np.abs(dense).max(axis=1), 1e-12) / INT8_MAX
    values = np.clip(np.round(dense / scales[:, None]), -INT8_MAX, INT8_MAX).astype(np.int8)
    check_ids = sample_ids(base)
    return StaticDelta(
        rows,
        values,
        scales.astype(np.float32),
        fold.astype(np.float32),
        check_ids,
        base[check_ids].astype(np.float16),
        {"format": FORMAT, "dims": int(base.shape[1]), "vocabulary": int(base.shape[0]), **meta},
    )


def save(delta: StaticDelta, path: Path) -> None:
    arrays = {
        "rows": delta.rows,
        "values": delta.values,
        "scales": delta.scales,
        "fold": delta.fold,
        "check_ids": delta.check_ids,
        "check_rows": delta.check_rows,
    }
    npz_record.save(path, delta.meta, arrays)
