"""The teacher-trained static model: the folded table keeps the trained geometry, training moves the student
towards its teacher, and the saved folder loads as a static model."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from codesearch.config import Settings
from codesearch.vector.embedding_cache import EmbeddingCache, text_hash
from codesearch.vector.static_model import StaticEncoder, static_model_path
from codesearch_lab.static.train import (
    TeacherPairs,
    _means,
    fold_matrix,
    main,
    repositories_in,
    save_model,
    split_off,
    teacher_pairs,
    train_table,
)


def test_folding_the_map_keeps_every_inner_product() -> None:
    rng = np.random.default_rng(1)
    table, proj = rng.normal(size=(50, 8)), rng.normal(size=(8, 12))
    folded = table @ fold_matrix(proj)
    assert folded.shape == (50, 8)
    assert np.allclose(folded @ folded.T, (table @ proj) @ (table @ proj).T, atol=1e-3)


def test_training_moves_the_student_towards_its_teacher() -> None:
    """A teacher that is itself a mean of (other) token vectors: the trained table must agree with it better on
    texts it never saw than the table it started from."""
    rng = np.random.default_rng(2)
    vocab, dims, teacher_dims = 200, 16, 24
    base = rng.normal(size=(vocab, dims)).astype(np.float32)
    hidden = rng.normal(size=(vocab, teacher_dims)).astype(np.float32)

    def texts(n: int) -> tuple[list[np.ndarray], np.ndarray]:
        ids = [rng.integers(0, vocab, size=rng.integers(3, 12)) for _ in range(n)]
        return ids, _means(hidden, ids)

    train, valid, test = texts(600), texts(100), texts(200)
    table, proj = train_table(base, train, valid, epochs=8, log=lambda _: None)
    trained = table @ fold_matrix(proj)
    w_base = np.linalg.lstsq(_means(base, train[0]), train[1], rcond=None)[0]
    # Folded: inner products only, so compare the geometry: teacher vs student cosine matrices over test texts.
    student = _means(trained, test[0])
    s = student / np.linalg.norm(student, axis=1, keepdims=True)
    t = test[1] / np.linalg.norm(test[1], axis=1, keepdims=True)
    b = _means(base, test[0]) @ w_base
    b /= np.linalg.norm(b, axis=1, keepdims=True)
    agree_trained = np.corrcoef((s @ s.T).ravel(), (t @ t.T).ravel())[0, 1]
    agree_base = np.corrcoef((b @ b.T).ravel(), (t @ t.T).ravel())[0, 1]
    assert agree_trained > agree_base + 0.03  # measured: 0.241 vs 0.193


@pytest.mark.model
def test_pairs_from_an_index_and_a_saved_model_loads(tmp_path: Path) -> None:
    """teacher_pairs reads a vector data folder and the cache as the leg writes them; the trained folder is a
    model2vec model StaticEncoder loads, with the base model's dimensions."""
    import sqlite3

    settings = Settings.from_env({})
    encoder = StaticEncoder(static_model_path("all-MiniLM-L6-v2", settings.model_cache))
    gen = tmp_path / "vector" / "demo" / "gen-000001"
    gen.mkdir(parents=True)
    (gen.parent / "CURRENT").write_text("gen-000001\n")
    docs = ["def remove_tree(path): shutil.rmtree(path)", "class Cookie: sign and set", "uncached text"]
    db = sqlite3.connect(gen / "chunks.sqlite")
    db.execute("CREATE TABLE chunks (path TEXT, doc_hash TEXT, doc_text TEXT)")
    paths = ["a.py", "b.py", "a.py"]
    db.executemany(
        "INSERT INTO chunks VALUES (?, ?, ?)",
        [(p, text_hash(d), d) for p, d in zip(paths, docs, strict=True)],
    )
    db.commit()
    db.close()
    cache = EmbeddingCache(tmp_path / "emb.sqlite")
    teacher = np.eye(4, dtype=np.float32)[:2]
    cache.put_many("teacher", [(text_hash(docs[0]), teacher[0]), (text_hash(docs[1]), teacher[1])])
    pairs = teacher_pairs(tmp_path / "vector", ["demo"], cache, "teacher")
    assert pairs.texts == docs[:2] and np.array_equal(pairs.vectors, teacher)
    assert (
        teacher_pairs(tmp_path / "vector", ["demo"], cache, "teacher", frozenset({"a.py"})).texts == docs[1:2]
    )
    with pytest.raises(ValueError, match="no 'other' vectors"):
        teacher_pairs(tmp_path / "vector", ["demo"], cache, "other")
    ids = encoder.token_ids(pairs.texts)
    assert all(len(i) and encoder.keep[i].all() for i in ids)
    save_model(encoder, encoder.vectors * 2.0, tmp_path / "trained")
    loaded = StaticEncoder(str(tmp_path / "trained"))
    assert loaded.dims == encoder.dims
    assert np.allclose(loaded.encode(docs), encoder.encode(docs), atol=1e-5)  # a scale changes no direction


def test_without_a_validation_repository_a_tenth_of_the_chunks_is_held_out() -> None:
    pairs = TeacherPairs([f"text {i}" for i in range(50)], np.eye(50, dtype=np.float32))
    train, valid = split_off(pairs)
    assert len(valid.texts) == 5 and len(train.texts) == 45
    assert not set(train.texts) & set(valid.texts)
    for part in (train, valid):  # each text keeps its own teacher vector
        assert all(part.vectors[j, int(t.split()[1])] == 1.0 for j, t in enumerate(part.texts))
    with pytest.raises(ValueError, match="too few"):
        split_off(TeacherPairs(["one"], np.eye(1, dtype=np.float32)))


def test_training_a_home_without_repositories_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "vector" / "half-made").mkdir(parents=True)  # no CURRENT generation: not a repository
    assert repositories_in(tmp_path / "vector") == [] and repositories_in(tmp_path / "nothing") == []
    code = main(
        ["--home", str(tmp_path), "--cache", str(tmp_path / "emb.sqlite"), "--out", str(tmp_path / "m")]
    )
    assert code == 1 and "holds no indexed repository" in capsys.readouterr().err
    assert not (tmp_path / "m").exists()
