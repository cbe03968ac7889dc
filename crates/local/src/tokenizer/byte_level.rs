//! GPT-2's byte-level alphabet: the vocabulary spells every byte as a printable code
//! point (`Ġ` for a space, `Ċ` for a newline), so a token's text must be mapped back
//! to the bytes it stands for. Printable Latin-1 bytes stand for themselves; the 68
//! others take the code points from U+0100 on, in byte order.

/// Whether a byte is spelled as itself.
const fn is_printable(b: u8) -> bool {
    matches!(b, b'!'..=b'~' | 0xA1..=0xAC | 0xAE..=0xFF)
}

/// Code point of each byte (`CODES[b]`), and the byte of each code point below
/// U+0144 (`BYTES[c]`, -1 when it spells none): built at compile time.
const TABLES: ([u32; 256], [i16; 0x144]) = {
    let mut codes = [0u32; 256];
    let mut bytes = [-1i16; 0x144];
    let mut next = 0x100u32;
    let mut b = 0usize;
    while b < 256 {
        let code = if is_printable(b as u8) {
            b as u32
        } else {
            next += 1;
            next - 1
        };
        codes[b] = code;
        bytes[code as usize] = b as i16;
        b += 1;
    }
    (codes, bytes)
};

/// The code point that spells `byte` in the vocabulary.
pub fn char_of(byte: u8) -> char {
    char::from_u32(TABLES.0[usize::from(byte)]).unwrap_or('\u{FFFD}')
}

/// The byte a vocabulary code point spells, if it spells one.
pub fn byte_of(c: char) -> Option<u8> {
    let b = *TABLES.1.get(c as usize)?;
    u8::try_from(b).ok()
}

/// The bytes a token's text spells, or `None` when a code point is outside the
/// byte-level alphabet (such a token is not byte-level: its text is taken as is).
pub fn decode(text: &str) -> Option<Vec<u8>> {
    text.chars().map(byte_of).collect()
}

/// A byte string spelled in the vocabulary's alphabet.
pub fn encode(bytes: &[u8]) -> String {
    bytes.iter().map(|&b| char_of(b)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_byte_round_trips_through_its_code_point() {
        for b in 0..=255u8 {
            assert_eq!(byte_of(char_of(b)), Some(b));
        }
        assert_eq!(char_of(b' '), 'Ġ');
        assert_eq!(char_of(b'\n'), 'Ċ');
        assert_eq!(byte_of('中'), None);
    }
}
