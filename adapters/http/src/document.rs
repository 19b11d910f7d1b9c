//! The API's OpenAPI document as served: poem-openapi's, made exact where it cannot say the truth by itself,
//! and what is read from it.
//!
//! - [`exact`]: a member a route may answer as `null` (every member that is not required) is `nullable`; every
//!   operation lists the error statuses it may answer, each with the [`ERROR_SCHEMA`]; the limits the use cases
//!   enforce are declared ([`LIMITS`], [`PARAMETER_LIMITS`]); a request object takes no unknown member.
//! - [`allow`]: a `405` names the methods the path takes (`Allow`).
//! - [`docs`]: the Swagger UI page, its script and style served as files so that it runs under the page's
//!   Content-Security-Policy (no inline script or style).
//!
//! The explainer (`crate::explain`) checks every JSON body against this same document before a route reads it.

use crate::explain::template_matches;
use poem::endpoint::make_sync;
use poem::http::{HeaderValue, StatusCode, header};
use poem::web::Html;
use poem::{Endpoint, EndpointExt, IntoResponse, Response, Route};
use serde_json::{Map, Value, json};
use std::sync::Arc;
use trove_application::idempotency::KEY_MAX;
use trove_application::items::LIMIT_MAX;
use trove_application::propose::BRIEF_MAX;
use trove_domain::item::{self as di, NAME_MAX, PROFILE_MAX, SEARCH_MAX, SHORT_TEXT_MAX};
use trove_domain::people;
use trove_domain::template::{LIST_MAX, REQUIREMENTS_MAX, STEPS_MAX};

/// The name of the error answer's schema in the document.
pub const ERROR_SCHEMA: &str = "Error";

/// Text with something in it besides white space (names are trimmed before they are checked).
const NOT_BLANK: &str = "\\S";

/// The limits of request members the use cases enforce, declared in the document: `(schema, member, limits)`.
/// A test (`tests/it/hardening.rs`) checks that each names a member the document has.
pub fn limits() -> Vec<(&'static str, &'static str, Value)> {
    let name = json!({"minLength": 1, "maxLength": NAME_MAX, "pattern": NOT_BLANK});
    // A type or a field key in words ("Power bank"): the domain keeps it as `power_bank`
    // (`trove_domain::item::normalise_word`) and says in words what it cannot read.
    let typed = json!({"minLength": 1, "maxLength": NAME_MAX});
    let quantity = json!({"minimum": 0, "maximum": di::QUANTITY_MAX});
    let tags = json!({"maxItems": di::TAGS_MAX, "items": {"type": "string", "maxLength": di::TAG_MAX}});
    let short = json!({"maxLength": SHORT_TEXT_MAX});
    let short_filled = json!({"minLength": 1, "maxLength": SHORT_TEXT_MAX, "pattern": NOT_BLANK});
    let profile = json!({"maxLength": PROFILE_MAX});
    let reading = json!({"minLength": 1, "maxLength": trove_domain::reading::TEXT_MAX});
    let place_name = json!({"minLength": 1, "maxLength": trove_domain::place::NAME_MAX, "pattern": NOT_BLANK});
    let place_note = json!({"maxLength": trove_domain::place::NOTE_MAX});
    let credential = json!({"maxLength": people::CREDENTIAL_TEXT_MAX});
    let member_name = json!({"maxLength": people::NAME_MAX});
    let password = json!({"maxLength": people::PASSWORD_MAX});
    // A token's or a passkey's name (`people::token_name`).
    let label = json!({"maxLength": people::TOKEN_NAME_MAX});
    vec![
        ("CreateItem", "name", name.clone()),
        ("CreateItem", "item_type", typed.clone()),
        ("CreateItem", "quantity", quantity.clone()),
        ("CreateItem", "min_quantity", quantity.clone()),
        ("CreateItem", "tags", tags.clone()),
        ("CreateItem", "notes", json!({"maxLength": di::NOTES_MAX})),
        ("CreateItem", "serial", json!({"maxLength": di::SERIAL_MAX})),
        ("PatchItem", "quantity", quantity.clone()),
        ("PatchItem", "min_quantity", quantity),
        ("PatchItem", "tags", tags),
        ("PatchItem", "notes", json!({"maxLength": di::NOTES_MAX})),
        ("PatchItem", "serial", json!({"maxLength": di::SERIAL_MAX})),
        ("Purchase", "vendor", json!({"maxLength": di::VENDOR_MAX})),
        ("Purchase", "price", json!({"minimum": 0, "maximum": di::PRICE_MAX})),
        ("Price", "amount", json!({"minimum": 0, "maximum": di::PRICE_MAX})),
        ("CreateItem", "profile", profile.clone()),
        ("CreateItem", "location", short.clone()),
        ("PatchItem", "name", name),
        ("PatchItem", "item_type", typed.clone()),
        ("PatchItem", "profile", profile),
        ("PatchItem", "location", short.clone()),
        ("NewFault", "text", short_filled.clone()),
        ("NewMeasurement", "key", typed),
        ("NewTest", "name", short_filled),
        ("NewTest", "note", short.clone()),
        ("MarkGone", "note", short),
        ("ProposeRequest", "brief", json!({"maxLength": BRIEF_MAX})),
        ("CreateTemplate", "requirements", json!({"minItems": 1, "maxItems": REQUIREMENTS_MAX})),
        ("CreateTemplate", "steps", json!({"maxItems": STEPS_MAX})),
        ("NewRequirement", "item_types", json!({"minItems": 1, "maxItems": LIST_MAX})),
        ("NewRequirement", "fields", json!({"maxItems": LIST_MAX})),
        ("NewRequirement", "disqualifying_faults", json!({"maxItems": LIST_MAX})),
        ("CreatePlace", "name", place_name.clone()),
        ("CreatePlace", "note", place_note.clone()),
        ("PatchPlace", "name", place_name),
        ("PatchPlace", "note", place_note),
        ("BulkChange", "ids", json!({"minItems": 1, "maxItems": trove_domain::bulk::BULK_MAX})),
        ("NewRequirement", "count", json!({"minimum": 1, "maximum": trove_domain::template::COUNT_MAX})),
        ("AcceptInvitation", "code", credential.clone()),
        ("AcceptInvitation", "name", member_name.clone()),
        ("AcceptInvitation", "password", password.clone()),
        ("SignIn", "name", credential.clone()),
        ("SignIn", "password", password),
        ("PasskeySignUp", "code", credential.clone()),
        ("PasskeySignUp", "name", member_name),
        ("PasskeySignIn", "name", credential.clone()),
        ("PasskeyFinish", "ceremony", credential),
        ("NewTokenDto", "name", label.clone()),
        ("NewTokenDto", "expires_in_days", json!({"minimum": 1, "maximum": people::TOKEN_DAYS_MAX})),
        ("NewPasskeyDto", "name", label),
        ("ListingText", "text", reading.clone()),
        ("VoiceTranscript", "transcript", reading),
    ]
}

/// The limits of parameters the routes enforce: `(path, parameter, limits)`.
pub fn parameter_limits() -> Vec<(&'static str, &'static str, Value)> {
    // 1 to KEY_MAX visible ASCII characters. HTTP drops the white space around a header's value before the
    // route sees it, so the pattern allows it, and the length is the pattern's.
    let key = json!({"pattern": format!("^[ \t]*[!-~]{{1,{KEY_MAX}}}[ \t]*$")});
    vec![
        ("/items", "limit", json!({"minimum": 1, "maximum": LIMIT_MAX})),
        ("/activity", "limit", json!({"minimum": 1, "maximum": trove_application::history::ACTIVITY_MAX})),
        ("/items", "offset", json!({"minimum": 0})),
        ("/items", "item_type", json!({"pattern": "^([a-z][a-z0-9]*(_[a-z0-9]+)*)?$"})),
        ("/items", "q", json!({"maxLength": SEARCH_MAX})),
        ("/labels.pdf", "items", json!({"pattern": ID_LIST})),
        ("/labels.pdf", "places", json!({"pattern": ID_LIST})),
        ("/projects/propose", "Idempotency-Key", key.clone()),
        ("/items/{id}/price", "Idempotency-Key", key.clone()),
        ("/import", "Idempotency-Key", key),
    ]
}

/// Ids separated by commas (`1,2,3`), as the label routes read them; blank is none.
const ID_LIST: &str = "^ *([0-9]{1,18} *(, *[0-9]{1,18} *)*)?$";

/// The routes that name an object in their query (a place to list the items of, the items and places to
/// label): they may answer `404` although their path names none and they take no body.
const QUERY_NAMES_OBJECT: &[(&str, &str)] =
    &[("get", "/items"), ("get", "/labels.pdf"), ("get", "/report/value"), ("get", "/calendar.ics")];

/// The routes that answer one document in the format asked (`format=json|csv|pdf`): their `200` is one answer
/// with a content per format (poem-openapi keeps only the last of several answers of one status), the JSON one
/// of this schema, and `Content-Disposition` only on the files.
const FORMATS: &[(&str, &str, &str)] = &[("get", "/report/value", "ValueReportDto")];

/// The routes that call the Model API: they may answer `402` (budget reached), `502` (the model failed) and
/// `503` (the Model API is not configured).
const MODEL_ROUTES: &[(&str, &str)] = &[
    ("post", "/projects/propose"),
    ("post", "/items/{id}/price"),
    ("post", "/intake/label"),
    ("post", "/intake/listing"),
    ("post", "/intake/voice"),
    ("post", "/intake/receipt"),
    ("post", "/report/value/refresh"),
];

/// The routes that read or write the media store: they may answer `503` with `Retry-After` when the storage is
/// unavailable (S3 down, a full disk).
const STORAGE_ROUTES: &[(&str, &str)] = &[
    ("post", "/items/{id}/media"),
    ("get", "/media/{id}"),
    ("get", "/media/{id}/thumb"),
    ("delete", "/media/{id}"),
    ("post", "/intake/label"),
    ("post", "/intake/photo"),
    ("post", "/intake/receipt"),
];

/// poem-openapi's document (`spec`), made exact (see the module's documentation).
pub fn exact(spec: &str) -> String {
    let Ok(mut doc) = serde_json::from_str::<Value>(spec) else { return spec.to_owned() };
    let schemas = doc.pointer_mut("/components/schemas").and_then(Value::as_object_mut);
    if let Some(schemas) = schemas {
        for schema in schemas.values_mut() {
            nullable_optionals(schema);
        }
        for (name, member, limits) in limits() {
            if let Some(Value::Object(property)) =
                schemas.get_mut(name).and_then(|s| s.pointer_mut(&format!("/properties/{member}")))
            {
                merge(property, &limits);
            }
        }
        schemas.insert(ERROR_SCHEMA.to_owned(), error_schema());
    }
    let request_schemas = request_schemas(&doc);
    if let Some(schemas) = doc.pointer_mut("/components/schemas").and_then(Value::as_object_mut) {
        for name in request_schemas {
            if let Some(Value::Object(schema)) = schemas.get_mut(&name)
                && schema.contains_key("properties")
            {
                schema.entry("additionalProperties").or_insert(Value::Bool(false));
            }
        }
    }
    if let Some(paths) = doc.get_mut("paths").and_then(Value::as_object_mut) {
        for (path, item) in paths.iter_mut() {
            let Some(item) = item.as_object_mut() else { continue };
            for (method, operation) in item.iter_mut() {
                declare_errors(method, path, operation);
                if let Some((_, _, schema)) = FORMATS.iter().find(|(m, p, _)| m == method && p == path) {
                    one_answer_in_formats(operation, schema);
                }
                for (at, parameter, limits) in parameter_limits() {
                    if at != path {
                        continue;
                    }
                    let parameters = operation.get_mut("parameters").and_then(Value::as_array_mut);
                    for p in parameters.into_iter().flatten().filter(|p| p["name"] == parameter) {
                        if let Some(Value::Object(schema)) = p.get_mut("schema") {
                            merge(schema, &limits);
                        }
                    }
                }
            }
        }
    }
    doc.to_string()
}

/// Makes the `200` of `operation` one answer with a content per format: JSON of `schema`, CSV and PDF, the
/// files with an optional `Content-Disposition`.
fn one_answer_in_formats(operation: &mut Value, schema: &str) {
    let Some(ok) = operation.pointer_mut("/responses/200").and_then(Value::as_object_mut) else { return };
    let binary = json!({"schema": {"type": "string", "format": "binary"}});
    ok.insert(
        "description".to_owned(),
        json!("The report in the format asked: JSON (`format=json`, the default), CSV (a row per item) or PDF (for an insurer)."),
    );
    ok.insert(
        "content".to_owned(),
        json!({
            "application/json; charset=utf-8": {"schema": {"$ref": format!("#/components/schemas/{schema}")}},
            "text/csv; charset=utf-8": binary.clone(),
            "application/pdf": binary,
        }),
    );
    ok.insert(
        "headers".to_owned(),
        json!({"CONTENT-DISPOSITION": {"required": false, "deprecated": false, "schema": {"type": "string"},
               "description": "`attachment; filename=...` for CSV and PDF."}}),
    );
}

/// Sets every key of `limits` on `schema`. A schema that is only a `$ref` keeps it under `allOf`, since OpenAPI
/// 3.0 ignores the members beside a `$ref`.
fn merge(schema: &mut Map<String, Value>, limits: &Value) {
    if let Some(reference) = schema.remove("$ref") {
        schema.insert("allOf".to_owned(), json!([{ "$ref": reference }]));
    }
    for (k, v) in limits.as_object().into_iter().flatten() {
        schema.insert(k.clone(), v.clone());
    }
}

/// Marks `nullable` every member of an object schema that is not required: the routes answer a missing value
/// as `null`, and take `null` for a member left out.
fn nullable_optionals(schema: &mut Value) {
    let required: Vec<String> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).map(str::to_owned).collect())
        .unwrap_or_default();
    let Some(properties) = schema.get_mut("properties").and_then(Value::as_object_mut) else { return };
    for (name, property) in properties.iter_mut() {
        if required.contains(name) {
            continue;
        }
        if let Some(property) = property.as_object_mut() {
            merge(property, &json!({"nullable": true}));
        }
    }
}

/// The schema of every error answer: `{"error": {"code", "message"}}`, with what a failed model run cost.
fn error_schema() -> Value {
    json!({
        "type": "object",
        "title": "Error",
        "description": "An error: a stable code to branch on and a message for people.",
        "required": ["error"],
        "properties": {"error": {
            "type": "object",
            "required": ["code", "message"],
            "properties": {
                "code": {"type": "string", "description": "What went wrong, for a program to act on (the message is for people): invalid, unauthorized, forbidden, not_found, conflict, rule, no_code, too_large, unsupported_media_type, throttled, budget_reached, model_failed, not_configured (no model backend: set MODEL_API_KEY), unavailable (the model backend lacks the capability), passkeys_unavailable, busy, storage_unavailable (try again after Retry-After), internal."},
                "message": {"type": "string"},
                "spend": {"allOf": [{"$ref": "#/components/schemas/RunSpendDto"}], "nullable": true,
                    "description": "What the failed model run cost (model_failed only)."},
            },
        }},
    })
}

/// The names of the schemas a request body may hold, at any depth.
fn request_schemas(doc: &Value) -> Vec<String> {
    let mut found: Vec<String> = Vec::new();
    let mut todo: Vec<&Value> = Vec::new();
    for item in doc.get("paths").and_then(Value::as_object).into_iter().flat_map(Map::values) {
        for operation in item.as_object().into_iter().flat_map(Map::values) {
            if let Some(content) = operation.pointer("/requestBody/content").and_then(Value::as_object) {
                todo.extend(content.values().filter_map(|c| c.get("schema")));
            }
        }
    }
    while let Some(schema) = todo.pop() {
        match schema {
            Value::Object(o) => {
                if let Some(name) =
                    o.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix("#/components/schemas/"))
                {
                    if !found.iter().any(|f| f == name) {
                        found.push(name.to_owned());
                        if let Some(s) = doc.pointer(&format!("/components/schemas/{name}")) {
                            todo.push(s);
                        }
                    }
                } else {
                    todo.extend(o.values());
                }
            }
            Value::Array(a) => todo.extend(a),
            _ => {}
        }
    }
    found
}

/// Why accepting an invitation is 410.
/// A sign-in refused by the throttle.
const THROTTLED: &str = "Too many failed sign-ins for this name from this address, or from this address under many names; try again \
     after Retry-After.";

const PASSWORDS_OFF: &str = "Passwords are turned off here (TROVE_OIDC_ONLY): sign in with single sign-on.";

const SSO_UNREACHABLE: &str = "The OpenID provider cannot be reached or its discovery document is unusable.";

const INVITATION_GONE: &str = "The invitation was used, revoked or has expired, or its maker was removed or no \
                               longer holds the role it grants.";

/// Adds to `operation` the error answers it may give, each with the [`ERROR_SCHEMA`]: 400 when it reads
/// parameters or a body, 401 when it needs a token, 404 and the state's 409 and rule's 422 when it names an
/// object (in its path or body), 413 and 415 for a body, the model's 402, 502 and 503, and 500 for the unexpected.
fn declare_errors(method: &str, path: &str, operation: &mut Value) {
    let Some(operation) = operation.as_object_mut() else { return };
    let has_parameters = operation.get("parameters").and_then(Value::as_array).is_some_and(|p| !p.is_empty());
    let has_body = operation.contains_key("requestBody");
    let names_object = path.contains('{') || has_body;
    let mut statuses: Vec<(u16, &str)> = Vec::new();
    if has_parameters || has_body {
        statuses.push((400, "The request is malformed or breaks a limit; the message names the field."));
    }
    if operation.contains_key("security") {
        statuses.push((401, "No valid bearer token or session cookie."));
        statuses.push((
            403,
            "The caller's role or token does not allow this, or a cookie-signed request came from another origin.",
        ));
    }
    match (method, path) {
        ("post", "/session") => {
            statuses.push((401, "Wrong name or password (the same answer for both)."));
            statuses.push((403, PASSWORDS_OFF));
            statuses.push((429, THROTTLED));
            statuses.push((503, "Too many passwords are being checked at once; try again after Retry-After."));
        }
        ("post", "/invitations/accept/passkey/start") => {
            statuses.push((404, "No invitation has this code."));
            statuses.push((409, "The name is taken."));
            statuses.push((410, INVITATION_GONE));
            statuses.push((503, "Passkeys cannot work with TROVE_PUBLIC_URL (an IP address as its host)."));
        }
        ("post", "/invitations/accept/passkey/finish") => {
            statuses.push((409, "The name is taken."));
            statuses.push((
                410,
                "The ceremony is unknown, expired or finished, or the invitation may no longer be accepted (used, \
                 revoked or expired meanwhile, or its maker removed or demoted).",
            ));
            statuses.push((422, "The credential fails WebAuthn's checks."));
        }
        ("post", "/session/passkey/start") => {
            statuses.push((429, THROTTLED));
            statuses.push((503, "Passkeys cannot work with TROVE_PUBLIC_URL (an IP address as its host)."));
        }
        ("post", "/session/passkey/finish") => {
            statuses.push((401, "The passkey was not accepted."));
            statuses.push((410, "The ceremony is unknown, expired or finished."));
            statuses.push((429, THROTTLED));
        }
        ("post", "/passkeys/start") => {
            statuses.push((503, "Passkeys cannot work with TROVE_PUBLIC_URL (an IP address as its host)."));
        }
        ("post", "/passkeys/finish") => {
            statuses.push((410, "The ceremony is unknown, expired or finished, or another member's."));
        }
        ("get", "/invitations/offer/{code}") => {
            statuses.push((410, INVITATION_GONE));
        }
        ("post", "/invitations/accept") => {
            statuses.push((403, PASSWORDS_OFF));
            statuses.push((404, "No invitation has this code."));
            statuses.push((409, "The name is taken."));
            statuses.push((410, INVITATION_GONE));
            statuses.push((503, "Too many passwords are being checked at once; try again after Retry-After."));
        }
        ("get", "/session/oidc/start") => {
            statuses.push((404, "Single sign-on is not configured here, or no invitation has this code."));
            statuses.push((410, INVITATION_GONE));
            statuses.push((503, SSO_UNREACHABLE));
        }
        ("get", "/session/oidc/callback") => {
            statuses.push((401, "The provider refused (the code, or its ID token failed a check)."));
            statuses.push((403, "The account has no place here: no mapped group and no invitation."));
            statuses.push((404, "Single sign-on is not configured here."));
            statuses.push((409, "Every name tried for the new member is taken."));
            statuses.push((
                410,
                "The sign-in is unknown, expired or finished, or its invitation may no longer be accepted.",
            ));
            statuses.push((503, SSO_UNREACHABLE));
        }
        ("patch", "/items/{id}") => {
            statuses.push((412, "If-Match names another version than the item's: read it again."));
        }
        ("delete", "/invitations/{id}") => {
            statuses.push((410, "The invitation was used already."));
        }
        ("get", "/report/value/refresh") => {
            statuses.push((503, "The model backend cannot search the web (not configured, or its provider lacks it)."));
        }
        ("post", "/report/value/refresh/stop") => {
            statuses.push((404, "No refresh of values has run since the server started."));
        }
        _ => {}
    }
    if names_object || QUERY_NAMES_OBJECT.contains(&(method, path)) {
        statuses.push((404, "An object the request names does not exist in this household."));
    }
    if names_object {
        statuses.push((409, "The state of an object stands in the way; the same request may succeed once it changes."));
        statuses.push((422, "The rules never allow the request as it is."));
    }
    if has_body {
        statuses.push((413, "The body is larger than its limit."));
        statuses.push((415, "The body is of a media type the route does not take."));
    }
    if MODEL_ROUTES.contains(&(method, path)) {
        statuses.push((402, "The monthly model budget is reached; nothing was sent to the model."));
        statuses.push((502, "The model failed; the error says what the run cost."));
        statuses.push((503, "The Model API is not configured, or the server is busy."));
    } else if path == "/intake/photo" {
        statuses.push((503, "The server is busy with other images; try again after Retry-After."));
    }
    if STORAGE_ROUTES.contains(&(method, path)) {
        statuses.push((
            503,
            "The storage cannot take or give the file now (S3 down, a full disk); try again after Retry-After.",
        ));
    }
    statuses.push((500, "An unexpected error; see the server log."));
    let responses = operation.entry("responses").or_insert_with(|| json!({}));
    let Some(responses) = responses.as_object_mut() else { return };
    for (status, description) in statuses {
        let answer = responses.entry(status.to_string()).or_insert_with(|| {
            json!({
                "description": description,
                "content": {"application/json; charset=utf-8": {"schema": {"$ref": format!("#/components/schemas/{ERROR_SCHEMA}")}}},
            })
        });
        // A busy server (503) and a throttled sign-in (429) say when to try again.
        if matches!(status, 429 | 503)
            && let Some(answer) = answer.as_object_mut()
        {
            answer.entry("headers").or_insert_with(|| json!({})).as_object_mut().map(|h| {
                h.entry("Retry-After").or_insert_with(|| {
                    json!({
                        "description": "Seconds to wait before trying again (when the server is busy, the storage unavailable or the sign-in is throttled).",
                        "schema": {"type": "integer", "format": "int64", "minimum": 0},
                    })
                })
            });
        }
    }
}

/// The methods each path of the API takes, read from the document, for the `Allow` of a 405.
#[derive(Debug, Default)]
pub struct Methods {
    /// Each path of the document (under `/api`) with its methods, upper-case.
    paths: Vec<(String, Vec<String>)>,
}

impl Methods {
    /// The methods of each path of `document` (served under `/api`).
    pub fn new(document: &str) -> Self {
        let doc: Value = serde_json::from_str(document).unwrap_or(Value::Null);
        let paths = doc
            .get("paths")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .map(|(path, item)| {
                let methods =
                    item.as_object().into_iter().flat_map(Map::keys).map(|m| m.to_ascii_uppercase()).collect();
                (format!("/api{path}"), methods)
            })
            .collect();
        Self { paths }
    }

    /// The document's path (under `/api`) that `path` falls under, with its methods: the one that names the most
    /// segments literally.
    fn found(&self, path: &str) -> Option<&(String, Vec<String>)> {
        self.paths
            .iter()
            .filter(|(template, _)| template_matches(template, path))
            .min_by_key(|(template, _)| template.matches('{').count())
    }

    /// The document's path template (under `/api`) that `path` falls under, as [`Methods::allow`] finds it.
    pub fn template(&self, path: &str) -> Option<&str> {
        self.found(path).map(|(template, _)| template.as_str())
    }

    /// What `Allow` says for `path`: the document's methods for an API path (`HEAD` with `GET`; the path that
    /// names the most segments literally wins), `GET, HEAD` for the rest (the page, the document, `/health`).
    pub fn allow(&self, path: &str) -> String {
        let found = self.found(path);
        let mut methods: Vec<String> = found.map_or_else(|| vec!["GET".to_owned()], |(_, m)| m.clone());
        if methods.iter().any(|m| m == "GET") {
            methods.push("HEAD".to_owned());
        }
        methods.join(", ")
    }
}

/// Adds `Allow` to a `405 Method Not Allowed` answer.
pub async fn allow<E: Endpoint>(next: Arc<E>, req: poem::Request, methods: Arc<Methods>) -> poem::Result<Response> {
    // A `Uri`'s clone shares its text (no copy): only a 405 reads it.
    let uri = req.uri().clone();
    let mut answer = next.call(req).await?.into_response();
    if answer.status() == StatusCode::METHOD_NOT_ALLOWED
        && let Ok(value) = HeaderValue::from_str(&methods.allow(uri.path()))
    {
        answer.headers_mut().insert(header::ALLOW, value);
    }
    Ok(answer)
}

/// The Swagger UI of `document` at `/api/docs`: the page loads its script and style from files, and the
/// document from `/api/openapi.json`, so that nothing inline needs the Content-Security-Policy relaxed.
pub fn docs(swagger_html: &str) -> impl Endpoint + 'static {
    let (style, script) = split_swagger(swagger_html);
    let page = "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>Trove API</title>\n\
        <link rel=\"stylesheet\" href=\"/api/docs/swagger-ui.css\">\n\
        <script src=\"/api/docs/swagger-ui-bundle.js\"></script>\n\
        <script src=\"/api/docs/docs.js\" defer></script>\n</head>\n<body>\n<div id=\"ui\"></div>\n</body>\n</html>\n";
    let start = "SwaggerUIBundle({ dom_id: \"#ui\", url: \"/api/openapi.json\", filter: false, deepLinking: true });\n";
    let file = |body: String, media: &'static str| make_sync(move |_| body.clone().with_content_type(media));
    Route::new()
        .at("/", make_sync(move |_| Html(page)))
        .at("/swagger-ui.css", file(style, "text/css; charset=utf-8"))
        .at("/swagger-ui-bundle.js", file(script, "text/javascript; charset=utf-8"))
        .at("/docs.js", file(start.to_owned(), "text/javascript; charset=utf-8"))
        .map_to_response()
}

/// The style and the bundled script of poem-openapi's Swagger UI page (which holds them inline).
fn split_swagger(html: &str) -> (String, String) {
    let between = |open: &str, close: &str| -> String {
        html.find(open)
            .map(|at| &html[at + open.len()..])
            .and_then(|rest| rest.find(close).map(|end| rest[..end].to_owned()))
            .unwrap_or_default()
    };
    (between("<style charset=\"UTF-8\">", "</style>"), between("<script charset=\"UTF-8\">", "</script>"))
}

/// Serves `document` as `application/json` (`/api/openapi.json`).
pub fn served(document: String) -> impl Endpoint + 'static {
    make_sync(move |_| document.clone().with_content_type("application/json; charset=utf-8"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> String {
        json!({
            "paths": {
                "/items": {
                    "get": {"parameters": [{"name": "limit", "in": "query", "schema": {"type": "integer"}}],
                        "security": [{"Member": []}], "responses": {"200": {"description": ""}}},
                    "post": {"requestBody": {"content": {"application/json; charset=utf-8":
                        {"schema": {"$ref": "#/components/schemas/CreateItem"}}}},
                        "security": [{"Member": []}], "responses": {"201": {"description": ""}}},
                },
                "/items/{id}/price": {"post": {"responses": {"200": {"description": ""}}}},
                "/projects/{id}": {"get": {"responses": {"200": {"description": ""}}}},
                "/projects/propose": {"post": {"responses": {"200": {"description": ""}}}},
            },
            "components": {"schemas": {
                "CreateItem": {"type": "object", "required": ["name"], "properties": {
                    "name": {"type": "string"},
                    "location": {"type": "string"},
                    "condition": {"$ref": "#/components/schemas/Condition"},
                }},
                "Condition": {"type": "string", "enum": ["good"]},
                "Item": {"type": "object", "required": ["id"], "properties": {"id": {"type": "integer"}}},
            }},
        })
        .to_string()
    }

    #[test]
    fn the_document_is_made_exact() {
        let doc: Value = serde_json::from_str(&exact(&spec())).unwrap();
        let create = &doc["components"]["schemas"]["CreateItem"];
        assert_eq!(create["properties"]["location"]["nullable"], true);
        assert_eq!(
            create["properties"]["condition"],
            json!({"allOf": [{"$ref": "#/components/schemas/Condition"}], "nullable": true})
        );
        assert!(create["properties"]["name"].get("nullable").is_none());
        assert_eq!(create["properties"]["name"]["maxLength"], NAME_MAX);
        assert_eq!(create["additionalProperties"], false, "a request object takes no unknown member");
        assert!(
            doc["components"]["schemas"]["Item"].get("additionalProperties").is_none(),
            "an answer is not a request"
        );
        let limit = &doc["paths"]["/items"]["get"]["parameters"][0]["schema"];
        assert_eq!((limit["minimum"].as_u64(), limit["maximum"].as_u64()), (Some(1), Some(u64::from(LIMIT_MAX))));
        let statuses = |path: &str, method: &str| -> Vec<String> {
            doc["paths"][path][method]["responses"].as_object().unwrap().keys().cloned().collect()
        };
        assert_eq!(statuses("/items", "get"), ["200", "400", "401", "403", "404", "500"]);
        assert_eq!(statuses("/items", "post"), ["201", "400", "401", "403", "404", "409", "413", "415", "422", "500"]);
        assert_eq!(statuses("/items/{id}/price", "post"), ["200", "402", "404", "409", "422", "500", "502", "503"]);
        let busy = &doc["paths"]["/items/{id}/price"]["post"]["responses"]["503"];
        assert_eq!(busy["headers"]["Retry-After"]["schema"]["type"], "integer", "{busy}");
        assert!(doc["components"]["schemas"][ERROR_SCHEMA].is_object());
    }

    #[test]
    fn allow_names_the_methods_of_the_path() {
        let methods = Methods::new(&spec());
        assert_eq!(methods.allow("/api/items"), "GET, POST, HEAD");
        assert_eq!(methods.allow("/api/projects/propose"), "POST");
        assert_eq!(methods.allow("/api/projects/7"), "GET, HEAD");
        assert_eq!(methods.allow("/health"), "GET, HEAD");
    }
}
