//! Proxy rules: the environment's variables, NO_PROXY matching, explicit proxies, and credentials
//! that are never displayed.

use super::*;

fn origin(url: &str) -> Origin {
    let (https, rest) = url.split_once("://").unwrap();
    let (host, port) = rest.rsplit_once(':').unwrap();
    Origin {
        https: https == "https",
        host: host.to_string(),
        port: port.parse().unwrap(),
    }
}

fn env(pairs: &[(&str, &str)]) -> ProxyRules {
    let pairs: Vec<(String, String)> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    ProxyRules::from_lookup(move |name| {
        pairs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    })
    .unwrap()
}

fn proxied(rules: &ProxyRules, url: &str) -> Option<String> {
    rules
        .for_origin(&origin(url))
        .map(|p| p.display().to_string())
}

#[test]
fn each_scheme_uses_its_own_variable_lower_case_first_then_all_proxy() {
    let rules = env(&[
        ("HTTP_PROXY", "http://upper:1"),
        ("http_proxy", "http://lower:2"),
        ("HTTPS_PROXY", "http://tunnel:3"),
    ]);
    assert_eq!(
        proxied(&rules, "http://a.example:80").as_deref(),
        Some("http://lower:2")
    );
    assert_eq!(
        proxied(&rules, "https://a.example:443").as_deref(),
        Some("http://tunnel:3")
    );
    let fallback = env(&[("ALL_PROXY", "http://all:4"), ("https_proxy", "")]);
    assert_eq!(
        proxied(&fallback, "https://a.example:443").as_deref(),
        Some("http://all:4")
    );
    assert!(env(&[]).is_direct());
    assert!(
        env(&[("HTTP_PROXY", "socks5://x:1")]).is_direct(),
        "an unusable proxy URL is ignored"
    );
}

#[test]
fn no_proxy_matches_domains_subdomains_ports_ips_and_ranges() {
    let rules = env(&[
        ("HTTP_PROXY", "http://p:3128"),
        (
            "NO_PROXY",
            "example.com, .sub.test *.star.test,api.test:8080 10.0.0.0/8,[::1],192.168.1.7:81",
        ),
    ]);
    let bypassed = |url: &str| proxied(&rules, url).is_none();
    assert!(bypassed("http://example.com:80") && bypassed("http://a.b.example.com:80"));
    assert!(
        !bypassed("http://notexample.com:80"),
        "a suffix must start at a label"
    );
    assert!(
        bypassed("http://x.sub.test:80") && !bypassed("http://sub.test:80"),
        "a leading dot: subdomains only"
    );
    assert!(bypassed("http://x.star.test:80") && !bypassed("http://star.test:80"));
    assert!(
        bypassed("http://api.test:8080") && !bypassed("http://api.test:80"),
        "a port must match"
    );
    assert!(bypassed("http://10.20.30.40:80") && !bypassed("http://11.0.0.1:80"));
    assert!(bypassed("http://[::1]:80") && bypassed("http://::1:80"));
    assert!(bypassed("http://192.168.1.7:81") && !bypassed("http://192.168.1.7:80"));
    assert!(
        bypassed("http://example.com.:80"),
        "a trailing dot names the same host"
    );
    assert!(
        !bypassed("http://127.0.0.1:80"),
        "loopback is proxied unless listed, as with axios"
    );
    let everything = env(&[("https_proxy", "http://p:1"), ("no_proxy", "*")]);
    assert!(proxied(&everything, "https://a:443").is_none());
}

#[test]
fn an_explicit_proxy_ignores_no_proxy() {
    let rules = ProxyRules::fixed(Arc::new(ProxyServer::parse("http://p:1").unwrap()));
    assert!(
        proxied(&rules, "http://localhost:80").is_some()
            && proxied(&rules, "https://a:443").is_some()
    );
}

#[test]
fn credentials_become_basic_auth_and_are_never_displayed() {
    let proxy = ProxyServer::parse("http://us%40er:p%3Ass@Proxy.Example:3128").unwrap();
    assert_eq!(
        proxy.authorization(),
        Some(format!("Basic {}", base64(b"us@er:p:ss")).as_str())
    );
    assert_eq!(proxy.display(), "http://***@proxy.example:3128");
    assert_eq!(format!("{proxy:?}"), "http://***@proxy.example:3128");
    assert_eq!(
        ProxyServer::parse("http://[::1]:8").unwrap().display(),
        "http://[::1]:8"
    );
    assert_eq!(ProxyServer::parse("http://p").unwrap().port, 80);
    assert_eq!(ProxyServer::parse("http://p:").unwrap().port, 80);
    assert_eq!(ProxyServer::parse("http://p:65535").unwrap().port, 65535);
    assert_eq!(
        ProxyServer::parse("http://p").unwrap().authorization(),
        None
    );
}

#[test]
fn unusable_proxy_urls_are_rejected_without_echoing_them() {
    for (url, reason) in [
        ("https://p:1", "only http://"),
        ("http://", "not a valid URL"),
        ("http://u:secret@", "not a valid URL"),
        (
            "127.0.0.1:3128",
            "no scheme; write it in full as http://host:port",
        ),
        ("proxy.example", "no scheme"),
        ("http//u:secret@@:x", "no scheme"),
        ("http:/u:secret@p:1", "no scheme"),
        ("http://u:secret@@:x", "it has no host; write it as http://"),
        (
            "http://u:secret@127.0.0.1:99999",
            "a port must be 0 to 65535",
        ),
        (
            "http://u:secret@127.0.0.1:65536",
            "a port must be 0 to 65535",
        ),
        ("http://u:secret@127.0.0.1:-1", "a port must be 0 to 65535"),
        ("http://u:secret@127.0.0.1:1e3", "a port must be 0 to 65535"),
    ] {
        let error = ProxyServer::parse(url).expect_err(url);
        assert!(
            error.contains(reason) && !error.contains("secret"),
            "{url}: {error}"
        );
    }
}

#[test]
fn base64_pads_like_the_standard() {
    assert_eq!(base64(b"a"), "YQ==");
    assert_eq!(base64(b"ab"), "YWI=");
    assert_eq!(base64(b"abc"), "YWJj");
    assert_eq!(base64(b"user:pass"), "dXNlcjpwYXNz");
}

#[test]
fn an_environment_proxy_without_a_scheme_fails_naming_the_variable_not_the_value() {
    for (variable, value) in [
        ("http_proxy", "127.0.0.1:3128"),
        ("HTTPS_PROXY", "u:secret@proxy.example"),
        ("ALL_PROXY", "http//u:secret@@:x"),
    ] {
        let lookup = |name: &str| (name == variable).then(|| value.to_string());
        let error = ProxyRules::from_lookup(lookup).unwrap_err();
        assert!(
            error.starts_with(&format!(
                "The environment variable {variable} is not a usable proxy URL: it has no scheme"
            )),
            "{error}"
        );
        assert!(
            !error.contains("secret") && !error.contains(value),
            "{error}"
        );
    }
}
