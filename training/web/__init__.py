"""The browser app: play every game against the agents, replay game records, ask the agents (docs/web.md).

``python -m tabletop_rl.web`` (extra ``web``: Starlette and uvicorn); the server is
:mod:`tabletop_rl.training.web.server`, the page hand-written HTML, JavaScript and CSS in ``static/``.
"""
