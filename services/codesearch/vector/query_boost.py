"""The static tier's query vector, boosted by the transformer once its model is loaded.

Documents keep their static vectors; the query becomes

    unit(w * unit(transformer(q) @ M) + (1 - w) * static(q))

with M the query map of the configured transformer and static model (vector/query_map.py). The transformer is
loaded anyway where it fills the transformer tier; with the static tier alone it is loaded for queries only.
Until it is loaded (or when the map is refused, or w is 0) the static tier answers with its own query vector,
never waiting for the transformer, and says so (`encoder`).
"""

from __future__ import annotations

import logging
import threading

import numpy as np

from codesearch.vector import query_map
from codesearch.vector.embedder import Embedder

log = logging.getLogger(__name__)

BOOSTED_MARK = "mapped at weight"  # in `encoder`: the transformer's query vector went through the map
NOT_BOOSTED = "static queries are not boosted"  # opens the log line and `off_reason` of a refused boost


class QueryBooster:
    """Thread-safe once `prepare()` has run (the vector leg's worker runs it after the static model loads)."""

    def __init__(
        self, static: Embedder, transformer: Embedder | None, map_setting: str, weight: float
    ) -> None:
        self.static = static
        self.transformer = transformer
        self.map_setting = map_setting
        self.weight = weight
        self.matrix: np.ndarray | None = None  # the map into this machine's static table, once checked
        self.off_reason = self._configured_off()
        self._prepared = threading.Event()

    def _configured_off(self) -> str:
        if not 0.0 <= self.weight <= 1.0:
            return f"CODESEARCH_STATIC_QUERY_WEIGHT must be between 0 and 1, got {self.weight:g}"
        if self.weight == 0.0:
            return "off (CODESEARCH_STATIC_QUERY_WEIGHT is 0)"
        if self.transformer is None or self.transformer.model_id == self.static.model_id:
            return "no transformer model is configured beside the static one"
        return ""

    def prepare(self) -> None:
        """Loads and checks the map, then the transformer; never raises (a refusal is kept in off_reason)."""
        try:
            if self.off_reason or self.transformer is None or not self.static.load():
                log.info("%s: %s", NOT_BOOSTED, self.off_reason or "the static model is unavailable")
                return
            try:
                path = query_map.map_file(self.map_setting, self.static.model_name)
                qmap = query_map.load(path)
                problem = query_map.mismatch(qmap, self.transformer.model_name, self.static.table_id)
                if problem:
                    raise ValueError(f"{path}: {problem}")
                matrix = query_map.local_matrix(qmap, self.static.static_table())
                if not self.transformer.load():
                    raise ValueError(self.transformer.unavailable_reason)
                if matrix.shape[0] != self.transformer.dims:
                    raise ValueError(
                        f"{path} maps {matrix.shape[0]}-dimensional vectors; the transformer gives "
                        f"{self.transformer.dims}"
                    )
            except (OSError, ValueError) as e:
                self.off_reason = f"{NOT_BOOSTED}: {e}"
                log.warning("%s", self.off_reason)
                return
            self.matrix = matrix
            log.info(
                "static queries boosted by %s (weight %g, %s)", self.transformer.model_id, self.weight, path
            )
        finally:
            self._prepared.set()

    @property
    def ready(self) -> bool:
        """Whether a query now gets the boosted vector."""
        return self.matrix is not None

    @property
    def pending(self) -> bool:
        """Whether the boost is configured and still loading: an answer now will change once it is ready."""
        return not self.off_reason and not self._prepared.is_set()

    @property
    def encoder(self) -> str:
        """Which model(s) embed a static query now, as the leg report says it."""
        if self.matrix is None or self.transformer is None:
            return self.static.model_id
        return f"{self.transformer.model_id} {BOOSTED_MARK} {self.weight:g} with {self.static.model_id}"

    @property
    def state(self) -> str:
        """What a static query gets now, as `codesearch status` says it."""
        if self.ready and self.transformer is not None:
            return f"boosted by {self.transformer.model_id} at weight {self.weight:g}"
        if self.pending and self.transformer is not None:
            return f"plain until {self.transformer.model_id} is loaded"
        # prepare() leaves no reason only where the static model itself did not load
        reason = self.off_reason.removeprefix(f"{NOT_BOOSTED}: ")
        return f"plain: {reason or 'the static model is unavailable'}"

    def encode(self, text: str) -> np.ndarray:
        """The boosted query vector (unit length); only when `ready`. Both parts come from their models' query
        caches, so a repeated query costs one small matrix product."""
        if self.matrix is None or self.transformer is None:
            raise RuntimeError("the static query boost is not ready")
        mapped = self.transformer.encode_query(text) @ self.matrix
        mapped /= max(float(np.linalg.norm(mapped)), 1e-12)
        q = self.weight * mapped + (1.0 - self.weight) * self.static.encode_query(text)
        return (q / max(float(np.linalg.norm(q)), 1e-12)).astype(np.float32)
