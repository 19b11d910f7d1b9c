// @ts-check
// Spend: what the model calls cost, by month, by kind and by the member who asked, with a bar chart drawn here
// (SVG) and the budget.

import { api } from "../api.js";
import { h, svg, human, usd, date, section } from "../ui.js";

const KIND_COLOURS = {
  propose: "#2b6cb0",
  price: "#2f855a",
  read_label: "#b7791f",
  read_listing: "#805ad5",
  read_voice: "#c53030",
  transcribe: "#319795",
};

/** The model name the built-in local planner's entries carry. */
const LOCAL_PLANNER = "local-planner";

function colour(kind, i) {
  return KIND_COLOURS[kind] || ["#4a5568", "#d53f8c", "#dd6b20"][i % 3];
}

export async function spendView() {
  const s = await api("/spend");
  const months = Object.keys(s.totals.by_month).sort();
  const kinds = Object.keys(s.totals.by_kind).sort();

  // Cost per month and kind, from the entries (the totals by month have no kinds).
  const cells = new Map();
  for (const e of s.entries) {
    const m = e.at.slice(0, 7);
    const key = `${m}|${e.kind}`;
    cells.set(key, (cells.get(key) || 0) + e.cost_micro_usd);
  }

  const budget = s.monthly_limit_micro_usd;
  const budgetBox = budget
    ? h(
        "div",
        { class: "budget" },
        h("label", { for: "budget-meter" }, `This month: ${usd(s.this_month_micro_usd)} of a ${usd(budget)} budget`),
        h("meter", { id: "budget-meter", min: "0", max: String(budget), value: String(s.this_month_micro_usd), high: String(budget * 0.8), optimum: "0" }),
        s.this_month_micro_usd >= budget ? h("p", { class: "message error" }, "The budget is reached: calls to the model are refused until next month.") : null,
      )
    : h("p", {}, `This month: ${usd(s.this_month_micro_usd)}. No monthly budget is set (SPEND_MONTHLY_LIMIT_USD).`);

  const totalsRow = (label, t) =>
    h(
      "tr",
      {},
      h("th", { scope: "row" }, label),
      h("td", { class: "num" }, String(t.calls)),
      h("td", { class: "num" }, String(t.input_tokens)),
      h("td", { class: "num" }, String(t.cached_tokens)),
      h("td", { class: "num" }, String(t.output_tokens)),
      h("td", { class: "num" }, String(t.searches)),
      h("td", { class: "num" }, usd(t.cost_micro_usd)),
    );
  const totalsTable = (first, rows) =>
    h(
      "div",
      { class: "table-wrap" },
      h(
        "table",
        {},
        h("thead", {}, h("tr", {}, [first, "Calls", "Input tokens", "Cached", "Output tokens", "Searches", "Cost"].map((c) => h("th", { scope: "col" }, c)))),
        h("tbody", {}, rows, totalsRow("All", s.totals.all)),
      ),
    );

  return h(
    "div",
    { class: "view spend" },
    h("h1", {}, "Spend"),
    section("Budget", budgetBox),
    section(
      "Cost by month",
      // A chart of nothing but zeros says nothing: an empty state instead.
      s.totals.all.cost_micro_usd > 0
        ? chart(months, kinds, cells, s.totals.by_month)
        : h("p", { class: "empty chart-empty" }, s.entries.length ? "Nothing spent yet: every run so far cost nothing." : "Nothing spent yet: no model call so far."),
    ),
    section("By month", totalsTable("Month", months.map((m) => totalsRow(m, s.totals.by_month[m])))),
    section("By kind", totalsTable("Kind", kinds.map((k) => totalsRow(human(k), s.totals.by_kind[k])))),
    section(
      "By member",
      totalsTable(
        "Member",
        (s.totals.by_member || []).map((m) => totalsRow(m.member ? m.member.name : "Command line", m)),
      ),
    ),
    section(
      "Latest calls",
      s.entries.length
        ? h(
            "div",
            { class: "table-wrap" },
            h(
              "table",
              {},
              h("thead", {}, h("tr", {}, ["When", "Kind", "Model", "In", "Out", "Searches", "Cost"].map((c) => h("th", { scope: "col" }, c)))),
              h(
                "tbody",
                {},
                [...s.entries]
                  .sort((a, b) => b.at.localeCompare(a.at))
                  .slice(0, 50)
                  .map((e) =>
                    h(
                      "tr",
                      {},
                      h("td", {}, date(e.at)),
                      h("td", {}, human(e.kind)),
                      // The built-in planner's runs are entries too, but no model call.
                      h("td", {}, e.model === LOCAL_PLANNER ? "built-in planner (no model call)" : e.model),
                      h("td", { class: "num" }, String(e.input_tokens)),
                      h("td", { class: "num" }, String(e.output_tokens)),
                      h("td", { class: "num" }, String(e.searches)),
                      h("td", { class: "num" }, usd(e.cost_micro_usd)),
                    ),
                  ),
              ),
            ),
          )
        : h("p", { class: "empty" }, "None."),
    ),
  );
}

/** A stacked bar chart of cost per month, one colour per kind, drawn as SVG. */
function chart(months, kinds, cells, byMonth) {
  const W = 640;
  const H = 260;
  const pad = { l: 64, r: 12, t: 12, b: 36 };
  const max = Math.max(1, ...months.map((m) => byMonth[m].cost_micro_usd));
  const scale = (H - pad.t - pad.b) / max;
  const slot = (W - pad.l - pad.r) / months.length;
  const bar = Math.min(64, slot * 0.6);
  const parts = [];
  // Gridlines with dollar labels.
  for (let i = 0; i <= 4; i += 1) {
    const v = (max * i) / 4;
    const y = H - pad.b - v * scale;
    parts.push(svg("line", { x1: pad.l, x2: W - pad.r, y1: y, y2: y, class: "grid-line" }));
    parts.push(svg("text", { x: pad.l - 6, y: y + 4, "text-anchor": "end", class: "axis" }, usd(v)));
  }
  months.forEach((m, i) => {
    let y = H - pad.b;
    const x = pad.l + slot * i + (slot - bar) / 2;
    kinds.forEach((k, j) => {
      const v = cells.get(`${m}|${k}`) || 0;
      if (!v) return;
      const hgt = Math.max(1, v * scale);
      y -= hgt;
      parts.push(svg("rect", { x, y, width: bar, height: hgt, fill: colour(k, j) }, svg("title", {}, `${m} ${human(k)}: ${usd(v)}`)));
    });
    parts.push(svg("text", { x: x + bar / 2, y: H - pad.b + 18, "text-anchor": "middle", class: "axis" }, m));
  });
  const summary = months.map((m) => `${m}: ${usd(byMonth[m].cost_micro_usd)}`).join("; ");
  return h(
    "figure",
    { class: "chart" },
    svg("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": `Cost by month. ${summary}` }, parts),
    h(
      "figcaption",
      { class: "legend" },
      kinds.map((k, j) => h("span", {}, h("span", { class: "swatch", style: { background: colour(k, j) } }), human(k))),
    ),
  );
}
