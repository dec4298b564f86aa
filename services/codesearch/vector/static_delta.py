"""A teacher-trained static model shipped as a small delta over the distilled one.

Training (codesearch_lab/static/train.py; services/codesearch_lab/RECIPES.md rebuilds the shipped delta) moves only the token rows its chunks contain (7,072 of MiniLM's 30,522 for the
standard library) and then folds one linear map into the whole table, so a trained table is

    table = base @ fold, with table[rows] = the trained rows

where `base` is the distilled table every machine makes offline from the bundled MiniLM (static_model.py). The
delta file holds `rows`, those rows int8-quantised (a scale per row), `fold`, and `check_rows`: a sample of the
base rows it was made over. Distillation runs a PCA, whose components may come out with another sign (or turn
within a near-tied pair) on another machine's BLAS, so the local base is first aligned to the sample by an
orthogonal Procrustes fit; a base that does not align is a different model and is refused.

A delta is named `BASE+DELTA` in CODESEARCH_STATIC_MODEL: `all-MiniLM-L6-v2+stdlib` is the shipped file
`vector/static_deltas/stdlib.npz`, and DELTA may also be a path. It is applied once into the model cache, as a
model2vec folder that StaticEncoder loads like any other (static_model.ensure_delta_applied).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from codesearch.vector import npz_record

SHIPPED_DIR = Path(__file__).with_name("static_deltas")
SUFFIX = ".npz"
FORMAT = 1
# A local base aligned to the sample within this relative error is the same model. Sign flips align exactly
# (0.0); a base distilled from another transformer leaves ~1.0.
ALIGN_TOLERANCE = 0.02


@dataclass(frozen=True)
class StaticDelta:
    rows: np.ndarray  # (n,) token ids the training moved
    values: np.ndarray  # (n, dims) int8
    scales: np.ndarray  # (n,) float32: values * scale = the trained row
    fold: np.ndarray  # (dims, dims) float32: every other row is base @ fold
    check_ids: np.ndarray  # (k,) token ids of the base sample
    check_rows: np.ndarray  # (k, dims) float16: the base rows at check_ids
    meta: dict[str, Any]


def split_name(name: str) -> tuple[str, str] | None:
    """(base, delta) for a `BASE+DELTA` static model name, else None (a folder's own name is never split)."""
    if "+" not in name or Path(name).expanduser().is_dir():
        return None
    base, delta = name.rsplit("+", 1)
    return (base, delta) if base and delta else None


def delta_file(delta: str) -> Path:
    """The file a delta name means: a path, else a shipped delta. FileNotFoundError names both places."""
    p = Path(delta).expanduser()
    if p.is_file():
        return p
    shipped = SHIPPED_DIR / f"{delta}{SUFFIX}"
    if shipped.is_file():
        return shipped
    raise FileNotFoundError(f"static delta {delta!r} not found; looked in: path {p}; {shipped}")


def digest(path: Path) -> str:
    """Names what a delta makes: vectors of two different deltas never mix."""
    return hashlib.sha256(path.read_bytes()).hexdigest()[:12]


def load(path: Path) -> StaticDelta:
    """Reads and checks a delta file; ValueError says what is wrong with it."""
    delta = npz_record.load(path, "static delta", StaticDelta)
    meta = delta.meta
    n, dims = delta.values.shape if delta.values.ndim == 2 else (0, 0)
    problems = [
        meta.get("format") != FORMAT and f"format {meta.get('format')!r}, expected {FORMAT}",
        (dims == 0 or dims != meta.get("dims"))
        and f"rows of {dims} dimensions, meta says {meta.get('dims')}",
        delta.values.dtype != np.int8 and f"values are {delta.values.dtype}, not int8",
        delta.rows.shape != (n,) and "rows and values differ in length",
        delta.scales.shape != (n,) and "scales and values differ in length",
        delta.fold.shape != (dims, dims) and f"fold is {delta.fold.shape}, not {dims}x{dims}",
        delta.check_rows.shape != (len(delta.check_ids), dims) and "check rows do not match their ids",
    ]
    found = [p for p in problems if p]
    if found:
        raise ValueError(f"{path} is not a usable static delta: {'; '.join(found)}")
    return delta


def alignment(local_rows: np.ndarray, want_rows: np.ndarray) -> tuple[np.ndarray, float]:
    """(the orthogonal map with local_rows @ map ~ want_rows, the relative error left): orthogonal Procrustes.
    The same table distilled on another machine aligns with error ~0 (its PCA's signs flipped); another model's
    table leaves ~1.0."""
    local = local_rows.astype(np.float64)
    want = want_rows.astype(np.float64)
    u, _, vt = np.linalg.svd(local.T @ want)
    align = u @ vt
    error = float(np.linalg.norm(local @ align - want)) / max(float(np.linalg.norm(want)), 1e-12)
    return align, error


def apply(delta: StaticDelta, base: np.ndarray) -> np.ndarray:
    """The trained table from a local distilled `base`. ValueError when `base` is not the delta's base."""
    vocab = int(delta.meta.get("vocabulary", -1))
    if base.shape != (vocab, delta.fold.shape[0]):
        raise ValueError(f"the delta was made over a {vocab}x{delta.fold.shape[0]} table, not {base.shape}")
    align, error = alignment(base[delta.check_ids], delta.check_rows)
    if error > ALIGN_TOLERANCE:
        raise ValueError(
            f"the static model is not the one the delta was made over ({delta.meta.get('base')!r}): "
            f"its rows differ by {error:.2f} after alignment (tolerance {ALIGN_TOLERANCE})"
        )
    table = (base.astype(np.float64) @ align @ delta.fold).astype(np.float32)
    table[delta.rows] = delta.values.astype(np.float32) * delta.scales[:, None]
    return table


def applied_dir(base_dir: Path, delta_path: Path, model_cache: Path) -> Path:
    from codesearch.common.models.cache import STATIC_SUBDIR

    return model_cache / STATIC_SUBDIR / f"{base_dir.name}+{digest(delta_path)}"
