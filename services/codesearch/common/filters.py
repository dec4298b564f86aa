"""The Search filters (languages, path glob) as one predicate every leg applies to its own results.

An unknown language or an unusable glob is INVALID_ARGUMENT, never a silently empty (or unfiltered) answer.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import pathspec

from codesearch.common.errors import invalid
from codesearch.common.languages import detect_language, known_languages

# A leg without the filter inside its index asks for this many times the hits, then filters (as the keyword
# leg's BM25 does): enough for a glob that keeps a fifth of the files to still fill the page.
OVERSAMPLE = 5
MAX_GLOB_CHARS = 1024  # longer than any path pattern a person writes; bounds the pattern compile


@dataclass(frozen=True)
class FileFilter:
    languages: frozenset[str]
    spec: pathspec.PathSpec | None

    @property
    def active(self) -> bool:
        return bool(self.languages) or self.spec is not None

    def allows(self, path: str, language: str = "") -> bool:
        if self.languages and (language or detect_language(path)).lower() not in self.languages:
            return False
        return self.spec is None or self.spec.match_file(path)


def path_spec(path_glob: str) -> pathspec.PathSpec | None:
    """A request's gitignore-style glob compiled, None for none; INVALID_ARGUMENT naming the field when malformed
    (a lone backslash, say) or too long."""
    if len(path_glob) > MAX_GLOB_CHARS:
        raise invalid(f"path_glob is {len(path_glob)} characters; the limit is {MAX_GLOB_CHARS}")
    try:
        return pathspec.PathSpec.from_lines("gitignore", [path_glob]) if path_glob else None
    except Exception as e:  # pathspec raises several types for a malformed pattern
        raise invalid(f"invalid path_glob {path_glob[:100]!r}: {e}") from None


def file_filter(languages: Iterable[str], path_glob: str) -> FileFilter:
    """The filter of a request; INVALID_ARGUMENT for a language no file can have or a bad glob."""
    wanted = frozenset(lang.lower() for lang in languages if lang)
    unknown = sorted(wanted - set(known_languages()))
    if unknown:
        shown = ", ".join(repr(u[:40]) for u in unknown[:5])
        raise invalid(f"unknown language {shown}; known: {', '.join(known_languages())}")
    return FileFilter(wanted, path_spec(path_glob))
