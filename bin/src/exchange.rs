//! `trove import` and `trove export`: the CSV use cases from the command line, with a progress bar on large
//! files, and with `--media DIR` the items' media beside the sheet.
//!
//! The media directory holds one file per medium, named `ITEMID-MEDIAID.ext` by the exported ids
//! (`trove_application::exchange::media_file_name`), and `media.json`, which says each file's kind and caption
//! (a file without an entry comes back as a photo, or `other` for a PDF). Import reads the sheet, writes its
//! items, then attaches each file to the item its row became; a file already on that item (the same bytes) is
//! not added twice, so importing the same export again changes nothing.

use crate::App;
use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use trove_application::exchange::{Imported, media_file_name, read_media_file_name};
use trove_application::media::{Upload, content_hash};
use trove_application::ports::HouseholdRepo;
use trove_application::recorder::Actor;
use trove_domain::item::Item;
use trove_domain::media::{self, Caption, MAX_BYTES, MediaKind};
use trove_domain::{HouseholdId, ItemId, MediaId};
use trove_media::owner_only;

/// The file beside the media files that says each one's kind and caption.
pub const MEDIA_MANIFEST: &str = "media.json";

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
    let mut copied = MediaCopied::default();
    let mut manifest = Vec::new();
    for item in items {
        let media = app
            .services
            .media
            .of_item(h, item.id)
            .await
            .with_context(|| format!("listing the media of item {}", item.id.0))?;
        for medium in media {
            let (medium, bytes) =
                app.services.media.get(h, medium.id).await.with_context(|| format!("reading media {}", medium.id.0))?;
            let file = media_file_name(item.id, medium.id, medium.media_type);
            let path = dir.join(&file);
            owner_only::write(&path, &bytes).await.with_context(|| format!("writing {}", path.display()))?;
            copied.files += 1;
            copied.bytes += bytes.len() as u64;
            manifest.push(json!({
                "file": file,
                "item_id": item.id.0,
                "media_id": medium.id.0,
                "kind": medium.kind.as_str(),
                "media_type": medium.media_type.mime(),
                "caption": medium.caption.as_ref().map(Caption::as_str),
                "sha256": medium.sha256.as_str(),
                "created_at": medium.created_at.to_rfc3339(),
            }));
        }
    }
    let path = dir.join(MEDIA_MANIFEST);
    let text = serde_json::to_vec_pretty(&json!({ "media": manifest })).context("writing the media manifest")?;
    owner_only::write(&path, &text).await.with_context(|| format!("writing {}", path.display()))?;
    Ok(copied)
}

/// A media file found beside a sheet, checked before anything is written.
struct MediaFile {
    path: PathBuf,
    item: ItemId,
    medium: MediaId,
    kind: Option<MediaKind>,
    caption: Option<Caption>,
}

/// The media files of `dir` in the order they were kept (by medium id, so an item's cover stays its cover),
/// each checked (an accepted type, within the size limit) and with its kind and caption from the manifest.
///
/// # Errors
/// Naming the first file or manifest entry that is refused.
fn media_files(dir: &Path) -> anyhow::Result<Vec<MediaFile>> {
    let manifest = dir.join(MEDIA_MANIFEST);
    let described: HashMap<String, (Option<MediaKind>, Option<Caption>)> = match std::fs::read(&manifest) {
        Ok(text) => {
            let value: Value =
                serde_json::from_slice(&text).with_context(|| format!("reading {}", manifest.display()))?;
            let entries =
                value["media"].as_array().with_context(|| format!("{}: no \"media\" list", manifest.display()))?;
            entries
                .iter()
                .map(|e| {
                    let file = e["file"]
                        .as_str()
                        .with_context(|| format!("{}: an entry without \"file\"", manifest.display()))?;
                    let kind = e["kind"].as_str().map(MediaKind::parse).transpose();
                    let caption = e["caption"].as_str().map(Caption::new).transpose().map(Option::flatten);
                    let refused = |err| anyhow::anyhow!("{}: {file}: {err}", manifest.display());
                    Ok((file.to_owned(), (kind.map_err(refused)?, caption.map_err(refused)?)))
                })
                .collect::<anyhow::Result<_>>()?
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => HashMap::new(),
        Err(e) => return Err(e).with_context(|| format!("reading {}", manifest.display())),
    };
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        let entry = entry.with_context(|| format!("reading {}", dir.display()))?;
        let name = entry.file_name();
        let Some((item, medium)) = name.to_str().and_then(read_media_file_name) else { continue };
        let path = entry.path();
        let len = entry.metadata().with_context(|| format!("reading {}", path.display()))?.len();
        if len > MAX_BYTES as u64 {
            anyhow::bail!("{}: {}", path.display(), media::MediaRefused::TooLarge { bytes: len as usize });
        }
        let bytes = std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
        media::sniff(&bytes).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        let (kind, caption) = described.get(name.to_str().unwrap_or_default()).cloned().unwrap_or_default();
        files.push(MediaFile { path, item, medium, kind, caption });
    }
    files.sort_by_key(|f| (f.medium, f.item));
    Ok(files)
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
    if media.is_none() {
        return Ok((done, MediaCopied::default()));
    }
    let h = household(app, name).await?;
    let mut copied = MediaCopied::default();
    // The hashes already on each item, read once per item, so a re-import adds nothing twice.
    let mut present: BTreeMap<ItemId, BTreeSet<String>> = BTreeMap::new();
    for f in files {
        let Some(&item) = by_exported_id.get(&f.item) else {
            copied.skipped += 1;
            continue;
        };
        let bytes = tokio::fs::read(&f.path).await.with_context(|| format!("reading {}", f.path.display()))?;
        let hashes = match present.entry(item) {
            std::collections::btree_map::Entry::Occupied(known) => known.into_mut(),
            std::collections::btree_map::Entry::Vacant(unknown) => {
                let kept = app
                    .services
                    .media
                    .of_item(h, item)
                    .await
                    .with_context(|| format!("listing the media of item {}", item.0))?;
                unknown.insert(kept.iter().map(|m| m.sha256.as_str().to_owned()).collect())
            }
        };
        if hashes.contains(content_hash(&bytes).as_str()) {
            copied.present += 1;
            continue;
        }
        let size = bytes.len() as u64;
        let kept = app
            .services
            .media
            .upload(Actor::command_line(h), Some(item), Upload { bytes, kind: f.kind, caption: f.caption })
            .await
            .map_err(|e| {
                anyhow::anyhow!("{}: {e}; the items and the files before it were imported", f.path.display())
            })?;
        hashes.insert(kept.sha256.as_str().to_owned());
        copied.files += 1;
        copied.bytes += size;
        tracing::debug!(file = %f.path.display(), from = f.medium.0, to = kept.id.0, "media imported");
    }
    Ok((done, copied))
}
