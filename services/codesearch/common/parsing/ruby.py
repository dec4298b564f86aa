"""Ruby: modules, classes, methods (instance and singleton), constants, calls, require / require_relative."""

from __future__ import annotations

import tree_sitter_ruby
from tree_sitter import Node

from codesearch.common.parsing.engine import LanguageSpec, text
from codesearch.common.parsing.model import ImportRef

QUERY = r"""
(module name: (_) @name) @def.module
(class name: (_) @name) @def.class
(method name: (_) @name) @def.method
(singleton_method name: (_) @name) @def.method
(assignment left: (constant) @name) @def.constant
(call method: (identifier) @_m (#any-of? @_m "require" "require_relative" "load")) @import
(call receiver: (_) @receiver method: (_) @callee) @call
(call !receiver method: (_) @callee) @call
"""


def imports(node: Node, source: bytes) -> list[ImportRef]:
    method = text(node.child_by_field_name("method"), source)
    args = node.child_by_field_name("arguments")
    if args is None or not args.named_children:
        return []
    spec = text(args.named_children[0], source).strip("'\"")
    return [ImportRef(module=spec, line=node.start_point[0] + 1, kind=method)]


SPEC = LanguageSpec(name="ruby", load=tree_sitter_ruby.language, query=QUERY, imports=imports)
