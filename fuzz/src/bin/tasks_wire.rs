//! AFL++ entry point for the `tasks_wire` target; the body is in `harness9_fuzz_targets`.

fn main() {
    afl::fuzz!(|data: &[u8]| {
        harness9_fuzz_targets::run("tasks_wire", data);
    });
}
