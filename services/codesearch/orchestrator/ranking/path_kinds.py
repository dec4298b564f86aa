"""What kind of file a path is (tests, generated code, compat shims, examples, type declarations, prose and build
files, re-export barrels): the patterns the path penalties of ranking/recipe.py read."""

from __future__ import annotations

import re

# Test files: a _test/_spec suffix in any language; a test_ prefix only where the runner uses it (bats-core's
# lib/test_functions.bash is the library itself: fit NDCG@10 0.808 -> 0.836 once it stopped counting as a test).
TEST_FILE = re.compile(
    r"(?:^|/)(?:test_[^/]*\.(?:py|c|cpp|dart|lua)|[^/]*_(?:test|spec)\.\w+"
    r"|[^/]*Tests?\.(?:java|kt|swift|cs|php|scala)|[^/]*(?:Spec|Suite)\.(?:kt|swift|scala)"
    r"|[^/]*\.(?:test|spec)\.[jt]sx?|test_helpers?[^/]*\.\w+)$"
)
TEST_DIR = re.compile(r"(?:^|/)(?:tests?|__tests__|spec|testing)(?:/|$)")
# A test file by name or folder: what both ranking recipes (ranking/recipe.py) demote.
SIGNALS_TEST_PATH = re.compile(rf"(?:{TEST_FILE.pattern})|(?:{TEST_DIR.pattern})")
# Generated, vendored, built or minified code: rarely what anyone is looking for.
GENERATED_PATH = re.compile(
    r"(^|/)(vendor|third_party|node_modules|dist|build|target|generated|gen)/|_pb2(_grpc)?\.py$|\.pb\.go$|\.min\.(js|css)$|\.generated\.",
)
COMPAT_DIR = re.compile(r"(?:^|/)(?:compat|_compat|legacy)(?:/|$)")
EXAMPLE_DIR = re.compile(r"(?:^|/)(?:_?examples?|docs?_src)(?:/|$)")
# Type declarations: .d.ts stubs, and interface declarations kept apart from their implementation (Laravel's
# Contracts/, *Interface.php, Java/Kotlin interfaces/ folders), whose signatures repeat the implementation's words.
# Interfaces were added at the .d.ts value, unchanged. Offline replay of the server's legs
# (codesearch_lab/offline.py): laravel-framework 0.641 -> 0.697 (fit 0.881 -> 0.887; "Container" found
# Contracts/Container/Container.php before Container/Container.php); 0.85: 0.668, 0.5: 0.698. No held-out
# repository has such files (held-out 0.868 either way): the evidence is one fit repository.
TYPE_DECLARATION = re.compile(r"\.d\.ts$|(?:^|/)(?:[Cc]ontracts?|[Ii]nterfaces?)/|Interface\.\w+$")
# Prose, configuration and build files, chunked since the parser knows them: a code question rarely wants them
# (chi's Makefile rule `test-router:` came second for the name "Router" once Makefiles were chunked by rule).
DOCS_FILE = re.compile(
    r"\.(?:md|markdown|rst|txt|adoc|ya?ml|toml|json|ini|cfg|mk|cmake)$"
    r"|(?:^|/)(?:GNUmakefile|[Mm]akefile|Dockerfile|CMakeLists\.txt)$",
    re.IGNORECASE,
)
REEXPORT_FILES = frozenset({"__init__.py", "package-info.java", "index.ts", "index.js", "mod.rs"})
