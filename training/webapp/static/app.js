// tabletop-rl web app: new game, play, replay and "ask the agents". The server draws the table (SVG) and checks
// every move; this script only shows what it sends and sends back the player's clicks. Text from the server is
// always set as text (textContent), except the SVG the server's renderers draw.
"use strict";

const main = document.getElementById("main");
let setup = null;      // /api/setup: the games, their options and agents
let timer = null;

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else if (value !== undefined && value !== null && value !== false) node.setAttribute(key, value);
  }
  for (const child of children.flat()) {
    if (child !== null && child !== undefined) node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

function say(text) {
  const box = document.getElementById("message");
  box.textContent = text || "";
  box.hidden = !text;
}

async function api(method, url, body) {
  const options = { method, headers: {} };
  if (body instanceof File) options.body = body;
  else if (body !== undefined) {
    options.body = JSON.stringify(body);
    options.headers["Content-Type"] = "application/json";
  }
  const response = await fetch(url, options);
  const data = await response.json().catch(() => ({ error: `the server answered ${response.status}` }));
  if (!response.ok) throw new Error(data.error || `the server answered ${response.status}`);
  return data;
}

function seatName(view, seat) {
  return `player ${seat} (${view.agents[seat]})`;
}

// ------------------------------------------------------------------------------------------ routing
async function route() {
  clearTimeout(timer);
  closeChooser();
  say("");
  const parts = location.hash.replace(/^#\/?/, "").split("/");
  try {
    if (!setup) setup = await api("GET", "/api/setup");
    if (parts[0] === "play" && parts[1]) showPlay(await api("GET", `/api/games/${encodeURIComponent(parts[1])}`));
    else if (parts[0] === "replay" && parts[1]) await showReplay(parts[1], Number(parts[2] || 0), parts[3] || "all");
    else if (parts[0] === "records") await showRecords();
    else showNew();
  } catch (error) {
    say(error.message);
  }
}
window.addEventListener("hashchange", route);
window.addEventListener("DOMContentLoaded", route);

// ------------------------------------------------------------------------------------------ new game
function optionInput(option) {
  const id = `option-${option.name}`;
  let input;
  if (option.kind === "boolean") {
    input = el("input", { type: "checkbox", id, "data-option": option.name, "data-kind": "boolean" });
    input.checked = option.default;
  } else if (option.kind === "choice") {
    input = el("select", { id, "data-option": option.name, "data-kind": "choice" },
      option.values.map((v, i) => el("option", { value: i, selected: v === option.default }, v === null ? "none" : String(v))));
  } else {  // an integer, maybe with extra values ("auto", none) offered in a select beside it
    const number = el("input", { type: "number", min: option.min, max: option.max, step: 1, id,
      value: typeof option.default === "number" ? option.default : option.min });
    if (!option.values.length) {
      number.dataset.option = option.name;
      number.dataset.kind = "integer";
      return el("label", {}, `${option.name} `, number, " ", el("span", { class: "doc" }, option.doc));
    }
    const extra = el("select", { "data-option": option.name, "data-kind": "extra" },
      option.values.map((v, i) => el("option", { value: i, selected: v === option.default }, v === null ? "none" : String(v))),
      el("option", { value: "number", selected: typeof option.default === "number" }, "a number:"));
    input = el("span", {}, extra, " ", number);
  }
  return el("label", {}, `${option.name} `, input, " ", el("span", { class: "doc" }, option.doc));
}

function readOptions(form, game) {
  const options = {};
  for (const node of form.querySelectorAll("[data-option]")) {
    const option = game.options.find((o) => o.name === node.dataset.option);
    const kind = node.dataset.kind;
    if (kind === "boolean") options[option.name] = node.checked;
    else if (kind === "choice") options[option.name] = option.values[Number(node.value)];
    else if (kind === "integer") options[option.name] = Number(node.value);
    else options[option.name] = node.value === "number" ? Number(node.nextElementSibling.value) : option.values[Number(node.value)];
  }
  return options;
}

function showNew() {
  const gameSelect = el("select", { id: "game" }, setup.games.map((g) => el("option", { value: g.name }, g.title)));
  const optionsBox = el("fieldset", {}, el("legend", {}, "Options"));
  const seatsBox = el("fieldset", {}, el("legend", {}, "Seats"));
  const seed = el("input", { type: "number", id: "seed", min: 0, placeholder: "random" });
  const form = el("form", { class: "new" },
    el("h2", {}, "New game"), el("label", {}, "Game ", gameSelect), optionsBox, seatsBox,
    el("label", {}, "Seed (optional) ", seed), el("button", { type: "submit", id: "start" }, "Start"));
  const game = () => setup.games.find((g) => g.name === gameSelect.value);
  function seats() {
    const g = game();
    const count = "num_players" in readOptions(form, g) ? readOptions(form, g).num_players : g.players;
    const before = [...seatsBox.querySelectorAll("select")].map((s) => s.value);
    seatsBox.replaceChildren(el("legend", {}, "Seats"));
    for (let s = 0; s < count; s++) {
      const wanted = before[s] || (s === 0 ? setup.human : "heuristic");
      seatsBox.append(el("label", {}, `player ${s} `, el("select", { id: `seat-${s}` },
        [setup.human, ...g.agents].map((a) => el("option", { value: a, selected: a === wanted }, a)))));
    }
  }
  function options() {
    optionsBox.replaceChildren(el("legend", {}, "Options"), ...game().options.map(optionInput));
    seats();
  }
  gameSelect.addEventListener("change", options);
  optionsBox.addEventListener("change", seats);
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const body = { game: game().name, options: readOptions(form, game()),
      seats: [...seatsBox.querySelectorAll("select")].map((s) => s.value) };
    if (seed.value !== "") body.seed = Number(seed.value);
    try {
      const view = await api("POST", "/api/games", body);
      location.hash = `#/play/${view.id}`;
    } catch (error) {
      say(error.message);
    }
  });
  main.replaceChildren(form);
  options();
}

// ------------------------------------------------------------------------------------------ the table's size
const READABLE = 11;    // px: the smallest text of a table is drawn at least this large
const PANEL_MIN = 270;  // px: the panel's least width (app.css), beside which the table gets the rest

// The table as large as the window allows, and never so small that its smallest text is under READABLE px: a tall
// table then scrolls with the page, a wide one takes the width beside the panel (and scrolls sideways past it).
function fit() {
  const svg = document.querySelector("#table svg");
  if (!svg) return;
  const box = svg.viewBox.baseVal;
  const sizes = [...svg.querySelectorAll("text")].map((t) => Number(t.getAttribute("font-size"))).filter((x) => x > 0);
  const least = READABLE / Math.min(13, ...sizes);
  const layout = svg.closest(".layout");
  const wide = (layout.clientWidth - PANEL_MIN - 12) / box.width;  // 12: the layout's gap
  const high = (window.innerHeight - layout.getBoundingClientRect().top - window.scrollY - 8) / box.height;
  const scale = Math.max(least, Math.min(wide, high));
  svg.style.width = `${Math.ceil(box.width * scale)}px`;
  svg.style.height = `${Math.ceil(box.height * scale)}px`;
}
window.addEventListener("resize", fit);

// ------------------------------------------------------------------------------------------ play
function closeChooser() {
  document.querySelectorAll(".chooser").forEach((c) => c.remove());
}

// Clicks on the table: a legal element plays its action, or offers a chooser when it holds several.
function clickable(table, words, play) {
  table.addEventListener("click", (event) => {
    const spot = event.target.closest(".legal");
    if (!spot) return;
    closeChooser();
    const actions = spot.dataset.actions.split(" ").map(Number);
    if (actions.length === 1) return play(actions[0]);
    const chooser = el("div", { class: "chooser", role: "menu" }, el("strong", {}, "Choose:"),
      actions.map((a) => el("button", { type: "button", onclick: () => { closeChooser(); play(a); } }, words[a])),
      el("button", { type: "button", onclick: closeChooser }, "cancel"));
    chooser.style.left = `${Math.min(event.clientX, window.innerWidth - 330)}px`;
    chooser.style.top = `${Math.min(event.clientY, window.innerHeight - 40 * (actions.length + 2))}px`;
    document.body.append(chooser);
  });
}

// The scores as the game counts them (Lost Cities: the match totals); during a game the table shows each seat's.
function scoresText(view) {
  return view.scores.map((s, seat) => `${seatName(view, seat)}: ${s}`).join("; ");
}

// Who won; ``you``: the person's seat in play (a replay has none: whoever's view it shows, nobody is "you").
function resultText(view, you = null) {
  const result = view.result;
  if (result.truncated) return "The game was cut off by its turn cap: no winner.";
  const best = Math.max(...result.returns);
  const winners = result.returns.map((r, s) => (r === best ? s : -1)).filter((s) => s >= 0);
  if (winners.length > 1) return `Shared first place: ${winners.map((s) => seatName(view, s)).join(", ")}.`;
  if (you !== null) return winners[0] === you ? "You win!" : `${seatName(view, winners[0])} wins.`;
  return `${seatName(view, winners[0])} wins.`;
}

// An agent's notes (a replayed decision's, or an answer to "ask") on a decision of ``seat``.
function notesBox(notes, words, seat) {
  const parts = [];
  if (notes.choice) parts.push(el("p", { class: "choice" }, `${notes.agent} would play: `, el("strong", {}, notes.choice.text)));
  if (notes.policy) {
    const value = notes.policy.value;
    parts.push(el("p", {}, `Policy value for player ${seat}: ${value >= 0 ? "+" : ""}${value.toFixed(2)}`,
      el("br"), el("span", { class: "doc" }, "the policy's estimate of this seat's reward at the end: +1 for a win, " +
        "−1 for a loss, plus (for a policy trained with a margin bonus) a small share of the score margin, so it " +
        "may pass ±1")));
    parts.push(el("table", { class: "notes" }, el("tr", {}, el("th", {}, "move"), el("th", {}, "probability")),
      notes.policy.top.map((m) => el("tr", {}, el("td", {}, m.text ?? words[m.action]), el("td", {}, `${(100 * m.probability).toFixed(1)} %`)))));
  }
  if (notes.search) {
    parts.push(el("p", {}, `Search candidates (mean ${notes.search.measure} over sampled worlds):`));
    parts.push(el("table", { class: "notes" },
      el("tr", {}, el("th", {}, "move"), el("th", {}, "prior"), el("th", {}, "mean"), el("th", {}, "worlds")),
      notes.search.candidates.map((c) => el("tr", {}, el("td", {}, c.text ?? words[c.action]),
        el("td", {}, c.prior.toFixed(2)), el("td", {}, c.mean.toFixed(2)), el("td", {}, c.worlds)))));
  }
  if (notes.unsearched) parts.push(el("p", { class: "doc" }, `(nothing to search: ${notes.unsearched})`));
  else if (!notes.policy && !notes.search && notes.choice) parts.push(el("p", { class: "doc" }, "(this agent gives no more than its choice)"));
  return el("div", { class: "answer" }, parts);
}

// The "ask an agent" box: which agent, a button, the answer.
function askBox(agents, ask) {
  const choice = el("select", { id: "ask-agent" }, agents.map((a) => el("option", { value: a }, a)));
  const answer = el("div", { id: "ask-answer" });
  const button = el("button", { type: "button", id: "ask", onclick: async () => {
    answer.replaceChildren(el("p", { class: "thinking" }, `${choice.value} is thinking…`));
    try {
      const said = await ask(choice.value);
      answer.replaceChildren(notesBox(said, {}, said.seat));
    } catch (error) {
      answer.replaceChildren(el("p", {}, error.message));
    }
  } }, "Ask");
  return el("section", {}, el("h3", {}, "Ask the agents"), el("p", {}, "What would ", choice, " play here? ", button), answer);
}

function showPlay(view) {
  const route = `#/play/${view.id}`;
  if (location.hash !== route) return;  // the page went elsewhere while this view was on its way
  const game = setup.games.find((g) => g.name === view.game);
  const table = el("div", { class: "table", id: "table" });
  table.innerHTML = view.svg;  // drawn by the server's renderer from the engine state
  const words = Object.fromEntries(view.legal.map((m) => [m.action, m.text]));
  let sent = false;  // one move per position: a double click must not play the same move again in the next one
  const play = async (action) => {
    if (sent) return;
    sent = true;
    try {
      const next = await api("POST", `/api/games/${view.id}/move`, { action });
      say("");
      showPlay(next);
    } catch (error) {
      sent = false;
      say(error.message);
    }
  };
  clickable(table, words, play);
  const you = view.viewer === null ? "You are watching." : `You are player ${view.viewer}.`;
  const status = el("section", { id: "status" }, el("h3", {}, `${view.title}`), el("p", {}, you));
  const panel = el("div", { class: "panel" }, status);
  if (view.waiting === "human") {
    const only = view.legal.length === 1 && autoplay();
    const spots = table.querySelector(".legal") !== null;
    const how = only ? `your only move, ${view.legal[0].text}, is played for you…`
      : spots ? "click a highlighted spot on the table or a move below." : "choose a move below.";
    status.append(el("p", { id: "turn" }, el("strong", {}, `Your move, player ${view.to_move}`), ` (${view.phase}): ${how}`));
    panel.append(el("section", { class: "moves", id: "moves" }, el("h3", {}, "Legal moves"),
      view.legal.map((m) => el("button", { type: "button", "data-action": m.action, onclick: () => play(m.action) }, m.text))));
    panel.append(askBox(game.agents, (agent) => api("POST", `/api/games/${view.id}/ask`, { agent })));
    if (only) timer = setTimeout(() => location.hash === route && play(view.legal[0].action), delay());
  } else if (view.waiting === "agent") {
    status.append(el("p", { class: "thinking", id: "turn" }, `${seatName(view, view.to_move)} is thinking…`));
    timer = setTimeout(async () => {
      try {
        if (location.hash === route) showPlay(await api("POST", `/api/games/${view.id}/step`));
      } catch (error) {
        say(error.message);
      }
    }, delay());
  } else {
    const end = el("section", { id: "end" }, el("h3", {}, "Game over"), el("p", { id: "result" }, resultText(view, view.viewer)),
      el("p", {}, `Final scores: ${scoresText(view)}`));
    if (view.record) {
      end.append(el("p", {}, "Record: ", el("a", { href: "#", id: "open-record", onclick: (e) => { e.preventDefault(); openRecord(view.record); } }, view.record),
        " (", el("a", { href: `/api/records/${encodeURIComponent(view.record)}`, download: view.record }, "download"), ")"));
    }
    if (view.record_error) end.append(el("p", {}, view.record_error));
    end.append(el("p", {}, el("a", { href: "#/new" }, "New game")));
    panel.append(end);
  }
  if (view.waiting !== null) status.append(autoplaySetting(() => showPlay(view)));
  const first = view.decisions - view.log.length + 1;  // the log holds the last moves only
  panel.append(el("section", {}, el("h3", {}, "Moves"), el("ol", { class: "log", id: "log" },
    view.log.map((entry, i) => el("li", {}, el("span", { class: "number" }, `${first + i}.`),
      el("span", {}, `${seatName(view, entry.seat)}: ${entry.text}`))))));
  main.replaceChildren(el("div", { class: "layout" }, table, panel));
  fit();
  const log = document.getElementById("log");
  log.scrollTop = log.scrollHeight;
}

function delay() {
  return Number(localStorage.getItem("agentDelay") ?? 300);  // ms before a move made for someone, to follow it
}

// Whether a person's only legal move is played for them (on unless turned off; kept in this browser).
function autoplay() {
  return localStorage.getItem("autoplay") !== "off";
}

function autoplaySetting(redraw) {
  const box = el("input", { type: "checkbox", id: "autoplay" });
  box.checked = autoplay();
  box.addEventListener("change", () => {
    localStorage.setItem("autoplay", box.checked ? "on" : "off");
    clearTimeout(timer);
    redraw();
  });
  return el("p", {}, el("label", {}, box, " play my move for me when it is the only one"));
}

// ------------------------------------------------------------------------------------------ records, replay
async function openRecord(name) {
  try {
    const view = await api("POST", "/api/replays", { name });
    location.hash = `#/replay/${view.id}/0/all`;
  } catch (error) {
    say(error.message);
  }
}

async function showRecords() {
  const { records } = await api("GET", "/api/records");
  const upload = el("input", { type: "file", id: "upload", accept: ".json,application/json" });
  upload.addEventListener("change", async () => {
    const file = upload.files[0];
    if (!file) return;
    try {
      const view = await api("POST", `/api/replays/upload?name=${encodeURIComponent(file.name)}`, file);
      location.hash = `#/replay/${view.id}/0/all`;
    } catch (error) {
      say(error.message);
    }
  });
  main.replaceChildren(el("h2", {}, "Replays"), el("p", {}, "Open a record file from your computer (at most 5 MB): ", upload),
    el("h3", {}, "The records folder"),
    records.length ? el("ul", { class: "records", id: "records" }, records.map((r) => el("li", {},
      el("a", { href: "#", onclick: (e) => { e.preventDefault(); openRecord(r.name); } }, r.name),
      ` — ${new Date(r.time * 1000).toLocaleString()}, ${Math.ceil(r.bytes / 1024)} KB`)))
      : el("p", {}, "No records yet: play a game."));
}

async function showReplay(id, step, viewer) {
  const route = location.hash;
  const view = await api("GET", `/api/replays/${encodeURIComponent(id)}?step=${step}&viewer=${viewer}`);
  if (location.hash !== route) return;
  const go = (k, v = viewer) => { location.hash = `#/replay/${id}/${Math.max(0, Math.min(view.steps, k))}/${v}`; };
  const table = el("div", { class: "table", id: "table" });
  table.innerHTML = view.svg;
  const viewers = el("select", { id: "viewer", onchange: () => go(step, viewers.value) },
    el("option", { value: "all" }, "the whole table"),
    view.agents.map((a, s) => el("option", { value: s, selected: String(s) === viewer }, `${seatName(view, s)}'s view`)));
  const jump = el("input", { type: "number", id: "jump", min: 0, max: view.steps, value: step });
  jump.addEventListener("change", () => go(Number(jump.value)));
  const playing = sessionStorage.getItem("playing") === id;
  const controls = el("section", { class: "controls" }, el("h3", {}, `${view.title}: replay of ${view.name}`),
    el("button", { type: "button", id: "first", title: "first position", onclick: () => go(0) }, "first"),
    el("button", { type: "button", id: "back", title: "one decision back", onclick: () => go(step - 1) }, "◀"),
    el("button", { type: "button", id: "playpause", title: playing ? "pause" : "play",
      onclick: () => { sessionStorage.setItem("playing", playing ? "" : id); route === location.hash && showReplay(id, step, viewer); } }, playing ? "pause" : "play"),
    el("button", { type: "button", id: "forward", title: "one decision forward", onclick: () => go(step + 1) }, "▶"),
    el("button", { type: "button", id: "last", title: "the end", onclick: () => go(view.steps) }, "end"),
    el("p", {}, "Decision ", jump, ` of ${view.steps} · seen as `, viewers));
  const panel = el("div", { class: "panel" }, controls);
  const next = el("section", { id: "decision" });
  if (view.decision) {
    next.append(el("h3", {}, `Decision ${step}: ${seatName(view, view.decision.seat)} (${view.phase})`),
      el("p", {}, "played: ", el("strong", {}, view.decision.text)));
    if (view.decision.notes) next.append(el("p", {}, "It noted:"), notesBox(view.decision.notes, view.decision.words, view.decision.seat));
  } else {
    next.append(el("h3", {}, "The end"), el("p", {}, view.result ? resultText(view) : "The game was left unfinished."));
  }
  panel.append(next);
  if (view.to_move !== null) {
    panel.append(askBox(setup.games.find((g) => g.name === view.game).agents,
      (agent) => api("POST", `/api/replays/${id}/ask`, { agent, step })));
  }
  main.replaceChildren(el("div", { class: "layout" }, table, panel));
  fit();
  if (playing && step < view.steps) timer = setTimeout(() => go(step + 1), 700);
}
