"""The C++ rewrites and macro forms added for abseil-cpp's last files with errors: each parses clean, keeps its
definitions and calls, and keeps length and lines; the forms the grammar already reads are left alone."""

from __future__ import annotations

import pytest
from codesearch.common.parsing import Extraction, extract
from codesearch.common.parsing.cpp_gaps import rewrite_cpp_gaps
from codesearch.common.parsing.macros import collect
from codesearch.common.parsing.preprocess import blank_macros


def _extract_clean(src: str, path: str = "a.cc") -> Extraction:
    e = extract(path, "cpp", src.encode())
    assert e is not None and e.error_count == 0, src
    return e


@pytest.mark.parametrize(
    "src",
    [
        # `__restrict` after a reference (container/internal/raw_hash_set.cc)
        "size_t Drop(CommonFields& common, const PolicyFunctions& __restrict policy) { return 0; }\n",
        # operators called by name without a receiver (container/internal/btree.h, log/internal/log_message.h)
        "struct I {\n  P operator->() const { return &operator*(); }\n"
        "  L& operator<<(char v) { return operator<< <char>(v); }\n};\n",
        # an operator template specialized outside its class (log/internal/log_message.cc)
        "template <>\nLogMessage& LogMessage::operator<< <const wchar_t*>(const wchar_t* const& v) {\n"
        "  return *this;\n}\n",
        # a functional cast to a keyword type (strings/escaping.cc)
        "int f() { return ((unsigned(b[s[0]]) << 18) | (unsigned(b[s[1]]) << 12)); }\n",
        # `= delete` on template functions with a return type (hash_function_defaults_test.cc, civil_time_detail.h)
        "struct S {\n  template <typename T>\n  bool operator==(T&& other) const = delete;\n};\n"
        "template <typename T, typename U>\ndiff_t operator-(civil_time<T>, civil_time<U>) = delete;\n",
        # a declaration as a for condition (time/internal/cctz/src/time_zone_posix.cc)
        "const char* P(const char* p) {\n  for (; const char* dp = strchr(kDigits, *p); ++p) {\n    g(dp);\n  }\n"
        "  return p;\n}\n",
        # a pack expansion of a using-declaration (functional/overload.h)
        "template <typename... T>\nstruct Overload final : T... {\n  using T::operator()...;\n};\n",
        # a register variable bound to a register (debugging/internal/addresses.h)
        'uintptr_t S(uintptr_t ptr) {\n  register uintptr_t x30 __asm__("x30") = ptr;\n  return x30;\n}\n',
        # MSVC's inheritance keywords (synchronization/mutex_method_pointer_test.cc)
        "class __virtual_inheritance V : virtual public Callback {\n  bool x = false;\n};\n",
        # deducing this (synchronization/mutex_test.cc)
        "struct T {\n  template <class This, class... Args>\n  bool operator()(this const This&, Args...) {\n"
        "    return true;\n  }\n};\n",
        # an attribute between a variable and its initializer (time/internal/cctz/src/zone_info_source.cc)
        "ZoneInfoSourceFactory zone_info_source_factory __attribute__((weak)) =\n    DefaultFactory;\n",
        # `typename` before a member on the next line (container/internal/container_memory.h)
        "void f() {\n  auto r = typename std::conjunction<\n      A<typename V::first_type>,\n      B>::\n"
        "      type();\n  g(r);\n}\n",
        # a comment inside a multi-line #define (strings/internal/str_format/arg.h)
        "#define X(...)                           \\\n  F(short, __VA_ARGS__); /* NOLINT */ \\\n"
        "  F(int, __VA_ARGS__)\nint g() { return 1; }\n",
        # a macro line continued by a stream or a call chain (hash/hash_test.cc, log/scoped_mock_log.cc)
        'void f() {\n  EXPECT_LE(a, b)\n      << "0x" << std::hex << c;\n  EXPECT_CALL(*this, Send)\n'
        "      .Times(AnyNumber());\n}\n",
        # a macro line after a comment that ends in `/` or `-` (flags/reflection.h, time/time.cc)
        "namespace absl {\nABSL_NAMESPACE_BEGIN\nint f();\n//----\nABSL_NAMESPACE_END\n}  // namespace absl\n",
        # placement new of an upper-case type (synchronization/internal/win32_waiter.cc)
        "W::W() {\n  auto *cv = ::new (static_cast<void *>(&cv_storage_)) CONDITION_VARIABLE;\n  Init(cv);\n}\n",
    ],
)
def test_forms_parse_clean(src: str) -> None:
    _extract_clean(src)


def test_rewrites_keep_length_lines_and_the_calls() -> None:
    src = (
        b"const char* P(const char* p) {\n  for (; const char* dp = strchr(kDigits, *p); ++p) {\n  }\n"
        b"  return &operator*();\n}\nint f(const P& __restrict p) { return ((unsigned(b[0]) << 18)); }\n"
    )
    out = rewrite_cpp_gaps(src)
    assert len(out) == len(src)
    assert [i for i, c in enumerate(out) if c == 10] == [i for i, c in enumerate(src) if c == 10]
    assert b"for (  const char* dp = strchr(kDigits, *p);;++p)" in out  # the declaration keeps its offsets
    assert out.index(b"strchr") == src.index(b"strchr")
    e = extract("a.cc", "cpp", src)
    assert e is not None and e.error_count == 0
    assert {"strchr", "operator*"} <= {c.callee for c in e.calls}
    assert {"P", "f"} <= {d.name for d in e.definitions}


def test_forms_the_grammar_reads_are_left_alone() -> None:
    # a template constructor deleted in its class: the grammar reads it, and the member stays a definition
    src = "struct A {\n  template <typename T>\n  A(std::initializer_list<T>) = delete;\n  A(int x) {}\n};\n"
    assert rewrite_cpp_gaps(src.encode()) == src.encode()
    # a macro line that continues an assignment and one inside a #define stay
    kept = b'int v =\n    VERSION_A;\n#define X(i) \\\n  ABSL_INTERNAL_TOKEN_STR(NAME)[i]\n\nstatic_assert(X(0) != 0, "");\n'
    assert blank_macros(kept) == kept
    e = _extract_clean(kept.decode())
    assert "X" in {d.name for d in e.definitions}
    # a type in alignof is not a macro's argument (flags/internal/registry.h)
    assert (
        blank_macros(b"constexpr size_t kA = alignof(void*);\n") == b"constexpr size_t kA = alignof(void*);\n"
    )


def test_string_and_statement_head_macros() -> None:
    headers = [
        b'#define ABSL_XPACLRI_HINT "hint #0x7;"\n',
        b"#ifdef __EXCEPTIONS\n#define ABSL_INTERNAL_TRY try\n#define ABSL_INTERNAL_CATCH_ANY catch (...)\n"
        b"#else\n#define ABSL_INTERNAL_TRY if (true)\n#define ABSL_INTERNAL_CATCH_ANY else if (false)\n#endif\n",
        # curl: a stub statement stands for a function compiled out; the function's real definition stays
        b"#define Curl_nop_stmt do {} while(0)\n#define Curl_resolv_destroy(x, y) Curl_nop_stmt\n",
    ]
    table = collect(headers)
    assert table.strings == {b"ABSL_XPACLRI_HINT"}
    assert {b"ABSL_INTERNAL_TRY", b"ABSL_INTERNAL_CATCH_ANY"} <= table.objects
    assert not {b"Curl_nop_stmt", b"Curl_resolv_destroy"} & (table.objects | table.functions)
    src = (
        b'void f() {\n  asm(ABSL_XPACLRI_HINT : "+r"(x30));\n  ABSL_INTERNAL_TRY { Construct(a); }\n'
        b"  ABSL_INTERNAL_CATCH_ANY {\n    Destroy(a);\n  }\n}\n"
        b"void Curl_resolv_destroy(struct Curl_easy *data, uint32_t id)\n{\n  drop(data, id);\n}\n"
    )
    blanked = table.blank(src)
    assert len(blanked) == len(src)
    assert b'asm("_______________" : "+r"(x30));' in blanked
    e = extract("a.cc", "cpp", src, table)
    assert e is not None and e.error_count == 0
    assert {"Construct", "Destroy", "drop"} <= {c.callee for c in e.calls}
    assert {"f", "Curl_resolv_destroy"} <= {d.name for d in e.definitions}
