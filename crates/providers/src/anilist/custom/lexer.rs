//! The crate's one GraphQL lexer: it turns a caller-written document into the few tokens the
//! checks need (punctuators, names, literals whose content does not matter) and refuses absurd
//! nesting before any recursive parsing starts, so a hostile document cannot exhaust the stack.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Token<'a> {
    Punctuator(char),
    Spread,
    Name(&'a str),
    /// Numbers and strings: only their position matters here.
    Literal,
}

impl Token<'_> {
    pub(super) fn describe(self) -> String {
        match self {
            Token::Punctuator(c) => format!("\"{c}\""),
            Token::Spread => "\"...\"".to_owned(),
            Token::Name(name) => format!("\"{name}\""),
            Token::Literal => "a literal value".to_owned(),
        }
    }
}

pub(super) fn tokenize(source: &str) -> Result<Vec<Token<'_>>, String> {
    let bytes = source.as_bytes();
    let mut tokens = Vec::new();
    let mut position = 0;
    while let Some(&byte) = bytes.get(position) {
        match byte {
            b' ' | b'\t' | b'\n' | b'\r' | b',' => position += 1,
            b'#' => {
                while bytes
                    .get(position)
                    .is_some_and(|&b| b != b'\n' && b != b'\r')
                {
                    position += 1;
                }
            }
            b'!' | b'$' | b'&' | b'(' | b')' | b':' | b'=' | b'@' | b'[' | b']' | b'{' | b'|'
            | b'}' => {
                tokens.push(Token::Punctuator(char::from(byte)));
                position += 1;
            }
            b'.' if source[position..].starts_with("...") => {
                tokens.push(Token::Spread);
                position += 3;
            }
            b'"' => {
                position = skip_string(source, position)?;
                tokens.push(Token::Literal);
            }
            b'-' | b'0'..=b'9' => {
                position += 1;
                while bytes
                    .get(position)
                    .is_some_and(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'+' | b'-'))
                {
                    position += 1;
                }
                tokens.push(Token::Literal);
            }
            b'_' | b'a'..=b'z' | b'A'..=b'Z' => {
                let start = position;
                while bytes
                    .get(position)
                    .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_')
                {
                    position += 1;
                }
                tokens.push(Token::Name(&source[start..position]));
            }
            0xEF if source[position..].starts_with('\u{feff}') => position += '\u{feff}'.len_utf8(),
            _ => {
                let unexpected = source[position..].chars().next().unwrap_or('?');
                return Err(format!(
                    "Unexpected character {unexpected:?} in the GraphQL document."
                ));
            }
        }
    }
    Ok(tokens)
}

/// Returns the position after the string starting at `start` (a `"` or `"""`).
fn skip_string(source: &str, start: usize) -> Result<usize, String> {
    let unterminated = || "Unterminated string in the GraphQL document.".to_owned();
    if source[start..].starts_with("\"\"\"") {
        let mut position = start + 3;
        loop {
            let rest = source.get(position..).ok_or_else(unterminated)?;
            if rest.starts_with("\\\"\"\"") {
                position += 4;
            } else if rest.starts_with("\"\"\"") {
                return Ok(position + 3);
            } else {
                position += rest.chars().next().ok_or_else(unterminated)?.len_utf8();
            }
        }
    }
    let mut chars = source[start + 1..].char_indices();
    while let Some((offset, c)) = chars.next() {
        match c {
            '"' => return Ok(start + 1 + offset + 1),
            '\\' => {
                chars.next();
            }
            '\n' | '\r' => break,
            _ => {}
        }
    }
    Err(unterminated())
}

/// Documents nesting deeper than this are refused: the parser recurses once per level, and a
/// hostile document must not be able to exhaust the stack.
pub(super) const MAX_NESTING: usize = 128;

pub(super) fn check_balanced(tokens: &[Token<'_>]) -> Result<(), String> {
    let mut open = Vec::new();
    for token in tokens {
        match token {
            Token::Punctuator(c @ ('{' | '(' | '[')) => {
                open.push(*c);
                if open.len() > MAX_NESTING {
                    return Err(format!(
                        "The GraphQL document nests deeper than {MAX_NESTING} levels."
                    ));
                }
            }
            Token::Punctuator(c @ ('}' | ')' | ']')) => {
                let expected = match c {
                    '}' => '{',
                    ')' => '(',
                    _ => '[',
                };
                if open.pop() != Some(expected) {
                    return Err(unbalanced());
                }
            }
            _ => {}
        }
    }
    if open.is_empty() {
        Ok(())
    } else {
        Err(unbalanced())
    }
}

fn unbalanced() -> String {
    "The GraphQL document has unbalanced braces, brackets or parentheses.".to_owned()
}

#[cfg(test)]
mod tests {
    use super::super::analyze_custom_document as analyze;
    use super::super::tests::keys;

    #[test]
    fn absurd_nesting_is_refused_before_parsing() {
        let deep = format!(
            "{{ Media(search: {}1{}) {{ id }} }}",
            "[".repeat(200),
            "]".repeat(200)
        );
        assert_eq!(
            analyze(&deep),
            Err(vec![
                "The GraphQL document nests deeper than 128 levels.".to_owned()
            ])
        );
        let fine = format!(
            "{{ Media(search: {}1{}) {{ id }} }}",
            "[".repeat(100),
            "]".repeat(100)
        );
        assert_eq!(keys(&fine), ["Media"]);
    }
}
