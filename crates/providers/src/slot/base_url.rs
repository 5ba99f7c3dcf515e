//! A slot's `baseUrl` by the WHATWG URL Standard, the rules of Node's `new URL` (decisions
//! D30): what it rejects (a port above 65535, a space in the host, …) is refused at
//! construction instead of being sent somewhere else, and the endpoint gets the normalized
//! `href`. The `url` crate implements that standard, so the rule holds without Node; the
//! transport owns the reading ([`whatwg_url`]), which proxy URLs follow too.

use anilink_transport::request::whatwg_url;

/// `url` parsed and normalized, or the TypeError message naming the rule. The message
/// describes what was wrong, never the URL itself: it may carry a password (D31).
pub(super) fn whatwg_base_url(url: &str, provider: &str) -> Result<String, String> {
    let rule = format!("{provider} baseUrl must be an absolute http:// or https:// URL");
    let parsed = whatwg_url(url).map_err(|rejected| format!("{rule} (received {rejected})."))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(format!("{rule} (received a URL with another scheme)."));
    }
    Ok(parsed.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    const REJECTED: &str = "anilist baseUrl must be an absolute http:// or https:// URL (received a string that new URL() rejects; a port must be 0 to 65535).";
    const OTHER_SCHEME: &str =
        "anilist baseUrl must be an absolute http:// or https:// URL (received a URL with another scheme).";

    fn parsed(url: &str) -> Result<String, String> {
        whatwg_base_url(url, "anilist")
    }

    #[test]
    fn accepted_urls_get_the_href_node_gives_them() {
        // Each pair: the input, and `new URL(input).href` as Node prints it.
        let cases = [
            ("http://127.0.0.1:65535", "http://127.0.0.1:65535/"),
            ("http://127.0.0.1:0", "http://127.0.0.1:0/"),
            ("http://127.0.0.1:/", "http://127.0.0.1/"),
            ("http://127.0.0.1:08080", "http://127.0.0.1:8080/"),
            ("http://[::1]:8080", "http://[::1]:8080/"),
            (
                "https://user:pw@example.com",
                "https://user:pw@example.com/",
            ),
            ("http://example.com/pa th", "http://example.com/pa%20th"),
            ("HTTP://EXAMPLE.COM", "http://example.com/"),
            ("http://例え.jp", "http://xn--r8jz45g.jp/"),
            ("https://example.com:443", "https://example.com/"),
            ("http://example.com:80/v2", "http://example.com/v2"),
            (
                "  https://graphql.anilist.co\t",
                "https://graphql.anilist.co/",
            ),
            (
                "https://api.myanimelist.net/v2/",
                "https://api.myanimelist.net/v2/",
            ),
            ("http://0x7f.1/", "http://127.0.0.1/"),
        ];
        for (input, href) in cases {
            assert_eq!(parsed(input).as_deref(), Ok(href), "{input}");
        }
    }

    #[test]
    fn hosts_are_normalized_as_node_normalizes_them() {
        // IDNA, full-width and percent-encoded hosts, IPv4 shorthands and IPv6 forms, each with
        // the `href` Node gives it.
        let cases = [
            ("http://faß.de", "http://xn--fa-hia.de/"),
            ("http://💩.la", "http://xn--ls8h.la/"),
            ("http://ｅｘａｍｐｌｅ.com", "http://example.com/"),
            ("http://ex%41mple.com", "http://example.com/"),
            ("http://1.2.3", "http://1.2.0.3/"),
            ("http://0177.0.0.1", "http://127.0.0.1/"),
            ("http://[::ffff:1.2.3.4]", "http://[::ffff:102:304]/"),
            ("http:example.com", "http://example.com/"),
            ("https:\\\\example.com", "https://example.com/"),
            ("http://a@b@c", "http://a%40b@c/"),
            ("http://EXAMPLE.com:0080/%7e", "http://example.com/%7e"),
            ("http://a/../../b", "http://a/b"),
            ("https://example.com?x#y", "https://example.com/?x#y"),
        ];
        for (input, href) in cases {
            assert_eq!(parsed(input).as_deref(), Ok(href), "{input}");
        }
        for input in [
            "http://xn--a.com",
            "http://%zz",
            "http://0x100000000",
            "http://999999999999",
            "http://[1::2::3]",
            "http://exa%00mple.com",
            "http://1.2.3.09",
            "http://host:port",
            "http://a:b@",
            "http://a\0b",
        ] {
            assert_eq!(parsed(input), Err(REJECTED.to_string()), "{input:?}");
        }
    }

    #[test]
    fn what_new_url_rejects_is_refused_with_the_port_rule() {
        let rejected = [
            "http://127.0.0.1:65536",
            "http://127.0.0.1:99999/v2",
            "http://[::1",
            "http://exa mple.com",
            "not a url",
            "http://",
            "http://1.2.3.4.5",
            "http://256.1.1.1",
            "graphql.anilist.co",
            "",
        ];
        for input in rejected {
            assert_eq!(parsed(input), Err(REJECTED.to_string()), "{input:?}");
        }
    }

    #[test]
    fn another_scheme_is_refused_by_its_own_message() {
        for input in [
            "ftp://example.com",
            "file:///etc/passwd",
            "ws://example.com",
            "mailto:a@b.c",
        ] {
            assert_eq!(parsed(input), Err(OTHER_SCHEME.to_string()), "{input}");
        }
    }

    #[test]
    fn a_password_in_a_refused_url_is_never_echoed() {
        for input in [
            "http://u:sEcReT@127.0.0.1:99999",
            "ftp://u:sEcReT@example.com",
        ] {
            let message = parsed(input).unwrap_err();
            assert!(!message.contains("sEcReT"), "{message}");
        }
    }

    #[test]
    fn the_provider_names_the_rule() {
        let message = whatwg_base_url("ftp://x", "mal").unwrap_err();
        assert!(message.starts_with("mal baseUrl must be"), "{message}");
    }
}
