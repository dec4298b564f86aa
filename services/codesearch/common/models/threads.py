"""Thread settings for model code: environment defaults that must be set before the libraries load, and
torch's pools set explicitly."""

from __future__ import annotations

import contextlib
import os

# Competing BLAS/OpenMP pools next to torch's own made one query embedding ~30x slower; numpy's share of the
# work here is tiny, so its pools get one thread. Only effective when set before those libraries load.
for _var in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "VECLIB_MAXIMUM_THREADS"):
    os.environ.setdefault(_var, "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")  # fork-safety warnings, and a third pool
os.environ.setdefault("HF_HUB_OFFLINE", "1")  # models come from disk only; no network here
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def thread_count(n: int) -> int:
    """n, or every core when n is 0."""
    return n if n > 0 else (os.cpu_count() or 1)


def configure_torch_threads(n: int) -> int:
    """Sets torch's thread pools explicitly: intra-op to n (default: every core), inter-op to 1.

    One inter-op thread: requests are already serialised, and a second pool would fight the intra-op one
    for the same cores. torch's setting is process-wide, shared by every leg in the process.
    """
    import torch

    n = thread_count(n)
    torch.set_num_threads(n)
    # Only settable before the first parallel op; whoever set it first wins.
    with contextlib.suppress(RuntimeError):
        torch.set_num_interop_threads(1)
    return n
