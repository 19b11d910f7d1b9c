//! The archive: the whole store in one file and back (`trove backup`, `trove backup verify`, `trove restore`).
//!
//! The archive is a tar file of, in this order: every media file a media row names (`media/<sha256>`, its name is
//! its content's hash), every table as JSON lines (`tables/NN-<table>.jsonl`, one row an object, in the order they
//! load), and `manifest.json` last: the format, the schema version, when and from which backend, and each part's
//! row count, size and SHA-256. A backup is written to `FILE.partial` beside `FILE`, flushed to disk, and renamed:
//! a backup killed part way leaves no file named `FILE`, and a `.partial` has no manifest, which `verify` and
//! `restore` refuse.
//!
//! A restore reads the archive twice: first it checks every part against the manifest (nothing is written if one
//! differs), then it stores the media files and loads the tables in one transaction, so a restore killed part way
//! leaves the store empty (media files without rows are swept by the server) or whole.

use anyhow::{Context as _, anyhow, bail, ensure};
use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};
use std::collections::{BTreeMap, HashSet};
use std::fs::File;
use std::io::{BufRead as _, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use trove_application::ports::{BackupRepo, DumpSink, LoadSource, Loaded, MediaStore};
use trove_domain::media::ContentHash;

/// What the manifest's `format` says.
pub const FORMAT: &str = "trove-backup";
/// The archive layout's version (not the schema's).
pub const FORMAT_VERSION: u32 = 1;
const MANIFEST: &str = "manifest.json";

/// One table in the archive.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TablePart {
    pub name: String,
    pub path: String,
    pub rows: u64,
    pub bytes: u64,
    pub sha256: String,
}

/// One media file in the archive (its path is `media/<sha256>`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MediaPart {
    pub sha256: String,
    pub bytes: u64,
}

/// What an archive holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    pub format: String,
    pub format_version: u32,
    /// The last migration of the store it was made from.
    pub schema: String,
    pub created_at: chrono::DateTime<chrono::Utc>,
    /// `sqlite` or `postgres`.
    pub backend: String,
    pub tables: Vec<TablePart>,
    pub media: Vec<MediaPart>,
    /// Files media rows name that the media store no longer had (their rows are kept).
    pub missing_media: Vec<String>,
}

impl Manifest {
    /// Rows in all.
    pub fn rows(&self) -> u64 {
        self.tables.iter().map(|t| t.rows).sum()
    }

    /// Media bytes in all.
    pub fn media_bytes(&self) -> u64 {
        self.media.iter().map(|m| m.bytes).sum()
    }
}

/// Writes each table to its own file in a work directory, hashing as it goes.
struct TableFiles {
    dir: PathBuf,
    open: Option<(TablePart, BufWriter<File>, Sha256)>,
    done: Vec<TablePart>,
}

impl TableFiles {
    fn close(&mut self) -> anyhow::Result<()> {
        if let Some((mut part, mut file, hash)) = self.open.take() {
            file.flush()?;
            part.sha256 = hex::encode(hash.finalize());
            self.done.push(part);
        }
        Ok(())
    }
}

impl DumpSink for TableFiles {
    fn table(&mut self, name: &str) -> anyhow::Result<()> {
        self.close()?;
        let path = format!("tables/{:02}-{name}.jsonl", self.done.len() + 1);
        let file = File::create(self.dir.join(path.replace('/', "_")))?;
        let part = TablePart { name: name.to_owned(), path, rows: 0, bytes: 0, sha256: String::new() };
        self.open = Some((part, BufWriter::new(file), Sha256::new()));
        Ok(())
    }

    fn row(&mut self, json: &[u8]) -> anyhow::Result<()> {
        let (part, file, hash) = self.open.as_mut().ok_or_else(|| anyhow!("a row before its table"))?;
        file.write_all(json)?;
        file.write_all(b"\n")?;
        hash.update(json);
        hash.update(b"\n");
        part.rows += 1;
        part.bytes += json.len() as u64 + 1;
        Ok(())
    }
}

fn header(size: u64) -> tar::Header {
    let mut h = tar::Header::new_ustar();
    h.set_size(size);
    h.set_mode(0o600);
    h.set_mtime(0);
    h
}

/// Writes a backup of `store` and `blobs` to `out`: see the module's documentation. Answers its manifest.
///
/// # Errors
/// When the store cannot be read or the archive cannot be written; `out` is then left as it was.
pub async fn backup(
    store: &dyn BackupRepo,
    backend: &str,
    blobs: &dyn MediaStore,
    out: &Path,
) -> anyhow::Result<Manifest> {
    let name =
        out.file_name().ok_or_else(|| anyhow!("{} names no file", out.display()))?.to_string_lossy().into_owned();
    let partial = out.with_file_name(format!("{name}.partial"));
    let work = out.with_file_name(format!(".{name}.parts-{}", std::process::id()));
    std::fs::create_dir_all(&work).with_context(|| format!("create {}", work.display()))?;
    let result = write_archive(store, backend, blobs, &work, &partial).await;
    let _ = std::fs::remove_dir_all(&work);
    match result {
        Ok(manifest) => {
            std::fs::rename(&partial, out)
                .with_context(|| format!("rename {} to {}", partial.display(), out.display()))?;
            if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
                // The rename itself reaches the disk.
                File::open(dir).and_then(|d| d.sync_all()).ok();
            }
            Ok(manifest)
        }
        Err(e) => {
            let _ = std::fs::remove_file(&partial);
            Err(e)
        }
    }
}

async fn write_archive(
    store: &dyn BackupRepo,
    backend: &str,
    blobs: &dyn MediaStore,
    work: &Path,
    partial: &Path,
) -> anyhow::Result<Manifest> {
    let created_at = chrono::Utc::now();
    let schema = store.schema_version().await?;
    let mut tables = TableFiles { dir: work.to_owned(), open: None, done: Vec::new() };
    let dumped = store.dump(&mut tables).await?;
    tables.close()?;
    for ((name, rows), part) in dumped.tables.iter().zip(&tables.done) {
        ensure!(name == &part.name && *rows == part.rows, "the dump of {name} does not match what was written");
    }

    // Owner only: an archive holds every password hash and secret of the store.
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let file = options.open(partial).with_context(|| format!("create {}", partial.display()))?;
    let mut archive = tar::Builder::new(BufWriter::with_capacity(1 << 20, file));
    let mut media = Vec::new();
    let mut missing = Vec::new();
    for hash in &dumped.blobs {
        let bytes = match blobs.get(hash).await {
            Ok(b) => b,
            Err(trove_application::RepoError::NotFound) => {
                tracing::warn!(
                    sha256 = hash.as_str(),
                    "a media file its row names is missing; the backup goes on without it"
                );
                missing.push(hash.as_str().to_owned());
                continue;
            }
            Err(e) => return Err(anyhow!("read media {}: {e}", hash.as_str())),
        };
        let sha = hex::encode(Sha256::digest(&bytes));
        ensure!(sha == hash.as_str(), "media file {} holds other bytes (SHA-256 {sha})", hash.as_str());
        archive.append_data(&mut header(bytes.len() as u64), format!("media/{sha}"), bytes.as_slice())?;
        media.push(MediaPart { sha256: sha, bytes: bytes.len() as u64 });
    }
    for part in &tables.done {
        let path = work.join(part.path.replace('/', "_"));
        let file = File::open(&path)?;
        archive.append_data(&mut header(part.bytes), &part.path, BufReader::new(file))?;
    }
    let manifest = Manifest {
        format: FORMAT.into(),
        format_version: FORMAT_VERSION,
        schema,
        created_at,
        backend: backend.into(),
        tables: tables.done,
        media,
        missing_media: missing,
    };
    let json = serde_json::to_vec_pretty(&manifest)?;
    archive.append_data(&mut header(json.len() as u64), MANIFEST, json.as_slice())?;
    let file = archive.into_inner()?.into_inner().map_err(|e| e.into_error())?;
    file.sync_all()?;
    Ok(manifest)
}

/// Hashes a reader to its end: its size, SHA-256, and how many lines it has.
fn digest(mut r: impl Read) -> anyhow::Result<(u64, String, u64)> {
    let mut hash = Sha256::new();
    let mut buf = vec![0; 1 << 16];
    let (mut size, mut lines) = (0u64, 0u64);
    loop {
        let n = r.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hash.update(&buf[..n]);
        size += n as u64;
        lines += buf[..n].iter().filter(|b| **b == b'\n').count() as u64;
    }
    Ok((size, hex::encode(hash.finalize()), lines))
}

/// Checks every part of the archive at `file` against its manifest, without restoring anything; answers the
/// manifest.
///
/// # Errors
/// Naming the first part that differs: a missing or unreadable manifest (a `.partial` has none), another format,
/// a part whose size, hash or row count is not the manifest's, a part missing, or one the manifest does not name.
pub fn verify(file: &Path) -> anyhow::Result<Manifest> {
    let reader = File::open(file).with_context(|| format!("open {}", file.display()))?;
    let mut archive = tar::Archive::new(BufReader::new(reader));
    let mut seen: BTreeMap<String, (u64, String, u64)> = BTreeMap::new();
    let mut manifest: Option<Manifest> = None;
    for entry in archive.entries().context("read the archive")? {
        let mut entry = entry.context("read the archive")?;
        let path = entry.path()?.to_string_lossy().into_owned();
        if path == MANIFEST {
            let mut json = Vec::new();
            entry.read_to_end(&mut json)?;
            manifest = Some(serde_json::from_slice(&json).context("the manifest is not a Trove backup manifest")?);
        } else {
            ensure!(manifest.is_none(), "{path} comes after the manifest");
            let d = digest(&mut entry).with_context(|| format!("read {path}"))?;
            seen.insert(path, d);
        }
    }
    let manifest = manifest.ok_or_else(|| {
        anyhow!(
            "{} has no manifest: it is not a whole Trove backup (a backup cut short, or another file)",
            file.display()
        )
    })?;
    ensure!(
        manifest.format == FORMAT && manifest.format_version == FORMAT_VERSION,
        "{} is a {:?} archive of version {}, not a {FORMAT} of version {FORMAT_VERSION}",
        file.display(),
        manifest.format,
        manifest.format_version
    );
    for t in &manifest.tables {
        let (size, sha, lines) =
            seen.remove(&t.path).ok_or_else(|| anyhow!("{} is missing from the archive", t.path))?;
        ensure!(size == t.bytes && sha == t.sha256, "{} differs from the manifest: it was changed or damaged", t.path);
        ensure!(lines == t.rows, "{} holds {lines} rows, the manifest says {}", t.path, t.rows);
    }
    for m in &manifest.media {
        let path = format!("media/{}", m.sha256);
        let (size, sha, _) = seen.remove(&path).ok_or_else(|| anyhow!("{path} is missing from the archive"))?;
        ensure!(size == m.bytes && sha == m.sha256, "{path} differs from the manifest: it was changed or damaged");
    }
    if let Some(extra) = seen.keys().next() {
        bail!("{extra} is in the archive but not in its manifest");
    }
    Ok(manifest)
}

/// The archive's tables, row by row, read on a thread of their own and handed over through a bounded channel.
struct ArchiveRows(std::sync::mpsc::Receiver<anyhow::Result<Loaded>>);

impl LoadSource for ArchiveRows {
    fn next(&mut self) -> anyhow::Result<Option<Loaded>> {
        match self.0.recv() {
            Ok(next) => next.map(Some),
            Err(_) => Ok(None),
        }
    }
}

fn read_tables(
    file: &Path,
    manifest: &Manifest,
    send: &std::sync::mpsc::SyncSender<anyhow::Result<Loaded>>,
) -> anyhow::Result<()> {
    let names: BTreeMap<&str, &str> = manifest.tables.iter().map(|t| (t.path.as_str(), t.name.as_str())).collect();
    let mut archive = tar::Archive::new(BufReader::new(File::open(file)?));
    for entry in archive.entries()? {
        let entry = entry?;
        let path = entry.path()?.to_string_lossy().into_owned();
        let Some(name) = names.get(path.as_str()) else { continue };
        send.send(Ok(Loaded::Table((*name).to_owned())))?;
        for line in BufReader::new(entry).split(b'\n') {
            send.send(Ok(Loaded::Row(line?)))?;
        }
    }
    Ok(())
}

/// What a restore did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Restored {
    pub manifest: Manifest,
    pub tables: Vec<(String, u64)>,
    pub media: u64,
}

/// Restores the archive at `file` into `store` and `blobs`, which must be empty: see the module's documentation.
///
/// # Errors
/// Before anything is written: the archive does not match its manifest ([`verify`]), it was made by a Trove of
/// another schema (a newer one: upgrade this one first; an older one: restore with that version, then upgrade),
/// or the store is not empty. Then a media file or a row that cannot be stored (the tables are then not loaded,
/// or loaded not at all).
pub async fn restore(store: &dyn BackupRepo, blobs: &dyn MediaStore, file: &Path) -> anyhow::Result<Restored> {
    let manifest = verify(file)?;
    let known = store.known_schemas();
    let current = store.schema_version().await?;
    if manifest.schema != current {
        if known.contains(&manifest.schema) {
            bail!(
                "the backup was made at schema {} and this store is at {current}: restore it with the Trove version that made it, then upgrade",
                manifest.schema
            );
        }
        bail!(
            "the backup was made by a newer Trove (schema {}, this one knows up to {current}): upgrade Trove first",
            manifest.schema
        );
    }
    ensure!(
        store.is_empty().await?,
        "the store is not empty: restore only into a new, empty database (and media store), so nothing is mixed or lost"
    );

    // The media files first: a restore killed after them leaves files no row names, which the server sweeps.
    let mut archive = tar::Archive::new(BufReader::new(File::open(file)?));
    let mut media = 0u64;
    let wanted: HashSet<&str> = manifest.media.iter().map(|m| m.sha256.as_str()).collect();
    for entry in archive.entries()? {
        let mut entry = entry?;
        let path = entry.path()?.to_string_lossy().into_owned();
        let Some(sha) = path.strip_prefix("media/").filter(|s| wanted.contains(s)) else { continue };
        let hash = ContentHash::parse(sha).ok_or_else(|| anyhow!("{path} is not named by a content hash"))?;
        let mut bytes = Vec::with_capacity(entry.size() as usize);
        entry.read_to_end(&mut bytes)?;
        ensure!(hex::encode(Sha256::digest(&bytes)) == sha, "{path} changed since it was checked");
        blobs.put(&hash, &bytes).await.map_err(|e| anyhow!("store media {sha}: {e}"))?;
        media += 1;
    }

    // Then every table, in one transaction.
    let (send, receive) = std::sync::mpsc::sync_channel(4096);
    let reader = {
        let (file, manifest) = (file.to_owned(), manifest.clone());
        std::thread::spawn(move || {
            if let Err(e) = read_tables(&file, &manifest, &send) {
                let _ = send.send(Err(e));
            }
        })
    };
    let loaded = store.load(&mut ArchiveRows(receive)).await;
    let _ = reader.join();
    let tables = loaded.map_err(|e| match e {
        trove_application::RepoError::Unexpected(e) => e.context("nothing was restored"),
        other => anyhow!("nothing was restored: {other}"),
    })?;
    for (t, (name, rows)) in manifest.tables.iter().zip(&tables) {
        ensure!(&t.name == name && t.rows == *rows, "{name}: {rows} rows loaded, the manifest says {}", t.rows);
    }
    Ok(Restored { manifest, tables, media })
}
