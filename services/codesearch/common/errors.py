"""Errors that carry the gRPC status a client should see, and helpers to validate requests."""

from __future__ import annotations

import re

import grpc

REPO_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


class ServiceError(Exception):
    """An error with the gRPC status code it maps to. Raised anywhere; servicers turn it into an abort."""

    def __init__(self, code: grpc.StatusCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def invalid(message: str) -> ServiceError:
    return ServiceError(grpc.StatusCode.INVALID_ARGUMENT, message)


def not_found(message: str) -> ServiceError:
    return ServiceError(grpc.StatusCode.NOT_FOUND, message)


def unavailable(message: str) -> ServiceError:
    return ServiceError(grpc.StatusCode.UNAVAILABLE, message)


def failed_precondition(message: str) -> ServiceError:
    return ServiceError(grpc.StatusCode.FAILED_PRECONDITION, message)


def check_repo_name(name: str) -> str:
    """A repository name is a folder name on disk: letters, digits, '.', '_', '-', not starting with a dot."""
    if not REPO_NAME_RE.match(name):
        raise invalid(
            f"invalid repository name {name!r}: use 1-100 letters, digits, '.', '_' or '-', not starting with '.' or '-'"
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
