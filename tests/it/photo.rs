//! `POST /api/intake/photo`: a generated photo is split into its items and measured against its reference; other
//! formats are 415 and a form without the image is 400. Nothing is written.

use crate::app::{Db, TestApp, assert_error};
use crate::on_both;
use reqwest::StatusCode;
use reqwest::multipart::{Form, Part};
use serde_json::Value;
use trove_vision::scene::{Scene, catalogue};

on_both!(
    a_photo_is_split_into_measured_regions,
    other_uploads_are_refused,
    an_image_too_small_to_hold_an_item_or_cut_short_is_refused
);

fn scene(name: &str) -> Scene {
    catalogue().into_iter().find(|s| s.name == name).expect("the scene exists")
}

fn image_part(bytes: Vec<u8>, mime: &str) -> Part {
    Part::bytes(bytes).file_name("photo").mime_str(mime).unwrap()
}

async fn post_form(app: &TestApp, path: &str, form: Form) -> (StatusCode, Value) {
    let resp = app.client.post(app.url(path)).bearer_auth(&app.token).multipart(form).send().await.expect("answer");
    let status = resp.status();
    let text = resp.text().await.unwrap();
    (status, serde_json::from_str(&text).unwrap_or(Value::String(text)))
}

/// Asserts that `got` is within `tolerance` (relative) of `want`.
fn near(got: &Value, want: f64, tolerance: f64, what: &str) {
    let got = got.as_f64().unwrap_or_else(|| panic!("{what} is a number: {got}"));
    assert!((got - want).abs() <= tolerance * want, "{what}: {got}, want {want}");
}

async fn a_photo_is_split_into_measured_regions(db: Db) {
    let app = TestApp::spawn(db, &[]).await;

    // A 40 mm square marker, a 150 x 100 mm box and a 120 x 80 mm ellipse, at 2 px per mm.
    let marker = scene("a square marker");
    let form = Form::new().part("image", image_part(marker.png(), "image/png")).text("reference_mm", "40");
    let (status, body) = post_form(&app, "/api/intake/photo", form).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!((body["image"]["width"].as_u64(), body["image"]["height"].as_u64()), (Some(640), Some(480)));
    let regions = body["regions"].as_array().unwrap();
    assert_eq!(regions.len(), 3, "{body}");
    near(&body["scale_mm_per_px"], 0.5, 0.02, "scale");
    let expected = marker.expected();
    for (got, want) in regions.iter().zip(&expected) {
        for (key, want) in [("x", want.x), ("y", want.y), ("width", want.width), ("height", want.height)] {
            let got = got[key].as_u64().unwrap();
            assert!(got.abs_diff(u64::from(want)) <= 4, "{key}: {got}, want {want}: {body}");
        }
        assert!(got["area_px"].as_u64().unwrap() > 0);
    }
    let references: Vec<&Value> = regions.iter().filter(|r| r["reference"] == true).collect();
    assert_eq!(references.len(), 1, "{body}");
    near(&references[0]["width_mm"], 40.0, 0.02, "the marker's width");
    let box_region = regions.iter().find(|r| r["width"].as_u64().unwrap() > 250).expect("the box");
    near(&box_region["width_mm"], 150.0, 0.03, "the box's width");
    near(&box_region["height_mm"], 100.0, 0.03, "the box's height");

    // A card turned 25 degrees, named in the query.
    let card = scene("a card turned");
    let form = Form::new().part("image", image_part(card.png(), "image/png"));
    let (status, body) = post_form(&app, "/api/intake/photo?reference=card", form).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["regions"].as_array().unwrap().len(), 3, "{body}");
    near(&body["scale_mm_per_px"], 0.5, 0.03, "scale from the card");
    let card_region = body["regions"].as_array().unwrap().iter().find(|r| r["reference"] == true).expect("the card");
    assert!(card_region["x"].as_u64().unwrap() < 100, "{body}");
    let note = body["note"].as_str().expect("the note says why the card was taken");
    assert!(note.starts_with("Region 1 was taken as a credit card: it is turned "), "{note}");

    // A card asked for in a photo that has none: said so, and no mm are guessed.
    let form = Form::new().part("image", image_part(marker.png(), "image/png")).text("reference", "card");
    let (status, body) = post_form(&app, "/api/intake/photo", form).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        body["note"], "No credit card found in the photo: no region is shaped like one, so the sizes are not known.",
        "{body}"
    );
    assert!(body.get("scale_mm_per_px").is_none(), "{body}");
    assert!(body["regions"].as_array().unwrap().iter().all(|r| r.get("width_mm").is_none() && r["reference"] == false));

    // Without a reference: regions without mm; nothing was written.
    let form = Form::new().part("image", image_part(marker.png(), "image/png"));
    let (status, body) = post_form(&app, "/api/intake/photo", form).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(body.get("scale_mm_per_px").is_none(), "{body}");
    assert!(body["regions"].as_array().unwrap().iter().all(|r| r.get("width_mm").is_none()), "{body}");
    assert!(app.all_items().await.is_empty());
}

async fn other_uploads_are_refused(db: Db) {
    let app = TestApp::spawn(db, &[]).await;
    let gif = b"GIF89a\x01\x00\x01\x00\x80\x00\x00\xff\xff\xff\x00\x00\x00!\xf9\x04\x01\x00\x00\x00\x00,\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;".to_vec();
    let (status, body) =
        post_form(&app, "/api/intake/photo", Form::new().part("image", image_part(gif, "image/gif"))).await;
    assert_error(status, &body, StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type");

    let (status, body) = post_form(&app, "/api/intake/photo", Form::new().text("reference_mm", "40")).await;
    assert_error(status, &body, StatusCode::BAD_REQUEST, "invalid");

    let png = scene("three boxes").png();
    let form = Form::new().part("image", image_part(png.clone(), "image/png")).text("reference_mm", "-2");
    let (status, body) = post_form(&app, "/api/intake/photo", form).await;
    assert_error(status, &body, StatusCode::BAD_REQUEST, "invalid");

    let truncated = png[..200].to_vec();
    let (status, body) =
        post_form(&app, "/api/intake/photo", Form::new().part("image", image_part(truncated, "image/png"))).await;
    assert_error(status, &body, StatusCode::BAD_REQUEST, "invalid");

    let resp = app.client.post(app.url("/api/intake/photo")).send().await.unwrap();
    assert_eq!(resp.status(), StatusCode::UNAUTHORIZED);
}

async fn an_image_too_small_to_hold_an_item_or_cut_short_is_refused(db: Db) {
    let app = TestApp::spawn(db, &[]).await;
    for (w, h) in [(1, 1), (15, 600)] {
        let mut png = std::io::Cursor::new(Vec::new());
        image::DynamicImage::new_rgb8(w, h).write_to(&mut png, image::ImageFormat::Png).unwrap();
        let form = Form::new().part("image", image_part(png.into_inner(), "image/png"));
        let (status, body) = post_form(&app, "/api/intake/photo", form).await;
        assert_error(status, &body, StatusCode::UNPROCESSABLE_ENTITY, "rule");
        let message = format!("the image is {w} x {h} pixels; at least 16 x 16 are needed to hold an item");
        assert_eq!(body["error"]["message"], message.as_str());
    }
    // A JPEG cut short is refused, never segmented into regions that are not in the picture.
    let jpeg = scene("three boxes").jpeg();
    let cut = jpeg[..jpeg.len() * 3 / 4].to_vec();
    let (status, body) =
        post_form(&app, "/api/intake/photo", Form::new().part("image", image_part(cut, "image/jpeg"))).await;
    assert_error(status, &body, StatusCode::BAD_REQUEST, "invalid");
    assert!(body["error"]["message"].as_str().unwrap().contains("cut short"), "{body}");
    let (status, body) =
        post_form(&app, "/api/intake/photo", Form::new().part("image", image_part(jpeg, "image/jpeg"))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["regions"].as_array().unwrap().len(), 3, "{body}");
}
