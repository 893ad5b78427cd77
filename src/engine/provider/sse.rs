//! An incremental Server-Sent Events parser: bytes in (split anywhere, even inside a UTF-8
//! character or a CRLF), whole events out. Follows the WHATWG rules the providers rely on:
//! `event:` and `data:` fields, several `data:` lines joined by `\n`, comments (`:`) and
//! unknown fields ignored, an event dispatched at a blank line.

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SseEvent {
    /// The `event:` field (empty when absent).
    pub event: String,
    pub data: String,
}

#[derive(Debug, Default)]
pub struct SseParser {
    /// Bytes of the line not yet ended.
    line: Vec<u8>,
    /// The last byte seen was `\r`: a following `\n` belongs to the same line end.
    after_cr: bool,
    event: String,
    data: String,
    has_data: bool,
}

impl SseParser {
    /// Feeds a chunk; returns the events it completed.
    pub fn feed(&mut self, chunk: &[u8]) -> Vec<SseEvent> {
        let mut out = Vec::new();
        let mut rest = chunk;
        if self.after_cr {
            self.after_cr = false;
            if let [b'\n', tail @ ..] = rest {
                rest = tail;
            }
        }
        while let Some(pos) = rest.iter().position(|b| *b == b'\n' || *b == b'\r') {
            self.line.extend_from_slice(&rest[..pos]);
            let line = std::mem::take(&mut self.line);
            self.line_done(&line, &mut out);
            self.line = line;
            self.line.clear();
            if rest[pos] == b'\r' {
                match rest.get(pos + 1) {
                    Some(b'\n') => rest = &rest[pos + 2..],
                    Some(_) => rest = &rest[pos + 1..],
                    None => {
                        self.after_cr = true;
                        rest = &[];
                    }
                }
            } else {
                rest = &rest[pos + 1..];
            }
        }
        self.line.extend_from_slice(rest);
        out
    }

    fn line_done(&mut self, line: &[u8], out: &mut Vec<SseEvent>) {
        if line.is_empty() {
            if self.has_data {
                out.push(SseEvent {
                    event: std::mem::take(&mut self.event),
                    data: std::mem::take(&mut self.data),
                });
            } else {
                self.event.clear();
            }
            self.has_data = false;
            return;
        }
        if line[0] == b':' {
            return;
        }
        let (field, value) = match line.iter().position(|b| *b == b':') {
            Some(i) => {
                let v = &line[i + 1..];
                (&line[..i], v.strip_prefix(b" ").unwrap_or(v))
            }
            None => (line, &[][..]),
        };
        let value = String::from_utf8_lossy(value);
        match field {
            b"data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(&value);
                self.has_data = true;
            }
            b"event" => self.event = value.into_owned(),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(event: &str, data: &str) -> SseEvent {
        SseEvent {
            event: event.into(),
            data: data.into(),
        }
    }

    #[test]
    fn events_split_at_every_byte_come_out_whole() {
        let text = "event: a\ndata: {\"x\":\"é\"}\n\n: comment\r\ndata: one\r\ndata: two\r\n\r\ndata:[DONE]\n\n";
        let expected = vec![
            ev("a", "{\"x\":\"é\"}"),
            ev("", "one\ntwo"),
            ev("", "[DONE]"),
        ];
        let mut whole = SseParser::default();
        assert_eq!(whole.feed(text.as_bytes()), expected);
        let mut split = SseParser::default();
        let mut got = Vec::new();
        for b in text.as_bytes() {
            got.extend(split.feed(std::slice::from_ref(b)));
        }
        assert_eq!(got, expected);
    }

    #[test]
    fn an_event_without_data_is_not_dispatched() {
        let mut p = SseParser::default();
        assert_eq!(
            p.feed(b"event: ping\n\nretry: 5\ndata: x\n\n"),
            vec![ev("", "x")]
        );
    }
}
