//! HTTP helpers shared by the HTTP transports and sign-in: the redirect rule, the size
//! limits and backlog of what a server sends, error texts that say what went wrong
//! (URLs masked), and how one exchange is sent ([`wire`]: reqwest, or the lean HTTP/1.1
//! client of [`h1`] for a plain-http server).

pub mod errors;
pub(crate) mod h1;
pub mod limits;
pub mod redirect;
pub(crate) mod wire;

#[doc(hidden)]
pub use h1::{read_chunk_lines, read_head, ReadHead, MAX_CHUNK_LINE};
