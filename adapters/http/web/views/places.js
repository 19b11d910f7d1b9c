// @ts-check
// Places: the tree of where things are (house > garage > shelf B2 > box 4), one place's page with its
// breadcrumbs, the places below it and the items in it, and the label printer.

import { api, query, printLabels, rememberName } from "../api.js";
import { refresh } from "../router.js";
import { h, field, select, badge, flash, flashNext, showError } from "../ui.js";
import { coverThumb } from "./gallery.js";

/** A place's path as text: "House / Garage / Shelf B2". */
export function pathText(path) {
  return path.map((p) => p.name).join(" / ");
}

/** A place's path as breadcrumbs, each a link. */
export function breadcrumbs(path) {
  return h(
    "nav",
    { class: "breadcrumbs", "aria-label": "Where it is" },
    h("a", { href: "#/places" }, "Places"),
    path.map((p, i) => [" / ", i === path.length - 1 ? h("span", { "aria-current": "page" }, p.name) : h("a", { href: `#/places/${p.id}` }, p.name)]),
  );
}

/** Every place of the household, sorted by path, as [id, "House / Garage"] options. */
export async function placeOptions() {
  const { places } = /** @type {import("../api.js").PlaceList} */ (await api("/places"));
  return places.map((p) => [String(p.id), pathText(p.path)]).sort((a, b) => a[1].localeCompare(b[1]));
}

/** The "print labels" button: a sheet of A4 labels or a roll label per object. */
export function labelsButton(text, objects) {
  const layout = select("layout", [["sheet", "A4 sheet: 21 labels, 3 x 7 (63.5 x 38.1 mm, L7160)"], ["roll", "Label roll: one 62 x 29 mm label each"]], "sheet", { "aria-label": "Label layout" });
  const button = h("button", { type: "button", "data-read": "" }, text);
  button.addEventListener("click", async () => {
    const chosen = typeof objects === "function" ? objects() : objects;
    button.disabled = true;
    try {
      await printLabels({ ...chosen, layout: layout.value });
      flash("The labels PDF is downloaded: print it at 100% scale.", "ok");
    } catch (e) {
      showError(e);
    } finally {
      button.disabled = false;
    }
  });
  return h("span", { class: "labels" }, layout, button);
}

function newPlaceForm(parentId, options, onMade) {
  const name = h("input", { name: "name", required: true, maxlength: "200", autocomplete: "off" });
  const parent = select("parent_id", [["", "(top level)"], ...options], parentId ? String(parentId) : "");
  const out = h("div", { class: "out" });
  const form = h(
    "form",
    { class: "card inline-form", "aria-label": parentId ? "Add a place here" : "New place" },
    h("h2", {}, parentId ? "Add a place here" : "New place"),
    field("Name", name),
    parentId ? null : field("Inside", parent),
    h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Add place")),
    out,
  );
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const body = { name: name.value.trim() };
    const under = parentId ?? (parent.value ? +parent.value : null);
    if (under) body.parent_id = under;
    try {
      const made = await api("/places", { method: "POST", body });
      flashNext(`Added ${pathText(made.path)}.`, "ok");
      onMade(made);
    } catch (err) {
      showError(err, out);
    }
  });
  return form;
}

export async function placesView() {
  const { places } = /** @type {import("../api.js").PlaceList} */ (await api("/places"));
  const sorted = [...places].sort((a, b) => pathText(a.path).localeCompare(pathText(b.path)));
  const options = sorted.map((p) => [String(p.id), pathText(p.path)]);
  const tree = sorted.length
    ? h(
        "ul",
        { class: "place-tree" },
        sorted.map((p) =>
          h(
            "li",
            { dataset: { depth: String(p.path.length - 1) }, class: `depth-${Math.min(p.path.length - 1, 6)}` },
            h("a", { href: `#/places/${p.id}` }, p.name),
            h("span", { class: "sub" }, ` ${p.items_within} item${p.items_within === 1 ? "" : "s"}`),
          ),
        ),
      )
    : h("p", { class: "empty" }, "No place yet. Make the rooms, shelves and boxes where your things are.");
  return h(
    "div",
    { class: "view places" },
    h("div", { class: "title-row" }, h("h1", {}, "Places"), h("a", { class: "button", href: "#/scan" }, "Scan a label")),
    tree,
    newPlaceForm(null, options, (made) => {
      location.hash = `#/places/${made.id}`;
    }),
  );
}

function quickAddItem(place, onAdded) {
  const name = h("input", { name: "name", required: true, maxlength: "200", autocomplete: "off" });
  const type = h("input", { name: "item_type", required: true, placeholder: "e.g. power_adapter", autocomplete: "off" });
  const out = h("div", { class: "out" });
  const form = h(
    "form",
    { class: "card inline-form", "aria-label": "Add an item here" },
    h("h2", {}, "Add an item here"),
    field("Name", name),
    field("Type", type),
    h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Add item")),
    out,
  );
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const body = {
      name: name.value.trim(),
      item_type: type.value.trim().toLowerCase().replace(/\s+/g, "_"),
      profile: "",
      condition: "good",
      intent: "keep",
      place_id: place.id,
    };
    try {
      const made = await api("/items", { method: "POST", body });
      flashNext(`Added ${made.name} to ${place.name}.`, "ok");
      onAdded(made);
    } catch (err) {
      showError(err, out);
    }
  });
  return form;
}

export async function placeView(id, params) {
  const within = params?.get("within") !== "false";
  const [place, list, options] = await Promise.all([
    api(`/places/${id}`),
    api(`/items${query({ place: id, within: within ? undefined : "false", limit: 200 })}`),
    placeOptions(),
  ]);
  list.items.forEach(rememberName);
  const reload = () => refresh();

  const children = place.children.length
    ? h("ul", { class: "place-children" }, place.children.map((c) => h("li", {}, h("a", { href: `#/places/${c.id}` }, c.name), h("span", { class: "sub" }, ` ${c.items_within} item${c.items_within === 1 ? "" : "s"}`))))
    : h("p", { class: "empty" }, "No place inside this one.");

  const items = list.items.length
    ? h(
        "ul",
        { class: "place-items" },
        list.items.map((it) =>
          h(
            "li",
            { class: "with-cover" },
            coverThumb(it),
            h("a", { href: `#/items/${it.id}` }, it.name),
            " ",
            badge(it.intent),
            it.place && it.place.id !== place.id ? h("span", { class: "sub" }, ` in ${it.place.name}`) : null,
          ),
        ),
      )
    : h("p", { class: "empty" }, within ? "Nothing in here yet." : "Nothing directly in here.");

  const toggle = h(
    "a",
    { href: `#/places/${id}${within ? "?within=false" : ""}`, class: "button quiet" },
    within ? "Only what is directly here" : "Include the places below",
  );

  // Rename, move, delete.
  const rename = h("input", { name: "name", value: place.name, required: true, maxlength: "200" });
  const move = select("parent_id", [["", "(top level)"], ...options.filter(([v]) => v !== String(id))], place.parent_id ? String(place.parent_id) : "");
  const editOut = h("div", { class: "out" });
  const edit = h(
    "form",
    { class: "card inline-form", "aria-label": "Rename or move this place" },
    h("h2", {}, "Rename or move"),
    field("Name", rename),
    field("Inside", move),
    h(
      "div",
      { class: "actions" },
      h("button", { type: "submit", class: "primary" }, "Save"),
      h(
        "button",
        {
          type: "button",
          class: "danger",
          onclick: async () => {
            if (!window.confirm(`Delete the place “${place.name}”? Its labels will no longer open it.`)) return;
            try {
              await api(`/places/${id}`, { method: "DELETE" });
              flashNext(`Deleted ${place.name}.`, "ok");
              location.hash = place.parent_id ? `#/places/${place.parent_id}` : "#/places";
            } catch (err) {
              showError(err, editOut);
            }
          },
        },
        "Delete place",
      ),
    ),
    editOut,
  );
  edit.addEventListener("submit", async (e) => {
    e.preventDefault();
    const body = {};
    if (rename.value.trim() !== place.name) body.name = rename.value.trim();
    const parent = move.value ? +move.value : null;
    if (parent !== place.parent_id) body.parent_id = parent;
    try {
      await api(`/places/${id}`, { method: "PATCH", body });
      flashNext(`Saved ${rename.value.trim()}.`, "ok");
      reload();
    } catch (err) {
      showError(err, editOut);
    }
  });

  return h(
    "div",
    { class: "view place" },
    breadcrumbs(place.path),
    h("div", { class: "title-row" }, h("h1", {}, place.name), labelsButton("Print label", { places: [id] })),
    place.note ? h("p", { class: "note" }, place.note) : null,
    h("p", { class: "sub" }, `${place.items} item${place.items === 1 ? "" : "s"} directly here, ${place.items_within} within.`),
    h("section", { "aria-labelledby": "children-title" }, h("h2", { id: "children-title" }, "Places inside"), children),
    h("section", { "aria-labelledby": "items-title" }, h("div", { class: "title-row" }, h("h2", { id: "items-title" }, "Items"), toggle), items),
    quickAddItem(place, reload),
    newPlaceForm(id, options, reload),
    edit,
  );
}

