//! The string formats an elicitation field may ask for (`email`, `uri`, `date`,
//! `date-time`), checked on characters and with real parsers, never by slicing bytes:
//! the text comes from a server (defaults) or a user (answers) and may hold any
//! character.

use time::format_description::well_known::Rfc3339;
use time::OffsetDateTime;

use super::Format;

/// Whether `t` is written in `format`, or the message that says how to write it.
pub(super) fn check_format(format: Format, t: &str) -> Result<(), String> {
    let (ok, message) = match format {
        Format::Email => (is_email(t), "Enter an email address, like ada@example.com"),
        Format::Uri => (is_uri(t), "Enter a full URL, like https://example.com"),
        Format::Date => (is_date(t), "Enter a date as YYYY-MM-DD"),
        Format::DateTime => (
            is_date_time(t),
            "Enter a date and time as YYYY-MM-DDTHH:MM:SSZ",
        ),
    };
    ok.then_some(()).ok_or_else(|| message.to_string())
}

/// An RFC 3339 `date-time`: date, `T`, time with seconds, and an offset (`Z` or ±HH:MM).
fn is_date_time(t: &str) -> bool {
    OffsetDateTime::parse(t, &Rfc3339).is_ok()
}

/// An RFC 3339 `full-date`. A `date-time` is a `full-date`, `T` and a time, so `t` with a
/// fixed midnight appended is a `date-time` exactly when `t` is a `full-date` (the
/// appended `T` cannot be read as part of a time or an offset).
fn is_date(t: &str) -> bool {
    t.len() <= 10 && is_date_time(&format!("{t}T00:00:00Z"))
}

/// An address `local@domain`: the local part a dot-atom (RFC 5322), the domain two or
/// more labels of letters, digits and inner hyphens (RFC 5321). Letters and digits beyond
/// ASCII are taken in both, as internationalised addresses (RFC 6531) allow; whitespace,
/// controls and invisible characters never. Quoted local parts and address literals are
/// not offered.
fn is_email(t: &str) -> bool {
    let Some((local, domain)) = t.rsplit_once('@') else {
        return false;
    };
    let atext = |c: char| c.is_alphanumeric() || "!#$%&'*+-/=?^_`{|}~".contains(c);
    let local_ok = local.chars().count() <= 64
        && local
            .split('.')
            .all(|atom| !atom.is_empty() && atom.chars().all(atext));
    let label = |l: &str| {
        (1..=63).contains(&l.chars().count())
            && !l.starts_with('-')
            && !l.ends_with('-')
            && l.chars().all(|c| c.is_alphanumeric() || c == '-')
    };
    let domain_ok = domain.chars().count() <= 253
        && domain.split('.').count() >= 2
        && domain.split('.').all(label);
    local_ok && domain_ok
}

/// An absolute URL with a scheme, as the URL parser reads it, with nothing in it a
/// reader could not see: no whitespace, control, bidirectional, zero-width or tag
/// character (the parser would drop or encode some of them silently).
fn is_uri(t: &str) -> bool {
    !t.chars()
        .any(|c| c.is_whitespace() || c.is_control() || invisible(c))
        && url::Url::parse(t).is_ok()
}

/// Bidirectional marks, overrides and isolates, zero-width and invisible characters, and
/// tag characters.
fn invisible(c: char) -> bool {
    matches!(
        c,
        '\u{061c}'
            | '\u{200b}'..='\u{200f}'
            | '\u{202a}'..='\u{202e}'
            | '\u{2060}'..='\u{2069}'
            | '\u{feff}'
            | '\u{e0000}'..='\u{e007f}'
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(f: Format, t: &str) -> bool {
        check_format(f, t).is_ok()
    }

    #[test]
    fn dates_and_date_times_are_rfc_3339() {
        for good in ["2026-12-03", "2024-02-29", "0001-01-01"] {
            assert!(ok(Format::Date, good), "{good}");
        }
        for bad in [
            "2026-13-03",
            "2026-02-30",
            "2025-02-29",
            "2026-1-03",
            "+2026-01-01",
            "-2026-01-01",
            " 2026-01-01",
            "2026-01-01 ",
            "2026-01-01T00:00:00Z",
            "２０２６-01-01",
            "2026-01-0１",
            "",
        ] {
            assert!(!ok(Format::Date, bad), "{bad:?}");
        }
        for good in [
            "2026-12-03T10:30:00Z",
            "2026-12-03t10:30:00z",
            "2026-12-03T10:30:00.123+02:00",
            "2026-12-03T10:30:00-05:30",
        ] {
            assert!(ok(Format::DateTime, good), "{good}");
        }
        for bad in [
            "2026-12-03 10:30",
            "2026-12-03T10:30",
            "2026-12-03T25:00:00Z",
            "2026-12-03T10:30:00",
            "2026-12-03T10:30:00+24:00",
            "2026-12-03T10:30:00Zjunk",
            "2026-12-03",
        ] {
            assert!(!ok(Format::DateTime, bad), "{bad:?}");
        }
    }

    #[test]
    fn multibyte_text_is_refused_without_a_panic() {
        let odd = [
            "２０２６-01-01T1é:00Z",
            "2026-01-01T1é:00Z",
            "2026-01-01Té",
            "2026-01-01T😀",
            "2026-01-01T0😀:00:00Z",
            "2026-01-01T10:3\u{301}0:00Z",
            "2026-01-01T\u{301}",
            "é",
            "😀😀😀😀😀😀😀😀😀😀😀",
            "2026-01-0\u{301}",
            "\u{202e}2026-01-01",
        ];
        for t in odd {
            for f in [Format::Date, Format::DateTime, Format::Email, Format::Uri] {
                assert!(!ok(f, t), "{f:?} {t:?}");
            }
        }
    }

    #[test]
    fn emails_and_urls() {
        for good in [
            "a.b@c.example",
            "ada+tag@example.com",
            "josé@exämple.de",
            "x@a-b.example",
        ] {
            assert!(ok(Format::Email, good), "{good}");
        }
        for bad in [
            "a@b",
            "@b.co",
            "a@.co",
            "a..b@c.co",
            "a@b..co",
            "a b@c.co",
            "a@-b.co",
            "a@b.co\u{200b}",
            "a@b@c.co",
            "a\u{301}@b.co",
        ] {
            assert!(!ok(Format::Email, bad), "{bad:?}");
        }
        for good in [
            "https://example.com/x",
            "mailto:a@b.co",
            "https://bücher.de/ä",
        ] {
            assert!(ok(Format::Uri, good), "{good}");
        }
        for bad in [
            "example.com",
            " https://example.com",
            "https://example.com/a b",
            "https://exa\u{202e}mple.com",
            "https://example.com/\u{e0041}",
            "",
        ] {
            assert!(!ok(Format::Uri, bad), "{bad:?}");
        }
    }
}
