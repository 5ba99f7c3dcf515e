//! What a MyAnimeList write tells the response cache (transport.md 1.12): it drops every cached
//! `GET` of the resource it names, whatever the token, and nothing when it names none.

use anilink_transport::cache::{CacheHint, Invalidates};

/// The hint of a write to `url`.
pub fn write_cache_hint(url: &str) -> CacheHint {
    match resource_prefix(url) {
        Some(prefix) => CacheHint::Write(Invalidates::GetsUnder(prefix)),
        None => CacheHint::None,
    }
}

/// The resource a write changed: its URL without query, fragment, trailing slash and one
/// trailing `my_list_status` segment. None unless that ends in a numeric id (a write to a
/// collection says nothing precise about which cached reads it changed).
fn resource_prefix(url: &str) -> Option<String> {
    let url = url
        .split(['#', '?'])
        .next()
        .unwrap_or(url)
        .trim_end_matches('/');
    let url = url.strip_suffix("/my_list_status").unwrap_or(url);
    let (_, last) = url.rsplit_once('/')?;
    (!last.is_empty() && last.bytes().all(|b| b.is_ascii_digit())).then(|| url.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prefix_needs_a_numeric_last_segment() {
        assert_eq!(
            resource_prefix("http://h/v2/anime/21/my_list_status").as_deref(),
            Some("http://h/v2/anime/21")
        );
        assert_eq!(
            resource_prefix("http://h/v2/manga/7/?a=1#f").as_deref(),
            Some("http://h/v2/manga/7")
        );
        assert_eq!(resource_prefix("http://h/v2/users/@me"), None);
        assert_eq!(
            resource_prefix("http://h/v2/anime/abc/my_list_status"),
            None
        );
        assert_eq!(
            write_cache_hint("http://api.test/v2/anime/21/my_list_status?x=1"),
            CacheHint::Write(Invalidates::GetsUnder("http://api.test/v2/anime/21".into()))
        );
        assert_eq!(
            write_cache_hint("http://h/v2/users/@me"),
            CacheHint::None,
            "a write naming no resource drops nothing"
        );
    }
}
