//! Automatic restarts of crashed stdio servers: with backoff, a limit of attempts in a row,
//! and a fresh series after a server stayed up long enough (off unless a policy is set).

use std::time::Duration;

use super::{Manager, RestartStatus};
use crate::config::{ServerConfig, TransportConfig};
use crate::mcp::client::fmt_duration;
use crate::mcp::log::LogSource;

/// How a crashed stdio server is restarted (off unless [`Manager::set_restart_policy`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RestartPolicy {
    /// Restarts after crashes in a row before giving up.
    pub max_attempts: u32,
    /// Wait before the first restart; doubled for each further attempt.
    pub first_delay: Duration,
    /// A server that stayed connected this long starts a fresh series of attempts.
    pub stable_after: Duration,
}

/// Restarts of a crashed server before harness9 gives up.
pub const DEFAULT_RESTART_ATTEMPTS: u32 = 3;

/// Wait before the first automatic restart (then 2x, 4x, ...).
pub const DEFAULT_RESTART_DELAY: Duration = Duration::from_secs(1);

/// Uptime after which a crash counts as the first of a new series.
pub const DEFAULT_RESTART_STABLE_AFTER: Duration = Duration::from_secs(60);

impl Default for RestartPolicy {
    fn default() -> Self {
        RestartPolicy {
            max_attempts: DEFAULT_RESTART_ATTEMPTS,
            first_delay: DEFAULT_RESTART_DELAY,
            stable_after: DEFAULT_RESTART_STABLE_AFTER,
        }
    }
}

impl RestartPolicy {
    /// The wait before attempt `attempt` (1-based).
    pub fn delay(&self, attempt: u32) -> Duration {
        self.first_delay * 2u32.saturating_pow(attempt.saturating_sub(1).min(16))
    }
}

impl Manager {
    /// Restart crashed stdio servers with backoff (`None`, the default: leave them failed).
    pub fn set_restart_policy(&self, policy: Option<RestartPolicy>) {
        *self.inner.restart_policy.lock() = policy;
    }

    /// After a connected stdio server crashed (state already failed at `gen`): schedule a
    /// restart with backoff, or record that the attempts are used up.
    pub(super) fn maybe_restart(&self, name: &str, cfg: &ServerConfig, gen: u64) {
        let Some(policy) = *self.inner.restart_policy.lock() else {
            return;
        };
        if !matches!(cfg.transport, TransportConfig::Stdio { .. }) {
            return;
        }
        let decision = {
            let mut slots = self.lock();
            let Some(slot) = slots.get_mut(name).filter(|s| s.generation == gen) else {
                return;
            };
            let stable = slot
                .connected_at
                .take()
                .is_some_and(|t| t.elapsed() >= policy.stable_after);
            let done = if stable {
                0
            } else {
                slot.restart.as_ref().map_or(0, |r| r.attempt)
            };
            if done < policy.max_attempts {
                let attempt = done + 1;
                let delay = policy.delay(attempt);
                slot.restart = Some(RestartStatus {
                    attempt,
                    max_attempts: policy.max_attempts,
                    retry_in_ms: Some(delay.as_millis() as u64),
                    gave_up: false,
                });
                Ok((attempt, delay))
            } else {
                slot.restart = Some(RestartStatus {
                    attempt: done,
                    max_attempts: policy.max_attempts,
                    retry_in_ms: None,
                    gave_up: true,
                });
                Err(done)
            }
        };
        let log = self.log(name);
        match decision {
            Ok((attempt, delay)) => {
                if let Some(log) = &log {
                    log.push(
                        LogSource::Host,
                        "warning",
                        &format!(
                            "the server crashed; restarting in {} (attempt {attempt} of {})",
                            fmt_duration(delay),
                            policy.max_attempts
                        ),
                    );
                }
                let this = self.clone();
                let who = name.to_string();
                let task = tokio::spawn(async move {
                    tokio::time::sleep(delay).await;
                    if this.is_current(&who, gen) {
                        this.start(&who);
                        this.publish();
                    }
                });
                let mut slots = self.lock();
                match slots.get_mut(name).filter(|s| s.generation == gen) {
                    Some(slot) => slot.task = Some(task.abort_handle()),
                    None => task.abort(),
                }
            }
            Err(done) => {
                if let Some(log) = &log {
                    log.push(
                        LogSource::Host,
                        "error",
                        &format!(
                            "the server crashed {} times in a row; not restarting it again (use Restart)",
                            done + 1
                        ),
                    );
                }
            }
        }
        self.publish();
    }
}
