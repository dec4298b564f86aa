"""Candidate confidence features measured beside the shipped ones (ranking/confidence.py FEATURES): each reads an
answer as the server's offline ranking gives it (eval/offline.py) and its legs; eval/confidence_fit.py adds each
alone to the refit and prints what it buys. None ships yet (the list's comment says why).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from codesearch.eval.offline import ROUTED, QueryLegs, Variant, rank_one
from codesearch.orchestrator.ranking.fusion import FusedHit
from codesearch.v1 import common_pb2

BEFORE_SIGNALS = dataclasses.replace(ROUTED, params=None)  # the routed fusion alone, no ranking signals


def _file(f: FusedHit) -> tuple[str, str]:
    return f.hit.location.repository, f.hit.location.path


def first_file(fused: list[FusedHit], leg: int) -> tuple[str, str] | None:
    """The file of `leg`'s own first hit among the fused candidates (None when the leg found none of them)."""
    ranked = [(s.rank, _file(f)) for f in fused for s in f.leg_scores if s.leg == leg]
    return min(ranked)[1] if ranked else None


def legs_agree(fused: list[FusedHit], when_one_leg: float) -> float:
    """1 when the keyword and vector legs' own first hits are in one file; `when_one_leg` when a leg found none."""
    keyword, vector = first_file(fused, common_pb2.LEG_KEYWORD), first_file(fused, common_pb2.LEG_VECTOR)
    if keyword is None or vector is None:
        return when_one_leg
    return float(keyword == vector)


def _top_file(fused: list[FusedHit]) -> tuple[str, str] | None:
    return _file(fused[0]) if fused else None


def stays_first(
    fused: list[FusedHit], q: QueryLegs, change: Callable[[QueryLegs], QueryLegs], v: Variant
) -> float:
    """1 when the answer's top file is still first once the legs or the query are changed (ranking robustness)."""
    return float(_top_file(rank_one(change(q), v)) == _top_file(fused))


def stays_first_without_each_word(fused: list[FusedHit], q: QueryLegs) -> float:
    """The share of the query's words whose removal (from what routing and the signals read) keeps the top file."""
    words = q.query.split()
    if len(words) < 2:
        return 1.0
    dropped = [" ".join(words[:i] + words[i + 1 :]) for i in range(len(words))]
    top = _top_file(fused)
    kept = [_top_file(rank_one(dataclasses.replace(q, query=t), ROUTED)) == top for t in dropped]
    return sum(kept) / len(kept)


def file_place_before_signals(fused: list[FusedHit], q: QueryLegs) -> float:
    """1 / (1 + the top file's place among the files of the fused list before the signals): 1 when the legs alone
    already put it first, less the further the signals lifted it."""
    files = list(dict.fromkeys(_file(f) for f in rank_one(q, BEFORE_SIGNALS)))
    top = _file(fused[0])
    return 1 / (1 + files.index(top)) if top in files else 0.0


# Features measured beside the shipped ones, each added alone (notes/c15conf2.md). None ships:
# - the two legs' first files agree (a lone leg counted as agreeing or not): grouped CV 0.829 -> 0.850 / 0.852,
#   but the dev set's AUROC fell (0.945 -> 0.905 online), and in the sentence model held-out fell 0.833 -> 0.830;
# - ranking robustness, does the top file stay first without the vector leg, at RRF k 80, without each word:
#   CV +0.005 to +0.014, none past the bootstrap rule;
# - the top file's place before the signals (stop 39, score fusion and the question decay): grouped CV 0.862 ->
#   0.859. With every one of these, a model fitted on the held-out answers themselves reaches 0.790 (print_ceiling).
CANDIDATES: dict[str, Callable[[list[FusedHit], QueryLegs], float]] = {
    "legs_agree": lambda fused, q: legs_agree(fused, when_one_leg=1.0),
    "legs_first_agree": lambda fused, q: legs_agree(fused, when_one_leg=0.0),
    "first_without_vector": lambda fused, q: stays_first(
        fused, q, lambda x: dataclasses.replace(x, vector=[]), ROUTED
    ),
    "first_at_k80": lambda fused, q: stays_first(fused, q, lambda x: x, dataclasses.replace(ROUTED, k=80.0)),
    "first_without_each_word": stays_first_without_each_word,
    "place_before_signals": file_place_before_signals,
}
