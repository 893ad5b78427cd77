//! AFL++ entry point for the `registry_page` target; the body is in `harness9_fuzz_targets`.

fn main() {
    afl::fuzz!(|data: &[u8]| {
        harness9_fuzz_targets::run("registry_page", data);
    });
}
