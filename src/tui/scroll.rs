//! A scroll position over text whose wrapped height only the view knows. Keys move the
//! offset; each draw tells the position how many lines there are and how many fit
//! ([`Scroll::fit`]), so the keys stop at the last line and a page is one screenful.

use std::cell::Cell;

/// Lines a page key moves before the first draw has said how many fit.
const DEFAULT_PAGE: u16 = 5;

/// How far some text is scrolled: the first line shown.
#[derive(Debug, Default)]
pub struct Scroll {
    offset: u16,
    /// The largest offset at the last draw (written by the view).
    max: Cell<u16>,
    /// Lines shown at the last draw (written by the view); 0 before the first.
    page: Cell<u16>,
}

impl Scroll {
    /// Back to the first line (new text to show).
    pub fn reset(&mut self) {
        *self = Scroll::default();
    }

    pub fn up(&mut self, lines: u16) {
        self.offset = self.offset.min(self.max.get()).saturating_sub(lines);
    }

    pub fn down(&mut self, lines: u16) {
        self.offset = self.offset.saturating_add(lines).min(self.max.get());
    }

    /// One screenful (less one line, so the reader keeps their place).
    pub fn page(&self) -> u16 {
        match self.page.get() {
            0 => DEFAULT_PAGE,
            n => n.saturating_sub(1).max(1),
        }
    }

    /// For the view: `total` lines of which `visible` fit; returns the first line to show.
    pub fn fit(&self, total: u16, visible: u16) -> u16 {
        let max = total.saturating_sub(visible);
        self.max.set(max);
        self.page.set(visible);
        self.offset.min(max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_stop_at_both_ends_once_the_view_has_measured() {
        let mut s = Scroll::default();
        assert_eq!(s.fit(10, 4), 0);
        s.down(100);
        assert_eq!(s.fit(10, 4), 6);
        s.up(1);
        assert_eq!(s.fit(10, 4), 5, "one line up from the end, not from 100");
        s.up(s.page());
        assert_eq!(s.fit(10, 4), 2);
        s.up(100);
        assert_eq!(s.fit(10, 4), 0);
        // The terminal grew: the text fits, nothing scrolls.
        s.down(3);
        assert_eq!(s.fit(10, 20), 0);
    }
}
