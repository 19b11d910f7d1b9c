//! The history of a household over HTTP: who changed an item and what, the activity feed and its paging, and
//! undo (once, only while the item has not changed since, never by a viewer, never across households).

use crate::app::{Db, TestApp, assert_error, item};
use crate::on_both;
use crate::people::{from_page, json_of, sign_up};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

on_both!(
    a_change_is_in_the_history_with_who_made_it_and_is_undone_once,
    activity_pages_newest_first,
    places_media_and_members_are_in_the_activity_with_who_did_what,
    a_project_and_what_it_does_to_its_items_are_recorded,
    spend_is_totalled_by_the_member_who_asked,
    places_made_for_a_location_and_imports_are_in_the_activity,
    the_demo_seed_is_recorded_as_the_command_lines,
    an_import_retried_with_its_key_imports_once,
    an_import_whose_answer_was_lost_before_its_key_was_done_is_not_duplicated_by_a_retry,
    concurrent_changes_of_one_item_are_listed_in_the_order_written,
    a_change_that_changes_nothing_is_no_event_and_no_version,
    the_history_names_fields_as_the_api_does,
);

/// A request of the member with `cookie`, as their page sends it, answered as JSON.
async fn as_page(app: &TestApp, cookie: &str, method: Method, path: &str, body: Option<Value>) -> (StatusCode, Value) {
    let req = from_page(app, method, path, cookie);
    let req = match body {
        Some(b) => req.json(&b),
        None => req,
    };
    json_of(req.send().await.unwrap()).await
}

/// An event as (action, kind, object, member name, [(field, before, after)]).
type Shown = (String, String, i64, Option<String>, Vec<(String, Option<String>, Option<String>)>);

fn shown(event: &Value) -> Shown {
    let text = |v: &Value| v.as_str().map(str::to_owned);
    (
        event["action"].as_str().unwrap().to_owned(),
        event["object"]["kind"].as_str().unwrap().to_owned(),
        event["object"]["id"].as_i64().unwrap(),
        text(&event["member"]["name"]),
        event["changes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| (c["field"].as_str().unwrap().to_owned(), text(&c["before"]), text(&c["after"])))
            .collect(),
    )
}

fn change(field: &str, before: Option<&str>, after: Option<&str>) -> (String, Option<String>, Option<String>) {
    (field.to_owned(), before.map(Into::into), after.map(Into::into))
}

/// The household's whole feed, oldest first.
async fn feed(app: &TestApp) -> Vec<Shown> {
    let (status, page) = app.get("/api/activity?limit=200").await;
    assert_eq!(status, StatusCode::OK, "{page}");
    let mut events: Vec<Shown> = page["events"].as_array().unwrap().iter().map(shown).collect();
    events.reverse();
    events
}

/// `PATCH /api/items/{id}` as the page of the member with `cookie`.
async fn patch_as(app: &TestApp, cookie: &str, id: i64, body: Value) -> (StatusCode, Value) {
    json_of(from_page(app, Method::PATCH, &format!("/api/items/{id}"), cookie).json(&body).send().await.unwrap()).await
}

async fn a_change_is_in_the_history_with_who_made_it_and_is_undone_once(db: Db) {
    let app = TestApp::spawn(db, &[]).await;
    let ada = sign_up(&app, "member", "Ada").await;
    let (status, created) = json_of(
        from_page(&app, Method::POST, "/api/items", &ada.cookie).json(&item("Pi 4", "sbc")).send().await.unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let id = created["id"].as_i64().unwrap();
    let (status, patched) = patch_as(&app, &ada.cookie, id, json!({"name": "Pi 4 Model B"})).await;
    assert_eq!(status, StatusCode::OK, "{patched}");

    let (status, history) = app.get(&format!("/api/items/{id}/history")).await;
    assert_eq!(status, StatusCode::OK, "{history}");
    let events = history["events"].as_array().unwrap();
    let actions: Vec<&str> = events.iter().map(|e| e["action"].as_str().unwrap()).collect();
    assert_eq!(actions, ["create", "patch"], "oldest first: {history}");
    // The API says which kinds of change can be undone (the one rule, `history::undoable`).
    let undoable: Vec<bool> = events.iter().map(|e| e["undoable"].as_bool().unwrap()).collect();
    assert_eq!(undoable, [false, true], "{history}");
    let change = &events[1];
    assert_eq!((change["member"]["id"].as_i64(), change["member"]["name"].as_str()), (Some(ada.id), Some("Ada")));
    assert_eq!((change["object"]["kind"].as_str(), change["object"]["id"].as_i64()), (Some("item"), Some(id)));
    assert_eq!(
        change["changes"],
        json!([{"field": "name", "before": "Pi 4", "after": "Pi 4 Model B", "before_name": null, "after_name": null}])
    );

    // A viewer reads the history but cannot undo; another household's event is not found.
    let viewer = sign_up(&app, "viewer", "Vic").await;
    let undo_path = format!("/api/events/{}/undo", change["id"]);
    let (status, body) = json_of(from_page(&app, Method::POST, &undo_path, &viewer.cookie).send().await.unwrap()).await;
    assert_error(status, &body, StatusCode::FORBIDDEN, "forbidden");
    let (status, body) = app.post("/api/events/999999/undo", json!(null)).await;
    assert_error(status, &body, StatusCode::NOT_FOUND, "not_found");

    // Undone: the old name is back, and the undo is an event of its own.
    let (status, undone) = json_of(from_page(&app, Method::POST, &undo_path, &ada.cookie).send().await.unwrap()).await;
    assert_eq!(status, StatusCode::OK, "{undone}");
    assert_eq!(undone["action"], "undo");
    let (_, now) = app.get(&format!("/api/items/{id}")).await;
    assert_eq!(now["name"], "Pi 4");
    // The change cannot be undone twice: the item changed since (by the undo), and the answer names that.
    let (status, body) = json_of(from_page(&app, Method::POST, &undo_path, &ada.cookie).send().await.unwrap()).await;
    assert_error(status, &body, StatusCode::CONFLICT, "conflict");
    assert!(body["error"]["message"].as_str().unwrap().contains("changed since"), "{body}");
    // Creating an item is not a change of its fields: 422.
    let create_undo = format!("/api/events/{}/undo", events[0]["id"]);
    let (status, body) = json_of(from_page(&app, Method::POST, &create_undo, &ada.cookie).send().await.unwrap()).await;
    assert_error(status, &body, StatusCode::UNPROCESSABLE_ENTITY, "rule");
}

async fn activity_pages_newest_first(db: Db) {
    let app = TestApp::spawn(db, &[]).await;
    let ada = sign_up(&app, "member", "Ada").await;
    for n in 0..5 {
        let resp = from_page(&app, Method::POST, "/api/items", &ada.cookie)
            .json(&item(&format!("Cell {n}"), "lithium_cell"))
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::CREATED);
    }
    let (status, first) = app.get("/api/activity?limit=3").await;
    assert_eq!(status, StatusCode::OK, "{first}");
    let ids =
        |page: &Value| page["events"].as_array().unwrap().iter().map(|e| e["id"].as_i64().unwrap()).collect::<Vec<_>>();
    let first_ids = ids(&first);
    assert_eq!(first_ids.len(), 3);
    assert!(first_ids.windows(2).all(|w| w[0] > w[1]), "newest first: {first_ids:?}");
    let (_, rest) = app.get(&format!("/api/activity?limit=50&before={}", first_ids[2])).await;
    let rest_ids = ids(&rest);
    assert!(rest_ids.len() >= 2, "{rest}");
    assert!(rest_ids.iter().all(|i| *i < first_ids[2]), "{rest_ids:?}");
    let (status, body) = app.get("/api/activity?limit=0").await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
}

async fn places_media_and_members_are_in_the_activity_with_who_did_what(db: Db) {
    let app = TestApp::spawn(db, &[]).await;
    let olga = sign_up(&app, "owner", "Olga").await;
    let ada = sign_up(&app, "member", "Ada").await;
    let vic = sign_up(&app, "member", "Vic").await;

    // A place made, renamed and moved, then deleted, by Ada.
    let (status, shed) =
        as_page(&app, &ada.cookie, Method::POST, "/api/places", Some(json!({"name": "Shed", "note": "blue door"})))
            .await;
    assert_eq!(status, StatusCode::CREATED, "{shed}");
    let shed = shed["id"].as_i64().unwrap();
    let (_, house) = as_page(&app, &ada.cookie, Method::POST, "/api/places", Some(json!({"name": "House"}))).await;
    let house = house["id"].as_i64().unwrap();
    let (status, body) = as_page(
        &app,
        &ada.cookie,
        Method::PATCH,
        &format!("/api/places/{shed}"),
        Some(json!({"name": "Big shed", "parent_id": house})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, history) = app.get(&format!("/api/places/{shed}/history")).await;
    assert_eq!(status, StatusCode::OK, "{history}");
    let history: Vec<Shown> = history["events"].as_array().unwrap().iter().map(shown).collect();
    let place = |action: &str, changes| (action.to_owned(), "place".to_owned(), shed, Some("Ada".to_owned()), changes);
    assert_eq!(
        history,
        [
            place("create", vec![change("name", None, Some("Shed")), change("note", None, Some("blue door"))]),
            place(
                "patch",
                vec![
                    change("name", Some("Shed"), Some("Big shed")),
                    change("parent_id", None, Some(&house.to_string()))
                ]
            ),
        ]
    );
    let (status, _) = as_page(&app, &ada.cookie, Method::DELETE, &format!("/api/places/{shed}"), None).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, body) = app.get(&format!("/api/places/{shed}/history")).await;
    assert_error(status, &body, StatusCode::NOT_FOUND, "not_found");
    let other = app.token_of("elsewhere").await;
    let (status, body) = app.get_as(&other, &format!("/api/places/{house}/history")).await;
    assert_error(status, &body, StatusCode::NOT_FOUND, "not_found");

    // A file kept on an item and deleted, by Ada.
    let item = app.create_item(item("Drill", "tool")).await;
    let pdf = reqwest::multipart::Part::bytes(b"%PDF-1.7\n1 0 obj\n%%EOF\n".to_vec()).file_name("manual.pdf");
    let form = reqwest::multipart::Form::new().part("file", pdf).text("kind", "manual");
    let resp = from_page(&app, Method::POST, &format!("/api/items/{item}/media"), &ada.cookie)
        .multipart(form)
        .send()
        .await
        .unwrap();
    let (status, medium) = json_of(resp).await;
    assert_eq!(status, StatusCode::CREATED, "{medium}");
    let medium = medium["id"].as_i64().unwrap();
    let (status, _) = as_page(&app, &ada.cookie, Method::DELETE, &format!("/api/media/{medium}"), None).await;
    assert_eq!(status, StatusCode::NO_CONTENT);

    // Olga makes Ada a viewer and removes Vic.
    let (status, body) = as_page(
        &app,
        &olga.cookie,
        Method::PATCH,
        &format!("/api/members/{}", ada.id),
        Some(json!({"role": "viewer"})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = as_page(&app, &olga.cookie, Method::DELETE, &format!("/api/members/{}", vic.id), None).await;
    assert!(status.is_success(), "{status} {body}");

    let events = feed(&app).await;
    let member = |action: &str, id: i64, by: &str, changes| {
        (action.to_owned(), "member".to_owned(), id, Some(by.to_owned()), changes)
    };
    let joined = |name: &str, role: &str| vec![change("name", None, Some(name)), change("role", None, Some(role))];
    // Vic was removed since: his own event names him a former member.
    assert_eq!(
        events[..3],
        [
            member("join", olga.id, "Olga", joined("Olga", "owner")),
            member("join", ada.id, "Ada", joined("Ada", "member")),
            member("join", vic.id, "former member", joined("Vic", "member")),
        ]
    );
    let media: Vec<&Shown> = events.iter().filter(|e| e.1 == "media").collect();
    let item_id = item.to_string();
    let file = [("item_id", item_id.as_str()), ("kind", "manual"), ("media_type", "application/pdf")];
    let by_ada =
        |action: &str, changes| (action.to_owned(), "media".to_owned(), medium, Some("Ada".to_owned()), changes);
    assert_eq!(
        media,
        [
            &by_ada("create", file.iter().map(|(f, v)| change(f, None, Some(v))).collect()),
            &by_ada("delete", file.iter().map(|(f, v)| change(f, Some(v), None)).collect()),
        ]
    );
    let places: Vec<(&str, i64)> = events.iter().filter(|e| e.1 == "place").map(|e| (e.0.as_str(), e.2)).collect();
    assert_eq!(places, [("create", shed), ("create", house), ("patch", shed), ("delete", shed)]);
    let n = events.len();
    assert_eq!(
        events[n - 2..],
        [
            member("role", ada.id, "Olga", vec![change("role", Some("member"), Some("viewer"))]),
            member(
                "remove",
                vic.id,
                "Olga",
                vec![change("name", Some("Vic"), None), change("role", Some("member"), None)]
            ),
        ]
    );
}

async fn a_project_and_what_it_does_to_its_items_are_recorded(db: Db) {
    let app = TestApp::demo(db).await;
    let ada = sign_up(&app, "member", "Ada").await;
    let (status, out) = as_page(&app, &ada.cookie, Method::POST, "/api/projects/propose", Some(json!({}))).await;
    assert_eq!(status, StatusCode::OK, "{out}");
    let project = &out["projects"][0];
    let id = project["id"].as_i64().unwrap();
    let items: Vec<i64> =
        project["allocations"].as_array().unwrap().iter().map(|a| a["item_id"].as_i64().unwrap()).collect();
    assert!(!items.is_empty(), "{out}");
    let (status, body) = as_page(&app, &ada.cookie, Method::POST, &format!("/api/projects/{id}/accept"), None).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = app.post(&format!("/api/projects/{id}/drop"), json!({})).await;
    assert_eq!(status, StatusCode::OK, "{body}");

    let events = feed(&app).await;
    let of_project: Vec<(&str, Option<&str>)> =
        events.iter().filter(|e| e.1 == "project" && e.2 == id).map(|e| (e.0.as_str(), e.3.as_deref())).collect();
    assert_eq!(of_project, [("create", Some("Ada")), ("accept", Some("Ada")), ("drop", Some("default owner"))]);
    let accepted = events.iter().find(|e| e.1 == "project" && e.0 == "accept").unwrap();
    assert_eq!(accepted.4, [change("status", Some("proposed"), Some("accepted"))]);
    let created = events.iter().find(|e| e.1 == "project" && e.2 == id).unwrap();
    assert!(created.4.contains(&change("status", None, Some("proposed"))), "{created:?}");

    // Each item the project held shows the reservation and the release in its own history, after what the demo's
    // seeding did (by the command line: no member).
    let (_, history) = app.get(&format!("/api/items/{}/history", items[0])).await;
    let history: Vec<Shown> = history["events"].as_array().unwrap().iter().map(shown).collect();
    assert_eq!((history[0].0.as_str(), history[0].3.as_deref()), ("create", None), "{history:?}");
    let project_id = id.to_string();
    type Step<'a> = (&'a str, Option<&'a str>, &'a [(String, Option<String>, Option<String>)]);
    let tail: Vec<Step<'_>> =
        history.iter().skip_while(|e| e.3.is_none()).map(|e| (e.0.as_str(), e.3.as_deref(), e.4.as_slice())).collect();
    assert_eq!(
        tail,
        [
            (
                "accept",
                Some("Ada"),
                &[
                    change("availability", Some("available"), Some("reserved")),
                    change("project_id", None, Some(&project_id))
                ][..]
            ),
            (
                "drop",
                Some("default owner"),
                &[
                    change("availability", Some("reserved"), Some("available")),
                    change("project_id", Some(&project_id), None)
                ][..]
            ),
        ]
    );
}

async fn spend_is_totalled_by_the_member_who_asked(db: Db) {
    use trove_application::ports::{HouseholdRepo, SpendLedger};
    use trove_domain::spend::{CallKind, CallOutcome, Rates, SpendEntry, Usage};
    let app = TestApp::demo(db).await;
    let ada = sign_up(&app, "member", "Ada").await;
    let (status, out) = as_page(&app, &ada.cookie, Method::POST, "/api/projects/propose", Some(json!({}))).await;
    assert_eq!(status, StatusCode::OK, "{out}");
    let ada_calls = out["steps"].as_u64().unwrap();
    // A call from the command line (as `trove model check` writes it) names no member.
    let household = app.app.store.ensure_household("default").await.unwrap();
    let usage = Usage { input_tokens: 1_000_000, ..Usage::default() };
    let entry = SpendEntry::new(chrono::Utc::now(), CallKind::Price, "m", &usage, &Rates::default(), CallOutcome::Ok);
    app.app.store.record(household, &entry).await.unwrap();

    let (status, spend) = app.get("/api/spend").await;
    assert_eq!(status, StatusCode::OK, "{spend}");
    let by_member = spend["totals"]["by_member"].as_array().unwrap();
    assert_eq!(by_member.len(), 2, "{spend}");
    assert_eq!(by_member[0]["member"], Value::Null, "the command line first: {spend}");
    assert_eq!(
        (by_member[0]["calls"].as_u64(), by_member[0]["cost_micro_usd"].as_i64()),
        (Some(1), Some(entry.cost.0))
    );
    assert_eq!(by_member[1]["member"], json!({"id": ada.id, "name": "Ada"}));
    assert_eq!((by_member[1]["calls"].as_u64(), by_member[1]["failed_calls"].as_u64()), (Some(ada_calls), Some(0)));
    // The other totals are as they were.
    assert_eq!(spend["totals"]["all"]["calls"].as_u64(), Some(ada_calls + 1));
    assert!(spend["totals"]["by_kind"]["propose"].is_object(), "{spend}");
}

/// `POST /api/import` of `csv` as the page of the member with `cookie`.
async fn import_as(app: &TestApp, cookie: &str, csv: &str) -> (StatusCode, Value) {
    let req =
        from_page(app, Method::POST, "/api/import", cookie).header("Content-Type", "text/csv").body(csv.to_owned());
    json_of(req.send().await.unwrap()).await
}

async fn places_made_for_a_location_and_imports_are_in_the_activity(db: Db) {
    let app = TestApp::spawn(db, &[]).await;
    let ada = sign_up(&app, "member", "Ada").await;
    let by_ada = |action: &str, kind: &str, id: i64, changes| {
        (action.to_owned(), kind.to_owned(), id, Some("Ada".to_owned()), changes)
    };

    // An item put in a place that does not exist yet: each place made is Ada's too.
    let mut pi = item("Pi 4", "sbc");
    pi["location"] = json!("Garage / Shelf B2");
    let (status, created) = as_page(&app, &ada.cookie, Method::POST, "/api/items", Some(pi)).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let pi = created["id"].as_i64().unwrap();
    let shelf = created["place_id"].as_i64().unwrap();
    let (_, places) = app.get("/api/places").await;
    let garage =
        places["places"].as_array().unwrap().iter().find(|p| p["name"] == "Garage").unwrap()["id"].as_i64().unwrap();
    let garage_text = garage.to_string();
    assert_eq!(
        feed(&app).await[1..],
        [
            by_ada("create", "place", garage, vec![change("name", None, Some("Garage"))]),
            by_ada(
                "create",
                "place",
                shelf,
                vec![change("name", None, Some("Shelf B2")), change("parent_id", None, Some(&garage_text))]
            ),
            by_ada("create", "item", pi, vec![change("name", None, Some("Pi 4"))]),
        ],
        "after Ada's joining"
    );

    // An import by Ada: one event per item, and the place it makes, all Ada's.
    let csv = "id,name,item_type,location\n7,Desk lamp,lamp,Attic\n8,Fan,fan,garage\n";
    let (status, done) = import_as(&app, &ada.cookie, csv).await;
    assert_eq!(status, StatusCode::OK, "{done}");
    let (_, listed) = app.get("/api/items?q=lamp").await;
    let lamp = listed["items"][0]["id"].as_i64().unwrap();
    let attic = listed["items"][0]["place_id"].as_i64().unwrap();
    let (_, listed) = app.get("/api/items?q=fan").await;
    let fan = listed["items"][0]["id"].as_i64().unwrap();
    let events = feed(&app).await;
    assert_eq!(
        events[4..],
        [
            by_ada("create", "place", attic, vec![change("name", None, Some("Attic"))]),
            by_ada("import", "item", lamp, vec![change("name", None, Some("Desk lamp"))]),
            by_ada("import", "item", fan, vec![change("name", None, Some("Fan"))]),
        ]
    );

    // The same sheet again, one row renamed: the update is recorded with what it changed; the other row changed
    // nothing and is no event.
    let csv = "id,name,item_type,location\n7,Desk lamp (green),lamp,Attic\n8,Fan,fan,garage\n";
    let (status, done) = import_as(&app, &ada.cookie, csv).await;
    assert_eq!(status, StatusCode::OK, "{done}");
    let events = feed(&app).await;
    assert_eq!(
        events[7..],
        [by_ada("import", "item", lamp, vec![change("name", Some("Desk lamp"), Some("Desk lamp (green)"))])]
    );
    let (_, history) = app.get(&format!("/api/items/{lamp}/history")).await;
    assert_eq!(history["events"].as_array().unwrap().len(), 2, "{history}");
}

/// The demo inventory is seeded through the same use case as any item: each item's creation, each place its
/// `location` made, the parts it is made of and the items already gone are in the feed, by the command line.
async fn the_demo_seed_is_recorded_as_the_command_lines(db: Db) {
    let app = TestApp::demo(db).await;
    let events = feed(&app).await;
    assert!(events.iter().all(|e| e.3.is_none()), "only the command line seeded: {events:?}");
    let items = app.all_items().await;
    let created: Vec<i64> =
        events.iter().filter(|e| (e.0.as_str(), e.1.as_str()) == ("create", "item")).map(|e| e.2).collect();
    let mut ids: Vec<i64> = items.iter().map(|i| i["id"].as_i64().unwrap()).collect();
    ids.sort_unstable();
    assert_eq!(created, ids, "one creation per seeded item, in order");
    let (_, places) = app.get("/api/places").await;
    let mut place_ids: Vec<i64> =
        places["places"].as_array().unwrap().iter().map(|p| p["id"].as_i64().unwrap()).collect();
    place_ids.sort_unstable();
    assert!(!place_ids.is_empty());
    let made: Vec<i64> =
        events.iter().filter(|e| (e.0.as_str(), e.1.as_str()) == ("create", "place")).map(|e| e.2).collect();
    assert_eq!(made, place_ids, "each place the locations made");
    let gone: Vec<i64> = items.iter().filter(|i| !i["gone"].is_null()).map(|i| i["id"].as_i64().unwrap()).collect();
    assert!(!gone.is_empty());
    for id in gone {
        assert!(events.iter().any(|e| e.0 == "gone" && e.2 == id), "item {id} left: {events:?}");
    }
    let built: Vec<&Value> = items.iter().filter(|i| !i["components"].as_array().unwrap().is_empty()).collect();
    assert!(!built.is_empty());
    for item in built {
        let id = item["id"].as_i64().unwrap();
        assert!(
            events.iter().any(|e| e.0 == "patch" && e.2 == id && e.4.iter().any(|c| c.0 == "components")),
            "item {id}'s parts: {events:?}"
        );
    }
}

/// `POST /api/import` of `csv` with the test's token and, when given, an `Idempotency-Key`.
async fn import_keyed(app: &TestApp, key: Option<&str>, csv: &str) -> (StatusCode, Value) {
    let mut req = app.client.post(app.url("/api/import")).bearer_auth(&app.token).header("Content-Type", "text/csv");
    if let Some(key) = key {
        req = req.header("Idempotency-Key", key);
    }
    let resp = req.body(csv.to_owned()).send().await.unwrap();
    let status = resp.status();
    (status, resp.json().await.unwrap())
}

/// The `import` events of the household's feed.
async fn imports_recorded(app: &TestApp) -> usize {
    feed(app).await.iter().filter(|(action, ..)| action == "import").count()
}

async fn an_import_retried_with_its_key_imports_once(db: Db) {
    let app = TestApp::spawn(db, &[]).await;
    // Rows without ids or references: every import of them writes new items.
    let csv = "name,item_type,location\nDesk lamp,lamp,Attic\nFan,fan,Attic\nCable,cable,\n";
    let (status, first) = import_keyed(&app, Some("sheet-1"), csv).await;
    assert_eq!(status, StatusCode::OK, "{first}");
    assert_eq!(first, json!({"imported": 3, "items": 3, "skipped": 0}));
    // The retry of a client that never saw the answer: the first answer, and nothing written again.
    let (status, again) = import_keyed(&app, Some("sheet-1"), csv).await;
    assert_eq!((status, &again), (StatusCode::OK, &first));
    assert_eq!(app.all_items().await.len(), 3);
    assert_eq!(imports_recorded(&app).await, 3);
    // The same key with another sheet is refused, and writes nothing.
    let (status, refused) = import_keyed(&app, Some("sheet-1"), "name,item_type\nOther,thing\n").await;
    assert_error(status, &refused, StatusCode::UNPROCESSABLE_ENTITY, "rule");
    // A bad sheet under a fresh key writes nothing and leaves the key free for the corrected sheet.
    let (status, refused) = import_keyed(&app, Some("sheet-2"), "name,item_type\n,thing\n").await;
    assert_error(status, &refused, StatusCode::BAD_REQUEST, "invalid");
    let (status, done) = import_keyed(&app, Some("sheet-2"), "name,item_type\nThing,thing\n").await;
    assert_eq!((status, done["imported"].as_u64()), (StatusCode::OK, Some(1)), "{done}");
    // Without a key, the same sheet is a new import, as before.
    let (status, _) = import_keyed(&app, None, csv).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(app.all_items().await.len(), 7);
    assert_eq!(imports_recorded(&app).await, 7);
}

/// The crash window: the import committed, but the process died before its key was marked done (so the key has
/// no answer to replay). The retry with the same key runs the import again, and updates the items the first one
/// wrote instead of adding them twice.
async fn an_import_whose_answer_was_lost_before_its_key_was_done_is_not_duplicated_by_a_retry(db: Db) {
    let app = TestApp::spawn(db, &[]).await;
    let csv = "name,item_type,location\nDesk lamp,lamp,Attic\nFan,fan,Attic\nCable,cable,\n";
    let (_, me) = app.get("/api/me").await;
    let household = trove_domain::HouseholdId(me["household"]["id"].as_i64().unwrap());
    let actor = trove_application::recorder::Actor { household, member: None };
    // The first import, written by the use case alone: no idempotency record was completed for it.
    let first = app.app.services.exchange.import_keyed(actor, csv.as_bytes(), Some("sheet-9")).await.unwrap();
    assert_eq!(first.items, 3);
    assert_eq!(app.all_items().await.len(), 3);
    // The client retries with its key.
    let (status, again) = import_keyed(&app, Some("sheet-9"), csv).await;
    assert_eq!(status, StatusCode::OK, "{again}");
    assert_eq!(again["items"], 3, "{again}");
    let names: Vec<String> = app.all_items().await.iter().map(|i| i["name"].as_str().unwrap().to_owned()).collect();
    assert_eq!(names.len(), 3, "no duplicates: {names:?}");
    // Another key is another import.
    let (status, _) = import_keyed(&app, Some("sheet-10"), csv).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(app.all_items().await.len(), 6);
}

/// The item events of `id`'s history after its creation: (name before, name after, version after).
async fn renames(app: &TestApp, id: i64) -> Vec<(Option<String>, Option<String>)> {
    let (status, history) = app.get(&format!("/api/items/{id}/history")).await;
    assert_eq!(status, StatusCode::OK, "{history}");
    history["events"].as_array().unwrap()[1..]
        .iter()
        .map(|e| {
            let changes = e["changes"].as_array().unwrap();
            assert_eq!(changes.len(), 1, "{e}");
            assert_eq!(changes[0]["field"], "name", "{e}");
            (changes[0]["before"].as_str().map(Into::into), changes[0]["after"].as_str().map(Into::into))
        })
        .collect()
}

async fn concurrent_changes_of_one_item_are_listed_in_the_order_written(db: Db) {
    let app = TestApp::spawn(db, &[]).await;
    let id = app.create_item(item("Lamp", "lamp")).await;
    let mut written = 0;
    for round in 0..6 {
        let patches = (0..16).map(|n| {
            let app = &app;
            async move { app.patch(&format!("/api/items/{id}"), json!({"name": format!("Lamp {round}.{n}")})).await }
        });
        for (status, body) in futures::future::join_all(patches).await {
            // A change may lose every retry to the others (409); it then writes nothing.
            match status {
                StatusCode::OK => written += 1,
                _ => assert_error(status, &body, StatusCode::CONFLICT, "conflict"),
            }
        }
    }
    let chain = renames(&app, id).await;
    assert_eq!(chain.len(), written, "one event per change written");
    let mut after = Some("Lamp".to_owned());
    for (n, (before, next)) in chain.iter().enumerate() {
        assert_eq!(before, &after, "event {n}'s before is the after of the one listed before it: {chain:?}");
        after = next.clone();
    }
    let (_, lamp) = app.get(&format!("/api/items/{id}")).await;
    assert_eq!(lamp["name"].as_str(), after.as_deref(), "the last event's after is the item as it is");
}

async fn a_change_that_changes_nothing_is_no_event_and_no_version(db: Db) {
    let app = TestApp::spawn(db, &[]).await;
    let id = app.create_item(item("Lamp", "lamp")).await;
    let path = format!("/api/items/{id}");
    let (status, _) = app.patch(&path, json!({"name": "Desk lamp"})).await;
    assert_eq!(status, StatusCode::OK);
    // The same values again: answered as the item is, nothing written.
    for same in [json!({"name": "Desk lamp"}), json!({"name": "Desk lamp", "item_type": "lamp"}), json!({})] {
        let (status, lamp) = app.patch(&path, same).await;
        assert_eq!((status, lamp["name"].as_str()), (StatusCode::OK, Some("Desk lamp")), "{lamp}");
    }
    let resp = app.client.get(app.url(&path)).bearer_auth(&app.token).send().await.unwrap();
    assert_eq!(resp.headers()["etag"], "\"2\"", "the version the real change left");
    let (_, history) = app.get(&format!("{path}/history")).await;
    let events = history["events"].as_array().unwrap();
    assert_eq!(events.len(), 2, "{history}");
    // So the real change is still the last, and may be undone.
    let undo = events[1]["id"].as_i64().unwrap();
    let (status, undone) = app.post(&format!("/api/events/{undo}/undo"), json!({})).await;
    assert_eq!(status, StatusCode::OK, "{undone}");
    let (_, lamp) = app.get(&path).await;
    assert_eq!(lamp["name"], "Lamp");
}

async fn the_history_names_fields_as_the_api_does(db: Db) {
    let app = TestApp::spawn(db, &[]).await;
    let id = app.create_item(item("Lamp", "lamp")).await;
    let (status, _) = app.patch(&format!("/api/items/{id}"), json!({"item_type": "desk_lamp"})).await;
    assert_eq!(status, StatusCode::OK);
    let (_, history) = app.get(&format!("/api/items/{id}/history")).await;
    let change = &history["events"][1]["changes"][0];
    assert_eq!(
        (change["field"].as_str(), change["before"].as_str(), change["after"].as_str()),
        (Some("item_type"), Some("lamp"), Some("desk_lamp")),
        "{history}"
    );
    // And is undone by that name.
    let undo = history["events"][1]["id"].as_i64().unwrap();
    let (status, undone) = app.post(&format!("/api/events/{undo}/undo"), json!({})).await;
    assert_eq!(status, StatusCode::OK, "{undone}");
    let (_, lamp) = app.get(&format!("/api/items/{id}")).await;
    assert_eq!(lamp["item_type"], "lamp");
}
