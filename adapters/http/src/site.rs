//! Where the site is (`TROVE_PUBLIC_URL`): the links it hands out, whether its session cookie is `Secure`,
//! and the origin a cookie-signed request must come from.

/// The site's public address, as configured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Site {
    /// `TROVE_PUBLIC_URL` without a trailing slash: `https://trove.home.example`.
    public_url: String,
}

impl Site {
    /// The site at `public_url` (an `http://` or `https://` URL, checked by the configuration).
    pub fn new(public_url: &str) -> Self {
        Self { public_url: public_url.trim_end_matches('/').to_owned() }
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
