//! Percent-encoding of path segments and query values (RFC 3986).
//!
//! Unreserved characters pass through everywhere. Beyond them, a path segment keeps `@` so the
//! own-account alias reads `/users/@me` as MAL documents it, and a query value keeps `,` so a
//! field list reads `fields=id,title` as MAL documents it (both are legal there unescaped).
//! Everything else, including `/` in a user name and spaces, is escaped, so no caller value
//! can change the shape of the URL.

/// Encode one path segment. A segment of dots only (`.`, `..`) is escaped whole: left as it
/// is, it would walk the path up instead of naming a user (decisions D30).
pub(super) fn path_segment(text: &str) -> String {
    if !text.is_empty() && text.bytes().all(|byte| byte == b'.') {
        return "%2E".repeat(text.len());
    }
    percent_encode(text, b"@")
}

/// Encode one query value.
pub(super) fn query_value(text: &str) -> String {
    percent_encode(text, b",")
}

fn percent_encode(text: &str, also_literal: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let mut encoded = String::with_capacity(text.len());
    for &byte in text.as_bytes() {
        let unreserved = byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~');
        if unreserved || also_literal.contains(&byte) {
            encoded.push(char::from(byte));
        } else {
            encoded.push('%');
            encoded.push(char::from(HEX[usize::from(byte >> 4)]));
            encoded.push(char::from(HEX[usize::from(byte & 0x0F)]));
        }
    }
    encoded
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_segments_escape_separators_but_keep_the_own_account_alias() {
        assert_eq!(path_segment("@me"), "@me");
        assert_eq!(path_segment("a/b?c#d"), "a%2Fb%3Fc%23d");
        assert_eq!(path_segment("na me"), "na%20me");
        assert_eq!(path_segment("ünï"), "%C3%BCn%C3%AF");
        assert_eq!(path_segment("A-z_0.9~"), "A-z_0.9~");
    }

    #[test]
    fn dot_segments_are_escaped_so_they_cannot_walk_the_path() {
        assert_eq!(path_segment("."), "%2E");
        assert_eq!(path_segment(".."), "%2E%2E");
        assert_eq!(path_segment("..."), "%2E%2E%2E");
        assert_eq!(path_segment("a..b"), "a..b");
        assert_eq!(path_segment(".hidden"), ".hidden");
    }

    #[test]
    fn query_values_keep_commas_and_escape_everything_that_could_split_the_query() {
        assert_eq!(query_value("id,title"), "id,title");
        assert_eq!(query_value("a&b=c+d"), "a%26b%3Dc%2Bd");
        assert_eq!(
            query_value("my_list_status{score}"),
            "my_list_status%7Bscore%7D"
        );
        assert_eq!(query_value("one piece"), "one%20piece");
        assert_eq!(query_value("@"), "%40");
    }
}
