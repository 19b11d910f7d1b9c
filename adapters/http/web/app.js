// The page's entry: sign-in, the router over `#/...` and the header.

import { api, clearToken, setToken, token, ApiError } from "./api.js";
import { h, field, clearMessages, showError } from "./ui.js";
import { inventoryView } from "./views/inventory.js";
import { itemView } from "./views/item.js";
import { projectsView, projectView } from "./views/projects.js";
import { packView } from "./views/pack.js";
import { sellListView, sellItemView } from "./views/selling.js";
import { intakeView } from "./views/intake.js";
import { spendView } from "./views/spend.js";
import { placesView, placeView } from "./views/places.js";
import { scanView } from "./views/scan.js";

const main = document.getElementById("main");

/** The routes: a pattern over the path after `#`, and the view that renders into `main`. */
const routes = [
  [/^\/items\/(\d+)\/sell$/, (m) => sellItemView(+m[1]), "sell"],
  [/^\/items\/(\d+)$/, (m) => itemView(+m[1]), "items"],
  [/^\/items$/, (m, q) => inventoryView(q), "items"],
  [/^\/projects\/(\d+)\/pack$/, (m) => packView(+m[1]), "projects"],
  [/^\/projects\/(\d+)$/, (m) => projectView(+m[1]), "projects"],
  [/^\/projects$/, () => projectsView(), "projects"],
  [/^\/places\/(\d+)$/, (m, q) => placeView(+m[1], q), "places"],
  [/^\/places$/, () => placesView(), "places"],
  [/^\/scan$/, () => scanView(), "places"],
  [/^\/sell$/, () => sellListView(), "sell"],
  [/^\/intake$/, () => intakeView(), "intake"],
  [/^\/spend$/, () => spendView(), "spend"],
];

/** Takes `#token=...` from the address (the sign-in link `trove serve --demo` prints) and removes it. */
function takeTokenFromUrl() {
  const m = location.hash.match(/^#token=([^&]+)/);
  if (!m) return false;
  setToken(decodeURIComponent(m[1]));
  history.replaceState(null, "", `${location.pathname}${location.search}#/items`);
  return true;
}

function signedIn(yes) {
  document.getElementById("nav").hidden = !yes;
  document.getElementById("sign-out").hidden = !yes;
}

function signInView(reason) {
  signedIn(false);
  document.title = "Sign in · Trove";
  const input = h("input", {
    name: "token",
    type: "password",
    autocomplete: "off",
    required: true,
    spellcheck: "false",
  });
  const out = h("div", { class: "out" });
  const form = h(
    "form",
    { class: "card narrow", "aria-labelledby": "signin-title" },
    h("h1", { id: "signin-title" }, "Sign in to Trove"),
    reason ? h("p", { class: "message error", role: "alert" }, reason) : null,
    h("p", {}, "Paste a token once; this browser keeps it until you sign out. Make one on the server with ", h("code", {}, "trove token new"), ", or open the link ", h("code", {}, "trove serve --demo"), " prints."),
    field("Token", input),
    h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Sign in")),
    out,
  );
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    setToken(input.value.trim());
    try {
      await api("/items?limit=1");
      location.hash = "#/items";
      route();
    } catch (err) {
      clearToken();
      showError(err, out);
    }
  });
  main.replaceChildren(form);
  input.focus();
}

let current = 0;

async function route() {
  clearMessages();
  if (!token()) return signInView();
  signedIn(true);
  let hash = location.hash.replace(/^#/, "") || "/items";
  if (!hash.startsWith("/")) hash = "/items";
  const [path, qs] = hash.split("?");
  const params = new URLSearchParams(qs || "");
  const found = routes.find(([re]) => re.test(path));
  if (!found) {
    location.hash = "#/items";
    return;
  }
  const [re, view, section] = found;
  for (const a of document.querySelectorAll("#nav a")) {
    if (a.dataset.section === section) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
  const mine = ++current;
  main.setAttribute("aria-busy", "true");
  try {
    const node = await view(path.match(re), params);
    if (mine !== current) return; // A later navigation won.
    main.replaceChildren(node);
    // Which address this content is for: tests (and scripts) wait on it rather than on time.
    main.dataset.view = location.hash;
    const heading = main.querySelector("h1");
    document.title = heading ? `${heading.textContent} · Trove` : "Trove";
  } catch (err) {
    if (mine !== current) return;
    if (err instanceof ApiError && err.status === 401) return;
    main.replaceChildren(h("h1", {}, "Could not load this page"), h("div", {}, ""));
    showError(err, main.lastChild);
  } finally {
    if (mine === current) main.removeAttribute("aria-busy");
  }
}

window.addEventListener("trove:unauthorized", () => {
  clearToken();
  signInView("The token was refused: it may have been revoked. Paste a valid one.");
});

document.getElementById("sign-out").addEventListener("click", () => {
  clearToken();
  history.replaceState(null, "", `${location.pathname}#/items`);
  signInView();
});

window.addEventListener("hashchange", () => {
  if (takeTokenFromUrl()) return route();
  route();
});

/** Re-renders the current page (after a change made on it). */
export function refresh() {
  return route();
}

takeTokenFromUrl();
route();
