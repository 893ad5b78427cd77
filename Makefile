# Entry points. `make test` is what CI runs (via .ci/run).
.PHONY: setup run test

# Install the real MCP servers the tests use into .deps/ (idempotent, fast when done).
setup:
	bash scripts/setup.sh

# Needs only cargo, not `setup`. Placeholder command: it will change as the CLI grows.
run:
	cargo run --release --bin harness9 -- mcp list --project examples/demo

# setup + cargo fmt --check + clippy -D warnings + cargo test.
test:
	bash scripts/test.sh
