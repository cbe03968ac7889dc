//! The site a location is on: what grants hold for, and what provenance says a
//! value was read on.

/// The site a page is on, from its location: its scheme and host, lower case
/// (`https://shop.example`); `None` for a location with no host.
pub fn site(location: &str) -> Option<String> {
    let (scheme, rest) = location.trim().split_once("://")?;
    let host = rest.split(['/', '?', '#']).next().unwrap_or_default();
    (!host.is_empty() && !scheme.is_empty())
        .then(|| format!("{}://{}", scheme.to_lowercase(), host.to_lowercase()))
}
