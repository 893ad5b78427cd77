//! The loopback redirect listener (to be written)
