//! AFL++ entry point for the `untrusted_text` target; the body is `harness9::fuzz_targets`.

fn main() {
    afl::fuzz!(|data: &[u8]| {
        harness9::fuzz_targets::run("untrusted_text", data);
    });
}
