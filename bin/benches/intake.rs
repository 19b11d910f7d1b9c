//! Intake benchmarks: matching one candidate against 100,000 items (the index built once, the query timed),
//! and importing 100,000 CSV rows into SQLite (read and written, all or nothing).
//!
//! `cargo bench -p trove --bench intake` (a release build). Figures go to BENCHMARKS.md and docs/perf/intake.md.

use std::collections::HashMap;
use std::time::{Duration, Instant};
use trove_domain::ItemId;
use trove_domain::item::{Condition, Intent, Item, ItemName, ItemType, Measurement, MeasurementSource, NewItem};
use trove_domain::matching::{DEFAULT_LIMIT, MatchIndex, Probe};

const ITEMS: usize = 100_000;

const BRANDS: [&str; 16] = [
    "Anker",
    "Dell",
    "Lenovo",
    "Samsung",
    "Raspberry",
    "Korad",
    "Ikea",
    "Bosch",
    "Makita",
    "Sony",
    "Logitech",
    "Netgear",
    "TP-Link",
    "Seagate",
    "Philips",
    "Hakko",
];
const KINDS: [(&str, &str); 12] = [
    ("power bank", "power_bank"),
    ("laptop charger", "power_supply"),
    ("laptop", "laptop"),
    ("SSD", "hard_drive"),
    ("single board computer", "single_board_computer"),
    ("bench supply", "power_supply"),
    ("desk lamp", "lamp"),
    ("cordless drill", "drill"),
    ("headphones", "headphones"),
    ("wireless mouse", "mouse"),
    ("network switch", "network_switch"),
    ("LED strip", "led_strip"),
];
const WORDS: [&str; 12] =
    ["black", "white", "spare", "old", "boxed", "USB-C", "mini", "pro", "slim", "v2", "portable", "compact"];

/// A deterministic mix of realistic items: brand, kind, a model number, a colour word, a serial.
fn items() -> Vec<Item> {
    let at = chrono::Utc::now();
    (0..ITEMS)
        .map(|n| {
            let brand = BRANDS[n % BRANDS.len()];
            let (kind, item_type) = KINDS[(n / 7) % KINDS.len()];
            let word = WORDS[(n / 3) % WORDS.len()];
            let model = format!("{}{}", &brand[..2].to_uppercase(), 1000 + n % 4999);
            let name = ItemName::new(&format!("{brand} {kind} {word}")).unwrap();
            let profile = format!("{brand} {model}, {} W, serial SN{n:08}", 5 + n % 200);
            let mut new = NewItem::new(name, ItemType::new(item_type).unwrap(), profile, Condition::Good, Intent::Keep);
            new.measurements =
                vec![Measurement::new("power", (5 + n % 200) as f64, "W", at, MeasurementSource::Manual).unwrap()];
            new.stored(ItemId(n as i64 + 1), at)
        })
        .collect()
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn bench_matching() {
    let items = items();
    let started = Instant::now();
    let index = MatchIndex::build(&items);
    let built = started.elapsed();

    let probes: Vec<(&str, Probe<'static>)> = vec![
        ("name only", Probe { name: "Anker power bank black", item_type: Some("power_bank"), ..Probe::default() }),
        (
            "name and profile",
            Probe {
                name: "Dell laptop charger slim",
                profile: "Dell DE1234, 65 W",
                item_type: Some("power_supply"),
                ..Probe::default()
            },
        ),
        (
            "brand and model",
            Probe { name: "Charger", brand: Some("Lenovo"), model: Some("LE2042"), ..Probe::default() },
        ),
        ("serial", Probe { name: "Something", serial: Some("SN00054321"), ..Probe::default() }),
        (
            "everything",
            Probe {
                name: "Samsung SSD boxed",
                profile: "Samsung SA3003, 500 GB",
                item_type: Some("hard_drive"),
                brand: Some("Samsung"),
                model: Some("SA3003"),
                serial: Some("SN00099999"),
            },
        ),
    ];
    println!("matching: {ITEMS} items, index built once in {built:.1?}");
    for (label, probe) in &probes {
        let mut times = Vec::with_capacity(200);
        let mut found = 0;
        for _ in 0..200 {
            let t = Instant::now();
            let got = index.best(probe, DEFAULT_LIMIT);
            times.push(t.elapsed());
            found = got.len();
            std::hint::black_box(got);
        }
        times.sort();
        println!(
            "  {label:<17} median {:>8.2?}  p95 {:>8.2?}  max {:>8.2?}  ({found} matches)",
            percentile(&times, 0.5),
            percentile(&times, 0.95),
            times[times.len() - 1]
        );
    }
}

async fn bench_import() {
    let url = trove_db::testing::fresh_sqlite_url();
    let vars: HashMap<String, String> = [("DATABASE_URL".to_owned(), url)].into_iter().collect();
    let config = trove::Config::from_vars(|k| vars.get(k).cloned()).unwrap();
    let app = trove::build(&config).await.unwrap();
    let sheet = trove_csv::write(&items()).unwrap();
    let dir = std::env::temp_dir().join(format!("trove_bench_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("items.csv");
    std::fs::write(&file, &sheet).unwrap();
    println!("import: {ITEMS} rows, {:.1} MB of CSV, SQLite", sheet.len() as f64 / 1e6);

    let started = Instant::now();
    let read = trove_csv::read(&sheet, chrono::Utc::now(), &mut |_| {}).unwrap();
    let parsed = started.elapsed();
    let done = trove::exchange::import_file(&app, &file, "bench", false).await.unwrap();
    let total = started.elapsed();
    println!("  parse only        {parsed:.2?} ({} items)", read.items.len());
    println!(
        "  trove import      {:.2?} (file read, parsed, written in one transaction; {} rows)",
        total - parsed,
        done.rows
    );
    let again = Instant::now();
    let done = trove::exchange::import_file(&app, &file, "bench", false).await.unwrap();
    println!("  re-import         {:.2?} (every row updates its item; {} items)", again.elapsed(), done.items);
    let _ = std::fs::remove_dir_all(&dir);
}

fn main() {
    // `cargo bench` passes `--bench`; a filter argument picks one part.
    let filter: Option<String> = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let wants = |name: &str| filter.as_deref().is_none_or(|f| name.contains(f));
    if wants("matching") {
        bench_matching();
    }
    if wants("import") {
        let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
        rt.block_on(bench_import());
    }
}
