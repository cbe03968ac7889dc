//! The messages a run sends its model: the conversation's earlier turns (the history),
//! then the run's own. A run is saved before every step, but the history is not its
//! to save: it is the conversation's, stored with the conversation. So a saved run
//! keeps only its own messages and how many came before them, and the history is given
//! back when it is resumed (`AgentRun::resumed`): a step's save costs what the run
//! added, not the conversation again.

use std::cell::Cell;
use std::fmt;
use std::ops::Deref;
use std::rc::Rc;

use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
use serde::de::{MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::llm::message::Message;

#[derive(Debug, Clone)]
pub(super) struct Transcript {
    messages: Rc<Vec<Message>>,
    /// How many of the leading messages are the history.
    history: usize,
    /// Read back from a save: the history is not in `messages` until
    /// [`Transcript::reattach`] gives it back.
    detached: bool,
    /// The estimated tokens of the first `.0` messages (`.1`): messages are only ever
    /// added, so a step estimates only the ones added since the last, and costs the
    /// same at the thousandth message as at the tenth. Not part of what the
    /// transcript is (equality and saves ignore it).
    estimated: Cell<(usize, usize)>,
}

impl PartialEq for Transcript {
    fn eq(&self, other: &Self) -> bool {
        self.messages == other.messages
            && self.history == other.history
            && self.detached == other.detached
    }
}

impl Transcript {
    pub fn new(history: Vec<Message>) -> Self {
        Self {
            history: history.len(),
            messages: Rc::new(history),
            detached: false,
            estimated: Cell::default(),
        }
    }

    /// Estimated prompt tokens of all the messages (`llm::window::estimate_message`
    /// each), counting only those added since it was last asked.
    pub fn estimated_tokens(&self) -> usize {
        let (counted, mut tokens) = self.estimated.get();
        let Some(new) = self.messages.get(counted..) else {
            // Fewer messages than counted: never by `push`; count again.
            self.estimated.set((0, 0));
            return self.estimated_tokens();
        };
        tokens += new
            .iter()
            .map(crate::llm::window::estimate_message)
            .sum::<usize>();
        self.estimated.set((self.messages.len(), tokens));
        tokens
    }

    /// The messages, shared with the requests made of them.
    pub fn shared(&self) -> Rc<Vec<Message>> {
        Rc::clone(&self.messages)
    }

    pub fn push(&mut self, message: Message) {
        Rc::make_mut(&mut self.messages).push(message);
    }

    pub fn iter_mut(&mut self) -> impl Iterator<Item = &mut Message> {
        self.estimated.set((0, 0));
        Rc::make_mut(&mut self.messages).iter_mut()
    }

    /// Gives a run read back from a save its history again (the conversation's turns
    /// before this one, as the conversation gives them now); returns where the run's
    /// own messages now begin. A transcript that kept its history (never saved, or
    /// saved whole by an older build) keeps it.
    pub fn reattach(&mut self, history: Vec<Message>) -> Option<usize> {
        if !self.detached {
            return None;
        }
        self.detached = false;
        self.estimated.set((0, 0));
        self.history = history.len();
        let own = std::mem::take(Rc::make_mut(&mut self.messages));
        let mut messages = history;
        messages.extend(own);
        self.messages = Rc::new(messages);
        Some(self.history)
    }

    /// The run's own messages: after the history, or all of them once detached.
    fn own(&self) -> &[Message] {
        if self.detached {
            &self.messages
        } else {
            self.messages.get(self.history..).unwrap_or_default()
        }
    }
}

impl Deref for Transcript {
    type Target = [Message];

    fn deref(&self) -> &[Message] {
        &self.messages
    }
}

/// The saved form: the run's own messages, after `history` of the conversation's.
#[derive(Serialize, Deserialize)]
struct Saved<M> {
    history: usize,
    own: M,
}

impl Serialize for Transcript {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        Saved {
            history: self.history,
            own: self.own(),
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Transcript {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(TranscriptVisitor)
    }
}

/// Reads the saved form, or the whole list of messages builds before it saved.
struct TranscriptVisitor;

impl<'de> Visitor<'de> for TranscriptVisitor {
    type Value = Transcript;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a run's messages")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Transcript, A::Error> {
        let whole = Vec::<Message>::deserialize(SeqAccessDeserializer::new(seq))?;
        Ok(Transcript {
            messages: Rc::new(whole),
            history: 0,
            detached: false,
            estimated: Cell::default(),
        })
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Transcript, A::Error> {
        let saved = Saved::<Vec<Message>>::deserialize(MapAccessDeserializer::new(map))?;
        Ok(Transcript {
            messages: Rc::new(saved.own),
            history: saved.history,
            detached: saved.history > 0,
            estimated: Cell::default(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(transcript: &Transcript) -> Vec<&str> {
        transcript.iter().map(|m| m.content.as_str()).collect()
    }

    #[test]
    fn a_save_keeps_the_runs_own_messages_and_the_history_is_given_back() {
        let mut transcript = Transcript::new(vec![Message::user("earlier"), Message::user("ok")]);
        transcript.push(Message::user("now"));
        let text = serde_json::to_string(&transcript).unwrap();
        assert!(!text.contains("earlier"), "{text}");
        let mut read: Transcript = serde_json::from_str(&text).unwrap();
        assert_eq!(texts(&read), ["now"]);
        // The conversation gives back the history as it stands now.
        assert_eq!(read.reattach(vec![Message::user("earlier")]), Some(1));
        assert_eq!(texts(&read), ["earlier", "now"]);
        assert_eq!(read.reattach(vec![Message::user("again")]), None);
        let again = serde_json::to_string(&read).unwrap();
        assert!(
            again.starts_with(r#"{"history":1,"#) && !again.contains("earlier"),
            "{again}"
        );
    }

    #[test]
    fn the_whole_list_an_older_build_saved_is_read_as_it_was() {
        let whole =
            serde_json::to_string(&vec![Message::user("earlier"), Message::user("now")]).unwrap();
        let mut read: Transcript = serde_json::from_str(&whole).unwrap();
        assert_eq!(texts(&read), ["earlier", "now"]);
        assert_eq!(read.reattach(vec![Message::user("other")]), None);
        assert_eq!(texts(&read), ["earlier", "now"]);
    }
}
