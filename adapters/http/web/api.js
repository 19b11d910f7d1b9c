// @ts-check
// Talking to Trove's API: the session cookie (set by signing in; the page keeps no secret itself), the error
// body, and what each error means to the owner.

/**
 * The API's shapes, from the committed OpenAPI document (`docs/openapi.json`): `tests/e2e/typecheck.sh` generates
 * `trove-api` from it and checks every view against it, so a field renamed in the API fails CI where it is read.
 * @typedef {import("trove-api").components["schemas"]} Schemas
 * @typedef {Schemas["Item"]} Item
 * @typedef {Schemas["ItemList"]} ItemList
 * @typedef {Schemas["PlaceList"]} PlaceList
 * @typedef {Schemas["ProjectList"]} ProjectList
 * @typedef {Schemas["EventList"]} EventList
 */

/** An error the API answered (`{"error": {"code", "message"}}`) or a failure to reach it. */
export class ApiError extends Error {
  constructor(status, code, message, body) {
    super(message);
    this.status = status;
    this.code = code;
    this.body = body;
  }

  /** A sentence for the owner: what went wrong and, where there is one, what to do about it. */
  explain() {
    const m = this.message;
    switch (this.status) {
      case 0:
        return `Trove did not answer (${m}). Is the server running?`;
      case 400:
        return `That was not accepted: ${m}.`;
      case 401:
        return `Not signed in: ${m}. Sign in again.`;
      case 403:
        return `Not allowed: ${m}.`;
      case 410:
        return `Gone: ${m}.`;
      case 429:
        return `Too many tries: ${m}.`;
      case 402:
        return `Budget reached: ${m}. Nothing was sent to the model.`;
      case 404:
        return `Not found: ${m}.`;
      case 409:
        return `Conflict: ${m}.`;
      case 413:
        // "larger than 26214400 bytes" -> "larger than 25 MB", as the forms' hints say.
        return `Too large: ${m.replace(/(\d{6,}) bytes/g, (_, n) => megabytes(+n))}.`;
      case 415:
        return `That kind of file is not accepted: ${m}.`;
      case 422:
        return `The rules refused it: ${m}.`;
      case 502: {
        const spend = this.body?.error?.spend;
        const cost = spend ? ` The calls made cost $${spend.cost_usd ?? (spend.cost_micro_usd / 1e6).toFixed(4)}.` : "";
        return `The model failed: ${m}. Nothing was written.${cost}`;
      }
      case 503: {
        // What is missing is told by the answer's code, never read from its message.
        if (this.code === "passkeys_unavailable") return `Passkeys are not available: ${m}.`;
        if (this.code === "busy" || this.code === "storage_unavailable") return `Busy: ${m}. Try again in a moment.`;
        if (this.code === "unavailable") return `Not offered by this model backend: ${m}.`;
        return `Not configured: ${m}. The built-in local planner proposes projects, but cannot search the web or read images and audio; set MODEL_API_KEY (and MODEL_API_URL if needed) on the server and restart it.`;
      }
      default:
        return `Error ${this.status}${this.code ? ` (${this.code})` : ""}: ${m}.`;
    }
  }
}

/**
 * A fetch's options: the session cookie, and `body` as JSON (as multipart when it is FormData, as a CSV sheet when
 * it is a file).
 */
function requestInit(method, headers, body) {
  const init = { method, headers, credentials: "same-origin" };
  if (body instanceof FormData) {
    init.body = body;
  } else if (body instanceof Blob) {
    init.headers["Content-Type"] = "text/csv";
    init.body = body;
  } else if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  return init;
}

/**
 * Calls the API. `body` may be a plain object (sent as JSON) or FormData (sent as multipart).
 * Answers the parsed JSON (or text when `accept` is not JSON); throws ApiError.
 */
/**
 * @param {string} path
 * @param {{ method?: string, body?: any, accept?: string, headers?: Record<string, string> }} [options]
 * @returns {Promise<any>}
 */
export async function api(path, { method = "GET", body = undefined, accept = "application/json", headers = {} } = {}) {
  const response = await send(path, requestInit(method, { Accept: accept, ...headers }, body));
  if (!response.ok) throw await refusal(response);
  // A write may rename an item or add a template: what the page keeps from reads is read again when next shown.
  if (method !== "GET") for (const forget of forgetters) forget();
  const type = response.headers.get("content-type") || "";
  if (type.includes("json")) return response.json();
  return response.text();
}

/** Sends one request; a failure to reach the server is an ApiError of status 0. */
async function send(path, init) {
  try {
    return await fetch(`/api${path}`, init);
  } catch (e) {
    throw new ApiError(0, "network", e.message || "network error");
  }
}

/**
 * The ApiError of an answer that is not a success, read from the answer itself: a request that may have had an
 * effect is never sent again to learn why it was refused.
 */
async function refusal(response) {
  const type = response.headers.get("content-type") || "";
  let parsed = null;
  let message = response.statusText || "request failed";
  let code = "";
  try {
    parsed = type.includes("json") ? await response.json() : null;
    if (parsed?.error) {
      message = parsed.error.message || message;
      code = parsed.error.code || "";
    } else if (!parsed) {
      const text = await response.text();
      if (text) message = text.slice(0, 300);
    }
  } catch {
    // The body was not what an error should be; the status says enough.
  }
  if (response.status === 401) window.dispatchEvent(new CustomEvent("trove:unauthorized"));
  return new ApiError(response.status, code, message, parsed);
}

/**
 * Calls a long-running route with `Accept: text/event-stream` and reports its server-sent events as they come:
 * `onEvent(name, data)` for `step`, `tool`, `searching`. Answers the `result` event's JSON; throws ApiError for
 * an `error` event (carrying the status the plain answer would have had) or an error status.
 */
/**
 * @param {string} path
 * @param {{ method?: string, body?: any, onEvent?: (name: string, data: any) => void }} [options]
 * @returns {Promise<any>}
 */
export async function apiEvents(path, { method = "POST", body = undefined, onEvent = (_name, _data) => {} } = {}) {
  const response = await send(path, requestInit(method, { Accept: "text/event-stream" }, body));
  // Refused before the run started (401, 400 on the body...): the usual JSON error, read from this answer.
  if (!response.ok) throw await refusal(response);
  const type = response.headers.get("content-type") || "";
  if (!type.includes("text/event-stream")) {
    // A proxy that does not pass event streams, or a server that answered at once: the answer is the result,
    // and the run (and its model spend) is never asked for again.
    if (type.includes("json")) return response.json();
    throw new ApiError(response.status, "unexpected", "the server answered without the result");
  }
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value.replace(/\r\n/g, "\n");
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let name = "message";
      const data = [];
      for (const line of block.split("\n")) {
        if (line.startsWith("event:")) name = line.slice(6).trim();
        else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
      }
      if (!data.length) continue;
      const parsed = JSON.parse(data.join("\n"));
      if (name === "result") return parsed;
      if (name === "error") {
        const err = parsed.error || {};
        if (err.status === 401) window.dispatchEvent(new CustomEvent("trove:unauthorized"));
        throw new ApiError(err.status || 500, err.code || "", err.message || "request failed", parsed);
      }
      onEvent(name, parsed);
    }
  }
  throw new ApiError(0, "network", "the server closed the stream before the answer");
}

/** Fetches a file the API answers (a labels PDF) with the session cookie; answers a Blob. */
export async function apiBlob(path) {
  const response = await send(path, { headers: {}, credentials: "same-origin" });
  if (!response.ok) throw await refusal(response);
  return response.blob();
}

/** Sends `blob` to the browser as a download named `name`. */
export function download(blob, name) {
  const url = URL.createObjectURL(blob);
  const a = document.createElement("a");
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}

/** Fetches the labels of `items` and `places` (ids) as a PDF and downloads it. */
export async function printLabels({ items = [], places = [], layout = "sheet" }) {
  const blob = await apiBlob(`/labels.pdf${query({ items: items.join(","), places: places.join(","), layout })}`);
  download(blob, `trove-labels-${layout}.pdf`);
  return blob;
}

/** A query string from an object, leaving out empty values. */
export function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v !== undefined && v !== null && v !== "" && v !== false) q.set(k, String(v));
  }
  const s = q.toString();
  return s ? `?${s}` : "";
}

/** What the page keeps from reads, each forgotten after any write ([`keptUntilWrite`]). */
const forgetters = [];

/**
 * Registers `forget`, called after every write the page makes, so a module's cache of reads never outlives a
 * change that makes it stale.
 * @param {() => void} forget
 */
export function keptUntilWrite(forget) {
  forgetters.push(forget);
}

const names = new Map();
keptUntilWrite(() => names.clear());

/** An item's name by id, fetched once and cached (for allocations, matches, components). */
export async function itemName(id) {
  if (!names.has(id)) {
    names.set(
      id,
      api(`/items/${id}`).then(
        (it) => it.name,
        () => `item ${id}`,
      ),
    );
  }
  return names.get(id);
}

export function rememberName(item) {
  names.set(item.id, Promise.resolve(item.name));
}

/** `26214400` -> `25 MB` (megabytes of 1024 × 1024 bytes, as the size hints say). */
export function megabytes(bytes) {
  const mb = bytes / (1024 * 1024);
  return `${mb >= 10 ? Math.round(mb) : Number(mb.toFixed(1))} MB`;
}

let offered = null;

/**
 * What the model backend offers (`GET /api/capabilities`), asked once per sign-in: who proposes projects, whether
 * pricing and the readings are available and why not, and the upload limits. Null when the server cannot say
 * (then every form is offered, and the server's refusal explains).
 */
export function capabilities() {
  if (!offered) offered = api("/capabilities").catch(() => null);
  return offered;
}

/** Forgets what the backend offers (signing out: the next member may be on another server's page). */
export function forgetCapabilities() {
  offered = null;
}
