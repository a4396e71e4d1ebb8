// Memory.Wiki: a reader of a page shared with them. The sign-in link mailed to them carries its
// secret after "#", which the browser never sends to a server (nor to its logs): this script
// takes it out of the address bar and posts it in a JSON body, which sets the session cookie.
(function () {
  "use strict";
  var CSRF = (document.querySelector('meta[name="csrf-token"]') || {}).content;
  var $ = function (name) { return document.querySelector('[data-mw="' + name + '"]'); };

  function call(method, path, body) {
    return fetch(path, { method: method, credentials: "same-origin", body: body ? JSON.stringify(body) : undefined,
                         headers: { "Accept": "application/json", "Content-Type": "application/json",
                                    "X-CSRF-Token": CSRF } })
      .then(function (r) {
        return r.json().catch(function () { return {}; }).then(function (data) { return { r: r, data: data }; });
      });
  }

  var landing = document.querySelector("[data-mw-reader-signin]");
  if (landing) {
    var docId = landing.dataset.doc, secret = location.hash.slice(1);
    history.replaceState(null, "", location.pathname);  // the secret leaves the address bar
    var fail = function (text) { $("signing-in").hidden = true; var e = $("signin-error"); e.hidden = false; e.textContent = text; };
    if (!secret) {
      fail("This link is incomplete: open the whole link from the mail, or ask for a new one on the page.");
    } else {
      call("POST", "/api/docs/" + encodeURIComponent(docId) + "/access/session", { link: decodeURIComponent(secret) })
        .then(function (res) {
          if (res.r.ok) return location.replace("/" + encodeURIComponent(docId));
          fail(((res.data && res.data.error) || {}).message || ("HTTP " + res.r.status));
        }).catch(function () { fail("Offline: not signed in."); });
    }
  }

  document.addEventListener("click", function (event) {
    var button = event.target.closest("[data-mw-signout]");
    if (!button) return;
    button.disabled = true;
    call("DELETE", "/api/hub/" + encodeURIComponent(button.dataset.hub) + "/session").then(function () {
      location.reload();
    }).catch(function () { button.disabled = false; });
  });
})();
