// @ts-check
// Projects: "what can I build?", the proposals with their allocations, what is missing and what the rules dropped;
// accept, build, drop.

import { api, apiEvents, capabilities, keptUntilWrite } from "../api.js";
import { h, field, human, badge, date, flash, showError, withProgress, section, itemLink, usd } from "../ui.js";

/** The templates by id, read once and again after any write (a template added). */
let templates = null;
keptUntilWrite(() => (templates = null));

async function templateLabels() {
  if (!templates) {
    const list = await api("/templates");
    templates = new Map(list.templates.map((t) => [t.id, t]));
  }
  return templates;
}

/** What a proposal run's event says it is doing, for the owner: "step 2 of at most 4: reading 3 items' details". */
export function describeStep(name, data) {
  if (name === "step") {
    const counts = new Map();
    for (const t of data.tools) counts.set(t, (counts.get(t) || 0) + 1);
    const doing = [...counts].map(([tool, n]) => {
      if (tool === "list_inventory") return "reading the inventory";
      if (tool === "template_catalog") return "reading the project templates";
      if (tool === "item_details") return n === 1 ? "reading 1 item's details" : `reading ${n} items' details`;
      return `calling ${tool}`;
    });
    const what = doing.length ? doing.join(", ") : "writing the proposals; the rules check them";
    return `Step ${data.number} of at most ${data.max}: ${what}…`;
  }
  if (name === "writing") return `The model is thinking and writing (about ${data.output_tokens} tokens so far)…`;
  return null;
}

/** What the last "what can I build?" run answered, so it survives re-rendering the list. */
let lastRun = null;

export async function projectsView() {
  const [list, tpl, offer] = await Promise.all([/** @type {Promise<import("../api.js").ProjectList>} */ (api("/projects")), templateLabels(), capabilities()]);
  const root = h("div", { class: "view projects" });
  // Without a Model API the built-in planner proposes: no model call, no cost, and it says so.
  const local = offer?.proposals?.by === "local_planner";

  const wish = h("textarea", { name: "brief", rows: "2", placeholder: "e.g. something for the kids to play games on" });
  const out = h("div", { class: "out" });
  const button = h("button", { type: "submit", class: "primary" }, "What can I build?");
  const form = h(
    "form",
    { class: "card propose", "aria-labelledby": "propose-title" },
    h("h2", { id: "propose-title" }, "What can I build?"),
    h(
      "p",
      {},
      local
        ? "The built-in planner looks through what you keep and proposes projects from the templates (no model backend, no cost); the rules keep only what your inventory backs."
        : "The model looks through what you keep and proposes projects; the rules keep only what your inventory backs.",
    ),
    field("Wish (optional)", wish),
    h("div", { class: "actions" }, button),
    out,
  );
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const brief = wish.value.trim();
    const result = await withProgress(
      out,
      local ? "The built-in planner is looking through your inventory…" : "Asking the model for proposals… this can take a minute.",
      (say) => apiEvents("/projects/propose", { body: brief ? { brief } : {}, onEvent: (name, data) => {
        const said = describeStep(name, data);
        if (said) say(said);
      } }),
      button,
    );
    if (result) {
      lastRun = result;
      const fresh = await projectsView();
      root.replaceWith(fresh);
      fresh.querySelector(".run")?.focus();
    }
  });

  // This run's proposals first, in the order the planner ranked them; the rest newest first, as listed.
  const ranked = new Map((lastRun?.projects || []).map((p, n) => [p.id, n]));
  const rank = (p) => (ranked.has(p.id) ? ranked.get(p.id) : ranked.size);
  const byStatus = (s) => list.projects.filter((p) => p.status === s).sort((a, b) => rank(a) - rank(b));
  const group = (title, status, empty) => {
    const ps = byStatus(status);
    return section(title, ps.length ? h("div", { class: "project-list" }, ps.map((p) => projectCard(p, tpl))) : h("p", { class: "empty" }, empty));
  };

  root.append(
    h("h1", {}, "Projects"),
    form,
    // `Element.append` writes a null as the text "null": only what there is goes in.
    ...(lastRun ? [runSummary(lastRun, tpl, local)] : []),
    group("Proposed", "proposed", "No open proposal. Ask what you can build."),
    group("Accepted", "accepted", "Nothing accepted yet."),
    group("Built", "built", "Nothing built yet."),
    group("Dropped", "dropped", "None."),
  );
  return root;
}

/** The answer of one proposal run: how many projects, what the rules dropped and why, the steps and the cost. */
function runSummary(run, tpl, local) {
  return h(
    "section",
    { class: "card run", tabindex: "-1", "aria-labelledby": "run-title" },
    h("h2", { id: "run-title" }, `This run proposed ${run.projects.length} project${run.projects.length === 1 ? "" : "s"}`),
    h(
      "p",
      { class: "sub" },
      local
        ? `By the built-in planner, in ${run.steps} step${run.steps === 1 ? "" : "s"}: no model call, no cost.`
        : `${run.steps} model step${run.steps === 1 ? "" : "s"}, ${run.spend.calls} call${run.spend.calls === 1 ? "" : "s"}, cost ${usd(run.spend.cost_micro_usd)}.`,
    ),
    run.dropped.length
      ? [
          h("h3", {}, "Dropped by the rules"),
          h(
            "ul",
            { class: "dropped" },
            run.dropped.map((d) =>
              h(
                "li",
                {},
                h("span", { class: "what" }, tpl.get(d.template_id)?.label || `template ${d.template_id}`, d.requirement ? ` · ${human(d.requirement)}` : "", d.item_id ? [" · ", d.reason === "no such item" ? `item ${d.item_id}` : itemLink(d.item_id)] : ""),
                ": ",
                h("span", { class: "reason" }, d.reason),
              ),
            ),
          ),
        ]
      : h("p", {}, "The rules dropped nothing."),
  );
}

function projectCard(p, tpl, { full = false } = {}) {
  const t = tpl.get(p.template_id);
  const out = h("div", { class: "out" });
  const act = (what, label) => {
    const b = h("button", { type: "button", class: what === "drop" ? "danger" : what === "accept" ? "primary" : "" }, label);
    b.addEventListener("click", async () => {
      if (what === "drop" && !window.confirm(`Drop the project “${p.title}”? Its reserved items are released.`)) return;
      b.disabled = true;
      try {
        const updated = await api(`/projects/${p.id}/${what}`, { method: "POST", body: {} });
        flash(`Project “${updated.title}” is ${updated.status}.`, "ok");
        const card = projectCard(updated, tpl, { full });
        if (full) {
          const view = await projectView(p.id);
          document.querySelector(".view")?.replaceWith(view);
        } else {
          const fresh = await projectsView();
          document.querySelector(".view")?.replaceWith(fresh);
        }
        return card;
      } catch (err) {
        showError(err, out);
      } finally {
        b.disabled = false;
      }
    });
    return b;
  };
  const actions = [];
  if (p.status === "proposed") actions.push(act("accept", "Accept"), act("drop", "Drop"));
  if (p.status === "accepted") actions.push(act("build", "Mark built"), act("drop", "Drop"));
  if (p.status !== "dropped") actions.push(h("a", { class: "button", href: `#/projects/${p.id}/pack` }, "Build pack"));

  const requirements = new Map((t?.requirements || []).map((r) => [r.key, r]));
  return h(
    "article",
    { class: `project ${p.status}`, "aria-labelledby": `project-${p.id}` },
    h(
      "header",
      {},
      h("h3", { id: `project-${p.id}` }, full ? p.title : h("a", { href: `#/projects/${p.id}` }, p.title)),
      badge(p.status),
    ),
    h("p", { class: "sub" }, t ? `${t.label} · ${t.effort}` : `template ${p.template_id}`, " · ", date(p.created_at)),
    h("p", {}, p.reason),
    h("h4", {}, "Allocations"),
    h(
      "ul",
      { class: "allocations" },
      p.allocations.map((a) =>
        h("li", {}, h("span", { class: "req", title: requirements.get(a.requirement)?.label || "" }, human(a.requirement)), " ", a.units > 1 ? h("span", { class: "units" }, `${a.units} × `) : null, itemLink(a.item_id, a.item_name || `item ${a.item_id} (no longer here)`)),
      ),
    ),
    p.missing.length
      ? [
          h("h4", {}, "Missing (shopping list)"),
          h("ul", { class: "missing" }, p.missing.map((m) => h("li", {}, human(m), requirements.get(m) ? `: ${requirements.get(m).label}` : ""))),
        ]
      : h("p", { class: "ok-line" }, "Nothing missing."),
    actions.length ? h("div", { class: "actions" }, actions) : null,
    out,
  );
}

export async function projectView(id) {
  const [p, tpl] = await Promise.all([api(`/projects/${id}`), templateLabels()]);
  const t = tpl.get(p.template_id);
  return h(
    "div",
    { class: "view project-page" },
    h("p", { class: "crumbs" }, h("a", { href: "#/projects" }, "← Projects")),
    h("h1", {}, p.title),
    projectCard(p, tpl, { full: true }),
    t
      ? section(
          `Template: ${t.label}`,
          h("p", {}, t.goal),
          h("p", { class: "sub" }, `Effort: ${t.effort}`),
          h("ol", {}, t.steps.map((s) => h("li", {}, s))),
        )
      : null,
  );
}
