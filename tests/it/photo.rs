//! `POST /api/intake/photo`: a generated photo is split into its items and measured against its reference; other
//! formats are 415 and a form without the image is 400. Nothing is written.

use crate::app::{Db, TestApp, assert_error};
use crate::on_both;
use reqwest::StatusCode;
use reqwest::multipart::{Form, Part};
use serde_json::{Value, json};
use trove_vision::scene::{Object, Scene, catalogue};

on_both!(
    a_photo_is_split_into_measured_regions,
    other_uploads_are_refused,
    an_image_too_small_to_hold_an_item_or_cut_short_is_refused,
    a_photo_of_many_parts_has_its_crops_made_when_asked
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

async fn a_photo_of_many_parts_has_its_crops_made_when_asked(db: Db) {
    let app = TestApp::spawn(db, &[]).await;
    // A few items: each region comes with its crop, kept pending.
    let few = scene("three boxes");
    let (status, body) =
        post_form(&app, "/api/intake/photo", Form::new().part("image", image_part(few.png(), "image/png"))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let regions = body["regions"].as_array().unwrap();
    assert_eq!(regions.len(), 3, "{body}");
    assert!(regions.iter().all(|r| r["photo_id"].as_i64().is_some()), "{body}");

    // Fifty parts (over `EAGER_CROPS`): the answer keeps the photo and no crop.
    let mut tray = Scene::plain("fifty parts", 800, 600, [210, 210, 210]);
    for n in 0..50 {
        let (row, col) = (n / 10, n % 10);
        let (cx, cy) = (45.0 + f64::from(col) * 78.0, 60.0 + f64::from(row) * 118.0);
        tray.objects.push(Object::rect(cx, cy, 40.0, 56.0, [40, 60, 120]));
    }
    let (status, body) =
        post_form(&app, "/api/intake/photo", Form::new().part("image", image_part(tray.png(), "image/png"))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let regions = body["regions"].as_array().unwrap();
    assert_eq!(regions.len(), 50, "{body}");
    assert!(regions.iter().all(|r| r.get("photo_id").is_none()), "no crop is made at once: {body}");
    let photo = body["photo_id"].as_i64().expect("the photo is kept");

    // The crop of region 12, asked for: a JPEG of just its box, kept pending, and saved with an item.
    let r = &regions[12];
    let region = json!({"x": r["x"], "y": r["y"], "width": r["width"], "height": r["height"]});
    let (status, crop) = app.post(&format!("/api/intake/photo/{photo}/crop"), region).await;
    assert_eq!(status, StatusCode::CREATED, "{crop}");
    let crop_id = crop["photo_id"].as_i64().unwrap();
    let bytes = app
        .client
        .get(app.url(&format!("/api/media/{crop_id}")))
        .bearer_auth(&app.token)
        .send()
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    let pixels = trove_vision::decode(&bytes).expect("the crop is a picture");
    assert_eq!(
        (u64::from(pixels.width()), u64::from(pixels.height())),
        (r["width"].as_u64().unwrap(), r["height"].as_u64().unwrap())
    );
    let item = app
        .create_item(json!({"name": "M3 nut", "item_type": "fastener", "profile": "M3", "condition": "good", "intent": "keep", "media_ids": [crop_id]}))
        .await;
    let (_, media) = app.get(&format!("/api/items/{item}/media")).await;
    assert_eq!(media["media"].as_array().map(Vec::len), Some(1), "{media}");

    // Refused, nothing kept: a region outside the photo or with no pixels (400), a photo that is not there (404).
    for region in
        [json!({"x": 900, "y": 10, "width": 20, "height": 20}), json!({"x": 10, "y": 10, "width": 0, "height": 20})]
    {
        let (status, body) = app.post(&format!("/api/intake/photo/{photo}/crop"), region).await;
        assert_error(status, &body, StatusCode::BAD_REQUEST, "invalid");
    }
    let (status, body) =
        app.post("/api/intake/photo/999999/crop", json!({"x": 0, "y": 0, "width": 5, "height": 5})).await;
    assert_error(status, &body, StatusCode::NOT_FOUND, "not_found");
}
