use super::*;

fn site() -> WebauthnPasskeys {
    WebauthnPasskeys::new("http://localhost:8080/", &[9u8; 32]).unwrap()
}

fn user() -> UserHandle {
    UserHandle("0123456789abcdef0123456789abcdef".into())
}

#[test]
fn the_relying_party_is_the_public_urls_host_and_origin() {
    let (id, origin) = relying_party("https://trove.home.example/inventory").unwrap();
    assert_eq!((id.as_str(), origin.as_str()), ("trove.home.example", "https://trove.home.example/"));
    let (id, origin) = relying_party("http://localhost:8080").unwrap();
    assert_eq!((id.as_str(), origin.as_str()), ("localhost", "http://localhost:8080/"));
    let why = relying_party("http://127.0.0.1:8080").unwrap_err();
    assert!(why.contains("not an IP address"), "{why}");
}

#[test]
fn an_ip_address_makes_every_ceremony_unavailable() {
    let ip = WebauthnPasskeys::new("http://127.0.0.1:8080", &[7u8; 32]).unwrap();
    assert!(matches!(ip.start_registration(&user(), "ada", &[]), Err(PasskeyError::Unavailable(_))));
    assert!(matches!(ip.start_authentication("ada", &[]), Err(PasskeyError::Unavailable(_))));
}

#[test]
fn registration_options_name_the_relying_party_the_user_and_what_to_exclude() {
    let excluded = CredentialId(URL_SAFE_NO_PAD.encode([7u8; 16]));
    let started = site().start_registration(&user(), "ada", std::slice::from_ref(&excluded)).unwrap();
    let options: Value = serde_json::from_str(&started.options).unwrap();
    let pk = &options["publicKey"];
    assert_eq!(pk["rp"]["id"], "localhost");
    assert_eq!(pk["user"]["name"], "ada");
    assert_eq!(
        URL_SAFE_NO_PAD.decode(pk["user"]["id"].as_str().unwrap()).unwrap(),
        [0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef]
    );
    assert_eq!(pk["excludeCredentials"][0]["id"], excluded.0.as_str());
    assert_eq!(pk["authenticatorSelection"]["userVerification"], "required");
    assert!(pk["challenge"].as_str().is_some_and(|c| c.len() >= 43), "{pk}");
}

#[test]
fn a_credential_that_is_not_json_is_malformed_and_a_forged_one_rejected() {
    let site = site();
    let started = site.start_registration(&user(), "ada", &[]).unwrap();
    assert!(matches!(site.finish_registration(&started.state, "not json"), Err(PasskeyError::Malformed(_))));
    assert!(matches!(site.finish_registration(&started.state, r#"{"id": 1}"#), Err(PasskeyError::Malformed(_))));
    let client_data = serde_json::json!({
        "type": "webauthn.create", "challenge": "AAAA", "origin": "http://localhost:8080"
    });
    let forged = serde_json::json!({
        "id": "AAAA", "rawId": "AAAA", "type": "public-key",
        "response": {
            "attestationObject": URL_SAFE_NO_PAD.encode(b"not cbor"),
            "clientDataJSON": URL_SAFE_NO_PAD.encode(client_data.to_string()),
        }
    });
    let got = site.finish_registration(&started.state, &forged.to_string());
    assert!(matches!(got, Err(PasskeyError::Rejected(_))), "{got:?}");
}

#[test]
fn a_name_without_passkeys_gets_the_same_made_up_credentials_each_time() {
    let site = site();
    let allowed = |name: &str| {
        let started = site.start_authentication(name, &[]).unwrap();
        let options: Value = serde_json::from_str(&started.options).unwrap();
        assert!(options.get("mediation").is_none(), "{options}");
        assert_eq!(options["publicKey"]["rpId"], "localhost");
        options["publicKey"]["allowCredentials"].clone()
    };
    let names = ["ada", "grace", "linus", "barbara", "ken", "dennis"];
    for name in names {
        assert_eq!(allowed(name), allowed(name), "{name}");
    }
    assert!(names.iter().any(|n| allowed(n).as_array().is_some_and(|a| !a.is_empty())));
}

#[test]
fn the_credential_id_of_a_sign_in_is_its_raw_id() {
    let text = serde_json::json!({
        "id": "AQID", "rawId": "AQID", "type": "public-key",
        "response": {"authenticatorData": "AA", "clientDataJSON": "AA", "signature": "AA", "userHandle": null}
    });
    assert_eq!(site().credential_of(&text.to_string()).unwrap(), CredentialId("AQID".into()));
    assert!(matches!(site().credential_of("[]"), Err(PasskeyError::Malformed(_))));
}
