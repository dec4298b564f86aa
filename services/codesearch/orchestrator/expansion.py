"""Query expansion for the keyword leg: identifier variants and a few code synonyms, deterministic and capped.

"parse config" also asks for `parse_config` and `parseConfig` (indexed whole, so an exact identifier scores
above scattered words); "auth" also asks for "authentication". Whole words only, case-insensitive.
"""

from __future__ import annotations

from codesearch.common.text import ascii_words

MAX_EXPANSIONS = 8  # more terms dilute BM25's idf weighting more than they add recall
MAX_VARIANT_WORDS = 4  # adjacent-word identifiers longer than this are not how people name things

SYNONYMS: dict[str, tuple[str, ...]] = {
    "auth": ("authentication", "authenticate"),
    "authentication": ("auth",),
    "config": ("configuration", "settings"),
    "configuration": ("config",),
    "settings": ("config",),
    "init": ("initialize",),
    "initialize": ("init",),
    "db": ("database",),
    "database": ("db",),
    "err": ("error",),
    "error": ("err", "exception"),
    "exception": ("error",),
    "delete": ("remove",),
    "remove": ("delete",),
    "dir": ("directory",),
    "directory": ("dir", "folder"),
    "folder": ("directory",),
    "tmp": ("temporary", "temp"),
    "temporary": ("tmp", "temp"),
    "url": ("uri",),
    "msg": ("message",),
    "message": ("msg",),
    "conn": ("connection",),
    "connection": ("conn",),
    "retry": ("retries", "backoff"),
    "args": ("arguments",),
    "arguments": ("args",),
    "param": ("parameter",),
    "parameter": ("param",),
}


def expand(query: str) -> list[str]:
    """Extra terms for the query, in a fixed order, at most MAX_EXPANSIONS; the query itself is not repeated."""
    words = ascii_words(query)
    present = set(words)
    extra: list[str] = []

    def add(term: str) -> None:
        if term not in present and term not in extra and len(extra) < MAX_EXPANSIONS:
            extra.append(term)

    for w in words:
        for s in SYNONYMS.get(w, ()):
            add(s)
    for n in range(2, min(MAX_VARIANT_WORDS, len(words)) + 1):  # pairs first: most identifiers are two words
        for i in range(len(words) - n + 1):
            group = words[i : i + n]
            add("_".join(group))
            add(group[0] + "".join(w.capitalize() for w in group[1:]))
    return extra
