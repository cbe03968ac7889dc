//! A byte trie: the literals a grammar node may emit (enum values, object keys, tool
//! names), and the vocabulary's tokens, so a mask walks shared prefixes once.

/// No trie: a string that avoids nothing, or whose content left its avoided trie.
pub const NO_TRIE: u32 = u32::MAX;

/// A node's edges, sorted by byte, and what ends there.
#[derive(Debug, Clone, Default)]
pub struct TrieNode<T> {
    pub edges: Vec<(u8, u32)>,
    /// What a word ending here stands for (an action, or the tokens spelled so).
    pub end: Option<T>,
}

/// A trie whose root is node 0.
#[derive(Debug, Clone)]
pub struct Trie<T> {
    nodes: Vec<TrieNode<T>>,
}

impl<T> Default for Trie<T> {
    fn default() -> Self {
        Trie {
            nodes: vec![TrieNode {
                edges: Vec::new(),
                end: None,
            }],
        }
    }
}

impl<T> Trie<T> {
    /// Adds `word`, returning the node it ends at (its `end` is left to the caller).
    pub fn insert(&mut self, word: &[u8]) -> u32 {
        let mut at = 0u32;
        for &b in word {
            at = match self.child(at, b) {
                Some(next) => next,
                None => {
                    let next = self.nodes.len() as u32;
                    self.nodes.push(TrieNode {
                        edges: Vec::new(),
                        end: None,
                    });
                    if let Some(node) = self.nodes.get_mut(at as usize) {
                        let pos = node.edges.partition_point(|&(e, _)| e < b);
                        node.edges.insert(pos, (b, next));
                    }
                    next
                }
            };
        }
        at
    }

    pub fn node(&self, at: u32) -> Option<&TrieNode<T>> {
        self.nodes.get(at as usize)
    }

    pub fn node_mut(&mut self, at: u32) -> Option<&mut TrieNode<T>> {
        self.nodes.get_mut(at as usize)
    }

    /// The node `b` leads to from `at`.
    pub fn child(&self, at: u32, b: u8) -> Option<u32> {
        let edges = &self.nodes.get(at as usize)?.edges;
        if edges.len() < 8 {
            edges.iter().find(|&&(e, _)| e == b).map(|&(_, n)| n)
        } else {
            edges
                .binary_search_by_key(&b, |&(e, _)| e)
                .ok()
                .and_then(|i| edges.get(i))
                .map(|&(_, n)| n)
        }
    }

    /// The first byte on a shortest path from `at` to a word's end (None: `at` ends
    /// a word, or nothing ends below it).
    pub fn shortest_step(&self, at: u32) -> Option<u8> {
        let mut best: Option<(usize, u8)> = None;
        for &(b, child) in &self.node(at)?.edges {
            if let Some(d) = self.depth_to_end(child, 64)
                && best.is_none_or(|(bd, _)| d < bd)
            {
                best = Some((d, b));
            }
        }
        best.map(|(_, b)| b)
    }

    /// How many bytes from `at` to the nearest word end (breadth-first, bounded).
    fn depth_to_end(&self, at: u32, limit: usize) -> Option<usize> {
        let mut level = vec![at];
        for depth in 0..limit {
            if level
                .iter()
                .any(|&n| self.node(n).is_some_and(|n| n.end.is_some()))
            {
                return Some(depth);
            }
            level = level
                .iter()
                .filter_map(|&n| self.node(n))
                .flat_map(|n| n.edges.iter().map(|&(_, c)| c))
                .collect();
            if level.is_empty() {
                return None;
            }
        }
        None
    }
}
