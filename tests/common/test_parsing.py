"""The shared parse: preprocessor-blanked second chances keep offsets, and the wire form round-trips."""

from __future__ import annotations

from codesearch.common.parsing import extract
from codesearch.common.parsing.preprocess import blank_macros, c_family_retries, keep_first_branches
from codesearch.common.parsing.wire import from_message, to_message


def test_conditional_branches_and_macros_are_blanked_in_place() -> None:
    src = b"int f(int a) {\n#ifdef X\n  if (a) {\n#else\n  if (!a) {\n#endif\n    return 1;\n  }\n  return 0;\n}\n"
    kept = keep_first_branches(src)
    assert len(kept) == len(src) and kept.count(b"\n") == src.count(b"\n")
    assert b"if (a)" in kept and b"if (!a)" not in kept and b"#ifdef" not in kept
    macros = blank_macros(b"namespace absl {\nABSL_NAMESPACE_BEGIN\nclass ABSL_ATTRIBUTE_VIEW Span {};\n}\n")
    assert b"ABSL_" not in macros and b"class" in macros and b"Span" in macros


def test_a_file_the_preprocessor_splits_parses_clean_with_the_right_lines() -> None:
    src = (
        "namespace absl {\nABSL_NAMESPACE_BEGIN\nnamespace internal {\n\n"
        "int Grow(int n) ABSL_ATTRIBUTE_UNUSED;\n\nint Grow(int n) {\n#ifdef FAST\n  if (n > 1) {\n#else\n"
        "  if (n > 2) {\n#endif\n    return Twice(n);\n  }\n  return n;\n}\n\n}  // namespace internal\n"
        "ABSL_NAMESPACE_END\n}  // namespace absl\n"
    )
    e = extract("absl/grow.cc", "cpp", src.encode())
    assert e is not None and e.error_count == 0
    grow = next(d for d in e.definitions if d.name == "Grow")
    assert (grow.start_line, grow.end_line, grow.signature) == (7, 16, "int Grow(int n) {")
    assert [(c.callee, c.line) for c in e.calls] == [("Twice", 13)]
    assert all(len(r) == len(src) for r in c_family_retries(src.encode()))


def test_the_wire_form_round_trips() -> None:
    e = extract(
        "m/a.py", "python", b"import os\nfrom . import b as c\n\ndef f():\n    return os.path.join(c.x())\n"
    )
    assert e is not None
    assert from_message(e.path, e.language, to_message(e)) == e
