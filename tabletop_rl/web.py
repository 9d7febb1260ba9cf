"""``python -m tabletop_rl.web``: the browser app (docs/web.md), the short form of ``python -m
tabletop_rl.training.web``, which it runs."""

from .training import cli
from .training.web import main

if __name__ == "__main__":
    cli.run(main)
