#!/usr/bin/env bash
# The Debian package's test: builds it from binaries already built (default target/debug,
# so the test command compiles nothing more), unpacks it into a scratch root and checks
# what a user gets: the files, the desktop entry, the icons, the declared dependencies,
# and the installed `harness9 --version` and `harness9 mcp list` on the demo project.
#   bash scripts/deb-test.sh [BIN_DIR]
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
BIN_DIR="${1:-target/debug}"
SCRATCH="$(mktemp -d)"
trap 'rm -rf "$SCRATCH"' EXIT

fail() {
    echo "deb-test: FAIL: $*" >&2
    exit 1
}
check() { echo "deb-test: ok: $*" >&2; }

DEB="$(bash scripts/deb.sh "$BIN_DIR" "$SCRATCH/out")"
[ -f "$DEB" ] || fail "no package at $DEB"
VERSION="$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n1)"

[ "$(dpkg-deb -f "$DEB" Package)" = harness9 ] || fail "package name"
[ "$(dpkg-deb -f "$DEB" Version)" = "$VERSION" ] || fail "package version"
DEPENDS="$(dpkg-deb -f "$DEB" Depends)"
for dep in libwebkit2gtk-4.1-0 libgtk-3-0 libc6; do
    case ", $DEPENDS," in *", $dep,"* | *", $dep ("*) ;; *) fail "Depends lacks $dep: $DEPENDS" ;; esac
done
check "control: harness9 $VERSION, Depends: $DEPENDS"

INSTALL="$SCRATCH/root"
dpkg-deb -x "$DEB" "$INSTALL"
for f in usr/bin/harness9 usr/bin/harness9-desktop; do
    [ -x "$INSTALL/$f" ] || fail "$f is not an executable in the package"
done
ENTRY="$INSTALL/usr/share/applications/harness9.desktop"
[ -f "$ENTRY" ] || fail "no desktop entry"
for line in "Type=Application" "Name=harness9" "Exec=harness9-desktop %f" "Icon=harness9" "Terminal=false" "MimeType=application/x-mcpb;"; do
    grep -qxF "$line" "$ENTRY" || fail "the desktop entry lacks '$line'"
done
if command -v desktop-file-validate >/dev/null; then
    desktop-file-validate "$ENTRY" || fail "desktop-file-validate"
fi
check "desktop entry"
ICONS=0
for s in 32 128 256 512; do
    icon="$INSTALL/usr/share/icons/hicolor/${s}x${s}/apps/harness9.png"
    [ -f "$icon" ] || fail "no ${s}x${s} icon"
    if command -v file >/dev/null; then
        file "$icon" | grep -q "PNG image data, $s x $s" || fail "$icon is not a ${s}x${s} PNG: $(file "$icon")"
    fi
    ICONS=$((ICONS + 1))
done
check "icons ($(find "$INSTALL/usr/share/icons" -name harness9.png | wc -l) sizes)"
zcat "$INSTALL/usr/share/man/man1/harness9.1.gz" | grep -q '^\.TH harness9 1' || fail "man page"
grep -q harness9 "$INSTALL/usr/share/bash-completion/completions/harness9" || fail "bash completion"
check "man page and completions"

GOT="$("$INSTALL/usr/bin/harness9" --version)"
[ "$GOT" = "harness9 $VERSION" ] || fail "installed harness9 --version printed '$GOT'"
check "installed harness9 --version: $GOT"

# The demo's server command is `harness9`, which resolves to the installed binary beside
# the one running.
LIST="$(HARNESS9_DATA_DIR="$SCRATCH/data" HARNESS9_CREDENTIALS=file PATH="$INSTALL/usr/bin:$PATH" \
    harness9 mcp list --project examples/demo --yes </dev/null)"
echo "$LIST" >&2
echo "$LIST" | grep -Eq '^demo +stdio +project +. connected +3 ' || fail "installed harness9 mcp list did not connect the demo server"
check "installed harness9 mcp list on examples/demo"
echo "deb-test: 7 passed, 0 failed"
