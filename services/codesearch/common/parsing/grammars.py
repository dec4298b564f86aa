"""Where each grammar comes from: its own wheel where that one is newer and better, else the language pack."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Unpack

from codesearch.common.parsing.engine import LanguageSpec, SpecOptions

if TYPE_CHECKING:
    from tree_sitter_language_pack import SupportedLanguage

# Grammars whose own wheel is newer than the pack's copy and parses more of the polyglot set without errors
# (files with errors, pack -> wheel: alamofire 9 -> 3 of 43, cats 2 -> 0 of 206, bats-core 1 -> 0 of 8).
# tree-sitter-kotlin 1.1.0 is a different grammar (other node names) and fails on `companion object`: not used.
WHEELS = {"swift": "tree_sitter_swift", "scala": "tree_sitter_scala", "bash": "tree_sitter_bash"}


def grammar(name: SupportedLanguage) -> Callable[[], object]:
    """A loader of the named grammar (the pack's name for it: "swift", "proto", "make", ...)."""

    def load() -> object:
        wheel = WHEELS.get(name)
        if wheel is not None:
            try:
                return importlib.import_module(wheel).language()
            except ImportError:
                pass  # the pack's copy of the grammar serves
        from tree_sitter_language_pack import get_language  # imported on first use: loading it costs ~50 ms

        return get_language(name)

    return load


def spec(
    name: str, grammar_name: SupportedLanguage, query: str, **options: Unpack[SpecOptions]
) -> LanguageSpec:
    """A language's spec with its query and engine options (see engine.LanguageSpec)."""
    return LanguageSpec(name=name, load=grammar(grammar_name), query=query, **options)
