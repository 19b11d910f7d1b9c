//! Where the media live, held: what Trove writes under its data directory and exports is the owner's only (0600
//! files, 0700 directories), a data directory left looser is tightened at start (Trove's entries only), and a
//! storage that cannot take a file (S3 down, a disk that cannot be written) answers 503 `storage_unavailable`
//! with `Retry-After`, quickly, while the reads that need no storage keep working.

use crate::app::{Db, TestApp, assert_error, item};
use crate::on_both;
use reqwest::StatusCode;
use reqwest::multipart::{Form, Part};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Instant;

on_both!(
    a_looser_data_directory_is_tightened_and_what_is_written_is_the_owners_only,
    an_unreachable_bucket_answers_503_with_retry_after,
    a_disk_that_cannot_be_written_answers_503_and_reads_keep_working
);

const PDF: &[u8] = b"%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n";

/// A fresh data directory, removed when dropped.
struct DataDir(PathBuf);

impl DataDir {
    fn new() -> Self {
        let mut salt = [0u8; 6];
        getrandom::fill(&mut salt).unwrap();
        DataDir(std::env::temp_dir().join(format!("trove-it-storage-{}", hex::encode(salt))))
    }
}

impl Drop for DataDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::metadata(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())).permissions().mode() & 0o777
}

fn set_mode(path: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// Uploads a PDF onto `item`: the status, the `Retry-After` header and the body.
async fn upload(app: &TestApp, item: i64) -> (StatusCode, Option<String>, Value) {
    let form = Form::new().part("file", Part::bytes(PDF.to_vec()).file_name("receipt.pdf"));
    let resp = app
        .client
        .post(app.url(&format!("/api/items/{item}/media")))
        .bearer_auth(&app.token)
        .multipart(form)
        .send()
        .await
        .expect("answer");
    let status = resp.status();
    let retry = resp.headers().get("retry-after").map(|v| v.to_str().unwrap().to_owned());
    let text = resp.text().await.unwrap();
    (status, retry, serde_json::from_str(&text).unwrap_or(Value::String(text)))
}

/// Every file and directory under `root` (itself included) with its mode.
fn modes_under(root: &Path) -> Vec<(PathBuf, u32, bool)> {
    let mut out = vec![(root.to_path_buf(), mode(root), root.is_dir())];
    if root.is_dir() {
        for entry in std::fs::read_dir(root).unwrap() {
            out.extend(modes_under(&entry.unwrap().path()));
        }
    }
    out
}

fn assert_owners_only(root: &Path) {
    for (path, mode, dir) in modes_under(root) {
        assert_eq!(mode, if dir { 0o700 } else { 0o600 }, "{}", path.display());
    }
}

async fn a_looser_data_directory_is_tightened_and_what_is_written_is_the_owners_only(db: Db) {
    let dir = DataDir::new();
    // What an older version left by the umask: a data directory, a fan-out directory and a blob readable by
    // everyone, and a file that is not Trove's.
    let fan_out = dir.0.join("media/ab");
    std::fs::create_dir_all(&fan_out).unwrap();
    std::fs::write(fan_out.join("ab".repeat(32)), b"old blob").unwrap();
    std::fs::write(dir.0.join("notes.txt"), b"mine").unwrap();
    for (path, m) in [
        (dir.0.clone(), 0o755),
        (dir.0.join("media"), 0o755),
        (fan_out.clone(), 0o755),
        (fan_out.join("ab".repeat(32)), 0o644),
        (dir.0.join("notes.txt"), 0o644),
    ] {
        set_mode(&path, m);
    }

    let app = TestApp::spawn(db, &[("TROVE_DATA_DIR", dir.0.display().to_string())]).await;
    assert_eq!(mode(&dir.0), 0o700);
    assert_owners_only(&dir.0.join("media"));
    assert_eq!(mode(&dir.0.join("notes.txt")), 0o644, "what is not Trove's is left as it is");

    // A new blob and its directories, and an export with its media.
    let drill = app.create_item(item("Cordless drill", "tool")).await;
    let (status, _, body) = upload(&app, drill).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_owners_only(&dir.0.join("media"));
    let export = dir.0.join("export");
    let sheet = export.join("items.csv");
    std::fs::create_dir_all(&export).unwrap();
    set_mode(&export, 0o700);
    let media = export.join("media");
    let (items, copied) =
        trove::exchange::export_with_media(&app.app, Some(&sheet), "default", Some(&media)).await.unwrap();
    assert_eq!((items, copied.files), (1, 1));
    assert_owners_only(&export);
}

async fn an_unreachable_bucket_answers_503_with_retry_after(db: Db) {
    // A port nothing listens on: the bucket's server is down.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let dir = DataDir::new();
    let settings = [
        ("TROVE_DATA_DIR", dir.0.display().to_string()),
        ("TROVE_MEDIA_URL", "s3://trove-it/media".to_owned()),
        ("AWS_ENDPOINT_URL", format!("http://127.0.0.1:{port}")),
        ("AWS_REGION", "us-east-1".to_owned()),
        ("AWS_ACCESS_KEY_ID", "test".to_owned()),
        ("AWS_SECRET_ACCESS_KEY", "test".to_owned()),
    ];
    let app = TestApp::spawn(db, &settings).await;
    let drill = app.create_item(item("Cordless drill", "tool")).await;
    let started = Instant::now();
    let (status, retry, body) = upload(&app, drill).await;
    // "Quickly" is the client's bound (`trove_media::s3::UNREACHABLE_WITHIN`, checked to be at most 2 s by the
    // media adapter's tests), not a stopwatch here.
    eprintln!("an upload to a bucket that is down answered in {:?}", started.elapsed());
    assert_error(status, &body, StatusCode::SERVICE_UNAVAILABLE, "storage_unavailable");
    assert_eq!(body["error"]["message"], "the storage cannot be reached; try again in 10 s");
    assert_eq!(retry.as_deref(), Some("10"));
    let (_, media) = app.get(&format!("/api/items/{drill}/media")).await;
    assert_eq!(media["media"], serde_json::json!([]), "nothing is kept");
}

async fn a_disk_that_cannot_be_written_answers_503_and_reads_keep_working(db: Db) {
    let dir = DataDir::new();
    std::fs::create_dir_all(&dir.0).unwrap();
    // A file where the media directory would be: nothing can be written under it, by root neither.
    std::fs::write(dir.0.join("media"), b"in the way").unwrap();
    let app = TestApp::spawn(db, &[("TROVE_DATA_DIR", dir.0.display().to_string())]).await;
    let drill = app.create_item(item("Cordless drill", "tool")).await;
    let (status, retry, body) = upload(&app, drill).await;
    assert_error(status, &body, StatusCode::SERVICE_UNAVAILABLE, "storage_unavailable");
    assert_eq!(retry.as_deref(), Some("10"));
    let (status, items) = app.get("/api/items").await;
    assert_eq!(status, StatusCode::OK, "{items}");
    assert_eq!(items["items"][0]["id"], drill);
}
