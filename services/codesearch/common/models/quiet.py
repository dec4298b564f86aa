"""Keeps third-party model libraries from printing to the user's terminal while we load, export or distil.

Tracer warnings, weight-loading and encoding progress bars are library noise: a user of `codesearch index` or
`codesearch demo` cannot act on them. Our own log lines say what happens instead.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import warnings
from collections.abc import Iterator

NOISY_LOGGERS = ("transformers", "sentence_transformers", "model2vec", "torch.onnx", "huggingface_hub")


@contextlib.contextmanager
def quiet_libraries(loads_transformers: bool = False) -> Iterator[None]:
    """Within the block: no Python warnings, no progress bars and only errors from the noisy loggers.

    `loads_transformers`: the block uses transformers, so it is imported first (its import resets its own
    logger's level, and its bars are switched off through its own API); otherwise it is left unimported."""
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    bars_were_on = _set_transformers_bars(False, loads_transformers)
    levels = {name: logging.getLogger(name).level for name in NOISY_LOGGERS}
    for name in NOISY_LOGGERS:
        logging.getLogger(name).setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        for name, level in levels.items():
            logging.getLogger(name).setLevel(level)
        if bars_were_on:
            _set_transformers_bars(True, False)


def _set_transformers_bars(on: bool, load: bool) -> bool:
    """Turns transformers' own progress bars on or off; returns whether they were on (False if not loaded)."""
    if not load and "transformers" not in sys.modules:
        return False
    try:
        from transformers.utils import logging as tlog
    except ImportError:
        return False
    was_on = bool(tlog.is_progress_bar_enabled())
    if on:
        tlog.enable_progress_bar()
    else:
        tlog.disable_progress_bar()
    return was_on
