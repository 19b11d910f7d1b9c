// @ts-check
// Intake: read a listing, a label photo or a voice note into candidate items with their matches, and segment a
// photo of several items into regions measured in mm. Intake never writes: the owner saves each candidate, as a
// new item or merged into the item it matches.

import { api, capabilities } from "../api.js";
import { h, svg, field, select, human, quantity, usd, money, flash, showError, withProgress, section, itemLink, mayWrite, needsModel, tooLarge, CONDITIONS, INTENTS } from "../ui.js";
import { toWav, startRecording } from "../wav.js";
import { placeOptions } from "./places.js";

export async function intakeView() {
  if (!mayWrite()) {
    // Intake only writes: a viewer gets no empty panels, only what the page is for.
    return h(
      "div",
      { class: "view intake" },
      h("h1", {}, "Intake"),
      h("p", {}, "Intake reads new items in from listings, label photos, voice notes and photos. Your role reads only: a member or an owner of the household adds items."),
    );
  }
  const offer = await capabilities();
  const limits = offer?.limits || {};
  const results = h("div", { class: "candidates", "aria-live": "polite" });
  const regions = h("div", { class: "regions-out" });
  const show = (source) => (answer) => {
    if (answer) results.replaceChildren(candidatesView(answer, source));
    results.querySelector("h2")?.focus();
  };
  return h(
    "div",
    { class: "view intake" },
    h("h1", {}, "Intake"),
    h("p", {}, "Read new items in. Nothing is saved until you save a candidate."),
    h(
      "div",
      { class: "grid" },
      offered(offer?.listing, "Paste a listing", "Reading a listing", () => listingPanel(show("listing"))),
      offered(offer?.label, "Label photo", "Reading a label photo", () => labelPanel(show("label"), limits.image_bytes)),
      offered(offer?.label, "Receipt", "Reading a receipt", () => receiptPanel(results, limits.image_bytes)),
      offered(offer?.voice, "Voice note", "Reading a voice note", () => voicePanel(show("voice"), offer?.voice_audio, limits.audio_bytes)),
      photoPanel(regions, limits.image_bytes),
    ),
    regions,
    results,
  );
}

/**
 * A panel that needs the model: its form when the backend offers it (or when the server cannot say), else one
 * line in its place saying it needs a model backend.
 */
function offered(availability, title, what, panel) {
  if (!availability || availability.available) return panel();
  const box = section(title, needsModel(what, availability.reason));
  box.classList.add("unavailable");
  return box;
}

function listingPanel(show) {
  const text = h("textarea", { name: "text", rows: "6", required: true, maxlength: "20000", placeholder: "Paste the listing's title and description" });
  const out = h("div", { class: "out" });
  const button = h("button", { type: "submit", class: "primary" }, "Read listing");
  const form = h("form", { "aria-label": "Read a listing" }, field("Listing text", text), h("div", { class: "actions" }, button), out);
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    show(await withProgress(out, "Reading the listing…", () => api("/intake/listing", { method: "POST", body: { text: text.value } }), button));
  });
  return section("Paste a listing", form);
}

function labelPanel(show, limit) {
  const file = h("input", { type: "file", name: "image", accept: "image/jpeg,image/png,image/webp", capture: "environment", required: true });
  const preview = h("div", { class: "preview" });
  file.addEventListener("change", () => {
    preview.replaceChildren();
    if (file.files[0]) preview.append(h("img", { src: URL.createObjectURL(file.files[0]), alt: "The label photo to read" }));
  });
  const out = h("div", { class: "out" });
  const button = h("button", { type: "submit", class: "primary" }, "Read label");
  const form = h("form", { "aria-label": "Read a label photo" }, field("Label photo (JPEG, PNG or WebP)", file), preview, h("div", { class: "actions" }, button), out);
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const big = tooLarge(file.files[0], limit);
    if (big) return out.replaceChildren(h("p", { class: "message error", role: "alert" }, big));
    const body = new FormData();
    body.append("image", file.files[0]);
    show(await withProgress(out, "Reading the label…", () => api("/intake/label", { method: "POST", body }), button));
  });
  return section("Label photo", form);
}

/** A receipt's photo or PDF read into lines; each line saved as a new item or as the purchase of the item it matches. */
function receiptPanel(results, limit) {
  const file = h("input", { type: "file", name: "file", accept: "image/jpeg,image/png,image/webp,application/pdf", required: true });
  const out = h("div", { class: "out" });
  const button = h("button", { type: "submit", class: "primary" }, "Read receipt");
  const form = h("form", { "aria-label": "Read a receipt" }, field("Receipt or order confirmation (photo or PDF)", file), h("div", { class: "actions" }, button), out);
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const big = tooLarge(file.files[0], limit);
    if (big) return out.replaceChildren(h("p", { class: "message error", role: "alert" }, big));
    const body = new FormData();
    body.append("file", file.files[0]);
    const answer = await withProgress(out, "Reading the receipt…", () => api("/intake/receipt", { method: "POST", body }), button);
    if (answer) {
      results.replaceChildren(receiptView(answer));
      results.querySelector("h2")?.focus();
    }
  });
  return section("Receipt", form);
}

/** The receipt read: what does not add up, then a choice per line, saved together with the receipt attached. */
function receiptView(r) {
  const choices = r.lines.map((line, i) => {
    const options = [["new", `A new item: ${line.description}`], ...line.matches.map((m) => [String(m.item_id), `The purchase of item ${m.item_id} (${m.why})`]), ["skip", "Leave it out"]];
    const choice = select(`line-${i}`, options, line.matches.length ? String(line.matches[0].item_id) : "new", { "aria-label": `What ${line.description} is` });
    return { line, choice };
  });
  const out = h("div", { class: "out", "aria-live": "polite" });
  const save = h("button", { type: "button", class: "primary" }, "Save the receipt");
  save.addEventListener("click", async () => {
    save.disabled = true;
    try {
      const ids = [];
      for (const { line, choice } of choices) {
        if (choice.value === "skip") continue;
        if (choice.value === "new") {
          const made = await api("/items", {
            method: "POST",
            body: { name: line.description, item_type: "other", profile: "", condition: "new", intent: "keep", quantity: line.quantity, purchase: line.purchase },
          });
          ids.push(made.id);
        } else {
          const id = Number(choice.value);
          await api(`/items/${id}`, { method: "PATCH", body: { purchase: line.purchase } });
          ids.push(id);
        }
      }
      if (ids.length) await api(`/intake/receipt/${r.receipt_id}/attach`, { method: "POST", body: { item_ids: ids } });
      out.replaceChildren(h("p", { class: "message ok" }, `Saved: ${ids.length} items have their purchase and the receipt.`), h("ul", { class: "plain-list" }, ids.map((id) => h("li", {}, itemLink(id)))));
      save.hidden = true;
    } catch (e) {
      showError(e, out);
      save.disabled = false;
    }
  });
  const head = [r.vendor, r.date, r.total ? money(r.total.amount, r.total.currency) : null].filter(Boolean).join(" · ");
  return section(
    "Receipt read",
    h("p", { class: "receipt-head" }, head || "No vendor, day or total read."),
    r.problems.length ? h("ul", { class: "receipt-problems" }, r.problems.map((p) => h("li", { class: "message error" }, p))) : h("p", { class: "message ok" }, "The lines add up to the total."),
    h(
      "ol",
      { class: "receipt-lines" },
      choices.map(({ line, choice }) =>
        h("li", {}, h("p", {}, `${line.quantity} × ${line.description}`, line.price ? ` — ${money(line.price.amount, line.price.currency)}` : ""), choice),
      ),
    ),
    h("div", { class: "actions" }, save),
    out,
    h("p", { class: "hint" }, `Spent ${usd(r.spend.cost_micro_usd)}.`),
  );
}

function voicePanel(show, audio, limit) {
  let wav = null;
  const status = h("p", { class: "sub", "aria-live": "polite" }, "Record a note, or choose an audio file.");
  const player = h("div", {});
  const setWav = (blob, how) => {
    wav = blob;
    player.replaceChildren(h("audio", { controls: true, src: URL.createObjectURL(blob), "aria-label": "The voice note" }));
    status.textContent = `${how}: ${(blob.size / 1024).toFixed(0)} KB of 16-bit mono WAV, ready to read.`;
  };
  const convert = async (blob, how) => {
    status.textContent = "Converting to WAV…";
    try {
      setWav(await toWav(blob), how);
    } catch (err) {
      status.textContent = `That audio could not be decoded here (${err.message}). Try another file or record again.`;
    }
  };

  let recording = null;
  const record = h("button", { type: "button", "aria-pressed": "false" }, "● Record");
  record.addEventListener("click", async () => {
    if (recording) {
      const blob = await recording.stop();
      recording = null;
      record.textContent = "● Record";
      record.setAttribute("aria-pressed", "false");
      await convert(blob, "Recorded");
      return;
    }
    if (!navigator.mediaDevices?.getUserMedia || !window.MediaRecorder) {
      status.textContent = "This browser cannot record here (recording needs https or localhost). Choose a file instead.";
      return;
    }
    try {
      recording = await startRecording();
      record.textContent = "■ Stop";
      record.setAttribute("aria-pressed", "true");
      status.textContent = "Recording… press Stop when done.";
    } catch (err) {
      status.textContent = `The microphone is not available: ${err.message}.`;
    }
  });
  const file = h("input", { type: "file", name: "audio", accept: "audio/*" });
  file.addEventListener("change", () => file.files[0] && convert(file.files[0], "Converted"));
  const transcript = h("textarea", { name: "transcript", rows: "3", placeholder: "…or type what you would say" });

  const out = h("div", { class: "out" });
  const button = h("button", { type: "submit", class: "primary" }, "Read voice note");
  const form = h(
    "form",
    { "aria-label": "Read a voice note" },
    ...(audio && !audio.available
      ? [h("p", { class: "sub", title: audio.reason || null }, "This model backend cannot listen to audio: type what you would say.")]
      : [h("div", { class: "actions" }, record), field("Audio file", file), status, player]),
    field(audio && !audio.available ? "Transcript" : "Transcript (instead of audio)", transcript),
    h("div", { class: "actions" }, button),
    out,
  );
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    let body;
    if (transcript.value.trim()) body = { transcript: transcript.value.trim() };
    else if (wav && tooLarge(wav, limit)) {
      out.replaceChildren(h("p", { class: "message error", role: "alert" }, tooLarge(wav, limit)));
      return;
    } else if (wav) {
      body = new FormData();
      body.append("audio", wav, "note.wav");
    } else {
      out.replaceChildren(h("p", { class: "message error", role: "alert" }, "Record a note, choose an audio file or type a transcript first."));
      return;
    }
    show(await withProgress(out, "Transcribing and reading the note…", () => api("/intake/voice", { method: "POST", body }), button));
  });
  return section("Voice note", form);
}

function photoPanel(picture, limit) {
  const file = h("input", { type: "file", name: "image", accept: "image/jpeg,image/png,image/webp", capture: "environment", required: true });
  const reference = select("reference", [["", "none"], ["card", "a credit card (85.60 × 53.98 mm)"], ["marker", "a square marker"]], "");
  const side = h("input", { name: "reference_mm", type: "number", min: "1", step: "any", inputmode: "decimal", placeholder: "50" });
  const sideField = field("Marker side (mm)", side);
  sideField.hidden = true;
  reference.addEventListener("change", () => {
    sideField.hidden = reference.value !== "marker";
    side.required = reference.value === "marker";
  });
  const out = h("div", { class: "out" });
  const button = h("button", { type: "submit", class: "primary" }, "Find the items");
  const form = h(
    "form",
    { "aria-label": "Find items in a photo" },
    field("Photo of several items on a plain background", file),
    field("Reference of known size", reference),
    sideField,
    h("div", { class: "actions" }, button),
    out,
  );
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const big = tooLarge(file.files[0], limit);
    if (big) return out.replaceChildren(h("p", { class: "message error", role: "alert" }, big));
    const body = new FormData();
    body.append("image", file.files[0]);
    let q = "";
    if (reference.value === "card") {
      body.append("reference", "card");
      q = "?reference=card";
    } else if (reference.value === "marker" && side.value) {
      body.append("reference_mm", side.value);
      q = `?reference_mm=${encodeURIComponent(side.value)}`;
    }
    // Measured on the server, no model call: leaving meanwhile loses nothing billed.
    const answer = await withProgress(out, "Finding the items…", () => api(`/intake/photo${q}`, { method: "POST", body }), button, { run: false });
    if (answer) showRegions(picture, file.files[0], answer, reference.value === "card" ? "credit card" : "square marker");
  });
  return section("Photo of several items", form);
}

/**
 * Shows the regions found: the picture with its numbered boxes, the table of sizes and a card per region to save.
 * "Not the card" takes the reference back: every region is then an item, without sizes (none is guessed).
 */
async function showRegions(picture, image, answer, noun) {
  const places = await placeOptions().catch(() => []);
  const draw = (answer) => {
    const notReference = answer.regions.some((r) => r.reference)
      ? h("button", { type: "button" }, `It is not the ${noun}`)
      : null;
    notReference?.addEventListener("click", () =>
      draw({
        ...answer,
        scale_mm_per_px: undefined,
        note: `No ${noun} in the photo, as you said: the sizes are not known.`,
        regions: answer.regions.map(({ width_mm: _w, height_mm: _h, ...r }) => ({ ...r, reference: false })),
      }),
    );
    picture.replaceChildren(section("Items found in the photo", regionsView(image, answer, notReference), regionItems(answer, places)));
    picture.querySelector("h2")?.setAttribute("tabindex", "-1");
    picture.querySelector("h2")?.focus();
  };
  draw(answer);
}

/** A region's size in mm, when the photo has a scale. */
function size(r) {
  return r.width_mm != null && r.height_mm != null ? `${r.width_mm.toFixed(1)} × ${r.height_mm.toFixed(1)} mm` : null;
}

/**
 * The photo with each region drawn over it (SVG in the photo's own pixels), numbered in reading order (the
 * server's order: rows top to bottom, each left to right); the table gives each region's size in mm when known.
 */
export function regionsView(image, answer, extra = null) {
  const { width, height } = answer.image;
  const url = URL.createObjectURL(image);
  const stroke = Math.max(2, Math.round(Math.max(width, height) / 300));
  const font = Math.max(12, Math.round(Math.max(width, height) / 40));
  const overlay = svg(
    "svg",
    { viewBox: `0 0 ${width} ${height}`, class: "overlay", role: "img", "aria-label": `${answer.regions.length} regions found` },
    svg("image", { href: url, x: 0, y: 0, width, height }),
    answer.regions.map((r, i) => {
      // The caption sits above its box, or inside it when the box touches the top; it runs from the box's left
      // edge, or ends at its right edge in the right half, so it stays inside the picture.
      const text = `${i + 1}${r.reference ? " card" : ""}`;
      const right = r.x + r.width / 2 > width / 2;
      return svg(
        "g",
        { class: r.reference ? "region reference" : "region" },
        svg("rect", { x: r.x, y: r.y, width: r.width, height: r.height, "stroke-width": stroke }),
        svg(
          "text",
          {
            x: right ? Math.min(width - stroke, r.x + r.width) : Math.max(stroke, r.x + stroke),
            y: r.y > font + stroke * 2 ? r.y - stroke * 2 : Math.min(height - stroke, r.y + font + stroke),
            "text-anchor": right ? "end" : "start",
            "font-size": font,
          },
          text,
        ),
      );
    }),
  );
  return h(
    "figure",
    { class: "regions" },
    overlay,
    h(
      "figcaption",
      {},
      `${answer.regions.length} region${answer.regions.length === 1 ? "" : "s"} in the photo, numbered in reading order.`,
      answer.note ? h("p", { class: answer.scale_mm_per_px ? "message info" : "message error" }, answer.note, extra ? " " : "", extra) : null,
      answer.regions.length
        ? h(
            "table",
            {},
            h("thead", {}, h("tr", {}, ["#", "Size (width × height)"].map((c) => h("th", { scope: "col" }, c)))),
            h(
              "tbody",
              {},
              answer.regions.map((r, i) =>
                h(
                  "tr",
                  { class: r.reference ? "reference" : null },
                  h("td", {}, String(i + 1)),
                  h("td", {}, r.reference ? `${size(r)}: the reference` : size(r) || "not known: no reference in the photo"),
                ),
              ),
            ),
          )
        : null,
    ),
  );
}

/**
 * Each region that is not the reference, ready to save as a new item: its crop (kept pending by the server, its
 * `photo_id`) becomes the item's first photo, its size in mm, when known, the item's width and length, and the
 * place chosen its place.
 */
function regionItems(answer, places) {
  const items = answer.regions.map((r, i) => [r, i + 1]).filter(([r]) => !r.reference);
  if (!items.length) return null;
  // Over 40 regions (a tray of parts) the server makes no crops: they are counted, and saved as one stock.
  if (items.some(([r]) => r.photo_id == null)) return countItem(answer, items.length, places);
  return h("div", { class: "region-items" }, h("h3", {}, "Save what was found"), items.map(([r, n]) => regionCard(r, n, places)));
}

/** Saves `body` as a new item from `form`: on success the form is marked saved and locked, with a link to the item. */
async function saveNewItem(body, form, save, out) {
  try {
    const saved = await api("/items", { method: "POST", body });
    form.classList.add("saved");
    for (const el of form.querySelectorAll("input, select")) el.disabled = true;
    out.replaceChildren(h("p", { class: "message ok" }, h("span", {}, "Saved as ", itemLink(saved.id, saved.name), ".")));
    flash(`Saved ${saved.name}.`, "ok");
  } catch (err) {
    save.disabled = false;
    showError(err, out);
  }
}

/** The parts of a photo of many, saved as one item of that many units, the photo its first picture. */
function countItem(answer, count, places) {
  const name = h("input", { name: "name", required: true, placeholder: "what they are" });
  const type = h("input", { name: "item_type", required: true, placeholder: "fastener" });
  const units = h("input", { name: "quantity", type: "number", min: "1", step: "1", value: String(count), required: true });
  const place = select("place_id", [["", "nowhere in particular"], ...places], "");
  const out = h("div", { class: "out" });
  const save = h("button", { type: "submit", class: "primary" }, `Save as one item of ${count}`);
  const form = h(
    "form",
    { class: "candidate region-count", "aria-label": "Save the parts found" },
    h("h3", {}, `${count} parts counted`),
    h("p", { class: "sub" }, "Too many to save one by one: save them as one item, as many units as were counted."),
    h("div", { class: "inline-form wide" }, field("Name", name), field("Type", type), field("Units", units), field("Place", place)),
    h("div", { class: "actions" }, save),
    out,
  );
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    save.disabled = true;
    const body = { name: name.value.trim(), item_type: type.value.trim(), profile: "", condition: "good", intent: "keep", source: "photo", quantity: Number(units.value) };
    if (answer.photo_id != null) body.media_ids = [answer.photo_id];
    if (place.value) body.place_id = Number(place.value);
    await saveNewItem(body, form, save, out);
  });
  return form;
}

function regionCard(region, n, places) {
  const name = h("input", { name: "name", required: true, placeholder: "what it is" });
  const place = select("place_id", [["", "nowhere in particular"], ...places], "");
  const type = h("input", { name: "item_type", required: true, placeholder: "power_bank" });
  const condition = select("condition", CONDITIONS, "good");
  const intent = select("intent", INTENTS, "keep");
  const out = h("div", { class: "out" });
  const save = h("button", { type: "submit", class: "primary" }, "Save as new item");
  save.setAttribute("aria-label", `Save region ${n} as a new item`);
  const sized = size(region) != null;
  const form = h(
    "form",
    { class: "candidate region-item", "aria-label": `Region ${n}` },
    h(
      "div",
      { class: "region-head" },
      h("img", { class: "cover", src: `/api/media/${region.photo_id}/thumb`, alt: `Region ${n} of the photo`, width: "48", height: "48", loading: "lazy" }),
      h("h4", {}, `Region ${n}`, sized ? h("span", { class: "sub" }, ` ${size(region)}`) : null),
    ),
    h(
      "div",
      { class: "inline-form wide" },
      field(["Name", hidden(` (region ${n})`)], name),
      field(["Type", hidden(` (region ${n})`)], type),
      field(["Condition", hidden(` (region ${n})`)], condition),
      field(["Intent", hidden(` (region ${n})`)], intent),
      field(["Place", hidden(` (region ${n})`)], place),
    ),
    h("div", { class: "actions" }, save),
    out,
  );
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    save.disabled = true;
    const body = {
      name: name.value.trim(),
      item_type: type.value.trim(),
      profile: "",
      condition: condition.value,
      intent: intent.value,
      source: "photo",
      media_ids: [region.photo_id],
    };
    if (place.value) body.place_id = Number(place.value);
    if (sized) body.fields = { width: { value: +region.width_mm.toFixed(1), unit: "mm" }, length: { value: +region.height_mm.toFixed(1), unit: "mm" } };
    await saveNewItem(body, form, save, out);
  });
  return form;
}

/** The candidates of one reading, each with its matches and the buttons that save it. */
function candidatesView(answer, source) {
  const list = answer.candidates || [];
  // The label photo, kept pending by the server: the first candidate saved as a new item keeps it.
  const photo = { id: answer.photo_id ?? null };
  return h(
    "section",
    { class: "card", "aria-labelledby": "candidates-title" },
    h("h2", { id: "candidates-title", tabindex: "-1" }, `${list.length} candidate${list.length === 1 ? "" : "s"} from the ${source}`),
    answer.spend ? h("p", { class: "sub" }, `${answer.spend.calls} model call${answer.spend.calls === 1 ? "" : "s"}, cost ${usd(answer.spend.cost_micro_usd)}.`) : null,
    answer.transcript ? h("blockquote", { class: "transcript" }, h("strong", {}, "Transcript: "), answer.transcript) : null,
    answer.notes?.length ? h("ul", { class: "notes" }, answer.notes.map((t) => h("li", {}, t))) : null,
    list.length ? list.map((c, i) => candidateCard(c, i, source, photo)) : h("p", { class: "empty" }, "The reading found no item."),
  );
}

/** Text for screen readers only: tells apart the same fields of several candidates. */
function hidden(text) {
  return h("span", { class: "visually-hidden" }, text);
}

function candidateCard(candidate, index, source, photo) {
  const it = candidate.item || {};
  const n = index + 1;
  const name = h("input", { name: "name", value: it.name || "", required: true });
  const type = h("input", { name: "item_type", value: it.item_type || "", required: true });
  const condition = select("condition", CONDITIONS, it.condition || "good");
  const intent = select("intent", INTENTS, it.intent || "keep");
  const profile = h("input", { name: "profile", value: it.profile || "" });
  const location = h("input", { name: "location", value: it.location || "" });
  const out = h("div", { class: "out" });

  const edited = () => {
    const item = { ...it, name: name.value.trim(), item_type: type.value.trim(), condition: condition.value, intent: intent.value, profile: profile.value.trim() };
    if (location.value.trim()) item.location = location.value.trim();
    else delete item.location;
    if (!item.source) item.source = source;
    return item;
  };

  const done = (saved, how) => {
    card.classList.add("saved");
    for (const b of card.querySelectorAll("button")) b.disabled = true;
    out.replaceChildren(h("p", { class: "message ok" }, h("span", {}, `${how} `, itemLink(saved.id, saved.name), ".")));
    flash(`${how} ${saved.name}.`, "ok");
  };

  const saveNew = h("button", { type: "button", class: "primary" }, "Save as new item");
  saveNew.addEventListener("click", async () => {
    saveNew.disabled = true;
    try {
      const body = edited();
      if (photo?.id != null) body.media_ids = [photo.id];
      const saved = await api("/items", { method: "POST", body });
      if (photo) photo.id = null;
      done(saved, "Saved as");
    } catch (err) {
      saveNew.disabled = false;
      showError(err, out);
    }
  });

  const merge = async (id, button) => {
    button.disabled = true;
    try {
      done(await mergeInto(id, edited(), source), "Merged into");
    } catch (err) {
      button.disabled = false;
      showError(err, out);
    }
  };

  const fields = Object.entries(it.fields || {});
  const matches = candidate.matches || [];
  const card = h(
    "article",
    { class: "candidate", "aria-label": `Candidate ${n}` },
    h("h3", {}, `Candidate ${n}: ${it.name || "unnamed"}`),
    h(
      "div",
      { class: "inline-form wide" },
      field(["Name", hidden(` (candidate ${n})`)], name),
      field(["Type", hidden(` (candidate ${n})`)], type),
      field(["Condition", hidden(` (candidate ${n})`)], condition),
      field(["Intent", hidden(` (candidate ${n})`)], intent),
      field(["Profile", hidden(` (candidate ${n})`)], profile),
      field(["Location", hidden(` (candidate ${n})`)], location),
    ),
    fields.length ? h("p", {}, h("strong", {}, "Measurements: "), fields.map(([k, v]) => `${human(k)}: ${quantity(v, k)}`).join(", ")) : null,
    it.faults?.length ? h("p", {}, h("strong", {}, "Faults: "), it.faults.map((f) => `${f.text} (${f.severity})`).join("; ")) : null,
    it.accessories?.length ? h("p", {}, h("strong", {}, "Accessories: "), it.accessories.join(", ")) : null,
    candidate.notes?.length ? h("ul", { class: "notes" }, candidate.notes.map((t) => h("li", {}, t))) : null,
    h("h4", {}, matches.length ? "Matches in your inventory" : "No match in your inventory"),
    matches.length
      ? h(
          "ul",
          { class: "matches" },
          matches.map((m) => {
            const b = h("button", { type: "button" }, "Merge into this item");
            b.setAttribute("aria-label", `Merge candidate ${n} into item ${m.item_id}`);
            b.addEventListener("click", () => merge(m.item_id, b));
            return h("li", {}, itemLink(m.item_id), ` · ${Math.round((m.score || 0) * 100)}% · ${m.why || ""} `, b);
          }),
        )
      : null,
    h("div", { class: "actions" }, saveNew),
    out,
  );
  return card;
}

/**
 * Merges a candidate into an existing item: its measurements are added (as readings of this source), its new
 * faults recorded, its accessories added, and the profile filled in when the item has none.
 */
async function mergeInto(id, candidate, source) {
  const existing = await api(`/items/${id}`);
  const patch = {};
  const accessories = [...new Set([...existing.accessories, ...(candidate.accessories || [])])];
  if (accessories.length !== existing.accessories.length) patch.accessories = accessories;
  if (!existing.profile && candidate.profile) patch.profile = candidate.profile;
  let item = existing;
  if (Object.keys(patch).length) item = await api(`/items/${id}`, { method: "PATCH", body: patch });
  for (const [key, v] of Object.entries(candidate.fields || {})) {
    item = await api(`/items/${id}/measurements`, { method: "POST", body: { key, value: v.value, unit: v.unit, source: candidate.source || source } });
  }
  const known = new Set(existing.faults.map((f) => f.text.toLowerCase()));
  for (const f of candidate.faults || []) {
    if (!known.has(f.text.toLowerCase())) item = await api(`/items/${id}/faults`, { method: "POST", body: { text: f.text, severity: f.severity } });
  }
  return item;
}
