// The page of GET / (see status_page.h).
#include "master/status_page.h"

namespace cellgan {

const char* status_page_html() {
  return R"html(<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>cellgan status</title>
<style>
  body { font: 14px system-ui, sans-serif; margin: 16px; color: #111; background: #fff; }
  h1 { font-size: 18px; margin: 0 0 8px; }
  #summary { margin-bottom: 8px; }
  #bar { height: 8px; background: #ddd; width: 100%; max-width: 640px; margin-bottom: 12px; }
  #bar div { height: 100%; width: 0; background: #3b6fb6; }
  #main { display: flex; flex-wrap: wrap; gap: 24px; align-items: flex-start; }
  #grid { display: grid; gap: 4px; }
  .cell { width: 96px; height: 96px; box-sizing: border-box; padding: 4px; font-size: 12px; line-height: 1.25;
          border: 2px solid transparent; overflow: hidden; }
  .cell.dead, .cell.failed { border: 2px dashed #000; }
  .cell b { display: block; }
  table { border-collapse: collapse; }
  td, th { padding: 2px 8px; text-align: left; border-bottom: 1px solid #eee; }
  .late td, .dead td, .failed td { color: #b00; }
  #preview { max-width: 320px; image-rendering: pixelated; border: 1px solid #ccc; }
  #events { font: 12px monospace; max-height: 240px; overflow: auto; white-space: pre-wrap; margin: 0; }
  #error { color: #b00; }
</style>
</head>
<body>
<h1>cellgan <span id="phase">connecting</span> <span id="error"></span></h1>
<div id="summary"></div>
<div id="bar"><div></div></div>
<div id="main">
  <div><div id="grid"></div></div>
  <div>
    <table id="workers"><thead><tr><th>worker</th><th>state</th><th>generation</th><th>heard</th></tr></thead>
      <tbody></tbody></table>
  </div>
  <div><img id="preview" alt="latest preview" hidden></div>
</div>
<h2 style="font-size:15px">Events</h2>
<pre id="events"></pre>
<script>
"use strict";
// Green for the lowest score of the grid, yellow halfway, red for the highest.
const STOPS = [[26, 152, 80], [254, 224, 139], [215, 48, 39]];
function colour(t) {
  const x = Math.min(Math.max(t, 0), 1) * 2, i = Math.min(Math.floor(x), 1), f = x - i;
  const c = STOPS[i].map((v, k) => Math.round(v + (STOPS[i + 1][k] - v) * f));
  return "rgb(" + c.join(",") + ")";
}
function fmt(v, digits) { return v === null || v === undefined ? "–" : Number(v).toFixed(digits); }
function duration(s) {
  if (s === null || s === undefined) return "–";
  s = Math.round(s);
  const h = Math.floor(s / 3600), m = Math.floor(s / 60) % 60, r = s % 60;
  return (h ? h + "h" : "") + (h || m ? m + "m" : "") + r + "s";
}
function text(tag, value, cls) {
  const e = document.createElement(tag);
  e.textContent = value;
  if (cls) e.className = cls;
  return e;
}
let previewGeneration = null;
function draw(s) {
  document.getElementById("phase").textContent = s.phase + (s.detail ? ": " + s.detail : "");
  document.getElementById("summary").textContent =
      s.grid.rows + "×" + s.grid.cols + " " + s.layout + " · generation " + s.generations.done + "/" +
      s.generations.total + " · best " + s.objective + " " +
      (s.best ? fmt(s.best.score, 4) + " (cell " + s.best.cell + ")" : "–") +
      " · elapsed " + duration(s.elapsed_seconds) + " · ETA " + duration(s.eta_seconds);
  document.querySelector("#bar div").style.width =
      (s.generations.total ? 100 * s.generations.done / s.generations.total : 0) + "%";

  const scores = s.cells.map(c => c.score).filter(v => v !== null);
  const lo = Math.min(...scores), hi = Math.max(...scores);
  const grid = document.getElementById("grid");
  grid.style.gridTemplateColumns = "repeat(" + s.grid.cols + ", 96px)";
  const cells = s.cells.map(c => {
    const e = document.createElement("div");
    e.className = "cell " + c.state;
    e.dataset.cell = c.cell;
    e.dataset.worker = c.worker;
    e.dataset.state = c.state;
    e.style.background = c.score === null ? "rgb(160,160,160)" : colour(hi > lo ? (c.score - lo) / (hi - lo) : 0);
    e.title = "cell " + c.cell + " (row " + c.row + ", col " + c.col + ")";
    e.append(text("b", "cell " + c.cell), text("div", "worker " + c.worker), text("div", "gen " + c.generation),
             text("div", fmt(c.score, 4)), text("div", c.state));
    return e;
  });
  grid.replaceChildren(...cells);

  const rows = s.workers.map(w => {
    const tr = document.createElement("tr");
    tr.className = "worker " + w.state;
    tr.dataset.worker = w.rank;
    tr.append(text("td", "rank " + w.rank), text("td", w.state), text("td", w.generation),
              text("td", fmt(w.heartbeat_age_seconds, 1) + " s ago"));
    return tr;
  });
  document.querySelector("#workers tbody").replaceChildren(...rows);

  const img = document.getElementById("preview");
  if (s.preview && s.preview.generation !== previewGeneration) {
    previewGeneration = s.preview.generation;
    img.src = s.preview.url + "?generation=" + previewGeneration;
    img.title = "generation " + previewGeneration;
    img.hidden = false;
  }
  document.getElementById("events").textContent =
      s.events.slice().reverse().map(e => fmt(e.seconds, 1).padStart(8) + " s  " + e.line).join("\n");
}
async function poll() {
  try {
    const r = await fetch("/status", {cache: "no-store"});
    if (!r.ok) throw new Error("HTTP " + r.status);
    draw(await r.json());
    document.getElementById("error").textContent = "";
  } catch (e) {
    document.getElementById("error").textContent = "(no answer: " + e.message + ")";
  }
  setTimeout(poll, 1000);
}
poll();
</script>
</body>
</html>
)html";
}

}  // namespace cellgan
