"""onnxruntime sessions, built one way for every model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from codesearch.common.models.threads import thread_count


def onnx_session(path: Path, threads: int) -> Any:
    """An onnxruntime CPU session with `threads` intra-op threads (0: every core) that never spin idle."""
    import onnxruntime as ort

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = thread_count(threads)
    opts.inter_op_num_threads = 1
    # Idle pool threads would spin for the next call and steal the cores the other legs need right now.
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    opts.log_severity_level = 3  # errors only: graph-optimiser notes are library noise, not ours to act on
    return ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])
