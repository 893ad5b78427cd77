//! Tool pinning: digests of the tool definitions a server had when it was approved, so
//! that a later change (a rug pull) is held back until the user reviews it.
