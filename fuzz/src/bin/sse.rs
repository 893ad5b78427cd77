//! AFL++ entry point for the `sse` target; the body is in `harness9_fuzz_targets`.

fn main() {
    afl::fuzz!(|data: &[u8]| {
        harness9_fuzz_targets::run("sse", data);
    });
}
