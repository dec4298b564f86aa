"""Go: functions, methods (qualified by receiver type), structs, interfaces, type aliases, calls, imports."""

from __future__ import annotations

import tree_sitter_go
from tree_sitter import Node

from codesearch.common.parsing.engine import LanguageSpec, text
from codesearch.common.parsing.model import ImportRef

QUERY = r"""
(function_declaration name: (identifier) @name) @def.function
(method_declaration
  receiver: (parameter_list (parameter_declaration type: [
    (type_identifier) @owner
    (pointer_type (type_identifier) @owner)
    (generic_type type: (type_identifier) @owner)
    (pointer_type (generic_type type: (type_identifier) @owner))]))
  name: (field_identifier) @name) @def.method
(type_spec name: (type_identifier) @name type: (struct_type)) @def.struct
(type_spec name: (type_identifier) @name type: (interface_type)) @def.interface
(type_spec name: (type_identifier) @name type: [(type_identifier) (qualified_type) (function_type) (map_type)
  (slice_type) (array_type) (pointer_type) (channel_type) (generic_type)]) @def.type_alias
(type_alias name: (type_identifier) @name) @def.type_alias
(const_spec name: (identifier) @name) @def.constant
(call_expression function: (identifier) @callee) @call
(call_expression function: (selector_expression operand: (_) @receiver field: (field_identifier) @callee)) @call
(import_spec) @import
"""


def imports(node: Node, source: bytes) -> list[ImportRef]:
    path = text(node.child_by_field_name("path"), source).strip('"`')
    alias = text(node.child_by_field_name("name"), source)
    return [ImportRef(module=path, line=node.start_point[0] + 1, alias=alias)]


SPEC = LanguageSpec(name="go", load=tree_sitter_go.language, query=QUERY, imports=imports)
