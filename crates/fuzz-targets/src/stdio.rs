//! Fuzz target body for the stdio line framer, with an in-memory reader that hands out
//! the input in reads of a chosen size.

use harness9_mcp::transport::stdio::framer::{Frame, LineReader};

/// The stdio line framer: with a small limit, every line comes out as the frame a plain
/// line-by-line model expects (a trimmed JSON message of at most the limit, a noise
/// line, or a too-long line), in order, whatever the size of the reads; the reader
/// consumes the whole input and ends with `Eof`. The first byte picks the limit (1..=64)
/// and a read size.
pub fn stdio(data: &[u8]) {
    let Some((&first, body)) = data.split_first() else {
        return;
    };
    let max = usize::from(first & 0x3f) + 1;
    let chunk = [1, 2, 3, 7][usize::from(first >> 6)];
    let whole = read_frames(body, usize::MAX, max);
    let split_up = read_frames(body, chunk, max);
    let bytewise = read_frames(body, 1, max);
    let expected = model_frames(body, max);
    assert_eq!(whole.len(), expected.len(), "frame count, whole input");
    for (got, (want, line_len)) in whole.iter().zip(&expected) {
        match (got, want) {
            (Frame::TooLong { len, .. }, Frame::TooLong { .. }) => {
                assert!(*len > max as u64, "a too-long line within the limit");
                assert!(*len <= *line_len as u64, "too-long len beyond its line");
            }
            (got, want) => assert_eq!(got, want, "frame differs from the line model"),
        }
        if let Frame::Message(m) = got {
            assert!(m.len() <= max, "a message longer than the limit");
            assert!(matches!(m.first(), Some(b'{' | b'[')), "a message not JSON");
            assert!(!m.contains(&b'\n'), "a newline inside a message");
            assert!(
                !m.last().is_some_and(u8::is_ascii_whitespace),
                "untrimmed message"
            );
        }
    }
    // The size of the reads changes nothing, except how far into a too-long line the
    // reader had got (and so which id it could see) when it passed the limit.
    for (other, size) in [(&split_up, chunk), (&bytewise, 1)] {
        assert_eq!(
            other.len(),
            whole.len(),
            "frame count depends on reads ({size})"
        );
        for (a, b) in whole.iter().zip(other) {
            match (a, b) {
                (Frame::TooLong { id: wid, .. }, Frame::TooLong { id, len }) => {
                    assert!(*len > max as u64, "a too-long line within the limit");
                    if id.is_some() {
                        assert_eq!(id, wid, "too-long id depends on reads ({size})");
                    }
                }
                (a, b) => assert_eq!(a, b, "frames depend on reads ({size})"),
            }
        }
    }
}

/// Reads every frame of `input` through a `LineReader` that gets at most `chunk` bytes
/// per read; checks that it ends with `Eof` having consumed everything.
fn read_frames(input: &[u8], chunk: usize, max: usize) -> Vec<Frame> {
    let mut r = LineReader::new(
        Chunked {
            data: input,
            pos: 0,
            chunk,
        },
        max,
    );
    let mut out = Vec::new();
    loop {
        let f = futures::executor::block_on(r.next_frame()).expect("reading a slice");
        if f == Frame::Eof {
            break;
        }
        out.push(f);
        assert!(out.len() <= input.len(), "more frames than input bytes");
    }
    assert_eq!(r.consumed(), input.len() as u64, "input not consumed");
    assert_eq!(r.get_ref().pos, input.len(), "input not consumed");
    let again = futures::executor::block_on(r.next_frame()).expect("reading a slice");
    assert_eq!(again, Frame::Eof, "no Eof after Eof");
    out
}

/// The frames expected for `input`, one line at a time, each with its line's length.
fn model_frames(input: &[u8], max: usize) -> Vec<(Frame, usize)> {
    let mut lines: Vec<&[u8]> = input.split(|b| *b == b'\n').collect();
    if lines.last().is_some_and(|l| l.is_empty()) {
        lines.pop();
    }
    let mut out = Vec::new();
    for line in lines {
        let Some(start) = line.iter().position(|b| !b.is_ascii_whitespace()) else {
            continue; // blank
        };
        let rest = &line[start..];
        let end = rest
            .iter()
            .rposition(|b| !b.is_ascii_whitespace())
            .map_or(0, |i| i + 1);
        let trimmed = &rest[..end];
        let frame = if matches!(rest[0], b'{' | b'[') {
            // Trailing whitespace may take up to two bytes beyond the limit.
            if rest.len() > max + 2 || trimmed.len() > max {
                Frame::TooLong { id: None, len: 0 }
            } else {
                Frame::Message(trimmed.to_vec())
            }
        } else if line.len() > max {
            Frame::TooLong { id: None, len: 0 }
        } else {
            Frame::Noise {
                prefix: trimmed.to_vec(),
                len: line.len() as u64,
            }
        };
        out.push((frame, line.len()));
    }
    out
}

/// An in-memory reader that hands out at most `chunk` bytes per `fill_buf`.
struct Chunked<'a> {
    data: &'a [u8],
    pos: usize,
    chunk: usize,
}

impl tokio::io::AsyncRead for Chunked<'_> {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let end = self.data.len().min(self.pos.saturating_add(self.chunk));
        let n = (end - self.pos).min(buf.remaining());
        buf.put_slice(&self.data[self.pos..self.pos + n]);
        self.pos += n;
        std::task::Poll::Ready(Ok(()))
    }
}

impl tokio::io::AsyncBufRead for Chunked<'_> {
    fn poll_fill_buf(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<&[u8]>> {
        let this = self.get_mut();
        let end = this.data.len().min(this.pos.saturating_add(this.chunk));
        std::task::Poll::Ready(Ok(&this.data[this.pos..end]))
    }

    fn consume(mut self: std::pin::Pin<&mut Self>, amt: usize) {
        self.pos += amt;
    }
}
