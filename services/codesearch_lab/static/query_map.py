"""Fitting the static tier's query map (the file codesearch/vector/query_map.py reads): a ridge least-squares map
from the transformer's vectors of indexed chunks to the static model's vectors of the same chunks, the same
(embedded text, teacher vector) pairs train.py learns from, found in a data home's vector leg and the embedding
cache.

    python -m codesearch_lab.static.query_map fit --home DATA_HOME --repo cpython-lib --repo aeson ... --out FILE

`fit-pairs` fits the same map on the descriptions of mined pairs (codesearch_lab/mining) instead: short
natural-language texts like the questions it serves, embedded by the transformer on the spot, so it needs no
data home and no cached teacher vectors (a model trained on those pairs, contrastive.py, has no index to read):

    python -m codesearch_lab.static.query_map fit-pairs --shards SHARDS --static all-MiniLM-L6-v2+code --out FILE

RECIPES.md has the command that made the shipped map (codesearch/vector/query_maps/all-MiniLM-L6-v2+stdlib.npz).
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
from pathlib import Path
from typing import Any

import numpy as np
from codesearch.vector import npz_record
from codesearch.vector.query_map import FORMAT, QueryMap

from codesearch_lab.static.delta import sample_ids

# Ridge on unit rows over ~24k pairs: 1.0, as in the first offline fit; with this many pairs against 384 unknowns
# per column it only guards against a near-singular fit on a small repository.
RIDGE = 1.0


def fit_matrix(teacher: np.ndarray, static: np.ndarray, ridge: float = RIDGE) -> np.ndarray:
    """argmin_M |teacher @ M - static|^2 + ridge |M|^2 over paired rows."""
    t = teacher.astype(np.float64)
    gram = t.T @ t + ridge * np.eye(t.shape[1])
    return np.linalg.solve(gram, t.T @ static.astype(np.float64)).astype(np.float32)


def make(teacher: np.ndarray, static: np.ndarray, static_table: np.ndarray, meta: dict[str, Any]) -> QueryMap:
    """The map fitted on (teacher vector, static vector) pairs, with a sample of the static model's table."""
    check_ids = sample_ids(static_table)
    return QueryMap(
        fit_matrix(teacher, static),
        check_ids,
        static_table[check_ids].astype(np.float16),
        {"format": FORMAT, "ridge": RIDGE, "chunks": len(teacher), **meta},
    )


def save(qmap: QueryMap, path: Path) -> None:
    arrays = {"matrix": qmap.matrix, "check_ids": qmap.check_ids, "check_rows": qmap.check_rows}
    npz_record.save(path, qmap.meta, arrays)


def main(argv: list[str] | None = None) -> int:
    from codesearch.common.models.quiet import quiet_libraries
    from codesearch.config import Settings
    from codesearch.vector.static_model import load_static_encoder, static_model_id

    from codesearch_lab.static import train as static_train

    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["fit-pairs"]:
        return fit_pairs(args[1:])
    if args[:1] != ["fit"]:
        print(
            "usage: python -m codesearch_lab.static.query_map fit|fit-pairs [options]  (fit --help)",
            file=sys.stderr,
        )
        return 2
    ap = argparse.ArgumentParser(
        prog="python -m codesearch_lab.static.query_map fit",
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


PAIRS_SAMPLE = (
    20_000  # descriptions embedded by the transformer (~3 min on 2 cores); 52 per unknown of a column
)


def fit_pairs(argv: list[str]) -> int:
    """`fit-pairs`: the map fitted on a seeded sample of mined descriptions (never the held-out packages)."""
    import random

    from codesearch.common.models.quiet import quiet_libraries
    from codesearch.config import Settings
    from codesearch.vector.embedder import Embedder
    from codesearch.vector.static_model import load_static_encoder, static_model_id

    from codesearch_lab.static import contrastive

    ap = argparse.ArgumentParser(
        prog="python -m codesearch_lab.static.query_map fit-pairs",
        description="fit the static tier's query map on the descriptions of mined pairs",
    )
    ap.add_argument("--shards", type=Path, required=True, help="a mining run's shards folder")
    ap.add_argument("--sample", type=int, default=PAIRS_SAMPLE)
    ap.add_argument("--max-shards", type=int, default=0, help="read the first this many shards (0: all)")
    ap.add_argument("--static", default="", help="the static model (default: the configured one)")
    ap.add_argument("--out", type=Path, required=True, help="the map file to write (.npz)")
    opts = ap.parse_args(argv)
    settings = Settings.from_env()
    try:
        pairs, shards = contrastive.read_shards(opts.shards.expanduser(), max_shards=opts.max_shards)
    except (OSError, ValueError) as e:
        print(f"codesearch: {e}", file=sys.stderr)
        return 1
    rows = [i for i in range(len(pairs.descriptions)) if not contrastive.held_out(pairs.packages[i])]
    rows = sorted(random.Random(contrastive.SEED).sample(rows, min(opts.sample, len(rows))))
    texts = [pairs.descriptions[i] for i in rows]
    static_name = opts.static or settings.static_model
    teacher = Embedder(settings.embed_model, settings.embed_backend, model_cache=settings.model_cache)
    with quiet_libraries():
        encoder = load_static_encoder(static_name, settings.model_cache)
        if not teacher.load():
            print(f"codesearch: {teacher.unavailable_reason}", file=sys.stderr)
            return 1
    meta = {
        "teacher": settings.embed_model,
        "teacher_id": teacher.model_id,
        "static": static_name,
        "static_id": static_model_id(static_name),
        "descriptions": len(texts),
        "shards": shards,
        "seed": contrastive.SEED,
    }
    qmap = make(teacher.encode_documents(texts), encoder.encode(texts), encoder.vectors, meta)
    save(qmap, opts.out)
    print(f"wrote {opts.out}: {len(texts)} descriptions, {opts.out.stat().st_size:,} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
