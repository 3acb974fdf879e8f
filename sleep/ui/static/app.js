// SkillOpt dashboard: the project's own small script (no framework).
// A live run page follows the run's events.jsonl through an EventSource, shows
// progress inside a rollout (items done of total, ETA) and swaps in
// server-rendered parts (header, curves, skills, step table, epochs) when a
// step or the run ends. Charts get a readout under the pointer and zoom to a
// dragged range of steps (?from=&to=, the server draws it). The runs table's
// compare button counts the ticked runs.
"use strict";

(function () {
  function text(v) { return v === undefined || v === null ? "" : String(v); }

  // The server sends each event with its line (the engine's event_line, as the page first showed);
  // a rollout's progress adds the time left, measured here.
  function describe(e) {
    var line = text(e.line) || text(e.event);
    return e.event === "rollout_progress" ? line + timeLeft(e) : line;
  }

  // In-rollout progress: the rate from the first tick seen of this rollout (or its start).
  var rollout = null;

  function seconds(ms) {
    var s = Math.max(0, Math.round(ms / 1000));
    return s < 90 ? s + " s" : Math.round(s / 60) + " min";
  }

  function timeLeft(e) {
    var key = e.step + "/" + e.phase + "/" + (e.label || "");
    var at = Date.parse(e.at) || Date.now();
    if (!rollout || rollout.key !== key) { rollout = { key: key, at: at, done: 0, started: false }; }
    if (e.done > rollout.done && at > rollout.at) {
      var perItem = (at - rollout.at) / (e.done - rollout.done);
      return " · about " + seconds(perItem * (e.total - e.done)) + " left";
    }
    if (!rollout.started) {
      rollout.at = at; rollout.done = e.done;
      return " · estimating time left…";
    }
    return "";
  }

  function showProgress(e) {
    var bar = document.getElementById("rollout-progress");
    if (!bar) { return; }
    if (e.event === "rollout_progress") {
      bar.hidden = false;
      bar.max = e.total; bar.value = e.done;
      bar.setAttribute("aria-valuetext", e.done + " of " + e.total);
    } else if (e.event === "rollout_started") {
      rollout = { key: e.step + "/" + e.phase + "/" + (e.label || ""), at: Date.parse(e.at) || Date.now(), done: 0, started: true };
      bar.hidden = false; bar.max = e.n_items || 1; bar.value = 0;
    } else if (e.event === "rollout_done" || e.event === "run_end") {
      bar.hidden = true;
    }
  }

  var REFRESH = { step_started: 1, gate_decided: 1, best_changed: 1, epoch_end: 1, run_stopped: 1, run_end: 1 };

  function followRun(body) {
    var activity = document.getElementById("activity");
    var pending = null;
    var source = new EventSource(body.dataset.events);

    function refresh() {
      pending = null;
      fetch(body.dataset.fragments, { headers: { "Accept": "application/json" }, credentials: "same-origin" })
        .then(function (r) { return r.ok ? r.json() : null; })
        .then(function (parts) {
          if (!parts) { return; }
          document.querySelectorAll("[data-fragment]").forEach(function (el) {
            var html = parts[el.dataset.fragment];
            if (typeof html === "string") { el.innerHTML = html; }
          });
          charts(document);
          body.dataset.refreshed = String(Number(body.dataset.refreshed || 0) + 1);
        });
    }

    function schedule(delay) {
      if (pending) { clearTimeout(pending); }
      pending = setTimeout(refresh, delay);
    }

    var said = activity ? activity.textContent : "", saidAt = Date.now();
    setInterval(function () {
      var quiet = Date.now() - saidAt;
      if (activity && !activity.classList.contains("done") && quiet >= 3000) {
        activity.textContent = said + " (" + seconds(quiet) + " since)";
      }
    }, 1000);

    source.onmessage = function (msg) {
      var e;
      try { e = JSON.parse(msg.data); } catch (err) { return; }
      said = describe(e); saidAt = Date.now();
      if (activity) { activity.textContent = said; }
      showProgress(e);
      if (REFRESH[e.event]) { schedule(200); }
    };
    source.addEventListener("end", function () {
      source.close();
      if (activity) { activity.classList.add("done"); }
      schedule(0);
    });
  }

  function compareButton(form) {
    var button = document.getElementById("compare");
    function update() {
      var n = form.querySelectorAll("input[name=run]:checked").length;
      button.disabled = n < 2;
      button.textContent = n < 2 ? "Compare ticked runs" : "Compare " + n + " runs";
    }
    form.addEventListener("change", update);
    update();
  }

  // ----- charts: readout under the pointer, drag to zoom -----
  function svgX(svg, clientX) {
    var r = svg.getBoundingClientRect();
    return (clientX - r.left) * Number(svg.dataset.width) / r.width;
  }

  function stepAt(svg, x) {
    var left = Number(svg.dataset.left), right = Number(svg.dataset.right);
    var first = Number(svg.dataset.first), last = Number(svg.dataset.last);
    var f = Math.min(1, Math.max(0, (x - left) / (right - left)));
    return first + f * (last - first);
  }

  function xOfStep(svg, step) {
    var left = Number(svg.dataset.left), right = Number(svg.dataset.right);
    var first = Number(svg.dataset.first), last = Number(svg.dataset.last);
    return left + (right - left) * (step - first) / Math.max(1, last - first);
  }

  function curveReadout(svg, clientX) {
    var out = document.getElementById("curve-readout");
    var marks = svg.querySelectorAll("g.mark[data-tip]");
    if (!out || !marks.length) { return; }
    var want = stepAt(svg, svgX(svg, clientX)), best = null;
    marks.forEach(function (m) {
      if (best === null || Math.abs(Number(m.dataset.step) - want) < Math.abs(Number(best.dataset.step) - want)) { best = m; }
    });
    out.textContent = best.dataset.tip;
  }

  function readout(svg, clientX) {
    var steps = (svg.dataset.steps || "").split(",").filter(Boolean).map(Number);
    var out = svg.parentNode.querySelector(".readout");
    if (!steps.length || !out) { return; }
    var want = stepAt(svg, svgX(svg, clientX)), best = 0;
    steps.forEach(function (s, i) { if (Math.abs(s - want) < Math.abs(steps[best] - want)) { best = i; } });
    var parts = ["step " + steps[best]];
    svg.querySelectorAll("path.series").forEach(function (p) {
      var v = (p.dataset.values || "").split("|")[best];
      if (v) { parts.push((p.parentNode.querySelectorAll("path.series").length > 1 ? p.dataset.label + ": " : "") + v); }
    });
    out.textContent = parts.join(" · ");
    var guide = svg.querySelector(".guide");
    if (guide) { var gx = xOfStep(svg, steps[best]); guide.setAttribute("x1", gx); guide.setAttribute("x2", gx); }
  }

  function zoomable(svg) {
    var start = null, brush = svg.querySelector(".brush");
    svg.addEventListener("pointerdown", function (ev) {
      if (ev.button !== 0) { return; }
      start = svgX(svg, ev.clientX);
    });
    svg.addEventListener("pointermove", function (ev) {
      if (svg.dataset.steps !== undefined) { readout(svg, ev.clientX); } else { curveReadout(svg, ev.clientX); }
      if (start === null || !brush) { return; }
      var x = svgX(svg, ev.clientX);
      brush.setAttribute("x", Math.min(start, x)); brush.setAttribute("width", Math.abs(x - start));
    });
    svg.addEventListener("pointerup", function (ev) {
      if (start === null) { return; }
      var a = Math.round(stepAt(svg, start)), b = Math.round(stepAt(svg, svgX(svg, ev.clientX)));
      start = null;
      if (brush) { brush.setAttribute("width", 0); }
      if (Math.abs(b - a) < 2) {
        var mark = ev.target.closest ? ev.target.closest("g.mark[data-tip]") : null;
        if (mark && svg.dataset.stepUrl) { window.location.assign(svg.dataset.stepUrl + "/" + mark.dataset.step); }
        return;
      }
      var url = new URL(window.location.href);
      url.searchParams.set("from", Math.min(a, b)); url.searchParams.set("to", Math.max(a, b));
      window.location.assign(url.toString());
    });
  }

  function charts(root) {
    root.querySelectorAll(".zoomable svg.plot, .zoomable svg.curve").forEach(function (svg) {
      if (svg.dataset.bound) { return; }
      svg.dataset.bound = "1";
      if (!svg.querySelector(".brush")) {
        var r = document.createElementNS("http://www.w3.org/2000/svg", "rect");
        r.setAttribute("class", "brush"); r.setAttribute("y", 0); r.setAttribute("height", svg.viewBox.baseVal.height);
        r.setAttribute("width", 0); svg.appendChild(r);
      }
      zoomable(svg);
    });
    root.querySelectorAll("svg.plot").forEach(function (svg) {
      if (svg.dataset.hover) { return; }
      svg.dataset.hover = "1";
      svg.addEventListener("pointermove", function (ev) { if (!svg.dataset.bound) { readout(svg, ev.clientX); } });
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    var body = document.body;
    if (body.dataset.live === "1" && window.EventSource) { followRun(body); }
    var form = document.getElementById("compare-form");
    if (form) { compareButton(form); }
    charts(document);
  });
})();
