//! The planner driven the way the proposal loop drives a model: the built-in catalogue and the demo inventory in
//! mocked stores, the loop's own tool outputs answered step by step until a message comes back.

use super::*;
use chrono::{TimeZone, Utc};
use std::collections::{HashMap, HashSet};
use std::sync::Mutex;
use trove_application::RepoError;
use trove_application::ports::inventory::MockInventoryRepo;
use trove_application::ports::model::InputItem;
use trove_application::ports::templates::MockTemplateRepo;
use trove_application::tools::{catalog_output, details_output, error_output, inventory_output};
use trove_domain::item::{
    Condition, Fault, Intent, Item, ItemLine, ItemName, ItemType, Measurement, MeasurementSource, NewItem, Severity,
};
use trove_domain::project::decide;
use trove_domain::template::Template;
use trove_domain::{ItemId, TemplateId};
use trove_domain::{catalogue, demo};

fn at() -> trove_domain::Timestamp {
    Utc.with_ymd_and_hms(2026, 3, 1, 12, 0, 0).unwrap()
}

fn builtin_templates() -> Vec<Template> {
    catalogue::builtin().into_iter().enumerate().map(|(i, t)| t.with_id(TemplateId(i as i64 + 1))).collect()
}

/// The demo inventory as the store would hold it, with ids 1, 2, ... in list order.
fn demo_items() -> Vec<Item> {
    demo::stored(at())
}

fn item(id: i64, name: &str, item_type: &str, condition: Condition, fields: &[(&str, f64, &str)]) -> Item {
    let (name, item_type) = (ItemName::new(name).unwrap(), ItemType::new(item_type).unwrap());
    let mut new = NewItem::new(name, item_type, String::new(), condition, Intent::Keep);
    new.measurements =
        fields.iter().map(|(k, v, u)| Measurement::new(k, *v, u, at(), MeasurementSource::Label).unwrap()).collect();
    new.stored(ItemId(id), at())
}

/// The household every request is made for.
const HOUSEHOLD: HouseholdId = HouseholdId(1);

/// A planner over mocked stores holding `templates` and `items`.
fn planner(templates: &[Template], items: &[Item]) -> LocalPlanner {
    planner_over(templates, Arc::new(Mutex::new(items.to_vec())))
}

/// A planner over a mocked template store holding `templates` and a mocked inventory holding what `items` holds
/// when it is read (the store's revision moves with every write).
fn planner_over(templates: &[Template], items: Arc<Mutex<Vec<Item>>>) -> LocalPlanner {
    let listed = templates.to_vec();
    let mut repo = MockTemplateRepo::new();
    repo.expect_list().withf(|h| *h == HOUSEHOLD).returning(move |_| Ok(listed.clone()));
    let mut inventory = MockInventoryRepo::new();
    let held = items.clone();
    // The store's revision moves with every write: here, with the items held and their versions.
    inventory.expect_revision().withf(|h| *h == HOUSEHOLD).returning(move |_| {
        let items = held.lock().unwrap();
        Ok(items.len() as i64 * 1_000_000 + items.iter().map(|i| i.version).sum::<i64>())
    });
    let held = items.clone();
    inventory
        .expect_lines()
        .withf(|h| *h == HOUSEHOLD)
        .returning(move |_| Ok(held.lock().unwrap().iter().filter(|i| i.gone.is_none()).map(ItemLine::from).collect()));
    inventory
        .expect_get_many()
        .withf(|h, _| *h == HOUSEHOLD)
        .returning(move |_, ids| Ok(many(&items.lock().unwrap(), ids)));
    LocalPlanner::new(Arc::new(inventory), Arc::new(repo))
}

/// What `get_many` answers: the items of `ids` there are, in id order.
fn many(items: &[Item], ids: &[ItemId]) -> Vec<Item> {
    let mut found: Vec<Item> = items.iter().filter(|i| ids.contains(&i.id)).cloned().collect();
    found.sort_by_key(|i| i.id);
    found
}

fn request(kind: CallKind, input: Vec<InputItem>) -> ModelRequest {
    ModelRequest {
        kind,
        instructions: "propose projects from the inventory".into(),
        input,
        tools: Vec::new(),
        output_schema: None,
        max_output_tokens: 16_000,
        max_tool_calls: None,
        include_search_results: false,
        household: Some(HOUSEHOLD),
    }
}

/// What one run of the loop saw: the function calls of each step, and the final text.
#[derive(Debug)]
struct Run {
    calls: Vec<Vec<(String, String)>>,
    text: String,
}

/// Drives the planner as the proposal loop does: replays every output item verbatim and answers each call with
/// the loop's tool output, matched by `call_id`, for at most four steps.
async fn run(planner: &LocalPlanner, items: &[Item], templates: &[Template]) -> Run {
    run_from(planner, items, templates, "Propose projects I can build from my inventory.").await
}

/// [`run`], opening with `first` as the loop's first message.
async fn run_from(planner: &LocalPlanner, items: &[Item], templates: &[Template], first: &str) -> Run {
    let mut input = vec![InputItem::UserText(first.into())];
    let mut calls = Vec::new();
    for _ in 0..4 {
        let response = planner.respond(&request(CallKind::Propose, input.clone())).await.unwrap();
        assert_eq!(response.usage, Usage::default());
        let step: Vec<(String, String, String)> =
            response.function_calls().map(|(c, n, a)| (c.to_owned(), n.to_owned(), a.to_owned())).collect();
        if step.is_empty() {
            return Run { calls, text: response.final_text().unwrap().to_owned() };
        }
        input.extend(response.output.iter().map(|o| InputItem::Replay(o.raw.clone())));
        for (call_id, name, arguments) in &step {
            let output = match name.as_str() {
                LIST_INVENTORY => {
                    let lines: Vec<ItemLine> = items.iter().filter(|i| i.is_buildable()).map(ItemLine::from).collect();
                    inventory_output(&lines, templates)
                }
                TEMPLATE_CATALOG => catalog_output(templates),
                ITEM_DETAILS => {
                    let args: serde_json::Value = serde_json::from_str(arguments).unwrap();
                    match items.iter().find(|i| Some(i.id.0) == args["item_id"].as_i64()) {
                        Some(i) => details_output(i),
                        None => error_output("no such item"),
                    }
                }
                other => error_output(&format!("no tool named {other}")),
            };
            input.push(InputItem::FunctionCallOutput { call_id: call_id.clone(), output });
        }
        calls.push(step.into_iter().map(|(_, n, a)| (n, a)).collect());
    }
    panic!("no answer after four steps: {calls:?}")
}

fn parse(text: &str) -> ProposalSet {
    contract::read(text).unwrap_or_else(|e| panic!("not a ProposalSet ({e}): {text}"))
}

fn by_id<T, K: std::hash::Hash + Eq>(xs: &[T], key: impl Fn(&T) -> K) -> HashMap<K, T>
where
    T: Clone,
{
    xs.iter().map(|x| (key(x), x.clone())).collect()
}

#[tokio::test]
async fn the_demo_inventory_gives_several_sound_projects() {
    let templates = builtin_templates();
    let items = demo_items();
    let run = run(&planner(&templates, &items), &items, &templates).await;

    assert_eq!(
        run.calls[0],
        vec![(LIST_INVENTORY.to_owned(), "{}".to_owned()), (TEMPLATE_CATALOG.to_owned(), "{}".to_owned())]
    );
    assert!(run.calls[1].iter().all(|(name, _)| name == ITEM_DETAILS), "{:?}", run.calls[1]);

    let set = parse(&run.text);
    let decision = decide(&set, &by_id(&templates, |t| t.id), &by_id(&items, |i| i.id));
    assert!(decision.dropped.is_empty(), "{:?}", decision.dropped);
    assert!(decision.projects.len() >= 4, "{:#?}", decision.projects);
    assert!(decision.projects.iter().all(|p| p.missing.is_empty()), "{:#?}", decision.projects);

    let used: Vec<ItemId> = decision.projects.iter().flat_map(|p| p.allocations.iter().map(|a| a.item_id)).collect();
    assert_eq!(used.iter().collect::<HashSet<_>>().len(), used.len(), "an item used twice: {used:?}");
    let items_by_id = by_id(&items, |i| i.id);
    assert!(used.iter().all(|id| items_by_id[id].faults.iter().all(|f| f.severity != Severity::Blocking)));

    for p in &set.proposals {
        let label = &templates.iter().find(|t| t.id.0 == p.template_id).unwrap().label;
        assert!(p.title.starts_with(&format!("{label} from your ")), "{}", p.title);
        assert!(p.reason.starts_with("Uses your spare "), "{}", p.reason);
    }
}

#[tokio::test]
async fn a_wish_puts_what_fits_it_first() {
    let templates = builtin_templates();
    let items = demo_items();
    let p = planner(&templates, &items);
    let label = |set: &ProposalSet, n: usize| {
        templates.iter().find(|t| t.id.0 == set.proposals[n].template_id).unwrap().label.clone()
    };
    let plain = parse(&run(&p, &items, &templates).await.text);
    for (wish, want) in [
        ("something for the kids", "Old-laptop kids' PC"),
        ("a weather station for the garden", "Weather station"),
        ("retro games on the TV", "Retro game console"),
    ] {
        let first = format!("{}{wish}", trove_application::propose::WISH_PREFIX);
        let set = parse(&run_from(&p, &items, &templates, &first).await.text);
        assert_eq!(label(&set, 0), want, "{wish}: {set:#?}");
        assert!(set.proposals[0].reason.starts_with("Fits your wish. Uses your spare "), "{}", set.proposals[0].reason);
        // Still sound: the rules keep every allocation, and the other proposals carry on as without a wish.
        let decision = decide(&set, &by_id(&templates, |t| t.id), &by_id(&items, |i| i.id));
        assert!(decision.dropped.is_empty(), "{wish}: {:?}", decision.dropped);
        assert!(set.proposals.len() >= plain.proposals.len().saturating_sub(1), "{wish}: {set:#?}");
    }
    // A wish that fits nothing changes nothing.
    let first = format!("{}a hovercraft", trove_application::propose::WISH_PREFIX);
    assert_eq!(run_from(&p, &items, &templates, &first).await.text, run(&p, &items, &templates).await.text);
}

#[tokio::test]
async fn it_is_deterministic() {
    let templates = builtin_templates();
    let items = demo_items();
    let p = planner(&templates, &items);
    assert_eq!(run(&p, &items, &templates).await.text, run(&p, &items, &templates).await.text);
}

#[tokio::test]
async fn step_one_calls_the_two_listing_tools_like_the_provider() {
    let response = planner(&[], &[]).respond(&request(CallKind::Propose, vec![])).await.unwrap();
    assert_eq!(response.output.len(), 2);
    for (output, name) in response.output.iter().zip([LIST_INVENTORY, TEMPLATE_CATALOG]) {
        let raw: serde_json::Value = serde_json::from_str(&output.raw.0).unwrap();
        assert_eq!(raw["type"], "function_call");
        assert_eq!(raw["name"], name);
        assert_eq!(raw["arguments"], "{}");
        assert_eq!(raw["status"], "completed");
        assert!(raw["id"].as_str().unwrap().starts_with("fc_"));
        let OutputView::FunctionCall { call_id, name: view_name, arguments } = &output.view else {
            panic!("{:?}", output.view)
        };
        assert_eq!(
            (raw["call_id"].as_str().unwrap(), view_name.as_str(), arguments.as_str()),
            (call_id.as_str(), name, "{}")
        );
    }
}

#[tokio::test]
async fn only_proposing_is_served() {
    let p = planner(&[], &[]);
    for kind in CallKind::ALL.into_iter().filter(|k| *k != CallKind::Propose) {
        let err = p.respond(&request(kind, vec![])).await.unwrap_err();
        let ModelError::NotConfigured { setting, .. } = &err else { panic!("{kind}: {err:?}") };
        assert_eq!(*setting, "MODEL_API_KEY");
        assert!(err.to_string().ends_with("needs the Model API: set MODEL_API_KEY"), "{err}");
    }
    let err = p.respond(&request(CallKind::Price, vec![])).await.unwrap_err();
    assert_eq!(err.to_string(), "pricing with web search needs the Model API: set MODEL_API_KEY");
    let err = p.transcribe(b"RIFF").await.unwrap_err();
    assert!(matches!(err, ModelError::NotConfigured { setting: "MODEL_API_KEY", .. }), "{err:?}");
    assert_eq!(p.model_name(CallKind::Propose), "local-planner");
    assert_eq!(p.capabilities(), Capabilities { web_search: false, images: false, audio: false, remote: false });
}

#[tokio::test]
async fn an_empty_inventory_gives_an_empty_set() {
    let templates = builtin_templates();
    let run = run(&planner(&templates, &[]), &[], &templates).await;
    assert_eq!(run.calls.len(), 1, "answers right after listing");
    assert_eq!(parse(&run.text), ProposalSet { proposals: vec![] });
}

#[tokio::test]
async fn nothing_that_fits_gives_an_empty_set() {
    let templates = builtin_templates();
    let items = [item(1, "Garden hose 20 m", "hose", Condition::Good, &[])];
    let run = run(&planner(&templates, &items), &items, &templates).await;
    assert_eq!(parse(&run.text), ProposalSet { proposals: vec![] });
}

/// The Pi-hole template alone, with the best board (like new) dead: the planner learns it from the details and
/// takes the next board, asking for that board's details before answering.
#[tokio::test]
async fn an_item_with_a_blocking_fault_is_not_chosen() {
    let templates: Vec<Template> =
        builtin_templates().into_iter().filter(|t| t.label.starts_with("Network ad-blocker")).collect();
    let mut dead = item(1, "Raspberry Pi Zero W", "single_board_computer", Condition::LikeNew, &[]);
    dead.faults.push(Fault::new("does not boot", Severity::Blocking).unwrap());
    let items = vec![
        dead,
        item(2, "Raspberry Pi 3 Model B", "single_board_computer", Condition::Fair, &[]),
        item(3, "SanDisk 16GB microSD", "sd_card", Condition::Good, &[("capacity", 16.0, "GB")]),
        item(
            4,
            "USB charger",
            "power_adapter",
            Condition::Good,
            &[("output_voltage", 5.0, "V"), ("output_current", 2.0, "A")],
        ),
    ];
    let run = run(&planner(&templates, &items), &items, &templates).await;
    assert_eq!(run.calls.len(), 3, "{:?}", run.calls);
    assert!(run.calls[1].contains(&(ITEM_DETAILS.to_owned(), r#"{"item_id":1}"#.to_owned())));
    assert_eq!(run.calls[2], vec![(ITEM_DETAILS.to_owned(), r#"{"item_id":2}"#.to_owned())]);
    let set = parse(&run.text);
    let decision = decide(&set, &by_id(&templates, |t| t.id), &by_id(&items, |i| i.id));
    assert!(decision.dropped.is_empty(), "{:?}", decision.dropped);
    let allocations = &decision.projects[0].allocations;
    assert!(allocations.iter().any(|a| a.requirement == "controller" && a.item_id == ItemId(2)), "{allocations:?}");
    assert!(allocations.iter().all(|a| a.item_id != ItemId(1)));
}

/// With only the dead board, the project is still worth proposing as a partial one, without the board.
#[tokio::test]
async fn a_dead_only_candidate_leaves_its_requirement_missing() {
    let templates: Vec<Template> =
        builtin_templates().into_iter().filter(|t| t.label.starts_with("Network ad-blocker")).collect();
    let mut dead = item(1, "Raspberry Pi Zero W", "single_board_computer", Condition::LikeNew, &[]);
    dead.faults.push(Fault::new("does not boot", Severity::Blocking).unwrap());
    let items = vec![
        dead,
        item(3, "SanDisk 16GB microSD", "sd_card", Condition::Good, &[("capacity", 16.0, "GB")]),
        item(
            4,
            "USB charger",
            "power_adapter",
            Condition::Good,
            &[("output_voltage", 5.0, "V"), ("output_current", 2.0, "A")],
        ),
    ];
    let run = run(&planner(&templates, &items), &items, &templates).await;
    let set = parse(&run.text);
    let decision = decide(&set, &by_id(&templates, |t| t.id), &by_id(&items, |i| i.id));
    assert!(decision.dropped.is_empty(), "{:?}", decision.dropped);
    assert_eq!(decision.projects.len(), 1);
    assert_eq!(decision.projects[0].missing, vec!["controller".to_owned()]);
    assert!(set.proposals[0].reason.ends_with("still needed: controller."), "{}", set.proposals[0].reason);
}

/// An item that changed between the steps (sold, or gone) is not proposed, and a failing store is a clear error.
#[tokio::test]
async fn details_showing_an_item_unusable_drop_it() {
    let templates: Vec<Template> =
        builtin_templates().into_iter().filter(|t| t.label.starts_with("Spare-drive")).collect();
    let drive = item(1, "WD Blue 1TB", "hard_drive", Condition::Good, &[("capacity", 1.0, "TB")]);
    let dock = item(2, "ORICO enclosure", "drive_enclosure", Condition::New, &[]);
    let store = Arc::new(Mutex::new(vec![drive.clone(), dock.clone()]));
    let p = planner_over(&templates, store.clone());
    // The listing is taken while the drive is kept; by the time its details are read, it is for sale.
    let mut input = vec![];
    let first = p.respond(&request(CallKind::Propose, input.clone())).await.unwrap();
    input.extend(first.output.iter().map(|o| InputItem::Replay(o.raw.clone())));
    let outputs =
        [inventory_output(&[ItemLine::from(&drive), ItemLine::from(&dock)], &templates), catalog_output(&templates)];
    for ((call_id, _, _), output) in first.function_calls().zip(outputs) {
        input.push(InputItem::FunctionCallOutput { call_id: call_id.to_owned(), output });
    }
    let second = p.respond(&request(CallKind::Propose, input.clone())).await.unwrap();
    input.extend(second.output.iter().map(|o| InputItem::Replay(o.raw.clone())));
    let mut sold = drive.clone();
    sold.intent = Intent::Sell;
    sold.version += 1;
    store.lock().unwrap()[0] = sold.clone();
    for (call_id, _, arguments) in second.function_calls() {
        let output = if arguments.contains("\"item_id\":1") { details_output(&sold) } else { details_output(&dock) };
        input.push(InputItem::FunctionCallOutput { call_id: call_id.to_owned(), output });
    }
    let third = p.respond(&request(CallKind::Propose, input)).await.unwrap();
    let set = parse(third.final_text().unwrap());
    assert!(set.proposals.iter().all(|p| p.allocations.iter().all(|a| a.item_id != 1)), "{set:?}");

    let mut failing = MockTemplateRepo::new();
    failing.expect_list().returning(|_| Err(RepoError::Unexpected(anyhow_error())));
    let p = LocalPlanner::new(Arc::new(MockInventoryRepo::new()), Arc::new(failing));
    let mut input = vec![];
    let first = p.respond(&request(CallKind::Propose, input.clone())).await.unwrap();
    input.extend(first.output.iter().map(|o| InputItem::Replay(o.raw.clone())));
    let outputs =
        [inventory_output(&[ItemLine::from(&drive), ItemLine::from(&dock)], &templates), catalog_output(&templates)];
    for ((call_id, _, _), output) in first.function_calls().zip(outputs) {
        input.push(InputItem::FunctionCallOutput { call_id: call_id.to_owned(), output });
    }
    let err = p.respond(&request(CallKind::Propose, input)).await.unwrap_err();
    assert!(err.to_string().contains("could not read template"), "{err}");
}

/// The planner plans from the stores, never from the tools' text: answering every call with nonsense changes
/// nothing, not the calls it makes nor its answer.
#[tokio::test]
async fn what_the_tools_said_is_not_read() {
    let templates = builtin_templates();
    let items = demo_items();
    let p = planner(&templates, &items);
    let honest = run(&p, &items, &templates).await;
    let mut input = vec![InputItem::UserText("Propose projects I can build from my inventory.".into())];
    let mut calls = Vec::new();
    let text = loop {
        let response = p.respond(&request(CallKind::Propose, input.clone())).await.unwrap();
        let step: Vec<(String, String, String)> =
            response.function_calls().map(|(c, n, a)| (c.to_owned(), n.to_owned(), a.to_owned())).collect();
        if step.is_empty() {
            break response.final_text().unwrap().to_owned();
        }
        assert!(calls.len() < 4, "{calls:?}");
        input.extend(response.output.iter().map(|o| InputItem::Replay(o.raw.clone())));
        for (call_id, _, _) in &step {
            input.push(InputItem::FunctionCallOutput { call_id: call_id.clone(), output: "|||\n#?".into() });
        }
        calls.push(step.into_iter().map(|(_, n, a)| (n, a)).collect::<Vec<_>>());
    };
    assert_eq!(calls, honest.calls);
    assert_eq!(text, honest.text);
}

/// A run reads the inventory once (then only its revision), the household the request names, and nothing of a
/// request that names none.
#[tokio::test]
async fn the_inventory_is_read_once_for_the_household_of_the_request() {
    let templates = builtin_templates();
    let items = demo_items();
    let mut repo = MockTemplateRepo::new();
    let listed = templates.clone();
    repo.expect_list().withf(|h| *h == HOUSEHOLD).returning(move |_| Ok(listed.clone()));
    let mut inventory = MockInventoryRepo::new();
    inventory.expect_revision().withf(|h| *h == HOUSEHOLD).returning(|_| Ok(45));
    let present: Vec<ItemLine> = items.iter().map(ItemLine::from).collect();
    inventory.expect_lines().withf(|h| *h == HOUSEHOLD).times(1).returning(move |_| Ok(present.clone()));
    // Only the items it asked the details of are read again, whole.
    let held = items.clone();
    inventory.expect_get_many().withf(|h, _| *h == HOUSEHOLD).returning(move |_, ids| Ok(many(&held, ids)));
    let p = LocalPlanner::new(Arc::new(inventory), Arc::new(repo));
    let first = run(&p, &items, &templates).await;
    assert_eq!(run(&p, &items, &templates).await.text, first.text);

    let mut input = vec![];
    let step_one = p.respond(&request(CallKind::Propose, input.clone())).await.unwrap();
    input.extend(step_one.output.iter().map(|o| InputItem::Replay(o.raw.clone())));
    for (call_id, _, _) in step_one.function_calls() {
        input.push(InputItem::FunctionCallOutput { call_id: call_id.to_owned(), output: "x".into() });
    }
    let mut nameless = request(CallKind::Propose, input);
    nameless.household = None;
    let err = p.respond(&nameless).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "the model failed: the local planner plans for a household, and the request names none"
    );
}

/// A failing inventory is a clear error, billed nothing.
#[tokio::test]
async fn a_failing_inventory_is_a_clear_error() {
    let mut repo = MockTemplateRepo::new();
    repo.expect_list().returning(|_| Ok(builtin_templates()));
    let mut inventory = MockInventoryRepo::new();
    inventory.expect_revision().returning(|_| Err(RepoError::Unexpected(anyhow_error())));
    let p = LocalPlanner::new(Arc::new(inventory), Arc::new(repo));
    let mut input = vec![];
    let first = p.respond(&request(CallKind::Propose, input.clone())).await.unwrap();
    input.extend(first.output.iter().map(|o| InputItem::Replay(o.raw.clone())));
    for (call_id, _, _) in first.function_calls() {
        input.push(InputItem::FunctionCallOutput { call_id: call_id.to_owned(), output: "x".into() });
    }
    let err = p.respond(&request(CallKind::Propose, input)).await.unwrap_err();
    assert!(err.to_string().contains("could not read the inventory"), "{err}");
    assert_eq!(err.usage(), Some(Usage::default()));
}

fn anyhow_error() -> anyhow::Error {
    anyhow::anyhow!("database is unreachable")
}
