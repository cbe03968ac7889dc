//! Recognising secrets that must never be in a web page: provider API keys and
//! Supabase service keys, however they are dressed (any auth scheme, any case, inside
//! Basic credentials, with zero-width characters spliced in). Used on every value a
//! user may type into a header or a key field.

/// The provider key shapes `scripts/scan-secrets.py` also reads: `PREFIX BODY NAME` a
/// line; this check reads the prefixes.
const KEY_SHAPES: &str = include_str!("key_shapes.txt");

/// The key prefixes of [`KEY_SHAPES`]: one written in lower case matches in any case
/// (`Bearer SK-…`), one with capitals as written (`AIza`, `AKIA`; `Asia/Tokyo` is no
/// key).
fn prefixes() -> impl Iterator<Item = &'static str> {
    KEY_SHAPES
        .lines()
        .filter(|line| !line.starts_with('#'))
        .filter_map(|line| line.split_whitespace().next())
}

/// Whether `piece` (lower-cased as `lower`) starts with a key prefix.
fn starts_with_key(piece: &str, lower: &str) -> bool {
    prefixes().any(|prefix| {
        if prefix.chars().any(|c| c.is_ascii_uppercase()) {
            piece.starts_with(prefix)
        } else {
            lower.starts_with(prefix)
        }
    })
}

/// Whether `value` holds a provider API key or a service-role key anywhere in it.
pub fn holds_secret(value: &str) -> bool {
    let cleaned: String = value
        .chars()
        .filter(|c| {
            !matches!(
                c,
                '\u{200B}'..='\u{200D}' | '\u{2060}' | '\u{FEFF}' | '\u{00AD}'
            )
        })
        .collect();
    cleaned
        .split(|c: char| c.is_whitespace() || ",;\"'".contains(c))
        .filter(|part| !part.is_empty())
        .any(|part| part_is_secret(part, 0))
}

fn part_is_secret(part: &str, depth: u8) -> bool {
    // `user:key` (as Basic credentials decode to) and `key=value` pairs.
    let pieces = part.split([':', '=']).filter(|p| !p.is_empty());
    for piece in pieces {
        if starts_with_key(piece, &piece.to_ascii_lowercase()) {
            return true;
        }
    }
    if jwt_role(part).as_deref() == Some("service_role") {
        return true;
    }
    // Basic credentials and other base64-wrapped values: look inside, once.
    depth == 0
        && part.len() >= 8
        && base64(part)
            .and_then(|bytes| String::from_utf8(bytes).ok())
            .is_some_and(|inner| holds_secret_inner(&inner))
}

fn holds_secret_inner(value: &str) -> bool {
    value
        .split(|c: char| c.is_whitespace() || ",;".contains(c))
        .filter(|part| !part.is_empty())
        .any(|part| part_is_secret(part, 1))
}

/// The `role` claim of a JWT, read without checking the signature (the server does).
pub fn jwt_role(token: &str) -> Option<String> {
    let mut parts = token.split('.');
    let (_, payload, _) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() {
        return None;
    }
    let claims: serde_json::Value = crate::base::json::value_from_bytes(&base64(payload)?).ok()?;
    claims.get("role")?.as_str().map(str::to_owned)
}

/// Decodes base64 or base64url, padded or not; `None` for anything else.
fn base64(text: &str) -> Option<Vec<u8>> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'-' | b'+' => Some(62),
        b'_' | b'/' => Some(63),
        _ => None,
    };
    let text = text.trim_end_matches('=').as_bytes();
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let mut buffer = 0u32;
    let mut bits = 0;
    for &c in text {
        buffer = (buffer << 6) | u32::from(value(c)?);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((buffer >> bits) as u8);
            buffer &= (1 << bits) - 1;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b64(text: &str) -> String {
        const ALPHABET: &[u8; 64] =
            b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
        let bytes = text.as_bytes();
        let mut out = String::new();
        for chunk in bytes.chunks(3) {
            let n =
                chunk.iter().fold(0u32, |n, &b| (n << 8) | u32::from(b)) << (8 * (3 - chunk.len()));
            for i in 0..=chunk.len() {
                out.push(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize] as char);
            }
        }
        out
    }

    fn jwt(claims: &str) -> String {
        format!("{}.{}.sig", b64(r#"{"alg":"HS256"}"#), b64(claims))
    }

    #[test]
    fn keys_are_found_in_any_scheme_case_or_disguise() {
        for value in [
            "sk-proj-abc",
            "Bearer sk-proj-abc",
            "bearer sk-proj-abc",
            "BEARER SK-PROJ-ABC",
            "Token sk-ant-api03-xyz",
            &format!("Basic {}", b64("user:sk-proj-abc")),
            "s\u{200B}k-proj-abc",
            "sb_secret_abcdef",
            "Bearer sb_secret_abcdef",
            "AIzaSyA-123",
            "key=gsk_live_1",
            &jwt(r#"{"role":"service_role","iss":"supabase"}"#),
            &format!("Bearer {}", jwt(r#"{"role":"service_role"}"#)),
        ] {
            assert!(holds_secret(value), "{value:?} passed");
        }
    }

    #[test]
    fn github_google_oauth_and_hex_keys_are_found() {
        for value in [
            "ghp_abc",
            "token gho_abc",
            "Bearer github_pat_11ABC",
            "Bearer ya29.a0AfH6",
            "sk-0123456789abcdef",
            "Authorization=xoxb-123",
            "AKIAABCDEF",
        ] {
            assert!(holds_secret(value), "{value:?} passed");
        }
    }

    #[test]
    fn every_shape_of_the_shared_list_is_refused() {
        let shapes: Vec<&str> = prefixes().collect();
        assert!(shapes.len() >= 20, "{shapes:?}");
        for prefix in shapes {
            let value = format!("Bearer {prefix}abc123");
            assert!(holds_secret(&value), "{value:?} passed");
        }
    }

    #[test]
    fn proxy_tokens_and_anon_keys_pass() {
        for value in [
            "team-42",
            "Bearer my-proxy-token",
            &jwt(r#"{"role":"anon"}"#),
            "sb_publishable_abc",
            &format!("Basic {}", b64("player:hunter2")),
            "task-skeleton",
            "Asia/Tokyo",
            "asia-east1",
            "region=asia",
        ] {
            assert!(!holds_secret(value), "{value:?} refused");
        }
    }
}
