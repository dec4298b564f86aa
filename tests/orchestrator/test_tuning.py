"""The cache's configuration key is derived from every tuned module, so no constant can be left out of it."""

from __future__ import annotations

import pytest
from codesearch.orchestrator import plan, rerank_stage, router, tuning
from codesearch.orchestrator.ranking import boosts, confidence, diversity, signals, topk

# The constants the hand-kept key of old listed, by module: every one must be found without being listed.
ONCE_LISTED = {
    boosts: ("CENTRALITY_INTENTS", "CENTRALITY_SLOPE", "CENTRALITY_CAP", "CENTRALITY_DEPTH"),
    plan: ("LEG_DEPTH", "USE_QUERY_EXPANSION"),
    rerank_stage: ("RERANK_DEPTH", "RERANK_INTENTS"),
    router: ("INTENT_WEIGHTS", "DIRECT_CONFIDENCE"),
    diversity: ("PER_FILE_DECAY", "MAX_PER_FILE"),
    topk: ("RATIO_TO_TOP", "MAX_DROP", "MIN_RESULTS", "ABSOLUTE_FLOOR", "DEFAULT_RESULTS"),
    # The refit model (notes/15.md) keeps its weights as one tuple beside FEATURES.
    confidence: (
        "CONF_BIAS",
        "CONF_WEIGHTS",
        "FEATURES",
        "SENTENCE_BIAS",
        "SENTENCE_WEIGHTS",
        "SENTENCE_CAP",
    ),
    signals: ("SHIPPED", "SIGNAL_INTENTS", "TEST_FILE"),
}


def test_every_constant_the_old_hand_list_held_is_in_the_derived_key() -> None:
    for module, names in ONCE_LISTED.items():
        found = tuning.constants(module)
        assert set(names) <= set(found), (module.__name__, set(names) - set(found))
        for name in names:
            assert f"{module.__name__}.{name}" in tuning.CONFIG_FINGERPRINT
    # Ones the hand list missed: the rerank blend and the thorough depth.
    assert {"FUSED_WEIGHT", "RERANK_WEIGHT", "RERANK_DEPTH_THOROUGH"} <= set(tuning.constants(rerank_stage))


@pytest.mark.parametrize(
    ("module", "name", "value"),
    [
        (diversity, "PER_FILE_DECAY", 0.7),
        (router, "INTENT_WEIGHTS", {}),
        (rerank_stage, "RERANK_WEIGHT", 0.5),
    ],
)
def test_changing_any_tuned_constant_changes_the_key(monkeypatch, module, name, value) -> None:
    before = tuning.fingerprint()
    monkeypatch.setattr(module, name, value)
    assert tuning.fingerprint() != before


def test_the_key_is_stable_and_ignores_imports_of_modules_and_functions() -> None:
    assert tuning.fingerprint() == tuning.fingerprint() == tuning.CONFIG_FINGERPRINT
    assert all(name.isupper() for m in tuning.tuned_modules() for name in tuning.constants(m))
    assert "codesearch.orchestrator.ranking.fusion.RRF_K" in tuning.CONFIG_FINGERPRINT
