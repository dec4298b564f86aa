"""A linear map from the transformer's vector space into a static model's: the static tier's boosted query.

Static documents embed ~100x faster than the transformer's, but a static query (an average of token vectors)
reads a paraphrased question poorly. One transformer pass per query is cheap, so the static tier's query
vector can be the transformer's query vector mapped into the static space, blended with the static query
(vector/query_boost.py). The map is a ridge least-squares fit of the static vectors of indexed chunks from
their transformer vectors: the same (embedded text, teacher vector) pairs static_train.py learns from, found
in a data home's vector leg and the embedding cache.

A map file holds the matrix (teacher dims x static dims), the transformer and static model it was fitted for,
and a sample of the static table's rows: a distilled table made on another machine can come out of its PCA
with other signs, so the local table is aligned to the sample (orthogonal Procrustes, as static_delta.py
does) and the map turned with it. A map of other models is refused with the reason.

    python -m codesearch.vector.query_map fit --home DATA_HOME --repo cpython-lib --repo aeson ... --out FILE

Maps for the default transformer and the shipped static models ship in `vector/query_maps/`, named after the
static model (`all-MiniLM-L6-v2.npz`, `all-MiniLM-L6-v2+stdlib.npz`).
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from codesearch.vector import npz_record, static_delta

SHIPPED_DIR = Path(__file__).with_name("query_maps")
SUFFIX = ".npz"
FORMAT = 1
# Ridge on unit rows over ~24k pairs: the lead's offline fit (notes/lead-r6/asym2.py) used 1.0; with this many
# pairs against 384 unknowns per column it only guards against a near-singular fit on a small repository.
RIDGE = 1.0


@dataclass(frozen=True)
class QueryMap:
    matrix: np.ndarray  # (teacher dims, static dims) float32: teacher vector @ matrix ~ static vector
    check_ids: np.ndarray  # (k,) token ids of the static table's sample
    check_rows: np.ndarray  # (k, static dims) float16: the static table's rows at check_ids
    meta: dict[str, Any]  # format, teacher (model name), teacher_id, static_id, chunks, repositories, ridge


def fit_matrix(teacher: np.ndarray, static: np.ndarray, ridge: float = RIDGE) -> np.ndarray:
    """argmin_M |teacher @ M - static|^2 + ridge |M|^2 over paired rows."""
    t = teacher.astype(np.float64)
    gram = t.T @ t + ridge * np.eye(t.shape[1])
    return np.linalg.solve(gram, t.T @ static.astype(np.float64)).astype(np.float32)


def make(teacher: np.ndarray, static: np.ndarray, static_table: np.ndarray, meta: dict[str, Any]) -> QueryMap:
    """The map fitted on (teacher vector, static vector) pairs, with a sample of the static model's table."""
    check_ids = static_delta.sample_ids(static_table)
    return QueryMap(
        fit_matrix(teacher, static),
        check_ids,
        static_table[check_ids].astype(np.float16),
        {"format": FORMAT, "ridge": RIDGE, "chunks": len(teacher), **meta},
    )


def save(qmap: QueryMap, path: Path) -> None:
    arrays = {"matrix": qmap.matrix, "check_ids": qmap.check_ids, "check_rows": qmap.check_rows}
    npz_record.save(path, qmap.meta, arrays)


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
            f"no query map ships for static model {static_name!r} (looked for {shipped}); fit one with "
            "`python -m codesearch.vector.query_map fit` and name it in CODESEARCH_STATIC_QUERY_MAP"
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


def main(argv: list[str] | None = None) -> int:
    from codesearch.common.models.quiet import quiet_libraries
    from codesearch.config import Settings
    from codesearch.vector import static_train
    from codesearch.vector.static_model import load_static_encoder, static_model_id

    args = sys.argv[1:] if argv is None else argv
    if args[:1] != ["fit"]:
        print("usage: python -m codesearch.vector.query_map fit [options]  (fit --help)", file=sys.stderr)
        return 2
    ap = argparse.ArgumentParser(
        prog="python -m codesearch.vector.query_map fit",
        description="fit the static tier's query map from the transformer's vectors of indexed chunks",
    )
    static_train.add_teacher_arguments(ap)
    ap.add_argument("--static", default="", help="the static model (default: the configured one)")
    ap.add_argument("--out", required=True, help="the map file to write (.npz)")
    opts = ap.parse_args(args[1:])
    settings = Settings.from_env()
    try:
        source = static_train.teacher_source(opts, settings)
        pairs = static_train.teacher_pairs(source.vector_dir, source.repos, source.cache, source.teacher_id)
    except (OSError, ValueError, sqlite3.Error) as e:
        print(f"codesearch: {e}", file=sys.stderr)
        return 1
    static_name = opts.static or settings.static_model
    with quiet_libraries():
        encoder = load_static_encoder(static_name, settings.model_cache)
    meta = {
        "teacher": source.teacher,
        "teacher_id": source.teacher_id,
        "static": static_name,
        "static_id": static_model_id(static_name),
        "repositories": source.repos,
    }
    qmap = make(pairs.vectors, encoder.encode(pairs.texts), encoder.vectors, meta)
    save(qmap, Path(opts.out))
    size = Path(opts.out).stat().st_size
    print(f"wrote {opts.out}: {len(pairs.texts)} chunks of {len(source.repos)} repositories, {size:,} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
