#include "viz/report_assets.hpp"

namespace collsim::viz {

const char* const report_css = R"~(
:root { --text: #222831; --muted: #5f6b7a; --line: #dde2e8; --soft: #f5f7fa; --accent: #4e79a7;
        --ok: #2e7d32; --bad: #c62828; }
* { box-sizing: border-box; }
body { margin: 0; color: var(--text); background: #ffffff;
       font: 14px/1.45 "DejaVu Sans", Verdana, Helvetica, Arial, sans-serif; }
main { max-width: 1250px; margin: 0 auto; padding: 20px 24px 40px; }
header h1 { font-size: 24px; margin: 0 0 4px; }
header p { margin: 0; color: var(--muted); }
nav { margin: 12px 0 4px; display: flex; gap: 14px; flex-wrap: wrap; font-size: 13px; }
nav a { color: var(--accent); text-decoration: none; }
h2 { font-size: 18px; margin: 28px 0 8px; padding-bottom: 4px; border-bottom: 1px solid var(--line); }
p.lead { margin: 4px 0 10px; color: var(--muted); max-width: 980px; }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(170px, 1fr)); gap: 10px; margin: 14px 0; }
.card { border: 1px solid var(--line); border-radius: 8px; padding: 10px 12px; background: var(--soft); }
.card .value { font-size: 20px; font-weight: bold; }
.card .label { font-size: 12px; color: var(--muted); }
.card.ok .value { color: var(--ok); }
.card.bad .value { color: var(--bad); }
table { border-collapse: collapse; font-size: 13px; }
th, td { text-align: left; padding: 4px 10px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { background: var(--soft); font-weight: 600; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
table.summary th { background: none; color: var(--muted); font-weight: normal; width: 220px; }
.figure { overflow-x: auto; margin: 8px 0; }
.figure svg { max-width: 100%; height: auto; display: block; }
.notes { margin: 8px 0; padding: 8px 12px; background: #fff8e6; border-left: 3px solid #f2b701; font-size: 13px; }
.notes p { margin: 2px 0; }
.badge { display: inline-block; padding: 0 6px; border-radius: 4px; background: #fde0de; color: var(--bad);
         font-size: 11px; font-weight: bold; margin-left: 6px; }
.stepper .controls { display: flex; gap: 8px; align-items: center; flex-wrap: wrap; margin: 6px 0 10px; }
.stepper button { font: inherit; padding: 4px 12px; border: 1px solid #b8c2cc; border-radius: 6px; background: #ffffff;
                  cursor: pointer; }
.stepper button:hover { background: var(--soft); }
.stepper input[type=range] { flex: 1; min-width: 200px; }
.stepper .where { font-weight: bold; min-width: 280px; }
.stepper .panes { display: grid; grid-template-columns: 380px 1fr; gap: 24px; align-items: start; }
.stepper .said { font-size: 13px; color: var(--muted); margin: 6px 0; }
.stepper ul.sent { margin: 4px 0; padding-left: 18px; font-size: 13px; columns: 2 15em; column-gap: 24px; }
table.holds td { width: 34px; height: 24px; text-align: center; padding: 0; font-size: 11px;
                 border: 1px solid #ffffff; }
table.holds th { font-size: 11px; padding: 2px 6px; text-align: center; }
table.holds td.changed { outline: 2px solid #222831; outline-offset: -2px; }
table.holds td.sending { box-shadow: inset 0 -4px 0 #1f5fa8; }
.key { display: flex; gap: 14px; flex-wrap: wrap; font-size: 12px; color: var(--muted); margin: 8px 0; }
.key span.swatch { display: inline-block; width: 14px; height: 12px; vertical-align: -2px; margin-right: 4px;
                   border: 1px solid #d0d5db; }
.print-only { display: none; }
footer { margin-top: 36px; font-size: 12px; color: var(--muted); }
@media print {
  main { max-width: none; padding: 0; }
  nav, .stepper .controls { display: none; }
  h2 { break-after: avoid; }
  section, .figure, table { break-inside: avoid; }
  .figure { overflow: visible; }
  .print-only { display: block; }
  .card { background: none; }
  a { color: inherit; text-decoration: none; }
}
)~";

const char* const report_script = R"~(
(function () {
  "use strict";
  var source = document.getElementById("steps-data");
  var root = document.getElementById("stepper");
  if (!source || !root) return;
  var data = JSON.parse(source.textContent);
  if (!data.available) return;
  var SVG = "http://www.w3.org/2000/svg";
  var frames = data.frames, p = data.ranks, frame = 0, timer = null;
  var slider = root.querySelector("input[type=range]");
  var where = root.querySelector(".where");
  var said = root.querySelector(".said");
  var sent = root.querySelector("ul.sent");
  var diagram = root.querySelector("svg.diagram");
  var grid = root.querySelector("table.holds");
  slider.max = String(frames.length - 1);

  function el(name, attrs, parent) {
    var node = document.createElementNS(SVG, name);
    for (var key in attrs) node.setAttribute(key, attrs[key]);
    if (parent) parent.appendChild(node);
    return node;
  }
  function chunkName(m) {
    if (data.chunks <= 1) return "the vector";
    if (m[2].length === 1) return "chunk " + m[2][0];
    return (m[4] === "all" ? "all chunks" : "chunks " + m[4].slice(1)) + " (" + m[2].length + ")";
  }
  function position(r) {
    var angle = -Math.PI / 2 + 2 * Math.PI * r / p;
    return { x: 190 + 140 * Math.cos(angle), y: 180 + 140 * Math.sin(angle) };
  }
  function heldColour(count) {
    if (count <= 0) return "#f4f5f7";
    if (count >= p) return "#59a14f";
    var f = count / p;  // partial: light to deep amber
    var r = 255, g = Math.round(232 - 110 * f), b = Math.round(170 - 150 * f);
    return "rgb(" + r + "," + g + "," + b + ")";
  }
  function rankState(holds, r) {
    if (!holds.length) return "#ffffff";
    var row = holds[r], full = 0, some = 0;
    for (var c = 0; c < row.length; c++) { if (row[c] >= p) full++; if (row[c] > 0) some++; }
    if (full === row.length) return "#59a14f";
    if (some > 0) return "#ffd27a";
    return "#f4f5f7";
  }

  function drawDiagram(f) {
    while (diagram.firstChild) diagram.removeChild(diagram.firstChild);
    var defs = el("defs", {}, diagram);
    data.colors.forEach(function (colour, i) {
      var marker = el("marker", { id: "step-arrow-" + i, viewBox: "0 0 10 10", refX: "9", refY: "5",
                                  markerWidth: "7", markerHeight: "7", orient: "auto-start-reverse" }, defs);
      el("path", { d: "M0,0 L10,5 L0,10 z", fill: colour }, marker);
    });
    var current = frames[f];
    current.messages.forEach(function (m) {
      var a = position(m[0]), b = position(m[1]);
      var dx = b.x - a.x, dy = b.y - a.y, length = Math.sqrt(dx * dx + dy * dy) || 1;
      var ux = dx / length, uy = dy / length;
      var x1 = a.x + ux * 20, y1 = a.y + uy * 20, x2 = b.x - ux * 22, y2 = b.y - uy * 22;
      // Bend every arrow a little to its left, so that opposite messages stay apart.
      var mx = (x1 + x2) / 2 - uy * 20, my = (y1 + y2) / 2 + ux * 20;
      var colour = data.colors[current.phase] || "#3b4450";
      el("path", { d: "M" + x1 + "," + y1 + " Q" + mx + "," + my + " " + x2 + "," + y2, fill: "none",
                   stroke: colour, "stroke-width": "2.2", "marker-end": "url(#step-arrow-" + current.phase + ")",
                   "class": "message" }, diagram);
      if (data.chunks > 1 && m[4]) {
        var label = el("text", { x: mx, y: my + 4, "text-anchor": "middle", "font-size": "11",
                                 fill: "#222831", "font-weight": "bold", stroke: "#ffffff", "stroke-width": "3",
                                 "paint-order": "stroke" }, diagram);
        label.textContent = m[4];
      }
    });
    for (var r = 0; r < p; r++) {
      var at = position(r);
      el("circle", { cx: at.x, cy: at.y, r: "18", fill: rankState(current.holds, r), stroke: "#3b4450",
                     "stroke-width": r === data.root && data.kind !== "allreduce" ? "3" : "1.2", "class": "rank" },
         diagram);
      var text = el("text", { x: at.x, y: at.y + 4.5, "text-anchor": "middle", "font-size": "13",
                              "font-weight": "bold", fill: "#222831" }, diagram);
      text.textContent = String(r);
    }
  }

  function drawGrid(f) {
    var current = frames[f], previous = f > 0 ? frames[f - 1] : null;
    if (!data.chunk_model) return;
    var sending = {};
    current.messages.forEach(function (m) { m[2].forEach(function (c) { sending[m[0] + ":" + c] = true; }); });
    var html = "<tr><th>rank</th>";
    for (var c = 0; c < data.chunks; c++) html += "<th>" + (data.chunks > 1 ? "c" + c : "vector") + "</th>";
    html += "</tr>";
    for (var r = 0; r < p; r++) {
      html += "<tr><th>" + r + "</th>";
      for (var k = 0; k < data.chunks; k++) {
        var count = current.holds[r][k];
        var changed = previous && previous.holds.length && previous.holds[r][k] !== count;
        var classes = (changed ? "changed " : "") + (sending[r + ":" + k] ? "sending" : "");
        var shown = count >= p ? "\u2713" : (count > 0 && data.kind !== "broadcast" ? count + "/" + p : "");
        html += "<td class=\"" + classes + "\" style=\"background:" + heldColour(count) +
                (count >= p ? ";color:#ffffff" : "") + "\" data-count=\"" + count + "\">" + shown + "</td>";
      }
      html += "</tr>";
    }
    grid.innerHTML = html;
  }

  function show(f) {
    frame = Math.max(0, Math.min(frames.length - 1, f));
    var current = frames[frame];
    slider.value = String(frame);
    where.textContent = frame === 0 ? "Before the first step" :
      "Step " + frame + " of " + (frames.length - 1) + ": " + current.label;
    if (frame === 0) {
      said.textContent = data.kind === "broadcast" ? "Only the root (rank " + data.root + ") holds the data." :
        (data.kind === "allgather" ? "Each rank holds its own block." : "Each rank holds its own contribution only.");
    } else {
      said.textContent = current.messages.length + " message" + (current.messages.length === 1 ? "" : "s") +
        " of " + current.size + ", " + current.time + ".";
    }
    sent.innerHTML = "";
    current.messages.slice(0, 24).forEach(function (m) {
      var item = document.createElement("li");
      item.textContent = "rank " + m[0] + " \u2192 " + m[1] + (data.chunk_model ? ": " + chunkName(m) : "");
      sent.appendChild(item);
    });
    if (current.messages.length > 24) {
      var more = document.createElement("li");
      more.textContent = "\u2026 and " + (current.messages.length - 24) + " more";
      sent.appendChild(more);
    }
    drawDiagram(frame);
    drawGrid(frame);
    root.setAttribute("data-frame", String(frame));
  }

  function stop() { if (timer) { clearInterval(timer); timer = null; root.querySelector(".play").textContent = "\u25B6 Play"; } }
  root.querySelector(".first").addEventListener("click", function () { stop(); show(0); });
  root.querySelector(".prev").addEventListener("click", function () { stop(); show(frame - 1); });
  root.querySelector(".next").addEventListener("click", function () { stop(); show(frame + 1); });
  root.querySelector(".last").addEventListener("click", function () { stop(); show(frames.length - 1); });
  root.querySelector(".play").addEventListener("click", function (event) {
    if (timer) { stop(); return; }
    if (frame === frames.length - 1) show(0);
    event.target.textContent = "\u275A\u275A Pause";
    timer = setInterval(function () { if (frame >= frames.length - 1) stop(); else show(frame + 1); }, 900);
  });
  slider.addEventListener("input", function () { stop(); show(parseInt(slider.value, 10)); });
  document.addEventListener("keydown", function (event) {
    if (event.target && event.target.tagName === "INPUT" && event.target !== slider) return;
    if (event.key === "ArrowRight") { stop(); show(frame + 1); }
    if (event.key === "ArrowLeft") { stop(); show(frame - 1); }
  });
  show(0);
})();
)~";

}  // namespace collsim::viz
