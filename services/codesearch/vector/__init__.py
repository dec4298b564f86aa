"""Vector leg: chunk embeddings in a usearch index per repository."""

import contextlib

# onnxruntime 1.32 dies with SIGSEGV while importing when usearch 2.26's compiled module is already loaded in the
# process (reproduced: `import usearch.index; import onnxruntime`); loaded the other way round both work. Every
# usearch import in codesearch goes through this package, so onnxruntime (when installed) loads first.
with contextlib.suppress(ImportError):
    import onnxruntime  # noqa: F401
