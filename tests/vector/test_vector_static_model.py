"""A document's head (vector/static_model.py document_head): the first lines of its structured text, which late
interaction re-scores the static tier's candidates with (vector/late_interaction.py)."""

from __future__ import annotations

from codesearch.vector.static_model import HEAD_LINES, document_head

# A structured document text (common/doc_text.py): path words | breadcrumb, signature, docstring, names, body.
DOCUMENT = "\n".join(
    [
        "shutil | rmtree",
        "def rmtree(path, ignore_errors=False, onerror=None):",
        "Recursively delete a directory tree.",
        "path ignore errors onerror scandir unlink rmdir",
        "if ignore_errors:",
        "    def onerror(*args): pass",
        "stack = [os.scandir(path)]",
        "while stack:",
        "    entry = stack.pop()",
        "    os.unlink(entry.path)",
        "os.rmdir(path)",
    ]
)


def test_the_head_is_the_first_lines() -> None:
    assert document_head(DOCUMENT).split("\n") == DOCUMENT.split("\n")[:HEAD_LINES]
    assert document_head("one line") == "one line"
