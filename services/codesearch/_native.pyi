"""Type stubs for the Rust extension module codesearch._native (native/ in the repository)."""

class GrepMatch:
    """One matching line."""

    path: str  # file path as given at build time
    line: int  # 1-based line number
    text: str  # the whole line, without its newline (lossy UTF-8)
    score: float  # see native/src/trigram/score.rs for the formula
    match_count: int  # matches on this line
    whole_word: bool  # a match is bounded by non-identifier characters
    definition_line: bool  # the line looks like a definition (def/class/fn/func/struct/...)

class GrepResult:
    matches: list[GrepMatch]  # best first, at most `limit`
    candidate_files: int  # files admitted by the trigram filter
    total_files: int  # files in the index (or in `allowed`)
    full_scan: bool  # no trigram could be required: every file was verified

class CancelToken:
    """Stops the native calls it is passed to: cancel() from any thread; they raise InterruptedError."""

    def __init__(self) -> None: ...
    def cancel(self) -> None: ...
    @property
    def cancelled(self) -> bool: ...

class TrigramIndex:
    """A per-repository trigram index on disk: postings (trigram -> file ids) plus a content store."""

    @staticmethod
    def build(
        dir: str,
        files: list[tuple[str, bytes]],
        base: TrigramIndex | None = None,
        drop: list[str] | None = None,
    ) -> TrigramIndex:
        """Writes a new index into `dir` (which must exist and be empty) and opens it.

        The index holds `files` plus every file of `base` whose path is neither in `drop` nor in `files`
        (kept base files first, in base order, then `files` in order). Files are fsynced, then the directory;
        the caller switches generations atomically. Releases the GIL while building.
        Raises ValueError for a non-empty `dir` or a path repeated in `files`, OSError for I/O failures.
        """
    @staticmethod
    def open(dir: str) -> TrigramIndex:
        """Opens an index written by build(); memory-maps its files.

        Raises OSError (FileNotFoundError...) when a file is missing, ValueError ("corrupt trigram index: ...")
        when a header, table or offset is damaged.
        """
    def num_files(self) -> int: ...
    def paths(self) -> list[str]:
        """Paths in file-id order."""
    def content(self, path: str) -> bytes | None:
        """The stored bytes of one file, or None."""
    def lines(self, path: str, first: int, last: int) -> bytes | None:
        """Lines first..last (1-based) of one file, as `content.split(b"\\n")[first - 1:last]` joins them; None
        for a path the index does not hold."""
    def search(
        self,
        pattern: str,
        is_regex: bool,
        case_sensitive: bool,
        limit: int,
        allowed: list[int] | None = None,
        timeout_s: float | None = None,
        cancel: CancelToken | None = None,
    ) -> GrepResult:
        """Literal or regex search. Raises ValueError with the position for an invalid regex or one over the size limit.

        Planning is bounded in the pattern's length (at most 64 required trigrams per And, native/src/trigram/
        query.rs). `timeout_s` (from now) and `cancel` bound the rest: every loop looks at them and the call
        raises TimeoutError once the time is up, InterruptedError once `cancel` is cancelled.

        Regexes use Rust `regex` syntax in multi-line mode; a case-insensitive literal is matched as an escaped
        `(?i)` regex (Unicode case folding). A match belongs to the line where it starts. An empty pattern is a
        ValueError. `allowed`: file ids to restrict to (None = all; an id >= num_files() is a ValueError).
        Releases the GIL while searching.
        """
    def postings_bytes(self) -> int:
        """Size on disk of the trigram postings (without the content store)."""
    def content_bytes(self) -> int:
        """Size on disk of the content store."""

def fuse(lists: list[list[str]], weights: list[float], k: float) -> list[tuple[str, float, list[int]]]:
    """Weighted reciprocal rank fusion: score(id) = sum_i weights[i] / (k + rank_i + 1), rank 0-based.

    Returns (id, score, ranks) best first, ranks[i] = -1 where list i lacks the id; an id repeated in one
    list counts at its first rank. Ties break by the best (lowest) rank in any list, then by id, so the order
    is deterministic. Raises ValueError when len(weights) != len(lists), k is negative or not finite, or a
    weight is negative or not finite. Same result as tests/native/rrf_reference.py fuse_reference.
    """

def fuse_compact(
    lists: list[list[str]], weights: list[float], k: float
) -> tuple[list[str], list[float], bytes]:
    """fuse() with a compact result: (ids, scores, ranks), ids best first (the caller's own str objects).

    scores[i] is the score of ids[i]; ranks is a flat little-endian int32 table of len(ids) * len(lists)
    bytes * 4, row i = the ranks of ids[i] in each list, -1 where a list lacks it (read it with
    memoryview(ranks).cast("i")). Same semantics, tie-break and errors as fuse() (both raise ValueError for a
    list over 2**31 - 1 ids). Builds no per-id tuples or rank lists, so it costs about half of fuse().
    Releases the GIL only for large inputs (100,000 entries or more), where fusion outlasts the cost of
    getting the GIL back.
    Same result as tests/native/rrf_reference.py fuse_compact_reference.
    """

def requires_trigrams(pattern: str, is_regex: bool, case_sensitive: bool) -> bool:
    """Whether a search for the pattern is narrowed by the index (False: every file is read, a full scan).
    Plans without compiling the regex (microseconds); ValueError for an invalid pattern, as search() raises."""

def code_tokens(text: str) -> list[str]:
    """Code-aware tokens, lower-cased: every identifier whole, plus its camelCase/PascalCase/snake_case/digit parts.

    Single-letter parts are dropped, digit parts kept; numbers and non-ASCII words are kept whole only
    (rules in native/src/tokens.rs).
    """

def code_tokens_joined(texts: list[str]) -> list[str]:
    """code_tokens for many texts, each joined with single spaces (for a whitespace tokenizer). Releases the GIL."""
