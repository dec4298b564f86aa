"""Two static models blended into one: names parse (and bad ones say why), a blended vector's inner product is
the weighted mean of both models' cosines, the Embedder serves a blend under its own id, and models with other
tokenizers are refused."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from codesearch.config import Settings
from codesearch.vector import static_blend
from codesearch.vector.embedder import STATIC_BACKEND, Embedder
from codesearch.vector.static_model import load_static_encoder, static_model_id, static_model_path

DISTILLED, TRAINED = "all-MiniLM-L6-v2", "all-MiniLM-L6-v2+stdlib"
TEXTS = [
    "how are temporary directories cleaned up",
    "def cleanup(self):\n    if self._finalizer.detach():\n        _rmtree(self.name)",
    "class Pool:\n    def close(self):\n        self._state = CLOSE",
    "parse the command line arguments",
]


def test_blend_names_parse_and_bad_ones_say_why(tmp_path: Path) -> None:
    assert static_blend.split_name(f"{DISTILLED}|{TRAINED}") == (
        DISTILLED,
        TRAINED,
        static_blend.DEFAULT_WEIGHT,
    )
    assert static_blend.split_name(f"{DISTILLED}|{TRAINED}@0.3") == (DISTILLED, TRAINED, 0.3)
    assert static_blend.split_name(TRAINED) is None
    folder = tmp_path / "odd|name"
    folder.mkdir()
    assert static_blend.split_name(str(folder)) is None  # a folder's own name is never split
    for bad in (f"{DISTILLED}|", f"|{TRAINED}", "a|b|c", "a|b@1.5", "a|b@0", "a|b@half"):
        with pytest.raises(ValueError, match="static blend"):
            static_blend.split_name(bad)
    ids = {
        static_model_id(n) for n in (f"{DISTILLED}|{TRAINED}@0.3", f"{DISTILLED}|{TRAINED}@0.7", DISTILLED)
    }
    assert len(ids) == 3  # vectors of two weights never mix
    with pytest.raises(ValueError, match="blends two static models"):
        static_model_path(f"{DISTILLED}|{TRAINED}", tmp_path)


@pytest.mark.model
def test_a_blended_vector_scores_the_weighted_mean_of_both_cosines() -> None:
    """The distilled MiniLM and the shipped delta over it (made offline from the bundled model)."""
    cache = Settings.from_env({}).model_cache
    first, second = load_static_encoder(DISTILLED, cache), load_static_encoder(TRAINED, cache)
    blend = load_static_encoder(f"{DISTILLED}|{TRAINED}@0.3", cache)
    assert blend.dims == first.dims + second.dims
    a, b, both = first.encode(TEXTS), second.encode(TEXTS), blend.encode(TEXTS)
    assert np.allclose(np.linalg.norm(both, axis=1), 1.0, atol=1e-5)
    assert np.allclose(both @ both.T, 0.3 * (a @ a.T) + 0.7 * (b @ b.T), atol=1e-5)
    assert (a @ a.T).round(3).tolist() != (b @ b.T).round(3).tolist()  # two different models blended
    assert not blend.encode(["[UNK] [PAD]"]).any()  # no token counts: a zero vector, which matches nothing


@pytest.mark.model
def test_the_embedder_serves_a_blend_under_its_own_id() -> None:
    cache = Settings.from_env({}).model_cache
    emb = Embedder(f"{DISTILLED}|{TRAINED}@0.4", STATIC_BACKEND, model_cache=cache)
    assert emb.load(), emb.unavailable_reason
    assert emb.dims == 512 and emb.model_id == static_model_id(f"{DISTILLED}|{TRAINED}@0.4")
    query = emb.encode_query(TEXTS[0])
    docs = emb.encode_documents(TEXTS[1:])
    assert docs.shape == (3, 512) and int(np.argmax(docs @ query)) == 0  # the cleanup code answers


@pytest.mark.model
def test_models_with_other_tokenizers_do_not_blend(tmp_path: Path) -> None:
    from model2vec import StaticModel
    from tokenizers import Tokenizer, models, pre_tokenizers

    vocab = {t: i for i, t in enumerate(["[PAD]", "[UNK]", "temporary", "folder", "cleanup"])}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    other = tmp_path / "other"
    vectors = np.random.default_rng(0).normal(size=(len(vocab), 8)).astype(np.float32)
    StaticModel(
        vectors=vectors, tokenizer=tok, config={"model_type": "model2vec", "normalize": True}
    ).save_pretrained(str(other))
    cache = Settings.from_env({}).model_cache
    with pytest.raises(ValueError, match="do not share a tokenizer"):
        load_static_encoder(f"{DISTILLED}|{other}", cache)
    emb = Embedder(f"{DISTILLED}|{other}", STATIC_BACKEND, model_cache=cache)
    assert not emb.load() and "do not share a tokenizer" in emb.unavailable_reason
