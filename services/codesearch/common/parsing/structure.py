"""Configuration, schema and document languages: the definitions (or sections) their chunks are cut at.

Schema definitions (SQL tables, Protobuf messages, Terraform blocks, Make targets, GraphQL types) are symbols the
graph keeps; YAML keys, Dockerfile stages, single-file-component sections and Markdown headings only cut chunks.
"""

from __future__ import annotations

from codesearch.common.parsing.engine import LanguageSpec
from codesearch.common.parsing.grammars import spec

SQL = r"""
(create_table (object_reference name: (identifier) @name)) @def.struct
(create_view (object_reference name: (identifier) @name)) @def.struct
(create_materialized_view (object_reference name: (identifier) @name)) @def.struct
(create_function (object_reference name: (identifier) @name)) @def.function
(create_type (object_reference name: (identifier) @name)) @def.type_alias
"""

PROTOBUF = r"""
(message (message_name (identifier) @name)) @def.struct
(enum (enum_name (identifier) @name)) @def.enum
(service (service_name (identifier) @name)) @def.interface
(rpc (rpc_name (identifier) @name)) @def.method
(import path: (string) @module) @import
"""

HCL = r"""
(block (identifier) (string_lit (template_literal) @owner) . (string_lit (template_literal) @name)) @def.module
(block (identifier) . (string_lit (template_literal) @name) . (block_start)) @def.module
(block (identifier) @name . (block_start)) @def.module
"""

MAKE = r"""
(rule (targets) @name) @def.function
(define_directive name: (word) @name) @def.function
(include_directive filenames: (list) @module) @import
"""

GRAPHQL = r"""
(object_type_definition (name) @name) @def.struct
(input_object_type_definition (name) @name) @def.struct
(interface_type_definition (name) @name) @def.interface
(enum_type_definition (name) @name) @def.enum
(union_type_definition (name) @name) @def.type_alias
(scalar_type_definition (name) @name) @def.type_alias
(operation_definition (name) @name) @def.function
(fragment_definition (fragment_name (name) @name)) @def.function
"""

# Structure only (symbols=False): sections cut chunks; the graph keeps no definitions for these.
YAML = r"""
(block_mapping_pair key: (flow_node) @name value: (block_node)) @def.section
"""

DOCKERFILE = r"""
(from_instruction (image_spec) @name) @def.section
"""

SFC = r"""
(template_element (start_tag (tag_name) @name)) @def.section
(script_element (start_tag (tag_name) @name)) @def.section
(style_element (start_tag (tag_name) @name)) @def.section
"""

SVELTE = r"""
(script_element (start_tag (tag_name) @name)) @def.section
(style_element (start_tag (tag_name) @name)) @def.section
(document (element (start_tag (tag_name) @name)) @def.section)
"""

MARKDOWN = r"""
(section (atx_heading heading_content: (inline) @name)) @def.section
(section (setext_heading heading_content: (paragraph) @name)) @def.section
"""


SPECS: dict[str, LanguageSpec] = {
    "sql": spec("sql", "sql", SQL),
    "protobuf": spec("protobuf", "proto", PROTOBUF),
    "hcl": spec("hcl", "hcl", HCL),
    "make": spec("make", "make", MAKE),
    "graphql": spec("graphql", "graphql", GRAPHQL),
    "yaml": spec("yaml", "yaml", YAML, symbols=False),
    "dockerfile": spec("dockerfile", "dockerfile", DOCKERFILE, symbols=False, extend_to_next=True),
    "vue": spec("vue", "vue", SFC, symbols=False),
    "svelte": spec("svelte", "svelte", SVELTE, symbols=False),
    "markdown": spec("markdown", "markdown", MARKDOWN, symbols=False),
}
