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
    // A paste too long to send as a web address: the server refuses such a request ("431"), in place of the page,
    // so it is said here. A shorter one over the limit is searched by its head and tail. The script sends the query
    // string it measured, each line break of the box as LF (%0A, as URLSearchParams writes it and the server reads
    // it), not as the form would, CRLF (%0D%0A): twice the bytes, a column of 19,999 characters of plain text was
    // too long. Characters are counted as the server counts them: an emoji is one, not two UTF-16 units.
    var search = q && q.form;
    var most = search ? Number(search.getAttribute("data-max-query-bytes")) : 0;
    if (most) {
      search.addEventListener("submit", function (event) {
        var query = new URLSearchParams(new FormData(search)).toString();
        event.preventDefault();
        if (query.length <= most) {
          location.assign(search.action + "?" + query);
          return;
        }
        var said = document.getElementById("q-too-long");
        var chars = Array.from(q.value).length;
        var whole = Number(search.getAttribute("data-max-query-chars"));
        said.textContent = "This text is " + chars.toLocaleString("en") + " characters: too long to send as a " +
          "search" + (chars <= whole ? " (a character outside ASCII takes up to 12 bytes of a web address)" : "") +
          ". Paste its last part (an error is most often at its end); up to " + whole.toLocaleString("en") +
          " characters of plain text are searched whole.";
        said.hidden = false;
        q.setAttribute("aria-invalid", "true");
        q.focus();
      });
    }
    document.body.setAttribute("data-ready", "1");
  });
})();
