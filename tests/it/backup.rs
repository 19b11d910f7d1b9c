//! Backup and restore: a store with everything in it (members with passwords, places under places, items,
//! a project holding items, history, prices, spend, media) backed up on SQLite, restored into PostgreSQL, backed
//! up there and restored into SQLite again, every table and media file equal at each step; the restored app
//! serves the same ids, signs its members in and finds by search. A tampered archive, a store that is not empty,
//! a newer schema and a backup cut short are refused with nothing written, and `kill -9` of `trove backup` or
//! `trove restore` never leaves a whole-looking archive or a half store.

use crate::app::{Db, TestApp, fresh_database, item};
use reqwest::StatusCode;
use reqwest::multipart::{Form, Part};
use serde_json::json;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use trove_application::ports::{BackupRepo, MediaStore};
use trove_backup::{Manifest, backup, restore, verify};

const PASSWORD: &str = "correct horse battery";

/// A directory of its own under the system's temporary one.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("trove-backup-{name}-{}-{}", std::process::id(), rand_suffix()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn rand_suffix() -> u64 {
    use std::time::{SystemTime, UNIX_EPOCH};
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_nanos() as u64
}

fn media_at(dir: &Path) -> Arc<dyn MediaStore> {
    trove_media::MediaLocation::Files(dir.join("media")).open().unwrap()
}

/// The app on a fresh database of `db` with its own data directory (its own media files).
async fn app_on(db: Db, data: &Path) -> TestApp {
    let url = fresh_database(db).await;
    TestApp::spawn_on(&url, &[("TROVE_DATA_DIR", data.display().to_string())]).await
}

/// Fills a store with a bit of everything a household keeps.
async fn fill(app: &TestApp) -> (i64, i64) {
    assert!(trove::seed_demo(&app.app).await.unwrap() > 30);
    // A member with a password.
    let link = trove::invite(&app.app, "default", trove_domain::people::Role::Member).await.unwrap();
    let code = link.split("#/join/").nth(1).unwrap();
    let resp = app
        .client
        .post(app.url("/api/invitations/accept"))
        .json(&json!({"code": code, "name": "Sam", "password": PASSWORD}))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::CREATED, "{}", resp.text().await.unwrap());
    // A place under a place made after it: its parent's id is larger than its own.
    let (s, early) = app.post("/api/places", json!({"name": "Red box"})).await;
    assert_eq!(s, StatusCode::CREATED, "{early}");
    let (s, late) = app.post("/api/places", json!({"name": "Attic hatch"})).await;
    assert_eq!(s, StatusCode::CREATED);
    let (s, moved) = app.patch(&format!("/api/places/{}", early["id"]), json!({"parent_id": late["id"]})).await;
    assert_eq!(s, StatusCode::OK, "{moved}");
    // Two places of one name, told apart by the place they are in.
    for parent in [&early["id"], &late["id"]] {
        let (s, bin) = app.post("/api/places", json!({"name": "Bin", "parent_id": parent})).await;
        assert_eq!(s, StatusCode::CREATED, "{bin}");
    }
    let mut lamp = item("Brass desk lamp", "lamp");
    lamp["place_id"] = early["id"].clone();
    lamp["codes"] = json!([{"value": "036000291452"}, {"kind": "other", "value": "Lamp-7"}]);
    let lamp = app.create_item(lamp).await;
    // A photo on it, a value by hand, a project holding items, spend from the planner.
    let photo = {
        let img = image::RgbImage::from_pixel(64, 48, image::Rgb([200, 120, 40]));
        let mut out = Vec::new();
        image::codecs::jpeg::JpegEncoder::new(&mut out).encode_image(&img).unwrap();
        out
    };
    let (s, media) = app.upload_media(lamp, Form::new().part("file", Part::bytes(photo).file_name("lamp.jpg"))).await;
    assert_eq!(s, StatusCode::CREATED, "{media}");
    let thumb = app
        .client
        .get(app.url(&format!("/api/media/{}/thumb", media["id"])))
        .bearer_auth(&app.token)
        .send()
        .await
        .unwrap();
    assert_eq!(thumb.status(), StatusCode::OK);
    let (s, _) = app.put(&format!("/api/items/{lamp}/value"), json!({"amount": 4_500, "currency": "EUR"})).await;
    assert_eq!(s, StatusCode::OK);
    let (s, proposed) = app.post("/api/projects/propose", json!({"brief": "a weather station"})).await;
    assert_eq!(s, StatusCode::OK, "{proposed}");
    let project = proposed["projects"][0]["id"].as_i64().unwrap();
    let (s, _) = app.post(&format!("/api/projects/{project}/accept"), json!({})).await;
    assert_eq!(s, StatusCode::OK);
    // A loan, a schedule done once, reminder settings with a calendar key, and a reminder written.
    let (s, lent) = app.post(&format!("/api/items/{lamp}/loans"), json!({"to": {"name": "Sam next door"}})).await;
    assert_eq!(s, StatusCode::CREATED, "{lent}");
    let (s, schedule) =
        app.post(&format!("/api/items/{lamp}/schedules"), json!({"title": "Polish", "every": {"months": 6}})).await;
    assert_eq!(s, StatusCode::CREATED, "{schedule}");
    let (s, _) = app.post(&format!("/api/schedules/{}/done", schedule["id"]), json!({"note": "brass polish"})).await;
    assert_eq!(s, StatusCode::OK);
    let (s, _) =
        app.put("/api/me/notifications", json!({"email": "sam@example.org", "urls": [], "lead_days": 400})).await;
    assert_eq!(s, StatusCode::BAD_REQUEST, "a lead time over a year");
    let (s, _) =
        app.put("/api/me/notifications", json!({"email": "sam@example.org", "urls": [], "lead_days": 365})).await;
    assert_eq!(s, StatusCode::OK);
    let (s, _) = app.get("/api/me/calendar").await;
    assert_eq!(s, StatusCode::OK);
    (lamp, project)
}

/// Every part of an archive, by its path: the tables' bytes and the media files'.
fn parts(file: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut archive = tar::Archive::new(std::fs::File::open(file).unwrap());
    let mut out = BTreeMap::new();
    for entry in archive.entries().unwrap() {
        let mut entry = entry.unwrap();
        let path = entry.path().unwrap().to_string_lossy().into_owned();
        if path != "manifest.json" {
            let mut bytes = Vec::new();
            std::io::Read::read_to_end(&mut entry, &mut bytes).unwrap();
            out.insert(path, bytes);
        }
    }
    out
}

fn rows(m: &Manifest, table: &str) -> u64 {
    m.tables.iter().find(|t| t.name == table).unwrap().rows
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backup_restores_exactly_on_either_backend_and_across_them() {
    let dir = scratch("round-trip");
    let source = app_on(Db::Sqlite, &dir.join("a")).await;
    let (lamp, project) = fill(&source).await;
    let first = dir.join("a.tar");
    let made = backup(&*source.app.store, "sqlite", media_at(&dir.join("a")).as_ref(), &first).await.unwrap();
    assert_eq!(verify(&first).unwrap(), made);
    assert!(!dir.join("a.tar.partial").exists());
    assert!(rows(&made, "items") > 30 && rows(&made, "members") >= 2 && rows(&made, "events") > 30, "{made:?}");
    assert_eq!(made.media.len(), 2, "the photo and its thumbnail");
    assert!(rows(&made, "projects") >= 1 && rows(&made, "price_reports") == 1 && rows(&made, "spend_entries") >= 1);
    assert_eq!(
        ["loans", "schedules", "maintenance", "notification_settings"].map(|t| rows(&made, t)),
        [1, 1, 1, 1],
        "lending, maintenance and reminder settings are kept"
    );
    assert_eq!(rows(&made, "item_codes"), 2, "the lamp's codes are kept");

    // SQLite -> PostgreSQL -> SQLite: each archive has the same tables and files, byte for byte.
    let mut previous = first.clone();
    for (step, db) in [("b", Db::Postgres), ("c", Db::Sqlite)] {
        let url = fresh_database(db).await;
        let store = trove_db::Store::connect(&url).await.unwrap();
        store.migrate().await.unwrap();
        let blobs = media_at(&dir.join(step));
        let restored = restore(&store, blobs.as_ref(), &previous).await.unwrap();
        assert_eq!(restored.media, 2);
        let again = dir.join(format!("{step}.tar"));
        backup(&store, store.backend_name(), blobs.as_ref(), &again).await.unwrap();
        let (was, now) = (parts(&previous), parts(&again));
        assert_eq!(was.keys().collect::<Vec<_>>(), now.keys().collect::<Vec<_>>());
        for (path, bytes) in &was {
            assert!(bytes == &now[path], "{path} differs after a restore into {db:?}");
        }
        previous = again;
    }

    // The app on the last store: the same ids, the member's password, search, the held project.
    let url = {
        let url = fresh_database(Db::Postgres).await;
        let store = trove_db::Store::connect(&url).await.unwrap();
        store.migrate().await.unwrap();
        restore(&store, media_at(&dir.join("d")).as_ref(), &previous).await.unwrap();
        url
    };
    let app = TestApp::spawn_on(&url, &[("TROVE_DATA_DIR", dir.join("d").display().to_string())]).await;
    let (s, got) = app.get(&format!("/api/items/{lamp}")).await;
    assert_eq!((s, got["name"].as_str()), (StatusCode::OK, Some("Brass desk lamp")));
    assert_eq!(got["location"], "Attic hatch / Red box", "the place under a later place");
    let (s, found) = app.get("/api/items?q=brass").await;
    assert_eq!(s, StatusCode::OK);
    assert_eq!(found["items"][0]["id"], lamp, "the search index is made again: {found}");
    // Its codes are back, found by any of their forms, and still held: another item may not take them.
    assert_eq!(got["codes"][0]["value"], "036000291452", "{got}");
    assert_eq!(got["codes"][1]["key"], "other:lamp-7", "{got}");
    let (s, found) = app.get("/api/items?q=0036000291452").await;
    assert_eq!((s, &found["items"][0]["id"]), (StatusCode::OK, &json!(lamp)), "{found}");
    let mut copy = item("Another lamp", "lamp");
    copy["codes"] = json!([{"value": "lamp-7"}]);
    let (s, refused) = app.post("/api/items", copy).await;
    assert_eq!(s, StatusCode::CONFLICT, "{refused}");
    let (_, held) = app.get(&format!("/api/projects/{project}")).await;
    assert_eq!(held["status"], "accepted");
    let (_, media) = app.get(&format!("/api/items/{lamp}/media")).await;
    let photo = media["media"][0]["id"].as_i64().unwrap();
    let served = app.client.get(app.url(&format!("/api/media/{photo}"))).bearer_auth(&app.token).send().await.unwrap();
    assert_eq!(served.status(), StatusCode::OK, "the media bytes are back");
    let signed = app
        .client
        .post(app.url("/api/session"))
        .json(&json!({"name": "Sam", "password": PASSWORD}))
        .send()
        .await
        .unwrap();
    assert_eq!(signed.status(), StatusCode::OK, "the member's password works");
    // New rows get new ids past the restored ones.
    let newer = app.create_item(item("Spare bulb", "bulb")).await;
    assert!(newer > lamp);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tampered_archive_a_full_store_and_another_schema_are_refused_with_nothing_written() {
    let dir = scratch("refused");
    let source = app_on(Db::Sqlite, &dir.join("a")).await;
    fill(&source).await;
    let good = dir.join("good.tar");
    backup(&*source.app.store, "sqlite", media_at(&dir.join("a")).as_ref(), &good).await.unwrap();
    let bytes = std::fs::read(&good).unwrap();

    let empty = || async {
        let url = fresh_database(Db::Sqlite).await;
        let store = trove_db::Store::connect(&url).await.unwrap();
        store.migrate().await.unwrap();
        store
    };
    // One byte of an item's name changed: the table's hash differs.
    let at = bytes.windows(9).position(|w| w == b"Brass des").unwrap();
    let mut tampered = bytes.clone();
    tampered[at] = b'G';
    let file = dir.join("tampered.tar");
    std::fs::write(&file, &tampered).unwrap();
    let err = verify(&file).unwrap_err().to_string();
    assert!(err.contains("differs from the manifest"), "{err}");
    let store = empty().await;
    let err = restore(&store, media_at(&dir.join("t")).as_ref(), &file).await.unwrap_err().to_string();
    assert!(err.contains("differs from the manifest"), "{err}");
    assert!(store.is_empty().await.unwrap(), "nothing written");

    // Cut short (a backup killed before its manifest): no manifest, refused.
    let file = dir.join("cut.tar");
    std::fs::write(&file, &bytes[..bytes.len() / 2]).unwrap();
    let err = verify(&file).unwrap_err().to_string();
    assert!(err.contains("no manifest") || err.contains("read"), "{err}");

    // A newer schema.
    let manifest_at = bytes.windows(13).position(|w| w == b"\"schema\": \"m0").unwrap();
    let mut newer = bytes.clone();
    newer[manifest_at + 12..manifest_at + 17].copy_from_slice(b"m9999");
    let file = dir.join("newer.tar");
    std::fs::write(&file, &newer).unwrap();
    let err = restore(&store, media_at(&dir.join("t")).as_ref(), &file).await.unwrap_err().to_string();
    assert!(err.contains("newer Trove") && err.contains("upgrade Trove first"), "{err}");
    assert!(store.is_empty().await.unwrap());

    // A store that is not empty.
    let err = restore(&*source.app.store, media_at(&dir.join("a")).as_ref(), &good).await.unwrap_err().to_string();
    assert!(err.contains("the store is not empty"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Runs the trove binary with `args` on `database_url` and kills it with SIGKILL as soon as `now()` holds;
/// answers whether it was killed while still running (not already done).
fn killed_when(args: &[&str], database_url: &str, data: &Path, now: impl Fn() -> bool) -> bool {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_trove"))
        .args(args)
        .env("DATABASE_URL", database_url)
        .env("TROVE_DATA_DIR", data)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        if child.try_wait().unwrap().is_some() {
            return false;
        }
        if now() {
            child.kill().unwrap();
            child.wait().unwrap();
            return true;
        }
        assert!(std::time::Instant::now() < deadline, "{args:?} neither ended nor reached the moment to kill it");
        std::thread::sleep(std::time::Duration::from_micros(200));
    }
}

fn size(path: &Path) -> u64 {
    std::fs::metadata(path).map(|m| m.len()).unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backup_or_restore_killed_leaves_no_whole_looking_archive_and_no_half_store() {
    let dir = scratch("killed");
    let source = app_on(Db::Sqlite, &dir.join("a")).await;
    fill(&source).await;
    // Enough rows that the archive and the restore's transaction take a while to write, and that the transaction
    // outgrows SQLite's page cache (2 MB), so its pages reach the WAL while it runs, long before its commit.
    let rows: String = (0..20_000).map(|i| format!("Part {i},part,,good,keep,,\n")).collect();
    let csv = dir.join("parts.csv");
    std::fs::write(&csv, format!("name,item_type,profile,condition,intent,location,notes\n{rows}")).unwrap();
    trove::exchange::import_file(&source.app, &csv, "default", false).await.unwrap();
    let whole = dir.join("whole.tar");
    let manifest = backup(&*source.app.store, "sqlite", media_at(&dir.join("a")).as_ref(), &whole).await.unwrap();

    // A backup killed while it writes its archive: no file of the archive's name, and the partial one is refused.
    let out = dir.join("killed.tar");
    let partial = dir.join("killed.tar.partial");
    let args = ["backup", "--out", out.to_str().unwrap()];
    assert!(killed_when(&args, &source.database_url, &dir.join("a"), || size(&partial) > 0), "killed while writing");
    assert!(!out.exists(), "nothing named as the archive");
    let err = verify(&partial).unwrap_err().to_string();
    assert!(err.contains("no manifest") || err.contains("read"), "{err}");

    // A restore killed while it loads the tables: the store is empty (its transaction never committed).
    let url = fresh_database(Db::Sqlite).await;
    let file = url.trim_start_matches("sqlite://").trim_start_matches("sqlite:").split('?').next().unwrap();
    let wal = PathBuf::from(format!("{file}-wal"));
    let args = ["restore", whole.to_str().unwrap()];
    assert!(killed_when(&args, &url, &dir.join("r"), || size(&wal) > 512 * 1024), "killed while loading");
    let store = trove_db::Store::connect(&url).await.unwrap();
    store.migrate().await.unwrap();
    assert!(store.is_empty().await.unwrap(), "a restore killed before its commit leaves the store empty");

    // Restored again, whole.
    restore(&store, media_at(&dir.join("r")).as_ref(), &whole).await.unwrap();
    let again = dir.join("again.tar");
    let after = backup(&store, "sqlite", media_at(&dir.join("r")).as_ref(), &again).await.unwrap();
    assert_eq!(after.tables, manifest.tables);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_owner_sees_the_last_backup_makes_one_and_downloads_it_and_the_schedule_keeps_the_newest() {
    let dir = scratch("served");
    let data = dir.join("data");
    let url = fresh_database(Db::Sqlite).await;
    let app =
        TestApp::spawn_on(&url, &[("TROVE_DATA_DIR", data.display().to_string()), ("TROVE_BACKUP_KEEP", "2".into())])
            .await;
    assert!(trove::seed_demo(&app.app).await.unwrap() > 30);
    let (s, status) = app.get("/api/backups").await;
    assert_eq!(s, StatusCode::OK, "{status}");
    assert_eq!(status, json!({"every_secs": null, "keep": 2, "last": null, "count": 0}));

    let (s, made) = app.post("/api/backups", json!({})).await;
    assert_eq!(s, StatusCode::CREATED, "{made}");
    let name = made["name"].as_str().unwrap().to_owned();
    assert!(name.starts_with("trove-backup-") && name.ends_with(".tar"), "{name}");
    let (_, status) = app.get("/api/backups").await;
    assert_eq!((status["last"].clone(), status["count"].as_u64()), (made.clone(), Some(1)));
    let kept = data.join("backups").join(&name);
    #[cfg(unix)]
    assert_eq!(
        std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&kept).unwrap().permissions()) & 0o777,
        0o600
    );

    let resp = app.client.get(app.url(&format!("/api/backups/{name}"))).bearer_auth(&app.token).send().await.unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    assert_eq!(resp.headers()["content-type"], "application/x-tar");
    let file = dir.join("downloaded.tar");
    std::fs::write(&file, resp.bytes().await.unwrap()).unwrap();
    assert!(rows(&verify(&file).unwrap(), "items") > 30, "the download is a whole archive");
    let resp =
        app.client.get(app.url("/api/backups/..%2Fdata%2Ftrove.db")).bearer_auth(&app.token).send().await.unwrap();
    assert_eq!(resp.status(), StatusCode::NOT_FOUND, "only the archives kept are served");

    // The schedule: one at once (the newest is older than the period), then one a period; two are kept.
    let mut settings = app.app.services.backups.settings().clone();
    settings.every = Some(std::time::Duration::from_millis(300));
    let store = app.app.store.clone();
    let backups = trove_application::backups::Backups::new(
        Arc::new(trove_backup::TarBackups::new(store.clone(), media_at(&data), "sqlite")),
        store,
        app.app.services.clock.clone(),
        settings,
    );
    let task = tokio::spawn(trove::scheduled_backups(backups, app.app.services.clock.clone()));
    tokio::time::sleep(std::time::Duration::from_millis(1500)).await;
    task.abort();
    let (_, status) = app.get("/api/backups").await;
    assert_eq!(status["count"], 2, "the oldest beyond two are removed: {status}");
    assert_ne!(status["last"]["name"], json!(name), "newer ones were written");

    // A member may not; nor an owner while the server holds another household.
    let link = trove::invite(&app.app, "default", trove_domain::people::Role::Member).await.unwrap();
    let code = link.split("#/join/").nth(1).unwrap();
    let joined = app
        .client
        .post(app.url("/api/invitations/accept"))
        .json(&json!({"code": code, "name": "Robin", "password": PASSWORD}))
        .send()
        .await
        .unwrap();
    let cookie = joined.headers()["set-cookie"].to_str().unwrap().split(';').next().unwrap().to_owned();
    let resp = app.client.get(app.url("/api/backups")).header("cookie", cookie).send().await.unwrap();
    assert_eq!(resp.status(), StatusCode::FORBIDDEN);
    app.token_of("next door").await;
    let (s, body) = app.post("/api/backups", json!({})).await;
    assert_eq!(s, StatusCode::FORBIDDEN, "{body}");
    assert!(body["error"]["message"].as_str().unwrap().contains("trove backup"), "{body}");
    let _ = std::fs::remove_dir_all(&dir);
}
