"""Fetch the blind set's pinned packages through each registry's own client, check them, lay out an eval folder.

    python -m codesearch_lab.blind fetch [--dest DIR] [--only NAME ...] [--pin]

Each project of blind-manifest.json is downloaded once (the archive is cached under DEST/archives), its sha256
checked against the manifest, unpacked to DEST/repos/<name>/, and every annotation target checked against the
unpacked code. DEST then holds repos.json, manifest.json and annotations/ in the polyglot set's format, so
`codesearch eval --polyglot DEST` reads it as it reads ../shared/eval/polyglot. A project that fails (download,
hash, unpack, a malformed annotation, a missing target) is reported with its name and reason and left out of
DEST/manifest.json; the rest go on. `--pin` writes the archives' and annotation files' sha256 into the manifest
(for adding a project, never for changing one: a frozen annotation file changes only as a new version).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tarfile
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from codesearch_lab import excluded

HERE = Path(__file__).resolve().parent
MANIFEST = HERE / "blind-manifest.json"
DEFAULT_DEST = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "codesearch" / "blind"
CLIENT_TIMEOUT_S = (
    600.0  # the largest archive (guava's sources) downloads in seconds; a hung client is a failure
)
ERROR_LINE_CHARS = 300  # a client's error line kept in a failure's reason (pip lists every version otherwise)
CATEGORIES = ("architecture", "semantic", "symbol")


class FetchError(Exception):
    """One project could not be fetched or checked; the message names the project and the reason."""


@dataclass(frozen=True)
class Project:
    name: str
    language: str
    registry: str  # pypi | npm | crates | go | maven | debian
    package: str  # the registry's own name (Maven: group:artifact, Go: the module path)
    version: str
    root: str  # the folder to index, relative to repos/<name>/
    url: str
    licence: str
    annotations: str  # relative to this folder
    sha256: str = ""
    annotations_sha256: str = ""

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> Project:
        fields = cls.__dataclass_fields__
        missing = [f for f in ("name", "language", "registry", "package", "version", "root") if f not in raw]
        if missing:
            raise FetchError(f"manifest entry {raw.get('name', raw)!r}: missing {', '.join(missing)}")
        return cls(**{k: str(v) for k, v in raw.items() if k in fields})


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _run(cmd: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    try:
        done = subprocess.run(
            cmd,
            cwd=cwd,
            env={**os.environ, **(env or {})},
            capture_output=True,
            text=True,
            timeout=CLIENT_TIMEOUT_S,
            check=False,
        )
    except FileNotFoundError as e:
        raise FetchError(f"{cmd[0]} is not installed") from e
    except subprocess.TimeoutExpired as e:
        raise FetchError(f"{' '.join(cmd[:3])} timed out after {CLIENT_TIMEOUT_S:.0f}s") from e
    if done.returncode != 0:
        tail = [line[:ERROR_LINE_CHARS] for line in (done.stderr or done.stdout).strip().splitlines()[-3:]]
        raise FetchError(f"{' '.join(cmd[:4])} failed: {' / '.join(tail)}")
    return done.stdout


def _only_file(folder: Path, what: str) -> Path:
    files = [p for p in folder.iterdir() if p.is_file()]
    if len(files) != 1:
        raise FetchError(f"{what}: expected one downloaded file, found {[p.name for p in files]}")
    return files[0]


def _pypi(p: Project, work: Path) -> Path:
    _run(
        ["python3", "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:", "-d", str(work), f"{p.package}=={p.version}"],
        work,
    )  # fmt: skip
    return _only_file(work, p.name)


def _npm(p: Project, work: Path) -> Path:
    _run(["npm", "pack", "-q", "--pack-destination", str(work), f"{p.package}@{p.version}"], work)
    return _only_file(work, p.name)


def _crates(p: Project, work: Path) -> Path:
    # cargo has no "download one crate": a throwaway package that depends on exactly this version, then fetch.
    home = Path(os.environ.get("CARGO_HOME", Path.home() / ".cargo"))
    (work / "src").mkdir()
    (work / "src" / "lib.rs").write_text("")
    (work / "Cargo.toml").write_text(
        f'[package]\nname = "blind-fetch"\nversion = "0.0.0"\nedition = "2021"\n\n'
        f'[dependencies]\n"{p.package}" = "={p.version}"\n'
    )
    _run(["cargo", "fetch", "--quiet"], work)
    found = sorted((home / "registry" / "cache").glob(f"*/{p.package}-{p.version}.crate"))
    if not found:
        raise FetchError(
            f"{p.name}: cargo fetched, but no {p.package}-{p.version}.crate in {home}/registry/cache"
        )
    return found[0]


def _go(p: Project, work: Path) -> Path:
    out = _run(["go", "mod", "download", "-json", f"{p.package}@{p.version}"], work, {"GOFLAGS": "-mod=mod"})
    info = json.loads(out)
    if info.get("Error"):
        raise FetchError(f"{p.name}: go mod download: {info['Error']}")
    return Path(info["Zip"])


def _maven(p: Project, work: Path) -> Path:
    _run(
        ["mvn", "-q", "-B", "dependency:copy", f"-Dartifact={p.package}:{p.version}:jar:sources",
         f"-DoutputDirectory={work}"],
        work,
    )  # fmt: skip
    return _only_file(work, p.name)


def _debian(p: Project, work: Path) -> Path:
    try:
        _run(["apt-get", "download", "-q", f"{p.package}={p.version}"], work)
    except FetchError:
        # A fresh machine's package lists may be empty or old: read them once, then ask again.
        _run(["apt-get", "update", "-qq"], work)
        _run(["apt-get", "download", "-q", f"{p.package}={p.version}"], work)
    return _only_file(work, p.name)


CLIENTS: dict[str, Callable[[Project, Path], Path]] = {
    "pypi": _pypi,
    "npm": _npm,
    "crates": _crates,
    "go": _go,
    "maven": _maven,
    "debian": _debian,
}


def download(p: Project, archives: Path) -> Path:
    """The project's archive in the cache, downloaded by its registry's client when not there yet."""
    if p.registry not in CLIENTS:
        raise FetchError(f"{p.name}: unknown registry {p.registry!r} (known: {', '.join(CLIENTS)})")
    cached = sorted(archives.glob(f"{p.name}--*"))
    if cached:
        return cached[0]
    archives.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f"blind-{p.name}-") as tmp:
        got = CLIENTS[p.registry](p, Path(tmp))
        dest = archives / f"{p.name}--{got.name}"
        shutil.copyfile(got, dest)
    return dest


def unpack(archive: Path, dest: Path) -> None:
    """Unpacks a tarball, crate, zip, jar or .deb into dest (replaced whole); no member may leave dest."""
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    name = archive.name
    try:
        if name.endswith((".tar.gz", ".tgz", ".crate", ".tar.bz2", ".tar.xz")):
            with tarfile.open(archive) as tf:
                tf.extractall(dest, filter="data")
        elif name.endswith((".zip", ".jar")):
            with zipfile.ZipFile(archive) as zf:
                for member in zf.namelist():
                    target = (dest / member).resolve()
                    if not target.is_relative_to(dest.resolve()):
                        raise FetchError(f"{name}: member {member!r} leaves the folder")
                zf.extractall(dest)
        elif name.endswith(".deb"):
            _run(["dpkg-deb", "-x", str(archive), str(dest)], dest)
        else:
            raise FetchError(f"{name}: not an archive kind this fetch knows")
    except (tarfile.TarError, zipfile.BadZipFile, OSError) as e:
        raise FetchError(f"{name}: cannot unpack ({e})") from e


def _lines(path: Path) -> int:
    with open(path, "rb") as fh:
        return sum(1 for _ in fh)


def check_annotations(p: Project, annotation_file: Path, root: Path) -> list[dict[str, Any]]:
    """The project's questions, each target checked against the code; FetchError names the first bad entry."""
    try:
        items = json.loads(annotation_file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise FetchError(f"{annotation_file}: not readable JSON ({e})") from e
    if not isinstance(items, list) or not items:
        raise FetchError(f"{annotation_file}: expected a non-empty JSON list of questions")
    for i, item in enumerate(items):
        where = f"{annotation_file.name} entry {i}"
        if not isinstance(item, dict) or not isinstance(item.get("query"), str) or not item["query"].strip():
            raise FetchError(f"{where}: needs a non-empty 'query'")
        if item.get("category") not in CATEGORIES:
            raise FetchError(f"{where}: category must be one of {', '.join(CATEGORIES)}")
        targets = item.get("relevant", []) + item.get("secondary", [])
        if not item.get("relevant"):
            raise FetchError(f"{where} ({item['query']!r}): no relevant target")
        for t in targets:
            path = t if isinstance(t, str) else t.get("path") if isinstance(t, dict) else None
            if not isinstance(path, str):
                raise FetchError(f"{where}: a target must be a path or {{path, start_line, end_line}}")
            file = root / path
            if not file.is_file():
                raise FetchError(f"{where} ({item['query']!r}): target {path} does not exist under {p.root}")
            if isinstance(t, dict) and ("start_line" in t or "end_line" in t):
                start, end = t.get("start_line"), t.get("end_line")
                if not (
                    isinstance(start, int) and isinstance(end, int) and 1 <= start <= end <= _lines(file)
                ):
                    raise FetchError(
                        f"{where}: lines {start}-{end} are not inside {path} ({_lines(file)} lines)"
                    )
    return items


def load_manifest(path: Path = MANIFEST) -> dict[str, Any]:
    try:
        manifest: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise FetchError(f"{path}: not readable JSON ({e})") from e
    if not isinstance(manifest.get("projects"), list):
        raise FetchError(f"{path}: no 'projects' list")
    return manifest


@dataclass
class Outcome:
    ok: list[dict[str, Any]]
    failed: dict[str, str]  # project -> reason


def fetch_all(
    manifest: dict[str, Any],
    dest: Path,
    only: set[str] | None = None,
    pin: bool = False,
    refuse: excluded.Excluded | None = None,
    annotations_dir: Path = HERE,
    log: Callable[[str], None] = print,
) -> Outcome:
    """Fetches, checks and lays out every project; failures are collected, never raised."""
    outcome = Outcome([], {})
    (dest / "annotations").mkdir(parents=True, exist_ok=True)
    for raw in manifest["projects"]:
        name = str(raw.get("name", "?"))
        if only and name not in only:
            continue
        try:
            p = Project.from_json(raw)
            why = refuse.reason(p.name, p.url) if refuse else None
            if why:
                raise FetchError(f"refused: {why}")
            archive = download(p, dest / "archives")
            digest = sha256_of(archive)
            if pin:
                raw["sha256"] = digest
            elif digest != p.sha256:
                raise FetchError(
                    f"sha256 of {archive.name} is {digest}, the manifest pins {p.sha256 or 'none'}"
                )
            unpack(archive, dest / "repos" / p.name)
            root = dest / "repos" / p.name / p.root
            if not root.is_dir():
                raise FetchError(f"root {p.root} is not a folder of the unpacked package")
            ann = annotations_dir / p.annotations
            if not ann.is_file():
                raise FetchError(f"no annotation file {p.annotations}")
            ann_digest = sha256_of(ann)
            if pin:
                raw["annotations_sha256"] = ann_digest
            elif ann_digest != p.annotations_sha256:
                raise FetchError(
                    f"{p.annotations} changed since it was frozen (sha256 {ann_digest}, manifest "
                    f"{p.annotations_sha256 or 'none'}): a correction is a new version, recorded in the manifest"
                )
            items = check_annotations(p, ann, root)
            shutil.copyfile(ann, dest / "annotations" / f"{p.name}.json")
            files = sum(1 for f in root.rglob("*") if f.is_file())
            outcome.ok.append(
                {"name": p.name, "language": p.language, "url": p.url, "revision": f"{p.registry}:{p.version}",
                 "benchmark_root": p.root, "files": files, "queries": len(items)}
            )  # fmt: skip
            log(
                f"  ok      {p.name:<22} {p.registry:<7} {p.version:<24} {files:>5} files {len(items):>3} questions"
            )
        except FetchError as e:
            outcome.failed[name] = str(e)
            log(f"  FAILED  {name:<22} {e}")
    repos = [{k: r[k] for k in ("name", "language", "url", "revision", "benchmark_root")} for r in outcome.ok]
    (dest / "repos.json").write_text(json.dumps(repos, indent=1) + "\n")
    final = set(manifest.get("final_test", {}).get("projects", []))
    (dest / "manifest.json").write_text(
        json.dumps(
            {"source": f"blind set, {MANIFEST.name}", "final_test": sorted(final & {r["name"] for r in outcome.ok}),
             "failed": outcome.failed, "repos": outcome.ok},
            indent=1,
        )
        + "\n"
    )  # fmt: skip
    return outcome
