"""A linear map from the transformer's vector space into a static model's: the static tier's boosted query.

Static documents embed ~100x faster than the transformer's, but a static query (an average of token vectors)
reads a paraphrased question poorly. One transformer pass per query is cheap, so the static tier's query
vector can be the transformer's query vector mapped into the static space, blended with the static query
(vector/query_boost.py). The map is a ridge least-squares fit of the static vectors of indexed chunks from
their transformer vectors (codesearch_lab/static/query_map.py fits it; services/codesearch_lab/RECIPES.md).

A map file holds the matrix (teacher dims x static dims), the transformer and static model it was fitted for,
and a sample of the static table's rows: a distilled table made on another machine can come out of its PCA
with other signs, so the local table is aligned to the sample (orthogonal Procrustes, as static_delta.py
does) and the map turned with it. A map of other models is refused with the reason.

The map of the default transformer and the default static model ships in `vector/query_maps/`, named after the
static model (`all-MiniLM-L6-v2+stdlib.npz`); CODESEARCH_STATIC_QUERY_MAP names another file.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from codesearch.vector import npz_record, static_delta

SHIPPED_DIR = Path(__file__).with_name("query_maps")
SUFFIX = ".npz"
FORMAT = 1


@dataclass(frozen=True)
class QueryMap:
    matrix: np.ndarray  # (teacher dims, static dims) float32: teacher vector @ matrix ~ static vector
    check_ids: np.ndarray  # (k,) token ids of the static table's sample
    check_rows: np.ndarray  # (k, static dims) float16: the static table's rows at check_ids
    meta: dict[str, Any]  # format, teacher (model name), teacher_id, static_id, chunks, repositories, ridge


def load(path: Path) -> QueryMap:
    """Reads and checks a map file; ValueError says what is wrong with it."""
    qmap = npz_record.load(path, "query map", QueryMap)
    meta = qmap.meta
    dims = qmap.matrix.shape[1] if qmap.matrix.ndim == 2 else 0
    problems = [
        meta.get("format") != FORMAT and f"format {meta.get('format')!r}, expected {FORMAT}",
        qmap.matrix.ndim != 2 and f"the matrix has {qmap.matrix.ndim} dimensions",
        not np.all(np.isfinite(qmap.matrix)) and "the matrix is not finite",
        qmap.check_rows.shape != (len(qmap.check_ids), dims) and "check rows do not match their ids",
        not (meta.get("teacher") and meta.get("static_id")) and "it does not name its models",
    ]
    found = [p for p in problems if p]
    if found:
        raise ValueError(f"{path} is not a usable query map: {'; '.join(found)}")
    return qmap


def map_file(setting: str, static_name: str) -> Path:
    """The map a setting names (a path), else the one shipped for the static model. FileNotFoundError says
    where it looked."""
    if setting:
        p = Path(setting).expanduser()
        if not p.is_file():
            raise FileNotFoundError(f"query map {p} not found")
        return p
    shipped = SHIPPED_DIR / f"{static_name}{SUFFIX}"
    if "/" in static_name or not shipped.is_file():
        raise FileNotFoundError(
            f"no query map ships for static model {static_name!r} (looked for {shipped}); name a map file "
            "fitted for it in CODESEARCH_STATIC_QUERY_MAP"
        )
    return shipped


def mismatch(qmap: QueryMap, teacher: str, static_id: str) -> str:
    """Why the map does not belong to these models ("" when it does). The transformer is matched by model name:
    its backends (fp32 onnx or torch, int8) embed a query within cosine ~0.99 of each other, so a map fitted on
    one serves the others; the static model by its vector id, which names how it was made."""
    if qmap.meta["teacher"] != teacher:
        return f"it maps the transformer {qmap.meta['teacher']!r}, not the configured {teacher!r}"
    if qmap.meta["static_id"] != static_id:
        return f"it maps into the static model {qmap.meta['static_id']!r}, not the configured {static_id!r}"
    return ""


def local_matrix(qmap: QueryMap, static_table: np.ndarray) -> np.ndarray:
    """The map into this machine's static table: turned by the alignment of the table to the map's sample.
    ValueError when the table is not the one the map was fitted for."""
    if static_table.shape[1] != qmap.matrix.shape[1] or int(qmap.check_ids.max(initial=0)) >= len(
        static_table
    ):
        raise ValueError(f"the static table is {static_table.shape}, the map was fitted on another shape")
    align, error = static_delta.alignment(static_table[qmap.check_ids], qmap.check_rows)
    if error > static_delta.ALIGN_TOLERANCE:
        raise ValueError(
            f"the static model is not the one the query map was fitted for: its rows differ by {error:.2f} "
            f"after alignment (tolerance {static_delta.ALIGN_TOLERANCE})"
        )
    # local @ align ~ the map's frame, so a vector there is local @ align and a local one is theirs @ align.T.
    return (qmap.matrix.astype(np.float64) @ align.T).astype(np.float32)
