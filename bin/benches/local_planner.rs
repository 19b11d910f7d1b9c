//! The local planner's proposal at 10,000 and 100,000 items, end to end through the server's code path:
//! `trove::build` on a SQLite file (no `MODEL_API_KEY`, so the model is the local planner behind `Metered`), then
//! `ProposeProjects::run`, the use case `POST /api/projects/propose` calls: every step, tool and spend entry,
//! the planner's allocation, and the projects written. Target at 100,000 items: under 300 ms warm and under
//! 150 MB RSS.
//!
//! Each size runs in a child process of its own, on a store prepared by another child, so the figures are the
//! server's: a process that opens an existing database and proposes. It prints the process's RSS before the
//! first proposal, the first run (every cache empty: items read, listing written), the median of the warm runs
//! that follow (the caches current) and the peak RSS (`VmHWM` of `/proc/self/status`).
//!
//! Run: `cargo bench -p trove --bench local_planner` (or `... -- 100000` for one size). `... -- check` is the
//! memory bound as a check (`.ci/run` runs it): the proposal at 100,000 items, failing when the proposing
//! process's peak RSS reaches [`PEAK_MAX_MB`].

mod generated_inventory;

use std::collections::HashMap;
use std::process::Command;
use std::time::{Duration, Instant};
use trove_application::ports::{HouseholdRepo, InventoryRepo};
use trove_domain::HouseholdId;
use trove_domain::item::Intent;

/// Warm runs after the first; the median is reported.
const WARM_RUNS: usize = 9;
/// The bound on the proposing process's peak resident memory at 100,000 items.
const PEAK_MAX_MB: f64 = 150.0;
/// The household the generated items belong to.
const HOUSEHOLD: &str = "bench";

/// A line of `/proc/self/status` in MB (`VmRSS`, `VmHWM`).
fn status_mb(key: &str) -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

async fn app(database_url: &str) -> trove::App {
    let vars: HashMap<&str, String> = HashMap::from([("DATABASE_URL", database_url.to_owned())]);
    let config = trove::Config::from_vars(|k| vars.get(k).cloned()).expect("config");
    trove::build(&config).await.expect("the app builds")
}

async fn household(app: &trove::App) -> HouseholdId {
    let households: &dyn HouseholdRepo = app.store.as_ref();
    households.ensure_household(HOUSEHOLD).await.expect("the household")
}

/// A fresh SQLite store with `n` generated items in one household, one in ten meant for sale (not buildable).
async fn prepare(database_url: &str, n: usize) {
    let app = app(database_url).await;
    let household = household(&app).await;
    let mut new = generated_inventory::new_items(n);
    for item in new.iter_mut().step_by(10) {
        item.intent = Intent::Sell;
    }
    let items: &dyn InventoryRepo = app.store.as_ref();
    items
        .import(household, new, generated_inventory::labelled_at(), &|_: &trove_application::ports::ImportWritten| {
            Vec::<trove_domain::history::Event>::new()
        })
        .await
        .expect("items imported");
}

/// The proposals on a prepared store: the first run, then the warm ones, and the memory.
async fn propose(database_url: &str, n: usize) {
    let app = app(database_url).await;
    let household = household(&app).await;
    let before = status_mb("VmRSS");
    let propose = &app.services.propose;
    let start = Instant::now();
    let first = propose
        .run(trove_application::recorder::Actor::command_line(household), None)
        .await
        .expect("the first proposal");
    let first_time = start.elapsed();
    let mut warm: Vec<Duration> = Vec::with_capacity(WARM_RUNS);
    for _ in 0..WARM_RUNS {
        let start = Instant::now();
        let outcome = propose
            .run(trove_application::recorder::Actor::command_line(household), None)
            .await
            .expect("a warm proposal");
        warm.push(start.elapsed());
        let ids = |o: &trove_application::propose::ProposeOutcome| -> Vec<i64> {
            o.projects.iter().map(|p| p.template_id.0).collect()
        };
        assert_eq!(ids(&outcome), ids(&first), "every run proposes the same");
    }
    warm.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "{n} items: {} projects in {} steps; first run {:.1} ms, warm median of {WARM_RUNS} {:.1} ms (min {:.1}, \
         max {:.1}); RSS {before:.0} MB before, peak {:.0} MB",
        first.projects.len(),
        first.steps,
        ms(first_time),
        ms(warm[WARM_RUNS / 2]),
        ms(warm[0]),
        ms(warm[WARM_RUNS - 1]),
        status_mb("VmHWM"),
    );
    if std::env::var_os(CHECKING).is_some() && status_mb("VmHWM") >= PEAK_MAX_MB {
        eprintln!("the proposal at {n} items reached {PEAK_MAX_MB} MB of peak RSS");
        std::process::exit(1);
    }
}

/// Set in the children of `check`: a peak at or over the bound fails the child.
const CHECKING: &str = "TROVE_BENCH_CHECK";

/// Runs this binary again with `args`, so each part has a process (and a peak RSS) of its own.
fn child(args: &[&str], checking: bool) {
    let exe = std::env::current_exe().expect("the bench binary");
    let mut command = Command::new(exe);
    if checking {
        command.env(CHECKING, "1");
    }
    let status = command.args(args).status().expect("the child runs");
    assert!(status.success(), "{args:?} failed");
}

/// How many requirements the built-in catalogue has, and how many distinct machine checks they are
/// (`Requirement::same_check`): the allocation reads the stock once per distinct check.
fn catalogue_checks() -> (usize, usize) {
    let requirements: Vec<_> = trove_domain::catalogue::builtin().into_iter().flat_map(|t| t.requirements).collect();
    let mut distinct: Vec<&trove_domain::template::Requirement> = Vec::new();
    for r in &requirements {
        if !distinct.iter().any(|d| d.same_check(r)) {
            distinct.push(r);
        }
    }
    (requirements.len(), distinct.len())
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with("--")).collect();
    let runtime = || tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    match args.as_slice() {
        [mode, url, n] if mode == "prepare" || mode == "propose" => {
            let n: usize = n.parse().expect("a size");
            if mode == "prepare" {
                runtime().block_on(prepare(url, n));
            } else {
                runtime().block_on(propose(url, n));
            }
        }
        sizes => {
            let checking = sizes.iter().any(|s| s == "check");
            let sizes: Vec<String> = if checking { vec!["100000".to_owned()] } else { sizes.to_vec() };
            let (requirements, checks) = catalogue_checks();
            println!("the built-in catalogue: {requirements} requirements, {checks} distinct checks");
            let sizes: Vec<usize> = if sizes.is_empty() {
                vec![10_000, 100_000]
            } else {
                sizes.iter().map(|s| s.parse().expect("a size such as 100000")).collect()
            };
            for n in sizes {
                let url = trove_db::testing::fresh_sqlite_url();
                child(&["prepare", &url, &n.to_string()], false);
                child(&["propose", &url, &n.to_string()], checking);
                let _ = runtime().block_on(trove_db::testing::discard(&url));
            }
        }
    }
}
