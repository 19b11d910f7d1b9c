// @ts-check
// The page's entry: sign-in, the router over `#/...` and the header.

import { api, ApiError, capabilities, forgetCapabilities } from "./api.js";
import { setRenderer } from "./router.js";
import { h, field, clearMessages, showError, runGoing, date } from "./ui.js";
import { inventoryView } from "./views/inventory.js";
import { itemView } from "./views/item.js";
import { itemFormView } from "./views/item-form.js";
import { projectsView, projectView } from "./views/projects.js";
import { packView } from "./views/pack.js";
import { sellListView, sellItemView } from "./views/selling.js";
import { intakeView } from "./views/intake.js";
import { spendView } from "./views/spend.js";
import { valueView } from "./views/value.js";
import { placesView, placeView } from "./views/places.js";
import { scanView } from "./views/scan.js";
import { householdView, tokensView } from "./views/people.js";
import { activityView } from "./views/history.js";
import { lentView, dueView, refreshDueBadge } from "./views/lending.js";
import { passkeysSupported, signInWithPasskey, signUpWithPasskey } from "./passkeys.js";

const main = document.getElementById("main");

/**
 * The routes: a pattern over the path after `#`, the view that renders into `main`, and the nav section it is in.
 * @type {Array<[RegExp, (m: RegExpMatchArray, q: URLSearchParams) => Promise<Node>, string]>}
 */
const routes = [
  [/^\/items\/new$/, () => itemFormView(null), "items"],
  [/^\/items\/(\d+)\/edit$/, (m) => itemFormView(+m[1]), "items"],
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
  [/^\/value$/, (m, q) => valueView(q), "value"],
  [/^\/activity$/, (m, q) => activityView(q), "activity"],
  [/^\/lent$/, () => lentView(signedInMember()), "lent"],
  [/^\/due$/, (m, q) => dueView(q, signedInMember()), "due"],
  [/^\/household$/, () => householdView(signedInMember()), "household"],
  [/^\/tokens$/, () => tokensView(), "tokens"],
];

/** Who is signed in (`GET /api/me`): `{member, household}`, or null before sign-in. */
let me = null;

/** The signed-in member, for views that show or hide what only some roles may do. */
export function signedInMember() {
  return me?.member ?? null;
}

function signedIn(who) {
  me = who;
  document.getElementById("nav").hidden = !who;
  document.getElementById("menu").hidden = !who;
  document.getElementById("sign-out").hidden = !who;
  closeMenu();
  const badge = document.getElementById("who");
  badge.hidden = !who;
  badge.textContent = who ? `${who.member.name} · ${who.member.role}` : "";
  if (who) {
    document.body.dataset.role = who.member.role;
    document.body.dataset.member = String(who.member.id);
  } else {
    delete document.body.dataset.role;
    delete document.body.dataset.member;
  }
  const household = /** @type {HTMLElement | null} */ (document.querySelector('#nav a[data-section="household"]'));
  if (household) household.hidden = who?.member.role !== "owner";
  // Intake only writes: a viewer is not offered it.
  const intake = /** @type {HTMLElement | null} */ (document.querySelector('#nav a[data-section="intake"]'));
  if (intake) intake.hidden = who?.member.role === "viewer";
  if (who) {
    capabilities();
    refreshDueBadge();
  } else forgetCapabilities();
}

/** The header's menu button: on a phone the sections are behind it (on a wide screen the nav shows whole). */
const menu = document.getElementById("menu");
function closeMenu() {
  menu.setAttribute("aria-expanded", "false");
  document.querySelector("header.top").classList.remove("menu-open");
}
menu.addEventListener("click", () => {
  const open = menu.getAttribute("aria-expanded") !== "true";
  menu.setAttribute("aria-expanded", String(open));
  document.querySelector("header.top").classList.toggle("menu-open", open);
  if (open) /** @type {HTMLElement | null} */ (document.querySelector("#nav a:not([hidden])"))?.focus();
});
document.getElementById("nav").addEventListener("keydown", (e) => {
  if (e.key === "Escape" && menu.getAttribute("aria-expanded") === "true") {
    closeMenu();
    menu.focus();
  }
});

/** Asks the server who the session cookie belongs to; null when there is none or it ended. */
async function whoAmI() {
  try {
    return await api("/me");
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) return null;
    throw err;
  }
}

/**
 * A name and password form (sign-in, or sign-up from an invitation); `submit(name, password)` does the rest.
 * @param {{ title: string, intro: any, button: string, newPassword?: boolean, reason?: string, submit: (name: string, password: string) => Promise<any> }} options
 */
function credentialsForm({ title, intro, button, newPassword = false, reason = undefined, submit }) {
  const name = h("input", { name: "name", autocomplete: "username", required: true, maxlength: 64, spellcheck: "false" });
  const password = h("input", {
    name: "password",
    type: "password",
    autocomplete: newPassword ? "new-password" : "current-password",
    required: true,
    minlength: newPassword ? 12 : null,
  });
  const out = h("div", { class: "out" });
  const form = h(
    "form",
    { class: "card narrow", "aria-labelledby": "auth-title", "data-read": "" },
    h("h1", { id: "auth-title" }, title),
    reason ? h("p", { class: "message error", role: "alert" }, reason) : null,
    h("p", {}, ...intro),
    field("Name", name),
    field("Password", password, newPassword ? "At least 12 characters." : null),
    h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, button)),
    out,
  );
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    try {
      await submit(name.value.trim(), password.value);
      password.value = "";
      signedIn(await whoAmI());
      location.hash = "#/items";
      route();
    } catch (err) {
      showError(err, out);
    }
  });
  return { form, focus: () => name.focus() };
}

/**
 * Adds a passkey choice to a name and password form: `label` on a button that runs `act(name)` with the form's
 * name (the password is not needed), then opens the inventory signed in. Nothing is added where the browser
 * cannot use passkeys (not a secure context).
 */
function passkeyChoice(form, text, label, act) {
  if (!passkeysSupported()) return;
  const name = form.querySelector('input[name="name"]');
  const out = form.querySelector(".out");
  const button = h("button", { type: "button", class: "passkey" }, label);
  button.addEventListener("click", async () => {
    if (!name.value.trim()) {
      name.reportValidity();
      name.focus();
      return;
    }
    button.disabled = true;
    try {
      await act(name.value.trim());
      signedIn(await whoAmI());
      location.hash = "#/items";
      route();
    } catch (err) {
      showError(err, out);
    } finally {
      button.disabled = false;
    }
  });
  out.before(h("div", { class: "passkey-choice" }, h("p", {}, text), h("div", { class: "actions" }, button)));
}

/** How one signs in here (`GET /api/session/options`): `{passwords, sso}`, asked once. */
let signInOptions = null;
async function howToSignIn() {
  if (!signInOptions) {
    try {
      signInOptions = await api("/session/options");
    } catch {
      return { passwords: true, sso: null };
    }
  }
  return signInOptions;
}

/**
 * Adds single sign-on to a sign-in or join form, first: a link that sends the browser to the OpenID provider
 * (`start`, with the invitation's code when joining). Without passwords (`TROVE_OIDC_ONLY`), the form's password
 * and its button go, and its name stays only for a passkey.
 */
function singleSignOn(form, options, label, start) {
  if (!options.passwords) {
    form.querySelector('input[name="password"]')?.closest(".field, label")?.remove();
    form.querySelector('button[type="submit"]')?.closest(".actions")?.remove();
    if (!passkeysSupported()) form.querySelector('input[name="name"]')?.closest(".field, label")?.remove();
  }
  if (!options.sso) return;
  const link = h("a", { class: "button primary sso", href: start, "data-read": "" }, `${label} ${options.sso}`);
  form.querySelector("h1").after(h("div", { class: "sso-choice actions" }, link));
}

async function signInView(reason) {
  signedIn(null);
  shownPath = "";
  document.title = "Sign in · Trove";
  const { form, focus } = credentialsForm({
    title: "Sign in to Trove",
    intro: ["Sign in with the name and password you chose when you joined. New here? Open the invitation link a household owner sent you (", h("code", {}, "trove invite"), " makes one)."],
    button: "Sign in",
    reason,
    submit: (name, password) => api("/session", { method: "POST", body: { name, password } }),
  });
  passkeyChoice(form, "Or, with your name only, use a passkey you made for this Trove.", "Sign in with a passkey", signInWithPasskey);
  singleSignOn(form, await howToSignIn(), "Sign in with", "/api/session/oidc/start");
  main.replaceChildren(form);
  main.dataset.view = "#/sign-in";
  focus();
}

/** What each role may do, as the join page tells the person invited. */
const ROLE_MEANS = {
  owner: "an owner: everything, and the household's people",
  member: "a member: the inventory, projects, intake and pricing",
  viewer: "a viewer: you can look at everything, and change nothing",
};

async function joinView(code) {
  signedIn(null);
  shownPath = "";
  document.title = "Join · Trove";
  // Before the form: which household and role the link is for, or at once that it cannot be used any more.
  let offer = null;
  try {
    offer = await api(`/invitations/offer/${encodeURIComponent(code)}`);
  } catch (err) {
    if (err instanceof ApiError && (err.status === 410 || err.status === 404)) {
      const gone = err.status === 404 ? "This invitation link is not known here: check that it was copied whole." : `This invitation link cannot be used: ${err.message}.`;
      main.replaceChildren(
        h(
          "div",
          { class: "card narrow join-gone" },
          h("h1", { tabindex: "-1" }, "This invitation cannot be used"),
          h("p", { class: "message error" }, gone),
          h("p", {}, "An invitation link works once, for 7 days. Ask the household's owner for a new one, or ", h("a", { href: "#/items" }, "sign in"), " if you joined already."),
        ),
      );
      main.dataset.view = location.hash;
      main.querySelector("h1").focus();
      return;
    }
    // The server could not say: the form is offered, and accepting explains any refusal.
    offer = null;
  }
  const { form, focus } = credentialsForm({
    title: "Join a household",
    intro: offer
      ? [
          "You are invited to join ",
          h("strong", { class: "join-household" }, offer.household),
          ` as ${ROLE_MEANS[offer.role] || offer.role}. The link works until ${date(offer.expires_at)}. Pick the name you will sign in with (unique on this Trove) and a password.`,
        ]
      : ["Pick the name you will sign in with (unique on this Trove) and a password."],
    button: "Join",
    newPassword: true,
    submit: (name, password) => api("/invitations/accept", { method: "POST", body: { code, name, password } }),
  });
  passkeyChoice(
    form,
    "Or join without a password: this phone or computer (or your security key) makes a passkey for this Trove, unlocked the way you unlock the device.",
    "Create a passkey",
    (name) => signUpWithPasskey(code, name),
  );
  singleSignOn(form, await howToSignIn(), "Join with", `/api/session/oidc/start?invitation=${encodeURIComponent(code)}`);
  main.replaceChildren(form);
  main.dataset.view = location.hash;
  focus();
}

/**
 * Viewers write nothing: every button and form a view draws is removed for them, except those marked
 * `data-read` (filters, search, printing, copying), so a forgotten mark hides a control rather than showing one.
 */
function readOnly(node) {
  if (me?.member.role !== "viewer") return;
  for (const el of node.querySelectorAll("form:not([data-read]), button:not([data-read]), .bulk-bar, input[name=select], #select-all")) {
    if (el.tagName === "BUTTON" && el.closest("form[data-read]")) continue;
    el.remove();
  }
}

let current = 0;

/** The path (without its query) of the page shown: a new path moves focus to its heading, a redraw keeps it. */
let shownPath = null;

async function route() {
  clearMessages();
  closeMenu();
  const join = location.hash.match(/^#\/join\/([A-Za-z0-9_-]+)$/);
  if (join) return joinView(join[1]);
  // Single sign-on refused (the server sent the browser back with the reason).
  const refused = location.hash.match(/^#\/sign-in\/refused\?why=(.*)$/);
  if (refused) {
    history.replaceState(null, "", "#/items");
    return signInView(`Not signed in: ${decodeURIComponent(refused[1])}.`);
  }
  if (!me) {
    const who = await whoAmI().catch(() => null);
    if (!who) return signInView();
    signedIn(who);
  }
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
  for (const a of /** @type {NodeListOf<HTMLElement>} */ (document.querySelectorAll("#nav a"))) {
    if (a.dataset.section === section) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
  const mine = ++current;
  main.setAttribute("aria-busy", "true");
  try {
    const node = await view(path.match(re), params);
    if (mine !== current) return; // A later navigation won.
    readOnly(node);
    // A redraw of the same page (a filter applied, a change saved) gives focus back to the control that had it.
    const focused = /** @type {HTMLInputElement | null} */ (main.contains(document.activeElement) ? document.activeElement : null);
    // By name first: the ids of labelled controls are made afresh with each drawing.
    const again = focused && (focused.name ? `[name="${CSS.escape(focused.name)}"]` : focused.id ? `#${CSS.escape(focused.id)}` : null);
    main.replaceChildren(node);
    // Which address this content is for: tests (and scripts) wait on it rather than on time.
    main.dataset.view = location.hash;
    const heading = main.querySelector("h1");
    document.title = heading ? `${heading.textContent} · Trove` : "Trove";
    const first = shownPath === null;
    const samePage = path === shownPath;
    shownPath = path;
    if (samePage) {
      if (again) /** @type {HTMLElement | null} */ (main.querySelector(again))?.focus();
    } else if (!first && heading) {
      // A new page: its heading takes focus, so a screen reader says where the person is now.
      heading.setAttribute("tabindex", "-1");
      heading.focus();
    }
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
  if (me) signInView("Your session ended (signed out elsewhere, or by the household's owner). Sign in again.");
});

document.getElementById("sign-out").addEventListener("click", async () => {
  try {
    await api("/session/logout", { method: "POST" });
  } catch {
    // Signed out already: the sign-in page is right either way.
  }
  history.replaceState(null, "", `${location.pathname}#/items`);
  signInView();
});

/** What leaving during a model run would lose, asked before the page is left. */
const LEAVE_DURING_RUN = "The model is still working on your request. Leave this page? Its answer would be lost, and the call is billed either way.";

window.addEventListener("hashchange", (e) => {
  if (runGoing() && e.oldURL && !window.confirm(LEAVE_DURING_RUN)) {
    // Stay: the address goes back to this page's, and the page (with its run) is left as it is.
    history.replaceState(null, "", e.oldURL);
    return;
  }
  route();
});

window.addEventListener("beforeunload", (e) => {
  if (!runGoing()) return;
  e.preventDefault();
  e.returnValue = LEAVE_DURING_RUN;
});

setRenderer(route);
route();
