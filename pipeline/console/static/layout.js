// The layout editor's page (pipeline/console/layout_editor.py serves it and its API).
// One SVG in image pixels holds the picture, the zones and their handles; the server decodes
// frames, fits the template to the four clicked corners and validates what is saved.
"use strict";

(() => {
  const SVG_NS = "http://www.w3.org/2000/svg";
  const DEFAULT_WH = [1920, 1080]; // the canvas before any frame or layout gives a size
  const MARGIN = 0.1; // share of the picture shown around it: a corner may lie out of view
  const HANDLE_CSS_PX = 6;
  const LABEL_CSS_PX = 18;
  const CORNERS = 4;
  const COLOURS = {
    box: "#38bdf8",
    chung: "#f59e0b",
    woodpile: "#b45309",
    dice_area: "#ef4444",
    float_tray: "#22c55e",
    banker_wager: "#a855f7",
    losing_wager: "#ec4899",
    drop_box: "#06b6d4",
    work_area: "#84cc16",
    table: "#94a3b8",
  };

  const $ = (id) => document.getElementById(id);
  const stage = $("stage");
  const state = {
    template: null, // {corners_mm, zones_mm, chung_box, zone_names}
    frame: null, // {url, w, h}
    corners: [], // clicked image points, in the template's corner order
    collecting: true, // clicks on the picture place corners
    draft: null, // {camera, image_size_wh, chung_box, zones, reference_points}
    selected: null, // zone whose points are shown for dragging
    drag: null, // {kind: "corner" | "vertex", index}
    overwrite: null, // name the next save may replace (after the server said it exists)
  };

  function say(text, kind = "") {
    $("message").textContent = text;
    $("message").title = text; // the header cuts a long line; the whole of it on hover
    $("message").className = `message ${kind}`;
  }

  function svg(tag, attributes = {}, parent = null) {
    const node = document.createElementNS(SVG_NS, tag);
    for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, value);
    if (parent) parent.appendChild(node);
    return node;
  }

  async function api(method, url, body) {
    const init = { method, headers: {} };
    if (body !== undefined) {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    return answer(await fetch(url, init), (response) => response.json());
  }

  async function answer(response, read) {
    if (response.redirected) {
      // the console's login sends a signed-out page elsewhere: go there rather than misread it
      window.location.assign(response.url);
      throw new Error("signed out: log in again");
    }
    if (response.ok) return read(response);
    const data = await response.json().catch(() => ({}));
    const err = new Error(data.error || `${response.status} ${response.statusText}`);
    err.status = response.status;
    throw err;
  }

  // ---- sizes and coordinates -------------------------------------------------------------

  function knownWh() {
    if (state.frame) return [state.frame.w, state.frame.h];
    return state.draft && state.draft.image_size_wh ? state.draft.image_size_wh : null;
  }

  function toImage(event) {
    const point = new DOMPoint(event.clientX, event.clientY);
    const p = point.matrixTransform(stage.getScreenCTM().inverse());
    return [Math.round(p.x * 100) / 100, Math.round(p.y * 100) / 100];
  }

  function pxPerCss(w, h) {
    // the viewBox is fitted whole into the element ("meet"): the larger ratio is the scale
    const box = stage.getBoundingClientRect();
    return Math.max(w / Math.max(box.width, 1), h / Math.max(box.height, 1));
  }

  function centroid(points) {
    const sum = points.reduce((a, p) => [a[0] + p[0], a[1] + p[1]], [0, 0]);
    return [sum[0] / points.length, sum[1] / points.length];
  }

  function colour(zone) {
    if (!zone.startsWith("box_")) return COLOURS[zone] || COLOURS.table;
    return state.draft && zone === `box_${state.draft.chung_box}` ? COLOURS.chung : COLOURS.box;
  }

  // ---- drawing ---------------------------------------------------------------------------

  function render() {
    const [w, h] = knownWh() || DEFAULT_WH;
    const [mx, my] = [w * MARGIN, h * MARGIN];
    const view = [-mx, -my, w + 2 * mx, h + 2 * my];
    stage.setAttribute("viewBox", view.join(" "));
    stage.replaceChildren();
    const unit = pxPerCss(view[2], view[3]);
    svg("rect", { class: "outside", x: view[0], y: view[1], width: view[2], height: view[3] }, stage);
    if (state.frame) {
      svg("image", { href: state.frame.url, x: 0, y: 0, width: w, height: h }, stage);
    } else {
      svg("rect", { class: "blank", x: 0, y: 0, width: w, height: h }, stage);
    }
    svg("rect", { class: "frame-edge", x: 0, y: 0, width: w, height: h }, stage);
    if (state.draft) drawZones(unit);
    drawCorners(unit);
    renderPanel();
  }

  function drawZones(unit) {
    const zones = state.draft.zones;
    const names = Object.keys(zones).reverse(); // lookup order reversed: boxes on top
    for (const name of names) {
      const classes = ["zone"];
      if (name === state.selected) classes.push("selected");
      if (name === `box_${state.draft.chung_box}`) classes.push("chung");
      svg("polygon", {
        class: classes.join(" "),
        points: zones[name].map((p) => p.join(",")).join(" "),
        fill: colour(name),
        stroke: colour(name),
        "data-zone": name,
      }, stage);
    }
    for (const name of names) {
      if (name === "table") continue;
      const [x, y] = centroid(zones[name]);
      const box = name.startsWith("box_");
      const label = svg("text", {
        class: box ? "label" : "label area",
        x, y, "font-size": (box ? LABEL_CSS_PX : LABEL_CSS_PX * 0.65) * unit,
      }, stage);
      label.textContent = box ? name.slice(4) : name.replace("_", " ");
    }
    if (state.selected && zones[state.selected]) {
      zones[state.selected].forEach(([x, y], index) => {
        svg("circle", { class: "handle", cx: x, cy: y, r: HANDLE_CSS_PX * unit, "data-vertex": index }, stage);
      });
    }
  }

  function drawCorners(unit) {
    state.corners.forEach(([x, y], index) => {
      svg("circle", { class: "corner", cx: x, cy: y, r: HANDLE_CSS_PX * 1.6 * unit, "data-corner": index }, stage);
      const label = svg("text", { class: "corner-label", x, y, "font-size": HANDLE_CSS_PX * 2 * unit }, stage);
      label.textContent = index + 1;
    });
  }

  function renderPanel() {
    const wh = knownWh();
    const parts = [state.frame ? `frame ${state.frame.w}×${state.frame.h}` : "no frame"];
    parts.push(state.draft ? `${Object.keys(state.draft.zones).length} zones` : "no layout");
    if (wh && state.draft && state.draft.image_size_wh && state.frame) {
      const [lw, lh] = state.draft.image_size_wh;
      if (lw !== state.frame.w || lh !== state.frame.h) parts.push(`layout made for ${lw}×${lh}`);
    }
    $("summary").textContent = parts.join(" · ");
    const next = state.corners.length;
    $("corner-help").textContent = state.collecting
      ? `Click corner ${next + 1} of ${CORNERS} on the picture (orange on the sketch).`
      : state.corners.length === CORNERS
        ? "Template placed. Drag a numbered corner to move it, or click the corners again."
        : "This layout has no template corners: drag its zones' points, or click the corners again.";
    drawGuide();
    renderZoneList();
  }

  function drawGuide() {
    const guide = $("corner-guide");
    guide.replaceChildren();
    if (!state.template) return;
    const { corners_mm: corners, zones_mm: zones } = state.template;
    const all = Object.values(zones).flat().concat(corners);
    const xs = all.map((p) => p[0]);
    const ys = all.map((p) => p[1]);
    const pad = 90;
    const [x0, y0] = [Math.min(...xs) - pad, Math.min(...ys) - pad];
    guide.setAttribute("viewBox", `${x0} ${y0} ${Math.max(...xs) + pad - x0} ${Math.max(...ys) + pad - y0}`);
    const outline = zones.table || corners;
    svg("polygon", { class: "outline", points: outline.map((p) => p.join(",")).join(" ") }, guide);
    corners.forEach(([x, y], index) => {
      let kind = "corner";
      if (index < state.corners.length) kind += " done";
      else if (state.collecting && index === state.corners.length) kind += " next";
      svg("circle", { class: kind, cx: x, cy: y, r: 55 }, guide);
      svg("text", { x, y }, guide).textContent = index + 1;
    });
  }

  function renderZoneList() {
    const list = $("zones");
    list.replaceChildren();
    if (!state.draft) return;
    for (const name of Object.keys(state.draft.zones)) {
      const item = document.createElement("li");
      item.dataset.zone = name;
      if (name === state.selected) item.className = "selected";
      const swatch = document.createElement("span");
      swatch.className = "swatch";
      swatch.style.background = colour(name);
      item.append(swatch, name);
      list.appendChild(item);
    }
  }

  // ---- the template: four corners, then dragging ----------------------------------------

  async function fit() {
    // four new clicks place the template afresh; a dragged corner carries the draft with it
    const moving = !state.collecting && state.draft && state.draft.reference_points;
    const body = { corners_px: state.corners };
    if (moving) body.draft = state.draft;
    try {
      const draft = await api("POST", "/api/layout/fit", body);
      if (!moving) {
        draft.camera = $("camera").value.trim() || "default";
        draft.chung_box = state.draft ? state.draft.chung_box : draft.chung_box;
        draft.image_size_wh = knownWh();
        $("chung-box").value = String(draft.chung_box);
      }
      state.draft = draft;
      state.collecting = false;
      say(
        moving
          ? "Zones moved with the corner (points dragged by hand too)."
          : "Template placed: check the zones over the picture, drag points where needed, then save.",
        "ok",
      );
    } catch (err) {
      if (state.collecting) state.corners = [];
      else if (moving) state.corners = state.draft.reference_points.image_px.map((p) => [...p]);
      say(err.message, "error");
    }
    render();
  }

  function restartCorners() {
    state.corners = [];
    state.collecting = true;
    state.selected = null;
    say("Click the table's corners in the order of the sketch.");
    render();
  }

  stage.addEventListener("pointerdown", (event) => {
    if (event.button !== 0) return;
    const data = event.target.dataset || {};
    if (data.corner !== undefined && !state.collecting) {
      startDrag({ kind: "corner", index: Number(data.corner) }, event);
    } else if (data.vertex !== undefined) {
      startDrag({ kind: "vertex", index: Number(data.vertex) }, event);
    } else if (state.collecting) {
      state.corners.push(toImage(event));
      if (state.corners.length === CORNERS) fit();
      else render();
    } else {
      select(data.zone || null);
    }
  });

  function startDrag(drag, event) {
    event.preventDefault();
    state.drag = drag;
    stage.setPointerCapture(event.pointerId);
  }

  stage.addEventListener("pointermove", (event) => {
    const drag = state.drag;
    if (!drag) return;
    const point = toImage(event);
    if (drag.kind === "corner") state.corners[drag.index] = point;
    else state.draft.zones[state.selected][drag.index] = point;
    render();
  });

  stage.addEventListener("pointerup", (event) => {
    const drag = state.drag;
    state.drag = null;
    if (stage.hasPointerCapture(event.pointerId)) stage.releasePointerCapture(event.pointerId);
    if (drag && drag.kind === "corner") fit();
  });

  function select(zone) {
    state.selected = zone;
    render();
  }

  // ---- frames ---------------------------------------------------------------------------

  async function showPicture(response) {
    const blob = await answer(response, (r) => r.blob());
    const [w, h] = (response.headers.get("X-Image-Size") || "").split("x").map(Number);
    if (state.frame) URL.revokeObjectURL(state.frame.url);
    state.frame = { url: URL.createObjectURL(blob), w, h };
    if (state.draft && !state.draft.image_size_wh) state.draft.image_size_wh = [w, h];
    render();
    say(`Frame loaded: ${w}×${h}.${state.draft ? "" : " Now click the table's four corners."}`, "ok");
  }

  $("source-form").addEventListener("submit", async (event) => {
    event.preventDefault();
    say("Loading the frame…");
    try {
      await showPicture(await fetch("/api/layout/frame", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ source: $("source").value }),
      }));
    } catch (err) {
      say(err.message, "error");
    }
  });

  $("upload").addEventListener("change", async () => {
    const file = $("upload").files[0];
    if (!file) return;
    const form = new FormData();
    form.append("picture", file);
    say("Loading the picture…");
    try {
      await showPicture(await fetch("/api/layout/frame/upload", { method: "POST", body: form }));
    } catch (err) {
      say(err.message, "error");
    }
  });

  // ---- save and open --------------------------------------------------------------------

  async function save() {
    const name = $("name").value.trim();
    if (!state.draft) return say("Nothing to save yet: click the table's four corners first.", "error");
    if (!name) return say("Give the layout a name (letters, digits, _ or -).", "error");
    const draft = {
      ...state.draft,
      camera: $("camera").value.trim() || "default",
      chung_box: Number($("chung-box").value),
      // the size the zones were placed for (a layout opened over another frame keeps its own)
      image_size_wh: state.draft.image_size_wh || knownWh(),
    };
    const url = `/api/layout/layouts/${encodeURIComponent(name)}`;
    try {
      const saved = await api("PUT", url, { draft, overwrite: state.overwrite === name });
      state.overwrite = name; // this page's layout now: saving again updates it
      say(`Saved ${saved.path}`, "ok");
      await refreshList(name);
    } catch (err) {
      state.overwrite = err.status === 409 ? name : null;
      say(err.message, "error");
    }
  }

  async function refreshList(chosen) {
    try {
      const { folder, layouts } = await api("GET", "/api/layout/layouts");
      const select = $("layouts");
      select.replaceChildren(...layouts.map((name) => new Option(name, name)));
      if (chosen) select.value = chosen;
      $("folder").textContent = layouts.length ? `Saved in ${folder}` : `No layouts in ${folder} yet.`;
    } catch (err) {
      say(err.message, "error");
    }
  }

  function templateCorners(reference) {
    // a layout's reference points are the template's corners when they match it point by point
    const corners = state.template && state.template.corners_mm;
    if (!reference || !corners || reference.table_mm.length !== corners.length) return [];
    const same = reference.table_mm.every((p, i) => Math.hypot(p[0] - corners[i][0], p[1] - corners[i][1]) < 0.5);
    return same ? reference.image_px.map((p) => [...p]) : [];
  }

  async function openLayout(name) {
    try {
      const draft = await api("GET", `/api/layout/layouts/${encodeURIComponent(name)}`);
      state.draft = draft;
      state.corners = templateCorners(draft.reference_points);
      state.collecting = false;
      state.selected = null;
      state.overwrite = name;
      $("name").value = name;
      $("camera").value = draft.camera;
      $("chung-box").value = String(draft.chung_box);
      say(`Opened ${name}: saving under this name replaces it.`, "ok");
    } catch (err) {
      say(err.message, "error");
    }
    render();
  }

  $("save-form").addEventListener("submit", (event) => {
    event.preventDefault();
    save();
  });

  $("open-form").addEventListener("submit", (event) => {
    event.preventDefault();
    if ($("layouts").value) openLayout($("layouts").value);
  });

  $("restart-corners").addEventListener("click", restartCorners);

  $("zones").addEventListener("click", (event) => {
    const item = event.target.closest("li");
    if (item) select(item.dataset.zone === state.selected ? null : item.dataset.zone);
  });

  $("chung-box").addEventListener("change", () => {
    if (state.draft) state.draft.chung_box = Number($("chung-box").value);
    render();
  });

  async function init() {
    for (let n = 1; n <= 8; n += 1) $("chung-box").appendChild(new Option(`box ${n}`, String(n)));
    try {
      state.template = await api("GET", "/api/layout/template");
      $("chung-box").value = String(state.template.chung_box);
    } catch (err) {
      say(err.message, "error");
    }
    render();
    await refreshList();
    const wanted = new URLSearchParams(window.location.search).get("open");
    if (wanted) await openLayout(wanted);
    window.addEventListener("resize", render);
    document.body.dataset.ready = "true";
  }

  init();
})();
