//! Pushes to notification URLs, through an HTTP client that never reaches an address the rule refuses.

use crate::DELIVERY_TIMEOUT;
use hmac::{Hmac, Mac as _};
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use serde_json::json;
use sha2::Sha256;
use std::net::{IpAddr, SocketAddr, ToSocketAddrs as _};
use std::sync::Arc;
use trove_application::ports::{DeliveryFailed, Note};
use trove_domain::notify::{Push, reachable};

/// A resolver that answers only the addresses a push may reach; a name with none is refused.
#[derive(Debug, Clone, Copy)]
pub struct Guarded {
    pub allow_private: bool,
}

impl Resolve for Guarded {
    fn resolve(&self, name: Name) -> Resolving {
        let allow_private = self.allow_private;
        Box::pin(async move {
            let host = name.as_str().to_owned();
            let all: Vec<SocketAddr> = tokio::task::spawn_blocking(move || (host.as_str(), 0).to_socket_addrs())
                .await
                .map_err(|e| Box::new(e) as Box<dyn std::error::Error + Send + Sync>)??
                .collect();
            let allowed: Vec<SocketAddr> = all.iter().copied().filter(|a| reachable(a.ip(), allow_private)).collect();
            if allowed.is_empty() {
                let why = if all.is_empty() {
                    format!("{} has no address", name.as_str())
                } else {
                    format!(
                        "{} resolves to a private, loopback or link-local address, which reminders may not reach \
                         (a home network sets TROVE_WEBHOOK_ALLOW_PRIVATE=1)",
                        name.as_str()
                    )
                };
                return Err(why.into());
            }
            Ok(Box::new(allowed.into_iter()) as Addrs)
        })
    }
}

/// The client pushes go through: the guarded resolver, no proxy (it would resolve names itself), no redirect
/// (it could lead anywhere), bounded time.
pub(crate) fn client(allow_private: bool) -> anyhow::Result<reqwest::Client> {
    Ok(reqwest::Client::builder()
        .dns_resolver(Arc::new(Guarded { allow_private }))
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .timeout(DELIVERY_TIMEOUT)
        .user_agent("Trove reminders")
        .build()?)
}

/// `sha256=<hex>` of HMAC-SHA256 over `body` with `secret`: the `X-Trove-Signature` of a webhook's body.
///
/// ```
/// let s = trove_reminders::signature("key", b"{}");
/// assert!(s.starts_with("sha256=") && s.len() == 7 + 64);
/// ```
pub fn signature(secret: &str, body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).expect("HMAC takes a key of any length");
    mac.update(body);
    format!("sha256={}", hex::encode(mac.finalize().into_bytes()))
}

/// A URL's host written as an address, checked as the resolver checks names (the client does not resolve it).
fn check_literal(url: &str, allow_private: bool) -> Result<(), DeliveryFailed> {
    let parsed = reqwest::Url::parse(url).map_err(|e| DeliveryFailed(format!("not a URL: {e}")))?;
    let ip = match parsed.host() {
        Some(url::Host::Ipv4(v4)) => Some(IpAddr::V4(v4)),
        Some(url::Host::Ipv6(v6)) => Some(IpAddr::V6(v6)),
        _ => None,
    };
    match ip {
        Some(ip) if !reachable(ip, allow_private) => Err(DeliveryFailed(format!(
            "{ip} is a private, loopback or link-local address, which reminders may not reach \
             (a home network sets TROVE_WEBHOOK_ALLOW_PRIVATE=1)"
        ))),
        _ => Ok(()),
    }
}

/// Sends `note` to `push`.
pub(crate) async fn send(
    http: &reqwest::Client,
    push: &Push,
    note: &Note,
    secret: &str,
    allow_private: bool,
) -> Result<(), DeliveryFailed> {
    let text = format!("{}\n{}", note.subject, note.body);
    let requests: Vec<reqwest::RequestBuilder> = match push {
        Push::Ntfy { base, topic, auth } => {
            let r = http.post(base).json(&json!({"topic": topic, "title": note.subject, "message": note.body}));
            vec![match auth {
                Some((user, password)) => r.basic_auth(user, Some(password)),
                None => r,
            }]
        }
        Push::Gotify { base, token } => vec![
            http.post(format!("{base}/message"))
                .header("X-Gotify-Key", token.as_str())
                .json(&json!({"title": note.subject, "message": note.body, "priority": 5})),
        ],
        Push::Discord { id, token } => vec![
            http.post(format!("https://discord.com/api/webhooks/{id}/{token}"))
                .json(&json!({"content": format!("**{}**\n{}", note.subject, note.body)})),
        ],
        Push::Slack { path } => {
            vec![http.post(format!("https://hooks.slack.com/services/{path}")).json(&json!({"text": text}))]
        }
        Push::Telegram { token, chats } => chats
            .iter()
            .map(|chat| {
                http.post(format!("https://api.telegram.org/bot{token}/sendMessage"))
                    .json(&json!({"chat_id": chat, "text": text}))
            })
            .collect(),
        Push::Webhook { url } => {
            let body = serde_json::to_vec(&json!({
                "event": "reminder",
                "household": note.household,
                "subject": note.subject,
                "body": note.body,
                "key": note.key,
                "item_id": note.item,
            }))
            .map_err(|e| DeliveryFailed(format!("the body could not be made: {e}")))?;
            vec![
                http.post(url)
                    .header(reqwest::header::CONTENT_TYPE, "application/json")
                    .header("X-Trove-Signature", signature(secret, &body))
                    .body(body),
            ]
        }
    };
    for request in requests {
        let request = request.build().map_err(|e| DeliveryFailed(format!("the request could not be made: {e}")))?;
        check_literal(request.url().as_str(), allow_private)?;
        let host = request.url().host_str().unwrap_or("").to_owned();
        let answer = http.execute(request).await.map_err(|e| DeliveryFailed(reason(&host, &e)))?;
        let status = answer.status();
        if !status.is_success() {
            let body = answer.text().await.unwrap_or_default();
            let body: String = body.chars().take(200).collect();
            return Err(DeliveryFailed(format!("{host} answered {status}: {body}")));
        }
    }
    Ok(())
}

/// What went wrong with a request, its causes included (the resolver's refusal is one of them).
fn reason(host: &str, e: &reqwest::Error) -> String {
    let mut out = format!("{host} could not be reached: {e}");
    let mut cause = std::error::Error::source(e);
    while let Some(c) = cause {
        out.push_str(&format!(": {c}"));
        cause = c.source();
    }
    out
}
