"""python -m codesearch_lab.blind fetch|draw-final — see fetch.py and final_test.py."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from codesearch_lab import excluded
from codesearch_lab.blind import fetch, final_test


def _check(manifest: dict[str, Any], args: argparse.Namespace) -> int:
    """Checks each named project's annotation file against DEST/repos/<name>/<root>: categories, targets."""
    entries = {str(p["name"]): p for p in manifest["projects"]}
    bad = 0
    for name in args.names:
        try:
            if name not in entries:
                raise fetch.FetchError(f"no project {name!r} in {args.manifest.name}")
            p = fetch.Project.from_json(entries[name])
            items = fetch.check_annotations(
                p, args.manifest.parent / p.annotations, args.dest / "repos" / name / p.root
            )
            counts = {cat: sum(1 for it in items if it["category"] == cat) for cat in fetch.CATEGORIES}
            print(f"{name}: {len(items)} questions {counts}: every target exists")
        except fetch.FetchError as e:
            bad += 1
            print(f"{name}: {e}")
    return 1 if bad else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m codesearch_lab.blind")
    sub = parser.add_subparsers(dest="command", required=True)
    f = sub.add_parser("fetch", help="download, check and lay out the blind set")
    f.add_argument(
        "--dest", type=Path, default=fetch.DEFAULT_DEST, help=f"cache folder (default {fetch.DEFAULT_DEST})"
    )
    f.add_argument("--only", action="append", default=[], metavar="NAME", help="only these projects")
    f.add_argument(
        "--pin", action="store_true", help="record archive and annotation sha256 (new projects only)"
    )
    f.add_argument("--manifest", type=Path, default=fetch.MANIFEST)
    c = sub.add_parser(
        "check", help="check annotation files against the fetched code (no download, no hashes)"
    )
    c.add_argument("names", nargs="+", metavar="NAME")
    c.add_argument("--dest", type=Path, default=fetch.DEFAULT_DEST)
    c.add_argument("--manifest", type=Path, default=fetch.MANIFEST)
    d = sub.add_parser("draw-final", help="draw the final-test projects once, seeded, into the manifest")
    d.add_argument("--seed", type=int, required=True)
    d.add_argument("--count", type=int, default=final_test.FINAL_TEST_SIZE)
    d.add_argument("--manifest", type=Path, default=fetch.MANIFEST)
    args = parser.parse_args(argv)
    try:
        manifest = fetch.load_manifest(args.manifest)
    except fetch.FetchError as e:
        print(f"blind: {e}", file=sys.stderr)
        return 2
    if args.command == "check":
        return _check(manifest, args)
    if args.command == "draw-final":
        try:
            chosen = final_test.draw(manifest, args.seed, args.count)
        except ValueError as e:
            print(f"blind: {e}", file=sys.stderr)
            return 2
        args.manifest.write_text(json.dumps(manifest, indent=1, ensure_ascii=False) + "\n")
        print(f"final test ({args.count} projects, seed {args.seed}): {', '.join(chosen)}")
        return 0
    try:
        refuse = excluded.load()
    except OSError as e:
        print(f"blind: cannot read the lists of excluded projects ({e}); refusing to fetch", file=sys.stderr)
        return 2
    print(f"fetching {len(manifest['projects'])} projects into {args.dest}")
    outcome = fetch.fetch_all(
        manifest, args.dest, set(args.only) or None, args.pin, refuse, args.manifest.parent
    )
    if args.pin:
        args.manifest.write_text(json.dumps(manifest, indent=1, ensure_ascii=False) + "\n")
        print(f"pinned sha256 into {args.manifest}")
    questions = sum(r["queries"] for r in outcome.ok)
    languages = len({r["language"] for r in outcome.ok})
    print(f"{len(outcome.ok)} projects ({languages} languages, {questions} questions) ready in {args.dest}; "
          f"{len(outcome.failed)} failed")  # fmt: skip
    return 1 if outcome.failed else 0


if __name__ == "__main__":
    sys.exit(main())
