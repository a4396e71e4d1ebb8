// Memory.Wiki bundle editor: a title, a description and the reading order, saved through the
// bundles API (POST /api/bundles, PATCH /api/bundles/{id}) with the owner's session cookie and
// the page's CSRF token.
(function () {
  "use strict";
  var form = document.querySelector("[data-mw-bundle-editor]");
  if (!form) return;
  var CSRF = (document.querySelector('meta[name="csrf-token"]') || {}).content;
  var $ = function (name) { return document.querySelector('[data-mw="' + name + '"]'); };
  var list = $("members"), select = $("add-page"), status = $("bundle-status");
  var state = { id: form.dataset.bundleId || null, hub: form.dataset.hub, saving: false };
  var ID = /^[abcdefghijkmnpqrstuvwxyz23456789]{10}$/;

  function setStatus(text, kind) { status.textContent = text; status.dataset.state = kind || ""; }
  function changed() { setStatus("Unsaved changes", "unsaved"); }
  function ids() { return Array.prototype.map.call(list.children, function (li) { return li.dataset.id; }); }
  function option(id) { return select.querySelector('option[value="' + id + '"]'); }
  function refresh() {
    $("no-members").hidden = list.children.length > 0;
    Array.prototype.forEach.call(list.children, function (li, i) {
      var title = li.querySelector(".member-title").textContent;
      li.querySelector('[data-move="up"]').disabled = i === 0;
      li.querySelector('[data-move="down"]').disabled = i === list.children.length - 1;
      li.querySelector('[data-move="up"]').setAttribute("aria-label", "Move up: " + title);
      li.querySelector('[data-move="down"]').setAttribute("aria-label", "Move down: " + title);
      li.querySelector('[data-move="remove"]').setAttribute("aria-label", "Remove: " + title);
    });
  }

  function add(id, title, visibility) {
    if (!id || ids().indexOf(id) >= 0) return;
    var li = $("member-template").content.firstElementChild.cloneNode(true);
    li.dataset.id = id;
    li.querySelector(".member-title").textContent = title;
    var badge = li.querySelector(".badge");
    badge.textContent = visibility;
    badge.classList.add(visibility);
    list.appendChild(li);
    var o = option(id);
    if (o) { o.hidden = true; o.disabled = true; }
    select.value = "";
    refresh();
    changed();
  }

  list.addEventListener("click", function (event) {
    var b = event.target.closest("[data-move]");
    if (!b) return;
    var li = b.closest("li");
    if (b.dataset.move === "up" && li.previousElementSibling) list.insertBefore(li, li.previousElementSibling);
    else if (b.dataset.move === "down" && li.nextElementSibling) list.insertBefore(li.nextElementSibling, li);
    else if (b.dataset.move === "remove") {
      var o = option(li.dataset.id);
      if (o) { o.hidden = false; o.disabled = false; }
      li.remove();
    }
    refresh();
    changed();
    var again = li.isConnected && li.querySelector('[data-move="' + b.dataset.move + '"]');
    if (again && !again.disabled) again.focus();
  });

  $("add").addEventListener("click", function () {
    var o = select.selectedOptions[0];
    if (!o || !o.value) return;
    add(o.value, o.textContent.replace(/ \((draft|password|people)\)$/, ""), o.dataset.visibility);
  });
  var byRef = $("add-by-ref");
  if (byRef) byRef.addEventListener("click", function () {
    var value = $("add-ref").value.trim().replace(/[?#].*$/, "").replace(/\/+$/, "");
    var id = value.split("/").pop();
    if (!ID.test(id)) { setStatus("Not a page id or URL: " + value, "error"); return; }
    $("add-ref").value = "";
    add(id, id, "page");
  });
  form.addEventListener("input", changed);

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    if (state.saving) return;
    var title = form.elements.namedItem("title").value.trim();
    if (!title) { setStatus("A bundle needs a title", "error"); return; }
    var body = { title: title, description: form.elements.namedItem("description").value, doc_ids: ids() };
    if (!state.id) body.hub = state.hub;
    state.saving = true;
    setStatus("Saving…", "saving");
    fetch(state.id ? "/api/bundles/" + state.id : "/api/bundles", {
      method: state.id ? "PATCH" : "POST", credentials: "same-origin", body: JSON.stringify(body),
      headers: { "Accept": "application/json", "Content-Type": "application/json", "X-CSRF-Token": CSRF }
    }).then(function (r) {
      return r.json().catch(function () { return {}; }).then(function (data) { return { r: r, data: data }; });
    }).then(function (res) {
      state.saving = false;
      if (!res.r.ok) { setStatus("Not saved: " + (((res.data || {}).error || {}).message || res.r.status), "error"); return; }
      if (!state.id) {  // the new bundle's editor is its edit address from now on
        state.id = res.data.id;
        form.dataset.bundleId = state.id;
        history.replaceState(null, "", "/b/" + state.id + "/edit");
        document.querySelector("h1").textContent = "Edit bundle";
      }
      var link = $("bundle-link");
      link.href = "/b/" + state.id;
      link.hidden = false;
      setStatus("Saved", "saved");
    }).catch(function () { state.saving = false; setStatus("Offline: not saved", "offline"); });
  });

  refresh();
})();
