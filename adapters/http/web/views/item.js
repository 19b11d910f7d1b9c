// @ts-check
// One item: its current fields and history, faults, tests, accessories, components, and the forms that change it.

import { api, rememberName } from "../api.js";
import { breadcrumbs, labelsButton, placeOptions } from "./places.js";
import { gallery } from "./gallery.js";
import { historySection } from "./history.js";
import { lendingSections } from "./lending.js";
import {
  h,
  field,
  select,
  human,
  badge,
  quantity,
  money,
  date,
  day,
  flash,
  showError,
  mayWrite,
  formValues,
  section,
  itemLink,
  CONDITIONS,
  INTENTS,
  SEVERITIES,
  SOURCES,
  GONE_REASONS,
} from "../ui.js";

/** What each kind of code is, as a code's tooltip says. */
const CODE_NAMES = { gtin: "EAN / UPC (GTIN)", isbn: "ISBN", other: "Own code" };

/** The household's places as select options, read when the item page opens. */
let knownPlaces = [];

/** The item's photos and papers: drawn once when the page opens, kept as it is when a form re-renders the rest. */
let itemGallery = null;

export async function itemView(id) {
  const [item, places, pictures] = await Promise.all([/** @type {Promise<import("../api.js").Item>} */ (api(`/items/${id}`)), placeOptions(), gallery(id)]);
  knownPlaces = places;
  itemGallery = pictures;
  rememberName(item);
  const root = h("div", { class: "view item" });
  render(root, item);
  return root;
}

/** Submits a form's change, then re-renders the item from the answer. */
function onSubmit(form, root, work, done) {
  const out = h("div", { class: "out" });
  form.append(out);
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const button = form.querySelector("button[type=submit]");
    button.disabled = true;
    try {
      const item = await work(formValues(form));
      flash(done, "ok");
      render(root, item);
      root.querySelector("h1")?.focus();
    } catch (err) {
      showError(err, out);
    } finally {
      button.disabled = false;
    }
  });
  return form;
}

function render(root, item) {
  const id = item.id;
  const post = (what) => (body) => api(`/items/${id}/${what}`, { method: "POST", body });

  const details = h(
    "dl",
    { class: "details" },
    h("dt", {}, "Type"),
    h("dd", {}, human(item.item_type)),
    h("dt", {}, "Profile"),
    h("dd", {}, item.profile || "—"),
    h("dt", {}, "Condition"),
    h("dd", {}, human(item.condition)),
    h("dt", {}, "Intent"),
    h("dd", {}, badge(item.intent)),
    h("dt", {}, "Availability"),
    h(
      "dd",
      {},
      badge(item.availability),
      item.project_id ? [" in ", h("a", { href: `#/projects/${item.project_id}` }, `project ${item.project_id}`)] : null,
    ),
    h("dt", {}, "Place"),
    h("dd", {}, item.place ? breadcrumbs(item.place.path) : "—"),
    h("dt", {}, "Quantity"),
    h(
      "dd",
      { class: "quantity-line" },
      String(item.quantity),
      item.min_quantity != null ? ` (low at ${item.min_quantity})` : null,
      item.quantity !== 1
        ? ` · ${item.units_held} held by projects, ${item.units_lent ? `${item.units_lent} lent, ` : ""}${item.units_available} free`
        : null,
      item.low_stock ? [" ", badge("low stock", "low")] : null,
    ),
    item.tags.length ? [h("dt", {}, "Tags"), h("dd", { class: "tags" }, item.tags.map((t) => h("a", { class: "tag", href: `#/items?tag=${encodeURIComponent(t)}` }, t)))] : null,
    item.codes.length
      ? [
          h("dt", {}, item.codes.length === 1 ? "Code" : "Codes"),
          h(
            "dd",
            { class: "codes" },
            item.codes.map((c, n) => [n ? ", " : null, h("code", { title: CODE_NAMES[c.kind] || c.kind }, c.value)]),
          ),
        ]
      : null,
    item.serial ? [h("dt", {}, "Serial"), h("dd", {}, item.serial)] : null,
    item.purchase
      ? [
          h("dt", {}, "Bought"),
          h(
            "dd",
            {},
            [item.purchase.date, item.purchase.price != null ? money(item.purchase.price, item.purchase.currency) : null, item.purchase.vendor]
              .filter(Boolean)
              .join(", "),
          ),
        ]
      : null,
    item.warranty_until ? [h("dt", {}, "Warranty until"), h("dd", {}, item.warranty_until)] : null,
    item.asking_price ? [h("dt", {}, "Asking price"), h("dd", {}, money(item.asking_price.amount, item.asking_price.currency))] : null,
    item.notes ? [h("dt", {}, "Notes"), h("dd", { class: "notes" }, item.notes)] : null,
    item.gone ? [h("dt", {}, "Gone"), h("dd", {}, `${human(item.gone.reason)} on ${day(item.gone.at)}${item.gone.note ? `: ${item.gone.note}` : ""}`)] : null,
    h("dt", {}, "Added"),
    h("dd", {}, date(item.created_at)),
  );

  const fields = Object.entries(item.fields);
  const current = section(
    "Current fields",
    fields.length
      ? h("dl", { class: "fields" }, fields.map(([k, v]) => [h("dt", {}, human(k)), h("dd", {}, quantity(v, k))]))
      : h("p", { class: "empty" }, "No measurement yet."),
  );

  const history = section(
    "Measurement history",
    item.measurements.length
      ? h(
          "div",
          { class: "table-wrap" },
          h(
            "table",
            {},
            h("thead", {}, h("tr", {}, ["Key", "Value", "Source", "When"].map((c) => h("th", { scope: "col" }, c)))),
            h(
              "tbody",
              {},
              [...item.measurements]
                .reverse()
                .map((m) => h("tr", {}, h("td", {}, human(m.key)), h("td", {}, quantity(m, m.key)), h("td", {}, m.source), h("td", {}, date(m.at)))),
            ),
          ),
        )
      : h("p", { class: "empty" }, "None."),
    onSubmit(
      h(
        "form",
        { class: "inline-form", "aria-label": "Add a measurement" },
        h("h3", {}, "Add a measurement"),
        field("Key", h("input", { name: "key", required: true, placeholder: "capacity" })),
        field("Value", h("input", { name: "value", required: true, type: "number", step: "any", inputmode: "decimal" })),
        field("Unit", h("input", { name: "unit", required: true, placeholder: "mAh, V, GB…" })),
        field("Source", select("source", SOURCES, "manual")),
        h("button", { type: "submit" }, "Add measurement"),
      ),
      root,
      (v) => post("measurements")({ ...v, value: Number(v.value) }),
      "Measurement added.",
    ),
  );

  const faults = section(
    "Faults",
    item.faults.length
      ? h("ul", { class: "faults" }, item.faults.map((f) => h("li", {}, badge(f.severity, `sev-${f.severity}`), " ", f.text)))
      : h("p", { class: "empty" }, "No known fault."),
    onSubmit(
      h(
        "form",
        { class: "inline-form", "aria-label": "Add a fault" },
        h("h3", {}, "Add a fault"),
        field("Fault", h("input", { name: "text", required: true, placeholder: "what is wrong" })),
        field("Severity", select("severity", SEVERITIES, "minor")),
        h("button", { type: "submit" }, "Add fault"),
      ),
      root,
      post("faults"),
      "Fault recorded.",
    ),
  );

  const tests = section(
    "Tests",
    item.tests_done.length
      ? h(
          "div",
          { class: "table-wrap" },
          h(
            "table",
            {},
            h("thead", {}, h("tr", {}, ["Test", "Result", "Value", "Note", "When"].map((c) => h("th", { scope: "col" }, c)))),
            h(
              "tbody",
              {},
              item.tests_done.map((t) =>
                h(
                  "tr",
                  {},
                  h("td", {}, t.name),
                  h("td", {}, badge(t.result)),
                  h("td", {}, t.value ? quantity(t.value) : ""),
                  h("td", {}, t.note || ""),
                  h("td", {}, date(t.at)),
                ),
              ),
            ),
          ),
        )
      : h("p", { class: "empty" }, "No test recorded."),
    onSubmit(
      h(
        "form",
        { class: "inline-form", "aria-label": "Add a test" },
        h("h3", {}, "Add a test"),
        field("Test", h("input", { name: "name", required: true, placeholder: "boots, holds charge…" })),
        field("Result", select("result", ["pass", "fail"], "pass")),
        field("Test value (optional)", h("input", { name: "value", type: "number", step: "any", inputmode: "decimal" })),
        field("Test unit", h("input", { name: "unit", placeholder: "V" })),
        field("Test note", h("input", { name: "note" })),
        h("button", { type: "submit" }, "Add test"),
      ),
      root,
      (v) => post("tests")(v.value !== undefined ? { ...v, value: Number(v.value) } : v),
      "Test recorded.",
    ),
  );

  const accessoryInput = h("input", { name: "accessory", required: true, placeholder: "USB-C cable" });
  const accessories = section(
    "Accessories",
    item.accessories.length ? h("ul", {}, item.accessories.map((a) => h("li", {}, a))) : h("p", { class: "empty" }, "None."),
    onSubmit(
      h("form", { class: "inline-form", "aria-label": "Add an accessory" }, field("Accessory", accessoryInput), h("button", { type: "submit" }, "Add accessory")),
      root,
      (v) => api(`/items/${id}`, { method: "PATCH", body: { accessories: [...item.accessories, v.accessory] } }),
      "Accessory added.",
    ),
  );

  const components = section(
    "Components",
    item.components.length
      ? h("ul", {}, item.components.map((c) => h("li", {}, itemLink(c))))
      : h("p", { class: "empty" }, "Not made of other items."),
  );

  const change = !mayWrite() ? null : section(
    "Change",
    onSubmit(
      h(
        "form",
        { class: "inline-form", "aria-label": "Change intent, condition, location" },
        field("Intent", select("intent", INTENTS, item.intent)),
        field("Condition", select("condition", CONDITIONS, item.condition)),
        field(
          "Availability",
          select("availability", ["available", "lent"].includes(item.availability) ? ["available", "lent"] : [item.availability], item.availability, {
            disabled: !["available", "lent"].includes(item.availability),
          }),
          "Reserving and building go through projects.",
        ),
        field("Place", select("place_id", [["", "(no place)"], ...knownPlaces], item.place_id ? String(item.place_id) : "")),
        h("button", { type: "submit", class: "primary" }, "Save changes"),
      ),
      root,
      (v) => {
        const body = { intent: v.intent, condition: v.condition };
        if (v.availability) body.availability = v.availability;
        const place = v.place_id ? +v.place_id : null;
        if (place !== (item.place_id ?? null)) body.place_id = place;
        return api(`/items/${id}`, { method: "PATCH", body });
      },
      "Saved.",
    ),
  );

  const gone = item.gone || !mayWrite()
    ? null
    : section(
        "Mark gone",
        h("p", {}, "A gone item stays as history and is never used again."),
        onSubmit(
          h(
            "form",
            { class: "inline-form", "aria-label": "Mark gone" },
            field("Reason", select("reason", GONE_REASONS, item.intent === "give" ? "given" : "sold")),
            field("Note", h("input", { name: "note" })),
            h("button", { type: "submit", class: "danger" }, "Mark gone"),
          ),
          root,
          post("gone"),
          "Marked gone.",
        ),
      );

  // A value set by hand (a valuation, a replacement quote): the item's current value in the value report until a
  // newer estimate. Amounts are typed in major units, as people write them.
  const currencyOf = item.purchase?.currency || item.asking_price?.currency || "";
  const value = item.gone || !mayWrite()
    ? null
    : section(
        "What it is worth",
        h("p", {}, "What one unit is worth now, for the ", h("a", { href: "#/value" }, "value report"), "."),
        onSubmit(
          h(
            "form",
            { class: "inline-form", "aria-label": "Set the value by hand" },
            field("Amount", h("input", { name: "amount", type: "number", min: "0", step: "0.01", inputmode: "decimal", required: "" })),
            field("Currency", h("input", { name: "currency", value: currencyOf, placeholder: "EUR", maxlength: "3", size: "4", required: "", autocapitalize: "characters" })),
            h("button", { type: "submit" }, "Set value"),
          ),
          root,
          async (v) => {
            const body = { amount: Math.round(Number(v.amount) * 100), currency: String(v.currency).trim().toUpperCase() };
            await api(`/items/${id}/value`, { method: "PUT", body });
            return item;
          },
          "Value saved.",
        ),
      );

  const sellLink =
    item.intent === "keep"
      ? null
      : h("a", { class: "button", href: `#/items/${id}/sell` }, item.intent === "sell" ? "Price and draft the listing" : "Give-away post");

  root.replaceChildren(
    ...[
    h("p", { class: "crumbs" }, h("a", { href: "#/items" }, "← Inventory")),
    h(
      "div",
      { class: "title-row" },
      h("h1", { tabindex: "-1" }, item.name),
      h(
        "div",
        { class: "title-actions" },
        mayWrite() && !item.gone ? h("a", { class: "button primary", href: `#/items/${id}/edit` }, "Edit") : null,
        labelsButton("Print label", { items: [id] }),
        sellLink,
      ),
    ),
    item.gone ? h("p", { class: "message info" }, `This item is gone (${human(item.gone.reason)}).`) : null,
    h("div", { class: "grid" }, section("Details", details), current, change),
    h("div", { class: "grid" }, ...lendingSections(item, (fresh) => render(root, fresh)).filter(Boolean)),
    itemGallery,
    h("div", { class: "grid" }, faults, tests),
    history,
    h("div", { class: "grid" }, accessories, components, value, gone),
    historySection(id, async () => render(root, await api(`/items/${id}`))),
    ].filter(Boolean),
  );
}
