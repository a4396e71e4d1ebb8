// Memory.Wiki history page: restore a version through the API with this browser's edit token
// (or the hub's owner token), the same tokens the editor keeps in local storage, or with the
// session cookie of the hub's owner signed in.
(function () {
  "use strict";
  var form = document.querySelector("[data-mw-history]");
  if (!form) return;
  var $ = function (name) { return document.querySelector('[data-mw="' + name + '"]'); };
  var id = form.dataset.docId, hub = form.dataset.hub;
  var get = function (key) { try { return localStorage.getItem(key); } catch (e) { return null; } };
  var set = function (key, value) { try { localStorage.setItem(key, value); } catch (e) { /* private mode */ } };
  var pending = null;

  function headers() {
    var h = { "Content-Type": "application/json", "Accept": "application/json" };
    var owner = hub ? get("mw:hub:" + hub) : null, edit = get("mw:edit:" + id);
    if (owner) h["Authorization"] = "Bearer " + owner;
    if (edit) { if (owner) h["X-Edit-Token"] = edit; else h["Authorization"] = "Bearer " + edit; }
    var csrf = document.querySelector('meta[name="csrf-token"]');
    if (csrf) h["X-CSRF-Token"] = csrf.content;
    return h;
  }

  function say(text) { var el = $("restore-status"); el.hidden = false; el.textContent = text; }

  function restore(version) {
    pending = version;
    say("Restoring version " + version + "…");
    fetch("/api/docs/" + id + "/restore", { method: "POST", headers: headers(), body: JSON.stringify({ version: version }) })
      .then(function (r) { return r.json().then(function (d) { return { r: r, data: d }; }); })
      .then(function (res) {
        if (res.r.status === 401 || res.r.status === 403) { $("need-token").hidden = false; say((res.data.error || {}).message || "Not allowed"); return; }
        if (!res.r.ok) { say("Not restored: " + ((res.data.error || {}).message || res.r.status)); return; }
        say("Restored version " + version + " as version " + res.data.version + ".");
        location.assign("/" + id + "/history?restored=" + res.data.version);
      })
      .catch(function () { say("Offline: nothing was restored."); });
  }

  form.addEventListener("click", function (event) {
    var button = event.target.closest("[data-restore]");
    if (!button) return;
    // the page's text becomes that version's (as a new version): ask before it changes
    var version = parseInt(button.dataset.restore, 10);
    if (!window.confirm("Restore version " + version + "? Its text becomes the page's current text, as a new version.")) return;
    restore(version);
  });
  $("use-token").addEventListener("click", function () {
    var value = $("token-input").value.trim(), match = /token=([^&\s]+)/.exec(value);
    var token = match ? decodeURIComponent(match[1]) : value;
    if (!token) return;
    if (token.indexOf("mwo_") === 0 && hub) set("mw:hub:" + hub, token); else set("mw:edit:" + id, token);
    $("token-input").value = "";
    $("need-token").hidden = true;
    if (pending) restore(pending);
  });
})();
