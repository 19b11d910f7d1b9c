// @ts-check
// Value: what the household owns and what it is worth, by room and by type, as bar charts drawn here (SVG, one per
// currency: amounts are never converted), with the report as PDF (for an insurer) and CSV to download.

import { api, apiBlob, capabilities, download, query } from "../api.js";
import { h, svg, human, date, section, select, showError, flash, flashNext, mayWrite, needsModel, usd } from "../ui.js";
import { refresh } from "../router.js";
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

/** The run being followed, so leaving the page stops the polling (the run itself goes on on the server). */
let following = 0;

/** What a run says of itself, in words. */
function runText(run) {
  const counts = `${run.done} of ${run.total} items priced (${run.valued} valued${run.no_estimate ? `, ${run.no_estimate} without enough evidence` : ""}${run.failed ? `, ${run.failed} failed` : ""}), ${usd(run.spent_micro_usd)} spent`;
  const states = {
    running: "Refreshing",
    stopping: "Stopping after the item being priced",
    finished: "Done",
    stopped: "Stopped",
    budget_reached: "Stopped: the month's budget is reached",
    failed: "Stopped",
  };
  return `${states[run.state] || run.state}: ${counts}.${run.reason && run.state !== "finished" ? ` ${run.reason}` : ""}`;
}

/**
 * "Refresh values": first the plan (how many items, the expected cost, what the budget allows), then the run in
 * the background with its progress and a Stop button.
 */
async function refreshSection() {
  const offer = await capabilities();
  const pricing = offer?.pricing;
  if (!mayWrite()) return null;
  if (pricing && !pricing.available) return section("Refresh values", needsModel("Refreshing values from the web", pricing.reason));
  const days = h("input", { name: "older_than_days", type: "number", min: "0", max: "3650", value: "30", inputmode: "numeric", size: "4" });
  const out = h("div", { class: "refresh-out", "aria-live": "polite" });
  const check = h("button", { type: "button" }, "Check");
  const progress = h("progress", { max: "1", value: "0", hidden: "" });
  const status = h("p", { class: "refresh-status" });
  const stop = h("button", { type: "button", class: "danger", hidden: "" }, "Stop");

  const follow = async (run) => {
    const mine = ++following;
    for (;;) {
      progress.hidden = false;
      progress.max = Math.max(1, run.total);
      progress.value = run.done;
      status.textContent = runText(run);
      stop.hidden = run.state !== "running";
      if (run.state !== "running" && run.state !== "stopping") break;
      await new Promise((r) => setTimeout(r, 1000));
      if (mine !== following || !stop.isConnected) return;
      run = (await api("/report/value/refresh/run")).run;
      if (!run) return;
    }
    if (run.done > 0) {
      flashNext(runText(run), run.state === "finished" ? "ok" : "info");
      await refresh();
    }
  };

  check.addEventListener("click", async () => {
    check.disabled = true;
    try {
      const plan = await api(`/report/value/refresh${query({ older_than_days: days.value })}`);
      const from = plan.each_from_calls ? `the mean of the last ${plan.each_from_calls} price calls` : "a typical price call at the configured rates";
      const budget =
        plan.monthly_limit_micro_usd === null
          ? "No monthly budget is set."
          : `${usd(plan.spent_this_month_micro_usd)} of the ${usd(plan.monthly_limit_micro_usd)} budget is spent this month: ${plan.affordable} of them fit.`;
      if (!plan.items) {
        out.replaceChildren(h("p", {}, "Every item has a recent value: nothing to refresh."));
        return;
      }
      const start = h("button", { type: "button", class: "primary" }, `Price ${plan.items} items`);
      start.addEventListener("click", async () => {
        start.disabled = true;
        try {
          const run = await api("/report/value/refresh", { method: "POST", body: { older_than_days: Number(days.value) } });
          out.replaceChildren();
          await follow(run);
        } catch (e) {
          showError(e, out);
        }
      });
      out.replaceChildren(
        h("p", { class: "refresh-plan" }, `${plan.items} items have no value or one older than ${days.value} days. Pricing them is expected to cost about ${usd(plan.expected_micro_usd)} (${usd(plan.each_micro_usd)} each, from ${from}). ${budget}`),
        start,
      );
    } catch (e) {
      showError(e, out);
    } finally {
      check.disabled = false;
    }
  });
  stop.addEventListener("click", async () => {
    stop.disabled = true;
    try {
      status.textContent = runText(await api("/report/value/refresh/stop", { method: "POST" }));
    } catch (e) {
      showError(e, out);
    } finally {
      stop.disabled = false;
    }
  });

  // A run going (started on another page or by another member) is followed at once.
  const last = (await api("/report/value/refresh/run")).run;
  if (last && (last.state === "running" || last.state === "stopping")) follow(last);
  else if (last) status.textContent = runText(last);

  return section(
    "Refresh values",
    h("p", {}, "Prices again, from the web, the items without a value or with an estimate older than the days below. Values set by hand are kept."),
    h("div", { class: "inline-form" }, h("label", {}, "Older than ", days, " days"), check),
    out,
    progress,
    status,
    stop,
  );
}

/** @param {URLSearchParams} q */
export async function valueView(q) {
  const place = q.get("place") || "";
  const [report, places, refreshing] = await Promise.all([api(`/report/value${query({ place })}`), placeOptions(), refreshSection()]);
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
    refreshing,
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
