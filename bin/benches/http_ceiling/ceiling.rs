//! The ceilings `bench/run.sh` measures Trove's HTTP answers against, and the inventory file it imports.
//!
//! - `http_ceiling csv FILE N`: writes N generated items (`generated_inventory`) in our CSV format (what
//!   `trove export` writes), each in one of 100 places by its location text.
//! - `http_ceiling serve ADDR ITEMS HEALTH`: a bare poem server answering `GET /api/items` (any query) with the
//!   bytes of the file ITEMS and `GET /health` with those of HEALTH, both as `application/json; charset=utf-8`:
//!   the same bytes Trove sends for the same paths, without anything Trove does to find them.
//! - `http_ceiling row DATABASE_URL HOUSEHOLD ID N`: the raw read of one item row, N times on one SQLite
//!   connection of the kind the store uses (sqlx, its statement prepared once and kept), every column decoded;
//!   prints the median in microseconds.
//!
//! Built by `bench/run.sh` (`cargo build --release -p trove --features ceiling --bins`); not a measurement itself.

#[path = "../generated_inventory/mod.rs"]
mod generated_inventory;

use poem::http::header;
use poem::{EndpointExt, Response, Route, Server, get, handler, listener::TcpListener, web::Data};
use sea_orm::sqlx::{self, ConnectOptions as _, Row as _};
use std::sync::Arc;
use std::time::Instant;

fn usage() -> ! {
    eprintln!("usage: http_ceiling csv FILE N | serve ADDR ITEMS HEALTH | row DATABASE_URL HOUSEHOLD ID N");
    std::process::exit(2)
}

fn csv(file: &str, n: usize) {
    let at = generated_inventory::labelled_at();
    let items: Vec<_> = generated_inventory::new_items(n)
        .into_iter()
        .enumerate()
        .map(|(i, item)| {
            let mut item = generated_inventory::stored(item, i as i64 + 1);
            item.location = Some(format!("Room {} / Shelf {}", i % 10, (i / 10) % 10));
            item.updated_at = at;
            item
        })
        .collect();
    let bytes = trove_csv::write(&items).expect("write the CSV");
    std::fs::write(file, &bytes).expect("write the CSV file");
    println!("{n} rows, {:.1} MB of CSV in {file}", bytes.len() as f64 / 1e6);
}

/// The bytes answered for one path.
struct Answers {
    items: Vec<u8>,
    health: Vec<u8>,
}

fn json(bytes: &[u8]) -> Response {
    Response::builder().header(header::CONTENT_TYPE, "application/json; charset=utf-8").body(bytes.to_vec())
}

#[handler]
fn items_answer(answers: Data<&Arc<Answers>>) -> Response {
    json(&answers.items)
}

#[handler]
fn health_answer(answers: Data<&Arc<Answers>>) -> Response {
    json(&answers.health)
}

async fn serve(addr: &str, items_file: &str, health_file: &str) {
    let answers = Arc::new(Answers {
        items: std::fs::read(items_file).expect("read the items answer"),
        health: std::fs::read(health_file).expect("read the health answer"),
    });
    let app = Route::new().at("/api/items", get(items_answer)).at("/health", get(health_answer)).data(answers);
    Server::new(TcpListener::bind(addr)).run(app).await.expect("serve");
}

async fn row(url: &str, household: i64, id: i64, n: usize) {
    let options: sqlx::sqlite::SqliteConnectOptions = url.parse().expect("a sqlite:// URL");
    let mut conn = options.connect().await.expect("open the database");
    let mut times = Vec::with_capacity(n);
    let mut bytes = 0usize;
    for _ in 0..n {
        let t = Instant::now();
        let row = sqlx::query("SELECT * FROM items WHERE id = ?1 AND household_id = ?2")
            .bind(id)
            .bind(household)
            .fetch_one(&mut conn)
            .await
            .expect("read the row");
        // Every column copied out, as a store decoding the row would.
        for c in 0..row.len() {
            if let Ok(Some(text)) = row.try_get::<Option<String>, _>(c) {
                bytes += text.len();
            } else if let Ok(Some(number)) = row.try_get::<Option<i64>, _>(c) {
                bytes += usize::from(number != 0);
            }
        }
        times.push(t.elapsed());
    }
    times.sort();
    assert!(bytes > 0, "the row holds something");
    println!("{:.1}", times[n / 2].as_secs_f64() * 1e6);
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("a runtime");
    match args.as_slice() {
        ["csv", file, n] => csv(file, n.parse().unwrap_or_else(|_| usage())),
        ["serve", addr, items, health] => rt.block_on(serve(addr, items, health)),
        ["row", url, household, id, n] => rt.block_on(row(
            url,
            household.parse().unwrap_or_else(|_| usage()),
            id.parse().unwrap_or_else(|_| usage()),
            n.parse().unwrap_or_else(|_| usage()),
        )),
        _ => usage(),
    }
}
