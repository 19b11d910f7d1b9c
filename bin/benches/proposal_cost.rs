//! What a proposal costs in input, from the request bodies Trove really sends: `ProposeProjects::run` through
//! the Model API adapter (the default provider profile) against a local HTTP server that records every body and
//! answers like a model (step 1 asks `item_details` of three listed items, with a reasoning item to replay; step 2
//! answers a ProposalSet). Tokens are counted with the o200k tokenizer (its vocabulary is compiled into
//! `tiktoken-rs`: no network) over each body as a provider reads it: the tools, the answer's schema and the
//! instructions first, then each input item's text (a message's text, a call's name and arguments, a tool's
//! output, a reasoning item's content), with 4 tokens per input item for its framing.
//!
//! Caching is counted as the provider counts it: a request's cached tokens are its longest token prefix shared
//! with an earlier request, rounded down to 128 tokens, and none below 1,024. The first proposal of an inventory
//! starts with an empty cache (cold: the first after a change of the inventory or the catalogue); the second
//! (another wish) finds the first's requests cached (warm). Cost at Trove's default rates (Muse Spark: input 1.25,
//! cached input 0.15 USD per million tokens).
//!
//! Three inventories of 1,000 and 10,000 items: a household that makes (half parts and gear of the kinds the
//! catalogue builds from, half its other things; like things entered one by one, several to a pack), a store of
//! distinct parts (resistors, capacitors, ICs, connectors, fasteners, wire, tools and spares beside the boards,
//! modules, cables, supplies and cells a build takes; no two items alike), and a maker's store of parts only,
//! every one of a kind the catalogue takes and every one different. The listing is also measured lever by lever
//! (`tools::Levers`). Targets: a proposal at 10,000 items under $0.05 of input, under $0.01 at 1,000; the listing
//! under 8 tokens per item.
//!
//! Run: `cargo bench -p trove --bench proposal_cost`; with `-- check` (in `.ci/run`) it measures the household
//! and the distinct parts at 10,000 items only and fails when either's listing reaches 80,000 tokens or its cold
//! proposal $0.05.

mod generated_inventory;

use serde_json::{Value, json};
use std::sync::Arc;
use tiktoken_rs::CoreBPE;
use trove_application::catalogue::Catalogue;
use trove_application::metered::{Metered, SpendPolicy};
use trove_application::ports::{Clock, HouseholdRepo, InventoryRepo, ProjectRepo, SpendLedger, TemplateRepo};
use trove_application::propose::ProposeProjects;
use trove_application::recorder::{Actor, Recorder};
use trove_application::tools::{self, Levers};
use trove_db::Store;
use trove_domain::Timestamp;
use trove_domain::item::{ItemLine, NewItem};
use trove_domain::spend::Rates;
use trove_model::{ModelApi, ModelApiConfig};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// Input tokens a provider counts for one input item's framing (role and type markers).
const ITEM_FRAMING: usize = 4;
/// Below this many tokens nothing is cached; above, caching goes in steps of this many.
const CACHE_MIN: usize = 1024;
const CACHE_STEP: usize = 128;
const TARGET_10K: f64 = 0.05;
const TARGET_1K: f64 = 0.01;
const TARGET_TOKENS_PER_ITEM: f64 = 8.0;
/// The check mode's bound on the listing at 10,000 items, in o200k tokens.
const CHECK_LISTING_MAX: usize = 80_000;

struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        chrono::Utc::now()
    }
}

/// Answers like a model: with the listing answered and nothing else, a reasoning item and three `item_details`
/// calls on the first listed rows; after those, a ProposalSet.
struct Model;

impl Respond for Model {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&request.body).expect("a json body");
        let input = body["input"].as_array().expect("input items");
        let outputs = input.iter().filter(|i| i["type"] == "function_call_output").count();
        let usage = json!({"input_tokens": 1000, "input_tokens_details": {"cached_tokens": 0},
                           "output_tokens": 400, "output_tokens_details": {"reasoning_tokens": 300},
                           "total_tokens": 1400});
        // About 1,500 characters of encrypted reasoning, as a reasoning model returns for a short plan.
        let reasoning = json!({"type": "reasoning", "id": "rs_1", "summary": [],
                               "encrypted_content": "gAAAAB".repeat(250)});
        let output = if outputs == 2 {
            let listing = input
                .iter()
                .find(|i| {
                    i["call_id"] == trove_application::propose::LISTED_CALL_ID && i["type"] == "function_call_output"
                })
                .and_then(|i| i["output"].as_str())
                .unwrap_or_default();
            let ids: Vec<i64> = listing
                .lines()
                .skip(1)
                .filter(|l| !l.starts_with('#'))
                .filter_map(|l| l.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok())
                .take(3)
                .collect();
            let mut items = vec![reasoning];
            for (n, id) in ids.iter().enumerate() {
                items.push(json!({"type": "function_call", "id": format!("fc_{n}"), "call_id": format!("call_{n}"),
                                  "name": "item_details", "arguments": json!({"item_id": id}).to_string(),
                                  "status": "completed"}));
            }
            items
        } else {
            let set = json!({"proposals": []}).to_string();
            vec![
                reasoning,
                json!({"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                       "content": [{"type": "output_text", "text": set, "annotations": []}]}),
            ]
        };
        ResponseTemplate::new(200).set_body_json(json!({"id": "resp_1", "object": "response", "status": "completed",
            "error": null, "incomplete_details": null, "output": output, "usage": usage}))
    }
}

/// A body as the provider reads it: tools, answer schema and instructions, then each input item's text.
fn rendered(body: &Value) -> (String, usize) {
    let mut text = String::new();
    text.push_str(&body["tools"].to_string());
    text.push_str(&body["text"].to_string());
    text.push_str(body["instructions"].as_str().unwrap_or_default());
    let items = body["input"].as_array().map(Vec::as_slice).unwrap_or_default();
    for item in items {
        text.push('\n');
        match item["type"].as_str() {
            Some("function_call") => {
                text.push_str(item["name"].as_str().unwrap_or_default());
                text.push_str(item["arguments"].as_str().unwrap_or_default());
            }
            Some("function_call_output") => text.push_str(item["output"].as_str().unwrap_or_default()),
            Some("reasoning") => text.push_str(item["encrypted_content"].as_str().unwrap_or_default()),
            _ => match item["content"].as_array() {
                Some(parts) => parts.iter().for_each(|p| text.push_str(p["text"].as_str().unwrap_or_default())),
                None => text.push_str(&item.to_string()),
            },
        }
    }
    (text, items.len() * ITEM_FRAMING)
}

/// One request: its tokens, and the part of them the provider serves from its cache.
struct Counted {
    tokens: Vec<u32>,
    framing: usize,
    cached: usize,
}

impl Counted {
    fn input(&self) -> usize {
        self.tokens.len() + self.framing
    }
}

/// The cached tokens of `tokens` given the earlier requests: the longest shared prefix, in steps of 128, none
/// below 1,024.
fn cached(tokens: &[u32], earlier: &[Counted]) -> usize {
    let shared =
        earlier.iter().map(|e| e.tokens.iter().zip(tokens).take_while(|(a, b)| a == b).count()).max().unwrap_or(0);
    if shared < CACHE_MIN { 0 } else { shared / CACHE_STEP * CACHE_STEP }
}

fn usd(uncached: usize, cached: usize, rates: &Rates) -> f64 {
    (uncached as f64 * rates.input_per_mtok.0 as f64 + cached as f64 * rates.cached_per_mtok.0 as f64) / 1e12
}

/// The requests of one proposal, counted against the cache the earlier ones left.
fn count(bpe: &CoreBPE, bodies: &[Value], cache: &mut Vec<Counted>) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for body in bodies {
        let (text, framing) = rendered(body);
        let tokens = bpe.encode_ordinary(&text);
        let hit = cached(&tokens, cache);
        let counted = Counted { tokens, framing, cached: hit };
        out.push((counted.input(), counted.cached));
        cache.push(counted);
    }
    out
}

/// What the check mode bounds of one inventory: the listing's tokens and a cold proposal's input in USD.
struct Bounded {
    listing: usize,
    cold: f64,
}

async fn proposal_costs(bpe: &CoreBPE, label: &str, new: Vec<NewItem>) -> Bounded {
    let n = new.len();
    let url = trove_db::testing::fresh_sqlite_url();
    let store = Arc::new(Store::connect(&url).await.expect("a fresh sqlite store"));
    store.migrate().await.expect("migrated");
    let templates: Arc<dyn TemplateRepo> = store.clone();
    Catalogue::new(templates.clone()).seed().await.expect("catalogue seeded");
    let households: Arc<dyn HouseholdRepo> = store.clone();
    let household = households.ensure_household("bench").await.unwrap();
    let items: Arc<dyn InventoryRepo> = store.clone();
    items
        .import(household, new, generated_inventory::labelled_at(), &|_: &trove_application::ports::ImportWritten| {
            Vec::<trove_domain::history::Event>::new()
        })
        .await
        .expect("items imported");
    let catalogue = templates.list(household).await.unwrap();
    let lines: Vec<ItemLine> = items.lines(household).await.unwrap();
    let buildable: Vec<&ItemLine> = lines.iter().filter(|l| l.is_buildable()).collect();

    // The listing, lever by lever.
    let mut previous = None;
    let takeable = Levers { only_takeable: true, ..Levers::NONE };
    let together = Levers { like_items_together: true, ..takeable };
    let ditto = Levers { ditto: true, ..together };
    let no_profile = Levers { no_profile: true, ..ditto };
    let bound = Levers { only_bound_fields: true, ..no_profile };
    assert_eq!(Levers { id_runs: true, stems: true, ..bound }, Levers::ALL);
    let mut listed = 0;
    for (name, levers) in [
        ("every buildable item, one row each", Levers::NONE),
        ("+ only items a requirement may take", takeable),
        ("+ like items in one row", together),
        ("+ ^ for a repeated name|profile", ditto),
        ("+ no profile (item_details has it)", no_profile),
        ("+ only the fields a requirement bounds", bound),
        ("+ a-b for a run of ids", Levers { stems: false, ..Levers::ALL }),
        ("+ =words for names beginning alike", Levers::ALL),
    ] {
        let listing = tools::inventory_output_with(buildable.iter().copied(), &catalogue, levers);
        let tokens = bpe.encode_ordinary(&listing).len();
        if levers == Levers::ALL {
            assert_eq!(listing, tools::inventory_output(buildable.iter().copied(), &catalogue));
            listed = tokens;
            if let Ok(dir) = std::env::var("DUMP_LISTING") {
                std::fs::write(format!("{dir}/{label}-{n}.txt"), &listing).unwrap();
            }
        }
        let rows = listing.lines().skip(1).filter(|l| !l.starts_with('#')).count();
        let saved =
            previous.map_or(String::new(), |p: usize| format!(" ({:+.0}%)", (tokens as f64 / p as f64 - 1.0) * 100.0));
        println!(
            "| {label} | {n} | {name} | {rows} | {tokens}{saved} | {:.2}{} |",
            tokens as f64 / n as f64,
            if levers == Levers::ALL {
                if tokens as f64 / (n as f64) < TARGET_TOKENS_PER_ITEM { " (met)" } else { " (missed)" }
            } else {
                ""
            },
        );
        previous = Some(tokens);
    }

    let server = MockServer::start().await;
    Mock::given(method("POST")).and(path("/v1/responses")).respond_with(Model).mount(&server).await;
    let config = ModelApiConfig::new("bench-key").with_base_url(format!("{}/v1", server.uri()));
    let rates = Rates::default();
    let api = Arc::new(ModelApi::new(config).expect("a client"));
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let ledger: Arc<dyn SpendLedger> = store.clone();
    let projects: Arc<dyn ProjectRepo> = store.clone();
    let metered = Metered::new(api, ledger, clock.clone(), SpendPolicy { rates, monthly_limit: None });
    let propose = ProposeProjects::new(metered, items, templates, projects, Recorder::new(clock));
    let mut cache = Vec::new();
    let mut seen = 0;
    let mut cold = 0.0;
    for (run, wish) in [("cold", "a weather station for the garden"), ("warm", "something for the kids")] {
        let outcome = propose.run(Actor::command_line(household), Some(wish)).await.expect("the proposal runs");
        let bodies: Vec<Value> = server
            .received_requests()
            .await
            .unwrap_or_default()
            .iter()
            .skip(seen)
            .map(|r| serde_json::from_slice(&r.body).unwrap())
            .collect();
        seen += bodies.len();
        assert_eq!(bodies.len() as u32, outcome.steps);
        let counted = count(bpe, &bodies, &mut cache);
        let input: usize = counted.iter().map(|c| c.0).sum();
        let hit: usize = counted.iter().map(|c| c.1).sum();
        let no_cache = usd(input, 0, &rates);
        let with_cache = usd(input - hit, hit, &rates);
        if run == "cold" {
            cold = with_cache;
        }
        let target = if n >= 10_000 { TARGET_10K } else { TARGET_1K };
        let steps: Vec<String> = counted.iter().map(|(i, c)| format!("{i} ({c} cached)")).collect();
        println!(
            "| {label} | {n} | {run} | {} | {} | {input} | {hit} | ${no_cache:.4} | ${with_cache:.4} {} |",
            outcome.steps,
            steps.join(" + "),
            if with_cache < target { "(met)" } else { "(missed)" }
        );
    }
    Bounded { listing: listed, cold }
}

fn main() {
    let bpe = tiktoken_rs::o200k_base().expect("the o200k vocabulary is embedded in tiktoken-rs");
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    println!("the listing (o200k tokens), lever by lever; target under {TARGET_TOKENS_PER_ITEM} tokens per item");
    println!(
        "and a proposal's input (o200k tokens, the bodies sent), cold and warm cache; targets ${TARGET_1K} at 1,000, ${TARGET_10K} at 10,000"
    );
    println!("| inventory | items | lever / run | rows / steps | tokens / per step | per item | ...");
    let checking = std::env::args().skip(1).any(|a| a == "check");
    if checking {
        // The bounds at 10,000 items, on the household and on the store of distinct parts.
        let mut missed = Vec::new();
        for (label, items) in [
            ("household", generated_inventory::household_items(10_000)),
            ("distinct parts", generated_inventory::distinct_parts(10_000)),
        ] {
            let bounded = rt.block_on(proposal_costs(&bpe, label, items));
            println!(
                "{label}, 10,000 items: listing {} tokens (bound {CHECK_LISTING_MAX}), cold proposal ${:.4} (bound ${TARGET_10K})",
                bounded.listing, bounded.cold
            );
            if bounded.listing >= CHECK_LISTING_MAX || bounded.cold >= TARGET_10K {
                missed.push(label);
            }
        }
        if !missed.is_empty() {
            eprintln!("a proposal at 10,000 items is over its bounds on: {}", missed.join(", "));
            std::process::exit(1);
        }
        return;
    }
    for n in [1_000, 10_000] {
        rt.block_on(proposal_costs(&bpe, "household", generated_inventory::household_items(n)));
        rt.block_on(proposal_costs(&bpe, "distinct parts", generated_inventory::distinct_parts(n)));
        rt.block_on(proposal_costs(&bpe, "maker's parts", generated_inventory::new_items(n)));
    }
}
