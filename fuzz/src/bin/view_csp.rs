//! AFL++ entry point for the `view_csp` target; the body is in `harness9_fuzz_targets`.

fn main() {
    afl::fuzz!(|data: &[u8]| {
        harness9_fuzz_targets::run("view_csp", data);
    });
}
