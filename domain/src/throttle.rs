//! The sign-in throttle's rule: which failed sign-ins refuse the next attempt, and for how long.
//!
//! Failures are counted three ways, each within [`THROTTLE_WINDOW`]:
//! - a name from one client address ([`PER_NAME_AND_ADDRESS`]): guessing one member's password from one place;
//! - a client address under any name ([`PER_ADDRESS`]): spraying one password over many names;
//! - a name from anywhere ([`PER_NAME`]): guessing one member's password from many places. Past this limit only
//!   addresses that failed lately are refused, so a stranger cannot lock a member out: the member's own correct
//!   password, from an address that has not failed, still works.
//!
//! A refused attempt is not counted (it checked no password), so an attacker cannot extend the wait by hammering.

use crate::Timestamp;
use crate::people::THROTTLE_WINDOW;
use chrono::Duration;
use std::net::IpAddr;

/// Failed sign-ins of one name from one address allowed within the window.
pub const PER_NAME_AND_ADDRESS: usize = 5;
/// Failed sign-ins from one address, under any names, allowed within the window.
pub const PER_ADDRESS: usize = 20;
/// Failed sign-ins of one name from every address allowed within the window, before addresses that failed
/// lately are refused for it.
pub const PER_NAME: usize = 50;

/// The most failures the rule reads of each kind: the store never needs to answer more.
pub const MOST_READ: usize = PER_NAME;

/// Where a sign-in comes from, as the throttle counts it: an IPv4 address, or the /64 network of an IPv6 one
/// (one host is usually given a whole /64, so counting single IPv6 addresses would count nothing).
///
/// ```
/// use trove_domain::throttle::ClientAddress;
/// let a = ClientAddress::of("2001:db8:1:2:3:4:5:6".parse().unwrap());
/// let b = ClientAddress::of("2001:db8:1:2:ffff::1".parse().unwrap());
/// assert_eq!(a, b);
/// assert_eq!(a.as_str(), "2001:db8:1:2::/64");
/// assert_eq!(ClientAddress::of("192.0.2.7".parse().unwrap()).as_str(), "192.0.2.7");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ClientAddress(String);

impl ClientAddress {
    /// The throttle's key of `ip` (an IPv4 address mapped into IPv6 counts as the IPv4 one).
    pub fn of(ip: IpAddr) -> Self {
        match ip {
            IpAddr::V4(v4) => Self(v4.to_string()),
            IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
                Some(v4) => Self(v4.to_string()),
                None => {
                    let s = v6.segments();
                    let net = std::net::Ipv6Addr::new(s[0], s[1], s[2], s[3], 0, 0, 0, 0);
                    Self(format!("{net}/64"))
                }
            },
        }
    }

    /// An address the transport could not tell (a Unix socket, a test): all such attempts count as one place.
    pub fn unknown() -> Self {
        Self("unknown".to_owned())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The recent failed sign-ins the rule decides on, each list at most [`MOST_READ`] long (newest first or in any
/// order: the rule sorts).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecentFailures {
    /// Of this name from this address.
    pub name_here: Vec<Timestamp>,
    /// From this address, under any name.
    pub here: Vec<Timestamp>,
    /// Of this name, from any address.
    pub name: Vec<Timestamp>,
}

/// How long a sign-in with `failures` behind it must wait at `now`; `None` when it may try.
///
/// ```
/// use chrono::Duration;
/// use trove_domain::throttle::{RecentFailures, wait};
/// let now = chrono::Utc::now();
/// let five: Vec<_> = (0..5).map(|i| now - Duration::minutes(10 - i)).collect();
/// // Five failures of the name from here: wait until the oldest leaves the window.
/// let f = RecentFailures { name_here: five.clone(), here: five.clone(), name: five.clone() };
/// assert_eq!(wait(&f, now), Some(Duration::minutes(5)));
/// // The same name from an address that has not failed: free to try.
/// assert_eq!(wait(&RecentFailures { name: five, ..Default::default() }, now), None);
/// ```
pub fn wait(failures: &RecentFailures, now: Timestamp) -> Option<Duration> {
    let name_here = over(&failures.name_here, PER_NAME_AND_ADDRESS, now);
    let here = over(&failures.here, PER_ADDRESS, now);
    // A name under attack from many places refuses only the places that failed lately.
    let name = if failures.here.iter().any(|f| *f > now - THROTTLE_WINDOW) {
        over(&failures.name, PER_NAME, now)
    } else {
        None
    };
    [name_here, here, name].into_iter().flatten().max()
}

/// With `limit` or more of `failures` inside the window at `now`: the time until enough leave it.
fn over(failures: &[Timestamp], limit: usize, now: Timestamp) -> Option<Duration> {
    let mut recent: Vec<Timestamp> = failures.iter().copied().filter(|f| *f > now - THROTTLE_WINDOW).collect();
    if recent.len() < limit {
        return None;
    }
    recent.sort_unstable();
    // The failure that, once it leaves the window, leaves fewer than the limit in it.
    let deciding = recent[recent.len() - limit];
    Some((deciding + THROTTLE_WINDOW - now).max(Duration::seconds(1)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(now: Timestamp, minutes_ago: &[i64]) -> Vec<Timestamp> {
        minutes_ago.iter().map(|m| now - Duration::minutes(*m)).collect()
    }

    fn check(f: &RecentFailures, now: Timestamp, expected: Option<i64>) {
        assert_eq!(wait(f, now).map(|d| d.num_minutes()), expected, "{f:?}");
    }

    #[test]
    fn each_kind_of_failure_refuses_past_its_own_limit() {
        let now = chrono::Utc::now();
        let four = at(now, &[4, 3, 2, 1]);
        let five = at(now, &[10, 4, 3, 2, 1]);
        // Four failures of a name from here: one more try.
        check(&RecentFailures { name_here: four.clone(), here: four.clone(), name: four }, now, None);
        // Five: wait until the oldest (10 minutes ago) leaves the 15-minute window.
        check(&RecentFailures { name_here: five.clone(), here: five.clone(), name: five.clone() }, now, Some(5));
        // Failures older than the window do not count.
        let old = at(now, &[20, 19, 18, 17, 16]);
        check(&RecentFailures { name_here: old.clone(), here: old.clone(), name: old }, now, None);
        // Spraying: twenty failures from here under other names refuse every name from here.
        let twenty: Vec<_> = (0..20).map(|i| now - Duration::seconds(30 * i)).collect();
        check(&RecentFailures { here: twenty.clone(), ..Default::default() }, now, Some(5));
        // Nineteen do not.
        check(&RecentFailures { here: twenty[..19].to_vec(), ..Default::default() }, now, None);
    }

    #[test]
    fn a_name_under_attack_from_many_places_stays_open_to_a_place_that_has_not_failed() {
        let now = chrono::Utc::now();
        let fifty: Vec<_> = (0..50).map(|i| now - Duration::seconds(10 * i)).collect();
        // The member, from home: no failure from here.
        check(&RecentFailures { name: fifty.clone(), ..Default::default() }, now, None);
        // Failures from here older than the window do not make this a failing place.
        check(&RecentFailures { name: fifty.clone(), here: at(now, &[16]), ..Default::default() }, now, None);
        // An address of the attack (it failed lately) is refused for the name.
        let one = at(now, &[1]);
        check(&RecentFailures { name: fifty.clone(), here: one.clone(), name_here: one.clone() }, now, Some(6));
        check(&RecentFailures { name: fifty[..49].to_vec(), here: one.clone(), name_here: one }, now, None);
    }

    #[test]
    fn the_longest_wait_wins_and_a_wait_is_never_zero() {
        let now = chrono::Utc::now();
        let five = at(now, &[14, 13, 12, 11, 10]);
        let twenty: Vec<_> = (0..20).map(|i| now - Duration::seconds(3 * i)).collect();
        let f = RecentFailures { name_here: five.clone(), here: twenty, name: five };
        check(&f, now, Some(14));
        let edge = vec![now - THROTTLE_WINDOW + Duration::milliseconds(1); PER_NAME_AND_ADDRESS];
        let f = RecentFailures { name_here: edge.clone(), here: edge.clone(), name: edge };
        assert_eq!(wait(&f, now), Some(Duration::seconds(1)));
    }

    #[test]
    fn addresses_count_an_ipv6_network_and_an_ipv4_mapped_address_as_ipv4() {
        let mapped = ClientAddress::of("::ffff:192.0.2.1".parse().unwrap());
        assert_eq!(mapped, ClientAddress::of("192.0.2.1".parse().unwrap()));
        let a = ClientAddress::of("2001:db8::1".parse().unwrap());
        let b = ClientAddress::of("2001:db8:0:1::1".parse().unwrap());
        assert_ne!(a, b, "another /64 is another place");
        assert_eq!(a.as_str(), "2001:db8::/64");
    }
}
