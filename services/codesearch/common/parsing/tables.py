"""Programming languages as one tree-sitter query each (data, not code), with definitions, calls and imports.

The captures follow `engine.py`. Every language of the polyglot set without its own module is here; the
configuration, schema and document languages are in `structure.py`.
"""

from __future__ import annotations

from tree_sitter import Node

from codesearch.common.parsing.engine import LanguageSpec, text
from codesearch.common.parsing.grammars import spec
from codesearch.common.parsing.model import ImportRef
from codesearch.common.parsing.preprocess import c_family_retries, kotlin_retries, swift_retries
from codesearch.common.parsing.structure import SPECS as STRUCTURE_SPECS


def _none_of(capture: str, *words: str) -> str:
    """A predicate that drops matches whose capture is one of `words` (py-tree-sitter has no #not-any-of?)."""
    alternatives = "|".join(w.replace(".", "[.]") for w in words)
    return f'(#not-match? @{capture} "^({alternatives})$")'


# Elixir forms that look like calls but define, import, branch or annotate (`@spec`): never a call edge.
_ELIXIR_FORMS = _none_of(
    "callee",
    *[
        "def",
        "defp",
        "defmacro",
        "defmacrop",
        "defguard",
        "defguardp",
        "defdelegate",
        "defmodule",
        "defprotocol",
        "defimpl",
        "defstruct",
    ],
    *[
        "defexception",
        "defoverridable",
        "alias",
        "import",
        "require",
        "use",
        "quote",
        "unquote",
        "if",
        "unless",
        "case",
        "cond",
        "with",
        "for",
    ],
    *[
        "fn",
        "try",
        "receive",
        "raise",
        "reraise",
        "super",
        "type",
        "typep",
        "opaque",
        "spec",
        "callback",
        "macrocallback",
        "doc",
        "moduledoc",
    ],
    *["impl", "behaviour", "derive"],
)

KOTLIN = r"""
(class_declaration "interface" (type_identifier) @name) @def.interface
(class_declaration "enum" (type_identifier) @name) @def.enum
(class_declaration (type_identifier) @name) @def.class
(object_declaration (type_identifier) @name) @def.class
(function_declaration (receiver_type (user_type (type_identifier) @owner)) (simple_identifier) @name) @def.method
(function_declaration (simple_identifier) @name) @def.function
(type_alias (type_identifier) @name) @def.type_alias
(call_expression (simple_identifier) @callee) @call
(call_expression (navigation_expression (_) @receiver (navigation_suffix (simple_identifier) @callee))) @call
(import_header (identifier) @module (import_alias (type_identifier) @alias)?) @import
"""

SCALA = r"""
(trait_definition name: (identifier) @name) @def.trait
(object_definition name: (identifier) @name) @def.module
(class_definition name: (identifier) @name) @def.class
(enum_definition name: (identifier) @name) @def.enum
(function_definition name: (identifier) @name) @def.function
(function_declaration name: (identifier) @name) @def.function
(type_definition name: (type_identifier) @name) @def.type_alias
(template_body (val_definition pattern: (identifier) @name) @def.constant)
(instance_expression (type_identifier) @callee) @call
(call_expression function: (identifier) @callee) @call
(call_expression function: (field_expression value: (_) @receiver field: (identifier) @callee)) @call
(call_expression function: (generic_function function: (identifier) @callee)) @call
(call_expression function: (generic_function function: (field_expression value: (_) @receiver
  field: (identifier) @callee))) @call
(import_declaration) @import
"""

SWIFT = r"""
(class_declaration declaration_kind: "struct" name: (type_identifier) @name) @def.struct
(class_declaration declaration_kind: "enum" name: (type_identifier) @name) @def.enum
(class_declaration declaration_kind: "extension" name: (user_type (type_identifier) @name)) @scope
(class_declaration name: (type_identifier) @name) @def.class
(protocol_declaration name: (type_identifier) @name) @def.interface
(function_declaration name: (simple_identifier) @name) @def.function
(protocol_function_declaration name: (simple_identifier) @name) @def.method
(init_declaration "init" @name) @def.method
(typealias_declaration name: (type_identifier) @name) @def.type_alias
(call_expression (simple_identifier) @callee) @call
(call_expression (prefix_expression target: (simple_identifier) @callee)) @call
(call_expression (navigation_expression target: (_) @receiver
  suffix: (navigation_suffix suffix: (simple_identifier) @callee))) @call
(import_declaration (identifier) @module) @import
"""

ELIXIR = rf"""
(call target: (identifier) @_k (#eq? @_k "defmodule") (arguments (alias) @name)) @def.module
(call target: (identifier) @_k (#eq? @_k "defprotocol") (arguments (alias) @name)) @def.interface
(call target: (identifier) @_k (#any-of? @_k "def" "defp" "defmacro" "defmacrop" "defguard" "defguardp"
  "defdelegate")
  (arguments . [(call target: (identifier) @name) (identifier) @name
                (binary_operator left: (call target: (identifier) @name))])) @def.function
(call target: (identifier) @callee {_ELIXIR_FORMS}) @call
(call target: (dot left: (_) @receiver right: (identifier) @callee)) @call
(call target: (identifier) @_k (#any-of? @_k "alias" "import" "require" "use") (arguments . (alias) @module)) @import
(unary_operator operator: "@" operand: (call target: (identifier) @nocall))
"""

LUA = r"""
(function_declaration name: (method_index_expression table: (_) @owner method: (identifier) @name)) @def.method
(function_declaration name: (dot_index_expression table: (_) @owner field: (identifier) @name)) @def.function
(function_declaration name: (identifier) @name) @def.function
(assignment_statement (variable_list . name: (dot_index_expression table: (_) @owner field: (identifier) @name))
  (expression_list . value: (function_definition))) @def.function
(assignment_statement (variable_list . name: (identifier) @name)
  (expression_list . value: (function_definition))) @def.function
(function_call name: (identifier) @callee) @call
(function_call name: (dot_index_expression table: (_) @receiver field: (identifier) @callee)) @call
(function_call name: (method_index_expression table: (_) @receiver method: (identifier) @callee)) @call
(assignment_statement (variable_list . name: (identifier) @alias)
  (expression_list . value: (function_call name: (identifier) @_r (#eq? @_r "require")
    arguments: (arguments . (string content: (string_content) @module))))) @import
(function_call name: (identifier) @_r (#eq? @_r "require")
  arguments: (arguments . (string content: (string_content) @module))) @import
"""

HASKELL = r"""
(data_type name: (name) @name) @def.struct
(newtype name: (name) @name) @def.struct
(type_synomym name: (name) @name) @def.type_alias
(class name: (name) @name) @def.interface
(class_declarations (signature name: (variable) @name) @def.method)
(function name: (variable) @name) @def.function
(declarations (bind name: (variable) @name) @def.function)
(apply function: (variable) @callee) @call
(apply function: (qualified module: (module) @receiver id: (variable) @callee)) @call
(infix left_operand: (variable) @callee operator: (operator) @_op (#eq? @_op "$")) @call
(import module: (module) @module alias: (module)? @alias) @import
"""

ZIG = r"""
(VarDecl variable_type_function: (IDENTIFIER) @name
  (ErrorUnionExpr (SuffixExpr (ContainerDecl (ContainerDeclType "enum"))))) @def.enum
(VarDecl variable_type_function: (IDENTIFIER) @name
  (ErrorUnionExpr (SuffixExpr (ContainerDecl (ContainerDeclType ["struct" "union" "opaque"]))))) @def.struct
(Decl (FnProto function: (IDENTIFIER) @name)) @def.function
(SuffixExpr variable_type_function: (IDENTIFIER) @callee . (FnCallArguments)) @call
(SuffixExpr variable_type_function: (IDENTIFIER) @receiver (FieldOrFnCall function_call: (IDENTIFIER) @callee)) @call
(VarDecl variable_type_function: (IDENTIFIER) @alias (ErrorUnionExpr (SuffixExpr (BUILTINIDENTIFIER) @_b
  (#eq? @_b "@import") (FnCallArguments (ErrorUnionExpr (SuffixExpr (STRINGLITERALSINGLE) @module)))))) @import
(SuffixExpr (BUILTINIDENTIFIER) @_b (#eq? @_b "@import")
  (FnCallArguments (ErrorUnionExpr (SuffixExpr (STRINGLITERALSINGLE) @module)))) @import
"""

BASH = r"""
(function_definition name: (word) @name) @def.function
(command name: (command_name (word) @callee) (#not-match? @callee "^(source|[.])$")) @call
(command name: (command_name (word) @_s) (#any-of? @_s "source" ".") . argument: (_) @module) @import
"""

OBJC = r"""
(class_interface . (identifier) @name) @def.interface
(class_implementation . (identifier) @name) @def.class
(protocol_declaration . (identifier) @name) @def.interface
(method_declaration (method_type) . (identifier) @name) @def.method
(method_definition (method_type) . (identifier) @name) @def.method
(function_definition declarator: (function_declarator declarator: (identifier) @name)) @def.function
(struct_specifier name: (type_identifier) @name body: (field_declaration_list)) @def.struct
(enum_specifier name: (type_identifier) @name body: (enumerator_list)) @def.enum
(type_definition declarator: (type_identifier) @name) @def.type_alias
(message_expression receiver: (_) @receiver method: (identifier) @callee) @call
(call_expression function: (identifier) @callee) @call
(preproc_include path: (_) @module) @import
"""

DART = r"""
(class_definition name: (identifier) @name) @def.class
(enum_declaration name: (identifier) @name) @def.enum
(mixin_declaration (identifier) @name) @def.class
(extension_declaration name: (identifier) @name) @def.class
((method_signature (function_signature name: (identifier) @name)) @def.method . (function_body) @end)
((method_signature (getter_signature name: (identifier) @name)) @def.method . (function_body) @end)
((function_signature name: (identifier) @name) @def.function . (function_body) @end)
(import_specification (configurable_uri) @module) @import
"""


OCAML = r"""
(value_definition (let_binding pattern: (value_name) @name) @def.function)
(type_definition (type_binding name: (type_constructor) @name) @def.type_alias)
(module_definition (module_binding (module_name) @name) @def.module)
(module_type_definition (module_type_name) @name) @def.interface
(application_expression function: (value_path (value_name) @callee)) @call
(open_module module: (module_path) @module) @import
"""

ERLANG = r"""
(fun_decl (function_clause name: (atom) @name)) @def.function
(record_decl name: (atom) @name) @def.struct
(call expr: (atom) @callee) @call
(call expr: (remote module: (remote_module module: (atom) @receiver) fun: (atom) @callee)) @call
"""

CLOJURE = rf"""
(list_lit . (sym_lit name: (sym_name) @_d) . (sym_lit name: (sym_name) @name)
  (#any-of? @_d "defn" "defn-" "defmacro" "defmulti" "defprotocol" "defrecord" "deftype")) @def.function
(list_lit . (sym_lit name: (sym_name) @_d) . (sym_lit name: (sym_name) @name) (#eq? @_d "def")) @def.constant
(list_lit . (sym_lit name: (sym_name) @_d) . (sym_lit name: (sym_name) @name) (#eq? @_d "ns")) @def.module
(list_lit . (sym_lit name: (sym_name) @callee)
  {_none_of("callee", "defn", "defn-", "defmacro", "defmulti", "defprotocol", "defrecord", "deftype", "def", "ns")}) @call
"""

R = r"""
(binary_operator lhs: (identifier) @name rhs: (function_definition)) @def.function
(call function: (identifier) @callee) @call
(call function: (namespace_operator rhs: (identifier) @callee)) @call
"""

JULIA = r"""
(module_definition name: (identifier) @name) @def.module
(struct_definition (type_head . [(identifier) @name (binary_expression . (identifier) @name)
  (parametrized_type_expression . (identifier) @name)])) @def.struct
(abstract_definition (type_head . [(identifier) @name (binary_expression . (identifier) @name)])) @def.type_alias
(function_definition (signature . [(call_expression . (identifier) @name)
  (typed_expression . (call_expression . (identifier) @name))
  (where_expression . (call_expression . (identifier) @name))])) @def.function
(macro_definition (signature . (call_expression . (identifier) @name))) @def.function
(assignment . (call_expression . (identifier) @name)) @def.function
(call_expression . (identifier) @callee) @call
(call_expression . (field_expression . (_) @receiver (identifier) @callee .)) @call
(using_statement (identifier) @module) @import
(import_statement (identifier) @module) @import
"""

PERL = r"""
(subroutine_declaration_statement name: (bareword) @name) @def.function
(package_statement name: (package) @name) @def.module
(function_call_expression function: (function) @callee) @call
(method_call_expression invocant: (_) @receiver method: (method) @callee) @call
(use_statement module: (package) @module) @import
"""


def scala_imports(node: Node, source: bytes) -> list[ImportRef]:
    """`import a.b.{C, D => E}` -> module "a.b", names ["C", "D"], aliases ["", "E"]; `a.b._` -> names ["*"]."""
    path = [text(c, source) for c in node.children_by_field_name("path") if c.is_named]
    names: list[str] = []
    aliases: list[str] = []
    for child in node.named_children:
        if child.type in ("namespace_wildcard", "wildcard"):
            names.append("*")
            aliases.append("")
        elif child.type == "namespace_selectors":
            for sel in child.named_children:
                if sel.type == "identifier":
                    names.append(text(sel, source))
                    aliases.append("")
                elif sel.type in ("arrow_renamed_identifier", "as_renamed_identifier"):
                    names.append(text(sel.child_by_field_name("name"), source))
                    aliases.append(text(sel.child_by_field_name("alias"), source))
                elif sel.type in ("namespace_wildcard", "wildcard"):
                    names.append("*")
                    aliases.append("")
    if not names and len(path) > 1:  # `import a.b.C` imports C from a.b
        names, path = [path[-1]], path[:-1]
        aliases = [""]
    return [ImportRef(module=".".join(path), line=node.start_point[0] + 1, names=names, aliases=aliases)]


def split_alias(name: str) -> tuple[str, str]:
    """Elixir `defmodule Plug.Conn`: the module is "Conn" inside "Plug", so a search for Conn finds it."""
    owner, _, short = name.rpartition(".")
    return short, owner


# Elixir's and Haskell's modules hold functions, not methods; their classes (Haskell) hold method signatures.
_NO_MODULE_METHODS = frozenset({"class", "struct", "interface", "trait", "enum"})


SPECS: dict[str, LanguageSpec] = {
    **STRUCTURE_SPECS,
    "kotlin": spec("kotlin", "kotlin", KOTLIN, recover=kotlin_retries),
    "scala": spec("scala", "scala", SCALA, imports=scala_imports),
    "swift": spec("swift", "swift", SWIFT, recover=swift_retries),
    "elixir": spec(
        "elixir",
        "elixir",
        ELIXIR,
        method_parents=_NO_MODULE_METHODS,
        merge_clauses=True,
        split_name=split_alias,
    ),
    "lua": spec("lua", "lua", LUA),
    "haskell": spec("haskell", "haskell", HASKELL, method_parents=_NO_MODULE_METHODS, merge_clauses=True),
    "zig": spec("zig", "zig", ZIG),
    "bash": spec("bash", "bash", BASH),
    "objc": spec("objc", "objc", OBJC, recover=c_family_retries, preprocessed=True),
    "dart": spec("dart", "dart", DART),
    "ocaml": spec("ocaml", "ocaml", OCAML, method_parents=_NO_MODULE_METHODS),
    "erlang": spec("erlang", "erlang", ERLANG, merge_clauses=True),
    "clojure": spec("clojure", "clojure", CLOJURE),
    "r": spec("r", "r", R),
    "julia": spec("julia", "julia", JULIA, method_parents=_NO_MODULE_METHODS),
    "perl": spec("perl", "perl", PERL),
}
