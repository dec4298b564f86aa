"""`codesearch mcp`: an MCP server over stdio, a thin gRPC client of a running codesearch server.

Tools: search, context, find_definition, find_callers, impact, index_status. Results are short text an agent
reads directly (path:line, score, a snippet). A gRPC error becomes a tool error with its one-line reason.
"""

from __future__ import annotations

from typing import Annotated, Literal

import grpc
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from codesearch import __version__
from codesearch.common.labels import enum_value, label
from codesearch.config import MAX_MESSAGE_BYTES
from codesearch.v1 import common_pb2, search_pb2, search_pb2_grpc

CALL_TIMEOUT_S = (
    30.0  # a search takes milliseconds and a context pack well under a second; this is a hang guard
)
SNIPPET_LINES = 2  # lines of snippet per hit: enough to recognise it, cheap in an agent's context
DEFAULT_HITS = 10  # hits for `search` when the agent does not say
DEFAULT_BUDGET = 8_000  # characters of code for `context`: about 2k tokens
INSTRUCTIONS = (
    "Code search over indexed repositories. Use `context` to get the code that answers a question (seeds plus "
    "surrounding and related code, within a character budget); `search` for ranked locations; "
    "`find_definition`, `find_callers` and `impact` for symbol navigation; `index_status` to see what is indexed."
)

Mode = Literal[
    "auto", "keyword", "literal", "regex", "semantic", "definition", "callers", "callees", "impact"
]
Repo = Annotated[str, Field(description="Repository name to search; empty means every indexed repository.")]


class Api:
    """The gRPC connection, opened on first use inside the server's event loop."""

    def __init__(self, address: str) -> None:
        self.address = address
        self._stub: search_pb2_grpc.SearchServiceStub | None = None

    @property
    def stub(self) -> search_pb2_grpc.SearchServiceStub:
        if self._stub is None:
            channel = grpc.aio.insecure_channel(
                self.address, options=[("grpc.max_receive_message_length", MAX_MESSAGE_BYTES)]
            )
            self._stub = search_pb2_grpc.SearchServiceStub(channel)
        return self._stub

    async def search(self, request: search_pb2.SearchRequest) -> search_pb2.SearchResponse:
        try:
            return await self.stub.Search(request, timeout=CALL_TIMEOUT_S)
        except grpc.aio.AioRpcError as e:
            raise tool_error(e, self.address) from None

    async def context(self, request: search_pb2.BuildContextRequest) -> search_pb2.BuildContextResponse:
        try:
            return await self.stub.BuildContext(request, timeout=CALL_TIMEOUT_S)
        except grpc.aio.AioRpcError as e:
            raise tool_error(e, self.address) from None

    async def status(self) -> search_pb2.GetStatusResponse:
        try:
            return await self.stub.GetStatus(search_pb2.GetStatusRequest(), timeout=CALL_TIMEOUT_S)
        except grpc.aio.AioRpcError as e:
            raise tool_error(e, self.address) from None


def tool_error(e: grpc.aio.AioRpcError, address: str) -> ToolError:
    code = e.code()
    if code == grpc.StatusCode.UNAVAILABLE:
        return ToolError(f"cannot reach the codesearch server at {address}: {e.details()}")
    return ToolError(f"{code.name.lower()}: {e.details()}")


def _span(loc: common_pb2.Location) -> str:
    lines = f"{loc.start_line}" if loc.end_line <= loc.start_line else f"{loc.start_line}-{loc.end_line}"
    return f"{loc.path}:{lines}"


def format_hits(resp: search_pb2.SearchResponse, what: str, show_repo: bool) -> str:
    if not resp.hits:
        return f"no {what} found"
    out = [f"{len(resp.hits)} {what}:"]
    for n, h in enumerate(resp.hits, 1):
        repo = f"{h.location.repository}:" if show_repo else ""
        symbol = f"  {h.symbol}" if h.symbol else ""
        out.append(f"{n}. {repo}{_span(h.location)}  score {h.score:.3f}{symbol}")
        snippet = [line.strip() for line in h.snippet.splitlines() if line.strip()][:SNIPPET_LINES]
        out.extend(f"     {line[:160]}" for line in snippet)
    return "\n".join(out)


def _repos(repository: str) -> list[str]:
    return [repository] if repository.strip() else []


def build_server(address: str) -> MCPServer:
    api = Api(address)
    server = MCPServer("codesearch", version=__version__, instructions=INSTRUCTIONS)

    @server.tool(structured_output=False)
    async def search(
        query: Annotated[
            str, Field(description="What to look for: a question, an identifier, or a quoted string.")
        ],
        repository: Repo = "",
        mode: Annotated[
            Mode, Field(description="Retrieval mode; 'auto' routes by the query's intent.")
        ] = "auto",
        limit: Annotated[
            int, Field(description="Most hits to return (1..200).", ge=1, le=200)
        ] = DEFAULT_HITS,
    ) -> str:
        """Ranked code locations for a query (path:lines, score, snippet)."""
        resp = await api.search(
            search_pb2.SearchRequest(
                query=query,
                repositories=_repos(repository),
                mode=enum_value(search_pb2.SearchMode, f"SEARCH_MODE_{mode.upper()}"),
                limit=limit,
            )
        )
        intent = label(search_pb2.Intent, resp.intent, "INTENT_")
        return format_hits(resp, f"results (intent {intent})", not repository)

    @server.tool(structured_output=False)
    async def context(
        query: Annotated[str, Field(description="The question the code should answer.")],
        repository: Repo = "",
        budget_chars: Annotated[
            int, Field(description="Most characters of code in the pack (500..200000).", ge=500, le=200_000)
        ] = DEFAULT_BUDGET,
    ) -> str:
        """The code that answers a question: best matches with surrounding lines, enclosing class headers,
        sibling signatures and called/calling definitions, grouped by file with line numbers, within a budget."""
        resp = await api.context(
            search_pb2.BuildContextRequest(
                query=query, repositories=_repos(repository), budget_chars=budget_chars
            )
        )
        if not resp.files:
            return "no matching code found"
        note = " (graph unavailable: no related definitions)" if resp.debug.get("degraded_graph") else ""
        head = f"{resp.used_chars} of {budget_chars} chars, {len(resp.files)} files, {len(resp.seeds)} matches{note}"
        return f"{head}\n\n{resp.text}"

    @server.tool(structured_output=False)
    async def find_definition(
        name: Annotated[
            str, Field(description="Symbol name or qualified name, e.g. 'parse' or 'Parser.parse'.")
        ],
        repository: Repo = "",
    ) -> str:
        """Where a symbol (function, class, method...) is defined."""
        resp = await api.search(
            search_pb2.SearchRequest(
                query=name, repositories=_repos(repository), mode=search_pb2.SEARCH_MODE_DEFINITION
            )
        )
        return format_hits(resp, f"definitions of {name}", not repository)

    @server.tool(structured_output=False)
    async def find_callers(
        name: Annotated[str, Field(description="Name or qualified name of the function or method called.")],
        repository: Repo = "",
        limit: Annotated[int, Field(description="Most call sites to return (1..200).", ge=1, le=200)] = 30,
    ) -> str:
        """Call sites of a function or method: path:line, the calling definition, the call line."""
        resp = await api.search(
            search_pb2.SearchRequest(
                query=name, repositories=_repos(repository), mode=search_pb2.SEARCH_MODE_CALLERS, limit=limit
            )
        )
        return format_hits(resp, f"call sites of {name}", not repository)

    @server.tool(structured_output=False)
    async def impact(
        target: Annotated[
            str,
            Field(description="Symbol, module ('email.utils') or path ('email/utils.py') that would change."),
        ],
        repository: Repo = "",
        limit: Annotated[int, Field(description="Most dependents to return (1..200).", ge=1, le=200)] = 50,
    ) -> str:
        """What depends on a symbol or module (importers and callers, nearest first): what may break if it changes."""
        resp = await api.search(
            search_pb2.SearchRequest(
                query=target, repositories=_repos(repository), mode=search_pb2.SEARCH_MODE_IMPACT, limit=limit
            )
        )
        return format_hits(resp, f"dependents of {target}", not repository)

    @server.tool(structured_output=False)
    async def index_status() -> str:
        """Indexed repositories (files, chunks, version, when) and which services are up."""
        s = await api.status()
        out = [f"codesearch {s.version} at {address}"]
        if not s.repositories:
            out.append("no repositories indexed")
        for r in s.repositories:
            pending = (
                ", embeddings not known (the vector service did not answer)"
                if r.embeddings_unknown
                else f", {r.embeddings_pending} embeddings pending"
                if r.embeddings_pending
                else ""
            )
            out.append(
                f"repository {r.name}: {r.files} files, {r.chunks} chunks, version {r.index_version}, "
                f"indexed {r.indexed_at or 'never'} from {r.root}{pending}"
            )
        for svc in s.services:
            state = "up" if svc.available else "down"
            out.append(f"service {svc.name}: {state} ({svc.detail})")
        return "\n".join(out)

    return server


async def serve_stdio(address: str) -> None:
    await build_server(address).run_stdio_async()
