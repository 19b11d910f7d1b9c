//! What the media store and the exports write is the owner's only (0600 files, 0700 directories) whatever the
//! umask, and `owner_only::tighten` takes the group's and others' bits away from what was written looser. Every
//! test here runs under the loosest umask (0): the modes come from Trove, not from the umask.

#![cfg(unix)]

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use trove_application::ports::MediaStore;
use trove_media::FileStore;
use trove_media::owner_only::{self, Tightened};

/// The loosest umask, for the whole process (every test here wants it).
fn loosest_umask() {
    rustix::process::umask(rustix::fs::Mode::empty());
}

fn mode(path: &Path) -> u32 {
    std::fs::symlink_metadata(path).unwrap().permissions().mode() & 0o7777
}

/// A fresh directory under the system's temporary directory, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> Self {
        let mut salt = [0u8; 6];
        getrandom::fill(&mut salt).unwrap();
        let dir = std::env::temp_dir().join(format!("trove-owner-only-{name}-{}", hex::encode(salt)));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[tokio::test]
async fn blobs_and_their_directories_are_the_owners_only_whatever_the_umask() {
    loosest_umask();
    let dir = TempDir::new("blobs");
    // The data directory does not exist yet: the store makes it, and everything under it.
    let data = dir.0.join("data");
    let store = FileStore::open(&data.join("media"));
    let bytes = b"a receipt".to_vec();
    let hash = trove_application::media::content_hash(&bytes);
    store.put(&hash, &bytes).await.unwrap();
    let blob = data.join("media").join(&hash.as_str()[..2]).join(hash.as_str());
    assert_eq!(std::fs::read(&blob).unwrap(), bytes);
    assert_eq!(mode(&blob), 0o600, "{}", blob.display());
    for made in [data.clone(), data.join("media"), data.join("media/tmp"), blob.parent().unwrap().to_path_buf()] {
        assert_eq!(mode(&made), 0o700, "{}", made.display());
    }
}

#[tokio::test]
async fn an_export_is_the_owners_only_even_over_a_looser_file() {
    loosest_umask();
    let dir = TempDir::new("export");
    let out = dir.0.join("made/on/demand");
    owner_only::create_dir_all(&out).unwrap();
    for made in [dir.0.join("made"), dir.0.join("made/on"), out.clone()] {
        assert_eq!(mode(&made), 0o700, "{}", made.display());
    }
    // The directory given exists already: it is left as it is.
    std::fs::set_permissions(&dir.0, std::fs::Permissions::from_mode(0o755)).unwrap();
    owner_only::create_dir_all(&dir.0).unwrap();
    assert_eq!(mode(&dir.0), 0o755);

    let fresh = out.join("items.csv");
    owner_only::write(&fresh, b"id,name\n").await.unwrap();
    assert_eq!(mode(&fresh), 0o600);
    let old = out.join("old.csv");
    std::fs::write(&old, b"a longer old sheet").unwrap();
    std::fs::set_permissions(&old, std::fs::Permissions::from_mode(0o644)).unwrap();
    owner_only::write(&old, b"new").await.unwrap();
    assert_eq!((mode(&old), std::fs::read(&old).unwrap()), (0o600, b"new".to_vec()));
}

#[test]
fn tightening_takes_the_group_and_others_away_and_says_what() {
    loosest_umask();
    let dir = TempDir::new("tighten");
    let root = dir.0.join("media");
    std::fs::create_dir_all(root.join("ab")).unwrap();
    std::fs::write(root.join("ab/loose"), b"x").unwrap();
    std::fs::write(root.join("ab/tight"), b"x").unwrap();
    std::fs::write(dir.0.join("beside"), b"x").unwrap();
    let set = |p: &Path, m: u32| std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap();
    set(&root, 0o755);
    set(&root.join("ab"), 0o775);
    set(&root.join("ab/loose"), 0o644);
    set(&root.join("ab/tight"), 0o600);
    set(&dir.0.join("beside"), 0o644);
    // A link is neither followed nor changed.
    std::os::unix::fs::symlink(dir.0.join("beside"), root.join("ab/link")).unwrap();

    let mut changed = owner_only::tighten(&root).unwrap();
    changed.sort_by(|a, b| a.path.cmp(&b.path));
    let t = |p: PathBuf, from, to| Tightened { path: p, from, to };
    assert_eq!(
        changed,
        vec![t(root.clone(), 0o755, 0o700), t(root.join("ab"), 0o775, 0o700), t(root.join("ab/loose"), 0o644, 0o600)]
    );
    assert_eq!((mode(&root), mode(&root.join("ab")), mode(&root.join("ab/loose"))), (0o700, 0o700, 0o600));
    assert_eq!(mode(&dir.0.join("beside")), 0o644, "what a link points to is not changed");
    assert!(owner_only::tighten(&root).unwrap().is_empty(), "a second walk changes nothing");
    assert!(owner_only::tighten(&dir.0.join("missing")).unwrap().is_empty());
}
