#!/usr/bin/env python3
"""Types into a window of the app the way a user does, for the WebDriver tests (Xvfb, no
window manager): `x11-keys.py PID TITLE STEP...` waits for a mapped top-level window of
process PID whose title matches the regular expression TITLE (a dialog the app opens,
such as GTK's save dialog), focuses it, and sends each STEP as XTest key events to it:
`text=STRING` types STRING (ASCII letters, digits and punctuation of the US layout),
`ctrl+a` and other `MOD+KEY` chords press a chord, anything else is one key by its keysym
name (`Return`, `Escape`). Then it waits for that window to go. Prints one JSON line: the
window's title, how long it waited for the window and how long the window took to go once
the keys were sent (ms); exits 1 if it never came or never went (after --timeout seconds,
default 20). Only libX11 and
libXtst through ctypes."""

import json
import re
import sys
import time

from x11 import POLL_S, X, chord, typed


def main():
    args = sys.argv[1:]
    timeout = 20.0
    if "--timeout" in args:
        i = args.index("--timeout")
        timeout = float(args[i + 1])
        del args[i : i + 2]
    if len(args) < 3 or not args[0].isdigit():
        sys.exit("usage: x11-keys.py [--timeout S] PID TITLE STEP...")
    pid, title, steps = int(args[0]), re.compile(args[1], re.IGNORECASE), args[2:]

    x = X()
    start = time.monotonic()
    deadline = start + timeout
    target = None
    while target is None:
        target = next(((w, t) for w, t in x.windows_of(pid) if title.search(t)), None)
        if target is None:
            if time.monotonic() > deadline:
                print(json.dumps({"error": "no such window", "windows": [t for _, t in x.windows_of(pid)]}))
                sys.exit(1)
            time.sleep(POLL_S)
    appeared = time.monotonic()
    window, name = target

    x.focus(window)
    for step in steps:
        if step.startswith("text="):
            typed(x, step[len("text="):])
        else:
            x.press(chord(x, step))
    sent = time.monotonic()

    deadline = sent + timeout
    while any(w == window for w, _ in x.windows_of(pid)):
        if time.monotonic() > deadline:
            print(json.dumps({"error": "the window stayed", "title": name}))
            sys.exit(1)
        time.sleep(POLL_S)
    gone = time.monotonic()
    print(json.dumps({"title": name, "waitedMs": round((appeared - start) * 1000),
                      "goneMs": round((gone - sent) * 1000)}))


if __name__ == "__main__":
    main()
