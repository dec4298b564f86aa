"""Per-language extraction: definitions (names, kinds, qualified names, spans), calls and imports."""

from __future__ import annotations

from codesearch.common.parsing import Extraction, extract, supported_languages


def _x(path: str, lang: str, src: str) -> Extraction:
    result = extract(path, lang, src.encode())
    assert result is not None
    return result


def defs(e: Extraction) -> dict[str, tuple[str, int, int, str]]:
    return {d.qualified_name: (d.kind, d.start_line, d.end_line, d.parent) for d in e.definitions}


def calls(e: Extraction) -> set[tuple[str, str, int, str]]:
    return {(c.callee, c.receiver, c.line, c.enclosing) for c in e.calls}


PY = '''"""Mail helpers."""
import os
import email.utils as eu
from . import sibling
from ..pkg.mod import (thing as other, more)
from __future__ import annotations

MAX_SIZE = 1 << 20
_DEFAULT_NAME = "x"
lowercase_alias = os.path


class Parser(Base):
    LIMIT = 3

    @classmethod
    def create(cls, data):
        return cls(data).parse()

    async def parse(self):
        def inner(x):
            return eu.formatdate(x)
        return inner(self.clean())

    class Options:
        def get(self):
            pass


def main(argv=None):
    p = Parser.create(argv)
    print(p)
'''


def test_python_definitions_calls_imports() -> None:
    e = _x("mail/parser.py", "python", PY)
    d = defs(e)
    assert d["Parser"] == ("class", 13, 27, "")
    assert d["Parser.create"] == ("method", 17, 18, "Parser")  # the def line, not the decorator
    assert d["Parser.parse"] == ("method", 20, 23, "Parser")
    assert d["Parser.parse.inner"] == ("function", 21, 22, "Parser.parse")
    assert d["Parser.Options.get"] == ("method", 26, 27, "Parser.Options")
    assert d["main"] == ("function", 30, 32, "")
    assert d["MAX_SIZE"][0] == "constant" and d["_DEFAULT_NAME"][0] == "constant"
    assert "lowercase_alias" not in d and "LIMIT" not in d  # only module-level UPPER_CASE names are constants
    assert e.module == "mail.parser"
    sig = next(x.signature for x in e.definitions if x.name == "parse")
    assert sig == "async def parse(self):"
    c = calls(e)
    assert ("parse", "cls(data)", 18, "Parser.create") in c
    assert ("cls", "", 18, "Parser.create") in c
    assert ("formatdate", "eu", 22, "Parser.parse.inner") in c
    assert ("clean", "self", 23, "Parser.parse") in c
    assert ("create", "Parser", 31, "main") in c
    imps = {(i.module, i.level, tuple(i.names), i.alias, tuple(i.aliases)) for i in e.imports}
    assert ("os", 0, (), "", ()) in imps
    assert ("email.utils", 0, (), "eu", ()) in imps
    assert ("", 1, ("sibling",), "", ("",)) in imps
    assert ("pkg.mod", 2, ("thing", "more"), "", ("other", "")) in imps
    assert ("__future__", 0, ("annotations",), "", ("",)) in imps
    assert e.error_count == 0


def test_python_syntax_error_is_counted_and_the_rest_still_parses() -> None:
    e = _x(
        "bad.py",
        "python",
        "def ok():\n    return 1\n\ndef broken(:\n    pass\n\nclass Fine:\n    def m(self):\n        ok()\n",
    )
    assert e.error_count > 0
    names = {d.qualified_name for d in e.definitions}
    assert {"ok", "Fine", "Fine.m"} <= names
    assert ("ok", "", 9, "Fine.m") in calls(e)


def test_unknown_language_and_garbage_never_raise() -> None:
    assert extract("x.txt", "text", b"hello") is None
    for lang in supported_languages():
        e = extract("f", lang, b"\x00\xff{{{ ((( ;;; \n" * 50)
        assert e is not None and e.error_count >= 0


def test_minified_file_skips_calls_but_keeps_definitions() -> None:
    src = "function a(){b()}" + ";x()" * 5000
    e = _x("min.js", "javascript", src)
    assert e.calls_skipped and not e.calls
    assert "a" in defs(e)


def test_javascript() -> None:
    src = (
        'import React, { useState as us } from "./react";\n'
        'import * as u from "../util";\n'
        "export function main(a) { return helper(a).then(x => u.fmt(x)); }\n"
        "class Widget extends Base {\n"
        "  render() { this.draw(); new Thing(); }\n"
        "}\n"
        "const arrow = (x) => x + 1;\n"
    )
    e = _x("src/app.js", "javascript", src)
    assert defs(e) == {
        "main": ("function", 3, 3, ""),
        "Widget": ("class", 4, 6, ""),
        "Widget.render": ("method", 5, 5, "Widget"),
        "arrow": ("function", 7, 7, ""),
    }
    c = calls(e)
    assert {("helper", "", 3, "main"), ("fmt", "u", 3, "main"), ("draw", "this", 5, "Widget.render")} <= c
    assert ("Thing", "", 5, "Widget.render") in c
    i0, i1 = e.imports
    assert (i0.module, i0.names, i0.aliases) == ("./react", ["default", "useState"], ["React", "us"])
    assert (i1.module, i1.alias) == ("../util", "u")


def test_typescript_and_tsx() -> None:
    src = (
        'import { B } from "./b";\n'
        "export interface Shape { area(): number; }\n"
        "export type Id = string;\n"
        "enum Color { Red }\n"
        "export abstract class C implements Shape {\n"
        "  area(): number { return calc(1); }\n"
        "}\n"
    )
    d = defs(_x("a.ts", "typescript", src))
    assert d["Shape"][0] == "interface" and d["Id"][0] == "type_alias" and d["Color"][0] == "enum"
    assert d["C"] == ("class", 5, 7, "") and d["C.area"] == ("method", 6, 6, "C")
    tsx = _x("v.tsx", "tsx", "export function View() { return <div onClick={() => go()}>hi</div>; }\n")
    assert "View" in defs(tsx) and ("go", "", 1, "View") in calls(tsx)


def test_go() -> None:
    src = (
        "package srv\n"
        'import (\n  "fmt"\n  log "example.com/m/internal/log"\n)\n'
        "type Server struct { n int }\n"
        "type Handler interface { Serve() }\n"
        "func New() *Server { return &Server{} }\n"
        "func (s *Server) Start(x int) error {\n"
        "  fmt.Println(x)\n"
        "  return s.run()\n"
        "}\n"
    )
    e = _x("srv/server.go", "go", src)
    d = defs(e)
    assert d["Server"][0] == "struct" and d["Handler"][0] == "interface"
    assert d["New"] == ("function", 8, 8, "")
    assert d["Server.Start"] == ("method", 9, 12, "Server")
    assert ("Println", "fmt", 10, "Server.Start") in calls(e) and ("run", "s", 11, "Server.Start") in calls(e)
    assert [(i.module, i.alias) for i in e.imports] == [("fmt", ""), ("example.com/m/internal/log", "log")]


def test_rust() -> None:
    src = (
        "mod util;\n"
        "use crate::a::b::{C, d as e};\n"
        "pub struct P { x: i32 }\n"
        "pub trait T { fn t(&self); }\n"
        "impl P {\n    pub fn new() -> Self { util::helper(); P { x: 1 } }\n}\n"
        "impl T for P { fn t(&self) { self.go(); } }\n"
        "fn free() {}\n"
    )
    e = _x("src/lib.rs", "rust", src)
    d = defs(e)
    assert d["P"][0] == "struct" and d["T"][0] == "trait" and d["free"] == ("function", 9, 9, "")
    assert d["P.new"] == ("method", 6, 6, "P") and d["P.t"] == ("method", 8, 8, "P")
    assert ("helper", "util", 6, "P.new") in calls(e) and ("go", "self", 8, "P.t") in calls(e)
    assert (e.imports[0].module, e.imports[0].kind) == ("util", "mod")
    assert (e.imports[1].module, e.imports[1].names) == ("crate::a::b", ["C", "d"])


def test_java() -> None:
    src = (
        "package com.x;\n"
        "import com.x.util.Helper;\n"
        "public class App {\n"
        "  public static final int MAX = 3;\n"
        "  public App() {}\n"
        "  public void go(int a) {\n    Helper.doIt(a);\n    new App();\n  }\n"
        "  interface Inner { void f(); }\n"
        "}\n"
    )
    e = _x("src/com/x/App.java", "java", src)
    d = defs(e)
    assert d["App"] == ("class", 3, 11, "") and d["App.go"] == ("method", 6, 9, "App")
    assert d["App.MAX"][0] == "constant" and d["App.Inner"][0] == "interface"
    assert ("doIt", "Helper", 7, "App.go") in calls(e) and ("App", "", 8, "App.go") in calls(e)
    assert e.imports[0].module == "com.x.util.Helper"


def test_c_and_cpp() -> None:
    c_src = (
        '#include <stdio.h>\n#include "util.h"\n'
        "struct point { int x; };\n"
        "static int add(int a, int b) {\n  return helper(a) + b;\n}\n"
    )
    e = _x("src/main.c", "c", c_src)
    assert defs(e) == {"point": ("struct", 3, 3, ""), "add": ("function", 4, 6, "")}
    assert ("helper", "", 5, "add") in calls(e)
    assert [(i.module, i.kind) for i in e.imports] == [("stdio.h", "system"), ("util.h", "")]
    cpp_src = (
        '#include "w.h"\nnamespace ns {\n'
        "class Widget { public: int size() const { return n; } int n; };\n"
        "void Widget::draw() {\n  this->size();\n}\n}\n"
    )
    e = _x("src/w.cpp", "cpp", cpp_src)
    d = defs(e)
    assert d["ns"][0] == "module" and d["ns.Widget"][0] == "class"
    assert d["ns.Widget.size"][0] == "method" and d["ns.Widget.draw"] == ("method", 4, 6, "ns.Widget")
    assert ("size", "this", 5, "ns.Widget.draw") in calls(e)


def test_ruby_csharp_php() -> None:
    rb = _x(
        "lib/app.rb",
        "ruby",
        'require_relative "util"\nmodule App\n  class Runner\n    def run(x)\n      Util.go(x)\n    end\n  end\nend\n',
    )
    assert defs(rb)["App.Runner.run"] == ("method", 4, 6, "App.Runner")
    assert ("go", "Util", 5, "App.Runner.run") in calls(rb)
    assert (rb.imports[0].module, rb.imports[0].kind) == ("util", "require_relative")
    cs = _x(
        "App.cs",
        "csharp",
        "using System;\nnamespace App.Core {\n  public class Svc {\n    public void Run(int x) { Helper.Go(x); }\n  }\n}\n",
    )
    assert defs(cs)["App.Core.Svc.Run"] == ("method", 4, 4, "App.Core.Svc")
    assert ("Go", "Helper", 4, "App.Core.Svc.Run") in calls(cs)
    php = _x(
        "src/Svc.php",
        "php",
        "<?php\nnamespace App;\nuse App\\Util\\Helper;\nfunction top($a) { return helper($a); }\n"
        "class Svc {\n  public function run($x) { Helper::make($x); }\n}\n",
    )
    d = defs(php)
    assert d["top"] == ("function", 4, 4, "") and d["Svc.run"] == ("method", 6, 6, "Svc")
    assert ("make", "Helper", 6, "Svc.run") in calls(php)
    assert php.imports[0].module == "App\\Util\\Helper" and php.error_count == 0
