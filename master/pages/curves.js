// The curves of a run, drawn with Chart.js (window.Chart) from the JSON of
// master/run_history.h. Shared by the live status page and report.html.
//
// drawCurves(history, unit) fills the four holders #curve-objective,
// #curve-generator_loss, #curve-discriminator_loss and
// #curve-learning_rate, one line per cell (unit: "cell", "class" or
// "replicas"), plus the best of all cells on the objective. Each holder
// gets data-points (the values drawn), data-series (the lines) and
// data-title (the chart's title); #curves
// gets data-state "drawn", or "no-chart-library" when Chart.js did not load.
"use strict";
const CURVES = [
  {id: "objective", key: "objective", best: true},
  {id: "generator_loss", key: "generator_loss", title: "loss of the best generator"},
  {id: "discriminator_loss", key: "discriminator_loss", title: "loss of the best discriminator"},
  {id: "learning_rate", keys: ["generator_lr", "discriminator_lr"],
   title: "mean learning rate (G solid, D dashed)"},
];
const curveCharts = {};

function curveColour(i, n) { return "hsl(" + Math.round(330 * i / Math.max(n, 1)) + ", 70%, 42%)"; }
function objectiveTitle(name, unit) {
  const names = {fid: "FID", mode_tvd: "mode TVD"};
  // data_parallel trains one generator, scored every preview_every generations.
  return (names[name] || name) + (unit === "replicas" ? " of the generator" : " of the mixture") + " (lower is better)";
}
function curveSeries(xs, ys) { return xs.map((x, i) => ({x: x, y: ys[i]})); }

function curveDatasets(curve, history, unit) {
  const n = history.cells.length, keys = curve.keys || [curve.key], sets = [];
  history.cells.forEach((c, i) => keys.forEach((key, j) => {
    const colour = curveColour(i, n);
    sets.push({
      label: (unit === "replicas" ? "replicas" : unit + " " + c.cell) + (keys.length > 1 ? (j ? " D" : " G") : ""),
      data: curveSeries(c.generation, c[key]), borderColor: colour, backgroundColor: colour,
      borderDash: j ? [5, 3] : [], borderWidth: 1.5, pointRadius: c.generation.length > 40 ? 0 : 2,
    });
  }));
  if (curve.best && n > 1)
    sets.push({label: "best of all", data: curveSeries(history.grid.generation, history.grid.best),
               borderColor: "#000", backgroundColor: "#000", borderWidth: 2.5, pointRadius: 0});
  return sets;
}

function curvePoints(sets) {
  return sets.reduce((t, s) => t + s.data.filter(p => p.y !== null && p.y !== undefined).length, 0);
}

function drawCurves(history, unit) {
  const box = document.getElementById("curves");
  if (typeof Chart === "undefined") {
    box.dataset.state = "no-chart-library";
    document.getElementById("curves-note").textContent = "the chart library did not load: no curves";
    return;
  }
  for (const curve of CURVES) {
    const sets = curveDatasets(curve, history, unit);
    const holder = document.getElementById("curve-" + curve.id);
    holder.dataset.points = curvePoints(sets);
    holder.dataset.series = sets.length;
    const title = curve.best ? objectiveTitle(history.objective, unit) : curve.title;
    holder.dataset.title = title;
    const old = curveCharts[curve.id];
    if (old) {
      old.data.datasets = sets;
      old.options.plugins.title.text = title;
      old.update("none");
      continue;
    }
    curveCharts[curve.id] = new Chart(holder.querySelector("canvas"), {
      type: "line",
      data: {datasets: sets},
      options: {
        // spanGaps: a generation without a score (data_parallel scores some) is bridged.
        animation: false, responsive: true, maintainAspectRatio: false, spanGaps: true,
        scales: {x: {type: "linear", title: {display: true, text: "generation"}, ticks: {precision: 0}},
                 y: {type: "linear", ticks: {maxTicksLimit: 8}}},
        plugins: {title: {display: true, text: title},
                  legend: {display: sets.length <= 17, position: "bottom", labels: {boxWidth: 10}}},
      },
    });
  }
  const last = history.grid.generation.length ? history.grid.generation[history.grid.generation.length - 1] : 0;
  document.getElementById("curves-note").textContent =
      history.cells.length ? "" : "no generation written yet";
  box.dataset.generations = last;
  box.dataset.state = "drawn";
}
