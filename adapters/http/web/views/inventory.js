// @ts-check
// The inventory: a table with search, filters and paging; the filters live in the address so Back works.

import { api, apiBlob, download, query, rememberName } from "../api.js";
import { refresh as refreshPage } from "../router.js";
import { h, field, select, human, badge, quantity, flashNext, showError, mayWrite, INTENTS, AVAILABILITIES } from "../ui.js";
import { labelsButton, placeOptions } from "./places.js";
import { coverThumb } from "./gallery.js";

const PAGE_SIZES = ["25", "50", "100", "200"];
/** The orders the list offers: the API's `sort` values. */
const SORTS = [
  ["", "as added"],
  ["name", "name, A to Z"],
  ["-name", "name, Z to A"],
  ["-updated", "last changed first"],
  ["updated", "least recently changed first"],
  ["place", "place"],
  ["-value", "value, highest first"],
  ["value", "value, lowest first"],
];

/** The types to suggest in the type filter, as the server counts them now (no copy kept between pages). */
async function itemTypes() {
  const list = await api("/item-types").catch(() => ({ types: [] }));
  return list.types.map((t) => t.type);
}

export async function inventoryView(params) {
  const f = {
    q: params.get("q") || "",
    intent: params.get("intent") || "",
    availability: params.get("availability") || "",
    item_type: params.get("item_type") || "",
    include_gone: params.get("include_gone") === "true",
    low_stock: params.get("low_stock") === "true",
    tag: params.get("tag") || "",
    sort: SORTS.some(([v]) => v === params.get("sort")) ? params.get("sort") : "",
    limit: PAGE_SIZES.includes(params.get("limit")) ? params.get("limit") : "50",
    offset: Math.max(0, parseInt(params.get("offset") || "0", 10) || 0),
    place: /^\d+$/.test(params.get("place") || "") ? params.get("place") : "",
  };
  const [list, types, places] = await Promise.all([/** @type {Promise<import("../api.js").ItemList>} */ (api(`/items${query(f)}`)), itemTypes(), placeOptions()]);
  list.items.forEach(rememberName);

  const go = (changes) => {
    const next = { ...f, ...changes };
    location.hash = `#/items${query(next)}`;
  };

  const search = h("input", { type: "search", name: "q", value: f.q, placeholder: "name or profile words" });
  const typeInput = h("input", { name: "item_type", value: f.item_type, list: "item-types", placeholder: "any type" });
  // On a phone the filters other than search are behind this button, so the list fills the first screen.
  const active = [f.intent, f.availability, f.item_type, f.place, f.include_gone, f.low_stock, f.tag].filter(Boolean).length;
  const toggle = h(
    "button",
    { type: "button", class: "filter-toggle", "aria-expanded": "false", "aria-controls": "more-filters" },
    active ? `Filter (${active})` : "Filter",
  );
  const more = h(
    "div",
    { class: "more-filters", id: "more-filters" },
    field("Intent", select("intent", [["", "any"], ...INTENTS.map((i) => [i, human(i)])], f.intent)),
    field(
      "Availability",
      select("availability", [["", "any"], ...AVAILABILITIES.map((a) => [a, human(a)])], f.availability),
    ),
    field("Type", typeInput),
    field("Place", select("place", [["", "anywhere"], ...places], f.place)),
    h("datalist", { id: "item-types" }, types.map((t) => h("option", { value: t }))),
    field("Tag", h("input", { name: "tag", value: f.tag, placeholder: "any tag" })),
    h(
      "div",
      { class: "field check" },
      h("input", { type: "checkbox", id: "low-stock", name: "low_stock", checked: f.low_stock }),
      h("label", { for: "low-stock" }, "Low stock only"),
    ),
    h(
      "div",
      { class: "field check" },
      h("input", { type: "checkbox", id: "include-gone", name: "include_gone", checked: f.include_gone }),
      h("label", { for: "include-gone" }, "Include gone"),
    ),
    field("Sort", select("sort", SORTS, f.sort)),
    field("Per page", select("limit", PAGE_SIZES.map((s) => [s, s]), f.limit)),
    h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Apply"), h("a", { href: "#/items", class: "button quiet" }, "Clear")),
  );
  const form = h(
    "form",
    { class: "filters", role: "search", "aria-label": "Filter the inventory", "data-read": "" },
    h("div", { class: "filter-head" }, field("Search", search), toggle),
    more,
  );
  toggle.addEventListener("click", () => {
    const open = toggle.getAttribute("aria-expanded") !== "true";
    toggle.setAttribute("aria-expanded", String(open));
    form.classList.toggle("open", open);
    if (open) more.querySelector("select, input")?.focus();
  });
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const d = new FormData(form);
    go({
      q: String(d.get("q") ?? "").trim(),
      intent: d.get("intent"),
      availability: d.get("availability"),
      item_type: String(d.get("item_type") ?? "").trim(),
      place: d.get("place"),
      include_gone: d.get("include_gone") === "on",
      low_stock: d.get("low_stock") === "on",
      tag: String(d.get("tag") || "").trim(),
      sort: d.get("sort"),
      limit: d.get("limit"),
      offset: 0,
    });
  });
  // Selects and the checkbox apply at once; text fields on Enter or Apply.
  for (const el of form.querySelectorAll("select, input[type=checkbox]")) {
    el.addEventListener("change", () => form.requestSubmit());
  }

  // Selection for bulk changes: ids of the checked rows on this page.
  const chosen = new Set();
  const count = h("span", { id: "selected-count", "aria-live": "polite" }, "");
  const bulkOut = h("div", { class: "out", role: "status" });
  const moveTo = select("place_id", [["", "choose a place"], ...places], "", { "aria-label": "Move the selected items to" });
  const intentTo = select("intent", [["", "choose an intent"], ...INTENTS.map((i) => [i, human(i)])], "", { "aria-label": "New use of the selected items (keep, sell, give)" });
  const bulk = async (set, what) => {
    try {
      const out = await api("/items/bulk", { method: "POST", body: { ids: [...chosen], set } });
      flashNext(`${what} ${out.updated} item${out.updated === 1 ? "" : "s"}.`, "ok");
      refreshPage();
    } catch (e) {
      showError(e, bulkOut);
    }
  };
  /** A bulk button pressed with nothing chosen in its select: says what is missing there, and goes to it. */
  const missing = (control, text) => {
    bulkOut.replaceChildren(h("p", { class: "message error" }, text));
    control.focus();
  };
  const bar = h(
    "div",
    { class: "bulk-bar", role: "region", "aria-label": "Change the selected items", hidden: true },
    count,
    h("div", { class: "bulk-action" }, moveTo, h("button", { type: "button", class: "primary", onclick: () => (moveTo.value ? bulk({ place_id: +moveTo.value }, "Moved") : missing(moveTo, "Choose the place to move the selected items to, then press Move.")) }, "Move")),
    h("div", { class: "bulk-action" }, intentTo, h("button", { type: "button", onclick: () => (intentTo.value ? bulk({ intent: intentTo.value }, "Changed") : missing(intentTo, "Choose keep, sell or give for the selected items, then press Set intent.")) }, "Set intent")),
    labelsButton("Print labels", () => ({ items: [...chosen] })),
    bulkOut,
  );
  const boxes = [];
  const allBox = h("input", { type: "checkbox", id: "select-all", "aria-label": "Select every item on this page" });
  const refresh = () => {
    bar.hidden = chosen.size === 0;
    count.textContent = `${chosen.size} selected`;
    allBox.checked = chosen.size > 0 && chosen.size === boxes.length;
    allBox.indeterminate = chosen.size > 0 && chosen.size < boxes.length;
  };
  allBox.addEventListener("change", () => {
    for (const b of boxes) {
      b.checked = allBox.checked;
      if (allBox.checked) chosen.add(+b.value);
      else chosen.delete(+b.value);
    }
    refresh();
  });

  const rows = list.items.map((it) => {
    const box = h("input", { type: "checkbox", name: "select", value: String(it.id), "aria-label": `Select ${it.name}`, disabled: !!it.gone });
    box.addEventListener("change", () => {
      if (box.checked) chosen.add(it.id);
      else chosen.delete(it.id);
      refresh();
    });
    if (!it.gone) boxes.push(box);
    return h(
      "tr",
      { class: it.gone ? "gone" : null },
      h("td", { class: "select" }, box),
      h("td", { class: "name" }, h("div", { class: "named" }, coverThumb(it), h("div", { class: "name-text" }, h("a", { href: `#/items/${it.id}` }, it.name), it.quantity !== 1 ? h("span", { class: "count" }, ` × ${it.quantity}`) : null, it.low_stock ? [" ", badge("low stock", "low")] : null, h("div", { class: "sub profile-line" }, it.profile), placeLine(it)))),
      h("td", { class: "hide-phone" }, human(it.item_type)),
      h("td", { class: "hide-phone" }, human(it.condition)),
      // On a phone the intent is left to the filter: the name and its place get the room.
      h("td", { class: "hide-phone" }, badge(it.intent)),
      h("td", {}, it.gone ? badge(`gone: ${it.gone.reason}`, "gone") : badge(it.availability)),
      h("td", { class: "hide-narrow" }, it.place ? h("a", { href: `#/places/${it.place.id}` }, it.location) : ""),
      h(
        "td",
        { class: "hide-narrow" },
        Object.entries(it.fields)
          .map(([k, v]) => `${human(k)}: ${quantity(v, k)}`)
          .join(", "),
      ),
    );
  });

  const total = list.total;
  const from = total === 0 ? 0 : list.offset + 1;
  const to = Math.min(list.offset + list.items.length, total);
  const limit = +f.limit;
  const pager = h(
    "nav",
    { class: "pager", "aria-label": "Pages" },
    h("button", { type: "button", "data-read": "", disabled: f.offset <= 0, onclick: () => go({ offset: Math.max(0, f.offset - limit) }) }, "← Previous"),
    h("span", { "aria-live": "polite", id: "page-status" }, total ? `${from}–${to} of ${total}` : "No items"),
    h("button", { type: "button", "data-read": "", disabled: to >= total, onclick: () => go({ offset: f.offset + limit }) }, "Next →"),
  );

  const table = list.items.length
    ? h(
        "div",
        { class: "table-wrap" },
        h(
          "table",
          { class: "items" },
          h("caption", { class: "visually-hidden" }, "Items"),
          h(
            "thead",
            {},
            h(
              "tr",
              {},
              h("th", { scope: "col", class: "select" }, allBox),
              sortHeader("Name", "name", f.sort, go),
              h("th", { scope: "col", class: "hide-phone" }, "Type"),
              h("th", { scope: "col", class: "hide-phone" }, "Condition"),
              h("th", { scope: "col", class: "hide-phone" }, "Intent"),
              h("th", { scope: "col" }, "Availability"),
              sortHeader("Place", "place", f.sort, go, "hide-narrow"),
              h("th", { scope: "col", class: "hide-narrow" }, "Fields"),
            ),
          ),
          h("tbody", {}, rows),
        ),
      )
    : h("p", { class: "empty" }, "No item matches these filters.", mayWrite() ? [" Add one with ", h("a", { href: "#/items/new" }, "New item"), ", or read some in through ", h("a", { href: "#/intake" }, "Intake"), "."] : null);

  return h(
    "div",
    { class: "view inventory" },
    h(
      "div",
      { class: "title-row" },
      h("h1", {}, "Inventory"),
      // The page's main actions: beside the heading on a wide screen, at the bottom of a phone's screen (thumb reach).
      h(
        "nav",
        { class: "title-actions thumb-bar", "aria-label": "Inventory actions" },
        h("a", { class: "button", href: "#/scan" }, "Scan"),
        h("a", { class: "button", href: "#/places" }, "Places"),
        mayWrite() ? h("a", { class: "button", href: "#/intake" }, "Read in") : null,
        mayWrite() ? h("a", { class: "button primary", href: "#/items/new" }, "New item") : null,
      ),
    ),
    form,
    table,
    pager,
    bar,
    exchange(),
  );
}

/**
 * CSV out and in: the whole inventory as our sheet, and a sheet (ours or a Homebox export) read back, all or
 * nothing, after saying what it will do.
 */
function exchange() {
  const out = h("div", { class: "out", role: "status" });
  const file = h("input", { type: "file", name: "sheet", accept: ".csv,text/csv" });
  const confirm = h("div", { class: "confirm", hidden: true });
  const exportButton = h(
    "button",
    {
      type: "button",
      onclick: async () => {
        try {
          download(await apiBlob("/export.csv"), "trove-export.csv");
          out.replaceChildren(h("p", { class: "message ok" }, "The inventory was saved as trove-export.csv."));
        } catch (e) {
          showError(e, out);
        }
      },
    },
    "Export CSV",
  );
  file.addEventListener("change", async () => {
    const chosen = file.files?.[0];
    out.replaceChildren();
    confirm.hidden = true;
    if (!chosen) return;
    // What the import would do, row by row, before anything is written.
    let preview;
    try {
      preview = await api("/import/preview", { method: "POST", body: chosen });
    } catch (e) {
      showError(e, out);
      return;
    }
    const plural = (n, one) => `${n} ${one}${n === 1 ? "" : "s"}`;
    const summary = [
      plural(preview.new, "new item"),
      plural(preview.updated, "update"),
      preview.gone ? `${plural(preview.gone, "gone row")} left out` : null,
      preview.refused ? plural(preview.refused, "refused row") : null,
    ].filter(Boolean);
    const go = h(
      "button",
      {
        type: "button",
        class: "primary",
        disabled: preview.refused > 0,
        onclick: async () => {
          go.disabled = true;
          try {
            const done = await api("/import", { method: "POST", body: chosen });
            confirm.hidden = true;
            file.value = "";
            flashNext(`Imported ${done.imported} row${done.imported === 1 ? "" : "s"} as ${done.items} item${done.items === 1 ? "" : "s"}${done.skipped ? `; ${done.skipped} gone row${done.skipped === 1 ? "" : "s"} left out` : ""}.`, "ok");
            refreshPage();
          } catch (e) {
            // A refused sheet names its line; nothing was written.
            showError(e, out);
            go.disabled = false;
          }
        },
      },
      `Import ${chosen.name}`,
    );
    const ACTIONS = { new: "new", update: "updates an item", gone: "gone: left out", refused: "refused" };
    const shown = preview.rows.slice(0, 200);
    confirm.replaceChildren(
      h("p", { class: "import-summary" }, `${chosen.name}: ${summary.join(", ")}.`),
      preview.refused
        ? h("p", { class: "message error" }, "Nothing can be imported while a row is refused: the import writes every row or none. Fix the rows below and choose the file again.")
        : h("p", {}, "Every row is written, or none. A row whose reference was imported before (our id, Homebox's import reference) updates that item."),
      h(
        "div",
        { class: "table-wrap" },
        h(
          "table",
          { class: "import-rows" },
          h("thead", {}, h("tr", {}, h("th", {}, "Line"), h("th", {}, "Item"), h("th", {}, "Import"))),
          h(
            "tbody",
            {},
            shown.map((r) =>
              h("tr", { class: r.action }, h("td", {}, String(r.line)), h("td", {}, r.name || ""), h("td", {}, r.reason ? `${ACTIONS[r.action]}: ${r.reason}` : ACTIONS[r.action])),
            ),
          ),
        ),
      ),
      preview.rows.length > shown.length ? h("p", { class: "sub" }, `and ${preview.rows.length - shown.length} more rows`) : null,
      go,
    );
    confirm.hidden = false;
  });
  return h(
    "details",
    { class: "card exchange" },
    h("summary", {}, "CSV export and import"),
    h("p", {}, "Our own sheet or a Homebox export."),
    mayWrite() ? field("Import a sheet", file) : null,
    confirm,
    h("div", { class: "actions" }, exportButton),
    out,
  );
}

/**
 * Where an item is, for the phone (where the Place column is hidden): the last two steps of its path under its
 * name ("Shelf B2 / Box 4"), the whole path for screen readers and as the tooltip.
 */
function placeLine(it) {
  if (!it.place) return null;
  const steps = String(it.location || it.place.name).split(" / ");
  const short = steps.length > 2 ? `… / ${steps.slice(-2).join(" / ")}` : steps.join(" / ");
  return h("div", { class: "sub place-line", title: it.location }, h("span", { class: "visually-hidden" }, "In "), short);
}

/**
 * A column header that sorts the list by `key`: pressed once ascending, again descending; `aria-sort` says which.
 */
function sortHeader(label, key, current, go, cls) {
  const state = current === key ? "ascending" : current === `-${key}` ? "descending" : "none";
  const next = current === key ? `-${key}` : key;
  const arrow = state === "ascending" ? " ▲" : state === "descending" ? " ▼" : "";
  return h(
    "th",
    { scope: "col", class: cls, "aria-sort": state },
    h("button", { type: "button", class: "sort", "data-read": "", onclick: () => go({ sort: next, offset: 0 }) }, label, arrow),
  );
}
