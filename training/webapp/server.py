"""The web app's server: a Starlette app over the engines, the agents and the game records (docs/web.md).

The browser only ever sends names and numbers — a game and its options, agent names from the list the server
offers, an action, a record's name in the records folder, a step — or the bytes of an uploaded record (at most
``MAX_BYTES``, checked like any record file): never a server path, never anything that runs. Every request is
checked, and a refused one (an illegal move, a bad option) gets a 4xx with one line and changes nothing.

Games and replays live in memory, a bounded number of each (the oldest is closed first, a game's record kept).
All engine and agent work runs under one lock: agents share their policy networks' buffers, and one person's
tabs need no parallelism. Agents are asked for their move one decision per request (``/step``), so the page shows
each move as it is made and that a search is thinking.
"""

from __future__ import annotations

import contextlib
import json
import re
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from ...envs.core.agents import Agent, agent_notes, attach_view
from ...envs.core.files import write_new
from ...envs.core.game import Game, State
from ...envs.core.options import Option
from ...envs.core.record import HUMAN, MAX_BYTES, Decision, Record, RecordError, Result, load_record, parse_record
from ...envs.core.registry import game_class, list_games
from ..runtime.agents import CustomAgentError, agent_factory
from ..runtime.policy_paths import shipped_policies

STATIC = Path(__file__).parent / "static"
BUILTIN = ("random", "heuristic", "pretrained", "search")  # the agents every game offers (pretrained if shipped)
MAX_GAMES, MAX_REPLAYS = 16, 16  # open at once; the oldest is closed first
MAX_REQUEST = 65_536  # a request's JSON body (uploads apart)
LOG_LINES = 40  # the last moves a play view lists
RECORD_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,150}\.json")
LISTED = 500  # records the folder list shows, newest first


def refuse(status: int, message: str) -> HTTPException:
    return HTTPException(status, message)


def _number(x: Any) -> int | float:
    """A score or return as a plain JSON number."""
    x = float(x)
    return int(x) if x.is_integer() else x


# ----------------------------------------------------------------------------- request checks
async def _body(request: Request) -> dict[str, Any]:
    data = await request.body()
    if len(data) > MAX_REQUEST:
        raise refuse(413, f"the request is {len(data):,} bytes, more than the {MAX_REQUEST:,} allowed")
    try:
        body = json.loads(data or b"{}")
    except (ValueError, UnicodeDecodeError):
        raise refuse(400, "the request is not a JSON object") from None
    if not isinstance(body, dict):
        raise refuse(400, "the request is not a JSON object")
    return body


def _integer(value: Any, name: str, low: int, high: int) -> int:
    if type(value) is not int or not low <= value <= high:
        raise refuse(400, f"{name} must be an integer from {low} to {high}, got {json.dumps(value)[:40]}")
    return value


def _text(value: Any, name: str) -> str:
    if not isinstance(value, str):
        raise refuse(400, f"{name} must be text, got {json.dumps(value)[:40]}")
    return value


def option_form(option: Option) -> dict[str, Any]:
    """How the new-game form asks for ``option``: a choice, a checkbox or a number (with extra values)."""
    form = {"name": option.name, "default": option.default, "doc": option.doc, "allowed": option.allowed}
    if option.bounds is not None:
        return {**form, "kind": "integer", "min": option.bounds[0], "max": option.bounds[1],
                "values": list(option.values)}
    if type(option.default) is bool and not option.values:
        return {**form, "kind": "boolean"}
    return {**form, "kind": "choice", "values": list(option.values)}


# ----------------------------------------------------------------------------- games and replays
class Live:
    """A game being played: its state, each seat's agent (None for a person), the decisions so far."""

    def __init__(self, game: Game, seed: int, specs: list[str], agents: list[Agent | None]):
        self.id = secrets.token_urlsafe(9)
        self.game, self.seed, self.specs, self.agents = game, seed, specs, agents
        self.state = game.new_initial_state(seed)
        self.humans = [s for s, agent in enumerate(agents) if agent is None]
        self.decisions: list[Decision] = []
        self.log: list[tuple[int, list[str]]] = []  # each decision's seat and its words for each viewer (None last)
        self.record: str | None = None  # the record's file name, once written
        self.record_error: str | None = None
        for seat, agent in enumerate(agents):
            if agent is not None:
                attach_view(agent, lambda: self.state, seat)  # a search samples from its seat's view only

    def viewer(self) -> int | None:
        """Whose view the page shows: the one person's; with several at one screen, the one to move; else all."""
        if len(self.humans) == 1:
            return self.humans[0]
        if self.state.current_player in self.humans:
            return self.state.current_player
        return None

    def apply(self, action: int, notes: dict | None = None) -> None:
        state = self.state
        seat = state.current_player
        words = [state.describe_action(action, v) for v in [*range(self.game.num_players), None]]
        state.apply_action(action)  # raises ValueError, state unchanged, if illegal
        self.decisions.append(Decision(seat, action, notes))
        self.log.append((seat, words))


class Replay:
    """A record opened for replay: every position, computed once."""

    def __init__(self, record: Record, name: str):
        self.id = secrets.token_urlsafe(9)
        self.record, self.name = record, name
        self.states = [state for state, _ in record.states()]


def _decide(agent: Agent, state: State, seat: int) -> int:
    """``agent``'s move for ``seat``, from that seat's observation and mask; a custom agent's illegal answer is the
    server's failure (500), in its one line."""
    try:
        return int(agent.act(state.observation(seat), state.action_mask()))
    except CustomAgentError as error:
        raise refuse(500, str(error)) from None


def _describe(state: State, actions: list[int], viewer: int | None) -> dict[int, str]:
    return {a: state.describe_action(a, viewer) for a in actions}


class App:
    """The app's state: the agents offered besides the built-in ones, the records folder, the open games and
    replays."""

    def __init__(self, records: Path, agents: dict[str, str] | None = None, max_games: int = MAX_GAMES):
        self.records, self.offered, self.max_games = Path(records), dict(agents or {}), max_games
        self.games: OrderedDict[str, Live] = OrderedDict()
        self.replays: OrderedDict[str, Replay] = OrderedDict()
        self.factories: dict[tuple, Callable[[int | None], Agent]] = {}
        self.lock = threading.RLock()

    # ------------------------------------------------------------------ agents
    def agent_names(self, game_name: str) -> list[str]:
        builtin = [a for a in BUILTIN if a != "pretrained" or shipped_policies(game_name)]
        return builtin + list(self.offered)

    def agent(self, name: Any, game: Game, seed: int) -> Agent:
        """A new agent called ``name`` (one of those offered: the browser never names a spec of its own) for
        ``game``; 400 with the loader's line if it fails."""
        if not isinstance(name, str) or name not in BUILTIN and name not in self.offered:
            offered = ", ".join([*BUILTIN, *self.offered])
            raise refuse(400, f"unknown agent {json.dumps(name)[:60]}; offered: {offered}")
        key = (name, game.name, json.dumps(game.options, sort_keys=True))
        try:
            if key not in self.factories:
                self.factories[key] = agent_factory(self.spec(name), game)
            return self.factories[key](seed)
        except CustomAgentError as error:  # its line names the agent: its factory failed for this game, say
            raise refuse(400, str(error)) from None
        except ValueError as error:  # no pretrained policy for these options, a policy of another game
            raise refuse(400, f"agent {name}: {error}") from None

    def spec(self, name: str) -> str:
        """The agent spec a record keeps: a policy file's path or a custom agent's spec, else the name."""
        return self.offered.get(name, name)

    # ------------------------------------------------------------------ games
    def new_game(self, body: dict[str, Any]) -> Live:
        name = _text(body.get("game"), "game")
        if name not in list_games():
            raise refuse(400, f"unknown game {json.dumps(name)[:60]}; available games: {', '.join(list_games())}")
        options = body.get("options", {})
        if not isinstance(options, dict) or any(isinstance(v, (list, dict)) for v in options.values()):
            raise refuse(400, "options must be an object of option names and plain values")
        try:
            game = game_class(name)(**options)
        except (TypeError, ValueError) as error:
            raise refuse(400, str(error)) from None
        seats = body.get("seats")
        n = game.num_players
        if not isinstance(seats, list) or len(seats) != n:
            raise refuse(400, f"seats must list {n} agents ('{HUMAN}' or an offered agent), one per seat of "
                              f"{game.title} with these options")
        seed = body.get("seed")
        seed = secrets.randbits(63) if seed is None else _integer(seed, "seed", 0, 2**63 - 1)
        agents = [None if spec == HUMAN else self.agent(spec, game, seed + 1 + s) for s, spec in enumerate(seats)]
        specs = [HUMAN if a is None else self.spec(spec) for spec, a in zip(seats, agents, strict=True)]
        live = Live(game, seed, specs, agents)
        self.games[live.id] = live
        while len(self.games) > self.max_games:  # close the oldest, keeping its record
            self.save(self.games.popitem(last=False)[1])
        return live

    def live(self, game_id: str) -> Live:
        live = self.games.get(game_id)
        if live is None:
            raise refuse(404, f"no open game {game_id[:40]!r}: it was closed (at most {self.max_games} are open; "
                              "the server keeps none across a restart); its record is in the records list")
        return live

    def save(self, live: Live) -> None:
        """Write the game's record (once: at its end, or when it is closed unfinished)."""
        if live.record is not None or live.record_error is not None:
            return
        record = Record(live.game.name, dict(live.game.options), live.seed, tuple(live.specs), tuple(live.decisions),
                        Result.of(live.state), {"command": "web"})
        try:
            path = write_new(self.records / f"{live.game.name}-{time.strftime('%Y%m%d-%H%M%S')}.json",
                             record.to_json().encode())
        except OSError as error:
            live.record_error = f"the record could not be written in {self.records}: {error.strerror or error}"
        else:
            live.record = path.name

    def close(self) -> None:
        """At shutdown: keep the records of the unfinished games."""
        with self.lock:
            for live in self.games.values():
                self.save(live)

    def play_view(self, live: Live) -> dict[str, Any]:
        state, viewer = live.state, live.viewer()
        over = state.is_terminal()
        to_move = None if over else state.current_player
        human = to_move in live.humans
        legal = state.legal_actions() if human else []
        words = _describe(state, legal, viewer)
        column = live.game.num_players if viewer is None else viewer
        view = {"kind": "play", "id": live.id, "game": live.game.name, "title": live.game.title,
                "options": live.game.options, "agents": live.specs, "viewer": viewer, "to_move": to_move,
                "phase": state.phase_name, "over": over, "waiting": None if over else "human" if human else "agent",
                "svg": state.render_svg(None if over else viewer, legal),  # at the end every hand is shown
                "legal": [{"action": a, "text": words[a]} for a in legal],
                "log": [{"seat": seat, "text": texts[column]} for seat, texts in live.log[-LOG_LINES:]],
                "decisions": len(live.decisions), "scores": [_number(x) for x in state.scores()],
                "result": None, "record": live.record, "record_error": live.record_error}
        if over:
            view["result"] = {"returns": [_number(r) for r in state.returns()], "truncated": state.is_truncated()}
        return view

    def move(self, live: Live, body: dict[str, Any]) -> None:
        state = live.state
        if state.is_terminal():
            raise refuse(409, "the game is over: no more moves")
        if state.current_player not in live.humans:
            raise refuse(409, f"it is player {state.current_player}'s turn ({live.specs[state.current_player]}), "
                              "not a person's: ask the server to step the agent")
        action = _integer(body.get("action"), "action", 0, live.game.num_actions - 1)
        if action not in state.legal_actions():
            raise refuse(400, f"action {action} ({state.action_to_string(action)}) is not legal for player "
                              f"{state.current_player} in phase {state.phase_name}")
        live.apply(action)
        if state.is_terminal():
            self.save(live)

    def step(self, live: Live) -> None:
        """Let the agent on move play one decision."""
        state = live.state
        if state.is_terminal():
            raise refuse(409, "the game is over: no more moves")
        seat = state.current_player
        agent = live.agents[seat]
        if agent is None:
            raise refuse(409, f"it is player {seat}'s turn, a person's: send a move")
        action = _decide(agent, state, seat)
        live.apply(action, agent_notes(agent))
        if state.is_terminal():
            self.save(live)

    # ------------------------------------------------------------------ asking an agent
    def ask(self, state: State, name: Any, viewer: int | None) -> dict[str, Any]:
        """What agent ``name`` would play for the seat on move in ``state``: it gets that seat's observation and
        mask, and (a search) that seat's view, which samples the hidden cards anew — never ``state`` itself."""
        if state.is_terminal():
            raise refuse(409, "the game is over: nobody is on move")
        seat = state.current_player
        agent = self.agent(name, state.game, secrets.randbits(63))
        attach_view(agent, lambda: state, seat)
        action = _decide(agent, state, seat)
        notes = agent_notes(agent) or {}
        named = {action} | {c["action"] for part in ("policy", "search") if part in notes
                            for c in notes[part].get("top", notes[part].get("candidates", []))}
        words = _describe(state, sorted(named), viewer)
        answer: dict[str, Any] = {"agent": name, "seat": seat, "choice": {"action": action, "text": words[action]}}
        if "policy" in notes:
            answer["policy"] = {"value": notes["policy"]["value"], "top": [
                {**m, "text": words[m["action"]]} for m in notes["policy"]["top"]]}
        if "search" in notes:
            answer["search"] = {"measure": notes["search"]["measure"], "candidates": [
                {**c, "text": words[c["action"]]} for c in notes["search"]["candidates"]]}
        if getattr(agent, "unsearched", None):  # a search that played nothing out says why (runtime/search.py)
            answer["unsearched"] = agent.unsearched
        return answer

    # ------------------------------------------------------------------ records and replays
    def record_list(self) -> list[dict[str, Any]]:
        if not self.records.is_dir():
            return []
        found = []
        for path in self.records.iterdir():
            if RECORD_NAME.fullmatch(path.name) and path.is_file():
                info = path.stat()
                found.append({"name": path.name, "bytes": info.st_size, "time": info.st_mtime})
        return sorted(found, key=lambda r: -r["time"])[:LISTED]

    def record_path(self, name: Any) -> Path:
        name = _text(name, "record")
        if not RECORD_NAME.fullmatch(name):
            raise refuse(400, f"{json.dumps(name)[:60]} is not the name of a record in the records folder "
                              "(letters, digits, . _ - and .json)")
        path = self.records / name
        if not path.is_file():
            raise refuse(404, f"no record {name} in the records folder")
        return path

    def open_replay(self, record: Record, name: str) -> Replay:
        replay = Replay(record, name)
        self.replays[replay.id] = replay
        while len(self.replays) > MAX_REPLAYS:
            self.replays.popitem(last=False)
        return replay

    def replay(self, replay_id: str) -> Replay:
        replay = self.replays.get(replay_id)
        if replay is None:
            raise refuse(404, f"no open replay {replay_id[:40]!r}: open the record again (at most {MAX_REPLAYS} "
                              "replays are open)")
        return replay

    def replay_view(self, replay: Replay, step: int, viewer: int | None) -> dict[str, Any]:
        record = replay.record
        state = replay.states[step]
        decision = record.decisions[step] if step < len(record.decisions) else None
        view = {"kind": "replay", "id": replay.id, "name": replay.name, "game": record.game,
                "title": state.game.title, "options": record.options, "agents": list(record.agents),
                "viewer": viewer, "step": step, "steps": len(record.decisions), "phase": state.phase_name,
                "to_move": None if state.is_terminal() else state.current_player,
                "svg": state.render_svg(viewer, (), you=False), "scores": [_number(x) for x in state.scores()],
                "decision": None, "result": None}
        if decision is not None:
            notes = decision.notes if decision.notes and viewer in (None, decision.seat) else None
            view["decision"] = {"seat": decision.seat, "action": decision.action,
                                "text": state.describe_action(decision.action, viewer), "notes": notes}
            if notes:
                named = {c["action"] for part in notes.values() for c in part.get("top", part.get("candidates", []))}
                view["decision"]["words"] = {str(a): t for a, t in _describe(state, sorted(named), viewer).items()}
        if record.result is not None and decision is None:
            view["result"] = {"returns": list(record.result.returns), "scores": list(record.result.scores),
                              "truncated": record.result.truncated}
        return view


# ----------------------------------------------------------------------------- routes
def create_app(records: str | Path = "runs/games", agents: dict[str, str] | None = None,
               max_games: int = MAX_GAMES) -> Starlette:
    """The app: ``records`` is the folder games are written to and replays are listed from; ``agents`` the agents
    offered besides the built-in ones, the name the browser sees -> the spec loaded (a policy file, a custom
    agent's ``module:callable``), given at start-up."""
    app_state = App(Path(records), agents, max_games)

    def locked(handler: Callable) -> Callable:
        async def endpoint(request: Request) -> JSONResponse:
            body = await _body(request) if request.method == "POST" else {}
            with app_state.lock:
                return JSONResponse(handler(request, body))
        return endpoint

    def setup(request: Request, body: dict) -> dict:
        games = []
        for name in list_games():
            cls = game_class(name)
            games.append({"name": name, "title": cls.title, "players": cls().num_players,
                          "options": [option_form(o) for o in cls.option_schema],
                          "agents": app_state.agent_names(name)})
        return {"games": games, "human": HUMAN}

    def new_game(request: Request, body: dict) -> dict:
        return app_state.play_view(app_state.new_game(body))

    def game_view(request: Request, body: dict) -> dict:
        return app_state.play_view(app_state.live(request.path_params["id"]))

    def move(request: Request, body: dict) -> dict:
        live = app_state.live(request.path_params["id"])
        app_state.move(live, body)
        return app_state.play_view(live)

    def step(request: Request, body: dict) -> dict:
        live = app_state.live(request.path_params["id"])
        app_state.step(live)
        return app_state.play_view(live)

    def ask_play(request: Request, body: dict) -> dict:
        live = app_state.live(request.path_params["id"])
        state = live.state
        if state.is_terminal() or state.current_player not in live.humans or live.viewer() != state.current_player:
            raise refuse(409, "agents can be asked only for your own move, on your turn")
        return app_state.ask(state, body.get("agent"), state.current_player)

    def records(request: Request, body: dict) -> dict:
        return {"records": app_state.record_list()}

    def open_record(request: Request, body: dict) -> dict:
        name = body.get("name")
        path = app_state.record_path(name)
        try:
            record = load_record(path)
        except RecordError as error:
            raise refuse(400, str(error).replace(str(path), name)) from None
        return replay_view_of(app_state.open_replay(record, name), 0, None)

    def replay_view_of(replay: Replay, step: Any, viewer: Any) -> dict:
        step = _integer(step, "step", 0, len(replay.states) - 1)
        if viewer is not None:
            viewer = _integer(viewer, "viewer", 0, len(replay.record.agents) - 1)
        return app_state.replay_view(replay, step, viewer)

    def replay_view(request: Request, body: dict) -> dict:
        query = request.query_params
        try:
            step = int(query.get("step", "0"))
            viewer = None if query.get("viewer", "all") == "all" else int(query["viewer"])
        except ValueError:
            raise refuse(400, "step and viewer must be integers (viewer may be 'all')") from None
        return replay_view_of(app_state.replay(request.path_params["id"]), step, viewer)

    def ask_replay(request: Request, body: dict) -> dict:
        replay = app_state.replay(request.path_params["id"])
        step = _integer(body.get("step"), "step", 0, len(replay.states) - 1)
        state = replay.states[step].clone()  # the replay's own positions stay as they are
        viewer = None if state.is_terminal() else state.current_player
        return app_state.ask(state, body.get("agent"), viewer)

    async def upload(request: Request) -> JSONResponse:
        name = request.query_params.get("name", "upload.json")
        name = name if RECORD_NAME.fullmatch(name) else "upload.json"  # only for messages
        declared = request.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > MAX_BYTES:
            raise refuse(413, f"{name} is {int(declared):,} bytes, more than the {MAX_BYTES:,} a record may have")
        data = bytearray()
        async for chunk in request.stream():
            data += chunk
            if len(data) > MAX_BYTES:
                raise refuse(413, f"{name} is more than the {MAX_BYTES:,} bytes a record may have")
        with app_state.lock:
            try:
                record = parse_record(bytes(data), name)
            except RecordError as error:
                raise refuse(400, str(error)) from None
            return JSONResponse(replay_view_of(app_state.open_replay(record, name), 0, None))

    def download(request: Request) -> FileResponse:
        path = app_state.record_path(request.path_params["name"])
        return FileResponse(path, media_type="application/json", filename=path.name)

    async def index(request: Request) -> FileResponse:
        return FileResponse(STATIC / "index.html")

    async def favicon(request: Request) -> FileResponse:  # browsers ask for it whatever the page says
        return FileResponse(STATIC / "favicon.svg", media_type="image/svg+xml")

    async def error(request: Request, exc: HTTPException) -> JSONResponse:
        return JSONResponse({"error": exc.detail}, status_code=exc.status_code)

    routes = [
        Route("/", index),
        Route("/favicon.ico", favicon),
        Route("/api/setup", locked(setup)),
        Route("/api/games", locked(new_game), methods=["POST"]),
        Route("/api/games/{id}", locked(game_view)),
        Route("/api/games/{id}/move", locked(move), methods=["POST"]),
        Route("/api/games/{id}/step", locked(step), methods=["POST"]),
        Route("/api/games/{id}/ask", locked(ask_play), methods=["POST"]),
        Route("/api/records", locked(records)),
        Route("/api/records/{name}", download),
        Route("/api/replays", locked(open_record), methods=["POST"]),
        Route("/api/replays/upload", upload, methods=["POST"]),
        Route("/api/replays/{id}", locked(replay_view)),
        Route("/api/replays/{id}/ask", locked(ask_replay), methods=["POST"]),
        Mount("/static", StaticFiles(directory=STATIC)),
    ]
    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        app_state.close()

    app = Starlette(routes=routes, exception_handlers={HTTPException: error}, lifespan=lifespan)
    app.state.tabletop = app_state
    return app
