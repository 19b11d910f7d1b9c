// @ts-check
// Lent out, Due, and reminders: who has what (overdue first) with "Returned", what falls due soon (loans due back,
// maintenance, warranties ending), each member's reminder channels and calendar link, the delivery log for owners;
// and on an item's page, "Lend", "Returned" and its maintenance schedules.

import { api, query } from "../api.js";
import { refresh } from "../router.js";
import { h, field, select, human, badge, flash, flashNext, showError, mayWrite, formValues, section, itemLink, copyButton, date } from "../ui.js";

/** @typedef {import("../api.js").Schemas["Loan"]} Loan */
/** @typedef {import("../api.js").Schemas["Due"]} Due */
/** @typedef {import("../api.js").Schemas["Schedule"]} Schedule */

/** A day as people read it ("Fri 11 Dec"). */
function dayText(iso) {
  const d = new Date(`${iso}T00:00:00`);
  return d.toLocaleDateString(undefined, { weekday: "short", day: "numeric", month: "short", year: d.getFullYear() === new Date().getFullYear() ? undefined : "numeric" });
}

/** A "Returned" button for a loan; `done()` after it is back. */
function returnedButton(loan, done) {
  const button = h("button", { type: "button", class: "primary" }, "Returned");
  button.addEventListener("click", async () => {
    button.disabled = true;
    try {
      await api(`/loans/${loan.id}/return`, { method: "POST", body: {} });
      flashNext(`${loan.item_name} is back from ${loan.to}.`, "ok");
      refreshDueBadge();
      await done();
    } catch (e) {
      showError(e);
      button.disabled = false;
    }
  });
  return button;
}

/** One loan as a card row: the item, who has it, since when, due when. */
function loanRow(loan, done) {
  return h(
    "li",
    { class: `loan${loan.overdue ? " overdue" : ""}`, "data-loan": String(loan.id) },
    h("div", { class: "loan-what" }, itemLink(loan.item_id, loan.item_name), loan.units !== 1 ? ` × ${loan.units}` : null),
    h(
      "div",
      { class: "loan-who" },
      h("strong", {}, loan.to),
      loan.contact ? ` · ${loan.contact}` : null,
      h("br"),
      `since ${dayText(loan.since)}`,
      loan.due ? ` · due back ${dayText(loan.due)}` : " · no date",
      loan.overdue ? [" ", badge("overdue", "low")] : null,
      loan.note ? h("div", { class: "hint" }, loan.note) : null,
    ),
    mayWrite() && !loan.returned_at ? h("div", { class: "loan-actions" }, returnedButton(loan, done)) : null,
  );
}

/**
 * The Lent out page: every open loan, overdue first; what the signed-in member (`me`) borrowed.
 * @param {{id: number, role: string} | null} me
 */
export async function lentView(me) {
  const [all, mine] = await Promise.all([
    /** @type {Promise<{loans: Loan[]}>} */ (api("/loans?open=true")),
    me ? /** @type {Promise<{loans: Loan[]}>} */ (api(`/loans${query({ open: "true", member_id: me.id })}`)) : Promise.resolve({ loans: [] }),
  ]);
  const done = async () => refresh();
  const overdue = all.loans.filter((l) => l.overdue).length;
  return h(
    "div",
    { class: "view lent" },
    h("h1", { tabindex: "-1" }, "Lent out"),
    h(
      "p",
      {},
      all.loans.length
        ? `${all.loans.length} ${all.loans.length === 1 ? "loan is" : "loans are"} out${overdue ? `, ${overdue} overdue` : ""}. Lend from an item's page.`
        : "Nothing is lent out. Lend something from its item page.",
    ),
    all.loans.length ? h("ul", { class: "loans", "aria-label": "Lent out" }, all.loans.map((l) => loanRow(l, done))) : null,
    mine.loans.length
      ? section("What you borrowed", h("ul", { class: "loans", "aria-label": "What you borrowed" }, mine.loans.map((l) => loanRow(l, done))))
      : null,
  );
}

const KIND_WORD = { loan_back: "Due back", maintenance: "Maintenance", warranty_ends: "Warranty ends" };

/**
 * The Due page: what falls due within a window, overdue first; the caller's (`me`) reminders and calendar.
 * @param {URLSearchParams} q
 * @param {{id: number, role: string} | null} me
 */
export async function dueView(q, me) {
  const within = Number(q.get("within") || 30);
  const list = /** @type {{due: Due[], overdue: number}} */ (await api(`/due${query({ within_days: within })}`));
  setDueBadge(list);
  const windowPick = select("within", [["7", "7 days"], ["30", "30 days"], ["90", "90 days"], ["365", "a year"]], String(within), { "aria-label": "Window" });
  windowPick.addEventListener("change", () => {
    location.hash = `#/due?within=${/** @type {HTMLSelectElement} */ (windowPick).value}`;
  });
  const rows = list.due.map((d) =>
    h(
      "li",
      { class: `due-row${d.overdue ? " overdue" : ""}`, dataset: { kind: d.kind } },
      h("div", { class: "due-when" }, h("strong", {}, dayText(d.on)), d.overdue ? [" ", badge("overdue", "low")] : null),
      h(
        "div",
        { class: "due-what" },
        h("span", { class: "due-kind" }, KIND_WORD[d.kind] || human(d.kind)),
        ": ",
        itemLink(d.item_id, d.item_name),
        ` · ${d.what}`,
        d.place ? h("div", { class: "hint" }, d.place) : null,
      ),
    ),
  );
  return h(
    "div",
    { class: "view due" },
    h("div", { class: "title-row" }, h("h1", { tabindex: "-1" }, "Due"), field("Within", windowPick)),
    rows.length ? h("ul", { class: "due-list", "aria-label": "Due" }, rows) : h("p", { class: "empty" }, `Nothing falls due in the next ${within} days.`),
    await remindersSection(me),
  );
}

/** The nav's count of what is overdue or due within 30 days. */
export async function refreshDueBadge() {
  try {
    setDueBadge(/** @type {{due: Due[], overdue: number}} */ (await api("/due?within_days=30")));
  } catch {
    // The badge is a hint; the Due page says what went wrong.
  }
}

function setDueBadge(list) {
  const badgeEl = document.getElementById("due-count");
  if (!badgeEl) return;
  const n = list.due.length;
  badgeEl.hidden = n === 0;
  badgeEl.textContent = String(n);
  badgeEl.classList.toggle("overdue", list.overdue > 0);
  badgeEl.setAttribute("aria-label", `${n} due soon${list.overdue ? `, ${list.overdue} overdue` : ""}`);
}

/** The caller's reminder channels, a test send per channel, the calendar link, and (owners) the delivery log. */
async function remindersSection(me) {
  const [settings, calendar] = await Promise.all([api("/me/notifications"), api("/me/calendar")]);
  const email = h("input", { name: "email", type: "email", value: settings.email || "", autocomplete: "email", placeholder: "you@example.org" });
  const urls = h("textarea", { name: "urls", rows: "3", placeholder: "ntfy://ntfy.sh/my-topic\nhttps://hooks.example.org/trove" }, settings.urls.join("\n"));
  const lead = h("input", { name: "lead_days", type: "number", min: "0", max: "365", value: String(settings.lead_days), inputmode: "numeric" });
  const out = h("div", { class: "out" });
  const tests = h("div", { class: "channel-tests" });
  const drawTests = (s) =>
    tests.replaceChildren(
      ...[...(s.email ? [`email:${s.email}`] : []), ...s.urls].map((channel) => {
        const b = h("button", { type: "button", "data-channel": channel }, `Send test to ${channel.replace(/^email:/, "")}`);
        b.addEventListener("click", async () => {
          b.disabled = true;
          try {
            const sent = await api("/me/notifications/test", { method: "POST", body: { channel } });
            flash(sent.delivered ? `A test reminder went to ${sent.channel}.` : `Not delivered to ${sent.channel}: ${sent.error}`, sent.delivered ? "ok" : "error");
          } catch (e) {
            showError(e, out);
          } finally {
            b.disabled = false;
          }
        });
        return b;
      }),
    );
  drawTests(settings);
  const form = h(
    "form",
    { class: "stack", "aria-label": "Reminders" },
    field("E-mail", email),
    field("Notification URLs", urls, "One per line: ntfy://, gotify://, discord://, slack://, telegram:// or an https:// webhook."),
    field("Days ahead", lead, "Reminders go this many days before a thing falls due (and when it is overdue)."),
    h("button", { type: "submit", class: "primary" }, "Save reminders"),
    out,
  );
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const v = formValues(form);
    try {
      const saved = await api("/me/notifications", {
        method: "PUT",
        body: {
          email: v.email || null,
          urls: String(v.urls || "").split("\n").map((u) => u.trim()).filter(Boolean),
          lead_days: Number(v.lead_days || 0),
        },
      });
      drawTests(saved);
      flash("Reminders saved.", "ok");
    } catch (err) {
      showError(err, out);
    }
  });
  const link = h("input", { readonly: "", value: calendar.url, "aria-label": "Calendar link", class: "calendar-link" });
  const fresh = h("button", { type: "button" }, "New link");
  fresh.addEventListener("click", async () => {
    const made = await api("/me/calendar", { method: "POST", body: {} });
    /** @type {HTMLInputElement} */ (link).value = made.url;
    flash("A new calendar link: the old one no longer works.", "ok");
  });
  const log = me?.role === "owner" ? await deliveryLog() : null;
  return section(
    "Reminders",
    form,
    tests,
    h("h3", {}, "Calendar"),
    h("p", {}, "Subscribe to this secret link from a phone or calendar app: loans due back, maintenance and warranty ends."),
    h("div", { class: "inline-form" }, link, copyButton("Copy link", calendar.url), fresh),
    log,
  );
}

/** The household's delivery log and webhook signing key (owners). */
async function deliveryLog() {
  const log = await api("/notifications/deliveries");
  return h(
    "details",
    { class: "delivery-log" },
    h("summary", {}, `Delivery log (${log.deliveries.length})`),
    h("p", { class: "hint" }, "Webhook bodies are signed: X-Trove-Signature is sha256= and the HMAC-SHA256 of the body with the key ", h("code", {}, log.webhook_secret), "."),
    log.deliveries.length
      ? h(
          "table",
          {},
          h("thead", {}, h("tr", {}, ["When", "To", "What", "Status"].map((t) => h("th", { scope: "col" }, t)))),
          h(
            "tbody",
            {},
            log.deliveries.map((d) =>
              h(
                "tr",
                {},
                h("td", {}, date(d.sent_at || d.created_at)),
                h("td", {}, d.channel),
                h("td", {}, d.subject),
                h("td", {}, badge(d.status, d.status === "sent" ? undefined : "low"), d.last_error ? h("div", { class: "hint" }, `${d.attempts} tries: ${d.last_error}`) : null),
              ),
            ),
          ),
        )
      : h("p", {}, "No reminder has gone out yet."),
  );
}

/** On an item's page: its loan with "Returned", a "Lend" form, and its maintenance. `rerender(item)` redraws it. */
export function lendingSections(item, rerender) {
  const id = item.id;
  const reload = async () => rerender(await api(`/items/${id}`));
  const loanBox = item.loan
    ? section(
        "Lent out",
        h(
          "p",
          { class: "lent-to" },
          `Lent to ${item.loan.to} since ${dayText(item.loan.since)}`,
          item.loan.due ? `, due back ${dayText(item.loan.due)}` : "",
          item.units_lent > 1 ? ` (${item.units_lent} units out)` : "",
          ".",
        ),
        mayWrite() ? returnedButton({ id: item.loan.id, item_name: item.name, to: item.loan.to }, reload) : null,
      )
    : null;
  const canLend = mayWrite() && !item.gone && item.availability === "available" && item.quantity - item.units_held - item.units_lent > 0;
  let lend = null;
  if (canLend) {
    const out = h("div", { class: "out" });
    const form = h(
      "form",
      { class: "inline-form", "aria-label": "Lend" },
      field("To", h("input", { name: "name", required: "", maxlength: "200", placeholder: "Sam next door", autocomplete: "off" })),
      field("Contact", h("input", { name: "contact", maxlength: "200", placeholder: "phone or address" })),
      item.quantity > 1 ? field("Units", h("input", { name: "units", type: "number", min: "1", value: "1", inputmode: "numeric" })) : null,
      field("Due back", h("input", { name: "due", type: "date" })),
      h("button", { type: "submit", class: "primary" }, "Lend"),
      out,
    );
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      const v = formValues(form);
      try {
        const made = await api(`/items/${id}/loans`, {
          method: "POST",
          body: { to: { name: v.name, contact: v.contact || null }, units: v.units ? Number(v.units) : null, due: v.due || null },
        });
        flashNext(`Lent to ${made.loan.to}.`, "ok");
        refreshDueBadge();
        rerender(made.item);
      } catch (err) {
        showError(err, out);
      }
    });
    lend = section("Lend", form);
  }
  return [loanBox, lend, maintenanceSection(item)];
}

/** An item's schedules with "Done", a form to add one, and its log. */
function maintenanceSection(item) {
  const id = item.id;
  const body = h("div", { class: "maintenance" }, h("p", { class: "hint" }, "Loading…"));
  const draw = async () => {
    const [{ schedules }, { done }] = await Promise.all([api(`/items/${id}/schedules`), api(`/items/${id}/maintenance`)]);
    const rows = schedules.map((/** @type {Schedule} */ s) => {
      const every = s.every.days ? `every ${s.every.days} days` : `every ${s.every.months} months`;
      const button = mayWrite() ? h("button", { type: "button" }, "Done today") : null;
      button?.addEventListener("click", async () => {
        button.disabled = true;
        try {
          await api(`/schedules/${s.id}/done`, { method: "POST", body: {} });
          flash(`${s.title}: logged.`, "ok");
          refreshDueBadge();
          await draw();
        } catch (e) {
          showError(e);
          button.disabled = false;
        }
      });
      return h("li", {}, h("strong", {}, s.title), ` ${every}, next ${dayText(s.next)} `, button);
    });
    const out = h("div", { class: "out" });
    const add = mayWrite() && !item.gone
      ? h(
          "form",
          { class: "inline-form", "aria-label": "Add a schedule" },
          field("Task", h("input", { name: "title", required: "", maxlength: "120", placeholder: "Descale" })),
          field("Every", h("input", { name: "n", type: "number", min: "1", value: "3", required: "", inputmode: "numeric" })),
          field("Period", select("unit", [["months", "months"], ["days", "days"]], "months")),
          h("button", { type: "submit" }, "Add schedule"),
          out,
        )
      : null;
    add?.addEventListener("submit", async (e) => {
      e.preventDefault();
      const v = formValues(/** @type {HTMLFormElement} */ (add));
      try {
        await api(`/items/${id}/schedules`, { method: "POST", body: { title: v.title, every: { [String(v.unit)]: Number(v.n) } } });
        flash("Schedule added.", "ok");
        refreshDueBadge();
        await draw();
      } catch (err) {
        showError(err, out);
      }
    });
    body.replaceChildren(
      ...[
        rows.length ? h("ul", { class: "schedules" }, rows) : h("p", {}, "No maintenance is scheduled."),
        add,
        done.length
          ? h("details", {}, h("summary", {}, `Done (${done.length})`), h("ul", {}, done.map((d) => h("li", {}, `${dayText(d.at)}: ${d.title}${d.note ? ` — ${d.note}` : ""}`))))
          : null,
      ].filter((n) => n !== null),
    );
  };
  draw().catch((e) => showError(e));
  return section("Maintenance", body);
}
