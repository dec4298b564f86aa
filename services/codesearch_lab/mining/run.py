"""The mining run: units in order, pairs deduplicated, sharded gzip JSONL, progress, resume and a manifest.

State lives in OUT/state.sqlite: the units finished (done, failed, refused, skipped), the shards written and the
dedup index. Pairs are buffered and written as one shard at a time: the shard goes to `NAME.tmp`, then one
transaction records the shard, the units whose pairs it holds and their dedup entries, then the `.tmp` is
renamed. A resume renames a recorded `.tmp` that was not yet renamed and deletes one that was not recorded (its
units are mined again), so every `pairs-*.jsonl.gz` is a complete gzip file, readable while the run goes on, and
no pair is written twice. SIGTERM or SIGINT flush the buffer before the process ends.
"""

from __future__ import annotations

import fcntl
import gzip
import hashlib
import json
import os
import shutil
import signal
import sqlite3
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

from codesearch_lab import excluded
from codesearch_lab.blind import fetch
from codesearch_lab.mining import dedup, extract, sources

DEFAULT_OUT = Path.home() / ".cache" / "codesearch" / "mining"  # beside the model cache; a big disk: --out
DEFAULT_SEED = 20261207
SHARD_PAIRS = 20_000  # pairs per shard: ~10-20 MB of gzip, a size a trainer streams without thinking
FLUSH_SECONDS = 300.0  # a partial shard is written after this long, so early pairs reach the trainer soon
PROGRESS_SECONDS = 30.0  # how often the progress line and progress.json are refreshed
UNIT_SECONDS = 300.0  # one package's extraction stops reading files after this long (its pairs so far kept)
FILE_SECONDS = 20.0  # one file's parse is abandoned after this long (the C-family repair loop on a rare file)
MAX_ARCHIVE_BYTES = 200 * 1024 * 1024  # a fetched archive past this is skipped: a data or binary bundle
DEFAULT_TARGET = 500_000  # pairs the full run aims at (issue 43): the ETA is reported against it
MAX_README_FILES = 20  # READMEs read per package (a monorepo's per-folder READMEs)
STDLIB_BLOCK_KEY = "block:cpython-stdlib"
RECORD_FIELDS = {
    "id": "stable id: blake2b of unit key, path, symbol, kind and code (hex, 16 bytes)",
    "kind": "docstring | doc_comment | file_header | readme_section",
    "description": "the cleaned first paragraph of the docstring, comment or README section (bounded)",
    "code": "the definition or file it documents, the comment or docstring removed (bounded)",
    "language": "codesearch's language name (python, javascript, typescript, tsx, go, rust, java, kotlin, ...)",
    "path": "the file, relative to the package's root",
    "symbol": "qualified name of the definition, '' for file and README pairs",
    "package": "the registry's name of the package",
    "registry": "pypi | npm | crates | go | go-std | maven | debian | rust-std",
    "version": "the package's version",
    "licence": "from the package's metadata or licence file, else 'unknown'",
    "source": "local (already on this machine) or fetched (through the registry's client)",
}


class Interrupted(Exception):
    """SIGTERM or SIGINT arrived: the current unit is abandoned (mined again on resume)."""


class FileTimeout(BaseException):
    """One file's extraction ran past FILE_SECONDS (a BaseException: the parser's own `except Exception` lets it by)."""


def _on_alarm(signum: int, frame: FrameType | None) -> None:
    raise FileTimeout


def file_pairs_bounded(
    rel: str, language: str, text: str, seconds: float = FILE_SECONDS
) -> list[extract.Pair]:
    """extract.file_pairs, abandoned with FileTimeout after `seconds` (SIGALRM; main thread only)."""
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        return extract.file_pairs(rel, language, text)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@dataclass
class Options:
    out: Path = DEFAULT_OUT
    seed: int = DEFAULT_SEED
    target: int = DEFAULT_TARGET
    local: bool = True
    fetched: bool = True
    block_stdlib: bool = True
    max_units: int = 0  # 0: no limit
    lists: Path = sources.PACKAGE_LISTS
    command: list[str] = field(default_factory=lambda: list(sys.argv))
    shard_pairs: int = SHARD_PAIRS
    flush_seconds: float = FLUSH_SECONDS


SCHEMA = """
CREATE TABLE IF NOT EXISTS units (key TEXT PRIMARY KEY, status TEXT, reason TEXT, info TEXT, stats TEXT,
                                  shard INTEGER, finished REAL);
CREATE TABLE IF NOT EXISTS shards (idx INTEGER PRIMARY KEY, name TEXT, pairs INTEGER, sha256 TEXT);
CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT);
"""


def _atomic_write(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def pair_id(unit_key: str, p: extract.Pair) -> str:
    h = hashlib.blake2b(digest_size=16)
    for part in (unit_key, p.path, p.symbol, p.kind, p.code):
        h.update(part.encode("utf-8", "replace") + b"\0")
    return h.hexdigest()


@dataclass
class UnitResult:
    pairs: list[extract.Pair]
    files: int = 0
    bytes: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    sha256: str = ""
    licence: str = ""
    archive: str = ""


def _source_files(
    unit: sources.Unit, root: Path, refuse: excluded.Excluded, skipped: Counter[str]
) -> Iterator[tuple[str, Path]]:
    if unit.files:
        for rel in unit.files:
            yield rel, root / rel
    else:
        yield from sources.walk(root, refuse, skipped)


def mine_folder(
    unit: sources.Unit,
    root: Path,
    refuse: excluded.Excluded,
    stop: Callable[[], bool] = lambda: False,
    unit_seconds: float = UNIT_SECONDS,
) -> UnitResult:
    """Every pair of one unpacked package, with its bounds and counted skip reasons."""
    result = UnitResult([])
    began = time.monotonic()
    known: dict[str, str] = {}  # relative path -> language, for README sections
    readmes: list[str] = []
    for rel, path in _source_files(unit, root, refuse, result.skipped):
        if stop():
            raise Interrupted
        if sources.vendored_refusal(rel, refuse):
            result.skipped["refused vendored folder"] += 1
            continue
        if sources.README_NAMES.match(path.name) and path.suffix.lower() in (".md", ".markdown", ""):
            if len(readmes) < MAX_README_FILES:
                readmes.append(rel)
            continue
        language = sources.language_of(path)
        if not language or not path.is_file():
            continue
        if sources.forbidden(path):
            result.skipped["forbidden path"] += 1
            continue
        if result.files >= sources.MAX_UNIT_FILES or result.bytes >= sources.MAX_UNIT_BYTES:
            result.skipped["package bound (files or bytes)"] += 1
            continue
        if time.monotonic() - began > unit_seconds:
            result.skipped["package time bound"] += 1
            continue
        text = sources.read_source(path, result.skipped)
        if text is None:
            continue
        result.files += 1
        result.bytes += len(text)
        known[rel] = language
        try:
            result.pairs.extend(file_pairs_bounded(rel, language, text))
        except FileTimeout:
            result.skipped["file time bound"] += 1
        except (RecursionError, ValueError, MemoryError) as e:
            result.skipped[f"extraction error ({type(e).__name__})"] += 1
    for rel in readmes:
        text = sources.read_source(root / rel, result.skipped)
        if text is None:
            continue

        def read(named: str) -> str | None:
            return sources.read_source(root / named, Counter())

        result.pairs.extend(extract.readme_pairs(rel, text, known, read))
    return result


def _single_top(folder: Path) -> Path:
    entries = [p for p in folder.iterdir() if not p.name.startswith(".")]
    return entries[0] if len(entries) == 1 and entries[0].is_dir() else folder


def mine_unit(
    unit: sources.Unit, out: Path, refuse: excluded.Excluded, stop: Callable[[], bool] = lambda: False
) -> UnitResult:
    """A local unit read in place; a registry unit downloaded (cached), unpacked in OUT/work, mined, removed."""
    if unit.source == "local":
        return mine_folder(unit, Path(unit.root), refuse, stop)
    safe = "".join(
        c if c.isalnum() or c in "-_." else "_" for c in f"{unit.registry}-{unit.package}-{unit.version}"
    )
    project = fetch.Project(
        name=safe, language=unit.language, registry=unit.registry, package=unit.package, version=unit.version,
        root=".", url="", licence="", annotations="",
    )  # fmt: skip
    archive = fetch.download(project, out / "archives")
    size = archive.stat().st_size
    if size > MAX_ARCHIVE_BYTES:
        raise fetch.FetchError(
            f"archive {archive.name} is {size >> 20} MiB (bound {MAX_ARCHIVE_BYTES >> 20} MiB)"
        )
    work = out / "work" / safe
    try:
        fetch.unpack(archive, work)
        root = _single_top(work)
        result = mine_folder(unit, root, refuse, stop)
        result.licence = sources.licence_in_folder(root)
        if result.licence == "unknown" and root != work:
            result.licence = sources.licence_in_folder(work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    result.sha256 = fetch.sha256_of(archive)
    result.archive = archive.name
    return result


class Run:
    """One run over OUT; `main()` mines every unit not done yet."""

    def __init__(
        self, opts: Options, refuse: excluded.Excluded | None = None, log: Callable[[str], None] | None = None
    ):
        self.opts = opts
        self.out = opts.out
        (self.out / "shards").mkdir(parents=True, exist_ok=True)
        self.refuse = refuse if refuse is not None else excluded.load_all()
        self._logfile = open(self.out / "mining.log", "a", encoding="utf-8")  # noqa: SIM115 - closed in close()
        self._log_extra = log
        self.db = sqlite3.connect(self.out / "state.sqlite", isolation_level="DEFERRED")
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.executescript(SCHEMA)
        self.index = dedup.Index(self.db, dedup.Hasher(opts.seed))
        self.db.commit()
        self.stopping = False
        self.buffer: list[dict[str, Any]] = []
        self.pending: list[tuple[str, str, str, dict[str, Any], dict[str, Any]]] = []
        self.last_flush = time.monotonic()
        self.last_progress = 0.0
        self.began = time.time()
        self.began_mono = time.monotonic()
        self.kept_at_start = 0
        row = self.db.execute("SELECT MAX(pair) FROM sig").fetchone()
        self.next_pair = max(1, (row[0] or 0) + 1)
        self.current = ""
        self.totals = self._totals()
        self.kept_at_start = int(self.totals["kept"])
        self._recover_shards()

    # --- bookkeeping ---------------------------------------------------------------------------------------

    def log(self, line: str) -> None:
        stamped = f"{time.strftime('%Y-%m-%d %H:%M:%S')} {line}"
        self._logfile.write(stamped + "\n")
        self._logfile.flush()
        if self._log_extra:
            self._log_extra(stamped)

    def _totals(self) -> dict[str, Any]:
        t: dict[str, Any] = {"kept": 0, "found": 0, "languages": Counter(), "kinds": Counter(), "dedup": Counter(),
                             "skipped": Counter(), "status": Counter(), "files": 0}  # fmt: skip
        for status, stats in self.db.execute("SELECT status, stats FROM units"):
            self._add(t, status, json.loads(stats or "{}"))
        return t

    @staticmethod
    def _add(t: dict[str, Any], status: str, stats: dict[str, Any]) -> None:
        t["status"][status] += 1
        t["kept"] += stats.get("kept", 0)
        t["found"] += stats.get("found", 0)
        t["files"] += stats.get("files", 0)
        for k in ("languages", "kinds", "dedup", "skipped"):
            t[k].update(stats.get(k, {}))

    def done_keys(self) -> set[str]:
        return {k for (k,) in self.db.execute("SELECT key FROM units")}

    def _shard_name(self, idx: int) -> str:
        return f"pairs-{idx:05d}.jsonl.gz"

    def _recover_shards(self) -> None:
        recorded = {name for (name,) in self.db.execute("SELECT name FROM shards")}
        for tmp in sorted((self.out / "shards").glob("*.tmp")):
            final = tmp.with_name(tmp.name.removesuffix(".tmp"))
            if final.name in recorded and not final.exists():
                os.replace(tmp, final)
                self.log(f"recovered shard {final.name}")
            else:
                tmp.unlink()
                self.log(f"removed unrecorded partial shard {tmp.name} (its packages are mined again)")
        for name in sorted(recorded):
            if not (self.out / "shards" / name).exists():
                self.log(f"WARNING: recorded shard {name} is missing")

    def flush(self) -> None:
        """Writes the buffered pairs as one shard and records it with its units in one transaction."""
        name = ""
        sha = ""
        idx = None
        if self.buffer:
            row = self.db.execute("SELECT MAX(idx) FROM shards").fetchone()
            idx = (row[0] if row[0] is not None else -1) + 1
            name = self._shard_name(idx)
            tmp = self.out / "shards" / (name + ".tmp")
            with gzip.open(tmp, "wt", encoding="utf-8", compresslevel=6) as fh:
                for rec in self.buffer:
                    fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
            with open(tmp, "rb") as fh:
                os.fsync(fh.fileno())
            sha = fetch.sha256_of(tmp)
            self.db.execute(
                "INSERT INTO shards (idx, name, pairs, sha256) VALUES (?, ?, ?, ?)",
                (idx, name, len(self.buffer), sha),
            )
        for key, status, reason, info, stats in self.pending:
            self.db.execute(
                "INSERT OR REPLACE INTO units (key, status, reason, info, stats, shard, finished) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (key, status, reason, json.dumps(info), json.dumps(stats), idx, time.time()),
            )
        self.db.commit()
        if name:
            os.replace(self.out / "shards" / (name + ".tmp"), self.out / "shards" / name)
            self.log(f"shard {name}: {len(self.buffer)} pairs, {len(self.pending)} packages recorded")
        self.buffer = []
        self.pending = []
        self.last_flush = time.monotonic()
        self.write_manifest()

    def record(
        self,
        unit: sources.Unit,
        status: str,
        reason: str,
        stats: dict[str, Any],
        extra: dict[str, Any] | None = None,
    ) -> None:
        info = {**unit.as_json(), **(extra or {})}
        self.pending.append((unit.key, status, reason, info, stats))
        self._add(self.totals, status, stats)

    # --- progress, manifest ---------------------------------------------------------------------------------

    def progress(self, total_units: int, done_units: int, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self.last_progress < PROGRESS_SECONDS:
            return
        self.last_progress = now
        elapsed = now - self.began_mono
        gained = self.totals["kept"] - self.kept_at_start
        rate = gained / elapsed if elapsed > 0 else 0.0
        left = max(0, self.opts.target - self.totals["kept"])
        eta = left / rate if rate > 0 else None
        state = {
            "updated": time.strftime("%Y-%m-%dT%H:%M:%S"),
            "pid": os.getpid(),
            "elapsed_s": round(elapsed),
            "units_done": done_units,
            "units_total": total_units,
            "status": dict(self.totals["status"]),
            "pairs_kept": self.totals["kept"],
            "pairs_buffered": len(self.buffer),
            "pairs_found": self.totals["found"],
            "pairs_per_s": round(rate, 2),
            "target_pairs": self.opts.target,
            "eta_to_target_s": round(eta) if eta is not None else None,
            "languages": dict(self.totals["languages"].most_common()),
            "kinds": dict(self.totals["kinds"]),
            "dedup": dict(self.totals["dedup"]),
            "current": self.current,
            "shards": self.db.execute("SELECT COUNT(*), COALESCE(SUM(pairs), 0) FROM shards").fetchone(),
        }
        _atomic_write(self.out / "progress.json", json.dumps(state, indent=1) + "\n")
        self.log(
            f"progress: {done_units}/{total_units} packages, {self.totals['kept']} pairs kept "
            f"({len(self.buffer)} buffered), {rate:.1f} pairs/s, {len(self.totals['languages'])} languages, "
            f"ETA to {self.opts.target}: {'?' if eta is None else f'{eta / 3600:.1f} h'}; now {self.current}"
        )

    def write_manifest(self) -> None:
        packages = []
        for key, status, reason, info, stats in self.db.execute(
            "SELECT key, status, reason, info, stats FROM units ORDER BY finished"
        ):
            i, s = json.loads(info or "{}"), json.loads(stats or "{}")
            packages.append(
                {"key": key, "registry": i.get("registry", ""), "package": i.get("package", ""),
                 "version": i.get("version", ""), "source": i.get("source", ""), "licence": s.get("licence") or i.get("licence", "unknown"),
                 "sha256": s.get("sha256", ""), "status": status, "reason": reason, "pairs": s.get("kept", 0),
                 "files": s.get("files", 0)}
            )  # fmt: skip
        shards = [
            {"name": n, "pairs": p, "sha256": h}
            for n, p, h in self.db.execute("SELECT name, pairs, sha256 FROM shards ORDER BY idx")
        ]
        t = self._totals()
        manifest = {
            "what": "mined (description, code) pairs, codesearch_lab.mining (issue 43, item 1)",
            "command": self.opts.command,
            "seed": self.opts.seed,
            "minhash": {
                "engine": self.index.hasher.engine,
                "num_perm": dedup.NUM_PERM,
                "bands": dedup.BANDS,
                "threshold": dedup.NEAR_THRESHOLD,
                "shingle_tokens": dedup.SHINGLE_TOKENS,
            },  # fmt: skip
            "updated": time.strftime("%Y-%m-%dT%H:%M:%S"),
            "pairs": sum(s["pairs"] for s in shards),
            "packages_with_pairs": sum(1 for p in packages if p["pairs"]),
            "counts_per_language": dict(t["languages"].most_common()),
            "counts_per_kind": dict(t["kinds"]),
            "dedup": {"found": t["found"], **dict(t["dedup"])},
            "skipped_files": dict(t["skipped"].most_common()),
            "package_status": dict(t["status"]),
            "record_fields": RECORD_FIELDS,
            "shards": shards,
            "packages": packages,
        }
        _atomic_write(self.out / "manifest.json", json.dumps(manifest, indent=1) + "\n")

    # --- the loop -------------------------------------------------------------------------------------------

    def block_stdlib(self) -> None:
        """Records the CPython standard library's documented code as blocked: no pair may repeat it."""
        std = sources.stdlib_dir()
        codes: list[str] = []
        for path in sorted(std.rglob("*.py")):
            rel = path.relative_to(std)
            if "site-packages" in rel.parts:
                continue
            text = sources.read_source(path, Counter())
            if text is not None:
                codes.extend(p.code for p in extract.python_pairs(rel.as_posix(), text))
        added = self.index.block(codes)
        self.db.execute("INSERT OR REPLACE INTO units (key, status, reason, info, stats, shard, finished) VALUES (?, 'blocked', ?, '{}', '{}', NULL, ?)",
                        (STDLIB_BLOCK_KEY, f"{added} stdlib snippets blocked", time.time()))  # fmt: skip
        self.db.commit()
        self.log(f"blocked {added} CPython standard-library snippets ({std}): never a pair, not a source")

    def units(self) -> list[sources.Unit]:
        out: list[sources.Unit] = []
        if self.opts.local:
            out += sources.local_units()
        if self.opts.fetched:
            out += sources.registry_units(self.opts.lists)
        return out

    def mine(self, unit: sources.Unit) -> None:
        why = sources.refusal(unit, self.refuse)
        if why:
            self.record(unit, "refused", why, {})
            self.log(f"refused {unit.key}: {why}")
            return
        began = time.monotonic()
        try:
            result = mine_unit(unit, self.out, self.refuse, lambda: self.stopping)
        except Interrupted:
            raise
        except (fetch.FetchError, OSError, ValueError, RecursionError) as e:
            self.record(unit, "failed", f"{type(e).__name__}: {e}"[:600], {})
            self.log(f"FAILED {unit.key}: {e}")
            return
        kept = 0
        languages: Counter[str] = Counter()
        kinds: Counter[str] = Counter()
        verdicts: Counter[str] = Counter()
        licence = result.licence or unit.licence or "unknown"
        for p in result.pairs:
            verdict = self.index.check_and_add(self.next_pair, p.code)
            verdicts[verdict] += 1
            if verdict != "new":
                continue
            self.next_pair += 1
            kept += 1
            languages[p.language] += 1
            kinds[p.kind] += 1
            self.buffer.append(
                {"id": pair_id(unit.key, p), **p.as_json(), "package": unit.package, "registry": unit.registry,
                 "version": unit.version, "licence": licence, "source": unit.source}
            )  # fmt: skip
        stats = {"kept": kept, "found": len(result.pairs), "files": result.files, "bytes": result.bytes,
                 "languages": dict(languages), "kinds": dict(kinds),
                 "dedup": {k: v for k, v in verdicts.items() if k != "new"}, "skipped": dict(result.skipped),
                 "sha256": result.sha256, "licence": licence, "archive": result.archive,
                 "seconds": round(time.monotonic() - began, 2)}  # fmt: skip
        self.record(unit, "done", "", stats)
        self.log(
            f"done {unit.key}: {kept} kept of {len(result.pairs)} ({result.files} files, "
            f"{time.monotonic() - began:.1f}s{', ' + ', '.join(f'{k} {v}' for k, v in verdicts.items() if k != 'new') if len(verdicts) > 1 else ''})"
        )

    def main(self) -> int:
        def on_signal(signum: int, frame: FrameType | None) -> None:
            self.stopping = True

        signal.signal(signal.SIGTERM, on_signal)
        signal.signal(signal.SIGINT, on_signal)
        self.log(
            f"start: {' '.join(self.opts.command)} (pid {os.getpid()}, minhash {self.index.hasher.engine}, seed {self.opts.seed})"
        )
        done = self.done_keys()
        if self.opts.block_stdlib and STDLIB_BLOCK_KEY not in done:
            self.block_stdlib()
        units = self.units()
        local_names = {(u.registry, excluded._key(u.package)) for u in units if u.source == "local"}
        total = len(units)
        finished = sum(1 for u in units if u.key in done)
        mined = 0
        try:
            for unit in units:
                if self.stopping:
                    break
                if unit.key in done:
                    continue
                if self.opts.max_units and mined >= self.opts.max_units:
                    break
                self.current = unit.key
                if unit.source == "fetched" and (unit.registry, excluded._key(unit.package)) in local_names:
                    self.record(unit, "skipped", "mined from its local copy", {})
                else:
                    self.mine(unit)
                done.add(unit.key)
                mined += 1
                finished += 1
                if len(self.buffer) >= self.opts.shard_pairs or (
                    (self.buffer or self.pending)
                    and time.monotonic() - self.last_flush > self.opts.flush_seconds
                ):
                    self.flush()
                self.progress(total, finished)
        except Interrupted:
            self.log(f"interrupted during {self.current}: it is mined again on resume")
        finally:
            self.flush()
            self.current = "" if not self.stopping else f"stopped ({self.current})"
            self.progress(total, finished, force=True)
            self.log(f"{'stopped' if self.stopping else 'finished'}: {self.totals['kept']} pairs kept")
        return 0

    def close(self) -> None:
        self.db.close()
        self._logfile.close()


def run(
    opts: Options, refuse: excluded.Excluded | None = None, log: Callable[[str], None] | None = None
) -> int:
    """One run over opts.out; refused while another process holds OUT/lock."""
    opts.out.mkdir(parents=True, exist_ok=True)
    with open(opts.out / "lock", "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            print(f"another mining run holds {opts.out / 'lock'}", file=sys.stderr)
            return 2
        lock.write(str(os.getpid()))
        lock.flush()
        r = Run(opts, refuse, log)
        try:
            return r.main()
        finally:
            r.close()
