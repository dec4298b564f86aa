"""Query-focused snippets: the window of a chunk with the query's words, and the lines that match."""

from __future__ import annotations

from codesearch.common.text import words
from codesearch.keyword.snippet import focus

CLASS_CHUNK = '''class Mailbox:
    """A group of messages."""

    def add(self, message):
        """Add message and return assigned key."""
        raise NotImplementedError

    def get_visible(self):
        """Return a Message representation of visible headers."""
        return self._visible
'''


def test_the_window_holds_the_matching_docstring_not_the_class_header() -> None:
    q = words("Return a Message representation of visible headers.")
    start, end, matching = focus(CLASS_CHUNK.split("\n"), 40, q, window=3)
    lines = CLASS_CHUNK.split("\n")[start:end]
    assert any("representation of visible headers" in line for line in lines), lines
    assert lines[1].strip() == "def get_visible(self):"  # the window starts one line above its first match
    assert {47, 48}.issubset(matching) and 40 not in matching  # absolute numbers; none on the class line


def test_no_match_keeps_the_head_and_short_chunks_fit() -> None:
    assert focus(CLASS_CHUNK.split("\n"), 1, words("tcp socket timeout"), window=4)[:2] == (0, 4)
    assert focus(["x = 1"], 7, words("x value"), window=6) == (0, 1, [])
    assert words("parseConfig of a") == {"parseconfig", "parse", "config", "of"}
