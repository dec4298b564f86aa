"""Ranking: from the legs' lists to the answer, one module per concept, in the order the pipeline applies them.

1. `fusion`: weighted reciprocal rank fusion by place (same file, overlapping lines), or the legs' own scores.
2. `adaptive`: when the keyword leg's answer settles a meaning query (the vector leg is then dropped).
3. `boosts`: centrality (hubs first) for structural intents.
4. `recipe`: the one ranking recipe (`signals` for its boosts, `path_kinds` for its penalties): coherence,
   definitions, path words, path penalties, per-file saturation; `recipe_for` picks its constants.
5. `topk`: Smart TopK, where the relevant group ends.
6. `confidence`: the probability that the top hit is right.

Every constant sits beside the measurement that chose it.
"""
