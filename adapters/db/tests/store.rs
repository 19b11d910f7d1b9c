//! The database adapter's one shared suite: every case runs against SQLite (a fresh file per test) and against
//! the PostgreSQL on this machine (a fresh database per test). The PostgreSQL cases fail when it is
//! unreachable; they are never skipped.

use chrono::{TimeZone, Utc};
use sea_orm::{ConnectionTrait, Database};
use std::collections::BTreeSet;
use trove_application::ports::idempotency::{
    ANSWER_KEPT_FOR, Fingerprint, PENDING_HELD_FOR, Reservation, Reserve, StoredAnswer,
};
use trove_application::ports::passkeys::{
    Ceremony, CeremonyState, CredentialId, NewPasskey, PasskeyKey, Purpose, UserHandle,
};
use trove_application::ports::people::{Member, NewMember, NewToken};
use trove_application::ports::{
    EventRepo, HouseholdRepo, IdempotencyStore, ImportWritten, InventoryRepo, InvitationRepo, ItemQuery, MediaRepo,
    MemberRepo, PasskeyRepo, PlaceFilter, PlaceRepo, PriceRepo, ProjectRepo, SessionRepo, SpendLedger, TemplateRepo,
    TokenRepo,
};
use trove_application::{Conflict, RepoError};
use trove_db::{Store, testing};
use trove_domain::history::{Action, Event, Field, FieldChange, ObjectKind, Recording};
use trove_domain::item::{
    Availability, Condition, Fault, Gone, GoneReason, Hold, Intent, Item, ItemLine, ItemName, ItemType, Measurement,
    MeasurementSource, NewItem, Severity, TestDone, TestResult,
};
use trove_domain::media::{Caption, ContentHash, MediaKind, MediaType, NewMedium};
use trove_domain::money::{Currency, MicroUsd, Money};
use trove_domain::people::{EventId, InvitationGone, InvitationId, MemberId, MemberName, Role, Scope};
use trove_domain::place::{NewPlace, PlaceName};
use trove_domain::pricing::{Comparable, DroppedComparable, Estimate, PriceReport};
use trove_domain::project::{Allocation, NewProject, Project, ProjectStatus};
use trove_domain::spend::{CallKind, CallOutcome, SpendEntry};
use trove_domain::template::{FieldBound, NewTemplate, requirement};
use trove_domain::{HouseholdId, ItemId, PlaceId, ProjectId, TemplateId, Timestamp};

use trove_db::on_both_backends;
use trove_db::testing::TestDb as Ctx;

on_both_backends!(
    lookups_are_cached_until_they_expire,
    items_round_trip_every_field,
    listing_filters_pages_and_counts,
    search_words_match_word_starts_ignoring_case,
    households_never_see_each_other,
    update_is_conditional_on_the_version,
    the_revision_moves_with_every_write,
    accept_reserves_every_item_or_none,
    accept_needs_a_proposed_project,
    build_and_drop_move_the_held_items,
    concurrent_accepts_sharing_an_item_have_one_winner,
    concurrent_accepts_never_hold_more_units_than_a_stock_has,
    templates_seed_once_and_stay_in_their_household,
    spend_ledger_ranges_and_totals,
    idempotency_keys_are_reserved_replayed_and_refused,
    idempotency_reservations_are_released_taken_over_and_expire,
    idempotency_concurrent_reservations_have_one_winner,
    price_history_is_newest_first,
    import_upserts_by_reference,
    import_is_all_or_nothing,
    migrations_race_safely,
    places_form_a_tree_per_household,
    items_are_found_within_places,
    bulk_updates_are_all_or_nothing,
    old_locations_become_places,
    a_search_of_the_most_words_is_one_bounded_query,
    people_names_are_unique_and_tokens_found_by_hash,
    the_last_owner_stays,
    invitations_are_redeemed_once,
    invitations_are_listed_revoked_and_die_with_their_makers_rights,
    of_concurrent_accepts_of_one_invitation_one_wins_and_the_others_find_it_used,
    passkeys_belong_to_one_member_and_the_last_way_in_stays,
    a_passkey_sign_up_is_all_or_nothing,
    passkey_ceremonies_are_taken_once_and_expire,
    sessions_are_found_touched_and_ended,
    old_tokens_become_the_first_owners_write_tokens,
    search_finds_prefixes_typos_and_every_indexed_text,
    search_ranks_by_relevance_then_id,
    the_search_index_follows_every_write,
    search_pages_walk_the_relevance_order_once,
    search_finds_what_a_large_import_wrote,
    typos_follow_writes_imports_and_gone_items,
    totals_follow_every_write,
    a_revision_read_after_a_write_sees_it_among_concurrent_reads,
    events_are_kept_per_object_and_paged_newest_first,
    many_events_are_appended_in_order_all_or_nothing,
    imports_answer_the_places_they_made_and_what_they_changed,
    an_import_and_its_history_commit_together,
    an_item_change_and_its_event_commit_together,
    every_write_commits_with_its_events,
);

/// Who writes in these tests, and when: the command line, as `test` (the history tests name their own).
fn rec(at: Timestamp) -> Recording {
    Recording::new(at, None, Action::Test)
}

fn day(d: u32) -> Timestamp {
    Utc.with_ymd_and_hms(2026, 3, d, 12, 0, 0).unwrap()
}

fn new_item(name: &str, item_type: &str, profile: &str, intent: Intent) -> NewItem {
    NewItem::new(
        ItemName::new(name).unwrap(),
        ItemType::new(item_type).unwrap(),
        profile.to_owned(),
        Condition::Good,
        intent,
    )
}

async fn household(store: &Store, name: &str) -> HouseholdId {
    store.ensure_household(name).await.unwrap()
}

async fn add(store: &Store, h: HouseholdId, name: &str) -> Item {
    InventoryRepo::insert(store, h, new_item(name, "single_board_computer", "", Intent::Keep), &rec(day(1)))
        .await
        .unwrap()
}

fn ids(items: &[Item]) -> Vec<ItemId> {
    items.iter().map(|i| i.id).collect()
}

fn template(label: &str) -> NewTemplate {
    NewTemplate::new(
        label,
        "Play old games on the television.",
        "an afternoon",
        &["Flash the card".to_owned(), "Plug it in".to_owned()],
        vec![
            requirement(
                "controller",
                "a single-board computer",
                &["single_board_computer"],
                Some(Condition::Good),
                false,
                vec![FieldBound::new("memory", Some(2.0), None, "GB").unwrap()],
            )
            .unwrap(),
            requirement("display", "a screen", &["monitor", "tv"], None, true, vec![]).unwrap(),
        ],
    )
    .unwrap()
}

/// A stored template to hang projects on.
async fn a_template(store: &Store, h: HouseholdId) -> TemplateId {
    TemplateRepo::insert(store, h, template("Retro console")).await.unwrap().id
}

async fn propose(store: &Store, h: HouseholdId, template: TemplateId, items: &[&Item]) -> Project {
    let project = NewProject {
        template_id: template,
        title: "Living-room console".into(),
        reason: "spare parts".into(),
        allocations: items
            .iter()
            .enumerate()
            .map(|(n, i)| Allocation { requirement: format!("part_{n}"), item_id: i.id, units: 1 })
            .collect(),
        missing: vec!["display".into()],
    };
    store.insert_many(h, vec![project], &rec(day(2))).await.unwrap().remove(0)
}

/// The holds of single things, each at the version read.
fn versions(items: &[&Item]) -> Vec<Hold> {
    items.iter().map(|i| Hold::Whole { item: i.id, version: i.version }).collect()
}

async fn items_round_trip_every_field(ctx: Ctx) {
    let s = &ctx.store;
    let h = household(s, "home").await;
    let mut new =
        new_item("Raspberry Pi 4 Model B 4GB", "single_board_computer", "Broadcom BCM2711, 4GB", Intent::Keep);
    new.condition = Condition::LikeNew;
    new.measurements = vec![
        Measurement::new("memory", 4.0, "GB", day(1), MeasurementSource::Label).unwrap(),
        Measurement::new("input_voltage", 5.1, "V", day(1), MeasurementSource::Manual).unwrap(),
    ];
    new.faults = vec![Fault::new("scuffed case", Severity::Minor).unwrap()];
    new.tests_done = vec![
        TestDone::new("boots", TestResult::Pass, Some(new.measurements[1].quantity()), day(1), Some("5 min")).unwrap(),
    ];
    new.accessories = vec!["USB-C cable".into(), "original box".into()];
    new.components = vec![ItemId(77)];
    new.location = Some("shelf B2".into());
    new.import_ref = Some("HB-1".into());
    let stored = InventoryRepo::insert(s, h, new.clone(), &rec(day(1))).await.unwrap();
    // Every field as given, not gone, held by no project, version 1, created and updated at the insert.
    // The location text became a place whose path reads the same.
    assert!(stored.place_id.is_some());
    assert_eq!(stored.location().as_deref(), Some("shelf B2"));
    let want = Item {
        place_id: stored.place_id,
        place_path: stored.place_path.clone(),
        ..new.clone().stored(stored.id, day(1))
    };
    assert_eq!(stored, want);
    assert_eq!(InventoryRepo::get(s, h, stored.id).await.unwrap(), want);

    // A gone item keeps its record through the round trip, and `all_present` leaves it out.
    let other = add(s, h, "Old laptop").await;
    let mut gone = other.clone();
    gone.gone = Some(Gone { reason: GoneReason::Sold, at: day(3), note: Some("to a neighbour".into()) });
    gone.updated_at = day(3);
    let written = update(s, h, &gone).await.unwrap();
    assert_eq!(written, Item { version: 2, ..gone.clone() });
    assert_eq!(InventoryRepo::get(s, h, other.id).await.unwrap(), written);
    assert_eq!(ids(&s.all_present(h).await.unwrap()), vec![stored.id]);
    // `lines` reads the same present items, as their lines: equal to the lines of the full items.
    let present = s.all_present(h).await.unwrap();
    assert_eq!(s.lines(h).await.unwrap(), present.iter().map(ItemLine::from).collect::<Vec<_>>());
    assert!(!present[0].measurements.is_empty(), "the line carries the measurements");

    // `get_many` answers in id order, skipping missing ids and repeats.
    let got = s.get_many(h, &[other.id, ItemId(999_999), stored.id, other.id]).await.unwrap();
    assert_eq!(ids(&got), vec![stored.id, other.id]);
    assert_eq!(got[1], written);
}

async fn listing_filters_pages_and_counts(ctx: Ctx) {
    let s = &ctx.store;
    let h = household(s, "home").await;
    let specs = [
        ("Pi 4", "single_board_computer", Intent::Keep),
        ("Pi Zero", "single_board_computer", Intent::Sell),
        ("ATX supply", "power_supply", Intent::Keep),
        ("Laptop charger", "power_supply", Intent::Give),
        ("Pi 3", "single_board_computer", Intent::Keep),
        ("Monitor", "monitor", Intent::Keep),
    ];
    let mut items = Vec::new();
    for (name, t, intent) in specs {
        items.push(InventoryRepo::insert(s, h, new_item(name, t, "", intent), &rec(day(1))).await.unwrap());
    }
    // Item 4 (Pi 3) is lent, item 5 (Monitor) is gone.
    let mut reserved = items[4].clone();
    reserved.availability = Availability::Lent;
    update(s, h, &reserved).await.unwrap();
    let mut gone = items[5].clone();
    gone.gone = Some(Gone { reason: GoneReason::Recycled, at: day(2), note: None });
    update(s, h, &gone).await.unwrap();

    let list = |q: ItemQuery| async move {
        let page = InventoryRepo::list(s, h, &ItemQuery { limit: if q.limit == 0 { 50 } else { q.limit }, ..q })
            .await
            .unwrap();
        (page.items.iter().map(|i| i.name.as_str().to_owned()).collect::<Vec<_>>(), page.total)
    };
    let names = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();

    assert_eq!(
        list(ItemQuery::default()).await,
        (names(&["Pi 4", "Pi Zero", "ATX supply", "Laptop charger", "Pi 3"]), 5)
    );
    assert_eq!(
        list(ItemQuery { include_gone: true, ..Default::default() }).await,
        (names(&["Pi 4", "Pi Zero", "ATX supply", "Laptop charger", "Pi 3", "Monitor"]), 6)
    );
    assert_eq!(
        list(ItemQuery { intent: Some(Intent::Keep), ..Default::default() }).await,
        (names(&["Pi 4", "ATX supply", "Pi 3"]), 3)
    );
    assert_eq!(
        list(ItemQuery { intent: Some(Intent::Give), ..Default::default() }).await,
        (names(&["Laptop charger"]), 1)
    );
    assert_eq!(
        list(ItemQuery { availability: Some(Availability::Lent), ..Default::default() }).await,
        (names(&["Pi 3"]), 1)
    );
    assert_eq!(
        list(ItemQuery { item_type: Some(ItemType::new("power_supply").unwrap()), ..Default::default() }).await,
        (names(&["ATX supply", "Laptop charger"]), 2)
    );
    assert_eq!(
        list(ItemQuery {
            item_type: Some(ItemType::new("single_board_computer").unwrap()),
            intent: Some(Intent::Keep),
            availability: Some(Availability::Available),
            ..Default::default()
        })
        .await,
        (names(&["Pi 4"]), 1)
    );
    assert_eq!(
        list(ItemQuery { item_type: Some(ItemType::new("monitor").unwrap()), ..Default::default() }).await,
        (names(&[]), 0)
    );
    // Pages: ordered by id, the total counts every page.
    assert_eq!(list(ItemQuery { limit: 2, ..Default::default() }).await, (names(&["Pi 4", "Pi Zero"]), 5));
    assert_eq!(
        list(ItemQuery { limit: 2, offset: 2, ..Default::default() }).await,
        (names(&["ATX supply", "Laptop charger"]), 5)
    );
    assert_eq!(list(ItemQuery { limit: 2, offset: 4, ..Default::default() }).await, (names(&["Pi 3"]), 5));
    assert_eq!(list(ItemQuery { limit: 2, offset: 10, ..Default::default() }).await, (names(&[]), 5));
}

/// A search word matches the start of a word of the name or the profile, ignoring case; letters and digits
/// make words, everything else separates them (on both sides), and a word of several parts matches them in a
/// row.
async fn search_words_match_word_starts_ignoring_case(ctx: Ctx) {
    let s = &ctx.store;
    let h = household(s, "home").await;
    let specs = [
        ("Raspberry Pi 4", "Broadcom BCM2711, 4GB RAM"),
        ("Arduino Uno", "ATmega328P, 100% original"),
        ("USB hub", "7 ports, powered"),
        ("Pi case", "red_white plastic"),
        ("Power bank", "redwhite 10000 mAh"),
        ("Über-Kabel", "Stecker für Geräte"),
    ];
    for (name, profile) in specs {
        InventoryRepo::insert(s, h, new_item(name, "part", profile, Intent::Keep), &rec(day(1))).await.unwrap();
    }
    let search = |q: &str| {
        let q = q.to_owned();
        async move {
            let page =
                InventoryRepo::list(s, h, &ItemQuery { q: Some(q), limit: 50, ..Default::default() }).await.unwrap();
            let mut names = page.items.iter().map(|i| i.name.as_str().to_owned()).collect::<Vec<_>>();
            // Level ranks may order differently on the two backends: compare as sets here.
            names.sort();
            (names, page.total)
        }
    };
    let names = |v: &[&str]| {
        let mut v = v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        v.sort();
        v
    };
    assert_eq!(search("pi").await, (names(&["Raspberry Pi 4", "Pi case"]), 2));
    assert_eq!(search("PI   bcm2711").await, (names(&["Raspberry Pi 4"]), 1));
    assert_eq!(search("raspberry uno").await, (names(&[]), 0));
    assert_eq!(search("100%").await, (names(&["Arduino Uno", "Power bank"]), 2));
    assert_eq!(search("0%").await, (names(&[]), 0), "a word's start, not anywhere in it");
    assert_eq!(search("red_white").await, (names(&["Pi case"]), 1));
    assert_eq!(search("red-wh").await, (names(&["Pi case"]), 1));
    assert_eq!(search("d_w").await, (names(&[]), 0));
    assert_eq!(search("Über").await, (names(&["Über-Kabel"]), 1));
    assert_eq!(search("für kabel").await, (names(&["Über-Kabel"]), 1));
    assert_eq!(search("GERÄTE").await, (names(&["Über-Kabel"]), 1));
    let everything = names(&["Raspberry Pi 4", "Arduino Uno", "USB hub", "Pi case", "Power bank", "Über-Kabel"]);
    assert_eq!(search("   ").await, (everything.clone(), 6));
    assert_eq!(search("% -").await, (everything, 6), "no word at all is no search");
}

async fn households_never_see_each_other(ctx: Ctx) {
    let s = &ctx.store;
    let mine = household(s, "mine").await;
    let theirs = household(s, "theirs").await;
    assert_ne!(mine, theirs);
    let item = add(s, mine, "Pi 4").await;
    let t = a_template(s, mine).await;
    let project = propose(s, mine, t, &[&item]).await;

    assert!(matches!(InventoryRepo::get(s, theirs, item.id).await, Err(RepoError::NotFound)));
    assert!(s.get_many(theirs, &[item.id]).await.unwrap().is_empty());
    let page = InventoryRepo::list(s, theirs, &ItemQuery { include_gone: true, limit: 50, ..Default::default() })
        .await
        .unwrap();
    assert_eq!((page.items.len(), page.total), (0, 0));
    assert!(s.all_present(theirs).await.unwrap().is_empty());
    assert!(s.lines(theirs).await.unwrap().is_empty());
    let mut changed = item.clone();
    changed.profile = "stolen".into();
    assert!(matches!(update(s, theirs, &changed).await, Err(RepoError::NotFound)));
    assert_eq!(InventoryRepo::get(s, mine, item.id).await.unwrap(), item);

    assert!(matches!(ProjectRepo::get(s, theirs, project.id).await, Err(RepoError::NotFound)));
    assert!(ProjectRepo::list(s, theirs).await.unwrap().is_empty());
    assert!(matches!(s.accept(theirs, project.id, &versions(&[&item]), &rec(day(3))).await, Err(RepoError::NotFound)));
    assert!(matches!(s.build(theirs, project.id, &rec(day(3))).await, Err(RepoError::NotFound)));
    assert!(matches!(s.drop_project(theirs, project.id, &rec(day(3))).await, Err(RepoError::NotFound)));
    assert_eq!(ProjectRepo::get(s, mine, project.id).await.unwrap().status, ProjectStatus::Proposed);
    assert_eq!(ProjectRepo::list(s, mine).await.unwrap(), vec![project.clone()]);

    assert!(matches!(TemplateRepo::get(s, theirs, t).await, Err(RepoError::NotFound)));
    s.add(mine, &report(item.id, day(4), 100)).await.unwrap();
    assert!(s.history(theirs, item.id).await.unwrap().is_empty());
    assert_eq!(s.history(mine, item.id).await.unwrap().len(), 1);
}

async fn update_is_conditional_on_the_version(ctx: Ctx) {
    let s = &ctx.store;
    let h = household(s, "home").await;
    let item = add(s, h, "Pi 4").await;
    let mut first = item.clone();
    first.name = ItemName::new("Pi 4 (4GB)").unwrap();
    first.intent = Intent::Sell;
    let drawer = s.find_or_create(h, &[PlaceName::new("drawer").unwrap()], &rec(day(1))).await.unwrap().unwrap().path;
    first.place_id = Some(drawer.id());
    first.place_path = Some(drawer.clone());
    first.updated_at = day(5);
    let stored = update(s, h, &first).await.unwrap();
    assert_eq!(stored, Item { version: 2, ..first.clone() });

    // A writer that read version 1 loses, and writes nothing.
    let mut late = item.clone();
    late.profile = "late writer".into();
    assert!(matches!(update(s, h, &late).await, Err(RepoError::Stale(id)) if id == item.id));
    assert_eq!(InventoryRepo::get(s, h, item.id).await.unwrap(), stored);

    // The next write from version 2 wins.
    let mut second = stored.clone();
    second.availability = Availability::Lent;
    assert_eq!(update(s, h, &second).await.unwrap().version, 3);

    let mut missing = item.clone();
    missing.id = ItemId(987_654);
    assert!(matches!(update(s, h, &missing).await, Err(RepoError::NotFound)));
}

async fn the_revision_moves_with_every_write(ctx: Ctx) {
    let s = &ctx.store;
    let h = household(s, "home").await;
    let other = household(s, "away").await;
    let revision = |h| InventoryRepo::revision(s, h);
    let start = revision(h).await.unwrap();
    let a = add(s, h, "a").await;
    let b = add(s, h, "b").await;
    let added = revision(h).await.unwrap();
    assert!(added > start, "{start} -> {added}");
    let theirs = revision(other).await.unwrap();
    add(s, other, "theirs").await;
    assert_eq!(revision(h).await.unwrap(), added, "another household's write leaves it");
    assert!(revision(other).await.unwrap() > theirs);
    let mut changed = a.clone();
    changed.profile = "measured".into();
    update(s, h, &changed).await.unwrap();
    let updated = revision(h).await.unwrap();
    assert!(updated > added, "{added} -> {updated}");
    let t = a_template(s, h).await;
    let project = propose(s, h, t, &[&b]).await;
    s.accept(h, project.id, &versions(&[&b]), &rec(day(3))).await.unwrap();
    assert!(revision(h).await.unwrap() > updated, "a hold moves it");
}

async fn accept_reserves_every_item_or_none(ctx: Ctx) {
    let s = &ctx.store;
    let h = household(s, "home").await;
    let t = a_template(s, h).await;
    let a = add(s, h, "a").await;
    let b = add(s, h, "b").await;
    let project = propose(s, h, t, &[&a, &b]).await;
    assert_eq!(project.status, ProjectStatus::Proposed);
    assert_eq!((project.created_at, project.updated_at), (day(2), day(2)));

    let accepted = s.accept(h, project.id, &versions(&[&b, &a]), &rec(day(3))).await.unwrap();
    assert_eq!(accepted, Project { status: ProjectStatus::Accepted, updated_at: day(3), ..project.clone() });
    for item in [&a, &b] {
        let now = InventoryRepo::get(s, h, item.id).await.unwrap();
        assert_eq!(
            (now.availability, now.project, now.version, now.updated_at),
            (Availability::Reserved, Some(project.id), 2, day(3))
        );
    }

    // The second project's later item changed since the rules read it: nothing is written, also not the
    // earlier item's reservation.
    let c = add(s, h, "c").await;
    let d = add(s, h, "d").await;
    let stale = versions(&[&c, &d]);
    let mut d_changed = d.clone();
    d_changed.profile = "measured again".into();
    update(s, h, &d_changed).await.unwrap();
    let second = propose(s, h, t, &[&c, &d]).await;
    assert!(matches!(s.accept(h, second.id, &stale, &rec(day(4))).await, Err(RepoError::Stale(id)) if id == d.id));
    assert_eq!(ProjectRepo::get(s, h, second.id).await.unwrap(), second);
    assert_eq!(InventoryRepo::get(s, h, c.id).await.unwrap(), c);
    assert_eq!(InventoryRepo::get(s, h, d.id).await.unwrap().version, 2);

    // An item already reserved by the first project is stale for anyone holding its old version.
    let third = propose(s, h, t, &[&a]).await;
    assert!(
        matches!(s.accept(h, third.id, &versions(&[&a]), &rec(day(4))).await, Err(RepoError::Stale(id)) if id == a.id)
    );
    assert_eq!(ProjectRepo::get(s, h, third.id).await.unwrap().status, ProjectStatus::Proposed);
}

async fn accept_needs_a_proposed_project(ctx: Ctx) {
    let s = &ctx.store;
    let h = household(s, "home").await;
    let t = a_template(s, h).await;
    let a = add(s, h, "a").await;
    let project = propose(s, h, t, &[&a]).await;
    assert!(
        matches!(s.build(h, project.id, &rec(day(3))).await, Err(RepoError::Conflict(c)) if c.to_string() == format!("project {} is proposed, not accepted", project.id))
    );
    s.accept(h, project.id, &versions(&[&a]), &rec(day(3))).await.unwrap();
    let reserved = InventoryRepo::get(s, h, a.id).await.unwrap();
    let again = s.accept(h, project.id, &versions(&[&reserved]), &rec(day(4))).await;
    assert!(
        matches!(again, Err(RepoError::Conflict(c)) if c.to_string() == format!("project {} is accepted, not proposed", project.id))
    );
    assert_eq!(InventoryRepo::get(s, h, a.id).await.unwrap(), reserved);
    assert!(matches!(s.accept(h, ProjectId(424_242), &[], &rec(day(4))).await, Err(RepoError::NotFound)));
    assert!(matches!(s.build(h, ProjectId(424_242), &rec(day(4))).await, Err(RepoError::NotFound)));
    assert!(matches!(s.drop_project(h, ProjectId(424_242), &rec(day(4))).await, Err(RepoError::NotFound)));

    s.build(h, project.id, &rec(day(5))).await.unwrap();
    let built = format!("project {} is built, not proposed or accepted", project.id);
    assert!(
        matches!(s.drop_project(h, project.id, &rec(day(6))).await, Err(RepoError::Conflict(c)) if c.to_string() == built)
    );
    assert!(matches!(s.build(h, project.id, &rec(day(6))).await, Err(RepoError::Conflict(_))));
    assert_eq!(ProjectRepo::get(s, h, project.id).await.unwrap().updated_at, day(5));
}

async fn build_and_drop_move_the_held_items(ctx: Ctx) {
    let s = &ctx.store;
    let h = household(s, "home").await;
    let t = a_template(s, h).await;
    let (a, b, c, d, e) =
        (add(s, h, "a").await, add(s, h, "b").await, add(s, h, "c").await, add(s, h, "d").await, add(s, h, "e").await);

    let built = propose(s, h, t, &[&a, &b]).await;
    s.accept(h, built.id, &versions(&[&a, &b]), &rec(day(3))).await.unwrap();
    let done = s.build(h, built.id, &rec(day(4))).await.unwrap();
    assert_eq!((done.status, done.updated_at), (ProjectStatus::Built, day(4)));
    for item in [&a, &b] {
        let now = InventoryRepo::get(s, h, item.id).await.unwrap();
        assert_eq!((now.availability, now.project, now.version), (Availability::InUse, Some(built.id), 3));
    }

    let dropped = propose(s, h, t, &[&c, &d]).await;
    s.accept(h, dropped.id, &versions(&[&c, &d]), &rec(day(3))).await.unwrap();
    let gone = s.drop_project(h, dropped.id, &rec(day(5))).await.unwrap();
    assert_eq!((gone.status, gone.updated_at), (ProjectStatus::Dropped, day(5)));
    for item in [&c, &d] {
        let now = InventoryRepo::get(s, h, item.id).await.unwrap();
        assert_eq!(
            (now.availability, now.project, now.version, now.updated_at),
            (Availability::Available, None, 3, day(5))
        );
    }

    // Dropping a proposed project touches no item.
    let idle = propose(s, h, t, &[&e]).await;
    assert_eq!(s.drop_project(h, idle.id, &rec(day(6))).await.unwrap().status, ProjectStatus::Dropped);
    assert_eq!(InventoryRepo::get(s, h, e.id).await.unwrap(), e);
    // The built project's items stayed in use throughout.
    assert_eq!(InventoryRepo::get(s, h, a.id).await.unwrap().availability, Availability::InUse);
}

async fn concurrent_accepts_sharing_an_item_have_one_winner(ctx: Ctx) {
    let s = &ctx.store;
    let h = household(s, "home").await;
    let t = a_template(s, h).await;
    for round in 0..20 {
        let shared = add(s, h, &format!("shared {round}")).await;
        let left = add(s, h, &format!("left {round}")).await;
        let right = add(s, h, &format!("right {round}")).await;
        let p = propose(s, h, t, &[&shared, &left]).await;
        let q = propose(s, h, t, &[&right, &shared]).await;
        let (sp, sq) = (s.clone(), s.clone());
        let (vp, vq) = (versions(&[&shared, &left]), versions(&[&right, &shared]));
        let first = tokio::spawn(async move { sp.accept(h, p.id, &vp, &rec(day(3))).await });
        let second = tokio::spawn(async move { sq.accept(h, q.id, &vq, &rec(day(3))).await });
        let (first, second) = (first.await.unwrap(), second.await.unwrap());
        let (winner, loser, loser_own) = match (&first, &second) {
            (Ok(_), Err(RepoError::Stale(id))) if *id == shared.id => (&p, &q, &right),
            (Err(RepoError::Stale(id)), Ok(_)) if *id == shared.id => (&q, &p, &left),
            other => panic!("round {round}: want exactly one winner, got {other:?}"),
        };
        let now = InventoryRepo::get(s, h, shared.id).await.unwrap();
        assert_eq!((now.availability, now.project, now.version), (Availability::Reserved, Some(winner.id), 2));
        assert_eq!(ProjectRepo::get(s, h, winner.id).await.unwrap().status, ProjectStatus::Accepted);
        assert_eq!(ProjectRepo::get(s, h, loser.id).await.unwrap().status, ProjectStatus::Proposed);
        assert_eq!(InventoryRepo::get(s, h, loser_own.id).await.unwrap(), *loser_own);
    }
}

/// A project taking `units` of one stock.
async fn propose_units(store: &Store, h: HouseholdId, template: TemplateId, stock: &Item, units: u32) -> Project {
    let project = NewProject {
        template_id: template,
        title: format!("{units} cells"),
        reason: "spare cells".into(),
        allocations: vec![Allocation { requirement: "cells".into(), item_id: stock.id, units }],
        missing: vec![],
    };
    store.insert_many(h, vec![project], &rec(day(2))).await.unwrap().remove(0)
}

async fn concurrent_accepts_never_hold_more_units_than_a_stock_has(ctx: Ctx) {
    let s = &ctx.store;
    let h = household(s, "home").await;
    let t = a_template(s, h).await;
    for round in 0..10u32 {
        let mut cells = new_item(&format!("AA cells {round}"), "aa_cell", "", Intent::Keep);
        cells.quantity = 10;
        let stock = InventoryRepo::insert(s, h, cells, &rec(day(1))).await.unwrap();
        // Four projects race for 4, 4, 3 and 2 of 10 units: whatever the order, those accepted fit in 10.
        let wants = [4u32, 4, 3, 2];
        let mut projects = Vec::new();
        for &units in &wants {
            projects.push(propose_units(s, h, t, &stock, units).await);
        }
        let tasks: Vec<_> = projects
            .iter()
            .zip(wants)
            .map(|(p, units)| {
                let (store, id) = (s.clone(), p.id);
                let holds = [Hold::Units { item: stock.id, units }];
                tokio::spawn(async move { (units, store.accept(h, id, &holds, &rec(day(3))).await) })
            })
            .collect();
        let mut held = 0;
        for task in tasks {
            match task.await.unwrap() {
                (units, Ok(p)) => {
                    assert_eq!(p.status, ProjectStatus::Accepted);
                    held += units;
                }
                (_, Err(RepoError::Stale(id))) => assert_eq!(id, stock.id),
                (_, other) => panic!("round {round}: {other:?}"),
            }
        }
        let now = InventoryRepo::get(s, h, stock.id).await.unwrap();
        assert!((7..=10).contains(&held), "round {round}: {held} units accepted");
        assert_eq!((now.quantity, now.units_held), (10, held), "round {round}");
        assert_eq!(now.availability, Availability::Available, "a stock stays available for the units left");
        // A refused accept left its project proposed and took nothing.
        let accepted: Vec<Project> = {
            let mut out = Vec::new();
            for p in &projects {
                let p = ProjectRepo::get(s, h, p.id).await.unwrap();
                if p.status == ProjectStatus::Accepted {
                    out.push(p);
                }
            }
            out
        };
        assert_eq!(accepted.iter().map(|p| p.allocations[0].units).sum::<u32>(), held);
        // Building one consumes its units; dropping another gives its units back.
        let built = &accepted[0];
        s.build(h, built.id, &rec(day(4))).await.unwrap();
        let after_build = InventoryRepo::get(s, h, stock.id).await.unwrap();
        let used = built.allocations[0].units;
        assert_eq!((after_build.quantity, after_build.units_held), (10 - used, held - used));
        if let Some(dropped) = accepted.get(1) {
            s.drop_project(h, dropped.id, &rec(day(5))).await.unwrap();
            let after_drop = InventoryRepo::get(s, h, stock.id).await.unwrap();
            assert_eq!(
                (after_drop.quantity, after_drop.units_held),
                (10 - used, held - used - dropped.allocations[0].units)
            );
        }
        // Dropping a project that was only proposed gives nothing back.
        if let Some(idle) = projects.iter().find(|p| !accepted.iter().any(|a| a.id == p.id)) {
            let before = InventoryRepo::get(s, h, stock.id).await.unwrap();
            s.drop_project(h, idle.id, &rec(day(6))).await.unwrap();
            assert_eq!(InventoryRepo::get(s, h, stock.id).await.unwrap(), before);
        }
    }
}

async fn templates_seed_once_and_stay_in_their_household(ctx: Ctx) {
    let s = &ctx.store;
    let mine = household(s, "mine").await;
    let theirs = household(s, "theirs").await;
    assert!(TemplateRepo::list(s, mine).await.unwrap().is_empty());
    let catalogue = vec![template("Retro console"), template("Home NAS")];
    // Two seeders at once (as two processes starting together): the catalogue is written once.
    let (s1, s2) = (s.clone(), s.clone());
    let (c1, c2) = (catalogue.clone(), catalogue.clone());
    let (r1, r2) = tokio::join!(
        tokio::spawn(async move { s1.seed_builtin(c1).await }),
        tokio::spawn(async move { s2.seed_builtin(c2).await })
    );
    r1.unwrap().unwrap();
    r2.unwrap().unwrap();
    let builtins = TemplateRepo::list(s, mine).await.unwrap();
    assert_eq!(builtins.iter().map(|t| t.label.as_str()).collect::<Vec<_>>(), vec!["Retro console", "Home NAS"]);
    assert_eq!(builtins[0], catalogue[0].clone().with_id(builtins[0].id));
    assert!(builtins[0].id < builtins[1].id);

    let own = TemplateRepo::insert(s, mine, template("Bench supply")).await.unwrap();
    assert_eq!(own, template("Bench supply").with_id(own.id));
    let labels = |v: Vec<trove_domain::template::Template>| v.into_iter().map(|t| t.label).collect::<Vec<_>>();
    assert_eq!(labels(TemplateRepo::list(s, mine).await.unwrap()), vec!["Retro console", "Home NAS", "Bench supply"]);
    assert_eq!(labels(TemplateRepo::list(s, theirs).await.unwrap()), vec!["Retro console", "Home NAS"]);
    assert_eq!(TemplateRepo::get(s, mine, own.id).await.unwrap(), own);
    assert!(matches!(TemplateRepo::get(s, theirs, own.id).await, Err(RepoError::NotFound)));
    assert_eq!(TemplateRepo::get(s, theirs, builtins[1].id).await.unwrap(), builtins[1]);
    assert!(matches!(TemplateRepo::get(s, mine, TemplateId(31_337)).await, Err(RepoError::NotFound)));
    // `get_any` reads any household's template by id, and only misses unknown ids.
    assert_eq!(s.get_any(own.id).await.unwrap(), own);
    assert_eq!(s.get_any(builtins[0].id).await.unwrap(), builtins[0]);
    assert!(matches!(s.get_any(TemplateId(31_337)).await, Err(RepoError::NotFound)));

    // A later release's catalogue adds exactly its new template, also next to a household's own template of
    // that label; seeding it again adds nothing.
    TemplateRepo::insert(s, theirs, template("Weather station")).await.unwrap();
    let later = [catalogue.clone(), vec![template("Weather station")]].concat();
    s.seed_builtin(later.clone()).await.unwrap();
    s.seed_builtin(later).await.unwrap();
    let now = TemplateRepo::list(s, mine).await.unwrap();
    assert_eq!(now[..2], builtins[..]);
    assert_eq!(labels(now), vec!["Retro console", "Home NAS", "Bench supply", "Weather station"]);
}

fn spend(at: Timestamp, kind: CallKind, cost: i64) -> SpendEntry {
    SpendEntry {
        at,
        kind,
        model: "muse-spark-1.3".into(),
        input_tokens: 1830,
        cached_tokens: 200,
        output_tokens: 412,
        searches: 2,
        cost: MicroUsd(cost),
        outcome: CallOutcome::Ok,
        member: None,
    }
}

async fn spend_ledger_ranges_and_totals(ctx: Ctx) {
    let s = &ctx.store;
    let h = household(s, "home").await;
    let other = household(s, "other").await;
    // Entries name the member who asked (m0009_spend_member), or none for the command line.
    let entries = [
        SpendEntry { member: Some(MemberId(42)), ..spend(day(3), CallKind::Price, 3_000) },
        spend(day(1), CallKind::Propose, 1_000),
        spend(day(2), CallKind::ReadVoice, 2_000),
        SpendEntry { outcome: CallOutcome::Failed, ..spend(day(4), CallKind::Transcribe, 4_000) },
    ];
    for e in &entries {
        s.record(h, e).await.unwrap();
    }
    s.record(other, &spend(day(2), CallKind::Price, 50_000)).await.unwrap();

    let all = s.entries(h, None, None).await.unwrap();
    assert_eq!(all, vec![entries[1].clone(), entries[2].clone(), entries[0].clone(), entries[3].clone()]);
    assert_eq!(s.entries(h, Some(day(2)), Some(day(4))).await.unwrap(), vec![entries[2].clone(), entries[0].clone()]);
    assert_eq!(s.entries(h, Some(day(4)), None).await.unwrap(), vec![entries[3].clone()]);
    assert_eq!(s.entries(h, None, Some(day(2))).await.unwrap(), vec![entries[1].clone()]);
    assert_eq!(s.total_since(h, day(2)).await.unwrap(), MicroUsd(9_000));
    assert_eq!(s.total_since(h, day(1)).await.unwrap(), MicroUsd(10_000));
    assert_eq!(s.total_since(h, day(5)).await.unwrap(), MicroUsd(0));
    assert_eq!(s.total_since(other, day(1)).await.unwrap(), MicroUsd(50_000));

    // A row written before outcomes were kept (migration m0004) reads as an answered call.
    let db = Database::connect(ctx.url.as_str()).await.unwrap();
    let at =
        if ctx.store.backend_name() == "sqlite" { "'2026-03-09 12:00:00+00:00'" } else { "'2026-03-09T12:00:00Z'" };
    db.execute_unprepared(&format!(
        "INSERT INTO spend_entries (household_id, at, kind, model, input_tokens, cached_tokens, output_tokens, \
         searches, cost_micro_usd) VALUES ({}, {at}, 'propose', 'muse-spark-1.3', 1, 0, 1, 0, 5)",
        h.0
    ))
    .await
    .unwrap();
    let old: Vec<_> = s.entries(h, None, None).await.unwrap().into_iter().filter(|e| e.cost == MicroUsd(5)).collect();
    assert_eq!(
        old.iter().map(|e| (e.outcome, e.kind, e.member)).collect::<Vec<_>>(),
        vec![(CallOutcome::Ok, CallKind::Propose, None)]
    );
}

fn fingerprint(body: &str) -> Fingerprint {
    Fingerprint::of("price:1", body.as_bytes())
}

fn answer(body: &str, at: Timestamp) -> StoredAnswer {
    StoredAnswer { status: 200, body: body.into(), at }
}

/// The reservation a `reserve` answered, or a panic naming what it answered instead.
fn reserved(found: Reserve) -> Reservation {
    match found {
        Reserve::Reserved(r) => r,
        other => panic!("want a reservation, got {other:?}"),
    }
}

async fn idempotency_keys_are_reserved_replayed_and_refused(ctx: Ctx) {
    let s = &ctx.store;
    let h = household(s, "home").await;
    let other = household(s, "other").await;
    let (mine, theirs) = (fingerprint("{}"), fingerprint(r#"{"other":true}"#));

    let r = reserved(s.reserve(h, "price:1", "k1", &mine, day(3)).await.unwrap());
    // While it runs, the key is held against the same request and any other.
    assert_eq!(s.reserve(h, "price:1", "k1", &mine, day(3)).await.unwrap(), Reserve::Running);
    assert_eq!(s.reserve(h, "price:1", "k1", &theirs, day(3)).await.unwrap(), Reserve::Running);
    // Other keys, scopes and households are not.
    reserved(s.reserve(h, "price:1", "k2", &mine, day(3)).await.unwrap());
    reserved(s.reserve(h, "price:2", "k1", &mine, day(3)).await.unwrap());
    reserved(s.reserve(other, "price:1", "k1", &mine, day(3)).await.unwrap());

    let first = answer(r#"{"ok":true}"#, day(3));
    s.complete(h, r, &first).await.unwrap();
    assert_eq!(s.reserve(h, "price:1", "k1", &mine, day(3)).await.unwrap(), Reserve::Replay(first.clone()));
    assert_eq!(s.reserve(h, "price:1", "k1", &theirs, day(3)).await.unwrap(), Reserve::OtherRequest);
    // A completed reservation is settled: it can be neither completed again nor released.
    assert!(matches!(s.complete(h, r, &answer("again", day(3))).await, Err(RepoError::Conflict(_))));
    assert!(matches!(s.release(h, r).await, Err(RepoError::Conflict(_))));
    assert_eq!(s.reserve(h, "price:1", "k1", &mine, day(3)).await.unwrap(), Reserve::Replay(first.clone()));
    // Another household cannot settle it either.
    assert!(matches!(s.release(other, r).await, Err(RepoError::Conflict(_))));

    // An answer kept before fingerprints (copied by migration m0002) replays for any request until it expires.
    let db = Database::connect(ctx.url.as_str()).await.unwrap();
    let at =
        if ctx.store.backend_name() == "sqlite" { "'2026-03-03 12:00:00+00:00'" } else { "'2026-03-03T12:00:00Z'" };
    db.execute_unprepared(&format!(
        "INSERT INTO idempotency_keys (household_id, scope, \"key\", fingerprint, state, attempt, reserved_at, \
         status, body, completed_at) VALUES ({}, 'propose', 'legacy', NULL, 'completed', 1, {at}, 200, 'old', {at})",
        h.0
    ))
    .await
    .unwrap();
    let old = answer("old", day(3));
    assert_eq!(s.reserve(h, "propose", "legacy", &mine, day(3)).await.unwrap(), Reserve::Replay(old.clone()));
    assert_eq!(s.reserve(h, "propose", "legacy", &theirs, day(4)).await.unwrap(), Reserve::Replay(old));
}

async fn idempotency_reservations_are_released_taken_over_and_expire(ctx: Ctx) {
    let s = &ctx.store;
    let h = household(s, "home").await;
    let (mine, theirs) = (fingerprint("{}"), fingerprint(r#"{"other":true}"#));
    let minute = chrono::TimeDelta::minutes(1);

    // A failed request releases its key: the next one with it is reserved at once.
    let failed = reserved(s.reserve(h, "price:1", "k", &mine, day(3)).await.unwrap());
    s.release(h, failed).await.unwrap();
    assert!(matches!(s.release(h, failed).await, Err(RepoError::Conflict(_))));
    let crashed = reserved(s.reserve(h, "price:1", "k", &mine, day(3)).await.unwrap());
    assert_ne!(crashed, failed);

    // A pending reservation holds its key for ten minutes, then a new request takes it over.
    let held_until = day(3) + PENDING_HELD_FOR;
    assert_eq!(s.reserve(h, "price:1", "k", &mine, held_until).await.unwrap(), Reserve::Running);
    let taker = reserved(s.reserve(h, "price:1", "k", &theirs, held_until + minute).await.unwrap());
    assert_ne!(taker, crashed);
    assert_eq!(s.reserve(h, "price:1", "k", &theirs, held_until + minute).await.unwrap(), Reserve::Running);
    // The crashed request, should it come back, can no longer settle the key.
    assert!(matches!(s.complete(h, crashed, &answer("late", day(3))).await, Err(RepoError::Conflict(_))));
    assert!(matches!(s.release(h, crashed).await, Err(RepoError::Conflict(_))));
    let kept = answer(r#"{"theirs":true}"#, held_until + minute);
    s.complete(h, taker, &kept).await.unwrap();
    assert_eq!(s.reserve(h, "price:1", "k", &theirs, day(4)).await.unwrap(), Reserve::Replay(kept.clone()));
    assert_eq!(s.reserve(h, "price:1", "k", &mine, day(4)).await.unwrap(), Reserve::OtherRequest);

    // The answer is kept for 24 hours; after that the key is reserved anew, for any request.
    let expires = kept.at + ANSWER_KEPT_FOR;
    assert_eq!(s.reserve(h, "price:1", "k", &theirs, expires).await.unwrap(), Reserve::Replay(kept));
    let renewed = reserved(s.reserve(h, "price:1", "k", &mine, expires + minute).await.unwrap());
    assert_eq!(s.reserve(h, "price:1", "k", &mine, expires + minute).await.unwrap(), Reserve::Running);
    let fresh = answer(r#"{"fresh":true}"#, expires + minute);
    s.complete(h, renewed, &fresh).await.unwrap();
    assert_eq!(s.reserve(h, "price:1", "k", &mine, expires + minute).await.unwrap(), Reserve::Replay(fresh));
}

async fn idempotency_concurrent_reservations_have_one_winner(ctx: Ctx) {
    let s = &ctx.store;
    let h = household(s, "home").await;
    for round in 0..20 {
        let key = format!("k{round}");
        let tries: Vec<_> = (0..4)
            .map(|_| {
                let (s, key) = (s.clone(), key.clone());
                tokio::spawn(async move { s.reserve(h, "price:1", &key, &fingerprint("{}"), day(3)).await.unwrap() })
            })
            .collect();
        let mut found = Vec::new();
        for t in tries {
            found.push(t.await.unwrap());
        }
        let winners = found.iter().filter(|f| matches!(f, Reserve::Reserved(_))).count();
        let running = found.iter().filter(|f| **f == Reserve::Running).count();
        assert_eq!((winners, running), (1, 3), "round {round}: {found:?}");
    }
}

fn report(item: ItemId, at: Timestamp, typical: i64) -> PriceReport {
    let gbp = Currency::new("GBP").unwrap();
    PriceReport {
        item_id: item,
        at,
        comparables: vec![Comparable {
            title: "Raspberry Pi 4 4GB, boxed".into(),
            url: "https://example.com/listing/1".into(),
            price: Money { minor: typical, currency: gbp },
            condition: Some(Condition::Good),
            sold: true,
            note: None,
        }],
        dropped: vec![DroppedComparable {
            url: "https://made.up/x".into(),
            title: "invented".into(),
            reason: "page not among search results or citations".into(),
        }],
        estimate: Some(Estimate { low: typical - 500, typical, high: typical + 500, currency: gbp }),
        searches: 3,
        source: trove_domain::pricing::PriceSource::Search,
    }
}

async fn price_history_is_newest_first(ctx: Ctx) {
    let s = &ctx.store;
    let h = household(s, "home").await;
    let item = add(s, h, "Pi 4").await;
    let other = add(s, h, "Pi 3").await;
    let reports = [report(item.id, day(1), 4000), report(item.id, day(3), 4500), report(item.id, day(2), 4200)];
    for r in &reports {
        s.add(h, r).await.unwrap();
    }
    s.add(h, &report(other.id, day(9), 1000)).await.unwrap();
    assert_eq!(s.history(h, item.id).await.unwrap(), vec![reports[1].clone(), reports[2].clone(), reports[0].clone()]);
    assert_eq!(s.history(h, other.id).await.unwrap().len(), 1);
    assert!(s.history(h, ItemId(123_456)).await.unwrap().is_empty());

    // The latest of each item: the newest by time, a same-time report kept later winning; another household's
    // are not among them.
    let same_time = report(other.id, day(9), 1100);
    s.add(h, &same_time).await.unwrap();
    let elsewhere = household(s, "elsewhere").await;
    let theirs = add(s, elsewhere, "Pi 5").await;
    s.add(elsewhere, &report(theirs.id, day(1), 9000)).await.unwrap();
    let latest = s.latest(h).await.unwrap();
    assert_eq!(latest.len(), 2);
    assert_eq!(latest[&item.id], reports[1]);
    assert_eq!(latest[&other.id], same_time);
    assert_eq!(s.latest(elsewhere).await.unwrap().keys().copied().collect::<Vec<_>>(), vec![theirs.id]);
}

fn imported(name: &str, reference: Option<&str>) -> NewItem {
    let mut item = new_item(name, "part", "from homebox", Intent::Keep);
    item.import_ref = reference.map(str::to_owned);
    item
}

/// The event of a change of `item`, as a use case makes it, for the writes made here straight on the store.
fn change_event(item: &Item) -> Event {
    Event {
        at: day(1),
        member: None,
        action: Action::Patch,
        kind: ObjectKind::Item,
        object: item.id.0,
        changes: Vec::new(),
        version_after: Some(item.version + 1),
    }
}

/// Writes `item` as `InventoryRepo::update` does, with its change's event.
async fn update(s: &Store, h: HouseholdId, item: &Item) -> Result<Item, RepoError> {
    InventoryRepo::update(s, h, item, &change_event(item)).await.map(|(item, _)| item)
}

/// Imports `items` with no history (an import's history, written in its transaction, has its own cases).
async fn import(s: &Store, h: HouseholdId, items: Vec<NewItem>, at: Timestamp) -> Result<ImportWritten, RepoError> {
    InventoryRepo::import(s, h, items, at, &|_: &ImportWritten| Vec::<Event>::new()).await
}

async fn count_items(s: &Store, h: HouseholdId) -> u64 {
    InventoryRepo::list(s, h, &ItemQuery { include_gone: true, limit: 1, ..Default::default() }).await.unwrap().total
}

async fn import_upserts_by_reference(ctx: Ctx) {
    let s = &ctx.store;
    let h = household(s, "home").await;
    let other = household(s, "other").await;
    let first = import(
        s,
        h,
        vec![imported("Pi 4", Some("HB-1")), imported("Loose cable", None), imported("Hub", Some("HB-2"))],
        day(1),
    )
    .await
    .unwrap()
    .ids;
    assert_eq!(first.len(), 3);
    assert_eq!(first.iter().collect::<BTreeSet<_>>().len(), 3);
    assert_eq!(InventoryRepo::get(s, h, first[0]).await.unwrap().name.as_str(), "Pi 4");
    assert_eq!(InventoryRepo::get(s, h, first[1]).await.unwrap().name.as_str(), "Loose cable");
    assert_eq!(InventoryRepo::get(s, h, first[2]).await.unwrap().name.as_str(), "Hub");

    let mut renamed = imported("Pi 4 Model B", Some("HB-1"));
    renamed.condition = Condition::Fair;
    renamed.location = Some("box 3".into());
    renamed.intent = Intent::Sell; // Not among the fields a re-import updates.
    let second = import(
        s,
        h,
        vec![renamed, imported("Fan", Some("HB-3")), imported("Fan 40mm", Some("HB-3")), imported("Loose cable", None)],
        day(2),
    )
    .await
    .unwrap()
    .ids;
    assert_eq!(second[0], first[0]);
    assert_eq!(second[1], second[2]);
    assert!(!first.contains(&second[1]) && !first.contains(&second[3]));
    let updated = InventoryRepo::get(s, h, first[0]).await.unwrap();
    assert_eq!(
        (updated.name.as_str(), updated.condition, updated.location().as_deref(), updated.intent, updated.version),
        ("Pi 4 Model B", Condition::Fair, Some("box 3"), Intent::Keep, 2)
    );
    assert_eq!((updated.created_at, updated.updated_at), (day(1), day(2)));
    assert_eq!(InventoryRepo::get(s, h, second[1]).await.unwrap().name.as_str(), "Fan 40mm");
    assert_eq!(count_items(s, h).await, 5);

    // Another household's identical reference is its own item.
    let theirs = import(s, other, vec![imported("Their Pi", Some("HB-1"))], day(3)).await.unwrap().ids;
    assert_ne!(theirs[0], first[0]);
    assert_eq!(InventoryRepo::get(s, h, first[0]).await.unwrap().name.as_str(), "Pi 4 Model B");
    assert!(import(s, h, vec![], day(3)).await.unwrap().ids.is_empty());

    // Many rows go in chunks and come back in order.
    let many: Vec<NewItem> = (0..1234).map(|n| imported(&format!("bulk {n}"), Some(&format!("B-{n}")))).collect();
    let bulk = import(s, h, many, day(4)).await.unwrap().ids;
    assert_eq!(bulk.len(), 1234);
    for n in [0usize, 499, 500, 999, 1000, 1233] {
        assert_eq!(InventoryRepo::get(s, h, bulk[n]).await.unwrap().name.as_str(), format!("bulk {n}"));
    }
    let again: Vec<NewItem> = (0..1234).map(|n| imported(&format!("bulk {n} v2"), Some(&format!("B-{n}")))).collect();
    assert_eq!(import(s, h, again, day(5)).await.unwrap().ids, bulk);
    assert_eq!(InventoryRepo::get(s, h, bulk[777]).await.unwrap().name.as_str(), "bulk 777 v2");
    assert_eq!(count_items(s, h).await, 5 + 1234);
}

async fn import_is_all_or_nothing(ctx: Ctx) {
    let s = &ctx.store;
    let h = household(s, "home").await;
    let existing = import(s, h, vec![imported("Pi 4", Some("HB-1"))], day(1)).await.unwrap().ids[0];
    // A unique index the adapter does not know of makes a row in the third chunk fail, after a re-import
    // update and two chunks of inserts went through inside the transaction.
    let db = Database::connect(ctx.url.as_str()).await.unwrap();
    db.execute_unprepared("CREATE UNIQUE INDEX test_unique_item_name ON items (household_id, name)").await.unwrap();
    let mut batch = vec![imported("Pi 4 renamed", Some("HB-1"))];
    batch.extend((0..1200).map(|n| imported(&format!("bulk {n}"), None)));
    batch.push(imported("bulk 3", None));
    assert!(matches!(import(s, h, batch, day(2)).await, Err(RepoError::Unexpected(_))));
    assert_eq!(count_items(s, h).await, 1);
    let kept = InventoryRepo::get(s, h, existing).await.unwrap();
    assert_eq!((kept.name.as_str(), kept.version), ("Pi 4", 1));
    db.close().await.unwrap();
}

async fn migrations_race_safely(ctx: Ctx) {
    // Several processes starting at once on a fresh database all migrate it; each finds it up to date.
    let url = match ctx.store.backend_name() {
        "sqlite" => testing::fresh_sqlite_url(),
        _ => testing::fresh_postgres_url().await.unwrap(),
    };
    let mut stores = Vec::new();
    for _ in 0..3 {
        stores.push(Store::connect(&url).await.unwrap());
    }
    let runs: Vec<_> = stores.iter().cloned().map(|s| tokio::spawn(async move { s.migrate().await })).collect();
    for run in runs {
        run.await.unwrap().unwrap();
    }
    let fresh = Ctx { store: stores[0].clone(), url };
    let h = household(&fresh.store, "home").await;
    assert_eq!(add(&fresh.store, h, "Pi 4").await.version, 1);
}

fn name(n: &str) -> PlaceName {
    PlaceName::new(n).unwrap()
}

async fn new_place(s: &Store, h: HouseholdId, n: &str, parent: Option<PlaceId>) -> Result<PlaceId, RepoError> {
    PlaceRepo::insert(s, h, NewPlace { name: name(n), parent_id: parent, note: None }, &rec(day(1))).await.map(|p| p.id)
}

async fn places_form_a_tree_per_household(ctx: Ctx) {
    let s = &ctx.store;
    let h = household(s, "home").await;
    let other = household(s, "away").await;
    let house = new_place(s, h, "House", None).await.unwrap();
    let garage = new_place(s, h, "Garage", Some(house)).await.unwrap();
    let shelf = new_place(s, h, "Shelf B2", Some(garage)).await.unwrap();
    let shed = new_place(s, h, "Shed", None).await.unwrap();

    // Sibling names differ ignoring case, at the top too (where the parent is NULL); cousins may share one.
    assert!(matches!(new_place(s, h, "GARAGE", Some(house)).await, Err(RepoError::Conflict(_))));
    assert!(matches!(new_place(s, h, "house", None).await, Err(RepoError::Conflict(_))));
    new_place(s, h, "Shelf B2", Some(shed)).await.unwrap();
    new_place(s, other, "House", None).await.unwrap();
    assert!(matches!(new_place(s, h, "Box", Some(PlaceId(987_654))).await, Err(RepoError::NotFound)));

    // Another household's place is missing.
    assert!(matches!(PlaceRepo::get(s, other, garage).await, Err(RepoError::NotFound)));
    assert!(matches!(new_place(s, other, "Box", Some(garage)).await, Err(RepoError::NotFound)));
    assert!(s.paths(other, &[shelf]).await.unwrap().is_empty());
    assert_eq!(PlaceRepo::all(s, h).await.unwrap().len(), 5);

    // Paths of many places in one call, root first.
    let paths = s.paths(h, &[shelf, shed, PlaceId(987_654), shelf]).await.unwrap();
    assert_eq!(paths.len(), 2);
    assert_eq!(paths[&shelf].joined(), "House / Garage / Shelf B2");
    assert_eq!(paths[&shelf].steps().iter().map(|st| st.id).collect::<Vec<_>>(), [house, garage, shelf]);

    // find_or_create finds ignoring case and creates only what is missing.
    let found =
        s.find_or_create(h, &[name("house"), name("garage"), name("Box 4")], &rec(day(2))).await.unwrap().unwrap().path;
    assert_eq!(found.joined(), "House / Garage / Box 4");
    assert_eq!(found.steps()[1].id, garage);
    let again =
        s.find_or_create(h, &[name("HOUSE"), name("Garage"), name("box 4")], &rec(day(2))).await.unwrap().unwrap().path;
    assert_eq!(again, found);
    assert_eq!(s.find_or_create(h, &[], &rec(day(2))).await.unwrap(), None);

    // Moves are checked again by the store: never under a descendant, never onto a taken name.
    let mut looped = PlaceRepo::get(s, h, house).await.unwrap();
    looped.parent_id = Some(shelf);
    assert!(matches!(PlaceRepo::update(s, h, &looped, &rec(day(1))).await, Err(RepoError::Conflict(_))));
    let mut moved = PlaceRepo::get(s, h, shelf).await.unwrap();
    moved.parent_id = Some(shed);
    assert!(
        matches!(PlaceRepo::update(s, h, &moved, &rec(day(1))).await, Err(RepoError::Conflict(c)) if c.to_string().contains("Shelf B2"))
    );
    moved.name = name("Shelf C");
    moved.note = Some("left wall".into());
    assert_eq!(PlaceRepo::update(s, h, &moved, &rec(day(1))).await.unwrap(), moved);
    assert_eq!(s.paths(h, &[shelf]).await.unwrap()[&shelf].joined(), "Shed / Shelf C");
    assert!(matches!(PlaceRepo::update(s, other, &moved, &rec(day(1))).await, Err(RepoError::NotFound)));

    // Delete: refused while it holds places or present items; gone items lose their place.
    assert!(
        matches!(PlaceRepo::delete(s, h, house, &rec(day(1))).await, Err(RepoError::Conflict(c)) if c.to_string() == format!("place {house} still holds 1 place; move them out first"))
    );
    let mut item = InventoryRepo::insert(
        s,
        h,
        NewItem { place_id: Some(shelf), ..new_item("Pi", "sbc", "", Intent::Keep) },
        &rec(day(1)),
    )
    .await
    .unwrap();
    assert!(matches!(
        PlaceRepo::delete(s, h, shelf, &rec(day(1))).await,
        Err(RepoError::Conflict(Conflict::StillHolds { items: 1, places: 0, .. }))
    ));
    item.gone = Some(Gone { reason: GoneReason::Sold, at: day(3), note: None });
    let item = update(s, h, &item).await.unwrap();
    assert!(matches!(PlaceRepo::delete(s, other, shelf, &rec(day(1))).await, Err(RepoError::NotFound)));
    PlaceRepo::delete(s, h, shelf, &rec(day(1))).await.unwrap();
    assert!(matches!(PlaceRepo::get(s, h, shelf).await, Err(RepoError::NotFound)));
    let after = InventoryRepo::get(s, h, item.id).await.unwrap();
    assert_eq!((after.place_id, after.location(), after.version), (None, None, item.version + 1));
}

async fn items_are_found_within_places(ctx: Ctx) {
    let s = &ctx.store;
    let h = household(s, "home").await;
    let other = household(s, "away").await;
    let path = |text: &str| text.split(" / ").map(name).collect::<Vec<_>>();
    let shelf = s.find_or_create(h, &path("Garage / Shelf B2"), &rec(day(1))).await.unwrap().unwrap().path;
    let garage = shelf.steps()[0].id;
    let boxed = s.find_or_create(h, &path("Garage / Shelf B2 / Box 4"), &rec(day(1))).await.unwrap().unwrap().path.id();
    let attic = s.find_or_create(h, &path("Attic"), &rec(day(1))).await.unwrap().unwrap().path.id();
    let put = |n: &'static str, place: Option<PlaceId>| async move {
        InventoryRepo::insert(s, h, NewItem { place_id: place, ..new_item(n, "part", "", Intent::Keep) }, &rec(day(1)))
            .await
            .unwrap()
    };
    let a = put("in garage", Some(garage)).await;
    let b = put("on shelf", Some(shelf.id())).await;
    let c = put("in box", Some(boxed)).await;
    put("in attic", Some(attic)).await;
    put("nowhere", None).await;
    let mut gone = put("gone from box", Some(boxed)).await;
    gone.gone = Some(Gone { reason: GoneReason::Lost, at: day(2), note: None });
    update(s, h, &gone).await.unwrap();
    // Another household's item with the same place id written in a location text cannot land in ours.
    assert!(matches!(
        InventoryRepo::insert(
            s,
            other,
            NewItem { place_id: Some(garage), ..new_item("x", "part", "", Intent::Keep) },
            &rec(day(1))
        )
        .await,
        Err(RepoError::Conflict(_))
    ));

    let list = |place: PlaceId, within: bool| async move {
        let q = ItemQuery { place: Some(PlaceFilter { place, within }), limit: 50, ..Default::default() };
        let page = InventoryRepo::list(s, h, &q).await.unwrap();
        (page.items.iter().map(|i| i.name.as_str().to_owned()).collect::<Vec<_>>(), page.total, page.items)
    };
    let (names, total, items) = list(garage, true).await;
    assert_eq!((names, total), (vec!["in garage".to_owned(), "on shelf".into(), "in box".into()], 3));
    let in_box = items.iter().find(|i| i.place_id == Some(boxed)).unwrap();
    assert_eq!(
        in_box.place_path.as_ref().map(|p| (p.id(), p.joined())),
        Some((boxed, "Garage / Shelf B2 / Box 4".into()))
    );
    assert_eq!(list(garage, false).await.0, ["in garage"]);
    assert_eq!(list(shelf.id(), true).await.0, ["on shelf", "in box"]);
    assert_eq!(list(attic, true).await.0, ["in attic"]);
    let theirs =
        ItemQuery { place: Some(PlaceFilter { place: garage, within: true }), limit: 50, ..Default::default() };
    assert_eq!(InventoryRepo::list(s, other, &theirs).await.unwrap().total, 0);

    // Counts directly in each place: present items only.
    let counts = s.item_counts(h).await.unwrap();
    assert_eq!((counts[&garage], counts[&shelf.id()], counts[&boxed], counts.get(&PlaceId(0))), (1, 1, 1, None));

    // An item's location is its place's path, read at once after a rename or a move.
    assert_eq!(InventoryRepo::get(s, h, c.id).await.unwrap().location().as_deref(), Some("Garage / Shelf B2 / Box 4"));
    let mut renamed = PlaceRepo::get(s, h, garage).await.unwrap();
    renamed.name = name("Workshop");
    PlaceRepo::update(s, h, &renamed, &rec(day(1))).await.unwrap();
    let got = s.get_many(h, &[a.id, b.id, c.id]).await.unwrap();
    assert_eq!(
        got.iter().map(|i| i.location().unwrap()).collect::<Vec<_>>(),
        ["Workshop", "Workshop / Shelf B2", "Workshop / Shelf B2 / Box 4"]
    );
    let present = s.all_present(h).await.unwrap();
    assert_eq!(
        present.iter().find(|i| i.id == c.id).unwrap().location().as_deref(),
        Some("Workshop / Shelf B2 / Box 4")
    );
}

async fn bulk_updates_are_all_or_nothing(ctx: Ctx) {
    let s = &ctx.store;
    let h = household(s, "home").await;
    let attic = new_place(s, h, "Attic", None).await.unwrap();
    let items = [add(s, h, "a").await, add(s, h, "b").await, add(s, h, "c").await];
    let moved = |i: &Item| Item { place_id: Some(attic), updated_at: day(4), ..i.clone() };

    // One stale item refuses them all.
    let mut stale = moved(&items[2]);
    stale.version = 7;
    let batch = vec![moved(&items[0]), moved(&items[1]), stale];
    assert!(matches!(s.update_many(h, &batch, &[]).await, Err(RepoError::Stale(id)) if id == items[2].id));
    assert!(s.get_many(h, &ids(&items)).await.unwrap().iter().all(|i| i.place_id.is_none() && i.version == 1));
    // A place of another household refuses them all too.
    let other = household(s, "away").await;
    let theirs = new_place(s, other, "Their attic", None).await.unwrap();
    let foreign = vec![moved(&items[0]), Item { place_id: Some(theirs), ..items[1].clone() }];
    assert!(matches!(s.update_many(h, &foreign, &[]).await, Err(RepoError::Conflict(_))));
    assert!(matches!(s.update_many(other, &[items[0].clone()], &[]).await, Err(RepoError::NotFound)));

    let all: Vec<Item> = items.iter().map(moved).collect();
    assert_eq!(s.update_many(h, &all, &[]).await.unwrap(), 3);
    for i in s.get_many(h, &ids(&items)).await.unwrap() {
        assert_eq!(
            (i.place_id, i.location().as_deref(), i.version, i.updated_at),
            (Some(attic), Some("Attic"), 2, day(4))
        );
    }
}

/// A database at the schema before places, with `location` texts, upgraded: every text becomes a path of
/// places (shared ignoring case, per household), nothing lost.
async fn old_locations_become_places(ctx: Ctx) {
    let url = if ctx.store.backend_name() == "sqlite" {
        testing::fresh_sqlite_url()
    } else {
        testing::fresh_postgres_url().await.unwrap()
    };
    let old = Ctx { store: Store::connect(&url).await.unwrap(), url };
    let s = &old.store;
    testing::migrate_first(s, 2).await.unwrap();
    let h = household(s, "home").await;
    let other = household(s, "away").await;
    let db = Database::connect(&old.url).await.unwrap();
    let backend = db.get_database_backend();
    let texts = [
        (h, Some("Garage / Shelf B2")),
        (h, Some("garage / shelf b2")),
        (h, Some("Garage")),
        (h, Some("box, shelf B2")),
        (h, Some("Attic / bad\u{1}name / ")),
        (h, None),
        (other, Some("Garage / Shelf B2")),
    ];
    for (n, (household, location)) in texts.iter().enumerate() {
        let mut sql = "INSERT INTO items (household_id, name, item_type, profile, condition, intent, availability, \
             measurements, faults, tests_done, accessories, components, location, created_at, updated_at, version) \
             VALUES (?, ?, 'part', '', 'good', 'keep', 'available', '[]', '[]', '[]', '[]', '[]', ?, ?, ?, 1)"
            .to_owned();
        if backend == sea_orm::DbBackend::Postgres {
            for k in 1..=5 {
                sql = sql.replacen('?', &format!("${k}"), 1);
            }
        }
        let values: Vec<sea_orm::Value> = vec![
            household.0.into(),
            format!("item {n}").into(),
            location.map(str::to_owned).into(),
            day(1).into(),
            day(1).into(),
        ];
        db.execute_raw(sea_orm::Statement::from_sql_and_values(backend, sql, values)).await.unwrap();
    }
    db.close().await.unwrap();
    s.migrate().await.unwrap();

    let page = InventoryRepo::list(s, h, &ItemQuery { limit: 50, ..Default::default() }).await.unwrap();
    let got: Vec<(Option<String>, Option<PlaceId>)> = page.items.iter().map(|i| (i.location(), i.place_id)).collect();
    assert_eq!(got[0].0.as_deref(), Some("Garage / Shelf B2"));
    assert_eq!(got[1], got[0], "the same path ignoring case is the same place");
    assert_eq!(got[2].0.as_deref(), Some("Garage"));
    assert_eq!(got[3].0.as_deref(), Some("box, shelf B2"));
    assert_eq!(got[4].0.as_deref(), Some("Attic / bad name"), "a part that is not a name is repaired");
    assert_eq!(got[5], (None, None));
    assert_eq!(PlaceRepo::all(s, h).await.unwrap().len(), 5);
    let theirs = InventoryRepo::list(s, other, &ItemQuery { limit: 50, ..Default::default() }).await.unwrap();
    assert_eq!(theirs.items[0].location().as_deref(), Some("Garage / Shelf B2"));
    assert_ne!(theirs.items[0].place_id, got[0].1);
}

/// A search of `SEARCH_WORDS_MAX` words, none of them ASCII (two patterns each, the most a word gives), runs as
/// one query on both backends and finds what holds every word, in the name or the profile; a search past the
/// old limit of the expression tree (SQLite's 1,000 levels) also runs, since the store's condition grows by one
/// per distinct word.
async fn a_search_of_the_most_words_is_one_bounded_query(ctx: Ctx) {
    use trove_domain::item::SEARCH_WORDS_MAX;
    let s = &ctx.store;
    let h = household(s, "home").await;
    let words: Vec<String> = (0..SEARCH_WORDS_MAX).map(|i| format!("ü{i}é")).collect();
    let (name_words, profile_words) = words.split_at(SEARCH_WORDS_MAX / 2);
    let all = new_item(&name_words.join(" "), "part", &profile_words.join(" "), Intent::Keep);
    let id = InventoryRepo::insert(s, h, all, &rec(day(1))).await.unwrap().id;
    InventoryRepo::insert(s, h, new_item(&name_words.join(" "), "part", "", Intent::Keep), &rec(day(1))).await.unwrap();
    let search = |q: String| async move {
        let page = InventoryRepo::list(s, h, &ItemQuery { q: Some(q), limit: 50, ..Default::default() }).await.unwrap();
        (page.items.iter().map(|i| i.id).collect::<Vec<_>>(), page.total)
    };
    assert_eq!(search(words.join(" ")).await, (vec![id], 1));
    // The same words many times over are one condition each.
    let repeated: Vec<&str> = words.iter().map(String::as_str).cycle().take(2_000).collect();
    assert_eq!(search(repeated.join(" ")).await, (vec![id], 1));
}

/// The SQLite file and the directory it is made in are the owner's only (0600 and 0700), and so are the files
/// SQLite keeps beside it (`-wal`, `-shm`).
#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sqlite_file_and_its_directory_are_the_owners_only() {
    use std::os::unix::fs::PermissionsExt as _;
    let ctx = testing::sqlite().await;
    let s = &ctx.store;
    let h = household(s, "home").await;
    add(s, h, "Pi").await;
    let file = ctx.url.trim_start_matches("sqlite://").split('?').next().unwrap().to_owned();
    let file = std::path::Path::new(&file);
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(file.parent().unwrap()), 0o700, "{}", file.display());
    assert_eq!(mode(file), 0o600);
    for beside in ["-wal", "-shm"] {
        let path = std::path::PathBuf::from(format!("{}{beside}", file.display()));
        assert_eq!(mode(&path), 0o600, "{}", path.display());
    }
}

/// SQLite keeps statistics of a large inventory, without the samples that would make it prepare statements
/// again at every run: made by an import of a thousand rows or more, and by the start of a store that has that
/// many items and none.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_keeps_statistics_without_samples() {
    let ctx = testing::sqlite().await;
    let s = &ctx.store;
    let h = household(s, "home").await;
    let items: Vec<NewItem> = (0..1_200)
        .map(|n| NewItem {
            location: Some(format!("Room {} / Box {}", n % 3, n % 4)),
            ..new_item(&format!("Widget {n}"), "part", "", Intent::Keep)
        })
        .collect();
    import(s, h, items, day(2)).await.unwrap();
    let db = Database::connect(ctx.url.as_str()).await.unwrap();
    let count = |sql: &'static str| {
        let db = &db;
        async move {
            let row = db.query_one_raw(sea_orm::Statement::from_string(sea_orm::DbBackend::Sqlite, sql)).await;
            row.unwrap().unwrap().try_get_by_index::<i64>(0).unwrap()
        }
    };
    let kept = "SELECT COUNT(*) FROM sqlite_stat1 WHERE idx = 'idx_items_place'";
    let samples = "SELECT COUNT(*) FROM sqlite_stat4";
    assert_eq!(count(kept).await, 1);
    assert_eq!(count(samples).await, 0);

    // A store filled before statistics were kept gets them when it starts.
    db.execute_unprepared("DROP TABLE sqlite_stat1").await.unwrap();
    db.execute_unprepared("DROP TABLE sqlite_stat4").await.unwrap();
    let started = Store::connect(&ctx.url).await.unwrap();
    started.migrate().await.unwrap();
    assert_eq!(count(kept).await, 1);
    assert_eq!(count(samples).await, 0);

    // And the listings read through them as before.
    let place = InventoryRepo::get(&started, h, ItemId(1)).await.unwrap().place_id.unwrap();
    let page = InventoryRepo::list(
        &started,
        h,
        &ItemQuery { place: Some(PlaceFilter { place, within: true }), limit: 50, ..Default::default() },
    )
    .await
    .unwrap();
    assert_eq!(page.total, 100);
    assert!(page.items.iter().all(|i| i.place_id == Some(place)));
}

/// A name SQLite took with a control character before they were refused stays readable, the character made a
/// space, in a listing, a read and the lines of the inventory. (PostgreSQL never stored one: it refuses NUL.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_name_stored_with_a_control_character_is_read_cleaned() {
    let ctx = testing::sqlite().await;
    let s = &ctx.store;
    let h = household(s, "home").await;
    let item = add(s, h, "Pi 4").await;
    let db = Database::connect(ctx.url.as_str()).await.unwrap();
    db.execute_unprepared(&format!("UPDATE items SET name = 'Pi' || char(0) || '4' WHERE id = {}", item.id.0))
        .await
        .unwrap();
    db.close().await.unwrap();
    assert_eq!(InventoryRepo::get(s, h, item.id).await.unwrap().name.as_str(), "Pi 4");
    let page = InventoryRepo::list(s, h, &ItemQuery { limit: 50, ..Default::default() }).await.unwrap();
    assert_eq!(page.items[0].name.as_str(), "Pi 4");
    let lines = InventoryRepo::lines(s, h).await.unwrap();
    assert_eq!(lines[0].name.as_str(), "Pi 4");
}

fn person(h: HouseholdId, name: &str, role: Role) -> NewMember {
    NewMember {
        household: h,
        name: MemberName::new(name).unwrap(),
        role,
        password_hash: Some(format!("hash of {name}")),
        created_at: day(2),
    }
}

fn new_token(m: &Member, hash: &str, scope: Scope) -> NewToken {
    NewToken {
        member: m.id,
        household: m.household,
        hash: hash.into(),
        name: format!("{hash} script"),
        scope,
        created_at: day(3),
        expires_at: Some(day(20)),
    }
}

async fn people_names_are_unique_and_tokens_found_by_hash(ctx: Ctx) {
    let s = &ctx.store;
    let (s1, s2) = (s.clone(), s.clone());
    let (a, b) = tokio::join!(
        tokio::spawn(async move { s1.ensure_household("home").await }),
        tokio::spawn(async move { s2.ensure_household("home").await })
    );
    let home = a.unwrap().unwrap();
    assert_eq!(b.unwrap().unwrap(), home);
    let away = s.ensure_household("away").await.unwrap();
    assert_ne!(away, home);
    assert_eq!(MemberRepo::household(s, home).await.unwrap().name, "home");

    let ada = s.add_member(person(home, "Ada", Role::Owner)).await.unwrap();
    assert_eq!((ada.name.as_str(), ada.role, ada.household, ada.created_at), ("Ada", Role::Owner, home, day(2)));
    // Names are unique across the instance, ignoring case.
    assert!(matches!(
        s.add_member(person(away, "ADA", Role::Owner)).await,
        Err(RepoError::Conflict(Conflict::NameTaken))
    ));
    let bob = s.add_member(person(away, "Bob", Role::Viewer)).await.unwrap();
    let (found, hash) = s.member_by_name(&MemberName::new("ada").unwrap()).await.unwrap().unwrap();
    assert_eq!((found, hash.as_deref()), (ada.clone(), Some("hash of Ada")));
    assert_eq!(s.member_by_name(&MemberName::new("nobody").unwrap()).await.unwrap(), None);
    assert!(matches!(MemberRepo::member(s, home, bob.id).await, Err(RepoError::NotFound)));
    assert_eq!(s.first_owner(home).await.unwrap(), Some(ada.clone()));
    assert_eq!(s.first_owner(away).await.unwrap(), None);

    let t = s.add_token(new_token(&ada, "hash-ada", Scope::Read)).await.unwrap();
    assert_eq!(
        (t.scope, t.expires_at, t.last_used_at, t.name.as_str()),
        (Scope::Read, Some(day(20)), None, "hash-ada script")
    );
    s.add_token(new_token(&bob, "hash-bob", Scope::Write)).await.unwrap();
    assert!(matches!(s.add_token(new_token(&bob, "hash-ada", Scope::Write)).await, Err(RepoError::Conflict(_))));
    let (got, owner) = s.token("hash-ada").await.unwrap().unwrap();
    assert_eq!((got.id, owner.id), (t.id, ada.id));
    assert_eq!(s.token("hash-nobody").await.unwrap(), None);
    s.touch_token(t.id, day(4)).await.unwrap();
    assert_eq!(s.token("hash-ada").await.unwrap().unwrap().0.last_used_at, Some(day(4)));
    assert_eq!(s.tokens(home, None).await.unwrap().len(), 1);
    assert_eq!(s.tokens(away, Some(ada.id)).await.unwrap(), vec![]);
    // Another household's token is not found to revoke; one's own goes at once.
    assert!(matches!(s.revoke_token(away, t.id, None).await, Err(RepoError::NotFound)));
    assert!(matches!(s.revoke_token(home, t.id, Some(bob.id)).await, Err(RepoError::NotFound)));
    s.revoke_token(home, t.id, Some(ada.id)).await.unwrap();
    assert_eq!(s.token("hash-ada").await.unwrap(), None);
}

async fn the_last_owner_stays(ctx: Ctx) {
    let s = &ctx.store;
    let home = household(s, "home").await;
    let ada = s.add_member(person(home, "Ada", Role::Owner)).await.unwrap();
    let bob = s.add_member(person(home, "Bob", Role::Member)).await.unwrap();
    let last_owner =
        |r: Result<(), RepoError>| matches!(r, Err(RepoError::Conflict(Conflict::LastOwner(id))) if id == ada.id);
    assert!(last_owner(s.set_role(home, ada.id, Role::Member, &rec(day(1))).await.map(|_| ())));
    assert!(last_owner(s.remove_member(home, ada.id, &rec(day(1))).await));
    assert_eq!(s.set_role(home, bob.id, Role::Owner, &rec(day(1))).await.unwrap().role, Role::Owner);
    // Two owners: demoting either at once leaves exactly one.
    let (s1, s2) = (s.clone(), s.clone());
    let (a, b) = tokio::join!(
        tokio::spawn(async move { s1.set_role(home, ada.id, Role::Viewer, &rec(day(1))).await }),
        tokio::spawn(async move { s2.set_role(home, bob.id, Role::Viewer, &rec(day(1))).await })
    );
    assert_eq!(a.unwrap().is_ok() as u8 + b.unwrap().is_ok() as u8, 1);
    let roles: Vec<Role> = s.members(home).await.unwrap().iter().map(|m| m.role).collect();
    assert_eq!(roles.iter().filter(|r| **r == Role::Owner).count(), 1, "{roles:?}");

    // Removing a member takes their sessions and tokens with them.
    let cleo = s.add_member(person(home, "Cleo", Role::Member)).await.unwrap();
    s.add_session(cleo.id, "session-cleo", day(3)).await.unwrap();
    s.add_token(new_token(&cleo, "token-cleo", Scope::Write)).await.unwrap();
    assert!(matches!(
        s.remove_member(HouseholdId(home.0 + 1000), cleo.id, &rec(day(1))).await,
        Err(RepoError::NotFound)
    ));
    s.remove_member(home, cleo.id, &rec(day(1))).await.unwrap();
    assert_eq!(s.session("session-cleo").await.unwrap(), None);
    assert_eq!(s.token("token-cleo").await.unwrap(), None);
    assert_eq!(s.members(home).await.unwrap().len(), 2);
}

async fn invitations_are_redeemed_once(ctx: Ctx) {
    let s = &ctx.store;
    let home = household(s, "home").await;
    s.add_member(person(home, "Ada", Role::Owner)).await.unwrap();
    s.add_invitation(home, "code-1", Role::Viewer, None, day(1)).await.unwrap();
    assert!(matches!(s.add_invitation(home, "code-1", Role::Owner, None, day(1)).await, Err(RepoError::Conflict(_))));
    let found = s.invitation("code-1").await.unwrap().unwrap();
    assert_eq!((found.household, found.role, found.created_at, found.used), (home, Role::Viewer, day(1), false));
    assert_eq!(s.invitation("code-2").await.unwrap(), None);

    // A taken name leaves the invitation unused.
    assert!(matches!(
        s.redeem("code-1", person(home, "ada", Role::Viewer)).await,
        Err(RepoError::Conflict(Conflict::NameTaken))
    ));
    assert!(!s.invitation("code-1").await.unwrap().unwrap().used);
    let grace = s.redeem("code-1", person(home, "Grace", Role::Viewer)).await.unwrap();
    assert_eq!((grace.name.as_str(), grace.role), ("Grace", Role::Viewer));
    assert!(s.invitation("code-1").await.unwrap().unwrap().used);
    assert!(matches!(
        s.redeem("code-1", person(home, "Hedy", Role::Viewer)).await,
        Err(RepoError::Conflict(Conflict::Invitation(InvitationGone::Used)))
    ));
    assert_eq!(s.member_by_name(&MemberName::new("Hedy").unwrap()).await.unwrap(), None);
}

/// An invitation refused at the write, with the reason.
fn refused(r: Result<Member, RepoError>) -> InvitationGone {
    match r {
        Err(RepoError::Conflict(Conflict::Invitation(gone))) => gone,
        other => panic!("expected the invitation refused, got {other:?}"),
    }
}

async fn invitations_are_listed_revoked_and_die_with_their_makers_rights(ctx: Ctx) {
    let s = &ctx.store;
    let home = household(s, "home").await;
    let away = household(s, "away").await;
    let ada = s.add_member(person(home, "Ada", Role::Owner)).await.unwrap();
    let bob = s.add_member(person(home, "Bob", Role::Owner)).await.unwrap();
    s.add_invitation(home, "ada-owner", Role::Owner, Some(ada.id), day(2)).await.unwrap();
    s.add_invitation(home, "ada-member", Role::Member, Some(ada.id), day(2)).await.unwrap();
    s.add_invitation(home, "ada-viewer", Role::Viewer, Some(ada.id), day(2)).await.unwrap();
    s.add_invitation(home, "bob-member", Role::Member, Some(bob.id), day(2)).await.unwrap();
    s.add_invitation(home, "cli-owner", Role::Owner, None, day(2)).await.unwrap();
    s.add_invitation(home, "old", Role::Viewer, None, day(1)).await.unwrap();
    s.add_invitation(away, "away", Role::Viewer, None, day(1)).await.unwrap();

    // Open ones of the household made after the cut-off, oldest first, each with its maker as they are now.
    let open = s.open_invitations(home, day(1)).await.unwrap();
    let listed: Vec<(Role, Option<&str>)> =
        open.iter().map(|i| (i.role, i.maker.as_ref().map(|m| m.name.as_str()))).collect();
    assert_eq!(
        listed,
        [
            (Role::Owner, Some("Ada")),
            (Role::Member, Some("Ada")),
            (Role::Viewer, Some("Ada")),
            (Role::Member, Some("Bob")),
            (Role::Owner, None)
        ]
    );
    assert_eq!(open[0].created_by, Some(ada.id));
    assert_eq!((open[4].created_by, open[4].created_at), (None, day(2)));
    assert_eq!(open[3].created_by, Some(bob.id));
    let bobs = open[3].id;

    // Revoked: refused at the write, gone from the list; revoking again changes nothing; only in its household.
    assert!(matches!(s.revoke_invitation(away, bobs, day(2)).await, Err(RepoError::NotFound)));
    assert!(matches!(s.revoke_invitation(home, InvitationId(bobs.0 + 1000), day(2)).await, Err(RepoError::NotFound)));
    s.revoke_invitation(home, bobs, day(2)).await.unwrap();
    s.revoke_invitation(home, bobs, day(3)).await.unwrap();
    let found = s.invitation("bob-member").await.unwrap().unwrap();
    assert!(found.revoked && !found.used);
    assert_eq!(refused(s.redeem("bob-member", person(home, "Cleo", Role::Member)).await), InvitationGone::Revoked);
    assert_eq!(s.open_invitations(home, day(1)).await.unwrap().len(), 4);

    // Ada demoted to member: her owner link dies, her member and viewer links live.
    s.set_role(home, ada.id, Role::Member, &rec(day(1))).await.unwrap();
    let state = s.invitation("ada-owner").await.unwrap().unwrap().state();
    assert_eq!(state.maker, trove_domain::people::Maker::Member(Role::Member));
    assert_eq!(
        refused(s.redeem("ada-owner", person(home, "Cleo", Role::Owner)).await),
        InvitationGone::MakerLacksRole(Role::Owner)
    );
    assert!(!s.invitation("ada-owner").await.unwrap().unwrap().used, "a refused accept writes nothing");
    let dan = s.redeem("ada-member", person(home, "Dan", Role::Member)).await.unwrap();
    assert_eq!(dan.role, Role::Member);
    // A used invitation is not revoked.
    let used = s.invitation("ada-member").await.unwrap().unwrap();
    assert!(matches!(
        s.revoke_invitation(home, used.id, day(3)).await,
        Err(RepoError::Conflict(Conflict::Invitation(InvitationGone::Used)))
    ));

    // Ada removed: every link she made dies; the command line's live on.
    s.remove_member(home, ada.id, &rec(day(1))).await.unwrap();
    let gone = s.invitation("ada-viewer").await.unwrap().unwrap();
    assert_eq!((gone.created_by, gone.maker.clone()), (Some(ada.id), None));
    assert_eq!(refused(s.redeem("ada-viewer", person(home, "Eve", Role::Viewer)).await), InvitationGone::MakerRemoved);
    assert_eq!(s.redeem("cli-owner", person(home, "Fay", Role::Owner)).await.unwrap().role, Role::Owner);
    // Expired: made on day 1, accepted on day 8.
    let late = NewMember { created_at: day(8), ..person(away, "Gus", Role::Viewer) };
    assert_eq!(refused(s.redeem("away", late).await), InvitationGone::Expired);
    assert_eq!(s.member_by_name(&MemberName::new("Eve").unwrap()).await.unwrap(), None);
}

async fn of_concurrent_accepts_of_one_invitation_one_wins_and_the_others_find_it_used(ctx: Ctx) {
    let s = &ctx.store;
    let home = household(s, "home").await;
    let ada = s.add_member(person(home, "Ada", Role::Owner)).await.unwrap();
    s.add_invitation(home, "shared", Role::Member, Some(ada.id), day(1)).await.unwrap();
    let racers: Vec<_> = (0..8)
        .map(|n| {
            let s = s.clone();
            tokio::spawn(async move { s.redeem("shared", person(home, &format!("Racer {n}"), Role::Member)).await })
        })
        .collect();
    let mut won = 0;
    for racer in racers {
        match racer.await.unwrap() {
            Ok(_) => won += 1,
            other => assert_eq!(refused(other), InvitationGone::Used),
        }
    }
    assert_eq!(won, 1);
    assert_eq!(s.members(home).await.unwrap().len(), 2);
}

fn passkey(credential: &str, name: &str) -> NewPasskey {
    NewPasskey {
        name: name.into(),
        user: UserHandle("ab".repeat(16)),
        key: PasskeyKey { credential: CredentialId(credential.into()), serialised: format!("key of {credential}") },
        created_at: day(4),
    }
}

async fn passkeys_belong_to_one_member_and_the_last_way_in_stays(ctx: Ctx) {
    let s = &ctx.store;
    let home = household(s, "home").await;
    let other = household(s, "other").await;
    let ada = s.add_member(person(home, "Ada", Role::Owner)).await.unwrap();
    let no_password = NewMember { password_hash: None, ..person(home, "Grace", Role::Member) };
    let grace = s.add_member(no_password).await.unwrap();
    assert_eq!(s.user_handle(grace.id).await.unwrap(), None);

    let phone = s.add_passkey(grace.id, passkey("cred-phone", "phone")).await.unwrap();
    assert_eq!(
        (phone.member, phone.name.as_str(), phone.created_at, phone.last_used_at),
        (grace.id, "phone", day(4), None)
    );
    // A credential is registered once, to anyone.
    assert!(matches!(
        s.add_passkey(ada.id, passkey("cred-phone", "mine")).await,
        Err(RepoError::Conflict(Conflict::CredentialRegistered))
    ));
    let laptop = s.add_passkey(grace.id, passkey("cred-laptop", "laptop")).await.unwrap();
    let theirs = s.passkeys(grace.id).await.unwrap();
    assert_eq!(theirs.iter().map(|p| p.passkey.id).collect::<Vec<_>>(), [phone.id, laptop.id]);
    assert_eq!(theirs[0].key.serialised, "key of cred-phone");
    assert_eq!(s.user_handle(grace.id).await.unwrap(), Some(UserHandle("ab".repeat(16))));
    assert!(s.passkeys(ada.id).await.unwrap().is_empty());

    let used = PasskeyKey { credential: CredentialId("cred-phone".into()), serialised: "counter 2".into() };
    s.used_passkey(phone.id, used, day(5)).await.unwrap();
    let after = &s.passkeys(grace.id).await.unwrap()[0];
    assert_eq!((after.key.serialised.as_str(), after.passkey.last_used_at), ("counter 2", Some(day(5))));

    // Someone else's passkey, or another household's view of it, is not found.
    assert!(matches!(s.remove_passkey(home, ada.id, phone.id).await, Err(RepoError::NotFound)));
    assert!(matches!(s.remove_passkey(other, grace.id, phone.id).await, Err(RepoError::NotFound)));
    s.remove_passkey(home, grace.id, laptop.id).await.unwrap();
    // Grace has no password: her last passkey stays.
    assert!(matches!(
        s.remove_passkey(home, grace.id, phone.id).await,
        Err(RepoError::Conflict(Conflict::LastWayIn(id))) if id == phone.id
    ));
    assert_eq!(s.passkeys(grace.id).await.unwrap().len(), 1);
    // Ada has a password: her only passkey may go.
    let key = s.add_passkey(ada.id, passkey("cred-key", "key")).await.unwrap();
    s.remove_passkey(home, ada.id, key.id).await.unwrap();
    assert!(s.passkeys(ada.id).await.unwrap().is_empty());
    // Removing a member removes their passkeys, so the credential may be registered again.
    s.remove_member(home, grace.id, &rec(day(1))).await.unwrap();
    assert!(s.passkeys(grace.id).await.unwrap().is_empty());
    s.add_passkey(ada.id, passkey("cred-phone", "phone")).await.unwrap();
}

async fn a_passkey_sign_up_is_all_or_nothing(ctx: Ctx) {
    let s = &ctx.store;
    let home = household(s, "home").await;
    let ada = s.add_member(person(home, "Ada", Role::Owner)).await.unwrap();
    s.add_passkey(ada.id, passkey("cred-taken", "phone")).await.unwrap();
    s.add_invitation(home, "code-1", Role::Member, None, day(1)).await.unwrap();
    let grace = || NewMember { password_hash: None, ..person(home, "Grace", Role::Member) };

    // A registered credential or a taken name writes nothing: the invitation stays unused.
    let taken = s.redeem_with_passkey("code-1", grace(), passkey("cred-taken", "first")).await;
    assert!(matches!(taken, Err(RepoError::Conflict(Conflict::CredentialRegistered))), "{taken:?}");
    let named = NewMember { password_hash: None, ..person(home, "ADA", Role::Member) };
    assert!(matches!(
        s.redeem_with_passkey("code-1", named, passkey("cred-new", "first")).await,
        Err(RepoError::Conflict(Conflict::NameTaken))
    ));
    assert!(!s.invitation("code-1").await.unwrap().unwrap().used);
    assert_eq!(s.member_by_name(&MemberName::new("Grace").unwrap()).await.unwrap(), None);

    let member = s.redeem_with_passkey("code-1", grace(), passkey("cred-new", "first")).await.unwrap();
    assert_eq!((member.name.as_str(), member.role, member.household), ("Grace", Role::Member, home));
    assert!(s.invitation("code-1").await.unwrap().unwrap().used);
    let (_, hash) = s.member_by_name(&MemberName::new("grace").unwrap()).await.unwrap().unwrap();
    assert_eq!(hash, None, "a passkey member has no password");
    let keys = s.passkeys(member.id).await.unwrap();
    assert_eq!(keys.iter().map(|k| k.key.credential.0.as_str()).collect::<Vec<_>>(), ["cred-new"]);
    // Once used, the code signs no one else up.
    let again = NewMember { password_hash: None, ..person(home, "Hedy", Role::Member) };
    assert!(matches!(
        s.redeem_with_passkey("code-1", again, passkey("cred-3", "first")).await,
        Err(RepoError::Conflict(Conflict::Invitation(InvitationGone::Used)))
    ));
    // A passkey sign-up judges the invitation's maker as a password one does.
    s.add_invitation(home, "code-2", Role::Owner, Some(ada.id), day(1)).await.unwrap();
    s.add_member(person(home, "Bob", Role::Owner)).await.unwrap();
    s.set_role(home, ada.id, Role::Member, &rec(day(1))).await.unwrap();
    let late = NewMember { password_hash: None, ..person(home, "Hedy", Role::Owner) };
    assert!(matches!(
        s.redeem_with_passkey("code-2", late, passkey("cred-3", "first")).await,
        Err(RepoError::Conflict(Conflict::Invitation(InvitationGone::MakerLacksRole(Role::Owner))))
    ));
    assert!(!s.invitation("code-2").await.unwrap().unwrap().used);
}

async fn passkey_ceremonies_are_taken_once_and_expire(ctx: Ctx) {
    let s = &ctx.store;
    let home = household(s, "home").await;
    let ada = s.add_member(person(home, "Ada", Role::Owner)).await.unwrap();
    let ceremony = |purpose, expires_at| Ceremony {
        purpose,
        user: Some(UserHandle("cd".repeat(16))),
        state: CeremonyState(r#"{"challenge":"abc"}"#.into()),
        expires_at,
    };
    let purposes = [
        Purpose::SignUp { invitation: "code hash".into(), name: "Grace".into() },
        Purpose::SignIn { name: "ada".into(), member: Some(ada.id) },
        Purpose::SignIn { name: "nobody".into(), member: None },
        Purpose::Add { member: ada.id, name: "laptop".into() },
    ];
    for (n, purpose) in purposes.iter().enumerate() {
        s.add_ceremony(&format!("id-{n}"), ceremony(purpose.clone(), day(10)), day(9)).await.unwrap();
    }
    let dup = s.add_ceremony("id-0", ceremony(purposes[0].clone(), day(10)), day(9)).await;
    assert!(matches!(dup, Err(RepoError::Conflict(_))), "{dup:?}");
    for (n, purpose) in purposes.iter().enumerate() {
        let taken = s.take_ceremony(&format!("id-{n}"), day(9)).await.unwrap();
        assert_eq!(taken, Some(ceremony(purpose.clone(), day(10))), "round trip of {purpose:?}");
        // Taken once: a second finish finds nothing.
        assert_eq!(s.take_ceremony(&format!("id-{n}"), day(9)).await.unwrap(), None);
    }
    // An expired ceremony is not answered, and is gone.
    s.add_ceremony("late", ceremony(purposes[1].clone(), day(10)), day(9)).await.unwrap();
    assert_eq!(s.take_ceremony("late", day(11)).await.unwrap(), None);
    assert_eq!(s.take_ceremony("late", day(9)).await.unwrap(), None);
    // Keeping a ceremony removes the expired ones.
    s.add_ceremony("stale", ceremony(purposes[1].clone(), day(10)), day(9)).await.unwrap();
    s.add_ceremony("fresh", ceremony(purposes[1].clone(), day(20)), day(12)).await.unwrap();
    assert_eq!(s.take_ceremony("stale", day(9)).await.unwrap(), None, "swept when a later one was kept");
    assert!(s.take_ceremony("fresh", day(12)).await.unwrap().is_some());
    // Two concurrent takes of one ceremony: one winner.
    s.add_ceremony("raced", ceremony(purposes[1].clone(), day(20)), day(12)).await.unwrap();
    let (a, b) = tokio::join!(s.take_ceremony("raced", day(12)), s.take_ceremony("raced", day(12)));
    assert_eq!([a.unwrap().is_some(), b.unwrap().is_some()].iter().filter(|w| **w).count(), 1);
}

async fn sessions_are_found_touched_and_ended(ctx: Ctx) {
    let s = &ctx.store;
    let home = household(s, "home").await;
    let ada = s.add_member(person(home, "Ada", Role::Owner)).await.unwrap();
    let one = s.add_session(ada.id, "one", day(3)).await.unwrap();
    s.add_session(ada.id, "two", day(3)).await.unwrap();
    let found = s.session("one").await.unwrap().unwrap();
    assert_eq!((found.id, found.member, found.last_seen), (one, ada.clone(), day(3)));
    s.touch_session(one, day(5)).await.unwrap();
    assert_eq!(s.session("one").await.unwrap().unwrap().last_seen, day(5));
    s.end_session(one).await.unwrap();
    assert_eq!(s.session("one").await.unwrap(), None);
    assert!(s.session("two").await.unwrap().is_some());
    assert_eq!(s.end_sessions(ada.id).await.unwrap(), 1);
    assert_eq!(s.session("two").await.unwrap(), None);
}

/// A database at the schema before people, with tokens, upgraded: each household with tokens gets a first
/// owner whose write tokens they become.
async fn old_tokens_become_the_first_owners_write_tokens(ctx: Ctx) {
    let url = if ctx.store.backend_name() == "sqlite" {
        testing::fresh_sqlite_url()
    } else {
        testing::fresh_postgres_url().await.unwrap()
    };
    let old = Ctx { store: Store::connect(&url).await.unwrap(), url };
    let s = &old.store;
    testing::migrate_first(s, 4).await.unwrap();
    let home = household(s, "home").await;
    let away = household(s, "HOME").await;
    let empty = household(s, "empty").await;
    let db = Database::connect(&old.url).await.unwrap();
    let backend = db.get_database_backend();
    for (h, hash) in [(home, "old-1"), (home, "old-2"), (away, "old-3")] {
        let sql = if backend == sea_orm::DbBackend::Postgres {
            "INSERT INTO tokens (hash, household_id, member, created_at) VALUES ($1, $2, 'someone', $3)"
        } else {
            "INSERT INTO tokens (hash, household_id, member, created_at) VALUES (?, ?, 'someone', ?)"
        };
        let values: Vec<sea_orm::Value> = vec![hash.into(), h.0.into(), day(1).into()];
        db.execute_raw(sea_orm::Statement::from_sql_and_values(backend, sql, values)).await.unwrap();
    }
    db.close().await.unwrap();
    s.migrate().await.unwrap();

    let (t1, owner) = s.token("old-1").await.unwrap().unwrap();
    assert_eq!((owner.name.as_str(), owner.role, owner.household), ("home owner", Role::Owner, home));
    assert_eq!((t1.scope, t1.name.as_str(), t1.expires_at), (Scope::Write, "someone", None));
    assert_eq!(s.token("old-2").await.unwrap().unwrap().1.id, owner.id);
    let (_, other) = s.token("old-3").await.unwrap().unwrap();
    assert_eq!((other.name.as_str(), other.household), ("HOME owner 2", away), "names stay unique ignoring case");
    assert_eq!(s.first_owner(empty).await.unwrap(), None);
}

/// The ids and total of a search.
async fn found(s: &Store, h: HouseholdId, q: &str, include_gone: bool) -> (Vec<ItemId>, u64) {
    let query = ItemQuery { q: Some(q.to_owned()), include_gone, limit: 50, ..Default::default() };
    let page = InventoryRepo::list(s, h, &query).await.unwrap();
    (ids(&page.items), page.total)
}

/// An item with a fault and a test, in a place.
fn described(name: &str, item_type: &str, profile: &str, fault: &str, test_note: &str) -> NewItem {
    let mut item = new_item(name, item_type, profile, Intent::Keep);
    if !fault.is_empty() {
        item.faults = vec![Fault::new(fault, Severity::Minor).unwrap()];
    }
    if !test_note.is_empty() {
        item.tests_done = vec![TestDone {
            name: "burn-in".into(),
            result: TestResult::Pass,
            value: None,
            at: day(1),
            note: Some(test_note.into()),
        }];
    }
    item
}

/// The search covers the name, the type, the profile, the place's path and the notes; a word matches the start
/// of a word, and a word that starts nothing may carry one typo.
async fn search_finds_prefixes_typos_and_every_indexed_text(ctx: Ctx) {
    let s = &ctx.store;
    let h = household(s, "home").await;
    let other = household(s, "away").await;
    let path = |text: &str| text.split(" / ").map(name).collect::<Vec<_>>();
    let shelf = s.find_or_create(h, &path("Garage / Shelf B2"), &rec(day(1))).await.unwrap().unwrap().path.id();
    let insert = |item: NewItem| async move { InventoryRepo::insert(s, h, item, &rec(day(1))).await.unwrap().id };
    let pi = insert(described("Raspberry Pi 4", "single_board_computer", "Broadcom BCM2711", "", "")).await;
    let kestrel = insert(described("Kestrel weather meter", "meter", "anemometer", "", "")).await;
    let shelved = insert(NewItem { place_id: Some(shelf), ..described("Drill", "tool", "cordless", "", "") }).await;
    let cracked = insert(described("Monitor", "monitor", "24 inch", "cracked bezel corner", "")).await;
    let tested = insert(described("Battery", "lithium_cell", "18650", "", "held 3350 mAh overnight")).await;
    InventoryRepo::insert(s, other, described("Raspberry Pi 5", "single_board_computer", "", "", ""), &rec(day(1)))
        .await
        .unwrap();

    assert_eq!(found(s, h, "rasp", false).await, (vec![pi], 1), "a prefix");
    assert_eq!(found(s, h, "RASPB pi", false).await, (vec![pi], 1));
    assert_eq!(found(s, h, "raspbery", false).await, (vec![pi], 1), "a letter left out");
    assert_eq!(found(s, h, "kestrl", false).await, (vec![kestrel], 1), "a letter left out");
    assert_eq!(found(s, h, "kestrek", false).await, (vec![kestrel], 1), "a letter changed");
    assert_eq!(found(s, h, "ksetrel", false).await, (vec![kestrel], 1), "two letters swapped");
    assert_eq!(found(s, h, "kesttrel", false).await, (vec![kestrel], 1), "a letter added");
    assert_eq!(found(s, h, "raspbery bcm2711", false).await, (vec![pi], 1), "a typo beside a right word");
    assert_eq!(found(s, h, "rsapbery", false).await, (vec![], 0), "two typos are too many");
    assert_eq!(found(s, h, "kestrl drill", false).await, (vec![], 0), "every word must match");
    assert_eq!(found(s, h, "board", false).await, (vec![pi], 1), "the type");
    assert_eq!(found(s, h, "garage", false).await, (vec![shelved], 1), "the place's path");
    assert_eq!(found(s, h, "shelf b2", false).await, (vec![shelved], 1));
    assert_eq!(found(s, h, "bezel", false).await, (vec![cracked], 1), "a fault");
    assert_eq!(found(s, h, "overnight", false).await, (vec![tested], 1), "a test's note");
    assert_eq!(found(s, h, "burn", false).await, (vec![tested], 1), "a test's name");
    // Another household's words are not ours, typos included.
    assert_eq!(found(s, other, "kestrl", false).await, (vec![], 0));
    assert_eq!(found(s, other, "rasp", false).await.1, 1);
}

/// Best matches first: a word in the name before the type, the profile and the notes; level matches by id.
async fn search_ranks_by_relevance_then_id(ctx: Ctx) {
    let s = &ctx.store;
    let h = household(s, "home").await;
    let insert = |item: NewItem| async move { InventoryRepo::insert(s, h, item, &rec(day(1))).await.unwrap().id };
    let in_notes = insert(described("Grey box one", "part", "plain metal", "servo horn missing", "")).await;
    let in_profile = insert(described("Grey box two", "part", "servo metal", "", "")).await;
    let in_name = insert(described("Servo box one", "part", "plain metal", "", "")).await;
    let in_type = insert(described("Grey box three", "servo", "plain metal", "", "")).await;
    let level = insert(described("Servo box one", "part", "plain metal", "", "")).await;
    insert(described("Unrelated", "part", "plain metal", "", "")).await;
    let (order, total) = found(s, h, "servo", false).await;
    assert_eq!(total, 5);
    assert_eq!(order, vec![in_name, level, in_type, in_profile, in_notes]);
    // A typo finds the same, in the same order.
    assert_eq!(found(s, h, "sevro", false).await.0, order);
}

/// The index follows creation, edits, moves and renames of places, gone items, imports and re-imports, and
/// rows deleted under the store.
async fn the_search_index_follows_every_write(ctx: Ctx) {
    let s = &ctx.store;
    let h = household(s, "home").await;
    let path = |text: &str| text.split(" / ").map(name).collect::<Vec<_>>();
    let attic = s.find_or_create(h, &path("Attic"), &rec(day(1))).await.unwrap().unwrap().path.id();
    let mut item =
        InventoryRepo::insert(s, h, described("Soldering iron", "tool", "", "", ""), &rec(day(1))).await.unwrap();
    assert_eq!(found(s, h, "solder", false).await, (vec![item.id], 1));

    // An edit: the old words go, the new ones come.
    item.name = ItemName::new("Hot air station").unwrap();
    item.faults = vec![Fault::new("nozzle bent", Severity::Minor).unwrap()];
    item.place_id = Some(attic);
    item = update(s, h, &item).await.unwrap();
    assert_eq!(found(s, h, "solder", false).await.1, 0);
    assert_eq!(found(s, h, "hot air", false).await, (vec![item.id], 1));
    assert_eq!(found(s, h, "nozzle", false).await, (vec![item.id], 1));
    assert_eq!(found(s, h, "attic", false).await, (vec![item.id], 1));

    // A renamed place and a place moved under another: every item below is found by its new path.
    let mut place = PlaceRepo::get(s, h, attic).await.unwrap();
    place.name = name("Loft");
    PlaceRepo::update(s, h, &place, &rec(day(1))).await.unwrap();
    assert_eq!(found(s, h, "attic", false).await.1, 0);
    assert_eq!(found(s, h, "loft", false).await, (vec![item.id], 1));
    let house = new_place(s, h, "House", None).await.unwrap();
    place.parent_id = Some(house);
    PlaceRepo::update(s, h, &place, &rec(day(1))).await.unwrap();
    assert_eq!(found(s, h, "house loft", false).await, (vec![item.id], 1));

    // Gone: out of the search unless history is asked for, and the gone note is found.
    item.gone = Some(Gone { reason: GoneReason::Given, at: day(2), note: Some("to the hackerspace".into()) });
    item = update(s, h, &item).await.unwrap();
    assert_eq!(found(s, h, "hot", false).await.1, 0);
    assert_eq!(found(s, h, "hot", true).await, (vec![item.id], 1));
    assert_eq!(found(s, h, "hackerspace", true).await, (vec![item.id], 1));

    // A deleted place takes its path out of the index of the gone items it held.
    PlaceRepo::delete(s, h, attic, &rec(day(1))).await.unwrap();
    assert_eq!(found(s, h, "loft", true).await.1, 0);
    assert_eq!(found(s, h, "hot", true).await.1, 1);

    // An import, then a re-import that renames.
    let ids = import(s, h, vec![imported("Oscilloscope", Some("HB-9"))], day(3)).await.unwrap().ids;
    assert_eq!(found(s, h, "oscillo", false).await, (ids.clone(), 1));
    assert_eq!(found(s, h, "homebox", false).await, (ids.clone(), 1));
    let mut again = imported("Logic analyser", Some("HB-9"));
    again.location = Some("Bench".into());
    import(s, h, vec![again], day(4)).await.unwrap();
    assert_eq!(found(s, h, "oscillo", false).await.1, 0);
    assert_eq!(found(s, h, "logic bench", false).await, (ids.clone(), 1));
    // The re-import of a gone item keeps its gone note searchable.
    let gone_ref = import(s, h, vec![imported("Bench supply", Some("HB-10"))], day(4)).await.unwrap().ids[0];
    let mut supply = InventoryRepo::get(s, h, gone_ref).await.unwrap();
    supply.gone = Some(Gone { reason: GoneReason::Sold, at: day(5), note: Some("marketplace".into()) });
    update(s, h, &supply).await.unwrap();
    import(s, h, vec![imported("Bench supply 30V", Some("HB-10"))], day(6)).await.unwrap();
    assert_eq!(found(s, h, "marketplace 30v", true).await, (vec![gone_ref], 1));

    // A row deleted under the store leaves the index with it.
    let db = Database::connect(ctx.url.as_str()).await.unwrap();
    db.execute_unprepared(&format!("DELETE FROM items WHERE id = {}", ids[0].0)).await.unwrap();
    db.close().await.unwrap();
    assert_eq!(found(s, h, "logic", false).await.1, 0);
}

/// The one number a PostgreSQL query answers.
async fn pg_count(db: &sea_orm::DatabaseConnection, sql: impl Into<String>) -> i64 {
    let row = db.query_one_raw(sea_orm::Statement::from_string(sea_orm::DbBackend::Postgres, sql)).await;
    row.unwrap().unwrap().try_get_by_index::<i64>(0).unwrap()
}

/// The foreign keys, triggers and indexes of a PostgreSQL table, as their definitions: what a bulk load that sets them
/// aside must leave as it found.
async fn pg_guards(db: &sea_orm::DatabaseConnection, table: &str) -> Vec<String> {
    let rows = db
        .query_all_raw(sea_orm::Statement::from_string(
            sea_orm::DbBackend::Postgres,
            format!(
                "SELECT conname || ' ' || pg_get_constraintdef(oid) AS def FROM pg_constraint \
                 WHERE conrelid = '{table}'::regclass AND contype = 'f' \
                 UNION ALL SELECT pg_get_triggerdef(oid) FROM pg_trigger \
                 WHERE tgrelid = '{table}'::regclass AND NOT tgisinternal \
                 UNION ALL SELECT pg_get_indexdef(indexrelid) FROM pg_index WHERE indrelid = '{table}'::regclass \
                 ORDER BY 1"
            ),
        ))
        .await
        .unwrap();
    rows.iter().map(|r| r.try_get::<String>("", "def").unwrap()).collect()
}

/// A large import (past the size from which PostgreSQL builds the index's entries after the rows are in) is
/// searched like items written one by one: its texts, prefixes, typos, places and notes, ranked the same way,
/// whether the store made a row's index itself or left it to the database (words beyond ASCII, words read as
/// numbers).
async fn search_finds_what_a_large_import_wrote(ctx: Ctx) {
    let s = &ctx.store;
    let h = household(s, "home").await;
    let other = household(s, "away").await;
    let before =
        InventoryRepo::insert(s, h, described("Kestrel kite", "toy", "red", "", ""), &rec(day(1))).await.unwrap();
    let mut items: Vec<NewItem> = (0..2_050)
        .map(|n| {
            let mut item = described(&format!("Widget {n}"), "part", &format!("batch SN{n:06} blue"), "", "");
            item.location = Some(format!("Room {} / Shelf {}", n % 10, n % 7));
            item
        })
        .collect();
    items[17] = described("Kestrel weather meter", "meter", "anemometer 1e5 Pa", "", "");
    items[1242] = described("Über-Kabel", "cable", "10µF nothing", "frayed end", "");
    items[1999] = NewItem { location: Some("Attic / Box 3".into()), ..described("Lamp", "light", "", "", "") };
    items[2_001] = described("Servo", "kestrel_part", "", "", "held 12E5e overnight");
    items[3] = described("USB-C hub 3.3V", "usb_hub", "A--b  ABC123def e5 E5 x_y 0", "", "7-port");
    items[3].location = Some("Room 3 / Shelf 3".into());
    let revision = InventoryRepo::revision(s, h).await.unwrap();
    let guards = if s.backend_name() == "postgres" {
        let db = Database::connect(ctx.url.as_str()).await.unwrap();
        let guards = pg_guards(&db, "items").await;
        assert!(guards.len() >= 5, "{guards:?}");
        guards
    } else {
        Vec::new()
    };
    let ids = import(s, h, items, day(2)).await.unwrap().ids;
    assert_eq!(ids.len(), 2_050);
    assert!(InventoryRepo::revision(s, h).await.unwrap() > revision);
    let mut distinct: Vec<ItemId> = ids.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), 2_050);
    if s.backend_name() == "postgres" {
        let db = Database::connect(ctx.url.as_str()).await.unwrap();
        // The indexes, foreign keys and triggers set aside for the load are back as they were, and check again.
        assert_eq!(pg_guards(&db, "items").await, guards);
        let refused = db
            .execute_unprepared(&format!(
                "INSERT INTO items (household_id, name, item_type, profile, condition, intent, availability, \
                 measurements, faults, tests_done, accessories, components, place_id, created_at, updated_at, \
                 version) SELECT household_id, name, item_type, profile, condition, intent, availability, \
                 measurements, faults, tests_done, accessories, components, 999999, created_at, updated_at, \
                 version FROM items WHERE id = {}",
                ids[0].0
            ))
            .await;
        assert!(refused.is_err(), "a place that does not exist is refused");
        // The index the store made for a row is the one the database's own expression makes of its texts.
        let words = |c: &str| format!("to_tsvector('simple', regexp_replace({c}, '[^[:alnum:]]+', ' ', 'g'))");
        let differing = pg_count(
            &db,
            format!(
                "SELECT COUNT(*) FROM items WHERE search IS DISTINCT FROM (setweight({}, 'A') || \
                 setweight({}, 'B') || setweight({}, 'C') || setweight({}, 'C') || setweight({}, 'D'))",
                words("name"),
                words("item_type"),
                words("profile"),
                words("search_place"),
                words("search_notes")
            ),
        )
        .await;
        assert_eq!(differing, 0);
        // The upkeep after the import gave the planner statistics of the items' columns.
        let analyzed = pg_count(
            &db,
            "SELECT COUNT(*) FROM pg_stats WHERE tablename = 'items' AND attname IN ('household_id', 'search')",
        )
        .await;
        assert_eq!(analyzed, 2);
        // And none of the columns no query filters on (m0012_item_statistics).
        let unfiltered = pg_count(
            &db,
            "SELECT COUNT(*) FROM pg_stats WHERE tablename = 'items' AND attname IN ('name', 'measurements', 'version')",
        )
        .await;
        assert_eq!(unfiltered, 0);
        db.close().await.unwrap();
    }
    assert_eq!(found(s, h, "abc123def 3v", false).await, (vec![ids[3]], 1));

    assert_eq!(found(s, h, "widget", false).await.1, 2_045);
    assert_eq!(found(s, h, "sn001241", false).await, (vec![ids[1241]], 1));
    assert_eq!(found(s, h, "widg 1234", false).await, (vec![ids[1234]], 1));
    assert_eq!(found(s, h, "attic box", false).await, (vec![ids[1999]], 1));
    assert_eq!(found(s, h, "kabel", false).await, (vec![ids[1242]], 1));
    assert_eq!(found(s, h, "über frayed", false).await, (vec![ids[1242]], 1));
    assert_eq!(found(s, h, "1e5", false).await, (vec![ids[17]], 1));
    assert_eq!(found(s, h, "overnight", false).await, (vec![ids[2_001]], 1));
    // Ranked: the names first (the one written before the import by id), then the type.
    assert_eq!(found(s, h, "kestrel", false).await, (vec![before.id, ids[17], ids[2_001]], 3));
    // Typos, in words the store indexed and in words the database did.
    assert_eq!(found(s, h, "anemometr", false).await, (vec![ids[17]], 1));
    assert_eq!(found(s, h, "frayde", false).await, (vec![ids[1242]], 1));
    assert_eq!(found(s, h, "overnihgt", false).await, (vec![ids[2_001]], 1));
    assert_eq!(found(s, h, "widgte", false).await.1, 2_045);
    assert_eq!(found(s, other, "widgte", false).await.1, 0);
    // The index keeps up after the import.
    let mut lamp = InventoryRepo::get(s, h, ids[1999]).await.unwrap();
    lamp.name = ItemName::new("Desk lantern").unwrap();
    update(s, h, &lamp).await.unwrap();
    assert_eq!(found(s, h, "lantren", false).await, (vec![ids[1999]], 1));
    assert_eq!(found(s, h, "lamp", false).await.1, 0);
}

/// A typo is resolved against the words of the index as it is now: words written by every kind of write
/// are found, and a word that went with an edit, a deletion or a re-import finds nothing.
async fn typos_follow_writes_imports_and_gone_items(ctx: Ctx) {
    let s = &ctx.store;
    let h = household(s, "home").await;
    let mut item =
        InventoryRepo::insert(s, h, described("Soldering iron", "tool", "", "", ""), &rec(day(1))).await.unwrap();
    assert_eq!(found(s, h, "soldring", false).await, (vec![item.id], 1));
    item.name = ItemName::new("Hot air station").unwrap();
    item = update(s, h, &item).await.unwrap();
    assert_eq!(found(s, h, "soldring", false).await, (vec![], 0));
    assert_eq!(found(s, h, "statoin", false).await, (vec![item.id], 1));

    // Gone: found by a typo only when history is asked for, by its gone note too.
    item.gone = Some(Gone { reason: GoneReason::Given, at: day(2), note: Some("to the hackerspace".into()) });
    item = update(s, h, &item).await.unwrap();
    assert_eq!(found(s, h, "statoin", false).await, (vec![], 0));
    assert_eq!(found(s, h, "statoin", true).await, (vec![item.id], 1));
    assert_eq!(found(s, h, "hackrspace", true).await, (vec![item.id], 1));

    // Imported, re-imported under another name, deleted under the store.
    let ids = import(s, h, vec![imported("Oscilloscope", Some("HB-9"))], day(3)).await.unwrap().ids;
    assert_eq!(found(s, h, "oscilloscpe", false).await, (ids.clone(), 1));
    import(s, h, vec![imported("Logic analyser", Some("HB-9"))], day(4)).await.unwrap();
    assert_eq!(found(s, h, "oscilloscpe", false).await, (vec![], 0));
    assert_eq!(found(s, h, "analyer", false).await, (ids.clone(), 1));
    let db = Database::connect(ctx.url.as_str()).await.unwrap();
    db.execute_unprepared(&format!("DELETE FROM items WHERE id = {}", ids[0].0)).await.unwrap();
    db.close().await.unwrap();
    assert_eq!(found(s, h, "analyer", false).await, (vec![], 0));
}

/// A search pages in relevance order then id, by offset and by cursor alike: each item once. A cursor is the
/// last item of a page: the next page holds the items after it in the order. A cursor whose item no longer
/// matches ends the walk.
async fn search_pages_walk_the_relevance_order_once(ctx: Ctx) {
    let s = &ctx.store;
    let h = household(s, "home").await;
    // Three levels of relevance, seven items each, interleaved by id.
    let mut items = Vec::new();
    for n in 0..7 {
        items.push(described(&format!("Relay {n}"), "part", "board", "", ""));
        items.push(described(&format!("Board {n}"), "part", "relay board", "", ""));
        items.push(described(&format!("Board {n}"), "part", "plain", &format!("relay {n} stuck"), ""));
    }
    import(s, h, items, day(1)).await.unwrap();
    let page = |offset: u64, after: Option<ItemId>| async move {
        let q = ItemQuery { q: Some("relay".into()), limit: 4, offset, after, ..Default::default() };
        let page = InventoryRepo::list(s, h, &q).await.unwrap();
        (ids(&page.items), page.total, page.more)
    };
    let (everything, total, _) = {
        let q = ItemQuery { q: Some("relay".into()), limit: 50, ..Default::default() };
        let page = InventoryRepo::list(s, h, &q).await.unwrap();
        (page.items, page.total, page.more)
    };
    assert_eq!(total, 21);
    let names: Vec<&str> = everything.iter().map(|i| i.name.as_str()).collect();
    assert!(names[..7].iter().all(|n| n.starts_with("Relay")), "{names:?}");
    let everything = ids(&everything);
    // Ties by id within each level of relevance.
    for level in everything.chunks(7) {
        assert!(level.windows(2).all(|w| w[0] < w[1]), "{everything:?}");
    }

    let mut by_offset = Vec::new();
    for offset in (0..21).step_by(4) {
        let (ids, total, _) = page(offset, None).await;
        assert_eq!(total, 21);
        by_offset.extend(ids);
    }
    assert_eq!(by_offset, everything);

    let (mut by_cursor, _, mut more) = page(0, None).await;
    while more {
        let (ids, _, m) = page(0, by_cursor.last().copied()).await;
        assert!(!ids.is_empty());
        by_cursor.extend(ids);
        more = m;
    }
    assert_eq!(by_cursor, everything);

    // A write between two pages moves nothing of the walk.
    let (first, _, _) = page(0, None).await;
    InventoryRepo::insert(s, h, described("Unrelated", "part", "plain", "", ""), &rec(day(2))).await.unwrap();
    let (second, total, _) = page(0, first.last().copied()).await;
    assert_eq!(total, 21);
    assert_eq!(second, everything[4..8]);

    // The cursor's item edited out of the search: the walk ends.
    let mut cursor = InventoryRepo::get(s, h, everything[7]).await.unwrap();
    cursor.name = ItemName::new("Contactor").unwrap();
    cursor.profile = "plain".into();
    cursor.faults.clear();
    update(s, h, &cursor).await.unwrap();
    assert_eq!(page(0, Some(everything[7])).await, (vec![], 20, false));
}

/// Reads of the revision are shared by the requests that arrive while one runs; a read asked for after a write
/// committed still sees that write, however many other reads run meanwhile.
async fn a_revision_read_after_a_write_sees_it_among_concurrent_reads(ctx: Ctx) {
    let s = &ctx.store;
    let h = household(s, "home").await;
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let readers: Vec<_> = (0..4)
        .map(|_| {
            let (s, stop) = (s.clone(), std::sync::Arc::clone(&stop));
            tokio::spawn(async move {
                let mut last = 0;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let now = InventoryRepo::revision(&s, h).await.unwrap();
                    assert!(now >= last, "a revision never goes back");
                    last = now;
                }
            })
        })
        .collect();
    let writers: Vec<_> = (0..3)
        .map(|w| {
            let s = s.clone();
            tokio::spawn(async move {
                for n in 0..10 {
                    let before = InventoryRepo::revision(&s, h).await.unwrap();
                    let item = new_item(&format!("Part {w}-{n}"), "part", "", Intent::Keep);
                    InventoryRepo::insert(&s, h, item, &rec(day(1))).await.unwrap();
                    let after = InventoryRepo::revision(&s, h).await.unwrap();
                    assert!(after > before, "writer {w}, write {n}: {after} after, {before} before");
                }
            })
        })
        .collect();
    for writer in writers {
        writer.await.unwrap();
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for reader in readers {
        reader.await.unwrap();
    }
    assert_eq!(InventoryRepo::list(s, h, &ItemQuery::default()).await.unwrap().total, 30);
}

/// The total of a listing is kept while the inventory is unchanged, and is right after every kind of write:
/// inserts, edits, gone items, imports, place moves, and writes by another process on the same database.
async fn totals_follow_every_write(ctx: Ctx) {
    let s = &ctx.store;
    let h = household(s, "home").await;
    let other = household(s, "away").await;
    let total = |query: ItemQuery| async move {
        let page = InventoryRepo::list(s, h, &ItemQuery { limit: 2, ..query }).await.unwrap();
        page.total
    };
    let sell = || ItemQuery { intent: Some(Intent::Sell), ..Default::default() };
    let search = || ItemQuery { q: Some("cell".into()), ..Default::default() };
    assert_eq!((total(ItemQuery::default()).await, total(sell()).await, total(search()).await), (0, 0, 0));

    let mut a =
        InventoryRepo::insert(s, h, new_item("Cell A", "lithium_cell", "", Intent::Sell), &rec(day(1))).await.unwrap();
    InventoryRepo::insert(s, h, new_item("Cell B", "lithium_cell", "", Intent::Keep), &rec(day(1))).await.unwrap();
    assert_eq!((total(ItemQuery::default()).await, total(sell()).await, total(search()).await), (2, 1, 2));
    // Asked again, unchanged: the same totals (kept), and the pages still page.
    assert_eq!((total(ItemQuery::default()).await, total(sell()).await, total(search()).await), (2, 1, 2));
    let second = ItemQuery { limit: 1, offset: 1, ..Default::default() };
    assert_eq!(InventoryRepo::list(s, h, &second).await.unwrap().items.len(), 1);

    a.intent = Intent::Keep;
    a = update(s, h, &a).await.unwrap();
    assert_eq!((total(ItemQuery::default()).await, total(sell()).await), (2, 0));
    a.gone = Some(Gone { reason: GoneReason::Recycled, at: day(2), note: None });
    update(s, h, &a).await.unwrap();
    assert_eq!((total(ItemQuery::default()).await, total(search()).await), (1, 1));
    assert_eq!(total(ItemQuery { include_gone: true, ..Default::default() }).await, 2);

    import(s, h, (0..3).map(|n| imported(&format!("Cell {n}"), None)).collect(), day(3)).await.unwrap();
    assert_eq!((total(ItemQuery::default()).await, total(search()).await), (4, 4));
    // Another household's writes move nothing here.
    InventoryRepo::insert(s, other, new_item("Cell X", "lithium_cell", "", Intent::Sell), &rec(day(3))).await.unwrap();
    assert_eq!(total(ItemQuery::default()).await, 4);

    // A place moved into another changes what is within it, though no item was written.
    let garage = new_place(s, h, "Garage", None).await.unwrap();
    let shelf = new_place(s, h, "Shelf", None).await.unwrap();
    let mut b = InventoryRepo::list(s, h, &ItemQuery { limit: 1, ..Default::default() }).await.unwrap().items.remove(0);
    b.place_id = Some(shelf);
    update(s, h, &b).await.unwrap();
    let within = || ItemQuery { place: Some(PlaceFilter { place: garage, within: true }), ..Default::default() };
    assert_eq!(total(within()).await, 0);
    let mut moved = PlaceRepo::get(s, h, shelf).await.unwrap();
    moved.parent_id = Some(garage);
    PlaceRepo::update(s, h, &moved, &rec(day(1))).await.unwrap();
    assert_eq!(total(within()).await, 1);

    // Another process on the same database: its writes are seen at once.
    let elsewhere = Store::connect(&ctx.url).await.unwrap();
    InventoryRepo::insert(&elsewhere, h, new_item("Cell far", "lithium_cell", "", Intent::Sell), &rec(day(4)))
        .await
        .unwrap();
    assert_eq!((total(ItemQuery::default()).await, total(search()).await, total(sell()).await), (5, 5, 1));
}

fn event(object: i64, action: &str, at: u32, member: Option<Member>) -> Event {
    Event {
        at: day(at),
        member: member.map(|m| m.id),
        action: Action::parse(action).unwrap(),
        kind: ObjectKind::Item,
        object,
        changes: vec![FieldChange::new(Field::Name, Some("a".into()), None)],
        version_after: Some(i64::from(at)),
    }
}

async fn events_are_kept_per_object_and_paged_newest_first(ctx: Ctx) {
    let s = &ctx.store;
    let h = household(s, "home").await;
    let other = household(s, "other").await;
    let owner = s
        .add_member(NewMember {
            household: h,
            name: MemberName::new("Ann").unwrap(),
            role: Role::Owner,
            password_hash: None,
            created_at: day(1),
        })
        .await
        .unwrap();
    let mut ids = Vec::new();
    for (object, action, at) in [(1, "create", 1), (2, "create", 2), (1, "patch", 3), (1, "undo", 4)] {
        let e = event(object, action, at, (object == 1).then(|| owner.clone()));
        ids.push(testing::append(s, h, &e).await.unwrap());
    }
    let foreign = testing::append(s, other, &event(1, "create", 5, None)).await.unwrap();
    assert!(ids.windows(2).all(|w| w[0] < w[1]));

    let of_one = s.of_object(h, ObjectKind::Item, 1).await.unwrap();
    assert_eq!(of_one.iter().map(|(id, _)| *id).collect::<Vec<_>>(), vec![ids[0], ids[2], ids[3]]);
    assert_eq!(of_one[1].1, event(1, "patch", 3, Some(owner.clone())));
    assert!(s.of_object(h, ObjectKind::Place, 1).await.unwrap().is_empty());

    let page = |limit, before| async move { s.activity(h, limit, before).await.unwrap() };
    let first: Vec<EventId> = page(3, None).await.into_iter().map(|(id, _)| id).collect();
    assert_eq!(first, vec![ids[3], ids[2], ids[1]]);
    let rest: Vec<EventId> = page(3, Some(ids[1])).await.into_iter().map(|(id, _)| id).collect();
    assert_eq!(rest, vec![ids[0]]);

    assert_eq!(EventRepo::get(s, h, ids[1]).await.unwrap(), event(2, "create", 2, None));
    assert!(matches!(EventRepo::get(s, h, foreign).await, Err(RepoError::NotFound)));
    assert!(EventRepo::get(s, other, foreign).await.is_ok());
}

async fn many_events_are_appended_in_order_all_or_nothing(ctx: Ctx) {
    let s = &ctx.store;
    let h = household(s, "home").await;
    let other = household(s, "other").await;
    testing::append_all(s, h, &[]).await.unwrap();
    assert!(s.activity(h, 10, None).await.unwrap().is_empty());

    // More than one statement's worth, in the order given.
    let many: Vec<Event> = (0..2345).map(|n| event(n, "import", 1 + (n % 20) as u32, None)).collect();
    let postgres = s.backend_name() == "postgres";
    let db = Database::connect(ctx.url.as_str()).await.unwrap();
    let guards = if postgres { pg_guards(&db, "events").await } else { Vec::new() };
    testing::append_all(s, h, &many).await.unwrap();
    if postgres {
        // The foreign key set aside for so many events into an empty history is back, and checks again.
        assert_eq!(pg_guards(&db, "events").await, guards);
        assert!(!guards.is_empty());
        assert!(testing::append_all(s, HouseholdId(999_999), &many[..1]).await.is_err());
    }
    let feed = s.activity(h, 5000, None).await.unwrap();
    assert_eq!(feed.len(), 2345);
    let objects: Vec<i64> = feed.iter().rev().map(|(_, e)| e.object).collect();
    assert_eq!(objects, (0..2345).collect::<Vec<_>>(), "ids grow in the order given");
    assert_eq!(feed.last().unwrap().1, many[0]);
    assert_eq!(feed[0].1, many[2344]);
    assert!(s.activity(other, 10, None).await.unwrap().is_empty());

    // A row refused in the second statement leaves none of the batch.
    db.execute_unprepared("CREATE UNIQUE INDEX test_unique_event_object ON events (household_id, object_id)")
        .await
        .unwrap();
    let mut batch: Vec<Event> = (10_000..11_500).map(|n| event(n, "import", 2, None)).collect();
    batch.push(event(10_003, "import", 2, None));
    assert!(matches!(testing::append_all(s, other, &batch).await, Err(RepoError::Unexpected(_))));
    assert!(s.activity(other, 10, None).await.unwrap().is_empty());
    db.execute_unprepared("DROP INDEX test_unique_event_object").await.unwrap();
    db.close().await.unwrap();
}

async fn imports_answer_the_places_they_made_and_what_they_changed(ctx: Ctx) {
    let s = &ctx.store;
    let h = household(s, "home").await;
    let name = |n: &str| PlaceName::new(n).unwrap();
    // A path partly there: only the missing places are answered as made.
    let garage = s.find_or_create(h, &[name("Garage")], &rec(day(1))).await.unwrap().unwrap();
    assert_eq!(garage.created.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(), ["Garage"]);
    let shelf = s.find_or_create(h, &[name("garage"), name("Shelf B2")], &rec(day(1))).await.unwrap().unwrap();
    assert_eq!(shelf.path.joined(), "Garage / Shelf B2");
    assert_eq!(
        shelf.created.iter().map(|p| (p.name.as_str(), p.parent_id)).collect::<Vec<_>>(),
        [("Shelf B2", Some(garage.path.id()))]
    );
    assert!(
        s.find_or_create(h, &[name("GARAGE"), name("shelf b2")], &rec(day(1)))
            .await
            .unwrap()
            .unwrap()
            .created
            .is_empty()
    );

    // An import makes each place once, however many rows name it, and answers them.
    let mut lamp = imported("Lamp", Some("HB-1"));
    lamp.location = Some("Garage / Shelf B2 / Box 4".into());
    let mut cable = imported("Cable", Some("HB-2"));
    cable.location = Some("Attic".into());
    let mut fan = imported("Fan", None);
    fan.location = Some("attic".into());
    let first = import(s, h, vec![lamp, cable, fan], day(2)).await.unwrap();
    assert_eq!(first.ids.len(), 3);
    assert!(first.updated.is_empty(), "nothing held a reference yet");
    let made: Vec<(&str, Option<PlaceId>)> = first.places.iter().map(|p| (p.name.as_str(), p.parent_id)).collect();
    assert_eq!(made, [("Box 4", Some(shelf.path.id())), ("Attic", None)]);

    // A re-import answers what each update changed, and the version it left.
    let mut renamed = imported("Desk lamp", Some("HB-1"));
    renamed.condition = Condition::Fair;
    renamed.location = Some("Garage / Shelf B2 / Box 4".into());
    let mut same = imported("Cable", Some("HB-2"));
    same.location = Some("Attic".into());
    let second = import(s, h, vec![renamed, same, imported("Mouse", Some("HB-3"))], day(3)).await.unwrap();
    assert!(second.places.is_empty());
    assert_eq!(second.ids[..2], first.ids[..2]);
    type Change<'a> = (&'a str, Option<&'a str>, Option<&'a str>);
    let shown: Vec<(ItemId, Vec<Change<'_>>, i64)> = second
        .updated
        .iter()
        .map(|u| {
            let changes =
                u.changes.iter().map(|c| (c.field.as_str(), c.before.as_deref(), c.after.as_deref())).collect();
            (u.id, changes, u.version)
        })
        .collect();
    assert_eq!(
        shown,
        [
            (
                first.ids[0],
                vec![("name", Some("Lamp"), Some("Desk lamp")), ("condition", Some("good"), Some("fair"))],
                2
            ),
            (first.ids[1], vec![], 2),
        ]
    );
    assert_eq!(InventoryRepo::get(s, h, first.ids[0]).await.unwrap().version, 2);

    // A reference repeated within a re-import is two updates of one item, each against what the one before left.
    let twice = vec![imported("Desk lamp 2", Some("HB-1")), imported("Desk lamp 3", Some("HB-1"))];
    let third = import(s, h, twice, day(4)).await.unwrap();
    let names: Vec<(Option<&str>, Option<&str>, i64)> = third
        .updated
        .iter()
        .map(|u| {
            let name = u.changes.iter().find(|c| c.field == Field::Name).unwrap();
            (name.before.as_deref(), name.after.as_deref(), u.version)
        })
        .collect();
    assert_eq!(names, [(Some("Desk lamp"), Some("Desk lamp 2"), 3), (Some("Desk lamp 2"), Some("Desk lamp 3"), 4)]);
}

/// Makes every write of an event fail (a trigger the adapter does not know of), or stops that.
async fn refuse_events(db: &sea_orm::DatabaseConnection, refuse: bool) {
    let postgres = db.get_database_backend() == sea_orm::DbBackend::Postgres;
    let statements: &[&str] = match (postgres, refuse) {
        (false, true) => &[
            "CREATE TRIGGER test_refuse_events BEFORE INSERT ON events BEGIN SELECT RAISE(ABORT, 'history refused'); END",
        ],
        (false, false) => &["DROP TRIGGER test_refuse_events"],
        (true, true) => &[
            "CREATE FUNCTION test_refuse_events() RETURNS trigger LANGUAGE plpgsql AS \
             $$ BEGIN RAISE EXCEPTION 'history refused'; END $$",
            "CREATE TRIGGER test_refuse_events BEFORE INSERT ON events FOR EACH ROW EXECUTE FUNCTION test_refuse_events()",
        ],
        (true, false) => &["DROP TRIGGER test_refuse_events ON events", "DROP FUNCTION test_refuse_events()"],
    };
    for sql in statements {
        db.execute_unprepared(sql).await.unwrap();
    }
}

/// An import's history as `Exchange` makes it: one `import` per row, naming the item it became.
fn import_history(written: &ImportWritten) -> Vec<Event> {
    written
        .ids
        .iter()
        .map(|id| Event {
            at: day(2),
            member: None,
            action: Action::Import,
            kind: ObjectKind::Item,
            object: id.0,
            changes: vec![FieldChange::new(Field::Name, None, Some(format!("item {id}")))],
            version_after: Some(1),
        })
        .collect()
}

async fn an_import_and_its_history_commit_together(ctx: Ctx) {
    let s = &ctx.store;
    let h = household(s, "home").await;
    let db = Database::connect(ctx.url.as_str()).await.unwrap();
    // A small import (row by row on both backends) and a large one (PostgreSQL's `COPY` with the checks of both
    // tables set aside), each refused by its history's write: neither leaves an item or an event.
    for rows in [3usize, 2_500] {
        let items: Vec<NewItem> = (0..rows).map(|n| imported(&format!("cell {n}"), Some(&format!("C-{n}")))).collect();
        refuse_events(&db, true).await;
        let refused = InventoryRepo::import(s, h, items.clone(), day(2), &import_history).await;
        refuse_events(&db, false).await;
        assert!(matches!(refused, Err(RepoError::Unexpected(_))), "{rows} rows: {refused:?}");
        assert_eq!(count_items(s, h).await, 0, "{rows} rows: no item without its history");
        assert!(s.activity(h, 10, None).await.unwrap().is_empty());
    }
    // Written, the history is there with the items, in the order made, naming the ids the store gave.
    let items: Vec<NewItem> = (0..2_500).map(|n| imported(&format!("cell {n}"), Some(&format!("C-{n}")))).collect();
    let written = InventoryRepo::import(s, h, items, day(2), &import_history).await.unwrap();
    assert_eq!(count_items(s, h).await, 2_500);
    let feed = s.activity(h, 200, None).await.unwrap();
    let newest: Vec<i64> = feed.iter().map(|(_, e)| e.object).take(3).collect();
    assert_eq!(newest, written.ids.iter().rev().take(3).map(|i| i.0).collect::<Vec<_>>());
    assert_eq!(s.of_object(h, ObjectKind::Item, written.ids[0].0).await.unwrap().len(), 1);
    // A re-import refused by its history leaves the items it would have updated as they were.
    refuse_events(&db, true).await;
    let again = InventoryRepo::import(s, h, vec![imported("renamed", Some("C-0"))], day(3), &import_history).await;
    refuse_events(&db, false).await;
    assert!(again.is_err());
    let kept = InventoryRepo::get(s, h, written.ids[0]).await.unwrap();
    assert_eq!((kept.name.as_str(), kept.version), ("cell 0", 1));
    db.close().await.unwrap();
}

async fn an_item_change_and_its_event_commit_together(ctx: Ctx) {
    let s = &ctx.store;
    let h = household(s, "home").await;
    let item = add(s, h, "Pi 4").await;
    let mut changed = item.clone();
    changed.condition = Condition::Fair;
    let event = Event {
        changes: vec![FieldChange::new(Field::Condition, Some("good".into()), Some("fair".into()))],
        ..change_event(&item)
    };
    // The event's write refused: the change is not written either.
    let db = Database::connect(ctx.url.as_str()).await.unwrap();
    refuse_events(&db, true).await;
    assert!(matches!(InventoryRepo::update(s, h, &changed, &event).await, Err(RepoError::Unexpected(_))));
    let many = s.update_many(h, std::slice::from_ref(&changed), std::slice::from_ref(&event)).await;
    refuse_events(&db, false).await;
    assert!(matches!(many, Err(RepoError::Unexpected(_))));
    let kept = InventoryRepo::get(s, h, item.id).await.unwrap();
    assert_eq!((kept.condition, kept.version), (Condition::Good, 1));
    // Only the item's creation, written with it.
    let created = s.of_object(h, ObjectKind::Item, item.id.0).await.unwrap();
    assert_eq!(created.iter().map(|(_, e)| e.action.as_str()).collect::<Vec<_>>(), ["test"]);

    // Written, the event is answered and kept with it; a stale write appends none.
    let (stored, id) = InventoryRepo::update(s, h, &changed, &event).await.unwrap();
    assert_eq!((stored.condition, stored.version), (Condition::Fair, 2));
    assert!(matches!(InventoryRepo::update(s, h, &changed, &event).await, Err(RepoError::Stale(_))));
    let all = s.of_object(h, ObjectKind::Item, item.id.0).await.unwrap();
    assert!(all.contains(&(id, event)) && all.len() == created.len() + 1, "{all:?}");
    db.close().await.unwrap();
}

/// The events of `kind` `id` as (action, member, [(field, before, after)]), oldest first.
async fn history_of(s: &Store, h: HouseholdId, kind: ObjectKind, id: i64) -> Vec<(String, Option<i64>, Vec<String>)> {
    let mut events = s.of_object(h, kind, id).await.unwrap();
    events.sort_by_key(|(id, _)| *id);
    events
        .into_iter()
        .map(|(_, e)| {
            let changes = e
                .changes
                .iter()
                .map(|c| {
                    format!(
                        "{}: {} -> {}",
                        c.field,
                        c.before.as_deref().unwrap_or("-"),
                        c.after.as_deref().unwrap_or("-")
                    )
                })
                .collect();
            (e.action.to_string(), e.member.map(|m| m.0), changes)
        })
        .collect()
}

/// Every write that changes an item, a place, a medium, a member or a project writes its events in its own
/// transaction, from the rows as written (a new row's id, what a project step did to its items); when the
/// history cannot be written, neither is the change.
async fn every_write_commits_with_its_events(ctx: Ctx) {
    let s = &ctx.store;
    let h = household(s, "home").await;
    let by = |action: &str, d: u32| Recording::new(day(d), Some(MemberId(7)), Action::parse(action).unwrap());
    let db = Database::connect(ctx.url.as_str()).await.unwrap();

    // With the history refused, nothing of a write is kept.
    refuse_events(&db, true).await;
    let shed = NewPlace { name: PlaceName::new("Shed").unwrap(), parent_id: None, note: None };
    assert!(matches!(PlaceRepo::insert(s, h, shed.clone(), &by("create", 1)).await, Err(RepoError::Unexpected(_))));
    let refused = InventoryRepo::insert(s, h, new_item("Lost", "sbc", "", Intent::Keep), &by("create", 1)).await;
    assert!(matches!(refused, Err(RepoError::Unexpected(_))));
    refuse_events(&db, false).await;
    assert!(PlaceRepo::all(s, h).await.unwrap().is_empty());
    assert_eq!(InventoryRepo::list(s, h, &ItemQuery { limit: 50, ..Default::default() }).await.unwrap().total, 0);

    // Places: made by hand, for a location text, changed and deleted.
    let shed = PlaceRepo::insert(s, h, shed, &by("create", 1)).await.unwrap();
    let names = [PlaceName::new("Shed").unwrap(), PlaceName::new("Box").unwrap()];
    let boxed = s.find_or_create(h, &names, &by("create", 1)).await.unwrap().unwrap().path.id();
    let mut renamed = PlaceRepo::get(s, h, boxed).await.unwrap();
    renamed.name = PlaceName::new("Crate").unwrap();
    PlaceRepo::update(s, h, &renamed, &by("patch", 2)).await.unwrap();
    // A change that changes nothing is no event.
    PlaceRepo::update(s, h, &renamed, &by("patch", 2)).await.unwrap();
    let shed_id = shed.id.to_string();
    assert_eq!(
        history_of(s, h, ObjectKind::Place, boxed.0).await,
        [
            ("create".to_owned(), Some(7), vec!["name: - -> Box".to_owned(), format!("parent_id: - -> {shed_id}")]),
            ("patch".to_owned(), Some(7), vec!["name: Box -> Crate".to_owned()]),
        ]
    );
    PlaceRepo::delete(s, h, boxed, &by("delete", 3)).await.unwrap();
    let deleted = history_of(s, h, ObjectKind::Place, boxed.0).await;
    assert_eq!(
        deleted.last().unwrap(),
        &("delete".to_owned(), Some(7), vec!["name: Crate -> -".to_owned(), format!("parent_id: {shed_id} -> -")])
    );
    assert_eq!(history_of(s, h, ObjectKind::Place, shed.id.0).await[0].0, "create");

    // An item with a pending medium and a location: the item, the medium it took, the place made for it.
    let pending = MediaRepo::insert(s, h, media_photo(None), &by("create", 3)).await.unwrap();
    assert!(history_of(s, h, ObjectKind::Media, pending.id.0).await.is_empty(), "pending media are not shown yet");
    let new = NewItem {
        media_ids: vec![pending.id],
        location: Some("Shed / Drawer".into()),
        ..new_item("Pi", "sbc", "", Intent::Keep)
    };
    let item = InventoryRepo::insert(s, h, new, &by("create", 4)).await.unwrap();
    assert_eq!(
        history_of(s, h, ObjectKind::Item, item.id.0).await,
        [("create".to_owned(), Some(7), vec!["name: - -> Pi".to_owned()])]
    );
    let taken = history_of(s, h, ObjectKind::Media, pending.id.0).await;
    assert_eq!((taken.len(), taken[0].0.as_str()), (1, "create"));
    assert!(taken[0].2.contains(&format!("item_id: - -> {}", item.id)), "{taken:?}");
    let drawer = item.place_id.unwrap();
    assert_eq!(history_of(s, h, ObjectKind::Place, drawer.0).await[0].2[0], "name: - -> Drawer");

    // A medium on an item: made, captioned (twice the same: one event), deleted.
    let photo = MediaRepo::insert(s, h, media_photo(Some(item.id)), &by("create", 5)).await.unwrap();
    s.set_caption(h, photo.id, Caption::new("front").unwrap(), &by("patch", 5)).await.unwrap();
    s.set_caption(h, photo.id, Caption::new("front").unwrap(), &by("patch", 5)).await.unwrap();
    MediaRepo::delete(s, h, photo.id, &by("delete", 6)).await.unwrap();
    let actions: Vec<_> = history_of(s, h, ObjectKind::Media, photo.id.0).await.into_iter().map(|e| e.0).collect();
    assert_eq!(actions, ["create", "patch", "delete"]);

    // Members: a role changed, one removed, one joined by an invitation.
    let ada = s.add_member(person(h, "Ada", Role::Owner)).await.unwrap();
    let bob = s.add_member(person(h, "Bob", Role::Member)).await.unwrap();
    s.set_role(h, bob.id, Role::Viewer, &by("role", 6)).await.unwrap();
    s.remove_member(h, bob.id, &by("remove", 7)).await.unwrap();
    assert_eq!(
        history_of(s, h, ObjectKind::Member, bob.id.0).await,
        [
            ("role".to_owned(), Some(7), vec!["role: member -> viewer".to_owned()]),
            ("remove".to_owned(), Some(7), vec!["name: Bob -> -".to_owned(), "role: viewer -> -".to_owned()]),
        ]
    );
    s.add_invitation(h, "join-code", Role::Viewer, Some(ada.id), day(2)).await.unwrap();
    let cleo = s.redeem("join-code", person(h, "Cleo", Role::Viewer)).await.unwrap();
    assert_eq!(
        history_of(s, h, ObjectKind::Member, cleo.id.0).await,
        [("join".to_owned(), Some(cleo.id.0), vec!["name: - -> Cleo".to_owned(), "role: - -> viewer".to_owned()])]
    );

    // A project: proposed, refreshed, accepted (its item reserved), dropped (released).
    let t = a_template(s, h).await;
    let board = add(s, h, "board").await;
    let new = NewProject {
        template_id: t,
        title: "Console".into(),
        reason: "a board".into(),
        allocations: vec![Allocation { requirement: "board".into(), item_id: board.id, units: 1 }],
        missing: Vec::new(),
    };
    let project = s.insert_many(h, vec![new], &by("create", 8)).await.unwrap().remove(0);
    s.refresh(h, project.id, "Console again", "a board", &by("refresh", 8)).await.unwrap();
    s.accept(h, project.id, &versions(&[&board]), &by("accept", 9)).await.unwrap();
    s.drop_project(h, project.id, &by("drop", 10)).await.unwrap();
    let actions: Vec<_> = history_of(s, h, ObjectKind::Project, project.id.0).await.into_iter().map(|e| e.0).collect();
    assert_eq!(actions, ["create", "refresh", "accept", "drop"]);
    let board_history = history_of(s, h, ObjectKind::Item, board.id.0).await;
    let steps: Vec<_> = board_history.iter().filter(|e| e.0 == "accept" || e.0 == "drop").cloned().collect();
    assert_eq!(
        steps,
        [
            (
                "accept".to_owned(),
                Some(7),
                vec!["availability: available -> reserved".to_owned(), format!("project_id: - -> {}", project.id)]
            ),
            (
                "drop".to_owned(),
                Some(7),
                vec!["availability: reserved -> available".to_owned(), format!("project_id: {} -> -", project.id)]
            ),
        ]
    );
    db.close().await.unwrap();
}

fn media_photo(item: Option<ItemId>) -> NewMedium {
    NewMedium {
        item_id: item,
        kind: MediaKind::Photo,
        media_type: MediaType::Jpeg,
        bytes: 1000,
        size: None,
        sha256: ContentHash::parse(&"cd".repeat(32)).unwrap(),
        caption: None,
    }
}

/// A SQLite database that cannot grow (a full disk, made here by `PRAGMA max_page_count`) refuses writes as the
/// storage's fault, "the storage is full" (503, come back later), not as a bug; reads go on working.
#[tokio::test]
async fn sqlite_full_is_unavailable_and_reads_go_on() {
    let url = testing::fresh_sqlite_url();
    let ctx = testing::open(url.clone()).await;
    let h = household(&ctx.store, "home").await;
    add(&ctx.store, h, "kept before").await;
    let pages: i64 = {
        // The pages freed by the migrations are given back first, so the next rows need new pages.
        let db = Database::connect(url.as_str()).await.unwrap();
        db.execute_unprepared("VACUUM").await.unwrap();
        let row = db
            .query_one_raw(sea_orm::Statement::from_string(sea_orm::DbBackend::Sqlite, "PRAGMA page_count"))
            .await
            .unwrap()
            .unwrap();
        row.try_get_by_index(0).unwrap()
    };
    let full = Store::connect_with_page_limit(&url, u64::try_from(pages).unwrap()).await.unwrap();
    let (mut refused, mut answered) = (None, 0u32);
    for n in 0..2_000 {
        let name = format!("item {n} with a long name to fill the pages of the database sooner");
        if let Err(e) =
            InventoryRepo::insert(&full, h, new_item(&name, "single_board_computer", "", Intent::Keep), &rec(day(2)))
                .await
        {
            refused = Some(e);
            break;
        }
        answered += 1;
    }
    // Every insert the store answered is stored: none was lost while the store said it succeeded.
    let db = Database::connect(url.as_str()).await.unwrap();
    let row = db
        .query_one_raw(sea_orm::Statement::from_string(sea_orm::DbBackend::Sqlite, "SELECT count(*) FROM items"))
        .await
        .unwrap()
        .unwrap();
    let stored: i64 = row.try_get_by_index(0).unwrap();
    assert_eq!(stored, i64::from(answered) + 1, "items the store said it stored, and the one before");
    let refused = refused.expect("a database that cannot grow refuses a write");
    let answer = trove_application::Error::from(refused);
    assert!(
        matches!(
            answer,
            trove_application::Error::StorageUnavailable { fault: trove_application::StorageFault::Full, .. }
        ),
        "{answer:?}"
    );
    let page = InventoryRepo::list(&full, h, &ItemQuery { limit: 50, ..Default::default() }).await;
    assert!(page.is_ok(), "reads go on while the disk is full: {page:?}");
}

/// The lookup cache answers what was kept until it expires, and a newer answer replaces an older one.
async fn lookups_are_cached_until_they_expire(ctx: Ctx) {
    use trove_application::ports::{CachedLookup, LookupCache, ProductCandidate, SourcedCandidate};
    let at = Utc.with_ymd_and_hms(2026, 12, 1, 10, 0, 0).unwrap();
    let day = chrono::TimeDelta::days(1);
    let hit = CachedLookup {
        candidates: vec![SourcedCandidate {
            source: "open_food_facts".into(),
            fetched_at: at,
            candidate: ProductCandidate {
                name: "Nutella".into(),
                brand: Some("Ferrero".into()),
                item_type: None,
                image_url: Some("https://img.example/n.jpg".into()),
                attribution: Some("ODbL".into()),
                source_url: "https://world.openfoodfacts.org/product/3017620422003".into(),
            },
        }],
        asked: vec!["open_food_facts".into(), "open_beauty_facts".into()],
        fetched_at: at,
    };
    let store = &ctx.store;
    assert_eq!(store.cached("03017620422003", at).await.unwrap(), None);
    store.keep("03017620422003", hit.clone(), at + day * 90).await.unwrap();
    assert_eq!(store.cached("03017620422003", at + day).await.unwrap(), Some(hit.clone()));
    assert_eq!(store.cached("03017620422003", at + day * 90).await.unwrap(), None, "expired");
    let miss = CachedLookup { candidates: Vec::new(), asked: vec!["open_food_facts".into()], fetched_at: at + day };
    store.keep("03017620422003", miss.clone(), at + day * 8).await.unwrap();
    assert_eq!(store.cached("03017620422003", at + day * 2).await.unwrap(), Some(miss));
    // A row that expired is removed as another is kept; the fresh one stays.
    store.keep("04006381333931", hit.clone(), at + day * 200).await.unwrap();
    let later = CachedLookup { fetched_at: at + day * 100, ..hit.clone() };
    store.keep("09780306406157", later, at + day * 300).await.unwrap();
    assert_eq!(store.cached("04006381333931", at + day * 100).await.unwrap(), Some(hit));
}
