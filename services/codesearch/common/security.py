"""Bearer-token authentication, TLS / mutual TLS, and the policy for listening beyond loopback.

Server side: `server_interceptors(settings)` (token check) and `add_port(server, settings, address)`
(TLS when a certificate is configured). Client side: `sync_channel()` for the CLI and `aio_channel()` for the
orchestrator's leg channels; both send the token and dial TLS when a CA (or the server's own certificate) is set.
grpc.health.v1 and reflection stay open so probes and grpcurl work without the token.
"""

from __future__ import annotations

import collections
import hmac
import ipaddress
import logging
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import grpc

from codesearch.config import Settings

log = logging.getLogger(__name__)

AUTH_METADATA_KEY = "authorization"  # HTTP's header; gRPC metadata keys are lower-case
BEARER_PREFIX = "Bearer "
# Probes (kubelet, load balancers) and tooling (grpcurl list) must work without a secret.
OPEN_SERVICES = frozenset(
    {
        "grpc.health.v1.Health",
        "grpc.reflection.v1alpha.ServerReflection",
        "grpc.reflection.v1.ServerReflection",
    }
)


class SecurityConfigError(Exception):
    """A security setting is missing or contradictory; the server refuses to start."""


# --- server ------------------------------------------------------------------------------------------------
def _service_of(method: str) -> str:
    """'/codesearch.v1.SearchService/Search' -> 'codesearch.v1.SearchService'."""
    return method.lstrip("/").split("/", 1)[0]


def _deny_handler(handler: grpc.RpcMethodHandler, message: str) -> grpc.RpcMethodHandler:
    """A handler of the same shape as `handler` that answers UNAUTHENTICATED without running anything."""

    async def deny_unary(request: Any, context: grpc.aio.ServicerContext) -> Any:
        await context.abort(grpc.StatusCode.UNAUTHENTICATED, message)

    async def deny_stream(request: Any, context: grpc.aio.ServicerContext) -> Any:
        await context.abort(grpc.StatusCode.UNAUTHENTICATED, message)
        yield  # pragma: no cover - makes this an async generator, as a server-streaming handler must be

    kwargs = {
        "request_deserializer": handler.request_deserializer,
        "response_serializer": handler.response_serializer,
    }
    if handler.request_streaming and handler.response_streaming:
        return grpc.stream_stream_rpc_method_handler(deny_stream, **kwargs)
    if handler.request_streaming:
        return grpc.stream_unary_rpc_method_handler(deny_unary, **kwargs)
    if handler.response_streaming:
        return grpc.unary_stream_rpc_method_handler(deny_stream, **kwargs)
    return grpc.unary_unary_rpc_method_handler(deny_unary, **kwargs)


class TokenAuthInterceptor(grpc.aio.ServerInterceptor):
    """Requires `authorization: Bearer <token>` on every call except health and reflection."""

    def __init__(self, token: str) -> None:
        if not token:
            raise SecurityConfigError("an empty auth token would let everyone in")
        self._expected = (BEARER_PREFIX + token).encode()

    def allowed(self, metadata: Sequence[tuple[str, str | bytes]] | None) -> bool:
        presented = b""
        for key, value in metadata or ():
            if key == AUTH_METADATA_KEY:
                presented = value if isinstance(value, bytes) else value.encode()
        # Constant time in the token's content: a timing probe learns nothing but the length.
        return hmac.compare_digest(presented, self._expected)

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(handler_call_details)
        if handler is None or _service_of(handler_call_details.method) in OPEN_SERVICES:
            return handler
        if self.allowed(handler_call_details.invocation_metadata):
            return handler
        return _deny_handler(
            handler, "missing or wrong bearer token (metadata 'authorization: Bearer <token>')"
        )


def server_interceptors(settings: Settings) -> list[grpc.aio.ServerInterceptor]:
    return [TokenAuthInterceptor(settings.auth_token)] if settings.auth_token else []


def _read(path: str, what: str) -> bytes:
    try:
        return Path(path).expanduser().read_bytes()
    except OSError as e:
        raise SecurityConfigError(f"cannot read {what} {path}: {e.strerror}") from None


def server_credentials(settings: Settings) -> grpc.ServerCredentials | None:
    """TLS credentials for the listening port, or None for plaintext; mutual TLS when a client CA is set."""
    if bool(settings.tls_cert) != bool(settings.tls_key):
        raise SecurityConfigError("set both CODESEARCH_TLS_CERT and CODESEARCH_TLS_KEY, or neither")
    if not settings.tls_cert:
        if settings.tls_client_ca:
            raise SecurityConfigError(
                "CODESEARCH_TLS_CLIENT_CA needs CODESEARCH_TLS_CERT and CODESEARCH_TLS_KEY"
            )
        return None
    pair = (_read(settings.tls_key, "TLS key"), _read(settings.tls_cert, "TLS certificate"))
    client_ca = _read(settings.tls_client_ca, "client CA") if settings.tls_client_ca else None
    return grpc.ssl_server_credentials(
        [pair], root_certificates=client_ca, require_client_auth=client_ca is not None
    )


def is_loopback(address: str) -> bool:
    """Whether HOST:PORT only accepts connections from this machine."""
    host = address.rsplit(":", 1)[0].strip("[]")
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False  # a hostname or a wildcard ("", "0.0.0.0", "::") reaches beyond this machine


def check_exposure(settings: Settings) -> None:
    """Refuses to serve an unauthenticated API beyond loopback: IndexRepository reads any allowed directory
    and Search returns its content, so an open port would publish the machine's readable files."""
    if is_loopback(settings.listen_addr):
        return
    if not (settings.auth_token or settings.tls_client_ca):
        if not settings.allow_unauthenticated:
            raise SecurityConfigError(
                f"refusing to listen on {settings.listen_addr} without authentication: set CODESEARCH_AUTH_TOKEN "
                "(or CODESEARCH_TLS_CLIENT_CA for mutual TLS), listen on 127.0.0.1, "
                "or set CODESEARCH_ALLOW_UNAUTHENTICATED=1 on a trusted network"
            )
        log.warning(
            "listening on %s without authentication (CODESEARCH_ALLOW_UNAUTHENTICATED=1)",
            settings.listen_addr,
        )
    if not settings.allowed_roots:
        log.warning(
            "listening on %s with CODESEARCH_ALLOWED_ROOTS unset: any client may index any directory this "
            "process can read",
            settings.listen_addr,
        )


def add_port(server: grpc.aio.Server, settings: Settings, address: str) -> int:
    """Binds `address` with TLS when configured, else plaintext. Returns the port (0 when binding failed)."""
    credentials = server_credentials(settings)
    if credentials is None:
        return server.add_insecure_port(address)
    return server.add_secure_port(address, credentials)


# --- clients -----------------------------------------------------------------------------------------------
def bearer_metadata(token: str) -> list[tuple[str, str]]:
    """The call metadata that carries `token` (none when there is no token)."""
    return [(AUTH_METADATA_KEY, BEARER_PREFIX + token)] if token else []


def _with_token(metadata: Any, token: str) -> list[tuple[str, str]]:
    items = [(k, v) for k, v in (metadata or ()) if k != AUTH_METADATA_KEY]
    return [*items, *bearer_metadata(token)]


class _SyncDetails(
    collections.namedtuple(
        "_SyncDetails", ("method", "timeout", "metadata", "credentials", "wait_for_ready", "compression")
    ),
    grpc.ClientCallDetails,
):
    pass


class _SyncToken(
    grpc.UnaryUnaryClientInterceptor,
    grpc.UnaryStreamClientInterceptor,
    grpc.StreamUnaryClientInterceptor,
    grpc.StreamStreamClientInterceptor,
):
    """Adds the bearer token to every call of a sync channel (plaintext channels cannot carry call credentials)."""

    def __init__(self, token: str) -> None:
        self._token = token

    def _details(self, d: grpc.ClientCallDetails) -> grpc.ClientCallDetails:
        return _SyncDetails(
            d.method,
            d.timeout,
            _with_token(d.metadata, self._token),
            d.credentials,
            getattr(d, "wait_for_ready", None),
            getattr(d, "compression", None),
        )

    def intercept_unary_unary(self, continuation: Any, client_call_details: Any, request: Any) -> Any:
        return continuation(self._details(client_call_details), request)

    def intercept_unary_stream(self, continuation: Any, client_call_details: Any, request: Any) -> Any:
        return continuation(self._details(client_call_details), request)

    def intercept_stream_unary(
        self, continuation: Any, client_call_details: Any, request_iterator: Any
    ) -> Any:
        return continuation(self._details(client_call_details), request_iterator)

    def intercept_stream_stream(
        self, continuation: Any, client_call_details: Any, request_iterator: Any
    ) -> Any:
        return continuation(self._details(client_call_details), request_iterator)


def _aio_details(d: grpc.aio.ClientCallDetails, token: str) -> grpc.aio.ClientCallDetails:
    return grpc.aio.ClientCallDetails(
        d.method,
        d.timeout,
        _with_token(d.metadata, token),  # type: ignore[arg-type]  # grpc-stubs 1.53: any sequence of pairs at run time
        d.credentials,
        d.wait_for_ready,
    )


class _AioTokenUU(grpc.aio.UnaryUnaryClientInterceptor):
    def __init__(self, token: str) -> None:
        self._token = token

    async def intercept_unary_unary(self, continuation: Any, client_call_details: Any, request: Any) -> Any:
        return await continuation(_aio_details(client_call_details, self._token), request)


class _AioTokenUS(grpc.aio.UnaryStreamClientInterceptor):
    def __init__(self, token: str) -> None:
        self._token = token

    async def intercept_unary_stream(self, continuation: Any, client_call_details: Any, request: Any) -> Any:
        return await continuation(_aio_details(client_call_details, self._token), request)


class _AioTokenSU(grpc.aio.StreamUnaryClientInterceptor):
    def __init__(self, token: str) -> None:
        self._token = token

    async def intercept_stream_unary(
        self, continuation: Any, client_call_details: Any, request_iterator: Any
    ) -> Any:
        return await continuation(_aio_details(client_call_details, self._token), request_iterator)


class _AioTokenSS(grpc.aio.StreamStreamClientInterceptor):
    def __init__(self, token: str) -> None:
        self._token = token

    async def intercept_stream_stream(
        self, continuation: Any, client_call_details: Any, request_iterator: Any
    ) -> Any:
        return await continuation(_aio_details(client_call_details, self._token), request_iterator)


def client_credentials(settings: Settings, *, as_server: bool = False) -> grpc.ChannelCredentials | None:
    """TLS credentials to dial with, or None for plaintext.

    A client trusts CODESEARCH_TLS_CA. A server dialling its legs (or itself, `as_server`) also trusts its own
    certificate when no CA is set (one self-signed certificate for a whole deployment), and presents its own
    certificate for mutual TLS unless a client certificate is configured.
    """
    ca_path = settings.tls_ca or (settings.tls_cert if as_server else "")
    if not ca_path:
        return None
    cert_path = settings.tls_client_cert or (settings.tls_cert if as_server else "")
    key_path = settings.tls_client_key or (settings.tls_key if as_server else "")
    if bool(cert_path) != bool(key_path):
        raise SecurityConfigError(
            "set both CODESEARCH_TLS_CLIENT_CERT and CODESEARCH_TLS_CLIENT_KEY, or neither"
        )
    return grpc.ssl_channel_credentials(
        root_certificates=_read(ca_path, "TLS CA"),
        private_key=_read(key_path, "TLS client key") if key_path else None,
        certificate_chain=_read(cert_path, "TLS client certificate") if cert_path else None,
    )


def sync_channel(address: str, settings: Settings, options: Sequence[tuple[str, Any]] = ()) -> grpc.Channel:
    """A blocking channel (CLI, tests, benchmarks) that carries the token and dials TLS when configured."""
    credentials = client_credentials(settings)
    if credentials is None:
        channel = grpc.insecure_channel(address, options=list(options))
    else:
        channel = grpc.secure_channel(address, credentials, options=list(options))
    return (
        grpc.intercept_channel(channel, _SyncToken(settings.auth_token)) if settings.auth_token else channel
    )


def aio_channel(
    address: str,
    settings: Settings,
    options: Sequence[tuple[str, Any]] = (),
    extra_interceptors: Sequence[Any] = (),
    *,
    as_server: bool = True,
) -> grpc.aio.Channel:
    """An asyncio channel (orchestrator -> legs) that carries the token and dials TLS when configured."""
    token = settings.auth_token
    auth = [_AioTokenUU(token), _AioTokenUS(token), _AioTokenSU(token), _AioTokenSS(token)] if token else []
    interceptors = [*extra_interceptors, *auth] or None
    credentials = client_credentials(settings, as_server=as_server)
    if credentials is None:
        return grpc.aio.insecure_channel(address, options=list(options), interceptors=interceptors)
    return grpc.aio.secure_channel(address, credentials, options=list(options), interceptors=interceptors)
