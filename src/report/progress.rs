//! Progress with ETA on stderr, drawn only when stderr is a terminal.
//!
//! Probes never print: they take a `&mut dyn FnMut(done, total)` callback, and the CLI
//! passes `Progress::callback()`, so progress stays in the output room.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

/// A single updating line on stderr: label, percentage, and estimated time left.
pub struct Progress {
    label: String,
    start: Instant,
    last_draw: Option<Instant>,
    enabled: bool,
    drawn: bool,
}

impl Progress {
    /// A progress line for `label`; silent unless stderr is a terminal.
    pub fn new(label: &str) -> Self {
        Progress {
            label: label.to_string(),
            start: Instant::now(),
            last_draw: None,
            enabled: std::io::stderr().is_terminal(),
            drawn: false,
        }
    }

    /// Report `done` of `total` units (bytes, reads, rounds); redraws at most 10 times a second.
    pub fn update(&mut self, done: u64, total: u64) {
        if !self.enabled || total == 0 {
            return;
        }
        let now = Instant::now();
        if self
            .last_draw
            .is_some_and(|t| now.duration_since(t) < Duration::from_millis(100))
            && done < total
        {
            return;
        }
        self.last_draw = Some(now);
        let frac = (done as f64 / total as f64).clamp(0.0, 1.0);
        let elapsed = self.start.elapsed().as_secs_f64();
        let eta = if frac > 0.0 {
            elapsed * (1.0 - frac) / frac
        } else {
            f64::NAN
        };
        let _ = write!(
            std::io::stderr(),
            "\r{}: {:5.1}%  elapsed {}  ETA {}\x1b[K",
            self.label,
            frac * 100.0,
            format_secs(elapsed),
            format_secs(eta)
        );
        self.drawn = true;
    }

    /// A callback for probes.
    pub fn callback(&mut self) -> impl FnMut(u64, u64) + '_ {
        move |done, total| self.update(done, total)
    }

    /// Clear the line.
    pub fn finish(&mut self) {
        if self.drawn {
            let _ = write!(std::io::stderr(), "\r\x1b[K");
            self.drawn = false;
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}

/// `1h02m`, `3m05s`, `12s`, or `?` when unknown.
pub fn format_secs(s: f64) -> String {
    if !s.is_finite() || s < 0.0 {
        return "?".to_string();
    }
    let s = s.round() as u64;
    if s >= 3600 {
        format!("{}h{:02}m", s / 3600, (s % 3600) / 60)
    } else if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{s}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_naturally() {
        assert_eq!(format_secs(12.4), "12s");
        assert_eq!(format_secs(185.0), "3m05s");
        assert_eq!(format_secs(3720.0), "1h02m");
        assert_eq!(format_secs(f64::NAN), "?");
    }
}
