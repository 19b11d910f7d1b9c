//! The data directory (`TROVE_DATA_DIR`): the SQLite file and the media files, which are the owner's only
//! (0600 files, 0700 directories). What an older version wrote by the umask (0644, 0755), or a hand loosened,
//! is tightened at start.

use std::path::Path;
use trove_media::owner_only::{self, Tightened};

/// The entries of the data directory that are Trove's: the SQLite database with the files SQLite keeps beside
/// it, and the media files. Nothing else in the directory is touched (it may be one that holds other things).
const OWN_ENTRIES: [&str; 5] =
    ["trove.sqlite3", "trove.sqlite3-wal", "trove.sqlite3-shm", "trove.sqlite3-journal", "media"];

/// How many changed paths are logged one by one; the rest are counted.
const LOGGED_ONE_BY_ONE: usize = 20;

/// Takes the group's and others' permissions away from the data directory `dir` and from Trove's entries in it
/// ([`OWN_ENTRIES`], `media/` with everything under it), and logs what was changed. The directory itself is
/// left as it is when it is shared on purpose (sticky, as `/tmp`). A missing directory changes nothing. A
/// failure is logged, not fatal: the server starts with what could be changed. Answers what was changed.
pub async fn tighten(dir: &Path) -> Vec<Tightened> {
    let dir = dir.to_path_buf();
    let walked = tokio::task::spawn_blocking(move || tighten_blocking(&dir)).await;
    let (changed, failure) = match walked {
        Ok(done) => done,
        Err(e) => (Vec::new(), Some(format!("the walk of the data directory stopped: {e}"))),
    };
    for t in changed.iter().take(LOGGED_ONE_BY_ONE) {
        tracing::info!(path = %t.path.display(), from = format!("{:o}", t.from), to = format!("{:o}", t.to),
            "made owner-only");
    }
    if changed.len() > LOGGED_ONE_BY_ONE {
        tracing::info!(more = changed.len() - LOGGED_ONE_BY_ONE, "more paths made owner-only");
    }
    if let Some(failure) = failure {
        tracing::warn!(error = %failure, "the data directory could not all be made owner-only");
    }
    changed
}

fn tighten_blocking(dir: &Path) -> (Vec<Tightened>, Option<String>) {
    let mut changed = Vec::new();
    let mut failure = None;
    let shared = std::fs::symlink_metadata(dir).map(|m| is_sticky(&m)).unwrap_or(true);
    let own = OWN_ENTRIES.iter().map(|name| dir.join(name));
    for path in (!shared).then(|| dir.to_path_buf()).into_iter().chain(own) {
        // The directory itself is tightened alone: its other entries are not Trove's.
        let tightened = if path == dir {
            owner_only::tighten_alone(&path).map(|t| t.into_iter().collect())
        } else {
            owner_only::tighten(&path)
        };
        match tightened {
            Ok(t) => changed.extend(t),
            Err(e) => failure = Some(format!("{}: {e}", path.display())),
        }
    }
    (changed, failure)
}

/// Whether a directory is shared on purpose: sticky (`/tmp`), so each user keeps their own files in it.
fn is_sticky(meta: &std::fs::Metadata) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        meta.permissions().mode() & 0o1000 != 0
    }
    #[cfg(not(unix))]
    {
        let _ = meta;
        true
    }
}
