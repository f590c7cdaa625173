// memd ui: live updates. The pages work without this file; with it, a page
// whose <main data-live> names a project (or "*") re-fetches itself when the
// daemon rebuilds that project, and swaps in the new <main>: no reload.
(function () {
  "use strict";
  var main = document.querySelector("main[data-live]");
  var watch = main ? main.getAttribute("data-live") : "";
  if (!main || !watch || !window.EventSource || !window.fetch) { return; }
  var badge = document.getElementById("live");
  var busy = false, again = false;
  function refresh() {
    if (busy) { again = true; return; }
    busy = true;
    fetch(window.location.href, { credentials: "same-origin", cache: "no-store" })
      .then(function (response) { return response.ok ? response.text() : null; })
      .then(function (html) {
        if (html === null) { return; }
        var fresh = new DOMParser().parseFromString(html, "text/html").querySelector("main");
        if (fresh) {
          main.innerHTML = fresh.innerHTML;
          main.setAttribute("data-updated", String(Date.now()));
        }
      })
      .catch(function () {})
      .then(function () { busy = false; if (again) { again = false; refresh(); } });
  }
  var source = new EventSource("/events");
  source.addEventListener("hello", function () { if (badge) { badge.hidden = false; } });
  source.addEventListener("changed", function (event) {
    if (watch === "*" || event.data === watch) { refresh(); }
  });
  source.onerror = function () { if (badge) { badge.hidden = true; } };
})();
