"""`codesearch mcp [--address HOST:PORT]`: serve the Model Context Protocol over stdio for an agent."""

from __future__ import annotations

import argparse
import logging
import sys

import anyio


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--log-level", default="WARNING", help="log level on stderr (stdout carries the protocol)"
    )


def run(args: argparse.Namespace) -> int:
    from codesearch.mcp.server import serve_stdio  # the MCP SDK loads only for this command

    logging.basicConfig(stream=sys.stderr, level=args.log_level.upper())
    anyio.run(serve_stdio, args.address)
    return 0
