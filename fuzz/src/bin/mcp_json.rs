//! AFL++ entry point for the `mcp_json` target; the body is `harness9::fuzz_targets`.

fn main() {
    afl::fuzz!(|data: &[u8]| {
        harness9::fuzz_targets::run("mcp_json", data);
    });
}
