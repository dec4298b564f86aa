"""The committed generated code must match what the .proto files produce now."""

from __future__ import annotations

from pathlib import Path

from codesearch.tools.gen_proto import REPO_ROOT, generate


def test_generated_code_is_fresh(tmp_path: Path) -> None:
    fresh = {p.name: p.read_bytes() for p in generate(tmp_path) if p.is_file()}
    committed_dir = REPO_ROOT / "services" / "codesearch" / "v1"
    committed = {p.name: p.read_bytes() for p in committed_dir.iterdir() if p.is_file()}
    stale = sorted(name for name in fresh if committed.get(name) != fresh[name])
    missing = sorted(set(committed) - set(fresh))
    assert not stale and not missing, (
        f"generated code is stale ({stale}) or has extra files ({missing}): "
        "run `python -m codesearch.tools.gen_proto`"
    )
