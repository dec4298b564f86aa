"""Import and call resolution through a real store build (SQLite), across languages."""

from __future__ import annotations

import hashlib
from pathlib import Path

from codesearch.graph.query import GraphReader
from codesearch.graph.store import DB_NAME, build_generation, connect_readonly, parse_files

REPO = {
    # Python: absolute, src/ root, relative, from-package-import-submodule
    "email/__init__.py": "",
    "email/utils.py": "def formatdate(t):\n    return str(t)\n",
    "email/header.py": "from . import utils\nfrom .utils import formatdate\n\ndef h():\n    return formatdate(1)\n",
    "src/app/core.py": "import email.utils\nfrom email import utils as u\nfrom ..app import core\n\ndef run():\n    return u.formatdate(2)\n",
    "tools/x.py": "import app.core\n",
    # JS/TS
    "web/a.ts": 'import { b } from "./lib/b";\nimport x from "./lib";\nexport function a() { return b(); }\n',
    "web/lib/b.ts": "export function b() { return 1; }\n",
    "web/lib/index.js": "export default 1;\n",
    # Go
    "go.mod": "module example.com/m\n\ngo 1.22\n",
    "cmd/main.go": 'package main\nimport "example.com/m/internal/log"\nfunc main() { log.Info() }\n',
    "internal/log/log.go": "package log\nfunc Info() {}\n",
    "internal/log/more.go": "package log\nfunc Debug() {}\n",
    # Rust
    "rs/src/lib.rs": "mod util;\nuse crate::net::conn::Conn;\n",
    "rs/src/util.rs": "pub fn helper() {}\n",
    "rs/src/net/conn.rs": "pub struct Conn;\n",
    # Java
    "java/src/com/x/App.java": "package com.x;\nimport com.x.util.Helper;\nclass App { void go() { Helper.doIt(); } }\n",
    "java/src/com/x/util/Helper.java": "package com.x.util;\npublic class Helper { static void doIt() {} }\n",
    # C
    "c/src/main.c": '#include "util.h"\n#include <stdio.h>\nint main(void) { return helper(); }\n',
    "c/src/util.h": "int helper(void);\n",
    # Ruby / PHP
    "rb/lib/app.rb": 'require_relative "util"\n',
    "rb/lib/util.rb": "module Util; end\n",
    "php/src/App.php": "<?php\nuse App\\Util\\Helper;\nrequire_once 'boot.php';\n",
    "php/src/Util/Helper.php": "<?php\nnamespace App\\Util;\nclass Helper {}\n",
    "php/src/boot.php": "<?php\n",
}


def build(tmp_path: Path, repo: dict[str, str]) -> GraphReader:
    files = parse_files((p, "", hashlib.sha256(s.encode()).hexdigest(), s.encode()) for p, s in repo.items())
    db = tmp_path / DB_NAME
    build_generation(None, db, files, [], True, 1)
    return GraphReader("r", connect_readonly(db))


def resolved(reader: GraphReader) -> set[tuple[str, int, str | None]]:
    rows = reader.conn.execute(
        "SELECT f.path, i.line, t.path FROM imports i JOIN files f ON f.id = i.file_id"
        " LEFT JOIN files t ON t.id = i.target_file_id"
    )
    return set(rows)


def test_imports_resolve_to_repository_files(tmp_path: Path) -> None:
    got = resolved(build(tmp_path, REPO))
    expected = {
        ("email/header.py", 1, "email/utils.py"),
        ("email/header.py", 2, "email/utils.py"),
        ("src/app/core.py", 1, "email/utils.py"),
        ("src/app/core.py", 2, "email/utils.py"),
        ("tools/x.py", 1, "src/app/core.py"),
        ("web/a.ts", 1, "web/lib/b.ts"),
        ("web/a.ts", 2, "web/lib/index.js"),
        ("cmd/main.go", 2, "internal/log/log.go"),
        ("cmd/main.go", 2, "internal/log/more.go"),
        ("rs/src/lib.rs", 1, "rs/src/util.rs"),
        ("rs/src/lib.rs", 2, "rs/src/net/conn.rs"),
        ("java/src/com/x/App.java", 2, "java/src/com/x/util/Helper.java"),
        ("c/src/main.c", 1, "c/src/util.h"),
        ("c/src/main.c", 2, None),
        ("rb/lib/app.rb", 1, "rb/lib/util.rb"),
        ("php/src/App.php", 2, "php/src/Util/Helper.php"),
        ("php/src/App.php", 3, "php/src/boot.php"),
    }
    assert expected <= got, expected - got
    # `from ..app import core` inside src/app/core.py points at src/app/core.py itself: no self edge
    assert not any(src == dst for src, _line, dst in got)


def test_calls_prefer_the_imported_module(tmp_path: Path) -> None:
    repo = {
        "a/util.py": "def fmt(x):\n    return x\n",
        "b/util.py": "def fmt(x):\n    return x\n",
        "c/main.py": "from a import util\n\ndef go():\n    return util.fmt(1)\n",
        "c/other.py": "from b.util import fmt\n\ndef go2():\n    return fmt(2)\n",
        "c/third.py": "def go3():\n    return fmt(3)\n",
    }
    reader = build(tmp_path, repo)
    rows = reader.conn.execute(
        "SELECT f.path, c.line, tf.path, c.candidates FROM calls c JOIN files f ON f.id = c.file_id"
        " JOIN call_targets t ON t.call_id = c.id JOIN defs d ON d.id = t.def_id JOIN files tf ON tf.id = d.file_id"
    ).fetchall()
    assert ("c/main.py", 4, "a/util.py", 1) in rows
    assert ("c/other.py", 4, "b/util.py", 1) in rows
    # no import: both candidates kept, and the edge says how ambiguous it is
    assert {r for r in rows if r[0] == "c/third.py"} == {
        ("c/third.py", 2, "a/util.py", 2),
        ("c/third.py", 2, "b/util.py", 2),
    }


def test_centrality_mean_is_one_and_called_code_ranks_higher(tmp_path: Path) -> None:
    reader = build(tmp_path, REPO)
    cents = [
        r[0]
        for r in reader.conn.execute("SELECT centrality FROM files UNION ALL SELECT centrality FROM defs")
    ]
    assert abs(sum(cents) / len(cents) - 1.0) < 1e-6
    fmt = reader.centrality("email/utils.py", 1, 2)
    never_called = reader.centrality("email/header.py", 4, 5)
    assert fmt > never_called > 0
    assert reader.centrality("email/utils.py", 40, 50) == 0.0
