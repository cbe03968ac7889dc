//! The pushdown automaton a [`Grammar`](super::Grammar) runs: a stack of frames, fed
//! one byte at a time. A frame that may end (a number, a literal that is also a prefix
//! of a longer one) ends lazily, when the next byte cannot continue it and goes to the
//! frame beneath.

use super::schema::{End, Node, NodeId, Nodes};
use super::trie::NO_TRIE;

/// Integer and fraction digits a number may have.
const MAX_INT_DIGITS: u8 = 15;
const MAX_FRAC_DIGITS: u8 = 6;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StrPhase {
    Open,
    Body,
    Escape,
    /// Hex digits left in `\uXXXX`; `high` after a leading `d` (no surrogates).
    Hex {
        left: u8,
        high: bool,
    },
    /// UTF-8 continuation bytes left, and the range the next one must fall in.
    Cont {
        left: u8,
        lo: u8,
        hi: u8,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NumPhase {
    Start,
    Minus,
    Zero,
    Int,
    Dot,
    Frac,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArrPhase {
    Open,
    First,
    After,
    Item,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MapPhase {
    Open,
    First,
    Key,
    Colon,
    After,
}

/// One frame of the stack: a node being matched and how far.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Frame {
    /// A node not yet started: its first byte picks its frame.
    Value(NodeId),
    Lit {
        trie: u32,
        at: u32,
    },
    Str {
        min: u32,
        max: u32,
        chars: u32,
        phase: StrPhase,
        /// The trie of contents the string must not be ([`NO_TRIE`]: none), and
        /// where its bytes so far lead in it ([`NO_TRIE`]: off it).
        avoid: u32,
        at: u32,
    },
    Num {
        integer: bool,
        /// Whether a minus may lead.
        signed: bool,
        /// Integer digits allowed.
        most: u8,
        digits: u8,
        phase: NumPhase,
    },
    Arr {
        node: NodeId,
        count: u32,
        phase: ArrPhase,
    },
    /// `open` once `{` is read; then `at` walks the key trie for the next position.
    Obj {
        node: NodeId,
        trie: u32,
        at: u32,
        open: bool,
    },
    Map {
        node: NodeId,
        count: u32,
        phase: MapPhase,
    },
}

/// Feeds one byte; false when no output with this prefix is in the language (the
/// stack is then unspecified: callers step a copy).
pub fn step(g: &Nodes, stack: &mut Vec<Frame>, b: u8) -> bool {
    loop {
        let Some(top) = stack.last_mut() else {
            return false;
        };
        let outcome = match top {
            Frame::Value(node) => {
                let node = *node;
                stack.pop();
                return start(g, stack, node, b);
            }
            Frame::Lit { trie, at } => {
                let t = g.tries.get(*trie as usize);
                if let Some(next) = t.and_then(|t| t.child(*at, b)) {
                    *at = next;
                    return true;
                }
                match t.and_then(|t| t.node(*at)).and_then(|n| n.end) {
                    Some(End::Done) => Outcome::Ended,
                    Some(End::Then(next)) => {
                        *top = Frame::Value(next);
                        continue;
                    }
                    _ => Outcome::Rejected,
                }
            }
            Frame::Str {
                min,
                max,
                chars,
                phase,
                avoid,
                at,
            } => {
                if *phase == StrPhase::Body && b == b'"' {
                    // Closing on an avoided content is refused.
                    if *at != NO_TRIE && avoided_end(g, *avoid, *at) {
                        return false;
                    }
                } else if *phase != StrPhase::Open && *at != NO_TRIE {
                    let avoided = g.tries.get(*avoid as usize);
                    *at = avoided.and_then(|t| t.child(*at, b)).unwrap_or(NO_TRIE);
                }
                string(*min, *max, chars, phase, b)
            }
            Frame::Num {
                integer,
                signed,
                most,
                digits,
                phase,
            } => number((*integer, *signed, *most), digits, phase, b),
            Frame::Arr { node, count, phase } => {
                let Some(&Node::Arr { items, min, max }) = g.nodes.get(*node as usize) else {
                    return false;
                };
                match (*phase, b) {
                    (ArrPhase::Open, b'[') => {
                        *phase = ArrPhase::First;
                        return true;
                    }
                    (ArrPhase::First, b']') if min == 0 => Outcome::Closed,
                    (ArrPhase::After, b']') if *count >= min => Outcome::Closed,
                    (ArrPhase::After, b',') if *count < max => {
                        *phase = ArrPhase::Item;
                        return true;
                    }
                    (ArrPhase::First, _) if max > 0 => Outcome::Push(items, count, phase),
                    (ArrPhase::Item, _) => Outcome::Push(items, count, phase),
                    _ => Outcome::Rejected,
                }
            }
            Frame::Obj {
                node,
                trie,
                at,
                open,
            } => {
                if !*open {
                    if b != b'{' {
                        return false;
                    }
                    *open = true;
                    return true;
                }
                let Some(t) = g.tries.get(*trie as usize) else {
                    return false;
                };
                let Some(next) = t.child(*at, b) else {
                    return false;
                };
                match t.node(next).and_then(|n| n.end) {
                    None => {
                        *at = next;
                        return true;
                    }
                    Some(End::Prop(j)) => {
                        let Some(Node::Obj { props, keys }) = g.nodes.get(*node as usize) else {
                            return false;
                        };
                        let (Some(&value), Some(&after)) =
                            (props.get(j as usize), keys.get(2 * (j as usize + 1)))
                        else {
                            return false;
                        };
                        *trie = after;
                        *at = 0;
                        stack.push(Frame::Value(value));
                        return true;
                    }
                    Some(_) => Outcome::Closed,
                }
            }
            Frame::Map { node, count, phase } => {
                let Some(&Node::Map { values, max }) = g.nodes.get(*node as usize) else {
                    return false;
                };
                match (*phase, b) {
                    (MapPhase::Open, b'{') => *phase = MapPhase::First,
                    (MapPhase::First, b'}') | (MapPhase::After, b'}') => {
                        stack.pop();
                        return true;
                    }
                    (MapPhase::First | MapPhase::Key, b'"') => {
                        *phase = MapPhase::Colon;
                        stack.push(Frame::Str {
                            min: 0,
                            max: 64,
                            chars: 0,
                            phase: StrPhase::Body,
                            avoid: NO_TRIE,
                            at: NO_TRIE,
                        });
                    }
                    (MapPhase::Colon, b':') => {
                        *phase = MapPhase::After;
                        *count += 1;
                        stack.push(Frame::Value(values));
                    }
                    (MapPhase::After, b',') if *count < max => *phase = MapPhase::Key,
                    _ => return false,
                }
                return true;
            }
        };
        match outcome {
            Outcome::Consumed => return true,
            Outcome::Rejected => return false,
            Outcome::Closed => {
                stack.pop();
                return true;
            }
            // The frame is over and `b` belongs to the frame beneath.
            Outcome::Ended => {
                stack.pop();
            }
            Outcome::Push(items, count, phase) => {
                *count += 1;
                *phase = ArrPhase::After;
                stack.push(Frame::Value(items));
            }
        }
    }
}

/// What a frame made of a byte.
enum Outcome<'a> {
    Consumed,
    Rejected,
    /// The byte closed the frame.
    Closed,
    /// The frame had ended before the byte.
    Ended,
    /// An array item starts with the byte.
    Push(NodeId, &'a mut u32, &'a mut ArrPhase),
}

/// Replaces a node not yet started by its frame(s), then feeds it `b`.
fn start(g: &Nodes, stack: &mut Vec<Frame>, node: NodeId, b: u8) -> bool {
    let Some(n) = g.nodes.get(node as usize) else {
        return false;
    };
    let frame = match n {
        Node::Lit(trie) => Frame::Lit { trie: *trie, at: 0 },
        Node::Str { min, max, avoid } => Frame::Str {
            min: *min,
            max: *max,
            chars: 0,
            phase: StrPhase::Open,
            avoid: *avoid,
            at: if *avoid == NO_TRIE { NO_TRIE } else { 0 },
        },
        Node::Num {
            integer,
            signed,
            most,
        } => Frame::Num {
            integer: *integer,
            signed: *signed,
            most: (*most).min(MAX_INT_DIGITS),
            digits: 0,
            phase: NumPhase::Start,
        },
        Node::Arr { .. } => Frame::Arr {
            node,
            count: 0,
            phase: ArrPhase::Open,
        },
        Node::Obj { keys, .. } => Frame::Obj {
            node,
            trie: keys.get(1).copied().unwrap_or(0),
            at: 0,
            open: false,
        },
        Node::Map { .. } => Frame::Map {
            node,
            count: 0,
            phase: MapPhase::Open,
        },
        Node::AnyOf(options) => {
            // Alternatives are told apart by their first byte: the first that can
            // start with `b` is taken.
            let Some(&pick) = options.iter().find(|&&o| can_start(g, o, b, 0)) else {
                return false;
            };
            Frame::Value(pick)
        }
        Node::Seq(parts) => {
            stack.extend(parts.iter().rev().map(|&p| Frame::Value(p)));
            return step(g, stack, b);
        }
    };
    stack.push(frame);
    step(g, stack, b)
}

/// Whether a node's output can begin with `b`.
fn can_start(g: &Nodes, node: NodeId, b: u8, depth: u32) -> bool {
    if depth > 64 {
        return false;
    }
    match g.nodes.get(node as usize) {
        Some(Node::Lit(trie)) => g
            .tries
            .get(*trie as usize)
            .is_some_and(|t| t.child(0, b).is_some()),
        Some(Node::Str { .. }) => b == b'"',
        Some(Node::Num { signed, .. }) => (*signed && b == b'-') || b.is_ascii_digit(),
        Some(Node::Arr { .. }) => b == b'[',
        Some(Node::Obj { .. } | Node::Map { .. }) => b == b'{',
        Some(Node::AnyOf(options)) => options.iter().any(|&o| can_start(g, o, b, depth + 1)),
        Some(Node::Seq(parts)) => parts
            .first()
            .is_some_and(|&p| can_start(g, p, b, depth + 1)),
        None => false,
    }
}

fn string<'a>(min: u32, max: u32, chars: &mut u32, phase: &mut StrPhase, b: u8) -> Outcome<'a> {
    let next = match (*phase, b) {
        (StrPhase::Open, b'"') => StrPhase::Body,
        (StrPhase::Body, b'"') if *chars >= min => return Outcome::Closed,
        (StrPhase::Body, b'"') => return Outcome::Rejected,
        (StrPhase::Body, _) if *chars >= max || b < 0x20 => return Outcome::Rejected,
        (StrPhase::Body, b'\\') => {
            *chars += 1;
            StrPhase::Escape
        }
        (StrPhase::Body, 0x20..=0x7F) => {
            *chars += 1;
            StrPhase::Body
        }
        (StrPhase::Body, _) => {
            // A UTF-8 lead byte: how many continuation bytes, and the first's range
            // (no overlong forms, no surrogates, nothing past U+10FFFF).
            let (left, lo, hi) = match b {
                0xC2..=0xDF => (1, 0x80, 0xBF),
                0xE0 => (2, 0xA0, 0xBF),
                0xED => (2, 0x80, 0x9F),
                0xE1..=0xEF => (2, 0x80, 0xBF),
                0xF0 => (3, 0x90, 0xBF),
                0xF1..=0xF3 => (3, 0x80, 0xBF),
                0xF4 => (3, 0x80, 0x8F),
                _ => return Outcome::Rejected,
            };
            *chars += 1;
            StrPhase::Cont { left, lo, hi }
        }
        (StrPhase::Escape, b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => {
            StrPhase::Body
        }
        (StrPhase::Escape, b'u') => StrPhase::Hex {
            left: 4,
            high: false,
        },
        (StrPhase::Hex { left, high }, _) if b.is_ascii_hexdigit() => {
            if high && left == 3 && !matches!(b, b'0'..=b'7') {
                return Outcome::Rejected;
            }
            let high = left == 4 && matches!(b, b'd' | b'D');
            if left == 1 {
                StrPhase::Body
            } else {
                StrPhase::Hex {
                    left: left - 1,
                    high,
                }
            }
        }
        (StrPhase::Cont { left, lo, hi }, _) if (lo..=hi).contains(&b) => {
            if left == 1 {
                StrPhase::Body
            } else {
                StrPhase::Cont {
                    left: left - 1,
                    lo: 0x80,
                    hi: 0xBF,
                }
            }
        }
        _ => return Outcome::Rejected,
    };
    *phase = next;
    Outcome::Consumed
}

/// `kind`: whether the number is an integer, may be negative, and how many integer
/// digits it may have.
fn number<'a>(kind: (bool, bool, u8), digits: &mut u8, phase: &mut NumPhase, b: u8) -> Outcome<'a> {
    let (integer, signed, most) = kind;
    let digit = b.is_ascii_digit();
    let next = match (*phase, b) {
        (NumPhase::Start, b'-') if signed => NumPhase::Minus,
        (NumPhase::Start, b'0') => NumPhase::Zero,
        // "-0" is a float; an integer's minus leads a non-zero digit.
        (NumPhase::Minus, b'0') if !integer => NumPhase::Zero,
        (NumPhase::Start | NumPhase::Minus, b'1'..=b'9') => {
            *digits = 1;
            NumPhase::Int
        }
        (NumPhase::Int, _) if digit && *digits < most => {
            *digits += 1;
            NumPhase::Int
        }
        (NumPhase::Zero | NumPhase::Int, b'.') if !integer => NumPhase::Dot,
        (NumPhase::Dot, _) if digit => {
            *digits = 1;
            NumPhase::Frac
        }
        (NumPhase::Frac, _) if digit && *digits < MAX_FRAC_DIGITS => {
            *digits += 1;
            NumPhase::Frac
        }
        (NumPhase::Zero | NumPhase::Int | NumPhase::Frac, _) => return Outcome::Ended,
        _ => return Outcome::Rejected,
    };
    *phase = next;
    Outcome::Consumed
}

/// Whether a frame may end where it is, with no more input.
fn can_end(g: &Nodes, frame: &Frame) -> bool {
    match *frame {
        Frame::Lit { trie, at } => {
            g.tries
                .get(trie as usize)
                .and_then(|t| t.node(at))
                .and_then(|n| n.end)
                == Some(End::Done)
        }
        Frame::Num { phase, .. } => {
            matches!(phase, NumPhase::Zero | NumPhase::Int | NumPhase::Frac)
        }
        _ => false,
    }
}

/// Whether the output so far is a whole sentence of the grammar.
pub fn is_complete(g: &Nodes, stack: &[Frame]) -> bool {
    stack.iter().all(|f| can_end(g, f))
}

/// A byte that brings the output nearer its shortest completion (None when complete).
pub fn finishing_byte(g: &Nodes, stack: &[Frame]) -> Option<u8> {
    let frame = stack.iter().rev().find(|f| !can_end(g, f))?;
    Some(match *frame {
        Frame::Value(node) => start_byte(g, node, 0),
        Frame::Lit { trie, at } => {
            let t = g.tries.get(trie as usize)?;
            match t.node(at).and_then(|n| n.end) {
                Some(End::Then(next)) => start_byte(g, next, 0),
                _ => t.shortest_step(at)?,
            }
        }
        Frame::Str {
            min,
            chars,
            phase,
            avoid,
            at,
            ..
        } => match phase {
            StrPhase::Open => b'"',
            StrPhase::Body if chars < min => b'a',
            StrPhase::Body if at != NO_TRIE && avoided_end(g, avoid, at) => b'.',
            StrPhase::Body => b'"',
            StrPhase::Escape => b'n',
            StrPhase::Hex { .. } => b'0',
            StrPhase::Cont { lo, .. } => lo,
        },
        Frame::Num { phase, .. } => match phase {
            NumPhase::Minus => b'1',
            _ => b'0',
        },
        Frame::Arr { node, count, phase } => {
            let Some(&Node::Arr { items, min, .. }) = g.nodes.get(node as usize) else {
                return None;
            };
            match phase {
                ArrPhase::Open => b'[',
                ArrPhase::First | ArrPhase::After if count >= min => b']',
                ArrPhase::After => b',',
                ArrPhase::First | ArrPhase::Item => start_byte(g, items, 0),
            }
        }
        Frame::Obj { trie, at, open, .. } => {
            if !open {
                b'{'
            } else {
                g.tries.get(trie as usize)?.shortest_step(at)?
            }
        }
        Frame::Map { phase, .. } => match phase {
            MapPhase::Open => b'{',
            MapPhase::First | MapPhase::After => b'}',
            MapPhase::Key => b'"',
            MapPhase::Colon => b':',
        },
    })
}

/// Whether a string's content so far is one it must not be.
fn avoided_end(g: &Nodes, avoid: u32, at: u32) -> bool {
    g.tries
        .get(avoid as usize)
        .and_then(|t| t.node(at))
        .is_some_and(|n| n.end.is_some())
}

/// The first byte of a short output of `node`.
fn start_byte(g: &Nodes, node: NodeId, depth: u32) -> u8 {
    match g.nodes.get(node as usize) {
        Some(Node::Lit(trie)) => g
            .tries
            .get(*trie as usize)
            .and_then(|t| t.shortest_step(0))
            .unwrap_or(b'"'),
        Some(Node::Str { .. }) => b'"',
        Some(Node::Num { .. }) => b'0',
        Some(Node::Arr { .. }) => b'[',
        Some(Node::Obj { .. } | Node::Map { .. }) => b'{',
        Some(Node::AnyOf(options)) if depth < 64 => {
            // Prefer a scalar alternative: it closes soonest.
            let scalar = options.iter().find(|&&o| {
                matches!(
                    g.nodes.get(o as usize),
                    Some(Node::Lit(_) | Node::Str { .. } | Node::Num { .. })
                )
            });
            scalar
                .or(options.first())
                .map_or(b'0', |&o| start_byte(g, o, depth + 1))
        }
        Some(Node::Seq(parts)) if depth < 64 => {
            parts.first().map_or(b'0', |&p| start_byte(g, p, depth + 1))
        }
        _ => b'0',
    }
}
