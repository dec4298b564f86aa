"""`codesearch serve [all|keyword|vector|graph|rerank|orchestrator ...]`"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import logging
import os
import sys
import threading

from codesearch.cli.client import CliError
from codesearch.common.security import SecurityConfigError
from codesearch.config import Settings, listen_override
from codesearch.server import ALL_SERVICES, serve


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "services",
        nargs="*",
        # A string, not a list: with nargs="*" argparse checks the default itself against the choices.
        default="all",
        choices=["all", *ALL_SERVICES],
        help="services to host in this process (default: all)",
    )
    parser.add_argument("--listen", help="address to listen on (default: --address / CODESEARCH_LISTEN)")


def run(args: argparse.Namespace) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    settings = Settings.from_env()
    listen = args.listen or listen_override() or args.address
    settings = dataclasses.replace(settings, listen_addr=listen)
    chosen = [args.services] if isinstance(args.services, str) else args.services
    services = ALL_SERVICES if "all" in chosen else tuple(dict.fromkeys(chosen))
    loop = asyncio.new_event_loop()
    try:
        loop.run_until_complete(serve(settings, services))
    except SecurityConfigError as e:
        raise CliError(str(e)) from None
    _exit_past_workers()
    return 0


def _exit_past_workers() -> None:
    """After the drain, a worker thread still busy (a call's thread outliving its cancelled RPC) would hold the
    interpreter's exit (it joins every executor thread, idle ones included) without bound: exit without it."""
    if any(t.is_alive() and not t.daemon for t in threading.enumerate() if t is not threading.main_thread()):
        logging.getLogger("codesearch.server").info("drained; exiting without joining worker threads")
        logging.shutdown()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)
