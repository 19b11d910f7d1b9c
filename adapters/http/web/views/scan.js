// @ts-check
// Scanning a label: the camera looks for one of our QR codes (the browser's BarcodeDetector where there is one,
// else a frame sent to `POST /api/scan` twice a second) and opens the item or place it names; a box's barcode
// read instead (EAN, UPC, Code 128, ITF-14, DataMatrix) is said with its format and code.

import { api, ApiError } from "../api.js";
import { h, field, showError } from "../ui.js";

/** The page a label's URL opens (`.../#/items/7` -> `#/items/7`), or null when it is not one of ours. */
export function labelTarget(url) {
  const m = String(url).match(/#\/(items|places)\/(\d+)$/);
  return m ? `#/${m[1]}/${m[2]}` : null;
}

/** What a foreign code's status says: the label is real, but of another household (or of a deleted thing). */
const FOREIGN = "That code is not one of this household's labels.";

/** What `readOnServer` answers when it said what it read in the status instead of opening a page. */
const SAID = "said";

/** How a code's format is called (the server's and `BarcodeDetector`'s names). */
const FORMATS = {
  qr_code: "QR code", data_matrix: "DataMatrix", ean_13: "EAN-13", ean_8: "EAN-8", upc_a: "UPC-A", upc_e: "UPC-E",
  code_128: "Code 128", itf: "ITF-14",
};

/**
 * Sends one picture to the server's reader: the page to open; `SAID` when the code is a label but not one of this
 * household's, or a barcode and no label (said in `status`); null while no code is in view.
 */
async function readOnServer(blob, status) {
  const form = new FormData();
  form.append("image", blob, "frame.jpg");
  try {
    const found = await api("/scan", { method: "POST", body: form });
    if (found.kind === "code") {
      const read = found.codes.map((c) => `${FORMATS[c.format] || c.format} ${c.shown || c.text}`).join(", ");
      status.textContent = `Read ${read}: a barcode, not one of Trove's labels.`;
      return SAID;
    }
    return `#/${found.kind === "place" ? "places" : "items"}/${found.id}`;
  } catch (e) {
    if (e instanceof ApiError && e.status === 422) return null; // No code in this frame yet.
    if (e instanceof ApiError && e.status === 404) {
      status.textContent = FOREIGN;
      return SAID;
    }
    throw e;
  }
}

export async function scanView() {
  const status = h("p", { class: "scan-status", role: "status", "aria-live": "polite" }, "Starting the camera…");
  const video = h("video", { class: "scan-video", autoplay: true, muted: true, playsinline: true });
  const canvas = h("canvas", { hidden: true });
  const frame = h("div", { class: "scan-frame" }, video);
  const out = h("div", { class: "out" });
  const photo = h("input", { type: "file", name: "image", accept: "image/jpeg,image/png,image/webp", capture: "environment" });
  let timer = null;
  let stream = null;
  let busy = false;
  const stop = () => {
    clearInterval(timer);
    timer = null;
    for (const t of stream?.getTracks() || []) t.stop();
    stream = null;
  };
  const go = (target) => {
    stop();
    location.hash = target;
  };
  window.addEventListener("hashchange", stop, { once: true });

  photo.addEventListener("change", async () => {
    const file = photo.files?.[0];
    if (!file) return;
    try {
      const target = await readOnServer(file, status);
      if (target === SAID) return; // Its own message stays.
      if (target) go(target);
      else status.textContent = "No label found in that photo; try again closer, with the code flat and lit.";
    } catch (e) {
      showError(e, out);
    }
  });

  // Chromium on Linux and Windows exposes BarcodeDetector without any format: ask, and fall back to the server.
  let detector = null;
  const findDetector = async () => {
    try {
      // Not in TypeScript's DOM types yet.
      const Detector = /** @type {any} */ (window).BarcodeDetector;
      const supported = Detector ? await Detector.getSupportedFormats() : [];
      if (supported.includes("qr_code")) {
        // The barcodes on boxes too, where the browser reads them.
        detector = new Detector({ formats: Object.keys(FORMATS).filter((f) => supported.includes(f)) });
      }
    } catch {
      detector = null;
    }
  };
  const tick = async () => {
    if (busy || !stream || video.readyState < 2) return;
    busy = true;
    try {
      if (detector) {
        for (const code of await detector.detect(video)) {
          const target = labelTarget(code.rawValue);
          if (target) return go(target);
          status.textContent =
            code.format === "qr_code"
              ? "That code is not one of Trove's labels."
              : `Read ${FORMATS[code.format] || code.format} ${code.rawValue}: a barcode, not one of Trove's labels.`;
        }
        return;
      }
      canvas.width = video.videoWidth;
      canvas.height = video.videoHeight;
      canvas.getContext("2d").drawImage(video, 0, 0);
      const blob = await new Promise((resolve) => canvas.toBlob(resolve, "image/jpeg", 0.85));
      const target = blob && (await readOnServer(blob, status));
      if (target && target !== SAID) go(target);
    } catch (e) {
      stop();
      showError(e, out);
    } finally {
      busy = false;
    }
  };

  (async () => {
    try {
      stream = await navigator.mediaDevices.getUserMedia({ video: { facingMode: "environment" }, audio: false });
      await findDetector();
      video.srcObject = stream;
      await video.play().catch(() => {});
      status.textContent = "Point the camera at a Trove label.";
      timer = setInterval(tick, 500);
    } catch (e) {
      // No camera (or no permission): no black box, the photo field instead.
      frame.hidden = true;
      status.textContent = `No camera here (${e.message || e.name}): take or choose a photo of the label instead.`;
    }
  })();

  return h(
    "div",
    { class: "view scan" },
    h("h1", {}, "Scan a label"),
    status,
    frame,
    canvas,
    field("Or a photo of the label", photo),
    out,
  );
}
