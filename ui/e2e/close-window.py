#!/usr/bin/env python3
"""Closes the app's window the way a user does, for the WebDriver tests (Xvfb, no window
manager): `close-window.py PID` sends WM_DELETE_WINDOW (ICCCM), what a window manager's
close button sends, to each mapped top-level window of process PID; `close-window.py
--keys PID` types Ctrl+Q into it instead (XTest), the File > Quit accelerator. Prints how
many windows it reached. Only libX11 and libXtst through ctypes (x11.py)."""

import ctypes
import sys

from x11 import CURRENT_TIME, X, Atom, Window, chord

CLIENT_MESSAGE = 33


class ClientMessage(ctypes.Structure):
    _fields_ = [
        ("type", ctypes.c_int),
        ("serial", ctypes.c_ulong),
        ("send_event", ctypes.c_int),
        ("display", ctypes.c_void_p),
        ("window", Window),
        ("message_type", Atom),
        ("format", ctypes.c_int),
        ("data", ctypes.c_long * 5),
    ]


class XEvent(ctypes.Union):
    _fields_ = [("xclient", ClientMessage), ("pad", ctypes.c_long * 24)]


def main():
    args = sys.argv[1:]
    keys = "--keys" in args
    args = [a for a in args if a != "--keys"]
    if len(args) != 1 or not args[0].isdigit():
        sys.exit("usage: close-window.py [--keys] PID")
    pid = int(args[0])

    x = X()
    protocols = x.atom("WM_PROTOCOLS")
    delete = x.atom("WM_DELETE_WINDOW")
    reached = 0
    for w, _ in x.windows_of(pid):
        fmt, accepted = x.prop(w, protocols)
        if fmt != 32 or delete not in accepted:
            continue
        if keys:
            x.focus(w)
            x.press(chord(x, "ctrl+q"))
        else:
            ev = XEvent()
            ev.xclient.type = CLIENT_MESSAGE
            ev.xclient.window = w
            ev.xclient.message_type = protocols
            ev.xclient.format = 32
            ev.xclient.data[0] = delete
            ev.xclient.data[1] = CURRENT_TIME
            x.lib.XSendEvent(x.display, w, 0, 0, ctypes.byref(ev))
        reached += 1
    x.lib.XSync(x.display, 0)
    print(reached)


if __name__ == "__main__":
    main()
