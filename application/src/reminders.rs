//! Reminders: each member's channels and lead time, the scheduler's tick that writes what is due and delivers
//! it (once per member, thing, lead time and channel, whatever the number of processes), the delivery log, a test
//! send, and each member's calendar feed.
//!
//! A tick has two steps. First it writes a reminder row for every thing due within each subscriber's lead time
//! and every channel they chose; the row's key is unique, so a thing is reminded of once, and again only when it
//! changes (a new due date is a new key), and two processes writing the same reminder write one row. Then it
//! claims pending rows no other process holds (for a lease, so a process killed mid-delivery lets them go) and
//! delivers them; a failed delivery is tried again later, its wait doubling (`trove_domain::loan::retry_after`),
//! and never holds up the others.

use crate::Error;
use crate::auth::Caller;
use crate::error::Refusal;
use crate::lending::Lending;
use crate::ports::{
    CalendarWriter, Channels, Clock, MemberRepo, NewReminder, Note, Notifier, Reminder, ReminderRepo, SecretSource,
};
use std::collections::HashMap;
use std::collections::hash_map::Entry;
use std::sync::Arc;
use std::time::Duration;
use trove_domain::HouseholdId;
use trove_domain::loan::{LEAD_DAYS_MAX, remind_now, retry_after};
use trove_domain::notify::{self, ChannelRefused};
use trove_domain::people::Permission;

/// The lead time of a member who never chose one, in days.
pub const LEAD_DAYS_DEFAULT: u32 = 3;
/// How far ahead the calendar feed looks, in days (five years: warranties end far ahead).
pub const CALENDAR_DAYS: u32 = 1_830;
/// Most reminders a process claims at once.
const CLAIM_BATCH: u64 = 20;
/// Most deliveries the log shows.
pub const LOG_MAX: u64 = 200;

/// How the reminders run.
#[derive(Debug, Clone, Copy)]
pub struct ReminderConfig {
    /// How often the scheduler wakes (`TROVE_REMINDERS_EVERY`): the base of the retry waits and of the lease.
    pub every: Duration,
    /// Pushes may reach private addresses (`TROVE_WEBHOOK_ALLOW_PRIVATE=1`, a home network's ntfy).
    pub allow_private: bool,
}

impl ReminderConfig {
    /// How long a claimed reminder is held by the process that claimed it: long enough for a slow delivery (each
    /// is bounded by its client's timeouts), short enough that a killed process's claims are soon taken over.
    pub fn lease(&self) -> Duration {
        self.every.saturating_mul(2) + Duration::from_secs(20)
    }
}

/// What a tick did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tick {
    /// Reminders written (new ones only).
    pub written: u64,
    pub sent: u64,
    pub failed: u64,
}

/// The result of a test send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestSent {
    pub channel: String,
    pub error: Option<String>,
}

/// The reminders use cases.
#[derive(Clone)]
pub struct Reminders {
    repo: Arc<dyn ReminderRepo>,
    lending: Lending,
    members: Arc<dyn MemberRepo>,
    notifier: Arc<dyn Notifier>,
    calendar: Arc<dyn CalendarWriter>,
    secrets: Arc<dyn SecretSource>,
    clock: Arc<dyn Clock>,
    config: ReminderConfig,
}

impl std::fmt::Debug for Reminders {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reminders").field("config", &self.config).finish_non_exhaustive()
    }
}

/// The ports [`Reminders`] uses.
pub struct ReminderPorts {
    pub repo: Arc<dyn ReminderRepo>,
    pub members: Arc<dyn MemberRepo>,
    pub notifier: Arc<dyn Notifier>,
    pub calendar: Arc<dyn CalendarWriter>,
    pub secrets: Arc<dyn SecretSource>,
    pub clock: Arc<dyn Clock>,
}

/// The channels a member's settings name, as the reminder rows and the notifier name them.
fn channel_names(c: &Channels) -> Vec<String> {
    c.email.iter().map(|e| format!("email:{e}")).chain(c.urls.iter().cloned()).collect()
}

impl Reminders {
    pub fn new(ports: ReminderPorts, lending: Lending, config: ReminderConfig) -> Self {
        let ReminderPorts { repo, members, notifier, calendar, secrets, clock } = ports;
        Self { repo, lending, members, notifier, calendar, secrets, clock, config }
    }

    pub fn config(&self) -> ReminderConfig {
        self.config
    }

    /// The caller's channels (none chosen: no e-mail, no URLs, the default lead time).
    ///
    /// # Errors
    /// Storage only.
    pub async fn channels(&self, caller: &Caller) -> Result<Channels, Error> {
        Ok(self.repo.channels(caller.member).await?.unwrap_or(Channels {
            email: None,
            urls: Vec::new(),
            lead_days: LEAD_DAYS_DEFAULT,
        }))
    }

    /// Checks channels as asked: an e-mail address, notification URLs of a kind Trove sends to (a webhook to an
    /// address written as a private IP only with `allow_private`), a lead time.
    ///
    /// # Errors
    /// [`Refusal::Channel`] naming the first that is wrong.
    pub fn check(&self, c: Channels) -> Result<Channels, Error> {
        let email = c.email.filter(|e| !e.trim().is_empty()).map(|e| notify::check_email(&e)).transpose();
        let email = email.map_err(Refusal::Channel)?;
        if c.urls.len() > notify::URLS_MAX {
            return Err(Refusal::Channel(ChannelRefused::TooMany).into());
        }
        if c.lead_days > LEAD_DAYS_MAX {
            return Err(Refusal::Channel(ChannelRefused::BadLead).into());
        }
        let mut urls: Vec<String> = Vec::new();
        for url in c.urls {
            let url = url.trim().to_owned();
            let push = notify::push(&url).map_err(Refusal::Channel)?;
            if let Some(ip) = push.literal_ip()
                && !notify::reachable(ip, self.config.allow_private)
            {
                return Err(Refusal::Channel(ChannelRefused::BadUrl {
                    url,
                    why: "a private, loopback or link-local address (a home network sets TROVE_WEBHOOK_ALLOW_PRIVATE=1)",
                })
                .into());
            }
            if !urls.contains(&url) {
                urls.push(url);
            }
        }
        Ok(Channels { email, urls, lead_days: c.lead_days })
    }

    /// Sets the caller's channels, checked ([`Reminders::check`]).
    ///
    /// # Errors
    /// [`Refusal::Channel`]; storage.
    pub async fn set_channels(&self, caller: &Caller, c: Channels) -> Result<Channels, Error> {
        let c = self.check(c)?;
        self.repo.set_channels(caller.household, caller.member, &c).await?;
        Ok(c)
    }

    /// Sends a test reminder by `channel` (checked like a saved one) and says how it went.
    ///
    /// # Errors
    /// [`Refusal::Channel`] for a channel that is not one; storage.
    pub async fn send_test(&self, caller: &Caller, channel: &str) -> Result<TestSent, Error> {
        let channel = channel.trim();
        let checked = match channel.strip_prefix("email:") {
            Some(e) => self.check(Channels { email: Some(e.to_owned()), urls: vec![], lead_days: 0 })?,
            None => self.check(Channels { email: None, urls: vec![channel.to_owned()], lead_days: 0 })?,
        };
        let channel = channel_names(&checked).remove(0);
        let household = self.members.household(caller.household).await?.name;
        let note = Note {
            subject: "Trove: a test reminder".to_owned(),
            body: format!("This is a test from Trove ({household}). Reminders of what falls due will come here."),
            key: "test".to_owned(),
            item: 0,
            household,
        };
        let secret = self.secret(caller.household).await?;
        let error = self.notifier.deliver(&channel, &note, &secret).await.err().map(|e| e.0);
        Ok(TestSent { channel, error })
    }

    /// The household's key for signing webhook bodies (made the first time it is asked for).
    ///
    /// # Errors
    /// Storage; no random bytes.
    pub async fn secret(&self, household: HouseholdId) -> Result<String, Error> {
        let fresh = self.secrets.new_secret()?;
        Ok(self.repo.notify_secret(household, &fresh).await?)
    }

    /// The delivery log and the webhook signing key, for owners.
    ///
    /// # Errors
    /// `Forbidden` for anyone but an owner; storage.
    pub async fn log(&self, caller: &Caller) -> Result<(String, Vec<Reminder>), Error> {
        caller.require(Permission::ManageHousehold)?;
        let secret = self.secret(caller.household).await?;
        Ok((secret, self.repo.log(caller.household, LOG_MAX).await?))
    }

    /// The caller's calendar key: the one they have, or a new one.
    ///
    /// # Errors
    /// Storage; no random bytes.
    pub async fn calendar_key(&self, caller: &Caller) -> Result<String, Error> {
        match self.repo.calendar_key(caller.member).await? {
            Some(key) => Ok(key),
            None => self.new_calendar_key(caller).await,
        }
    }

    /// A new calendar key for the caller; the old one stops working.
    ///
    /// # Errors
    /// Storage; no random bytes.
    pub async fn new_calendar_key(&self, caller: &Caller) -> Result<String, Error> {
        let key = self.secrets.new_secret()?;
        self.repo.set_calendar_key(caller.household, caller.member, &key).await?;
        Ok(key)
    }

    /// The calendar feed of the member whose key is `key`: loans due back, maintenance due and warranties ending,
    /// overdue ones and those of the next five years. `None` for a key no one has.
    ///
    /// # Errors
    /// Storage.
    pub async fn feed(&self, key: &str) -> Result<Option<String>, Error> {
        if key.is_empty() || key.len() > 200 {
            return Ok(None);
        }
        let Some((household, _member)) = self.repo.calendar_owner(key).await? else { return Ok(None) };
        let today = self.clock.now().date_naive();
        let name = self.members.household(household).await?.name;
        let all: Vec<_> =
            self.lending.due_from(household, today, CALENDAR_DAYS).await?.into_iter().map(|d| d.due).collect();
        Ok(Some(self.calendar.feed(&format!("Trove: {name}"), &all, today)))
    }

    /// One run of the scheduler: writes the reminders now due, then delivers what is pending.
    ///
    /// # Errors
    /// Storage (a failed delivery is not an error: it is logged and tried again).
    pub async fn tick(&self) -> Result<Tick, Error> {
        let mut tick = Tick { written: self.write_due().await?, ..Tick::default() };
        // Each household's name and signing key, read once per tick however many of its reminders go out.
        let mut senders: HashMap<HouseholdId, (String, String)> = HashMap::new();
        loop {
            let now = self.clock.now();
            let until = now + chrono::Duration::from_std(self.config.lease()).unwrap_or(chrono::Duration::MAX);
            let claimed = self.repo.claim(now, until, CLAIM_BATCH).await?;
            if claimed.is_empty() {
                return Ok(tick);
            }
            for r in claimed {
                let sender = match senders.entry(r.household) {
                    Entry::Occupied(known) => known.into_mut(),
                    Entry::Vacant(slot) => {
                        let name = self.members.household(r.household).await?.name;
                        slot.insert((name, self.secret(r.household).await?))
                    }
                };
                if self.deliver(&r, &sender.0, &sender.1).await? {
                    tick.sent += 1;
                } else {
                    tick.failed += 1;
                }
            }
        }
    }

    /// Writes a reminder for every thing due within each subscriber's lead time, by each of their channels.
    async fn write_due(&self) -> Result<u64, Error> {
        let now = self.clock.now();
        let today = now.date_naive();
        let mut written = 0;
        for sub in self.repo.subscribers().await? {
            let lead = sub.channels.lead_days;
            let channels = channel_names(&sub.channels);
            let due = self.lending.due_from(sub.household, today, lead).await?;
            let new: Vec<NewReminder> = due
                .iter()
                .filter(|d| remind_now(&d.due, today, lead))
                .flat_map(|d| {
                    let line = d.due.line(today);
                    let subject = format!("Trove: {line}");
                    let mut body = line.clone();
                    if let Some(place) = &d.place {
                        body.push_str(&format!("\nWhere it is: {place}"));
                    }
                    channels.iter().map(move |c| NewReminder {
                        member: sub.member,
                        key: format!("{}@{lead}", d.due.key()),
                        channel: c.clone(),
                        item: d.due.item,
                        subject: subject.clone(),
                        body: body.clone(),
                    })
                })
                .collect();
            if !new.is_empty() {
                written += self.repo.add_reminders(sub.household, &new, now).await?;
            }
        }
        Ok(written)
    }

    /// Delivers one claimed reminder of the household named `household`, a webhook's body signed with `secret`,
    /// and records how it went; answers whether it went.
    async fn deliver(&self, r: &Reminder, household: &str, secret: &str) -> Result<bool, Error> {
        let note = Note {
            subject: r.subject.clone(),
            body: r.body.clone(),
            key: r.key.clone(),
            item: r.item.0,
            household: household.to_owned(),
        };
        match self.notifier.deliver(&r.channel, &note, secret).await {
            Ok(()) => {
                self.repo.sent(r.id, self.clock.now()).await?;
                Ok(true)
            }
            Err(e) => {
                let retry = retry_after(self.config.every, r.attempts + 1)
                    .and_then(|d| chrono::Duration::from_std(d).ok())
                    .map(|d| self.clock.now() + d);
                tracing::warn!(reminder = r.id, channel = %redacted(&r.channel), error = %e, "a reminder was not delivered");
                self.repo.failed(r.id, &e.0, retry).await?;
                Ok(false)
            }
        }
    }
}

/// A channel as the log shows it: a URL without its path and query (they carry tokens).
pub fn redacted(channel: &str) -> String {
    if channel.starts_with("email:") {
        return channel.to_owned();
    }
    match channel.split_once("://") {
        Some((scheme, rest)) => {
            let host = rest.split(['/', '?']).next().unwrap_or("");
            let host = host.rsplit_once('@').map_or(host, |(_, h)| h);
            format!("{scheme}://{host}/…")
        }
        None => "…".to_owned(),
    }
}
