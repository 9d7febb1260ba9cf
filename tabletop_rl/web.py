"""``python -m tabletop_rl.web``: the browser app (docs/web.md). Its code lives in ``tabletop_rl.training.web``
(``command.py`` reads this command line, ``server.py`` serves); this module only runs it."""

from .training.web.command import main

if __name__ == "__main__":
    main()
