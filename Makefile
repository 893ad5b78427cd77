# Entry points. `make test` is what CI runs (via .ci/run).
.PHONY: setup run test

# Install the real MCP servers the tests use into .deps/ (idempotent, fast when done).
setup:
	bash scripts/setup.sh

# Opens harness9 on a project (default: the bundled example project).
DIR ?= examples/demo
run:
	cargo run --release --bin harness9 -- mcp list --project "$(DIR)"

# setup + cargo fmt --check + clippy -D warnings + cargo test.
test:
	bash scripts/test.sh
