"""An index built incrementally over random edits, deletes and new files answers exactly like one built from scratch."""

from __future__ import annotations

import tempfile
from pathlib import Path

from codesearch._native import TrigramIndex
from hypothesis import given, settings
from hypothesis import strategies as st

# Few distinct words, so files share trigrams and posting lists have many ids to remap.
WORDS = ["def", "parse", "Parser", "cache", "CACHE", "self", "raise", "KeyError", "naïve", "x", "(", ")", ":"]
PATHS = [f"pkg/m{i}.py" for i in range(8)]
PATTERNS = [("cache", False), ("parse", False), ("KeyError", False), ("naïve", False), (r"def \w+", True)]

contents = st.lists(st.lists(st.sampled_from(WORDS), max_size=8).map(" ".join), min_size=0, max_size=6).map(
    lambda lines: "\n".join(lines).encode()
)
# One round: files written (path -> new content, new or existing) and paths deleted.
rounds = st.tuples(
    st.dictionaries(st.sampled_from(PATHS), contents, max_size=3), st.sets(st.sampled_from(PATHS))
)


def answers(index: TrigramIndex) -> dict[tuple[str, bool, bool], set[tuple[str, int, str]]]:
    """Every pattern's matches (path, line, text), case-sensitive and not, as sets (ids may differ)."""
    out = {}
    for pattern, is_regex in PATTERNS:
        for case_sensitive in (True, False):
            result = index.search(pattern, is_regex, case_sensitive, 10_000)
            out[(pattern, is_regex, case_sensitive)] = {(m.path, m.line, m.text) for m in result.matches}
    return out


@settings(max_examples=40, deadline=None)
@given(
    initial=st.dictionaries(st.sampled_from(PATHS), contents), edits=st.lists(rounds, min_size=1, max_size=6)
)
def test_incremental_equals_scratch(
    initial: dict[str, bytes], edits: list[tuple[dict[str, bytes], set[str]]]
) -> None:
    with tempfile.TemporaryDirectory(prefix="cs-trigram-inc-") as tmp:
        root = Path(tmp)
        dirs = iter(range(1_000))

        def fresh_dir() -> str:
            d = root / str(next(dirs))
            d.mkdir()
            return str(d)

        expected = dict(initial)
        index = TrigramIndex.build(fresh_dir(), sorted(initial.items()))
        for written, deleted in edits:
            drop = sorted(deleted - set(written))
            index = TrigramIndex.build(fresh_dir(), sorted(written.items()), index, drop)
            for p in drop:
                expected.pop(p, None)
            expected.update(written)
            scratch = TrigramIndex.build(fresh_dir(), sorted(expected.items()))
            assert sorted(index.paths()) == sorted(expected)
            assert all(index.content(p) == data for p, data in expected.items())
            assert index.postings_bytes() == scratch.postings_bytes()
            assert answers(index) == answers(scratch)
