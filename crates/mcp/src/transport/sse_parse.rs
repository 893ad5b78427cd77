//! An incremental parser for `text/event-stream` (the WHATWG "server-sent events" format),
//! shared by the Streamable HTTP and the legacy HTTP+SSE transports.
//!
//! Invariants: work is linear in the bytes fed (a 16 MiB `data:` line split over many chunks
//! is scanned once; whole lines are read where they lie in the chunk, only a line split
//! across chunks is copied); lines end with CRLF, LF or CR, also when the CR and LF arrive in
//! different chunks; memory stays within the event limit given to [`SseParser::new`] plus
//! the chunk being fed: an event whose data grows past the limit is discarded as it streams
//! in (its remaining bytes are scanned, never kept) and reported as [`SseEvent::too_large`]
//! at once, when it passes the limit, not when it ends.
//!
//! The parser is synchronous and has no I/O, so a fuzz target can drive it directly:
//! `SseParser::new(limit)`, then `feed(bytes, |event| ...)` any number of times.

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` field; empty means the default type `message`.
    pub event: String,
    /// The `data:` lines joined with `\n`.
    pub data: Vec<u8>,
    /// The last event id in force when the event was dispatched (ids persist across events).
    pub id: Option<String>,
    /// The event's data passed the parser's limit and is being discarded (`data` is
    /// empty). Reported as soon as the limit is passed; the rest of the event is skipped.
    pub too_large: bool,
}

impl SseEvent {
    /// `message` when no `event:` field was given.
    pub fn kind(&self) -> &str {
        if self.event.is_empty() {
            "message"
        } else {
            &self.event
        }
    }
}

/// Bytes a line may hold beyond the event limit: its field name (`data: `) and line end.
const FIELD_SLACK: usize = 16;

/// Feeds bytes in, gets events out.
#[derive(Debug)]
pub struct SseParser {
    /// The largest event data kept.
    max_event_bytes: usize,
    /// The current event passed the limit: its data lines are dropped until it ends.
    too_large: bool,
    /// The current line passed the limit: its bytes are dropped until it ends.
    skip_line: bool,
    /// The start of a line not ended yet (and, before the BOM check, the stream's first
    /// bytes).
    buf: Vec<u8>,
    /// The previous chunk ended with CR: a leading LF belongs to that line end.
    skip_lf: bool,
    event: String,
    data: Vec<u8>,
    has_data: bool,
    last_id: Option<String>,
    /// The latest `retry:` value in milliseconds.
    pub retry_ms: Option<u64>,
    /// Whether the leading UTF-8 BOM (if any) has been dealt with.
    bom_checked: bool,
}

impl SseParser {
    /// A parser that keeps at most `max_event_bytes` of one event's data.
    pub fn new(max_event_bytes: usize) -> SseParser {
        SseParser {
            max_event_bytes,
            too_large: false,
            skip_line: false,
            buf: Vec::new(),
            skip_lf: false,
            event: String::new(),
            data: Vec::new(),
            has_data: false,
            last_id: None,
            retry_ms: None,
            bom_checked: false,
        }
    }

    /// The last event id seen on this stream (for `Last-Event-ID`).
    pub fn last_event_id(&self) -> Option<&str> {
        self.last_id.as_deref()
    }

    /// Appends `chunk` and calls `on_event` for every event it completes.
    pub fn feed(&mut self, chunk: &[u8], mut on_event: impl FnMut(SseEvent)) {
        let mut chunk = chunk;
        if self.skip_lf && !chunk.is_empty() {
            if chunk[0] == b'\n' {
                chunk = &chunk[1..];
            }
            self.skip_lf = false;
        }
        if self.skip_line {
            let Some(p) = memchr::memchr2(b'\n', b'\r', chunk) else {
                return; // still inside the dropped line
            };
            self.skip_line = false;
            chunk = self.after_line_end(chunk, p);
        }
        if !self.bom_checked {
            // The stream's first bytes wait in `buf` until a BOM is ruled out or skipped.
            self.buf.extend_from_slice(chunk);
            const BOM: &[u8] = b"\xEF\xBB\xBF";
            let n = self.buf.len().min(3);
            if self.buf[..n] == BOM[..n] {
                if n < 3 {
                    return; // wait for the rest of a possible BOM
                }
                self.buf.drain(..3);
            }
            self.bom_checked = true;
            let start = std::mem::take(&mut self.buf);
            self.scan(&start, &mut on_event);
        } else {
            self.scan(chunk, &mut on_event);
        }
        let limit = self.max_event_bytes.saturating_add(FIELD_SLACK);
        if self.buf.len().saturating_add(self.data.len()) > limit {
            // An unfinished line that cannot fit: drop it and the event it belongs to.
            self.overflow(&mut on_event);
            self.skip_line = true;
            self.buf = Vec::new();
        }
        if self.buf.is_empty() && self.buf.capacity() > 1 << 20 {
            self.buf = Vec::new();
        }
    }

    /// Hands every whole line of `input` (the first one after the unfinished line kept in
    /// `buf`) to [`SseParser::line`], and keeps the unfinished rest in `buf`. Lines are
    /// taken from `input` where they lie; only a line split across chunks is copied.
    fn scan(&mut self, input: &[u8], on_event: &mut impl FnMut(SseEvent)) {
        let mut rest = input;
        if !self.buf.is_empty() {
            let Some(p) = memchr::memchr2(b'\n', b'\r', rest) else {
                self.buf.extend_from_slice(rest);
                return;
            };
            let mut line = std::mem::take(&mut self.buf);
            line.extend_from_slice(&rest[..p]);
            self.line(&line, on_event);
            line.clear();
            self.buf = line;
            rest = self.after_line_end(rest, p);
        }
        while let Some(p) = memchr::memchr2(b'\n', b'\r', rest) {
            self.line(&rest[..p], on_event);
            rest = self.after_line_end(rest, p);
        }
        self.buf.extend_from_slice(rest);
    }

    /// What follows the line end at `at` in `input` (CRLF, LF or CR; a CR that ends the
    /// input may be the first half of a CRLF split across chunks).
    fn after_line_end<'a>(&mut self, input: &'a [u8], at: usize) -> &'a [u8] {
        let mut next = at + 1;
        if input.get(at) == Some(&b'\r') {
            match input.get(next) {
                Some(b'\n') => next += 1,
                Some(_) => {}
                None => self.skip_lf = true,
            }
        }
        input.get(next..).unwrap_or_default()
    }

    /// The current event passed the limit: forget its data and report it (once).
    fn overflow(&mut self, on_event: &mut impl FnMut(SseEvent)) {
        self.has_data = false;
        self.data = Vec::new();
        if !self.too_large {
            self.too_large = true;
            on_event(SseEvent {
                event: self.event.clone(),
                data: Vec::new(),
                id: self.last_id.clone(),
                too_large: true,
            });
        }
    }

    fn line(&mut self, line: &[u8], on_event: &mut impl FnMut(SseEvent)) {
        if line.is_empty() {
            self.dispatch(on_event);
            return;
        }
        if line[0] == b':' {
            return; // comment (keep-alive)
        }
        let (field, value) = match line.iter().position(|b| *b == b':') {
            Some(p) => {
                let v = &line[p + 1..];
                (&line[..p], v.strip_prefix(b" ").unwrap_or(v))
            }
            None => (line, &b""[..]),
        };
        match field {
            b"data" if self.too_large => {}
            b"data"
                if self.data.len() + value.len() + usize::from(self.has_data)
                    > self.max_event_bytes =>
            {
                self.overflow(on_event)
            }
            b"data" => {
                if self.has_data {
                    self.data.push(b'\n');
                }
                self.data.extend_from_slice(value);
                self.has_data = true;
            }
            b"event" => self.event = String::from_utf8_lossy(value).into_owned(),
            b"id" if !value.contains(&0) => {
                // The id's string is kept and rewritten (a stream sends one per event).
                let id = self.last_id.get_or_insert_with(String::new);
                id.clear();
                id.push_str(&String::from_utf8_lossy(value));
            }
            b"retry" if !value.is_empty() && value.iter().all(u8::is_ascii_digit) => {
                if let Ok(ms) = std::str::from_utf8(value).unwrap_or("").parse() {
                    self.retry_ms = Some(ms);
                }
            }
            _ => {}
        }
    }

    fn dispatch(&mut self, on_event: &mut impl FnMut(SseEvent)) {
        let event = std::mem::take(&mut self.event);
        if self.too_large {
            self.too_large = false; // reported when it passed the limit
            self.has_data = false;
            return;
        }
        if !self.has_data {
            return;
        }
        self.has_data = false;
        let data = std::mem::take(&mut self.data);
        on_event(SseEvent {
            event,
            data,
            id: self.last_id.clone(),
            too_large: false,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LIMIT: usize = 32 * 1024 * 1024;

    fn parse_chunks(chunks: &[&[u8]]) -> (Vec<SseEvent>, SseParser) {
        let mut p = SseParser::new(LIMIT);
        let mut out = Vec::new();
        for c in chunks {
            p.feed(c, |e| out.push(e));
        }
        (out, p)
    }

    #[test]
    fn basic_events_ids_and_retry() {
        let (ev, p) = parse_chunks(&[
            b"id: 1\nretry: 500\ndata: \n\n: keep-alive\nevent: message\ndata: {\"a\":1}\n\nevent: endpoint\ndata: /m?s=1\n\n",
        ]);
        assert_eq!(ev.len(), 3);
        assert_eq!(ev[0].data, b"");
        assert_eq!(ev[0].id.as_deref(), Some("1"));
        assert_eq!(ev[1].kind(), "message");
        assert_eq!(ev[1].data, b"{\"a\":1}");
        assert_eq!(ev[1].id.as_deref(), Some("1"), "ids persist");
        assert_eq!(ev[2].kind(), "endpoint");
        assert_eq!(ev[2].data, b"/m?s=1");
        assert_eq!(p.retry_ms, Some(500));
        assert_eq!(p.last_event_id(), Some("1"));
    }

    #[test]
    fn events_without_data_are_not_dispatched_but_set_the_id() {
        let (ev, p) = parse_chunks(&[b"id: prime\n\n", b"event: x\n\n"]);
        assert!(ev.is_empty());
        assert_eq!(p.last_event_id(), Some("prime"));
    }

    #[test]
    fn multi_line_data_and_line_endings_split_across_chunks() {
        let (ev, _) = parse_chunks(&[
            b"data: a\r",
            b"\ndata: b\r\r",
            b"data:c\n",
            b"\n",
            b"\xEF\xBB",
        ]);
        assert_eq!(ev.len(), 2);
        assert_eq!(ev[0].data, b"a\nb");
        assert_eq!(ev[1].data, b"c");
    }

    #[test]
    fn bom_is_skipped_and_field_without_colon() {
        let (ev, _) = parse_chunks(&[b"\xEF\xBB", b"\xBFdata\n\ndata: x\n\n"]);
        assert_eq!(ev.len(), 2);
        assert_eq!(ev[0].data, b"");
        assert_eq!(ev[1].data, b"x");
    }

    #[test]
    fn a_huge_data_line_in_small_chunks() {
        let body = vec![b'x'; 16 * 1024 * 1024];
        let mut p = SseParser::new(LIMIT);
        let mut out = Vec::new();
        p.feed(b"event: message\ndata: ", |e| out.push(e));
        for c in body.chunks(8192) {
            p.feed(c, |e| out.push(e));
        }
        p.feed(b"\n\n", |e| out.push(e));
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].data.len(), body.len());
    }

    #[test]
    fn bad_retry_and_nul_id_are_ignored() {
        let (_, p) = parse_chunks(&[b"retry: 10x\nid: a\0b\ndata: 1\n\n"]);
        assert_eq!(p.retry_ms, None);
        assert_eq!(p.last_event_id(), None);
    }

    #[test]
    fn events_past_the_limit_are_dropped_as_they_stream() {
        let mut p = SseParser::new(1000);
        let mut out = Vec::new();
        // One line that never fits, fed in small chunks: memory stays bounded.
        p.feed(b"event: message\nid: 7\ndata: ", |e| out.push(e));
        for _ in 0..10_000 {
            p.feed(&[b'x'; 100], |e| out.push(e));
            assert!(p.buf.capacity() <= 4096, "{}", p.buf.capacity());
        }
        p.feed(b"\r", |e| out.push(e));
        p.feed(b"\ndata: more\n\ndata: ok\n\n", |e| out.push(e));
        assert_eq!(out.len(), 2, "{out:?}");
        assert!(out[0].too_large && out[0].data.is_empty());
        assert_eq!(out[0].id.as_deref(), Some("7"));
        assert_eq!(
            (out[1].too_large, out[1].data.as_slice()),
            (false, &b"ok"[..])
        );
        // Many short data lines that add up past the limit.
        let mut out = Vec::new();
        for _ in 0..30 {
            p.feed(b"data: 0123456789012345678901234567890123456789\n", |e| {
                out.push(e)
            });
        }
        p.feed(b"\n", |e| out.push(e));
        assert_eq!(out.len(), 1);
        assert!(out[0].too_large);
        // Exactly at the limit is fine.
        let mut out = Vec::new();
        let body = vec![b'y'; 1000];
        p.feed(b"data: ", |e| out.push(e));
        p.feed(&body, |e| out.push(e));
        p.feed(b"\n\n", |e| out.push(e));
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].data.len(), 1000);
    }
}
