#!/usr/bin/env python3
"""Closes the app's window the way a user does, for the WebDriver tests (Xvfb, no window
manager): `close-window.py PID` sends WM_DELETE_WINDOW (ICCCM), what a window manager's
close button sends, to each mapped top-level window of process PID; `close-window.py
--keys PID` types Ctrl+Q into it instead (XTest), the File > Quit accelerator. Prints how
many windows it reached. Only libX11 (and libXtst for --keys) through ctypes."""

import ctypes
import ctypes.util
import sys

Window = Atom = ctypes.c_ulong


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


class WindowAttributes(ctypes.Structure):
    # Only map_state is read; the fields before it as Xlib declares them.
    _fields_ = [
        ("x", ctypes.c_int), ("y", ctypes.c_int), ("width", ctypes.c_int),
        ("height", ctypes.c_int), ("border_width", ctypes.c_int), ("depth", ctypes.c_int),
        ("visual", ctypes.c_void_p), ("root", Window), ("class_", ctypes.c_int),
        ("bit_gravity", ctypes.c_int), ("win_gravity", ctypes.c_int),
        ("backing_store", ctypes.c_int), ("backing_planes", ctypes.c_ulong),
        ("backing_pixel", ctypes.c_ulong), ("save_under", ctypes.c_int),
        ("colormap", ctypes.c_ulong), ("map_installed", ctypes.c_int),
        ("map_state", ctypes.c_int), ("pad", ctypes.c_long * 8),
    ]


CLIENT_MESSAGE = 33
IS_VIEWABLE = 2


def load(name):
    path = ctypes.util.find_library(name)
    if not path:
        sys.exit(f"close-window: lib{name} not found")
    return ctypes.CDLL(path)


def main():
    args = sys.argv[1:]
    keys = "--keys" in args
    args = [a for a in args if a != "--keys"]
    if len(args) != 1 or not args[0].isdigit():
        sys.exit("usage: close-window.py [--keys] PID")
    pid = int(args[0])

    x = load("X11")
    x.XOpenDisplay.restype = ctypes.c_void_p
    x.XOpenDisplay.argtypes = [ctypes.c_char_p]
    x.XDefaultRootWindow.restype = Window
    x.XDefaultRootWindow.argtypes = [ctypes.c_void_p]
    x.XInternAtom.restype = Atom
    x.XInternAtom.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
    x.XQueryTree.argtypes = [ctypes.c_void_p, Window, ctypes.POINTER(Window), ctypes.POINTER(Window),
                             ctypes.POINTER(ctypes.POINTER(Window)), ctypes.POINTER(ctypes.c_uint)]
    x.XGetWindowProperty.argtypes = [ctypes.c_void_p, Window, Atom, ctypes.c_long, ctypes.c_long, ctypes.c_int,
                                     Atom, ctypes.POINTER(Atom), ctypes.POINTER(ctypes.c_int),
                                     ctypes.POINTER(ctypes.c_ulong), ctypes.POINTER(ctypes.c_ulong),
                                     ctypes.POINTER(ctypes.c_void_p)]
    x.XGetWindowAttributes.argtypes = [ctypes.c_void_p, Window, ctypes.POINTER(WindowAttributes)]
    x.XSendEvent.argtypes = [ctypes.c_void_p, Window, ctypes.c_int, ctypes.c_long, ctypes.POINTER(XEvent)]
    x.XFree.argtypes = [ctypes.c_void_p]
    x.XFlush.argtypes = [ctypes.c_void_p]
    x.XSync.argtypes = [ctypes.c_void_p, ctypes.c_int]
    x.XSetInputFocus.argtypes = [ctypes.c_void_p, Window, ctypes.c_int, ctypes.c_ulong]
    x.XKeysymToKeycode.restype = ctypes.c_ubyte
    x.XKeysymToKeycode.argtypes = [ctypes.c_void_p, ctypes.c_ulong]
    x.XStringToKeysym.restype = ctypes.c_ulong
    x.XStringToKeysym.argtypes = [ctypes.c_char_p]

    display = x.XOpenDisplay(None)
    if not display:
        sys.exit("close-window: cannot open the display")
    root = x.XDefaultRootWindow(display)
    net_wm_pid = x.XInternAtom(display, b"_NET_WM_PID", 0)
    protocols = x.XInternAtom(display, b"WM_PROTOCOLS", 0)
    delete = x.XInternAtom(display, b"WM_DELETE_WINDOW", 0)

    def prop_longs(w, atom):
        kind, fmt = Atom(), ctypes.c_int()
        count, after, data = ctypes.c_ulong(), ctypes.c_ulong(), ctypes.c_void_p()
        if x.XGetWindowProperty(display, w, atom, 0, 64, 0, 0, ctypes.byref(kind), ctypes.byref(fmt),
                                ctypes.byref(count), ctypes.byref(after), ctypes.byref(data)) != 0:
            return []
        if not data.value:
            return []
        values = [] if fmt.value != 32 else list(ctypes.cast(data, ctypes.POINTER(ctypes.c_ulong))[: count.value])
        x.XFree(data)
        return values

    root_ret, parent_ret = Window(), Window()
    children, n = ctypes.POINTER(Window)(), ctypes.c_uint()
    x.XQueryTree(display, root, ctypes.byref(root_ret), ctypes.byref(parent_ret), ctypes.byref(children), ctypes.byref(n))
    tops = [children[i] for i in range(n.value)]
    if children:
        x.XFree(children)

    reached = 0
    for w in tops:
        attrs = WindowAttributes()
        if not x.XGetWindowAttributes(display, w, ctypes.byref(attrs)) or attrs.map_state != IS_VIEWABLE:
            continue
        if prop_longs(w, net_wm_pid) != [pid] or delete not in prop_longs(w, protocols):
            continue
        if keys:
            tst = load("Xtst")
            tst.XTestFakeKeyEvent.argtypes = [ctypes.c_void_p, ctypes.c_uint, ctypes.c_int, ctypes.c_ulong]
            x.XSetInputFocus(display, w, 1, 0)  # RevertToPointerRoot, CurrentTime
            x.XSync(display, 0)
            ctrl = x.XKeysymToKeycode(display, x.XStringToKeysym(b"Control_L"))
            q = x.XKeysymToKeycode(display, x.XStringToKeysym(b"q"))
            for code, down in ((ctrl, 1), (q, 1), (q, 0), (ctrl, 0)):
                tst.XTestFakeKeyEvent(display, code, down, 0)
        else:
            ev = XEvent()
            ev.xclient.type = CLIENT_MESSAGE
            ev.xclient.window = w
            ev.xclient.message_type = protocols
            ev.xclient.format = 32
            ev.xclient.data[0] = delete
            ev.xclient.data[1] = 0  # CurrentTime
            x.XSendEvent(display, w, 0, 0, ctypes.byref(ev))
        reached += 1
    x.XSync(display, 0)
    print(reached)


if __name__ == "__main__":
    main()
