//! Proposals and the project lifecycle through the HTTP API: the local planner on the demo inventory, a fake
//! Model API driving the loop, failures that write nothing, and concurrent accepts across two processes.

use crate::app::{Db, TestApp, assert_error, item};
use crate::fake_model::{fake_api, function_call, has_tool_outputs, message, response, settings, tool_output};
use crate::on_both;
use reqwest::StatusCode;
use serde_json::{Value, json};
use wiremock::ResponseTemplate;

on_both!(
    local_planner_proposes_and_the_lifecycle_moves_items,
    a_post_without_a_body_proposes_and_actions_need_none,
    accept_refuses_an_item_that_is_no_longer_buildable,
    the_loop_against_a_fake_model_writes_only_what_the_rules_keep,
    a_model_failure_writes_nothing_but_the_spend,
    a_stalled_model_is_sent_again_once_and_both_attempts_are_in_the_ledger,
    propose_streams_its_steps_as_server_sent_events,
    a_repeated_run_refreshes_its_open_proposals_instead_of_copying_them,
);

async fn a_repeated_run_refreshes_its_open_proposals_instead_of_copying_them(db: Db) {
    let app = TestApp::demo(db).await;
    let ids = |run: &Value| -> Vec<i64> {
        run["projects"].as_array().unwrap().iter().map(|p| p["id"].as_i64().unwrap()).collect()
    };
    let (status, first) = app.post("/api/projects/propose", json!({"brief": "a weather station"})).await;
    assert_eq!(status, StatusCode::OK, "{first}");
    let (_, again) = app.post("/api/projects/propose", json!({"brief": "a weather station"})).await;
    // The same proposals, in the planner's order, refreshed: no copies.
    assert_eq!(ids(&again), ids(&first), "{again}");
    let (_, proposed) = app.get("/api/projects?status=proposed").await;
    assert_eq!(proposed["projects"].as_array().unwrap().len(), ids(&first).len());
    let (p0, a0) = (&first["projects"][0], &again["projects"][0]);
    assert_ne!(a0["updated_at"], p0["updated_at"], "refreshed: {a0}");
    assert_eq!(a0["created_at"], p0["created_at"]);
    // Its history says so.
    let (_, activity) = app.get("/api/activity").await;
    assert!(activity["events"].as_array().unwrap().iter().any(|e| e["action"] == "refresh"), "{activity}");

    // Once one is accepted, a new run proposes with what is left: the accepted one is never refreshed.
    let accepted = ids(&first)[0];
    let (status, _) = app.post(&format!("/api/projects/{accepted}/accept"), json!({})).await;
    assert_eq!(status, StatusCode::OK);
    let (_, third) = app.post("/api/projects/propose", json!({"brief": "a weather station"})).await;
    assert!(!ids(&third).contains(&accepted), "{third}");
    let (_, still) = app.get(&format!("/api/projects/{accepted}")).await;
    assert_eq!(still["status"], "accepted");
}

async fn local_planner_proposes_and_the_lifecycle_moves_items(db: Db) {
    let app = TestApp::demo(db).await;
    let (status, out) = app.post("/api/projects/propose", json!({})).await;
    assert_eq!(status, StatusCode::OK, "{out}");
    let projects = out["projects"].as_array().unwrap();
    assert!(projects.len() >= 4, "{out}");
    assert_eq!(out["dropped"], json!([]));
    let steps = out["steps"].as_u64().unwrap();
    assert!((2..=4).contains(&steps), "{out}");
    assert_eq!(out["spend"]["cost_micro_usd"], 0);
    let mut seen = std::collections::HashSet::new();
    for p in projects {
        assert_eq!(p["status"], "proposed");
        for a in p["allocations"].as_array().unwrap() {
            assert!(seen.insert(a["item_id"].as_i64().unwrap()), "an item is used twice: {out}");
            // Named in the answer, as the item is named now.
            let (_, it) = app.get(&format!("/api/items/{}", a["item_id"])).await;
            assert_eq!(a["item_name"], it["name"], "{out}");
        }
    }

    let first = projects[0]["id"].as_i64().unwrap();
    let second = projects[1]["id"].as_i64().unwrap();
    let first_items: Vec<i64> =
        projects[0]["allocations"].as_array().unwrap().iter().map(|a| a["item_id"].as_i64().unwrap()).collect();

    let (status, accepted) = app.post(&format!("/api/projects/{first}/accept"), json!({})).await;
    assert_eq!(status, StatusCode::OK, "{accepted}");
    assert_eq!(accepted["status"], "accepted");
    for id in &first_items {
        let (_, it) = app.get(&format!("/api/items/{id}")).await;
        assert_eq!((it["availability"].as_str(), it["project_id"].as_i64()), (Some("reserved"), Some(first)));
    }
    let (status, body) = app.post(&format!("/api/projects/{first}/accept"), json!({})).await;
    assert_error(status, &body, StatusCode::CONFLICT, "conflict");
    let (status, body) = app.post(&format!("/api/items/{}/gone", first_items[0]), json!({"reason": "sold"})).await;
    assert_error(status, &body, StatusCode::CONFLICT, "conflict");
    // The refusal names the project by its title, as a person knows it.
    let title = projects[0]["title"].as_str().unwrap();
    assert!(
        body["error"]["message"].as_str().unwrap().contains(&format!("is reserved by project {title:?}")),
        "{body}"
    );

    // A reserved item is no longer offered to the model.
    let (_, again) = app.post("/api/projects/propose", json!({"brief": "anything"})).await;
    for p in again["projects"].as_array().unwrap() {
        for a in p["allocations"].as_array().unwrap() {
            assert!(!first_items.contains(&a["item_id"].as_i64().unwrap()), "{again}");
        }
    }

    let (status, pack) = app.get(&format!("/api/projects/{first}/pack")).await;
    assert_eq!(status, StatusCode::OK, "{pack}");
    assert!(pack.is_object(), "{pack}");
    let md = app
        .client
        .get(app.url(&format!("/api/projects/{first}/pack")))
        .bearer_auth(&app.token)
        .header("Accept", "text/markdown")
        .send()
        .await
        .unwrap();
    assert_eq!(md.status(), StatusCode::OK);
    assert!(md.headers()["content-type"].to_str().unwrap().starts_with("text/markdown"));
    let md = md.text().await.unwrap();
    assert!(md.starts_with("# "), "{md}");
    assert!(md.contains("- [ ]"), "{md}");

    let (status, built) = app.post(&format!("/api/projects/{first}/build"), json!({})).await;
    assert_eq!((status, built["status"].as_str()), (StatusCode::OK, Some("built")));
    let (_, it) = app.get(&format!("/api/items/{}", first_items[0])).await;
    assert_eq!(it["availability"], "in_use");
    let (status, body) = app.post(&format!("/api/projects/{first}/drop"), json!({})).await;
    assert_error(status, &body, StatusCode::CONFLICT, "conflict");

    let (status, _) = app.post(&format!("/api/projects/{second}/accept"), json!({})).await;
    assert_eq!(status, StatusCode::OK);
    let (status, dropped) = app.post(&format!("/api/projects/{second}/drop"), json!({})).await;
    assert_eq!((status, dropped["status"].as_str()), (StatusCode::OK, Some("dropped")));
    for a in projects[1]["allocations"].as_array().unwrap() {
        let (_, it) = app.get(&format!("/api/items/{}", a["item_id"])).await;
        assert_eq!((it["availability"].as_str(), it["project_id"].as_i64()), (Some("available"), None));
    }
    let (status, list) = app.get("/api/projects").await;
    assert_eq!(status, StatusCode::OK);
    let all = list["projects"].as_array().unwrap();
    assert!(all.len() >= projects.len());
    // The status filter keeps exactly the projects in that status, and together they are all of them.
    let mut filtered = 0;
    for status in ["proposed", "accepted", "built", "dropped"] {
        let (code, list) = app.get(&format!("/api/projects?status={status}")).await;
        assert_eq!(code, StatusCode::OK, "{list}");
        let these = list["projects"].as_array().unwrap();
        assert!(these.iter().all(|p| p["status"] == status), "{status}: {list}");
        filtered += these.len();
    }
    assert_eq!(filtered, all.len());
    let (_, built) = app.get("/api/projects?status=built").await;
    assert_eq!(built["projects"][0]["id"].as_i64(), Some(first));
    let (status, body) = app.get("/api/projects?status=finished").await;
    assert_error(status, &body, StatusCode::BAD_REQUEST, "invalid");

    let other = app.token_of("strangers").await;
    let (status, body) = app.get_as(&other, &format!("/api/projects/{first}")).await;
    assert_error(status, &body, StatusCode::NOT_FOUND, "not_found");
    let (status, body) = app.post_as(&other, &format!("/api/projects/{second}/accept"), json!({})).await;
    assert_error(status, &body, StatusCode::NOT_FOUND, "not_found");
}

/// `curl -X POST` sends no body and no media type: propose and the lifecycle actions take that; a route that
/// needs a body says it is missing.
async fn a_post_without_a_body_proposes_and_actions_need_none(db: Db) {
    let app = TestApp::demo(db).await;
    let bare = |path: &str| app.client.post(app.url(path)).bearer_auth(&app.token).send();
    let resp = bare("/api/projects/propose").await.unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    let out: Value = resp.json().await.unwrap();
    let id = out["projects"][0]["id"].as_i64().expect("a project");
    for action in ["accept", "build"] {
        let resp = bare(&format!("/api/projects/{id}/{action}")).await.unwrap();
        assert_eq!(resp.status(), StatusCode::OK, "{action}");
    }
    let resp = bare("/api/items").await.unwrap();
    let status = resp.status();
    let body: Value = resp.json().await.unwrap();
    assert_error(status, &body, StatusCode::BAD_REQUEST, "invalid");
}

async fn accept_refuses_an_item_that_is_no_longer_buildable(db: Db) {
    let app = TestApp::demo(db).await;
    let (_, out) = app.post("/api/projects/propose", json!({})).await;
    let project = &out["projects"][0];
    let id = project["id"].as_i64().unwrap();
    let item_id = project["allocations"][0]["item_id"].as_i64().unwrap();
    let (status, _) = app.patch(&format!("/api/items/{item_id}"), json!({"intent": "sell"})).await;
    assert_eq!(status, StatusCode::OK);
    let (status, body) = app.post(&format!("/api/projects/{id}/accept"), json!({})).await;
    assert_error(status, &body, StatusCode::CONFLICT, "conflict");
    // Named as the household calls it.
    let (_, it) = app.get(&format!("/api/items/{item_id}")).await;
    let name = it["name"].as_str().unwrap();
    assert_eq!(body["error"]["message"], format!("{name:?} is no longer buildable (not buildable: intent sell)"));
    let (_, p) = app.get(&format!("/api/projects/{id}")).await;
    assert_eq!(p["status"], "proposed");
    for a in project["allocations"].as_array().unwrap() {
        let (_, it) = app.get(&format!("/api/items/{}", a["item_id"])).await;
        assert_eq!(it["availability"], "available", "nothing was reserved");
    }
}

/// The id of the item called `name` in a `list_inventory` output (lines `id+condition name|profile|values`).
fn id_in_inventory(output: &str, name: &str) -> Option<i64> {
    output.lines().find_map(|l| {
        let (id, rest) = l.split('|').next()?.split_once(' ')?;
        (rest == name).then(|| id.trim_end_matches(|c: char| c.is_ascii_alphabetic()).parse().ok())?
    })
}

async fn the_loop_against_a_fake_model_writes_only_what_the_rules_keep(db: Db) {
    let (server, seen) = fake_api(|body: &Value, n| {
        if !has_tool_outputs(body) {
            assert_eq!(n, 0);
            return ResponseTemplate::new(200).set_body_json(response(
                vec![
                    json!({"type": "reasoning", "id": "rs_1", "summary": []}),
                    function_call("call_a", "list_inventory", "{}"),
                    function_call("call_b", "template_catalog", "{}"),
                    function_call("call_c", "fly_to_moon", "{}"),
                    function_call("call_d", "item_details", "{\"item_id\": 999999}"),
                ],
                1000,
                100,
            ));
        }
        let inventory = tool_output(body, "call_a").unwrap();
        let catalog = tool_output(body, "call_b").unwrap();
        assert_eq!(tool_output(body, "call_c"), Some(r#"{"error":"no tool named fly_to_moon"}"#));
        assert_eq!(tool_output(body, "call_d"), Some(r#"{"error":"no such item"}"#));
        assert!(!inventory.contains("For sale Pi"), "a sell item is not listed: {inventory}");
        let pi = id_in_inventory(inventory, "Spare Pi").unwrap();
        let template = catalog.lines().find(|l| l.contains("|Kids' console|")).unwrap().split('|').next().unwrap();
        let template: i64 = template.parse().unwrap();
        let set = json!({"proposals": [
            {"template_id": template, "title": "Console", "reason": "spare Pi",
             "allocations": [{"requirement": "controller", "item_id": pi}, {"requirement": "controller", "item_id": 424242},
                             {"requirement": "no_such_requirement", "item_id": pi}]},
            {"template_id": 99999, "title": "x", "reason": "y", "allocations": [{"requirement": "a", "item_id": pi}]}
        ]});
        ResponseTemplate::new(200).set_body_json(response(vec![message(&set.to_string(), &[])], 3000, 200))
    })
    .await;
    let app = TestApp::spawn(db, &settings(&server)).await;
    let template = json!({"label": "Kids' console", "goal": "Games.", "effort": "an evening",
        "requirements": [{"key": "controller", "label": "an SBC", "item_types": ["single_board_computer"]},
                         {"key": "display", "label": "a screen", "item_types": ["monitor"]}]});
    assert_eq!(app.post("/api/templates", template).await.0, StatusCode::CREATED);
    let mut pi = item("Spare Pi", "single_board_computer");
    pi["condition"] = json!("like_new");
    app.create_item(pi).await;
    let mut sale = item("For sale Pi", "single_board_computer");
    sale["intent"] = json!("sell");
    app.create_item(sale).await;

    let (status, out) = app.post("/api/projects/propose", json!({"brief": "something for the kids"})).await;
    assert_eq!(status, StatusCode::OK, "{out}");
    assert_eq!(out["steps"], 2);
    assert_eq!(out["projects"].as_array().unwrap().len(), 1, "{out}");
    assert_eq!(out["projects"][0]["title"], "Console");
    assert_eq!(out["projects"][0]["missing"], json!(["display"]));
    let reasons: Vec<&str> = out["dropped"].as_array().unwrap().iter().map(|d| d["reason"].as_str().unwrap()).collect();
    assert_eq!(reasons, vec!["no such item", "unknown requirement", "no such template 99999"]);
    // 1000 in + 100 out, then 3000 in + 200 out, at the published rates.
    let cost = (4000.0f64 * 1.25 + 300.0 * 4.25).round() as i64;
    assert_eq!(out["spend"]["cost_micro_usd"], cost);
    assert_eq!(out["spend"]["calls"], 2);

    let bodies = seen.bodies();
    assert_eq!(bodies.len(), 2);
    assert_eq!(bodies[0]["model"], "muse-spark-1.3");
    assert_eq!(bodies[0]["store"], false);
    assert_eq!(bodies[0]["tools"].as_array().unwrap().len(), 3);
    // The catalogue and the listing are answered first, then comes the wish: a prefix the same from one proposal
    // to the next.
    let opening: Vec<(&str, &str)> = bodies[0]["input"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| (i["type"].as_str().unwrap_or("message"), i["call_id"].as_str().unwrap_or_default()))
        .collect();
    assert_eq!(
        opening,
        vec![
            ("function_call", "call_template_catalog"),
            ("function_call_output", "call_template_catalog"),
            ("function_call", "call_list_inventory"),
            ("function_call_output", "call_list_inventory"),
            ("message", ""),
        ]
    );
    assert!(bodies[0]["input"][4]["content"][0]["text"].as_str().unwrap().contains("something for the kids"));
    let replayed: Vec<&str> =
        bodies[1]["input"].as_array().unwrap().iter().map(|i| i["type"].as_str().unwrap_or("message")).collect();
    assert_eq!(
        replayed,
        vec![
            "function_call",
            "function_call_output",
            "function_call",
            "function_call_output",
            "message",
            "function_call",
            "function_call",
            "function_call",
            "function_call",
            "function_call_output",
            "function_call_output",
            "function_call_output",
            "function_call_output"
        ],
        "the reasoning item without encrypted content is not replayed"
    );

    let (status, spend) = app.get("/api/spend").await;
    assert_eq!(status, StatusCode::OK, "{spend}");
    assert_eq!(spend["entries"].as_array().unwrap().len(), 2);
    assert_eq!(spend["entries"][0]["kind"], "propose");
    assert_eq!(spend["entries"][0]["input_tokens"], 1000);
    assert_eq!(spend["totals"]["all"]["cost_micro_usd"], cost);
    assert_eq!(spend["totals"]["by_kind"]["propose"]["calls"], 2);
}

async fn a_stalled_model_is_sent_again_once_and_both_attempts_are_in_the_ledger(db: Db) {
    // No byte for three seconds, against an idle timeout of one.
    let (server, seen) = fake_api(|_, _| {
        ResponseTemplate::new(200)
            .set_body_json(response(vec![message("{\"proposals\": []}", &[])], 500, 50))
            .set_delay(std::time::Duration::from_secs(3))
    })
    .await;
    let mut vars = settings(&server);
    vars.push(("MODEL_IDLE_TIMEOUT_SECS", "1".into()));
    let app = TestApp::spawn(db, &vars).await;
    app.create_item(item("Spare Pi", "single_board_computer")).await;

    let (status, body) = app.post("/api/projects/propose", json!({})).await;

    assert_error(status, &body, StatusCode::BAD_GATEWAY, "model_failed");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains("no whole answer") && message.contains("after 2 attempts"), "{body}");
    assert_eq!(seen.bodies().len(), 2, "what reached the provider is sent again once, not five times");
    assert_eq!(seen.bodies()[0]["stream"], true, "answers are asked for as a stream");
    // Both attempts are entries, their input estimated from what was sent, marked as unanswered.
    let (_, spend) = app.get("/api/spend").await;
    let entries = spend["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 2, "{spend}");
    for entry in entries {
        assert_eq!(entry["outcome"], "unanswered", "{entry}");
        assert!(entry["input_tokens"].as_u64().unwrap() > 100, "{entry}");
        assert!(entry["cost_micro_usd"].as_i64().unwrap() > 0, "{entry}");
    }
    assert_eq!(spend["totals"]["all"]["failed_calls"], 2);
    assert_eq!(body["error"]["spend"]["calls"], 2);
}

async fn a_model_failure_writes_nothing_but_the_spend(db: Db) {
    let (server, seen) = fake_api(|_, _| {
        ResponseTemplate::new(200).set_body_json(response(
            vec![message("I think you should build a boat.", &[])],
            500,
            50,
        ))
    })
    .await;
    let app = TestApp::spawn(db, &settings(&server)).await;
    app.create_item(item("Spare Pi", "single_board_computer")).await;
    let (status, body) = app.post("/api/projects/propose", json!({})).await;
    assert_error(status, &body, StatusCode::BAD_GATEWAY, "model_failed");
    assert!(body["error"]["message"].as_str().unwrap().contains("ProposalSet"), "{body}");
    assert_eq!(body["error"]["spend"]["calls"], 1);
    let (_, list) = app.get("/api/projects").await;
    assert_eq!(list["projects"], json!([]));
    let (_, spend) = app.get("/api/spend").await;
    assert_eq!(spend["entries"].as_array().unwrap().len(), 1);
    assert_eq!(spend["entries"][0]["output_tokens"], 50);
    assert_eq!(spend["entries"][0]["outcome"], "failed");
    assert_eq!((&spend["totals"]["all"]["calls"], &spend["totals"]["all"]["failed_calls"]), (&json!(1), &json!(1)));
    assert_eq!(seen.bodies().len(), 1);

    // A request the provider refuses is not retried and also answers 502.
    server.reset().await;
    let (server2, seen2) = fake_api(|_, _| {
        ResponseTemplate::new(400).set_body_json(json!({"error": {"message": "unknown field", "type": "invalid_request_error", "param": null, "code": null}}))
    })
    .await;
    let app2 = TestApp::spawn_on(&app.database_url, &settings(&server2)).await;
    let (status, body) = app2.post("/api/projects/propose", json!({})).await;
    assert_error(status, &body, StatusCode::BAD_GATEWAY, "model_failed");
    assert!(body["error"]["message"].as_str().unwrap().contains("400"), "{body}");
    assert_eq!(seen2.bodies().len(), 1, "a 400 is never retried");
    // The refused call cost nothing and is still an entry, counted apart from the calls that answered.
    let (_, spend) = app2.get("/api/spend").await;
    let outcomes: Vec<(&str, i64)> = spend["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["outcome"].as_str().unwrap(), e["cost_micro_usd"].as_i64().unwrap()))
        .collect();
    assert_eq!(outcomes.len(), 2, "{spend}");
    assert!(outcomes.contains(&("failed", 0)), "{spend}");
    assert_eq!(spend["totals"]["all"]["failed_calls"], 2);
    assert_eq!(spend["totals"]["by_kind"]["propose"]["failed_calls"], 2);
}

async fn propose_streams_its_steps_as_server_sent_events(db: Db) {
    // The local planner runs the seed's loop: its steps and tools are streamed as they happen, then the result.
    let app = TestApp::demo(db).await;
    let events = app.post_streamed("/api/projects/propose", json!({"brief": "a weather station"})).await;
    let (last, result) = events.last().unwrap();
    assert_eq!(last, "result", "{events:?}");
    let steps: Vec<&Value> = events.iter().filter(|(n, _)| n == "step").map(|(_, d)| d).collect();
    assert_eq!(steps.len() as u64, result["steps"].as_u64().unwrap(), "{events:?}");
    for (i, step) in steps.iter().enumerate() {
        assert_eq!((step["number"].as_u64(), step["max"].as_u64()), (Some(i as u64 + 1), Some(4)), "{step}");
    }
    // Every tool a step called answers with a `tool` event before the next step.
    let called: Vec<&str> =
        steps.iter().flat_map(|s| s["tools"].as_array().unwrap()).map(|t| t.as_str().unwrap()).collect();
    let answered: Vec<&str> =
        events.iter().filter(|(n, _)| n == "tool").map(|(_, d)| d["name"].as_str().unwrap()).collect();
    assert!(!called.is_empty(), "{events:?}");
    assert_eq!(called, answered);
    assert!(events.iter().filter(|(n, _)| n == "tool").all(|(_, d)| d["output_bytes"].as_u64().unwrap() > 0));
    assert!(steps.last().unwrap()["tools"].as_array().unwrap().is_empty(), "the answering step calls no tool");
    // The result is the plain answer's JSON: the projects it wrote are stored.
    assert!(!result["projects"].as_array().unwrap().is_empty(), "{result}");
    let (_, list) = app.get("/api/projects?status=proposed").await;
    let stored: Vec<&Value> = list["projects"].as_array().unwrap().iter().map(|p| &p["id"]).collect();
    assert!(result["projects"].as_array().unwrap().iter().all(|p| stored.contains(&&p["id"])), "{list}");

    // A failed run ends with an `error` event: the plain answer's error body and its status; nothing is written.
    let (server, _) = fake_api(|_, _| {
        ResponseTemplate::new(200).set_body_json(response(vec![message("no JSON here", &[])], 100, 10))
    })
    .await;
    let failing = TestApp::spawn_on(&app.database_url, &settings(&server)).await;
    let before = list["projects"].as_array().unwrap().len();
    let events = failing.post_streamed("/api/projects/propose", json!({})).await;
    let (last, error) = events.last().unwrap();
    assert_eq!(last, "error", "{events:?}");
    assert_eq!((error["error"]["status"].as_u64(), error["error"]["code"].as_str()), (Some(502), Some("model_failed")));
    assert_eq!(error["error"]["spend"]["calls"], 1);
    assert_eq!(events.len(), 1, "an unusable answer is no step: {events:?}");
    let (_, list) = app.get("/api/projects?status=proposed").await;
    assert_eq!(list["projects"].as_array().unwrap().len(), before);

    // Without the header the answer is the plain JSON, as before.
    let (status, plain) = app.post("/api/projects/propose", json!({})).await;
    assert_eq!(status, StatusCode::OK, "{plain}");
    assert!(plain["projects"].is_array());
}
