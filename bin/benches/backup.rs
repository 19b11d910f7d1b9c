//! `trove backup` and `trove restore` of a store of 100,000 items and 1,000 media files, next to the databases'
//! own tools on the same store, side by side in one run: wall time and peak memory (`/usr/bin/time -v`).
//!
//! The store: the generated inventory (`bin/benches/generated_inventory`) imported with `trove import`, and 1,000
//! JPEG photos (640 x 480, about 100 kB each, noise so they do not compress) attached to the first 1,000 items
//! with `trove import --media`. Then, per backend:
//! - `trove backup --out FILE` next to the database's own dump (`sqlite3 DB ".backup FILE"`, `pg_dump -Fc`) plus
//!   `tar cf` of the media directory (what a backup by hand of the same store takes);
//! - `trove restore FILE` into a fresh database and media directory next to the database's own restore
//!   (`sqlite3 NEW ".restore FILE"`, `pg_restore -d NEW`) plus `tar xf` of the media.
//!
//! `cargo bench -p trove --bench backup` (a release build of `trove`; `sqlite3`, `pg_dump`, `pg_restore`, `tar`,
//! `/usr/bin/time`; PostgreSQL on 127.0.0.1:5432 or `TROVE_TEST_PG_URL`); `backup sqlite` or `backup postgres`
//! runs one backend. `backup check` is the memory bound as a check (`.ci/run` runs it): one backup and one
//! restore per backend, failing when a peak RSS reaches [`PEAK_MAX_MB`]. Figures go to BENCHMARKS.md.

#[path = "generated_inventory/mod.rs"]
mod generated_inventory;
#[path = "timed/mod.rs"]
mod timed;

use std::path::{Path, PathBuf};
use std::process::Command;
use timed::{Run, measured, median};

const ROWS: usize = 100_000;
const PHOTOS: usize = 1_000;
/// The bound on the peak resident memory of `trove backup` and of `trove restore`, on either backend.
const PEAK_MAX_MB: u64 = 200;

fn trove(url: &str, data: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_trove"));
    command.args(args).env("DATABASE_URL", url).env("TROVE_DATA_DIR", data).env_remove("MODEL_API_KEY");
    command
}

fn ok(mut command: Command) {
    let out = command.output().unwrap();
    assert!(out.status.success(), "{command:?}: {}", String::from_utf8_lossy(&out.stderr));
}

/// 1,000 photos named for the first 1,000 rows of the sheet (`ITEMID-MEDIAID.jpg`).
fn photos(dir: &Path) -> PathBuf {
    let media = dir.join("photos");
    std::fs::create_dir_all(&media).unwrap();
    let mut seed = 0x2545_f491_4f6c_dd1d_u64;
    for n in 1..=PHOTOS {
        let img = image::RgbImage::from_fn(640, 480, |_, _| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            image::Rgb([seed as u8, (seed >> 8) as u8, (seed >> 16) as u8])
        });
        let mut out = Vec::new();
        image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, 40).encode_image(&img).unwrap();
        std::fs::write(media.join(format!("{n}-{n}.jpg")), out).unwrap();
    }
    media
}

fn sqlite_path(url: &str) -> String {
    url.trim_start_matches("sqlite://").trim_start_matches("sqlite:").split('?').next().unwrap().to_owned()
}

/// A store of the sheet and the photos on `url`, its media under `data`.
fn filled(url: &str, data: &Path, sheet: &Path, photos: &Path) {
    ok(trove(url, data, &["migrate"]));
    ok(trove(url, data, &["import", &sheet.to_string_lossy(), "--media", &photos.to_string_lossy()]));
}

fn fresh(rt: &tokio::runtime::Runtime, postgres: bool) -> String {
    if postgres {
        rt.block_on(trove_db::testing::fresh_postgres_url()).unwrap()
    } else {
        trove_db::testing::fresh_sqlite_url()
    }
}

fn tar(args: &[&str]) -> Command {
    let mut c = Command::new("tar");
    c.args(args);
    c
}

/// The backup by hand: the database's own dump, then the media directory into a tar.
fn dump_by_hand(url: &str, postgres: bool, data: &Path, out: &Path) -> Vec<Run> {
    let db = if postgres {
        let mut c = Command::new("pg_dump");
        c.args(["-Fc", "-f", &out.with_extension("dump").to_string_lossy(), url]);
        measured(c)
    } else {
        let mut c = Command::new("sqlite3");
        c.args([&sqlite_path(url), &format!(".backup '{}'", out.with_extension("db").display())]);
        measured(c)
    };
    let media = measured(tar(&[
        "cf",
        &out.with_extension("media.tar").to_string_lossy(),
        "-C",
        &data.to_string_lossy(),
        "media",
    ]));
    vec![db, media]
}

fn restore_by_hand(rt: &tokio::runtime::Runtime, postgres: bool, out: &Path, into: &Path) -> Vec<Run> {
    let url = fresh(rt, postgres);
    let db = if postgres {
        let mut c = Command::new("pg_restore");
        c.args(["-d", &url, &out.with_extension("dump").to_string_lossy()]);
        measured(c)
    } else {
        let file = sqlite_path(&url);
        std::fs::create_dir_all(Path::new(&file).parent().unwrap()).unwrap();
        let mut c = Command::new("sqlite3");
        c.args([&file, &format!(".restore '{}'", out.with_extension("db").display())]);
        measured(c)
    };
    std::fs::create_dir_all(into).unwrap();
    let media =
        measured(tar(&["xf", &out.with_extension("media.tar").to_string_lossy(), "-C", &into.to_string_lossy()]));
    rt.block_on(trove_db::testing::discard(&url)).unwrap();
    vec![db, media]
}

/// Two steps one after the other, as one: their walls added, the larger peak.
fn together(runs: Vec<Run>) -> Run {
    Run { wall: runs.iter().map(|r| r.wall).sum(), peak_kb: runs.iter().map(|r| r.peak_kb).max().unwrap_or(0) }
}

fn row(backend: &str, what: &str, runs: Vec<Run>) -> std::time::Duration {
    let (wall, peak) = median(runs);
    println!("| {backend} | {what} | {wall:.2?} | {:.1} MB |", peak as f64 / 1024.0);
    wall
}

fn compare(rt: &tokio::runtime::Runtime, dir: &Path, postgres: bool, sheet: &Path, photos: &Path, runs: usize) {
    let backend = if postgres { "PostgreSQL" } else { "SQLite" };
    let url = fresh(rt, postgres);
    let data = dir.join(format!("data-{backend}"));
    filled(&url, &data, sheet, photos);
    let file = dir.join(format!("{backend}.tar"));
    let by_hand = dir.join(format!("{backend}-by-hand"));
    let (mut ours, mut theirs, mut ours_back, mut theirs_back) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for i in 0..runs {
        let _ = std::fs::remove_file(&file);
        ours.push(measured(trove(&url, &data, &["backup", "--out", &file.to_string_lossy()])));
        theirs.push(together(dump_by_hand(&url, postgres, &data, &by_hand)));
        let into = fresh(rt, postgres);
        let restored = dir.join(format!("restored-{backend}-{i}"));
        ours_back.push(measured(trove(&into, &restored, &["restore", &file.to_string_lossy()])));
        rt.block_on(trove_db::testing::discard(&into)).unwrap();
        let _ = std::fs::remove_dir_all(&restored);
        let hand_into = dir.join(format!("restored-by-hand-{backend}-{i}"));
        theirs_back.push(together(restore_by_hand(rt, postgres, &by_hand, &hand_into)));
        let _ = std::fs::remove_dir_all(&hand_into);
    }
    let size = std::fs::metadata(&file).unwrap().len();
    println!("{backend}: {ROWS} items, {PHOTOS} photos; the archive is {:.1} MB", size as f64 / 1e6);
    println!("| backend | what | wall (median of {runs}) | peak RSS (largest) |");
    println!("|---|---|---:|---:|");
    let dump = if postgres { "`pg_dump -Fc`" } else { "`sqlite3 .backup`" };
    let load = if postgres { "`pg_restore`" } else { "`sqlite3 .restore`" };
    let a = row(backend, "`trove backup`", ours);
    let b = row(backend, &format!("{dump} + `tar cf` of the media"), theirs);
    println!("ratio: {:.2}x", a.as_secs_f64() / b.as_secs_f64());
    let a = row(backend, "`trove restore`", ours_back);
    let b = row(backend, &format!("{load} + `tar xf` of the media"), theirs_back);
    println!("ratio: {:.2}x", a.as_secs_f64() / b.as_secs_f64());
    rt.block_on(trove_db::testing::discard(&url)).unwrap();
}

/// One backup and one restore per backend; exits with failure when a peak reaches [`PEAK_MAX_MB`].
fn check(rt: &tokio::runtime::Runtime, dir: &Path, sheet: &Path, photos: &Path) {
    let mut over = Vec::new();
    for postgres in [false, true] {
        let backend = if postgres { "PostgreSQL" } else { "SQLite" };
        let url = fresh(rt, postgres);
        let data = dir.join(format!("check-{backend}"));
        filled(&url, &data, sheet, photos);
        let file = dir.join(format!("check-{backend}.tar"));
        let made = measured(trove(&url, &data, &["backup", "--out", &file.to_string_lossy()]));
        let into = fresh(rt, postgres);
        let back = measured(trove(
            &into,
            &dir.join(format!("check-restored-{backend}")),
            &["restore", &file.to_string_lossy()],
        ));
        for (what, run) in [("backup", made), ("restore", back)] {
            let mb = run.peak_kb / 1024;
            println!(
                "{backend}: `trove {what}` of {ROWS} items and {PHOTOS} photos in {:.2?}, peak RSS {mb} MB (bound {PEAK_MAX_MB} MB)",
                run.wall
            );
            if mb >= PEAK_MAX_MB {
                over.push(format!("{what} on {backend}"));
            }
        }
        rt.block_on(trove_db::testing::discard(&url)).unwrap();
        rt.block_on(trove_db::testing::discard(&into)).unwrap();
    }
    if !over.is_empty() {
        eprintln!("reached {PEAK_MAX_MB} MB of peak RSS: {}", over.join(", "));
        std::process::exit(1);
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with("--")).collect();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let dir = std::env::temp_dir().join(format!("trove-bench-backup-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (sheet, _) = generated_inventory::sheet(&dir, ROWS);
    let photos = photos(&dir);
    let runs: usize = std::env::var("RUNS").ok().and_then(|r| r.parse().ok()).unwrap_or(3);
    match args.first().map(String::as_str) {
        Some("check") => check(&rt, &dir, &sheet, &photos),
        Some("sqlite") => compare(&rt, &dir, false, &sheet, &photos, runs),
        Some("postgres") => compare(&rt, &dir, true, &sheet, &photos, runs),
        _ => {
            compare(&rt, &dir, false, &sheet, &photos, runs);
            compare(&rt, &dir, true, &sheet, &photos, runs);
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
