//! Bounds on what one view may do: how fast it may send (a token bucket for requests and
//! one for resizes), how large it may make itself, how large its document and its
//! downloads may be.

use std::time::{Duration, Instant};

/// Largest view document (`text`, or `blob` decoded) harness9 serves: 8 MiB (the largest
/// official example, the PDF viewer, is 4.3 MB).
pub const MAX_VIEW_BYTES: usize = 8 * 1024 * 1024;

/// Largest file a view may offer for download: 64 MiB.
pub const MAX_DOWNLOAD_BYTES: usize = 64 * 1024 * 1024;

/// Widest a view may make itself, in CSS pixels.
pub const MAX_VIEW_WIDTH: u32 = 4096;

/// Tallest a view may make itself, in CSS pixels.
pub const MAX_VIEW_HEIGHT: u32 = 4096;

/// Requests (and log lines) a view may send per second, sustained.
pub const REQUESTS_PER_SECOND: f64 = 20.0;

/// Requests a view may send at once before the rate applies.
pub const REQUEST_BURST: f64 = 40.0;

/// Resizes a view may send per second, sustained.
pub const RESIZES_PER_SECOND: f64 = 30.0;

/// Resizes a view may send at once before the rate applies.
pub const RESIZE_BURST: f64 = 60.0;

/// The user is told about a flooding view at most this often.
pub const THROTTLE_NOTICE_EVERY: Duration = Duration::from_secs(10);

/// A token bucket: `rate` tokens a second up to `capacity`, one taken per message.
#[derive(Debug, Clone)]
pub struct TokenBucket {
    rate: f64,
    capacity: f64,
    tokens: f64,
    last: Instant,
}

impl TokenBucket {
    /// A full bucket.
    pub fn new(rate: f64, capacity: f64, now: Instant) -> TokenBucket {
        TokenBucket {
            rate,
            capacity,
            tokens: capacity,
            last: now,
        }
    }

    /// Takes one token; `false` when the bucket is empty (the message is refused).
    pub fn take(&mut self, now: Instant) -> bool {
        let elapsed = now.saturating_duration_since(self.last).as_secs_f64();
        self.last = now.max(self.last);
        self.tokens = (self.tokens + elapsed * self.rate).min(self.capacity);
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

/// One dimension of a `size-changed`, clamped to `0..=max` (rounded; `None` stays
/// `None`: the view left it to the host). `Err` when it is no finite number.
pub fn clamp_dimension(value: Option<f64>, max: u32) -> Result<Option<u32>, &'static str> {
    match value {
        None => Ok(None),
        Some(v) if !v.is_finite() => Err("a size must be a finite number"),
        Some(v) => Ok(Some(v.round().clamp(0.0, f64::from(max)) as u32)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bucket_lets_a_burst_through_then_the_rate() {
        let t0 = Instant::now();
        let mut b = TokenBucket::new(REQUESTS_PER_SECOND, REQUEST_BURST, t0);
        let passed = (0..1000).filter(|_| b.take(t0)).count();
        assert_eq!(passed, REQUEST_BURST as usize);
        // A quarter of a second later: five more.
        let t1 = t0 + Duration::from_millis(250);
        let passed = (0..1000).filter(|_| b.take(t1)).count();
        assert_eq!(passed, 5);
        // Quiet for a minute: full again, never more.
        let t2 = t1 + Duration::from_secs(60);
        let passed = (0..1000).filter(|_| b.take(t2)).count();
        assert_eq!(passed, REQUEST_BURST as usize);
        // A clock that goes back takes nothing away and adds nothing.
        assert!(!b.take(t0));
    }

    #[test]
    fn sizes_are_clamped() {
        assert_eq!(clamp_dimension(None, MAX_VIEW_HEIGHT), Ok(None));
        assert_eq!(clamp_dimension(Some(300.4), MAX_VIEW_HEIGHT), Ok(Some(300)));
        assert_eq!(
            clamp_dimension(Some(1e12), MAX_VIEW_HEIGHT),
            Ok(Some(MAX_VIEW_HEIGHT))
        );
        assert_eq!(clamp_dimension(Some(-5.0), MAX_VIEW_WIDTH), Ok(Some(0)));
        assert!(clamp_dimension(Some(f64::NAN), MAX_VIEW_WIDTH).is_err());
        assert!(clamp_dimension(Some(f64::INFINITY), MAX_VIEW_WIDTH).is_err());
    }
}
