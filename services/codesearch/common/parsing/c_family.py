"""C and C++: functions, structs, classes, enums, typedefs, namespaces, methods (`A::f`), calls, #include."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import TypedDict

import tree_sitter_c
import tree_sitter_cpp
from tree_sitter import Node

from codesearch.common.parsing.engine import ImportFn, LanguageSpec, text
from codesearch.common.parsing.model import ImportRef
from codesearch.common.parsing.preprocess import c_family_retries

_C = r"""
(function_definition declarator: (function_declarator declarator: (identifier) @name)) @def.function
(function_definition declarator: (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))) @def.function
(struct_specifier name: (type_identifier) @name body: (field_declaration_list)) @def.struct
(union_specifier name: (type_identifier) @name body: (field_declaration_list)) @def.struct
(enum_specifier name: (type_identifier) @name body: (enumerator_list)) @def.enum
(type_definition declarator: (type_identifier) @name) @def.type_alias
(preproc_function_def name: (identifier) @name) @def.function
(call_expression function: (identifier) @callee) @call
(call_expression function: (field_expression argument: (_) @receiver field: (field_identifier) @callee)) @call
(preproc_include) @import
"""

_CPP = r"""
(function_definition declarator: (function_declarator declarator: [(identifier) (field_identifier)
  (qualified_identifier) (destructor_name) (operator_name)] @name)) @def.function
(function_definition declarator: (reference_declarator (function_declarator declarator: [(identifier)
  (qualified_identifier) (field_identifier) (operator_name)] @name))) @def.function
(function_definition declarator: (pointer_declarator declarator: (function_declarator declarator: [(identifier)
  (qualified_identifier) (field_identifier) (operator_name)] @name))) @def.function
(function_definition declarator: [(operator_cast) (qualified_identifier name: (operator_cast))] @name) @def.function
(field_declaration_list (declaration declarator: (function_declarator declarator: [(field_identifier)
  (identifier)] @name)) @def.method)
(field_declaration_list (field_declaration declarator: (function_declarator declarator: (field_identifier) @name)) @def.method)
(class_specifier name: (type_identifier) @name body: (field_declaration_list)) @def.class
(struct_specifier name: (type_identifier) @name body: (field_declaration_list)) @def.struct
(union_specifier name: (type_identifier) @name body: (field_declaration_list)) @def.struct
(enum_specifier name: (type_identifier) @name body: (enumerator_list)) @def.enum
(type_definition declarator: (type_identifier) @name) @def.type_alias
(alias_declaration name: (type_identifier) @name) @def.type_alias
(namespace_definition name: (_) @name) @def.module
(preproc_function_def name: (identifier) @name) @def.function
(call_expression function: (identifier) @callee (#not-eq? @callee "operator")) @call
(call_expression function: (call_expression function: (identifier) @_operator arguments: (argument_list) @_empty)
  @callee (#eq? @_operator "operator") (#eq? @_empty "()")) @call
(call_expression function: (qualified_identifier scope: (_) @receiver name: (identifier) @callee)) @call
(call_expression function: (field_expression argument: (_) @receiver field: (field_identifier) @callee)) @call
(call_expression function: (template_function name: (identifier) @callee)
  (#not-match? @callee "^(static_cast|dynamic_cast|reinterpret_cast|const_cast)$")) @call
(call_expression function: (qualified_identifier name: (qualified_identifier name: (identifier) @callee))) @call
(call_expression function: (qualified_identifier name: (qualified_identifier name: (qualified_identifier
  name: (identifier) @callee)))) @call
(preproc_include) @import
"""


def imports(node: Node, source: bytes) -> list[ImportRef]:
    path = node.child_by_field_name("path")
    if path is None:
        return []
    spec = text(path, source).strip()
    kind = "system" if path.type == "system_lib_string" else ""
    return [ImportRef(module=spec.strip('"<>'), line=node.start_point[0] + 1, kind=kind)]


# An operator's name is its symbol (`operator<<`, `operator()`) or, for a conversion, its type (`operator bool`,
# `operator const char*`): its `<` opens no template arguments, so it must not be cut there (`X::operator<<` was
# named `operator`). Written `operator <` or `operator()()` (a conversion's parameters), it is named the same.
_OPERATOR_NAME = re.compile(
    r"operator(?: ?(<<=|>>=|<=>|<<|>>|<=|>=|<|>|\(\)|\[\]|->\*?|[^\s<(\w]+)|( [\w ]+(?:\[\]|[*&]*)))"
)


def _without_template_args(part: str) -> str:
    part = " ".join(part.split())
    operator = _OPERATOR_NAME.match(part)
    if operator is None:
        return part.split("<", 1)[0].strip()
    symbol, conversion = operator.groups()
    return "operator" + (symbol or conversion.rstrip())


def split_cpp(name: str) -> tuple[str, str]:
    """`ns::A::f` -> ("f", "ns.A"); template arguments dropped (not an operator's own `<`), an operator named by
    its symbol or type (`operator bool() const` -> "operator bool")."""
    parts = [_without_template_args(p) for p in name.split("::")]
    return parts[-1], ".".join(p for p in parts[:-1] if p)


class _CFamilyOptions(TypedDict):
    imports: ImportFn
    recover: Callable[[bytes], Iterable[bytes]]
    preprocessed: bool


# Both are preprocessed: the project's macro table and the same-length second chances apply (preprocess.py).
_C_FAMILY: _CFamilyOptions = {"imports": imports, "recover": c_family_retries, "preprocessed": True}
C = LanguageSpec(name="c", load=tree_sitter_c.language, query=_C, **_C_FAMILY)
CPP = LanguageSpec(
    name="cpp",
    load=tree_sitter_cpp.language,
    query=_CPP,
    split_name=split_cpp,
    **_C_FAMILY,
)
