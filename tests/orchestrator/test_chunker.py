from __future__ import annotations

from dataclasses import dataclass

from codesearch.orchestrator.chunker import MAX_DEFINITION_LINES, WINDOW_LINES, DefinitionLike, chunk_lines


@dataclass
class D:
    name: str
    qualified_name: str
    start_line: int
    end_line: int
    parent: str = ""


def test_windows_cover_every_line_and_cut_at_blank_lines() -> None:
    lines = [f"x{i} = {i}" if i % 20 else "" for i in range(1, 201)]
    spans = chunk_lines(lines, [])
    covered = set()
    for s in spans:
        assert s.end_line - s.start_line + 1 <= WINDOW_LINES
        covered |= set(range(s.start_line, s.end_line + 1))
    assert covered == set(range(1, 201))
    assert all(not lines[s.end_line - 1].strip() for s in spans[:-1])  # cuts land on blank lines


def test_definitions_become_chunks_with_breadcrumbs() -> None:
    lines = ["import os, sys, json, collections, functools, itertools", ""] + [
        f"    line {i}" for i in range(3, 301)
    ]
    lines[10] = lines[40] = ""  # nothing directly above Big or m2 (a scrap there would open them)
    small = D("f", "f", 3, 10)
    big = D("Big", "Big", 12, 12 + MAX_DEFINITION_LINES + 50)
    m1 = D("m1", "Big.m1", 20, 40, parent="Big")
    m2 = D("m2", "Big.m2", 42, 60, parent="Big")
    spans = chunk_lines(lines, [small, big, m1, m2])
    by_symbol = {s.symbol: s for s in spans if s.symbol}
    assert (by_symbol["f"].start_line, by_symbol["f"].end_line) == (3, 10)
    assert by_symbol["Big.m1"].breadcrumb == ("Big", "m1")
    assert (by_symbol["Big.m1"].start_line, by_symbol["Big.m1"].end_line) == (20, 40)
    header = [s for s in spans if s.symbol == "Big" and s.start_line == 12]
    assert header and header[0].end_line == 19  # the class header stops where its first method starts
    assert spans[0].start_line == 1 and spans[0].symbol == ""  # module-level code before the first def
    assert max(s.end_line for s in spans) == 300


def test_empty_and_blank_files() -> None:
    assert chunk_lines([], []) == []
    assert chunk_lines(["", "  ", ""], []) == []


def test_a_method_outside_its_types_lines_is_its_own_chunk() -> None:
    # Go: `type Mux struct` is small; its methods follow it at the top level of the file, their parent "Mux".
    lines = ["package chi", "", "type Mux struct {", "    tree *node", "}", ""]
    for i in range(40):
        lines += [f"func (mx *Mux) M{i}() {{", "    mx.tree = nil", "}"]
    methods = [D(f"M{i}", f"Mux.M{i}", 7 + 3 * i, 9 + 3 * i, parent="Mux") for i in range(40)]
    spans = chunk_lines(lines, [D("Mux", "Mux", 3, 5), *methods])
    assert {s.symbol for s in spans} >= {"Mux", "Mux.M0", "Mux.M39"}
    assert next(s for s in spans if s.symbol == "Mux.M7").start_line == 28


def test_scraps_join_a_neighbour() -> None:
    # A class split into its methods leaves its closing brace alone; PHP opens with `<?php` and `namespace X;`;
    # an attribute directly above a method opens it.
    body = [f"        $x{i} = {i};" for i in range(MAX_DEFINITION_LINES)]
    lines = [
        "<?php",
        "",
        "namespace Illuminate\\Queue;",
        "",
        "class QueueManager",
        "{",
        "    public function connection($name)",
        "    {",
        *body,
        "    }",
        "",
        "    #[Deprecated]",
        "    public function name() { return $this->name; }",
        "}",
    ]
    n = len(lines)
    defs: list[DefinitionLike] = [
        D("Queue", "Queue", 3, 3),
        D("QueueManager", "QueueManager", 5, n),
        D("connection", "QueueManager.connection", 7, n - 4, parent="QueueManager"),
        D("name", "QueueManager.name", n - 1, n - 1, parent="QueueManager"),
    ]
    spans = chunk_lines(lines, defs)
    assert [(s.start_line, s.end_line, s.symbol) for s in spans] == [
        (1, 6, "QueueManager"),  # `<?php`, the namespace line and the class header, one chunk
        (7, n - 4, "QueueManager.connection"),
        (n - 3, n, "QueueManager.name"),  # the attribute above it opens it, the class's `}` ends it
    ]
    # A small definition of several lines is not a scrap; a one-liner opens what follows it.
    sql = ["CREATE TABLE t (", "  id INT", ");", "", "CREATE VIEW v AS SELECT * FROM t;"]
    assert [s.symbol for s in chunk_lines(sql, [D("t", "t", 1, 3), D("v", "v", 5, 5)])] == ["t", "v"]
    go = ["func a() { return }", "func b() { return }"]
    spans = chunk_lines(go, [D("a", "a", 1, 1), D("b", "b", 2, 2)])
    assert [(s.start_line, s.end_line, s.symbol) for s in spans] == [(1, 2, "b")]
