// The audit page: the acknowledgements of a shift (local time; shifts of 8 h starting at
// 06:00, 14:00 and 22:00), and the same as CSV from /api/acks.csv.
"use strict";

const $ = (id) => document.getElementById(id);
const SHIFT_STARTS_H = [6, 14, 22];
const SHIFT_H = 8;

function shiftStart(moment) {
  const start = new Date(moment);
  start.setMinutes(0, 0, 0);
  const hour = moment.getHours();
  const begun = SHIFT_STARTS_H.filter((h) => h <= hour);
  if (begun.length) {
    start.setHours(begun[begun.length - 1]);
  } else {  // before the day's first shift: the night shift that began yesterday
    start.setDate(start.getDate() - 1);
    start.setHours(SHIFT_STARTS_H[SHIFT_STARTS_H.length - 1]);
  }
  return start;
}

function localInput(moment) {
  const shifted = new Date(moment.getTime() - moment.getTimezoneOffset() * 60000);
  return shifted.toISOString().slice(0, 16);
}

function applyPreset() {
  const now = new Date();
  let from;
  let to;
  const preset = $("preset").value;
  if (preset === "custom") return;
  if (preset === "today") {
    from = new Date(now); from.setHours(0, 0, 0, 0);
    to = new Date(from); to.setDate(to.getDate() + 1);
  } else {
    from = shiftStart(now);
    if (preset === "previous") from = new Date(from.getTime() - SHIFT_H * 3600000);
    to = new Date(from.getTime() + SHIFT_H * 3600000);
  }
  $("from").value = localInput(from);
  $("to").value = localInput(to);
}

function cell(text) {
  const td = document.createElement("td");
  td.textContent = text;
  return td;
}

async function show(event) {
  if (event) event.preventDefault();
  const query = new URLSearchParams({
    from: new Date($("from").value).toISOString(),
    to: new Date($("to").value).toISOString(),
  });
  $("csv").href = "/api/acks.csv?" + query;
  const response = await fetch("/api/acks?" + query, { credentials: "same-origin" });
  if (response.status === 401) { location.href = "/login?next=/audit"; return; }
  const rows = await response.json();
  const body = $("acks").tBodies[0];
  body.replaceChildren(...rows.map((ack) => {
    const i = ack.irregularity;
    const tr = document.createElement("tr");
    tr.append(cell(new Date(ack.at).toLocaleString()), cell(ack.operator), cell(i.table),
      cell(i.kind.replaceAll("_", " ")), cell(`${i.round} · ${i.box ?? "none"}`), cell(i.state),
      cell(ack.note));
    return tr;
  }));
  $("total").textContent = `${rows.length} acknowledgement(s)`;
}

$("preset").addEventListener("change", () => { applyPreset(); show(); });
for (const id of ["from", "to"]) $(id).addEventListener("change", () => { $("preset").value = "custom"; });
$("shift").addEventListener("submit", show);
applyPreset();
show();
