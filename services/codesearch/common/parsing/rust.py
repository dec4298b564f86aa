"""Rust: functions, methods in impl/trait blocks, structs, enums, traits, type aliases, consts, mods, calls, use."""

from __future__ import annotations

import tree_sitter_rust
from tree_sitter import Node

from codesearch.common.parsing.engine import LanguageSpec, text
from codesearch.common.parsing.model import ImportRef

QUERY = r"""
(function_item name: (identifier) @name) @def.function
(function_signature_item name: (identifier) @name) @def.function
(struct_item name: (type_identifier) @name) @def.struct
(union_item name: (type_identifier) @name) @def.struct
(enum_item name: (type_identifier) @name) @def.enum
(trait_item name: (type_identifier) @name) @def.trait
(type_item name: (type_identifier) @name) @def.type_alias
(const_item name: (identifier) @name) @def.constant
(static_item name: (identifier) @name) @def.constant
(mod_item name: (identifier) @name body: (declaration_list)) @def.module
(macro_definition name: (identifier) @name) @def.function
(impl_item type: [(type_identifier) @name (generic_type type: (type_identifier) @name)
  (scoped_type_identifier name: (type_identifier) @name)]) @scope
(call_expression function: (identifier) @callee) @call
(call_expression function: (field_expression value: (_) @receiver field: (field_identifier) @callee)) @call
(call_expression function: (scoped_identifier path: (_) @receiver name: (identifier) @callee)) @call
(call_expression function: (generic_function function: (identifier) @callee)) @call
(macro_invocation macro: (identifier) @callee) @call
(use_declaration) @import
(mod_item name: (identifier) @_n !body) @import
"""


def imports(node: Node, source: bytes) -> list[ImportRef]:
    line = node.start_point[0] + 1
    if node.type == "mod_item":
        return [ImportRef(module=text(node.child_by_field_name("name"), source), line=line, kind="mod")]
    arg = node.child_by_field_name("argument")
    if arg is None:
        return []
    spec = "".join(text(arg, source).split())
    # `use a::b::{c, d as e}` -> module a::b, names c, d
    if "{" in spec:
        base, _, rest = spec.partition("{")
        names = [n for n in rest.rstrip("}").split(",") if n]
        ref = ImportRef(module=base.rstrip(":"), line=line)
        for n in names:
            name, _, alias = n.partition("as")
            ref.names.append(name)
            ref.aliases.append(alias)
        return [ref]
    path, _, alias = spec.partition("as")
    return [ImportRef(module=path, line=line, alias=alias)]


SPEC = LanguageSpec(name="rust", load=tree_sitter_rust.language, query=QUERY, imports=imports)
