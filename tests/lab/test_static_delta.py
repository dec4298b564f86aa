"""A trained static model shipped as a delta over the distilled one: it rebuilds the trained table from a local
base (even one whose PCA came out with other signs), refuses another model's base, says what is wrong with a
corrupt file, and the shipped delta answers better than the distilled model it is made over."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from codesearch.config import Settings
from codesearch.vector import static_delta
from codesearch.vector.embedder import STATIC_BACKEND, Embedder
from codesearch.vector.static_model import StaticEncoder, static_model_id, static_model_path
from codesearch_lab.static import delta as delta_file
from codesearch_lab.static.train import trained_delta

VOCAB, DIMS = 600, 16


def _trained(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(base, the table training left before folding, its map W): rows 0 and 1 zero like special tokens."""
    base = rng.normal(size=(VOCAB, DIMS)).astype(np.float32)
    base[:2] = 0.0
    table = base.copy()
    moved = rng.choice(np.arange(2, VOCAB), size=150, replace=False)
    table[moved] += rng.normal(scale=0.5, size=(len(moved), DIMS)).astype(np.float32)
    return base, table, rng.normal(size=(DIMS, 24)).astype(np.float32)


def test_a_saved_delta_rebuilds_the_trained_table(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    base, table, proj = _trained(rng)
    delta = trained_delta(base, table, proj, {"base": "demo"})
    assert len(delta.rows) == 150 and delta.values.dtype == np.int8
    delta_file.save(delta, tmp_path / "d.npz")
    loaded = static_delta.load(tmp_path / "d.npz")
    assert loaded.meta["base"] == "demo" and loaded.meta["dims"] == DIMS
    want = table @ (np.linalg.qr(proj.T)[1].T)
    got = static_delta.apply(loaded, base)
    cos = np.sum(got * want, axis=1)[2:] / (np.linalg.norm(got, axis=1) * np.linalg.norm(want, axis=1))[2:]
    assert cos.min() > 0.9995  # int8 rows: a rounding error, no change of direction
    assert np.array_equal(got[:2], np.zeros((2, DIMS), np.float32))


def test_a_base_distilled_with_other_signs_is_aligned_and_another_model_is_refused(tmp_path: Path) -> None:
    rng = np.random.default_rng(4)
    base, table, proj = _trained(rng)
    delta = trained_delta(base, table, proj, {"base": "demo"})
    flips = np.where(rng.random(DIMS) < 0.5, -1.0, 1.0).astype(np.float32)  # what another BLAS's PCA may do
    assert np.allclose(static_delta.apply(delta, base * flips), static_delta.apply(delta, base), atol=1e-4)
    with pytest.raises(ValueError, match="not the one the delta was made over"):
        static_delta.apply(delta, rng.normal(size=base.shape).astype(np.float32))
    with pytest.raises(ValueError, match="made over a 600x16 table"):
        static_delta.apply(delta, base[:100])


def test_a_corrupt_delta_file_says_what_is_wrong(tmp_path: Path) -> None:
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"\x00not a zip file at all" * 10)
    with pytest.raises(ValueError, match="is not a static delta file"):
        static_delta.load(bad)
    rng = np.random.default_rng(5)
    delta = trained_delta(*_trained(rng), {"base": "demo"})
    delta_file.save(delta, tmp_path / "good.npz")
    with np.load(tmp_path / "good.npz") as z:
        parts = {k: z[k] for k in z.files}
    np.savez(tmp_path / "short.npz", **{**parts, "fold": parts["fold"][:3]})
    with pytest.raises(ValueError, match="fold is"):
        static_delta.load(tmp_path / "short.npz")
    truncated = tmp_path / "truncated.npz"
    truncated.write_bytes((tmp_path / "good.npz").read_bytes()[:500])
    with pytest.raises(ValueError, match="is not a static delta file"):
        static_delta.load(truncated)
    with pytest.raises(FileNotFoundError, match="static delta 'nope' not found"):
        static_delta.delta_file("nope")


def test_names_split_only_where_a_delta_is_meant(tmp_path: Path) -> None:
    assert static_delta.split_name("all-MiniLM-L6-v2+stdlib") == ("all-MiniLM-L6-v2", "stdlib")
    assert static_delta.split_name("all-MiniLM-L6-v2") is None
    folder = tmp_path / "odd+name"
    folder.mkdir()
    assert static_delta.split_name(str(folder)) is None  # a folder's own name is never split
    # Two deltas never share vectors: the id names the file's digest.
    assert static_model_id("all-MiniLM-L6-v2+stdlib") != static_model_id("all-MiniLM-L6-v2")


@pytest.mark.model
def test_the_shipped_delta_ranks_better_than_the_distilled_model() -> None:
    """Made offline from the bundled MiniLM (distilled into the model cache once, then the delta applied)."""
    settings = Settings.from_env({})
    distilled = StaticEncoder(static_model_path("all-MiniLM-L6-v2", settings.model_cache))
    trained = StaticEncoder(static_model_path("all-MiniLM-L6-v2+stdlib", settings.model_cache))
    assert trained.dims == distilled.dims
    query = ["how are temporary directories cleaned up"]
    docs = [
        "def cleanup(self):\n    if self._finalizer.detach():\n        _rmtree(self.name)",  # the answer
        "def close(self):\n    self._state = CLOSE\n    self._worker_handler._state = CLOSE",
        "def temporary_flag(flags):\n    old = flags.copy()\n    return old",
    ]
    margins = []
    for enc in (distilled, trained):
        sims = (enc.encode(query) @ enc.encode(docs).T)[0]
        margins.append(sims[0] - sims[1:].max())
    assert margins[1] > 0 and margins[1] > margins[0]


def test_a_corrupt_configured_delta_leaves_the_tier_unavailable_with_the_reason(tmp_path: Path) -> None:
    bad = tmp_path / "broken.npz"
    bad.write_bytes(b"garbage")
    emb = Embedder(f"all-MiniLM-L6-v2+{bad}", STATIC_BACKEND, model_cache=tmp_path / "cache")
    assert not emb.load()
    assert "is not a static delta file" in emb.unavailable_reason
