"""The machine-wide model cache: exported and distilled models, made once and shared by every data home."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

log = logging.getLogger(__name__)
T = TypeVar("T")

ONNX_SUBDIR = "onnx"  # under the model cache: ONNX exports of embedding models and cross-encoders
STATIC_SUBDIR = "static"  # under the model cache: static (model2vec) models distilled from a transformer


def cache_key(model_path: str) -> str:
    """Names a model folder's derived files: its path and its weights' sizes and mtimes, so a changed model is
    made again and an unchanged one once per machine."""
    p = Path(model_path)
    parts = [str(p.resolve())]
    for w in sorted(p.glob("*.safetensors")) + sorted(p.glob("*.bin")):
        st = w.stat()
        parts.append(f"{w.name}:{st.st_size}:{int(st.st_mtime)}")
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:16]


def first_usable(caches: Sequence[Path], make: Callable[[Path], T]) -> T:
    """make(cache) for the first cache folder that can be written (or already holds the file): a container's
    machine-wide cache is read-only unless the image baked the file in."""
    for i, cache in enumerate(caches):
        try:
            return make(cache)
        except OSError as e:
            if i == len(caches) - 1:
                raise
            log.warning("model cache %s not usable (%s); trying %s", cache, e, caches[i + 1])
    raise ValueError("no model cache folder given")
