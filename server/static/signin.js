// Memory.Wiki: claiming a hub and signing in to one. The owner token travels only in a JSON
// body to the session endpoint; a sign-in link carries it after "#", which the browser never
// sends to a server, and this script takes it out of the address bar before anything else.
// Opening a link asks before it signs in: a link someone else sent would otherwise sign this
// browser in to their hub, where what it writes next would land (login CSRF).
(function () {
  "use strict";
  var CSRF = (document.querySelector('meta[name="csrf-token"]') || {}).content;
  var $ = function (name) { return document.querySelector('[data-mw="' + name + '"]'); };

  function post(path, body) {
    return fetch(path, { method: "POST", credentials: "same-origin", body: JSON.stringify(body),
                         headers: { "Accept": "application/json", "Content-Type": "application/json",
                                    "X-CSRF-Token": CSRF } })
      .then(function (r) {
        return r.json().catch(function () { return {}; }).then(function (data) { return { r: r, data: data }; });
      });
  }
  function signIn(slug, token) { return post("/api/hub/" + encodeURIComponent(slug) + "/session", { token: token }); }
  function message(res) {
    var err = (res.data && res.data.error) || {};
    return err.message || ("HTTP " + res.r.status);
  }
  function show(name, text) { var el = $(name); el.hidden = false; el.textContent = text; }
  // built from the hub's URL as the server names it (its public URL), not this page's address
  function signinLink(hubUrl, token) { return hubUrl + "/signin#" + token; }

  // ---------------------------------------------------------------- claiming
  var claim = document.querySelector("[data-mw-claim]");
  if (claim) {
    claim.addEventListener("submit", function (event) {
      event.preventDefault();
      var slug = claim.elements.namedItem("slug").value.trim().toLowerCase();
      var button = claim.querySelector("button[type=submit]");
      $("claim-error").hidden = true;
      button.disabled = true;
      post("/api/hubs", { slug: slug }).then(function (res) {
        if (!res.r.ok) {
          button.disabled = false;
          var taken = res.data.error && res.data.error.code === "hub_taken";
          return show("claim-error", taken ? "The name " + slug + " is taken: choose another one." : message(res));
        }
        var hub = res.data, token = hub.owner_token;
        $("owner-token").value = token;
        $("signin-link").value = signinLink(hub.url, token);
        $("open-hub").href = "/hub/" + hub.slug;
        claim.hidden = true;
        $("claimed").hidden = false;
        // the way to the hub shows once this browser is signed in, so it opens as the owner's
        var failed = function (why) {
          show("claim-error", "The hub is yours, but this browser could not sign in: " + why +
                              ". Keep the token and use the sign-in link.");
        };
        return signIn(hub.slug, token).then(function (signed) {
          if (!signed.r.ok) failed(message(signed));
        }, function () { failed("offline"); }).then(function () { $("open-hub-row").hidden = false; });
      }).catch(function () { button.disabled = false; show("claim-error", "Offline: no hub was claimed."); });
    });
    document.addEventListener("click", function (event) {
      var b = event.target.closest("[data-mw-copy]");
      if (!b) return;
      var input = $(b.dataset.mwCopy);
      input.select();
      if (navigator.clipboard) navigator.clipboard.writeText(input.value).catch(function () {});
    });
  }

  // ---------------------------------------------------------------- signing in
  var form = document.querySelector("[data-mw-signin]");
  if (!form) return;
  var hubSlug = form.dataset.hub;

  // A pasted sign-in link gives its fragment; anything else is taken as the token itself.
  function tokenOf(value) {
    value = value.trim();
    var hash = value.indexOf("#"), raw = hash >= 0 ? value.slice(hash + 1) : value;
    try { raw = decodeURIComponent(raw); } catch (e) { /* a stray %: the server says the token is wrong */ }
    return raw.trim();
  }

  function attempt(token) {
    $("signin-error").hidden = true;
    if (!token) return show("signin-error", "Paste the hub's owner token or the sign-in link you kept.");
    $("signing-in").hidden = false;
    signIn(hubSlug, token).then(function (res) {
      if (res.r.ok) return location.replace("/hub/" + encodeURIComponent(hubSlug));
      $("signing-in").hidden = true;
      show("signin-error", message(res));
    }).catch(function () { $("signing-in").hidden = true; show("signin-error", "Offline: not signed in."); });
  }

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    var input = form.elements.namedItem("token");
    var token = tokenOf(input.value);
    input.value = "";
    attempt(token);
  });

  if (location.hash.length > 1) {
    var fromLink = tokenOf(location.hash);
    history.replaceState(null, "", location.pathname + location.search);  // the token leaves the address bar
    var ask = $("confirm");
    form.hidden = true;
    ask.hidden = false;
    ask.querySelector("[data-mw-confirm]").addEventListener("click", function () {
      ask.hidden = true;
      form.hidden = false;
      attempt(fromLink);
    });
    ask.querySelector("[data-mw-cancel]").addEventListener("click", function () {
      fromLink = "";
      ask.hidden = true;
      form.hidden = false;
    });
  }
})();
