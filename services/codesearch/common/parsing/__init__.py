"""One parse per file, shared by the chunker and the graph: definitions, calls and imports of one file.

extract(path, language, source) -> Extraction | None. The languages with their own module (an import reader in
code) are listed in _SPECS; the others are query tables in `tables.py`.
"""

from __future__ import annotations

import importlib
import logging

from codesearch.common.parsing.engine import LanguageSpec, run
from codesearch.common.parsing.macros import MacroTable
from codesearch.common.parsing.model import CallSite, Definition, Extraction, ImportRef
from codesearch.common.parsing.tables import SPECS as TABLES

__all__ = [
    "CallSite",
    "Definition",
    "Extraction",
    "ImportRef",
    "extract",
    "supported_languages",
    "python_module",
]

log = logging.getLogger(__name__)

# Bumped when what a parse yields changes (queries, grammars, recovery): the indexer then re-parses every file.
# 2: 26 languages from query tables, C-family preprocessor recovery, newer Swift/Scala/Bash grammars.
# 3: more C-family macro forms blanked (wrapped declarations, va_arg types, continuation-line attributes, ...).
# 4: the project's attribute-like macros (macros.py) and C++ forms the grammar lacks (preprocess.rewrite_cpp_gaps).
# 5: error-located repair of macro invocations (repair.py), string and statement-head macros, more C++ rewrites.
# 6: C++ operators defined out of class are named after the operator (`X::operator<<`, was `operator`).
# 7: C++ members returning a reference or pointer (`A& operator=`, `T* data()`) and conversion operators are
#    definitions; `operator()(x)` called by name is a call of `operator()`.
# 8: C-family `#if` conditionals whose branches each hold whole declarations keep every branch (conditionals.py).
PARSER_VERSION = 8

# language name -> (module, attribute holding its LanguageSpec)
_SPECS: dict[str, tuple[str, str]] = {
    "python": ("python", "SPEC"),
    "javascript": ("javascript", "JAVASCRIPT"),
    "typescript": ("javascript", "TYPESCRIPT"),
    "tsx": ("javascript", "TSX"),
    "go": ("go", "SPEC"),
    "rust": ("rust", "SPEC"),
    "java": ("java", "SPEC"),
    "c": ("c_family", "C"),
    "cpp": ("c_family", "CPP"),
    "ruby": ("ruby", "SPEC"),
    "csharp": ("csharp", "SPEC"),
    "php": ("php", "SPEC"),
}
_loaded: dict[str, LanguageSpec | None] = {}


def _spec(language: str) -> LanguageSpec | None:
    if language not in _loaded:
        entry = _SPECS.get(language)
        spec = TABLES.get(language)
        if entry is not None:
            try:
                spec = getattr(importlib.import_module(f"codesearch.common.parsing.{entry[0]}"), entry[1])
            except ImportError as e:  # grammar wheel missing: the language is simply not extracted
                log.warning("no grammar for %s: %s", language, e)
        _loaded[language] = spec
    return _loaded[language]


def supported_languages() -> list[str]:
    return sorted(set(_SPECS) | set(TABLES))


def python_module(path: str) -> str:
    """Dotted module name of a Python file path relative to the repository root ("email/utils.py" -> "email.utils")."""
    p = path[:-4] if path.endswith(".pyi") else path[:-3] if path.endswith(".py") else path
    parts = p.split("/")
    if parts and parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def uses_macros(language: str) -> bool:
    """Whether the project's macro table applies to this language's files (the C preprocessor runs on them)."""
    spec = _spec(language)
    return spec is not None and spec.preprocessed


def extract(path: str, language: str, source: bytes, macros: MacroTable | None = None) -> Extraction | None:
    """Definitions, calls and imports of one file; None when there is no grammar for `language`.

    Never raises on bad input: syntax errors are recovered from and counted in `error_count`. `macros`: the
    project's attribute-like macros (macros.collect over its headers), for C, C++ and Objective-C.
    """
    spec = _spec(language)
    if spec is None:
        return None
    try:
        result = run(spec, path, source, macros)
    except Exception:  # a grammar or query bug must not take the indexer down with it
        log.exception("extraction failed for %s (%s)", path, language)
        return Extraction(path=path, language=language, error_count=1)
    if language == "python":
        result.module = python_module(path)
    return result
