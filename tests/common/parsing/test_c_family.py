"""C and C++ definition names: qualified names split into name and container, template arguments dropped."""

from __future__ import annotations

from codesearch.common.parsing import extract
from codesearch.common.parsing.c_family import split_cpp
from codesearch.common.parsing.model import Extraction


def _parse_clean(path: str, src: str) -> Extraction:
    e = extract(path, "cpp", src.encode())
    assert e is not None and e.error_count == 0
    return e


def test_qualified_names_drop_template_arguments_but_keep_an_operators_symbol() -> None:
    assert split_cpp("ns::A::f") == ("f", "ns.A")
    assert split_cpp("std::vector<int>::push_back") == ("push_back", "std.vector")
    assert split_cpp("X::operator<<") == ("operator<<", "X")
    assert split_cpp("LogMessage::operator<< <const wchar_t*>") == ("operator<<", "LogMessage")
    assert split_cpp("A<int>::operator()") == ("operator()", "A")
    assert split_cpp("D::operator<") == ("operator<", "D")
    assert split_cpp("B::operator  bool") == ("operator bool", "B")
    assert split_cpp("a::operatorFoo") == ("operatorFoo", "a")  # an identifier, not an operator


def test_out_of_class_operator_definitions_are_named_after_the_operator() -> None:
    src = (
        "struct Stream { Stream& operator<<(int v); bool operator<(const Stream& o) const; };\n"
        "Stream& Stream::operator<<(int v) { return *this; }\n"
        "bool Stream::operator<(const Stream& o) const { return false; }\n"
    )
    e = _parse_clean("log/stream.cc", src)
    names = {(d.name, d.start_line) for d in e.definitions}
    assert ("operator<<", 2) in names and ("operator<", 3) in names
    assert not any(d.name == "operator" for d in e.definitions)


def test_members_returning_a_reference_or_pointer_and_conversions_are_definitions() -> None:
    # `A& operator=(..)`, `const T& value()`, `T* data()` defined in their class had no definition (their
    # declarator is a reference or pointer around the function's): 835 of abseil-cpp's 14,423 function bodies.
    src = (
        "class A {\n"
        " public:\n"
        "  const int& value() const { return v_; }\n"
        "  int* data() { return &v_; }\n"
        "  A& operator=(const A& o) { v_ = o.v_; return *this; }\n"
        "  A* operator->() { return this; }\n"
        "  explicit operator bool() const { return v_ != 0; }\n"
        "  int v_;\n"
        "};\n"
        "A::operator const char*() const { return nullptr; }\n"
    )
    e = _parse_clean("a.h", src)
    names = {(d.name, d.kind, d.start_line, d.qualified_name) for d in e.definitions}
    assert names >= {
        ("value", "method", 3, "A.value"),
        ("data", "method", 4, "A.data"),
        ("operator=", "method", 5, "A.operator="),
        ("operator->", "method", 6, "A.operator->"),
        ("operator bool", "method", 7, "A.operator bool"),
        ("operator const char*", "method", 10, "A.operator const char*"),
    }


def test_an_operator_called_by_its_name_is_a_call_of_that_operator() -> None:
    # tree-sitter-cpp reads `operator()(g, p_)` in a clean file as a call of `operator` whose result is called:
    # the call is named `operator()`, so it links to the class's own call operators, not to any `operator`.
    src = (
        "struct Dist {\n"
        "  template <typename G> int operator()(G& g) { return operator()(g, p_); }\n"
        "  template <typename G> int operator()(G& g, int p) { return p; }\n"
        "  int p_;\n"
        "};\n"
    )
    e = _parse_clean("dist.h", src)
    assert [(c.callee, c.line, c.enclosing) for c in e.calls] == [("operator()", 2, "Dist.operator()")]
