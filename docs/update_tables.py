"""Regenerate the tables in docs/<game>.md from the code, so the docs cannot drift from it.

    python docs/update_tables.py          # rewrite every game's doc in place
    python docs/update_tables.py --check  # exit 1 if a doc is out of date (tests/test_docs.py does this)

A generated block sits between ``<!-- generated: options -->``, ``<!-- generated: layout {json options} -->``
(the observation) or ``<!-- generated: state_layout {json options} -->`` (the global state) and
``<!-- end generated -->``.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
sys.path.insert(0, str(DOCS.parent))  # this checkout's tabletop_rl, not an installed copy (the script is in docs/)

from tabletop_rl import envs  # noqa: E402
from tabletop_rl.envs.core.options import markdown_table  # noqa: E402

BLOCK = re.compile(r"(<!-- generated: (options|layout|state_layout)(.*?) -->\n)(.*?)(<!-- end generated -->)", re.S)


def render(text: str, game_name: str) -> str:
    game_class = envs.game_class(game_name)

    def table(match: re.Match) -> str:
        head, kind, options, _old, tail = match.groups()
        if kind == "options":
            body = markdown_table(game_class.option_schema)
        else:
            game = game_class(**json.loads(options.strip() or "{}"))
            body = getattr(game, kind).to_markdown()
        return f"{head}{body}\n{tail}"

    return BLOCK.sub(table, text)


def main() -> int:
    stale = []
    for name in envs.list_games():
        path = DOCS / f"{name}.md"
        text = path.read_text()
        fresh = render(text, name)
        if fresh != text:
            stale.append(path.name)
            if "--check" not in sys.argv:
                path.write_text(fresh)
    if stale and "--check" in sys.argv:
        print("out of date: " + ", ".join(stale) + " (run python docs/update_tables.py)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
