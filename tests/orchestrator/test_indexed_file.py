"""A file as the legs receive it: each chunk carries the text the embedding model reads, made beside the chunk."""

from __future__ import annotations

from codesearch.common.doc_text import doc_text
from codesearch.orchestrator.indexed_file import index_file

SOURCE = b'''"""Settings."""


class Config:
    """Where the settings come from."""

    def load(self, path):
        """Read the file at path."""
        return parse(path)
'''


def test_every_chunk_carries_the_vector_legs_doc_text() -> None:
    indexed, parsed = index_file("repo", "pkg/config.py", SOURCE)
    assert parsed is not None and indexed.chunks
    for c in indexed.chunks:
        # The vector leg would make exactly this text (vector/store.py uses it when present).
        assert c.doc_text == doc_text(c.path, c.text, list(c.breadcrumb), c.symbol)
        assert "config" in c.doc_text  # the path words lead it
