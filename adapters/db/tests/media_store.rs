//! The media rows (`MediaRepo`) and the items' covers, in `store.rs`'s style: every case against SQLite (a
//! fresh file) and against the PostgreSQL on this machine (a fresh database). The PostgreSQL cases fail when it
//! is unreachable; they are never skipped.

use chrono::{TimeZone, Utc};
use std::collections::HashSet;
use trove_application::RepoError;
use trove_application::ports::{HouseholdRepo, InventoryRepo, ItemQuery, MediaRepo};
use trove_db::Store;
use trove_domain::item::{Condition, Intent, Item, ItemName, ItemType, NewItem};
use trove_domain::media::{Caption, ContentHash, MediaKind, MediaType, NewMedium, PixelSize};
use trove_domain::{HouseholdId, ItemId, MediaId, Timestamp};

use trove_db::on_both_backends;
use trove_db::testing::TestDb as Ctx;

on_both_backends!(
    media_round_trip_and_list_oldest_first,
    households_never_see_each_others_media,
    thumbnails_are_recorded_once,
    deleting_media_and_who_names_a_blob,
    the_sweep_takes_only_old_pending_media,
    items_show_their_first_photo_as_cover,
);

/// Who writes in these tests, and when: the command line, as `test`.
fn rec(at: Timestamp) -> trove_domain::history::Recording {
    trove_domain::history::Recording::new(at, None, trove_domain::history::Action::Test)
}

fn day(d: u32) -> Timestamp {
    Utc.with_ymd_and_hms(2026, 3, d, 12, 0, 0).unwrap()
}

fn hash(n: u8) -> ContentHash {
    ContentHash::parse(&format!("{n:02x}").repeat(32)).unwrap()
}

async fn household(store: &Store, name: &str) -> HouseholdId {
    store.ensure_household(name).await.unwrap()
}

async fn add(store: &Store, h: HouseholdId, name: &str) -> Item {
    let new = NewItem::new(
        ItemName::new(name).unwrap(),
        ItemType::new("tool").unwrap(),
        String::new(),
        Condition::Good,
        Intent::Keep,
    );
    InventoryRepo::insert(store, h, new, &rec(day(1))).await.unwrap()
}

fn photo(item: Option<ItemId>, n: u8) -> NewMedium {
    NewMedium {
        item_id: item,
        kind: MediaKind::Photo,
        media_type: MediaType::Jpeg,
        bytes: 1000 + u64::from(n),
        size: Some(PixelSize { width: 4000, height: 3000 }),
        sha256: hash(n),
        caption: None,
    }
}

fn receipt(item: Option<ItemId>, n: u8) -> NewMedium {
    NewMedium {
        kind: MediaKind::Receipt,
        media_type: MediaType::Pdf,
        size: None,
        caption: Caption::new("from the shop\nline two").unwrap(),
        ..photo(item, n)
    }
}

async fn media_round_trip_and_list_oldest_first(ctx: Ctx) {
    let s = &ctx.store;
    let h = household(s, "home").await;
    let drill = add(s, h, "drill").await;
    let first = MediaRepo::insert(s, h, receipt(Some(drill.id), 1), &rec(day(2))).await.unwrap();
    let second = MediaRepo::insert(s, h, photo(Some(drill.id), 2), &rec(day(3))).await.unwrap();
    assert_eq!(first.item_id, Some(drill.id));
    assert_eq!(first.kind, MediaKind::Receipt);
    assert_eq!(first.media_type, MediaType::Pdf);
    assert_eq!(first.size, None);
    assert_eq!(first.bytes, 1001);
    assert_eq!(first.sha256, hash(1));
    assert_eq!(first.caption.as_ref().map(Caption::as_str), Some("from the shop\nline two"));
    assert_eq!(first.thumb, None);
    assert_eq!(first.created_at, day(2));
    assert_eq!(second.size, Some(PixelSize { width: 4000, height: 3000 }));
    assert_eq!(MediaRepo::get(s, h, first.id).await.unwrap(), first);
    assert_eq!(s.of_item(h, drill.id).await.unwrap(), vec![first.clone(), second.clone()]);
    let saw = add(s, h, "saw").await;
    assert!(s.of_item(h, saw.id).await.unwrap().is_empty());
    // Pending media is on no item.
    let pending = MediaRepo::insert(s, h, photo(None, 3), &rec(day(4))).await.unwrap();
    assert_eq!(pending.item_id, None);
    assert_eq!(s.of_item(h, drill.id).await.unwrap().len(), 2);
    // The media on the household's items: not the pending one, nor another household's.
    let on_saw = MediaRepo::insert(s, h, photo(Some(saw.id), 4), &rec(day(5))).await.unwrap();
    let other = household(s, "other").await;
    let theirs = add(s, other, "drill").await;
    MediaRepo::insert(s, other, photo(Some(theirs.id), 5), &rec(day(5))).await.unwrap();
    assert_eq!(s.on_items(h).await.unwrap(), vec![first, second, on_saw]);
}

async fn households_never_see_each_others_media(ctx: Ctx) {
    let s = &ctx.store;
    let home = household(s, "home").await;
    let other = household(s, "other").await;
    let drill = add(s, home, "drill").await;
    let m = MediaRepo::insert(s, home, photo(Some(drill.id), 1), &rec(day(2))).await.unwrap();
    assert!(matches!(MediaRepo::get(s, other, m.id).await, Err(RepoError::NotFound)));
    assert!(s.of_item(other, drill.id).await.unwrap().is_empty());
    assert!(matches!(s.set_thumb(other, m.id, &hash(9)).await, Err(RepoError::NotFound)));
    assert!(matches!(MediaRepo::delete(s, other, m.id, &rec(day(1))).await, Err(RepoError::NotFound)));
    // Media on another household's item is refused, and nothing is written.
    assert!(matches!(
        MediaRepo::insert(s, other, photo(Some(drill.id), 2), &rec(day(2))).await,
        Err(RepoError::NotFound)
    ));
    assert!(matches!(
        MediaRepo::insert(s, home, photo(Some(ItemId(999_999)), 2), &rec(day(2))).await,
        Err(RepoError::NotFound)
    ));
    assert!(!s.names(&hash(2)).await.unwrap());
    assert_eq!(MediaRepo::get(s, home, m.id).await.unwrap(), m);
}

async fn thumbnails_are_recorded_once(ctx: Ctx) {
    let s = &ctx.store;
    let h = household(s, "home").await;
    let drill = add(s, h, "drill").await;
    let m = MediaRepo::insert(s, h, photo(Some(drill.id), 1), &rec(day(2))).await.unwrap();
    s.set_thumb(h, m.id, &hash(10)).await.unwrap();
    s.set_thumb(h, m.id, &hash(11)).await.unwrap();
    assert_eq!(MediaRepo::get(s, h, m.id).await.unwrap().thumb, Some(hash(10)));
    assert!(matches!(s.set_thumb(h, MediaId(999_999), &hash(10)).await, Err(RepoError::NotFound)));
}

async fn deleting_media_and_who_names_a_blob(ctx: Ctx) {
    let s = &ctx.store;
    let home = household(s, "home").await;
    let other = household(s, "other").await;
    let drill = add(s, home, "drill").await;
    let theirs = add(s, other, "their drill").await;
    // The same bytes in two households: one blob, two rows.
    let mine = MediaRepo::insert(s, home, photo(Some(drill.id), 1), &rec(day(2))).await.unwrap();
    let their = MediaRepo::insert(s, other, photo(Some(theirs.id), 1), &rec(day(2))).await.unwrap();
    s.set_thumb(home, mine.id, &hash(20)).await.unwrap();
    assert!(s.names(&hash(1)).await.unwrap());
    assert!(s.names(&hash(20)).await.unwrap(), "a thumbnail is named too");
    assert!(!s.names(&hash(21)).await.unwrap());
    assert_eq!(s.hashes().await.unwrap(), HashSet::from([hash(1), hash(20)]));

    let gone = MediaRepo::delete(s, home, mine.id, &rec(day(1))).await.unwrap();
    assert_eq!(gone.thumb, Some(hash(20)));
    assert!(matches!(MediaRepo::get(s, home, mine.id).await, Err(RepoError::NotFound)));
    assert!(s.names(&hash(1)).await.unwrap(), "their row still names the blob");
    assert!(!s.names(&hash(20)).await.unwrap());
    MediaRepo::delete(s, other, their.id, &rec(day(1))).await.unwrap();
    assert!(!s.names(&hash(1)).await.unwrap());
    assert!(s.hashes().await.unwrap().is_empty());
}

async fn the_sweep_takes_only_old_pending_media(ctx: Ctx) {
    let s = &ctx.store;
    let home = household(s, "home").await;
    let other = household(s, "other").await;
    let drill = add(s, home, "drill").await;
    let old = MediaRepo::insert(s, home, photo(None, 1), &rec(day(2))).await.unwrap();
    let old_other = MediaRepo::insert(s, other, photo(None, 2), &rec(day(2))).await.unwrap();
    let fresh = MediaRepo::insert(s, home, photo(None, 3), &rec(day(4))).await.unwrap();
    let attached = MediaRepo::insert(s, home, photo(Some(drill.id), 4), &rec(day(2))).await.unwrap();
    let mut swept: Vec<MediaId> = s.delete_pending(day(3)).await.unwrap().into_iter().map(|m| m.id).collect();
    swept.sort();
    assert_eq!(swept, vec![old.id, old_other.id]);
    assert!(matches!(MediaRepo::get(s, home, old.id).await, Err(RepoError::NotFound)));
    assert_eq!(MediaRepo::get(s, home, fresh.id).await.unwrap(), fresh);
    assert_eq!(MediaRepo::get(s, home, attached.id).await.unwrap(), attached);
    assert!(s.delete_pending(day(3)).await.unwrap().is_empty());
}

async fn items_show_their_first_photo_as_cover(ctx: Ctx) {
    let s = &ctx.store;
    let h = household(s, "home").await;
    let drill = add(s, h, "drill").await;
    let saw = add(s, h, "saw").await;
    let bare = add(s, h, "bare").await;
    assert_eq!(drill.cover, None);
    // A receipt is no cover; the first photo is, even when a later one is added.
    MediaRepo::insert(s, h, receipt(Some(drill.id), 1), &rec(day(2))).await.unwrap();
    let first = MediaRepo::insert(s, h, photo(Some(drill.id), 2), &rec(day(2))).await.unwrap();
    MediaRepo::insert(s, h, photo(Some(drill.id), 3), &rec(day(3))).await.unwrap();
    let saws = MediaRepo::insert(s, h, photo(Some(saw.id), 4), &rec(day(3))).await.unwrap();
    assert_eq!(InventoryRepo::get(s, h, drill.id).await.unwrap().cover, Some(first.id));
    let page = s.list(h, &ItemQuery { limit: 50, ..ItemQuery::default() }).await.unwrap();
    let covers: Vec<(ItemId, Option<MediaId>)> = page.items.iter().map(|i| (i.id, i.cover)).collect();
    assert_eq!(covers, vec![(drill.id, Some(first.id)), (saw.id, Some(saws.id)), (bare.id, None)]);
    MediaRepo::delete(s, h, first.id, &rec(day(1))).await.unwrap();
    let next = s.of_item(h, drill.id).await.unwrap()[1].id;
    assert_eq!(InventoryRepo::get(s, h, drill.id).await.unwrap().cover, Some(next));
}
