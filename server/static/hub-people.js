// Memory.Wiki: the people of the owner's hub page. Per page, sharing it with an address (the
// server mails a new address its sign-in link, and the answer says so), a copyable access link
// per address (POST /api/docs/{id}/access) and removing an address (which ends its access at
// once); the hub's members, added (their token shown once), listed and removed. All through the
// HTTP API with the owner's session and the page's CSRF token.
(function () {
  "use strict";
  var root = document.querySelector("[data-mw-owner]");
  if (!root) return;
  var slug = root.dataset.hub;
  var CSRF = (document.querySelector('meta[name="csrf-token"]') || {}).content;
  var $ = function (name) { return document.querySelector('[data-mw="' + name + '"]'); };
  var membersPath = "/api/hub/" + encodeURIComponent(slug) + "/members";

  function api(method, path, body) {
    var headers = { "Accept": "application/json", "X-CSRF-Token": CSRF };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    return fetch(path, { method: method, headers: headers, credentials: "same-origin",
                         body: body === undefined ? undefined : JSON.stringify(body) })
      .then(function (r) {
        return r.json().catch(function () { return {}; }).then(function (data) { return { r: r, data: data }; });
      });
  }
  function say(text) { var el = $("owner-status"); if (el) { el.hidden = false; el.textContent = text; } }
  function problem(res) { return ((res.data && res.data.error) || {}).message || ("HTTP " + res.r.status); }
  function copy(input) {
    input.hidden = false;
    input.select();
    if (navigator.clipboard) navigator.clipboard.writeText(input.value).catch(function () {});
  }

  // What the last change said (who was mailed a sign-in link, or why nobody was): kept across
  // the reload that shows the new list.
  var KEPT = "mw:owner-said";
  try {
    var kept = sessionStorage.getItem(KEPT);
    if (kept) { sessionStorage.removeItem(KEPT); say(kept); }
  } catch (e) { /* private mode */ }
  function sayAfterReload(text) {
    try { sessionStorage.setItem(KEPT, text); } catch (e) { /* private mode */ }
    location.reload();
  }
  function sentence(text) { return text.charAt(0).toUpperCase() + text.slice(1) + "."; }

  document.addEventListener("submit", function (event) {
    var form = event.target.closest("[data-share]");
    if (!form) return;
    event.preventDefault();
    var people = form.closest("[data-people]"), input = form.elements.namedItem("email");
    var email = input.value.trim().toLowerCase();
    var list = people.dataset.emails.split(",").filter(function (e) { return e; });
    if (!email || list.indexOf(email) >= 0) return say(email ? email + " is on the list already." : "Type an address.");
    var button = form.querySelector("button");
    button.disabled = true;
    api("PATCH", "/api/docs/" + people.dataset.doc, { allowed_emails: list.concat([email]) }).then(function (res) {
      button.disabled = false;
      if (!res.r.ok) return say("Not shared: " + problem(res));
      sayAfterReload("Shared with " + email + ". " + sentence((res.data.sharing || {}).message || ""));
    });
  });

  document.addEventListener("click", function (event) {
    var b = event.target.closest("button");
    if (!b) return;
    var people = b.closest("[data-people]");
    if (people && b.dataset.accessLink) {
      b.disabled = true;
      api("POST", "/api/docs/" + people.dataset.doc + "/access", { email: b.dataset.accessLink }).then(function (res) {
        b.disabled = false;
        if (!res.r.ok) return say("No access link: " + problem(res));
        var input = b.parentNode.querySelector(".access-link");
        input.value = res.data.url;
        copy(input);
        say("Access link for " + res.data.email + " copied: it opens this page for them until you remove them.");
      });
    } else if (people && b.dataset.unshare) {
      var keep = people.dataset.emails.split(",").filter(function (e) { return e && e !== b.dataset.unshare; });
      b.disabled = true;
      api("PATCH", "/api/docs/" + people.dataset.doc, { allowed_emails: keep }).then(function (res) {
        if (!res.r.ok) { b.disabled = false; return say("Not removed: " + problem(res)); }
        sayAfterReload("Removed " + b.dataset.unshare + ": their links and sign-ins to the page end now.");
      });
    } else if (b.dataset.removeMember) {
      b.disabled = true;
      api("DELETE", membersPath + "/" + encodeURIComponent(b.dataset.removeMember)).then(function (res) {
        if (!res.r.ok) { b.disabled = false; return say("Not removed: " + problem(res)); }
        loadMembers();
      });
    }
  });

  function loadMembers() {
    var list = $("member-list");
    if (!list) return;
    api("GET", membersPath).then(function (res) {
      list.textContent = "";
      var members = (res.r.ok && res.data.members) || [];
      members.forEach(function (m) {
        var li = document.createElement("li"), name = document.createElement("span"), remove = document.createElement("button");
        name.className = "title";
        name.textContent = m.name;
        remove.type = "button";
        remove.className = "small";
        remove.dataset.removeMember = m.name;
        remove.textContent = "Remove";
        remove.setAttribute("aria-label", "Remove member " + m.name);
        li.append(name, " ", remove);
        list.appendChild(li);
      });
      if (!members.length) {
        var none = document.createElement("li");
        none.className = "meta";
        none.textContent = res.r.ok ? "No members yet." : problem(res);
        list.appendChild(none);
      }
    });
  }

  var form = $("add-member");
  if (form) {
    form.addEventListener("submit", function (event) {
      event.preventDefault();
      var input = form.elements.namedItem("name");
      api("POST", membersPath, { name: input.value.trim() }).then(function (res) {
        if (!res.r.ok) return say("Not added: " + problem(res));
        input.value = "";
        $("member-name").textContent = res.data.name;
        $("member-token-value").value = res.data.token;
        $("member-token").hidden = false;
        copy($("member-token-value"));
        loadMembers();
      });
    });
  }
  loadMembers();
})();
