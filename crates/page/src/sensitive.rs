//! Sensitive fields: passwords, payment cards' numbers, codes and expiry dates, and
//! one-time codes. The walk masks their values ([`mask`]) in everything it reads, and
//! the page tools never type into them: the person does.

/// What kind of secret a field holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sensitive {
    Password,
    Card,
    OneTimeCode,
}

impl Sensitive {
    /// The kind in words: "a password", …
    pub fn what(self) -> &'static str {
        match self {
            Self::Password => "a password",
            Self::Card => "a payment card's details",
            Self::OneTimeCode => "a one-time code",
        }
    }
}

/// Words in a field's name, id or `name` that mark it, in the order they are tried
/// (a "one-time password" is a one-time code), on the words run together.
const PHRASES: [(&str, Sensitive); 17] = [
    ("onetime", Sensitive::OneTimeCode),
    ("verificationcode", Sensitive::OneTimeCode),
    ("twofactor", Sensitive::OneTimeCode),
    ("smscode", Sensitive::OneTimeCode),
    ("authcode", Sensitive::OneTimeCode),
    ("cardnumber", Sensitive::Card),
    ("ccnumber", Sensitive::Card),
    ("ccnum", Sensitive::Card),
    ("creditcard", Sensitive::Card),
    ("debitcard", Sensitive::Card),
    ("securitycode", Sensitive::Card),
    ("cardverification", Sensitive::Card),
    ("ccexp", Sensitive::Card),
    ("cardexp", Sensitive::Card),
    ("password", Sensitive::Password),
    ("passwd", Sensitive::Password),
    ("passcode", Sensitive::Password),
];

/// Short words that mark a field only as whole words (`otp`, not "footprint").
const WORDS: [(&str, Sensitive); 8] = [
    ("otp", Sensitive::OneTimeCode),
    ("totp", Sensitive::OneTimeCode),
    ("2fa", Sensitive::OneTimeCode),
    ("cvv", Sensitive::Card),
    ("cvv2", Sensitive::Card),
    ("cvc", Sensitive::Card),
    ("csc", Sensitive::Card),
    ("pwd", Sensitive::Password),
];

/// Whether a text field is sensitive, and what it holds: by its `type`, its
/// `autocomplete` tokens, then the words of its name, id and `name`.
pub fn sensitive(kind: Option<&str>, autocomplete: Option<&str>, words: &str) -> Option<Sensitive> {
    if kind.is_some_and(|k| k.eq_ignore_ascii_case("password")) {
        return Some(Sensitive::Password);
    }
    let by_autocomplete = autocomplete
        .unwrap_or_default()
        .split_whitespace()
        .find_map(|token| match token.to_ascii_lowercase().as_str() {
            "current-password" | "new-password" => Some(Sensitive::Password),
            "one-time-code" => Some(Sensitive::OneTimeCode),
            "cc-number" | "cc-csc" | "cc-exp" | "cc-exp-month" | "cc-exp-year" => {
                Some(Sensitive::Card)
            }
            _ => None,
        });
    if by_autocomplete.is_some() {
        return by_autocomplete;
    }
    let tokens = tokens(words);
    let joined: String = tokens.concat();
    let phrase = PHRASES.iter().find(|(p, _)| joined.contains(p));
    let word = || WORDS.iter().find(|(w, _)| tokens.iter().any(|t| t == w));
    phrase.or_else(word).map(|(_, kind)| *kind)
}

/// What the model reads instead of a sensitive field's value.
pub fn mask(value: &str) -> String {
    match value.chars().count() {
        0 => "(empty)".into(),
        1 => "(sensitive: 1 character set)".into(),
        n => format!("(sensitive: {n} characters set)"),
    }
}

/// `words` split into lowercase words at spaces, punctuation and camelCase humps.
fn tokens(words: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut lower = false;
    for c in words.chars() {
        let boundary = !c.is_alphanumeric() || (c.is_uppercase() && lower);
        if boundary && !current.is_empty() {
            out.push(std::mem::take(&mut current));
        }
        if c.is_alphanumeric() {
            current.extend(c.to_lowercase());
        }
        lower = c.is_lowercase() || c.is_ascii_digit();
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_cards_and_one_time_codes_are_known_by_type_autocomplete_or_words() {
        use Sensitive::*;
        assert_eq!(sensitive(Some("PASSWORD"), None, "Secret"), Some(Password));
        assert_eq!(
            sensitive(Some("text"), Some("section-a new-password"), "x"),
            Some(Password)
        );
        assert_eq!(
            sensitive(None, Some("one-time-code"), ""),
            Some(OneTimeCode)
        );
        for card in [
            "cc-number",
            "cc-csc",
            "cc-exp",
            "cc-exp-month",
            "cc-exp-year",
        ] {
            assert_eq!(sensitive(None, Some(card), "Number"), Some(Card), "{card}");
        }
        assert_eq!(sensitive(None, None, "Card number"), Some(Card));
        assert_eq!(sensitive(None, None, "cardNumber"), Some(Card));
        assert_eq!(sensitive(None, None, "Security code (CVV)"), Some(Card));
        assert_eq!(sensitive(None, None, "billing_cvc"), Some(Card));
        assert_eq!(sensitive(None, None, "Enter the OTP"), Some(OneTimeCode));
        assert_eq!(
            sensitive(None, None, "One-time password"),
            Some(OneTimeCode)
        );
        assert_eq!(
            sensitive(None, None, "Verification code"),
            Some(OneTimeCode)
        );
        assert_eq!(sensitive(None, None, "Confirm password"), Some(Password));
    }

    #[test]
    fn ordinary_fields_are_not_sensitive_even_with_a_short_word_inside_a_longer_one() {
        for words in [
            "Email",
            "Footprint",
            "New todo",
            "Search",
            "Cardinal",
            "Name on card",
        ] {
            assert_eq!(
                sensitive(Some("text"), Some("email"), words),
                None,
                "{words}"
            );
        }
        assert_eq!(sensitive(None, Some("cc-name"), "Cardholder"), None);
    }

    #[test]
    fn a_mask_says_how_many_characters_are_set_and_nothing_else() {
        assert_eq!(mask(""), "(empty)");
        assert_eq!(mask("x"), "(sensitive: 1 character set)");
        assert_eq!(mask("hunter2"), "(sensitive: 7 characters set)");
    }
}
