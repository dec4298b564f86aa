"""BuildContext: the packer on hand-made ranges, then context packs through a real server."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import grpc
import pytest
from codesearch.common.aio_thread import ThreadedServer
from codesearch.config import Settings
from codesearch.orchestrator.packing import Candidate, FileText, Packer, merge_ranges, render
from codesearch.server import registrars
from codesearch.v1 import search_pb2, search_pb2_grpc
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from tests.fixture_types import StartServer

SERVICES = ("keyword", "graph", "orchestrator")


def file_text(n: int, width: int = 9, path: str = "f.py") -> FileText:
    return FileText("r", path, "python", [f"line {i:0{width - 5}d}" for i in range(1, n + 1)])


def cand(
    start: int, end: int, score: float = 1.0, stage: str = "seed", path: str = "f.py", **kw: Any
) -> Candidate:
    return Candidate("r", path, start, end, score, "seed" if stage == "seed" else "neighbor", stage, **kw)


# --- packer ---------------------------------------------------------------------------------------------------
def test_merge_ranges_overlapping_adjacent_and_apart() -> None:
    assert merge_ranges([(10, 12), (1, 3), (4, 5), (11, 20), (25, 25), (22, 23)]) == [
        (1, 5),
        (10, 20),
        (22, 23),
        (25, 25),
    ]
    assert merge_ranges([(5, 9), (6, 7)]) == [(5, 9)]
    assert merge_ranges([]) == []


def test_file_text_counts_joined_lines() -> None:
    t = FileText.from_text("r", "f.py", "python", "ab\ncde\n\nf")
    assert t.chars(1, 4) == len("ab\ncde\n\nf")
    assert t.chars(2, 3) == len("cde\n")
    assert t.text(2, 2) == "cde"


def test_packer_merges_overlapping_and_adjacent_candidates() -> None:
    t = file_text(100)
    p = Packer(10_000, 4)
    assert p.offer(cand(10, 20), t) == (10, 20)
    assert p.offer(cand(15, 25), t) == (15, 25)  # overlaps: extends the segment
    assert p.offer(cand(26, 30), t) == (26, 30)  # adjacent: still one segment
    assert p.offer(cand(12, 18), t) is None  # already inside: adds nothing
    assert p.offer(cand(50, 52), t) == (50, 52)
    assert p.files[("r", "f.py")].ranges == [(10, 30), (50, 52)]
    assert p.used == t.chars(10, 30) + t.chars(50, 52)


def test_packer_keeps_budget_exactly_and_trims_by_whole_lines() -> None:
    t = file_text(100)  # every line is 9 characters, 10 with its newline
    p = Packer(95, 4)
    taken = p.offer(cand(1, 50), t)
    # 9 lines cost 9*9 + 8 = 89 <= 95; 10 lines cost 99 > 95.
    assert taken == (1, 9)
    assert p.used == 89 <= 95
    assert p.offer(cand(60, 61), t) is None  # 19 more characters do not fit in the 6 left


def test_packer_trims_leading_context_from_its_start() -> None:
    t = file_text(100)
    p = Packer(200, 4)
    p.offer(cand(50, 55), t)
    left = 200 - p.used
    taken = p.offer(cand(30, 49, stage="neighbors", keep_tail=True), t)
    assert taken is not None and taken[1] == 49 and taken[0] > 30  # the lines next to the seed are kept
    assert p.used <= 200 and left >= 0
    assert p.files[("r", "f.py")].ranges == [(taken[0], 55)]


def test_packer_caps_segments_per_file_and_stage_shares() -> None:
    t = file_text(200)
    p = Packer(10_000, 2, {"neighbors": 30})
    assert p.offer(cand(1, 2), t) and p.offer(cand(10, 11), t)
    assert p.offer(cand(20, 21), t) is None  # a third segment is refused
    assert p.offer(cand(3, 4), t) == (3, 4)  # joining an existing segment is fine
    taken = p.offer(cand(12, 40, stage="neighbors"), t)
    assert taken == (12, 14)  # 3 lines = 30 characters: the neighbours' share
    assert p.stage_used["neighbors"] == 30


def test_packer_orders_files_by_best_score() -> None:
    a, b = file_text(20, path="a.py"), file_text(20, path="b.py")
    p = Packer(10_000, 4)
    p.offer(cand(1, 2, score=1.0, path="a.py"), a)
    p.offer(cand(1, 2, score=5.0, path="b.py"), b)
    assert [f.text.path for f in p.ordered_files()] == ["b.py", "a.py"]


def test_render_has_headers_line_numbers_and_gaps() -> None:
    t = file_text(30)
    p = Packer(10_000, 4)
    p.offer(cand(3, 4), t)
    p.offer(cand(10, 10), t)
    text = render(p.ordered_files(), show_repository=False)
    lines = text.splitlines()
    assert lines[0] == "### f.py (python)"
    assert lines[1:] == ["...", " 3 | line 0003", " 4 | line 0004", "...", "10 | line 0010", "..."]


@hsettings(max_examples=200, deadline=None)
@given(
    budget=st.integers(1, 3000),
    max_segments=st.integers(1, 5),
    offers=st.lists(st.tuples(st.integers(1, 120), st.integers(0, 40), st.booleans()), max_size=25),
)
def test_packer_never_exceeds_budget(
    budget: int, max_segments: int, offers: list[tuple[int, int, bool]]
) -> None:
    texts = {p: FileText("r", p, "python", [("x" * ((i * 7) % 23)) for i in range(100)]) for p in ("a", "b")}
    p = Packer(budget, max_segments, {"neighbors": budget // 3})
    for n, (start, length, tail) in enumerate(offers):
        path = "a" if n % 3 else "b"
        stage = "neighbors" if n % 2 else "seed"
        p.offer(cand(start, start + length, stage=stage, path=path, keep_tail=tail), texts[path])
        assert p.used <= budget
    total = 0
    for f in p.files.values():
        assert len(f.ranges) <= max_segments
        assert f.ranges == merge_ranges(f.ranges)
        total += sum(len(f.text.text(s, e)) for s, e in f.ranges)
    assert total == p.used
    assert p.stage_used.get("neighbors", 0) <= budget // 3


# --- through a real server ------------------------------------------------------------------------------------
SHAPES_PY = '''"""Shapes and their areas."""

import math

from units import to_metres


class Circle:
    """A circle given by its radius."""

    def __init__(self, radius):
        self.radius = radius

    def area(self):
        """Area of the circle: pi times the radius squared."""
        return math.pi * square(to_metres(self.radius))

    def perimeter(self):
        return 2 * math.pi * self.radius


def square(x):
    """The square of a number."""
    return x * x


def total_area(shapes):
    """Sum of the areas of all shapes."""
    return sum(s.area() for s in shapes)
'''

UNITS_PY = '''"""Unit conversion."""

FACTORS = {"m": 1.0, "cm": 0.01, "mm": 0.001}


def to_metres(value, unit="m"):
    """Convert a length to metres."""
    return value * FACTORS[unit]
'''

REPORT_PY = '''from shapes import Circle, total_area


def report(radii):
    """Print the total area of circles with the given radii."""
    circles = [Circle(r) for r in radii]
    print(total_area(circles))
'''


@pytest.fixture
def server(tmp_path: Path, start_server: StartServer) -> ThreadedServer:
    settings = Settings.from_env({"CODESEARCH_HOME": str(tmp_path / "home")})
    return start_server(registrars(settings, SERVICES))


def index_repo(stub: search_pb2_grpc.SearchServiceStub, root: Path, name: str = "geo") -> None:
    root.mkdir(parents=True, exist_ok=True)
    (root / "shapes.py").write_text(SHAPES_PY)
    (root / "units.py").write_text(UNITS_PY)
    (root / "report.py").write_text(REPORT_PY)
    done = list(stub.IndexRepository(search_pb2.IndexRepositoryRequest(path=str(root), name=name)))[-1]
    assert done.phase == search_pb2.INDEX_PHASE_DONE


@pytest.fixture
def stub(server: ThreadedServer, tmp_path: Path) -> search_pb2_grpc.SearchServiceStub:
    s = search_pb2_grpc.SearchServiceStub(grpc.insecure_channel(server.address))
    index_repo(s, tmp_path / "geo")
    return s


def build(
    stub: search_pb2_grpc.SearchServiceStub, query: str, budget: int, **options: Any
) -> search_pb2.BuildContextResponse:
    return stub.BuildContext(
        search_pb2.BuildContextRequest(
            query=query, budget_chars=budget, options=search_pb2.ContextOptions(**options)
        )
    )


def test_context_budget_never_exceeded(stub: search_pb2_grpc.SearchServiceStub) -> None:
    for budget in (500, 501, 640, 800, 1200, 3000, 200_000):
        resp = build(stub, "area of the circle radius squared", budget)
        assert 0 < resp.used_chars <= budget
        assert resp.used_chars == sum(len(seg.text) for f in resp.files for seg in f.segments)
        for f in resp.files:
            assert 1 <= len(f.segments) <= 4
            ends = [(s.start_line, s.end_line) for s in f.segments]
            assert ends == merge_ranges(ends)  # merged, in line order, not adjacent
    small = build(stub, "area of the circle radius squared", 500)
    large = build(stub, "area of the circle radius squared", 200_000)
    assert small.used_chars < large.used_chars


def test_context_seeds_expansions_and_text(stub: search_pb2_grpc.SearchServiceStub) -> None:
    resp = build(stub, "area of the circle radius squared", 20_000)
    assert resp.seeds and resp.seeds[0].reason == "seed"
    assert resp.seeds[0].location.path == "shapes.py"
    reasons = {c.reason for c in resp.expanded}
    assert {"breadcrumb", "calls"} <= reasons, reasons
    for c in resp.expanded:
        assert c.expanded_from.path and c.score < resp.seeds[0].score
    # The area method calls square and to_metres: their definitions are in the pack.
    called = {(c.location.path, c.location.start_line) for c in resp.expanded if c.reason == "calls"}
    assert ("units.py", 6) in called or ("shapes.py", 22) in called, called
    # The text form: a header per file with its language, numbered lines, '...' for gaps.
    assert resp.text.startswith("### shapes.py (python)")
    assert "### units.py (python)" in resp.text
    assert re.search(r"^\s*16 \| {9}return math\.pi \* square\(to_metres\(self\.radius\)\)$", resp.text, re.M)
    for key in ("search_ms", "graph_ms", "pack_ms", "total_ms"):
        assert key in resp.debug
    assert any(k.startswith("weight_") for k in resp.debug)
    assert "degraded_graph" not in resp.debug


def test_context_options_switch_expansions_off(stub: search_pb2_grpc.SearchServiceStub) -> None:
    resp = build(
        stub,
        "area of the circle radius squared",
        20_000,
        no_neighbors=True,
        no_breadcrumbs=True,
        no_graph=True,
    )
    assert resp.seeds and not resp.expanded
    only_graph = build(
        stub, "area of the circle radius squared", 20_000, no_neighbors=True, no_breadcrumbs=True
    )
    assert {c.reason for c in only_graph.expanded} <= {"calls", "called_by", "imports"}
    one = build(stub, "area of the circle radius squared", 20_000, max_segments_per_file=1)
    assert all(len(f.segments) == 1 for f in one.files)


def test_context_errors(stub: search_pb2_grpc.SearchServiceStub) -> None:
    cases = [
        (search_pb2.BuildContextRequest(query="", budget_chars=1000), grpc.StatusCode.INVALID_ARGUMENT),
        (search_pb2.BuildContextRequest(query="area", budget_chars=499), grpc.StatusCode.INVALID_ARGUMENT),
        (
            search_pb2.BuildContextRequest(query="area", budget_chars=200_001),
            grpc.StatusCode.INVALID_ARGUMENT,
        ),
        (search_pb2.BuildContextRequest(query="area"), grpc.StatusCode.INVALID_ARGUMENT),  # budget 0
        (
            search_pb2.BuildContextRequest(query="area", budget_chars=1000, repositories=["nope"]),
            grpc.StatusCode.NOT_FOUND,
        ),
        (
            search_pb2.BuildContextRequest(
                query="area", budget_chars=1000, options=search_pb2.ContextOptions(max_segments_per_file=-1)
            ),
            grpc.StatusCode.INVALID_ARGUMENT,
        ),
    ]
    for request, code in cases:
        with pytest.raises(grpc.RpcError) as err:
            stub.BuildContext(request)
        assert err.value.code() == code, (request, err.value.details())
        details = err.value.details()
        assert details is not None
        assert "\n" not in details


def test_context_without_graph_is_degraded_not_failed(tmp_path: Path, start_server: StartServer) -> None:
    settings = Settings.from_env({"CODESEARCH_HOME": str(tmp_path / "home")})
    server = start_server(registrars(settings, ("keyword", "orchestrator")))
    stub = search_pb2_grpc.SearchServiceStub(grpc.insecure_channel(server.address))
    index_repo(stub, tmp_path / "geo")
    resp = build(stub, "area of the circle radius squared", 4000)
    assert resp.debug["degraded_graph"] == 1
    assert resp.seeds and 0 < resp.used_chars <= 4000
    assert all(c.reason == "neighbor" for c in resp.expanded)
