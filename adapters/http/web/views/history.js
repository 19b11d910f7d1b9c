// @ts-check
// The history: who changed what. An item's (or a place's) changes with Undo on a change of its own fields, and
// the household's activity feed, newest first, paged with "Older".

import { api, ApiError, query } from "../api.js";
import { h, date, human, section, itemLink, showError, flash } from "../ui.js";

/** What each action reads as in a sentence: "Ada changed", "Olga removed". */
const ACTIONS = {
  create: "created",
  patch: "changed",
  bulk: "changed (with others)",
  measurement: "added a measurement to",
  fault: "recorded a fault on",
  test: "recorded a test of",
  gone: "marked gone",
  undo: "undid a change of",
  accept: "accepted",
  build: "built",
  drop: "dropped",
  delete: "deleted",
  join: "joined the household",
  role: "changed the role of",
  remove: "removed",
  import: "imported",
};

/** What a project's step did to one of its items. */
const PROJECT_STEPS = { accept: "reserved for a project", build: "built into a project", drop: "released from a project" };

/** Whether the page's reader may write (a viewer sees no Undo: the API would refuse it, 403). */
function mayWrite() {
  return document.body.dataset.role !== "viewer";
}

function who(event) {
  if (!event.member) return "command line";
  // The reader's own changes read as theirs.
  return String(event.member.id) === document.body.dataset.member ? "you" : event.member.name;
}

/** What a field is called in a sentence: `place_id` is the place. */
function fieldName(field) {
  return field === "place_id" ? "place" : human(field);
}

/** A link to the object an event is about (media and members have no page of their own). */
function objectLink(object) {
  const { kind, id } = object;
  if (kind === "item") return itemLink(id);
  if (kind === "place") return h("a", { href: `#/places/${id}` }, `place ${id}`);
  if (kind === "project") return h("a", { href: `#/projects/${id}` }, `project ${id}`);
  if (kind === "media") return `file ${id}`;
  return `member ${id}`;
}

function value(v) {
  return v === null || v === undefined || v === "" ? "—" : v;
}

function changesList(event) {
  if (!event.changes.length) return null;
  return h(
    "ul",
    { class: "changes" },
    event.changes.map((c) =>
      h(
        "li",
        {},
        h("span", { class: "field-name" }, fieldName(c.field)),
        ": ",
        h("span", { class: "before" }, value(c.before_name ?? c.before)),
        " → ",
        h("span", { class: "after" }, value(c.after_name ?? c.after)),
      ),
    ),
  );
}

/** The API says which changes can be undone (the one rule, `history::undoable`): the page keeps no list. */
function undoable(event) {
  return event.undoable === true;
}

/** One event as a list entry; `withObject` names its object (the feed), `undo` adds the Undo button. */
function entry(event, { withObject, onUndo = undefined }) {
  const action = event.object.kind === "item" && PROJECT_STEPS[event.action] ? PROJECT_STEPS[event.action] : ACTIONS[event.action] || human(event.action);
  const out = h("div", { class: "out" });
  const undo =
    onUndo && mayWrite() && undoable(event)
      ? h("button", { type: "button", class: "undo", "aria-label": `Undo this change (${event.changes.map((c) => human(c.field)).join(", ")})`, onclick: () => onUndo(event, out) }, "Undo")
      : null;
  return h(
    "li",
    { class: "event", dataset: { event: String(event.id), action: event.action } },
    h(
      "div",
      { class: "event-line" },
      h("time", { datetime: event.at }, date(event.at)),
      " ",
      h("strong", { class: event.member ? "actor" : "actor command-line" }, who(event)),
      " ",
      action,
      withObject && event.action !== "join" ? [" ", objectLink(event.object)] : null,
      undo ? [" ", undo] : null,
    ),
    changesList(event),
    out,
  );
}

/** Undoes a change; a 409 (the item changed since) is explained rather than only shown. */
async function undoEvent(event, out, done) {
  try {
    await api(`/events/${event.id}/undo`, { method: "POST" });
    flash("Undone: the values before that change are back.", "ok");
    await done();
  } catch (err) {
    if (err instanceof ApiError && err.status === 409) {
      out.replaceChildren(
        h(
          "p",
          { class: "message error", role: "alert" },
          `This change cannot be undone any more: the item changed after it (${err.message}). Undo the later changes first, newest first, or change the item by hand.`,
        ),
      );
    } else {
      showError(err, out);
    }
  }
}

/**
 * The history of an item as a section of its page: loaded after the page shows, oldest first, each entry with
 * when, who, what and the fields' values before and after. `onUndone` redraws the page after an undo.
 */
export function historySection(itemId, onUndone) {
  const body = h("div", { class: "history-body" }, h("p", { class: "empty" }, "Loading the history…"));
  const box = section("History", body);
  box.classList.add("history");
  const load = async () => {
    try {
      const { events } = /** @type {import("../api.js").EventList} */ (await api(`/items/${itemId}/history`));
      const onUndo = (event, out) => undoEvent(event, out, async () => (onUndone ? onUndone() : load()));
      body.replaceChildren(
        events.length
          ? h("ol", { class: "events" }, events.map((e) => entry(e, { withObject: false, onUndo })))
          : h("p", { class: "empty" }, "No change recorded."),
      );
    } catch (err) {
      body.replaceChildren();
      showError(err, body);
    }
  };
  load();
  return box;
}

/** The activity feed: the household's changes, newest first, 50 a page; "Older" pages with `before`. */
export async function activityView(params) {
  const before = params.get("before");
  const { events } = /** @type {import("../api.js").EventList} */ (await api(`/activity${query({ limit: 50, before })}`));
  const older = events.length === 50 ? h("a", { class: "button", href: `#/activity?before=${events[events.length - 1].id}` }, "Older") : null;
  return h(
    "div",
    { class: "view activity" },
    h("h1", {}, "Activity"),
    h("p", { class: "sub" }, "Every change to the household's items, places, files, projects and members: who made it, and what it changed."),
    events.length
      ? h("ol", { class: "events card" }, events.map((e) => entry(e, { withObject: true })))
      : h("p", { class: "empty" }, before ? "Nothing older." : "No change recorded yet."),
    h("div", { class: "pager" }, before ? h("a", { href: "#/activity" }, "Newest") : null, older),
  );
}
