//! Reminders at the edge: [`Deliveries`] sends a reminder by e-mail (SMTP through `lettre`) or to a notification
//! URL (ntfy, Gotify, Discord, Slack, Telegram, or a plain webhook whose JSON body is signed with HMAC-SHA256 in
//! `X-Trove-Signature`), and [`IcsCalendar`] writes the iCalendar feed.
//!
//! Pushes never reach a loopback, private, link-local or metadata address unless the home network allows private
//! ones (`trove_domain::notify::reachable`): the check is made on the addresses a name resolves to, by the HTTP
//! client's own resolver, so a name that resolves to a private address at delivery time (DNS rebinding) is refused
//! as well as an address written in the URL.

mod calendar;
mod push;

pub use calendar::IcsCalendar;
pub use push::{Guarded, signature};

use async_trait::async_trait;
use lettre::message::Mailbox;
use lettre::{AsyncSmtpTransport, AsyncTransport as _, Message, Tokio1Executor};
use std::time::Duration;
use trove_application::ports::{DeliveryFailed, Note, Notifier};

/// How long a delivery may take, connection included.
pub const DELIVERY_TIMEOUT: Duration = Duration::from_secs(15);

/// The mail settings: `TROVE_SMTP_URL` (`smtp://host:25`, `smtp://user:pass@host:587?tls=required`,
/// `smtps://user:pass@host`) and `TROVE_MAIL_FROM`.
#[derive(Clone)]
pub struct Mail {
    transport: AsyncSmtpTransport<Tokio1Executor>,
    from: Mailbox,
}

impl std::fmt::Debug for Mail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mail").field("from", &self.from.to_string()).finish_non_exhaustive()
    }
}

impl Mail {
    /// The mail transport of `url`, sending as `from`.
    ///
    /// # Errors
    /// When the URL or the address does not read.
    pub fn new(url: &str, from: &str) -> anyhow::Result<Self> {
        use anyhow::Context as _;
        let transport = AsyncSmtpTransport::<Tokio1Executor>::from_url(url)
            .context("TROVE_SMTP_URL is not an SMTP URL (smtp://host:25, smtps://user:pass@host)")?
            .timeout(Some(DELIVERY_TIMEOUT))
            .build();
        let from = from.parse().with_context(|| format!("TROVE_MAIL_FROM {from:?} is not an e-mail address"))?;
        Ok(Self { transport, from })
    }
}

/// The notifier: e-mail when a mail transport is configured, pushes always.
#[derive(Debug, Clone)]
pub struct Deliveries {
    mail: Option<Mail>,
    http: reqwest::Client,
    allow_private: bool,
}

impl Deliveries {
    /// `allow_private`: pushes may reach private addresses (`TROVE_WEBHOOK_ALLOW_PRIVATE=1`).
    ///
    /// # Errors
    /// When the HTTP client cannot be built.
    pub fn new(mail: Option<Mail>, allow_private: bool) -> anyhow::Result<Self> {
        Ok(Self { mail, http: push::client(allow_private)?, allow_private })
    }

    async fn email(&self, to: &str, note: &Note) -> Result<(), DeliveryFailed> {
        let Some(mail) = &self.mail else {
            return Err(DeliveryFailed("e-mail is not set up on this server (TROVE_SMTP_URL, TROVE_MAIL_FROM)".into()));
        };
        let to: Mailbox = to.parse().map_err(|e| DeliveryFailed(format!("{to:?} is not an address: {e}")))?;
        let message = Message::builder()
            .from(mail.from.clone())
            .to(to)
            .subject(&note.subject)
            .header(lettre::message::header::ContentType::TEXT_PLAIN)
            .body(format!("{}\n\n-- \nTrove, {}\n", note.body, note.household))
            .map_err(|e| DeliveryFailed(format!("the message could not be made: {e}")))?;
        mail.transport.send(message).await.map_err(|e| DeliveryFailed(format!("the mail server refused it: {e}")))?;
        Ok(())
    }
}

#[async_trait]
impl Notifier for Deliveries {
    async fn deliver(&self, channel: &str, note: &Note, secret: &str) -> Result<(), DeliveryFailed> {
        match channel.strip_prefix("email:") {
            Some(to) => self.email(to, note).await,
            None => {
                let push = trove_domain::notify::push(channel).map_err(|e| DeliveryFailed(e.to_string()))?;
                push::send(&self.http, &push, note, secret, self.allow_private).await
            }
        }
    }
}
