//! The media use cases over mocks of their ports: what is written, in which order, and what is refused before
//! anything is written.

use super::*;
use crate::ports::clock::MockClock;
use crate::ports::inventory::MockInventoryRepo;
use crate::ports::media::{MockMediaRepo, MockMediaStore, MockPictures, StoredBlob};
use mockall::Sequence;
use mockall::predicate::eq;
use std::collections::HashSet;
use trove_domain::history::ObjectKind;
use trove_domain::item::{Condition, Item};
use trove_domain::media::PixelSize;
use trove_domain::testing::now;

const H: HouseholdId = HouseholdId(2);
const A: Actor = Actor { household: H, member: Some(trove_domain::people::MemberId(3)) };
const ITEM: ItemId = ItemId(7);
const JPEG: &[u8] = b"\xFF\xD8\xFF\xE1 exif with gps \xFF\xD9";
const CLEAN: &[u8] = b"\xFF\xD8\xFF\xDB clean \xFF\xD9";
const PDF: &[u8] = b"%PDF-1.7\n1 0 obj\n%%EOF\n";

fn item(id: ItemId) -> Item {
    trove_domain::testing::named(id.0, "drill", "tool", Condition::Good)
}

/// Item 7 exists in the household; any other is missing.
fn inventory() -> MockInventoryRepo {
    let mut inventory = MockInventoryRepo::new();
    inventory
        .expect_get()
        .returning(|h, id| if h == H && id == ITEM { Ok(item(id)) } else { Err(RepoError::NotFound) });
    inventory
}

fn clock() -> MockClock {
    let mut clock = MockClock::new();
    clock.expect_now().returning(now);
    clock
}

fn stored(id: i64, new: NewMedium, at: Timestamp) -> Medium {
    Medium {
        id: MediaId(id),
        item_id: new.item_id,
        kind: new.kind,
        media_type: new.media_type,
        bytes: new.bytes,
        size: new.size,
        sha256: new.sha256,
        thumb: None,
        caption: new.caption,
        created_at: at,
    }
}

fn medium(id: i64, media_type: MediaType, bytes: &[u8], thumb: Option<ContentHash>) -> Medium {
    Medium {
        id: MediaId(id),
        item_id: Some(ITEM),
        kind: MediaKind::default_for(media_type),
        media_type,
        bytes: bytes.len() as u64,
        size: media_type.is_image().then_some(PixelSize { width: 4, height: 3 }),
        sha256: content_hash(bytes),
        thumb,
        caption: None,
        created_at: now(),
    }
}

/// The use case, recording with a clock that reads `now()`.
fn use_case(repo: MockMediaRepo, store: MockMediaStore, pictures: MockPictures) -> Media {
    let recorder = crate::recorder::capturing_at(now());
    Media::new(Arc::new(repo), Arc::new(store), Arc::new(pictures), Arc::new(inventory()), Arc::new(clock()), recorder)
}

fn upload(bytes: &[u8]) -> Upload {
    Upload { bytes: bytes.to_vec(), kind: None, caption: None }
}

/// Pictures whose `keep` answers the clean bytes, 4 x 3.
fn cleaning_pictures() -> MockPictures {
    let mut pictures = MockPictures::new();
    pictures
        .expect_keep()
        .withf(|t, b| *t == MediaType::Jpeg && b == JPEG)
        .times(1)
        .returning(|_, _| Ok(KeptPicture { bytes: CLEAN.to_vec(), size: PixelSize { width: 4, height: 3 } }));
    pictures
}

#[tokio::test]
async fn an_upload_keeps_the_cleaned_picture_blob_first_then_the_row() {
    let mut seq = Sequence::new();
    let mut store = MockMediaStore::new();
    let mut repo = MockMediaRepo::new();
    store
        .expect_put()
        .withf(|h, b| *h == content_hash(CLEAN) && b == CLEAN)
        .times(1)
        .in_sequence(&mut seq)
        .returning(|_, _| Ok(()));
    repo.expect_insert()
        .withf(|h, new, rec| {
            *h == H
                && new.item_id == Some(ITEM)
                && new.kind == MediaKind::Photo
                && new.media_type == MediaType::Jpeg
                && new.bytes == CLEAN.len() as u64
                && new.size == Some(PixelSize { width: 4, height: 3 })
                && new.sha256 == content_hash(CLEAN)
                && (rec.action.as_str(), rec.member, rec.at) == ("create", A.member, now())
        })
        .times(1)
        .in_sequence(&mut seq)
        .returning(|_, new, rec| Ok(stored(1, new, rec.at)));
    let kept = use_case(repo, store, cleaning_pictures()).upload(A, Some(ITEM), upload(JPEG)).await.unwrap();
    assert_eq!(kept.sha256, content_hash(CLEAN));
    assert_ne!(kept.sha256, content_hash(JPEG), "the bytes with their GPS are never stored");
}

#[tokio::test]
async fn a_pdf_is_kept_as_it_is_with_no_size_and_as_other() {
    let mut store = MockMediaStore::new();
    store.expect_put().withf(|h, b| *h == content_hash(PDF) && b == PDF).times(1).returning(|_, _| Ok(()));
    let mut repo = MockMediaRepo::new();
    repo.expect_insert()
        .withf(|_, new, _rec| new.kind == MediaKind::Other && new.size.is_none() && new.media_type == MediaType::Pdf)
        .times(1)
        .returning(|_, new, rec| Ok(stored(2, new, rec.at)));
    // No pixel work on a PDF: the mock of `Pictures` expects nothing.
    let kept = use_case(repo, store, MockPictures::new()).upload(A, Some(ITEM), upload(PDF)).await.unwrap();
    assert_eq!(kept.id, MediaId(2));
}

#[tokio::test]
async fn a_kind_and_caption_given_are_kept() {
    let mut store = MockMediaStore::new();
    store.expect_put().returning(|_, _| Ok(()));
    let mut repo = MockMediaRepo::new();
    repo.expect_insert()
        .withf(|_, new, _rec| {
            new.kind == MediaKind::Receipt && new.caption.as_ref().map(Caption::as_str) == Some("till")
        })
        .times(1)
        .returning(|_, new, rec| Ok(stored(3, new, rec.at)));
    let up = Upload { bytes: PDF.to_vec(), kind: Some(MediaKind::Receipt), caption: Caption::new("till").unwrap() };
    let media = use_case(repo, store, MockPictures::new());
    media.upload(A, Some(ITEM), up).await.unwrap();
    // Its `create` is the store's, in the insert's transaction (the store suite checks its fields).
}

#[tokio::test]
async fn refused_files_write_nothing() {
    let cases: [(&[u8], &str); 3] = [
        (b"", "file is empty"),
        (b"\0\0\0\x18ftypheic\0\0\0\0", "file is image/heic, which is not accepted"),
        (b"%PDF-1.7 cut", "file is not a readable application/pdf"),
    ];
    for (bytes, expected) in cases {
        // Mocks that expect nothing: any write fails the test.
        let err = use_case(MockMediaRepo::new(), MockMediaStore::new(), MockPictures::new())
            .upload(A, Some(ITEM), upload(bytes))
            .await
            .unwrap_err();
        assert!(matches!(&err, MediaError::Refused(r) if r.to_string().starts_with(expected)), "{err:?}");
    }
}

#[tokio::test]
async fn a_picture_that_does_not_decode_is_refused_before_anything_is_written() {
    let mut pictures = MockPictures::new();
    pictures.expect_keep().returning(|_, _| Err(PictureError::Broken("unexpected end of file".into())));
    let err = use_case(MockMediaRepo::new(), MockMediaStore::new(), pictures)
        .upload(A, Some(ITEM), upload(JPEG))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, MediaError::Refused(MediaRefused::Broken { media_type: MediaType::Jpeg, reason }) if reason == "unexpected end of file"),
        "{err:?}"
    );
}

#[tokio::test]
async fn an_upload_to_a_missing_item_is_404_before_any_work() {
    let err = use_case(MockMediaRepo::new(), MockMediaStore::new(), MockPictures::new())
        .upload(A, Some(ItemId(8)), upload(JPEG))
        .await
        .unwrap_err();
    assert!(matches!(err, MediaError::Failed(Error::NotFound { what: ObjectKind::Item, id: 8 })), "{err:?}");
}

#[tokio::test]
async fn an_item_gone_between_the_blob_and_the_row_leaves_no_blob() {
    let mut seq = Sequence::new();
    let mut store = MockMediaStore::new();
    let mut repo = MockMediaRepo::new();
    store.expect_put().times(1).in_sequence(&mut seq).returning(|_, _| Ok(()));
    repo.expect_insert().times(1).in_sequence(&mut seq).returning(|_, _, _| Err(RepoError::NotFound));
    repo.expect_names().with(eq(content_hash(CLEAN))).times(1).in_sequence(&mut seq).returning(|_| Ok(false));
    store.expect_delete().with(eq(content_hash(CLEAN))).times(1).in_sequence(&mut seq).returning(|_| Ok(()));
    let err = use_case(repo, store, cleaning_pictures()).upload(A, Some(ITEM), upload(JPEG)).await.unwrap_err();
    assert!(matches!(err, MediaError::Failed(Error::NotFound { what: ObjectKind::Item, id: 7 })), "{err:?}");
}

#[tokio::test]
async fn listing_another_households_item_is_404() {
    let err = use_case(MockMediaRepo::new(), MockMediaStore::new(), MockPictures::new())
        .of_item(HouseholdId(3), ITEM)
        .await
        .unwrap_err();
    assert!(matches!(err, MediaError::Failed(Error::NotFound { what: ObjectKind::Item, id: 7 })), "{err:?}");
}

#[tokio::test]
async fn a_medium_whose_blob_is_missing_is_404() {
    let mut repo = MockMediaRepo::new();
    repo.expect_get().returning(|_, id| Ok(medium(id.0, MediaType::Jpeg, CLEAN, None)));
    let mut store = MockMediaStore::new();
    store.expect_get().returning(|_| Err(RepoError::NotFound));
    let err = use_case(repo, store, MockPictures::new()).get(H, MediaId(4)).await.unwrap_err();
    assert!(matches!(err, MediaError::Failed(Error::NotFound { what: ObjectKind::Media, id: 4 })), "{err:?}");
}

#[tokio::test]
async fn a_thumbnail_is_made_once_then_kept() {
    let thumb: &[u8] = b"\xFF\xD8\xFF thumb";
    let mut repo = MockMediaRepo::new();
    let mut store = MockMediaStore::new();
    let mut pictures = MockPictures::new();
    repo.expect_get().times(1).returning(|_, id| Ok(medium(id.0, MediaType::Jpeg, CLEAN, None)));
    store.expect_get().with(eq(content_hash(CLEAN))).times(1).returning(|_| Ok(CLEAN.to_vec()));
    pictures
        .expect_thumbnail()
        .withf(|t, b| *t == MediaType::Jpeg && b == CLEAN)
        .times(1)
        .returning(move |_, _| Ok(thumb.to_vec()));
    store.expect_put().withf(move |h, b| *h == content_hash(thumb) && b == thumb).times(1).returning(|_, _| Ok(()));
    repo.expect_set_thumb()
        .withf(move |h, id, t| *h == H && *id == MediaId(5) && *t == content_hash(thumb))
        .times(1)
        .returning(|_, _, _| Ok(()));
    assert_eq!(use_case(repo, store, pictures).thumbnail(H, MediaId(5)).await.unwrap(), thumb);

    // Once recorded, the kept thumbnail is answered: no pixel work (the mock of `Pictures` expects none).
    let mut repo = MockMediaRepo::new();
    let mut store = MockMediaStore::new();
    repo.expect_get().returning(move |_, id| Ok(medium(id.0, MediaType::Jpeg, CLEAN, Some(content_hash(thumb)))));
    store.expect_get().with(eq(content_hash(thumb))).times(1).returning(move |_| Ok(thumb.to_vec()));
    assert_eq!(use_case(repo, store, MockPictures::new()).thumbnail(H, MediaId(5)).await.unwrap(), thumb);
}

#[tokio::test]
async fn a_pdf_has_no_thumbnail() {
    let mut repo = MockMediaRepo::new();
    repo.expect_get().returning(|_, id| Ok(medium(id.0, MediaType::Pdf, PDF, None)));
    let err = use_case(repo, MockMediaStore::new(), MockPictures::new()).thumbnail(H, MediaId(6)).await.unwrap_err();
    assert!(matches!(err, MediaError::NoThumbnail(MediaId(6))), "{err:?}");
}

#[tokio::test]
async fn delete_removes_the_row_first_then_blobs_no_row_names() {
    let thumb = content_hash(b"thumb");
    let gone = medium(9, MediaType::Jpeg, CLEAN, Some(thumb.clone()));
    let mut seq = Sequence::new();
    let mut repo = MockMediaRepo::new();
    let mut store = MockMediaStore::new();
    repo.expect_delete()
        .withf(|h, id, rec| (*h, *id, rec.action.as_str(), rec.member) == (H, MediaId(9), "delete", A.member))
        .times(1)
        .in_sequence(&mut seq)
        .returning(move |_, _, _| Ok(gone.clone()));
    // Another row (of any household) still names the picture: its blob stays. Nothing names the thumbnail.
    repo.expect_names().with(eq(content_hash(CLEAN))).times(1).in_sequence(&mut seq).returning(|_| Ok(true));
    repo.expect_names().with(eq(thumb.clone())).times(1).in_sequence(&mut seq).returning(|_| Ok(false));
    store.expect_delete().with(eq(thumb)).times(1).in_sequence(&mut seq).returning(|_| Ok(()));
    let media = use_case(repo, store, MockPictures::new());
    media.delete(A, MediaId(9)).await.unwrap();
    // Its `delete` is the store's, in the delete's transaction.
}

#[tokio::test]
async fn deleting_a_missing_medium_is_404_and_touches_no_blob() {
    let mut repo = MockMediaRepo::new();
    repo.expect_delete().returning(|_, _, _| Err(RepoError::NotFound));
    let media = use_case(repo, MockMediaStore::new(), MockPictures::new());
    let err = media.delete(A, MediaId(10)).await.unwrap_err();
    assert!(matches!(err, MediaError::Failed(Error::NotFound { what: ObjectKind::Media, id: 10 })), "{err:?}");
}

#[tokio::test]
async fn the_sweep_removes_old_pending_media_and_old_blobs_no_row_names() {
    let named = content_hash(b"named");
    let fresh_orphan = content_hash(b"fresh orphan");
    let old_orphan = content_hash(b"old orphan");
    let mut repo = MockMediaRepo::new();
    let mut store = MockMediaStore::new();
    repo.expect_delete_pending()
        .with(eq(now() - chrono::TimeDelta::hours(24)))
        .times(1)
        .returning(|_| Ok(vec![medium(11, MediaType::Pdf, b"old orphan", None)]));
    let kept = named.clone();
    repo.expect_hashes().times(1).returning(move || Ok(HashSet::from([kept.clone()])));
    let blobs = vec![
        StoredBlob { hash: named, written_at: now() - chrono::TimeDelta::days(30) },
        StoredBlob { hash: fresh_orphan, written_at: now() - chrono::TimeDelta::minutes(5) },
        StoredBlob { hash: old_orphan.clone(), written_at: now() - chrono::TimeDelta::hours(25) },
    ];
    store.expect_list().times(1).returning(move || Ok(blobs.clone()));
    store.expect_delete().with(eq(old_orphan)).times(1).returning(|_| Ok(()));
    let swept = use_case(repo, store, MockPictures::new()).sweep().await.unwrap();
    assert_eq!(swept, Swept { pending: 1, blobs: 1 });
}

#[test]
fn content_hashes_are_sha256() {
    assert_eq!(content_hash(b"").as_str(), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

#[tokio::test]
async fn a_caption_edited_is_recorded_with_its_change_and_a_missing_medium_is_404() {
    let mut repo = MockMediaRepo::new();
    repo.expect_set_caption()
        .withf(|h, id, c, rec| {
            *h == H
                && *id == MediaId(5)
                && c.as_ref().map(Caption::as_str) == Some("front")
                && rec.action == Action::Patch
        })
        .times(1)
        .returning(|_, _, caption, _| Ok(Medium { caption, ..medium(5, MediaType::Jpeg, CLEAN, None) }));
    repo.expect_set_caption().withf(|_, id, _, _| *id != MediaId(5)).returning(|_, _, _, _| Err(RepoError::NotFound));
    let media = use_case(repo, MockMediaStore::new(), MockPictures::new());
    let kept = media.caption(A, MediaId(5), Caption::new("front").unwrap()).await.unwrap();
    assert_eq!(kept.caption.as_ref().map(Caption::as_str), Some("front"));
    let err = media.caption(A, MediaId(6), None).await.unwrap_err();
    assert!(matches!(err, MediaError::Failed(Error::NotFound { what: ObjectKind::Media, id: 6 })), "{err:?}");
    // The `patch` is the store's, in the caption's transaction.
}

#[tokio::test]
async fn pending_media_are_not_recorded_until_an_item_takes_them() {
    let mut store = MockMediaStore::new();
    store.expect_put().returning(|_, _| Ok(()));
    let mut repo = MockMediaRepo::new();
    repo.expect_insert()
        .withf(|_, new, _rec| new.item_id.is_none())
        .times(1)
        .returning(|_, new, rec| Ok(stored(4, new, rec.at)));
    let media = use_case(repo, store, MockPictures::new());
    let (kept, crops) = media.keep_intake(A, PDF.to_vec(), &[]).await.unwrap();
    assert_eq!((kept.id, kept.item_id, crops.len()), (MediaId(4), None, 0));
}
