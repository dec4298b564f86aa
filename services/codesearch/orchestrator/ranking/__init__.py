"""Ranking: from the legs' lists to the answer, one module per concept, in the order the pipeline applies them.

1. `fusion`: weighted reciprocal rank fusion by place (same file, overlapping lines).
2. `adaptive`: the vector leg's weight per query, from how much of the query the keyword top hit holds.
3. `boosts`: centrality (hubs first) for structural intents.
4. `penalties`: generated and test paths demoted.
5. `diversity`: diminishing returns per file.
6. `topk`: Smart TopK, where the relevant group ends.
7. `confidence`: the probability that the top hit is right.

Every constant sits beside the measurement that chose it; `orchestrator/cache.py` derives the cache's view of
the configuration from these modules, so a changed constant invalidates cached answers by itself.
"""
