// @ts-check
// An item typed in by hand: "New item" (`#/items/new`) and an item's "Edit" (`#/items/ID/edit`). Every field of
// the item a person may set, with the server's refusal shown next to the field it names. Works with no model.

import { api, rememberName } from "../api.js";
import { placeOptions } from "./places.js";
import { h, field, select, human, flashNext, showError, CONDITIONS, INTENTS } from "../ui.js";

/** Currencies without minor units: their prices are typed and kept whole. */
const WHOLE = new Set(["JPY", "KRW", "CLP", "ISK", "VND", "HUF", "TWD", "UGX", "XAF", "XOF"]);

/** A price typed in major units ("45.99") as the API's minor units, or null when blank. */
function minor(text, currency) {
  const t = String(text || "").trim().replace(",", ".");
  if (!t) return null;
  const n = Number(t);
  if (!Number.isFinite(n)) return NaN;
  return Math.round(n * (WHOLE.has(String(currency || "").toUpperCase()) ? 1 : 100));
}

/** Minor units as typed text ("4599" -> "45.99"). */
function major(amount, currency) {
  if (amount == null) return "";
  return WHOLE.has(String(currency || "").toUpperCase()) ? String(amount) : (amount / 100).toFixed(2);
}

/** The default currency: the last one typed on this device, else the locale's guess. */
function defaultCurrency() {
  return localStorage.getItem("trove.currency") || "EUR";
}

/** An input with a name and a value (or empty). */
function input(name, value, attrs = {}) {
  return h("input", { name, id: `f-${name}`, value: value ?? "", ...attrs });
}

export async function itemFormView(id) {
  const [item, places, types] = await Promise.all([
    id ? api(`/items/${id}`) : Promise.resolve(null),
    placeOptions(),
    api("/item-types").catch(() => ({ types: [] })),
  ]);
  const editing = !!item;
  const it = item || { condition: "good", intent: "keep", availability: "available", quantity: 1, tags: [], accessories: [], notes: "" };
  const currency = it.purchase?.currency || it.asking_price?.currency || defaultCurrency();

  const fieldRows = h("div", { class: "field-rows" });
  const addFieldRow = () => {
    const n = fieldRows.children.length;
    fieldRows.append(
      h(
        "div",
        { class: "field-row" },
        h("input", { name: `field_key_${n}`, "aria-label": "Field name", placeholder: "Capacity" }),
        h("input", { name: `field_value_${n}`, "aria-label": "Value", type: "number", step: "any", inputmode: "decimal", placeholder: "3400" }),
        h("input", { name: `field_unit_${n}`, "aria-label": "Unit", placeholder: "mAh" }),
      ),
    );
  };
  if (!editing) addFieldRow();

  // The item's codes: a kind and a value a row, added and removed; the server checks each (a GTIN's or ISBN's
  // check digit) and names the one it refuses by its place in the list.
  const codeRows = h("div", { class: "code-rows" });
  const addCodeRow = (code) => {
    const row = h(
      "div",
      { class: "code-row" },
      h(
        "select",
        { name: "code_kind", "aria-label": "Kind of code" },
        CODE_KINDS.map(([value, label]) => h("option", { value, selected: (code?.kind || "gtin") === value }, label)),
      ),
      h("input", { name: "code_value", "aria-label": "Code", value: code?.value ?? "", inputmode: "text", autocomplete: "off", placeholder: "4006381333931" }),
      h("button", { type: "button", class: "quiet", "aria-label": "Remove this code", onclick: () => row.remove() }, "Remove"),
    );
    codeRows.append(row);
    return row;
  };
  for (const code of it.codes || []) addCodeRow(code);

  // A new item is available; lending and returning are changes of one that exists.
  const manualAvailability = editing && (it.availability === "available" || it.availability === "lent");
  const form = h(
    "form",
    { class: "item-form card", "aria-label": editing ? `Edit ${it.name}` : "New item", novalidate: true },
    h("h2", {}, "What it is"),
    field("Name", input("name", it.name, { required: true, maxlength: 200, autocomplete: "off" })),
    field(
      "Type",
      input("item_type", it.item_type ? human(it.item_type) : "", { required: true, list: "known-types", placeholder: "Power bank", autocomplete: "off" }),
      "In your own words; “Power Bank” and “power bank” are the same type.",
    ),
    h("datalist", { id: "known-types" }, types.types.map((t) => h("option", { value: t.label }, t.items ? `${t.items} held` : ""))),
    field("Profile", h("textarea", { name: "profile", id: "f-profile", rows: 2, maxlength: 1000, placeholder: "Brand, model, key specs" }, it.profile || "")),
    field("Condition", select("condition", CONDITIONS.map((c) => [c, human(c)]), it.condition)),
    field("Intent", select("intent", INTENTS.map((i) => [i, human(i)]), it.intent)),
    manualAvailability ? field("Availability", select("availability", [["available", "Available"], ["lent", "Lent"]], it.availability)) : null,
    field("Place", select("place_id", [["", "nowhere in particular"], ...places], it.place_id ? String(it.place_id) : "")),
    h("h2", {}, "How many"),
    h(
      "div",
      { class: "pair" },
      field("Quantity", input("quantity", it.quantity, { type: "number", min: 0, max: 1000000, step: 1, inputmode: "numeric" })),
      field("Low stock at", input("min_quantity", it.min_quantity, { type: "number", min: 0, max: 1000000, step: 1, inputmode: "numeric", placeholder: "no minimum" })),
    ),
    h("h2", {}, "Notes and tags"),
    field("Tags", input("tags", (it.tags || []).join(", "), { placeholder: "garage, 18 V" }), "Separated by commas; up to 20."),
    field("Notes", h("textarea", { name: "notes", id: "f-notes", rows: 3, maxlength: 4000 }, it.notes || "")),
    field("Serial number", input("serial", it.serial, { maxlength: 100, autocomplete: "off" })),
    field("Accessories", input("accessories", (it.accessories || []).join(", "), { placeholder: "charger, case" }), "Separated by commas."),
    h("h2", {}, "Codes"),
    h("p", { class: "hint" }, "Barcodes on the box (EAN, UPC), an ISBN, or a shop's own code; up to 20."),
    codeRows,
    h("button", { type: "button", class: "quiet", onclick: () => addCodeRow(null).querySelector("input")?.focus() }, "Add a code"),
    editing ? null : [h("h2", {}, "Measured fields"), fieldRows, h("button", { type: "button", class: "quiet", onclick: addFieldRow }, "Add a field")],
    h("h2", {}, "Bought and covered"),
    h(
      "div",
      { class: "pair" },
      field("Bought on", input("purchase_date", it.purchase?.date, { type: "date" })),
      field("Price paid", input("purchase_price", major(it.purchase?.price, currency), { inputmode: "decimal", placeholder: "45.99" })),
    ),
    h(
      "div",
      { class: "pair" },
      field("Currency", input("currency", currency, { maxlength: 3, autocapitalize: "characters", placeholder: "EUR" })),
      field("Bought from", input("purchase_vendor", it.purchase?.vendor, { maxlength: 200 })),
    ),
    field("Warranty until", input("warranty_until", it.warranty_until, { type: "date" })),
    field("Asking price", input("asking_price", major(it.asking_price?.amount, currency), { inputmode: "decimal", placeholder: "no price set" }), "Set by hand; listing drafts use it before any estimate."),
    h(
      "div",
      { class: "actions thumb-bar" },
      h("button", { type: "submit", class: "primary" }, editing ? "Save changes" : "Add item"),
      h("a", { class: "button quiet", href: editing ? `#/items/${it.id}` : "#/items" }, "Cancel"),
    ),
  );
  const out = h("div", { class: "out", role: "status" });
  form.append(out);

  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    for (const el of form.querySelectorAll(".field-error")) el.remove();
    for (const el of form.querySelectorAll("[aria-invalid]")) el.removeAttribute("aria-invalid");
    out.replaceChildren();
    const d = new FormData(form);
    const text = (k) => String(d.get(k) ?? "").trim();
    const list = (k) => text(k).split(",").map((s) => s.trim()).filter(Boolean);
    const cur = text("currency").toUpperCase();
    if (cur) localStorage.setItem("trove.currency", cur);
    const number = (k) => (text(k) === "" ? null : Number(text(k)));
    const paid = minor(text("purchase_price"), cur);
    const asking = minor(text("asking_price"), cur);
    const purchase =
      text("purchase_date") || paid != null || text("purchase_vendor")
        ? { date: text("purchase_date") || null, price: paid, currency: paid != null ? cur : null, vendor: text("purchase_vendor") || null }
        : null;
    const body = {
      name: text("name"),
      item_type: text("item_type"),
      profile: text("profile"),
      condition: text("condition"),
      intent: text("intent"),
      place_id: text("place_id") ? Number(text("place_id")) : null,
      quantity: number("quantity") ?? 1,
      min_quantity: number("min_quantity"),
      tags: list("tags"),
      codes: [...codeRows.querySelectorAll(".code-row")]
        .map((row) => ({
          kind: /** @type {HTMLSelectElement} */ (row.querySelector("select")).value,
          value: /** @type {HTMLInputElement} */ (row.querySelector("input")).value.trim(),
        }))
        .filter((c) => c.value),
      notes: text("notes"),
      serial: text("serial") || null,
      accessories: list("accessories"),
      purchase,
      warranty_until: text("warranty_until") || null,
      asking_price: asking == null ? null : { amount: asking, currency: cur },
    };
    if (d.has("availability")) body.availability = text("availability");
    if (!editing) {
      const fields = {};
      for (let n = 0; d.has(`field_key_${n}`); n++) {
        const key = text(`field_key_${n}`);
        if (!key) continue;
        fields[key] = { value: Number(text(`field_value_${n}`)), unit: text(`field_unit_${n}`) };
      }
      body.fields = fields;
      if (body.place_id == null) delete body.place_id;
    }
    const button = form.querySelector("button[type=submit]");
    button.disabled = true;
    try {
      const saved = editing
        ? await api(`/items/${it.id}`, { method: "PATCH", body })
        : await api("/items", { method: "POST", body });
      rememberName(saved);
      flashNext(editing ? `Saved “${saved.name}”.` : `Added “${saved.name}”.`, "ok");
      location.hash = `#/items/${saved.id}`;
    } catch (err) {
      showError(err, out);
      markField(form, String(err?.message || ""));
    } finally {
      button.disabled = false;
    }
  });

  return h(
    "div",
    { class: "view item-form-view" },
    h("h1", { tabindex: "-1" }, editing ? `Edit ${it.name}` : "New item"),
    form,
  );
}

/** The kinds of code, as the select offers them. */
const CODE_KINDS = [
  ["gtin", "EAN / UPC"],
  ["isbn", "ISBN"],
  ["other", "Other"],
];

/** The inputs a refusal's first word names ("purchase.currency ..." names the currency), marked and explained. */
const NAMED = {
  name: "name",
  item_type: "item_type",
  profile: "profile",
  quantity: "quantity",
  min_quantity: "min_quantity",
  tags: "tags",
  "a tag": "tags",
  "an item has at most": "tags",
  notes: "notes",
  serial: "serial",
  accessories: "accessories",
  "purchase.date": "purchase_date",
  "purchase.currency": "currency",
  "purchase.price": "purchase_price",
  "purchase.amount": "purchase_price",
  "purchase.vendor": "purchase_vendor",
  purchase: "purchase_price",
  warranty_until: "warranty_until",
  "asking_price.currency": "currency",
  asking_price: "asking_price",
  fields: "field_key_0",
  "field ": "field_key_0",
};

function markField(form, message) {
  const key = Object.keys(NAMED)
    .filter((k) => message.startsWith(k))
    .sort((a, b) => b.length - a.length)[0];
  // "codes[1]: ..." names the second code given: the second filled row (blank rows are not sent).
  const nth = /^codes\[(\d+)\]/.exec(message);
  const filled = [...form.querySelectorAll('[name="code_value"]')].filter((i) => /** @type {HTMLInputElement} */ (i).value.trim());
  const control = nth ? filled[Number(nth[1])] : key ? form.querySelector(`[name="${NAMED[key]}"]`) : null;
  if (!control) return;
  control.setAttribute("aria-invalid", "true");
  const note = h("p", { class: "field-error", id: `${control.id || control.name}-error` }, message);
  control.setAttribute("aria-describedby", note.id);
  control.closest(".field, .field-row, .code-row")?.append(note);
  control.focus();
}
