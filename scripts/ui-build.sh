#!/usr/bin/env bash
# Builds the desktop UI (ui/dist) only when one of its inputs is newer than the last build.
# `npm run build` rewrites ui/dist every time, and cargo recompiles the desktop crate when
# ui/dist changes; skipping an unneeded build keeps a second `make run` to seconds.
#
# Inputs: everything under ui/ except ui/dist, package.json, package-lock.json,
# vite.config.ts. The stamp lives in target/ (a clean target/ means a fresh build).
# FORCE=1 builds anyway.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
STAMP="target/ui-dist.stamp"
INPUTS=(ui package.json package-lock.json vite.config.ts)

newer_input() {
    find "${INPUTS[@]}" -path ui/dist -prune -o -newer "$STAMP" -print -quit 2>/dev/null
}

if [ "${FORCE:-0}" != 1 ] && [ -f "$STAMP" ] && [ -f ui/dist/index.html ] && [ -z "$(newer_input)" ]; then
    echo "ui-build: ui/dist is up to date" >&2
    exit 0
fi
mkdir -p target
# Stamped before the build starts: an input edited during the build is newer, so the next
# run builds again.
touch "$STAMP.next"
npm run --silent build
mv "$STAMP.next" "$STAMP"
