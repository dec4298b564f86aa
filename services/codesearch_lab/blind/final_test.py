"""The final test: projects drawn once by a seeded random draw, that no fit and no choice ever reads.

The draw is recorded in blind-manifest.json ("final_test": {"seed", "projects"}) and never redrawn: a second
draw would let a choice see the first one's projects. `codesearch eval` leaves these projects out of every
cross-validated figure and reads them only with `--final-test`, once per change that claims a gain.
"""

from __future__ import annotations

import random
from typing import Any

FINAL_TEST_SIZE = 10  # the evaluation issue: 10 of the blind projects


def draw(manifest: dict[str, Any], seed: int, count: int = FINAL_TEST_SIZE) -> list[str]:
    """Draws `count` project names (sorted), records them in the manifest; ValueError when already drawn."""
    if manifest.get("final_test", {}).get("projects"):
        raise ValueError(
            f"the final test was drawn already (seed {manifest['final_test'].get('seed')}): never redraw"
        )
    names = sorted(str(p["name"]) for p in manifest["projects"])
    if count >= len(names):
        raise ValueError(f"cannot keep {count} of {len(names)} projects as a final test")
    chosen = sorted(random.Random(seed).sample(names, count))
    manifest["final_test"] = {"seed": seed, "projects": chosen}
    return chosen
