//! AFL++ entry point for the `fast_paths` target; the body is `harness9::fuzz_targets`.

fn main() {
    afl::fuzz!(|data: &[u8]| {
        harness9::fuzz_targets::run("fast_paths", data);
    });
}
