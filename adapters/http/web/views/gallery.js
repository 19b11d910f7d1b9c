// @ts-check
// Pictures and papers on an item: its photos as thumbnails (opened full size in a dialog), its PDFs (receipts,
// manuals) as links, and the form that adds one; and the cover thumbnail that lists of items show. Every media
// request is a same-origin `/api/media/...` address: the browser sends the session cookie with it, and no URL
// carries a secret.

import { api, capabilities } from "../api.js";
import { h, field, select, human, day, flash, showError, megabytes, tooLarge } from "../ui.js";

/** The kinds a file may be kept as. */
const KINDS = ["photo", "receipt", "manual", "other"];

/** What the file input takes: the types the server accepts (it tells them by their bytes). */
const ACCEPTED = "image/jpeg,image/png,image/webp,application/pdf";

/** The largest file the server keeps (`limits.media_bytes` of `GET /api/capabilities`; 25 MB until it says). */
let mediaLimit = 25 * 1024 * 1024;

/** Whether the signed-in member may only read: viewers see the gallery without its add, caption and delete controls. */
function viewer() {
  return document.body.dataset.role === "viewer";
}

/** `1536000` -> `1.5 MB`. */
function size(bytes) {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

/**
 * The cover thumbnail of an item in a list (the inventory table, the lists of a place and of things to sell): its
 * first photo, loaded lazily at a fixed size so the list does not move while thumbnails arrive; an empty frame of
 * the same size when the item has no photo. Decorative: the item's name is the link next to it.
 */
export function coverThumb(item) {
  if (item.cover === null || item.cover === undefined) return h("span", { class: "cover none", "aria-hidden": "true" });
  return h("img", { class: "cover", src: `/api/media/${item.cover}/thumb`, alt: "", width: "48", height: "48", loading: "lazy", decoding: "async" });
}

/**
 * The item's gallery section, with its media already read (so the page is drawn whole, and a viewer's page is
 * drawn without write controls). It redraws itself after an upload or a deletion.
 */
export async function gallery(itemId) {
  const [list, offer] = await Promise.all([api(`/items/${itemId}/media`), capabilities()]);
  if (offer?.limits?.media_bytes) mediaLimit = offer.limits.media_bytes;
  const root = h("section", { class: "card gallery", "aria-labelledby": "gallery-title" });
  draw(root, itemId, list.media);
  return root;
}

/** Reads the item's media again and redraws the section. */
async function reload(root, itemId) {
  const list = await api(`/items/${itemId}/media`);
  draw(root, itemId, list.media);
}

function draw(root, itemId, media) {
  const pictures = media.filter((m) => m.media_type.startsWith("image/"));
  const papers = media.filter((m) => !m.media_type.startsWith("image/"));
  const viewerDialog = h("dialog", { class: "media-viewer", "aria-label": "Full-size photo" });
  // DOM's replaceChildren would write a null as the text "null": only the parts there are.
  const parts = [
    h("h2", { id: "gallery-title", tabindex: "-1" }, "Photos and papers"),
    pictures.length
      ? h("ul", { class: "thumbs" }, pictures.map((m) => pictureCard(root, itemId, m, viewerDialog)))
      : h("p", { class: "empty" }, "No photo yet."),
    papers.length ? h("ul", { class: "papers" }, papers.map((m) => paperLine(root, itemId, m))) : null,
    viewerDialog,
    viewer() ? null : uploadForm(root, itemId),
  ];
  root.replaceChildren(...parts.filter(Boolean));
}

/** What a medium is called on the page: its caption, else its kind and day. */
function title(m) {
  return m.caption || `${human(m.kind)} of ${day(m.created_at)}`;
}

function pictureCard(root, itemId, m, dialog) {
  const open = h(
    "button",
    { type: "button", class: "thumb", "data-read": "", "aria-label": `Open full size: ${title(m)}` },
    h("img", { src: `/api/media/${m.id}/thumb`, alt: m.caption || `${human(m.kind)} ${m.id}`, width: "160", height: "160", loading: "lazy", decoding: "async" }),
  );
  open.addEventListener("click", () => showFull(dialog, m));
  return h(
    "li",
    { class: "picture", dataset: { media: String(m.id) } },
    open,
    h("p", { class: "caption" }, m.kind === "photo" ? null : [h("span", { class: "badge" }, human(m.kind)), " "], m.caption || h("span", { class: "sub" }, day(m.created_at))),
    viewer() ? null : captionButton(root, itemId, m),
    viewer() ? null : deleteButton(root, itemId, m),
  );
}

/** A PDF (a receipt, a manual) as a link that opens it, with its kind, caption and size. */
function paperLine(root, itemId, m) {
  return h(
    "li",
    { class: "paper", dataset: { media: String(m.id) } },
    h("a", { href: `/api/media/${m.id}`, target: "_blank", rel: "noopener" }, `${human(m.kind)}: ${m.caption || `PDF of ${day(m.created_at)}`}`),
    h("span", { class: "sub" }, ` PDF, ${size(m.bytes)}`),
    viewer() ? null : captionButton(root, itemId, m),
    viewer() ? null : deleteButton(root, itemId, m),
  );
}

/** Shows a photo at full size in the page's dialog, with a link that opens the file by itself. */
function showFull(dialog, m) {
  const close = h("button", { type: "button", class: "quiet", "data-read": "" }, "Close");
  close.addEventListener("click", () => dialog.close());
  dialog.setAttribute("aria-label", `Full size: ${title(m)}`);
  dialog.replaceChildren(
    h("img", { src: `/api/media/${m.id}`, alt: m.caption || `${human(m.kind)} ${m.id}`, class: "full" }),
    h(
      "div",
      { class: "actions" },
      h("span", { class: "sub" }, `${title(m)} · ${m.width} × ${m.height} px · ${size(m.bytes)}`),
      h("a", { href: `/api/media/${m.id}`, target: "_blank", rel: "noopener" }, "Open in a new tab"),
      close,
    ),
  );
  // A click on the backdrop (outside the picture and its bar) closes it too.
  dialog.onclick = (e) => {
    if (e.target === dialog) dialog.close();
  };
  dialog.showModal();
  close.focus();
}

/**
 * Edits a caption in place: the button opens a small form under it with the caption as it is; saving sends
 * `PATCH /api/media/{id}` (an emptied caption is removed) and redraws the gallery; Cancel or Escape closes it.
 */
function captionButton(root, itemId, m) {
  const text = m.caption ? "Edit caption" : "Add caption";
  // The visible words start the accessible name, which names the file.
  const b = h("button", { type: "button", class: "quiet small", "aria-label": `${text}: ${title(m)}`, "aria-expanded": "false" }, text);
  const slot = h("span", { class: "caption-edit" }, b);
  b.addEventListener("click", () => {
    const input = h("input", { name: "caption", maxlength: "500", value: m.caption || "", "aria-label": "Caption" });
    const save = h("button", { type: "submit", class: "primary small" }, "Save");
    const cancel = h("button", { type: "button", class: "quiet small" }, "Cancel");
    const out = h("div", { class: "out" });
    const form = h("form", { class: "inline-form caption-form", "aria-label": `Caption of ${title(m)}` }, input, save, cancel, out);
    const close = () => {
      b.setAttribute("aria-expanded", "false");
      slot.replaceChildren(b);
      b.focus();
    };
    cancel.addEventListener("click", close);
    form.addEventListener("keydown", (e) => {
      if (e.key === "Escape") close();
    });
    form.addEventListener("submit", async (e) => {
      e.preventDefault();
      save.disabled = true;
      try {
        const kept = await api(`/media/${m.id}`, { method: "PATCH", body: { caption: input.value.trim() || null } });
        await reload(root, itemId);
        flash(kept.caption ? `Caption saved: ${kept.caption}.` : "Caption removed.", "ok");
        root.querySelector("h2")?.focus();
      } catch (err) {
        save.disabled = false;
        showError(err, out);
      }
    });
    b.setAttribute("aria-expanded", "true");
    slot.replaceChildren(form);
    input.focus();
  });
  return slot;
}

/** Delete in two presses: the first asks, the second deletes (a receipt is not easily found again). */
function deleteButton(root, itemId, m) {
  const b = h("button", { type: "button", class: "danger small", "aria-label": `Delete ${title(m)}` }, "Delete");
  let armed = false;
  b.addEventListener("click", async () => {
    if (!armed) {
      armed = true;
      b.textContent = "Delete for good?";
      b.setAttribute("aria-label", `Delete ${title(m)} for good`);
      return;
    }
    b.disabled = true;
    try {
      await api(`/media/${m.id}`, { method: "DELETE" });
      await reload(root, itemId);
      flash(`Deleted ${title(m)}.`, "ok");
      root.querySelector("h2")?.focus();
    } catch (err) {
      b.disabled = false;
      showError(err);
    }
  });
  return b;
}

/** Adds a file: chosen (JPEG, PNG, WebP or PDF) or, on a phone, photographed with the camera. */
function uploadForm(root, itemId) {
  const file = h("input", { type: "file", name: "file", accept: ACCEPTED });
  const camera = h("input", { type: "file", name: "camera", accept: "image/jpeg,image/png,image/webp", capture: "environment" });
  const kind = select("kind", [["", "by the file"], ...KINDS.map((k) => [k, human(k)])], "");
  const caption = h("input", { name: "caption", maxlength: "500", placeholder: "front, serial plate, receipt from…" });
  // One file at a time: choosing in one input clears the other.
  file.addEventListener("change", () => file.files.length && (camera.value = ""));
  camera.addEventListener("change", () => camera.files.length && (file.value = ""));
  const out = h("div", { class: "out" });
  const button = h("button", { type: "submit", class: "primary" }, "Add");
  const form = h(
    "form",
    { class: "inline-form wide", "aria-label": "Add a photo or paper" },
    h("h3", {}, "Add a photo, receipt or manual"),
    field("File (JPEG, PNG, WebP or PDF)", file),
    field("Or take a photo", camera),
    field("Kind", kind, "A photo, or other for a PDF, unless chosen."),
    field("Caption", caption),
    button,
    h("p", { class: "hint" }, `At most ${megabytes(mediaLimit)}. Trove removes location data from photos before keeping them.`),
    out,
  );
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const chosen = file.files[0] || camera.files[0];
    if (!chosen) {
      out.replaceChildren(h("p", { class: "message error", role: "alert" }, "Choose a file or take a photo first."));
      return;
    }
    // Said before minutes of sending: in MB, as the hint says.
    const big = tooLarge(chosen, mediaLimit);
    if (big) {
      out.replaceChildren(h("p", { class: "message error", role: "alert" }, big));
      return;
    }
    const body = new FormData();
    body.append("file", chosen);
    if (kind.value) body.append("kind", kind.value);
    if (caption.value.trim()) body.append("caption", caption.value.trim());
    button.disabled = true;
    out.replaceChildren(h("p", { class: "sub", role: "status" }, `Sending ${chosen.name || "the photo"} (${size(chosen.size)})…`));
    try {
      const kept = await api(`/items/${itemId}/media`, { method: "POST", body });
      await reload(root, itemId);
      flash(`Added ${title(kept)}.`, "ok");
      root.querySelector("h2")?.focus();
    } catch (err) {
      button.disabled = false;
      showError(err, out);
    }
  });
  return form;
}
