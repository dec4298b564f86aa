"""Python: functions, classes, methods, UPPER_CASE module constants, calls, import statements."""

from __future__ import annotations

import tree_sitter_python
from tree_sitter import Node

from codesearch.common.parsing.engine import LanguageSpec, text
from codesearch.common.parsing.model import ImportRef

# Module constants are UPPER_CASE module-level assignments: lower-case module names are mostly
# aliases and caches, and ast-style "constants" would flood name lookups with noise.
QUERY = r"""
(function_definition name: (identifier) @name) @def.function
(class_definition name: (identifier) @name) @def.class
(module (expression_statement (assignment left: (identifier) @name)) @def.constant
  (#match? @name "^_*[A-Z][A-Z0-9_]*$"))
(call function: (identifier) @callee) @call
(call function: (attribute object: (_) @receiver attribute: (identifier) @callee)) @call
(import_statement) @import
(import_from_statement) @import
(future_import_statement) @import
"""


def _dotted(node: Node | None, source: bytes) -> str:
    return "".join(text(node, source).split())


def imports(node: Node, source: bytes) -> list[ImportRef]:
    line = node.start_point[0] + 1
    if node.type == "import_statement":
        refs = []
        for child in node.children_by_field_name("name"):
            if child.type == "aliased_import":
                refs.append(
                    ImportRef(
                        module=_dotted(child.child_by_field_name("name"), source),
                        line=line,
                        alias=text(child.child_by_field_name("alias"), source),
                    )
                )
            else:
                refs.append(ImportRef(module=_dotted(child, source), line=line))
        return refs
    module_node = node.child_by_field_name("module_name")
    level = 0
    module = "__future__" if node.type == "future_import_statement" else ""
    if module_node is not None and module_node.type == "relative_import":
        for child in module_node.children:
            if child.type == "import_prefix":
                level = text(child, source).count(".")
            elif child.type == "dotted_name":
                module = _dotted(child, source)
    elif module_node is not None:
        module = _dotted(module_node, source)
    names: list[str] = []
    aliases: list[str] = []
    for child in node.children_by_field_name("name"):
        if child.type == "aliased_import":
            names.append(_dotted(child.child_by_field_name("name"), source))
            aliases.append(text(child.child_by_field_name("alias"), source))
        else:
            names.append(_dotted(child, source))
            aliases.append("")
    if any(c.type == "wildcard_import" for c in node.children):
        names.append("*")
        aliases.append("")
    return [ImportRef(module=module, line=line, names=names, level=level, aliases=aliases)]


SPEC = LanguageSpec(name="python", load=tree_sitter_python.language, query=QUERY, imports=imports)
