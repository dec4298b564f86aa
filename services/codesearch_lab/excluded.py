"""Projects that no development set, mined pair or question may come from.

Two lists: the held-out projects (../shared/eval/held-out-projects.md, measured without us) and the polyglot
set's repositories (../shared/eval/polyglot/repos.json, our other development set). A project is refused when
its name, or its repository URL, matches an entry of either: by name (case-insensitive, also with the owner
prefix or a `-`/`.`/`_` spelling variant) and by repository path (owner/name, also as a fork's name).

`load_all()` adds a third list, the blind development set (blind/blind-manifest.json: by name, by registry
package and by URL): what mining and any tool other than the blind set's own fetch refuse. `package_keys`
spells a registry package the ways a list may name it (a Maven artifact, a Go module's repository, a Debian
package's upstream name), so a caller checks every spelling through `reason_any`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

# ../shared beside the repository root (read-only), as every developer and CI run has it.
SHARED = Path(__file__).resolve().parents[2].parent / "shared"
HELD_OUT_PAGE = SHARED / "eval" / "held-out-projects.md"
POLYGLOT_REPOS = SHARED / "eval" / "polyglot" / "repos.json"
BLIND_MANIFEST = Path(__file__).resolve().parent / "blind" / "blind-manifest.json"
# Forges whose URLs are host/owner/name: a Go module path on one of them names its repository.
FORGES = ("github.com/", "gitlab.com/", "bitbucket.org/", "codeberg.org/")
# Debian spells an upstream project with a prefix or suffix of its packaging (ruby-thor, libmoo-perl, ...).
DEBIAN_PREFIXES = ("python3-", "python-", "ruby-", "php-", "lua-", "node-", "golang-", "librust-", "lib")
DEBIAN_SUFFIXES = ("-perl", "-dev", "-java", "-ocaml", "-doc", "-common")


def _key(name: str) -> str:
    """A name with case and separators folded: `kotlinx.coroutines`, `kotlinx-coroutines` are one."""
    return re.sub(r"[-_.\s]+", "", name.lower())


def _repo_path(url: str) -> str:
    """`https://github.com/Owner/Name.git` -> `owner/name`."""
    url = url.lower().strip().removesuffix(".git").rstrip("/")
    url = re.sub(r"^[a-z+]+://", "", url)
    parts = url.split("/")
    return "/".join(parts[-2:]) if len(parts) >= 2 else url


@dataclass(frozen=True)
class Excluded:
    names: frozenset[str]  # folded project names
    repos: frozenset[str]  # owner/name, lower case
    why: dict[str, str]  # folded name or owner/name -> which list holds it

    def reason(self, name: str, url: str = "") -> str | None:
        """Why a project may not be used, or None when it may."""
        for candidate in {name, name.rsplit("/", 1)[-1]}:
            if _key(candidate) in self.names:
                return self.why[_key(candidate)]
        if url:
            path = _repo_path(url)
            if path in self.repos:
                return self.why[path]
            if _key(path.rsplit("/", 1)[-1]) in self.names:
                return self.why[_key(path.rsplit("/", 1)[-1])]
        return None

    def reason_any(self, names: Iterable[str], urls: Iterable[str] = ()) -> str | None:
        """Why a project known by any of these names or repository URLs may not be used, or None."""
        for name in names:
            if name and (why := self.reason(name)):
                return why
        for url in urls:
            if url and (why := self.reason("", url)):
                return why
        return None

    def folder_reason(self, folder: str) -> str | None:
        """Why a folder of that name (a package's vendored copy of a refused project) must be left out."""
        key = _key(folder)
        return self.why[key] if key and key in self.names else None


def go_module_repo(module: str) -> str:
    """`github.com/urfave/cli/v2` -> `https://github.com/urfave/cli`; "" when the path is not on a known forge."""
    for forge in FORGES:
        if module.lower().startswith(forge):
            parts = module.split("/")
            return "https://" + "/".join(parts[:3]) if len(parts) >= 3 else ""
    return ""


def package_keys(registry: str, package: str) -> list[str]:
    """The names a registry package may be listed under: itself, and its upstream project's spellings."""
    keys = [package]
    if registry == "maven" and ":" in package:
        keys.append(package.split(":", 1)[1])
        keys.append(re.sub(r"_[23](\.\d+)?$", "", keys[-1]))  # Scala's `os-lib_2.13` is os-lib
    elif registry == "go":
        parts = [p for p in package.split("/") if not re.fullmatch(r"v\d+", p)]
        keys.append(parts[-1] if parts else package)
    elif registry == "npm" and package.startswith("@"):
        keys.append(package.split("/", 1)[-1])
    elif registry == "crates":
        keys.append(re.sub(r"[-_](sys|src|derive|macros|core|impl)$", "", package))
    elif registry == "debian":
        stem = package.split(":", 1)[0]
        for suffix in DEBIAN_SUFFIXES:
            stem = stem.removesuffix(suffix)
        keys += [stem, re.sub(r"[\d.]+$", "", stem)]  # liblua5.4-dev is Lua
        for prefix in DEBIAN_PREFIXES:
            if stem.startswith(prefix) and len(stem) > len(prefix):
                keys += [stem[len(prefix) :], re.sub(r"[\d.]+$", "", stem[len(prefix) :])]
    return list(dict.fromkeys(k for k in keys if k))


def load_all(
    held_out_page: Path = HELD_OUT_PAGE,
    polyglot_repos: Path = POLYGLOT_REPOS,
    blind_manifest: Path = BLIND_MANIFEST,
) -> Excluded:
    """The held-out projects, the polyglot set and the blind set: what mining and later tools refuse."""
    return with_blind_set(load(held_out_page, polyglot_repos), blind_manifest)


def with_blind_set(base: Excluded, blind_manifest: Path = BLIND_MANIFEST) -> Excluded:
    """`base` plus every blind-set project, by name, registry package (each spelling) and repository URL."""
    names, repos, why = set(base.names), set(base.repos), dict(base.why)
    for spec in json.loads(blind_manifest.read_text(encoding="utf-8"))["projects"]:
        reason = f"in the blind set ({spec['name']}, {blind_manifest.name})"
        spellings = [
            str(spec["name"]),
            *package_keys(str(spec.get("registry", "")), str(spec.get("package", ""))),
        ]
        urls = [str(spec.get("url", ""))]
        if spec.get("registry") == "go":
            urls.append(go_module_repo(str(spec.get("package", ""))))
        for url in filter(None, urls):
            path = _repo_path(url)
            repos.add(path)
            why.setdefault(path, reason)
            spellings.append(path.rsplit("/", 1)[-1])
        for n in spellings:
            if _key(n):
                names.add(_key(n))
                why.setdefault(_key(n), reason)
    return Excluded(frozenset(names), frozenset(repos), why)


def load(held_out_page: Path = HELD_OUT_PAGE, polyglot_repos: Path = POLYGLOT_REPOS) -> Excluded:
    """Both lists; OSError when a list is missing (refusing nothing silently would be worse)."""
    names: set[str] = set()
    repos: set[str] = set()
    why: dict[str, str] = {}
    for line in held_out_page.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 3 and "github.com/" in cells[2]:
            path = _repo_path(cells[2])
            for n in (cells[1], path.rsplit("/", 1)[-1]):
                names.add(_key(n))
                why[_key(n)] = f"held out ({cells[1]}, {held_out_page.name})"
            repos.add(path)
            why[path] = f"held out ({cells[1]}, {held_out_page.name})"
    for spec in json.loads(polyglot_repos.read_text(encoding="utf-8")):
        path = _repo_path(str(spec.get("url", "")))
        for n in (str(spec["name"]), path.rsplit("/", 1)[-1]):
            names.add(_key(n))
            why[_key(n)] = f"in the polyglot set ({spec['name']})"
        repos.add(path)
        why[path] = f"in the polyglot set ({spec['name']})"
    return Excluded(frozenset(names), frozenset(repos), why)
