"""The registry packages the run fetches, chosen by name from the package lists, written to packages/*.tsv.

    python -m codesearch_lab.mining choose [--dest DIR]

- pypi: the most downloaded (pypi.tsv's rank among the 15,000 most downloaded), at the version listed there.
- npm: the most downloaded a month (npm.tsv), at the version listed there.
- maven: maven-partial.tsv's artifacts whose version resolved (a version in column 2), Scala and Kotlin first.
- go: go-partial.tsv's modules with a version that `go get` accepted (column 2).
- crates: the crates named in the Cargo.lock files already on this machine (the repository's native/Cargo.lock,
  and those of the crates in ~/.cargo/registry/src that are not refused), at the locked versions: crates.io has
  no list here, and a look-up by guessed names is not allowed.
- debian: the machine's own apt lists (`apt-cache pkgnames`, no registry query beyond `apt-get update`) filtered
  to the packages that carry Ruby, Perl, PHP, Lua, JavaScript, Go, Rust, C/C++ headers and shell, in a seeded
  hash order (Debian has no download ranking here), at `apt-cache show`'s candidate version.

Every refused project (codesearch_lab.excluded.load_all) is left out here already; the run refuses again.
Each file: `package<TAB>version<TAB>language hint`, one a line, `#` lines are comments.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
from collections.abc import Iterable
from pathlib import Path

import tomllib

from codesearch_lab import excluded
from codesearch_lab.mining import sources

ENV_LISTS = Path("/work/.library/env/packages")
REPO_ROOT = Path(__file__).resolve().parents[3]
CHOICE_SEED = "20261207"  # the hash order of Debian's names (no ranking to take the top of)
N_PYPI = 1100  # top-ranked names: ~220 of them are installed here (mined locally), ~900 are fetched
N_NPM = 700  # npm packages are small (a few files each): many of them, for JavaScript and TypeScript
N_MAVEN = 350  # each costs a JVM start (~5 s); java, kotlin and scala
N_GO = 300  # go-partial.tsv's modules with a version (most of the ~1,300 rows)
N_CRATES = 300  # the locked crates known here
# Debian: (name pattern, how many, language hint)
DEBIAN_GROUPS: tuple[tuple[str, int, str], ...] = (
    (r"^ruby-[a-z0-9][\w.+-]*$", 160, "ruby"),
    (r"^lib[\w.+-]+-perl$", 200, "perl"),
    (r"^php-[a-z][\w.+-]*$", 90, "php"),
    (r"^lua-[a-z][\w.+-]*$", 50, "lua"),
    (r"^node-[a-z][\w.+-]*$", 120, "javascript"),
    (r"^golang-[\w.+-]+-dev$", 100, "go"),
    (r"^librust-[\w.+-]+-dev$", 100, "rust"),
    (r"^lib(?!rust-|ghc-|ocaml-|js-|go-|.*-java$|.*-perl$)[\w.+]+-dev$", 120, "c"),
)
# Debian packages that are mostly shell scripts (by name: no list ranks them).
DEBIAN_SHELL = (
    "bash-completion", "shunit2", "neofetch", "screenfetch", "debootstrap", "dkms", "zram-tools", "byobu",
    "etckeeper", "rkhunter", "zsh-syntax-highlighting", "zsh-autosuggestions", "git-flow", "autojump",
    "initramfs-tools-core", "ifupdown", "live-build", "pbuilder", "reportbug", "grml-shlib", "bash-builtins",
    "shellcheck", "sysvinit-utils", "console-setup", "zsh-common", "fzf", "tmux-plugin-manager", "ncdu",
    "apt-file", "dh-make", "quilt", "devscripts", "wajig", "needrestart", "unattended-upgrades",
)  # fmt: skip
SKIP_VERSION_WORDS = re.compile(r"^(not-served|all-failed|untested|not-to-use|needs-go|no-version-list)")


def _refused(refuse: excluded.Excluded, registry: str, name: str, urls: Iterable[str] = ()) -> bool:
    return refuse.reason_any(excluded.package_keys(registry, name), urls) is not None


def _tsv_rows(path: Path) -> Iterable[list[str]]:
    with open(path, encoding="utf-8", errors="replace") as fh:
        next(fh, None)
        for line in fh:
            yield line.rstrip("\n").split("\t")


def choose_pypi(refuse: excluded.Excluded, n: int = N_PYPI) -> list[tuple[str, str, str]]:
    ranked = []
    for row in _tsv_rows(ENV_LISTS / "pypi.tsv"):
        if len(row) > 3 and row[3].strip().isdigit() and row[1]:
            ranked.append((int(row[3]), row[0], row[1]))
    ranked.sort()
    return [(name, ver, "python") for _, name, ver in ranked if not _refused(refuse, "pypi", name)][:n]


def choose_npm(refuse: excluded.Excluded, n: int = N_NPM) -> list[tuple[str, str, str]]:
    rows = []
    for row in _tsv_rows(ENV_LISTS / "npm.tsv"):
        if len(row) > 2 and row[2].strip().isdigit() and row[1] and re.match(r"^\d+\.\d+\.\d+$", row[1]):
            rows.append((-int(row[2]), row[0], row[1]))
    rows.sort()
    return [(name, ver, "javascript") for _, name, ver in rows if not _refused(refuse, "npm", name)][:n]


def choose_maven(refuse: excluded.Excluded, n: int = N_MAVEN) -> list[tuple[str, str, str]]:
    rows = []
    for row in _tsv_rows(ENV_LISTS / "maven-partial.tsv"):
        if len(row) < 2 or ":" not in row[0] or not re.match(r"^\d", row[1].strip()):
            continue
        ga, ver = row[0].strip(), row[1].split()[0]
        if re.search(r"(-bom|-parent|-dependencies|-platform)$", ga):
            continue  # a BOM or parent POM has no sources jar
        lang = "scala" if re.search(r"_(2\.1[123]|3)$", ga) else "kotlin" if "kotlin" in ga else "java"
        rows.append((0 if lang != "java" else 1, ga, ver, lang))
    rows.sort(key=lambda r: r[0])
    out = [(ga, ver, lang) for _, ga, ver, lang in rows if not _refused(refuse, "maven", ga)]
    return out[:n]


def choose_go(refuse: excluded.Excluded, n: int = N_GO) -> list[tuple[str, str, str]]:
    out = []
    for row in _tsv_rows(ENV_LISTS / "go-partial.tsv"):
        if len(row) < 2 or not row[1].startswith("v") or SKIP_VERSION_WORDS.match(row[1]):
            continue
        module = row[0].strip()
        if not _refused(refuse, "go", module, [excluded.go_module_repo(module)]):
            out.append((module, row[1].split()[0], "go"))
    return out[:n]


def choose_crates(refuse: excluded.Excluded, n: int = N_CRATES) -> list[tuple[str, str, str]]:
    locks = [REPO_ROOT / "native" / "Cargo.lock"]
    for unit in sources.cargo_units():
        if sources.refusal(unit, refuse) is None:
            locks.append(Path(unit.root) / "Cargo.lock")
    seen: dict[str, str] = {}
    for lock in locks:
        try:
            data = tomllib.loads(lock.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError):
            continue
        for pkg in data.get("package", []):
            name, ver, src = pkg.get("name"), pkg.get("version"), str(pkg.get("source", ""))
            if isinstance(name, str) and isinstance(ver, str) and "crates.io" in src and name not in seen:
                seen[name] = ver
    local = {u.package for u in sources.cargo_units()}
    return [
        (k, v, "rust")
        for k, v in sorted(seen.items())
        if k not in local and not _refused(refuse, "crates", k)
    ][:n]


def _apt(*args: str) -> str:
    return subprocess.run(
        ["apt-cache", *args], capture_output=True, text=True, timeout=300, check=False
    ).stdout


def _hash_order(names: Iterable[str]) -> list[str]:
    return sorted(names, key=lambda s: hashlib.blake2b(f"{CHOICE_SEED}:{s}".encode(), digest_size=8).digest())


def choose_debian(refuse: excluded.Excluded) -> list[tuple[str, str, str]]:
    names = set(_apt("pkgnames").split())
    picked: list[tuple[str, str]] = []
    for pattern, n, lang in DEBIAN_GROUPS:
        rx = re.compile(pattern)
        group = [
            x
            for x in _hash_order(x for x in names if rx.match(x))
            if not x.endswith(("-doc", "-dbg", "-dbgsym"))
        ]
        picked += [(x, lang) for x in group if not _refused(refuse, "debian", x)][:n]
    picked += [(x, "bash") for x in DEBIAN_SHELL if x in names and not _refused(refuse, "debian", x)]
    versions: dict[str, str] = {}
    chunk = 200  # names per apt-cache call (argument length)
    plain = [x for x, _ in picked]
    for i in range(0, len(plain), chunk):
        current = ""
        for line in _apt("show", "--no-all-versions", *plain[i : i + chunk]).splitlines():
            if line.startswith("Package: "):
                current = line.split(": ", 1)[1].strip()
            elif line.startswith("Version: ") and current and current not in versions:
                versions[current] = line.split(": ", 1)[1].strip()
    return [(x, versions[x], lang) for x, lang in picked if x in versions]


def write(dest: Path, registry: str, rows: list[tuple[str, str, str]], how: str) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    lines = [f"# {registry}: {len(rows)} packages; {how}", "# package\tversion\tlanguage hint"]
    lines += ["\t".join(r) for r in rows]
    (dest / f"{registry}.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"{registry}: {len(rows)} packages -> {dest / (registry + '.tsv')}")


def main(dest: Path = sources.PACKAGE_LISTS) -> int:
    refuse = excluded.load_all()
    write(
        dest, "pypi", choose_pypi(refuse), f"top {N_PYPI} by pypi.tsv's download rank, refused ones left out"
    )
    write(
        dest, "npm", choose_npm(refuse), f"top {N_NPM} by npm.tsv's downloads a month, refused ones left out"
    )
    write(dest, "maven", choose_maven(refuse), "maven-partial.tsv rows that resolved; scala and kotlin first")
    write(dest, "go", choose_go(refuse), "go-partial.tsv rows with a version go get accepted")
    write(dest, "crates", choose_crates(refuse), "crates locked in the Cargo.lock files on this machine")
    write(
        dest, "debian", choose_debian(refuse), f"apt-cache pkgnames by group, hash order seeded {CHOICE_SEED}"
    )
    return 0
