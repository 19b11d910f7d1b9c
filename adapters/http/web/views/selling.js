// @ts-check
// Selling and giving: what is meant to go, pricing from grounded comparables, the listing draft and the share text.

import { api, apiEvents, capabilities, rememberName } from "../api.js";
import { h, human, badge, money, usd, date, withProgress, section, copyButton, showError, webLink, mayWrite, needsModel } from "../ui.js";
import { coverThumb } from "./gallery.js";

export async function sellListView() {
  const [sell, give] = await Promise.all([api("/items?intent=sell&limit=500"), api("/items?intent=give&limit=500")]);
  [...sell.items, ...give.items].forEach(rememberName);
  const list = (items, what) =>
    items.length
      ? h(
          "ul",
          { class: "plain-list" },
          items.map((it) =>
            h(
              "li",
              { class: "with-cover" },
              coverThumb(it),
              h("a", { href: `#/items/${it.id}/sell` }, it.name),
              " ",
              h("span", { class: "sub" }, `${human(it.condition)}${it.faults.length ? ` · ${it.faults.length} fault${it.faults.length > 1 ? "s" : ""}` : ""}`),
            ),
          ),
        )
      : h("p", { class: "empty" }, `Nothing meant to ${what}. Change an item's intent on its page.`);
  return h(
    "div",
    { class: "view sell-list" },
    h("h1", {}, "Sell & give"),
    h("div", { class: "grid" }, section(`To sell (${sell.total})`, list(sell.items, "sell")), section(`To give away (${give.total})`, list(give.items, "give"))),
  );
}

export async function sellItemView(id) {
  const item = await api(`/items/${id}`);
  rememberName(item);
  const root = h("div", { class: "view sell-item" });
  const head = [
    h("p", { class: "crumbs" }, h("a", { href: "#/sell" }, "← Sell & give"), " · ", h("a", { href: `#/items/${id}` }, "item page")),
    h("h1", {}, item.name),
    h("p", { class: "sub" }, `${human(item.item_type)} · ${human(item.condition)} · `, badge(item.intent)),
  ];

  if (item.intent === "give") {
    root.append(...head, await shareSection(id));
    return root;
  }

  const draftBox = h("div", {});
  const reportBox = h("div", {});
  const out = h("div", { class: "out" });
  const priceButton = h("button", { type: "button", class: "primary" }, "Price it");
  priceButton.addEventListener("click", async () => {
    const report = await withProgress(out, "Searching the web for comparables… this can take a minute.", (say) =>
        apiEvents(`/items/${id}/price`, {
          onEvent: (name, data) => {
            if (name === "searching") say(`Searching the web for comparables (at most ${data.max_searches} searches)… this can take a minute.`);
            if (name === "writing") say(`Searching done; the model is writing the comparables (about ${data.output_tokens} tokens so far)…`);
          },
        }),
      priceButton,
    );
    if (report) {
      reportBox.replaceChildren(reportView(report, item));
      draftBox.replaceChildren(await draftSection(id));
      reportBox.querySelector("h2")?.focus();
    }
  });

  const [history, offer] = await Promise.all([api(`/items/${id}/prices`).catch(() => ({ prices: [] })), capabilities()]);
  // Pricing is offered when the backend can search the web; a viewer, who may not price, sees the reports only.
  const pricing = offer?.pricing;
  const priceSection = !mayWrite()
    ? null
    : pricing && !pricing.available
      ? section("Price", needsModel("Pricing from the web", pricing.reason))
      : section(
          "Price",
          h("p", {}, "One model call searches the web; only comparables whose pages the search really returned are kept."),
          h("div", { class: "actions" }, priceButton),
          out,
        );
  if (history.prices.length) reportBox.append(reportView(history.prices[0], item, true));
  draftBox.append(item.intent === "sell" ? await draftSection(id) : h("p", { class: "message info" }, "This item is meant to keep: set its intent to sell for a listing draft."));

  root.append(
    ...head,
    ...(priceSection ? [priceSection] : []),
    reportBox,
    draftBox,
    ...(history.prices.length > 1 ? [priceHistory(history.prices)] : []),
  );
  return root;
}

function reportView(report, item, old = false) {
  const e = report.estimate;
  const currency = e?.currency || report.comparables[0]?.currency;
  const titleId = `report-${Date.now()}`;
  return h(
    "section",
    { class: "card report", "aria-labelledby": titleId },
    h("h2", { id: titleId, tabindex: "-1" }, old ? `Latest price report (${date(report.at)})` : "Price report"),
    e
      ? h(
          "div",
          { class: "estimate", "aria-label": "Estimate" },
          h("div", {}, h("span", { class: "label" }, "Low"), h("strong", {}, money(e.low, e.currency))),
          h("div", { class: "typical" }, h("span", { class: "label" }, "Typical"), h("strong", {}, money(e.typical, e.currency))),
          h("div", {}, h("span", { class: "label" }, "High"), h("strong", {}, money(e.high, e.currency))),
        )
      : h("p", { class: "message info" }, "Too little evidence for an estimate."),
    h(
      "p",
      { class: "sub" },
      `${report.searches} web search${report.searches === 1 ? "" : "es"}`,
      report.spend ? `, cost ${usd(report.spend.cost_micro_usd)}` : "",
      `; condition of this item: ${human(item.condition)}.`,
    ),
    h("h3", {}, `Comparables kept (${report.comparables.length})`),
    report.comparables.length
      ? h(
          "div",
          { class: "table-wrap" },
          h(
            "table",
            { class: "comparables" },
            h("thead", {}, h("tr", {}, ["Listing", "Price", "Sold or asking", "Condition", "Note"].map((c) => h("th", { scope: "col" }, c)))),
            h(
              "tbody",
              {},
              report.comparables.map((c) =>
                h(
                  "tr",
                  {},
                  h("td", {}, webLink(c.url, c.title)),
                  h("td", { class: "num" }, money(c.price, c.currency || currency)),
                  h("td", {}, c.sold ? "sold" : "asking"),
                  h("td", {}, c.condition ? human(c.condition) : "—"),
                  h("td", {}, c.note || ""),
                ),
              ),
            ),
          ),
        )
      : h("p", { class: "empty" }, "None kept."),
    report.dropped.length
      ? [
          h("h3", {}, `Dropped (${report.dropped.length})`),
          h(
            "ul",
            { class: "dropped-comparables" },
            report.dropped.map((d) =>
              h("li", { class: "dropped" }, webLink(d.url, d.title), " — ", h("span", { class: "reason" }, d.reason)),
            ),
          ),
        ]
      : null,
  );
}

function priceHistory(prices) {
  return section(
    "Price history",
    h(
      "table",
      {},
      h("thead", {}, h("tr", {}, ["When", "Typical", "Range", "Kept"].map((c) => h("th", { scope: "col" }, c)))),
      h(
        "tbody",
        {},
        prices.map((p) =>
          h(
            "tr",
            {},
            h("td", {}, date(p.at)),
            h("td", {}, p.estimate ? money(p.estimate.typical, p.estimate.currency) : "—"),
            h("td", {}, p.estimate ? `${money(p.estimate.low, p.estimate.currency)} – ${money(p.estimate.high, p.estimate.currency)}` : "—"),
            h("td", {}, String(p.comparables.length)),
          ),
        ),
      ),
    ),
  );
}

async function draftSection(id) {
  const out = h("div", {});
  try {
    const d = await api(`/items/${id}/draft`);
    const price = d.price !== null && d.price !== undefined ? money(d.price, d.currency) : "not priced yet";
    const whole = `${d.title}\n\n${d.description}${d.price != null ? `\n\nPrice: ${price}` : ""}`;
    return section(
      "Listing draft",
      h("div", { class: "copy-row" }, h("h3", { class: "draft-title" }, d.title), copyButton("Copy title", d.title)),
      h("p", { class: "sub" }, `Condition: ${human(d.condition)} · Asking price: ${price}${d.price_from === "asking_price" ? " (set by hand)" : d.price_from === "estimate" ? " (from the latest estimate)" : ""}`),
      h("pre", { class: "draft-text", tabindex: "0", "aria-label": "Listing description" }, d.description),
      h("div", { class: "actions" }, copyButton("Copy description", d.description), copyButton("Copy whole listing", whole)),
    );
  } catch (err) {
    showError(err, out);
    return section("Listing draft", out);
  }
}

async function shareSection(id) {
  const out = h("div", {});
  try {
    const s = await api(`/items/${id}/share`);
    return section(
      "Give-away post",
      h("pre", { class: "draft-text share-text", tabindex: "0", "aria-label": "Give-away post" }, s.text),
      h("p", { class: "sub" }, `${s.text.length} of 500 characters`),
      h("div", { class: "actions" }, copyButton("Copy post", s.text)),
    );
  } catch (err) {
    showError(err, out);
    return section("Give-away post", out);
  }
}

