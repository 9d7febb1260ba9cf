"""Serve the browser app (docs/web.md); python -m tabletop_rl.web is the short form of this command.

    python -m tabletop_rl.web
    python -m tabletop_rl.web runs/lc/policy.safetensors --port 8080 --records runs/games
    python -m tabletop_rl.web examples/my_agent.py:highest
"""

from __future__ import annotations

import argparse
import ipaddress
import sys
from collections.abc import Sequence
from pathlib import Path

from ..envs.core.extras import install_hint
from . import cli
from .runtime.agents import custom_factory, custom_spec
from .runtime.policy import PolicyFileError, read_policy_info
from .runtime.policy_paths import resolve_checkpoint


def _port(text: str) -> int:
    port = cli.integer(text)
    if port is None or not 1 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"expected a port from 1 to 65535, got {text!r}")
    return port


def _loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def main(argv: Sequence[str] | None = None) -> int:
    parser = cli.ArgumentParser(prog="python -m tabletop_rl.web", description=__doc__.split("\n\n")[0])
    parser.add_argument("agents", nargs="*", metavar="AGENT",
                        help="policy files, run folders or your own agents (module:callable or "
                             "path/to/file.py:callable, examples/my_agent.py) to offer as agents, by the name given "
                             "here; only these, never a name the browser sends, are loaded")
    parser.add_argument("--host", default="127.0.0.1", help="address to serve on (default 127.0.0.1: this machine)")
    parser.add_argument("--port", type=_port, default=8000, help="port (default 8000)")
    parser.add_argument("--records", type=Path, default=Path("runs") / "games", metavar="DIR",
                        help="folder the games' records are written to and replays listed from (default runs/games)")
    args = parser.parse_args(argv)
    agents = {}  # the name the browser sees -> the spec the server loads
    for given in args.agents:
        try:
            if custom_spec(given) is not None:
                custom_factory(given)  # imported now; called for each game, whose game it is told
                agents[given] = given
            else:
                read_policy_info(resolve_checkpoint(given))
                agents[given] = str(resolve_checkpoint(given))
        except (PolicyFileError, ValueError) as error:
            parser.error(str(error))
    try:
        import uvicorn

        from .webapp.server import create_app
    except ImportError as error:
        parser.error(f"the web app needs the 'web' extra ({error.name} is not installed): {install_hint('web')}")
    if not _loopback(args.host):
        print(f"warning: serving on {args.host}: anyone who can reach this machine on port {args.port} can play, "
              f"and read and add records in {args.records}", file=sys.stderr)
    print(f"tabletop-rl web app on http://{args.host}:{args.port}/ (Ctrl-C stops it)", flush=True)
    uvicorn.run(create_app(args.records, agents), host=args.host, port=args.port, log_level="warning")
    return 0


if __name__ == "__main__":
    cli.run(main)
