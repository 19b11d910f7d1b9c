//! Passkeys over the `webauthn-rs` crate: the [`PasskeyCeremonies`] port. The relying party is the site at
//! `TROVE_PUBLIC_URL`: its host is the relying party id and its origin the only origin accepted. The only crate
//! that knows WebAuthn's types; what it hands the use cases is JSON text (the browser's options) and opaque
//! serialised text (the ceremonies' state and the passkeys), which only this crate reads back.
//!
//! The ceremonies' state is serialised (`danger-allow-state-serialisation`) to be kept in the database, on the
//! server: never in a cookie or anything else the browser holds, which would let a client replay a ceremony.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::Value;
use trove_application::ports::passkeys::{
    CeremonyState, CredentialId, PasskeyCeremonies, PasskeyError, PasskeyKey, Started, UserHandle,
};
use webauthn_rs::fake::{FakePasskeyDistribution, WebauthnFakeCredentialGenerator};
use webauthn_rs::prelude::{
    DiscoverableAuthentication, Passkey, PasskeyAuthentication, PasskeyRegistration, PublicKeyCredential,
    RegisterPublicKeyCredential, Url, Uuid, WebauthnError,
};
use webauthn_rs::{Webauthn, WebauthnBuilder};

/// The relying party of `TROVE_PUBLIC_URL`, or why passkeys cannot work with it.
pub struct WebauthnPasskeys {
    /// `Err` with the reason when the public URL cannot be a relying party (an IP address as its host).
    webauthn: Result<Webauthn, String>,
    /// Made-up credential ids for names without passkeys, from a key drawn at start (see
    /// [`PasskeyCeremonies::start_authentication`]).
    fakes: WebauthnFakeCredentialGenerator<FakePasskeyDistribution>,
}

impl std::fmt::Debug for WebauthnPasskeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebauthnPasskeys").field("available", &self.webauthn.is_ok()).finish_non_exhaustive()
    }
}

/// The relying party id of a public URL: its host, when it is a domain name (browsers refuse an IP address).
///
/// # Errors
/// The reason, for a URL that cannot be read or whose host is an IP address.
pub fn relying_party(public_url: &str) -> Result<(String, Url), String> {
    let url = Url::parse(public_url).map_err(|e| format!("TROVE_PUBLIC_URL {public_url:?} is not a URL: {e}"))?;
    let Some(domain) = url.domain() else {
        return Err(format!(
            "passkeys need TROVE_PUBLIC_URL with a host name, not an IP address ({public_url}): browsers refuse \
             an IP address as the relying party; http://localhost:PORT works on this computer"
        ));
    };
    let origin = Url::parse(&url.origin().ascii_serialization()).map_err(|e| format!("the origin of {url}: {e}"))?;
    Ok((domain.to_owned(), origin))
}

impl WebauthnPasskeys {
    /// The relying party of `public_url`; `fake_key` (random bytes, kept secret) seeds the made-up credential
    /// ids of names without passkeys. Passkeys are unavailable (every ceremony answers why) when the URL's
    /// host is an IP address.
    ///
    /// # Errors
    /// When `fake_key` is refused by the HMAC.
    pub fn new(public_url: &str, fake_key: &[u8]) -> anyhow::Result<Self> {
        let webauthn = relying_party(public_url).and_then(|(rp_id, origin)| {
            WebauthnBuilder::new(&rp_id, &origin)
                .and_then(|b| b.rp_name("Trove").build())
                .map_err(|e| format!("passkeys cannot use {public_url}: {e}"))
        });
        let fakes = WebauthnFakeCredentialGenerator::new(fake_key)
            .map_err(|e| anyhow::anyhow!("the made-up credentials' key: {e}"))?;
        Ok(Self { webauthn, fakes })
    }

    fn webauthn(&self) -> Result<&Webauthn, PasskeyError> {
        self.webauthn.as_ref().map_err(|why| PasskeyError::Unavailable(why.clone()))
    }
}

fn credential_id(bytes: &[u8]) -> CredentialId {
    CredentialId(URL_SAFE_NO_PAD.encode(bytes))
}

fn unexpected(what: &str, e: impl std::fmt::Display) -> PasskeyError {
    PasskeyError::Unexpected(anyhow::anyhow!("{what}: {e}"))
}

fn to_text(what: &str, value: &impl serde::Serialize) -> Result<String, PasskeyError> {
    serde_json::to_string(value).map_err(|e| unexpected(what, e))
}

fn from_text<T: serde::de::DeserializeOwned>(what: &str, text: &str) -> Result<T, PasskeyError> {
    serde_json::from_str(text).map_err(|e| unexpected(what, e))
}

/// A credential from the browser: its JSON read, or `Malformed` saying what is wrong.
fn credential<T: serde::de::DeserializeOwned>(text: &str) -> Result<T, PasskeyError> {
    serde_json::from_str(text).map_err(|e| PasskeyError::Malformed(e.to_string()))
}

/// A check that failed: the credential was read but is not accepted.
fn rejected(e: &WebauthnError) -> PasskeyError {
    PasskeyError::Rejected(e.to_string())
}

impl PasskeyCeremonies for WebauthnPasskeys {
    fn start_registration(
        &self,
        user: &UserHandle,
        name: &str,
        exclude: &[CredentialId],
    ) -> Result<Started, PasskeyError> {
        let webauthn = self.webauthn()?;
        let id = Uuid::parse_str(&user.0).map_err(|e| unexpected("a user handle", e))?;
        let exclude = exclude
            .iter()
            .map(|c| URL_SAFE_NO_PAD.decode(&c.0))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| unexpected("a stored credential id", e))?;
        let exclude = (!exclude.is_empty()).then_some(exclude);
        let (options, state) =
            webauthn.start_passkey_registration(id, name, name, exclude).map_err(|e| unexpected("registration", e))?;
        Ok(Started {
            options: to_text("creation options", &options)?,
            state: CeremonyState(to_text("registration state", &state)?),
        })
    }

    fn finish_registration(&self, state: &CeremonyState, text: &str) -> Result<PasskeyKey, PasskeyError> {
        let webauthn = self.webauthn()?;
        let state: PasskeyRegistration = from_text("registration state", &state.0)?;
        let reg: RegisterPublicKeyCredential = credential(text)?;
        let passkey = webauthn.finish_passkey_registration(&reg, &state).map_err(|e| rejected(&e))?;
        Ok(PasskeyKey { credential: credential_id(passkey.cred_id()), serialised: to_text("a passkey", &passkey)? })
    }

    fn start_authentication(&self, name: &str, passkeys: &[PasskeyKey]) -> Result<Started, PasskeyError> {
        let webauthn = self.webauthn()?;
        if passkeys.is_empty() {
            // A discoverable ceremony with no credential of its own, given made-up credential ids: the options
            // look like a member's, and nothing can finish it.
            let (options, state) =
                webauthn.start_discoverable_authentication().map_err(|e| unexpected("a decoy sign-in", e))?;
            let fakes = self.fakes.generate(name.as_bytes()).map_err(|e| unexpected("made-up credentials", e))?;
            let mut options = serde_json::to_value(&options).map_err(|e| unexpected("request options", e))?;
            if let Some(map) = options.as_object_mut() {
                map.remove("mediation");
            }
            options["publicKey"]["allowCredentials"] = fakes
                .iter()
                .map(|id| serde_json::json!({"type": "public-key", "id": URL_SAFE_NO_PAD.encode(id.as_slice())}))
                .collect::<Value>();
            return Ok(Started {
                options: options.to_string(),
                state: CeremonyState(to_text("decoy state", &DecoyState(state))?),
            });
        }
        let passkeys = passkeys
            .iter()
            .map(|p| from_text::<Passkey>("a stored passkey", &p.serialised))
            .collect::<Result<Vec<_>, _>>()?;
        let (options, state) =
            webauthn.start_passkey_authentication(&passkeys).map_err(|e| unexpected("authentication", e))?;
        Ok(Started {
            options: to_text("request options", &options)?,
            state: CeremonyState(to_text("authentication state", &state)?),
        })
    }

    fn credential_of(&self, text: &str) -> Result<CredentialId, PasskeyError> {
        let c: PublicKeyCredential = credential(text)?;
        Ok(credential_id(c.get_credential_id()))
    }

    fn finish_authentication(
        &self,
        state: &CeremonyState,
        text: &str,
        passkey: &PasskeyKey,
    ) -> Result<PasskeyKey, PasskeyError> {
        let webauthn = self.webauthn()?;
        let c: PublicKeyCredential = credential(text)?;
        let state: PasskeyAuthentication = from_text("authentication state", &state.0)?;
        let mut key: Passkey = from_text("a stored passkey", &passkey.serialised)?;
        let result = webauthn.finish_passkey_authentication(&c, &state).map_err(|e| rejected(&e))?;
        if result.cred_id() != key.cred_id() {
            return Err(PasskeyError::Rejected("the credential is not the passkey it names".into()));
        }
        key.update_credential(&result);
        Ok(PasskeyKey { credential: passkey.credential.clone(), serialised: to_text("a passkey", &key)? })
    }
}

/// The state of a sign-in for a name without passkeys, kept like any other (it is never finished).
#[derive(serde::Serialize)]
struct DecoyState(DiscoverableAuthentication);

#[cfg(test)]
mod tests;
