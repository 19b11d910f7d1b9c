//! The people of a household: who I am, members and roles, invitations and accepting them, signing in and out
//! (the session cookie), ending a member's sessions, and personal API tokens.

use crate::auth::{Person, SSO_STATE_COOKIE, cookie_named, session_clear_cookie, session_set_cookie, sso_state_cookie};
use crate::error::{ApiError, ApiResult};
use crate::services::Services;
use crate::shared::{Created, mirror_enum};
use chrono::{DateTime, Utc};
use poem_openapi::param::{Path, Query};
use poem_openapi::payload::Json;
use poem_openapi::{ApiResponse, Object, OpenApi, Tags};
use trove_application::auth::SignedIn;
use trove_application::passkeys::Begun;
use trove_application::ports::passkeys::Passkey;
use trove_application::ports::people::{ApiToken, Invitation, Member as MemberRecord};
use trove_domain::ids::PasskeyId;
use trove_domain::people::{self as dp, InvitationId, MemberId, TokenId};

#[derive(Tags)]
enum Tag {
    /// The people of a household: sign-in, members, invitations and API tokens.
    People,
}

mirror_enum!(
    /// What a member may do: `owner` (everything, and the household's people), `member` (everything on the
    /// inventory; their own tokens), `viewer` (reads only).
    Role <=> dp::Role { Owner, Member, Viewer }
);
mirror_enum!(
    /// What a token may do: `read` only, or `write` (whatever its member's role allows).
    Scope <=> dp::Scope { Read, Write }
);

/// A member of the household.
#[derive(Debug, Clone, PartialEq, Object)]
#[oai(rename = "Member")]
pub struct MemberDto {
    pub id: i64,
    pub name: String,
    pub role: Role,
    pub created_at: DateTime<Utc>,
}

impl From<&MemberRecord> for MemberDto {
    fn from(m: &MemberRecord) -> Self {
        Self { id: m.id.0, name: m.name.to_string(), role: m.role.into(), created_at: m.created_at }
    }
}

/// A household.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct HouseholdDto {
    pub id: i64,
    pub name: String,
}

/// Who I am.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct Me {
    pub member: MemberDto,
    pub household: HouseholdDto,
}

/// The members of the household, oldest first.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct MemberList {
    pub members: Vec<MemberDto>,
}

/// A member's new role.
#[derive(Debug, Clone, PartialEq, Object)]
#[oai(deny_unknown_fields)]
pub struct PatchMember {
    pub role: Role,
}

/// An invitation to make.
#[derive(Debug, Clone, PartialEq, Object)]
#[oai(deny_unknown_fields)]
pub struct NewInvitation {
    /// The role the invited person gets.
    pub role: Role,
}

/// A one-time invitation, valid 7 days.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct InvitationDto {
    /// The link to open: `TROVE_PUBLIC_URL/#/join/CODE`.
    pub url: String,
    pub code: String,
    pub role: Role,
    pub expires_at: DateTime<Utc>,
}

/// A member as another object names them.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct MemberRef {
    pub id: i64,
    pub name: String,
}

/// An open invitation, as owners see it (never its code).
#[derive(Debug, Clone, PartialEq, Object)]
#[oai(rename = "OpenInvitation")]
pub struct OpenInvitationDto {
    pub id: i64,
    /// The role the invited person gets.
    pub role: Role,
    /// The member who made it; null when it was made from the command line (`trove invite`).
    pub created_by: Option<MemberRef>,
    pub created_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
}

impl From<&Invitation> for OpenInvitationDto {
    fn from(i: &Invitation) -> Self {
        Self {
            id: i.id.0,
            role: i.role.into(),
            created_by: i.maker.as_ref().map(|m| MemberRef { id: m.id.0, name: m.name.to_string() }),
            created_at: i.created_at,
            expires_at: dp::invitation_expiry(i.created_at),
        }
    }
}

/// What an invitation offers whoever holds its code, before they join.
#[derive(Debug, Clone, PartialEq, Object)]
#[oai(rename = "InvitationOffer")]
pub struct InvitationOfferDto {
    /// The household's name.
    pub household: String,
    /// The role the person who joins gets.
    pub role: Role,
    pub expires_at: DateTime<Utc>,
}

/// The invitations that may still be accepted, oldest first.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct InvitationList {
    pub invitations: Vec<OpenInvitationDto>,
}

/// Accepting an invitation with a password.
#[derive(Debug, Clone, PartialEq, Object)]
#[oai(deny_unknown_fields)]
pub struct AcceptInvitation {
    pub code: String,
    /// What the new member signs in with: unique across the instance, ignoring case.
    pub name: String,
    /// At least 12 characters.
    pub password: String,
}

/// Signing in with a password.
#[derive(Debug, Clone, PartialEq, Object)]
#[oai(deny_unknown_fields)]
pub struct SignIn {
    pub name: String,
    pub password: String,
}

/// The member now signed in (the session is the cookie).
#[derive(Debug, Clone, PartialEq, Object)]
pub struct SignedInDto {
    pub member: MemberDto,
}

/// How many sessions ended.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct Ended {
    pub ended: u64,
}

/// A personal API token to make.
#[derive(Debug, Clone, PartialEq, Object)]
#[oai(deny_unknown_fields)]
pub struct NewTokenDto {
    /// What it is for ("backup script"): 1 to 100 characters.
    pub name: String,
    pub scope: Scope,
    /// 1 to 3650; without it the token does not expire.
    pub expires_in_days: Option<i64>,
}

/// A personal API token, as listed (never the token itself).
#[derive(Debug, Clone, PartialEq, Object)]
#[oai(rename = "ApiToken")]
pub struct TokenDto {
    pub id: i64,
    pub member_id: i64,
    pub name: String,
    pub scope: Scope,
    pub created_at: DateTime<Utc>,
    pub expires_at: Option<DateTime<Utc>>,
    pub last_used_at: Option<DateTime<Utc>>,
}

impl From<&ApiToken> for TokenDto {
    fn from(t: &ApiToken) -> Self {
        Self {
            id: t.id.0,
            member_id: t.member.0,
            name: t.name.clone(),
            scope: t.scope.into(),
            created_at: t.created_at,
            expires_at: t.expires_at,
            last_used_at: t.last_used_at,
        }
    }
}

/// A new token: shown this once, never again.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct NewTokenAnswer {
    /// Send it as `Authorization: Bearer TOKEN`.
    pub token: String,
    #[oai(flatten)]
    pub details: TokenDto,
}

/// The tokens: one's own, or every member's for an owner.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct TokenList {
    pub tokens: Vec<TokenDto>,
}

/// Starting to sign up from an invitation with a passkey.
#[derive(Debug, Clone, PartialEq, Object)]
#[oai(deny_unknown_fields)]
pub struct PasskeySignUp {
    pub code: String,
    /// What the new member signs in with: unique across the instance, ignoring case.
    pub name: String,
}

/// Starting to sign in with a passkey: the member's name.
#[derive(Debug, Clone, PartialEq, Object)]
#[oai(deny_unknown_fields)]
pub struct PasskeySignIn {
    pub name: String,
}

/// Starting to add a passkey to oneself.
#[derive(Debug, Clone, PartialEq, Object)]
#[oai(deny_unknown_fields)]
pub struct NewPasskeyDto {
    /// What it is ("phone", "laptop"): 1 to 100 characters.
    pub name: String,
}

/// A passkey ceremony begun: pass `options` (binary values in base64url) to `navigator.credentials.create()`
/// or `.get()`, then send the credential with `ceremony` to the route's `finish`. Valid 10 minutes, once.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct CeremonyDto {
    pub ceremony: String,
    /// `{"publicKey": PublicKeyCredentialCreationOptions | PublicKeyCredentialRequestOptions}` as WebAuthn
    /// defines them.
    pub options: serde_json::Value,
}

/// Finishing a passkey ceremony.
#[derive(Debug, Clone, PartialEq, Object)]
#[oai(deny_unknown_fields)]
pub struct PasskeyFinish {
    /// The id its start answered.
    pub ceremony: String,
    /// The browser's `PublicKeyCredential`, with its binary values in base64url (`id`, `rawId`, `type`,
    /// `response`, and optionally `clientExtensionResults`).
    pub credential: serde_json::Value,
}

/// A passkey, as listed (never the key itself).
#[derive(Debug, Clone, PartialEq, Object)]
#[oai(rename = "Passkey")]
pub struct PasskeyDto {
    pub id: i64,
    pub name: String,
    pub created_at: DateTime<Utc>,
    pub last_used_at: Option<DateTime<Utc>>,
}

impl From<&Passkey> for PasskeyDto {
    fn from(p: &Passkey) -> Self {
        Self { id: p.id.0, name: p.name.clone(), created_at: p.created_at, last_used_at: p.last_used_at }
    }
}

/// My passkeys, oldest first.
#[derive(Debug, Clone, PartialEq, Object)]
pub struct PasskeyList {
    pub passkeys: Vec<PasskeyDto>,
}

fn begun(b: Begun) -> ApiResult<Json<CeremonyDto>> {
    let options =
        serde_json::from_str(&b.options).map_err(|e| ApiError::unexpected(format!("passkey options: {e}")))?;
    Ok(Json(CeremonyDto { ceremony: b.ceremony, options }))
}

/// A sign-in: the member, and the session cookie.
#[derive(ApiResponse)]
pub enum SignedInAnswer {
    /// Signed in.
    #[oai(status = 200)]
    Ok(Json<SignedInDto>, #[oai(header = "Set-Cookie")] String),
    /// Signed up and in.
    #[oai(status = 201)]
    Created(Json<SignedInDto>, #[oai(header = "Set-Cookie")] String),
}

/// Done, nothing to answer.
#[derive(ApiResponse)]
pub enum Done {
    #[oai(status = 204)]
    Done,
}

/// Signed out: the cookie is removed.
#[derive(ApiResponse)]
pub enum SignedOut {
    #[oai(status = 204)]
    Done(#[oai(header = "Set-Cookie")] String),
}

/// The people routes.
/// How one signs in on this server (asked before signing in).
#[derive(Debug, Object)]
pub struct SignInOptions {
    /// Whether a name and a password sign in and accept invitations (off with `TROVE_OIDC_ONLY`).
    pub passwords: bool,
    /// The OpenID provider's name ("Sign in with NAME", `GET /api/session/oidc/start`), when single sign-on
    /// is configured.
    pub sso: Option<String>,
}

/// The browser sent on, with a cookie.
#[derive(ApiResponse)]
pub enum SsoRedirect {
    /// To the OpenID provider (the cookie keeps the sign-in's state), or back to the page signed in (the cookie
    /// is the session).
    #[oai(status = 303)]
    SeeOther(#[oai(header = "Location")] String, #[oai(header = "Set-Cookie")] String),
}

pub struct PeopleApi(pub Services);

impl PeopleApi {
    fn sso(&self) -> Result<&trove_application::sso::SingleSignOn, ApiError> {
        self.0.sso.as_ref().ok_or_else(|| {
            ApiError::new(
                poem::http::StatusCode::NOT_FOUND,
                "not_found",
                "single sign-on is not configured on this server (TROVE_OIDC_ISSUER)",
            )
        })
    }

    fn signed_in(&self, s: &SignedIn) -> (Json<SignedInDto>, String) {
        (Json(SignedInDto { member: (&s.member).into() }), session_set_cookie(&self.0.site, &s.secret))
    }

    /// The client a sign-in comes from, for the throttle (see [`crate::site::Site::client`]).
    fn client(&self, request: &poem::Request) -> trove_domain::throttle::ClientAddress {
        let peer = request.remote_addr().as_socket_addr().map(std::net::SocketAddr::ip);
        let forwarded = request.headers().get("x-forwarded-for").and_then(|v| v.to_str().ok());
        self.0.site.client(peer, forwarded)
    }
}

#[OpenApi(tag = "Tag::People")]
impl PeopleApi {
    /// Who I am, and my household.
    #[oai(path = "/me", method = "get")]
    async fn me(&self, Person(c): Person) -> ApiResult<Json<Me>> {
        let (member, household) = self.0.people.me(&c).await.map_err(ApiError::from)?;
        Ok(Json(Me { member: (&member).into(), household: HouseholdDto { id: household.id.0, name: household.name } }))
    }

    /// The members of the household.
    #[oai(path = "/members", method = "get")]
    async fn members(&self, Person(c): Person) -> ApiResult<Json<MemberList>> {
        let members = self.0.people.members(&c).await.map_err(ApiError::from)?;
        Ok(Json(MemberList { members: members.iter().map(Into::into).collect() }))
    }

    /// Give a member another role (owners; 409 for the last owner).
    #[oai(path = "/members/:id", method = "patch")]
    async fn patch_member(
        &self,
        Person(c): Person,
        id: Path<i64>,
        body: Json<PatchMember>,
    ) -> ApiResult<Json<MemberDto>> {
        let member = self.0.people.set_role(&c, MemberId(id.0), body.0.role.into()).await.map_err(ApiError::from)?;
        Ok(Json((&member).into()))
    }

    /// Remove a member with their sessions and tokens (owners; 409 for the last owner).
    #[oai(path = "/members/:id", method = "delete")]
    async fn remove_member(&self, Person(c): Person, id: Path<i64>) -> ApiResult<Done> {
        self.0.people.remove(&c, MemberId(id.0)).await.map_err(ApiError::from)?;
        Ok(Done::Done)
    }

    /// End every session of a member (owners; anyone for themselves).
    #[oai(path = "/members/:id/sessions", method = "delete")]
    async fn end_sessions(&self, Person(c): Person, id: Path<i64>) -> ApiResult<Json<Ended>> {
        let ended = self.0.people.end_sessions(&c, MemberId(id.0)).await.map_err(ApiError::from)?;
        Ok(Json(Ended { ended }))
    }

    /// Invite a person (owners): a one-time link valid 7 days.
    #[oai(path = "/invitations", method = "post")]
    async fn invite(&self, Person(c): Person, body: Json<NewInvitation>) -> ApiResult<Created<InvitationDto>> {
        let invited = self.0.people.invite(&c, body.0.role.into()).await.map_err(ApiError::from)?;
        Ok(Created::Created(Json(InvitationDto {
            url: self.0.site.join_link(&invited.code),
            code: invited.code,
            role: invited.role.into(),
            expires_at: invited.expires_at,
        })))
    }

    /// The open invitations (owners): those that may still be accepted, oldest first, with who made each; never
    /// their codes.
    #[oai(path = "/invitations", method = "get")]
    async fn invitations(&self, Person(c): Person) -> ApiResult<Json<InvitationList>> {
        let open = self.0.people.invitations(&c).await.map_err(ApiError::from)?;
        Ok(Json(InvitationList { invitations: open.iter().map(Into::into).collect() }))
    }

    /// Revoke an invitation (owners): accepting it is 410 from now on. 410 when it was used already; revoking one
    /// revoked already is 204 again.
    #[oai(path = "/invitations/:id", method = "delete")]
    async fn revoke_invitation(&self, Person(c): Person, id: Path<i64>) -> ApiResult<Done> {
        self.0.people.revoke_invitation(&c, InvitationId(id.0)).await.map_err(ApiError::from)?;
        Ok(Done::Done)
    }

    /// What an invitation offers, before joining (no sign-in: the code is the secret): the household, the role and
    /// until when; 410 for a code that was used, revoked or has expired, or whose maker may no longer grant its
    /// role, 404 for an unknown code, as accepting it would answer.
    #[oai(path = "/invitations/offer/:code", method = "get")]
    async fn invitation_offer(&self, code: Path<String>) -> ApiResult<Json<InvitationOfferDto>> {
        let offer = self.0.people.invitation_offer(&code.0).await.map_err(ApiError::from)?;
        Ok(Json(InvitationOfferDto {
            household: offer.household,
            role: offer.role.into(),
            expires_at: offer.expires_at,
        }))
    }

    /// Accept an invitation with a name and a password: 201 with the session cookie; 410 for a code that was
    /// used, revoked or has expired, or whose maker was removed or no longer holds the role it grants.
    #[oai(path = "/invitations/accept", method = "post")]
    async fn accept(&self, body: Json<AcceptInvitation>) -> ApiResult<SignedInAnswer> {
        let b = body.0;
        let signed = self.0.people.accept(&b.code, &b.name, &b.password).await.map_err(ApiError::from)?;
        let (json, cookie) = self.signed_in(&signed);
        Ok(SignedInAnswer::Created(json, cookie))
    }

    /// Sign in with a name and a password: the session cookie. A wrong name or password is the same 401; too
    /// many failures for a name from this address, or under many names from this address, are 429 with
    /// `Retry-After`; while too many passwords are being checked at once, 503 with `Retry-After`.
    #[oai(path = "/session", method = "post")]
    async fn sign_in(&self, request: &poem::Request, body: Json<SignIn>) -> ApiResult<SignedInAnswer> {
        let from = self.client(request);
        let signed = self.0.auth.sign_in(&body.0.name, &body.0.password, &from).await.map_err(ApiError::from)?;
        let (json, cookie) = self.signed_in(&signed);
        Ok(SignedInAnswer::Ok(json, cookie))
    }

    /// How one signs in here: whether passwords are on, and the single sign-on provider, if any. Needs no
    /// sign-in.
    #[oai(path = "/session/options", method = "get")]
    async fn sign_in_options(&self) -> Json<SignInOptions> {
        Json(SignInOptions {
            passwords: self.0.auth.passwords_on(),
            sso: self.0.sso.as_ref().map(trove_application::sso::SingleSignOn::provider_name),
        })
    }

    /// Begin single sign-on: 303 to the OpenID provider (authorization code flow with PKCE, `state` and
    /// `nonce`), with a cookie keeping the sign-in's state for ten minutes. With `invitation` (a code), the
    /// account's first sign-in joins from that invitation. 404 when single sign-on is not configured or the
    /// invitation is unknown, 410 for a used or expired invitation, 503 when the provider cannot be reached.
    #[oai(path = "/session/oidc/start", method = "get")]
    async fn sso_start(&self, invitation: Query<Option<String>>) -> ApiResult<SsoRedirect> {
        let sso = self.sso()?;
        let go = sso.start(invitation.0.as_deref()).await.map_err(ApiError::from)?;
        let max_age = trove_application::sso::SIGN_IN_VALID_FOR.num_seconds();
        Ok(SsoRedirect::SeeOther(go.url, sso_state_cookie(&self.0.site, &go.state, max_age)))
    }

    /// Finish single sign-on: the provider sends the browser here with `code` and `state`; 303 to the page with
    /// the session cookie. 400 without `code` or `state`, or when the state is not the one this browser began
    /// with (a forged or crossed link); 401 when the provider refused (`error`) or refused the code, or its ID
    /// token failed a check (signature, issuer, audience, expiry, nonce); 410 for a sign-in unknown, expired
    /// or already finished; 403 for an account no mapped group and no invitation brings in. A browser's navigation (`Accept: text/html`) is
    /// sent back to the sign-in page with the reason instead (303 to `/#/sign-in/refused?why=...`).
    #[oai(path = "/session/oidc/callback", method = "get")]
    async fn sso_callback(
        &self,
        request: &poem::Request,
        code: Query<Option<String>>,
        state: Query<Option<String>>,
        error: Query<Option<String>>,
        error_description: Query<Option<String>>,
    ) -> ApiResult<SsoRedirect> {
        let sso = self.sso()?;
        let kept = cookie_named(request, SSO_STATE_COOKIE);
        let answer = async {
            if let Some(error) = error.0 {
                let why = error_description.0.map_or(error.clone(), |d| format!("{error} ({d})"));
                return Err(ApiError::from(trove_application::Error::SsoFailed(format!(
                    "the provider answered {why}"
                ))));
            }
            let (Some(code), Some(state)) = (code.0, state.0) else {
                return Err(ApiError::bad_request("the provider's answer has no `code` and `state`"));
            };
            sso.finish(&state, &code, kept.as_deref()).await.map_err(ApiError::from)
        };
        match answer.await {
            Ok(signed) => Ok(SsoRedirect::SeeOther("/".to_owned(), session_set_cookie(&self.0.site, &signed.secret))),
            // A person's browser, sent here by the provider: back to the sign-in page, which says why.
            Err(refused) if navigation(request) => {
                let why = percent_encoded(&refused.message);
                // The browser's state stays as it was: a forged link followed does not cancel a sign-in on its way.
                let max_age = if kept.is_some() { trove_application::sso::SIGN_IN_VALID_FOR.num_seconds() } else { 0 };
                let cookie = sso_state_cookie(&self.0.site, kept.as_deref().unwrap_or_default(), max_age);
                Ok(SsoRedirect::SeeOther(format!("/#/sign-in/refused?why={why}"), cookie))
            }
            Err(refused) => Err(refused.into()),
        }
    }

    /// Sign out: the session ends and the cookie is removed.
    #[oai(path = "/session/logout", method = "post")]
    async fn sign_out(&self, Person(c): Person) -> ApiResult<SignedOut> {
        self.0.auth.sign_out(&c).await.map_err(ApiError::from)?;
        Ok(SignedOut::Done(session_clear_cookie(&self.0.site)))
    }

    /// Make a personal API token: shown once.
    #[oai(path = "/tokens", method = "post")]
    async fn create_token(&self, Person(c): Person, body: Json<NewTokenDto>) -> ApiResult<Created<NewTokenAnswer>> {
        let b = body.0;
        let made =
            self.0.people.create_token(&c, &b.name, b.scope.into(), b.expires_in_days).await.map_err(ApiError::from)?;
        Ok(Created::Created(Json(NewTokenAnswer { token: made.secret, details: (&made.token).into() })))
    }

    /// My tokens (an owner sees every member's).
    #[oai(path = "/tokens", method = "get")]
    async fn tokens(&self, Person(c): Person) -> ApiResult<Json<TokenList>> {
        let tokens = self.0.people.tokens(&c).await.map_err(ApiError::from)?;
        Ok(Json(TokenList { tokens: tokens.iter().map(Into::into).collect() }))
    }

    /// Revoke a token at once (one's own; an owner any of the household's).
    #[oai(path = "/tokens/:id", method = "delete")]
    async fn revoke_token(&self, Person(c): Person, id: Path<i64>) -> ApiResult<Done> {
        self.0.people.revoke_token(&c, TokenId(id.0)).await.map_err(ApiError::from)?;
        Ok(Done::Done)
    }

    /// Start signing up from an invitation with a passkey: the options for `navigator.credentials.create()`.
    /// 404 for an unknown code, 410 for a used or expired one, 409 for a taken name, 503 when passkeys cannot
    /// work with `TROVE_PUBLIC_URL` (an IP address as its host).
    #[oai(path = "/invitations/accept/passkey/start", method = "post")]
    async fn passkey_sign_up_start(&self, body: Json<PasskeySignUp>) -> ApiResult<Json<CeremonyDto>> {
        begun(self.0.passkeys.start_sign_up(&body.0.code, &body.0.name).await.map_err(ApiError::from)?)
    }

    /// Finish signing up with a passkey: 201 with the session cookie. 410 for an unknown, expired or finished
    /// ceremony (or an invitation used meanwhile), 400 for a credential that is not WebAuthn's JSON, 422 when it
    /// fails WebAuthn's checks.
    #[oai(path = "/invitations/accept/passkey/finish", method = "post")]
    async fn passkey_sign_up_finish(&self, body: Json<PasskeyFinish>) -> ApiResult<SignedInAnswer> {
        let b = body.0;
        let signed =
            self.0.passkeys.finish_sign_up(&b.ceremony, &b.credential.to_string()).await.map_err(ApiError::from)?;
        // The join is in the household's history, as with a password: written by the store with the member.
        let (json, cookie) = self.signed_in(&signed);
        Ok(SignedInAnswer::Created(json, cookie))
    }

    /// Start signing in with a passkey as a name: the options for `navigator.credentials.get()` (alike for a
    /// name no one has). 429 with `Retry-After` after too many failed sign-ins for the name.
    #[oai(path = "/session/passkey/start", method = "post")]
    async fn passkey_sign_in_start(
        &self,
        request: &poem::Request,
        body: Json<PasskeySignIn>,
    ) -> ApiResult<Json<CeremonyDto>> {
        let from = self.client(request);
        begun(self.0.passkeys.start_sign_in(&body.0.name, &from).await.map_err(ApiError::from)?)
    }

    /// Finish signing in with a passkey: the session cookie. 401 when the passkey is not accepted (counted
    /// toward the name's throttle), 410 for an unknown, expired or finished ceremony, 429 when throttled.
    #[oai(path = "/session/passkey/finish", method = "post")]
    async fn passkey_sign_in_finish(
        &self,
        request: &poem::Request,
        body: Json<PasskeyFinish>,
    ) -> ApiResult<SignedInAnswer> {
        let b = body.0;
        let from = self.client(request);
        let signed = self
            .0
            .passkeys
            .finish_sign_in(&b.ceremony, &b.credential.to_string(), &from)
            .await
            .map_err(ApiError::from)?;
        let (json, cookie) = self.signed_in(&signed);
        Ok(SignedInAnswer::Ok(json, cookie))
    }

    /// My passkeys.
    #[oai(path = "/passkeys", method = "get")]
    async fn passkeys(&self, Person(c): Person) -> ApiResult<Json<PasskeyList>> {
        let passkeys = self.0.passkeys.list(&c).await.map_err(ApiError::from)?;
        Ok(Json(PasskeyList { passkeys: passkeys.iter().map(Into::into).collect() }))
    }

    /// Start adding a passkey to myself: the options for `navigator.credentials.create()`.
    #[oai(path = "/passkeys/start", method = "post")]
    async fn passkey_add_start(&self, Person(c): Person, body: Json<NewPasskeyDto>) -> ApiResult<Json<CeremonyDto>> {
        begun(self.0.passkeys.start_add(&c, &body.0.name).await.map_err(ApiError::from)?)
    }

    /// Finish adding a passkey: 201 with it. 410 for an unknown, expired or finished ceremony (or another
    /// member's), 422 when the credential fails WebAuthn's checks or is registered already.
    #[oai(path = "/passkeys/finish", method = "post")]
    async fn passkey_add_finish(&self, Person(c): Person, body: Json<PasskeyFinish>) -> ApiResult<Created<PasskeyDto>> {
        let b = body.0;
        let passkey =
            self.0.passkeys.finish_add(&c, &b.ceremony, &b.credential.to_string()).await.map_err(ApiError::from)?;
        Ok(Created::Created(Json((&passkey).into())))
    }

    /// Remove one of my passkeys. 409 when it is my last passkey and I have no password.
    #[oai(path = "/passkeys/:id", method = "delete")]
    async fn remove_passkey(&self, Person(c): Person, id: Path<i64>) -> ApiResult<Done> {
        self.0.passkeys.remove(&c, PasskeyId(id.0)).await.map_err(ApiError::from)?;
        Ok(Done::Done)
    }
}

/// Whether `request` is a browser's navigation (it asks for a page), not an API client.
fn navigation(request: &poem::Request) -> bool {
    request
        .headers()
        .get(poem::http::header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|accept| accept.contains("text/html"))
}

/// `text` with everything but unreserved characters percent-encoded, for a URL's query.
fn percent_encoded(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => char::from(b).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}
