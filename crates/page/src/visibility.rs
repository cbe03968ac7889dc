//! Which elements a person cannot see: their text is left out of what the model reads,
//! so instructions hidden in a page (a `display:none` block, white text pushed
//! off-screen, a 1-pixel box) never reach it as page content.

/// What the browser says of how an element is drawn (the DOM adapter measures it).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Appearance {
    /// Computed `display: none`, or the `hidden` attribute.
    pub display_none: bool,
    /// Computed `visibility: hidden` or `collapse`.
    pub visibility_hidden: bool,
    /// `aria-hidden="true"`.
    pub aria_hidden: bool,
    /// Computed `opacity: 0`.
    pub transparent: bool,
    /// Its box in page coordinates (scroll added), CSS pixels.
    pub left: f64,
    pub top: f64,
    pub width: f64,
    pub height: f64,
    /// Whether its content is clipped to its box (`overflow` other than visible), so
    /// a box of no size shows nothing of it.
    pub clips: bool,
    /// Computed `display: contents` (a `<slot>`, a wrapper a framework draws through):
    /// it has no box of its own, so its size and place say nothing; its children are
    /// judged by theirs.
    pub boxless: bool,
}

/// Why an element counts as hidden.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hidden {
    DisplayNone,
    VisibilityHidden,
    AriaHidden,
    Transparent,
    /// A box of at most one pixel across (the "screen-reader only" pattern).
    ZeroSize,
    /// Wholly above or left of the page, where no scrolling reaches.
    OffScreen,
}

/// A box this thin shows nothing a person could read.
const THIN_PX: f64 = 1.0;

/// Whether a person could see the element, and if not, why. A box of no size hides
/// its content only when it clips it; an unclipped empty box (a wrapper of floats, an
/// inline with no text) still shows what overflows it.
pub fn hidden(a: &Appearance) -> Option<Hidden> {
    if a.display_none {
        return Some(Hidden::DisplayNone);
    }
    if a.aria_hidden {
        return Some(Hidden::AriaHidden);
    }
    if a.visibility_hidden {
        return Some(Hidden::VisibilityHidden);
    }
    if a.transparent {
        return Some(Hidden::Transparent);
    }
    if a.boxless {
        return None;
    }
    if a.left + a.width <= 0.0 || a.top + a.height <= 0.0 {
        return Some(Hidden::OffScreen);
    }
    let thin = a.width <= THIN_PX || a.height <= THIN_PX;
    (thin && a.clips).then_some(Hidden::ZeroSize)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown() -> Appearance {
        Appearance {
            left: 10.0,
            top: 20.0,
            width: 300.0,
            height: 40.0,
            ..Appearance::default()
        }
    }

    #[test]
    fn a_boxless_element_is_judged_by_its_children_not_its_empty_rectangle() {
        let slot = Appearance {
            boxless: true,
            ..Appearance::default()
        };
        assert_eq!(hidden(&slot), None, "a slot's rectangle is empty, at 0,0");
        let hidden_slot = Appearance {
            display_none: true,
            ..slot
        };
        assert_eq!(hidden(&hidden_slot), Some(Hidden::DisplayNone));
    }

    #[test]
    fn an_ordinary_box_on_the_page_is_visible() {
        assert_eq!(hidden(&shown()), None);
    }

    #[test]
    fn display_none_aria_hidden_visibility_and_opacity_each_hide() {
        for (set, why) in [
            (
                (|a: &mut Appearance| a.display_none = true) as fn(&mut Appearance),
                Hidden::DisplayNone,
            ),
            (|a| a.aria_hidden = true, Hidden::AriaHidden),
            (|a| a.visibility_hidden = true, Hidden::VisibilityHidden),
            (|a| a.transparent = true, Hidden::Transparent),
        ] {
            let mut a = shown();
            set(&mut a);
            assert_eq!(hidden(&a), Some(why));
        }
    }

    #[test]
    fn a_box_pushed_off_the_left_or_top_is_off_screen() {
        let left = Appearance {
            left: -10_000.0,
            ..shown()
        };
        let top = Appearance {
            top: -500.0,
            ..shown()
        };
        assert_eq!(hidden(&left), Some(Hidden::OffScreen));
        assert_eq!(hidden(&top), Some(Hidden::OffScreen));
        // Far down the page is only below the fold: scrolling reaches it.
        let below = Appearance {
            top: 90_000.0,
            ..shown()
        };
        assert_eq!(hidden(&below), None);
    }

    #[test]
    fn a_one_pixel_clipped_box_is_hidden_but_an_unclipped_empty_wrapper_is_not() {
        let sr_only = Appearance {
            width: 1.0,
            height: 1.0,
            clips: true,
            ..shown()
        };
        assert_eq!(hidden(&sr_only), Some(Hidden::ZeroSize));
        let collapsed = Appearance {
            height: 0.0,
            clips: true,
            ..shown()
        };
        assert_eq!(hidden(&collapsed), Some(Hidden::ZeroSize));
        let wrapper = Appearance {
            height: 0.0,
            clips: false,
            ..shown()
        };
        assert_eq!(hidden(&wrapper), None);
    }
}
