// @ts-check
// The people of a household: the owner's page (members and roles, invitations with a link to copy, the open
// invitations with Revoke, ending a member's sessions) and everyone's API tokens for scripts.

import { api, apiBlob, download, megabytes } from "../api.js";
import { refresh } from "../router.js";
import { h, field, select, date, section, copyButton, flashNext, showError, mayWrite } from "../ui.js";
import { addPasskey, passkeysSupported } from "../passkeys.js";

const ROLES = [
  ["owner", "owner: everything, and the household's people"],
  ["member", "member: the inventory, projects, intake, pricing"],
  ["viewer", "viewer: reads only"],
];

/** Re-renders the page after a change, with its result shown on the new page. */
function done(text) {
  flashNext(text, "ok");
  refresh();
}

/** Runs `action`, showing a refusal inside `out`. */
async function attempt(out, action) {
  try {
    await action();
  } catch (e) {
    showError(e, out);
  }
}

/** The open invitations (owners only): role, who made each, when it expires, and Revoke. */
function invitationsSection(invitations, out) {
  const rows = invitations.map((inv) => {
    const by = inv.created_by ? inv.created_by.name : "the command line";
    const revoke = h("button", { type: "button", class: "danger", "aria-label": `Revoke the ${inv.role} invitation by ${by}` }, "Revoke");
    revoke.addEventListener("click", () =>
      attempt(out, async () => {
        if (!window.confirm(`Revoke this ${inv.role} invitation? Its link will no longer work.`)) return;
        await api(`/invitations/${inv.id}`, { method: "DELETE" });
        done(`The ${inv.role} invitation by ${by} was revoked.`);
      }),
    );
    return h(
      "tr",
      { "data-invitation": String(inv.id) },
      h("th", { scope: "row" }, inv.role),
      h("td", {}, by),
      h("td", {}, date(inv.created_at)),
      h("td", {}, date(inv.expires_at)),
      h("td", { class: "row-actions" }, revoke),
    );
  });
  return section(
    "Open invitations",
    invitations.length
      ? h(
          "div",
          { class: "table-wrap" },
          h(
            "table",
            { class: "invitations" },
            h("thead", {}, h("tr", {}, ["Role", "Made by", "Made", "Expires", ""].map((c) => h("th", { scope: "col" }, c)))),
            h("tbody", {}, ...rows),
          ),
        )
      : h("p", {}, "None: every invitation was used, revoked or has expired."),
  );
}

export async function householdView(me) {
  const owner = me?.role === "owner";
  const [{ members }, who, { invitations }, backups] = await Promise.all([
    api("/members"),
    api("/me"),
    owner ? api("/invitations") : Promise.resolve({ invitations: [] }),
    owner ? api("/backups") : Promise.resolve(null),
  ]);
  const out = h("div", { class: "out" });

  const rows = members.map((m) => {
    const role = select("role", ROLES.map(([r]) => [r, r]), m.role, { "aria-label": `Role of ${m.name}` });
    role.addEventListener("change", () =>
      attempt(out, async () => {
        try {
          await api(`/members/${m.id}`, { method: "PATCH", body: { role: role.value } });
        } catch (e) {
          // Refused: the select shows the role the member really has.
          role.value = m.role;
          throw e;
        }
        done(`${m.name} is now ${role.value}.`);
      }),
    );
    const end = h("button", { type: "button", "aria-label": `End the sessions of ${m.name}` }, "End sessions");
    end.addEventListener("click", () =>
      attempt(out, async () => {
        if (!window.confirm(`End every session of ${m.name}? They are signed out on every device and sign in again.`)) return;
        const { ended } = await api(`/members/${m.id}/sessions`, { method: "DELETE" });
        done(`Ended ${ended} session${ended === 1 ? "" : "s"} of ${m.name}.`);
      }),
    );
    const remove = h("button", { type: "button", class: "danger" }, "Remove");
    remove.addEventListener("click", () =>
      attempt(out, async () => {
        if (!window.confirm(`Remove ${m.name} from the household? Their sessions and tokens end too.`)) return;
        await api(`/members/${m.id}`, { method: "DELETE" });
        done(`${m.name} was removed.`);
      }),
    );
    return h(
      "tr",
      {},
      h("th", { scope: "row" }, m.name, m.id === who.member.id ? " (you)" : ""),
      h("td", {}, owner ? role : m.role),
      h("td", {}, date(m.created_at)),
      // Not on one's own row: signing oneself out everywhere is Sign out, and removing oneself is refused.
      h("td", { class: "row-actions" }, owner && m.id !== who.member.id ? [end, remove] : null),
    );
  });

  const openList = h("div", { class: "open-invitations" }, owner ? invitationsSection(invitations, out) : null);
  const inviteRole = select("role", ROLES, "member", {});
  const invited = h("div", { class: "invited", "aria-live": "polite" });
  const invite = h(
    "form",
    { class: "card", "aria-label": "Invite someone" },
    h("p", {}, "An invitation is a link for one person, valid 7 days. Send it any way you like; whoever opens it first joins."),
    field("Role", inviteRole),
    h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Make an invitation link")),
    invited,
  );
  invite.addEventListener("submit", (e) => {
    e.preventDefault();
    attempt(invited, async () => {
      const inv = await api("/invitations", { method: "POST", body: { role: inviteRole.value } });
      invited.replaceChildren(
        h("p", {}, `A link for a new ${inv.role}, valid until ${date(inv.expires_at)}:`),
        h("p", { class: "link" }, h("code", { class: "invitation-url" }, inv.url)),
        copyButton("Copy link", inv.url),
      );
      const { invitations: now } = await api("/invitations");
      openList.replaceChildren(invitationsSection(now, out));
    });
  });

  return h(
    "div",
    { class: "view household" },
    h("h1", {}, who.household.name),
    out,
    section(
      "Members",
      h(
        "div",
        { class: "table-wrap" },
        h(
          "table",
          { class: "members" },
          h("thead", {}, h("tr", {}, ["Name", "Role", "Joined", ""].map((c) => h("th", { scope: "col" }, c)))),
          h("tbody", {}, ...rows),
        ),
      ),
    ),
    owner ? section("Invite someone", invite) : null,
    owner ? openList : null,
    backups ? backupSection(backups) : null,
  );
}

/** The backups the server keeps: the last one's time and size, and a fresh one to download. */
function backupSection(status) {
  const out = h("div", { class: "out", "aria-live": "polite" });
  const every = status.every_secs ? `A backup is written every ${period(status.every_secs)}; the newest ${status.keep} are kept.` : "No scheduled backups (set TROVE_BACKUP_EVERY, e.g. 1d).";
  const last = status.last
    ? h("p", { class: "last-backup" }, `Last backup: ${date(status.last.at)}, ${megabytes(status.last.bytes)} (${status.count} kept).`)
    : h("p", { class: "last-backup" }, "No backup yet.");
  const make = h("button", { type: "button", class: "primary" }, "Back up now and download");
  make.addEventListener("click", () =>
    attempt(out, async () => {
      make.disabled = true;
      try {
        const made = await api("/backups", { method: "POST" });
        download(await apiBlob(`/backups/${encodeURIComponent(made.name)}`), made.name);
        last.textContent = `Last backup: ${date(made.at)}, ${megabytes(made.bytes)}.`;
        out.replaceChildren(h("p", { class: "message ok" }, `${made.name} is downloaded. Restore it with: trove restore ${made.name}`));
      } finally {
        make.disabled = false;
      }
    }),
  );
  return section("Backups", h("p", {}, "One archive of everything: every item, place, member, history and file. ", every), last, h("div", { class: "actions" }, make), out);
}

/** Seconds as people say a period. */
function period(secs) {
  if (secs % 604800 === 0) return `${secs / 604800} week${secs === 604800 ? "" : "s"}`;
  if (secs % 86400 === 0) return secs === 86400 ? "day" : `${secs / 86400} days`;
  if (secs % 3600 === 0) return secs === 3600 ? "hour" : `${secs / 3600} hours`;
  return `${Math.round(secs / 60)} minutes`;
}

/**
 * "Your passkeys": the signed-in member's passkeys with Remove, and a form to add one. Marked `data-read`: a
 * passkey is a way to sign in, not a change to the household, so viewers manage theirs too.
 */
function passkeysSection(passkeys) {
  const out = h("div", { class: "out", "aria-live": "polite" });
  const rows = passkeys.map((p) => {
    const remove = h("button", { type: "button", class: "danger", "data-read": "", "aria-label": `Remove the passkey ${p.name}` }, "Remove");
    remove.addEventListener("click", () =>
      attempt(out, async () => {
        if (!window.confirm(`Remove the passkey "${p.name}"? It will no longer sign you in.`)) return;
        await api(`/passkeys/${p.id}`, { method: "DELETE" });
        done(`The passkey "${p.name}" was removed.`);
      }),
    );
    return h(
      "tr",
      {},
      h("th", { scope: "row" }, p.name),
      h("td", {}, date(p.created_at)),
      h("td", {}, p.last_used_at ? date(p.last_used_at) : "not yet"),
      h("td", {}, remove),
    );
  });
  const name = h("input", { name: "passkey-name", required: true, maxlength: 100, placeholder: "phone" });
  const form = h(
    "form",
    { class: "card", "aria-label": "Add a passkey", "data-read": "" },
    field("Passkey name", name, "Which device or key it is, so you know which to remove."),
    h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Add a passkey")),
  );
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    attempt(out, async () => {
      const added = await addPasskey(name.value.trim());
      done(`The passkey "${added.name}" was added.`);
    });
  });
  return section(
    "Your passkeys",
    h("p", {}, "Passkeys sign you in with your name and your device's unlock (fingerprint, face or PIN), no password."),
    out,
    passkeys.length
      ? h(
          "div",
          { class: "table-wrap" },
          h(
            "table",
            { class: "passkeys" },
            h("thead", {}, h("tr", {}, ["Name", "Made", "Last used", ""].map((c) => h("th", { scope: "col" }, c)))),
            h("tbody", {}, ...rows),
          ),
        )
      : h("p", {}, "None yet."),
    passkeysSupported() ? form : h("p", {}, "This browser cannot make passkeys here: passkeys need https, or http://localhost."),
  );
}

export async function tokensView() {
  const [{ tokens }, { passkeys }] = await Promise.all([api("/tokens"), api("/passkeys")]);
  const out = h("div", { class: "out" });
  const made = h("div", { class: "made", "aria-live": "polite" });
  const name = h("input", { name: "name", required: true, maxlength: 100, placeholder: "backup script" });
  const scope = select("scope", [["read", "read: look only"], ["write", "write: change what my role allows"]], "read", {});
  const days = h("input", { name: "expires_in_days", type: "number", min: 1, max: 3650, inputmode: "numeric", placeholder: "never" });
  const form = h(
    "form",
    { class: "card", "aria-label": "Make a token" },
    field("Name", name, "What the token is for, so you know which to revoke."),
    field("Scope", scope),
    field("Expires after (days)", days),
    h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Make a token")),
    made,
  );
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    attempt(made, async () => {
      const body = { name: name.value.trim(), scope: scope.value };
      if (days.value) body.expires_in_days = +days.value;
      const t = await api("/tokens", { method: "POST", body });
      made.replaceChildren(
        h("p", {}, "Your new token, shown this once: keep it where your script reads it. Send it as ", h("code", {}, "Authorization: Bearer TOKEN"), "."),
        h("p", { class: "link" }, h("code", { class: "new-token" }, t.token)),
        copyButton("Copy token", t.token),
      );
      name.value = "";
    });
  });

  const rows = tokens.map((t) => {
    const revoke = h("button", { type: "button", class: "danger", "aria-label": `Revoke the token ${t.name}` }, "Revoke");
    revoke.addEventListener("click", () =>
      attempt(out, async () => {
        if (!window.confirm(`Revoke the token “${t.name}”? Scripts using it stop working at once.`)) return;
        await api(`/tokens/${t.id}`, { method: "DELETE" });
        done(`The token "${t.name}" was revoked.`);
      }),
    );
    return h(
      "tr",
      {},
      h("th", { scope: "row" }, t.name),
      h("td", {}, t.scope),
      h("td", {}, date(t.created_at)),
      h("td", {}, t.expires_at ? date(t.expires_at) : "never"),
      h("td", {}, t.last_used_at ? date(t.last_used_at) : "not yet"),
      h("td", {}, revoke),
    );
  });

  return h(
    "div",
    { class: "view tokens" },
    h("h1", {}, "API tokens"),
    h("p", {}, "Tokens let scripts use Trove's API as you. A read token cannot change anything."),
    out,
    // A viewer's role makes no tokens: the form is left out whole.
    mayWrite() ? section("Make a token", form) : null,
    section(
      "Your tokens",
      tokens.length
        ? h(
            "div",
            { class: "table-wrap" },
            h(
              "table",
              { class: "tokens" },
              h("thead", {}, h("tr", {}, ["Name", "Scope", "Made", "Expires", "Last used", ""].map((c) => h("th", { scope: "col" }, c)))),
              h("tbody", {}, ...rows),
            ),
          )
        : h("p", {}, "None yet."),
    ),
    passkeysSection(passkeys),
  );
}
