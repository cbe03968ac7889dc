//! Origins as the browser writes them (`event.origin`): what an iframe tool's `origin`
//! is normalised to before a message is posted to, or taken from, its window.

/// Why an origin was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OriginError {
    #[error(
        "`null` is a sandboxed frame's opaque origin, which cannot be posted to: answer it \
         through a MessagePort (see ToolConfig.handler)"
    )]
    Opaque,
    #[error("expected an origin such as \"https://game.example\" (or \"*\" for any), got \"{0}\"")]
    Malformed(String),
    #[error("an origin is a scheme, host and port only, with no {part}: got \"{origin}\"")]
    Extra { part: &'static str, origin: String },
}

/// An origin as the browser serializes it (`event.origin`): scheme and host in lower
/// case, the scheme's default port dropped, no trailing `/`. `"*"` (any origin) is
/// kept as it is: it is only ever asked for by name.
pub fn normalize_origin(text: &str) -> Result<String, OriginError> {
    let text = text.trim();
    if text == "*" {
        return Ok(text.to_owned());
    }
    if text.eq_ignore_ascii_case("null") {
        return Err(OriginError::Opaque);
    }
    let malformed = || OriginError::Malformed(text.to_owned());
    let (scheme, rest) = text.split_once("://").ok_or_else(malformed)?;
    let scheme = scheme.to_ascii_lowercase();
    let scheme_ok = scheme.starts_with(|c: char| c.is_ascii_lowercase())
        && scheme
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "+-.".contains(c));
    if !scheme_ok {
        return Err(malformed());
    }
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    let extra = |part| OriginError::Extra {
        part,
        origin: text.to_owned(),
    };
    if tail.contains('?') {
        return Err(extra("query"));
    }
    if tail.contains('#') {
        return Err(extra("fragment"));
    }
    if !tail.is_empty() && tail != "/" {
        return Err(extra("path"));
    }
    if authority.contains('@') {
        return Err(extra("user name or password"));
    }
    let (host, port) = match authority.rfind(':') {
        Some(colon) if !authority.get(colon..).is_some_and(|p| p.contains(']')) => {
            let (host, port) = authority.split_at(colon);
            (host, port.get(1..).unwrap_or_default())
        }
        _ => (authority, ""),
    };
    let host_ok = !host.is_empty()
        && host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-._[]:".contains(c));
    if !host_ok {
        return Err(malformed());
    }
    let port = match port {
        "" => None,
        digits => Some(digits.parse::<u16>().map_err(|_| malformed())?),
    };
    let default = match scheme.as_str() {
        "http" | "ws" => Some(80),
        "https" | "wss" => Some(443),
        _ => None,
    };
    let host = host.to_ascii_lowercase();
    Ok(match port {
        Some(port) if Some(port) != default => format!("{scheme}://{host}:{port}"),
        _ => format!("{scheme}://{host}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_are_normalised_as_the_browser_serializes_them() {
        let same = [
            "https://game.example",
            "https://game.example/",
            "HTTPS://Game.Example",
            "https://game.example:443",
            " https://game.example:443/ ",
        ];
        for origin in same {
            assert_eq!(
                normalize_origin(origin).as_deref(),
                Ok("https://game.example"),
                "{origin}"
            );
        }
        assert_eq!(
            normalize_origin("http://localhost:8080/").as_deref(),
            Ok("http://localhost:8080")
        );
        assert_eq!(
            normalize_origin("http://127.0.0.1:80").as_deref(),
            Ok("http://127.0.0.1")
        );
        assert_eq!(
            normalize_origin("http://[::1]:8443").as_deref(),
            Ok("http://[::1]:8443")
        );
        assert_eq!(
            normalize_origin("chrome-extension://abcdef").as_deref(),
            Ok("chrome-extension://abcdef")
        );
        assert_eq!(normalize_origin("*").as_deref(), Ok("*"));
        assert_eq!(normalize_origin("null"), Err(OriginError::Opaque));
        for bad in [
            "",
            "game.example",
            "https://",
            "https://game.example:99999",
            "https://game example",
            "1https://game.example",
        ] {
            assert!(
                matches!(normalize_origin(bad), Err(OriginError::Malformed(_))),
                "{bad}"
            );
        }
        for (bad, part) in [
            ("https://game.example/play", "path"),
            ("https://game.example/?x=1", "query"),
            ("https://game.example#top", "fragment"),
            ("https://me@game.example", "user name or password"),
        ] {
            assert!(
                matches!(normalize_origin(bad), Err(OriginError::Extra { part: p, .. }) if p == part),
                "{bad}"
            );
        }
    }
}
