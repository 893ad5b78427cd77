"""The few Xlib and XTest calls the WebDriver tests' window scripts make (close-window.py,
x11-keys.py), through ctypes: the mapped top-level windows of a process and their titles,
focus, and key events typed as a user types them (Xvfb, no window manager)."""

import ctypes
import ctypes.util
import os
import sys
import time

# The script that uses this module, for its error messages.
PROG = os.path.basename(sys.argv[0]).removesuffix(".py") if sys.argv and sys.argv[0] else "x11"

Window = Atom = KeySym = ctypes.c_ulong

IS_VIEWABLE = 2
CURRENT_TIME = 0
REVERT_TO_PARENT = 2
# Time between key events: each reaches the dialog in order anyway, this only keeps a
# slow (debug, software-rendered) client from seeing a whole path in one burst.
KEY_GAP_S = 0.01
POLL_S = 0.05
# Keysym names of the punctuation a path may hold.
PUNCTUATION = {
    "/": "slash", "-": "minus", ".": "period", "_": "underscore", " ": "space", ":": "colon",
    "~": "asciitilde", "+": "plus", "=": "equal", ",": "comma", "@": "at",
}
MODIFIERS = {"ctrl": "Control_L", "shift": "Shift_L", "alt": "Alt_L"}


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


def load(name):
    path = ctypes.util.find_library(name)
    if not path:
        sys.exit(f"{PROG}: lib{name} not found")
    return ctypes.CDLL(path)


class X:
    """The few Xlib calls this script makes, on one display connection."""

    def __init__(self):
        x = self.lib = load("X11")
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
        x.XSetErrorHandler.restype = ctypes.c_void_p
        x.XSetErrorHandler.argtypes = [ctypes.c_void_p]
        x.XFree.argtypes = [ctypes.c_void_p]
        x.XSync.argtypes = [ctypes.c_void_p, ctypes.c_int]
        x.XRaiseWindow.argtypes = [ctypes.c_void_p, Window]
        x.XSetInputFocus.argtypes = [ctypes.c_void_p, Window, ctypes.c_int, ctypes.c_ulong]
        x.XSendEvent.argtypes = [ctypes.c_void_p, Window, ctypes.c_int, ctypes.c_long, ctypes.c_void_p]
        x.XKeysymToKeycode.restype = ctypes.c_ubyte
        x.XKeysymToKeycode.argtypes = [ctypes.c_void_p, KeySym]
        x.XkbKeycodeToKeysym.restype = KeySym
        x.XkbKeycodeToKeysym.argtypes = [ctypes.c_void_p, ctypes.c_ubyte, ctypes.c_int, ctypes.c_int]
        x.XStringToKeysym.restype = KeySym
        x.XStringToKeysym.argtypes = [ctypes.c_char_p]
        self.tst = load("Xtst")
        self.tst.XTestFakeKeyEvent.argtypes = [ctypes.c_void_p, ctypes.c_uint, ctypes.c_int, ctypes.c_ulong]

        self.display = x.XOpenDisplay(None)
        if not self.display:
            sys.exit(f"{PROG}: cannot open the display")
        # A window may go between listing it and reading it: ignore X errors (the default
        # handler exits the process).
        self._ignore = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)(lambda d, e: 0)
        x.XSetErrorHandler(ctypes.cast(self._ignore, ctypes.c_void_p))
        self.root = x.XDefaultRootWindow(self.display)
        self.net_wm_pid = x.XInternAtom(self.display, b"_NET_WM_PID", 0)
        self.net_wm_name = x.XInternAtom(self.display, b"_NET_WM_NAME", 0)
        self.wm_name = x.XInternAtom(self.display, b"WM_NAME", 0)

    def prop(self, w, atom):
        """(format, raw bytes or longs) of property `atom` of `w`, or (0, None)."""
        x = self.lib
        kind, fmt = Atom(), ctypes.c_int()
        count, after, data = ctypes.c_ulong(), ctypes.c_ulong(), ctypes.c_void_p()
        if x.XGetWindowProperty(self.display, w, atom, 0, 1024, 0, 0, ctypes.byref(kind), ctypes.byref(fmt),
                                ctypes.byref(count), ctypes.byref(after), ctypes.byref(data)) != 0:
            return 0, None
        if not data.value:
            return 0, None
        if fmt.value == 32:
            value = list(ctypes.cast(data, ctypes.POINTER(ctypes.c_ulong))[: count.value])
        elif fmt.value == 8:
            value = ctypes.string_at(data, count.value)
        else:
            value = None
        x.XFree(data)
        return fmt.value, value

    def title(self, w):
        for atom in (self.net_wm_name, self.wm_name):
            fmt, value = self.prop(w, atom)
            if fmt == 8 and value is not None:
                return value.decode("utf-8", "replace")
        return ""

    def windows_of(self, pid):
        """The mapped top-level windows of process `pid`, with their titles."""
        x = self.lib
        root_ret, parent_ret = Window(), Window()
        children, n = ctypes.POINTER(Window)(), ctypes.c_uint()
        if not x.XQueryTree(self.display, self.root, ctypes.byref(root_ret), ctypes.byref(parent_ret),
                            ctypes.byref(children), ctypes.byref(n)):
            return []
        tops = [children[i] for i in range(n.value)]
        if children:
            x.XFree(children)
        found = []
        for w in tops:
            attrs = WindowAttributes()
            if not x.XGetWindowAttributes(self.display, w, ctypes.byref(attrs)) or attrs.map_state != IS_VIEWABLE:
                continue
            if self.prop(w, self.net_wm_pid) != (32, [pid]):
                continue
            found.append((w, self.title(w)))
        return found

    def atom(self, name):
        return self.lib.XInternAtom(self.display, name.encode(), 0)

    def focus(self, w):
        """Raises `w` and gives it the keyboard, as a click on it would (no window manager
        does it here)."""
        self.lib.XRaiseWindow(self.display, w)
        self.lib.XSetInputFocus(self.display, w, REVERT_TO_PARENT, CURRENT_TIME)
        self.lib.XSync(self.display, 0)

    def code(self, keysym_name):
        """(keycode, needs shift) of a keysym by name."""
        sym = self.lib.XStringToKeysym(keysym_name.encode())
        code = self.lib.XKeysymToKeycode(self.display, sym) if sym else 0
        if not code:
            sys.exit(f"{PROG}: no key for {keysym_name!r}")
        plain = self.lib.XkbKeycodeToKeysym(self.display, code, 0, 0)
        return code, plain != sym

    def press(self, codes):
        """Presses `codes` in order, then releases them in reverse."""
        for down, seq in ((1, codes), (0, list(reversed(codes)))):
            for c in seq:
                self.tst.XTestFakeKeyEvent(self.display, c, down, CURRENT_TIME)
                self.lib.XSync(self.display, 0)
                time.sleep(KEY_GAP_S)


def chord(x, step):
    names = step.split("+")
    codes = [x.code(MODIFIERS.get(n.lower(), n)) for n in names]
    if len(names) == 1 and codes[0][1]:
        return [x.code("Shift_L")[0], codes[0][0]]
    return [c for c, _ in codes]


def typed(x, text):
    for ch in text:
        name = ch if ch.isascii() and ch.isalnum() else PUNCTUATION.get(ch)
        if name is None:
            sys.exit(f"{PROG}: cannot type {ch!r}")
        code, shift = x.code(name)
        x.press([x.code("Shift_L")[0], code] if shift else [code])
