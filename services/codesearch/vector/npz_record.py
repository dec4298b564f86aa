"""The files our small model artefacts ship as (static deltas, query maps): named arrays and a JSON meta record
in one compressed .npz, written atomically and read without pickles."""

from __future__ import annotations

import json
import os
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

T = TypeVar("T")


def save(path: Path, meta: dict[str, Any], arrays: dict[str, np.ndarray]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as fh:  # an open file: np.savez would append ".npz" to the temporary name
        record = {**arrays, "meta": np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)}
        np.savez_compressed(fh, allow_pickle=False, **record)
    os.replace(tmp, path)


def load(path: Path, what: str, make: Callable[..., T]) -> T:
    """make(meta=..., **arrays) from the file; ValueError "PATH is not a WHAT file (why)" when it cannot be read
    or holds other arrays than `make` takes."""
    try:
        with np.load(path, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
        meta = json.loads(arrays.pop("meta").tobytes().decode())
        return make(meta=meta, **arrays)
    except (OSError, ValueError, KeyError, TypeError, zipfile.BadZipFile, UnicodeDecodeError) as e:
        raise ValueError(f"{path} is not a {what} file ({e.__class__.__name__}: {e})") from e
