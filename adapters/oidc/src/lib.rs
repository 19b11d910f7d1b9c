//! The OpenID Connect relying party: [`OpenIdProvider`] over the `openidconnect` crate, its HTTP sent by
//! reqwest (redirects not followed, as the crate asks, against SSRF).
//!
//! Every sign-in reads the provider's discovery document and keys afresh (a sign-in is rare; a provider's keys
//! rotate), so a provider down when Trove starts, or one that changed its keys, needs no restart. The ID token is
//! checked by the crate: its signature by the provider's keys, its issuer, its audience (this client), its expiry
//! and issue time, and the nonce the sign-in began with; the code is exchanged with the PKCE verifier.

use async_trait::async_trait;
use base64::Engine as _;
use openidconnect::core::{CoreAuthenticationFlow, CoreClient, CoreProviderMetadata};
use openidconnect::{
    AuthorizationCode, ClientId, ClientSecret, CsrfToken, IssuerUrl, Nonce, PkceCodeChallenge, PkceCodeVerifier,
    RedirectUrl, RequestTokenError, Scope, TokenResponse as _,
};
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;
use trove_application::ports::sso::{Authorization, Identity, OpenIdProvider, SsoError};

/// How long one request to the provider may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// The relying party's settings (`TROVE_OIDC_*`).
#[derive(Clone)]
pub struct OidcSettings {
    /// The issuer URL; its discovery document is `{issuer}/.well-known/openid-configuration`.
    pub issuer: String,
    pub client_id: String,
    /// `None` for a public client.
    pub client_secret: Option<String>,
    /// Where the provider sends the browser back: `{TROVE_PUBLIC_URL}/api/session/oidc/callback`.
    pub redirect_url: String,
    /// The scopes asked for besides `openid`.
    pub scopes: Vec<String>,
    /// The ID token claim that lists the person's groups (`TROVE_OIDC_GROUPS_CLAIM`).
    pub groups_claim: Option<String>,
    /// What the sign-in button names.
    pub display_name: String,
}

impl std::fmt::Debug for OidcSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OidcSettings")
            .field("issuer", &self.issuer)
            .field("client_id", &self.client_id)
            .field("client_secret", &self.client_secret.as_ref().map(|_| "(set)"))
            .field("redirect_url", &self.redirect_url)
            .field("scopes", &self.scopes)
            .field("groups_claim", &self.groups_claim)
            .field("display_name", &self.display_name)
            .finish()
    }
}

/// The OpenID provider of `TROVE_OIDC_ISSUER`.
#[derive(Debug, Clone)]
pub struct OpenIdConnect {
    settings: OidcSettings,
    issuer: IssuerUrl,
    redirect: RedirectUrl,
    http: reqwest::Client,
}

/// An HTTP exchange with the provider that did not happen.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct HttpFailed(String);

/// The crate's HTTP client: its requests sent with reqwest.
struct Http(reqwest::Client);

impl<'c> openidconnect::AsyncHttpClient<'c> for Http {
    type Error = HttpFailed;
    type Future = Pin<Box<dyn Future<Output = Result<openidconnect::HttpResponse, HttpFailed>> + Send + 'c>>;

    fn call(&'c self, request: openidconnect::HttpRequest) -> Self::Future {
        Box::pin(send(&self.0, request))
    }
}

/// Sends one of the crate's requests with reqwest.
async fn send(
    http: &reqwest::Client,
    request: openidconnect::HttpRequest,
) -> Result<openidconnect::HttpResponse, HttpFailed> {
    let (parts, body) = request.into_parts();
    let resp = http
        .request(parts.method, parts.uri.to_string())
        .headers(parts.headers)
        .body(body)
        .send()
        .await
        .map_err(|e| HttpFailed(chain(&e)))?;
    let mut answer = openidconnect::http::Response::builder().status(resp.status());
    for (name, value) in resp.headers() {
        answer = answer.header(name, value);
    }
    let body = resp.bytes().await.map_err(|e| HttpFailed(format!("reading the answer: {e}")))?;
    answer.body(body.to_vec()).map_err(|e| HttpFailed(e.to_string()))
}

impl OpenIdConnect {
    /// # Errors
    /// When the issuer or the redirect URL is not a URL, or the HTTP client cannot be built.
    pub fn new(settings: OidcSettings) -> Result<Self, String> {
        let issuer =
            IssuerUrl::new(settings.issuer.clone()).map_err(|e| format!("TROVE_OIDC_ISSUER is not a URL: {e}"))?;
        let redirect = RedirectUrl::new(settings.redirect_url.clone())
            .map_err(|e| format!("the single sign-on redirect URL is not a URL: {e}"))?;
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .timeout(REQUEST_TIMEOUT)
            .user_agent(concat!("trove/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| format!("the HTTP client of single sign-on: {e}"))?;
        Ok(Self { settings, issuer, redirect, http })
    }

    async fn metadata(&self) -> Result<CoreProviderMetadata, SsoError> {
        let http = Http(self.http.clone());
        CoreProviderMetadata::discover_async(self.issuer.clone(), &http).await.map_err(|e| {
            SsoError::Unavailable(format!("the OpenID provider {} cannot be used: {}", self.issuer.as_str(), chain(&e)))
        })
    }

    fn client(
        &self,
        metadata: CoreProviderMetadata,
    ) -> CoreClient<
        openidconnect::EndpointSet,
        openidconnect::EndpointNotSet,
        openidconnect::EndpointNotSet,
        openidconnect::EndpointNotSet,
        openidconnect::EndpointMaybeSet,
        openidconnect::EndpointMaybeSet,
    > {
        CoreClient::from_provider_metadata(
            metadata,
            ClientId::new(self.settings.client_id.clone()),
            self.settings.client_secret.clone().map(ClientSecret::new),
        )
        .set_redirect_uri(self.redirect.clone())
    }

    /// The groups the verified ID token lists under the groups claim: an array of strings, or one string.
    fn groups(&self, id_token: &str) -> Vec<String> {
        let Some(claim) = &self.settings.groups_claim else { return Vec::new() };
        let payload = id_token.split('.').nth(1).unwrap_or_default();
        let Ok(bytes) = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(payload.trim_end_matches('=')) else {
            return Vec::new();
        };
        let Ok(claims) = serde_json::from_slice::<serde_json::Value>(&bytes) else { return Vec::new() };
        match claims.get(claim) {
            Some(serde_json::Value::Array(groups)) => {
                groups.iter().filter_map(|g| g.as_str().map(str::to_owned)).collect()
            }
            Some(serde_json::Value::String(group)) => vec![group.clone()],
            _ => Vec::new(),
        }
    }
}

/// An error with its sources, as one line.
fn chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

#[async_trait]
impl OpenIdProvider for OpenIdConnect {
    fn display_name(&self) -> String {
        self.settings.display_name.clone()
    }

    async fn authorization(&self) -> Result<Authorization, SsoError> {
        let client = self.client(self.metadata().await?);
        let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
        let mut request =
            client.authorize_url(CoreAuthenticationFlow::AuthorizationCode, CsrfToken::new_random, Nonce::new_random);
        for scope in self.settings.scopes.iter().filter(|s| s.as_str() != "openid") {
            request = request.add_scope(Scope::new(scope.clone()));
        }
        let (url, state, nonce) = request.set_pkce_challenge(challenge).url();
        Ok(Authorization {
            url: url.to_string(),
            state: state.secret().clone(),
            nonce: nonce.secret().clone(),
            verifier: verifier.secret().clone(),
        })
    }

    async fn identify(&self, code: &str, verifier: &str, nonce: &str) -> Result<Identity, SsoError> {
        let client = self.client(self.metadata().await?);
        let http = Http(self.http.clone());
        let token = client
            .exchange_code(AuthorizationCode::new(code.to_owned()))
            .map_err(|e| SsoError::Unavailable(format!("the OpenID provider has no token endpoint: {e}")))?
            .set_pkce_verifier(PkceCodeVerifier::new(verifier.to_owned()))
            .request_async(&http)
            .await
            .map_err(|e| match &e {
                RequestTokenError::ServerResponse(answer) => {
                    let mut why = answer.error().to_string();
                    if let Some(d) = answer.error_description() {
                        why = format!("{why} ({d})");
                    }
                    SsoError::Refused(format!("the provider refused the code: {why}"))
                }
                RequestTokenError::Request(_) => {
                    SsoError::Unavailable(format!("the OpenID provider cannot be reached: {}", chain(&e)))
                }
                _ => SsoError::Refused(format!("the provider's token answer is unusable: {}", chain(&e))),
            })?;
        let id_token = token.id_token().ok_or_else(|| SsoError::Refused("the provider sent no ID token".into()))?;
        let claims = id_token
            .claims(&client.id_token_verifier(), &Nonce::new(nonce.to_owned()))
            .map_err(|e| SsoError::Refused(format!("the ID token was not accepted: {}", chain(&e))))?;
        Ok(Identity {
            issuer: claims.issuer().to_string(),
            subject: claims.subject().to_string(),
            username: claims.preferred_username().map(|u| u.to_string()),
            name: claims.name().and_then(|n| n.get(None)).map(|n| n.to_string()),
            email: claims.email().map(|e| e.to_string()),
            groups: self.groups(&id_token.to_string()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(groups_claim: Option<&str>) -> OidcSettings {
        OidcSettings {
            issuer: "https://id.example".into(),
            client_id: "trove".into(),
            client_secret: Some("s3cret".into()),
            redirect_url: "https://trove.example/api/session/oidc/callback".into(),
            scopes: vec!["profile".into()],
            groups_claim: groups_claim.map(str::to_owned),
            display_name: "Example ID".into(),
        }
    }

    fn token(claims: &serde_json::Value) -> String {
        let b64 = |v: &[u8]| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v);
        format!("{}.{}.sig", b64(br#"{"alg":"RS256"}"#), b64(claims.to_string().as_bytes()))
    }

    #[test]
    fn the_groups_claim_is_read_as_a_list_or_one_group() {
        let oidc = OpenIdConnect::new(settings(Some("roles"))).unwrap();
        let listed = token(&serde_json::json!({"roles": ["a", "b", 3], "groups": ["x"]}));
        assert_eq!(oidc.groups(&listed), ["a", "b"]);
        assert_eq!(oidc.groups(&token(&serde_json::json!({"roles": "admins"}))), ["admins"]);
        assert!(oidc.groups(&token(&serde_json::json!({"groups": ["x"]}))).is_empty());
        assert!(oidc.groups("not a token").is_empty());
        let unset = OpenIdConnect::new(settings(None)).unwrap();
        assert!(unset.groups(&listed).is_empty());
    }

    #[test]
    fn a_bad_issuer_is_refused_and_the_secret_is_never_printed() {
        let err = OpenIdConnect::new(OidcSettings { issuer: "not a url".into(), ..settings(None) }).unwrap_err();
        assert!(err.contains("TROVE_OIDC_ISSUER"), "{err}");
        let printed = format!("{:?}", settings(None));
        assert!(!printed.contains("s3cret") && printed.contains("(set)"), "{printed}");
    }
}
