//! `trove import` and `trove export`: the CSV use cases from the command line, with a progress bar on large
//! files, and with `--media DIR` the items' media beside the sheet.
//!
//! The media directory holds one file per medium, named `ITEMID-MEDIAID.ext` by the exported ids, and
//! `media.json`, the manifest of each file's kind and caption. What is written and attached, in which order and
//! never twice, is `trove_application::media_exchange`'s; this module only reads and writes the directory.

use crate::App;
use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use trove_application::exchange::Imported;
use trove_application::media_exchange::{
    Attached, FoundFile, MEDIA_MANIFEST, MediaExchange, PlannedFile, plan_import, read_manifest, write_manifest,
};
use trove_application::ports::HouseholdRepo;
use trove_application::recorder::Actor;
use trove_domain::item::Item;
use trove_domain::media;
use trove_domain::{HouseholdId, ItemId};
use trove_media::owner_only;

/// What copying media did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MediaCopied {
    /// Files written (export) or attached to items (import).
    pub files: u64,
    /// Their bytes.
    pub bytes: u64,
    /// On import: files already on their item (the same bytes), left as they are.
    pub present: u64,
    /// On import: files of rows that were not imported (gone items) or of no row of the sheet.
    pub skipped: u64,
}

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
    Ok(import_mapped(app, file, name, progress).await?.0)
}

/// [`import_file`], also answering which item each exported id became.
async fn import_mapped(
    app: &App,
    file: &Path,
    name: &str,
    progress: bool,
) -> anyhow::Result<(Imported, BTreeMap<ItemId, ItemId>)> {
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
    let mut imported = app
        .services
        .exchange
        .import_items_mapped(Actor::command_line(h), read.items)
        .await
        .context("writing the import")?;
    writing.finish_and_clear();
    imported.done.skipped = read.skipped;
    Ok((imported.done, imported.by_exported_id))
}

/// Exports every item of the household `name` as CSV to `out`, or to standard output; answers how many items.
///
/// # Errors
/// When the store fails or the file cannot be written.
pub async fn export_file(app: &App, out: Option<&Path>, name: &str) -> anyhow::Result<usize> {
    Ok(export_with_media(app, out, name, None).await?.0)
}

/// As [`export_file`], and with `media` every item's media copied into that directory (created if missing):
/// one file per medium named `ITEMID-MEDIAID.ext`, and [`MEDIA_MANIFEST`]. Answers how many items, and what
/// was copied. The sheet, the files and the directories made are the owner's only (0600 and 0700,
/// `trove_media::owner_only`), as the inventory they copy.
///
/// # Errors
/// When the store fails or a file cannot be written.
pub async fn export_with_media(
    app: &App,
    out: Option<&Path>,
    name: &str,
    media: Option<&Path>,
) -> anyhow::Result<(usize, MediaCopied)> {
    let h = household(app, name).await?;
    let items = app.services.exchange.all_items(h).await.context("reading the items")?;
    let bytes = app.services.exchange.sheet().write(&items).context("writing the csv")?;
    let copied = match media {
        Some(dir) => export_media(app, h, &items, dir).await?,
        None => MediaCopied::default(),
    };
    match out {
        Some(path) => owner_only::write(path, &bytes).await.with_context(|| format!("writing {}", path.display()))?,
        None => {
            use std::io::Write as _;
            std::io::stdout().write_all(&bytes).context("writing to standard output")?;
        }
    }
    Ok((items.len(), copied))
}

/// Copies the media of `items` into `dir`, with the manifest of their kinds and captions.
async fn export_media(app: &App, h: HouseholdId, items: &[Item], dir: &Path) -> anyhow::Result<MediaCopied> {
    owner_only::create_dir_all_async(dir).await.with_context(|| format!("creating {}", dir.display()))?;
    let exchange = MediaExchange::new(app.services.media.clone());
    let manifest = exchange.export_manifest(h, items).await.context("listing the items' media")?;
    let mut copied = MediaCopied::default();
    for entry in &manifest.media {
        let id = trove_domain::MediaId(entry.media_id.context("an exported medium names its id")?);
        let bytes = exchange.bytes(h, id).await.with_context(|| format!("reading media {}", id.0))?;
        let path = dir.join(&entry.file);
        owner_only::write(&path, &bytes).await.with_context(|| format!("writing {}", path.display()))?;
        copied.files += 1;
        copied.bytes += bytes.len() as u64;
    }
    let path = dir.join(MEDIA_MANIFEST);
    let text = write_manifest(&manifest).context("writing the media manifest")?;
    owner_only::write(&path, &text).await.with_context(|| format!("writing {}", path.display()))?;
    Ok(copied)
}

/// The media files of `dir` to attach, in order, each checked (an accepted type, within the size limit) and with
/// its kind and caption from the manifest, before anything is written.
///
/// # Errors
/// Naming the first file or manifest entry that is refused.
fn media_files(dir: &Path) -> anyhow::Result<Vec<PlannedFile>> {
    let manifest_path = dir.join(MEDIA_MANIFEST);
    let manifest = match std::fs::read(&manifest_path) {
        Ok(text) => Some(read_manifest(&text).map_err(|e| anyhow::anyhow!("{}: {e}", dir.display()))?),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e).with_context(|| format!("reading {}", manifest_path.display())),
    };
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        let entry = entry.with_context(|| format!("reading {}", dir.display()))?;
        let Some(name) = entry.file_name().to_str().map(str::to_owned) else { continue };
        let len = entry.metadata().with_context(|| format!("reading {}", entry.path().display()))?.len();
        found.push(FoundFile { name, len });
    }
    let planned = plan_import(manifest.as_ref(), &found).map_err(|e| anyhow::anyhow!("{}: {e}", dir.display()))?;
    // Each file's type is told by its bytes, before anything is written.
    for f in &planned {
        let path = dir.join(&f.name);
        let bytes = std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
        media::sniff(&bytes).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    }
    Ok(planned)
}

/// As [`import_file`], and with `media` the files of that directory (an export's `--media`) attached to the
/// items their rows became. The files are checked before anything is written; a file refused later (a picture
/// that does not decode) stops the copy, naming it, after the items were written.
///
/// # Errors
/// As [`import_file`]; naming a media file that is refused.
pub async fn import_with_media(
    app: &App,
    file: &Path,
    name: &str,
    progress: bool,
    media: Option<&Path>,
) -> anyhow::Result<(Imported, MediaCopied)> {
    let files = match media {
        Some(dir) => media_files(dir).map_err(|e| e.context("nothing was imported"))?,
        None => Vec::new(),
    };
    let (done, by_exported_id) = import_mapped(app, file, name, progress).await?;
    let Some(dir) = media else { return Ok((done, MediaCopied::default())) };
    let h = household(app, name).await?;
    let exchange = MediaExchange::new(app.services.media.clone());
    let mut import = exchange.import(Actor::command_line(h), by_exported_id);
    let mut copied = MediaCopied::default();
    for f in files {
        if import.target(&f).is_none() {
            copied.skipped += 1;
            continue;
        }
        let path = dir.join(&f.name);
        let bytes = tokio::fs::read(&path).await.with_context(|| format!("reading {}", path.display()))?;
        let size = bytes.len() as u64;
        match import.attach(&f, bytes).await {
            Ok(Attached::Added(kept)) => {
                copied.files += 1;
                copied.bytes += size;
                tracing::debug!(file = %path.display(), from = f.medium.0, to = kept.id.0, "media imported");
            }
            Ok(Attached::Present) => copied.present += 1,
            Ok(Attached::Skipped) => copied.skipped += 1,
            Err(e) => anyhow::bail!("{}: {e}; the items and the files before it were imported", path.display()),
        }
    }
    Ok((done, copied))
}
