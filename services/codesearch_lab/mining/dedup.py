"""Exact and near-duplicate code across every package, kept in the run's SQLite state so a resume sees it.

Exact: the hash of the code with whitespace runs folded. Near: MinHash over token 5-grams (datasketch's MinHash
where it is installed, else the small one below), banded for LSH; a band collision is a candidate, and a
candidate is a duplicate when the signatures agree on at least NEAR_THRESHOLD of their positions. Entries with a
negative id are blocked code (the CPython standard library, see `block`): a match drops the pair.
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
from collections.abc import Iterable

import numpy as np

NUM_PERM = 64  # 64 permutations estimate a Jaccard of 0.8 within +-0.05, at 256 bytes a pair
BANDS = 8  # 8 bands of 8 rows: collision probability 0.5 at Jaccard ~0.77, the threshold we verify
ROWS = NUM_PERM // BANDS
NEAR_THRESHOLD = 0.8  # Jaccard of token 5-grams past which two snippets are the same code lightly edited
SHINGLE_TOKENS = 5  # 5-grams: shorter ones make unrelated code with shared idioms look alike
MAX_CANDIDATES = 20  # per band: boilerplate buckets hold thousands; the first few decide
MERSENNE = (1 << 61) - 1
MAX_HASH = (1 << 32) - 1
TOKEN = re.compile(r"\w+|[^\w\s]")

try:
    from datasketch import MinHash as _DatasketchMinHash

    ENGINE = "datasketch"
except ImportError:  # pragma: no cover - depends on the environment
    _DatasketchMinHash = None
    ENGINE = "builtin"


def normalise(code: str) -> str:
    return " ".join(code.split())


def exact_key(code: str) -> bytes:
    return hashlib.blake2b(normalise(code).encode("utf-8", "replace"), digest_size=16).digest()


def shingles(code: str) -> list[bytes]:
    tokens = TOKEN.findall(code)
    if len(tokens) <= SHINGLE_TOKENS:
        return [" ".join(tokens).encode()]
    return list(
        {" ".join(tokens[i : i + SHINGLE_TOKENS]).encode() for i in range(len(tokens) - SHINGLE_TOKENS + 1)}
    )


class BuiltinMinHash:
    """datasketch's scheme (32-bit hashes, universal hashing modulo a Mersenne prime), hand-written."""

    def __init__(self, seed: int) -> None:
        gen = np.random.RandomState(seed)
        self.a = gen.randint(1, MERSENNE, size=NUM_PERM, dtype=np.uint64)
        self.b = gen.randint(0, MERSENNE, size=NUM_PERM, dtype=np.uint64)

    def signature(self, items: list[bytes]) -> np.ndarray:
        hv = np.array(
            [int.from_bytes(hashlib.blake2b(x, digest_size=4).digest(), "little") for x in items],
            dtype=np.uint64,
        )
        with np.errstate(over="ignore"):
            phv = ((np.outer(hv, self.a) + self.b) % np.uint64(MERSENNE)) & np.uint64(MAX_HASH)
        return np.asarray(phv.min(axis=0), dtype=np.uint32)


class Hasher:
    """MinHash signatures of code: uint32[NUM_PERM]."""

    def __init__(self, seed: int, engine: str = ENGINE) -> None:
        self.seed = seed
        self.engine = engine if _DatasketchMinHash is not None else "builtin"
        self._builtin = BuiltinMinHash(seed)

    def signature(self, code: str) -> np.ndarray:
        items = shingles(code)
        if self.engine == "datasketch" and _DatasketchMinHash is not None:
            m = _DatasketchMinHash(num_perm=NUM_PERM, seed=self.seed)
            m.update_batch(items)
            return np.asarray(m.hashvalues, dtype=np.uint32)
        return self._builtin.signature(items)


def band_keys(sig: np.ndarray) -> list[bytes]:
    return [
        bytes([i]) + hashlib.blake2b(sig[i * ROWS : (i + 1) * ROWS].tobytes(), digest_size=8).digest()
        for i in range(BANDS)
    ]


SCHEMA = """
CREATE TABLE IF NOT EXISTS exact (key BLOB PRIMARY KEY, pair INTEGER) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS band (key BLOB, pair INTEGER);
CREATE INDEX IF NOT EXISTS band_key ON band (key);
CREATE TABLE IF NOT EXISTS sig (pair INTEGER PRIMARY KEY, sig BLOB);
"""


class Index:
    """The dedup index inside a run's database; writes join the caller's transaction (commit is theirs)."""

    def __init__(self, db: sqlite3.Connection, hasher: Hasher) -> None:
        self.db = db
        self.hasher = hasher
        db.executescript(SCHEMA)

    def check_and_add(self, pair_id: int, code: str) -> str:
        """'exact', 'near', 'blocked' (matches blocked code), or 'new' (then recorded under pair_id)."""
        key = exact_key(code)
        row = self.db.execute("SELECT pair FROM exact WHERE key = ?", (key,)).fetchone()
        if row is not None:
            return "blocked" if row[0] < 0 else "exact"
        sig = self.hasher.signature(code)
        bands = band_keys(sig)
        for band in bands:
            for (other,) in self.db.execute(
                "SELECT pair FROM band WHERE key = ? LIMIT ?", (band, MAX_CANDIDATES)
            ).fetchall():
                got = self.db.execute("SELECT sig FROM sig WHERE pair = ?", (other,)).fetchone()
                if got is None:
                    continue
                similar = float(np.mean(np.frombuffer(got[0], dtype=np.uint32) == sig))
                if similar >= NEAR_THRESHOLD:
                    return "blocked" if other < 0 else "near"
        self.db.execute("INSERT INTO exact (key, pair) VALUES (?, ?)", (key, pair_id))
        self.db.executemany("INSERT INTO band (key, pair) VALUES (?, ?)", [(b, pair_id) for b in bands])
        self.db.execute("INSERT INTO sig (pair, sig) VALUES (?, ?)", (pair_id, sig.tobytes()))
        return "new"

    def block(self, codes: Iterable[str]) -> int:
        """Records code no pair may repeat (ids below zero); returns how many entries were added."""
        row = self.db.execute("SELECT MIN(pair) FROM sig").fetchone()
        next_id = min(-1, (row[0] or 0) - 1)
        added = 0
        for code in codes:
            if self.check_and_add(next_id, code) == "new":
                next_id -= 1
                added += 1
        return added
