//! Intake through the HTTP API against a fake Model API: label, listing and voice readings (what goes over the
//! wire, spend, matches, refusals), and the CSV export and import (round trip, Homebox, all or nothing), through
//! the API and the command line's functions.

use crate::app::{Db, TestApp, assert_error, item};
use crate::fake_model::{fake_api, message, response, settings};
use crate::on_both;
use base64::Engine as _;
use reqwest::StatusCode;
use reqwest::multipart::{Form, Part};
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, ResponseTemplate};

on_both!(
    a_label_is_read_from_a_data_url_and_matched_by_serial,
    a_large_label_reaches_the_model_as_a_jpeg_of_2048_pixels,
    a_label_that_does_not_decode_or_is_too_small_is_never_sent,
    a_listing_is_read_and_matched_by_name,
    a_wav_voice_note_is_transcribed_then_read,
    a_stereo_voice_note_is_converted_and_costed_by_its_length,
    a_transcript_is_read_without_transcription,
    wrong_media_types_and_empty_texts_are_refused,
    readings_need_the_model_api,
    a_model_failure_is_a_bad_gateway_with_spend_recorded,
    csv_export_imports_into_a_fresh_household_as_the_same_items,
    a_homebox_export_imports_and_reimports_without_duplicates,
    a_bad_row_refuses_the_whole_file,
    the_command_line_exports_and_imports,
);

/// A small label photo: it decodes, so it is sent as it is.
fn label_png() -> Vec<u8> {
    encoded(&image::DynamicImage::ImageRgb8(ramp(64, 48)), image::ImageFormat::Png)
}

/// A smooth picture of `w x h`: a horizontal red ramp and a vertical green one.
fn ramp(w: u32, h: u32) -> image::RgbImage {
    image::RgbImage::from_fn(w, h, |x, y| image::Rgb([(x * 255 / w) as u8, (y * 255 / h) as u8, 128]))
}

fn encoded(image: &image::DynamicImage, format: image::ImageFormat) -> Vec<u8> {
    let mut out = std::io::Cursor::new(Vec::new());
    image.write_to(&mut out, format).expect("the image encodes");
    out.into_inner()
}
const GIF: &[u8] = b"GIF89a\x01\0\x01\0\0\0\0;";
const MP3: &[u8] = b"ID3\x04\0\0\0\0\0\0\xff\xfb\x90\x64";

/// A WAV header and a few silent samples.
fn wav() -> Vec<u8> {
    let mut w =
        b"RIFF\x2c\0\0\0WAVEfmt \x10\0\0\0\x01\0\x01\0\x80\x3e\0\0\0\x7d\0\0\x02\0\x10\0data\x08\0\0\0".to_vec();
    w.extend_from_slice(&[0; 8]);
    w
}

/// A reading answer of one candidate.
fn reading(candidate: Value) -> ResponseTemplate {
    let text = json!({ "candidates": [candidate] }).to_string();
    ResponseTemplate::new(200).set_body_json(response(vec![message(&text, &[])], 1500, 300))
}

fn power_bank() -> Value {
    json!({"name": "Anker PowerCore 10000", "item_type": "Power Bank", "profile": "USB-C, 10000 mAh",
           "brand": "Anker", "model": "A1263", "serial": "AK-1234-5678", "condition": null,
           "measurements": [{"key": "capacity", "value": 10, "unit": "Ah"},
                            {"key": "weight", "value": 2, "unit": "stone"}],
           "faults": [{"text": "scuffed corner", "severity": "minor"}],
           "accessories": ["USB-C cable"]})
}

impl TestApp {
    async fn post_form(&self, path: &str, form: Form) -> (StatusCode, Value) {
        let resp =
            self.client.post(self.url(path)).bearer_auth(&self.token).multipart(form).send().await.expect("answer");
        let status = resp.status();
        let text = resp.text().await.unwrap();
        (status, serde_json::from_str(&text).unwrap_or(Value::String(text)))
    }

    pub(crate) async fn post_csv(&self, token: &str, body: Vec<u8>) -> (StatusCode, Value) {
        self.post_csv_to("/api/import", token, body).await
    }

    async fn post_csv_to(&self, path: &str, token: &str, body: Vec<u8>) -> (StatusCode, Value) {
        let resp = self
            .client
            .post(self.url(path))
            .bearer_auth(token)
            .header("Content-Type", "text/csv; charset=utf-8")
            .body(body)
            .send()
            .await
            .expect("answer");
        let status = resp.status();
        let text = resp.text().await.unwrap();
        (status, serde_json::from_str(&text).unwrap_or(Value::String(text)))
    }

    pub(crate) async fn export_as(&self, token: &str) -> String {
        let resp = self.client.get(self.url("/api/export.csv")).bearer_auth(token).send().await.unwrap();
        assert_eq!(resp.status(), StatusCode::OK);
        assert!(resp.headers()["content-type"].to_str().unwrap().starts_with("text/csv"));
        resp.text().await.unwrap()
    }

    pub(crate) async fn items_of(&self, token: &str) -> Vec<Value> {
        let (status, page) = self.get_as(token, "/api/items?include_gone=true&limit=500").await;
        assert_eq!(status, StatusCode::OK, "{page}");
        page["items"].as_array().unwrap().clone()
    }

    async fn spend_kinds(&self) -> Vec<String> {
        let (_, spend) = self.get("/api/spend").await;
        spend["entries"].as_array().unwrap().iter().map(|e| e["kind"].as_str().unwrap().to_owned()).collect()
    }
}

fn image_form(name: &str, bytes: &[u8], mime: &str) -> Form {
    Form::new().part(name.to_owned(), Part::bytes(bytes.to_vec()).file_name("upload").mime_str(mime).unwrap())
}

async fn a_label_is_read_from_a_data_url_and_matched_by_serial(db: Db) {
    let (server, seen) = fake_api(|_, _| reading(power_bank())).await;
    let app = TestApp::spawn(db, &settings(&server)).await;
    let mut owned = item("Power bank (black)", "power_bank");
    owned["profile"] = json!("bought 2021, serial AK12345678");
    let owned = app.create_item(owned).await;
    app.create_item(item("Garden hose", "hose")).await;

    let (status, body) = app.post_form("/api/intake/label", image_form("image", &label_png(), "image/png")).await;
    assert_eq!(status, StatusCode::OK, "{body}");

    let sent = &seen.bodies()[0];
    let content = &sent["input"][0]["content"];
    assert_eq!(content[0]["type"], "input_text");
    assert_eq!(content[1]["type"], "input_image");
    let url = content[1]["image_url"].as_str().unwrap();
    assert!(url.starts_with("data:image/png;base64,iVBORw0KGgo"), "{url}");
    assert_eq!(sent["text"]["format"]["type"], "json_schema");
    assert_eq!(sent["text"]["format"]["name"], "Reading");
    assert_eq!(sent["text"]["format"]["strict"], true);
    assert_eq!(sent["text"]["format"]["schema"]["additionalProperties"], false);
    assert!(sent.get("tools").is_none_or(|t| t.as_array().is_some_and(Vec::is_empty)), "{sent}");

    let c = &body["candidates"][0];
    assert_eq!(c["item"]["name"], "Anker PowerCore 10000");
    assert_eq!(c["item"]["item_type"], "power_bank");
    assert_eq!(c["item"]["condition"], "good");
    assert_eq!(c["item"]["intent"], "keep");
    assert_eq!(c["item"]["source"], "label");
    assert_eq!(c["item"]["fields"], json!({"capacity": {"value": 10000.0, "unit": "mAh"}}));
    assert_eq!(c["item"]["faults"], json!([{"text": "scuffed corner", "severity": "minor"}]));
    assert!(c["item"]["profile"].as_str().unwrap().contains("serial AK-1234-5678"), "{c}");
    assert!(c["notes"][0].as_str().unwrap().contains("stone"), "{c}");
    assert_eq!(c["matches"][0]["item_id"], owned);
    assert_eq!(c["matches"][0]["score"], 1.0);
    assert_eq!(c["matches"][0]["why"], "same serial AK12345678");
    assert_eq!(c["matches"].as_array().unwrap().len(), 1, "{c}");
    assert_eq!(body["spend"]["calls"], 1);
    assert_eq!(app.spend_kinds().await, vec!["read_label"]);

    // The candidate saves as is with the items API; intake itself wrote nothing.
    assert_eq!(app.all_items().await.len(), 2);
    // The label photo is kept pending; saving the candidate with it in `media_ids` keeps it on the item.
    let photo = body["photo_id"].as_i64().expect("the label photo is kept");
    let mut candidate = c["item"].clone();
    candidate["media_ids"] = json!([photo]);
    let (status, saved) = app.post("/api/items", candidate).await;
    assert_eq!(status, StatusCode::CREATED, "{saved}");
    assert_eq!(saved["fields"]["capacity"]["value"], 10000.0);
    let (_, got) = app.get(&format!("/api/items/{}", saved["id"])).await;
    assert_eq!(got["cover"].as_i64(), Some(photo), "{got}");
}

async fn a_large_label_reaches_the_model_as_a_jpeg_of_2048_pixels(db: Db) {
    let (server, seen) = fake_api(|_, _| reading(power_bank())).await;
    let app = TestApp::spawn(db, &settings(&server)).await;
    let photo = encoded(&image::DynamicImage::ImageRgb8(ramp(4000, 3000)), image::ImageFormat::Jpeg);
    let (status, body) = app.post_form("/api/intake/label", image_form("image", &photo, "image/jpeg")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let bodies = seen.bodies();
    assert_eq!(bodies.len(), 1);
    let url = bodies[0]["input"][0]["content"][1]["image_url"].as_str().unwrap().to_owned();
    let data = url.strip_prefix("data:image/jpeg;base64,").unwrap_or_else(|| panic!("a JPEG: {}", &url[..40]));
    let sent = base64::engine::general_purpose::STANDARD.decode(data).unwrap();
    assert!(sent.len() < photo.len(), "{} bytes sent for {}", sent.len(), photo.len());
    let sent = image::load_from_memory_with_format(&sent, image::ImageFormat::Jpeg).unwrap().to_rgb8();
    assert_eq!(sent.dimensions(), (2048, 1536));
    // The same picture, smaller: the red ramp runs left to right, the green one top to bottom.
    let px = sent.get_pixel(1536, 384);
    assert!(px[0].abs_diff(191) <= 6 && px[1].abs_diff(63) <= 6, "{px:?}");
    assert_eq!(body["candidates"][0]["item"]["name"], "Anker PowerCore 10000");
    assert_eq!(app.spend_kinds().await, vec!["read_label"]);
}

async fn a_label_that_does_not_decode_or_is_too_small_is_never_sent(db: Db) {
    let (server, seen) = fake_api(|_, _| reading(power_bank())).await;
    let app = TestApp::spawn(db, &settings(&server)).await;
    let photo = encoded(&image::DynamicImage::ImageRgb8(ramp(640, 480)), image::ImageFormat::Jpeg);
    // A JPEG cut short: its decoder would fill the rest with pixels that are not in the picture.
    let cut = &photo[..photo.len() * 2 / 3];
    let (s, b) = app.post_form("/api/intake/label", image_form("image", cut, "image/jpeg")).await;
    assert_error(s, &b, StatusCode::BAD_REQUEST, "invalid");
    assert!(b["error"]["message"].as_str().unwrap().contains("cut short"), "{b}");
    // PNG bytes that are not a picture.
    let png = label_png();
    let (s, b) = app.post_form("/api/intake/label", image_form("image", &png[..60], "image/png")).await;
    assert_error(s, &b, StatusCode::BAD_REQUEST, "invalid");
    // A picture too small to read a label from.
    let dot = encoded(&image::DynamicImage::new_rgb8(1, 1), image::ImageFormat::Png);
    let (s, b) = app.post_form("/api/intake/label", image_form("image", &dot, "image/png")).await;
    assert_error(s, &b, StatusCode::UNPROCESSABLE_ENTITY, "rule");
    assert_eq!(b["error"]["message"], "the image is 1 x 1 pixels; at least 16 x 16 are needed to hold an item");
    assert!(seen.bodies().is_empty(), "nothing was sent");
    assert!(app.spend_kinds().await.is_empty(), "nothing was spent");
    // The whole picture is read.
    let (s, b) = app.post_form("/api/intake/label", image_form("image", &photo, "image/jpeg")).await;
    assert_eq!(s, StatusCode::OK, "{b}");
    assert_eq!(seen.bodies().len(), 1);
}

async fn a_listing_is_read_and_matched_by_name(db: Db) {
    let answer = json!({"name": "Raspberry Pi 4 Model B 4GB", "item_type": "single_board_computer",
        "profile": "BCM2711, 4GB RAM", "brand": "Raspberry Pi", "model": null, "serial": null,
        "condition": "like_new", "measurements": [{"key": "ram", "value": 4096, "unit": "MB"}], "faults": [],
        "accessories": ["official case", "official case"]});
    let (server, seen) = fake_api(move |_, _| reading(answer.clone())).await;
    let app = TestApp::spawn(db, &settings(&server)).await;
    let mut pi = item("Raspberry Pi 4 Model B 4GB", "single_board_computer");
    pi["profile"] = json!("BCM2711, 4GB RAM");
    let pi = app.create_item(pi).await;
    let pi3 = app.create_item(item("Raspberry Pi 3 Model B", "single_board_computer")).await;
    app.create_item(item("Dell laptop charger", "power_supply")).await;

    let listing = "Selling my Raspberry Pi 4 (4GB), like new, comes with the official case. £40 collection only.";
    let (status, body) = app.post("/api/intake/listing", json!({ "text": listing })).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let sent = &seen.bodies()[0];
    assert!(sent["input"][0]["content"][0]["text"].as_str().unwrap().contains(listing));
    assert_eq!(sent["text"]["format"]["name"], "Reading");
    assert!(sent.get("tools").is_none());

    let c = &body["candidates"][0];
    assert_eq!(c["item"]["condition"], "like_new");
    assert_eq!(c["item"]["source"], "listing");
    assert_eq!(c["item"]["fields"]["ram"], json!({"value": 4.096, "unit": "GB"}));
    assert_eq!(c["item"]["accessories"], json!(["official case"]));
    let matches = c["matches"].as_array().unwrap();
    assert_eq!(matches[0]["item_id"], pi);
    assert!(matches[0]["why"].as_str().unwrap().starts_with("similar name and profile"), "{c}");
    assert!(matches[0]["score"].as_f64().unwrap() <= 0.8);
    assert_eq!(matches[1]["item_id"], pi3);
    assert!(matches[1]["score"].as_f64() < matches[0]["score"].as_f64());
    assert_eq!(app.spend_kinds().await, vec!["read_listing"]);
}

async fn a_wav_voice_note_is_transcribed_then_read(db: Db) {
    let (server, seen) = fake_api(|_, _| reading(power_bank())).await;
    Mock::given(method("POST"))
        .and(path("/asr/transcribe"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            "sessionId": "s1", "transcript": "I have an Anker power bank, ten thousand milliamp hours.",
            "audioDurationMs": 30000, "turns": []})))
        .expect(1)
        .mount(&server)
        .await;
    let app = TestApp::spawn(db, &settings(&server)).await;

    let (status, body) = app.post_form("/api/intake/voice", image_form("audio", &wav(), "audio/wav")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["transcript"], "I have an Anker power bank, ten thousand milliamp hours.");
    assert_eq!(body["candidates"][0]["item"]["source"], "voice");
    assert_eq!(body["spend"]["calls"], 2);
    let sent = &seen.bodies()[0];
    assert!(sent["input"][0]["content"][0]["text"].as_str().unwrap().contains("ten thousand milliamp hours"));
    assert_eq!(sent["text"]["format"]["name"], "Reading");

    let (_, spend) = app.get("/api/spend").await;
    let entries = spend["entries"].as_array().unwrap();
    let kinds: Vec<&str> = entries.iter().map(|e| e["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, vec!["transcribe", "read_voice"]);
    // Half a minute at the default 0.006 USD per minute.
    assert_eq!(entries[0]["cost_micro_usd"], 3000);
}

/// A WAV of `seconds` of a quiet tone, 16-bit PCM, `channels` channels at `rate` Hz, with the format tag `tag`.
fn tone_wav(tag: u16, channels: u16, rate: u32, seconds: u32) -> Vec<u8> {
    let frames = rate * seconds;
    let data_len = frames * u32::from(channels) * 2;
    let mut w = Vec::with_capacity(44 + data_len as usize);
    w.extend_from_slice(b"RIFF");
    w.extend_from_slice(&(36 + data_len).to_le_bytes());
    w.extend_from_slice(b"WAVEfmt ");
    w.extend_from_slice(&16u32.to_le_bytes());
    w.extend_from_slice(&tag.to_le_bytes());
    w.extend_from_slice(&channels.to_le_bytes());
    w.extend_from_slice(&rate.to_le_bytes());
    w.extend_from_slice(&(rate * u32::from(channels) * 2).to_le_bytes());
    w.extend_from_slice(&(channels * 2).to_le_bytes());
    w.extend_from_slice(&16u16.to_le_bytes());
    w.extend_from_slice(b"data");
    w.extend_from_slice(&data_len.to_le_bytes());
    for n in 0..frames {
        let v = (3000.0 * (f64::from(n) * 0.06).sin()) as i16;
        for _ in 0..channels {
            w.extend_from_slice(&v.to_le_bytes());
        }
    }
    w
}

async fn a_stereo_voice_note_is_converted_and_costed_by_its_length(db: Db) {
    let (server, seen) = fake_api(|_, _| reading(power_bank())).await;
    // This provider's answer leaves the duration out: the note's own length is what is costed.
    Mock::given(method("POST"))
        .and(path("/asr/transcribe"))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(json!({"sessionId": "s2", "transcript": "a power bank"})),
        )
        .expect(1)
        .mount(&server)
        .await;
    let app = TestApp::spawn(db, &settings(&server)).await;

    // A compressed WAV is refused before anything is sent, saying what to do.
    let (s, b) =
        app.post_form("/api/intake/voice", image_form("audio", &tone_wav(0x11, 1, 16_000, 1), "audio/wav")).await;
    assert_error(s, &b, StatusCode::BAD_REQUEST, "invalid");
    assert!(b["error"]["message"].as_str().unwrap().contains("uncompressed PCM WAV"), "{b}");
    assert!(app.spend_kinds().await.is_empty());

    // Two seconds of CD-rate stereo, as a phone or a desktop recorder saves it.
    let (status, body) =
        app.post_form("/api/intake/voice", image_form("audio", &tone_wav(1, 2, 44_100, 2), "audio/wav")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(seen.bodies().len(), 1, "the reading call");

    let requests = server.received_requests().await.unwrap();
    let upload = &requests.iter().find(|r| r.url.path() == "/asr/transcribe").unwrap().body;
    let at = upload.windows(4).position(|w| w == b"RIFF").expect("the audio part");
    let sent = trove_model::wav::Wav::read(&upload[at..]).expect("a WAV went out");
    assert!(sent.is_transcribable(), "{sent:?}");
    assert_eq!((sent.channels, sent.sample_rate, sent.duration_ms()), (1, 16_000, 2000));

    let (_, spend) = app.get("/api/spend").await;
    let transcribe = &spend["entries"][0];
    assert_eq!(
        (transcribe["kind"].as_str(), transcribe["model"].as_str()),
        (Some("transcribe"), Some("muse-voice-transcribe-1.0"))
    );
    // Two seconds at the default 0.006 USD per minute: 200 micro-USD.
    assert_eq!(transcribe["cost_micro_usd"], 200, "{spend}");
}

async fn a_transcript_is_read_without_transcription(db: Db) {
    let (server, seen) = fake_api(|_, _| reading(power_bank())).await;
    let app = TestApp::spawn(db, &settings(&server)).await;
    let (status, body) = app.post("/api/intake/voice", json!({"transcript": "an anker power bank"})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["transcript"], "an anker power bank");
    assert_eq!(seen.bodies().len(), 1);
    assert_eq!(app.spend_kinds().await, vec!["read_voice"]);
}

async fn wrong_media_types_and_empty_texts_are_refused(db: Db) {
    let (server, seen) = fake_api(|_, _| reading(power_bank())).await;
    let app = TestApp::spawn(db, &settings(&server)).await;
    let (s, b) = app.post_form("/api/intake/label", image_form("image", GIF, "image/gif")).await;
    assert_error(s, &b, StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type");
    // The bytes decide, not the declared type.
    let (s, b) = app.post_form("/api/intake/label", image_form("image", GIF, "image/png")).await;
    assert_error(s, &b, StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type");
    let (s, b) = app.post_form("/api/intake/voice", image_form("audio", MP3, "audio/mpeg")).await;
    assert_error(s, &b, StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type");
    // An empty file is a bad request, not an unknown type.
    let (s, b) = app.post_form("/api/intake/label", image_form("image", b"", "image/png")).await;
    assert_error(s, &b, StatusCode::BAD_REQUEST, "invalid");
    assert_eq!(b["error"]["message"], "the image is empty");
    let (s, b) = app.post_form("/api/intake/voice", image_form("audio", b"", "audio/wav")).await;
    assert_error(s, &b, StatusCode::BAD_REQUEST, "invalid");
    assert_eq!(b["error"]["message"], "the audio is empty");
    let (s, b) = app.post_form("/api/intake/label", image_form("photo", &label_png(), "image/png")).await;
    assert_error(s, &b, StatusCode::BAD_REQUEST, "invalid");
    let (s, b) = app.post("/api/intake/listing", json!({"text": "  "})).await;
    assert_error(s, &b, StatusCode::BAD_REQUEST, "invalid");
    assert_eq!(b["error"]["message"], "text must not be empty");
    let (s, b) = app.post("/api/intake/listing", json!({"text": "x".repeat(20_001)})).await;
    assert_error(s, &b, StatusCode::BAD_REQUEST, "invalid");
    let (s, b) = app.post("/api/intake/voice", json!({"transcript": ""})).await;
    assert_error(s, &b, StatusCode::BAD_REQUEST, "invalid");
    assert!(seen.bodies().is_empty());
    assert!(app.spend_kinds().await.is_empty());

    // An upload over the JSON body limit is not refused for its size alone.
    let mut big = label_png();
    big.resize(3 << 20, 0);
    let (s, b) = app.post_form("/api/intake/label", image_form("image", &big, "image/png")).await;
    assert_eq!(s, StatusCode::OK, "{b}");
    let mut huge = label_png();
    huge.resize(21 << 20, 0);
    let (s, b) = app.post_form("/api/intake/label", image_form("image", &huge, "image/png")).await;
    assert_error(s, &b, StatusCode::PAYLOAD_TOO_LARGE, "too_large");
}

async fn readings_need_the_model_api(db: Db) {
    let app = TestApp::spawn(db, &[]).await;
    let (s, b) = app.post("/api/intake/listing", json!({"text": "a lamp"})).await;
    assert_error(s, &b, StatusCode::SERVICE_UNAVAILABLE, "not_configured");
    assert!(b["error"]["message"].as_str().unwrap().contains("MODEL_API_KEY"), "{b}");
    let (s, b) = app.post_form("/api/intake/label", image_form("image", &label_png(), "image/png")).await;
    assert_error(s, &b, StatusCode::SERVICE_UNAVAILABLE, "not_configured");
    assert!(b["error"]["message"].as_str().unwrap().contains("MODEL_API_KEY"), "{b}");
    let (s, b) = app.post_form("/api/intake/voice", image_form("audio", &wav(), "audio/wav")).await;
    assert_error(s, &b, StatusCode::SERVICE_UNAVAILABLE, "not_configured");
    let (s, b) = app.post("/api/intake/voice", json!({"transcript": "a lamp"})).await;
    assert_error(s, &b, StatusCode::SERVICE_UNAVAILABLE, "not_configured");
    assert!(app.spend_kinds().await.is_empty());
}

async fn a_model_failure_is_a_bad_gateway_with_spend_recorded(db: Db) {
    let (server, _) = fake_api(|_, n| {
        if n == 0 {
            let mut failed = response(vec![], 800, 50);
            failed["status"] = json!("failed");
            // A code of the request's making: a `server_error` would be retried.
            failed["error"] = json!({"code": "invalid_prompt", "message": "the model crashed"});
            ResponseTemplate::new(200).set_body_json(failed)
        } else {
            ResponseTemplate::new(200).set_body_json(response(vec![message("not json at all", &[])], 700, 20))
        }
    })
    .await;
    let app = TestApp::spawn(db, &settings(&server)).await;
    let (s, b) = app.post("/api/intake/listing", json!({"text": "a lamp"})).await;
    assert_error(s, &b, StatusCode::BAD_GATEWAY, "model_failed");
    assert!(b["error"]["message"].as_str().unwrap().contains("the model crashed"), "{b}");
    assert_eq!(b["error"]["spend"]["calls"], 1);
    let (s, b) = app.post("/api/intake/listing", json!({"text": "a lamp"})).await;
    assert_error(s, &b, StatusCode::BAD_GATEWAY, "model_failed");
    assert!(b["error"]["message"].as_str().unwrap().contains("not a Reading"), "{b}");
    let (_, spend) = app.get("/api/spend").await;
    let entries = spend["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 2);
    assert!(entries.iter().all(|e| e["kind"] == "read_listing"));
    assert_eq!(entries[0]["input_tokens"], 800);
    assert!(entries[0]["cost_micro_usd"].as_i64().unwrap() > 0);
}

/// An item as compared across households: everything but ids and times.
fn comparable(item: &Value) -> Value {
    let tests: Vec<Value> = item["tests_done"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| json!([t["name"], t["result"], t["value"], t["note"], t["at"]]))
        .collect();
    json!({
        "name": item["name"], "item_type": item["item_type"], "profile": item["profile"],
        "condition": item["condition"], "intent": item["intent"], "availability": item["availability"],
        "location": item["location"], "fields": item["fields"], "faults": item["faults"],
        "accessories": item["accessories"], "tests": tests,
    })
}

async fn seed_for_export(app: &TestApp) {
    let mut cell = item("Samsung 25R 18650 cell, \"tested\"", "lithium_cell");
    cell["profile"] = json!("INR18650-25R, 2500 mAh; pulled from a drill pack\nsecond line");
    cell["condition"] = json!("fair");
    cell["intent"] = json!("sell");
    cell["location"] = json!("box, shelf B2");
    cell["accessories"] = json!(["holder", "wrap; spare"]);
    cell["fields"] = json!({"capacity": {"value": 2.45, "unit": "Ah"}, "voltage": {"value": 3.6, "unit": "V"}});
    cell["faults"] = json!([{"text": "dented, \"slightly\"", "severity": "minor"}]);
    let id = app.create_item(cell).await;
    let (s, _) = app
        .post(
            &format!("/api/items/{id}/tests"),
            json!({"name": "capacity", "result": "pass", "value": 2380,
            "unit": "mAh", "note": "0.5 A discharge", "at": "2026-01-05T10:00:00Z"}),
        )
        .await;
    assert_eq!(s, StatusCode::CREATED);
    let mut lamp = item("Desk lamp", "lamp");
    lamp["intent"] = json!("give");
    app.create_item(lamp).await;
    let lent = app.create_item(item("Ladder", "ladder")).await;
    let (s, _) = app.patch(&format!("/api/items/{lent}"), json!({"availability": "lent"})).await;
    assert_eq!(s, StatusCode::OK);
    let gone = app.create_item(item("Broken kettle", "kettle")).await;
    let (s, _) = app.post(&format!("/api/items/{gone}/gone"), json!({"reason": "recycled"})).await;
    assert_eq!(s, StatusCode::OK);
}

async fn csv_export_imports_into_a_fresh_household_as_the_same_items(db: Db) {
    let app = TestApp::spawn(db, &[]).await;
    seed_for_export(&app).await;
    let csv = app.export_as(&app.token).await;
    assert!(csv.starts_with("id,name,item_type,profile,condition,intent,availability,location,gone_reason,"), "{csv}");
    assert!(csv.lines().next().unwrap().ends_with("field.capacity,field.voltage"), "{csv}");
    assert!(csv.contains("2450 mAh"), "{csv}");

    let other = app.token_of("elsewhere").await;
    let (s, b) = app.post_csv(&other, csv.clone().into_bytes()).await;
    assert_eq!(s, StatusCode::OK, "{b}");
    assert_eq!(b, json!({"imported": 3, "items": 3, "skipped": 1}));

    let present =
        |items: Vec<Value>| -> Vec<Value> { items.iter().filter(|i| i["gone"].is_null()).map(comparable).collect() };
    let mine = present(app.items_of(&app.token).await);
    let theirs = present(app.items_of(&other).await);
    assert_eq!(mine, theirs);

    // The same file again updates the items it brought instead of duplicating them.
    let (s, b) = app.post_csv(&other, csv.into_bytes()).await;
    assert_eq!(s, StatusCode::OK, "{b}");
    assert_eq!(app.items_of(&other).await.len(), 3);
    // And the household's export reads the same as the original's, ids and gone rows apart.
    let strip = |csv: String| -> Vec<String> {
        csv.lines().map(|l| l.split_once(',').unwrap().1.to_owned()).filter(|l| !l.contains(",recycled,")).collect()
    };
    assert_eq!(strip(app.export_as(&other).await), strip(app.export_as(&app.token).await));
}

async fn a_homebox_export_imports_and_reimports_without_duplicates(db: Db) {
    let app = TestApp::spawn(db, &[]).await;
    let sheet = include_bytes!("data/homebox.csv").to_vec();
    // The preview says what the import will do, row by row, and writes nothing.
    let (s, preview) = app.post_csv_to("/api/import/preview", &app.token, sheet.clone()).await;
    assert_eq!(s, StatusCode::OK, "{preview}");
    let counts = |p: &Value| {
        (p["format"].clone(), p["new"].clone(), p["updated"].clone(), p["gone"].clone(), p["refused"].clone())
    };
    assert_eq!(counts(&preview), (json!("homebox"), json!(5), json!(0), json!(2), json!(0)), "{preview}");
    let rows = preview["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 7);
    assert!(rows.iter().all(|r| r["line"].as_u64().unwrap() >= 2 && r["reason"].is_null()), "{preview}");
    assert!(rows.iter().any(|r| r["name"] == "Korad bench power supply" && r["action"] == "new"), "{preview}");
    assert!(app.all_items().await.is_empty(), "a preview writes nothing");
    let (s, b) = app.post_csv(&app.token, sheet.clone()).await;
    assert_eq!(s, StatusCode::OK, "{b}");
    assert_eq!(b, json!({"imported": 5, "items": 5, "skipped": 2}));
    // The same sheet again: every item row updates the item it made.
    let (_, again) = app.post_csv_to("/api/import/preview", &app.token, sheet.clone()).await;
    assert_eq!(counts(&again), (json!("homebox"), json!(0), json!(5), json!(2), json!(0)), "{again}");
    let items = app.all_items().await;
    let by_name = |n: &str| items.iter().find(|i| i["name"] == n).unwrap().clone();
    let korad = by_name("Korad bench power supply");
    assert_eq!(korad["item_type"], "power_supply");
    assert_eq!(korad["location"], "Garage / Shelf 2");
    assert_eq!(korad["profile"], "Korad KA3005D, Linear bench supply, 0-30 V 0-5 A, serial KD2203140012");
    // What Homebox records by hand lands in ours (its price has no currency: not guessed).
    assert_eq!(
        (korad["notes"].clone(), korad["serial"].clone(), korad["tags"].clone(), korad["warranty_until"].clone()),
        (json!("Fan is a bit noisy"), json!("KD2203140012"), json!(["Power", "Tools"]), json!("2024-03-14"))
    );
    assert_eq!(korad["purchase"], json!({"date": "2022-03-14", "price": null, "currency": null, "vendor": "Amazon"}));
    assert_eq!(korad["intent"], "keep");
    let pi = by_name("Raspberry Pi 4 Model B 4GB");
    assert_eq!(pi["item_type"], "single_board_computer");
    assert_eq!(pi["condition"], "like_new");
    assert_eq!(pi["fields"]["capacity"], json!({"value": 4.0, "unit": "GB"}));
    let cables = by_name("USB-C cables");
    assert_eq!(cables["item_type"], "cables");
    assert_eq!((cables["quantity"].clone(), cables["fields"].get("quantity")), (json!(12), None));
    assert_eq!(by_name("Ikea desk lamp")["condition"], "fair");
    assert_eq!(by_name("Samsung 860 EVO 500GB")["fields"]["capacity"], json!({"value": 500.0, "unit": "GB"}));

    let (s, b) = app.post_csv(&app.token, sheet).await;
    assert_eq!(s, StatusCode::OK, "{b}");
    assert_eq!(app.all_items().await.len(), 5);

    // A label read later finds the imported supply by its serial.
    let index_probe = app.all_items().await;
    assert!(index_probe.iter().any(|i| i["profile"].as_str().unwrap().contains("serial KD2203140012")));
}

async fn a_bad_row_refuses_the_whole_file(db: Db) {
    let app = TestApp::spawn(db, &[]).await;
    // The preview lists every bad row with its line and reason, not only the first.
    let sheet = "HB.name,HB.quantity\nGood box,2\nBad box,2.5\nWorse box,x\n,\nName\u{7}bell,1\n";
    let (s, preview) = app.post_csv_to("/api/import/preview", &app.token, sheet.as_bytes().to_vec()).await;
    assert_eq!(s, StatusCode::OK, "{preview}");
    let rows: Vec<(u64, String, bool)> = preview["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["line"].as_u64().unwrap(), r["action"].as_str().unwrap().to_owned(), r["reason"].is_string()))
        .collect();
    assert_eq!(
        rows,
        [
            (2, "new".into(), false),
            (3, "refused".into(), true),
            (4, "refused".into(), true),
            (6, "refused".into(), true)
        ],
        "{preview}"
    );
    let (s, body) = app.post_csv_to("/api/import/preview", &app.token, b"what,ever\n1,2\n".to_vec()).await;
    assert_error(s, &body, StatusCode::BAD_REQUEST, "invalid");
    let mut rows = String::from("id,name,item_type,condition,intent,field.capacity\n");
    for i in 1..=1200 {
        rows.push_str(&format!("{i},Cell {i},lithium_cell,good,keep,{} mAh\n", 2000 + i));
    }
    rows.push_str("1201,Cell bad,lithium_cell,good,keep,3 parsecs\n");
    let (s, b) = app.post_csv(&app.token, rows.into_bytes()).await;
    assert_error(s, &b, StatusCode::BAD_REQUEST, "invalid");
    assert!(b["error"]["message"].as_str().unwrap().starts_with("line 1202: "), "{b}");
    assert!(app.all_items().await.is_empty());

    let homebox = "HB.name,HB.quantity\nLamp,1\nDrill,many\n";
    let (s, b) = app.post_csv(&app.token, homebox.into()).await;
    assert_error(s, &b, StatusCode::BAD_REQUEST, "invalid");
    assert!(b["error"]["message"].as_str().unwrap().starts_with("line 3: HB.quantity"), "{b}");
    assert!(app.all_items().await.is_empty());

    let (s, b) = app.post_csv(&app.token, b"what,is,this\n1,2,3\n".to_vec()).await;
    assert_error(s, &b, StatusCode::BAD_REQUEST, "invalid");
    let (s, b) = app.post("/api/import", json!({"csv": "name"})).await;
    assert_error(s, &b, StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type");
}

async fn the_command_line_exports_and_imports(db: Db) {
    let app = TestApp::spawn(db, &[]).await;
    seed_for_export(&app).await;
    let dir = std::env::temp_dir().join(format!(
        "trove_cli_{}_{}",
        std::process::id(),
        app.base.replace([':', '/', '.'], "")
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("export.csv");
    let n = trove::exchange::export_file(&app.app, Some(&file), "default").await.unwrap();
    assert_eq!(n, 4);
    let done = trove::exchange::import_file(&app.app, &file, "copy", false).await.unwrap();
    assert_eq!((done.rows, done.items, done.skipped), (3, 3, 1));
    let copy = app.token_of("copy").await;
    assert_eq!(app.items_of(&copy).await.len(), 3);

    let bad = dir.join("bad.csv");
    std::fs::write(&bad, "name,item_type\nLamp,lamp\n,lamp\n").unwrap();
    let err = trove::exchange::import_file(&app.app, &bad, "copy", false).await.unwrap_err().to_string();
    assert!(err.contains("line 3") && err.contains("nothing was imported"), "{err}");
    assert_eq!(app.items_of(&copy).await.len(), 3);
    let _ = std::fs::remove_dir_all(&dir);
}
