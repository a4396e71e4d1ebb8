// Memory.Wiki: the owner's hub page. Every action goes through the HTTP API the CLI uses; the
// browser's session cookie proves the owner, and each request carries the page's CSRF token.
(function () {
  "use strict";
  var root = document.querySelector("[data-mw-owner]");
  if (!root) return;
  var slug = root.dataset.hub;
  var CSRF = (document.querySelector('meta[name="csrf-token"]') || {}).content;
  var $ = function (name) { return document.querySelector('[data-mw="' + name + '"]'); };
  var hubPath = "/api/hub/" + encodeURIComponent(slug);

  function say(text, bad) {
    var el = $("owner-status");
    el.hidden = false;
    el.textContent = text;
    el.classList.toggle("bad", !!bad);
  }

  function api(method, path, body) {
    var headers = { "Accept": "application/json", "X-CSRF-Token": CSRF };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    return fetch(path, { method: method, headers: headers, credentials: "same-origin",
                         body: body === undefined ? undefined : JSON.stringify(body) })
      .then(function (r) {
        return r.json().catch(function () { return {}; }).then(function (data) { return { r: r, data: data }; });
      });
  }

  // What went wrong, in the server's words; an ended sign-in sends the owner to sign in again.
  function failed(res, what) {
    var err = (res.data && res.data.error) || {};
    if (err.code === "session_ended" || res.r.status === 401) {
      say((err.message || "Your sign-in has ended") + ".", true);
      setTimeout(function () { location.assign("/hub/" + encodeURIComponent(slug) + "/signin"); }, 1500);
      return;
    }
    say(what + ": " + (err.message || ("HTTP " + res.r.status)), true);
  }

  function act(button, method, path, body, what, after) {
    button.disabled = true;
    say(what + "…");
    api(method, path, body).then(function (res) {
      if (!res.r.ok) { button.disabled = false; return failed(res, what + " failed"); }
      after(res.data);
    }).catch(function () { button.disabled = false; say("Offline: nothing was changed.", true); });
  }

  function reload() { location.reload(); }

  document.addEventListener("click", function (event) {
    var b = event.target.closest("button");
    if (!b) return;
    if (b.dataset.mw === "sign-out") {
      act(b, "DELETE", hubPath + "/session", undefined, "Signing out", function () {
        location.assign("/hub/" + encodeURIComponent(slug));
      });
    } else if (b.dataset.deleteBundle) {
      // A bundle has no trash to bring it back from: ask first. Its pages stay as they are.
      if (!window.confirm("Delete the bundle \u201c" + b.dataset.title + "\u201d? Its pages stay; the bundle cannot be brought back.")) return;
      act(b, "DELETE", "/api/bundles/" + encodeURIComponent(b.dataset.deleteBundle), undefined, "Deleting the bundle", reload);
    } else if (b.dataset.delete) {
      // one click must not take a page off the hub: ask first (the trash brings it back)
      var title = (b.closest("li") || b).querySelector(".title");
      if (!window.confirm("Delete “" + (title ? title.textContent.trim() : "this page") + "”? It goes to the trash.")) return;
      act(b, "DELETE", "/api/docs/" + b.dataset.delete, undefined, "Deleting", reload);
    } else if (b.dataset.publish) {
      act(b, "PATCH", "/api/docs/" + b.dataset.publish, { is_draft: false }, "Publishing", reload);
    } else if (b.dataset.undelete) {
      act(b, "POST", "/api/docs/" + b.dataset.undelete + "/undelete", {}, "Bringing it back", reload);
    } else if (b.dataset.accept) {
      act(b, "POST", hubPath + "/suggestions/" + b.dataset.accept + "/accept", undefined, "Making the bundle", reload);
    } else if (b.dataset.dismiss) {
      act(b, "POST", hubPath + "/suggestions/" + b.dataset.dismiss + "/dismiss", undefined, "Dismissing", reload);
    }
  });

  // ---------------------------------------------------------------- settings
  var settings = $("settings");
  settings.addEventListener("submit", function (event) {
    event.preventDefault();
    var button = settings.querySelector("button[type=submit]");
    var body = { description: settings.elements.namedItem("description").value,
                 listed: settings.elements.namedItem("listed").checked,
                 redact_secrets: settings.elements.namedItem("redact_secrets").checked };
    act(button, "PATCH", hubPath, body, "Saving the settings", function (data) {
      button.disabled = false;
      say("Saved: the hub is " + (data.listed ? "listed" : "unlisted") + "; secrets are " +
          (data.redact_secrets ? "redacted from its pages." : "kept in its pages as written."));
    });
  });

  // ---------------------------------------------------------------- import
  var form = $("import"), zone = $("import-drop"), bar = $("import-progress"), status = $("import-status");
  function tell(text, bad) { status.hidden = false; status.textContent = text; status.classList.toggle("bad", !!bad); }
  function kind() { return form.querySelector("input[name=kind]:checked").value; }
  function summary(r) {
    return "Imported into " + r.hub + ": " + r.created + " new, " + r.updated + " updated, " + r.unchanged +
      " unchanged" + (r.deleted ? ", " + r.deleted + " you had deleted (left deleted)" : "") +
      (r.skipped && r.skipped.length ? "; " + r.skipped.length + " empty conversations skipped" : "") + ".";
  }

  // One request: the upload's progress from the browser, then the server's own count as it
  // saves each conversation (newline-delimited JSON, the last line the result or an error).
  function importFile(file) {
    var data = new FormData();
    data.append("file", file, file.name);
    data.append("hub", slug);
    var xhr = new XMLHttpRequest(), seen = 0, total = null, finished = false;
    xhr.open("POST", "/api/import/" + kind());
    xhr.setRequestHeader("Accept", "application/x-ndjson");
    xhr.setRequestHeader("X-CSRF-Token", CSRF);
    bar.hidden = false; bar.removeAttribute("value");
    tell("Uploading " + file.name + "…");
    xhr.upload.onprogress = function (e) {
      if (e.lengthComputable) { bar.max = e.total; bar.value = e.loaded; tell("Uploading " + file.name + ": " + Math.round(100 * e.loaded / e.total) + "%"); }
    };
    function lines() {
      if (xhr.status !== 200) return;
      var text = xhr.responseText, end;
      while ((end = text.indexOf("\n", seen)) >= 0) {
        var line = text.slice(seen, end);
        seen = end + 1;
        if (!line.trim()) continue;
        var item = JSON.parse(line);
        if ("total" in item) {
          total = item.total;
          if (total) { bar.max = total; bar.value = 0; } else { bar.removeAttribute("value"); }
          tell("Saving conversations…");
        } else if ("done" in item) {
          if (total) bar.value = item.done;
          tell("Saved " + item.done + (total ? " of " + total : "") + " conversations…");
        } else if (item.result) {
          finished = true;
          if (total) bar.value = total;
          tell(summary(item.result) + " Reload the page to see them.");
        } else if (item.error) {
          finished = true;
          tell("The import stopped: " + item.error.message, true);
        }
      }
    }
    xhr.onprogress = lines;
    xhr.onload = function () {
      if (xhr.status === 200) { lines(); if (!finished) tell("The import ended without a result: try again.", true); return; }
      var err = {};
      try { err = JSON.parse(xhr.responseText).error || {}; } catch (e) { err = {}; }
      bar.hidden = true;
      tell("Not imported: " + (err.message || ("HTTP " + xhr.status)), true);
    };
    xhr.onerror = function () { bar.hidden = true; tell("Offline: nothing was imported.", true); };
    xhr.send(data);
  }

  ["dragenter", "dragover"].forEach(function (type) {
    zone.addEventListener(type, function (event) { event.preventDefault(); zone.classList.add("over"); });
  });
  zone.addEventListener("dragleave", function () { zone.classList.remove("over"); });
  zone.addEventListener("drop", function (event) {
    event.preventDefault();
    zone.classList.remove("over");
    var file = event.dataTransfer && event.dataTransfer.files[0];
    if (file) importFile(file);
  });
  $("import-file").addEventListener("change", function () { if (this.files[0]) importFile(this.files[0]); });
})();
