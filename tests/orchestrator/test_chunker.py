from __future__ import annotations

from dataclasses import dataclass

from codesearch.orchestrator.chunker import MAX_DEFINITION_LINES, WINDOW_LINES, chunk_lines


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
    lines = ["import os", ""] + [f"    line {i}" for i in range(3, 301)]
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
    lines += [f"func (mx *Mux) M{i}() {{ mx.tree = nil }}" for i in range(40)]
    methods = [D(f"M{i}", f"Mux.M{i}", 7 + i, 7 + i, parent="Mux") for i in range(40)]
    spans = chunk_lines(lines, [D("Mux", "Mux", 3, 5), *methods])
    assert {s.symbol for s in spans} >= {"Mux", "Mux.M0", "Mux.M39"}
    assert next(s for s in spans if s.symbol == "Mux.M7").start_line == 14
