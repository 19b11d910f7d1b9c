//! `trove import` and `trove export`: the CSV use cases from the command line, with a progress bar on large
//! files.

use crate::App;
use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};
use std::path::Path;
use std::sync::Arc;
use trove_application::exchange::Imported;
use trove_application::ports::HouseholdRepo;
use trove_domain::HouseholdId;

/// Files with more rows than this show a progress bar.
const PROGRESS_FROM_ROWS: u64 = 5_000;

async fn household(app: &App, name: &str) -> anyhow::Result<HouseholdId> {
    let households: Arc<dyn HouseholdRepo> = app.store.clone();
    households.ensure_household(name).await.with_context(|| format!("opening household {name}"))
}

/// A bar over `len` rows, or a hidden one for small files and when `show` is off.
fn bar(len: u64, show: bool, message: &'static str) -> ProgressBar {
    if !show || len < PROGRESS_FROM_ROWS {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(len);
    if let Ok(style) = ProgressStyle::with_template("{msg} [{bar:40}] {pos}/{len} rows ({eta})") {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_message(message);
    bar
}

/// The lines of a file, counted a buffer at a time (for the progress bar's length).
fn count_lines(file: &Path) -> anyhow::Result<u64> {
    use std::io::Read as _;
    let mut source = std::fs::File::open(file).with_context(|| format!("reading {}", file.display()))?;
    let mut buffer = vec![0u8; 256 * 1024];
    let mut lines = 0u64;
    loop {
        let n = source.read(&mut buffer).with_context(|| format!("reading {}", file.display()))?;
        if n == 0 {
            return Ok(lines);
        }
        lines += buffer[..n].iter().filter(|b| **b == b'\n').count() as u64;
    }
}

/// Imports a CSV file into the household `name` (created on first use): every row is read first (the file a
/// buffer at a time, never whole), then written in one all-or-nothing store call. `progress` shows a bar on
/// stderr for large files.
///
/// # Errors
/// When the file cannot be read, a row is bad (naming its line; nothing is written) or the store fails.
pub async fn import_file(app: &App, file: &Path, name: &str, progress: bool) -> anyhow::Result<Imported> {
    let rows = if progress { count_lines(file)? } else { 0 };
    let h = household(app, name).await?;
    let reading = bar(rows, progress, "reading");
    let now = chrono::Utc::now();
    let source = std::fs::File::open(file).with_context(|| format!("reading {}", file.display()))?;
    let read = trove_csv::read_from(source, now, &mut |n| reading.set_position(n))
        .map_err(|e| anyhow::anyhow!("{}: {e}; nothing was imported", file.display()))?;
    reading.finish_and_clear();
    let writing = if progress && rows >= PROGRESS_FROM_ROWS {
        let s = ProgressBar::new_spinner();
        s.set_message(format!("writing {} items in one transaction", read.items.len()));
        s.enable_steady_tick(std::time::Duration::from_millis(120));
        s
    } else {
        ProgressBar::hidden()
    };
    let mut done = app.services.exchange.import_items(h, read.items).await.context("writing the import")?;
    writing.finish_and_clear();
    done.skipped = read.skipped;
    Ok(done)
}

/// Exports every item of the household `name` as CSV to `out`, or to standard output; answers how many items.
///
/// # Errors
/// When the store fails or the file cannot be written.
pub async fn export_file(app: &App, out: Option<&Path>, name: &str) -> anyhow::Result<usize> {
    let h = household(app, name).await?;
    let items = app.services.exchange.all_items(h).await.context("reading the items")?;
    let bytes = app.services.exchange.sheet().write(&items).context("writing the csv")?;
    match out {
        Some(path) => tokio::fs::write(path, &bytes).await.with_context(|| format!("writing {}", path.display()))?,
        None => {
            use std::io::Write as _;
            std::io::stdout().write_all(&bytes).context("writing to standard output")?;
        }
    }
    Ok(items.len())
}
