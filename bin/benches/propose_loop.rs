//! The proposal loop's own cost per step, the model excluded: `ProposeProjects::run` against a scripted model
//! that answers at once, on a real SQLite store (a fresh file) holding 1,000 and 10,000 items.
//!
//! The script is the usual run of two steps: `list_inventory` and `template_catalog` are answered by the loop
//! before the first step, which calls `item_details` for three items; the second answers a ProposalSet the rules
//! write as projects. So a run measures the reads behind each tool, the compact outputs, the request built and
//! resent at each step, the spend entry of each call, the rules and the project writes. Target: under 60 ms per
//! step at 10,000 items.
//!
//! Run: `cargo bench -p trove --bench propose_loop` (criterion reports the time of a whole run of
//! two steps; divide by two for a step).

mod generated_inventory;

use async_trait::async_trait;
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use serde_json::json;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use trove_application::catalogue::Catalogue;
use trove_application::metered::{Metered, SpendPolicy};
use trove_application::ports::model::{
    Capabilities, InputItem, ModelError, ModelRequest, ModelResponse, OutputItem, OutputView, RawJson, Transcript,
};
use trove_application::ports::{
    Clock, HouseholdRepo, InventoryRepo, ModelPort, ProjectRepo, SpendLedger, TemplateRepo,
};
use trove_application::propose::ProposeProjects;
use trove_application::recorder::Actor;
use trove_application::recorder::Recorder;
use trove_application::tools;
use trove_db::Store;
use trove_domain::item::{Intent, Item};
use trove_domain::spend::Usage;
use trove_domain::{HouseholdId, Timestamp};

/// Steps of one scripted run.
const STEPS: u32 = 2;

struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        chrono::Utc::now()
    }
}

/// A model that answers from a script, at once: which answer is due is read from how many tool outputs the
/// request carries (none: step 1; two: step 2; five: step 3).
struct ScriptedModel {
    steps: [ModelResponse; 3],
    /// When each call arrived, for the per-step breakdown.
    calls: Mutex<Vec<Instant>>,
}

fn output(raw: serde_json::Value, view: OutputView) -> OutputItem {
    OutputItem { raw: RawJson(raw.to_string()), view }
}

fn call(call_id: &str, name: &str, arguments: &str) -> OutputItem {
    output(
        json!({"type": "function_call", "id": format!("fc_{call_id}"), "call_id": call_id, "name": name,
               "arguments": arguments, "status": "completed"}),
        OutputView::FunctionCall { call_id: call_id.into(), name: name.into(), arguments: arguments.into() },
    )
}

fn answer(output_items: Vec<OutputItem>) -> ModelResponse {
    ModelResponse {
        output: output_items,
        usage: Usage { input_tokens: 20_000, output_tokens: 300, ..Usage::default() },
    }
}

impl ScriptedModel {
    /// The script for an inventory: details of three items, and a ProposalSet built from the catalogue's first
    /// templates with items of the types their requirements name.
    fn new(items: &[Item], templates: &[trove_domain::template::Template]) -> Self {
        let details: Vec<OutputItem> = items
            .iter()
            .filter(|i| i.is_buildable())
            .take(3)
            .enumerate()
            .map(|(n, i)| call(&format!("call_d{n}"), tools::ITEM_DETAILS, &json!({"item_id": i.id.0}).to_string()))
            .collect();
        let mut used = std::collections::HashSet::new();
        let proposals: Vec<serde_json::Value> = templates
            .iter()
            .take(4)
            .map(|t| {
                let allocations: Vec<serde_json::Value> = t
                    .requirements
                    .iter()
                    .filter_map(|r| {
                        let item = items.iter().find(|i| {
                            i.is_buildable()
                                && r.item_types.iter().any(|ty| ty == &i.item_type)
                                && !used.contains(&i.id)
                        })?;
                        used.insert(item.id);
                        Some(json!({"requirement": r.key, "item_id": item.id.0}))
                    })
                    .collect();
                json!({"template_id": t.id.0, "title": t.label, "reason": "uses spare parts",
                       "allocations": allocations})
            })
            .collect();
        let set = json!({ "proposals": proposals }).to_string();
        let message = output(
            json!({"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                   "content": [{"type": "output_text", "text": set, "annotations": []}]}),
            OutputView::Message { text: set.clone(), citations: Vec::new() },
        );
        Self {
            steps: [
                answer(vec![
                    call("call_a", tools::LIST_INVENTORY, "{}"),
                    call("call_b", tools::TEMPLATE_CATALOG, "{}"),
                ]),
                answer(details),
                answer(vec![message]),
            ],
            calls: Mutex::new(Vec::new()),
        }
    }
}

#[async_trait]
impl ModelPort for ScriptedModel {
    fn model_name(&self, _kind: trove_domain::spend::CallKind) -> String {
        "scripted".into()
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities { web_search: false, images: false, audio: false, remote: false }
    }

    async fn respond(&self, request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        self.calls.lock().unwrap().push(Instant::now());
        let outputs = request.input.iter().filter(|i| matches!(i, InputItem::FunctionCallOutput { .. })).count();
        // No output yet: the model calls the listing itself (a loop that does not answer it first); the two
        // answered before the first step: details; more: the answer.
        let step = match outputs {
            0 => 0,
            2 => 1,
            _ => 2,
        };
        Ok(self.steps[step].clone())
    }

    async fn transcribe(&self, _wav: &[u8]) -> Result<Transcript, ModelError> {
        Err(ModelError::NotConfigured { what: "speech to text".into(), setting: "MODEL_API_KEY" })
    }
}

/// A fresh SQLite store with `n` items in one household (one in ten meant for sale, so the buildable filter has
/// work to do), and the use case over it.
/// What a benchmark runs against.
struct Bench {
    propose: ProposeProjects,
    household: HouseholdId,
    model: Arc<ScriptedModel>,
    items: Arc<dyn InventoryRepo>,
    /// Makes a new use case over the same store: its `list_inventory` cache is empty (a cold run).
    fresh: Box<dyn Fn() -> ProposeProjects>,
    /// The catalogue.
    templates: Vec<trove_domain::template::Template>,
}

async fn setup(n: usize) -> Bench {
    let url = trove_db::testing::fresh_sqlite_url();
    let store = Arc::new(Store::connect(&url).await.expect("a fresh sqlite store"));
    store.migrate().await.expect("migrated");
    let templates: Arc<dyn TemplateRepo> = store.clone();
    Catalogue::new(templates.clone()).seed().await.expect("catalogue seeded");
    let households: Arc<dyn HouseholdRepo> = store.clone();
    let household = households.ensure_household("bench").await.unwrap();
    let items: Arc<dyn InventoryRepo> = store.clone();
    let mut new = generated_inventory::new_items(n);
    for item in new.iter_mut().step_by(10) {
        item.intent = Intent::Sell;
    }
    items
        .import(household, new, generated_inventory::labelled_at(), &|_: &trove_application::ports::ImportWritten| {
            Vec::<trove_domain::history::Event>::new()
        })
        .await
        .expect("items imported");
    let all = items.all_present(household).await.unwrap();
    assert_eq!(all.len(), n);
    let catalogue = templates.list(household).await.unwrap();
    let model = Arc::new(ScriptedModel::new(&all, &catalogue));
    let clock: Arc<dyn Clock> = Arc::new(SystemClock);
    let ledger: Arc<dyn SpendLedger> = store.clone();
    let projects: Arc<dyn ProjectRepo> = store.clone();
    let metered = Metered::new(model.clone(), ledger, clock.clone(), SpendPolicy::default());
    let recorder = Recorder::new(clock.clone());
    let parts = (metered, items.clone(), templates, projects, recorder);
    let fresh = Box::new(move || {
        let (m, i, t, p, r) = parts.clone();
        ProposeProjects::new(m, i, t, p, r)
    });
    Bench { propose: fresh(), household, model, items, fresh, templates: catalogue }
}

/// Runs the loop a few times and prints the median time of each step: step 1 from the start to the second
/// call (`list_inventory` and `template_catalog` answered, the first call and its `item_details`), step 2 from
/// the second call to the end (the answer parsed, the rules, the projects written).
/// Also prints the two parts of `list_inventory` alone: reading the items, and writing the compact output.
async fn step_breakdown(n: usize, bench: &Bench, cold: bool) {
    const RUNS: usize = 9;
    let Bench { propose, household, model, items, fresh, .. } = bench;
    let household = *household;
    let mut steps: [Vec<Duration>; 2] = Default::default();
    let templates = bench.templates.clone();
    let (mut reads, mut outputs) = (Vec::new(), Vec::new());
    for _ in 0..RUNS {
        let start = Instant::now();
        let all = items.lines(household).await.unwrap();
        let read = Instant::now();
        std::hint::black_box(tools::inventory_output(all.iter().filter(|i| i.is_buildable()), &templates));
        reads.push(read - start);
        outputs.push(read.elapsed());
    }
    for _ in 0..RUNS {
        // Cold: a new use case, so `list_inventory` reads and formats every item. Warm: the same use case,
        // whose listing is kept while the inventory's stamp is unchanged.
        let cold_case = cold.then(fresh);
        let propose = cold_case.as_ref().unwrap_or(propose);
        model.calls.lock().unwrap().clear();
        let start = Instant::now();
        propose.run(Actor::command_line(household), None).await.unwrap();
        let end = Instant::now();
        let calls = model.calls.lock().unwrap().clone();
        steps[0].push(calls[1] - start);
        steps[1].push(end - calls[1]);
    }
    let median = |xs: &mut Vec<Duration>| {
        xs.sort();
        xs[xs.len() / 2].as_secs_f64() * 1000.0
    };
    let [s1, s2] = steps.map(|mut xs| median(&mut xs));
    println!(
        "{n} items, {}, median of {RUNS} runs: step 1 {s1:.1} ms, step 2 {s2:.1} ms; mean per step {:.1} ms; \
         in step 1, lines {:.1} ms and inventory_output {:.1} ms",
        if cold { "cold" } else { "warm" },
        (s1 + s2) / 2.0,
        median(&mut reads),
        median(&mut outputs)
    );
}

fn propose_loop(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let mut group = c.benchmark_group("propose_loop_2_steps");
    group.sample_size(10).warm_up_time(Duration::from_secs(2)).measurement_time(Duration::from_secs(15));
    for n in [1_000, 10_000] {
        let bench = rt.block_on(setup(n));
        let (propose, household) = (&bench.propose, bench.household);
        // The script must go the whole way: two steps, projects written.
        let outcome =
            rt.block_on(propose.run(Actor::command_line(household), None)).expect("the scripted run succeeds");
        assert_eq!(outcome.steps, STEPS);
        assert!(!outcome.projects.is_empty(), "{outcome:?}");
        rt.block_on(step_breakdown(n, &bench, true));
        rt.block_on(step_breakdown(n, &bench, false));
        group.bench_with_input(BenchmarkId::new("cold", format!("{n}_items")), &n, |b, _| {
            b.to_async(&rt).iter(|| async { (bench.fresh)().run(Actor::command_line(household), None).await.unwrap() });
        });
        group.bench_with_input(BenchmarkId::new("warm", format!("{n}_items")), &n, |b, _| {
            b.to_async(&rt).iter(|| async { propose.run(Actor::command_line(household), None).await.unwrap() });
        });
    }
    group.finish();
}

criterion_group!(benches, propose_loop);
criterion_main!(benches);
