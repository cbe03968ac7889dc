//! `colour`: colours as computed style gives them (`rgb(…)`, `rgba(…)`,
//! `transparent`), laid one over another, and how far apart two of them look (WCAG's
//! contrast ratio). Whether that is far enough to read is `visibility`'s call.

/// A colour with its alpha: channels 0–255, alpha 0–1.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rgba {
    pub r: f64,
    pub g: f64,
    pub b: f64,
    pub a: f64,
}

impl Rgba {
    pub const WHITE: Rgba = Rgba::opaque(255.0, 255.0, 255.0);
    pub const BLACK: Rgba = Rgba::opaque(0.0, 0.0, 0.0);
    pub const CLEAR: Rgba = Rgba {
        a: 0.0,
        ..Rgba::BLACK
    };

    pub const fn opaque(r: f64, g: f64, b: f64) -> Rgba {
        Rgba { r, g, b, a: 1.0 }
    }

    /// A computed colour: `rgb(r, g, b)`, `rgba(r, g, b, a)` (commas or spaces, `/`
    /// before the alpha, percentages) or `transparent`. Anything else (`color(…)`,
    /// `oklch(…)`, a system colour) is not read: `None`.
    pub fn parse(text: &str) -> Option<Rgba> {
        let text = text.trim();
        if text.eq_ignore_ascii_case("transparent") {
            return Some(Rgba::CLEAR);
        }
        let inner = text
            .strip_prefix("rgba(")
            .or_else(|| text.strip_prefix("rgb("))?
            .strip_suffix(')')?;
        let parts: Vec<&str> = inner
            .split([',', ' ', '/'])
            .filter(|p| !p.is_empty())
            .collect();
        let number = |part: Option<&&str>, full: f64| -> Option<f64> {
            let part = part?;
            match part.strip_suffix('%') {
                Some(percent) => percent.parse::<f64>().ok().map(|p| p / 100.0 * full),
                None => part.parse::<f64>().ok(),
            }
        };
        let channel = |i: usize| number(parts.get(i), 255.0).map(|c| c.clamp(0.0, 255.0));
        let a = match parts.get(3) {
            Some(_) => number(parts.get(3), 1.0)?.clamp(0.0, 1.0),
            None => 1.0,
        };
        (parts.len() <= 4).then_some(())?;
        Some(Rgba {
            r: channel(0)?,
            g: channel(1)?,
            b: channel(2)?,
            a,
        })
    }

    /// This colour with its alpha multiplied by `opacity`.
    pub fn faded(self, opacity: f64) -> Rgba {
        Rgba {
            a: (self.a * opacity).clamp(0.0, 1.0),
            ..self
        }
    }

    /// This colour laid over `below` (an opaque colour): what the eye gets.
    pub fn over(self, below: Rgba) -> Rgba {
        let mix = |top: f64, under: f64| top * self.a + under * (1.0 - self.a);
        Rgba::opaque(
            mix(self.r, below.r),
            mix(self.g, below.g),
            mix(self.b, below.b),
        )
    }

    /// WCAG's relative luminance of the colour's channels (its alpha aside), with
    /// sRGB's curve as the polynomial c²(0.8 + 0.2c): within 0.02 of the exact curve,
    /// and no `powf` in the frame build for a threshold's sake.
    fn luminance(self) -> f64 {
        let linear = |c: f64| {
            let c = c / 255.0;
            c * c * (0.8 + 0.2 * c)
        };
        0.2126 * linear(self.r) + 0.7152 * linear(self.g) + 0.0722 * linear(self.b)
    }
}

/// WCAG's contrast ratio of two opaque colours: 1 for the same colour, 21 for black on
/// white.
pub fn contrast(a: Rgba, b: Rgba) -> f64 {
    let (la, lb) = (a.luminance(), b.luminance());
    (la.max(lb) + 0.05) / (la.min(lb) + 0.05)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn computed_colours_are_read_in_every_form_chromium_and_firefox_give() {
        assert_eq!(Rgba::parse("rgb(255, 255, 255)"), Some(Rgba::WHITE));
        assert_eq!(
            Rgba::parse("rgba(0, 0, 0, 0)"),
            Some(Rgba::CLEAR),
            "color: transparent computes to this"
        );
        assert_eq!(Rgba::parse("transparent"), Some(Rgba::CLEAR));
        assert_eq!(
            Rgba::parse("rgb(10 20 30 / 50%)"),
            Some(Rgba {
                r: 10.0,
                g: 20.0,
                b: 30.0,
                a: 0.5
            })
        );
        assert_eq!(Rgba::parse("oklch(0.5 0.1 200)"), None);
        assert_eq!(Rgba::parse("rgb(1, 2)"), None);
        assert_eq!(Rgba::parse("rgba(1, 2, 3, 4, 5)"), None);
    }

    #[test]
    fn contrast_is_one_for_a_colour_against_itself_and_twenty_one_for_black_on_white() {
        assert!((contrast(Rgba::WHITE, Rgba::WHITE) - 1.0).abs() < 1e-9);
        assert!((contrast(Rgba::BLACK, Rgba::WHITE) - 21.0).abs() < 1e-9);
        // #777 on white: WCAG's exact curve gives 4.48.
        let grey = Rgba::opaque(119.0, 119.0, 119.0);
        assert!(
            (contrast(grey, Rgba::WHITE) - 4.48).abs() < 0.25,
            "{}",
            contrast(grey, Rgba::WHITE)
        );
        assert!((contrast(Rgba::WHITE, Rgba::BLACK) - 21.0).abs() < 1e-9);
    }

    #[test]
    fn a_faded_colour_over_a_background_comes_out_between_the_two() {
        let grey = Rgba::BLACK.faded(0.5).over(Rgba::WHITE);
        assert!((grey.r - 127.5).abs() < 1e-9, "{grey:?}");
        assert_eq!(Rgba::CLEAR.over(Rgba::WHITE), Rgba::WHITE);
    }
}
