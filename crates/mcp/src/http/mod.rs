//! HTTP helpers shared by the HTTP transports and sign-in: the redirect rule, the size
//! limits and backlog of what a server sends, and error texts that say what went wrong
//! (URLs masked).

pub mod errors;
pub mod limits;
pub mod redirect;
