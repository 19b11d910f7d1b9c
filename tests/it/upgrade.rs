//! Upgrades that do not break the store: for each release's fixture (`tests/upgrade/fixtures/<release>`, a store
//! written by that release's `trove` on each backend, with what its API answered; `tests/upgrade/make_fixture.py`
//! cuts one), the store is loaded as it was, today's migrations run on it as a start runs them, and every read the
//! release answered is asked again: the same data, field by field (a newer Trove may add fields, never change or
//! drop one), the same files byte for byte, the same CSV columns, and the member's password still signs in.

use crate::app::{Db, TestApp};
use crate::on_both;
use reqwest::StatusCode;
use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};
use std::path::{Path, PathBuf};

/// Every release with a fixture, oldest first. Add each new release's here once its fixture is cut.
const RELEASES: &[&str] = &["v0.1.0"];

/// Fields that say when the read was made or the token last used (by this very read), not what the store held:
/// not compared. Each is `(path prefix, key)`.
const OF_THE_MOMENT: &[(&str, &str)] = &[("/report/value", "at"), ("/tokens", "last_used_at")];

on_both!(every_releases_store_upgrades_and_reads_the_same);

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/upgrade/fixtures")
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// The release's store on `db`, as it left it, with its media in a data directory of its own: the database URL
/// and the data directory.
async fn load(db: Db, release: &str) -> (String, PathBuf) {
    let backend = match db {
        Db::Sqlite => "sqlite",
        Db::Postgres => "postgres",
    };
    let fixture = fixtures().join(release).join(backend);
    let data = std::env::temp_dir().join(format!("trove-upgrade-{release}-{backend}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&data);
    copy_dir(&fixture.join("media"), &data.join("media"));
    let url = match db {
        Db::Sqlite => {
            std::fs::copy(fixture.join("trove.sqlite3"), data.join("trove.sqlite3")).unwrap();
            trove_db::sqlite_url(&data)
        }
        Db::Postgres => {
            let url = crate::app::fresh_database(db).await;
            let out = std::process::Command::new("psql")
                .args([url.as_str(), "-q", "-v", "ON_ERROR_STOP=1", "-f"])
                .arg(fixture.join("dump.sql"))
                .output()
                .expect("psql runs (the postgresql client)");
            assert!(out.status.success(), "loading {release}'s dump: {}", String::from_utf8_lossy(&out.stderr));
            url
        }
    };
    (url, data)
}

/// Whether `new` holds everything `old` held: the same scalars, every key of an object (more keys allowed), and
/// arrays of the same length, element by element. The first difference, with where it is.
fn holds(old: &Value, new: &Value, at: &str, path: &str) -> Result<(), String> {
    match (old, new) {
        (Value::Object(o), Value::Object(n)) => {
            for (key, value) in o {
                if OF_THE_MOMENT.iter().any(|(p, k)| path.starts_with(p) && k == key) {
                    continue;
                }
                let Some(now) = n.get(key) else { return Err(format!("{at}.{key} is gone")) };
                holds(value, now, &format!("{at}.{key}"), path)?;
            }
            Ok(())
        }
        (Value::Array(o), Value::Array(n)) => {
            if o.len() != n.len() {
                return Err(format!("{at} had {} elements, has {}", o.len(), n.len()));
            }
            o.iter().zip(n).enumerate().try_for_each(|(i, (a, b))| holds(a, b, &format!("{at}[{i}]"), path))
        }
        _ if old == new => Ok(()),
        _ => Err(format!("{at} was {old}, is {new}")),
    }
}

/// The rows of a CSV text as column name → value maps.
fn csv_rows(text: &str) -> Vec<std::collections::BTreeMap<String, String>> {
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let headers = reader.headers().unwrap().clone();
    reader
        .records()
        .map(|r| headers.iter().zip(r.unwrap().iter()).map(|(h, v)| (h.to_owned(), v.to_owned())).collect())
        .collect()
}

async fn every_releases_store_upgrades_and_reads_the_same(db: Db) {
    for release in RELEASES {
        upgrade(db, release).await;
    }
}

async fn upgrade(db: Db, release: &str) {
    let (url, data) = load(db, release).await;
    let backend = if db == Db::Sqlite { "sqlite" } else { "postgres" };
    let reads: Value = serde_json::from_slice(
        &std::fs::read(fixtures().join(release).join(backend).join("reads.json")).expect("the fixture's reads"),
    )
    .unwrap();
    // Starting runs the migrations the release did not have, as `trove serve` does.
    let app = TestApp::spawn_on(&url, &[("TROVE_DATA_DIR", data.display().to_string())]).await;
    let token = reads["token"].as_str().unwrap();

    let answers = reads["json"].as_object().unwrap();
    assert!(answers.len() >= 30, "the fixture records the reads");
    for (path, old) in answers {
        let (status, mut new) = app.get_as(token, &format!("/api{path}")).await;
        assert_eq!(status, StatusCode::OK, "{release} on {backend}: GET {path}: {new}");
        if path == "/tokens" {
            // The test's own token, which starting the app here issued.
            new["tokens"].as_array_mut().unwrap().retain(|t| t["name"] != "test");
        }
        if let Err(difference) = holds(old, &new, "", path) {
            panic!("{release} on {backend}: GET {path} answers otherwise: {difference}");
        }
    }

    for (path, file) in reads["files"].as_object().unwrap() {
        let resp = app.client.get(app.url(&format!("/api{path}"))).bearer_auth(token).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::OK, "GET {path}");
        if path != "/export.csv" {
            assert_eq!(resp.headers()["content-type"].to_str().unwrap(), file["content_type"], "GET {path}");
            let bytes = resp.bytes().await.unwrap();
            assert_eq!(hex::encode(Sha256::digest(&bytes)), file["sha256"], "{release} on {backend}: GET {path}");
            continue;
        }
        let text = resp.text().await.unwrap();
        let (old, new) = (csv_rows(reads["csv"].as_str().unwrap()), csv_rows(&text));
        assert_eq!(old.len(), new.len(), "{release} on {backend}: the CSV's rows");
        for (i, (o, n)) in old.iter().zip(&new).enumerate() {
            for (column, value) in o {
                assert_eq!(n.get(column), Some(value), "{release} on {backend}: CSV row {i}, column {column}");
            }
        }
    }

    // The member who joined with a password signs in with it.
    let member = &reads["member"];
    let (status, body) =
        app.post("/api/session", json!({ "name": member["name"], "password": member["password"] })).await;
    assert_eq!(status, StatusCode::OK, "{release} on {backend}: signing in: {body}");
    assert_eq!(body["member"]["name"], member["name"]);

    // And the upgraded store takes writes: an item added and read back.
    let id = app.create_item(crate::app::item("After the upgrade", "tool")).await;
    let (status, item) = app.get_as(token, &format!("/api/items/{id}")).await;
    assert_eq!((status, item["name"].as_str()), (StatusCode::OK, Some("After the upgrade")));
    let _ = std::fs::remove_dir_all(&data);
}

#[test]
fn holding_allows_new_fields_and_nothing_else() {
    let old = json!({"a": 1, "b": [{"c": "x"}], "at": "then"});
    assert!(holds(&old, &json!({"a": 1, "b": [{"c": "x", "d": 2}], "at": "then", "e": null}), "", "/p").is_ok());
    assert!(holds(&old, &json!({"a": 2, "b": [{"c": "x"}], "at": "then"}), "", "/p").unwrap_err().contains(".a"));
    assert!(holds(&old, &json!({"a": 1, "b": [], "at": "then"}), "", "/p").unwrap_err().contains(".b had 1"));
    assert!(holds(&old, &json!({"b": [{"c": "x"}], "at": "then"}), "", "/p").unwrap_err().contains(".a is gone"));
    assert!(holds(&old, &json!({"a": 1, "b": [{"c": "x"}], "at": "now"}), "", "/p").is_err());
    assert!(holds(&old, &json!({"a": 1, "b": [{"c": "x"}], "at": "now"}), "", "/report/value").is_ok());
}
