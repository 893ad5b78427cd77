//! AFL++ entry point for the `import_entry` target; the body is in `harness9_fuzz_targets`.

fn main() {
    afl::fuzz!(|data: &[u8]| {
        harness9_fuzz_targets::run("import_entry", data);
    });
}
