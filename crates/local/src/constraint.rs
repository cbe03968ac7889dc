//! Constrained decoding: a tool call always parses and matches its tool's schema.
//!
//! A [`Grammar`] (compiled once per request from a JSON Schema, a set of tools, or a
//! set of plain choices) runs as a byte-level pushdown automaton; a [`Constraint`] is
//! its state during one generation. Against a model's [`Vocabulary`] it says which
//! tokens keep the output a valid prefix ([`Constraint::allows`], [`Constraint::mask`],
//! walking a byte trie of the vocabulary so shared prefixes are stepped once), and how
//! to finish when the token budget runs out ([`Constraint::completion`]). Output is
//! compact JSON (no whitespace), and every node is bounded, so every output ends.
//! The schema subset is described in [`schema`].

mod automaton;
pub mod schema;
mod trie;

use std::fmt;

use automaton::Frame;
use schema::{End, Node, NodeId, Nodes};
use trie::Trie;

/// Why a grammar could not be built, or a token not taken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConstraintError {
    /// The schema is outside the subset, or unsatisfiable.
    Schema(String),
    /// A tool call grammar over no tools, or a choice among nothing.
    Empty,
    /// A token the constraint does not allow was fed to it.
    Disallowed(u32),
}

impl fmt::Display for ConstraintError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConstraintError::Schema(why) => write!(f, "unsupported JSON Schema: {why}"),
            ConstraintError::Empty => write!(f, "nothing to choose from"),
            ConstraintError::Disallowed(id) => write!(f, "token {id} is not allowed here"),
        }
    }
}

impl std::error::Error for ConstraintError {}

/// A compiled grammar: what outputs are allowed.
#[derive(Debug, Clone)]
pub struct Grammar {
    nodes: Nodes,
    root: NodeId,
}

impl Grammar {
    /// Compact JSON matching `schema` (see [`schema`] for the subset).
    pub fn json(schema: &serde_json::Value) -> Result<Grammar, ConstraintError> {
        let mut nodes = Nodes::default();
        let root = nodes.schema(schema, 0)?;
        Ok(Grammar { nodes, root })
    }

    /// A tool call, `{"name":"<name>","arguments":<arguments>}`, whose arguments match
    /// the named tool's parameter schema.
    pub fn tool_call(tools: &[(&str, &serde_json::Value)]) -> Result<Grammar, ConstraintError> {
        if tools.is_empty() {
            return Err(ConstraintError::Empty);
        }
        let mut nodes = Nodes::default();
        let close = nodes.literals([(&b"}"[..], End::Done)]);
        let mut heads = Vec::with_capacity(tools.len());
        for (name, schema) in tools {
            let arguments = nodes.schema(schema, 1)?;
            let rest = nodes.push(Node::Seq(vec![arguments, close]));
            let name = serde_json::to_string(name).unwrap_or_default();
            heads.push((
                format!("{{\"name\":{name},\"arguments\":").into_bytes(),
                End::Then(rest),
            ));
        }
        let root = nodes.literals(heads.iter().map(|(h, e)| (h.as_slice(), *e)));
        Ok(Grammar { nodes, root })
    }

    /// Exactly one of `options`, as raw text (not JSON): e.g. which tool to call.
    pub fn choice(options: &[&str]) -> Grammar {
        let mut nodes = Nodes::default();
        let root = nodes.literals(options.iter().map(|o| (o.as_bytes(), End::Done)));
        Grammar { nodes, root }
    }

    /// This grammar between a fixed `prefix` and `suffix` (e.g. tool-call markup).
    pub fn wrapped(mut self, prefix: &str, suffix: &str) -> Grammar {
        let mut parts = Vec::with_capacity(3);
        if !prefix.is_empty() {
            parts.push(self.nodes.literals([(prefix.as_bytes(), End::Done)]));
        }
        parts.push(self.root);
        if !suffix.is_empty() {
            parts.push(self.nodes.literals([(suffix.as_bytes(), End::Done)]));
        }
        self.root = self.nodes.push(Node::Seq(parts));
        self
    }
}

/// A model's tokens as bytes, in a byte trie, and which tokens stop generation.
///
/// Inside a JSON string nearly every token is allowed, and walking the whole trie
/// there is the mask's worst case; so tokens that are plain string content (whole
/// UTF-8 characters, no quote, backslash or control byte) are also kept by their
/// length in characters, and the other tokens in a trie of their own.
#[derive(Debug, Clone)]
pub struct Vocabulary {
    tokens: Vec<Vec<u8>>,
    trie: Trie<Vec<u32>>,
    /// Plain string content: `(characters, id)`.
    plain: Vec<(u32, u32)>,
    /// Every token that is not plain string content.
    unplain: Trie<Vec<u32>>,
    stop: Vec<bool>,
    stops: Vec<u32>,
}

/// The characters of a token that can only be string content, if it is one.
fn plain_chars(bytes: &[u8]) -> Option<u32> {
    let text = std::str::from_utf8(bytes).ok()?;
    let plain = text.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\');
    plain.then(|| text.chars().count() as u32)
}

fn insert(trie: &mut Trie<Vec<u32>>, bytes: &[u8], id: u32) {
    let at = trie.insert(bytes);
    if let Some(node) = trie.node_mut(at) {
        node.end.get_or_insert_with(Vec::new).push(id);
    }
}

impl Vocabulary {
    /// `tokens[id]` is a token's bytes (empty for control tokens, never allowed unless
    /// they are among `stops`, allowed exactly when the output is complete).
    pub fn new(tokens: Vec<Vec<u8>>, stops: Vec<u32>) -> Vocabulary {
        let mut trie = Trie::default();
        let mut unplain = Trie::default();
        let mut plain = Vec::new();
        for (id, bytes) in (0u32..).zip(&tokens) {
            if !bytes.is_empty() && !stops.contains(&id) {
                insert(&mut trie, bytes, id);
                match plain_chars(bytes) {
                    Some(chars) => plain.push((chars, id)),
                    None => insert(&mut unplain, bytes, id),
                }
            }
        }
        let mut stop = vec![false; tokens.len()];
        for &s in &stops {
            if let Some(flag) = stop.get_mut(s as usize) {
                *flag = true;
            }
        }
        Vocabulary {
            tokens,
            trie,
            plain,
            unplain,
            stop,
            stops,
        }
    }

    /// The vocabulary of a tokenizer, with these stop tokens.
    pub fn from_tokenizer(tok: &crate::tokenizer::Tokenizer, stops: &[u32]) -> Vocabulary {
        let tokens = (0..tok.vocab_size() as u32)
            .map(|id| tok.token_bytes(id).to_vec())
            .collect();
        Vocabulary::new(tokens, stops.to_vec())
    }

    pub fn len(&self) -> usize {
        self.tokens.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }

    fn is_stop(&self, id: u32) -> bool {
        self.stop.get(id as usize).copied().unwrap_or(false)
    }
}

/// The automaton's state for one generation.
#[derive(Debug, Clone)]
pub struct Constraint<'g> {
    grammar: &'g Grammar,
    stack: Vec<Frame>,
    /// A stop token was taken: nothing more is allowed.
    stopped: bool,
}

impl<'g> Constraint<'g> {
    pub fn new(grammar: &'g Grammar) -> Constraint<'g> {
        Constraint {
            grammar,
            stack: vec![Frame::Value(grammar.root)],
            stopped: false,
        }
    }

    /// Whether `token` keeps the output a valid prefix (a stop token: whether the
    /// output is complete).
    pub fn allows(&self, vocab: &Vocabulary, token: u32) -> bool {
        if self.stopped {
            return false;
        }
        if vocab.is_stop(token) {
            return self.is_complete();
        }
        let bytes = vocab
            .tokens
            .get(token as usize)
            .map_or(&[][..], Vec::as_slice);
        !bytes.is_empty() && self.stepped(bytes).is_some()
    }

    /// Sets every disallowed token's logit to -inf.
    pub fn mask(&self, vocab: &Vocabulary, logits: &mut [f32]) {
        let mut allowed = vec![false; logits.len()];
        if !self.stopped {
            if self.is_complete() {
                for &s in &vocab.stops {
                    if let Some(a) = allowed.get_mut(s as usize) {
                        *a = true;
                    }
                }
            }
            let mut stacks = vec![self.stack.clone()];
            let trie = match self.stack.last() {
                Some(&Frame::Str {
                    max,
                    chars,
                    phase: automaton::StrPhase::Body,
                    ..
                }) => {
                    let room = max.saturating_sub(chars);
                    for &(_, id) in vocab.plain.iter().filter(|&&(n, _)| n <= room) {
                        if let Some(a) = allowed.get_mut(id as usize) {
                            *a = true;
                        }
                    }
                    &vocab.unplain
                }
                _ => &vocab.trie,
            };
            self.walk(trie, 0, 0, &mut stacks, &mut allowed);
        }
        for (logit, ok) in logits.iter_mut().zip(allowed) {
            if !ok {
                *logit = f32::NEG_INFINITY;
            }
        }
    }

    /// Depth-first over the vocabulary trie below `node`, whose bytes led to
    /// `stacks[depth]`; a child whose byte is refused is pruned with all below it.
    fn walk(
        &self,
        trie: &Trie<Vec<u32>>,
        node: u32,
        depth: usize,
        stacks: &mut Vec<Vec<Frame>>,
        allowed: &mut [bool],
    ) {
        let Some(n) = trie.node(node) else { return };
        if stacks.len() <= depth + 1 {
            stacks.push(Vec::new());
        }
        for &(b, child) in &n.edges {
            let (done, rest) = stacks.split_at_mut(depth + 1);
            let (Some(from), Some(to)) = (done.last(), rest.first_mut()) else {
                return;
            };
            to.clone_from(from);
            if !automaton::step(&self.grammar.nodes, to, b) {
                continue;
            }
            if let Some(ids) = trie.node(child).and_then(|c| c.end.as_ref()) {
                for &id in ids {
                    if let Some(a) = allowed.get_mut(id as usize) {
                        *a = true;
                    }
                }
            }
            self.walk(trie, child, depth + 1, stacks, allowed);
        }
    }

    /// Takes a token (it must be allowed).
    pub fn advance(&mut self, vocab: &Vocabulary, token: u32) -> Result<(), ConstraintError> {
        if !self.allows(vocab, token) {
            return Err(ConstraintError::Disallowed(token));
        }
        if vocab.is_stop(token) {
            self.stopped = true;
            return Ok(());
        }
        let bytes = vocab
            .tokens
            .get(token as usize)
            .map_or(&[][..], Vec::as_slice);
        self.stack = self
            .stepped(bytes)
            .ok_or(ConstraintError::Disallowed(token))?;
        Ok(())
    }

    /// Takes raw bytes (e.g. a forced completion); false, unchanged, if refused.
    pub fn advance_bytes(&mut self, bytes: &[u8]) -> bool {
        match self.stepped(bytes) {
            Some(stack) if !self.stopped => {
                self.stack = stack;
                true
            }
            _ => false,
        }
    }

    /// Whether the output so far is a whole sentence of the grammar.
    pub fn is_complete(&self) -> bool {
        automaton::is_complete(&self.grammar.nodes, &self.stack)
    }

    /// The shortest bytes that complete the output from here, to force an end when
    /// the token budget runs out.
    pub fn completion(&self) -> Vec<u8> {
        let mut stack = self.stack.clone();
        let mut out = Vec::new();
        // Bounded: every node is; this bound is far above any finishing path.
        while out.len() < 1 << 16 {
            let Some(b) = automaton::finishing_byte(&self.grammar.nodes, &stack) else {
                break;
            };
            if !automaton::step(&self.grammar.nodes, &mut stack, b) {
                break;
            }
            out.push(b);
        }
        out
    }

    fn stepped(&self, bytes: &[u8]) -> Option<Vec<Frame>> {
        let mut stack = self.stack.clone();
        bytes
            .iter()
            .all(|&b| automaton::step(&self.grammar.nodes, &mut stack, b))
            .then_some(stack)
    }
}

#[cfg(test)]
mod tests;
