//! The tool-calling loop against mocked ports: every branch of the seed ("Function tools: project proposals")
//! has a test here that fails when the loop strays from it.
//!
//! The mocks are strict: mockall panics on a call no expectation allows, so a port method a test sets no
//! expectation for (a write to the inventory, an accept) fails the test if the loop ever calls it. Where the
//! absence of a call is the point of the test, it is also stated with `.times(0)`.

use super::*;
use crate::RepoError;
use crate::metered::SpendPolicy;
use crate::ports::clock::MockClock;
use crate::ports::inventory::MockInventoryRepo;
use crate::ports::model::{MockModelPort, ModelError, ModelResponse, OutputItem, OutputSchema, RawJson};
use crate::ports::projects::MockProjectRepo;
use crate::ports::spend::MockSpendLedger;
use crate::ports::templates::MockTemplateRepo;
use chrono::{TimeZone, Utc};
use std::collections::VecDeque;
use std::ops::Range;
use std::sync::Mutex;
use trove_domain::item::{
    Availability, Condition, Fault, Intent, ItemLine, ItemName, ItemType, Measurement, MeasurementSource, NewItem,
    Severity,
};
use trove_domain::money::MicroUsd;
use trove_domain::project::{Allocation, NewProject, ProjectStatus};
use trove_domain::spend::{BudgetReached, CallOutcome, SpendEntry, Usage};
use trove_domain::template::{NewTemplate, Template, requirement};
use trove_domain::testing::now;
use trove_domain::{ProjectId, TemplateId, Timestamp};

const HOUSEHOLD: HouseholdId = HouseholdId(3);
/// The member who asks for every run: each spend entry and each project written names them.
const ASKER: Actor = Actor { household: HOUSEHOLD, member: Some(trove_domain::people::MemberId(8)) };
const MODEL: &str = "muse-spark-1.3";
const DEFAULT_WISH: &str = "Propose projects I can build from my inventory.";

// ---------------------------------------------------------------------------------------------------------------
// The world: a small household inventory and a catalogue of two templates.
// ---------------------------------------------------------------------------------------------------------------

/// A buildable item (intent keep, available, not gone).
fn item(id: i64, item_type: &str, name: &str, condition: Condition) -> Item {
    let at = Utc.with_ymd_and_hms(2026, 1, 5, 12, 0, 0).unwrap();
    let profile = format!("{name}, serial {id}");
    NewItem::new(ItemName::new(name).unwrap(), ItemType::new(item_type).unwrap(), profile, condition, Intent::Keep)
        .stored(ItemId(id), at)
}

/// Items 10, 12 and 14 are buildable; 13 is meant for sale and 15 is reserved by project 7.
fn inventory() -> Vec<Item> {
    let at = Utc.with_ymd_and_hms(2026, 1, 6, 12, 0, 0).unwrap();
    let mut pi = item(10, "single_board_computer", "Raspberry Pi 4 Model B 4GB", Condition::Good);
    pi.measurements.push(Measurement::new("ram", 4.0, "GB", at, MeasurementSource::Label).unwrap());
    let mut monitor = item(12, "monitor", "Dell 19in monitor", Condition::Fair);
    monitor.faults.push(Fault::new("scratch on the bezel", Severity::Minor).unwrap());
    let mut laptop = item(13, "gamepad", "Xbox 360 pad (for sale)", Condition::Good);
    laptop.intent = Intent::Sell;
    let pad = item(14, "gamepad", "8BitDo SN30", Condition::LikeNew);
    let mut reserved = item(15, "single_board_computer", "Raspberry Pi 3B", Condition::New);
    reserved.availability = Availability::Reserved;
    reserved.project = Some(ProjectId(7));
    vec![pi, monitor, laptop, pad, reserved]
}

fn buildable_inventory() -> Vec<Item> {
    inventory().into_iter().filter(|i| [10, 12, 14].contains(&i.id.0)).collect()
}

fn inventory_item(id: i64) -> Item {
    inventory().into_iter().find(|i| i.id == ItemId(id)).unwrap()
}

fn catalogue() -> Vec<Template> {
    let console = NewTemplate::new(
        "Retro console",
        "Play old games on the TV.",
        "an afternoon",
        &["Flash the card".into()],
        vec![
            requirement(
                "controller",
                "a single-board computer",
                &["single_board_computer"],
                Some(Condition::Good),
                false,
                vec![],
            )
            .unwrap(),
            requirement("display", "a screen with HDMI", &["monitor", "tv"], None, false, vec![]).unwrap(),
            requirement("gamepad", "a USB pad", &["gamepad"], None, true, vec![]).unwrap(),
        ],
    )
    .unwrap()
    .with_id(TemplateId(1));
    let kiosk = NewTemplate::new(
        "Photo frame",
        "Show family photos in the hall.",
        "an evening",
        &[],
        vec![
            requirement("computer", "any small computer", &["single_board_computer"], None, false, vec![]).unwrap(),
            requirement("screen", "a screen", &["monitor"], None, false, vec![]).unwrap(),
        ],
    )
    .unwrap()
    .with_id(TemplateId(2));
    vec![console, kiosk]
}

// ---------------------------------------------------------------------------------------------------------------
// Output items as the adapter hands them over: the provider's raw JSON and the typed view of it.
// ---------------------------------------------------------------------------------------------------------------

fn function_call(id: &str, call_id: &str, name: &str, arguments: &str) -> OutputItem {
    let raw = serde_json::json!({
        "type": "function_call", "id": id, "call_id": call_id, "name": name, "arguments": arguments,
        "status": "completed"
    });
    OutputItem {
        raw: RawJson(raw.to_string()),
        view: OutputView::FunctionCall { call_id: call_id.into(), name: name.into(), arguments: arguments.into() },
    }
}

/// A reasoning item; with its encrypted content it may be replayed, without it it must not be.
fn reasoning(id: &str, encrypted_content: Option<&str>) -> OutputItem {
    let raw = match encrypted_content {
        Some(e) => serde_json::json!({"type": "reasoning", "id": id, "summary": [], "encrypted_content": e}),
        None => serde_json::json!({"type": "reasoning", "id": id, "summary": []}),
    };
    OutputItem {
        raw: RawJson(raw.to_string()),
        view: OutputView::Reasoning { replayable: encrypted_content.is_some() },
    }
}

fn message(text: &str) -> OutputItem {
    let raw = serde_json::json!({
        "type": "message", "id": "msg_1", "status": "completed", "role": "assistant",
        "content": [{"type": "output_text", "text": text, "annotations": []}]
    });
    OutputItem { raw: RawJson(raw.to_string()), view: OutputView::Message { text: text.into(), citations: vec![] } }
}

fn usage(input_tokens: u64, output_tokens: u64) -> Usage {
    Usage { input_tokens, cached_tokens: 0, output_tokens, searches: 0, audio_ms: 0 }
}

fn respond(output: Vec<OutputItem>, usage: Usage) -> Result<ModelResponse, ModelError> {
    Ok(ModelResponse { output, usage })
}

fn tool_step(calls: Vec<OutputItem>) -> Result<ModelResponse, ModelError> {
    respond(calls, usage(1830, 412))
}

fn answer(json: &str) -> Result<ModelResponse, ModelError> {
    respond(vec![reasoning("rs_9", Some("enc-final")), message(json)], usage(2400, 300))
}

const NO_PROPOSALS: &str = r#"{"proposals":[]}"#;

// ---------------------------------------------------------------------------------------------------------------
// The harness: mocks of every port, a scripted model and a ledger that keeps what it is given.
// ---------------------------------------------------------------------------------------------------------------

type Requests = Arc<Mutex<Vec<ModelRequest>>>;
type Entries = Arc<Mutex<Vec<SpendEntry>>>;

/// A model that answers `script` in order, once each, and keeps every request it receives.
fn scripted_model(script: Vec<Result<ModelResponse, ModelError>>) -> (MockModelPort, Requests) {
    let requests: Requests = Arc::default();
    let kept = requests.clone();
    let n = script.len();
    let script = Mutex::new(VecDeque::from(script));
    let mut model = MockModelPort::new();
    model.expect_model_name().return_const(MODEL.to_owned());
    model.expect_respond().times(n).returning(move |request| {
        kept.lock().unwrap().push(request.clone());
        script.lock().unwrap().pop_front().expect("the script has an answer for every call")
    });
    (model, requests)
}

/// How many times a read may happen: `0..usize::MAX` for any, [`exactly`] for a count.
fn exactly(n: usize) -> Range<usize> {
    n..n + 1
}

struct Harness {
    model: MockModelPort,
    requests: Requests,
    /// Expectations a test adds (writes that must not happen); the reads are added by `use_case`.
    items: MockInventoryRepo,
    templates: MockTemplateRepo,
    projects: MockProjectRepo,
    ledger: MockSpendLedger,
    entries: Entries,
    policy: SpendPolicy,
    lines_calls: Range<usize>,
    get_calls: Range<usize>,
    get_many_calls: Range<usize>,
    /// The ids `InventoryRepo::get` was asked for, in order.
    gets: Arc<Mutex<Vec<ItemId>>>,
    /// The ids of each `InventoryRepo::get_many` call.
    get_manys: Arc<Mutex<Vec<Vec<ItemId>>>>,
    recorder: Recorder,
}

impl Harness {
    /// The ports with the reads a run makes allowed (the inventory above, the catalogue above) and nothing else:
    /// no project write, no inventory write.
    fn new(script: Vec<Result<ModelResponse, ModelError>>) -> Self {
        let (model, requests) = scripted_model(script);
        let entries: Entries = Arc::default();
        let kept = entries.clone();
        let mut ledger = MockSpendLedger::new();
        ledger.expect_record().withf(|h, _| *h == HOUSEHOLD).returning(move |_, entry: &SpendEntry| {
            kept.lock().unwrap().push(entry.clone());
            Ok(())
        });
        let recorder = crate::recorder::capturing_at(now());
        Self {
            recorder,
            model,
            requests,
            items: MockInventoryRepo::new(),
            templates: MockTemplateRepo::new(),
            projects: MockProjectRepo::new(),
            ledger,
            entries,
            policy: SpendPolicy::default(),
            lines_calls: 0..usize::MAX,
            get_calls: 0..usize::MAX,
            get_many_calls: 0..usize::MAX,
            gets: Arc::default(),
            get_manys: Arc::default(),
        }
    }

    /// `insert_many` is expected exactly once; it stores what it is given as projects 100, 101, ...
    fn expect_insert(&mut self) -> Arc<Mutex<Vec<NewProject>>> {
        let inserted: Arc<Mutex<Vec<NewProject>>> = Arc::default();
        let kept = inserted.clone();
        // The store writes a `create` of each, by the member who asked, in the insert's transaction.
        self.projects
            .expect_insert_many()
            .times(1)
            .withf(|h, _, rec| {
                *h == HOUSEHOLD && (rec.action.as_str(), rec.member, rec.at) == ("create", ASKER.member, now())
            })
            .returning(move |_, new, rec| {
                kept.lock().unwrap().extend(new.iter().cloned());
                Ok(new.into_iter().zip(100..).map(|(p, id)| stored(p, id, rec.at)).collect())
            });
        inserted
    }

    fn expect_no_insert(&mut self) {
        self.projects.expect_insert_many().times(0);
    }

    fn use_case(mut self) -> (ProposeProjects, Requests, Entries) {
        // Added last: mockall tries expectations in the order they were set, so one a test set first wins.
        self.items
            .expect_lines()
            .times(self.lines_calls.clone())
            .withf(|h| *h == HOUSEHOLD)
            .returning(|_| Ok(inventory().iter().map(ItemLine::from).collect()));
        self.items.expect_revision().withf(|h| *h == HOUSEHOLD).returning(|_| Ok(5));
        let gets = self.gets.clone();
        self.items.expect_get().times(self.get_calls.clone()).withf(|h, _| *h == HOUSEHOLD).returning(move |_, id| {
            gets.lock().unwrap().push(id);
            inventory().into_iter().find(|i| i.id == id).ok_or(RepoError::NotFound)
        });
        let get_manys = self.get_manys.clone();
        self.items.expect_get_many().times(self.get_many_calls.clone()).withf(|h, _| *h == HOUSEHOLD).returning(
            move |_, ids: &[ItemId]| {
                get_manys.lock().unwrap().push(ids.to_vec());
                Ok(inventory().into_iter().filter(|i| ids.contains(&i.id)).collect())
            },
        );
        self.templates.expect_list().withf(|h| *h == HOUSEHOLD).returning(|_| Ok(catalogue()));
        // No open proposal to refresh, unless a test said otherwise first.
        self.projects.expect_list().withf(|h| *h == HOUSEHOLD).returning(|_| Ok(Vec::new()));
        let mut clock = MockClock::new();
        clock.expect_now().return_const(now());
        let clock: Arc<dyn crate::ports::Clock> = Arc::new(clock);
        let metered = Metered::new(Arc::new(self.model), Arc::new(self.ledger), clock.clone(), self.policy);
        let use_case = ProposeProjects::new(
            metered,
            Arc::new(self.items),
            Arc::new(self.templates),
            Arc::new(self.projects),
            self.recorder,
        );
        (use_case, self.requests, self.entries)
    }
}

fn stored(p: NewProject, id: i64, at: Timestamp) -> Project {
    Project {
        id: ProjectId(id),
        template_id: p.template_id,
        title: p.title,
        reason: p.reason,
        status: ProjectStatus::Proposed,
        allocations: p.allocations,
        missing: p.missing,
        created_at: at,
        updated_at: at,
    }
}

/// The spend entry of one propose call at the default rates.
fn entry(input_tokens: u64, output_tokens: u64, cost: i64) -> SpendEntry {
    SpendEntry {
        at: now(),
        kind: CallKind::Propose,
        model: MODEL.into(),
        input_tokens,
        cached_tokens: 0,
        output_tokens,
        searches: 0,
        cost: MicroUsd(cost),
        outcome: CallOutcome::Ok,
        member: ASKER.member,
    }
}

/// The spend entry of one propose call that failed.
fn failed_entry(input_tokens: u64, output_tokens: u64, cost: i64) -> SpendEntry {
    SpendEntry { outcome: CallOutcome::Failed, ..entry(input_tokens, output_tokens, cost) }
}

fn replay(item: &OutputItem) -> InputItem {
    InputItem::Replay(item.raw.clone())
}

fn output(call_id: &str, text: String) -> InputItem {
    InputItem::FunctionCallOutput { call_id: call_id.into(), output: text }
}

/// The listing of the buildable inventory under the catalogue.
fn listing() -> String {
    tools::inventory_output(&buildable_inventory().iter().map(ItemLine::from).collect::<Vec<_>>(), &catalogue())
}

/// A `function_call` the loop answers itself before the first step.
fn answered(call_id: &str, name: &str) -> InputItem {
    let raw = serde_json::json!({"type": "function_call", "call_id": call_id, "name": name, "arguments": "{}"});
    InputItem::Replay(RawJson(raw.to_string()))
}

/// How every run's input opens: the catalogue and the listing answered, then the owner's wish.
fn opening(wish: &str) -> Vec<InputItem> {
    vec![
        answered("call_template_catalog", "template_catalog"),
        output("call_template_catalog", tools::catalog_output(&catalogue())),
        answered("call_list_inventory", "list_inventory"),
        output("call_list_inventory", listing()),
        InputItem::UserText(wish.into()),
    ]
}

/// `opening(wish)` followed by `more`.
fn opening_then(wish: &str, more: Vec<InputItem>) -> Vec<InputItem> {
    let mut input = opening(wish);
    input.extend(more);
    input
}

fn model_failed(result: Result<ProposeOutcome, Error>) -> (String, RunSpend) {
    match result {
        Err(Error::ModelFailed { reason, spend }) => (reason, spend),
        other => panic!("expected ModelFailed, got {other:?}"),
    }
}

/// The `error` member of a tool's error output (which must be a JSON object of exactly that member).
fn tool_error(text: &str) -> String {
    let value: serde_json::Value = serde_json::from_str(text).unwrap_or_else(|e| panic!("{text:?} is not JSON: {e}"));
    let object = value.as_object().unwrap_or_else(|| panic!("{text:?} is not an object"));
    assert_eq!(object.len(), 1, "{text}");
    object["error"].as_str().unwrap_or_else(|| panic!("{text:?} has no error string")).to_owned()
}

// ---------------------------------------------------------------------------------------------------------------
// The loop.
// ---------------------------------------------------------------------------------------------------------------

#[tokio::test]
async fn two_steps_replay_the_calls_answer_them_by_call_id_and_write_what_the_rules_keep() {
    let rs = reasoning("rs_1", Some("gAAAAB-opaque"));
    let fc_inventory = function_call("fc_1", "call_a", "list_inventory", "{}");
    let fc_catalog = function_call("fc_2", "call_b", "template_catalog", "{}");
    let proposal = r#"{"proposals":[{"template_id":1,"title":"  Living-room console ","reason":"The Pi 4 runs the emulators.","allocations":[{"requirement":"controller","item_id":10},{"requirement":"gamepad","item_id":13},{"requirement":"display","item_id":99}]}]}"#;
    let mut h = Harness::new(vec![
        tool_step(vec![rs.clone(), fc_inventory.clone(), fc_catalog.clone()]),
        respond(vec![message(proposal)], usage(2600, 250)),
    ]);
    h.lines_calls = exactly(1);
    h.get_many_calls = exactly(1);
    let get_manys = h.get_manys.clone();
    let inserted = h.expect_insert();
    let (use_case, requests, entries) = h.use_case();

    let outcome = use_case.run(ASKER, Some("  something for the kids \n")).await.unwrap();

    // The project written is in the history by the store's insert (see `expect_insert`): nothing apart.

    let requests = requests.lock().unwrap().clone();
    assert_eq!(requests.len(), 2);
    let wish = "The owner's wish: something for the kids";
    for r in &requests {
        assert_eq!(r.kind, CallKind::Propose);
        assert_eq!(r.instructions, proposal::INSTRUCTIONS);
        assert_eq!(r.tools, proposal::tools());
        assert_eq!(r.output_schema, Some(OutputSchema { name: "ProposalSet".into(), schema: proposal::SCHEMA.into() }));
        assert_eq!(r.max_output_tokens, MAX_OUTPUT_TOKENS);
        assert_eq!(r.max_tool_calls, None);
        assert!(!r.include_search_results);
    }
    assert_eq!(requests[0].input, opening(wish));
    let inventory_text = listing();
    // Not meant for sale, not reserved: items 13 and 15 are not shown to the model.
    let rows: Vec<&str> = inventory_text.lines().skip(1).filter(|l| !l.starts_with('#')).collect();
    let ids: Vec<&str> = rows.iter().map(|l| l.split(|c: char| !c.is_ascii_digit()).next().unwrap()).collect();
    assert_eq!(ids, vec!["14", "12", "10"], "{inventory_text}");
    // The model may call the listing again: it is answered the same.
    assert_eq!(
        requests[1].input,
        opening_then(
            wish,
            vec![
                replay(&rs),
                replay(&fc_inventory),
                replay(&fc_catalog),
                output("call_a", inventory_text),
                output("call_b", tools::catalog_output(&catalogue())),
            ]
        )
    );

    let want = NewProject {
        template_id: TemplateId(1),
        title: "Living-room console".into(),
        reason: "The Pi 4 runs the emulators.".into(),
        allocations: vec![Allocation { requirement: "controller".into(), item_id: ItemId(10), units: 1 }],
        missing: vec!["display".into()],
    };
    // The rules read exactly the items the answer names, whatever their state.
    assert_eq!(*get_manys.lock().unwrap(), vec![vec![ItemId(10), ItemId(13), ItemId(99)]]);
    assert_eq!(*inserted.lock().unwrap(), vec![want.clone()]);
    assert_eq!(outcome.projects, vec![stored(want, 100, now())]);
    assert_eq!(
        outcome.dropped,
        vec![
            Dropped {
                template_id: 1,
                requirement: Some("gamepad".into()),
                item_id: Some(13),
                reason: "not buildable: intent sell".into(),
            },
            Dropped {
                template_id: 1,
                requirement: Some("display".into()),
                item_id: Some(99),
                reason: "no such item".into(),
            },
        ]
    );
    assert_eq!(outcome.steps, 2);
    // 1830 * 1.25 + 412 * 4.25 = 4038.5 -> 4039; 2600 * 1.25 + 250 * 4.25 = 4312.5 -> 4313 (micro-USD).
    assert_eq!(*entries.lock().unwrap(), vec![entry(1830, 412, 4039), entry(2600, 250, 4313)]);
    assert_eq!(
        outcome.spend,
        RunSpend {
            calls: 2,
            input_tokens: 4430,
            cached_tokens: 0,
            output_tokens: 662,
            searches: 0,
            cost: MicroUsd(8352)
        }
    );
}

/// A watched run reports each step as the model answers it (with the tools it called) and each tool's answer by
/// its size, in the order they happen; the answer is the same as an unwatched run's.
#[tokio::test]
async fn a_watched_run_reports_its_steps_and_tools_as_they_happen() {
    let fc_inventory = function_call("fc_1", "call_a", "list_inventory", "{}");
    let fc_details = function_call("fc_2", "call_b", "item_details", r#"{"item_id":12}"#);
    let proposal = r#"{"proposals":[{"template_id":1,"title":"Console","reason":"Pi","allocations":[{"requirement":"controller","item_id":10}]}]}"#;
    let mut h = Harness::new(vec![
        tool_step(vec![fc_inventory, fc_details]),
        respond(vec![message(proposal)], usage(2600, 250)),
    ]);
    h.lines_calls = exactly(1);
    h.get_many_calls = exactly(1);
    h.expect_insert();
    let (use_case, requests, _) = h.use_case();
    let seen = Mutex::new(Vec::new());
    let sink = |event: Progress| seen.lock().unwrap().push(event);

    let outcome = use_case.run_watched(ASKER, None, &sink).await.unwrap();

    let requests = requests.lock().unwrap().clone();
    let outputs: Vec<usize> = requests[1]
        .input
        .iter()
        .filter_map(|i| match i {
            InputItem::FunctionCallOutput { output, .. } => Some(output.len()),
            _ => None,
        })
        .skip(2)
        .collect();
    assert_eq!(outputs.len(), 2, "the listing and the catalogue answered first, then the two calls");
    assert_eq!(
        seen.into_inner().unwrap(),
        vec![
            Progress::Step { number: 1, max: MAX_STEPS, tools: vec!["list_inventory".into(), "item_details".into()] },
            Progress::Tool { name: "list_inventory".into(), output_bytes: outputs[0] },
            Progress::Tool { name: "item_details".into(), output_bytes: outputs[1] },
            Progress::Step { number: 2, max: MAX_STEPS, tools: vec![] },
        ]
    );
    assert_eq!((outcome.steps, outcome.projects.len()), (2, 1));
}

#[tokio::test]
async fn without_a_wish_the_loop_asks_for_projects_from_the_inventory() {
    for brief in [None, Some(""), Some("   \n ")] {
        let mut h = Harness::new(vec![answer(NO_PROPOSALS)]);
        h.expect_no_insert();
        let (use_case, requests, _) = h.use_case();
        let outcome = use_case.run(ASKER, brief).await.unwrap();
        assert_eq!(outcome.steps, 1);
        assert_eq!(requests.lock().unwrap()[0].input, opening(DEFAULT_WISH), "{brief:?}");
    }
}

#[tokio::test]
async fn a_reasoning_item_is_replayed_only_with_its_encrypted_content() {
    let bare = reasoning("rs_1", None);
    let sealed = reasoning("rs_2", Some("gAAAAB-sealed"));
    let call = function_call("fc_1", "call_a", "template_catalog", "{}");
    let bare_again = reasoning("rs_3", None);
    let call_again = function_call("fc_2", "call_b", "list_inventory", "{}");
    let mut h = Harness::new(vec![
        tool_step(vec![bare.clone(), sealed.clone(), call.clone()]),
        tool_step(vec![bare_again, call_again.clone()]),
        answer(NO_PROPOSALS),
    ]);
    h.expect_no_insert();
    let (use_case, requests, _) = h.use_case();

    let outcome = use_case.run(ASKER, None).await.unwrap();

    assert_eq!(outcome.steps, 3);
    let requests = requests.lock().unwrap().clone();
    let catalog = output("call_a", tools::catalog_output(&catalogue()));
    let step_2 = opening_then(DEFAULT_WISH, vec![replay(&sealed), replay(&call), catalog]);
    assert_eq!(requests[1].input, step_2);
    let mut step_3 = step_2;
    step_3.push(replay(&call_again));
    step_3.push(output("call_b", listing()));
    assert_eq!(requests[2].input, step_3);
    assert!(
        !requests
            .iter()
            .flat_map(|r| &r.input)
            .any(|i| matches!(i, InputItem::Replay(raw) if raw.0.contains("rs_1") || raw.0.contains("rs_3")))
    );
}

#[tokio::test]
async fn an_unknown_tool_is_answered_with_an_error_and_the_loop_goes_on() {
    let call = function_call("fc_1", "call_x", "fly_to_moon", r#"{"speed":"fast"}"#);
    let mut h = Harness::new(vec![tool_step(vec![call.clone()]), answer(NO_PROPOSALS)]);
    h.expect_no_insert();
    let (use_case, requests, entries) = h.use_case();

    let outcome = use_case.run(ASKER, None).await.unwrap();

    let requests = requests.lock().unwrap().clone();
    assert_eq!(
        requests[1].input,
        opening_then(
            DEFAULT_WISH,
            vec![replay(&call), output("call_x", r#"{"error":"no tool named fly_to_moon"}"#.into())]
        )
    );
    assert_eq!(outcome.steps, 2);
    assert!(outcome.projects.is_empty() && outcome.dropped.is_empty());
    assert_eq!(entries.lock().unwrap().len(), 2);
}

#[tokio::test]
async fn item_details_answers_one_item_in_full_or_no_such_item() {
    let found = function_call("fc_1", "call_a", "item_details", r#"{"item_id":12}"#);
    let missing = function_call("fc_2", "call_b", "item_details", r#"{"item_id":42}"#);
    let mut h = Harness::new(vec![tool_step(vec![found.clone(), missing.clone()]), answer(NO_PROPOSALS)]);
    h.get_calls = exactly(2);
    let gets = h.gets.clone();
    h.expect_no_insert();
    let (use_case, requests, _) = h.use_case();

    let outcome = use_case.run(ASKER, None).await.unwrap();

    assert_eq!(outcome.steps, 2);
    assert_eq!(*gets.lock().unwrap(), vec![ItemId(12), ItemId(42)]);
    let details = tools::details_output(&inventory_item(12));
    assert!(details.contains("faults: minor: scratch on the bezel"), "{details}");
    assert_eq!(
        requests.lock().unwrap()[1].input,
        opening_then(
            DEFAULT_WISH,
            vec![
                replay(&found),
                replay(&missing),
                output("call_a", details),
                output("call_b", r#"{"error":"no such item"}"#.into()),
            ]
        )
    );
}

#[tokio::test]
async fn item_details_with_malformed_arguments_is_answered_with_an_error_and_the_loop_goes_on() {
    let malformed = ["{}", "not json", r#"{"item_id":"x"}"#, r#"{"item_id":12,"verbose":true}"#, ""];
    let calls: Vec<OutputItem> = malformed
        .iter()
        .enumerate()
        .map(|(n, args)| function_call(&format!("fc_{n}"), &format!("call_{n}"), "item_details", args))
        .collect();
    let mut h = Harness::new(vec![tool_step(calls.clone()), answer(NO_PROPOSALS)]);
    // No item is read for arguments that do not parse.
    h.get_calls = exactly(0);
    h.expect_no_insert();
    let (use_case, requests, _) = h.use_case();

    let outcome = use_case.run(ASKER, None).await.unwrap();

    assert_eq!(outcome.steps, 2);
    let input = requests.lock().unwrap()[1].input.clone();
    let opened = opening(DEFAULT_WISH).len();
    assert_eq!(input[..opened], opening(DEFAULT_WISH));
    let input = &input[opened..];
    assert_eq!(input.len(), 2 * malformed.len());
    assert_eq!(&input[..malformed.len()], calls.iter().map(replay).collect::<Vec<_>>().as_slice());
    for (n, (item, args)) in input[malformed.len()..].iter().zip(malformed).enumerate() {
        let InputItem::FunctionCallOutput { call_id, output } = item else { panic!("{item:?} is not an output") };
        assert_eq!(call_id, &format!("call_{n}"));
        let error = tool_error(output);
        assert!(error.starts_with("invalid arguments for item_details: "), "{args:?} -> {error}");
    }
}

#[tokio::test]
async fn a_fourth_answer_that_still_calls_tools_fails_the_run_and_writes_nothing() {
    let steps: Vec<OutputItem> =
        (1..=4).map(|n| function_call(&format!("fc_{n}"), &format!("call_{n}"), "list_inventory", "{}")).collect();
    let mut h = Harness::new(steps.iter().map(|c| tool_step(vec![c.clone()])).collect());
    // Tools only read, and a run is short: the inventory is loaded once and answered from then on.
    h.lines_calls = exactly(1);
    h.get_many_calls = exactly(0);
    h.expect_no_insert();
    let (use_case, requests, entries) = h.use_case();

    let (reason, spend) = model_failed(use_case.run(ASKER, None).await);

    assert_eq!(reason, "the model still called tools after 4 steps");
    let requests = requests.lock().unwrap().clone();
    assert_eq!(requests.len(), 4);
    let inventory_text = listing();
    let mut want = opening(DEFAULT_WISH);
    for (n, call) in steps.iter().take(3).enumerate() {
        want.push(replay(call));
        want.push(output(&format!("call_{}", n + 1), inventory_text.clone()));
    }
    assert_eq!(requests[3].input, want);
    // The fourth answer is unusable to the loop: its call is recorded as failed.
    let mut want_entries = vec![entry(1830, 412, 4039); 3];
    want_entries.push(failed_entry(1830, 412, 4039));
    assert_eq!(*entries.lock().unwrap(), want_entries);
    assert_eq!(spend.calls, 4);
    assert_eq!(spend.input_tokens, 4 * 1830);
    assert_eq!(spend.output_tokens, 4 * 412);
    assert_eq!(spend.cost, MicroUsd(4 * 4039));
}

#[tokio::test]
async fn an_unparsable_final_answer_fails_the_run_and_writes_nothing() {
    let cases = [
        ("Here are some ideas: build a retro console with your Pi.", "not a ProposalSet"),
        (r#"{"proposals":[],"note":"I also like kites"}"#, "unknown field `note`"),
        (
            r#"{"proposals":[{"template_id":1,"title":"t","reason":"r","allocations":[{"requirement":"controller","item_id":10,"why":"x"}]}]}"#,
            "unknown field `why`",
        ),
        (r#"{"proposals":[{"template_id":"1","title":"t","reason":"r","allocations":[]}]}"#, "not a ProposalSet"),
        ("", "not a ProposalSet"),
    ];
    for (text, want) in cases {
        let mut h = Harness::new(vec![respond(vec![message(text)], usage(900, 120))]);
        h.get_many_calls = exactly(0);
        h.expect_no_insert();
        let (use_case, _, entries) = h.use_case();

        let (reason, spend) = model_failed(use_case.run(ASKER, None).await);

        assert!(reason.starts_with("the model's answer is not a ProposalSet: "), "{text:?} -> {reason}");
        assert!(reason.contains(want), "{text:?} -> {reason}");
        // 900 * 1.25 + 120 * 4.25 = 1125 + 510 = 1635 micro-USD.
        assert_eq!(*entries.lock().unwrap(), vec![failed_entry(900, 120, 1635)], "{text:?}");
        assert_eq!(spend.calls, 1);
        assert_eq!(spend.cost, MicroUsd(1635));
    }
}

#[tokio::test]
async fn a_final_answer_without_a_message_fails_the_run() {
    let mut h = Harness::new(vec![respond(vec![reasoning("rs_1", Some("enc"))], usage(900, 16_000))]);
    h.expect_no_insert();
    let (use_case, _, entries) = h.use_case();

    let (reason, spend) = model_failed(use_case.run(ASKER, None).await);

    assert_eq!(reason, "the model's final answer holds no message");
    assert_eq!(spend.calls, 1);
    let entries = entries.lock().unwrap();
    assert_eq!((entries.len(), entries[0].outcome), (1, CallOutcome::Failed));
}

#[tokio::test]
async fn a_refused_incomplete_or_failed_call_fails_the_run_and_records_its_usage() {
    let billed = usage(2100, 800);
    let cases = [
        (
            ModelError::Refused { refusal: "I can't help with that.".into(), usage: billed },
            "the model refused: I can't help with that.",
        ),
        (
            ModelError::Incomplete { reason: "content_filter".into(), usage: billed },
            "the model's answer is incomplete (content_filter)",
        ),
        (
            ModelError::Failed { message: "server_error: try again".into(), usage: billed },
            "the model failed: server_error: try again",
        ),
    ];
    for (error, want) in cases {
        // The failure comes at step 2, so the run's spend holds both calls.
        let call = function_call("fc_1", "call_a", "list_inventory", "{}");
        let mut h = Harness::new(vec![tool_step(vec![call]), Err(error)]);
        h.get_many_calls = exactly(0);
        h.expect_no_insert();
        let (use_case, requests, entries) = h.use_case();

        let (reason, spend) = model_failed(use_case.run(ASKER, None).await);

        assert_eq!(reason, want);
        assert_eq!(requests.lock().unwrap().len(), 2);
        // 2100 * 1.25 + 800 * 4.25 = 2625 + 3400 = 6025 micro-USD.
        assert_eq!(*entries.lock().unwrap(), vec![entry(1830, 412, 4039), failed_entry(2100, 800, 6025)], "{want}");
        assert_eq!(
            spend,
            RunSpend {
                calls: 2,
                input_tokens: 3930,
                cached_tokens: 0,
                output_tokens: 1212,
                searches: 0,
                cost: MicroUsd(10_064)
            }
        );
    }
}

#[tokio::test]
async fn an_http_error_fails_the_run_and_records_a_call_without_tokens() {
    let error = ModelError::Http { status: 500, message: "internal error".into() };
    let mut h = Harness::new(vec![Err(error)]);
    h.expect_no_insert();
    let (use_case, _, entries) = h.use_case();

    let (reason, spend) = model_failed(use_case.run(ASKER, None).await);

    assert_eq!(reason, "the Model API answered 500: internal error");
    assert_eq!(*entries.lock().unwrap(), vec![failed_entry(0, 0, 0)]);
    assert_eq!(spend, RunSpend { calls: 1, ..RunSpend::default() });
}

#[tokio::test]
async fn a_spent_budget_stops_the_run_before_the_model_is_called() {
    let mut h = Harness::new(vec![]);
    h.policy.monthly_limit = Some(MicroUsd(5_000_000));
    let month_start = Utc.with_ymd_and_hms(2026, 6, 1, 0, 0, 0).unwrap();
    h.ledger
        .expect_total_since()
        .times(1)
        .withf(move |household, since| *household == HOUSEHOLD && *since == month_start)
        .returning(|_, _| Ok(MicroUsd(5_000_000)));
    h.expect_no_insert();
    let (use_case, requests, entries) = h.use_case();

    let result = use_case.run(ASKER, None).await;

    match result {
        Err(Error::Budget(b)) => {
            assert_eq!(b, BudgetReached { spent: MicroUsd(5_000_000), limit: MicroUsd(5_000_000), needed: MicroUsd(0) })
        }
        other => panic!("expected Budget, got {other:?}"),
    }
    assert!(requests.lock().unwrap().is_empty());
    assert!(entries.lock().unwrap().is_empty());
}

#[tokio::test]
async fn the_budget_is_checked_before_every_step() {
    let call = function_call("fc_1", "call_a", "list_inventory", "{}");
    let mut h = Harness::new(vec![tool_step(vec![call])]);
    h.policy.monthly_limit = Some(MicroUsd(5_000_000));
    // Enough left for step 1 (what it may cost: its input and 16,000 output tokens); another run spent the rest
    // before step 2.
    let totals = Mutex::new(VecDeque::from([MicroUsd(4_000_000), MicroUsd(5_000_001)]));
    h.ledger.expect_total_since().times(2).returning(move |_, _| Ok(totals.lock().unwrap().pop_front().unwrap()));
    h.expect_no_insert();
    let (use_case, requests, entries) = h.use_case();

    let result = use_case.run(ASKER, None).await;

    assert!(matches!(result, Err(Error::Budget(_))), "{result:?}");
    assert_eq!(requests.lock().unwrap().len(), 1);
    assert_eq!(*entries.lock().unwrap(), vec![entry(1830, 412, 4039)]);
}

#[tokio::test]
async fn a_brief_over_2000_characters_is_refused_before_the_model_is_called() {
    // An empty script: the model must not be called.
    let mut h = Harness::new(vec![]);
    h.expect_no_insert();
    let (use_case, requests, entries) = h.use_case();

    let result = use_case.run(ASKER, Some(&"x".repeat(2001))).await;

    match result {
        Err(Error::Invalid(message)) => assert_eq!(message, "brief is longer than 2000 characters"),
        other => panic!("expected Invalid, got {other:?}"),
    }
    assert!(requests.lock().unwrap().is_empty());
    assert!(entries.lock().unwrap().is_empty());
}

#[tokio::test]
async fn a_brief_of_2000_characters_is_accepted_counting_characters_not_bytes() {
    let brief = "é".repeat(2000);
    let mut h = Harness::new(vec![answer(NO_PROPOSALS)]);
    h.expect_no_insert();
    let (use_case, requests, _) = h.use_case();

    use_case.run(ASKER, Some(&brief)).await.unwrap();

    assert_eq!(requests.lock().unwrap()[0].input, opening(&format!("The owner's wish: {brief}")));
}

#[tokio::test]
async fn an_answer_naming_only_undecidable_things_writes_nothing_and_reports_why() {
    let answer_text = r#"{"proposals":[{"template_id":42,"title":"Moon base","reason":"why not","allocations":[{"requirement":"controller","item_id":10}]},{"template_id":43,"title":"Kite","reason":"wind","allocations":[]}]}"#;
    let mut h = Harness::new(vec![answer(answer_text)]);
    h.expect_no_insert();
    let (use_case, _, entries) = h.use_case();

    let outcome = use_case.run(ASKER, None).await.unwrap();

    assert!(outcome.projects.is_empty());
    assert_eq!(
        outcome.dropped,
        vec![
            Dropped {
                template_id: 42,
                requirement: Some("controller".into()),
                item_id: Some(10),
                reason: "no such template 42".into(),
            },
            Dropped { template_id: 43, requirement: None, item_id: None, reason: "no such template 43".into() },
        ]
    );
    assert_eq!(outcome.steps, 1);
    // 2400 * 1.25 + 300 * 4.25 = 3000 + 1275 = 4275 micro-USD.
    assert_eq!(*entries.lock().unwrap(), vec![entry(2400, 300, 4275)]);
    assert_eq!(outcome.spend.calls, 1);
}

#[tokio::test]
async fn tools_never_write() {
    let calls = vec![
        function_call("fc_1", "call_a", "list_inventory", "{}"),
        function_call("fc_2", "call_b", "template_catalog", "{}"),
        function_call("fc_3", "call_c", "item_details", r#"{"item_id":15}"#),
        function_call("fc_4", "call_d", "item_details", r#"{"item_id":404}"#),
        function_call("fc_5", "call_e", "reserve_item", r#"{"item_id":10}"#),
    ];
    let proposal = r#"{"proposals":[{"template_id":2,"title":"Hall frame","reason":"Pi and monitor","allocations":[{"requirement":"computer","item_id":10},{"requirement":"screen","item_id":12}]}]}"#;
    let mut h = Harness::new(vec![tool_step(calls), answer(proposal)]);
    // The mocks would panic on these calls anyway (no expectation allows them); `.times(0)` says it outright.
    h.items.expect_insert().times(0);
    h.items.expect_import().times(0);
    h.items.expect_update().times(0);
    h.templates.expect_insert().times(0);
    h.templates.expect_seed_builtin().times(0);
    h.projects.expect_accept().times(0);
    h.projects.expect_build().times(0);
    h.projects.expect_drop_project().times(0);
    // The only write of a run: the projects the rules keep, after the loop.
    let inserted = h.expect_insert();
    let (use_case, _, _) = h.use_case();

    let outcome = use_case.run(ASKER, None).await.unwrap();

    assert_eq!(outcome.steps, 2);
    assert_eq!(
        *inserted.lock().unwrap(),
        vec![NewProject {
            template_id: TemplateId(2),
            title: "Hall frame".into(),
            reason: "Pi and monitor".into(),
            allocations: vec![
                Allocation { requirement: "computer".into(), item_id: ItemId(10), units: 1 },
                Allocation { requirement: "screen".into(), item_id: ItemId(12), units: 1 },
            ],
            missing: vec![],
        }]
    );
    assert!(outcome.dropped.is_empty(), "{:?}", outcome.dropped);
}

#[tokio::test]
async fn a_failing_inventory_read_fails_the_run_before_any_call_and_writes_nothing() {
    let mut h = Harness::new(vec![]);
    h.items.expect_lines().times(1).returning(|_| Err(RepoError::Unexpected(anyhow::anyhow!("database down"))));
    h.lines_calls = exactly(0);
    h.expect_no_insert();
    let (use_case, requests, entries) = h.use_case();

    let result = use_case.run(ASKER, None).await;

    assert!(matches!(&result, Err(Error::Unexpected(e)) if e.to_string() == "database down"), "{result:?}");
    // The listing is read before the first step: nothing was sent, so nothing was spent.
    assert!(requests.lock().unwrap().is_empty());
    assert!(entries.lock().unwrap().is_empty());
}
