//! Payment card numbers, found in any text a span would carry and masked: what the
//! page walk does for a card field's value (`familiar_page::mask`), done again at the
//! edge for a number a person typed into the chat or a tool handed back. A run of 13
//! to 19 digits, single spaces or dashes between them, that passes the Luhn check.

/// What replaces a secret value, or a card number, wherever it would be exported.
pub const MASKED: &str = "[masked]";

/// The fewest and most digits a card number has.
const DIGITS: std::ops::RangeInclusive<usize> = 13..=19;

/// `text` with every card number in it replaced by [`MASKED`].
pub fn card_numbers(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut copied = 0;
    let mut i = 0;
    while i < bytes.len() {
        let starts = bytes.get(i).is_some_and(u8::is_ascii_digit)
            && !(i > 0 && bytes.get(i - 1).is_some_and(u8::is_ascii_alphanumeric));
        if !starts {
            i += 1;
            continue;
        }
        let (end, digits) = digit_run(bytes, i);
        let alone = !bytes.get(end).is_some_and(u8::is_ascii_alphanumeric);
        if alone && DIGITS.contains(&digits.len()) && luhn(&digits) {
            out.push_str(text.get(copied..i).unwrap_or_default());
            out.push_str(MASKED);
            copied = end;
        }
        i = end.max(i + 1);
    }
    out.push_str(text.get(copied..).unwrap_or_default());
    out
}

/// Where the run of digits (single spaces or dashes between them) from `start` ends,
/// and its digits.
fn digit_run(bytes: &[u8], start: usize) -> (usize, Vec<u8>) {
    let mut digits = Vec::new();
    let mut end = start;
    let mut i = start;
    while let Some(&b) = bytes.get(i) {
        if b.is_ascii_digit() {
            digits.push(b - b'0');
            i += 1;
            end = i;
        } else if (b == b' ' || b == b'-') && bytes.get(i + 1).is_some_and(u8::is_ascii_digit) {
            i += 1;
        } else {
            break;
        }
    }
    (end, digits)
}

fn luhn(digits: &[u8]) -> bool {
    let sum: u32 = digits
        .iter()
        .rev()
        .enumerate()
        .map(|(i, &d)| {
            let d = u32::from(d);
            match i % 2 {
                1 if d * 2 > 9 => d * 2 - 9,
                1 => d * 2,
                _ => d,
            }
        })
        .sum();
    sum.is_multiple_of(10)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_card_number_is_masked_however_it_is_spaced_and_other_numbers_are_not() {
        for card in [
            "4111111111111111",
            "4111 1111 1111 1111",
            "4111-1111-1111-1111",
            "5555555555554444",
        ] {
            let text = format!("pay with {card}, thanks");
            assert_eq!(card_numbers(&text), format!("pay with {MASKED}, thanks"));
        }
        for kept in [
            "order 4111111111111112 (fails Luhn)",
            "call 555 0100",
            "id abc4111111111111111",
            "1795320964000 ms",
        ] {
            assert_eq!(card_numbers(kept), kept);
        }
    }
}
