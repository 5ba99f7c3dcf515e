//! Header numbers read the way JavaScript's `Number(text)` reads them.
//!
//! The package this crate replaces passed `x-ratelimit-*` and `Retry-After` values through
//! `Number()`, so what counts as a usable value is defined by that conversion, not by HTTP:
//! `" 1e1 "` is ten seconds, `""` is zero, `"0x10"` is sixteen, `"1_000"` and `"12abc"` are
//! unusable. Rust's `f64::from_str` disagrees on several of these (it accepts `"inf"` and
//! `"NaN"`, rejects `"0x10"` and surrounding whitespace), so the grammar is checked here and only
//! plain decimal text reaches the standard parser, which rounds correctly just as JavaScript does.

/// The value JavaScript's `Number(text)` gives, or `None` where it gives `NaN`.
pub fn js_number(text: &str) -> Option<f64> {
    let text = trim_js_whitespace(text);
    if text.is_empty() {
        return Some(0.0);
    }
    // Rate-limit headers are small whole numbers, read on every response: up to 15 digits are
    // exact in an f64, so they need neither the grammar check nor the float parser.
    if text.len() <= 15 && text.bytes().all(|b| b.is_ascii_digit()) {
        return Some(text.bytes().fold(0u64, |n, b| n * 10 + u64::from(b - b'0')) as f64);
    }
    if let Some(value) = radix_literal(text) {
        return value;
    }
    let (negative, unsigned) = match text.as_bytes()[0] {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    let magnitude = if unsigned == "Infinity" {
        f64::INFINITY
    } else if is_decimal_literal(unsigned) {
        unsigned.parse::<f64>().ok()?
    } else {
        return None;
    };
    Some(if negative { -magnitude } else { magnitude })
}

/// Strips what JavaScript counts as white space or a line terminator at either end: Unicode
/// `White_Space` except U+0085 (which JavaScript does not trim), plus the byte-order mark U+FEFF.
pub(crate) fn trim_js_whitespace(text: &str) -> &str {
    text.trim_matches(|c: char| (c.is_whitespace() && c != '\u{85}') || c == '\u{FEFF}')
}

/// A non-negative number of milliseconds as a whole count: rounded to the nearest millisecond
/// (so float noise such as `1.1 * 1000 = 1100.0000000000002` does not add a millisecond),
/// negative values as 0, values beyond `u64` saturated.
pub(crate) fn whole_ms(milliseconds: f64) -> u64 {
    // `as` saturates out-of-range floats and maps NaN to 0, which is the clamp wanted here.
    milliseconds.round() as u64
}

/// `0x`/`0o`/`0b` literals (either letter case, no sign, no separators). `None` when the text
/// has no such prefix; `Some(None)` when it has one but is not a valid literal.
fn radix_literal(text: &str) -> Option<Option<f64>> {
    let bytes = text.as_bytes();
    if bytes.len() < 2 || bytes[0] != b'0' {
        return None;
    }
    let bits_per_digit = match bytes[1] {
        b'x' | b'X' => 4,
        b'o' | b'O' => 3,
        b'b' | b'B' => 1,
        _ => return None,
    };
    Some(power_of_two_radix_value(&text[2..], bits_per_digit))
}

/// The correctly rounded value of digits in base `2^bits_per_digit`, for any length.
///
/// Digits are gathered into a 128-bit accumulator; once it is nearly full, further digits only
/// raise the binary exponent and mark whether anything non-zero was dropped (the sticky bit).
/// Folding the sticky bit into the lowest of 64 kept bits lets the `u64 -> f64` conversion round
/// to nearest-even exactly as if every digit had been kept.
fn power_of_two_radix_value(digits: &str, bits_per_digit: u32) -> Option<f64> {
    if digits.is_empty() {
        return None;
    }
    let radix = 1u32 << bits_per_digit;
    let mut accumulator: u128 = 0;
    let mut exponent: i32 = 0;
    let mut sticky = false;
    for digit_char in digits.chars() {
        let digit = digit_char.to_digit(radix)?;
        if accumulator < 1u128 << 120 {
            accumulator = (accumulator << bits_per_digit) | u128::from(digit);
        } else {
            sticky |= digit != 0;
            exponent = exponent.saturating_add(bits_per_digit as i32);
        }
    }
    let significant_bits = 128 - accumulator.leading_zeros();
    if significant_bits > 64 {
        let dropped = significant_bits - 64;
        sticky |= accumulator & ((1u128 << dropped) - 1) != 0;
        accumulator >>= dropped;
        exponent = exponent.saturating_add(dropped as i32);
    }
    // The accumulator now fits in 64 bits; the cast cannot truncate.
    let kept = accumulator as u64 | u64::from(sticky);
    Some(kept as f64 * 2f64.powi(exponent))
}

/// JavaScript's unsigned decimal literal: digits with an optional `.` (at least one digit on
/// either side), then an optional exponent `e`/`E`, optional sign, at least one digit.
fn is_decimal_literal(text: &str) -> bool {
    let bytes = text.as_bytes();
    let count_digits = |from: usize| {
        bytes[from..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count()
    };
    let integer_digits = count_digits(0);
    let mut position = integer_digits;
    let mut fraction_digits = 0;
    if bytes.get(position) == Some(&b'.') {
        fraction_digits = count_digits(position + 1);
        position += 1 + fraction_digits;
    }
    if integer_digits + fraction_digits == 0 {
        return false;
    }
    if matches!(bytes.get(position), Some(b'e' | b'E')) {
        position += 1;
        if matches!(bytes.get(position), Some(b'+' | b'-')) {
            position += 1;
        }
        let exponent_digits = count_digits(position);
        if exponent_digits == 0 {
            return false;
        }
        position += exponent_digits;
    }
    position == bytes.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_number(text: &str, expected: f64) {
        let actual = js_number(text);
        assert_eq!(actual, Some(expected), "Number({text:?})");
        if let Some(value) = actual {
            assert_eq!(
                value.is_sign_negative(),
                expected.is_sign_negative(),
                "sign of Number({text:?})"
            );
        }
    }

    #[test]
    fn decimal_forms_match_javascript() {
        assert_number("42", 42.0);
        assert_number("1.5", 1.5);
        assert_number(".5", 0.5);
        assert_number("5.", 5.0);
        assert_number("+7", 7.0);
        assert_number("-7.25", -7.25);
        assert_number("-0", -0.0);
        assert_number("1e1", 10.0);
        assert_number("1E+2", 100.0);
        assert_number("2.5e-3", 0.0025);
        assert_number("-.5e1", -5.0);
        assert_number("007", 7.0);
        assert_number("1e400", f64::INFINITY);
        assert_number("1700000000", 1_700_000_000.0);
    }

    #[test]
    fn whole_numbers_read_directly_agree_with_the_float_parser_on_both_sides_of_the_cut() {
        for text in [
            "0",
            "000",
            "9",
            "90",
            "999999999999999",
            "1000000000000000",
            "9007199254740993",
            "12345678901234567890",
        ] {
            assert_eq!(
                js_number(text),
                text.parse::<f64>().ok(),
                "Number({text:?})"
            );
        }
    }

    #[test]
    fn empty_and_whitespace_only_are_zero() {
        assert_number("", 0.0);
        assert_number("   ", 0.0);
        assert_number("\t\n\u{A0}\u{FEFF}\u{3000}", 0.0);
    }

    #[test]
    fn surrounding_javascript_whitespace_is_trimmed() {
        assert_number("  12 ", 12.0);
        assert_number("\u{FEFF}3\u{2028}", 3.0);
        assert_number("\u{2003}4\u{205F}", 4.0);
    }

    #[test]
    fn next_line_is_not_javascript_whitespace() {
        assert_eq!(js_number("\u{85}1"), None);
    }

    #[test]
    fn infinity_is_spelled_exactly() {
        assert_number("Infinity", f64::INFINITY);
        assert_number("+Infinity", f64::INFINITY);
        assert_number("-Infinity", f64::NEG_INFINITY);
        for text in ["infinity", "INFINITY", "inf", "-inf", "NaN", "nan"] {
            assert_eq!(js_number(text), None, "Number({text:?})");
        }
    }

    #[test]
    fn radix_prefixes_match_javascript() {
        assert_number("0x10", 16.0);
        assert_number("0XfF", 255.0);
        assert_number("0o17", 15.0);
        assert_number("0O7", 7.0);
        assert_number("0b101", 5.0);
        assert_number("0B0", 0.0);
        assert_number(" 0x1f ", 31.0);
    }

    #[test]
    fn radix_literals_round_to_nearest_even_beyond_53_bits() {
        // 2^53 + 1 lies halfway between 2^53 and 2^53 + 2: ties go to the even 2^53.
        assert_number("0x20000000000001", 9_007_199_254_740_992.0);
        // 2^53 + 3 is halfway between 2^53 + 2 and 2^53 + 4: ties go to the even 2^53 + 4.
        assert_number("0x20000000000003", 9_007_199_254_740_996.0);
        // A set bit far below the kept 64 bits still breaks the tie upwards.
        let just_above_half = format!("0x20000000000001{}1", "0".repeat(40));
        let expected = 9_007_199_254_740_994.0 * 2f64.powi(164);
        assert_number(&just_above_half, expected);
        assert_number(&format!("0x{}", "f".repeat(300)), f64::INFINITY);
    }

    #[test]
    fn malformed_text_is_nan() {
        for text in [
            "abc",
            "12abc",
            "1 2",
            "1_000",
            "1,5",
            ".",
            "+",
            "-",
            "e5",
            "1e",
            "1e+",
            "++1",
            "+-1",
            "0x",
            "0xg",
            "-0x10",
            "+0x10",
            "0x1.5",
            "0b2",
            "0o8",
            "00x1",
            "1..2",
            "Infinityx",
        ] {
            assert_eq!(js_number(text), None, "Number({text:?})");
        }
    }

    #[test]
    fn whole_ms_rounds_and_clamps() {
        assert_eq!(whole_ms(1.1 * 1000.0), 1100);
        assert_eq!(whole_ms(1.5), 2);
        assert_eq!(whole_ms(-30.0), 0);
        assert_eq!(whole_ms(f64::INFINITY), u64::MAX);
        assert_eq!(whole_ms(f64::NAN), 0);
    }
}
