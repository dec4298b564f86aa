"""`codesearch mcp` as a stdio subprocess, driven by the MCP SDK's client, against a real server."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
import grpc
import pytest
from codesearch.config import Settings
from codesearch.server import registrars
from codesearch.v1 import search_pb2, search_pb2_grpc
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests.fixture_types import StartServer

SERVICES = ("keyword", "graph", "orchestrator")
SESSION_TIMEOUT_S = 60  # the subprocess imports the SDK and grpc; calls themselves take milliseconds
SERVICES_DIR = Path(__file__).resolve().parents[2] / "services"

PARSER_PY = '''"""A tiny config parser."""

import json


class ConfigError(Exception):
    """Raised when a configuration file is invalid."""


def parse_config(path):
    """Read a JSON configuration file and check it has a name."""
    with open(path) as fh:
        data = json.load(fh)
    if "name" not in data:
        raise ConfigError("missing name")
    return data
'''

APP_PY = """from parser import parse_config


def start(path):
    cfg = parse_config(path)
    return cfg["name"]


def reload(path):
    return parse_config(path)
"""


@pytest.fixture
def address(tmp_path: Path, start_server: StartServer) -> str:
    settings = Settings.from_env({"CODESEARCH_HOME": str(tmp_path / "home")})
    server = start_server(registrars(settings, SERVICES))
    root = tmp_path / "app"
    root.mkdir()
    (root / "parser.py").write_text(PARSER_PY)
    (root / "app.py").write_text(APP_PY)
    stub = search_pb2_grpc.SearchServiceStub(grpc.insecure_channel(server.address))
    done = list(stub.IndexRepository(search_pb2.IndexRepositoryRequest(path=str(root), name="app")))[-1]
    assert done.phase == search_pb2.INDEX_PHASE_DONE
    return server.address


def run_session(
    address: str, calls: list[tuple[str, dict]]
) -> tuple[dict[str, dict], list[tuple[bool, str]]]:
    """Lists the tools and makes the calls; returns ({tool: input schema}, [(is_error, text)])."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "codesearch.cli.main", "mcp", "--address", address],
        env={
            "PYTHONPATH": os.pathsep.join(filter(None, [str(SERVICES_DIR), os.environ.get("PYTHONPATH", "")]))
        },
    )

    async def go() -> tuple[dict[str, dict], list[tuple[bool, str]]]:
        with anyio.fail_after(SESSION_TIMEOUT_S):
            async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                tools = {t.name: t.input_schema for t in (await session.list_tools()).tools}
                results = []
                for name, arguments in calls:
                    res = await session.call_tool(name, arguments)
                    results.append(
                        (bool(res.is_error), "\n".join(c.text for c in res.content if c.type == "text"))
                    )
                return tools, results

    return anyio.run(go)


def test_mcp_tools_answer_through_a_real_server(address: str) -> None:
    tools, results = run_session(
        address,
        [
            ("search", {"query": "parse config", "limit": 3}),
            ("context", {"query": "read a JSON configuration file", "budget_chars": 1500}),
            ("find_definition", {"name": "parse_config"}),
            ("find_callers", {"name": "parse_config", "repository": "app"}),
            ("impact", {"target": "parser"}),
            ("index_status", {}),
            ("search", {"query": "parse", "repository": "nope"}),
            ("context", {"query": "", "budget_chars": 1000}),
        ],
    )
    assert set(tools) == {"search", "context", "find_definition", "find_callers", "impact", "index_status"}
    assert tools["search"]["required"] == ["query"]
    assert tools["search"]["properties"]["query"]["description"]
    assert tools["context"]["properties"]["budget_chars"]["minimum"] == 500
    assert tools["find_callers"]["properties"]["name"]["type"] == "string"

    (
        (s_err, search),
        (c_err, context),
        (d_err, definition),
        (f_err, callers),
        (i_err, impact),
        (st_err, status),
    ) = results[:6]
    assert not any([s_err, c_err, d_err, f_err, i_err, st_err]), results
    assert "app:parser.py:10-16" in search and "score" in search and "def parse_config(path):" in search
    assert context.splitlines()[0].endswith("matches") and "of 1500 chars" in context
    assert "### parser.py (python)" in context and "10 | def parse_config(path):" in context
    assert "app:parser.py:10" in definition and "parse_config" in definition
    assert "2 call sites of parse_config" in callers
    assert "app.py:5" in callers and "app.py:10" in callers and "cfg = parse_config(path)" in callers
    assert "app.py" in impact
    assert "repository app: 2 files" in status and "service graph: up" in status

    not_found, empty = results[6:]
    assert not_found[0] and "not_found" in not_found[1] and "'nope'" in not_found[1]
    assert len(not_found[1].splitlines()) == 1
    assert empty[0] and "invalid_argument" in empty[1] and "query is empty" in empty[1]


def test_mcp_reports_an_unreachable_server_as_a_tool_error() -> None:
    _tools, results = run_session("127.0.0.1:1", [("index_status", {})])
    assert results[0][0] and "cannot reach the codesearch server at 127.0.0.1:1" in results[0][1]
