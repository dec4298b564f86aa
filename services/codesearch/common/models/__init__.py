"""Model plumbing shared by the vector and rerank legs: model lookup, ONNX export and sessions, tokenizers,
thread settings and the first writable model cache. Nothing here imports a leg.

Importing this package sets the process defaults every model user needs before numpy, torch or tokenizers
load their thread pools (see threads.py).
"""

from codesearch.common.models import threads as _threads  # noqa: F401  (the environment defaults)
