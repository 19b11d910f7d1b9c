//! Where reminders go: a member's channels (an e-mail address and notification URLs in the style people paste
//! into Shoutrrr or Apprise), read and checked here, and the rule of which network addresses a push may reach.

use std::net::IpAddr;

/// Longest notification URL, and most URLs a member keeps.
pub const URL_MAX: usize = 2_000;
pub const URLS_MAX: usize = 10;

/// One place a push goes, as read from its URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Push {
    /// `ntfy://[user:pass@]host[:port]/topic[?scheme=http]`: a POST of the text to the topic.
    Ntfy { base: String, topic: String, auth: Option<(String, String)> },
    /// `gotify://host[:port][/path]/token[?disabletls=yes]`: a POST of `{title, message}` to `/message`.
    Gotify { base: String, token: String },
    /// `discord://token@webhook_id`: Discord's webhook.
    Discord { id: String, token: String },
    /// `slack://tokenA/tokenB/tokenC` (an incoming webhook's three parts).
    Slack { path: String },
    /// `telegram://token@telegram?chats=@channel,12345`.
    Telegram { token: String, chats: Vec<String> },
    /// `https://...` (or `http://` on a home network): a JSON POST signed with the household's secret.
    Webhook { url: String },
}

impl Push {
    /// The address the push goes to when its URL writes one (`http://192.168.1.5/...`), to judge with
    /// [`reachable`] when it is saved; a name is judged on the addresses it resolves to, when it is sent.
    ///
    /// ```
    /// use trove_domain::notify::push;
    /// assert_eq!(push("ntfy://192.168.1.5:8080/house").unwrap().literal_ip(), "192.168.1.5".parse().ok());
    /// assert_eq!(push("http://[::1]/x").unwrap().literal_ip(), "::1".parse().ok());
    /// assert_eq!(push("https://hooks.example/x").unwrap().literal_ip(), None);
    /// ```
    pub fn literal_ip(&self) -> Option<IpAddr> {
        let url = match self {
            Push::Ntfy { base, .. } | Push::Gotify { base, .. } => base.as_str(),
            Push::Webhook { url } => url.as_str(),
            Push::Discord { .. } | Push::Slack { .. } | Push::Telegram { .. } => return None,
        };
        let authority = url.split_once("://")?.1.split(['/', '?']).next()?;
        let host = match authority.strip_prefix('[') {
            Some(v6) => v6.split(']').next()?,
            None => authority.rsplit_once(':').map_or(authority, |(h, _)| h),
        };
        host.parse().ok()
    }
}

/// Why a channel is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChannelRefused {
    #[error("{0:?} is not an e-mail address")]
    BadEmail(String),
    #[error("{url:?}: {why}")]
    BadUrl { url: String, why: &'static str },
    #[error("at most {URLS_MAX} notification URLs")]
    TooMany,
    #[error("a lead time is 0 to {} days", crate::loan::LEAD_DAYS_MAX)]
    BadLead,
}

/// An e-mail address, checked the way a form does: one `@`, something either side, a dot in the domain, no
/// spaces or control characters.
///
/// # Errors
/// [`ChannelRefused::BadEmail`].
pub fn check_email(raw: &str) -> Result<String, ChannelRefused> {
    let a = raw.trim();
    let bad = || ChannelRefused::BadEmail(raw.to_owned());
    let (local, domain) = a.split_once('@').ok_or_else(bad)?;
    if a.len() > 254
        || local.is_empty()
        || domain.contains('@')
        || !domain.contains('.')
        || domain.starts_with('.')
        || domain.ends_with('.')
        || a.chars().any(|c| c.is_whitespace() || c.is_control() || c == '<' || c == '>' || c == ',')
    {
        return Err(bad());
    }
    Ok(a.to_owned())
}

/// The parts of a URL this module reads: scheme, user info, host (with its port), path, query.
struct Parts<'a> {
    scheme: &'a str,
    user: Option<&'a str>,
    host: &'a str,
    path: &'a str,
    query: &'a str,
}

fn parts(url: &str) -> Option<Parts<'_>> {
    let (scheme, rest) = url.split_once("://")?;
    let (rest, query) = rest.split_once('?').unwrap_or((rest, ""));
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, ""),
    };
    let (user, host) = match authority.rsplit_once('@') {
        Some((u, h)) => (Some(u), h),
        None => (None, authority),
    };
    (!host.is_empty()).then_some(Parts { scheme, user, host, path, query })
}

fn query_value<'a>(query: &'a str, key: &str) -> Option<&'a str> {
    query.split('&').filter_map(|kv| kv.split_once('=')).find(|(k, _)| k.eq_ignore_ascii_case(key)).map(|(_, v)| v)
}

/// A notification URL read as the place its pushes go.
///
/// ```
/// use trove_domain::notify::{Push, push};
/// assert_eq!(
///     push("ntfy://ntfy.example.org/trove").unwrap(),
///     Push::Ntfy { base: "https://ntfy.example.org".into(), topic: "trove".into(), auth: None }
/// );
/// assert!(push("ftp://example.org/x").is_err());
/// ```
///
/// # Errors
/// [`ChannelRefused::BadUrl`] naming what is wrong.
pub fn push(url: &str) -> Result<Push, ChannelRefused> {
    let bad = |why| ChannelRefused::BadUrl { url: url.to_owned(), why };
    if url.len() > URL_MAX || url.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(bad("too long, or has spaces"));
    }
    let p = parts(url).ok_or_else(|| bad("not a URL (scheme://host/...)"))?;
    let segments: Vec<&str> = p.path.split('/').filter(|s| !s.is_empty()).collect();
    let http = |plain: bool| if plain { "http" } else { "https" };
    match p.scheme.to_ascii_lowercase().as_str() {
        "ntfy" => {
            let [topic] = segments[..] else { return Err(bad("ntfy://host/topic names one topic")) };
            let plain = query_value(p.query, "scheme").is_some_and(|s| s.eq_ignore_ascii_case("http"));
            let auth = p.user.and_then(|u| u.split_once(':')).map(|(u, pw)| (u.to_owned(), pw.to_owned()));
            Ok(Push::Ntfy { base: format!("{}://{}", http(plain), p.host), topic: topic.to_owned(), auth })
        }
        "gotify" => {
            let Some((token, path)) = segments.split_last() else {
                return Err(bad("gotify://host/token names the application token"));
            };
            let plain = query_value(p.query, "disabletls").is_some_and(|s| s.eq_ignore_ascii_case("yes"));
            let prefix: String = path.iter().map(|s| format!("/{s}")).collect();
            Ok(Push::Gotify { base: format!("{}://{}{prefix}", http(plain), p.host), token: (*token).to_owned() })
        }
        "discord" => {
            let token = p.user.filter(|t| !t.is_empty()).ok_or_else(|| bad("discord://token@webhook_id"))?;
            Ok(Push::Discord { id: p.host.to_owned(), token: token.to_owned() })
        }
        "slack" => {
            let all: Vec<&str> = std::iter::once(p.host).chain(segments).collect();
            let [a, b, c] = all[..] else { return Err(bad("slack://tokenA/tokenB/tokenC")) };
            Ok(Push::Slack { path: format!("{a}/{b}/{c}") })
        }
        "telegram" => {
            let token = p.user.filter(|t| !t.is_empty()).ok_or_else(|| bad("telegram://token@telegram?chats=..."))?;
            let chats: Vec<String> = query_value(p.query, "chats")
                .unwrap_or("")
                .split(',')
                .filter(|c| !c.is_empty())
                .map(str::to_owned)
                .collect();
            if chats.is_empty() {
                return Err(bad("telegram://token@telegram?chats=@channel,12345 names a chat"));
            }
            Ok(Push::Telegram { token: token.to_owned(), chats })
        }
        "https" | "http" => {
            if p.user.is_some() {
                return Err(bad("a webhook URL carries no user name or password"));
            }
            Ok(Push::Webhook { url: url.to_owned() })
        }
        _ => Err(bad("use ntfy://, gotify://, discord://, slack://, telegram:// or https://")),
    }
}

/// Whether a push may reach `ip`: a public address, never loopback, private, link-local (the cloud metadata
/// address 169.254.169.254 among them), shared (CGNAT), unspecified, multicast, broadcast or documentation
/// addresses; `allow_private` (a home network whose ntfy runs on the LAN) lets every unicast address through but
/// the metadata service's.
///
/// ```
/// use trove_domain::notify::reachable;
/// assert!(reachable("93.184.216.34".parse().unwrap(), false));
/// assert!(!reachable("127.0.0.1".parse().unwrap(), false));
/// assert!(reachable("192.168.1.20".parse().unwrap(), true));
/// assert!(!reachable("169.254.169.254".parse().unwrap(), true));
/// ```
pub fn reachable(ip: IpAddr, allow_private: bool) -> bool {
    let ip = match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    };
    let metadata = match ip {
        IpAddr::V4(v4) => v4.octets() == [169, 254, 169, 254] || v4.octets() == [100, 100, 100, 200],
        IpAddr::V6(v6) => v6.segments() == [0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254],
    };
    if metadata || ip.is_unspecified() || ip.is_multicast() {
        return false;
    }
    if allow_private {
        return true;
    }
    match ip {
        IpAddr::V4(v4) => {
            let o = v4.octets();
            !(v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_broadcast()
                || v4.is_documentation()
                || o[0] == 0
                || (o[0] == 100 && (64..128).contains(&o[1]))
                || (o[0] == 198 && (o[1] == 18 || o[1] == 19))
                || o[0] >= 240)
        }
        IpAddr::V6(v6) => {
            let s = v6.segments();
            !(v6.is_loopback()
                || (s[0] & 0xfe00) == 0xfc00
                || (s[0] & 0xffc0) == 0xfe80
                || (s[0] == 0x2001 && s[1] == 0xdb8)
                || (s[0] == 0x64 && s[1] == 0xff9b))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_of_url_reads_as_its_push() {
        assert_eq!(
            push("ntfy://u:p@192.168.1.5:8080/house?scheme=http").unwrap(),
            Push::Ntfy {
                base: "http://192.168.1.5:8080".into(),
                topic: "house".into(),
                auth: Some(("u".into(), "p".into()))
            }
        );
        assert_eq!(
            push("gotify://gotify.example.org/sub/AbCtoken").unwrap(),
            Push::Gotify { base: "https://gotify.example.org/sub".into(), token: "AbCtoken".into() }
        );
        assert_eq!(push("discord://tok@123").unwrap(), Push::Discord { id: "123".into(), token: "tok".into() });
        assert_eq!(push("slack://T0/B0/xyz").unwrap(), Push::Slack { path: "T0/B0/xyz".into() });
        assert_eq!(
            push("telegram://123:abc@telegram?chats=@home,42").unwrap(),
            Push::Telegram { token: "123:abc".into(), chats: vec!["@home".into(), "42".into()] }
        );
        assert_eq!(
            push("https://hooks.example/x?a=1").unwrap(),
            Push::Webhook { url: "https://hooks.example/x?a=1".into() }
        );
        for bad in
            ["ntfy://host", "slack://a/b", "telegram://tok@telegram", "discord://123", "mailto:x@y", "https://a b"]
        {
            assert!(push(bad).is_err(), "{bad}");
        }
        assert!(push("https://user:pw@hooks.example/x").is_err(), "credentials in a webhook URL");
    }

    #[test]
    fn addresses_a_push_may_not_reach() {
        for ip in [
            "10.0.0.1",
            "172.16.0.1",
            "192.168.0.1",
            "127.0.0.1",
            "169.254.1.1",
            "100.64.0.1",
            "0.0.0.0",
            "::1",
            "fe80::1",
            "fd00::1",
            "::ffff:127.0.0.1",
            "224.0.0.1",
        ] {
            assert!(!reachable(ip.parse().unwrap(), false), "{ip}");
        }
        for ip in ["93.184.216.34", "2606:4700::1111", "1.1.1.1"] {
            assert!(reachable(ip.parse().unwrap(), false), "{ip}");
        }
        assert!(reachable("127.0.0.1".parse().unwrap(), true), "a home network");
        assert!(!reachable("169.254.169.254".parse().unwrap(), true), "never the metadata service");
    }

    #[test]
    fn emails_are_checked_like_a_form() {
        assert_eq!(check_email(" sam@example.org ").unwrap(), "sam@example.org");
        for bad in ["sam", "sam@", "@example.org", "sam@localhost", "a b@example.org", "a@b@c.org", "x@example.org."] {
            assert!(check_email(bad).is_err(), "{bad}");
        }
    }
}
