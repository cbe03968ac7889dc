//! `shape`: rectangles on the page, and the part of a box that its `clip-path` or
//! `clip` leaves to be drawn, read from their computed values (a `clip-path: url(#…)`
//! from the boxes of its `<clipPath>`'s shapes). Only the bounds of a shape matter
//! here: a shape whose bounds are a line or a point shows nothing.

/// A rectangle by its edges, in CSS pixels; an edge may be infinite (a region a person
/// can scroll through has no end to the right or below).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rect {
    pub left: f64,
    pub top: f64,
    pub right: f64,
    pub bottom: f64,
}

impl Rect {
    /// The whole plane.
    pub const ALL: Rect = Rect {
        left: f64::NEG_INFINITY,
        top: f64::NEG_INFINITY,
        right: f64::INFINITY,
        bottom: f64::INFINITY,
    };

    /// The rectangle at `left`, `top` of this size.
    pub fn sized(left: f64, top: f64, width: f64, height: f64) -> Rect {
        Rect {
            left,
            top,
            right: left + width.max(0.0),
            bottom: top + height.max(0.0),
        }
    }

    /// Everything right of and below `left`, `top`: where a person can scroll to.
    pub fn from(left: f64, top: f64) -> Rect {
        Rect {
            left,
            top,
            ..Rect::ALL
        }
    }

    /// The part of both (possibly empty: then right ≤ left or bottom ≤ top).
    pub fn meet(self, other: Rect) -> Rect {
        Rect {
            left: self.left.max(other.left),
            top: self.top.max(other.top),
            right: self.right.min(other.right),
            bottom: self.bottom.min(other.bottom),
        }
    }

    pub fn width(self) -> f64 {
        (self.right - self.left).max(0.0)
    }

    pub fn height(self) -> f64 {
        (self.bottom - self.top).max(0.0)
    }

    /// This rectangle moved by `dx`, `dy`.
    pub fn moved(self, dx: f64, dy: f64) -> Rect {
        Rect {
            left: self.left + dx,
            top: self.top + dy,
            right: self.right + dx,
            bottom: self.bottom + dy,
        }
    }
}

/// The part of a `width` × `height` box that a computed `clip-path` leaves, in the
/// box's own coordinates (its top left corner at 0, 0): the bounds of an `inset()`,
/// `circle()`, `ellipse()`, `polygon()` or `path()`. `None` when it clips nothing
/// (`none`, a reference box alone) or when its shape cannot be read here (lengths in
/// `em` or `calc()`): such a box is judged as if it were not clipped. A `url(…)` is
/// the DOM's to resolve ([`clip_shapes`]).
pub fn clip_path(value: &str, width: f64, height: f64) -> Option<Rect> {
    let value = value.trim();
    let (name, args) = value.split_once('(')?;
    let args = args.rsplit_once(')')?.0;
    let diagonal = ((width * width + height * height) / 2.0).sqrt();
    match name.trim() {
        "inset" => inset(args, width, height),
        "circle" => {
            let (radius, at) = split_at(args);
            let r = length(radius.trim(), diagonal)?;
            let (x, y) = position(at, width, height)?;
            Some(Rect::sized(x - r, y - r, 2.0 * r, 2.0 * r))
        }
        "ellipse" => {
            let (radii, at) = split_at(args);
            let mut radii = radii.split_whitespace();
            let rx = length(radii.next()?, width)?;
            let ry = length(radii.next()?, height)?;
            let (x, y) = position(at, width, height)?;
            Some(Rect::sized(x - rx, y - ry, 2.0 * rx, 2.0 * ry))
        }
        "polygon" => {
            let mut points = Vec::new();
            for point in args.split(',') {
                let mut xy = point.split_whitespace();
                let (Some(x), Some(y)) = (xy.next(), xy.next()) else {
                    continue; // the fill rule
                };
                points.push((length(x, width)?, length(y, height)?));
            }
            bounds(&points)
        }
        "path" => {
            let numbers: Vec<f64> = args
                .split(|c: char| !(c.is_ascii_digit() || c == '.' || c == '-'))
                .filter_map(|n| n.parse::<f64>().ok())
                .collect();
            let points: Vec<(f64, f64)> = numbers
                .chunks_exact(2)
                .filter_map(|p| Some((*p.first()?, *p.get(1)?)))
                .collect();
            bounds(&points)
        }
        _ => None,
    }
}

/// The part of a `width` × `height` box that a `<clipPath>` leaves, in the box's own
/// coordinates: the bounds of the boxes its shapes draw (each `getBBox()`), given in
/// fractions of the box (`clipPathUnits="objectBoundingBox"`) or in its pixels. A
/// shape of no area draws nothing, and a clip path that draws nothing leaves nothing.
pub fn clip_shapes(
    shapes: impl IntoIterator<Item = Rect>,
    fractions: bool,
    width: f64,
    height: f64,
) -> Rect {
    let drawn = shapes.into_iter().filter(|s| s.width() * s.height() > 0.0);
    let r = drawn
        .reduce(|a, b| Rect {
            left: a.left.min(b.left),
            top: a.top.min(b.top),
            right: a.right.max(b.right),
            bottom: a.bottom.max(b.bottom),
        })
        .unwrap_or(Rect::sized(0.0, 0.0, 0.0, 0.0));
    let (x, y) = if fractions {
        (width, height)
    } else {
        (1.0, 1.0)
    };
    Rect {
        left: r.left * x,
        top: r.top * y,
        right: r.right * x,
        bottom: r.bottom * y,
    }
}

/// The part of a `width` × `height` box that a computed `clip: rect(top, right,
/// bottom, left)` leaves (`auto` is the box's edge), in the box's coordinates; `None`
/// for `auto`.
pub fn clip_rect(value: &str, width: f64, height: f64) -> Option<Rect> {
    let args = value.trim().strip_prefix("rect(")?.strip_suffix(')')?;
    let edges: Vec<&str> = args.split([',', ' ']).filter(|e| !e.is_empty()).collect();
    let edge = |i: usize, auto: f64| -> Option<f64> {
        match *edges.get(i)? {
            "auto" => Some(auto),
            e => length(e, 0.0),
        }
    };
    Some(Rect {
        top: edge(0, 0.0)?,
        right: edge(1, width)?,
        bottom: edge(2, height)?,
        left: edge(3, 0.0)?,
    })
}

/// `inset(t r b l round …)`: one to four lengths, as margins are given.
fn inset(args: &str, width: f64, height: f64) -> Option<Rect> {
    let lengths: Vec<&str> = args.split(" round ").next()?.split_whitespace().collect();
    let top = *lengths.first()?;
    let right = *lengths.get(1).unwrap_or(&top);
    let bottom = *lengths.get(2).unwrap_or(&top);
    let left = *lengths.get(3).unwrap_or(&right);
    let (top, right) = (length(top, height)?, length(right, width)?);
    let (bottom, left) = (length(bottom, height)?, length(left, width)?);
    Some(Rect {
        left,
        top,
        right: width - right,
        bottom: height - bottom,
    })
}

/// A shape's arguments before `at` and the position after it.
fn split_at(args: &str) -> (&str, &str) {
    if let Some(at) = args.trim_start().strip_prefix("at ") {
        return ("closest-side", at);
    }
    args.split_once(" at ").unwrap_or((args, ""))
}

/// A shape's centre: two lengths or keywords, the centre of the box when unsaid.
fn position(at: &str, width: f64, height: f64) -> Option<(f64, f64)> {
    let mut parts = at.split_whitespace();
    let place = |part: Option<&str>, full: f64| match part {
        None | Some("center") => Some(full / 2.0),
        Some("left" | "top") => Some(0.0),
        Some("right" | "bottom") => Some(full),
        Some(other) => length(other, full),
    };
    Some((place(parts.next(), width)?, place(parts.next(), height)?))
}

/// A length in `px` (or a bare number) or a percentage of `full`; a radius's
/// `closest-side` and `farthest-side` are never small and are read as `full`.
fn length(text: &str, full: f64) -> Option<f64> {
    if let Some(percent) = text.strip_suffix('%') {
        return percent.parse::<f64>().ok().map(|p| p / 100.0 * full);
    }
    if matches!(text, "closest-side" | "farthest-side") {
        return Some(full);
    }
    text.strip_suffix("px").unwrap_or(text).parse::<f64>().ok()
}

/// The bounds of some points.
fn bounds(points: &[(f64, f64)]) -> Option<Rect> {
    let (first, rest) = points.split_first()?;
    let start = Rect::sized(first.0, first.1, 0.0, 0.0);
    Some(rest.iter().fold(start, |r, &(x, y)| Rect {
        left: r.left.min(x),
        top: r.top.min(y),
        right: r.right.max(x),
        bottom: r.bottom.max(y),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_inset_of_half_leaves_nothing_and_a_small_inset_leaves_most_of_the_box() {
        let half = clip_path("inset(50%)", 300.0, 40.0).unwrap();
        assert_eq!((half.width(), half.height()), (0.0, 0.0));
        let small = clip_path("inset(2px 4px round 3px)", 300.0, 40.0).unwrap();
        assert_eq!((small.width(), small.height()), (292.0, 36.0));
        let three = clip_path("inset(0px 0px 100%)", 300.0, 40.0).unwrap();
        assert_eq!(three.height(), 0.0);
    }

    #[test]
    fn circles_ellipses_polygons_and_paths_are_bounded_by_their_points() {
        let dot = clip_path("circle(0px at 50% 50%)", 300.0, 40.0).unwrap();
        assert_eq!(dot.width(), 0.0);
        let round = clip_path("circle(50% at 50% 50%)", 100.0, 100.0).unwrap();
        assert!(round.width() > 99.0);
        let flat = clip_path("ellipse(100px 0px at center center)", 300.0, 40.0).unwrap();
        assert_eq!((flat.width(), flat.height()), (200.0, 0.0));
        let sliver = clip_path("polygon(0px 0px, 1px 0px, 1px 1px)", 300.0, 40.0).unwrap();
        assert_eq!((sliver.width(), sliver.height()), (1.0, 1.0));
        let triangle = clip_path("polygon(evenodd, 50% 0%, 100% 100%, 0% 100%)", 300.0, 40.0);
        assert_eq!(
            triangle.map(|t| (t.width(), t.height())),
            Some((300.0, 40.0))
        );
        let path = clip_path("path(\"M 0 0 L 1 0 L 1 1 Z\")", 300.0, 40.0).unwrap();
        assert_eq!(path.width(), 1.0);
    }

    #[test]
    fn no_clip_path_or_one_that_cannot_be_read_clips_nothing() {
        assert_eq!(clip_path("none", 300.0, 40.0), None);
        assert_eq!(clip_path("url(\"#c\")", 300.0, 40.0), None);
        assert_eq!(clip_path("inset(calc(10% + 2px))", 300.0, 40.0), None);
    }

    #[test]
    fn a_clip_path_element_leaves_the_bounds_of_its_shapes_and_nothing_when_it_has_none() {
        let none = clip_shapes([], false, 300.0, 40.0);
        assert_eq!((none.width(), none.height()), (0.0, 0.0));
        let zero = clip_shapes([Rect::sized(0.0, 0.0, 0.0, 0.0)], false, 300.0, 40.0);
        assert_eq!(zero.width(), 0.0, "a rect of no size draws nothing");
        let whole = clip_shapes([Rect::sized(0.0, 0.0, 1.0, 1.0)], true, 300.0, 40.0);
        assert_eq!(
            whole,
            Rect::sized(0.0, 0.0, 300.0, 40.0),
            "fractions of the box"
        );
        let two = [
            Rect::sized(0.0, 0.0, 10.0, 10.0),
            Rect::sized(100.0, 20.0, 50.0, 20.0),
        ];
        assert_eq!(
            clip_shapes(two, false, 300.0, 40.0),
            Rect::sized(0.0, 0.0, 150.0, 40.0)
        );
        let dot = clip_shapes([Rect::sized(2.5, 2.5, 1.0, 1.0)], false, 300.0, 40.0);
        assert_eq!(dot.width(), 1.0, "a circle of radius 0.5 is a dot");
    }

    #[test]
    fn a_clip_rect_of_zeros_leaves_nothing_and_auto_edges_are_the_box() {
        let zero = clip_rect("rect(0px, 0px, 0px, 0px)", 300.0, 40.0).unwrap();
        assert_eq!((zero.width(), zero.height()), (0.0, 0.0));
        let auto = clip_rect("rect(auto, auto, auto, auto)", 300.0, 40.0).unwrap();
        assert_eq!(auto, Rect::sized(0.0, 0.0, 300.0, 40.0));
        assert_eq!(clip_rect("auto", 300.0, 40.0), None);
    }

    #[test]
    fn rectangles_meet_in_their_common_part_and_may_be_endless() {
        let page = Rect::from(0.0, 0.0);
        let box_ = Rect::sized(-100.0, 10.0, 50.0, 20.0);
        assert_eq!(page.meet(box_).width(), 0.0, "left of the page");
        assert_eq!(page.meet(box_.moved(80.0, 0.0)).width(), 30.0);
    }
}
