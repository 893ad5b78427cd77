//! `conformance-client URL`: placeholder, replaced below.
fn main() {}
