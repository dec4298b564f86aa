"""Head pooling: a static model's document vectors leaning on the chunk's head (CODESEARCH_STATIC_HEAD_WEIGHT,
vector/static_model.py encode_documents). Real model: the static model distilled offline from the bundled MiniLM."""

from __future__ import annotations

import numpy as np
import pytest
from codesearch.config import Settings
from codesearch.vector import tier_models
from codesearch.vector import tiers as vtiers
from codesearch.vector.embedder import STATIC_BACKEND, Embedder
from codesearch.vector.static_model import HEAD_LINES, document_head, static_model_id

pytestmark = pytest.mark.model

# A structured document text (vector/doc_text.py): path words | breadcrumb, signature, docstring, names, body.
DOCUMENT = "\n".join(
    [
        "shutil | rmtree",
        "def rmtree(path, ignore_errors=False, onerror=None):",
        "Recursively delete a directory tree.",
        "path ignore errors onerror scandir unlink rmdir",
        "if ignore_errors:",
        "    def onerror(*args): pass",
        "stack = [os.scandir(path)]",
        "while stack:",
        "    entry = stack.pop()",
        "    os.unlink(entry.path)",
        "os.rmdir(path)",
    ]
)


HEAD_WEIGHT = 0.7  # the weight README "Head pooling" measured


@pytest.fixture(scope="module")
def static() -> Embedder:
    settings = Settings.from_env({"CODESEARCH_STATIC_MODEL": "all-MiniLM-L6-v2"})
    emb = Embedder(
        settings.static_model, STATIC_BACKEND, model_cache=settings.model_cache, head_weight=HEAD_WEIGHT
    )
    assert emb.load(), emb.unavailable_reason
    return emb


def test_the_head_is_the_first_lines() -> None:
    assert document_head(DOCUMENT).split("\n") == DOCUMENT.split("\n")[:HEAD_LINES]
    assert document_head("one line") == "one line"


def test_a_document_vector_blends_its_head_and_its_whole_text(static: Embedder) -> None:
    encoder = static.static_encoder()
    (doc,) = static.encode_documents([DOCUMENT])
    whole, head = encoder.encode([DOCUMENT, document_head(DOCUMENT)])
    expected = HEAD_WEIGHT * head + (1 - HEAD_WEIGHT) * whole
    assert np.allclose(doc, expected / np.linalg.norm(expected), atol=1e-5)
    assert float(doc @ head) > float(whole @ head)  # nearer the signature and docstring than the plain mean
    # A text no longer than its head is its own head: the same vector as the plain mean (a query's).
    short = "\n".join(DOCUMENT.split("\n")[:HEAD_LINES])
    assert np.allclose(static.encode_documents([short])[0], encoder.encode([short])[0], atol=1e-6)


def test_the_setting_reaches_the_static_tier_under_its_own_id(static: Embedder) -> None:
    """Vectors of other pooling never mix in one index or the cache (a home re-embeds its static vectors once
    when the setting changes); query maps and deltas still bind to the token table. Off by default."""
    table = static_model_id("all-MiniLM-L6-v2")
    assert static.model_id == f"{table}+head{HEAD_LINES}@0.7" and static.table_id == table
    env = {"CODESEARCH_STATIC_MODEL": "all-MiniLM-L6-v2"}
    default = tier_models.shared_embedder(Settings.from_env(env), vtiers.STATIC)
    assert default.model_id == table and default.head_weight == 0.0
    on = tier_models.shared_embedder(
        Settings.from_env({**env, "CODESEARCH_STATIC_HEAD_WEIGHT": "0.7"}), vtiers.STATIC
    )
    assert on.model_id == static.model_id and on.head_weight == 0.7
    # A weight out of range: the static tier says why instead of embedding with it.
    bad = Embedder(
        "all-MiniLM-L6-v2", STATIC_BACKEND, model_cache=Settings.from_env(env).model_cache, head_weight=1.5
    )
    assert (
        not bad.load() and "CODESEARCH_STATIC_HEAD_WEIGHT must be between 0 and 1" in bad.unavailable_reason
    )


def test_the_docstring_question_finds_its_function_sooner_with_the_head(static: Embedder) -> None:
    """The head carries the words a question shares with a definition; a long body dilutes the plain mean."""
    question = static.encode_query("recursively delete a directory tree")
    body = "\n".join(f"    value_{i} = compute_{i}(value_{i - 1}, offset={i})" for i in range(1, 40))
    answer = DOCUMENT + "\n" + body
    (pooled,) = static.encode_documents([answer])
    (plain,) = static.static_encoder().encode_documents([answer])  # head weight 0: the plain mean
    assert float(pooled @ question) > float(plain @ question)
