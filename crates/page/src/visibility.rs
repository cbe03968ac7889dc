//! Which elements and which text a person cannot see: what they hold is left out of
//! what the model reads, so instructions hidden in a page (a `display:none` block,
//! white text on white, text a pixel high, clipped away, scaled to nothing, pushed
//! off-screen, or a frame a pixel wide) never reach it as page content.
//!
//! The DOM adapter measures (computed style, boxes, the rectangle of a run of text);
//! everything here is judgement on those numbers. [`hidden`] judges one element by its
//! own appearance; a [`Sight`] carries what the element's ancestors do to it (their
//! opacity, the colour behind it, the regions their overflow, `clip-path` and `clip`
//! leave), so an element is judged by [`Sight::enter`] and a run of text by
//! [`Sight::text`] with all of its ancestors at once. A frame is judged from inside by
//! [`frame_hidden`].

mod colour;
mod shape;

pub use colour::{Rgba, contrast};
pub use shape::{Rect, clip_path, clip_rect, clip_shapes};

/// What the browser says of how an element is drawn (the DOM adapter measures it).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Appearance {
    /// Computed `display: none`, or the `hidden` attribute.
    pub display_none: bool,
    /// Computed `visibility: hidden` or `collapse`.
    pub visibility_hidden: bool,
    /// `aria-hidden="true"`.
    pub aria_hidden: bool,
    /// Computed `opacity`, times a `filter: opacity(…)`: 1 for an opaque element.
    pub opacity: f64,
    /// Its box in page coordinates (scroll added), CSS pixels.
    pub left: f64,
    pub top: f64,
    pub width: f64,
    pub height: f64,
    /// Whether its content is clipped to its box (`overflow` other than visible, or a
    /// frame's own viewport), so a box of no size shows nothing of it.
    pub clips: bool,
    /// Whether a person can scroll its content (`overflow: auto` or `scroll`, a
    /// frame): what is clipped past its right and bottom edges is still theirs to see.
    pub scrolls: bool,
    /// How far its content is scrolled (left, top), when it scrolls.
    pub scrolled: (f64, f64),
    /// Computed `display: contents` (a `<slot>`, a wrapper a framework draws through):
    /// it has no box of its own, so its size and place say nothing; its children are
    /// judged by theirs.
    pub boxless: bool,
    /// Its `position`, which decides which ancestors' overflow clips it.
    pub position: Position,
    /// Whether it holds positioned descendants as a transform or filter does (fixed
    /// ones too), so their clipping comes from it.
    pub contains: bool,
    /// The part of its box its `clip-path` or `clip` leaves, in page coordinates.
    pub shape: Option<Rect>,
    /// Its text's fill colour (`-webkit-text-fill-color`, else `color`); `None` when
    /// it cannot be read.
    pub ink: Option<Rgba>,
    /// Whether its text is drawn some other way than by its fill colour (a shadow, a
    /// stroke, a background clipped to the text), so the colour alone cannot hide it.
    pub outlined: bool,
    /// Its `background-color`; `None` when it cannot be read.
    pub background: Option<Rgba>,
    /// Whether it paints a picture behind its content (a background image, an image,
    /// a video, a canvas): the colour behind its text is then not known.
    pub pictured: bool,
    /// Computed `cursor: pointer`: drawn for the pointer, as a control is.
    pub pointer: bool,
}

impl Default for Appearance {
    /// An opaque, static, unclipped element of no size at 0, 0, black on nothing.
    fn default() -> Self {
        Appearance {
            display_none: false,
            visibility_hidden: false,
            aria_hidden: false,
            opacity: 1.0,
            left: 0.0,
            top: 0.0,
            width: 0.0,
            height: 0.0,
            clips: false,
            scrolls: false,
            scrolled: (0.0, 0.0),
            boxless: false,
            position: Position::Static,
            contains: false,
            shape: None,
            ink: Some(Rgba::BLACK),
            outlined: false,
            background: Some(Rgba::CLEAR),
            pictured: false,
            pointer: false,
        }
    }
}

impl Appearance {
    fn rect(&self) -> Rect {
        Rect::sized(self.left, self.top, self.width, self.height)
    }
}

/// An element's computed `position`, as far as clipping is concerned.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Position {
    #[default]
    Static,
    /// `relative` or `sticky`: in the flow, and holding absolute descendants.
    Relative,
    /// Out of the flow: clipped only by the overflow of its containing block and
    /// what is around that.
    Absolute,
    /// Placed on the viewport: clipped by no ancestor's overflow, unless one
    /// [`contains`](Appearance::contains) it.
    Fixed,
}

/// Why an element or a run of text counts as hidden.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hidden {
    DisplayNone,
    VisibilityHidden,
    AriaHidden,
    /// Opacity, its own and its ancestors' together, too low to see.
    Transparent,
    /// A box of at most one pixel across (the "screen-reader only" pattern).
    ZeroSize,
    /// Wholly above or left of the page, where no scrolling reaches.
    OffScreen,
    /// Outside what its ancestors' overflow, `clip-path` or `clip` leave, or wholly
    /// cut away by its own.
    Clipped,
    /// Text too small to read: a font a pixel high, a box scaled to nothing.
    Tiny,
    /// Text in a colour too close to the colour behind it (white on white,
    /// `color: transparent`).
    Faint,
    /// Text under an opaque element drawn over it.
    Covered,
}

/// A box this thin shows nothing a person could read.
const THIN_PX: f64 = 1.0;
/// Text less tall than this (a line's box, at a 4 px font) is not readable.
const TEXT_MIN_PX: f64 = 5.0;
/// Below this opacity, everything an element holds is too faint to see.
const MIN_OPACITY: f64 = 0.1;
/// Text and background closer than this contrast ratio are one colour to the eye
/// (#eee on white is 1.16; the lightest grey text sites use, #ccc, 1.6).
const MIN_CONTRAST: f64 = 1.25;

/// Whether a person could see the element, and if not, why, by its own appearance.
/// A box of no size hides its content only when it clips it; an unclipped empty box
/// (a wrapper of floats, an inline with no text) still shows what overflows it.
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
    if a.opacity <= 0.0 {
        return Some(Hidden::Transparent);
    }
    if a.boxless {
        return None;
    }
    if a.left + a.width <= 0.0 || a.top + a.height <= 0.0 {
        return Some(Hidden::OffScreen);
    }
    let thin = a.width <= THIN_PX || a.height <= THIN_PX;
    if thin && a.clips {
        return Some(Hidden::ZeroSize);
    }
    let cut = a.shape.is_some_and(|s| thin_rect(s.meet(a.rect())));
    cut.then_some(Hidden::Clipped)
}

/// How much a computed `filter` leaves of an element's opacity: its `opacity()`
/// functions multiplied (1 when it has none).
pub fn filter_opacity(filter: &str) -> f64 {
    filter
        .split("opacity(")
        .skip(1)
        .filter_map(|rest| {
            let amount = rest.split(')').next()?.trim();
            match amount.strip_suffix('%') {
                Some(percent) => percent.parse::<f64>().ok().map(|p| p / 100.0),
                None => amount.parse::<f64>().ok(),
            }
        })
        .map(|o| o.clamp(0.0, 1.0))
        .product()
}

fn thin_rect(r: Rect) -> bool {
    r.width() <= THIN_PX || r.height() <= THIN_PX
}

/// What an element's ancestors do to what it draws: how opaque they leave it, the
/// colour behind it, and where its content can be seen.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sight {
    /// The product of the ancestors' opacities.
    opacity: f64,
    /// The colour behind the content, as the eye gets it; `None` over a picture.
    backdrop: Option<Rgba>,
    /// The colour its text is drawn in, and whether it is drawn some other way too.
    ink: Option<Rgba>,
    outlined: bool,
    /// Where content in the flow can be seen; where absolute and fixed content can.
    flow: Rect,
    absolute: Rect,
    fixed: Rect,
}

impl Sight {
    /// A document's top: black on white, everything from its top left corner on (at
    /// `left`, `top` in page coordinates) within reach of scrolling.
    pub fn page(left: f64, top: f64) -> Sight {
        let reach = Rect::from(left, top);
        Sight {
            opacity: 1.0,
            backdrop: Some(Rgba::WHITE),
            ink: Some(Rgba::BLACK),
            outlined: false,
            flow: reach,
            absolute: reach,
            fixed: reach,
        }
    }

    /// A frame's document shown inside an element seen as `self` (the frame's own
    /// sight, from [`enter`](Self::enter)): its page starts at `left`, `top`.
    pub fn framed(&self, left: f64, top: f64) -> Sight {
        let reach = Rect::from(left, top).meet(self.flow);
        Sight {
            flow: reach,
            absolute: reach,
            fixed: reach,
            ..*self
        }
    }

    /// An element seen here: why it is hidden, or how its own content is seen.
    pub fn enter(&self, a: &Appearance) -> Result<Sight, Hidden> {
        if let Some(why) = hidden(a) {
            return Err(why);
        }
        let opacity = self.opacity * a.opacity;
        if opacity < MIN_OPACITY {
            return Err(Hidden::Transparent);
        }
        let around = match a.position {
            Position::Fixed => self.fixed,
            Position::Absolute => self.absolute,
            Position::Static | Position::Relative => self.flow,
        };
        let sized = a.width > THIN_PX && a.height > THIN_PX;
        if !a.boxless && sized && thin_rect(around.meet(a.rect())) {
            return Err(Hidden::Clipped);
        }
        let shape = a.shape.unwrap_or(Rect::ALL);
        // A scroller was seen itself; what it holds is reached by scrolling it, from
        // the top left of its content on.
        let flow = if a.scrolls && sized {
            let (x, y) = a.scrolled;
            Rect::from(a.left - x, a.top - y).meet(shape)
        } else if a.clips {
            around.meet(shape).meet(a.rect())
        } else {
            around.meet(shape)
        };
        let holds = a.contains || a.position != Position::Static;
        let backdrop = match (a.pictured, a.background) {
            (true, _) | (_, None) => None,
            (false, Some(colour)) => {
                let colour = colour.faded(opacity);
                match self.backdrop {
                    Some(below) => Some(colour.over(below)),
                    None if colour.a >= 1.0 => Some(colour),
                    None => None,
                }
            }
        };
        Ok(Sight {
            opacity,
            backdrop,
            ink: a.ink,
            outlined: a.outlined,
            flow,
            absolute: if holds {
                flow
            } else {
                self.absolute.meet(shape)
            },
            fixed: if a.contains {
                flow
            } else {
                self.fixed.meet(shape)
            },
        })
    }

    /// Whether a person could read a run of this element's text drawn in `rect` (page
    /// coordinates), and if not, why.
    pub fn text(&self, rect: Rect) -> Option<Hidden> {
        if rect.height() < TEXT_MIN_PX || rect.width() <= THIN_PX {
            return Some(Hidden::Tiny);
        }
        // What is left in view must be tall enough to read, as the text must.
        let seen = self.flow.meet(rect);
        if seen.height() < TEXT_MIN_PX || seen.width() <= THIN_PX {
            return Some(Hidden::Clipped);
        }
        self.faint().then_some(Hidden::Faint)
    }

    /// Whether this element's text is drawn in a colour too close to the one behind
    /// it (when both are known).
    pub fn faint(&self) -> bool {
        self.faint_over(self.backdrop)
    }

    /// Whether this element's text would be too faint over `backdrop` (what the
    /// adapter found behind it on the screen, when the colour of its ancestors was
    /// not the whole story).
    pub fn faint_over(&self, backdrop: Option<Rgba>) -> bool {
        let (Some(ink), Some(back), false) = (self.ink, backdrop, self.outlined) else {
            return false;
        };
        let seen = ink.faded(self.opacity).over(back);
        contrast(seen, back) < MIN_CONTRAST
    }
}

/// Whether an element drawn over a run of text hides it: one that paints an opaque
/// colour or a picture, and that scrolls with the page (a fixed or sticky bar over
/// text moves off it when the person scrolls).
pub fn covers(a: &Appearance, sticky: bool) -> bool {
    let solid = a.background.is_some_and(|c| c.a * a.opacity >= 0.9);
    let moves_away = sticky || a.position == Position::Fixed;
    (solid || (a.pictured && a.opacity >= 0.9)) && !moves_away && hidden(a).is_none()
}

/// What a frame's document sees of itself: its own viewport, and the browser's
/// judgement of whether it is drawn unobscured (IntersectionObserver v2's
/// `isVisible`, where the browser has it).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Inside {
    /// `innerWidth` and `innerHeight`.
    pub width: f64,
    pub height: f64,
    /// Whether any of it is within the top viewport now (`isIntersecting`).
    pub intersecting: Option<bool>,
    /// `isVisible`: drawn with no opacity, transform or filter and nothing over it.
    pub visible: Option<bool>,
}

/// Whether a frame is hidden, judged from inside it: a viewport a pixel or two across
/// (a 1-px frame, however its address came about), or one the browser says is in view
/// but not visibly drawn (faded, scaled, covered). A frame out of view is not judged
/// here: its parent's reader judges its element.
pub fn frame_hidden(inside: &Inside) -> Option<Hidden> {
    if inside.width <= THIN_PX * 2.0 || inside.height <= THIN_PX * 2.0 {
        return Some(Hidden::ZeroSize);
    }
    (inside.intersecting == Some(true) && inside.visible == Some(false))
        .then_some(Hidden::Transparent)
}

#[cfg(test)]
mod tests;
