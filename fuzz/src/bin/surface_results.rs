//! AFL++ entry point for the `surface_results` target; the body is `harness9::fuzz_targets`.

fn main() {
    afl::fuzz!(|data: &[u8]| {
        harness9::fuzz_targets::run("surface_results", data);
    });
}
