"""The code-trained static model: mined shards are read with repeated descriptions capped, packages are held out
whole and the same way every run, batches hold one language, training makes held-out descriptions find their own
code more often, and `main` writes a model folder and a delta the product applies."""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path

import numpy as np
import pytest
from codesearch.config import Settings
from codesearch.vector import static_delta
from codesearch.vector.static_model import StaticEncoder, static_model_path
from codesearch_lab.static import contrastive


def _write_shard(path: Path, records: list[dict]) -> None:
    with gzip.open(path, "wt", encoding="utf-8") as f:
        for r in records:
            f.write(json.dumps(r) + "\n")


def _record(description: str, code: str, language: str = "python", package: str = "pkg") -> dict:
    return {
        "description": description,
        "code": code,
        "language": language,
        "registry": "pypi",
        "package": package,
    }


def test_shards_are_read_in_order_and_a_repeated_description_is_capped(tmp_path: Path) -> None:
    repeated = [_record("Returns the value.", f"def get{i}(self): return self.v{i}") for i in range(5)]
    _write_shard(tmp_path / "pairs-00000.jsonl.gz", repeated)
    _write_shard(tmp_path / "pairs-00001.jsonl.gz", [_record("Parse a header.", "def parse(h): ...")])
    (tmp_path / "pairs-00002.jsonl.gz.tmp").write_bytes(b"not yet complete")
    pairs, shards = contrastive.read_shards(tmp_path)
    assert shards == ["pairs-00000.jsonl.gz", "pairs-00001.jsonl.gz"]
    assert pairs.descriptions.count("Returns the value.") == contrastive.MAX_PER_DESCRIPTION
    assert pairs.descriptions[-1] == "Parse a header." and pairs.packages[-1] == "pypi:pkg"


def test_a_folder_without_shards_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="no pairs"):
        contrastive.read_shards(tmp_path)
    assert contrastive.main(["--shards", str(tmp_path), "--out", str(tmp_path / "m")]) == 1


def test_packages_are_held_out_whole_and_by_their_name_only() -> None:
    names = [f"pypi:package-{i}" for i in range(4000)]
    held = [n for n in names if contrastive.held_out(n)]
    assert held == [n for n in names if contrastive.held_out(n)]  # no state: the same set every call
    assert 0.01 < len(held) / len(names) < 0.06  # VALIDATION_SHARE is 0.03


def test_every_batch_holds_one_language() -> None:
    languages = ["go"] * 300 + ["rust"] * 100 + ["perl"] * 3
    batches = list(contrastive.language_batches(languages, list(range(len(languages))), 64, random.Random(0)))
    assert all(len({languages[i] for i in b}) == 1 for b in batches)
    assert not any(languages[b[0]] == "perl" for b in batches)  # 3 pairs: too few negatives for a batch
    assert sum(len(b) for b in batches) >= 300 + 64  # go's and rust's full batches at least


def test_training_makes_held_out_descriptions_find_their_code() -> None:
    """Synthetic pairs: a description's tokens and its code's tokens are different ids whose meaning is linked
    (token t in a description names token t + V in code). Random vectors know nothing of that link; training on
    some pairs must teach it for pairs it never saw."""
    rng = np.random.default_rng(3)
    concepts, dims = 60, 16
    base = rng.normal(size=(2 * concepts, dims)).astype(np.float32)
    desc_ids, code_ids = [], []
    for _ in range(600):
        topic = rng.choice(concepts, size=3, replace=False)
        desc_ids.append(topic.astype(np.int64))
        noise = rng.choice(concepts, size=2) + concepts
        code_ids.append(np.concatenate([topic + concepts, noise]).astype(np.int64))
    languages = ["python"] * 600
    train, valid = list(range(500)), list(range(500, 600))
    table, figures = contrastive.train_table(
        base, desc_ids, code_ids, languages, train, valid, epochs=8, batch=32, learning_rate=0.05
    )
    history = figures["epochs"]
    assert table.shape == base.shape
    assert figures["best"]["mrr"] > history[0]["mrr"] + 0.2, history


@pytest.mark.model
def test_main_writes_a_model_and_a_delta_the_product_applies(tmp_path: Path) -> None:
    settings = Settings.from_env()
    # each description word is written as another word in the code: what the distilled table cannot know
    said = ["socket", "parse", "header", "retry", "cache", "token", "stream", "config", "path", "json"]
    coded = [
        "banana",
        "violin",
        "meadow",
        "pepper",
        "glacier",
        "lantern",
        "walrus",
        "canyon",
        "tulip",
        "harbor",
    ]
    records = []
    for i in range(600):
        a, b, c = i % 10, (i * 3 + 1) % 10, (i * 7 + 2) % 10
        records.append(
            _record(
                f"{said[a]} {said[b]} {said[c]}",
                f"def f{i}():\n    return {coded[a]}({coded[b]}, {coded[c]})",
            )
        )
    shards = tmp_path / "shards"
    shards.mkdir()
    _write_shard(shards / "pairs-00000.jsonl.gz", records)
    out, delta_path = tmp_path / "model", tmp_path / "code.npz"
    args = ["--shards", str(shards), "--epochs", "3", "--batch", "32", "--learning-rate", "0.05"]
    rc = contrastive.main([*args, "--out", str(out), "--delta-out", str(delta_path)])
    assert rc == 0
    trained = StaticEncoder(str(out))
    delta = static_delta.load(delta_path)
    assert delta.meta["base"] == contrastive.BASE and delta.meta["pairs"] > 0
    base = StaticEncoder(static_model_path(contrastive.BASE, settings.model_cache))
    applied = static_delta.apply(delta, base.vectors)
    # the delta rebuilds the trained table to int8 precision (a scale per row)
    moved = delta.rows
    assert len(moved) > 0
    err = np.abs(applied[moved] - trained.vectors[moved]).max()
    assert err < 0.02 * np.abs(trained.vectors[moved]).max(), err
