//! The items' media beside an exported sheet, and back: which files an export writes (one per medium, named by
//! the exported ids, [`media_file_name`]) with a typed [`MediaManifest`] of their kinds and captions, and which
//! files an import attaches, in which order, to the item each exported row became, never twice the same bytes on
//! one item. Where the files live (a directory, an archive, an upload) is the caller's: it hands the names, sizes
//! and bytes in, and writes what it is handed out.

use crate::exchange::{media_file_name, read_media_file_name};
use crate::media::{Media, MediaError, Upload, content_hash};
use crate::recorder::Actor;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use trove_domain::item::Item;
use trove_domain::media::{Caption, MAX_BYTES, MediaKind, MediaRefused, Medium};
use trove_domain::{HouseholdId, ItemId, MediaId, Timestamp};

/// The file beside the media files that says each one's kind and caption.
pub const MEDIA_MANIFEST: &str = "media.json";

/// What travels beside the media files: one entry per file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MediaManifest {
    pub media: Vec<ManifestEntry>,
}

/// One media file of an export: its name, the exported item and medium it was, and what it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManifestEntry {
    pub file: String,
    /// The exported item's id (the row's `id`) and the medium's; informative: the file's name says them too.
    #[serde(default)]
    pub item_id: Option<i64>,
    #[serde(default)]
    pub media_id: Option<i64>,
    /// `photo`, `receipt`, `manual` or `other`; without it a picture comes back as a photo, a PDF as `other`.
    #[serde(default)]
    pub kind: Option<String>,
    #[serde(default)]
    pub media_type: Option<String>,
    #[serde(default)]
    pub caption: Option<String>,
    #[serde(default)]
    pub sha256: Option<String>,
    #[serde(default)]
    pub created_at: Option<Timestamp>,
}

impl ManifestEntry {
    fn of(item: ItemId, m: &Medium) -> Self {
        ManifestEntry {
            file: media_file_name(item, m.id, m.media_type),
            item_id: Some(item.0),
            media_id: Some(m.id.0),
            kind: Some(m.kind.as_str().to_owned()),
            media_type: Some(m.media_type.mime().to_owned()),
            caption: m.caption.as_ref().map(|c| c.as_str().to_owned()),
            sha256: Some(m.sha256.as_str().to_owned()),
            created_at: Some(m.created_at),
        }
    }
}

/// Why a media folder is refused before anything is imported.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum FolderRefused {
    #[error("{MEDIA_MANIFEST}: {0}")]
    Manifest(String),
    #[error("{MEDIA_MANIFEST}: {file}: {reason}")]
    Entry { file: String, reason: MediaRefused },
    #[error("{file}: {reason}")]
    File { file: String, reason: MediaRefused },
}

/// A file found in a media folder: its name and size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundFile {
    pub name: String,
    pub len: u64,
}

/// A media file to attach: the exported item and medium it was, and its kind and caption from the manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedFile {
    pub name: String,
    pub item: ItemId,
    pub medium: MediaId,
    pub kind: Option<MediaKind>,
    pub caption: Option<Caption>,
}

/// Reads a manifest's text.
///
/// # Errors
/// [`FolderRefused::Manifest`] when it is not one.
pub fn read_manifest(text: &[u8]) -> Result<MediaManifest, FolderRefused> {
    serde_json::from_slice(text).map_err(|e| FolderRefused::Manifest(e.to_string()))
}

/// The manifest's text, as an export writes it.
///
/// # Errors
/// Never in practice (plain data); a writer error otherwise.
pub fn write_manifest(manifest: &MediaManifest) -> Result<Vec<u8>, serde_json::Error> {
    serde_json::to_vec_pretty(manifest)
}

/// Which of a folder's `files` to attach, in the order they were kept (by exported medium id, so an item's
/// first photo stays its cover), each with its kind and caption from `manifest` (when there is one); files of
/// any other name are left alone. Checked before anything is written: a manifest entry whose kind or caption is
/// refused, or a file over the size limit, refuses the folder.
///
/// # Errors
/// [`FolderRefused`] naming the first refused entry or file.
pub fn plan_import(manifest: Option<&MediaManifest>, files: &[FoundFile]) -> Result<Vec<PlannedFile>, FolderRefused> {
    let mut described: HashMap<&str, (Option<MediaKind>, Option<Caption>)> = HashMap::new();
    for e in manifest.map(|m| m.media.as_slice()).unwrap_or_default() {
        let refused = |reason| FolderRefused::Entry { file: e.file.clone(), reason };
        let kind = e.kind.as_deref().map(MediaKind::parse).transpose().map_err(refused)?;
        let caption = e.caption.as_deref().map(Caption::new).transpose().map_err(refused)?.flatten();
        described.insert(e.file.as_str(), (kind, caption));
    }
    let mut planned = Vec::new();
    for f in files {
        let Some((item, medium)) = read_media_file_name(&f.name) else { continue };
        if f.len > MAX_BYTES as u64 {
            let bytes = usize::try_from(f.len).unwrap_or(usize::MAX);
            return Err(FolderRefused::File { file: f.name.clone(), reason: MediaRefused::TooLarge { bytes } });
        }
        let (kind, caption) = described.get(f.name.as_str()).cloned().unwrap_or_default();
        planned.push(PlannedFile { name: f.name.clone(), item, medium, kind, caption });
    }
    planned.sort_by_key(|f| (f.medium, f.item));
    Ok(planned)
}

/// What attaching one file did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Attached {
    /// Kept on the item its row became.
    Added(Medium),
    /// That item has the same bytes already: nothing written.
    Present,
    /// Its row was not imported (a gone item), or it belongs to no row of the sheet.
    Skipped,
}

/// The media of an export and of an import.
#[derive(Debug, Clone)]
pub struct MediaExchange {
    media: Media,
}

impl MediaExchange {
    pub fn new(media: Media) -> Self {
        Self { media }
    }

    /// The manifest of every medium of `items`, in their order and each item's media in the order kept.
    ///
    /// # Errors
    /// When the store fails.
    pub async fn export_manifest(&self, household: HouseholdId, items: &[Item]) -> Result<MediaManifest, MediaError> {
        let mut media = Vec::new();
        for item in items {
            for m in self.media.of_item(household, item.id).await? {
                media.push(ManifestEntry::of(item.id, &m));
            }
        }
        Ok(MediaManifest { media })
    }

    /// The bytes of an exported medium (the entry's `media_id`).
    ///
    /// # Errors
    /// When the medium is gone or the store fails.
    pub async fn bytes(&self, household: HouseholdId, id: MediaId) -> Result<Vec<u8>, MediaError> {
        Ok(self.media.get(household, id).await?.1)
    }

    /// An import of media into `actor`'s household, after its sheet: `by_exported_id` says which item each
    /// exported id became.
    pub fn import(&self, actor: Actor, by_exported_id: BTreeMap<ItemId, ItemId>) -> MediaImport<'_> {
        MediaImport { media: &self.media, actor, by_exported_id, present: BTreeMap::new() }
    }
}

/// One import of media files, keeping the hashes already on each item it touched (read once per item).
pub struct MediaImport<'a> {
    media: &'a Media,
    actor: Actor,
    by_exported_id: BTreeMap<ItemId, ItemId>,
    present: BTreeMap<ItemId, BTreeSet<String>>,
}

impl MediaImport<'_> {
    /// The item a planned file goes to, if its row was imported.
    pub fn target(&self, file: &PlannedFile) -> Option<ItemId> {
        self.by_exported_id.get(&file.item).copied()
    }

    /// Attaches `bytes` (the planned file's) to the item its row became, unless that item has them already.
    ///
    /// # Errors
    /// The upload's refusal (a file that does not decode) or a store failure.
    pub async fn attach(&mut self, file: &PlannedFile, bytes: Vec<u8>) -> Result<Attached, MediaError> {
        let Some(item) = self.target(file) else { return Ok(Attached::Skipped) };
        let hashes = match self.present.entry(item) {
            std::collections::btree_map::Entry::Occupied(known) => known.into_mut(),
            std::collections::btree_map::Entry::Vacant(unknown) => {
                let kept = self.media.of_item(self.actor.household, item).await?;
                unknown.insert(kept.iter().map(|m| m.sha256.as_str().to_owned()).collect())
            }
        };
        if hashes.contains(content_hash(&bytes).as_str()) {
            return Ok(Attached::Present);
        }
        let upload = Upload { bytes, kind: file.kind, caption: file.caption.clone() };
        let kept = self.media.upload(self.actor, Some(item), upload).await?;
        hashes.insert(kept.sha256.as_str().to_owned());
        Ok(Attached::Added(kept))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(name: &str, len: u64) -> FoundFile {
        FoundFile { name: name.into(), len }
    }

    fn entry(file: &str, kind: Option<&str>, caption: Option<&str>) -> ManifestEntry {
        ManifestEntry {
            file: file.into(),
            item_id: None,
            media_id: None,
            kind: kind.map(Into::into),
            media_type: None,
            caption: caption.map(Into::into),
            sha256: None,
            created_at: None,
        }
    }

    #[test]
    fn an_import_takes_the_media_files_in_the_order_kept_with_their_kinds_and_captions() {
        let manifest = MediaManifest {
            media: vec![entry("7-30.pdf", Some("receipt"), Some("From the shop")), entry("7-12.jpg", None, None)],
        };
        let files = [found("7-30.pdf", 100), found("items.csv", 10), found("9-5.png", 50), found("7-12.jpg", 80)];
        let planned = plan_import(Some(&manifest), &files).unwrap();
        type Shown<'a> = (&'a str, i64, i64, Option<MediaKind>, Option<&'a str>);
        let got: Vec<Shown> = planned
            .iter()
            .map(|p| (p.name.as_str(), p.item.0, p.medium.0, p.kind, p.caption.as_ref().map(Caption::as_str)))
            .collect();
        assert_eq!(
            got,
            [
                ("9-5.png", 9, 5, None, None),
                ("7-12.jpg", 7, 12, None, None),
                ("7-30.pdf", 7, 30, Some(MediaKind::Receipt), Some("From the shop")),
            ]
        );
        // Without a manifest the files still come, with no kind (a photo, or `other` for a PDF, on upload).
        assert_eq!(plan_import(None, &files).unwrap().len(), 3);
    }

    #[test]
    fn a_refused_entry_or_file_refuses_the_folder_naming_it() {
        let bad_kind = MediaManifest { media: vec![entry("7-30.pdf", Some("invoice"), None)] };
        let err = plan_import(Some(&bad_kind), &[]).unwrap_err();
        assert!(matches!(&err, FolderRefused::Entry { file, .. } if file == "7-30.pdf"), "{err}");
        let too_large = [found("7-30.pdf", MAX_BYTES as u64 + 1)];
        let err = plan_import(None, &too_large).unwrap_err();
        assert!(err.to_string().starts_with("7-30.pdf: "), "{err}");
        assert!(matches!(read_manifest(b"{\"media\": 3}"), Err(FolderRefused::Manifest(_))));
    }

    #[test]
    fn the_manifest_round_trips_and_reads_an_older_one_without_the_optional_members() {
        let manifest = MediaManifest { media: vec![entry("1-2.jpg", Some("photo"), Some("front"))] };
        assert_eq!(read_manifest(&write_manifest(&manifest).unwrap()).unwrap(), manifest);
        let old = read_manifest(br#"{"media": [{"file": "1-2.jpg", "caption": "front"}]}"#).unwrap();
        assert_eq!(old.media[0].caption.as_deref(), Some("front"));
        assert_eq!(old.media[0].kind, None);
    }
}
