"""The browser app (docs/web.md): every route through Starlette's TestClient, its refusals (one line, state
unchanged), and a real browser — Debian's headless Chromium driven by Selenium — playing each game to the end by
clicking, replaying its record and asking an agent; at 1400 × 1000 every table's text is at least 11 px, with no
wide empty margins, and a person's only move is played for them unless they turn that off. Screenshots go to
tests/artifacts/web/."""

from __future__ import annotations

import json
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("starlette", reason="the web extra installs starlette")
from starlette.testclient import TestClient  # noqa: E402

from tabletop_rl.envs.core.record import MAX_BYTES, Record, load_record  # noqa: E402
from tabletop_rl.training.web import main as web_main  # noqa: E402
from tabletop_rl.training.webapp.server import create_app  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "tests" / "artifacts" / "web"
# small option sets: short games
SMALL = {"lost_cities": {}, "five_towers": {"num_players": 2}, "palazzo": {"num_players": 2}, "torres": {}}


@pytest.fixture
def client(tmp_path):
    with TestClient(create_app(tmp_path / "games")) as c:
        yield c


def new(client, game="lost_cities", seats=("human", "random"), **extra):
    response = client.post("/api/games", json={"game": game, "seats": list(seats), "options": SMALL[game], **extra})
    assert response.status_code == 200, response.text
    return response.json()


def finish(client, view):
    """Play a game to its end through the API: the person takes its first legal move, agents step."""
    for _ in range(5000):
        if view["over"]:
            return view
        route = "move" if view["waiting"] == "human" else "step"
        body = {"action": view["legal"][0]["action"]} if route == "move" else None
        response = client.post(f"/api/games/{view['id']}/{route}", json=body)
        assert response.status_code == 200, response.text
        view = response.json()
    raise AssertionError("the game did not end")


def test_setup_describes_every_game_and_its_options(client):
    games = {g["name"]: g for g in client.get("/api/setup").json()["games"]}
    assert sorted(games) == ["five_towers", "lost_cities", "palazzo", "torres"]
    lost = {o["name"]: o for o in games["lost_cities"]["options"]}
    assert lost["n_colours"]["kind"] == "choice" and lost["n_colours"]["values"] == [5, 6]
    assert lost["rounds"]["kind"] == "integer" and lost["rounds"]["min"] == 1
    assert lost["max_turns_per_round"]["values"] == ["auto", None]
    assert {o["kind"] for o in games["five_towers"]["options"]} >= {"boolean", "choice"}
    assert games["lost_cities"]["agents"][:4] == ["random", "heuristic", "pretrained", "search"]


@pytest.mark.parametrize("game", sorted(SMALL))
def test_a_game_played_to_the_end_is_recorded_and_replays(client, game, tmp_path):
    view = finish(client, new(client, game, seed=3))
    assert view["result"] is not None and view["record"]
    record = load_record(tmp_path / "games" / view["record"])
    assert record.agents == ("human", "random") and len(record.decisions) == view["decisions"]
    assert client.get(f"/api/records/{view['record']}").json()["format"] == "tabletop-rl-record"
    assert [r["name"] for r in client.get("/api/records").json()["records"]] == [view["record"]]
    replay = client.post("/api/replays", json={"name": view["record"]}).json()
    assert replay["steps"] == len(record.decisions)
    last = client.get(f"/api/replays/{replay['id']}?step={replay['steps']}&viewer=0").json()
    assert last["result"]["scores"] == list(record.result.scores) and last["viewer"] == 0
    asked = client.post(f"/api/replays/{replay['id']}/ask", json={"agent": "heuristic", "step": 0}).json()
    assert asked["choice"]["text"]


def test_the_end_shows_every_hand_and_phases_read_plainly(client):
    """Once the game is over the table is drawn whole (the opponent's hand no longer "?"); a phase is named without
    its rule id (Torres' "D2 setup knight" reads "setup knight")."""
    view = finish(client, new(client, "lost_cities", seed=4))
    state = client.app.state.tabletop.games[view["id"]].state
    assert view["svg"] == state.render_svg(None, []) != state.render_svg(0, [])
    view = new(client, "torres", seats=("human", "human"), seed=1)
    assert view["phase"] == "setup knight" and not re.search(r"\bD\d", json.dumps(view["legal"]))


def test_the_page_has_its_icon(client):
    response = client.get("/favicon.ico")
    assert response.status_code == 200 and response.headers["content-type"].startswith("image/svg+xml")
    assert 'rel="icon"' in client.get("/").text


def test_the_person_sees_only_its_own_view(client):
    view = new(client, "lost_cities", seats=("random", "human"), seed=1)
    assert view["viewer"] == 1
    state = client.app.state.tabletop.games[view["id"]].state
    assert view["svg"] == state.render_svg(1, state.legal_actions() if state.current_player == 1 else ())


def test_an_illegal_move_is_refused_and_changes_nothing(client):
    view = new(client, "torres", seed=2)
    while view["waiting"] != "human":
        view = client.post(f"/api/games/{view['id']}/step").json()
    live = client.app.state.tabletop.games[view["id"]]
    before = live.state.to_json()
    legal = {m["action"] for m in view["legal"]}
    illegal = next(a for a in range(live.game.num_actions) if a not in legal)
    for body, status, message in [
        ({"action": illegal}, 400, f"action {illegal} ("),
        ({"action": "1"}, 400, "action must be an integer from 0 to"),
        ({"action": True}, 400, "action must be an integer"),
        ({"action": 10**9}, 400, "action must be an integer"),
    ]:
        response = client.post(f"/api/games/{view['id']}/move", json=body)
        assert response.status_code == status and message in response.json()["error"]
    assert client.post(f"/api/games/{view['id']}/step").json()["error"].startswith("it is player")
    garbled = client.post(f"/api/games/{view['id']}/move", content=b"[1")
    assert garbled.status_code == 400 and garbled.json()["error"] == "the request is not a JSON object"
    assert live.state.to_json() == before and not live.decisions


@pytest.mark.parametrize(("body", "message"), [
    ({"game": "chess", "seats": []}, "unknown game \"chess\"; available games: five_towers, lost_cities"),
    ({"game": "lost_cities", "seats": ["human"]}, "seats must list 2 agents"),
    ({"game": "lost_cities", "seats": ["human", "/etc/passwd"]}, "unknown agent \"/etc/passwd\"; offered: random"),
    ({"game": "lost_cities", "seats": ["human", ["random"]]}, "unknown agent [\"random\"]; offered: random"),
    ({"game": "lost_cities", "seats": ["human", "random"], "options": {"n_colours": 7}},
     "Lost Cities: option n_colours=7 is not allowed; expected one of 5, 6"),
    ({"game": "lost_cities", "seats": ["human", "random"], "options": {"n_colours": [5]}}, "options must be an object"),
    ({"game": "torres", "seats": ["human", "pretrained"], "options": {"action_deck": "personal"}},
     "agent pretrained: no pretrained torres policy was trained for 2 players with action_deck='personal'"),
    ({"game": "lost_cities", "seats": ["human", "random"], "seed": -1}, "seed must be an integer from 0"),
])
def test_a_bad_new_game_is_refused_in_one_line(client, body, message):
    response = client.post("/api/games", json=body)
    assert response.status_code == 400 and message in response.json()["error"]
    assert "\n" not in response.json()["error"] and not client.app.state.tabletop.games


def test_asking_an_agent_uses_the_seat_view_and_changes_nothing(client):
    view = new(client, "lost_cities", seats=("human", "random"), seed=5)
    while view["waiting"] != "human":
        view = client.post(f"/api/games/{view['id']}/step").json()
    live = client.app.state.tabletop.games[view["id"]]
    before = live.state.to_json()
    legal = {m["action"] for m in view["legal"]}
    policy = client.post(f"/api/games/{view['id']}/ask", json={"agent": "pretrained"}).json()
    assert policy["choice"]["action"] in legal and -5 < policy["policy"]["value"] < 5
    assert abs(sum(m["probability"] for m in policy["policy"]["top"]) - 1) < 0.2
    search = client.post(f"/api/games/{view['id']}/ask", json={"agent": "search:worlds=4"}).json()
    assert search["error"].startswith('unknown agent "search:worlds=4"')
    search = client.post(f"/api/games/{view['id']}/ask", json={"agent": "search"}).json()
    assert search["choice"]["action"] in legal and ("search" in search) != ("unsearched" in search)
    assert all(c["worlds"] >= 1 and c["text"] for c in search.get("search", {"candidates": []})["candidates"])
    assert client.post(f"/api/games/{view['id']}/ask", json={"agent": "heuristic"}).json()["choice"]["action"] in legal
    assert live.state.to_json() == before and not any(d.seat == 0 for d in live.decisions)
    other = new(client, "lost_cities", seats=("random", "random"))  # nobody's own turn: nothing to ask
    assert client.post(f"/api/games/{other['id']}/ask", json={"agent": "heuristic"}).status_code == 409


def test_a_replay_seen_as_a_seat_calls_nobody_you(client):
    you = re.compile(r"\(you\)|· you\b")  # the labels of the person's seat in play
    for game in sorted(SMALL):
        view = new(client, game, seats=("human", "human"), seed=3)
        assert you.search(view["svg"])
        data = Record(game, SMALL[game], 3, ("human", "human"), ()).to_json().encode()
        replay = client.post(f"/api/replays/upload?name={game}.json", content=data).json()
        assert not you.search(client.get(f"/api/replays/{replay['id']}?step=0&viewer=0").json()["svg"]), game


def test_the_oldest_game_is_closed_and_its_record_kept(tmp_path):
    with TestClient(create_app(tmp_path / "games", max_games=2)) as client:
        first = new(client)
        new(client)
        new(client)
        response = client.get(f"/api/games/{first['id']}")
        assert response.status_code == 404 and "it was closed" in response.json()["error"]
        (name,) = [r["name"] for r in client.get("/api/records").json()["records"]]
        assert load_record(tmp_path / "games" / name).result is None


def test_records_are_named_never_given_as_paths(client, tmp_path):
    for name, status in [("../secret.json", 400), ("/etc/passwd", 400), ("x.txt", 400), ("none.json", 404)]:
        assert client.post("/api/replays", json={"name": name}).status_code == status
    folder = tmp_path / "games"
    folder.mkdir()
    (folder / "bad.json").write_text('{"format": "tabletop-rl-record", "version": 2}')
    response = client.post("/api/replays", json={"name": "bad.json"})
    assert response.json()["error"] == "bad.json has record version 2; this tabletop-rl reads version 1 " \
                                       "(a newer release may read it)"
    assert client.get("/api/records/..%2Fx.json").status_code in (400, 404)
    assert client.get("/api/replays/nope").status_code == 404


def test_an_upload_is_checked_like_a_record_file(client, tmp_path):
    view = finish(client, new(client, seed=9))
    data = (tmp_path / "games" / view["record"]).read_bytes()
    replay = client.post("/api/replays/upload?name=mine.json", content=data).json()
    assert replay["name"] == "mine.json" and replay["steps"] == view["decisions"]
    doc = json.loads(data)
    doc["decisions"][0]["seat"] = 1 - doc["decisions"][0]["seat"]
    bad = client.post("/api/replays/upload?name=mine.json", content=json.dumps(doc).encode()).json()["error"]
    assert bad.startswith("mine.json: decision 0: recorded for seat")
    big = client.post("/api/replays/upload?name=big.json", content=b" " * (MAX_BYTES + 1))
    assert big.status_code == 413 and "more than the 5,000,000" in big.json()["error"]
    assert client.get(f"/api/replays/{replay['id']}?step=999").json()["error"].startswith("step must be an integer")
    assert client.get(f"/api/replays/{replay['id']}?viewer=x").status_code == 400


def test_the_help_is_plain_text(capsys):
    with pytest.raises(SystemExit):
        web_main(["--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "python -m tabletop_rl.web is the short form" in out and "`" not in out


def test_the_command_warns_off_loopback_and_refuses_bad_flags(tmp_path):
    done = subprocess.run([sys.executable, "-m", "tabletop_rl.web", str(tmp_path / "none.safetensors")],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "no such file" in done.stderr and "Traceback" not in done.stderr
    done = subprocess.run([sys.executable, "-m", "tabletop_rl.web", "--port", "0"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "expected a port from 1 to 65535, got '0'" in done.stderr


# ----------------------------------------------------------------------------- your own agents, given at start-up
def test_custom_agents_given_at_start_up_are_offered_by_name_and_no_other(tmp_path, monkeypatch):
    """The web command of examples/my_agent.py's docstring: both agents offered in every game, one plays a game to
    its end; a spec the browser names is refused and never imported."""
    served = {}
    monkeypatch.setattr("uvicorn.run", lambda app, **settings: served.update(app=app))
    monkeypatch.chdir(ROOT)  # the paths in the example are the checkout's
    command = re.search(r"^ +python -m tabletop_rl.web (.*)$", (ROOT / "examples" / "my_agent.py").read_text(), re.M)
    given = command.group(1).split()
    assert web_main([*given, "--records", str(tmp_path / "games")]) == 0
    with TestClient(served["app"]) as client:
        setup = client.get("/api/setup").json()["games"]
        assert all(game["agents"][-2:] == given for game in setup)
        view = finish(client, new(client, "lost_cities", seats=("human", given[0]), seed=3))
        assert load_record(tmp_path / "games" / view["record"]).agents == ("human", given[0])
        view = new(client, "lost_cities", seats=("human", "random"), seed=5)
        while view["waiting"] != "human":
            view = client.post(f"/api/games/{view['id']}/step").json()
        planted = tmp_path / "planted.py"  # importing it would leave a file
        planted.write_text(f"open({str(tmp_path / 'imported')!r}, 'w').close()\ndef make(game, seed): pass\n")
        offered = "; offered: random, heuristic, pretrained, search, " + ", ".join(given)
        for name in (f"{planted}:make", "tests.custom_agents:first", "os:system"):
            refused = client.post("/api/games", json={"game": "lost_cities", "seats": ["human", name]})
            asked = client.post(f"/api/games/{view['id']}/ask", json={"agent": name})
            for response in (refused, asked):
                error = response.json()["error"]
                assert response.status_code == 400 and error.startswith("unknown agent ") and error.endswith(offered)
        assert not (tmp_path / "imported").exists()


def test_a_custom_agent_failing_in_a_game_says_so_in_one_line(tmp_path, capsys):
    names = ["tests.custom_agents:lost_cities_only", "tests.custom_agents:out_of_range"]
    with TestClient(create_app(tmp_path, {name: name for name in names})) as client:
        refused = client.post("/api/games", json={"game": "torres", "seats": ["human", names[0]]})
        assert refused.status_code == 400 and refused.json()["error"] == (
            f"agent {names[0]}: the factory raised ValueError: this agent plays lost_cities only, not torres")
        view = new(client, "lost_cities", seats=(names[1], "human"), seed=0)
        while view["waiting"] == "human":  # to the agent's turn
            view = client.post(f"/api/games/{view['id']}/move", json={"action": view["legal"][0]["action"]}).json()
        failed = client.post(f"/api/games/{view['id']}/step")
        assert failed.status_code == 500 and failed.json()["error"].startswith(f"agent {names[1]}: act returned ")
    with pytest.raises(SystemExit) as stop:
        web_main(["tests.custom_agents:hihgest"])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and err.startswith(
        "python -m tabletop_rl.web: error: agent tests.custom_agents:hihgest: tests.custom_agents has no 'hihgest'")
    assert err.count("\n") == 1


# ----------------------------------------------------------------------------- the browser
CHROMIUM, DRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"


@pytest.fixture(scope="module")
def records(tmp_path_factory):
    """The browser's server's records folder."""
    return tmp_path_factory.mktemp("games")


@pytest.fixture(scope="module")
def server(records):
    """The app served by uvicorn on a free port of 127.0.0.1, stopped at the end."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    process = subprocess.Popen([sys.executable, "-m", "tabletop_rl.web", "--port", str(port),
                                "--records", str(records)], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        process.wait(timeout=20)


@pytest.fixture(scope="module")
def browser():
    """Headless Chromium; a missing browser fails (CI must install it: .ci/run), never skips."""
    webdriver = pytest.importorskip("selenium.webdriver", reason="the dev extra installs selenium")
    missing = [p for p in (CHROMIUM, DRIVER) if not shutil.which(p)]
    assert not missing, f"the browser test needs Debian's chromium and chromium-driver: {missing} missing " \
                        "(apt-get install chromium chromium-driver; .ci/run does)"
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1400,1000"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=webdriver.ChromeService(DRIVER), options=options)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    yield driver
    driver.quit()


def wait(driver, css, seconds=20.0):
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, seconds).until(expected_conditions.presence_of_element_located(("css selector", css)))


def until(check, seconds=20.0):
    """Wait for ``check()`` to hold, through redraws of the page (stale elements)."""
    from selenium.common.exceptions import WebDriverException

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if check():
                return
        except WebDriverException:
            pass
        time.sleep(0.05)
    raise AssertionError("the page did not show what was expected in time")


def move_list(driver) -> list[tuple[str, bool]]:
    """The play view's move list as shown: each line's text, and whether its number is whole (no wider than its
    box, inside the list's edges, which clip)."""
    return driver.execute_script("""
        const log = document.getElementById("log").getBoundingClientRect();
        return [...document.querySelectorAll("#log li")].map((line) => {
          const number = line.querySelector(".number");
          const box = number && number.getBoundingClientRect();
          return [line.innerText, Boolean(number) && number.scrollWidth <= number.clientWidth
                                  && box.left >= log.left && box.right <= log.right];
        });""")


def table_layout(driver) -> dict:
    """How the table is drawn: its smallest text in px, how far its drawn aspect strays from its viewBox's (a
    letterboxed table has white bands in its box), the empty width left of the table and right of the panel."""
    return driver.execute_script("""
        const svg = document.querySelector("#table svg"), box = svg.viewBox.baseVal;
        const scale = svg.getScreenCTM().a;
        const sizes = [...svg.querySelectorAll("text")].map((t) => Number(t.getAttribute("font-size")) * scale);
        const drawn = svg.getBoundingClientRect(), panel = document.querySelector(".panel").getBoundingClientRect();
        const stray = Math.abs(drawn.width / drawn.height / (box.width / box.height) - 1);
        const right = document.documentElement.clientWidth - panel.right;
        return {smallest: Math.min(...sizes), stray, left: drawn.left, right, beside: panel.left > drawn.right};""")


def api(server: str, method: str, path: str, body: dict | None = None) -> dict:
    """A call to the browser's server, as the page makes it."""
    import urllib.request

    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(server + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request) as response:
        return json.load(response)


def show(driver, server: str, view: dict) -> None:
    """Open a game made through the API in the page, agents' moves without a pause."""
    driver.get(f"{server}/#/new")
    driver.execute_script("localStorage.setItem('agentDelay', '0')")
    driver.get(f"{server}/#/play/{view['id']}")
    wait(driver, "#table svg")
    until(lambda: driver.execute_script("return document.querySelector('#table svg').style.width !== ''"))


@pytest.mark.parametrize(("game", "players"), [("lost_cities", 2), ("five_towers", 2), ("five_towers", 5),
                                               ("palazzo", 2), ("palazzo", 4), ("torres", 2), ("torres", 4)])
def test_browser_tables_are_readable_and_use_the_window(server, browser, game, players):
    """At 1400 × 1000, mid-game: no text of the table under 11 px, the table drawn at its own proportions (no white
    bands in its box), beside the panel, and no empty margin wider than 200 px on either side."""
    options = {} if game == "lost_cities" else {"num_players": players}
    view = api(server, "POST", "/api/games", {"game": game, "options": options, "seed": 5,
                                              "seats": ["human"] + ["heuristic"] * (players - 1)})
    for _ in range(12):  # into the game: the person plays its last legal move, the agents theirs
        view = api(server, "POST", f"/api/games/{view['id']}/step") if view["waiting"] == "agent" else \
            api(server, "POST", f"/api/games/{view['id']}/move", {"action": view["legal"][-1]["action"]})
    while view["waiting"] == "agent":
        view = api(server, "POST", f"/api/games/{view['id']}/step")
    show(browser, server, view)
    browser.save_screenshot(str(ARTIFACTS / f"{game}-{players}p.png"))
    layout = table_layout(browser)
    assert layout["smallest"] >= 11 - 1e-6 and layout["stray"] < 0.01 and layout["beside"], layout
    assert layout["left"] <= 200 and layout["right"] <= 200, layout


def test_browser_plays_a_persons_only_move_unless_told_not_to(server, browser):
    """Five Towers, both seats people: at a decision with one legal move, the page (setting off) waits and offers it
    below, without speaking of highlighted spots when the table has none; turned on, it plays the move itself."""
    view = api(server, "POST", "/api/games", {"game": "five_towers", "options": {"num_players": 2}, "seed": 3,
                                              "seats": ["human", "human"]})
    while len(view["legal"]) > 1:  # the highest bid wins at once: then only "tear down nothing" is legal
        view = api(server, "POST", f"/api/games/{view['id']}/move", {"action": view["legal"][-1]["action"]})
    before, only = view["decisions"], view["legal"][0]["text"]
    browser.get(f"{server}/#/new")
    browser.execute_script("localStorage.setItem('autoplay', 'off')")
    show(browser, server, view)
    turn = browser.find_element("css selector", "#turn").text
    assert not browser.find_elements("css selector", "#table .legal") and "choose a move below" in turn
    assert not re.search(r"\bD\d", turn)
    time.sleep(1)
    assert api(server, "GET", f"/api/games/{view['id']}")["decisions"] == before
    browser.find_element("css selector", "#autoplay").click()
    until(lambda: api(server, "GET", f"/api/games/{view['id']}")["decisions"] > before)
    assert api(server, "GET", f"/api/games/{view['id']}")["log"][before]["text"] == only  # the person's, as theirs
    browser.execute_script("localStorage.removeItem('autoplay')")


@pytest.mark.parametrize("game", sorted(SMALL))
def test_browser_plays_replays_and_asks(server, records, browser, game):
    from selenium.common.exceptions import StaleElementReferenceException, WebDriverException
    from selenium.webdriver.support.ui import Select

    driver = browser
    driver.get(f"{server}/#/new")
    driver.execute_script("localStorage.setItem('agentDelay', '0')")  # agents' moves without the pause to watch them
    Select(wait(driver, "#game")).select_by_value(game)
    for name, value in SMALL[game].items():
        Select(driver.find_element("css selector", f"#option-{name}")).select_by_visible_text(str(value))
    for seat in range(1, len(driver.find_elements("css selector", "[id^=seat-]"))):
        Select(driver.find_element("css selector", f"#seat-{seat}")).select_by_value("random")
    driver.find_element("css selector", "#seed").send_keys("7")  # seeded: every game runs past 99 moves
    driver.find_element("css selector", "#start").click()
    wait(driver, "#table svg")
    clicks, shot = 0, False
    deadline = time.monotonic() + 90
    while not driver.find_elements("css selector", "#end"):
        assert time.monotonic() < deadline, "the game did not end in time"
        try:
            spots = driver.find_elements("css selector", "#table .legal")
            if spots and driver.find_elements("css selector", "#moves"):
                if not shot and clicks == 2:
                    driver.save_screenshot(str(ARTIFACTS / f"{game}-play.png"))
                    assert not re.search(r"\bD\d", driver.find_element("css selector", "#turn").text)
                    shot = True
                spots[0].click()
                chooser = driver.find_elements("css selector", ".chooser button")
                if chooser:
                    chooser[0].click()
                clicks += 1
            elif driver.find_elements("css selector", "#moves button"):  # a move with no spot on the table
                driver.find_element("css selector", "#moves button").click()
                clicks += 1
            else:
                time.sleep(0.05)
        except (StaleElementReferenceException, WebDriverException):  # the page was redrawn under the click
            pass
    assert clicks > 0
    assert any(word in wait(driver, "#result").text for word in ("win", "Shared", "cut off"))
    assert "Final scores: player 0 (human)" in driver.find_element("css selector", "#end").text
    assert not driver.find_element("css selector", "#message").is_displayed()  # no click was refused
    driver.save_screenshot(str(ARTIFACTS / f"{game}-end.png"))
    moves = len(load_record(records / driver.find_element("css selector", "#open-record").text).decisions)
    shown = move_list(driver)
    assert moves > 99 and shown
    for number, (text, whole) in enumerate(shown, moves - len(shown) + 1):
        assert text.split(maxsplit=1)[0] == f"{number}." and whole, f"move {number} is shown as {text!r}"
    driver.find_element("css selector", "#open-record").click()
    wait(driver, "#forward")
    for k in range(1, 4):
        driver.find_element("css selector", "#forward").click()
        until(lambda k=k: driver.find_element("css selector", "#jump").get_attribute("value") == str(k))
    Select(driver.find_element("css selector", "#ask-agent")).select_by_value("heuristic")
    driver.find_element("css selector", "#ask").click()
    until(lambda: "heuristic would play" in driver.find_element("css selector", "#ask-answer .choice").text)
    driver.save_screenshot(str(ARTIFACTS / f"{game}-replay.png"))
    print(f"screenshots in {ARTIFACTS}")


def test_browser_replay_notes_and_nothing_to_search(server, records, browser):
    """A replay of two policies' game: the notes name their seat, a seat's view calls nobody "you", and the search,
    asked where it has nothing to search, says why — one legal move, or one candidate left by its prior."""
    from selenium.webdriver.support.ui import Select

    from tabletop_rl import make
    from tabletop_rl.envs.core.match import play_game
    from tabletop_rl.training.runtime.agents import load_agent

    env = make("lost_cities", wrapped=False)
    decisions = []
    play_game(env, [load_agent("pretrained", env.game) for _ in range(2)], 5, decisions)
    Record.played(env, ["pretrained"] * 2, decisions).save(records / "policies.json")
    states = [state for state, _ in load_record(records / "policies.json").states()][:-1]
    search = load_agent("search", env.game)
    one_legal = next(k for k, s in enumerate(states) if len(s.legal_actions()) == 1)
    one_candidate = next(k for k, s in enumerate(states) if len(s.legal_actions()) > 1
                         and len(search.candidates(s.observation(s.current_player), s.legal_actions())[0]) == 1)
    returns = env.game_state.returns()
    winner = int(returns.argmax())
    assert returns[winner] > returns[1 - winner]

    driver = browser
    driver.get(f"{server}/#/records")
    wait(driver, "#records").find_element("link text", "policies.json").click()
    wait(driver, "#forward")
    replay = driver.current_url.split("#/replay/")[1].split("/")[0]
    seat1 = next(k for k, d in enumerate(decisions) if d.seat == 1)
    driver.get(f"{server}/#/replay/{replay}/{seat1}/1")
    until(lambda: f"Decision {seat1}: player 1" in driver.find_element("css selector", "#decision").text)
    assert "Policy value for player 1: " in driver.find_element("css selector", "#decision").text
    assert "estimate of this seat's reward at the end" in driver.find_element("css selector", "#decision").text
    driver.get(f"{server}/#/replay/{replay}/{len(decisions)}/{winner}")
    until(lambda: "The end" in driver.find_element("css selector", "#decision").text)
    assert driver.find_element("css selector", "#decision").text.endswith(f"player {winner} (pretrained) wins.")
    for step, reason in [(one_legal, "only one move is legal here"), (one_candidate, "the prior leaves one candidate")]:
        driver.get(f"{server}/#/replay/{replay}/{step}/all")
        until(lambda step=step: driver.find_element("css selector", "#jump").get_attribute("value") == str(step))
        Select(driver.find_element("css selector", "#ask-agent")).select_by_value("search")
        driver.find_element("css selector", "#ask").click()
        until(lambda: "search would play" in driver.find_element("css selector", "#ask-answer .choice").text)
        assert f"(nothing to search: {reason}" in driver.find_element("css selector", "#ask-answer").text
    driver.save_screenshot(str(ARTIFACTS / "replay-nothing-to-search.png"))
