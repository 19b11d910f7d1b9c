//! When to try a call again, and how long to wait first.

use chrono::{DateTime, Utc};
use rand::Rng;
use std::time::Duration;

/// Whether an HTTP status is worth another attempt: rate limiting (429), a request timeout (408) and server
/// errors (5xx) pass; every other client error (400, 401, 403, 404, ...) would fail the same way again.
pub(crate) fn is_retryable(status: u16) -> bool {
    status == 408 || status == 429 || (500..=599).contains(&status)
}

/// The wait before the retry that follows failed attempt `attempt` (0 for the first): `base x 2^attempt + jitter`,
/// capped at `cap`. The jitter (up to `base`) spreads clients that failed together.
pub(crate) fn backoff(attempt: u32, base: Duration, cap: Duration, jitter: Duration) -> Duration {
    // 2^20 x any sane base is far beyond any cap: stop doubling there so the product cannot overflow.
    let factor = 1u32 << attempt.min(20);
    base.saturating_mul(factor).saturating_add(jitter).min(cap)
}

/// A random jitter between zero and `base`.
pub(crate) fn jitter(base: Duration) -> Duration {
    let most = u64::try_from(base.as_micros()).unwrap_or(u64::MAX);
    Duration::from_micros(rand::rng().random_range(0..=most))
}

/// The wait a `Retry-After` header asks for: delay-seconds, or an HTTP date (a date in the past asks for no wait).
/// `None` when the header is neither.
pub(crate) fn parse_retry_after(value: &str, now: DateTime<Utc>) -> Option<Duration> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(Duration::from_secs(seconds));
    }
    // IMF-fixdate ("Wed, 21 Oct 2015 07:28:00 GMT") is an RFC 2822 date.
    let at = DateTime::parse_from_rfc2822(value).ok()?.with_timezone(&Utc);
    Some((at - now).to_std().unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    const MS: fn(u64) -> Duration = Duration::from_millis;

    #[test]
    fn statuses() {
        for status in [408, 429, 500, 502, 503, 504, 599] {
            assert!(is_retryable(status), "{status}");
        }
        for status in [200, 400, 401, 403, 404, 409, 413, 422] {
            assert!(!is_retryable(status), "{status}");
        }
    }

    #[test]
    fn backoff_doubles_and_is_capped() {
        let check = |attempt, jitter, want| assert_eq!(backoff(attempt, MS(500), MS(8000), jitter), want, "{attempt}");
        check(0, MS(0), MS(500));
        check(1, MS(0), MS(1000));
        check(2, MS(250), MS(2250));
        check(3, MS(500), MS(4500));
        check(4, MS(0), MS(8000));
        check(5, MS(0), MS(8000));
        check(u32::MAX, MS(500), MS(8000));
    }

    #[test]
    fn jitter_stays_within_base() {
        for _ in 0..100 {
            assert!(jitter(MS(5)) <= MS(5));
        }
        assert_eq!(jitter(Duration::ZERO), Duration::ZERO);
    }

    #[test]
    fn retry_after_in_seconds_or_as_a_date() {
        let now = Utc.with_ymd_and_hms(2015, 10, 21, 7, 28, 0).unwrap();
        assert_eq!(parse_retry_after("3", now), Some(Duration::from_secs(3)));
        assert_eq!(parse_retry_after(" 0 ", now), Some(Duration::ZERO));
        assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:28:30 GMT", now), Some(Duration::from_secs(30)));
        assert_eq!(parse_retry_after("Wed, 21 Oct 2015 07:27:00 GMT", now), Some(Duration::ZERO));
        assert_eq!(parse_retry_after("soon", now), None);
        assert_eq!(parse_retry_after("-1", now), None);
        assert_eq!(parse_retry_after("", now), None);
    }
}
