//! Progress with ETA on stderr, drawn only when stderr is a terminal: the one progress
//! mechanism of every command (issue 20), an `indicatif` bar.
//!
//! Probes never print: they take a `&mut dyn FnMut(done, total)` callback, and the CLI
//! passes `Progress::callback()`, so progress stays in the output room. A test whose
//! counters live in another thread (the `fs` tests, `io`) gets a [`Ticker`] that polls them.
//! Nothing is ever written to stdout, so `--json` stays one clean document; when stderr is
//! not a terminal (a pipe, a file, a test) indicatif's stderr target draws nothing at all.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// The bar's layout: label, bar, percentage, the step being run, elapsed time and ETA.
const TEMPLATE: &str = "{prefix}: {bar:30} {percent:>3}% {msg} elapsed {elapsed}, ETA {eta}";
/// Without a total (a run whose length is not known): no bar and no ETA, only time.
const SPINNER: &str = "{prefix}: {spinner} {msg} elapsed {elapsed}";

/// A progress bar on stderr for one command or step.
pub struct Progress {
    bar: ProgressBar,
}

impl Progress {
    /// A progress bar for `label`; silent unless stderr is a terminal.
    pub fn new(label: &str) -> Self {
        Self::to(label, ProgressDrawTarget::stderr())
    }

    /// A bar that draws nothing (a step whose caller shows its own progress).
    pub fn hidden(label: &str) -> Self {
        Self::to(label, ProgressDrawTarget::hidden())
    }

    /// A bar drawing to `target` (tests draw into a hidden or in-memory target).
    fn to(label: &str, target: ProgressDrawTarget) -> Self {
        let bar = ProgressBar::with_draw_target(None, target)
            .with_style(style(SPINNER))
            .with_prefix(label.to_string());
        Progress { bar }
    }

    /// Whether anything is drawn (false when stderr is not a terminal).
    pub fn is_drawn(&self) -> bool {
        !self.bar.is_hidden()
    }

    /// Report `done` of `total` units (bytes, reads, rounds, steps); a total of 0 means
    /// not known: time only, no ETA.
    pub fn update(&mut self, done: u64, total: u64) {
        set(&self.bar, done, total);
    }

    /// Name the step being run (bench's tests).
    pub fn message(&mut self, what: &str) {
        self.bar.set_message(what.to_string());
    }

    /// A callback for probes.
    pub fn callback(&mut self) -> impl FnMut(u64, u64) + '_ {
        move |done, total| self.update(done, total)
    }

    /// Clear the bar.
    pub fn finish(&mut self) {
        self.bar.finish_and_clear();
    }

    /// Draw from `poll()` (done, total) ten times a second on a thread of its own, until
    /// the returned ticker is dropped (counters another thread updates).
    pub fn ticking(label: &str, poll: impl Fn() -> (u64, u64) + Send + 'static) -> Ticker {
        let progress = Progress::new(label);
        let bar = progress.bar.clone();
        let stop = Arc::new(AtomicBool::new(false));
        let handle = if progress.is_drawn() {
            let stop = stop.clone();
            std::thread::Builder::new()
                .name("flashscope-progress".into())
                .spawn(move || {
                    while !stop.load(Ordering::Relaxed) {
                        let (done, total) = poll();
                        set(&bar, done, total);
                        std::thread::sleep(Duration::from_millis(100));
                    }
                })
                .ok()
        } else {
            None
        };
        Ticker {
            progress,
            stop,
            handle,
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}

/// A progress bar fed by a polling thread; stops and clears when dropped.
pub struct Ticker {
    progress: Progress,
    stop: Arc<AtomicBool>,
    handle: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Ticker {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
        self.progress.finish();
    }
}

fn style(template: &str) -> ProgressStyle {
    // The templates are constants: a bad one is caught by the unit test below.
    ProgressStyle::with_template(template)
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .with_key(
            "eta",
            |state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                // Before the rate is known (nothing done yet, or too little to estimate
                // from) indicatif says 0s: say "?" instead.
                let unknown = state.pos() == 0 || (state.eta().is_zero() && state.fraction() < 1.0);
                let _ = if unknown {
                    write!(w, "?")
                } else {
                    write!(w, "{:#}", indicatif::HumanDuration(state.eta()))
                };
            },
        )
}

/// Position and length, switching between the bar (total known) and the spinner.
fn set(bar: &ProgressBar, done: u64, total: u64) {
    if (total > 0) != bar.length().is_some() {
        if total > 0 {
            bar.set_style(style(TEMPLATE));
        } else {
            bar.set_style(style(SPINNER));
            bar.unset_length();
        }
    }
    let first = total > 0 && bar.length().is_none();
    if total > 0 {
        bar.set_length(total);
    }
    bar.set_position(if total > 0 { done.min(total) } else { done });
    if first {
        // A resumed run starts part way: the rate counts from here, not from 0.
        bar.reset_eta();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_parse() {
        assert!(ProgressStyle::with_template(TEMPLATE).is_ok());
        assert!(ProgressStyle::with_template(SPINNER).is_ok());
    }

    #[test]
    fn hidden_target_draws_nothing_and_keeps_the_count() {
        let mut p = Progress::to("t", ProgressDrawTarget::hidden());
        assert!(!p.is_drawn());
        p.update(5, 10);
        assert_eq!((p.bar.position(), p.bar.length()), (5, Some(10)));
        p.update(20, 10);
        assert_eq!(p.bar.position(), 10, "never past the total");
        p.update(3, 0);
        assert_eq!(p.bar.length(), None, "an unknown total has no ETA");
    }

    #[test]
    fn a_bar_on_a_terminal_shows_percent_and_eta() {
        let term = indicatif::InMemoryTerm::new(2, 100);
        let mut p = Progress::to(
            "verify",
            ProgressDrawTarget::term_like(Box::new(term.clone())),
        );
        p.update(0, 100);
        p.bar.tick();
        assert!(term.contents().contains("ETA ?"), "{:?}", term.contents());
        std::thread::sleep(Duration::from_millis(20));
        p.update(50, 100);
        p.bar.tick();
        let shown = term.contents();
        assert!(shown.contains("verify:"), "{shown:?}");
        assert!(shown.contains("50%"), "{shown:?}");
        assert!(shown.contains("ETA"), "{shown:?}");
        p.finish();
        assert_eq!(term.contents().trim(), "", "finish clears the line");
    }
}
