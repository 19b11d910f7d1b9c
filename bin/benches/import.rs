//! `trove import` of 100,000 CSV rows next to the database's own bulk load of the same rows, side by side in
//! one run: wall time and peak memory (the maximum resident set size by `/usr/bin/time -v`).
//!
//! The file: our export format of 100,000 generated items (`bin/benches/generated_inventory`), each in one of
//! 100 places by its location text ("Room 3 / Shelf 7"). `trove import FILE` runs into a fresh, migrated
//! database (what it does: every row read and checked, places found or created, the items written in one
//! transaction with the search index kept, the history written and the statistics refreshed), next to:
//! - PostgreSQL: `psql -c "\copy scratch FROM ... CSV HEADER"`, the file into a scratch table of its columns
//!   (no index);
//! - PostgreSQL: the rows that import wrote (copied out by `\copy TO`) loaded back by `psql \copy` into a
//!   fresh, migrated database, every index, key and trigger of the schema in place: the items alone and nothing
//!   else, and the items with their history and `ANALYZE items` (the import's end state);
//! - SQLite: `sqlite3 -cmd ".import --csv"` into a scratch table, then `trove import`.
//!
//! Each is run `RUNS` times on a fresh database, interleaved; medians, and the largest peak.
//!
//! `cargo bench -p trove --bench import` (a release build of the `trove` binary; `psql`, `sqlite3` and
//! `/usr/bin/time`; PostgreSQL on 127.0.0.1:5432 with trust auth, or `TROVE_TEST_PG_URL`); `import postgres` or
//! `import sqlite` runs one backend. Figures go to BENCHMARKS.md and docs/perf/search-totals-import.md. `import check` is the memory
//! bound as a check (`.ci/run` runs it): one `trove import` of the file on each backend, failing when its peak
//! RSS reaches [`PEAK_MAX_MB`].

#[path = "generated_inventory/mod.rs"]
mod generated_inventory;
#[path = "timed/mod.rs"]
mod timed;

use timed::{Run, measured, median};

use std::path::Path;
use std::process::Command;

const ROWS: usize = 100_000;
const RUNS: usize = 3;
/// The bound on `trove import`'s peak resident memory for the file, on either backend.
const PEAK_MAX_MB: u64 = 150;

/// The scratch table of the file's columns: the id a number, every other column text.
fn scratch_table(header: &[String]) -> String {
    let columns: Vec<String> =
        header.iter().map(|c| if c == "id" { "\"id\" BIGINT".to_owned() } else { format!("\"{c}\" TEXT") }).collect();
    format!("CREATE TABLE scratch ({})", columns.join(", "))
}

fn trove(url: &str, dir: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_trove"));
    command.args(args).env("DATABASE_URL", url).env("TROVE_DATA_DIR", dir).env_remove("MODEL_API_KEY");
    command
}

fn report(backend: &str, bulk: &str, ours: Vec<Run>, theirs: Vec<Run>) {
    let (ours, our_peak) = median(ours);
    let (theirs, their_peak) = median(theirs);
    println!("| backend | what | wall (median of {RUNS}) | peak RSS (largest) |");
    println!("|---|---|---:|---:|");
    println!("| {backend} | {bulk} | {theirs:.2?} | {:.1} MB |", their_peak as f64 / 1024.0);
    println!("| {backend} | `trove import` | {ours:.2?} | {:.1} MB |", our_peak as f64 / 1024.0);
    println!("ratio: {:.2}x", ours.as_secs_f64() / theirs.as_secs_f64());
}

/// `psql` running `commands` on `url`, stopping at the first error; `single` makes them one transaction.
fn psql(url: &str, single: bool, commands: &[String]) -> Command {
    let mut psql = Command::new("psql");
    psql.args([url, "-q", "-v", "ON_ERROR_STOP=1"]);
    if single {
        psql.arg("--single-transaction");
    }
    for c in commands {
        psql.args(["-c", c]);
    }
    psql
}

/// What a `trove import` wrote, per table, in the order a load by hand takes them: the household and its
/// places first (loaded, not timed), then the items and their history. The typo vocabulary (`search_words`)
/// is not loaded: the schema's own trigger on `items` writes it, as for any insert.
const SETUP_TABLES: [&str; 2] = ["households", "places"];
const WRITTEN_TABLES: [&str; 2] = ["items", "events"];

/// A load by hand of what a `trove import` wrote: which of [`WRITTEN_TABLES`] it loads, and whether it
/// refreshes the statistics after.
#[derive(Debug, Clone, Copy)]
struct ByHand {
    tables: &'static [&'static str],
    analyze: bool,
}

/// The import's end state by `psql`: its items, its history and `ANALYZE items`.
const END_STATE: ByHand = ByHand { tables: &WRITTEN_TABLES, analyze: true };
/// The items alone: `psql \copy` of the same rows into Trove's own table as migrated, and nothing else (no
/// history, no statistics).
const ITEMS_ALONE: ByHand = ByHand { tables: &["items"], analyze: false };

/// The tables a `trove import` wrote in `from`, copied out with `\copy TO` into `dir`.
fn copy_out(dir: &Path, from: &str) {
    let out: Vec<String> =
        SETUP_TABLES.iter().chain(&WRITTEN_TABLES).map(|t| format!("\\copy {t} TO '{}'", copied(dir, t))).collect();
    assert!(psql(from, false, &out).status().unwrap().success());
}

fn copied(dir: &Path, table: &str) -> String {
    dir.join(format!("{table}.copy")).to_string_lossy().into_owned()
}

/// The rows [`copy_out`] wrote, loaded by hand into a fresh, migrated database: the household and places
/// untimed, then timed, in one transaction, `\copy` of `load`'s tables (the items with their search vectors, as
/// the import sends them) into the tables as migrated (every index, key and trigger in place), and `ANALYZE
/// items` when `load` says so.
fn same_rows_by_hand(rt: &tokio::runtime::Runtime, dir: &Path, load: ByHand) -> Run {
    let url = rt.block_on(trove_db::testing::fresh_postgres_url()).unwrap();
    assert!(trove(&url, dir, &["migrate"]).status().unwrap().success());
    let setup: Vec<String> = SETUP_TABLES.iter().map(|t| format!("\\copy {t} FROM '{}'", copied(dir, t))).collect();
    assert!(psql(&url, true, &setup).status().unwrap().success());
    let mut statements: Vec<String> =
        load.tables.iter().map(|t| format!("\\copy {t} FROM '{}'", copied(dir, t))).collect();
    if load.analyze {
        statements.push("ANALYZE items".to_owned());
    }
    let run = measured(psql(&url, true, &statements));
    rt.block_on(trove_db::testing::discard(&url)).unwrap();
    run
}

fn postgres(rt: &tokio::runtime::Runtime, dir: &Path, file: &Path, header: &[String]) {
    let (mut ours, mut theirs, mut end_state, mut items_alone) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for _ in 0..RUNS {
        let url = rt.block_on(trove_db::testing::fresh_postgres_url()).unwrap();
        let mut psql = Command::new("psql");
        psql.args([url.as_str(), "-q", "-v", "ON_ERROR_STOP=1", "-c", &scratch_table(header)]);
        assert!(psql.status().unwrap().success());
        let mut copy = Command::new("psql");
        let load = format!("\\copy scratch FROM '{}' WITH (FORMAT csv, HEADER true)", file.display());
        copy.args([url.as_str(), "-q", "-v", "ON_ERROR_STOP=1", "-c", &load]);
        theirs.push(measured(copy));
        assert!(trove(&url, dir, &["migrate"]).status().unwrap().success());
        ours.push(measured(trove(&url, dir, &["import", &file.to_string_lossy(), "--household", "bench"])));
        copy_out(dir, &url);
        rt.block_on(trove_db::testing::discard(&url)).unwrap();
        // Interleaved, so the machine's state weighs on each the same.
        items_alone.push(same_rows_by_hand(rt, dir, ITEMS_ALONE));
        end_state.push(same_rows_by_hand(rt, dir, END_STATE));
        for t in SETUP_TABLES.iter().chain(&WRITTEN_TABLES) {
            let _ = std::fs::remove_file(copied(dir, t));
        }
    }
    let (ours_wall, _) = median(ours.clone());
    report("PostgreSQL", "`psql \\copy` into a scratch table", ours, theirs);
    for (what, runs) in [
        ("the same rows by `psql \\copy` into the migrated `items`, nothing else", items_alone),
        ("the same rows and their history by `psql \\copy` into the migrated schema, with `ANALYZE`", end_state),
    ] {
        let (hand, hand_peak) = median(runs);
        println!("| PostgreSQL | {what} | {hand:.2?} | {:.1} MB |", hand_peak as f64 / 1024.0);
        println!("ratio to it: {:.2}x", ours_wall.as_secs_f64() / hand.as_secs_f64());
    }
}

fn sqlite(rt: &tokio::runtime::Runtime, dir: &Path, file: &Path, header: &[String]) {
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    for _ in 0..RUNS {
        let url = trove_db::testing::fresh_sqlite_url();
        let path = url.trim_start_matches("sqlite://").split('?').next().unwrap().to_owned();
        assert!(trove(&url, dir, &["migrate"]).status().unwrap().success());
        let mut load = Command::new("sqlite3");
        load.args([
            path.as_str(),
            "-cmd",
            &scratch_table(header),
            &format!(".import --csv --skip 1 {} scratch", file.display()),
        ]);
        theirs.push(measured(load));
        ours.push(measured(trove(&url, dir, &["import", &file.to_string_lossy(), "--household", "bench"])));
        rt.block_on(trove_db::testing::discard(&url)).unwrap();
    }
    report("SQLite", "`sqlite3 .import --csv` into a scratch table", ours, theirs);
}

/// One `trove import` of `file` per backend; exits with failure when a peak reaches [`PEAK_MAX_MB`].
fn check(rt: &tokio::runtime::Runtime, dir: &Path, file: &Path) {
    let mut over = Vec::new();
    for (backend, url) in [
        ("SQLite", trove_db::testing::fresh_sqlite_url()),
        ("PostgreSQL", rt.block_on(trove_db::testing::fresh_postgres_url()).unwrap()),
    ] {
        assert!(trove(&url, dir, &["migrate"]).status().unwrap().success());
        let run = measured(trove(&url, dir, &["import", &file.to_string_lossy(), "--household", "bench"]));
        rt.block_on(trove_db::testing::discard(&url)).unwrap();
        let mb = run.peak_kb / 1024;
        println!(
            "{backend}: `trove import` of {ROWS} rows in {:.2?}, peak RSS {mb} MB (bound {PEAK_MAX_MB} MB)",
            run.wall
        );
        if mb >= PEAK_MAX_MB {
            over.push(backend);
        }
    }
    if !over.is_empty() {
        eprintln!("`trove import` reached {PEAK_MAX_MB} MB of peak RSS on {}", over.join(" and "));
        std::process::exit(1);
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with('-')).collect();
    let wants = |part: &str| args.is_empty() || args.iter().any(|a| a == part);
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let dir = std::env::temp_dir().join(format!("trove_import_bench_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (file, header) = generated_inventory::sheet(&dir, ROWS);
    if args.iter().any(|a| a == "check") {
        check(&rt, &dir, &file);
        let _ = std::fs::remove_dir_all(&dir);
        return;
    }
    if wants("postgres") {
        postgres(&rt, &dir, &file, &header);
    }
    if wants("sqlite") {
        sqlite(&rt, &dir, &file, &header);
    }
    let _ = std::fs::remove_dir_all(&dir);
}
