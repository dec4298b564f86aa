"""Errors that carry the gRPC status a client should see, and helpers to validate requests."""

from __future__ import annotations

import errno
import os
import re
from collections.abc import Sequence

import grpc
from google.protobuf.message import Message

REPO_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,99}$")  # "@": a git ref beside its repository
# The reason a model-backed leg (vector, rerank) gives while its model still loads: a client that sees it in
# GetStatus waits instead of treating the leg as down (eval/polyglot_run.py).
MODEL_LOADING = "model is loading"


class ServiceError(Exception):
    """An error with the gRPC status code it maps to. Raised anywhere; servicers turn it into an abort.

    `details` are messages a client can read back (google.rpc.Status details, common/grpc_util.py), e.g. the
    leg reports of an outage; the message stays the readable summary."""

    def __init__(self, code: grpc.StatusCode, message: str, details: Sequence[Message] = ()) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = tuple(details)


def invalid(message: str) -> ServiceError:
    return ServiceError(grpc.StatusCode.INVALID_ARGUMENT, message)


def not_found(message: str) -> ServiceError:
    return ServiceError(grpc.StatusCode.NOT_FOUND, message)


def unavailable(message: str) -> ServiceError:
    return ServiceError(grpc.StatusCode.UNAVAILABLE, message)


def failed_precondition(message: str) -> ServiceError:
    return ServiceError(grpc.StatusCode.FAILED_PRECONDITION, message)


def check_repo_name(name: str) -> str:
    """A repository name is a folder name on disk: letters, digits, '.', '_', '-', '@' (`repo@branch`), not
    starting with a dot."""
    if not REPO_NAME_RE.match(name):
        raise invalid(
            f"invalid repository name {name!r}: use 1-100 letters, digits, '.', '_', '-' or '@', not starting with '.' or '-'"
        )
    return name


def check_limit(limit: int, default: int, maximum: int, what: str = "limit") -> int:
    """0 means the default; negative or over the maximum is an error, not silently clamped."""
    if limit == 0:
        return default
    if limit < 0 or limit > maximum:
        raise invalid(f"{what} must be between 1 and {maximum}, got {limit}")
    return limit


def check_query(query: str, max_chars: int, what: str = "query") -> str:
    if not query or not query.strip():
        raise invalid(f"{what} is empty")
    if len(query) > max_chars:
        raise invalid(f"{what} is {len(query)} characters; the limit is {max_chars}")
    if "\x00" in query:
        raise invalid(f"{what} contains a NUL character")
    return query


# errno values that mean "the disk is full" (quota counts as full) and "this place may not be written".
NO_SPACE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})
NOT_WRITABLE_ERRNOS = frozenset({errno.EACCES, errno.EPERM, errno.EROFS})
# Libraries that wrap I/O errors in their own exceptions (tantivy, the native trigram writer) keep the OS text.
NO_SPACE_TEXT = ("no space left on device", "disk quota exceeded", "file too large")
LOW_SPACE_BYTES = 1 << 20  # under this free, a failed write is blamed on the full disk
NOT_WRITABLE_TEXT = ("read-only file system", "permission denied", "operation not permitted")


def _disk_state(path: str | os.PathLike[str] | None) -> str:
    """'full', 'read-only' or '' for the file system holding `path` (its nearest existing ancestor)."""
    if path is None:
        return ""
    p = os.path.abspath(path)
    while not os.path.exists(p) and os.path.dirname(p) != p:
        p = os.path.dirname(p)
    try:
        st = os.statvfs(p)
    except OSError:
        return ""
    if st.f_flag & os.ST_RDONLY:
        return "read-only"
    return "full" if st.f_bavail * st.f_frsize < LOW_SPACE_BYTES else ""


def storage_error(
    e: BaseException, what: str, path: str | os.PathLike[str] | None = None
) -> ServiceError | None:
    """A clear status for a failed write of `what` (an index, the registry...), or None when `e` is no
    storage error. A full disk is RESOURCE_EXHAUSTED, an unwritable data directory FAILED_PRECONDITION;
    both say the previous index is still the live one, which is true because writes go to a new generation.
    """
    if isinstance(e, ServiceError):
        return None
    code = getattr(e, "errno", None) if isinstance(e, OSError) else None
    text = str(e).lower()
    where = f" ({e.filename})" if isinstance(e, OSError) and e.filename else ""
    disk = _disk_state(path) if code is None else ""
    if code in NO_SPACE_ERRNOS or any(t in text for t in NO_SPACE_TEXT) or disk == "full":
        return ServiceError(
            grpc.StatusCode.RESOURCE_EXHAUSTED,
            f"no space left on the device while writing {what}{where}; the previous index is still live",
        )
    if code in NOT_WRITABLE_ERRNOS or any(t in text for t in NOT_WRITABLE_TEXT) or disk == "read-only":
        return ServiceError(
            grpc.StatusCode.FAILED_PRECONDITION,
            f"cannot write {what}{where}: the data directory is not writable; the previous index is still live",
        )
    if isinstance(e, OSError):
        return ServiceError(
            grpc.StatusCode.UNAVAILABLE,
            f"I/O error while writing {what}{where}: {e.strerror or e}; the previous index is still live",
        )
    return None
