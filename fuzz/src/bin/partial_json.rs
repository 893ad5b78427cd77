//! AFL++ entry point for the `partial_json` target; the body is in `harness9_fuzz_targets`.

fn main() {
    afl::fuzz!(|data: &[u8]| {
        harness9_fuzz_targets::run("partial_json", data);
    });
}
