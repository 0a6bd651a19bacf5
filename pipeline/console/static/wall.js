// The alert wall: irregularities newest first, grouped by table, live through server-sent
// events; the detail of one (/alert/ID) with its acknowledgements; the tables' health strip.
// Everything comes from this console's own /api; text is set with textContent, never HTML.
"use strict";

const $ = (id) => document.getElementById(id);
const state = {
  items: [],        // the wall's irregularities, newest first (the pages loaded so far)
  firstPage: 0,     // how many of them the first page holds
  next: null,       // the 'before' of the next page, or null
  selected: null,   // the id of the irregularity in the detail panel
  me: null,
  refreshing: false,
  refreshAgain: false,
};

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

async function api(path, options) {
  const response = await fetch(path, { credentials: "same-origin", ...options });
  if (response.status === 401) {
    location.href = "/login?next=" + encodeURIComponent(location.pathname);
    throw new Error("logged out");
  }
  if (!response.ok) throw new Error((await response.json()).error || response.statusText);
  return response.json();
}

function filterQuery() {
  const form = new FormData($("filters"));
  const query = new URLSearchParams();
  for (const [name, value] of form.entries()) if (value) query.set(name, value);
  return query;
}

function clockTime(iso) {
  const moment = new Date(iso);
  return isNaN(moment) ? iso : moment.toLocaleTimeString([], { hour12: false });
}

function title(kind) {
  return kind.replaceAll("_", " ");
}

// --- the wall ---------------------------------------------------------------------------

async function refreshWall() {
  if (state.refreshing) { state.refreshAgain = true; return; }
  state.refreshing = true;
  try {
    const page = await api("/api/wall?" + filterQuery());
    const fresh = new Set(page.items.map((i) => i.id));
    const lowest = page.items.length ? page.items[page.items.length - 1].last_id : Infinity;
    const older = state.items.slice(state.firstPage)
      .filter((i) => !fresh.has(i.id) && i.last_id < lowest);
    state.items = page.items.concat(older);
    state.firstPage = page.items.length;
    if (!older.length) state.next = page.next;
    renderWall();
  } finally {
    state.refreshing = false;
    if (state.refreshAgain) { state.refreshAgain = false; refreshWall(); }
  }
}

async function loadOlder() {
  if (state.next === null) return;
  const query = filterQuery();
  query.set("before", state.next);
  const page = await api("/api/wall?" + query);
  const known = new Set(state.items.map((i) => i.id));
  state.items = state.items.concat(page.items.filter((i) => !known.has(i.id)));
  state.next = page.next;
  renderWall();
}

function renderWall() {
  const groups = new Map();  // table -> its items, tables in the order of their newest item
  for (const item of state.items) {
    if (!groups.has(item.table)) groups.set(item.table, []);
    groups.get(item.table).push(item);
  }
  const holder = $("groups");
  holder.replaceChildren();
  for (const [table, items] of groups) {
    const group = el("div", "group");
    group.dataset.table = table;
    group.append(el("h2", null, `Table ${table} · ${items.length}`));
    for (const item of items) group.append(row(item));
    holder.append(group);
  }
  $("empty").hidden = state.items.length > 0;
  $("more").hidden = state.next === null;
  $("count").textContent = `${state.items.length} shown` + (state.next === null ? "" : " (more older)");
}

function row(item) {
  const node = el("div", "row" + (item.state === "close" ? " closed" : ""));
  if (item.id === state.selected) node.classList.add("selected");
  Object.assign(node.dataset, { id: item.id, kind: item.kind, state: item.state, acks: item.acks });
  node.append(el("span", "sev sev-" + item.severity));
  node.append(el("span", "kind", title(item.kind)));
  node.append(el("span", "msg", item.message));
  const where = `round ${item.round}` + (item.box === null ? "" : ` · box ${item.box}`);
  node.append(el("span", "where", where));
  const badges = el("span", "badges");
  badges.append(el("span", "badge " + item.state, item.state));
  if (item.acks) badges.append(el("span", "badge acked", "ack"));
  if (item.low_confidence) badges.append(el("span", "badge lowc", "low"));
  node.append(badges);
  node.append(el("span", "time", `${clockTime(item.updated_at)} · ${item.severity}`));
  node.title = `${item.severity}: ${item.message}`;
  node.addEventListener("click", () => openDetail(item.id, true));
  return node;
}

// --- the detail -------------------------------------------------------------------------

async function openDetail(id, push) {
  state.selected = id;
  if (push) history.pushState({ id }, "", "/alert/" + id);
  let detail;
  try {
    detail = await api("/api/irregularities/" + id);
  } catch (error) {
    $("d-title").textContent = `Irregularity ${id}: ${error.message}`;
    $("detail").hidden = false;
    return;
  }
  if (state.selected !== id) return;
  renderDetail(detail);
  for (const node of document.querySelectorAll(".row")) {
    node.classList.toggle("selected", Number(node.dataset.id) === id);
  }
}

function closeDetail() {
  state.selected = null;
  $("detail").hidden = true;
  history.pushState({}, "", "/");
  for (const node of document.querySelectorAll(".row.selected")) node.classList.remove("selected");
}

function renderDetail(detail) {
  const irregularity = detail.irregularity;
  const last = detail.messages[detail.messages.length - 1] || {};
  $("detail").hidden = false;
  $("detail").dataset.id = irregularity.id;
  $("d-title").textContent = `${title(irregularity.kind)} · table ${irregularity.table}`;
  $("d-message").textContent = last.message || irregularity.message;
  $("d-low").hidden = !irregularity.low_confidence;
  const facts = [
    ["severity", irregularity.severity],
    ["rule (1996)", last.rule],
    ["rule (1998)", last.rule_1998 || "none"],
    ["action", last.action],
    ["state", `${irregularity.state} (${irregularity.messages} message(s))`],
    ["round · box", `${irregularity.round} · ${irregularity.box === null ? "none" : irregularity.box}`],
    ["opened", `${irregularity.opened_at} (video ${detail.messages[0]?.video_time_s ?? "?"} s)`],
    ["journal", `${irregularity.journal || "none"} #${last.seq ?? "?"}`],
  ];
  $("d-facts").replaceChildren(...facts.flatMap(([name, value]) => [el("dt", null, name), el("dd", null, value)]));
  renderSnapshot(detail.snapshot);
  const evidence = $("d-evidence").tBodies[0];
  evidence.replaceChildren();
  for (const [key, value] of Object.entries(last.evidence || {})) {
    const tr = el("tr");
    tr.append(el("td", null, key), el("td", null, typeof value === "string" ? value : JSON.stringify(value)));
    evidence.append(tr);
  }
  if (!evidence.rows.length) evidence.append(el("tr")).append(el("td", null, "none"));
  $("d-timeline").replaceChildren(...detail.timeline.map((a) => {
    const item = el("li", a.irregularity === irregularity.id ? "this" : null,
      `${a.video_time_s.toFixed(1)} s  ${title(a.kind)} (${a.state})` + (a.box === null ? "" : ` box ${a.box}`));
    return item;
  }));
  $("d-acks").replaceChildren(...detail.acks.map((ack) => {
    const item = el("li");
    item.append(el("div", null, ack.note || "(no note)"), el("div", "who", `${ack.operator} · ${ack.at}`));
    return item;
  }));
  if (!detail.acks.length) $("d-acks").append(el("li", "who", "not acknowledged yet"));
}

function renderSnapshot(snapshot) {
  const holder = $("d-snapshot");
  holder.replaceChildren();
  if (!snapshot) {
    holder.append(el("p", "none", "no snapshot for this alert"));
  } else if (snapshot.url) {
    const image = el("img");
    image.src = snapshot.url;
    image.alt = `frame ${snapshot.frame}`;
    holder.append(image);
  } else {
    holder.append(el("p", "none", `${snapshot.path}: not on this machine`));
  }
}

async function acknowledge(event) {
  event.preventDefault();
  if (state.selected === null) return;
  const note = $("ack-note").value;
  $("ack-button").disabled = true;
  try {
    await api(`/api/irregularities/${state.selected}/ack`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ note }),
    });
    $("ack-note").value = "";
    await openDetail(state.selected, false);
  } finally {
    $("ack-button").disabled = false;
  }
}

// --- health and live updates --------------------------------------------------------------

function renderHealth(health) {
  $("bus-silent").hidden = !health.bus_silent;
  $("health").replaceChildren(...health.tables.map((table) => {
    const chip = el("span", "chip level-" + table.level);
    chip.dataset.table = table.table;
    chip.append(el("b", null, table.table));
    const parts = [`${table.heard_age_s.toFixed(0)} s ago`];
    if (table.fps !== null) parts.push(`${table.fps.toFixed(1)} fps`);
    if (table.phase && table.phase !== "-") parts.push(table.phase.replaceAll("_", " "));
    chip.append(document.createTextNode(parts.join(" · ")));
    if (table.reasons.length) chip.append(el("span", "why", " · " + table.reasons.join(", ")));
    chip.title = (table.notes || []).join("\n") || "no notice";
    return chip;
  }));
}

function connect() {
  const events = new EventSource("/api/events");
  events.onopen = () => { $("live").className = "live"; $("live").textContent = "live"; };
  events.onerror = () => { $("live").className = "live off"; $("live").textContent = "reconnecting"; };
  events.onmessage = (message) => {
    const event = JSON.parse(message.data);
    if (event.type === "health") {
      renderHealth(event);
    } else if (event.type === "wall" || event.type === "reload" || event.type === "hello") {
      refreshWall();
      refreshChoicesSoon();
      const touched = event.type !== "wall" || !event.ids.length || event.ids.includes(state.selected);
      if (state.selected !== null && touched) openDetail(state.selected, false);
    }
  };
}

// --- filters and start ------------------------------------------------------------------

function fillSelect(name, values) {
  const select = $("filters").elements[name];
  const chosen = select.value;
  const first = select.options[0];
  select.replaceChildren(first, ...values.map((v) => { const o = el("option", null, v); o.value = v; return o; }));
  select.value = values.includes(chosen) ? chosen : "";
}

const CHOICES_EVERY_MS = 5000;  // the filters' lists are read again at most this often
let choicesTimer = null;

function refreshChoicesSoon() {
  if (choicesTimer === null) {
    choicesTimer = setTimeout(() => { choicesTimer = null; refreshChoices(); }, CHOICES_EVERY_MS);
  }
}

async function refreshChoices() {
  state.me = await api("/api/me");
  const choices = state.me.choices;
  fillSelect("table", choices.tables);
  fillSelect("kind", choices.kinds);
  fillSelect("severity", choices.severities);
  fillSelect("state", choices.states);
}

async function start() {
  await refreshChoices();
  const me = state.me;
  $("operator").textContent = me.operator;
  $("logout").hidden = !me.login;
  for (const [severity, colour] of Object.entries(me.palette || {})) {
    document.documentElement.style.setProperty("--sev-" + severity, colour);
  }
  $("filters").addEventListener("change", () => {
    Object.assign(state, { items: [], firstPage: 0, next: null });
    refreshWall();
  });
  $("more").addEventListener("click", loadOlder);
  $("close-detail").addEventListener("click", closeDetail);
  $("ack-form").addEventListener("submit", acknowledge);
  window.addEventListener("popstate", () => route());
  renderHealth(await api("/api/health"));
  await refreshWall();
  route();
  connect();
}

function route() {
  const match = location.pathname.match(/^\/alert\/(\d+)$/);
  if (match) openDetail(Number(match[1]), false);
  else if (state.selected !== null) { state.selected = null; $("detail").hidden = true; }
}

start();
