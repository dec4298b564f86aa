"""Java: classes, interfaces, enums, records, methods, constructors, constants, calls, imports."""

from __future__ import annotations

import tree_sitter_java
from tree_sitter import Node

from codesearch.common.parsing.engine import LanguageSpec, text
from codesearch.common.parsing.model import ImportRef

QUERY = r"""
(class_declaration name: (identifier) @name) @def.class
(record_declaration name: (identifier) @name) @def.class
(interface_declaration name: (identifier) @name) @def.interface
(annotation_type_declaration name: (identifier) @name) @def.interface
(enum_declaration name: (identifier) @name) @def.enum
(method_declaration name: (identifier) @name) @def.method
(constructor_declaration name: (identifier) @name) @def.method
(field_declaration (modifiers "static" "final") declarator: (variable_declarator name: (identifier) @name)) @def.constant
(method_invocation object: (_) @receiver name: (identifier) @callee) @call
(method_invocation !object name: (identifier) @callee) @call
(object_creation_expression type: (type_identifier) @callee) @call
(import_declaration) @import
"""


def imports(node: Node, source: bytes) -> list[ImportRef]:
    spec = text(node, source).removeprefix("import").strip().rstrip(";").strip()
    kind = "static" if spec.startswith("static ") else ""
    spec = spec.removeprefix("static ").strip().replace(" ", "")
    return [ImportRef(module=spec, line=node.start_point[0] + 1, kind=kind)]


SPEC = LanguageSpec(name="java", load=tree_sitter_java.language, query=QUERY, imports=imports)
