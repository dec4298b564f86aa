"""The error-located repair: the arguments (then the whole) of the macro invocation around each error left are
blanked, in place, and kept only where the errors fall; invocations away from errors, and a clean file, are left as
they are. Each form is one abseil-cpp has (the file it comes from in a comment)."""

from __future__ import annotations

import pytest
from codesearch.common.parsing import _spec, extract
from codesearch.common.parsing.engine import best_parse, count_errors
from codesearch.common.parsing.repair import _GAP, repair


def _parse_clean(src: str) -> None:
    e = extract("a.cc", "cpp", src.encode())
    assert e is not None and e.error_count == 0, src


@pytest.mark.parametrize(
    "src",
    [
        # arguments that are operators (base/log_severity.h), at file level and without `;`
        "COMPOP(>, <, LogSeverityAtLeast)\nCOMPOP(<=, >=, LogSeverityAtLeast)\nint f() { return 1; }\n",
        # a declaration as an argument (base/exception_safety_testing_test.cc)
        "void f() {\n  EXPECT_THROW(ThrowingValue<> bomb, TestException);\n  g();\n}\n",
        # a definition-like macro whose arguments are an expression over lines (strings/cord_rep_btree_test.cc)
        'MATCHER_P(IsNode, height, absl::StrCat("Is a valid node of height ", height)) {\n  return true;\n}\n',
        # a loop macro with its body (synchronization/internal/graphcycles.cc)
        "void f(Node* x) {\n  HASH_FOR_EACH(y, x->out) {\n    g(y);\n  }\n}\n",
        # type fragments as arguments, inside a class (container/internal/raw_hash_map.h)
        "class M {\n public:\n  ABSL_INTERNAL_X(insert_or_assign, insert_or_assign_impl, const &, const &,\n"
        "                  const_cast<K&>)\n  ABSL_INTERNAL_X(try_emplace, try_emplace_impl, &&, const &, )\n};\n",
        # an invocation right after the error, expanding to `+1 +1 ..` (flags/flag_benchmark.cc)
        "#define COUNT(T, name, index) +1\nconstexpr size_t kNumFlags = 0 REPLICATE(COUNT, _, _);\n",
        # #define / #undef inside an initializer, and a macro expanding to its elements (base/fast_type_id_test.cc)
        "void f() {\n  constexpr Id kIds[] = {\n#define A(T) FastTypeId<T>(),\n    PRIM_TYPES(A)\n#undef A\n"
        "#define A(T) FastTypeId<const T>(),\n    PRIM_TYPES(A)\n#undef A\n  };\n  g(kIds);\n}\n",
        # a #define inside a return statement (strings/internal/str_format/extension.h)
        "int f(char conv) {\n  return\n#define CASE(c) conv == #c[0] ? 1 :\n      EXPAND(CASE, )\n#undef CASE\n"
        "      conv == '*' ? 1 : 0;\n}\n",
    ],
)
def test_macro_invocations_around_errors_parse_clean(src: str) -> None:
    _parse_clean(src)


def test_calls_outside_the_repaired_invocations_stay() -> None:
    src = b"void f(Node* x) {\n  HASH_FOR_EACH(y, x->out) {\n    g(y);\n  }\n  EXPECT_EQ(h(1), 2);\n}\n"
    e = extract("a.cc", "cpp", src)
    assert e is not None and e.error_count == 0
    callees = {c.callee for c in e.calls}
    assert {"g", "h", "EXPECT_EQ"} <= callees  # the body's call and the invocation away from the error
    assert {d.name for d in e.definitions} == {"f"}


def test_repair_keeps_length_and_lines() -> None:
    spec = _spec("cpp")
    assert spec is not None
    src = b"COMPOP(>, <, A)\nCOMPOP(<=, >=, B)\nvoid f() {\n  EXPECT_THROW(T<> bomb, E);\n}\n"
    tree = spec.parser().parse(src)
    errors = count_errors(tree.root_node)
    assert errors > 0
    repaired, left, parsed = repair(spec.parser().parse, src, tree, errors, count_errors)
    assert left == 0 and count_errors(repaired.root_node) == 0
    assert len(parsed) == len(src)
    assert [i for i, c in enumerate(parsed) if c == 10] == [i for i, c in enumerate(src) if c == 10]
    # at file level without `;` an invocation expands to declarations: blanked whole once its arguments were not
    # enough; in the body the name and the parentheses stay, a call statement
    assert parsed.startswith(b"               \n                 \n")
    assert b"void f() {\n  EXPECT_THROW(           );\n}" in parsed


def test_a_clean_file_and_a_statement_level_define_are_left_alone() -> None:
    spec = _spec("cpp")
    assert spec is not None
    clean = b"#define A(T) T\nint f() { EXPECT_EQ(g(1), 2); return A(1); }\n"
    tree, parsed = best_parse(spec, clean)
    assert parsed == clean and count_errors(tree.root_node) == 0
    e = extract("a.cc", "cpp", clean)
    assert e is not None and {"A", "f"} <= {d.name for d in e.definitions}


def test_a_repair_that_does_not_lower_the_errors_is_dropped() -> None:
    spec = _spec("cpp")
    assert spec is not None
    src = b"int f() { return ) ; }\nint g() { return EXPECT_EQ(h(1), 2); }\n"  # the error is not a macro's
    tree = spec.parser().parse(src)
    errors = count_errors(tree.root_node)
    _repaired, left, parsed = repair(spec.parser().parse, src, tree, errors, count_errors)
    assert left == errors and parsed == src


def test_a_banner_of_slashes_after_a_macro_looking_comment_parses_at_once() -> None:
    # grpc's event_engine.h read as C: `USAGE (` in a comment reads as an invocation, and the gap from it to the
    # error crossed a `////...` banner that the old gap pattern could split into `//` comments in 2^n ways: the
    # parse never returned. The pytest timeout (pyproject) fails this test if it hangs again.
    banner = "/" * 200
    src = (
        "/// EXAMPLE USAGE (Not yet implemented)\n///\n" + banner + "\n"
        "class Engine : public std::enable_shared_from_this<Engine> {\n public:\n  int x;\n};\n"
    ).encode()
    e = extract("event_engine.h", "c", src)
    assert e is not None and e.error_count > 0  # C++ read as C keeps its errors; the point is that it returns


def test_the_gap_between_an_invocation_and_its_error_is_blanks_and_whole_comments() -> None:
    for gap in [
        b"",
        b"  \n\t",
        b"// a\n  /* b */ ",
        b"/** doc\n * more */\n",
        b"////////\n",
        b"// last line",
    ]:
        assert _GAP.fullmatch(gap), gap
    for not_gap in [b"x", b"/* a */ x /* b */", b"// a\nx", b"/* open", b"/ x"]:
        assert _GAP.fullmatch(not_gap) is None, not_gap
