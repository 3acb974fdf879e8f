// SkillOpt dashboard: the project's own small script (no framework).
// A live run page follows the run's events.jsonl through an EventSource and
// swaps in server-rendered parts (header, curve, step table, epochs) when a
// step or the run ends; the runs list gets a filter box.
"use strict";

(function () {
  function text(v) { return v === undefined || v === null ? "" : String(v); }

  function describe(e) {
    var step = e.total_steps ? "Step " + e.step + "/" + e.total_steps : (e.step ? "Step " + e.step : "");
    switch (e.event) {
      case "run_started": return "Run started" + (e.resumed_at_step ? " (resumed after step " + e.resumed_at_step + ")" : "");
      case "step_started": return step + ": started (epoch " + e.epoch + ")";
      case "rollout_started": return (step ? step + " · " : "") + "rollout " + (e.label || e.phase) + ": " + e.n_items + " items, " + e.workers + " workers";
      case "rollout_done": return (step ? step + " · " : "") + "rollout " + (e.label || e.phase) + " done: score " + Number(e.score).toFixed(3);
      case "patches_generated": return step + ": " + e.n_patches + " edits proposed";
      case "edits_selected": return step + ": " + e.n_selected + " of " + e.n_candidates + " edits selected (" + e.budget_text + ")";
      case "edits_applied": return step + ": edits applied";
      case "gate_decided": return step + ": gate " + text(e.action).replace("_", " ") + " — " + text(e.reason);
      case "best_changed": return "New best skill: val " + Number(e.val).toFixed(3) + " (" + e.source + ")";
      case "epoch_end": return "Epoch " + e.epoch + "/" + e.num_epochs + " ended";
      case "notice": return "Note: " + e.text;
      case "run_stopped": return "Stopped: " + e.message;
      case "run_end": return "Run ended: " + text(e.status).replace("_", " ");
      default: return text(e.event);
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
          body.dataset.refreshed = String(Number(body.dataset.refreshed || 0) + 1);
        });
    }

    function schedule(delay) {
      if (pending) { clearTimeout(pending); }
      pending = setTimeout(refresh, delay);
    }

    source.onmessage = function (msg) {
      var e;
      try { e = JSON.parse(msg.data); } catch (err) { return; }
      if (activity) { activity.textContent = describe(e); }
      if (REFRESH[e.event]) { schedule(200); }
    };
    source.addEventListener("end", function () {
      source.close();
      if (activity) { activity.classList.add("done"); }
      schedule(0);
    });
  }

  function filterRuns(input) {
    var rows = document.querySelectorAll("#runs-table tbody tr");
    input.addEventListener("input", function () {
      var q = input.value.trim().toLowerCase();
      rows.forEach(function (tr) {
        tr.hidden = q !== "" && tr.textContent.toLowerCase().indexOf(q) < 0;
      });
    });
  }

  document.addEventListener("DOMContentLoaded", function () {
    var body = document.body;
    if (body.dataset.live === "1" && window.EventSource) { followRun(body); }
    var filter = document.getElementById("run-filter");
    if (filter) { filterRuns(filter); }
  });
})();
