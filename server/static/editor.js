// Memory.Wiki editor: live preview, autosave after a pause, conflicts shown side by side,
// capture by pasting a share link or dropping a file. Tokens live in this browser's local
// storage (never in a cookie), and requests carry them as headers; a hub's owner signed in
// to it needs none (the session cookie proves it, with the page's CSRF token).
(function () {
  "use strict";
  var form = document.querySelector("[data-mw-editor]");
  if (!form) return;
  var $ = function (name) { return document.querySelector('[data-mw="' + name + '"]'); };
  var field = function (name) { return form.elements.namedItem(name); };

  var state = {
    id: form.dataset.docId || null,
    version: form.dataset.version ? parseInt(form.dataset.version, 10) : null,
    hub: field("hub").value.trim(),   // the hub the doc is in, as last saved
    autosaveMs: Math.max(0.2, parseFloat(form.dataset.autosave || "10")) * 1000,
    timer: null, previewTimer: null, saving: false, dirty: false, again: false,
    conflict: null, privacyDirty: {}, loaded: !form.dataset.private || form.dataset.private === "false"
  };

  // ---------------------------------------------------------------- tokens
  var store = {
    get: function (key) { try { return localStorage.getItem(key); } catch (e) { return null; } },
    set: function (key, value) { try { localStorage.setItem(key, value); } catch (e) { /* private mode */ } }
  };
  function editToken() { return state.id ? store.get("mw:edit:" + state.id) : null; }
  // Whether this browser is signed in as the owner of a hub: slug -> true/false once asked.
  var owners = {};
  function askSession(slug) {
    return fetch("/api/hub/" + encodeURIComponent(slug) + "/session", { headers: { "Accept": "application/json" } })
      .then(function (r) { return r.ok ? r.json() : {}; })
      .then(function (s) { owners[slug] = s.signed_in === true && s.kind === "owner"; return owners[slug]; })
      .catch(function () { owners[slug] = false; return false; });
  }
  function needsHubToken(slug) { return !!slug && !hubToken(slug) && owners[slug] !== true; }
  function showHubTokenRow() {
    var slug = field("hub").value.trim();
    $("hub-token-row").hidden = !needsHubToken(slug);
    if (slug && !hubToken(slug) && !(slug in owners)) {
      askSession(slug).then(function () { if (field("hub").value.trim() === slug) $("hub-token-row").hidden = !needsHubToken(slug); });
    }
  }
  function hubToken(slug) { return slug ? store.get("mw:hub:" + slug) : null; }
  function editLink(id, token) { return location.origin + "/" + id + "/edit#token=" + encodeURIComponent(token); }

  function takeTokenFromFragment() {
    var match = /(?:^#|&)token=([^&]+)/.exec(location.hash);
    if (!match || !state.id) return;
    store.set("mw:edit:" + state.id, decodeURIComponent(match[1]));
    history.replaceState(null, "", location.pathname + location.search);
  }

  // A post without a token header (a page of no hub) carries the page's CSRF token: the server
  // checks it whenever the browser sends this site's session cookie (server/web/csrf.py).
  var CSRF = (document.querySelector('meta[name="csrf-token"]') || {}).content;
  function plain(extra) {
    var h = Object.assign({ "Accept": "application/json" }, extra || {});
    if (CSRF) h["X-CSRF-Token"] = CSRF;
    return h;
  }

  function headers(extra, slug) {
    var h = plain(extra);
    var owner = hubToken(slug === undefined ? (field("hub").value.trim() || state.hub) : slug);
    var edit = editToken();
    if (owner) h["Authorization"] = "Bearer " + owner;
    if (edit) { if (owner) h["X-Edit-Token"] = edit; else h["Authorization"] = "Bearer " + edit; }
    return h;
  }

  // ---------------------------------------------------------------- status
  var LABELS = { idle: "Not saved yet", unsaved: "Unsaved changes", saving: "Saving…", saved: "Saved",
                 offline: "Offline: your text is kept here and saved when the connection returns",
                 conflict: "Conflict: someone else saved", error: "Not saved" };
  function setStatus(kind, detail) {
    var el = $("status");
    el.dataset.state = kind;
    el.textContent = LABELS[kind] + (detail ? ": " + detail : "");
  }

  function showEditLink() {
    var token = editToken();
    if (!state.id || !token) return;
    $("edit-link").hidden = false;
    $("edit-link-url").value = editLink(state.id, token);
  }

  // ---------------------------------------------------------------- preview
  function schedulePreview() {
    clearTimeout(state.previewTimer);
    state.previewTimer = setTimeout(preview, 300);
  }
  function preview() {
    fetch("/api/render", { method: "POST", headers: plain({ "Content-Type": "application/json" }),
                           body: JSON.stringify({ markdown: field("markdown").value }) })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (data) { if (data) $("preview").innerHTML = data.html; })  // the server's sanitised render
      .catch(function () { /* offline: the preview waits */ });
  }

  // ---------------------------------------------------------------- saving
  function draftKey() { return "mw:draft:" + (state.id || "new"); }
  function keepDraft() {
    store.set(draftKey(), JSON.stringify({ title: field("title").value, markdown: field("markdown").value,
                                           version: state.version }));
  }

  function scheduleSave() {
    state.dirty = true;
    keepDraft();
    if (!state.conflict) setStatus("unsaved");
    clearTimeout(state.timer);
    state.timer = setTimeout(save, state.autosaveMs);
  }

  function emails() {
    return field("allowed_emails").value.split(/[\s,;]+/).map(function (e) { return e.trim(); })
      .filter(function (e) { return e; });
  }

  function body(isNew) {
    var b = { title: field("title").value.trim() || undefined, markdown: field("markdown").value };
    var hub = field("hub").value.trim();
    if (isNew) {
      if (hub) b.hub = hub;
    } else if (hub !== state.hub) {
      b.hub = hub || null;
    }
    if (isNew || state.privacyDirty.is_draft) b.is_draft = field("is_draft").checked;
    if (field("clear_password").checked && (isNew || state.privacyDirty.password)) b.password = null;
    else if (field("password").value) b.password = field("password").value;
    if (isNew || state.privacyDirty.allowed_emails) b.allowed_emails = emails();
    return b;
  }

  function rememberHubToken() {
    var slug = field("hub").value.trim(), token = field("hub_token").value.trim();
    if (slug && token) store.set("mw:hub:" + slug, token);
  }

  function save() {
    clearTimeout(state.timer);
    if (state.conflict || !state.loaded) return;
    if (state.saving) { state.again = true; return; }
    if (!field("markdown").value.trim()) { setStatus("unsaved", "write some text first"); return; }
    rememberHubToken();
    var isNew = !state.id;
    var hub = field("hub").value.trim();
    if (needsHubToken(hub) && (isNew || hub !== state.hub)) {
      if (!(hub in owners)) { askSession(hub).then(save); return; }  // signed in to it, perhaps
      $("hub-token-row").hidden = false;
      setStatus("unsaved", "saving into hub " + hub + " needs its owner token, or its owner signed in");
      return;
    }
    var sent = body(isNew);
    var h = headers({ "Content-Type": "application/json" }, isNew ? hub : (hub !== state.hub ? hub : state.hub));
    if (!isNew) h["If-Match"] = String(state.version);
    state.saving = true;
    state.dirty = false;
    setStatus("saving");
    fetch(isNew ? "/api/docs" : "/api/docs/" + state.id, { method: isNew ? "POST" : "PATCH", headers: h,
                                                           body: JSON.stringify(sent) })
      .then(function (r) {
        return r.json().catch(function () { return {}; }).then(function (data) { return { r: r, data: data }; });
      })
      .then(function (res) {
        state.saving = false;
        if (res.r.status === 409 && res.data.error && res.data.error.code === "version_conflict") {
          return conflict(sent, res.data.error);
        }
        if (!res.r.ok) {
          state.dirty = true;
          var err = res.data.error || {};
          if (res.r.status === 401 || res.r.status === 403) askForToken(err.message);
          return setStatus("error", err.message || ("HTTP " + res.r.status));
        }
        saved(res.data, isNew, sent);
      })
      .catch(function () {
        state.saving = false;
        state.dirty = true;
        setStatus("offline");
      });
  }

  // This editor now edits the page `id`: the address becomes its edit address, so a reload or
  // a bookmark opens the page, and the page's own links appear.
  function becomePage(id, editToken) {
    state.id = id;
    if (editToken) store.set("mw:edit:" + id, editToken);
    history.replaceState(null, "", "/" + id + "/edit");
    form.dataset.docId = id;
    // what a reload of the new address would say: this is now a page being edited, not a new one
    var heading = document.querySelector("main h1");
    if (heading) heading.textContent = "Edit page";
    var title = field("title").value.trim();
    document.title = "Edit" + (title ? ": " + title : "") + " · Memory.Wiki";
    $("view-link").href = "/" + id; $("view-link").hidden = false;
    $("history-link").href = "/" + id + "/history"; $("history-link").hidden = false;
    showEditLink();
  }

  function saved(data, isNew, sent) {
    if (isNew) {
      try { localStorage.removeItem("mw:draft:new"); } catch (e) { /* ignore */ }
      if (state.id) {  // a capture became this editor's page meanwhile; the typed page is saved too
        if (data.edit_token) store.set("mw:edit:" + data.id, data.edit_token);
        return;
      }
      becomePage(data.id, data.edit_token);
    }
    state.version = data.version;
    if (data.sharing) {  // who was mailed a sign-in link, or why nobody was
      $("sharing").hidden = false;
      $("sharing").textContent = data.sharing.message.charAt(0).toUpperCase() + data.sharing.message.slice(1) + ".";
      $("sharing").classList.toggle("warn", !data.sharing.mail || data.sharing.not_mailed.length > 0);
    }
    if ("hub" in sent) state.hub = sent.hub || "";
    if (!field("title").value.trim() && data.title) field("title").value = data.title;
    field("password").value = "";
    field("clear_password").checked = false;
    state.privacyDirty = {};
    if (state.dirty || state.again) {  // typed while saving: that text still owes a save
      state.again = false;
      scheduleSave();
    } else {
      setStatus("saved", "version " + data.version);
    }
  }

  // ---------------------------------------------------------------- conflicts
  function conflict(sent, error) {
    // The 409 may carry the current doc; otherwise read it.
    var theirs = error.current ? Promise.resolve(error.current)
      : fetch("/api/docs/" + state.id, { headers: headers() }).then(function (r) { return r.json(); });
    return theirs.then(function (doc) {
      state.conflict = { mine: sent, theirs: doc };
      $("mine").textContent = (sent.title ? "# " + sent.title + "\n\n" : "") + sent.markdown;
      $("theirs").textContent = "# " + doc.title + "\n\n" + doc.markdown;
      $("their-version").textContent = doc.version;
      $("conflict").hidden = false;
      setStatus("conflict");
    });
  }

  function keepMine() {
    var c = state.conflict;
    state.conflict = null;
    $("conflict").hidden = true;
    state.version = c.theirs.version;  // overwrite exactly the version that was shown
    save();
  }

  function takeTheirs() {
    var c = state.conflict;
    state.conflict = null;
    $("conflict").hidden = true;
    field("title").value = c.theirs.title;
    field("markdown").value = c.theirs.markdown;
    state.version = c.theirs.version;
    state.dirty = false;
    keepDraft();
    preview();
    setStatus("saved", "version " + c.theirs.version);
  }

  // ---------------------------------------------------------------- loading a doc
  function askForToken(message) {
    $("need-token").hidden = false;
    if (message) $("need-token-text").textContent = message + ". Paste its edit link, its edit token or the hub's owner token.";
  }

  function useToken() {
    var value = $("token-input").value.trim();
    var match = /token=([^&\s]+)/.exec(value);
    var token = match ? decodeURIComponent(match[1]) : value;
    if (!token || !state.id) return;
    if (token.indexOf("mwo_") === 0) {
      var slug = field("hub").value.trim() || state.hub;
      if (slug) store.set("mw:hub:" + slug, token); else store.set("mw:edit:" + state.id, token);
    } else {
      store.set("mw:edit:" + state.id, token);
    }
    $("token-input").value = "";
    $("need-token").hidden = true;
    load();
  }

  // `fresh`: show the doc as it is now even if something was typed meanwhile (a capture's
  // page replaces the text that was in the editor).
  function load(fresh) {
    if (!state.id) return;
    fetch("/api/docs/" + state.id, { headers: headers() })
      .then(function (r) { return r.json().then(function (d) { return { r: r, data: d }; }); })
      .then(function (res) {
        if (!res.r.ok) { if (!state.loaded) askForToken(); return; }
        var doc = res.data;
        var draft = null;
        try { draft = JSON.parse(store.get(draftKey()) || "null"); } catch (e) { draft = null; }
        state.hub = doc.hub || "";
        field("hub").value = state.hub;
        if (fresh) { clearTimeout(state.timer); state.dirty = false; }
        if (!state.dirty) {  // nothing typed yet: show the doc as it is now
          field("title").value = doc.title;
          field("markdown").value = doc.markdown;
          state.version = doc.version;
        }  // else the text typed meanwhile is saved against the version the page showed
        if ("is_draft" in doc) {
          field("is_draft").checked = doc.is_draft;
          field("password").placeholder = doc.has_password ? "(unchanged: a password is set)" : "no password";
          field("allowed_emails").value = (doc.allowed_emails || []).join(", ");
        }
        state.loaded = true;
        if (draft && draft.markdown !== doc.markdown && draft.version === doc.version) {
          // unsaved text from an earlier visit (offline, or the tab closed): bring it back
          field("title").value = draft.title;
          field("markdown").value = draft.markdown;
          scheduleSave();
        } else {
          setStatus("saved", "version " + doc.version);
        }
        preview();
        showEditLink();
      })
      .catch(function () { setStatus("offline"); });
  }

  // ---------------------------------------------------------------- capture
  var SHARE = /^https?:\/\/\S+\/share\/\S+$/i;
  // The captured page opens here, in place: no navigation, so no "leave this page?" prompt
  // stands between the user and it. What was typed but not saved stays in this browser's
  // draft for /new; the editor shows the captured page once it is loaded.
  function captured(res) {
    clearTimeout(state.timer);
    state.dirty = false;
    state.loaded = false;  // nothing is saved over the page before its text is here
    becomePage(res.data.id, res.data.edit_token);
    load(true);
  }
  function capturing(promise) {
    setStatus("saving", "capturing");
    return promise
      .then(function (r) { return r.json().then(function (d) { return { r: r, data: d }; }); })
      .then(function (res) {
        if (!res.r.ok) return setStatus("error", (res.data.error || {}).message || "capture failed");
        captured(res);
      })
      .catch(function () { setStatus("offline"); });
  }
  function captureUrl(url) {
    rememberHubToken();
    var hub = field("hub").value.trim();
    var b = { url: url };
    if (hub) b.hub = hub;
    return capturing(fetch("/api/capture", { method: "POST", headers: headers({ "Content-Type": "application/json" }, hub),
                                             body: JSON.stringify(b) }));
  }
  function captureFile(file) {
    rememberHubToken();
    var hub = field("hub").value.trim();
    var data = new FormData();
    data.append("file", file, file.name);
    if (hub) data.append("hub", hub);
    var h = headers({}, hub);
    return capturing(fetch("/api/capture/file", { method: "POST", headers: h, body: data }));
  }

  // ---------------------------------------------------------------- wiring
  form.addEventListener("input", function (event) {
    if (event.target === $("file")) return;  // choosing a file to capture is no edit of this page
    var name = event.target.name;
    if (name === "is_draft" || name === "password" || name === "allowed_emails" || name === "clear_password") {
      state.privacyDirty[name === "clear_password" ? "password" : name] = true;
    }
    if (name === "hub") showHubTokenRow();
    if (name === "hub_token") return;
    if (name === "markdown") schedulePreview();
    scheduleSave();
  });
  form.addEventListener("submit", function (event) { event.preventDefault(); save(); });
  field("markdown").addEventListener("paste", function (event) {
    var text = (event.clipboardData || window.clipboardData).getData("text").trim();
    if (SHARE.test(text) && !field("markdown").value.trim() && !state.id) {
      event.preventDefault();
      captureUrl(text);
    }
  });
  var zone = $("dropzone");
  ["dragenter", "dragover"].forEach(function (type) {
    form.addEventListener(type, function (event) { event.preventDefault(); zone.classList.add("over"); });
  });
  form.addEventListener("dragleave", function () { zone.classList.remove("over"); });
  form.addEventListener("drop", function (event) {
    event.preventDefault();
    zone.classList.remove("over");
    var file = event.dataTransfer && event.dataTransfer.files[0];
    if (file) captureFile(file);
  });
  $("file").addEventListener("change", function () { if (this.files[0]) captureFile(this.files[0]); });
  $("keep-mine").addEventListener("click", keepMine);
  $("take-theirs").addEventListener("click", takeTheirs);
  $("use-token").addEventListener("click", useToken);
  $("copy").addEventListener("click", function () {
    $("edit-link-url").select();
    if (navigator.clipboard) navigator.clipboard.writeText($("edit-link-url").value).catch(function () {});
  });
  window.addEventListener("online", function () { if (state.dirty) save(); });
  window.addEventListener("beforeunload", function (event) {
    if (state.dirty || state.saving) { keepDraft(); event.preventDefault(); event.returnValue = ""; }
  });

  takeTokenFromFragment();
  if (state.id) {
    load();
  } else {
    showHubTokenRow();
    var draft = null;
    try { draft = JSON.parse(store.get("mw:draft:new") || "null"); } catch (e) { draft = null; }
    if (draft && draft.markdown && !field("markdown").value) {
      field("title").value = draft.title || "";
      field("markdown").value = draft.markdown;
      preview();
      setStatus("unsaved", "restored from this browser");
    }
  }
})();
