// @ts-check
// Value: what the household owns and what it is worth, by room and by type, as bar charts drawn here (SVG, one per
// currency: amounts are never converted), with the report as PDF (for an insurer) and CSV to download.

import { api, apiBlob, download, query } from "../api.js";
import { h, svg, human, date, section, select, showError, flash } from "../ui.js";
import { placeOptions } from "./places.js";

/** @typedef {{ amount: number, currency: string, text: string }} Amount */
/** @typedef {{ name: string | null, items: number, unvalued: number, current: Amount[], paid: Amount[] }} Totals */

/** An amount as people read it ("€80.00"), in its own currency. */
function shown(a) {
  try {
    return new Intl.NumberFormat(undefined, { style: "currency", currency: a.currency }).format(Number(a.text));
  } catch {
    return `${a.text} ${a.currency}`;
  }
}

/** Amounts of several currencies, side by side: never added together. */
function amounts(list) {
  return list.length ? list.map(shown).join(" + ") : "—";
}

/**
 * A horizontal bar chart of `groups`' current value in `currency`, one row per group: its name above its bar and
 * the amount at the bar's end, so it reads at 390 px as at desktop width.
 * @param {string} title
 * @param {Totals[]} groups
 * @param {string} currency
 * @param {(t: Totals) => string} nameOf
 */
function barChart(title, groups, currency, nameOf) {
  const rows = groups
    .map((g) => ({ name: nameOf(g), value: g.current.find((a) => a.currency === currency) }))
    .filter((r) => r.value && r.value.amount > 0)
    .sort((a, b) => (b.value?.amount ?? 0) - (a.value?.amount ?? 0));
  if (!rows.length) return null;
  const W = 360;
  const ROW = 40;
  const max = Math.max(...rows.map((r) => r.value?.amount ?? 0));
  const parts = rows.flatMap((r, i) => {
    const y = i * ROW;
    const value = /** @type {Amount} */ (r.value);
    const width = Math.max(2, ((W - 96) * value.amount) / max);
    return [
      svg("text", { x: 0, y: y + 13, class: "axis bar-name" }, r.name),
      svg("rect", { x: 0, y: y + 18, width, height: 16, rx: 2, class: "value-bar" }, svg("title", {}, `${r.name}: ${shown(value)}`)),
      svg("text", { x: width + 6, y: y + 31, class: "axis" }, shown(value)),
    ];
  });
  const summary = rows.map((r) => `${r.name}: ${shown(/** @type {Amount} */ (r.value))}`).join("; ");
  return h(
    "figure",
    { class: "chart value-chart" },
    svg("svg", { viewBox: `0 0 ${W} ${rows.length * ROW}`, role: "img", "aria-label": `${title} in ${currency}. ${summary}` }, parts),
    h("figcaption", {}, `${title}, in ${currency}`),
  );
}

/** Charts of `groups`, one per currency they hold. */
function charts(title, groups, currencies, nameOf) {
  const drawn = currencies.map((c) => barChart(title, groups, c, nameOf)).filter(Boolean);
  return drawn.length ? drawn : h("p", { class: "empty chart-empty" }, "No item here has a value yet: price items, or set a value by hand on an item's page.");
}

/** A button that downloads the report in `format` (the place filter applied). */
function downloadButton(label, format, place) {
  const button = h("button", { type: "button", "data-read": "" }, label);
  button.addEventListener("click", async () => {
    button.disabled = true;
    try {
      const blob = await apiBlob(`/report/value${query({ format, place })}`);
      download(blob, `trove-value-${new Date().toISOString().slice(0, 10)}.${format}`);
      flash(`The value report is downloaded as ${format.toUpperCase()}.`, "ok");
    } catch (e) {
      showError(e);
    } finally {
      button.disabled = false;
    }
  });
  return button;
}

/** @param {URLSearchParams} q */
export async function valueView(q) {
  const place = q.get("place") || "";
  const [report, places] = await Promise.all([api(`/report/value${query({ place })}`), placeOptions()]);
  const currencies = report.total.current.map((a) => a.currency);
  const roomName = (t) => t.name ?? "In no place";

  const within = select("place", [["", "The whole household"], ...places], place, { "aria-label": "Report on" });
  within.addEventListener("change", () => {
    location.hash = `#/value${query({ place: within.value })}`;
  });

  const total = report.total;
  const summary = h(
    "dl",
    { class: "details value-totals" },
    h("dt", {}, "Worth now"),
    h("dd", { class: "value-now" }, amounts(total.current)),
    h("dt", {}, "Paid"),
    h("dd", {}, amounts(total.paid)),
    h("dt", {}, "Items"),
    h("dd", {}, total.unvalued ? `${total.items}, of which ${total.unvalued} without a value` : String(total.items)),
  );

  const rows = report.items.map((i) =>
    h(
      "tr",
      {},
      h("td", {}, h("a", { href: `#/items/${i.item_id}` }, i.name)),
      h("td", {}, i.place ?? "—"),
      h("td", { class: "num" }, String(i.quantity)),
      h("td", { class: "num" }, i.value_total ? shown(i.value_total) : "—"),
      h(
        "td",
        {},
        i.value_source ? `${i.value_source.kind === "hand" ? "by hand" : "estimate"}, ${date(i.value_source.at)}` : "not valued",
      ),
    ),
  );

  return h(
    "div",
    { class: "view value" },
    h("h1", {}, "Value"),
    h(
      "div",
      { class: "toolbar value-actions" },
      within,
      downloadButton("Download PDF", "pdf", place),
      downloadButton("Download CSV", "csv", place),
    ),
    h(
      "p",
      { class: "hint" },
      "A value is the latest estimate from grounded web comparables, or one set by hand on the item's page. Amounts stay in their own currency.",
    ),
    section("Totals", summary),
    section("By room", charts("Value by room", report.by_room, currencies, roomName)),
    section("By type", charts("Value by type", report.by_type, currencies, (t) => human(t.name ?? ""))),
    section(
      "Items",
      rows.length
        ? h(
            "div",
            { class: "table-wrap" },
            h(
              "table",
              {},
              h("thead", {}, h("tr", {}, ["Item", "Place", "Qty", "Value", "From"].map((c) => h("th", { scope: "col" }, c)))),
              h("tbody", {}, rows),
            ),
          )
        : h("p", { class: "empty" }, "No items."),
    ),
  );
}
