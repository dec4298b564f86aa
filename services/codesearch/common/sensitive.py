"""What is never indexed by default: files that hold secrets, and system directories.

Search returns file content to any client that may search, so a private key or a password hash indexed once is
published. Both policies can be lifted by the operator: CODESEARCH_INDEX_SECRETS=1 indexes secret files, and a
system directory listed in CODESEARCH_ALLOWED_ROOTS may be indexed.
"""

from __future__ import annotations

import re
from fnmatch import fnmatch
from pathlib import Path, PurePosixPath

from codesearch.common.errors import failed_precondition

# Directories of the operating system (configuration, kernel views, devices, boot, state of services): never a
# repository, and /etc alone holds /etc/shadow and TLS keys. Not /root: it is a home directory, where root's code
# lives in containers and CI (the demo's Python stdlib sits under /root/.pyenv); its keys are caught by name.
SYSTEM_DIRS = tuple(
    Path(p) for p in ("/etc", "/proc", "/sys", "/dev", "/boot", "/run", "/var/run", "/var/lib", "/var/log")
)
# File names (case-insensitive globs) of key files, environment files and credential stores.
SECRET_NAMES = (
    ".env",
    ".env.*",
    "*.env",
    "id_rsa",
    "id_dsa",
    "id_ecdsa",
    "id_ed25519",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "*.jks",
    "*.keystore",
    "*.kdbx",
    ".netrc",
    "_netrc",
    ".pgpass",
    ".htpasswd",
    ".git-credentials",
    ".pypirc",
    "credentials",
    "credentials.json",
    "shadow",
    "shadow-",
    "gshadow",
    "master.key",
)
# ...except the templates that document them, which hold placeholders and are worth finding.
TEMPLATE_NAMES = ("*.example", "*.sample", "*.template", "*.dist", ".env.defaults")
SECRET_DIRS = frozenset({".ssh", ".gnupg", ".aws"})  # every file in these is a key or a credential
# Content that is a secret whatever the file is called: a private key block, or shadow-style password hashes
# (name:$id$salt$hash).
PRIVATE_KEY_RE = re.compile(rb"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY( BLOCK)?-----")
SHADOW_LINE_RE = re.compile(rb"(?m)^[a-z_][a-z0-9_.-]*:\$[0-9a-z]{1,2}\$[^:\n]{0,200}\$[./0-9A-Za-z]{20,}:")
SNIFF_BYTES = 64 * 1024  # keys and shadow lines sit at the start of their files


def secret_reason(rel_path: str, data: bytes | None = None) -> str:
    """Why the file must not be indexed ("" when it may): its name, its folder or its content."""
    path = PurePosixPath(rel_path)
    name = path.name.lower()
    if any(part in SECRET_DIRS for part in path.parts[:-1]):
        return f"in a {next(p for p in path.parts if p in SECRET_DIRS)}/ folder (keys and credentials)"
    if not any(fnmatch(name, t) for t in TEMPLATE_NAMES) and any(fnmatch(name, s) for s in SECRET_NAMES):
        return "named like a key, environment or credential file"
    if data is not None:
        head = data[:SNIFF_BYTES]
        if PRIVATE_KEY_RE.search(head):
            return "holds a private key"
        if SHADOW_LINE_RE.search(head):
            return "holds password hashes"
    return ""


def check_not_system_dir(root: Path, allowed_roots: tuple[Path, ...]) -> None:
    """FAILED_PRECONDITION for the file system root or a system directory, unless an allowed root covers it."""
    if any(root.is_relative_to(r) for r in allowed_roots):
        return
    system = next((d for d in SYSTEM_DIRS if root.is_relative_to(d) or d.is_relative_to(root)), None)
    if system is not None or root == Path(root.anchor):
        raise failed_precondition(
            f"{root} is (or holds) the system directory {system or root.anchor}, which is never indexed by "
            "default; list it in CODESEARCH_ALLOWED_ROOTS to index it anyway"
        )
