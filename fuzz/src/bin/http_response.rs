//! AFL++ entry point for the `http_response` target; the body is in `harness9_fuzz_targets`.

fn main() {
    afl::fuzz!(|data: &[u8]| {
        harness9_fuzz_targets::run("http_response", data);
    });
}
