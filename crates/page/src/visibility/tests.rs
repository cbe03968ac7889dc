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

/// A line of text in `shown()`'s box.
fn line() -> Rect {
    Rect::sized(10.0, 20.0, 200.0, 18.0)
}

fn page() -> Sight {
    Sight::page(0.0, 0.0)
}

/// The sight inside each of `chain`, outermost first.
fn inside(chain: &[Appearance]) -> Result<Sight, Hidden> {
    chain.iter().try_fold(page(), |sight, a| sight.enter(a))
}

#[test]
fn a_boxless_element_is_judged_by_its_children_not_its_empty_rectangle() {
    let slot = Appearance {
        boxless: true,
        ..Appearance::default()
    };
    assert_eq!(hidden(&slot), None, "a slot's rectangle is empty, at 0,0");
    assert!(page().enter(&slot).is_ok());
    let hidden_slot = Appearance {
        display_none: true,
        ..slot
    };
    assert_eq!(hidden(&hidden_slot), Some(Hidden::DisplayNone));
}

#[test]
fn an_ordinary_box_on_the_page_is_visible_and_so_is_its_text() {
    assert_eq!(hidden(&shown()), None);
    assert_eq!(inside(&[shown()]).unwrap().text(line()), None);
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
        (|a| a.opacity = 0.0, Hidden::Transparent),
    ] {
        let mut a = shown();
        set(&mut a);
        assert_eq!(hidden(&a), Some(why));
        assert_eq!(page().enter(&a), Err(why));
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
    assert!(page().enter(&below).is_ok());
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
    assert_eq!(inside(&[wrapper]).unwrap().text(line()), None);
}

#[test]
fn opacity_multiplies_down_the_ancestors_until_nothing_shows() {
    let faded = Appearance {
        opacity: 0.3,
        ..shown()
    };
    assert!(inside(&[faded]).is_ok(), "0.3 alone is faint but there");
    assert_eq!(
        inside(&[faded, faded]).map(|_| ()),
        Err(Hidden::Transparent),
        "0.3 of 0.3 is 0.09"
    );
    let barely = Appearance {
        opacity: 0.01,
        ..shown()
    };
    assert_eq!(page().enter(&barely), Err(Hidden::Transparent));
}

#[test]
fn text_the_colour_of_what_is_behind_it_is_faint() {
    let white = Some(Rgba::WHITE);
    let white_on_white = Appearance {
        ink: white,
        ..shown()
    };
    assert_eq!(
        inside(&[white_on_white]).unwrap().text(line()),
        Some(Hidden::Faint)
    );
    let transparent = Appearance {
        ink: Some(Rgba::CLEAR),
        ..shown()
    };
    assert_eq!(
        inside(&[transparent]).unwrap().text(line()),
        Some(Hidden::Faint)
    );
    let near_white = Appearance {
        ink: Some(Rgba::opaque(250.0, 250.0, 250.0)),
        ..shown()
    };
    assert_eq!(
        inside(&[near_white]).unwrap().text(line()),
        Some(Hidden::Faint)
    );
    // Light grey, as sites draw secondary text, is read.
    let grey = Appearance {
        ink: Some(Rgba::opaque(170.0, 170.0, 170.0)),
        ..shown()
    };
    assert_eq!(inside(&[grey]).unwrap().text(line()), None);
}

#[test]
fn the_background_behind_text_is_the_nearest_ancestors_painted_over_each_other() {
    let dark = Appearance {
        background: Some(Rgba::opaque(20.0, 20.0, 20.0)),
        ..shown()
    };
    let white_text = Appearance {
        ink: Some(Rgba::WHITE),
        ..shown()
    };
    assert_eq!(inside(&[dark, white_text]).unwrap().text(line()), None);
    let black_text = Appearance {
        ink: Some(Rgba::opaque(25.0, 25.0, 25.0)),
        ..shown()
    };
    assert_eq!(
        inside(&[dark, black_text]).unwrap().text(line()),
        Some(Hidden::Faint),
        "near-black on near-black"
    );
    // A half-transparent white layer over the dark one is mid grey, not white.
    let veil = Appearance {
        background: Some(Rgba::WHITE.faded(0.5)),
        ..shown()
    };
    assert_eq!(
        inside(&[dark, veil, white_text]).unwrap().text(line()),
        None
    );
}

#[test]
fn text_over_a_picture_or_drawn_with_a_shadow_is_not_judged_by_its_colour() {
    let picture = Appearance {
        pictured: true,
        ..shown()
    };
    let white_text = Appearance {
        ink: Some(Rgba::WHITE),
        ..shown()
    };
    assert_eq!(inside(&[picture, white_text]).unwrap().text(line()), None);
    let shadowed = Appearance {
        ink: Some(Rgba::CLEAR),
        outlined: true,
        ..shown()
    };
    assert_eq!(inside(&[shadowed]).unwrap().text(line()), None);
    // An opaque colour over the picture is known again.
    let card = Appearance {
        background: Some(Rgba::WHITE),
        ..shown()
    };
    assert_eq!(
        inside(&[picture, card, white_text]).unwrap().text(line()),
        Some(Hidden::Faint)
    );
}

#[test]
fn text_a_pixel_high_or_scaled_to_nothing_is_too_small_to_read() {
    let sight = inside(&[shown()]).unwrap();
    assert_eq!(
        sight.text(Rect::sized(10.0, 20.0, 40.0, 1.2)),
        Some(Hidden::Tiny),
        "font-size: 1px"
    );
    assert_eq!(
        sight.text(Rect::sized(160.0, 40.0, 0.0, 0.0)),
        Some(Hidden::Tiny),
        "transform: scale(0)"
    );
    assert_eq!(
        sight.text(Rect::sized(10.0, 20.0, 30.0, 9.0)),
        None,
        "7px type"
    );
}

#[test]
fn text_indented_off_the_page_is_clipped_though_its_box_is_on_it() {
    let sight = inside(&[shown()]).unwrap();
    assert_eq!(
        sight.text(Rect::sized(-9_990.0, 20.0, 200.0, 18.0)),
        Some(Hidden::Clipped)
    );
}

#[test]
fn a_clip_path_or_clip_that_leaves_nothing_hides_the_element_and_all_it_holds() {
    let cut = Appearance {
        shape: Some(Rect::sized(160.0, 40.0, 0.0, 0.0)),
        ..shown()
    };
    assert_eq!(hidden(&cut), Some(Hidden::Clipped));
    assert_eq!(page().enter(&cut), Err(Hidden::Clipped));
    // A clip-path that leaves the top half leaves a child below it unseen.
    let top_half = Appearance {
        shape: Some(Rect::sized(10.0, 20.0, 300.0, 20.0)),
        height: 400.0,
        ..shown()
    };
    let below = Appearance {
        top: 100.0,
        ..shown()
    };
    assert_eq!(inside(&[top_half, below]).map(|_| ()), Err(Hidden::Clipped));
    let absolute = Appearance {
        position: Position::Fixed,
        ..below
    };
    assert_eq!(
        inside(&[top_half, absolute]).map(|_| ()),
        Err(Hidden::Clipped),
        "a clip-path clips fixed descendants too"
    );
}

#[test]
fn a_zero_size_clipping_ancestor_hides_what_overflows_it_unless_it_escapes() {
    let slot = Appearance {
        width: 300.0,
        height: 2.0,
        clips: true,
        ..shown()
    };
    let below = Appearance {
        top: 100.0,
        ..shown()
    };
    assert_eq!(inside(&[slot, below]).map(|_| ()), Err(Hidden::Clipped));
    assert_eq!(
        inside(&[slot]).unwrap().text(line()),
        Some(Hidden::Clipped),
        "its own text spills out of a 2-pixel box"
    );
    // A fixed child is clipped by no ancestor's overflow; an absolute one only by
    // its containing block's.
    let fixed = Appearance {
        position: Position::Fixed,
        ..below
    };
    assert!(inside(&[slot, fixed]).is_ok());
    let absolute = Appearance {
        position: Position::Absolute,
        ..below
    };
    assert!(inside(&[slot, absolute]).is_ok());
    let positioned = Appearance {
        position: Position::Relative,
        ..slot
    };
    assert_eq!(
        inside(&[positioned, absolute]).map(|_| ()),
        Err(Hidden::Clipped)
    );
}

#[test]
fn content_scrolled_out_of_a_scroller_is_still_within_reach() {
    let scroller = Appearance {
        clips: true,
        scrolls: true,
        scrolled: (0.0, 500.0),
        height: 100.0,
        ..shown()
    };
    let far_down = Rect::sized(10.0, 2_000.0, 200.0, 18.0);
    assert_eq!(inside(&[scroller]).unwrap().text(far_down), None);
    let above_its_start = Rect::sized(10.0, -600.0, 200.0, 18.0);
    assert_eq!(
        inside(&[scroller]).unwrap().text(above_its_start),
        Some(Hidden::Clipped)
    );
    let hidden_overflow = Appearance {
        scrolls: false,
        ..scroller
    };
    assert_eq!(
        inside(&[hidden_overflow]).unwrap().text(far_down),
        Some(Hidden::Clipped),
        "overflow: hidden cannot be scrolled by a person"
    );
}

#[test]
fn a_frame_is_judged_from_inside_by_its_own_viewport_and_the_browsers_word() {
    let pixel = Inside {
        width: 1.0,
        height: 1.0,
        ..Inside::default()
    };
    assert_eq!(frame_hidden(&pixel), Some(Hidden::ZeroSize));
    let frame = Inside {
        width: 400.0,
        height: 200.0,
        intersecting: Some(true),
        visible: Some(true),
    };
    assert_eq!(frame_hidden(&frame), None);
    let covered = Inside {
        visible: Some(false),
        ..frame
    };
    assert_eq!(frame_hidden(&covered), Some(Hidden::Transparent));
    let below_the_fold = Inside {
        intersecting: Some(false),
        visible: Some(false),
        ..frame
    };
    assert_eq!(frame_hidden(&below_the_fold), None, "its parent judges it");
    let no_observer = Inside {
        intersecting: None,
        visible: None,
        ..frame
    };
    assert_eq!(frame_hidden(&no_observer), None);
}

#[test]
fn a_framed_document_is_seen_through_its_frame() {
    let frame = Appearance {
        clips: true,
        scrolls: true,
        ..shown()
    };
    let sight = inside(&[frame]).unwrap().framed(10.0, 20.0);
    assert_eq!(sight.text(Rect::sized(12.0, 900.0, 100.0, 18.0)), None);
    assert_eq!(
        sight.text(Rect::sized(-500.0, 30.0, 100.0, 18.0)),
        Some(Hidden::Clipped)
    );
}

#[test]
fn a_filters_opacity_functions_multiply() {
    assert_eq!(filter_opacity("none"), 1.0);
    assert_eq!(filter_opacity("opacity(0)"), 0.0);
    assert_eq!(filter_opacity("blur(2px) opacity(50%) opacity(0.5)"), 0.25);
}

#[test]
fn an_opaque_box_over_text_covers_it_but_a_bar_that_scrolls_away_does_not() {
    let card = Appearance {
        background: Some(Rgba::WHITE),
        ..shown()
    };
    assert!(covers(&card, false));
    assert!(!covers(&card, true), "sticky");
    let fixed = Appearance {
        position: Position::Fixed,
        ..card
    };
    assert!(!covers(&fixed, false));
    let glass = Appearance {
        background: Some(Rgba::WHITE.faded(0.3)),
        ..shown()
    };
    assert!(
        !covers(&glass, false),
        "a tint over text leaves it readable"
    );
    let link_overlay = shown();
    assert!(
        !covers(&link_overlay, false),
        "a stretched link's box paints nothing"
    );
    let image = Appearance {
        pictured: true,
        ..shown()
    };
    assert!(covers(&image, false));
}
