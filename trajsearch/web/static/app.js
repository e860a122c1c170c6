// trajsearch: the only script of these pages (CSP script-src 'self'). Everything works without it.
"use strict";
(function () {
  // Open the <details> a #step-N (or #divergence) fragment points at, and move focus there.
  function openTarget(focus) {
    var id;
    try {
      id = decodeURIComponent(location.hash.slice(1));
    } catch (error) {
      return; // a malformed fragment (#%E0) points at nothing: ignore it
    }
    if (!id) return;
    var el = document.getElementById(id);
    if (!el) return;
    for (var node = el; node; node = node.parentElement) {
      if (node.tagName === "DETAILS") node.open = true;
    }
    el.scrollIntoView({ block: "start" });
    var summary = el.tagName === "DETAILS" ? el.querySelector("summary") : null;
    if (focus && summary) summary.focus({ preventScroll: true });
    document.body.setAttribute("data-target-opened", id);
  }
  window.addEventListener("hashchange", function () { openTarget(true); });

  document.addEventListener("DOMContentLoaded", function () {
    openTarget(false);
    // Expand / collapse every step of the timeline.
    var toggles = document.querySelector(".toggles");
    if (toggles) {
      toggles.hidden = false;
      toggles.addEventListener("click", function (event) {
        var button = event.target.closest("button[data-details]");
        if (!button) return;
        var open = button.getAttribute("data-details") === "open";
        document.querySelectorAll("details.step").forEach(function (d) { d.open = open; });
      });
    }
    // Ctrl+Enter (or Cmd+Enter) in the query box searches.
    var q = document.getElementById("q");
    if (q) {
      q.addEventListener("keydown", function (event) {
        if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
          event.preventDefault();
          q.form.requestSubmit();
        }
      });
    }
    document.body.setAttribute("data-ready", "1");
  });
})();
