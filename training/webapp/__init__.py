"""The browser app: play every game against the agents, replay game records, ask the agents (docs/web.md).

``python -m tabletop_rl.web`` (or ``python -m tabletop_rl.training.web``; extra ``web``: Starlette and uvicorn); the
server is :mod:`.server`, the page hand-written HTML, JavaScript and CSS in ``static/``.
"""
