"""Does the server's confidence predict a correct top hit? AUROC, expected calibration error, and hit@1 per
confidence bin."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from codesearch.eval.metrics import score_one
from codesearch.eval.runfile import Query

BINS = (0.0, 0.5, 0.7, 0.85, 0.95, 1.0001)  # coarse bins: enough queries in each to read hit@1 from
ECE_BINS = 10  # equal-width bins of the expected calibration error (the usual 10)


def auroc(scores: Sequence[float], labels: Sequence[bool]) -> float | None:
    """Probability that a correct query's confidence ranks above a wrong one's (ties count half)."""
    pos = [s for s, y in zip(scores, labels, strict=True) if y]
    neg = [s for s, y in zip(scores, labels, strict=True) if not y]
    if not pos or not neg:
        return None
    ordered = sorted((s, y) for s, y in zip(scores, labels, strict=True))
    ranks: list[float] = [0.0] * len(ordered)
    i = 0
    while i < len(ordered):  # average ranks over ties
        j = i
        while j + 1 < len(ordered) and ordered[j + 1][0] == ordered[i][0]:
            j += 1
        for k in range(i, j + 1):
            ranks[k] = (i + j) / 2 + 1
        i = j + 1
    pos_rank_sum = sum(r for r, (_, y) in zip(ranks, ordered, strict=True) if y)
    return (pos_rank_sum - len(pos) * (len(pos) + 1) / 2) / (len(pos) * len(neg))


def expected_calibration_error(pairs: Sequence[tuple[float, bool]], n_bins: int = ECE_BINS) -> float | None:
    """How far confidence is from the hit@1 it predicts: over equal-width bins of confidence, the share of
    answers in each bin times |mean confidence - hit@1| there, summed. 0 is calibrated; None for no answers."""
    if not pairs:
        return None
    binned: dict[int, list[tuple[float, bool]]] = {}
    for c, y in pairs:
        binned.setdefault(min(int(c * n_bins), n_bins - 1), []).append((c, y))
    gap = sum(abs(sum(c for c, _ in b) - sum(y for _, y in b)) for b in binned.values())
    return gap / len(pairs)


def calibration(queries: Sequence[Query], runs: Mapping[str, Mapping[str, Any]]) -> dict[str, Any] | None:
    """AUROC of confidence for hit@1, its expected calibration error and the hit@1 of each confidence bin; None
    when the run has no confidence."""
    pairs = []
    for q in queries:
        run = runs.get(q.id)
        if run is None or run.get("confidence") is None:
            continue
        pairs.append((float(run["confidence"]), score_one(q, run)["hit1"] > 0))
    if not pairs:
        return None
    return {
        "auroc": auroc([c for c, _ in pairs], [y for _, y in pairs]),
        "ece": expected_calibration_error(pairs),
        "n": len(pairs),
        "bins": bins(pairs),
    }


def bins(pairs: Sequence[tuple[float, bool]]) -> list[dict[str, Any]]:
    """hit@1 of the (confidence, top hit right) pairs whose confidence falls in each of BINS."""
    out = []
    for lo, hi in zip(BINS, BINS[1:], strict=False):
        inside = [y for c, y in pairs if lo <= c < hi]
        out.append(
            {
                "from": lo,
                "to": min(hi, 1.0),
                "n": len(inside),
                "hit1": sum(inside) / len(inside) if inside else None,
            }
        )
    return out


def format_calibration(name: str, cal: Mapping[str, Any]) -> str:
    a = cal["auroc"]
    lines = [
        f"confidence of {name}: AUROC for a correct top hit {a:.3f} over {cal['n']} queries"
        if a is not None
        else f"confidence of {name}: AUROC undefined (all right or all wrong)"
    ]
    if cal.get("ece") is not None:  # summaries written before it have none
        lines.append(f"  expected calibration error {cal['ece']:.3f}")
    return "\n".join(lines + format_bins(cal["bins"]))


def format_bins(rows: Sequence[Mapping[str, Any]], indent: str = "  ") -> list[str]:
    """One line per confidence bin: how many queries fell in it and their hit@1."""
    out = []
    for b in rows:
        hit = "-" if b["hit1"] is None else f"{b['hit1']:.3f}"
        out.append(f"{indent}confidence {b['from']:.2f}-{b['to']:.2f}: {b['n']:>4} queries, hit@1 {hit}")
    return out
