"""Two static models over one tokenizer answering as one: their cosines blended per chunk.

The distilled model (static_model.py) ranks lexically: the chunks that share the query's words, which the
ranking's path-word signals build on. A model trained with the transformer as teacher (static_train.py) ranks
like its teacher: topical chunks of many files, better for paraphrased questions, worse for "how is X built"
questions whose answer is one central file (issue #16, notes). A blend keeps both: a text's vector is the two
models' unit vectors side by side,

    v = [sqrt(w) * a, sqrt(1 - w) * b],   so   v . v' = w * cos_a + (1 - w) * cos_b,

a unit vector whose inner product is the weighted mean of the two cosines, stored and searched like any other
static vector (twice the dimensions). Both models tokenise alike (the trained one is the distilled one's table
moved), so a text is tokenised once and both tables are averaged in one pass.

Named `FIRST|SECOND` in CODESEARCH_STATIC_MODEL (`FIRST|SECOND@W` to weight FIRST by W instead of
DEFAULT_WEIGHT), each part any static model name (a folder, a hub name, a transformer to distil, `BASE+DELTA`).
"""

from __future__ import annotations

import math
from pathlib import Path

SEPARATOR = "|"
WEIGHT_MARK = "@"
# FIRST's share of the cosine when the name gives none: even. No weight (0.2-0.8) beat the better model alone on
# the polyglot FIT half (README "Vector tiers"), so none is fitted.
DEFAULT_WEIGHT = 0.5


def mode_blend_name(routed: str, semantic: str) -> str:
    """The static tier's model when `semantic` mode scores with another model than routed `auto` (vector/
    mode_models.py): the blend of both, routed first; the routed model alone when they are the same. The weight
    is the default one: each mode scores with one part exactly, so it changes no answer."""
    if not semantic or semantic == routed:
        return routed
    return f"{routed}{SEPARATOR}{semantic}"


def split_name(name: str) -> tuple[str, str, float] | None:
    """(first, second, first's weight) for a blend name, else None (a folder's own name is never split).
    ValueError for a blend whose parts or weight are unusable."""
    if SEPARATOR not in name or Path(name).expanduser().is_dir():
        return None
    first, rest = name.split(SEPARATOR, 1)
    second, mark, weight_text = rest.rpartition(WEIGHT_MARK) if WEIGHT_MARK in rest else (rest, "", "")
    if not first or not second or SEPARATOR in second:
        raise ValueError(f"a static blend is FIRST{SEPARATOR}SECOND[{WEIGHT_MARK}W]; got {name!r}")
    weight = DEFAULT_WEIGHT
    if mark:
        try:
            weight = float(weight_text)
        except ValueError:
            weight = math.nan
        if not 0.0 < weight < 1.0:
            raise ValueError(f"the weight of static blend {name!r} must be a number between 0 and 1")
    return first, second, weight


def segments(first_dims: int, second_dims: int, weight: float) -> list[tuple[int, int, float]]:
    """(start, end, scale) of each model's part of a blended vector (FIRST's values, then SECOND's)."""
    end = first_dims + second_dims
    return [(0, first_dims, math.sqrt(weight)), (first_dims, end, math.sqrt(1.0 - weight))]
