//! Media on items through the API: upload, list, read, thumbnail and delete on the filesystem store and on the
//! S3-compatible store (a `moto_server` started here, as in `adapters/media/tests/contract.rs`; without one the S3
//! case says it was skipped, except under CI); a photo's GPS is gone and it still shows the right way up; refused
//! files (HEIC 415, too large 413, empty or broken 400) keep nothing; another household's media is 404; intake
//! keeps its photo and each region's crop pending until `POST /api/items` attaches them by `media_ids`, and the
//! sweep removes what no item took within a day; `trove export --media` and `trove import --media` carry every
//! item's media to another store, onto the items their rows become; hostile pictures cost bounded memory: a PNG
//! whose ICC profile inflates to 1 GB is kept without it, one that would decode to more bytes than the bound is
//! 413 and keeps nothing.

use crate::app::{Db, TestApp, assert_error, item};
use crate::on_both;
use reqwest::StatusCode;
use reqwest::multipart::{Form, Part};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::io::{Read as _, Write as _};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};
use trove_application::ports::MediaStore;
use trove_vision::pictures::{exif_jpeg, iccp_bomb_png, png_chunk};

on_both!(
    media_round_trip_without_gps,
    media_round_trip_on_s3,
    refused_files_keep_nothing,
    another_households_media_is_404,
    intake_keeps_its_photos_until_an_item_takes_them,
    export_and_import_carry_the_media,
    captions_are_edited_and_recorded,
    hostile_pictures_cost_bounded_memory
);

/// The GPS latitude the test photo carries (51/1, 28/1, 38/1 as big-endian rationals).
const LATITUDE: [u8; 24] = [0, 0, 0, 51, 0, 0, 0, 1, 0, 0, 0, 28, 0, 0, 0, 1, 0, 0, 0, 38, 0, 0, 0, 1];
const PDF: &[u8] = b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n";

/// A fresh data directory for the media files, removed when dropped.
struct DataDir(PathBuf);

impl DataDir {
    fn new() -> Self {
        let mut salt = [0u8; 6];
        getrandom::fill(&mut salt).unwrap();
        DataDir(std::env::temp_dir().join(format!("trove-it-media-{}", hex::encode(salt))))
    }
}

impl Drop for DataDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

async fn spawn(db: Db, dir: &DataDir) -> TestApp {
    TestApp::spawn(db, &[("TROVE_DATA_DIR", dir.0.display().to_string())]).await
}

/// A `moto_server` on a free port with a fresh bucket `trove-it`, stopped when dropped.
pub(crate) struct Moto {
    child: Child,
    pub(crate) port: u16,
}

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn http(port: u16, request: &str) -> std::io::Result<String> {
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port))?;
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    stream.write_all(request.as_bytes())?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer)?;
    Ok(answer.lines().next().unwrap_or_default().to_owned())
}

/// Starts `moto_server` (from `MOTO_SERVER` or the PATH), or answers `None` when there is none (a failure under
/// CI, where `.ci/run` installs it).
pub(crate) fn moto() -> Option<Moto> {
    let path = std::env::var_os("MOTO_SERVER").map(PathBuf::from).or_else(|| {
        std::env::split_paths(&std::env::var_os("PATH")?).map(|d| d.join("moto_server")).find(|p| p.is_file())
    });
    let Some(path) = path else {
        assert!(std::env::var_os("CI").is_none(), "moto_server is not installed; CI needs it (see .ci/run)");
        eprintln!("SKIPPED media_round_trip_on_s3: moto_server not found on the PATH nor in MOTO_SERVER");
        return None;
    };
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let child = Command::new(&path)
        .args(["-H", "127.0.0.1", "-p", &port.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("start {}: {e}", path.display()));
    let moto = Moto { child, port };
    let deadline = Instant::now() + Duration::from_secs(60);
    while !http(port, "GET /moto-api/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .is_ok_and(|s| s.contains(" 200 "))
    {
        assert!(Instant::now() < deadline, "moto_server did not answer within 60 s");
        std::thread::sleep(Duration::from_millis(100));
    }
    let created =
        http(port, "PUT /trove-it HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n").unwrap();
    assert!(created.contains(" 200 "), "create the bucket: {created}");
    Some(moto)
}

/// The S3 settings of the app and of the test's own look at the bucket.
pub(crate) fn s3_settings(moto: &Moto) -> Vec<(&'static str, String)> {
    vec![
        ("TROVE_MEDIA_URL", "s3://trove-it/media".to_owned()),
        ("AWS_ENDPOINT_URL", format!("http://127.0.0.1:{}", moto.port)),
        ("AWS_REGION", "us-east-1".to_owned()),
        ("AWS_ACCESS_KEY_ID", "test".to_owned()),
        ("AWS_SECRET_ACCESS_KEY", "test".to_owned()),
    ]
}

fn file(bytes: &[u8], name: &str) -> Part {
    Part::bytes(bytes.to_vec()).file_name(name.to_owned())
}

async fn upload(app: &TestApp, token: &str, item: i64, form: Form) -> (StatusCode, Value) {
    let resp = app
        .client
        .post(app.url(&format!("/api/items/{item}/media")))
        .bearer_auth(token)
        .multipart(form)
        .send()
        .await
        .expect("answer");
    let status = resp.status();
    let text = resp.text().await.unwrap();
    (status, serde_json::from_str(&text).unwrap_or(Value::String(text)))
}

/// GET of raw bytes: the status, the content type and the body.
async fn fetch(app: &TestApp, token: &str, path: &str) -> (StatusCode, String, Vec<u8>) {
    let resp = app.client.get(app.url(path)).bearer_auth(token).send().await.expect("answer");
    let status = resp.status();
    let media_type = resp.headers().get("content-type").map(|v| v.to_str().unwrap().to_owned()).unwrap_or_default();
    (status, media_type, resp.bytes().await.unwrap().to_vec())
}

async fn delete(app: &TestApp, token: &str, path: &str) -> StatusCode {
    app.client.delete(app.url(path)).bearer_auth(token).send().await.expect("answer").status()
}

/// Every blob kept by `store` (files and thumbnails).
async fn kept_files(store: &dyn MediaStore) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for blob in store.list().await.unwrap() {
        out.push(store.get(&blob.hash).await.unwrap());
    }
    out
}

fn red(p: image::Rgb<u8>) -> bool {
    p.0[0] > 150 && p.0[2] < 100
}

async fn media_round_trip_without_gps(db: Db) {
    let dir = DataDir::new();
    let app = spawn(db, &dir).await;
    round_trip(&app, Arc::new(trove_media::FileStore::open(&dir.0.join("media")))).await;
    // Nothing is left under a temporary name.
    assert_eq!(std::fs::read_dir(dir.0.join("media/tmp")).unwrap().count(), 0);
}

async fn media_round_trip_on_s3(db: Db) {
    let Some(moto) = moto() else { return };
    let dir = DataDir::new();
    let mut settings = s3_settings(&moto);
    settings.push(("TROVE_DATA_DIR", dir.0.display().to_string()));
    let app = TestApp::spawn(db, &settings).await;
    let bucket = trove_media::S3Settings::from_url(
        "s3://trove-it/media",
        Some(format!("http://127.0.0.1:{}", moto.port)),
        Some("us-east-1".into()),
        Some("test".into()),
        Some("test".into()),
    )
    .unwrap();
    round_trip(&app, Arc::new(trove_media::S3Store::open(&bucket).unwrap())).await;
    assert!(!dir.0.join("media").exists(), "nothing is kept on disk with the S3 store");
}

/// Upload, read, thumbnail, list and delete, looking into `store` (where the app keeps its blobs).
async fn round_trip(app: &TestApp, store: Arc<dyn MediaStore>) {
    let drill = app.create_item(item("Cordless drill", "tool")).await;
    let (_, fresh) = app.get(&format!("/api/items/{drill}")).await;
    assert_eq!(fresh["cover"], Value::Null);

    // A phone photo: 64 x 32 pixels as stored, turned (EXIF orientation 6), with a GPS position.
    let photo = exif_jpeg(64, 32, 6, true);
    assert!(photo.windows(LATITUDE.len()).any(|w| w == LATITUDE), "the test photo carries its GPS");
    let (status, kept) = upload(app, &app.token, drill, Form::new().part("file", file(&photo, "IMG_0001.jpg"))).await;
    assert_eq!(status, StatusCode::CREATED, "{kept}");
    let id = kept["id"].as_i64().unwrap();
    assert_eq!(kept["item_id"], drill);
    assert_eq!(kept["kind"], "photo");
    assert_eq!(kept["media_type"], "image/jpeg");
    assert_eq!((kept["width"].as_u64(), kept["height"].as_u64()), (Some(32), Some(64)), "{kept}");
    assert_eq!(kept["caption"], Value::Null);
    assert!(kept["created_at"].is_string());

    // Served: no GPS, no EXIF, the right way up (the red quarter top right), and what the record says.
    let (status, media_type, served) = fetch(app, &app.token, &format!("/api/media/{id}")).await;
    assert_eq!((status, media_type.as_str()), (StatusCode::OK, "image/jpeg"));
    assert!(!served.windows(LATITUDE.len()).any(|w| w == LATITUDE), "the GPS position is gone");
    assert!(!served.windows(4).any(|w| w == b"Exif"), "no EXIF is left");
    assert_eq!(kept["bytes"].as_u64(), Some(served.len() as u64));
    assert_eq!(kept["sha256"], hex::encode(Sha256::digest(&served)));
    let shown = image::load_from_memory(&served).unwrap().to_rgb8();
    assert_eq!(shown.dimensions(), (32, 64));
    assert!(red(*shown.get_pixel(28, 4)) && !red(*shown.get_pixel(4, 4)), "shown the right way up");
    // Nor is the GPS anywhere in the store.
    let files = kept_files(store.as_ref()).await;
    assert!(!files.is_empty());
    assert!(files.iter().all(|f| !f.windows(LATITUDE.len()).any(|w| w == LATITUDE)));

    let (_, with_cover) = app.get(&format!("/api/items/{drill}")).await;
    assert_eq!(with_cover["cover"], id);
    let (_, listed) = app.get("/api/items").await;
    let row = listed["items"].as_array().unwrap().iter().find(|i| i["id"] == drill).unwrap().clone();
    assert_eq!(row["cover"], id);

    // The thumbnail: a JPEG, small, upright; the same bytes the second time (kept).
    let (status, media_type, thumb) = fetch(app, &app.token, &format!("/api/media/{id}/thumb")).await;
    assert_eq!((status, media_type.as_str()), (StatusCode::OK, "image/jpeg"));
    let small = image::load_from_memory(&thumb).unwrap().to_rgb8();
    assert!(small.width().max(small.height()) <= 320);
    assert_eq!(small.dimensions(), (32, 64));
    assert!(red(*small.get_pixel(28, 4)));
    let (_, _, again) = fetch(app, &app.token, &format!("/api/media/{id}/thumb")).await;
    assert_eq!(thumb, again);

    // A receipt: a PDF with a kind and a caption; no size, no thumbnail.
    let form =
        Form::new().part("file", file(PDF, "receipt.pdf")).text("kind", "receipt").text("caption", " bought in March ");
    let (status, receipt) = upload(app, &app.token, drill, form).await;
    assert_eq!(status, StatusCode::CREATED, "{receipt}");
    assert_eq!((receipt["kind"].as_str(), receipt["media_type"].as_str()), (Some("receipt"), Some("application/pdf")));
    assert_eq!((receipt["width"].clone(), receipt["height"].clone()), (Value::Null, Value::Null));
    assert_eq!(receipt["caption"], "bought in March");
    let receipt_id = receipt["id"].as_i64().unwrap();
    let (status, media_type, pdf) = fetch(app, &app.token, &format!("/api/media/{receipt_id}")).await;
    assert_eq!((status, media_type.as_str(), pdf.as_slice()), (StatusCode::OK, "application/pdf", PDF));
    let (status, _, body) = fetch(app, &app.token, &format!("/api/media/{receipt_id}/thumb")).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{}", String::from_utf8_lossy(&body));

    let (status, list) = app.get(&format!("/api/items/{drill}/media")).await;
    assert_eq!(status, StatusCode::OK);
    let ids: Vec<i64> = list["media"].as_array().unwrap().iter().map(|m| m["id"].as_i64().unwrap()).collect();
    assert_eq!(ids, vec![id, receipt_id], "oldest first");
    assert_eq!(list["media"][0], kept);

    // Delete: 204, then gone everywhere, its files too; the receipt stays.
    assert_eq!(delete(app, &app.token, &format!("/api/media/{id}")).await, StatusCode::NO_CONTENT);
    let (status, _, _) = fetch(app, &app.token, &format!("/api/media/{id}")).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(delete(app, &app.token, &format!("/api/media/{id}")).await, StatusCode::NOT_FOUND);
    let (_, list) = app.get(&format!("/api/items/{drill}/media")).await;
    assert_eq!(list["media"].as_array().unwrap().len(), 1);
    let (_, without) = app.get(&format!("/api/items/{drill}")).await;
    assert_eq!(without["cover"], Value::Null);
    let files = kept_files(store.as_ref()).await;
    assert_eq!(files, vec![PDF.to_vec()], "only the receipt's file is left");
}

async fn refused_files_keep_nothing(db: Db) {
    let dir = DataDir::new();
    let app = spawn(db, &dir).await;
    let drill = app.create_item(item("Cordless drill", "tool")).await;
    let heic = b"\0\0\0\x18ftypheic\0\0\0\0mif1heicmiaf\0\0\0\0".to_vec();
    let (status, body) = upload(&app, &app.token, drill, Form::new().part("file", file(&heic, "IMG.HEIC"))).await;
    assert_error(status, &body, StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("image/heic") && message.contains("image/jpeg") && message.contains("application/pdf"),
        "{message}"
    );

    let mut cut = exif_jpeg(200, 100, 1, true);
    cut.truncate(cut.len() / 3);
    let mut big = vec![0u8; 25 * 1024 * 1024 + 1];
    big[..3].copy_from_slice(&[0xFF, 0xD8, 0xFF]);
    let cases: Vec<(Form, StatusCode, &str)> = vec![
        (Form::new().part("file", file(b"", "empty.jpg")), StatusCode::BAD_REQUEST, "invalid"),
        (Form::new().part("file", file(&cut, "cut.jpg")), StatusCode::BAD_REQUEST, "invalid"),
        (Form::new().part("file", file(b"%PDF-1.7 no end", "cut.pdf")), StatusCode::BAD_REQUEST, "invalid"),
        (Form::new().part("file", file(&big, "big.jpg")), StatusCode::PAYLOAD_TOO_LARGE, "too_large"),
        (Form::new().part("file", file(PDF, "r.pdf")).text("kind", "selfie"), StatusCode::BAD_REQUEST, "invalid"),
        (Form::new().part("file", file(PDF, "r.pdf")).text("caption", "a\u{7}b"), StatusCode::BAD_REQUEST, "invalid"),
        (Form::new().text("kind", "photo"), StatusCode::BAD_REQUEST, "invalid"),
    ];
    for (form, want, code) in cases {
        let (status, body) = upload(&app, &app.token, drill, form).await;
        assert_error(status, &body, want, code);
    }
    let (status, body) = upload(&app, &app.token, 999_999, Form::new().part("file", file(PDF, "r.pdf"))).await;
    assert_error(status, &body, StatusCode::NOT_FOUND, "not_found");
    let (_, list) = app.get(&format!("/api/items/{drill}/media")).await;
    assert_eq!(list["media"], serde_json::json!([]));
    let store = trove_media::FileStore::open(&dir.0.join("media"));
    assert!(kept_files(&store).await.is_empty(), "nothing is kept of a refused file");
}

async fn another_households_media_is_404(db: Db) {
    let dir = DataDir::new();
    let app = spawn(db, &dir).await;
    let drill = app.create_item(item("Cordless drill", "tool")).await;
    let (status, kept) =
        upload(&app, &app.token, drill, Form::new().part("file", file(&exif_jpeg(40, 30, 1, false), "a.jpg"))).await;
    assert_eq!(status, StatusCode::CREATED, "{kept}");
    let id = kept["id"].as_i64().unwrap();
    let other = app.token_of("neighbours").await;
    for path in [format!("/api/media/{id}"), format!("/api/media/{id}/thumb"), format!("/api/items/{drill}/media")] {
        let (status, _, body) = fetch(&app, &other, &path).await;
        let body: Value = serde_json::from_slice(&body).unwrap();
        assert_error(status, &body, StatusCode::NOT_FOUND, "not_found");
    }
    assert_eq!(delete(&app, &other, &format!("/api/media/{id}")).await, StatusCode::NOT_FOUND);
    let (status, body) = upload(&app, &other, drill, Form::new().part("file", file(PDF, "r.pdf"))).await;
    assert_error(status, &body, StatusCode::NOT_FOUND, "not_found");
    // Still there for its own household.
    let (status, _, _) = fetch(&app, &app.token, &format!("/api/media/{id}")).await;
    assert_eq!(status, StatusCode::OK);
    let (_, list) = app.get(&format!("/api/items/{drill}/media")).await;
    assert_eq!(list["media"].as_array().unwrap().len(), 1);
}

/// A clock a day and an hour ahead: the sweep as it runs the next day.
struct NextDay;

impl trove_application::ports::Clock for NextDay {
    fn now(&self) -> trove_domain::Timestamp {
        chrono::Utc::now() + chrono::TimeDelta::hours(25)
    }
}

async fn intake_keeps_its_photos_until_an_item_takes_them(db: Db) {
    let dir = DataDir::new();
    let app = spawn(db, &dir).await;
    let marker = trove_vision::scene::catalogue().into_iter().find(|s| s.name == "a square marker").unwrap();
    let form = Form::new().part("image", Part::bytes(marker.png()).file_name("photo").mime_str("image/png").unwrap());
    let resp = app.client.post(app.url("/api/intake/photo")).bearer_auth(&app.token).multipart(form).send().await;
    let resp = resp.unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    let body: Value = resp.json().await.unwrap();
    let whole = body["photo_id"].as_i64().expect("the photo is kept");
    let regions = body["regions"].as_array().unwrap();
    assert_eq!(regions.len(), 3, "{body}");
    let crops: Vec<i64> = regions.iter().map(|r| r["photo_id"].as_i64().expect("each region is kept")).collect();

    // Each crop is a picture of just its region.
    for (region, crop) in regions.iter().zip(&crops) {
        let (status, media_type, bytes) = fetch(&app, &app.token, &format!("/api/media/{crop}")).await;
        assert_eq!((status, media_type.as_str()), (StatusCode::OK, "image/jpeg"));
        let picture = image::load_from_memory(&bytes).unwrap();
        assert_eq!(u64::from(picture.width()), region["width"].as_u64().unwrap(), "{region}");
        assert_eq!(u64::from(picture.height()), region["height"].as_u64().unwrap(), "{region}");
    }

    // Another household cannot take them; nothing is created then.
    let other = app.token_of("neighbours").await;
    let mut taking = item("Square marker", "part");
    taking["media_ids"] = serde_json::json!([crops[0]]);
    let resp = app.client.post(app.url("/api/items")).bearer_auth(&other).json(&taking).send().await.unwrap();
    let status = resp.status();
    let body: Value = resp.json().await.unwrap();
    assert_error(status, &body, StatusCode::UNPROCESSABLE_ENTITY, "rule");
    // An unknown id among known ones: nothing is created, nothing attached.
    taking["media_ids"] = serde_json::json!([crops[0], 999_999]);
    let (status, body) = app.post("/api/items", taking.clone()).await;
    assert_error(status, &body, StatusCode::UNPROCESSABLE_ENTITY, "rule");
    assert!(body["error"]["message"].as_str().unwrap().contains("999999"), "{body}");
    let (_, listed) = app.get("/api/items").await;
    assert_eq!(listed["items"].as_array().unwrap().len(), 0, "{listed}");

    // The item takes its crop and the whole photo; its cover is the first photo kept, the whole one.
    taking["media_ids"] = serde_json::json!([crops[0], whole]);
    let (status, created) = app.post("/api/items", taking.clone()).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let id = created["id"].as_i64().unwrap();
    let (_, got) = app.get(&format!("/api/items/{id}")).await;
    assert_eq!(got["cover"].as_i64(), Some(whole), "{got}");
    let (_, list) = app.get(&format!("/api/items/{id}/media")).await;
    let attached: Vec<i64> = list["media"].as_array().unwrap().iter().map(|m| m["id"].as_i64().unwrap()).collect();
    assert_eq!(attached, vec![whole, crops[0]]);
    // Pending media were shown to no one: the activity has the two the item took, created on it, and no other.
    let (_, activity) = app.get("/api/activity?limit=200").await;
    let mut media: Vec<(String, i64, Value)> = activity["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["object"]["kind"] == "media")
        .map(|e| {
            (e["action"].as_str().unwrap().to_owned(), e["object"]["id"].as_i64().unwrap(), e["changes"][0].clone())
        })
        .collect();
    media.sort_by_key(|m| m.1);
    let on_item = serde_json::json!({"field": "item_id", "before": null, "after": id.to_string(), "before_name": null, "after_name": null});
    assert_eq!(media, [("create".to_owned(), whole, on_item.clone()), ("create".to_owned(), crops[0], on_item)]);
    // Already attached: refused, and the first item keeps it.
    let (status, body) = app.post("/api/items", taking).await;
    assert_error(status, &body, StatusCode::UNPROCESSABLE_ENTITY, "rule");

    // A day later the sweep removes the crops no item took, and keeps the attached ones.
    let store = Arc::new(trove_db::Store::connect(&app.database_url).await.unwrap());
    let media = trove_application::media::Media::new(
        store.clone(),
        Arc::new(trove_media::FileStore::open(&dir.0.join("media"))),
        Arc::new(trove_vision::pictures::PictureWork::new()),
        store.clone(),
        Arc::new(NextDay),
        trove_application::recorder::Recorder::new(Arc::new(NextDay)),
    );
    let swept = media.sweep().await.unwrap();
    assert_eq!(swept.pending, 2, "{swept:?}");
    for crop in &crops[1..] {
        let (status, _, _) = fetch(&app, &app.token, &format!("/api/media/{crop}")).await;
        assert_eq!(status, StatusCode::NOT_FOUND);
    }
    for kept in [whole, crops[0]] {
        let (status, _, _) = fetch(&app, &app.token, &format!("/api/media/{kept}")).await;
        assert_eq!(status, StatusCode::OK);
    }
}

/// The media of an item as (kind, caption, bytes), oldest first.
async fn media_of(app: &TestApp, item: i64) -> Vec<(String, Value, Vec<u8>)> {
    let (status, list) = app.get(&format!("/api/items/{item}/media")).await;
    assert_eq!(status, StatusCode::OK, "{list}");
    let mut out = Vec::new();
    for m in list["media"].as_array().unwrap() {
        let (status, _, bytes) = fetch(app, &app.token, &format!("/api/media/{}", m["id"])).await;
        assert_eq!(status, StatusCode::OK);
        out.push((m["kind"].as_str().unwrap().to_owned(), m["caption"].clone(), bytes));
    }
    out
}

/// The id of the item named `name` in `app`'s default household.
async fn named(app: &TestApp, name: &str) -> i64 {
    let items = app.all_items().await;
    let found: Vec<i64> = items.iter().filter(|i| i["name"] == name).map(|i| i["id"].as_i64().unwrap()).collect();
    assert_eq!(found.len(), 1, "one item named {name}: {found:?}");
    found[0]
}

async fn export_and_import_carry_the_media(db: Db) {
    let here = DataDir::new();
    let app = spawn(db, &here).await;
    // An item without media first; in the copy, an item made before the import shifts every id, so each file
    // must find its item through the sheet's ids, not by number.
    let _plain = app.create_item(item("Plain shelf", "shelf")).await;
    let lamp = app.create_item(item("Desk lamp", "lamp")).await;
    let drill = app.create_item(item("Cordless drill", "tool")).await;
    let sold = app.create_item(item("Old radio", "radio")).await;
    let photo = exif_jpeg(64, 32, 1, false);
    let form = Form::new().part("file", file(&photo, "lamp.jpg")).text("caption", "on the desk");
    assert_eq!(upload(&app, &app.token, lamp, form).await.0, StatusCode::CREATED);
    let form = Form::new().part("file", file(PDF, "receipt.pdf")).text("kind", "receipt");
    assert_eq!(upload(&app, &app.token, lamp, form).await.0, StatusCode::CREATED);
    let manual = exif_jpeg(40, 40, 1, false);
    let form = Form::new().part("file", file(&manual, "manual.jpg")).text("kind", "manual").text("caption", "page 1");
    assert_eq!(upload(&app, &app.token, drill, form).await.0, StatusCode::CREATED);
    assert_eq!(
        upload(&app, &app.token, sold, Form::new().part("file", file(&photo, "radio.jpg"))).await.0,
        StatusCode::CREATED
    );
    let (status, body) = app.post(&format!("/api/items/{sold}/gone"), serde_json::json!({"reason": "sold"})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let lamp_media = media_of(&app, lamp).await;
    let drill_media = media_of(&app, drill).await;
    assert_eq!(lamp_media.len(), 2);

    let out = DataDir::new();
    std::fs::create_dir_all(&out.0).unwrap();
    let sheet = out.0.join("export.csv");
    let media_dir = out.0.join("media");
    let (n, copied) =
        trove::exchange::export_with_media(&app.app, Some(&sheet), "default", Some(&media_dir)).await.unwrap();
    assert_eq!((n, copied.files), (4, 4), "{copied:?}");
    let mut names: Vec<String> =
        std::fs::read_dir(&media_dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    names.sort();
    let (_, lamp_list) = app.get(&format!("/api/items/{lamp}/media")).await;
    let lamp_ids: Vec<i64> = lamp_list["media"].as_array().unwrap().iter().map(|m| m["id"].as_i64().unwrap()).collect();
    assert!(names.contains(&format!("{lamp}-{}.jpg", lamp_ids[0])), "{names:?}");
    assert!(names.contains(&format!("{lamp}-{}.pdf", lamp_ids[1])), "{names:?}");
    assert!(names.contains(&"media.json".to_owned()), "{names:?}");
    assert_eq!(names.len(), 5, "{names:?}");
    let copied_bytes: u64 =
        names.iter().filter(|n| *n != "media.json").map(|n| std::fs::metadata(media_dir.join(n)).unwrap().len()).sum();
    assert_eq!(copied.bytes, copied_bytes);

    // A fresh store of the same kind: the items come back, and each file onto the item its row became.
    let there = DataDir::new();
    let copy = spawn(db, &there).await;
    let _first = copy.create_item(item("Already here", "thing")).await;
    let (done, attached) =
        trove::exchange::import_with_media(&copy.app, &sheet, "default", false, Some(&media_dir)).await.unwrap();
    assert_eq!((done.rows, done.skipped), (3, 1));
    assert_eq!((attached.files, attached.present, attached.skipped), (3, 0, 1), "the gone radio's photo is not");
    let new_lamp = named(&copy, "Desk lamp").await;
    let new_drill = named(&copy, "Cordless drill").await;
    assert_ne!(new_lamp, lamp, "the new store numbers its items itself");
    assert_eq!(media_of(&copy, new_lamp).await, lamp_media);
    assert_eq!(media_of(&copy, new_drill).await, drill_media);
    assert_eq!(media_of(&copy, new_drill).await[0].0, "manual");
    assert_eq!(media_of(&copy, new_lamp).await[1].0, "receipt");
    assert!(media_of(&copy, named(&copy, "Plain shelf").await).await.is_empty());
    let (_, got) = copy.get(&format!("/api/items/{new_lamp}")).await;
    let (_, list) = copy.get(&format!("/api/items/{new_lamp}/media")).await;
    assert_eq!(got["cover"], list["media"][0]["id"], "the photo is the cover again");

    // Importing the same export again changes nothing.
    let (_, again) =
        trove::exchange::import_with_media(&copy.app, &sheet, "default", false, Some(&media_dir)).await.unwrap();
    assert_eq!((again.files, again.present), (0, 3));
    assert_eq!(media_of(&copy, new_lamp).await.len(), 2);

    // A refused file refuses the import before anything is written.
    let bad = out.0.join("bad-media");
    std::fs::create_dir_all(&bad).unwrap();
    std::fs::write(bad.join(format!("{lamp}-99.jpg")), b"GIF89a not a jpeg").unwrap();
    let err = trove::exchange::import_with_media(&copy.app, &sheet, "other", false, Some(&bad)).await.unwrap_err();
    let err = format!("{err:#}");
    assert!(err.contains("nothing was imported") && err.contains("-99.jpg"), "{err}");
    let other = copy.token_of("other").await;
    let (_, listed) = copy.get_as(&other, "/api/items").await;
    assert_eq!(listed["items"].as_array().unwrap().len(), 0);
}

async fn captions_are_edited_and_recorded(db: Db) {
    use crate::people::{from_page, json_of, sign_up};
    let dir = DataDir::new();
    let app = spawn(db, &dir).await;
    let drill = app.create_item(item("Cordless drill", "tool")).await;
    let (status, kept) = upload(&app, &app.token, drill, Form::new().part("file", file(PDF, "manual.pdf"))).await;
    assert_eq!(status, StatusCode::CREATED, "{kept}");
    let id = kept["id"].as_i64().unwrap();
    let path = format!("/api/media/{id}");
    let ada = sign_up(&app, "member", "Ada").await;
    let patch = |body: Value, cookie: &str| {
        let req = from_page(&app, reqwest::Method::PATCH, &path, cookie).json(&body);
        async move { json_of(req.send().await.unwrap()).await }
    };

    // A member sets it, then removes it; the answer is the medium.
    let (status, changed) = patch(serde_json::json!({"caption": "  Manual, page 1 "}), &ada.cookie).await;
    assert_eq!(status, StatusCode::OK, "{changed}");
    assert_eq!((changed["id"].as_i64(), changed["caption"].as_str()), (Some(id), Some("Manual, page 1")));
    assert_eq!(changed["sha256"], kept["sha256"]);
    let (_, list) = app.get(&format!("/api/items/{drill}/media")).await;
    assert_eq!(list["media"][0]["caption"], "Manual, page 1");
    let (status, cleared) = patch(serde_json::json!({"caption": null}), &ada.cookie).await;
    assert_eq!((status, &cleared["caption"]), (StatusCode::OK, &Value::Null), "{cleared}");

    // Refused captions change nothing: too long, a control character, no caption at all, an unknown member.
    for body in [
        serde_json::json!({"caption": "x".repeat(501)}),
        serde_json::json!({"caption": "a\u{1}b"}),
        serde_json::json!({}),
        serde_json::json!({"caption": "x", "kind": "photo"}),
    ] {
        let (status, answer) = patch(body.clone(), &ada.cookie).await;
        assert_error(status, &answer, StatusCode::BAD_REQUEST, "invalid");
    }
    // Another household's medium, or none, is 404; a viewer may not write.
    let other = app.token_of("neighbours").await;
    let resp = app.client.patch(app.url(&path)).bearer_auth(&other).json(&serde_json::json!({"caption": "mine"}));
    let (status, answer) = json_of(resp.send().await.unwrap()).await;
    assert_error(status, &answer, StatusCode::NOT_FOUND, "not_found");
    let resp = app
        .client
        .patch(app.url("/api/media/999999"))
        .bearer_auth(&app.token)
        .json(&serde_json::json!({"caption": "x"}));
    let (status, answer) = json_of(resp.send().await.unwrap()).await;
    assert_error(status, &answer, StatusCode::NOT_FOUND, "not_found");
    let vic = sign_up(&app, "viewer", "Vic").await;
    let (status, answer) = patch(serde_json::json!({"caption": "mine"}), &vic.cookie).await;
    assert_error(status, &answer, StatusCode::FORBIDDEN, "forbidden");
    let (_, list) = app.get(&format!("/api/items/{drill}/media")).await;
    assert_eq!(list["media"][0]["caption"], Value::Null);

    // Both changes are in the activity as Ada's.
    let (_, activity) = app.get("/api/activity?limit=200").await;
    let mut patches: Vec<(Option<String>, Value)> = activity["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["object"]["kind"] == "media" && e["action"] == "patch")
        .map(|e| {
            assert_eq!(e["object"]["id"].as_i64(), Some(id), "{e}");
            (e["member"]["name"].as_str().map(str::to_owned), e["changes"].clone())
        })
        .collect();
    patches.reverse();
    let ada_name = Some("Ada".to_owned());
    assert_eq!(
        patches,
        [
            (
                ada_name.clone(),
                serde_json::json!([{"field": "caption", "before": null, "after": "Manual, page 1", "before_name": null, "after_name": null}])
            ),
            (
                ada_name,
                serde_json::json!([{"field": "caption", "before": "Manual, page 1", "after": null, "before_name": null, "after_name": null}])
            ),
        ]
    );
    // The route is in the API's document.
    let (_, doc) = app.get("/api/openapi.json").await;
    assert!(doc["paths"]["/media/{id}"]["patch"].is_object(), "{}", doc["paths"]["/media/{id}"]);
}

/// Posts `png` to the photo intake as its `image`.
async fn intake_photo(app: &TestApp, png: &[u8]) -> (StatusCode, Value) {
    let form = Form::new().part("image", Part::bytes(png.to_vec()).file_name("photo").mime_str("image/png").unwrap());
    let resp = app.client.post(app.url("/api/intake/photo")).bearer_auth(&app.token).multipart(form).send().await;
    let resp = resp.expect("answer");
    let status = resp.status();
    (status, resp.json().await.expect("a JSON answer"))
}

async fn hostile_pictures_cost_bounded_memory(db: Db) {
    let dir = DataDir::new();
    let app = spawn(db, &dir).await;
    let store = trove_media::FileStore::open(&dir.0.join("media"));
    let drill = app.create_item(item("Cordless drill", "tool")).await;

    // 7000 x 7000 16-bit RGBA, interlaced (its rows cannot be streamed): 392 MB whole, over the bound of the bytes
    // a decode may take. Refused from its header, before its pixel data (a few bytes here) is read.
    let header = [&7000u32.to_be_bytes()[..], &7000u32.to_be_bytes(), &[16, 6, 0, 0, 1]].concat();
    let interlaced = [
        &b"\x89PNG\r\n\x1a\n"[..],
        &png_chunk(b"IHDR", &header),
        &png_chunk(b"IDAT", &[0x78, 0x01, 0x03, 0x00]),
        &png_chunk(b"IEND", b""),
    ]
    .concat();
    let (status, body) = upload(&app, &app.token, drill, Form::new().part("file", file(&interlaced, "big.png"))).await;
    assert_error(status, &body, StatusCode::PAYLOAD_TOO_LARGE, "too_large");
    let (status, body) = intake_photo(&app, &interlaced).await;
    assert_error(status, &body, StatusCode::PAYLOAD_TOO_LARGE, "too_large");
    assert!(kept_files(&store).await.is_empty(), "nothing is kept of a refused picture");

    // 64 x 64 pixels and an ICC profile of 1 GB deflated into 6.5 MB: kept, without the profile, which was never
    // inflated past the bound.
    let bomb = iccp_bomb_png(1 << 30);
    assert!(bomb.len() < 8 << 20, "{} bytes", bomb.len());
    let has_profile = |png: &[u8]| png.windows(4).any(|w| w == b"iCCP");
    assert!(has_profile(&bomb));
    let (status, body) = upload(&app, &app.token, drill, Form::new().part("file", file(&bomb, "icc.png"))).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let id = body["id"].as_i64().unwrap();
    let (status, media_type, kept) = fetch(&app, &app.token, &format!("/api/media/{id}")).await;
    assert_eq!((status, media_type.as_str()), (StatusCode::OK, "image/png"));
    assert!(!has_profile(&kept), "the profile is not kept");
    assert_eq!(image::load_from_memory(&kept).unwrap().to_rgb8(), image::load_from_memory(&bomb).unwrap().to_rgb8());
    let (status, media_type, thumb) = fetch(&app, &app.token, &format!("/api/media/{id}/thumb")).await;
    assert_eq!((status, media_type.as_str()), (StatusCode::OK, "image/jpeg"));
    assert_eq!(image::load_from_memory(&thumb).unwrap().width(), 64);

    // The photo intake reads it too, and keeps it without its profile.
    let (status, body) = intake_photo(&app, &bomb).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["image"], serde_json::json!({"width": 64, "height": 64}));
    let photo = body["photo_id"].as_i64().expect("the photo is kept");
    let (status, _, kept) = fetch(&app, &app.token, &format!("/api/media/{photo}")).await;
    assert_eq!(status, StatusCode::OK);
    assert!(!has_profile(&kept), "the profile is not kept");
}
