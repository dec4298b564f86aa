"""Words of code and prose, shared by every part that compares a query's words with a text's.

One definition of "a word" keeps the keyword leg's snippets, the orchestrator's keyword coverage and the context
packer in agreement about which of the query's words a chunk holds.
"""

from __future__ import annotations

from codesearch import _native

MIN_WORD_CHARS = 2  # one-letter tokens ("a", "x") match everywhere and say nothing


def words(text: str) -> set[str]:
    """Lower-cased code tokens (identifiers whole and split into parts) of at least two characters."""
    return {t.lower() for t in _native.code_tokens(text) if len(t) >= MIN_WORD_CHARS}
