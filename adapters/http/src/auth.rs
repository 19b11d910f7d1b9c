//! Who is asking. Every `/api` route that needs someone takes a [`Member`] (the household) or a [`Person`] (the
//! caller: member, role and how they signed in). Both accept a bearer token (a personal API token, with its
//! scope) or the session cookie, checked by the `Auth` use case that `app` puts in the request's data.
//!
//! Roles are enforced here for the API as a whole: a request that changes something (any method but `GET`,
//! `HEAD` and `OPTIONS`) needs a member or owner with a write token or a session, except signing out and
//! managing one's own tokens and passkeys, which the use cases check; what only owners may do is checked by the use cases.
//! A state-changing request signed in by cookie must come from the page's own origin (`Origin`), or it is 403.

use crate::error::ApiError;
use crate::site::Site;
use poem::http::{Method, StatusCode, header};
use poem::{Endpoint, IntoResponse, Request, RequestBody, Response};
use poem_openapi::registry::{MetaSecurityScheme, Registry};
use poem_openapi::{ApiExtractor, ApiExtractorType, ExtractParamOptions};
use trove_application::auth::{Auth, Caller};
use trove_domain::HouseholdId;
use trove_domain::people::{Permission, SESSION_IDLE};

/// The session cookie's name.
pub const SESSION_COOKIE: &str = "trove_session";

/// The household of whoever is asking (a member of it, by token or session).
#[derive(Debug, Clone, Copy)]
pub struct Member(pub HouseholdId);

/// Whoever is asking: member, household, role and how they signed in.
#[derive(Debug, Clone, Copy)]
pub struct Person(pub Caller);

/// The routes that change something but that any signed-in person may call (the use case decides the rest).
fn open_to_everyone(method: &Method, path: &str) -> bool {
    (method == Method::POST
        && (path == "/api/session/logout"
            || path == "/api/tokens"
            || path == "/api/passkeys/start"
            || path == "/api/passkeys/finish"
            || path == "/api/me/notifications/test"
            || path == "/api/me/calendar"))
        || (method == Method::PUT && path == "/api/me/notifications")
        || (method == Method::DELETE && (path.starts_with("/api/tokens/") || path.starts_with("/api/passkeys/")))
}

fn changes_something(method: &Method) -> bool {
    !matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS)
}

/// The value of the session cookie, if the request carries one.
pub fn session_cookie(req: &Request) -> Option<String> {
    cookie_named(req, SESSION_COOKIE)
}

/// The value of the request's cookie `wanted`, if it has a non-empty one.
pub fn cookie_named(req: &Request, wanted: &str) -> Option<String> {
    req.headers().get_all(header::COOKIE).iter().filter_map(|v| v.to_str().ok()).flat_map(|v| v.split(';')).find_map(
        |pair| {
            let (name, value) = pair.trim().split_once('=')?;
            (name == wanted && !value.is_empty()).then(|| value.to_owned())
        },
    )
}

/// The cookie that keeps a single sign-on's `state` in the browser that began it, until the provider sends it
/// back: `SameSite=Lax`, since that comes as a top-level navigation from the provider's site.
pub const SSO_STATE_COOKIE: &str = "trove_sso_state";

/// The `Set-Cookie` value that keeps a single sign-on's state for as long as the sign-in may take.
pub fn sso_state_cookie(site: &Site, state: &str, max_age: i64) -> String {
    let secure = if site.secure() { "; Secure" } else { "" };
    format!("{SSO_STATE_COOKIE}={state}; Max-Age={max_age}; Path=/api/session/oidc; HttpOnly; SameSite=Lax{secure}")
}

fn bearer(req: &Request) -> Option<&str> {
    let value = req.headers().get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
}

fn forbidden(message: &str) -> poem::Error {
    ApiError::new(StatusCode::FORBIDDEN, "forbidden", message).into()
}

/// Authenticates the request and applies the API-wide rules (see the module's documentation).
async fn caller(req: &Request) -> poem::Result<Caller> {
    let auth = req.data::<Auth>().ok_or_else(ApiError::unauthorized)?;
    let caller = if let Some(token) = bearer(req) {
        auth.by_token(token).await.map_err(ApiError::from)?.ok_or_else(ApiError::unauthorized)?
    } else if let Some(secret) = session_cookie(req) {
        let caller = auth.by_session(&secret).await.map_err(ApiError::from)?.ok_or_else(ApiError::unauthorized)?;
        if changes_something(req.method()) {
            let site = req.data::<Site>().ok_or_else(|| ApiError::unexpected("no site in the request's data"))?;
            let origin = req.headers().get(header::ORIGIN).and_then(|v| v.to_str().ok());
            let host = req.headers().get(header::HOST).and_then(|v| v.to_str().ok());
            if !site.same_origin(origin, host) {
                return Err(forbidden(
                    "a request signed in with the session cookie must come from this site's own page (Origin)",
                ));
            }
        }
        caller
    } else {
        return Err(ApiError::unauthorized().into());
    };
    if changes_something(req.method()) && !open_to_everyone(req.method(), req.original_uri().path()) {
        caller.require(Permission::WriteInventory).map_err(ApiError::from)?;
    }
    Ok(caller)
}

/// The two ways in, as the OpenAPI document shows them: a bearer token, or the session cookie.
fn register_schemes(registry: &mut Registry) {
    registry.create_security_scheme(
        "Member",
        MetaSecurityScheme {
            ty: "http",
            description: Some("A personal API token (POST /api/tokens, or `trove token new`)."),
            name: None,
            key_in: None,
            scheme: Some("bearer"),
            bearer_format: None,
            flows: None,
            openid_connect_url: None,
        },
    );
    registry.create_security_scheme(
        "Session",
        MetaSecurityScheme {
            ty: "apiKey",
            description: Some(
                "The session cookie set by signing in (POST /api/session) or accepting an invitation; \
                 a request that changes something must carry the page's own Origin.",
            ),
            name: Some(SESSION_COOKIE),
            key_in: Some("cookie"),
            scheme: None,
            bearer_format: None,
            flows: None,
            openid_connect_url: None,
        },
    );
}

impl<'a> ApiExtractor<'a> for Member {
    const TYPES: &'static [ApiExtractorType] = &[ApiExtractorType::SecurityScheme];
    type ParamType = ();
    type ParamRawType = ();

    fn register(registry: &mut Registry) {
        register_schemes(registry);
    }

    fn security_schemes() -> Vec<&'static str> {
        vec!["Member", "Session"]
    }

    async fn from_request(
        req: &'a Request,
        _body: &mut RequestBody,
        _param_opts: ExtractParamOptions<Self::ParamType>,
    ) -> poem::Result<Self> {
        Ok(Member(caller(req).await?.household))
    }
}

impl<'a> ApiExtractor<'a> for Person {
    const TYPES: &'static [ApiExtractorType] = &[ApiExtractorType::SecurityScheme];
    type ParamType = ();
    type ParamRawType = ();

    fn register(registry: &mut Registry) {
        register_schemes(registry);
    }

    fn security_schemes() -> Vec<&'static str> {
        vec!["Member", "Session"]
    }

    async fn from_request(
        req: &'a Request,
        _body: &mut RequestBody,
        _param_opts: ExtractParamOptions<Self::ParamType>,
    ) -> poem::Result<Self> {
        Ok(Person(caller(req).await?))
    }
}

/// The `Set-Cookie` value that gives the browser a session for [`SESSION_IDLE`].
pub fn session_set_cookie(site: &Site, secret: &str) -> String {
    cookie(site, secret, SESSION_IDLE.num_seconds())
}

/// The `Set-Cookie` value that removes the session cookie.
pub fn session_clear_cookie(site: &Site) -> String {
    cookie(site, "", 0)
}

fn cookie(site: &Site, value: &str, max_age: i64) -> String {
    let secure = if site.secure() { "; Secure" } else { "" };
    format!("{SESSION_COOKIE}={value}; Max-Age={max_age}; Path=/; HttpOnly; SameSite=Strict{secure}")
}

/// Slides the session cookie: an answer to a request signed in by cookie gives the cookie another
/// [`SESSION_IDLE`] (the store slides the session itself), unless the answer is a 401 or sets the cookie itself.
pub async fn slide_session<E: Endpoint>(next: E, req: Request) -> poem::Result<Response> {
    let secret = session_cookie(&req).filter(|_| bearer(&req).is_none());
    let site = req.data::<Site>().cloned();
    let mut resp = next.call(req).await?.into_response();
    if let (Some(secret), Some(site)) = (secret, site)
        && resp.status() != StatusCode::UNAUTHORIZED
        && !resp.headers().contains_key(header::SET_COOKIE)
        && let Ok(value) = session_set_cookie(&site, &secret).parse()
    {
        resp.headers_mut().insert(header::SET_COOKIE, value);
    }
    Ok(resp)
}
