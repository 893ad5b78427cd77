//! Newline framing of a server's stdout, with one per-message limit.
//!
//! [`LineReader`] turns any [`AsyncBufRead`] into [`Frame`]s. Its state lives in the
//! reader, never in the future, so a `next_frame` call dropped at an await point (e.g. in
//! a `select!` against the child's exit) loses nothing. Memory stays bounded whatever
//! arrives: a line is buffered only while it may still be a message, i.e. while it starts
//! with `{` or `[` and is at most `max` bytes long. Other lines are noise: a short prefix
//! is kept for the log and the rest is skipped as it streams in. A JSON line longer than
//! `max` is skipped the same way; its id is looked for in its first bytes so that the
//! one call it answers can fail.
//!
//! It is synchronous to drive from tests and fuzzers: `&[u8]` is an `AsyncBufRead` that
//! never pends, so `futures::executor::block_on(reader.next_frame())` works.

use std::io;

use tokio::io::{AsyncBufRead, AsyncBufReadExt};

/// Bytes of a noise line kept for the log.
pub const NOISE_PREFIX: usize = 4096;

/// Bytes at the start of an oversized message searched for its `"id"`.
pub const ID_WINDOW: usize = 4096;

/// Messages shorter than this are copied out of the line buffer (which is then reused);
/// longer ones take the buffer with them.
const HANDOFF_MIN: usize = 64 * 1024;

/// A line buffer that grew beyond this is given back once a small message went through.
const KEEP_CAPACITY: usize = 256 * 1024;

/// One unit read from the server's stdout.
#[derive(Debug, PartialEq, Eq)]
pub enum Frame {
    /// A line that starts with `{` or `[`, without surrounding whitespace.
    Message(Vec<u8>),
    /// A non-JSON line (cut to [`NOISE_PREFIX`] bytes); `len` is its full length.
    Noise { prefix: Vec<u8>, len: u64 },
    /// A line that passed the limit, yielded as soon as it did; the rest of it is skipped
    /// as it arrives. `id` is its JSON-RPC id as written (e.g. `7` or `"a"`) when it is a
    /// JSON line whose first [`ID_WINDOW`] bytes show one; `len` is the bytes seen so far.
    TooLong { id: Option<String>, len: u64 },
    /// End of input. A final line without a newline was yielded before.
    Eof,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Only whitespace so far.
    Start,
    /// Buffering a possible message.
    Json,
    /// Skipping a noise line (the prefix is in `line`).
    Noise,
    /// Skipping the rest of a line that passed the limit (already reported).
    Skip,
}

/// Splits a byte stream into lines of at most `max` bytes. See the module docs.
pub struct LineReader<R> {
    inner: R,
    st: State,
    consumed: u64,
}

/// The current line's state, apart from the reader it comes from.
struct State {
    max: usize,
    line: Vec<u8>,
    mode: Mode,
    len: u64,
}

impl<R: AsyncBufRead + Unpin> LineReader<R> {
    /// `max` is the longest message accepted, in bytes (without the newline).
    pub fn new(inner: R, max: usize) -> Self {
        LineReader {
            inner,
            st: State {
                max: max.max(1),
                line: Vec::with_capacity(4096),
                mode: Mode::Start,
                len: 0,
            },
            consumed: 0,
        }
    }

    pub fn get_ref(&self) -> &R {
        &self.inner
    }

    /// Bytes read so far (newlines included); shows progress inside a long line.
    pub fn consumed(&self) -> u64 {
        self.consumed
    }

    /// The next frame. Cancel-safe.
    pub async fn next_frame(&mut self) -> io::Result<Frame> {
        loop {
            let chunk = self.inner.fill_buf().await?;
            if chunk.is_empty() {
                let eof = self.st.mode != Mode::Start || !self.st.line.is_empty();
                if eof {
                    if let Some(frame) = self.st.finish() {
                        return Ok(frame);
                    }
                }
                return Ok(Frame::Eof);
            }
            let (take, end) = match memchr::memchr(b'\n', chunk) {
                Some(i) => (i + 1, true),
                None => (chunk.len(), false),
            };
            let piece = &chunk[..if end { take - 1 } else { take }];
            if end && self.st.mode == Mode::Start {
                // The usual case: a whole message in the buffer, copied out once.
                if let Some(msg) = self.st.whole_message(piece) {
                    self.st.len = 0;
                    self.inner.consume(take);
                    self.consumed += take as u64;
                    return Ok(Frame::Message(msg));
                }
            }
            let over = self.st.absorb(piece);
            self.inner.consume(take);
            self.consumed += take as u64;
            if let Some(frame) = over {
                if end {
                    self.st.finish();
                }
                return Ok(frame);
            }
            if end {
                if let Some(frame) = self.st.finish() {
                    return Ok(frame);
                }
            }
        }
    }
}

impl State {
    /// `line`, a whole line met at its start, as a message when it is one; `None` when it
    /// needs [`State::absorb`] (blank, noise, or past the limit). Yields what absorbing
    /// and finishing it would.
    fn whole_message(&self, line: &[u8]) -> Option<Vec<u8>> {
        let start = line.iter().position(|b| !b.is_ascii_whitespace())?;
        let rest = &line[start..];
        if !matches!(rest[0], b'{' | b'[') || rest.len() > self.max.saturating_add(2) {
            return None;
        }
        let end = rest.iter().rposition(|b| !b.is_ascii_whitespace())? + 1;
        (end <= self.max).then(|| rest[..end].to_vec())
    }

    /// Adds a piece of the current line (no newline in it); yields the line as too long
    /// when this piece takes it past the limit.
    fn absorb(&mut self, mut piece: &[u8]) -> Option<Frame> {
        self.len += piece.len() as u64;
        if self.mode == Mode::Start {
            let first = piece.iter().position(|b| !b.is_ascii_whitespace())?;
            piece = &piece[first..];
            self.mode = if matches!(piece[0], b'{' | b'[') {
                Mode::Json
            } else {
                Mode::Noise
            };
        }
        let id = match self.mode {
            Mode::Start | Mode::Skip => return None,
            Mode::Json => {
                // Room for a trailing `\r` or spaces, trimmed at the end of the line.
                if self.line.len() + piece.len() <= self.max.saturating_add(2) {
                    self.line.extend_from_slice(piece);
                    return None;
                }
                let room = ID_WINDOW.saturating_sub(self.line.len());
                self.line.extend_from_slice(&piece[..room.min(piece.len())]);
                find_id(&self.line[..ID_WINDOW.min(self.line.len())])
            }
            Mode::Noise => {
                let room = NOISE_PREFIX.saturating_sub(self.line.len());
                self.line.extend_from_slice(&piece[..room.min(piece.len())]);
                if self.len <= self.max as u64 {
                    return None;
                }
                None // noise has no id
            }
        };
        self.mode = Mode::Skip;
        self.line = Vec::with_capacity(4096);
        Some(Frame::TooLong { id, len: self.len })
    }

    /// Ends the current line; `None` for a blank one.
    fn finish(&mut self) -> Option<Frame> {
        let mode = std::mem::replace(&mut self.mode, Mode::Start);
        let len = std::mem::take(&mut self.len);
        match mode {
            Mode::Start | Mode::Skip => {
                self.line.clear();
                None
            }
            Mode::Json => {
                let mut end = self.line.len();
                while end > 0 && self.line[end - 1].is_ascii_whitespace() {
                    end -= 1;
                }
                if end > self.max {
                    let id = find_id(&self.line[..ID_WINDOW.min(end)]);
                    self.line = Vec::with_capacity(4096);
                    return Some(Frame::TooLong { id, len });
                }
                if end < HANDOFF_MIN {
                    let msg = self.line[..end].to_vec();
                    if self.line.capacity() > KEEP_CAPACITY {
                        self.line = Vec::with_capacity(4096);
                    } else {
                        self.line.clear();
                    }
                    Some(Frame::Message(msg))
                } else {
                    // Hand the buffer over without copying; keep a fresh one.
                    let mut msg = std::mem::replace(&mut self.line, Vec::with_capacity(4096));
                    msg.truncate(end);
                    Some(Frame::Message(msg))
                }
            }
            Mode::Noise => {
                let mut prefix = std::mem::take(&mut self.line);
                while prefix.last().is_some_and(|b| b.is_ascii_whitespace()) {
                    prefix.pop();
                }
                self.line = Vec::with_capacity(4096);
                Some(Frame::Noise { prefix, len })
            }
        }
    }
}

/// The value of the first `"id":` key in `head`, when it is a number or a plain string.
/// A heuristic for oversized messages only: well-formed servers write `id` before the
/// large `result`, and a wrong guess only fails the wrong call early.
fn find_id(head: &[u8]) -> Option<String> {
    let key = b"\"id\"";
    let at = memchr::memmem::find(head, key)?;
    let mut rest = &head[at + key.len()..];
    rest = trim_start(rest);
    rest = rest.strip_prefix(b":")?;
    rest = trim_start(rest);
    let end = if rest.first() == Some(&b'"') {
        1 + rest[1..].iter().position(|b| *b == b'"' || *b == b'\\')? + 1
    } else {
        rest.iter()
            .position(|b| !(b.is_ascii_digit() || *b == b'-'))
            .unwrap_or(rest.len())
    };
    let id = &rest[..end];
    if id.is_empty() || (id.len() == 1 && id[0] == b'"') || end == rest.len() && id[0] != b'"' {
        return None;
    }
    std::str::from_utf8(id).ok().map(str::to_string)
}

fn trim_start(mut s: &[u8]) -> &[u8] {
    while let Some((b, rest)) = s.split_first() {
        if !b.is_ascii_whitespace() {
            break;
        }
        s = rest;
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(input: &[u8], max: usize) -> Vec<Frame> {
        let mut r = LineReader::new(input, max);
        let mut out = Vec::new();
        loop {
            let f = futures::executor::block_on(r.next_frame()).unwrap();
            if f == Frame::Eof {
                return out;
            }
            out.push(f);
        }
    }

    #[test]
    fn splits_messages_noise_and_oversized_lines() {
        let input = b"  {\"a\":1}\r\n\n\nnot json\n{\"id\":7,\"result\":\"0123456789\"}\n[1]";
        assert_eq!(
            frames(input, 20),
            vec![
                Frame::Message(b"{\"a\":1}".to_vec()),
                Frame::Noise {
                    prefix: b"not json".to_vec(),
                    len: 8
                },
                Frame::TooLong {
                    id: Some("7".into()),
                    len: 30
                },
                Frame::Message(b"[1]".to_vec()),
            ]
        );
    }

    #[test]
    fn noise_without_newline_is_not_buffered() {
        let mut input = vec![b'x'; 1 << 20];
        input.extend_from_slice(b"\n{}\n");
        let mut r = LineReader::new(&input[..], 1000);
        let f = futures::executor::block_on(r.next_frame()).unwrap();
        assert!(matches!(f, Frame::TooLong { id: None, len } if len > 1000));
        assert!(r.st.line.capacity() <= 2 * NOISE_PREFIX);
        let f = futures::executor::block_on(r.next_frame()).unwrap();
        assert_eq!(f, Frame::Message(b"{}".to_vec()));
    }

    #[test]
    fn finds_string_ids_and_gives_up_on_odd_ones() {
        assert_eq!(
            find_id(br#"{"jsonrpc":"2.0","id" : "a-1","result""#),
            Some("\"a-1\"".into())
        );
        assert_eq!(find_id(br#"{"result":{"#), None);
        assert_eq!(find_id(br#"{"id":12"#), None);
    }
}
