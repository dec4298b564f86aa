"""Bearer token, TLS and mutual TLS on a real server; the non-loopback policy; the token file."""

from __future__ import annotations

import dataclasses
import datetime
import ipaddress
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from codesearch.common import security
from codesearch.common.aio_thread import ThreadedServer
from codesearch.config import Settings
from codesearch.server import registrars
from codesearch.v1 import common_pb2, search_pb2, search_pb2_grpc
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from tests.fixture_types import CodeOf

TOKEN = "s3cret-token-for-tests"


def _server(settings: Settings, start_server_list: list[ThreadedServer]) -> ThreadedServer:
    server = ThreadedServer(
        registrars(settings, ("keyword", "graph", "orchestrator")),
        interceptors=security.server_interceptors(settings),
        credentials=security.server_credentials(settings),
    ).start()
    start_server_list.append(server)
    return server


@pytest.fixture
def servers() -> Iterator[list[ThreadedServer]]:
    started: list[ThreadedServer] = []
    yield started
    for s in started:
        s.stop()


def _small_repo(root: Path) -> Path:
    root.mkdir()
    (root / "auth.py").write_text("def check_token(value):\n    return value == 'x'\n\n\ncheck_token('y')\n")
    return root


def _index_and_search(stub: search_pb2_grpc.SearchServiceStub, root: Path) -> int:
    """Index (the orchestrator streams to the keyword and graph legs) and search; returns the hit count."""
    progress = list(
        stub.IndexRepository(search_pb2.IndexRepositoryRequest(path=str(root), name="r"), timeout=60)
    )
    assert progress[-1].phase == search_pb2.INDEX_PHASE_DONE
    # The legs took the update through the authenticated channel (vector is simply not hosted here).
    assert list(progress[-1].degraded_legs) == ["vector: not configured"]
    resp = stub.Search(search_pb2.SearchRequest(query="who calls check_token", no_cache=True), timeout=30)
    assert all(leg.status != common_pb2.LEG_STATUS_DEGRADED for leg in resp.legs), resp.legs
    return len(resp.hits)


def test_token_required_except_health_and_reflection(
    tmp_path: Path, servers: list[ThreadedServer], code_of: CodeOf
) -> None:
    settings = Settings.from_env({"CODESEARCH_HOME": str(tmp_path / "home"), "CODESEARCH_AUTH_TOKEN": TOKEN})
    server = _server(settings, servers)
    request = search_pb2.ListRepositoriesRequest()

    plain = grpc.insecure_channel(server.address)
    assert code_of(lambda: search_pb2_grpc.SearchServiceStub(plain).ListRepositories(request)) == (
        grpc.StatusCode.UNAUTHENTICATED
    )
    wrong = security.sync_channel(server.address, dataclasses.replace(settings, auth_token="nope"))
    assert code_of(lambda: search_pb2_grpc.SearchServiceStub(wrong).ListRepositories(request)) == (
        grpc.StatusCode.UNAUTHENTICATED
    )
    # A server-streaming method is refused the same way.
    stream = search_pb2_grpc.SearchServiceStub(plain).IndexRepository(
        search_pb2.IndexRepositoryRequest(path=str(tmp_path)), timeout=10
    )
    assert code_of(lambda: list(stream)) == grpc.StatusCode.UNAUTHENTICATED

    health = health_pb2_grpc.HealthStub(plain).Check(health_pb2.HealthCheckRequest(), timeout=5)
    assert health.status == health_pb2.HealthCheckResponse.SERVING
    refl = reflection_pb2_grpc.ServerReflectionStub(plain).ServerReflectionInfo(
        iter([reflection_pb2.ServerReflectionRequest(list_services="")]), timeout=5
    )
    names = {s.name for r in refl for s in r.list_services_response.service}
    assert "codesearch.v1.SearchService" in names

    good = search_pb2_grpc.SearchServiceStub(security.sync_channel(server.address, settings))
    assert code_of(lambda: good.ListRepositories(request, timeout=5)) == grpc.StatusCode.OK
    assert _index_and_search(good, _small_repo(tmp_path / "repo")) > 0


def test_token_file(tmp_path: Path) -> None:
    (tmp_path / "token").write_text(TOKEN + "\n")
    s = Settings.from_env(
        {"CODESEARCH_HOME": str(tmp_path), "CODESEARCH_AUTH_TOKEN_FILE": str(tmp_path / "token")}
    )
    assert s.auth_token == TOKEN


# --- TLS -------------------------------------------------------------------------------------------------
def _key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _cert(
    subject: str,
    key: ec.EllipticCurvePrivateKey,
    issuer: x509.Certificate | None,
    issuer_key: ec.EllipticCurvePrivateKey | None,
    ca: bool,
) -> x509.Certificate:
    now = datetime.datetime.now(datetime.timezone.utc)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)])
    builder = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(issuer.subject if issuer else name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if not ca:
        builder = builder.add_extension(
            x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
            ),
            critical=False,
        )
    return builder.sign(issuer_key or key, hashes.SHA256())


def _write_pem(path: Path, cert: x509.Certificate, key: ec.EllipticCurvePrivateKey | None = None) -> None:
    path.with_suffix(".crt").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    if key is not None:
        path.with_suffix(".key").write_bytes(
            key.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
            )
        )


@pytest.fixture
def pki(tmp_path: Path) -> Path:
    """A CA, a server certificate for 127.0.0.1 and a client certificate, all signed by the CA."""
    d = tmp_path / "pki"
    d.mkdir()
    ca_key = _key()
    ca = _cert("codesearch test CA", ca_key, None, None, ca=True)
    _write_pem(d / "ca", ca)
    for who in ("server", "client"):
        key = _key()
        _write_pem(d / who, _cert(f"codesearch {who}", key, ca, ca_key, ca=False), key)
    return d


def test_tls_server_and_clients(
    tmp_path: Path, pki: Path, servers: list[ThreadedServer], code_of: CodeOf
) -> None:
    env = {
        "CODESEARCH_HOME": str(tmp_path / "home"),
        "CODESEARCH_TLS_CERT": str(pki / "server.crt"),
        "CODESEARCH_TLS_KEY": str(pki / "server.key"),
        "CODESEARCH_TLS_CA": str(pki / "ca.crt"),  # the orchestrator dials its legs (itself) over TLS
    }
    settings = Settings.from_env(env)
    server = _server(settings, servers)
    request = search_pb2.ListRepositoriesRequest()
    plaintext = search_pb2_grpc.SearchServiceStub(grpc.insecure_channel(server.address))
    assert code_of(lambda: plaintext.ListRepositories(request, timeout=3)) == grpc.StatusCode.UNAVAILABLE

    client_settings = Settings.from_env(
        {"CODESEARCH_HOME": str(tmp_path / "c"), "CODESEARCH_TLS_CA": env["CODESEARCH_TLS_CA"]}
    )
    stub = search_pb2_grpc.SearchServiceStub(security.sync_channel(server.address, client_settings))
    assert code_of(lambda: stub.ListRepositories(request, timeout=5)) == grpc.StatusCode.OK
    assert _index_and_search(stub, _small_repo(tmp_path / "repo")) > 0


def test_mutual_tls_rejects_a_client_without_certificate(
    tmp_path: Path, pki: Path, servers: list[ThreadedServer], code_of: CodeOf
) -> None:
    env = {
        "CODESEARCH_HOME": str(tmp_path / "home"),
        "CODESEARCH_TLS_CERT": str(pki / "server.crt"),
        "CODESEARCH_TLS_KEY": str(pki / "server.key"),
        "CODESEARCH_TLS_CLIENT_CA": str(pki / "ca.crt"),
        "CODESEARCH_TLS_CA": str(pki / "ca.crt"),
    }
    settings = Settings.from_env(env)
    server = _server(settings, servers)
    request = search_pb2.ListRepositoriesRequest()
    no_cert = Settings.from_env(
        {"CODESEARCH_HOME": str(tmp_path / "c"), "CODESEARCH_TLS_CA": str(pki / "ca.crt")}
    )
    stub = search_pb2_grpc.SearchServiceStub(security.sync_channel(server.address, no_cert))
    assert code_of(lambda: stub.ListRepositories(request, timeout=3)) == grpc.StatusCode.UNAVAILABLE

    with_cert = dataclasses.replace(
        no_cert, tls_client_cert=str(pki / "client.crt"), tls_client_key=str(pki / "client.key")
    )
    stub = search_pb2_grpc.SearchServiceStub(security.sync_channel(server.address, with_cert))
    assert code_of(lambda: stub.ListRepositories(request, timeout=5)) == grpc.StatusCode.OK
    # The orchestrator presents the server's own certificate to its legs (signed by the same CA).
    assert _index_and_search(stub, _small_repo(tmp_path / "repo")) > 0


def test_half_configured_tls_is_refused(tmp_path: Path, pki: Path) -> None:
    s = Settings.from_env({"CODESEARCH_HOME": str(tmp_path), "CODESEARCH_TLS_CERT": str(pki / "server.crt")})
    with pytest.raises(security.SecurityConfigError, match="both"):
        security.server_credentials(s)
    s = Settings.from_env({"CODESEARCH_HOME": str(tmp_path), "CODESEARCH_TLS_CLIENT_CA": str(pki / "ca.crt")})
    with pytest.raises(security.SecurityConfigError):
        security.server_credentials(s)


@pytest.mark.parametrize(
    ("listen", "env", "allowed"),
    [
        ("127.0.0.1:1", {}, True),
        ("localhost:1", {}, True),
        ("[::1]:1", {}, True),
        ("0.0.0.0:1", {}, False),
        ("10.1.2.3:1", {}, False),
        ("0.0.0.0:1", {"CODESEARCH_AUTH_TOKEN": TOKEN}, True),
        ("0.0.0.0:1", {"CODESEARCH_TLS_CLIENT_CA": "/ca.pem"}, True),
        ("0.0.0.0:1", {"CODESEARCH_ALLOW_UNAUTHENTICATED": "1"}, True),
    ],
)
def test_non_loopback_needs_authentication(
    tmp_path: Path, listen: str, env: dict[str, str], allowed: bool
) -> None:
    settings = Settings.from_env({"CODESEARCH_HOME": str(tmp_path), "CODESEARCH_LISTEN": listen, **env})
    if allowed:
        security.check_exposure(settings)
    else:
        with pytest.raises(security.SecurityConfigError, match="refusing to listen"):
            security.check_exposure(settings)
