"""PHP: namespaces, classes, interfaces, traits, enums, functions, methods, constants, calls, use/require."""

from __future__ import annotations

import tree_sitter_php
from tree_sitter import Node

from codesearch.common.parsing.engine import LanguageSpec, text
from codesearch.common.parsing.model import ImportRef

QUERY = r"""
(namespace_definition name: (_) @name) @def.module
(class_declaration name: (name) @name) @def.class
(interface_declaration name: (name) @name) @def.interface
(trait_declaration name: (name) @name) @def.trait
(enum_declaration name: (name) @name) @def.enum
(function_definition name: (name) @name) @def.function
(method_declaration name: (name) @name) @def.method
(const_declaration (const_element (name) @name)) @def.constant
(function_call_expression function: [(name) (qualified_name)] @callee) @call
(member_call_expression object: (_) @receiver name: (name) @callee) @call
(scoped_call_expression scope: (_) @receiver name: (name) @callee) @call
(object_creation_expression [(name) (qualified_name)] @callee) @call
(namespace_use_declaration) @import
(include_expression) @import
(include_once_expression) @import
(require_expression) @import
(require_once_expression) @import
"""


def imports(node: Node, source: bytes) -> list[ImportRef]:
    line = node.start_point[0] + 1
    if node.type == "namespace_use_declaration":
        refs = []
        for clause in node.named_children:
            if clause.type == "namespace_use_clause":
                parts = text(clause, source).split(" as ")
                refs.append(
                    ImportRef(
                        module=parts[0].strip().lstrip("\\"),
                        line=line,
                        alias=parts[1].strip() if len(parts) > 1 else "",
                    )
                )
        return refs
    arg = node.named_children[0] if node.named_children else None
    if arg is None or arg.type not in ("string", "encapsed_string"):
        return []
    return [ImportRef(module=text(arg, source).strip("'\""), line=line, kind="require")]


def split_php(name: str) -> tuple[str, str]:
    return name.rsplit("\\", 1)[-1], ""


SPEC = LanguageSpec(
    name="php", load=tree_sitter_php.language_php, query=QUERY, imports=imports, split_name=split_php
)
