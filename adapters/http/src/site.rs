//! Where the site is (`TROVE_PUBLIC_URL`): the links it hands out, whether its session cookie is `Secure`,
//! the origin a cookie-signed request must come from, and which client a request comes from
//! (`TROVE_TRUSTED_PROXIES`).

use std::net::IpAddr;
use trove_domain::throttle::ClientAddress;

/// The site's public address, as configured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Site {
    /// `TROVE_PUBLIC_URL` without a trailing slash: `https://trove.home.example`.
    public_url: String,
    /// The reverse proxies whose `X-Forwarded-For` is believed.
    trusted_proxies: Vec<IpAddr>,
    /// Whether every request is logged (`TROVE_ACCESS_LOG`).
    access_log: bool,
}

impl Site {
    /// The site at `public_url` (an `http://` or `https://` URL, checked by the configuration).
    pub fn new(public_url: &str) -> Self {
        Self { public_url: public_url.trim_end_matches('/').to_owned(), trusted_proxies: Vec::new(), access_log: false }
    }

    /// The same site behind the reverse proxies at `proxies`.
    #[must_use]
    pub fn behind(self, proxies: Vec<IpAddr>) -> Self {
        Self { trusted_proxies: proxies, ..self }
    }

    /// The same site logging every request when `on`.
    #[must_use]
    pub fn logging_requests(self, on: bool) -> Self {
        Self { access_log: on, ..self }
    }

    /// Whether every request is logged.
    pub fn logs_requests(&self) -> bool {
        self.access_log
    }

    /// The client a request comes from, as the sign-in throttle counts it: the peer's address, or, when the
    /// peer is a trusted proxy, the last address of `X-Forwarded-For` (read from the right) that is not one.
    /// A header from any other peer is ignored: a client could write anything there.
    pub fn client(&self, peer: Option<IpAddr>, forwarded_for: Option<&str>) -> ClientAddress {
        let Some(peer) = peer else { return ClientAddress::unknown() };
        if !self.trusted_proxies.contains(&peer) {
            return ClientAddress::of(peer);
        }
        let named = forwarded_for
            .into_iter()
            .flat_map(|h| h.rsplit(','))
            .map(|a| a.trim().parse::<IpAddr>())
            .take_while(Result::is_ok)
            .flatten()
            .find(|a| !self.trusted_proxies.contains(a));
        ClientAddress::of(named.unwrap_or(peer))
    }

    pub fn public_url(&self) -> &str {
        &self.public_url
    }

    /// Whether the session cookie is sent over HTTPS only: when the public URL is `https://`.
    pub fn secure(&self) -> bool {
        self.public_url.starts_with("https://")
    }

    /// The origin of the public URL: its scheme, host and port, without a path.
    pub fn origin(&self) -> &str {
        let after_scheme = self.public_url.find("://").map_or(0, |i| i + 3);
        match self.public_url[after_scheme..].find('/') {
            Some(slash) => &self.public_url[..after_scheme + slash],
            None => &self.public_url,
        }
    }

    /// The link that opens an invitation in the web page.
    pub fn join_link(&self, code: &str) -> String {
        format!("{}/#/join/{code}", self.public_url)
    }

    /// Whether a request's `Origin` is the page's own: the public URL's origin, or the origin the request was
    /// sent to (its `Host`, over either scheme; a browser sends the session cookie only to the host that set
    /// it, so a foreign page cannot make a request whose Origin is this host).
    pub fn same_origin(&self, origin: Option<&str>, host: Option<&str>) -> bool {
        let Some(origin) = origin else { return false };
        if origin == self.origin() {
            return true;
        }
        host.is_some_and(|h| origin == format!("http://{h}") || origin == format!("https://{h}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_forwarded_client_is_believed_only_from_a_trusted_proxy() {
        let proxy: IpAddr = "10.0.0.2".parse().unwrap();
        let site = Site::new("https://trove.home.example").behind(vec![proxy, "10.0.0.3".parse().unwrap()]);
        let header = Some("198.51.100.9, 203.0.113.5, 10.0.0.3");
        // From the proxy: the rightmost address that is not a proxy (the one the proxies saw).
        assert_eq!(site.client(Some(proxy), header).as_str(), "203.0.113.5");
        // From anyone else: the header is ignored.
        let stranger: IpAddr = "192.0.2.8".parse().unwrap();
        assert_eq!(site.client(Some(stranger), header).as_str(), "192.0.2.8");
        // A proxy without the header, or with garbage in it, counts as itself.
        assert_eq!(site.client(Some(proxy), None).as_str(), "10.0.0.2");
        assert_eq!(site.client(Some(proxy), Some("not-an-ip")).as_str(), "10.0.0.2");
        // No proxies configured: the peer always.
        assert_eq!(Site::new("http://x").client(Some(proxy), header).as_str(), "10.0.0.2");
        assert_eq!(Site::new("http://x").client(None, header), ClientAddress::unknown());
    }

    #[test]
    fn the_public_url_decides_links_secure_cookies_and_the_origin() {
        let site = Site::new("https://trove.home.example/");
        assert_eq!(site.join_link("abc"), "https://trove.home.example/#/join/abc");
        assert!(site.secure());
        assert_eq!(site.origin(), "https://trove.home.example");
        let lan = Site::new("http://192.168.1.20:8080/trove");
        assert!(!lan.secure());
        assert_eq!(lan.origin(), "http://192.168.1.20:8080");
        let cases = [
            (Some("https://trove.home.example"), None, true),
            (Some("https://trove.home.example"), Some("elsewhere:1"), true),
            (Some("http://127.0.0.1:5000"), Some("127.0.0.1:5000"), true),
            (Some("http://evil.example"), Some("127.0.0.1:5000"), false),
            (Some("null"), Some("127.0.0.1:5000"), false),
            (None, Some("127.0.0.1:5000"), false),
        ];
        for (origin, host, expected) in cases {
            assert_eq!(site.same_origin(origin, host), expected, "{origin:?} {host:?}");
        }
    }
}
