"""What the mining reads: units (one package each), local or fetched, and the source files of a unit.

A `Unit` is one package: an installed Python distribution, a crate in ~/.cargo/registry/src, a module in the Go
module cache, a top-level folder of Go's standard library, a node_modules package, Rust's std library (when
rust-src is installed), or a registry package named in packages/*.tsv (fetched through
codesearch_lab.blind.fetch's clients). `files(unit, root)` walks a unit's source files with every bound applied
and a counted reason for each file left out. Nothing under the CPython standard library (but site-packages),
/tmp/blind or a refused project's folder is ever read as a source.
"""

from __future__ import annotations

import csv
import email.parser
import functools
import json
import os
import re
import subprocess
import sysconfig
from collections import Counter
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import tomllib
from codesearch.common.languages import EXTENSIONS, SHEBANGS

from codesearch_lab import excluded
from codesearch_lab.mining import comments

HERE = Path(__file__).resolve().parent
PACKAGE_LISTS = HERE / "packages"
REGISTRIES = ("pypi", "npm", "crates", "go", "maven", "debian")
MAX_FILE_BYTES = (
    512 * 1024
)  # past this a source file is data, generated or a bundle (a test's fixture, a table)
MAX_UNIT_FILES = 6000  # one package's files read at most: a monorepo's tail adds more of the same style
MAX_UNIT_BYTES = 120 * 1024 * 1024  # source bytes read per package: bounds one package's time to ~1 minute
MAX_AVG_LINE = 250  # mean line length past which a file is minified or a data blob
SNIFF_BYTES = 8192  # a NUL in the first 8 KiB marks a binary file
README_NAMES = re.compile(r"^readme(\.(md|markdown|rst|txt))?$", re.IGNORECASE)
# Folders whose content is a copy of other projects: a refused name among their children is left out.
VENDOR_DIRS = frozenset(
    {"vendor", "_vendor", "vendored", "third_party", "thirdparty", "3rdparty", "third-party",
     "deps", "external", "extern", "contrib", "bundled", "_vendored"}
)  # fmt: skip
SKIP_DIRS = frozenset(
    {".git", ".hg", ".svn", "__pycache__", "testdata", ".tox", ".venv", "venv", "dist", "build", ".mypy_cache",
     "site-packages", "node_modules"}
)  # fmt: skip
MINED_LANGUAGES = frozenset({*comments.SYNTAX, "python"}) - {"protobuf", "sql"}  # prose-bearing code only
BLIND_DIR = Path("/tmp/blind")
LICENCE_WORDS = re.compile(
    r"\b(MIT|BSD[- ]?[0-9]?[- ]?Clause|BSD|Apache[- ]?2(\.0)?|Apache|GPL[- ]?v?[23]?|LGPL[- ]?v?[23]?|"
    r"MPL[- ]?2(\.0)?|ISC|Unlicense|Zlib|Artistic|PSF|Python Software Foundation|CC0)\b",
    re.IGNORECASE,
)


@dataclass
class Unit:
    """One package to mine; `key` is unique within a run (it is what a resume skips)."""

    key: str  # "<registry>:<package>@<version>"
    registry: str  # pypi | npm | crates | go | go-std | maven | debian | rust-std
    package: str
    version: str
    source: str  # "local" (already on this machine) or "fetched" (through the registry's client)
    root: str = ""  # local: the folder (or site-packages for a distribution); fetched: filled after unpacking
    licence: str = "unknown"
    urls: list[str] = field(default_factory=list)
    language: str = ""  # the registry list's language hint (maven: java/kotlin/scala), informational
    files: list[str] = field(default_factory=list)  # a Python distribution's files (its RECORD), else walked

    def as_json(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if k != "files"}


def language_of(path: Path) -> str:
    """The language of a file by extension (codesearch's names), else by a shebang; "" when none is mined."""
    lang = EXTENSIONS.get(path.suffix) or EXTENSIONS.get(path.suffix.lower(), "")
    if not lang and not path.suffix:
        try:
            with open(path, "rb") as fh:
                head = fh.readline(200)
        except OSError:
            return ""
        if head.startswith(b"#!"):
            words = head[2:].decode("latin-1").replace("/usr/bin/env", "").split()
            lang = SHEBANGS.get(Path(words[0]).name, "") if words else ""
            lang = lang or SHEBANGS.get(re.sub(r"[\d.]+$", "", Path(words[0]).name), "") if words else lang
    return lang if lang in MINED_LANGUAGES else ""


def _is_under(path: Path, folder: Path) -> bool:
    try:
        return path.resolve().is_relative_to(folder.resolve())
    except OSError:
        return False


@functools.lru_cache(maxsize=1)
def stdlib_dir() -> Path:
    return Path(sysconfig.get_paths()["stdlib"]).resolve()


def forbidden(path: Path) -> str | None:
    """Why a path may never be read as a source: the CPython standard library (not site-packages), /tmp/blind."""
    if _is_under(path, BLIND_DIR):
        return "the blind set's folder"
    std = stdlib_dir()
    if _is_under(path, std) and "site-packages" not in path.resolve().relative_to(std).parts:
        return "the CPython standard library (the regression set)"
    return None


def read_source(path: Path, skipped: Counter[str]) -> str | None:
    """The file's text, or None with the reason counted: too large, binary, not UTF-8, minified."""
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            skipped["too large"] += 1
            return None
        data = path.read_bytes()
    except OSError:
        skipped["unreadable"] += 1
        return None
    if b"\0" in data[:SNIFF_BYTES]:
        skipped["binary"] += 1
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        skipped["not utf-8"] += 1
        return None
    if text.count("\n") and len(text) / (text.count("\n") + 1) > MAX_AVG_LINE:
        skipped["minified or data"] += 1
        return None
    if comments.GENERATED.search(text[:1000]):
        skipped["generated"] += 1
        return None
    return text.replace("\r\n", "\n")


def vendored_refusal(rel: str, refuse: excluded.Excluded) -> str | None:
    """Why a file of a vendored copy of a refused project (`pip/_vendor/rich/...`) is left out, or None."""
    parts = rel.split("/")
    for parent, child in zip(parts[:-2], parts[1:-1], strict=True):
        if parent.lower() in VENDOR_DIRS and (why := refuse.folder_reason(child)):
            return why
    return None


def walk(root: Path, refuse: excluded.Excluded, skipped: Counter[str]) -> Iterator[tuple[str, Path]]:
    """(relative posix path, file) of every file under root that may be read, vendored refused copies left out."""
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        vendor = here.name.lower() in VENDOR_DIRS
        kept = []
        for d in sorted(dirnames):
            if d in SKIP_DIRS or d.startswith("."):
                continue
            if vendor and refuse.folder_reason(d):
                skipped["refused vendored folder"] += 1
                continue
            kept.append(d)
        dirnames[:] = kept
        for f in sorted(filenames):
            p = here / f
            if p.is_symlink():
                continue
            yield p.relative_to(root).as_posix(), p


# --- licences -----------------------------------------------------------------------------------------------


def _licence_from_text(text: str) -> str:
    m = LICENCE_WORDS.search(text[:4000])
    if m:
        return m.group(0)
    if "Redistribution and use in source and binary forms" in text:
        return "BSD"
    if "Permission is hereby granted, free of charge" in text:
        return "MIT"
    return "unknown"


def licence_in_folder(root: Path) -> str:
    """A licence read off the package's own metadata or licence file; "unknown" when none says."""
    for meta in ("package.json", "Cargo.toml", "PKG-INFO", "pyproject.toml", "composer.json"):
        p = root / meta
        if not p.is_file():
            continue
        try:
            text = p.read_text(encoding="utf-8", errors="replace")
            if meta in ("package.json", "composer.json"):
                lic = json.loads(text).get("license")
                if isinstance(lic, str) and lic:
                    return lic
                if isinstance(lic, list) and lic and isinstance(lic[0], str):
                    return " OR ".join(lic)
            elif meta == "Cargo.toml":
                lic = tomllib.loads(text).get("package", {}).get("license")
                if isinstance(lic, str) and lic:
                    return lic
            elif meta == "PKG-INFO":
                got = _python_metadata_licence(email.parser.Parser().parsestr(text))
                if got != "unknown":
                    return got
            elif meta == "pyproject.toml":
                lic = tomllib.loads(text).get("project", {}).get("license")
                if isinstance(lic, str) and lic:
                    return lic
                if isinstance(lic, dict) and isinstance(lic.get("text"), str):
                    return _licence_from_text(lic["text"]) if len(lic["text"]) > 40 else lic["text"]
        except (ValueError, OSError, tomllib.TOMLDecodeError):
            continue
    for p in sorted(root.glob("*")):
        if p.is_file() and re.match(r"(licen[cs]e|copying|copyright)", p.name, re.IGNORECASE):
            try:
                return _licence_from_text(p.read_text(encoding="utf-8", errors="replace"))
            except OSError:
                continue
    for p in sorted(root.glob("META-INF/maven/*/*/pom.xml")):  # a Maven source jar
        try:
            m = re.search(
                r"<license>\s*<name>([^<]+)</name>", p.read_text(encoding="utf-8", errors="replace")
            )
        except OSError:
            continue
        if m:
            return m.group(1).strip()
    for p in sorted(root.glob("usr/share/doc/*/copyright")):  # a Debian package
        try:
            m = re.search(
                r"^License:\s*(\S.*)$", p.read_text(encoding="utf-8", errors="replace"), re.MULTILINE
            )
        except OSError:
            continue
        if m:
            return m.group(1).strip()
    return "unknown"


def _python_metadata_licence(meta: Any) -> str:
    expr = meta.get("License-Expression")
    if expr:
        return str(expr).strip()
    lic = str(meta.get("License") or "").strip()
    if lic and lic.upper() != "UNKNOWN" and len(lic) <= 80:
        return lic
    for c in meta.get_all("Classifier") or []:
        if str(c).startswith("License ::"):
            return str(c).rsplit("::", 1)[-1].strip()
    return _licence_from_text(lic) if lic else "unknown"


# --- local units --------------------------------------------------------------------------------------------


def site_packages_units() -> list[Unit]:
    """Each installed distribution of this Python's site-packages, its files from RECORD."""
    out: list[Unit] = []
    seen: set[Path] = set()
    import site

    for sp in map(Path, site.getsitepackages()):
        if not sp.is_dir() or sp.resolve() in seen:
            continue
        seen.add(sp.resolve())
        for info in sorted(sp.glob("*.dist-info")):
            try:
                meta = email.parser.Parser().parsestr(
                    (info / "METADATA").read_text(encoding="utf-8", errors="replace")
                )
                record = (info / "RECORD").read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            name, version = str(meta.get("Name") or ""), str(meta.get("Version") or "")
            if not name:
                continue
            urls = [str(meta.get("Home-page") or "")]
            urls += [str(u).split(",", 1)[-1].strip() for u in meta.get_all("Project-URL") or []]
            files = []
            for row in csv.reader(record.splitlines()):
                if (
                    row
                    and not row[0].startswith("..")
                    and not row[0].startswith("/")
                    and ".dist-info/" not in row[0]
                ):
                    files.append(row[0])
            out.append(
                Unit(f"pypi:{name}@{version}", "pypi", name, version, "local", str(sp),
                     _python_metadata_licence(meta), [u for u in urls if u], "python", files)
            )  # fmt: skip
    return out


def cargo_units(home: Path | None = None) -> list[Unit]:
    """Each crate unpacked under ~/.cargo/registry/src."""
    home = home or Path(os.environ.get("CARGO_HOME", Path.home() / ".cargo"))
    out: list[Unit] = []
    for crate in sorted((home / "registry" / "src").glob("*/*")):
        if not crate.is_dir():
            continue
        name, _, version = crate.name.rpartition("-")
        urls: list[str] = []
        try:
            pkg = tomllib.loads((crate / "Cargo.toml").read_text(encoding="utf-8")).get("package", {})
            name, version = str(pkg.get("name", name)), str(pkg.get("version", version))
            urls = [str(pkg[k]) for k in ("repository", "homepage") if isinstance(pkg.get(k), str)]
        except (OSError, ValueError, tomllib.TOMLDecodeError):
            pass
        out.append(
            Unit(f"crates:{name}@{version}", "crates", name, version, "local", str(crate),
                 licence_in_folder(crate), urls, "rust")
        )  # fmt: skip
    return out


def _go_env(var: str) -> str:
    try:
        return subprocess.run(
            ["go", "env", var], capture_output=True, text=True, timeout=30, check=False
        ).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return ""


def _unescape_module(path: str) -> str:
    return re.sub(r"!([a-z])", lambda m: m.group(1).upper(), path)


def go_module_units(modcache: Path | None = None) -> list[Unit]:
    """Each module@version in the Go module cache."""
    cache = modcache or Path(_go_env("GOMODCACHE") or Path.home() / "go" / "pkg" / "mod")
    out: list[Unit] = []
    if not cache.is_dir():
        return out
    for dirpath, dirnames, _ in os.walk(cache):
        here = Path(dirpath)
        if here == cache:
            dirnames[:] = [d for d in dirnames if d != "cache"]
        versioned = [d for d in dirnames if "@" in d]
        dirnames[:] = [d for d in dirnames if "@" not in d]
        for d in sorted(versioned):
            module = _unescape_module((here / d).relative_to(cache).as_posix().rsplit("@", 1)[0])
            version = d.rsplit("@", 1)[1]
            out.append(
                Unit(f"go:{module}@{version}", "go", module, version, "local", str(here / d),
                     licence_in_folder(here / d), [excluded.go_module_repo(module)], "go")
            )  # fmt: skip
    return out


def go_std_units(goroot: Path | None = None) -> list[Unit]:
    """Go's standard library, one unit per top-level folder of GOROOT/src (`cmd` one per command)."""
    root = goroot or Path(_go_env("GOROOT") or "/usr/local/go")
    src = root / "src"
    if not src.is_dir():
        return []
    version = _go_env("GOVERSION")
    if not version and (root / "VERSION").is_file():
        version = (root / "VERSION").read_text().split()[0]
    licence = (
        _licence_from_text((root / "LICENSE").read_text()) if (root / "LICENSE").is_file() else "BSD-3-Clause"
    )
    folders = [d for d in sorted(src.iterdir()) if d.is_dir() and d.name not in ("cmd", "testdata", "vendor")]
    folders += [d for d in sorted((src / "cmd").iterdir()) if d.is_dir() and d.name not in ("testdata",)]
    return [
        Unit(f"go-std:{d.relative_to(src).as_posix()}@{version}", "go-std", d.relative_to(src).as_posix(), version,
             "local", str(d), licence, ["https://go.googlesource.com/go"], "go")
        for d in folders
    ]  # fmt: skip


def rust_std_units() -> list[Unit]:
    """Rust's std library crates, when rust-src is installed (rustc --print sysroot)."""
    try:
        sysroot = subprocess.run(
            ["rustc", "--print", "sysroot"], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return []
    lib = Path(sysroot.stdout.strip()) / "lib" / "rustlib" / "src" / "rust" / "library"
    if not lib.is_dir():
        return []
    return [
        Unit(f"rust-std:{d.name}@{sysroot.stdout.strip().rsplit('/', 1)[-1]}", "rust-std", d.name, "sysroot",
             "local", str(d), "MIT OR Apache-2.0", ["https://github.com/rust-lang/rust"], "rust")
        for d in sorted(lib.iterdir()) if d.is_dir()
    ]  # fmt: skip


NODE_ROOTS = (Path("/usr/lib/node_modules"), Path("/usr/local/lib/node_modules"), Path.home() / ".npm-global")


def node_units(roots: tuple[Path, ...] = NODE_ROOTS) -> list[Unit]:
    """Each package (with its package.json) in the node_modules folders of the machine's global installs."""
    out: list[Unit] = []
    seen: set[str] = set()
    for top in roots:
        if not top.is_dir():
            continue
        for pj in sorted(top.rglob("package.json")):
            pkg_dir = pj.parent
            # a package is node_modules/<name> or node_modules/@scope/<name>, at any depth of nesting
            parent = pkg_dir.parent
            if not (
                parent.name == "node_modules"
                or (parent.name.startswith("@") and parent.parent.name == "node_modules")
            ):
                continue
            try:
                meta = json.loads(pj.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            name, version = meta.get("name"), meta.get("version")
            if not isinstance(name, str) or not isinstance(version, str) or f"{name}@{version}" in seen:
                continue
            seen.add(f"{name}@{version}")
            repo = meta.get("repository")
            url = repo.get("url", "") if isinstance(repo, dict) else repo if isinstance(repo, str) else ""
            out.append(
                Unit(f"npm:{name}@{version}", "npm", name, version, "local", str(pkg_dir),
                     licence_in_folder(pkg_dir), [str(url)] if url else [], "javascript")
            )  # fmt: skip
    return out


def local_units() -> list[Unit]:
    """Every local source, fastest first (the colleague training on the pairs wants these first)."""
    return [
        *go_std_units(),
        *cargo_units(),
        *go_module_units(),
        *rust_std_units(),
        *node_units(),
        *site_packages_units(),
    ]


# --- registry units -----------------------------------------------------------------------------------------


def registry_units(lists: Path = PACKAGE_LISTS) -> list[Unit]:
    """The packages named in packages/<registry>.tsv (package, version, language), interleaved by registry."""
    per: dict[str, list[Unit]] = {}
    for reg in REGISTRIES:
        path = lists / f"{reg}.tsv"
        if not path.is_file():
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip() or line.startswith("#"):
                continue
            cells = line.split("\t")
            package, version = cells[0], cells[1] if len(cells) > 1 else ""
            language = cells[2] if len(cells) > 2 else ""
            per.setdefault(reg, []).append(Unit(f"{reg}:{package}@{version}", reg, package, version, "fetched",
                                                language=language))  # fmt: skip
    out: list[Unit] = []
    queues = [q for q in per.values() if q]
    i = 0
    while any(queues):
        for q in queues:
            if i < len(q):
                out.append(q[i])
        i += 1
        if all(i >= len(q) for q in queues):
            break
    return out


def refusal(unit: Unit, refuse: excluded.Excluded) -> str | None:
    """Why a unit may not be mined: a refused project (every spelling of its package, every URL), a banned path."""
    reg = "go" if unit.registry == "go-std" else unit.registry
    names = excluded.package_keys(reg, unit.package) if unit.registry != "go-std" else [unit.package]
    urls = list(unit.urls)
    if unit.registry == "go":
        urls.append(excluded.go_module_repo(unit.package))
    why = refuse.reason_any(names, urls)
    if why:
        return why
    if unit.root and unit.source == "local" and not unit.files:
        return forbidden(Path(unit.root))
    return None
