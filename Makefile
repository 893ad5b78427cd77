# Entry points. `make test` is what CI runs (via .ci/run).
.PHONY: setup run run-cli test deb

# Install the real MCP servers the tests use into .deps/ (idempotent, fast when done).
setup:
	bash scripts/setup.sh

# Opens the desktop app on a project (default: the bundled example project). It needs a
# display; without one it says so (try `xvfb-run -a make run` for a virtual one).
DIR ?= examples/demo
run:
	@if [ -z "$$DISPLAY$$WAYLAND_DISPLAY" ]; then \
		echo "make run: no display (DISPLAY and WAYLAND_DISPLAY are unset); the desktop app needs one." >&2; \
		echo "  Run it in a desktop session, or under a virtual display: xvfb-run -a make run" >&2; \
		echo "  The terminal binary works without one: make run-cli" >&2; \
		exit 2; \
	fi
	bash scripts/setup.sh
	bash scripts/ui-build.sh
	cargo build --release -p harness9-desktop
	cargo build --release --bin harness9
	target/release/harness9-desktop "$(DIR)"

# The terminal binary on a project: the status of its servers.
run-cli:
	cargo run --release --bin harness9 -- mcp list --project "$(DIR)"

# An installable Debian package (target/deb/harness9_VERSION_ARCH.deb) of both binaries,
# with a desktop entry and icons: sudo apt install ./target/deb/harness9_*.deb
deb:
	bash scripts/setup.sh
	bash scripts/ui-build.sh
	cargo build --release -p harness9-desktop
	cargo build --release --bin harness9
	bash scripts/deb.sh target/release

# setup + cargo fmt --check + the import-circle check + clippy -D warnings + cargo test.
test:
	bash scripts/test.sh
