"""Vector leg: chunk embeddings in a usearch index per repository."""

import contextlib

# onnxruntime 1.32 dies with SIGSEGV while importing when usearch 2.26's compiled module is already loaded in the
# process (reproduced: `import usearch.index; import onnxruntime`); loaded the other way round both work. Every
# usearch import in codesearch goes through this package (`from codesearch.vector import Index`; a test checks),
# so onnxruntime (when installed) loads first.
with contextlib.suppress(ImportError):
    import onnxruntime  # noqa: F401

from usearch.index import Index, MetricKind  # noqa: E402  (after onnxruntime, above)

__all__ = ["Index", "MetricKind"]
