// A fake Model API for the end-to-end tests: answers `POST /responses` and `POST /asr/transcribe` the way the
// provider does (see shared/reference/model-api.md), with a proposal loop, a price search and readings.

import http from "node:http";

function response(output, inputTokens = 1000, outputTokens = 200) {
  return {
    id: `resp_${Math.random().toString(36).slice(2, 10)}`,
    object: "response",
    status: "completed",
    error: null,
    incomplete_details: null,
    output,
    usage: {
      input_tokens: inputTokens,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: outputTokens,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: inputTokens + outputTokens,
    },
  };
}

const functionCall = (callId, name, args) => ({
  type: "function_call",
  id: `fc_${callId}`,
  call_id: callId,
  name,
  arguments: args,
  status: "completed",
});

const message = (text, citations = []) => ({
  type: "message",
  id: "msg_1",
  role: "assistant",
  status: "completed",
  content: [
    {
      type: "output_text",
      text,
      annotations: citations.map((url) => ({ type: "url_citation", url, title: "cited", start_index: 0, end_index: 1 })),
    },
  ],
});

function toolOutput(body, callId) {
  return body.input?.find((i) => i.type === "function_call_output" && i.call_id === callId)?.output;
}

/** Items of `list_inventory` by type: `#type|field unit|...` lines open a section, then
 * `id+condition name|profile|values` per item. */
function inventoryByType(output) {
  const byType = new Map();
  let type = "";
  for (const line of output.split("\n")) {
    if (line.startsWith("#")) {
      type = line.slice(1).split("|")[0].trim();
      continue;
    }
    // A row of like items lists their ids joined by commas: the first stands for them.
    const m = /^(\d+)(?:,\d+)*[A-Z]?(?:x\d+)? (.*)$/.exec(line.split("|")[0] || "");
    if (!m) continue;
    const [, id, name] = m;
    if (!byType.has(type)) byType.set(type, []);
    byType.get(type).push({ id: Number(id), name });
  }
  return byType;
}

/** The calls Trove answers itself before the first step: the listing and the catalogue. */
const ANSWERED_FIRST = ["call_list_inventory", "call_template_catalog"];

/** Whether the request holds the output of a call the model made (a later step). */
function laterStep(body) {
  return body.input?.some?.((i) => i.type === "function_call_output" && !ANSWERED_FIRST.includes(i.call_id));
}

/** The proposal loop: the listing and the catalogue come answered; step 1 asks one item's details, step 2
 * answers a ProposalSet from the ids the listing gave. */
function propose(body) {
  // A wish asking for it gets an answer that is no ProposalSet: the page must show the model failure.
  if (JSON.stringify(body.input).includes("make it fail")) {
    return response([message("I think you should build a boat.")], 500, 50);
  }
  const inventory = inventoryByType(toolOutput(body, "call_list_inventory") || "");
  const catalog = toolOutput(body, "call_template_catalog") || "";
  const first = (type, n = 0) => inventory.get(type)?.[n]?.id;
  if (!laterStep(body)) {
    return response([
      { type: "reasoning", id: "rs_1", summary: [] },
      functionCall("call_pi", "item_details", JSON.stringify({ item_id: first("single_board_computer") ?? 1 })),
    ]);
  }
  const templateId = (label) => Number(catalog.split("\n").find((l) => l.split("|")[1] === label)?.split("|")[0]);
  const console_ = templateId("Retro game console");
  const allocations = [
    ["controller", first("single_board_computer")],
    ["storage", first("sd_card")],
    ["display", first("monitor")],
    ["gamepad", first("gamepad")],
    ["power", first("power_adapter")],
  ]
    .filter(([, id]) => id)
    .map(([requirement, item_id]) => ({ requirement, item_id }));
  // One allocation the rules must drop: an item that does not exist.
  allocations.push({ requirement: "case", item_id: 987654 });
  const proposals = [
    {
      template_id: console_,
      title: "Living-room retro console",
      reason: "The Pi, a card, a monitor and a gamepad are all spare.",
      allocations,
    },
  ];
  const powerBank = templateId("Power bank from 18650 cells");
  if (powerBank) {
    // The same cell twice: the rules keep the first and drop the second as used twice.
    const cell = first("lithium_cell");
    proposals.push({
      template_id: powerBank,
      title: "Pocket power bank",
      reason: "Two spare 18650 cells with a charger board and a boost converter.",
      allocations: [
        { requirement: "cell_1", item_id: cell },
        { requirement: "cell_2", item_id: cell },
        { requirement: "charger", item_id: first("bms_board") },
        { requirement: "boost", item_id: first("boost_converter") },
      ].filter((a) => a.item_id),
    });
  }
  const set = { proposals };
  return response([message(JSON.stringify(set))], 3000, 400);
}

const SEARCHED = ["https://www.ebay.co.uk/itm/111", "https://www.ebay.co.uk/itm/222"];

function price() {
  const comparables = {
    comparables: [
      { title: "Same model, sold last week", url: "https://www.ebay.co.uk/itm/111/", price: 38.0, currency: "GBP", condition: "good", sold: true, note: null },
      { title: "Boxed, asking", url: "https://www.ebay.co.uk/itm/222", price: 45.5, currency: "GBP", condition: "like_new", sold: false, note: "with case" },
      { title: "Invented listing", url: "https://made-up.example/x", price: 90.0, currency: "GBP", condition: "new", sold: false, note: null },
    ],
  };
  const search = {
    type: "web_search_call",
    id: "ws_1",
    status: "completed",
    action: { type: "search", query: "used price", sources: [] },
    results: SEARCHED.map((url) => ({ title: "result", url, snippet: "..." })),
  };
  return response([search, message(JSON.stringify(comparables))], 2000, 400);
}

/** A value of the JSON schema `schema`, filled with a plausible power bank reading (whatever the schema's shape). */
function fill(schema, key = "", defs = {}) {
  if (!schema) return null;
  if (schema.$ref) return fill(defs[schema.$ref.split("/").pop()], key, defs);
  if (schema.anyOf) return fill(schema.anyOf.find((s) => s.type !== "null") || schema.anyOf[0], key, defs);
  let type = schema.type;
  if (Array.isArray(type)) type = type.find((t) => t !== "null") || "null";
  if (schema.enum) {
    const prefer = { condition: "good", severity: "minor", source: "listing", intent: "keep" }[key];
    return schema.enum.includes(prefer) ? prefer : schema.enum.find((v) => v !== null);
  }
  switch (type) {
    case "object": {
      const out = {};
      for (const [k, s] of Object.entries(schema.properties || {})) out[k] = fill(s, k, defs);
      return out;
    }
    case "array": {
      if (key === "measurements" || key === "fields") {
        return [
          { key: "capacity", value: 10, unit: "Ah" },
          { key: "output_voltage", value: 5, unit: "V" },
        ].map((m) => Object.fromEntries(Object.keys(schema.items?.properties || m).map((k) => [k, m[k] ?? fill(schema.items.properties[k], k, defs)])));
      }
      if (key === "faults") {
        return [Object.fromEntries(Object.keys(schema.items?.properties || { text: 1, severity: 1 }).map((k) => [k, k === "text" ? "one USB port is loose" : fill(schema.items.properties[k], k, defs)]))];
      }
      if (key === "accessories") return ["USB-C cable"];
      return [fill(schema.items, key.replace(/s$/, ""), defs)];
    }
    case "number":
    case "integer":
      return 1;
    case "boolean":
      return false;
    case "string": {
      const strings = {
        name: "Anker PowerCore 10000",
        item_type: "power_bank",
        profile: "Anker PowerCore 10000, A1263, 10000 mAh, USB-A out",
        brand: "Anker",
        model: "A1263",
        serial: null,
        text: "one USB port is loose",
        key: "capacity",
        unit: "Ah",
      };
      return key in strings ? strings[key] : "";
    }
    default:
      return null;
  }
}

/** A receipt read: a demo item the household owns and a cable it does not, adding up to the total. */
function receipt() {
  const answer = {
    vendor: "The Pi Hut",
    date: "2026-11-28",
    currency: "GBP",
    lines: [
      { description: "Raspberry Pi 4 Model B 4GB", quantity: 1, price: 54.0 },
      { description: "Braided USB-C cable 1 m", quantity: 2, price: 9.0 },
    ],
    total: 63.0,
  };
  return response([message(JSON.stringify(answer))], 1200, 200);
}

function reading(body) {
  const format = body.text?.format || {};
  if (format.name === "Receipt") return receipt();
  const schema = format.schema || {};
  const value = fill(schema, "", schema.$defs || schema.definitions || {});
  return response([message(JSON.stringify(value))], 800, 150);
}

/** Starts the fake on a free port; answers `{url, requests, close}`. */
export async function startFakeModel({ delayMs = 400 } = {}) {
  const requests = [];
  // Answers to requests asking to be held ("hold the answer" in the input) wait here until `release()`: a test
  // acts while a run is surely going, without guessing how long it takes.
  let held = [];
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks);
      const send = (status, obj) => {
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify(obj));
      };
      if (req.method === "POST" && req.url.endsWith("/asr/transcribe")) {
        requests.push({ path: req.url, bytes: raw.length });
        return send(200, { sessionId: "s1", transcript: "An Anker PowerCore 10000 power bank, good condition, one USB port is loose.", audioDurationMs: 2000, turns: [] });
      }
      if (req.method !== "POST" || !req.url.endsWith("/responses")) return send(404, { error: { message: "no such route", type: "invalid_request_error", param: null, code: null } });
      let body;
      try {
        body = JSON.parse(raw.toString("utf8"));
      } catch {
        return send(400, { error: { message: "bad json", type: "invalid_request_error", param: null, code: null } });
      }
      requests.push({ path: req.url, body });
      const tools = (body.tools || []).map((t) => t.name || t.type);
      const answer = tools.includes("list_inventory") ? propose(body) : tools.includes("web_search") ? price(body) : reading(body);
      // A real model takes its time; the page shows its progress indicator meanwhile.
      const firstStep = !laterStep(body);
      if (firstStep && JSON.stringify(body.input).includes("hold the answer")) held.push(() => send(200, answer));
      else setTimeout(() => send(200, answer), delayMs);
    });
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    /** How many answers are held now. */
    held: () => held.length,
    /** Sends every held answer. */
    release: () => {
      const waiting = held;
      held = [];
      for (const send of waiting) send();
    },
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}
