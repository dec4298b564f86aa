"""C and C++ definition names: qualified names split into name and container, template arguments dropped."""

from __future__ import annotations

from codesearch.common.parsing import extract
from codesearch.common.parsing.c_family import split_cpp


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
    e = extract("log/stream.cc", "cpp", src.encode())
    assert e is not None and e.error_count == 0
    names = {(d.name, d.start_line) for d in e.definitions}
    assert ("operator<<", 2) in names and ("operator<", 3) in names
    assert not any(d.name == "operator" for d in e.definitions)
