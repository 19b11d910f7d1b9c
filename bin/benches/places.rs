//! Places and labels benchmarks.
//!
//! 1. The items within a place (`GET /api/items?place=ID`, within, a page of 50: what the route calls,
//!    `Inventory::list`, on a real store) at 100,000 items in a tree of 1,000 places, on SQLite and PostgreSQL,
//!    next to the same listing written by hand in SQL (a recursive CTE for the places, then the count and the page
//!    of rows with their covers), run over the same connection pool kind (sea-orm's) on the same database.
//! 2. The label PDF of 240 items (ten A4 sheets): the ids resolved through the store, then the PDF made.
//!
//! `cargo bench -p trove --bench places` (a release build; PostgreSQL on 127.0.0.1:5432 with trust auth, or
//! `TROVE_TEST_PG` as for the tests). `places sqlite`, `places postgres` or `places labels` runs one part.
//! Figures go to BENCHMARKS.md and docs/perf/places-and-labels.md.

#[path = "generated_inventory/mod.rs"]
mod generated_inventory;

use sea_orm::{ConnectionTrait, Database, DatabaseConnection, Statement};
use std::sync::Arc;
use std::time::{Duration, Instant};
use trove_application::items::Inventory;
use trove_application::labels::Labels;
use trove_application::ports::{Clock, HouseholdRepo, InventoryRepo, ItemQuery, LabelLayout, PlaceFilter, PlaceRepo};
use trove_db::Store;
use trove_domain::label::PublicUrl;
use trove_domain::place::{NewPlace, PlaceName};
use trove_domain::{HouseholdId, ItemId, PlaceId};

const ITEMS: usize = 100_000;
/// Rooms at the top, shelves in each room, boxes on each shelf: 10 + 90 + 900 = 1,000 places.
const ROOMS: usize = 10;
const SHELVES: usize = 9;
const BOXES: usize = 10;
/// Timed runs of each label PDF.
const LABEL_RUNS: usize = 30;

/// Timed runs of each listing; `PLACES_RUNS` sets another count (a profile wants more).
fn runs() -> usize {
    std::env::var("PLACES_RUNS").ok().and_then(|n| n.parse().ok()).unwrap_or(200)
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

/// Builds the tree; answers (rooms, shelves, boxes) by level.
async fn tree(places: &dyn PlaceRepo, h: HouseholdId) -> (Vec<PlaceId>, Vec<PlaceId>, Vec<PlaceId>) {
    let at = &trove_domain::history::Recording::new(chrono::Utc::now(), None, trove_domain::history::Action::Create);
    let new = |name: String, parent| NewPlace { name: PlaceName::new(&name).unwrap(), parent_id: parent, note: None };
    let (mut rooms, mut shelves, mut boxes) = (Vec::new(), Vec::new(), Vec::new());
    for r in 0..ROOMS {
        let room = places.insert(h, new(format!("Room {r}"), None), at).await.unwrap().id;
        rooms.push(room);
        for s in 0..SHELVES {
            let shelf = places.insert(h, new(format!("Shelf {s}"), Some(room)), at).await.unwrap().id;
            shelves.push(shelf);
            for b in 0..BOXES {
                boxes.push(places.insert(h, new(format!("Box {b}"), Some(shelf)), at).await.unwrap().id);
            }
        }
    }
    (rooms, shelves, boxes)
}

/// The listing written by hand: the places within by a recursive CTE, the count, the page of rows with each
/// item's cover (its first photo), which the listing answers too.
fn by_hand(h: i64, place: i64, limit: u32) -> [String; 2] {
    let within = format!(
        "WITH RECURSIVE within(id) AS (SELECT id FROM places WHERE id = {place} AND household_id = {h} \
         UNION ALL SELECT places.id FROM places JOIN within ON places.parent_id = within.id)"
    );
    let filter = format!("household_id = {h} AND gone_reason IS NULL AND place_id IN (SELECT id FROM within)");
    [
        format!("{within} SELECT COUNT(*) FROM items WHERE {filter}"),
        format!(
            "{within} SELECT {COLUMNS}, (SELECT MIN(media.id) FROM media WHERE media.household_id = {h} \
             AND media.item_id = items.id AND media.kind = 'photo') AS cover \
             FROM items WHERE {filter} ORDER BY id LIMIT {}",
            limit + 1
        ),
    ]
}

/// The columns an item is answered with, in the order [`read_by_hand`] reads them (then the cover).
const COLUMNS: &str = "id, name, item_type, profile, condition, intent, availability, project_id, gone_reason, \
     gone_at, gone_note, measurements, faults, tests_done, accessories, components, place_id, created_at, \
     updated_at, version";

/// What a hand-written client does with the page's rows: every value read out, by position, into a value of
/// its own (the texts as strings, the times as times), through sea-orm's plain `QueryResult`. The rows are
/// only read: no JSON parsed, no rule checked.
type HandRow = (
    (i64, String, String, String, String, String, String),
    (Option<i64>, Option<String>, Option<chrono::DateTime<chrono::Utc>>, Option<String>),
    (String, String, String, String, String),
    (Option<i64>, chrono::DateTime<chrono::Utc>, chrono::DateTime<chrono::Utc>, i64, Option<i64>),
);

fn read_by_hand(row: &sea_orm::QueryResult) -> HandRow {
    let text = |n: usize| row.try_get_by_index::<String>(n).unwrap();
    let time = |n: usize| row.try_get_by_index::<chrono::DateTime<chrono::Utc>>(n).unwrap();
    let int = |n: usize| row.try_get_by_index::<Option<i64>>(n).unwrap();
    (
        (row.try_get_by_index(0).unwrap(), text(1), text(2), text(3), text(4), text(5), text(6)),
        (int(7), row.try_get_by_index(8).unwrap(), row.try_get_by_index(9).unwrap(), row.try_get_by_index(10).unwrap()),
        (text(11), text(12), text(13), text(14), text(15)),
        (int(16), time(17), time(18), row.try_get_by_index(19).unwrap(), int(20)),
    )
}

struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> trove_domain::Timestamp {
        chrono::Utc::now()
    }
}

async fn bench_listing(name: &str, url: &str) {
    let store = Arc::new(Store::connect(url).await.unwrap());
    store.migrate().await.unwrap();
    let h = HouseholdRepo::ensure_household(store.as_ref(), "bench").await.unwrap();
    let started = Instant::now();
    let (rooms, shelves, boxes) = tree(store.as_ref(), h).await;
    let all: Vec<PlaceId> = rooms.iter().chain(&shelves).chain(&boxes).copied().collect();
    let mut items = generated_inventory::new_items(ITEMS);
    for (n, item) in items.iter_mut().enumerate() {
        item.place_id = Some(all[n % all.len()]);
    }
    let at = generated_inventory::labelled_at();
    let mut batch = Vec::new();
    for item in items {
        batch.push(item);
        if batch.len() == 10_000 {
            InventoryRepo::import(
                store.as_ref(),
                h,
                std::mem::take(&mut batch),
                at,
                &|_: &trove_application::ports::ImportWritten| Vec::<trove_domain::history::Event>::new(),
            )
            .await
            .unwrap();
        }
    }
    println!("{name}: {ITEMS} items in {} places, written in {:.1?}", all.len(), started.elapsed());

    let inventory = Inventory::new(
        store.clone(),
        store.clone(),
        store.clone(),
        Arc::new(SystemClock),
        trove_application::recorder::Recorder::new(Arc::new(SystemClock)),
    );
    let raw: DatabaseConnection = Database::connect(url).await.unwrap();
    let backend = raw.get_database_backend();
    // Fresh statistics of every table, as autovacuum would have after a bulk load, on PostgreSQL (the import
    // refreshes those of `items`). SQLite's are the import's own (`Store::analyze_sqlite`): an `ANALYZE` here
    // would add the samples that the store leaves out.
    if backend == sea_orm::DbBackend::Postgres {
        raw.execute_unprepared("ANALYZE").await.unwrap();
    }
    println!(
        "| backend | place | items within | `Inventory::list` (median) | by hand: count and page (median) | ratio | \
         by hand: the page alone (median) | ratio to the page alone |"
    );
    println!("|---|---|---:|---:|---:|---:|---:|---:|");
    for (what, place) in
        [("a room (100 places)", rooms[3]), ("a shelf (11 places)", shelves[40]), ("a box", boxes[500])]
    {
        let query = ItemQuery { place: Some(PlaceFilter { place, within: true }), limit: 50, ..ItemQuery::default() };
        let page = inventory.list(h, &query).await.unwrap();
        let [count, rows] = by_hand(h.0, place.0, 50);
        // The three interleaved, run after run, so that a slower stretch of the machine falls on all of them.
        let (mut ours, mut hand, mut alone) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..runs() {
            let t = Instant::now();
            let page = inventory.list(h, &query).await.unwrap();
            ours.push(t.elapsed());
            assert_eq!(page.items.len(), 50);

            let t = Instant::now();
            let total = raw.query_one_raw(Statement::from_string(backend, count.clone())).await.unwrap().unwrap();
            let counted = raw.query_all_raw(Statement::from_string(backend, rows.clone())).await.unwrap();
            let read: Vec<HandRow> = counted.iter().map(read_by_hand).collect();
            hand.push(t.elapsed());
            assert_eq!(read[0].0.0, page.items[0].id.0);
            assert_eq!(total.try_get_by_index::<i64>(0).unwrap() as u64, page.total);
            assert_eq!(counted.len(), 51.min(page.total as usize));

            let t = Instant::now();
            let paged = raw.query_all_raw(Statement::from_string(backend, rows.clone())).await.unwrap();
            let read: Vec<HandRow> = paged.iter().map(read_by_hand).collect();
            alone.push(t.elapsed());
            assert_eq!(read.len(), paged.len());
            assert_eq!(paged.len(), 51.min(page.total as usize));
        }
        let (ours, hand, alone) = (median(ours), median(hand), median(alone));
        println!(
            "| {name} | {what} | {} | {:.2?} | {:.2?} | {:.2}x | {:.2?} | {:.2}x |",
            page.total,
            ours,
            hand,
            ours.as_secs_f64() / hand.as_secs_f64(),
            alone,
            ours.as_secs_f64() / alone.as_secs_f64()
        );
    }
}

async fn bench_labels() {
    let url = trove_db::testing::fresh_sqlite_url();
    let store = Arc::new(Store::connect(&url).await.unwrap());
    store.migrate().await.unwrap();
    let h = HouseholdRepo::ensure_household(store.as_ref(), "bench").await.unwrap();
    let ids = InventoryRepo::import(
        store.as_ref(),
        h,
        generated_inventory::new_items(240),
        chrono::Utc::now(),
        &|_: &trove_application::ports::ImportWritten| Vec::<trove_domain::history::Event>::new(),
    )
    .await
    .unwrap()
    .ids;
    let labels = Labels::new(
        store.clone(),
        store.clone(),
        Arc::new(trove_labels::PdfLabels::new()),
        Arc::new(trove_labels::QrReader::new()),
        PublicUrl::new("http://192.168.1.20:8080").unwrap(),
        trove_application::jobs::Jobs::for_cores(),
    );
    let ids: Vec<ItemId> = ids.into_iter().collect();
    println!("| labels | layout | pages | PDF size | resolve (median) | PDF (median) | total (median) |");
    println!("|---:|---|---:|---:|---:|---:|---:|");
    for (layout, name) in [(LabelLayout::Sheet, "sheet"), (LabelLayout::Roll, "roll")] {
        let (mut resolve, mut make, mut total) = (Vec::new(), Vec::new(), Vec::new());
        let mut size = 0;
        for _ in 0..LABEL_RUNS {
            let t = Instant::now();
            let set = labels.labels(h, &ids, &[]).await.unwrap();
            let resolved = t.elapsed();
            let pdf = labels.pdf(set, layout).await.unwrap();
            let all = t.elapsed();
            size = pdf.len();
            resolve.push(resolved);
            make.push(all - resolved);
            total.push(all);
        }
        let pages = match layout {
            LabelLayout::Sheet => ids.len().div_ceil(21),
            LabelLayout::Roll => ids.len(),
        };
        println!(
            "| {} | {name} | {pages} | {} KB | {:.2?} | {:.2?} | {:.2?} |",
            ids.len(),
            size / 1000,
            median(resolve),
            median(make),
            median(total)
        );
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with('-')).collect();
    let wants = |part: &str| args.is_empty() || args.iter().any(|a| a == part);
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    if wants("sqlite") {
        rt.block_on(bench_listing("SQLite", &trove_db::testing::fresh_sqlite_url()));
    }
    if wants("postgres") {
        let url = rt.block_on(trove_db::testing::fresh_postgres_url()).unwrap();
        rt.block_on(bench_listing("PostgreSQL", &url));
    }
    if wants("labels") {
        rt.block_on(bench_labels());
    }
}
