//! Server-sent events: a pure, byte-exact decoder for `text/event-stream`.
//!
//! Bytes arrive in network chunks that split lines, CR LF pairs and multi-byte
//! characters anywhere; [`SseDecoder`] yields the same events whatever the chunking.
//! It follows the WHATWG event-stream rules (fields `data`, `event`, `id`, `retry`;
//! comment lines; CR, LF and CRLF line ends; an unterminated event at the end of the
//! stream is dropped). What an event means is the model client's business.

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` name; `message` when the stream named none.
    pub name: String,
    /// The `data:` lines, joined by `\n`.
    pub data: String,
    /// The last `id:` seen, if any.
    pub id: Option<String>,
}

/// Incremental decoder state.
#[derive(Debug, Default)]
pub struct SseDecoder {
    /// Bytes of the line being read.
    line: Vec<u8>,
    /// The previous byte was a CR, so a leading LF belongs to it.
    after_cr: bool,
    name: Option<String>,
    data: String,
    has_data: bool,
    last_id: Option<String>,
    /// The server's reconnection delay, from `retry:`.
    pub retry_ms: Option<u64>,
}

impl SseDecoder {
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds a chunk; returns the events it completed, in order.
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<SseEvent> {
        let mut events = Vec::new();
        for &byte in bytes {
            let after_cr = std::mem::replace(&mut self.after_cr, byte == b'\r');
            match byte {
                b'\n' if after_cr => {}
                b'\n' | b'\r' => {
                    let line = std::mem::take(&mut self.line);
                    if let Some(event) = self.end_line(&line) {
                        events.push(event);
                    }
                }
                _ => self.line.push(byte),
            }
        }
        events
    }

    /// Whether bytes of an unfinished event are pending (a stream cut mid-event).
    pub fn has_partial_event(&self) -> bool {
        !self.line.is_empty() || self.has_data
    }

    fn end_line(&mut self, line: &[u8]) -> Option<SseEvent> {
        if line.is_empty() {
            return self.dispatch();
        }
        let line = String::from_utf8_lossy(line);
        if line.starts_with(':') {
            return None;
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line.as_ref(), ""),
        };
        match field {
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            "event" => self.name = Some(value.to_owned()),
            "id" if !value.contains('\0') => self.last_id = Some(value.to_owned()),
            "retry" => {
                if let Ok(ms) = value.parse() {
                    self.retry_ms = Some(ms);
                }
            }
            _ => {}
        }
        None
    }

    fn dispatch(&mut self) -> Option<SseEvent> {
        let name = self.name.take();
        if !std::mem::take(&mut self.has_data) {
            return None;
        }
        Some(SseEvent {
            name: name
                .filter(|n| !n.is_empty())
                .unwrap_or_else(|| "message".into()),
            data: std::mem::take(&mut self.data),
            id: self.last_id.clone(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_in_chunks(input: &[u8], size: usize) -> Vec<SseEvent> {
        let mut decoder = SseDecoder::new();
        input
            .chunks(size.max(1))
            .flat_map(|chunk| decoder.feed(chunk))
            .collect()
    }

    fn data(events: &[SseEvent]) -> Vec<&str> {
        events.iter().map(|e| e.data.as_str()).collect()
    }

    #[test]
    fn events_end_at_a_blank_line_whatever_the_line_ending() {
        let input = b"data: a\n\ndata: b\r\rdata: c\r\n\r\n";
        assert_eq!(data(&decode_in_chunks(input, 64)), ["a", "b", "c"]);
    }

    #[test]
    fn a_crlf_split_across_chunks_is_one_line_end() {
        let input = b"data: a\r\n\r\ndata: b\r\n\r\n";
        for size in 1..input.len() {
            assert_eq!(
                data(&decode_in_chunks(input, size)),
                ["a", "b"],
                "chunk {size}"
            );
        }
    }

    #[test]
    fn multi_byte_characters_split_mid_character_survive() {
        let input = "data: «héllo» 🦀\n\n".as_bytes();
        for size in 1..input.len() {
            assert_eq!(data(&decode_in_chunks(input, size)), ["«héllo» 🦀"]);
        }
    }

    #[test]
    fn comments_and_keep_alives_dispatch_nothing() {
        let input = b": keep-alive\n\n:\n\ndata: x\n\n";
        assert_eq!(data(&decode_in_chunks(input, 3)), ["x"]);
    }

    #[test]
    fn fields_follow_the_event_stream_rules() {
        let input =
            b"event: error\nid: 7\nretry: 1500\ndata:no-space\ndata:  two\nbogus: 1\ndata\n\n";
        let mut decoder = SseDecoder::new();
        let events = decoder.feed(input);
        assert_eq!(
            events,
            [SseEvent {
                name: "error".into(),
                data: "no-space\n two\n".into(),
                id: Some("7".into()),
            }]
        );
        assert_eq!(decoder.retry_ms, Some(1500));
        let next = decoder.feed(b"data: y\n\n");
        assert_eq!(next[0].name, "message", "the event name resets");
        assert_eq!(next[0].id.as_deref(), Some("7"), "the last id persists");
    }

    #[test]
    fn an_unterminated_event_is_not_dispatched_but_is_reported() {
        let mut decoder = SseDecoder::new();
        assert!(decoder.feed(b"data: {\"partial\":").is_empty());
        assert!(decoder.has_partial_event());
        let mut clean = SseDecoder::new();
        clean.feed(b"data: x\n\n");
        assert!(!clean.has_partial_event());
    }

    #[test]
    fn invalid_utf8_becomes_replacement_characters() {
        assert_eq!(
            data(&decode_in_chunks(b"data: \xff\xfe\n\n", 1)),
            ["\u{fffd}\u{fffd}"]
        );
    }
}
