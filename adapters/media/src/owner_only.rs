//! Files and directories for the owner only: what Trove writes holds an inventory's photos, receipts and
//! exports, so it is created 0600 (files) and 0700 (directories) whatever the umask, and a data directory left
//! looser by an older version or by hand is tightened at start ([`tighten`]). Used by the file store and by the
//! binary (its exports and its data directory). Elsewhere than on Unix, the platform's defaults.

use std::io;
use std::path::{Path, PathBuf};

/// The mode of a file Trove writes: read and write by the owner only.
pub const FILE_MODE: u32 = 0o600;
/// The mode of a directory Trove makes: the owner only.
pub const DIR_MODE: u32 = 0o700;

/// Creates `dir` and its missing parents, each [`DIR_MODE`] whatever the umask. Directories that exist are
/// left as they are (one may be shared on purpose, such as `/tmp`).
///
/// # Errors
/// When a directory cannot be made (no space, no permission, a file in the way).
pub fn create_dir_all(dir: &Path) -> io::Result<()> {
    if dir.as_os_str().is_empty() || dir.is_dir() {
        return Ok(());
    }
    if let Some(parent) = dir.parent() {
        create_dir_all(parent)?;
    }
    let mut builder = std::fs::DirBuilder::new();
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, DIR_MODE);
    match builder.create(dir) {
        // The umask may have taken bits away: the owner keeps every one.
        Ok(()) => set_mode(dir, DIR_MODE),
        // Another writer made it meanwhile.
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists && dir.is_dir() => Ok(()),
        Err(e) => Err(e),
    }
}

/// [`create_dir_all`] on a blocking thread.
///
/// # Errors
/// As [`create_dir_all`].
pub async fn create_dir_all_async(dir: &Path) -> io::Result<()> {
    let dir = dir.to_path_buf();
    tokio::task::spawn_blocking(move || create_dir_all(&dir)).await.map_err(io::Error::other)?
}

/// Options that open a file for writing, created [`FILE_MODE`] (before the umask; [`ensure_file_mode`] after).
pub fn file_options() -> tokio::fs::OpenOptions {
    let mut options = tokio::fs::OpenOptions::new();
    options.write(true);
    #[cfg(unix)]
    options.mode(FILE_MODE);
    options
}

/// Gives an open file [`FILE_MODE`] exactly: the umask may have taken bits away, and a file that existed keeps
/// its mode when opened.
///
/// # Errors
/// When the mode cannot be changed.
pub async fn ensure_file_mode(file: &tokio::fs::File) -> io::Result<()> {
    #[cfg(unix)]
    file.set_permissions(std::os::unix::fs::PermissionsExt::from_mode(FILE_MODE)).await?;
    #[cfg(not(unix))]
    let _ = file;
    Ok(())
}

/// Writes `bytes` to `path` (replacing what it held), the file [`FILE_MODE`] whatever the umask and whatever
/// mode it had.
///
/// # Errors
/// When the file cannot be written.
pub async fn write(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut file = file_options().create(true).truncate(true).open(path).await?;
    ensure_file_mode(&file).await?;
    tokio::io::AsyncWriteExt::write_all(&mut file, bytes).await?;
    tokio::io::AsyncWriteExt::flush(&mut file).await
}

/// A mode that [`tighten`] changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tightened {
    pub path: PathBuf,
    /// The permission bits before (`0o644`).
    pub from: u32,
    /// The permission bits after (`0o600`).
    pub to: u32,
}

/// Takes the group's and others' permissions away from `path` and, when it is a directory, from everything
/// under it (`0644` becomes `0600`, `0755` becomes `0700`); the owner's bits stay. Symbolic links are neither
/// followed nor changed. Answers what was changed; a missing `path` changes nothing.
///
/// # Errors
/// When a directory cannot be listed or a mode cannot be changed; what was changed before stays changed.
pub fn tighten(path: &Path) -> io::Result<Vec<Tightened>> {
    let mut changed = Vec::new();
    tighten_into(path, &mut changed)?;
    Ok(changed)
}

fn tighten_into(path: &Path, changed: &mut Vec<Tightened>) -> io::Result<()> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    if meta.file_type().is_symlink() {
        return Ok(());
    }
    changed.extend(tighten_mode(path, &meta)?);
    if meta.is_dir() {
        for entry in std::fs::read_dir(path)? {
            tighten_into(&entry?.path(), changed)?;
        }
    }
    Ok(())
}

/// [`tighten`] of `path` alone, not of what a directory holds: for a directory whose other entries are not
/// Trove's.
///
/// # Errors
/// When `path` cannot be read or its mode cannot be changed.
pub fn tighten_alone(path: &Path) -> io::Result<Option<Tightened>> {
    tighten_mode(path, &std::fs::metadata(path)?)
}

fn tighten_mode(path: &Path, meta: &std::fs::Metadata) -> io::Result<Option<Tightened>> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let from = meta.permissions().mode() & 0o7777;
        let to = from & !0o077;
        if to != from {
            set_mode(path, to)?;
            return Ok(Some(Tightened { path: path.to_path_buf(), from, to }));
        }
    }
    #[cfg(not(unix))]
    let _ = (path, meta);
    Ok(None)
}

fn set_mode(path: &Path, mode: u32) -> io::Result<()> {
    #[cfg(unix)]
    std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(mode))?;
    #[cfg(not(unix))]
    let _ = (path, mode);
    Ok(())
}
