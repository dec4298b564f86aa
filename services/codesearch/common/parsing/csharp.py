"""C#: namespaces, classes, structs, interfaces, enums, records, methods, constructors, constants, calls, using."""

from __future__ import annotations

import tree_sitter_c_sharp
from tree_sitter import Node

from codesearch.common.parsing.engine import LanguageSpec, text
from codesearch.common.parsing.model import ImportRef
from codesearch.common.parsing.preprocess import csharp_retries

QUERY = r"""
(namespace_declaration name: (_) @name) @def.module
(file_scoped_namespace_declaration name: (_) @name) @def.module
(class_declaration name: (identifier) @name) @def.class
(record_declaration name: (identifier) @name) @def.class
(struct_declaration name: (identifier) @name) @def.struct
(interface_declaration name: (identifier) @name) @def.interface
(enum_declaration name: (identifier) @name) @def.enum
(method_declaration name: (identifier) @name) @def.method
(constructor_declaration name: (identifier) @name) @def.method
(local_function_statement name: (identifier) @name) @def.function
(field_declaration (modifier "const") (variable_declaration (variable_declarator name: (identifier) @name))) @def.constant
(invocation_expression function: (identifier) @callee) @call
(invocation_expression function: (member_access_expression expression: (_) @receiver name: (identifier) @callee)) @call
(invocation_expression function: (generic_name (identifier) @callee)) @call
(object_creation_expression type: (identifier) @callee) @call
(using_directive) @import
"""


def imports(node: Node, source: bytes) -> list[ImportRef]:
    spec = text(node, source).removeprefix("global").strip().removeprefix("using").strip().rstrip(";").strip()
    alias = ""
    if "=" in spec:
        alias, _, spec = (s.strip() for s in spec.partition("="))
    spec = spec.removeprefix("static ").strip()
    return [ImportRef(module=spec, line=node.start_point[0] + 1, alias=alias)]


SPEC = LanguageSpec(
    name="csharp", load=tree_sitter_c_sharp.language, query=QUERY, imports=imports, recover=csharp_retries
)
