"""Which `#if` conditionals keep every branch in the C-family candidates: those whose branches each hold whole
statements or declarations, standing where one may stand."""

from __future__ import annotations

from codesearch.common.parsing import extract
from codesearch.common.parsing.conditionals import whole_conditionals

SOURCE = """#include "x.h"
#ifdef USE_OPENSSL
int init(void) { return 1; }
#elif defined(USE_WOLFSSL)
int init(void) { return 2; }  /* { */
#else
#ifdef SMALL
int own(void) { return 3; }
#else
int own(void) { return 4; }
#endif
#endif
ABSL_NAMESPACE_BEGIN
#if A
typedef int word;
#else
typedef long word;
#endif
int grow(int n) {
#ifdef FAST
  if (n > 1) {
#else
  if (n > 2) {
#endif
    return n;
  }
  x = f(a,
#if X
   b,
#else
   c,
#endif
   d);
#ifdef ONLY_ONE
  y = 1;
#endif
}
"""


def test_conditionals_of_whole_declarations_keep_every_branch_the_others_their_first() -> None:
    whole = whole_conditionals(SOURCE.encode())
    lines = SOURCE.split("\n")
    assert sorted(lines[i] for i in whole) == ["#if A", "#ifdef SMALL", "#ifdef USE_OPENSSL"]


def test_definitions_in_an_else_branch_are_kept_where_the_file_needs_the_candidates() -> None:
    # The file's first parse has errors (`WINAPI`), so a preprocess candidate is kept: its `#else` branch was
    # blanked with every definition in it (curl's md4.c, abseil's compare.h: 189 abseil-cpp and 74 curl
    # definitions were not indexed).
    src = (
        "BOOL WINAPI DllMain(HINSTANCE h, DWORD r, LPVOID p);\n"
        "#ifdef USE_OPENSSL\n"
        "static int ssl_init(ctx *c) { return 1; }\n"
        "#else\n"
        "struct own_ctx { int a; };\n"
        "static int own_init(struct own_ctx *c) { c->a = 1; return helper(c); }\n"
        "#endif\n"
    )
    e = extract("lib/md4.c", "c", src.encode())
    assert e is not None and e.error_count == 0
    assert {(d.name, d.start_line) for d in e.definitions} >= {
        ("ssl_init", 3),
        ("own_ctx", 5),
        ("own_init", 6),
    }
    assert [(c.callee, c.line, c.enclosing) for c in e.calls] == [("helper", 6, "own_init")]
