//! Media upload: a 12-megapixel JPEG (about 5 MB, with EXIF GPS) uploaded to a running Trove on SQLite, with the
//! filesystem store and, when `moto_server` is found (`MOTO_SERVER` or the PATH), the S3-compatible store:
//! time to the 201 and to the first thumbnail, next to copying the same bytes (`std::fs::copy`, as `cp` does;
//! one S3 PUT of them through the same client library); then the peak RSS of this process while 8 such photos are
//! uploaded at once (the server and its client share the process: the client holds the 8 bodies too).
//!
//! `cargo bench -p trove --bench media_upload` (a release build). Figures go to BENCHMARKS.md and docs/perf/media.md.

use poem::listener::{Acceptor, Listener, TcpListener};
use std::collections::HashMap;
use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use trove_application::ports::MediaStore;

const RUNS: usize = 5;
const CONCURRENT: usize = 8;

/// A photo-like 4000 x 3000 JPEG: smooth light and shade with fine grain, as a camera's sensor gives.
fn photo() -> Vec<u8> {
    let (w, h) = (4000u32, 3000u32);
    let mut seed = 0x2545_F491_4F6C_DD1Du64;
    let img = image::RgbImage::from_fn(w, h, |x, y| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let grain = (seed % 48) as i32 - 24;
        let base = [(x * 200 / w) as i32 + 30, (y * 180 / h) as i32 + 40, ((x + y) * 120 / (w + h)) as i32 + 60];
        image::Rgb(base.map(|c| (c + grain).clamp(0, 255) as u8))
    });
    let mut jpeg = Vec::new();
    image::codecs::jpeg::JpegEncoder::new_with_quality(&mut jpeg, 85).encode_image(&img).unwrap();
    trove_vision::pictures::with_exif(&jpeg, 1, true)
}

fn median(mut d: Vec<Duration>) -> Duration {
    d.sort();
    d[d.len() / 2]
}

fn ms(d: Duration) -> String {
    format!("{:.0} ms", d.as_secs_f64() * 1000.0)
}

/// This process's resident set: `VmRSS` (now) or `VmHWM` (the peak since the last reset), in MiB.
fn rss(field: &str) -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with(field)).unwrap();
    let kb: f64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kb / 1024.0
}

/// Resets `VmHWM` to the current RSS (Linux: writing 5 to `clear_refs`).
fn reset_peak() {
    std::fs::write("/proc/self/clear_refs", "5").unwrap();
}

struct Served {
    base: String,
    token: String,
    client: reqwest::Client,
    _stop: tokio::sync::oneshot::Sender<()>,
}

async fn serve(vars: HashMap<&str, String>) -> Served {
    let config = trove::Config::from_vars(|k| vars.get(k).cloned()).unwrap();
    let app = trove::build(&config).await.unwrap();
    let token = trove::issue_token(&app, "default", "bench").await.unwrap();
    let acceptor = TcpListener::bind("127.0.0.1:0").into_acceptor().await.unwrap();
    let addr = acceptor.local_addr()[0].as_socket_addr().copied().unwrap();
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(trove_http::serve(acceptor, app.services, async move {
        let _ = rx.await;
    }));
    Served { base: format!("http://{addr}"), token, client: reqwest::Client::new(), _stop: tx }
}

impl Served {
    async fn item(&self) -> i64 {
        let body = serde_json::json!({"name": "Camera", "item_type": "camera", "profile": "", "condition": "good", "intent": "keep"});
        let resp =
            self.client.post(format!("{}/api/items", self.base)).bearer_auth(&self.token).json(&body).send().await;
        let item: serde_json::Value = resp.unwrap().json().await.unwrap();
        item["id"].as_i64().unwrap()
    }

    /// Uploads `bytes` and answers the new media's id.
    async fn upload(&self, item: i64, bytes: Vec<u8>) -> i64 {
        let form =
            reqwest::multipart::Form::new().part("file", reqwest::multipart::Part::bytes(bytes).file_name("IMG.jpg"));
        let resp = self
            .client
            .post(format!("{}/api/items/{item}/media", self.base))
            .bearer_auth(&self.token)
            .multipart(form)
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), reqwest::StatusCode::CREATED);
        let kept: serde_json::Value = resp.json().await.unwrap();
        kept["id"].as_i64().unwrap()
    }

    async fn thumb(&self, id: i64) {
        let resp = self.client.get(format!("{}/api/media/{id}/thumb", self.base)).bearer_auth(&self.token).send().await;
        let resp = resp.unwrap();
        assert_eq!(resp.status(), reqwest::StatusCode::OK);
        assert!(!resp.bytes().await.unwrap().is_empty());
    }
}

/// Each photo made distinct (one byte of its EXIF block), so no run finds its blob already stored.
fn distinct(photo: &[u8], n: usize) -> Vec<u8> {
    let mut p = photo.to_vec();
    // The last byte of the EXIF block's GPS seconds' denominator: harmless to the picture.
    let at = p.windows(4).position(|w| w == [0, 0, 0, 38]).unwrap() + 7;
    p[at] = (n % 250 + 1) as u8;
    p
}

/// Times `RUNS` uploads (to the 201) and their first thumbnails.
async fn time_uploads(s: &Served, photo: &[u8], offset: usize) -> (Duration, Duration) {
    let item = s.item().await;
    let (mut up, mut thumb) = (Vec::new(), Vec::new());
    for n in 0..RUNS {
        let bytes = distinct(photo, offset + n);
        let t = Instant::now();
        let id = s.upload(item, bytes).await;
        up.push(t.elapsed());
        let t = Instant::now();
        s.thumb(id).await;
        thumb.push(t.elapsed());
    }
    (median(up), median(thumb))
}

/// The peak RSS (MiB) while `CONCURRENT` uploads run at once, and the RSS before.
async fn peak_of_concurrent(s: &Served, photo: &[u8], offset: usize) -> (f64, f64) {
    let item = s.item().await;
    let bodies: Vec<Vec<u8>> = (0..CONCURRENT).map(|n| distinct(photo, offset + n)).collect();
    let before = rss("VmRSS:");
    reset_peak();
    let uploads = bodies.into_iter().map(|b| s.upload(item, b));
    futures::future::join_all(uploads).await;
    (before, rss("VmHWM:"))
}

struct Moto(Child);

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn moto_server() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("MOTO_SERVER") {
        return Some(PathBuf::from(p));
    }
    std::env::split_paths(&std::env::var_os("PATH")?).map(|d| d.join("moto_server")).find(|p| p.is_file())
}

fn http(port: u16, request: &str) -> std::io::Result<String> {
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port))?;
    stream.write_all(request.as_bytes())?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer)?;
    Ok(answer.lines().next().unwrap_or_default().to_owned())
}

/// Starts `moto_server` on a free port with a bucket `bench`.
fn start_moto(path: &Path) -> (Moto, u16) {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let child = Command::new(path)
        .args(["-H", "127.0.0.1", "-p", &port.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let moto = Moto(child);
    let deadline = Instant::now() + Duration::from_secs(60);
    while !http(port, "GET /moto-api/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .is_ok_and(|s| s.contains(" 200 "))
    {
        assert!(Instant::now() < deadline, "moto_server did not start");
        std::thread::sleep(Duration::from_millis(100));
    }
    let created =
        http(port, "PUT /bench HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n").unwrap();
    assert!(created.contains(" 200 "), "{created}");
    (moto, port)
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let photo = photo();
        println!("photo: 4000 x 3000 JPEG, {} bytes, EXIF with GPS", photo.len());
        let scratch = std::env::temp_dir().join(format!("trove-bench-media-{}", std::process::id()));
        std::fs::create_dir_all(&scratch).unwrap();

        // The filesystem store.
        let source = scratch.join("photo.jpg");
        std::fs::write(&source, &photo).unwrap();
        let copies: Vec<Duration> = (0..RUNS)
            .map(|n| {
                let t = Instant::now();
                std::fs::copy(&source, scratch.join(format!("copy-{n}.jpg"))).unwrap();
                t.elapsed()
            })
            .collect();
        let vars = HashMap::from([
            ("DATABASE_URL", trove_db::sqlite_url(&scratch.join("fs"))),
            ("TROVE_DATA_DIR", scratch.join("fs").display().to_string()),
        ]);
        let fs = serve(vars).await;
        let (up, thumb) = time_uploads(&fs, &photo, 0).await;
        println!("| filesystem | {} | {} | {} (`cp`) |", ms(up), ms(thumb), ms(median(copies)));
        let (before, peak) = peak_of_concurrent(&fs, &photo, 100).await;
        println!("filesystem: {CONCURRENT} concurrent uploads: RSS {before:.0} MiB before, peak {peak:.0} MiB");
        drop(fs);

        // The S3-compatible store.
        match moto_server() {
            None => println!("S3: skipped, moto_server not found (MOTO_SERVER or the PATH)"),
            Some(path) => {
                let (moto, port) = start_moto(&path);
                let endpoint = format!("http://127.0.0.1:{port}");
                let settings = trove_media::S3Settings::from_url(
                    "s3://bench/baseline",
                    Some(endpoint.clone()),
                    Some("us-east-1".into()),
                    Some("bench".into()),
                    Some("bench".into()),
                )
                .unwrap();
                let client = trove_media::S3Store::open(&settings).unwrap();
                let mut puts = Vec::new();
                for n in 0..RUNS {
                    let bytes = distinct(&photo, 200 + n);
                    let hash = trove_application::media::content_hash(&bytes);
                    let t = Instant::now();
                    client.put(&hash, &bytes).await.unwrap();
                    puts.push(t.elapsed());
                }
                let vars = HashMap::from([
                    ("DATABASE_URL", trove_db::sqlite_url(&scratch.join("s3"))),
                    ("TROVE_DATA_DIR", scratch.join("s3").display().to_string()),
                    ("TROVE_MEDIA_URL", "s3://bench/trove".to_owned()),
                    ("AWS_ENDPOINT_URL", endpoint),
                    ("AWS_REGION", "us-east-1".to_owned()),
                    ("AWS_ACCESS_KEY_ID", "bench".to_owned()),
                    ("AWS_SECRET_ACCESS_KEY", "bench".to_owned()),
                ]);
                let s3 = serve(vars).await;
                let (up, thumb) = time_uploads(&s3, &photo, 300).await;
                println!(
                    "| S3 (moto_server) | {} | {} | {} (one PUT, object_store) |",
                    ms(up),
                    ms(thumb),
                    ms(median(puts))
                );
                let (before, peak) = peak_of_concurrent(&s3, &photo, 400).await;
                println!("S3: {CONCURRENT} concurrent uploads: RSS {before:.0} MiB before, peak {peak:.0} MiB");
                drop(s3);
                drop(moto);
            }
        }
        let _ = std::fs::remove_dir_all(&scratch);
    });
}
