// @ts-check
// Small DOM helpers shared by the views: building elements, messages, progress, copying, formatting.

import { ApiError, itemName, megabytes } from "./api.js";

export { megabytes };

/**
 * Builds an element: `h("a", {href: "#/items"}, "Inventory")`. Attributes starting with `on` are listeners;
 * `class`, `for`, booleans, `dataset` and `style` (an object of CSSOM properties) are handled; children may be
 * strings, nodes, arrays or null.
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on") && typeof v === "function") el.addEventListener(k.slice(2), v);
    else if (k === "dataset") Object.assign(el.dataset, v);
    // Styles go through the CSSOM: a `style` attribute is inline style, which the page's CSP refuses.
    else if (k === "style") Object.assign(el.style, v);
    else if (k === "value") el.value = v;
    else if (k === "checked") el.checked = !!v;
    else if (v === true) el.setAttribute(k, "");
    else el.setAttribute(k, String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

/** An SVG element (for the chart and the photo regions). */
export function svg(tag, attrs = {}, ...children) {
  const el = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined && v !== null) el.setAttribute(k, String(v));
  for (const c of children.flat()) if (c) el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return el;
}

let uid = 0;
/** A fresh id for pairing a label with its control. */
export function nextId(prefix = "f") {
  uid += 1;
  return `${prefix}-${uid}`;
}

/** A labelled control: `field("Name", h("input", {name: "name"}))`. */
export function field(label, control, hint) {
  if (!control.id) control.id = nextId(control.name || "f");
  const hintEl = hint ? h("small", { class: "hint", id: `${control.id}-hint` }, hint) : null;
  if (hintEl) control.setAttribute("aria-describedby", hintEl.id);
  return h("div", { class: "field" }, h("label", { for: control.id }, label), control, hintEl);
}

/** A select with the given options (values, or [value, text] pairs). */
export function select(name, options, value, attrs = {}) {
  return h(
    "select",
    { name, ...attrs },
    options.map((o) => {
      const [v, t] = Array.isArray(o) ? o : [o, human(o)];
      return h("option", { value: v, selected: v === value }, t);
    }),
  );
}

/** `like_new` -> `like new`. */
export function human(s) {
  return String(s ?? "").replaceAll("_", " ");
}

/**
 * A message at the top of the page: kind is `error`, `ok` or `info`. It stays until dismissed or until the next
 * page is drawn; a new `ok` or `info` message takes the place of the one before. Messages go into one of two
 * live regions made once with the page (`#messages-status`, `#messages-alert`), so each is announced once.
 */
export function flash(text, kind = "info") {
  const polite = document.getElementById("messages-status");
  const urgent = document.getElementById("messages-alert");
  if (kind !== "error") for (const old of polite.querySelectorAll(".message")) old.remove();
  const close = h("button", { type: "button", class: "quiet close", "aria-label": "Dismiss message", "data-read": "" }, "×");
  const msg = h("div", { class: `message ${kind}` }, h("span", {}, text), close);
  close.addEventListener("click", () => msg.remove());
  (kind === "error" ? urgent : polite).append(msg);
  return msg;
}

/**
 * A message about a change that redraws the page (a re-render, or a new address): shown at once, and kept when
 * the page it causes is drawn, so it outlives the redraw; the navigation after that clears it as usual.
 */
export function flashNext(text, kind = "info") {
  const msg = flash(text, kind);
  msg.dataset.keep = "1";
  return msg;
}

/** Clears the messages of the page being left, but those a change on it left for the page it redraws. */
export function clearMessages() {
  for (const msg of /** @type {NodeListOf<HTMLElement>} */ (document.querySelectorAll("#messages .message"))) {
    if (msg.dataset.keep) delete msg.dataset.keep;
    else msg.remove();
  }
}

/** Whether the signed-in member may change things (not a viewer): views leave out what a viewer cannot use. */
export function mayWrite() {
  return document.body.dataset.role !== "viewer";
}

/** Whether `el` is inside a live region, which announces what is put in it (so it needs no role of its own). */
function inLiveRegion(el) {
  return !!el?.closest?.("[aria-live], [role=status], [role=alert], [role=log]");
}

/** Shows an error where it happened (inside `where` if given) and at the top when there is no place for it. */
export function showError(err, where) {
  const text = err instanceof ApiError ? err.explain() : `Something went wrong: ${err.message || err}`;
  if (where) {
    where.replaceChildren(h("p", { class: "message error", role: inLiveRegion(where) ? null : "alert" }, text));
  } else {
    flash(text, "error");
  }
  // An API error is shown to the owner; only unexpected failures belong in the console as errors.
  if (err instanceof ApiError) console.warn(text);
  else console.error(err);
  return text;
}

/** The refusal of a file over `limit` bytes, said before it is sent ("That file is 28 MB; the limit is 25 MB."); null when it fits. */
export function tooLarge(file, limit) {
  if (!file || !limit || file.size <= limit) return null;
  return `That file is ${megabytes(file.size)}; the limit is ${megabytes(limit)}.`;
}

/** The model runs going on now (proposals, pricing, readings): leaving the page warns while there is one. */
let runsGoing = 0;

/** Whether a model run is going on now. */
export function runGoing() {
  return runsGoing > 0;
}

/**
 * Runs `work` while showing a progress indicator in `where` and disabling `button`; for every call that waits for
 * the model (`run`: leaving the page meanwhile asks first, as the result would be lost). Errors are shown in
 * `where`; answers the work's result, or undefined on failure.
 */
export async function withProgress(where, label, work, button, { run = true } = {}) {
  const bar = h("progress", { "aria-label": label });
  const started = Date.now();
  const seconds = h("span", { class: "elapsed" }, "");
  const timer = setInterval(() => {
    seconds.textContent = ` ${Math.round((Date.now() - started) / 1000)} s`;
  }, 1000);
  const text = h("span", { class: "progress-label" }, label);
  where.replaceChildren(h("div", { class: "progress", role: "status", "aria-live": "polite" }, bar, text, seconds));
  where.setAttribute("aria-busy", "true");
  if (button) button.disabled = true;
  if (run) runsGoing += 1;
  try {
    const out = await work((message) => {
      text.textContent = message;
    });
    where.replaceChildren();
    return out;
  } catch (e) {
    showError(e, where);
    return undefined;
  } finally {
    if (run) runsGoing -= 1;
    clearInterval(timer);
    where.removeAttribute("aria-busy");
    if (button) button.disabled = false;
  }
}

/** Copies text; falls back to a hidden textarea where the Clipboard API is not available (plain http). */
export async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    const area = h("textarea", { "aria-hidden": "true", class: "offscreen" }, text);
    document.body.append(area);
    area.select();
    const ok = document.execCommand("copy");
    area.remove();
    return ok;
  }
}

/** A button that copies what `text()` gives and says so. */
export function copyButton(label, text) {
  const b = h("button", { type: "button", class: "copy", "data-read": "" }, label);
  b.addEventListener("click", async () => {
    const ok = await copyText(typeof text === "function" ? text() : text);
    b.textContent = ok ? "Copied" : "Copy failed: select the text";
    setTimeout(() => (b.textContent = label), 2000);
  });
  return b;
}

/** A link to an item, showing its name once known. */
export function itemLink(id, name) {
  const a = h("a", { href: `#/items/${id}` }, name || `item ${id}`);
  if (!name) itemName(id).then((n) => (a.textContent = n));
  return a;
}

/** Money in minor units, e.g. 4550 GBP -> £45.50. */
export function money(minor, currency) {
  if (minor === null || minor === undefined) return "—";
  try {
    return new Intl.NumberFormat(undefined, { style: "currency", currency: currency || "USD" }).format(minor / 100);
  } catch {
    return `${(minor / 100).toFixed(2)} ${currency || ""}`.trim();
  }
}

/** Micro-USD as dollars, with enough digits for small costs. */
export function usd(micro) {
  const d = (micro || 0) / 1e6;
  return `$${d < 1 && d > 0 ? d.toFixed(4) : d.toFixed(2)}`;
}

export function date(iso) {
  if (!iso) return "";
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" });
}

export function day(iso) {
  if (!iso) return "";
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleDateString(undefined, { dateStyle: "medium" });
}

/** `value unit`, with a number trimmed of float noise. */
/** Field kinds read in another unit than the canonical one: a screen's diagonal in inches ("24 in"). */
const DISPLAY_UNITS = [{ key: /(^|_)(screen_size|diagonal)$/, from: "mm", to: "in", per: 25.4 }];

export function quantity(v, key) {
  if (!v) return "";
  let n = Number(v.value);
  let unit = v.unit;
  const display = key && DISPLAY_UNITS.find((d) => d.key.test(key) && d.from === unit);
  if (display) return `${Number((n / display.per).toFixed(1))} ${display.to}`;
  // As people write it (the API keeps canonical units): 0.512 GB is 512 MB, 2000 GB is 2 TB, 1500 g is 1.5 kg.
  const bigger = { GB: "TB", g: "kg", mm: "m", MHz: "GHz", ml: "l" };
  if (unit === "GB" && n !== 0 && Math.abs(n) < 1) [n, unit] = [n * 1000, "MB"];
  else if (bigger[unit] && Math.abs(n) >= 1000) [n, unit] = [n / 1000, bigger[unit]];
  return `${Number.isInteger(n) ? n : Number(n.toPrecision(6))} ${unit}`.trim();
}

/** A status badge. */
export function badge(text, kind) {
  return h("span", { class: `badge ${kind || text}` }, human(text));
}

/** The form's values as an object, leaving out empty strings. */
export function formValues(form) {
  const out = {};
  for (const [k, v] of new FormData(form).entries()) {
    if (typeof v === "string" && v.trim() === "") continue;
    out[k] = typeof v === "string" ? v.trim() : v;
  }
  return out;
}

/** A section with a heading. */
export function section(title, ...children) {
  const id = nextId("sec");
  return h("section", { class: "card", "aria-labelledby": id }, h("h2", { id }, title), ...children);
}

export const CONDITIONS = ["new", "like_new", "good", "fair", "poor", "for_parts"];
export const INTENTS = ["keep", "sell", "give"];
export const AVAILABILITIES = ["available", "reserved", "in_use", "lent"];
export const SEVERITIES = ["minor", "major", "blocking"];
export const SOURCES = ["manual", "test", "label", "listing", "voice", "photo"];
export const GONE_REASONS = ["sold", "given", "recycled", "lost", "other"];

/**
 * A link to a page on the web: only an `http:` or `https:` URL is a link (opened in a new tab, no referrer);
 * any other (`javascript:`, `data:`, none at all) is shown as text, never followed.
 */
export function webLink(url, text) {
  let page = null;
  try {
    const parsed = new URL(url);
    if (parsed.protocol === "http:" || parsed.protocol === "https:") page = parsed.href;
  } catch {
    page = null;
  }
  if (page) return h("a", { href: page, target: "_blank", rel: "noopener noreferrer" }, text);
  return h("span", { class: "not-a-link" }, url ? `${text} (${url})` : text);
}

/** The page on setting up a model backend, served with this page (so it is there offline). */
export const MODEL_DOCS = "/docs/model-backend.html";

/**
 * One line saying a use case needs a model backend, in place of its form: what it needs, that an owner can set one
 * up, and where the docs are. `reason` (the server's, naming the setting) is kept for the owner as the title.
 */
export function needsModel(what, reason) {
  return h(
    "p",
    { class: "message info needs-model", title: reason || null },
    `${what} needs a model backend, which this Trove does not have yet. An owner can set one up: `,
    h("a", { href: MODEL_DOCS, target: "_blank", rel: "noopener noreferrer" }, "how to add a model backend"),
    ".",
  );
}
