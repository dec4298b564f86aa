"""The project's macro table: what its headers define as attributes is blanked in a file that uses it, and nothing
else is (a macro only ever defined empty is a flag or a stub, and the function of that name stays)."""

from __future__ import annotations

from codesearch.common.languages import ProjectHint
from codesearch.common.parsing import extract
from codesearch.common.parsing.macros import collect

# abseil-cpp's forms, as its absl/base headers define them (both #if branches).
HEADERS = [
    b"#if defined(__clang__)\n#define ABSL_GUARDED_BY(x) __attribute__((guarded_by(x)))\n"
    b"#define ABSL_ACQUIRED_AFTER(...) __attribute__((acquired_after(__VA_ARGS__)))\n"
    b"#define absl_nullable _Nullable\n#define ABSL_PER_THREAD_TLS_KEYWORD __thread\n"
    b"#else\n#define ABSL_GUARDED_BY(x)\n#define ABSL_ACQUIRED_AFTER(...)\n#define absl_nullable\n"
    b"#define ABSL_PER_THREAD_TLS_KEYWORD\n#endif\n",
    b"#define ABSL_CORD_NO_SANITIZE \\\n  ABSL_ATTRIBUTE_NO_SANITIZE_ADDRESS\n"
    b"#define ABSL_ATTRIBUTE_NO_SANITIZE_ADDRESS __attribute__((no_sanitize_address))\n",
    # curl: a function compiled out, a feature flag, an include guard: only ever empty
    b"#ifndef HEADER_ALTSVC_H\n#define HEADER_ALTSVC_H\n#define USE_ALTSVC\n#define Curl_altsvc_cleanup(x)\n#endif\n",
    # a test file's local shorthand
    b"#define x\n",
]

USES = (
    b"namespace absl {\n"
    b"static absl::NoDestructor<absl::Mutex> update_sites_mutex ABSL_ACQUIRED_AFTER(\n"
    b"    mutex);\n"
    b"std::vector<int>* update_callbacks\n    ABSL_GUARDED_BY(GetUpdateSitesMutex()) = nullptr;\n"
    b"char* absl_nullable DecodePunycode(int options) { return Helper(options); }\n"
    b"ABSL_PER_THREAD_TLS_KEYWORD ThreadIdentity* thread_identity_ptr = nullptr;\n"
    b"struct Rep {\n  ABSL_CORD_NO_SANITIZE\n  int tag() const { return 0; }\n};\n"
    b"}  // namespace absl\n"
)


def test_collect_keeps_attribute_macros_only() -> None:
    table = collect(HEADERS)
    assert table.functions == {b"ABSL_GUARDED_BY", b"ABSL_ACQUIRED_AFTER"}
    assert {b"absl_nullable", b"ABSL_PER_THREAD_TLS_KEYWORD", b"ABSL_CORD_NO_SANITIZE"} <= table.objects
    for not_attribute in (b"Curl_altsvc_cleanup", b"USE_ALTSVC", b"HEADER_ALTSVC_H", b"x"):
        assert not_attribute not in table.objects | table.functions


def test_blank_keeps_length_lines_and_definitions() -> None:
    table = collect(HEADERS)
    blanked = table.blank(USES)
    assert len(blanked) == len(USES)
    assert [i for i, c in enumerate(blanked) if c == 10] == [i for i, c in enumerate(USES) if c == 10]
    assert b"ABSL_GUARDED_BY" not in blanked and b"absl_nullable" not in blanked
    # a #define body keeps its macros (blanking a continuation line would end the directive early)
    header = HEADERS[1]
    assert table.blank(header) == header


def test_a_file_using_the_projects_macros_parses_clean() -> None:
    plain = extract("a.cc", "cpp", USES)
    assert plain is not None and plain.error_count > 0  # without the table the grammar fails
    project = ProjectHint(cpp=True).with_macros(HEADERS)
    e = extract("a.cc", "cpp", USES, project.macros)
    assert e is not None and e.error_count == 0
    names = {d.name for d in e.definitions}
    assert {"DecodePunycode", "tag", "Rep"} <= names
    assert any(c.callee == "Helper" for c in e.calls)


def test_a_compiled_out_stub_does_not_blank_the_function() -> None:
    src = b"void Curl_altsvc_cleanup(struct altsvcinfo **asi)\n{\n  free(*asi);\n}\nint f(void) { return ) ; }\n"
    table = collect(HEADERS)
    assert table.blank(src) == src


def test_pasting_macros_become_one_identifier() -> None:
    headers = [b"#define ElfW(x) __ElfN(x)\n", b"#define fileno(x) _fileno(x)\n"]
    table = collect(headers)
    assert table.pastes == {b"ElfW"}  # `_fileno` is a function: `fileno(fp)` stays a call
    src = b"int ElfBind(const ElfW(Sym) *symbol) { return bind(symbol->st_info); }\nint g(FILE *fp) { return fileno(fp); }\n"
    assert table.blank(src).startswith(b"int ElfBind(const ElfW_Sym_ *symbol)")
    plain = extract("a.cc", "cpp", src)
    assert plain is not None and plain.error_count > 0
    e = extract("a.cc", "cpp", src, table)
    assert e is not None and e.error_count == 0
    assert {"ElfBind", "g"} <= {d.name for d in e.definitions}
    assert {"bind", "fileno"} <= {c.callee for c in e.calls}


def test_a_files_own_defines_count_too() -> None:
    src = (
        b"#define C(x) 0x##x##ULL\nstatic const uint64_t k[] = {C(541150e87f415e96), C(1aef0d24b3148a1a)};\n"
    )
    e = extract("city_test.cc", "cpp", src)
    assert e is not None and e.error_count == 0
    assert not any(c.callee == "C" for c in e.calls)
