//! Progress with ETA on stderr, drawn only when stderr is a terminal: the one progress
//! mechanism of every command (issue 20), an `indicatif` bar.
//!
//! Probes never print: they take a `&mut dyn FnMut(done, total)` callback, and the CLI
//! passes `Progress::callback()`, so progress stays in the output room. A test whose
//! counters live in another thread (the `fs` tests, `io`) gets a [`Ticker`] that polls them.
//! Nothing is ever written to stdout, so `--json` stays one clean document; when stderr is
//! not a terminal (a pipe, a file, a test) indicatif's stderr target draws nothing at all.
//!
//! The line names what is being done (issue 31.3): `[k/n] command: phase`, a bar, then
//! bytes done of total and the rate (a phase counted in bytes) or the percentage, and an
//! ETA from the phase's own average rate. It fits 80 columns ([`MAX_WIDTH`]). A bar never
//! goes backwards: a new phase ([`phase`]) gets its own labelled bar, and a count that
//! starts again within a phase is shown as its next pass (`#2`). Preserve mode's saving,
//! restoring and verifying are shown over the test's bar as phases of their own
//! ([`overlay`]), so the line does not freeze while they run; the test's bar comes back
//! where it was. `auto` names its step ([`set_step`]) and what
//! its plan leaves of the run ([`set_run_left`]).

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The widest line drawn, in columns: an 80-column terminal does not wrap it.
pub const MAX_WIDTH: usize = 79;
/// The label's width at most (`[k/n] command: phase`); longer ones end in "…".
const PREFIX_WIDTH: usize = 30;
/// The bar's width.
const BAR_WIDTH: usize = 8;
/// The whole line is one message, composed here ([`line`]): label, bar and figures reach
/// the terminal in one update, so no frame shows a label with another phase's figures or
/// a new length with an old position (issue 45.6: a bar that went backwards and drew the
/// journal's saving under a test's label).
const TEMPLATE: &str = "{msg}";
/// The bar's cells: done, and to do.
const BAR_DONE: char = '█';
const BAR_TODO: char = '░';
/// Without a total (a run whose length is not known): a spinner, no bar and no ETA.
const SPINNER_FRAMES: [char; 8] = ['⠁', '⠂', '⠄', '⡀', '⢀', '⠠', '⠐', '⠈'];
/// How often the figures are recomputed at most (a probe reports every I/O).
const REDRAW: Duration = Duration::from_millis(100);

/// `auto`'s step being run, `(k, n)`: every bar's label starts with `[k/n]`.
static STEP: Mutex<Option<(usize, usize)>> = Mutex::new(None);
/// What `auto`'s plan left of the run when its step started (device ns), and when that
/// was: the label counts it down as `[k/n ~T]`.
static RUN_LEFT: Mutex<Option<(Instant, u64)>> = Mutex::new(None);
/// The bar on screen, for [`phase`] and [`overlay`] from code that has no handle on it.
static ACTIVE: Mutex<Option<Arc<Mutex<State>>>> = Mutex::new(None);

/// One phase's count: what it counts, how far it is, since when.
#[derive(Debug, Clone)]
struct Phase {
    name: String,
    bytes: bool,
    done: u64,
    total: u64,
    /// The pass of this phase (a count that started again), from 1.
    pass: u32,
    started: Instant,
    /// `done` when this pass started (a resumed run counts its rate from there).
    base: u64,
}

impl Phase {
    fn new(name: &str, bytes: bool) -> Self {
        Phase {
            name: name.to_string(),
            bytes,
            done: 0,
            total: 0,
            pass: 1,
            started: Instant::now(),
            base: 0,
        }
    }

    /// Take a new count; one that goes back (a smaller share done) starts the next pass.
    fn set(&mut self, done: u64, total: u64) {
        // A total that was only a guess and is passed: not known any more (no "ETA 1s"
        // for minutes).
        let total = if done > total { 0 } else { total };
        let fresh = self.done == 0 && self.total == 0;
        let back = !fresh
            && if total > 0 && self.total > 0 {
                (done as u128) * (self.total as u128) < (self.done as u128) * (total as u128)
            } else {
                done < self.done
            };
        if back {
            self.pass += 1;
            self.started = Instant::now();
            self.base = 0;
        } else if fresh {
            self.started = Instant::now();
            self.base = done;
        }
        self.done = done;
        self.total = total;
    }
}

/// A bar's state: the owner's phase, and the phase shown over it for a while.
struct State {
    bar: ProgressBar,
    label: String,
    main: Phase,
    overlay: Option<Phase>,
    /// When the figures were last drawn.
    drawn: Option<Instant>,
    /// The line drawn last.
    line: String,
    /// The last overlay's count: the same phase shown over the bar again (preserve mode
    /// saving at each new region) goes on from it, and a count of it that starts again
    /// is its next pass (`#2`), never the first one's bar going back.
    last_overlay: Option<Phase>,
    /// Drawn by [`overlay`] alone (no bar was on screen): cleared when its phase ends.
    own: bool,
}

/// A bar's state drawing to `target`; the bar on screen unless it is hidden.
fn new_state(label: &str, target: ProgressDrawTarget, own: bool) -> Arc<Mutex<State>> {
    let bar = ProgressBar::with_draw_target(None, target).with_style(style(TEMPLATE));
    let state = Arc::new(Mutex::new(State {
        bar,
        label: label.to_string(),
        main: Phase::new("", false),
        overlay: None,
        drawn: None,
        line: String::new(),
        last_overlay: None,
        own,
    }));
    if !lock(&state).bar.is_hidden() {
        *ACTIVE.lock().unwrap_or_else(|p| p.into_inner()) = Some(state.clone());
    }
    state
}

impl State {
    fn shown(&self) -> &Phase {
        self.overlay.as_ref().unwrap_or(&self.main)
    }

    /// Redraw (the figures at most every [`REDRAW`] unless `now`): the whole line in one
    /// update of the bar.
    fn draw(&mut self, now: bool) {
        if !now && self.drawn.is_some_and(|t| t.elapsed() < REDRAW) {
            return;
        }
        self.drawn = Some(Instant::now());
        let step = *STEP.lock().unwrap_or_else(|p| p.into_inner());
        let left = RUN_LEFT
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .map(|(at, ns)| Duration::from_nanos(ns).saturating_sub(at.elapsed()));
        let p = self.shown().clone();
        let label = prefix(step, left, &self.label, &p);
        let text = line(&label, &p, p.started.elapsed());
        if text != self.line {
            self.bar.set_message(text.clone());
            self.line = text;
        }
    }
}

/// The line drawn for phase `p` under `label`: the label, the bar (a spinner without a
/// total) and the figures ([`figures`]).
fn line(label: &str, p: &Phase, elapsed: Duration) -> String {
    let middle = if p.total > 0 {
        let full = ((p.done.min(p.total) as u128 * BAR_WIDTH as u128) / p.total as u128) as usize;
        let mut bar: String = std::iter::repeat_n(BAR_DONE, full).collect();
        bar.extend(std::iter::repeat_n(BAR_TODO, BAR_WIDTH - full));
        bar
    } else {
        let frame = (elapsed.as_millis() / REDRAW.as_millis().max(1)) as usize;
        SPINNER_FRAMES[frame % SPINNER_FRAMES.len()].to_string()
    };
    format!("{label} {middle} {}", figures(p, elapsed))
}

/// A progress bar on stderr for one command or step.
pub struct Progress {
    state: Arc<Mutex<State>>,
}

/// Lock a state, whatever a panicking holder left (the bar only draws).
fn lock(s: &Mutex<State>) -> std::sync::MutexGuard<'_, State> {
    s.lock().unwrap_or_else(|p| p.into_inner())
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
        Progress {
            state: new_state(label, target, false),
        }
    }

    /// Whether anything is drawn (false when stderr is not a terminal).
    pub fn is_drawn(&self) -> bool {
        !lock(&self.state).bar.is_hidden()
    }

    /// Report `done` of `total` units (reads, rounds, steps); a total of 0 means not
    /// known: time only, no ETA.
    pub fn update(&mut self, done: u64, total: u64) {
        let mut s = lock(&self.state);
        s.main.set(done, total);
        if s.overlay.is_none() {
            s.draw(false);
        }
    }

    /// Start the phase `name` of the owner's count (`bytes`: counted in bytes, shown with
    /// a rate): a bar of its own, from 0. The same name again keeps the count.
    pub fn phase(&mut self, name: &str, bytes: bool) {
        let mut s = lock(&self.state);
        if s.main.name != name || s.main.bytes != bytes {
            s.main = Phase::new(name, bytes);
            s.draw(true);
        }
    }

    /// Name what the current count is doing without starting it again (bench's test).
    pub fn message(&mut self, what: &str) {
        let mut s = lock(&self.state);
        if s.main.name != what {
            s.main.name = what.to_string();
            s.draw(true);
        }
    }

    /// A callback for probes.
    pub fn callback(&mut self) -> impl FnMut(u64, u64) + '_ {
        move |done, total| self.update(done, total)
    }

    /// Clear the bar.
    pub fn finish(&mut self) {
        let s = lock(&self.state);
        s.bar.finish_and_clear();
        let mut active = ACTIVE.lock().unwrap_or_else(|p| p.into_inner());
        if active.as_ref().is_some_and(|a| Arc::ptr_eq(a, &self.state)) {
            *active = None;
        }
    }

    /// Draw from `poll()` (done, total) ten times a second on a thread of its own, until
    /// the returned ticker is dropped (counters another thread updates).
    pub fn ticking(label: &str, poll: impl Fn() -> (u64, u64) + Send + 'static) -> Ticker {
        let progress = Progress::new(label);
        let state = progress.state.clone();
        let stop = Arc::new(AtomicBool::new(false));
        let handle = if progress.is_drawn() {
            let stop = stop.clone();
            std::thread::Builder::new()
                .name("flashscope-progress".into())
                .spawn(move || {
                    while !stop.load(Ordering::Relaxed) {
                        let (done, total) = poll();
                        let mut s = lock(&state);
                        s.main.set(done, total);
                        if s.overlay.is_none() {
                            s.draw(false);
                        }
                        drop(s);
                        std::thread::sleep(REDRAW);
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

/// Run `f` (a line printed on stderr) with the bar on screen cleared, and draw the bar
/// again after it, so that the line is not drawn into the bar's.
pub fn suspend<R>(f: impl FnOnce() -> R) -> R {
    let active = ACTIVE.lock().unwrap_or_else(|p| p.into_inner()).clone();
    match active {
        Some(a) => {
            let bar = lock(&a).bar.clone();
            bar.suspend(f)
        }
        None => f(),
    }
}

/// `auto`'s step `k` of `n` (from 1), or `None` after the last: every bar's label starts
/// with `[k/n]`.
pub fn set_step(step: Option<(usize, usize)>) {
    *STEP.lock().unwrap_or_else(|p| p.into_inner()) = step;
    if step.is_none() {
        set_run_left(None);
    }
}

/// What `auto`'s plan leaves of the run as its step starts (device ns; `None`: no plan):
/// the label's `[k/n ~T]`, counted down from now (issue 45.6: the run's ETA is its plan's,
/// not one step's).
pub fn set_run_left(left_ns: Option<u64>) {
    *RUN_LEFT.lock().unwrap_or_else(|p| p.into_inner()) = left_ns.map(|ns| (Instant::now(), ns));
}

/// Start the phase `name` of the bar on screen (for a test that reports its phases
/// through a plain `(done, total)` callback, e.g. the probe's).
pub fn phase(name: &str, bytes: bool) {
    let active = ACTIVE.lock().unwrap_or_else(|p| p.into_inner()).clone();
    if let Some(a) = active {
        let mut s = lock(&a);
        if s.main.name != name || s.main.bytes != bytes {
            s.main = Phase::new(name, bytes);
            s.draw(true);
        }
    }
}

/// Name what the bar on screen is doing without starting its count again (fat's block
/// size within its one count of bytes).
pub fn message(what: &str) {
    let active = ACTIVE.lock().unwrap_or_else(|p| p.into_inner()).clone();
    if let Some(a) = active {
        let mut s = lock(&a);
        if s.main.name != what {
            s.main.name = what.to_string();
            s.draw(true);
        }
    }
}

/// Show the phase `name` (counted in bytes: saving, restoring, verifying) over the bar
/// on screen, `done` of `total`; `None` ends it and the owner's bar is shown again. With
/// no bar on screen one is drawn for `label` (a restore after the test's bar ended) and
/// cleared when the phase ends. Nothing is drawn off a terminal.
pub fn overlay(label: &str, step: Option<(&str, u64, u64)>) {
    let current = ACTIVE.lock().unwrap_or_else(|p| p.into_inner()).clone();
    let state = match (current, step) {
        (Some(a), _) => a,
        (None, None) => return,
        (None, Some(_)) => {
            let state = new_state(label, ProgressDrawTarget::stderr(), true);
            if lock(&state).bar.is_hidden() {
                return;
            }
            state
        }
    };
    let mut s = lock(&state);
    let own = s.own;
    match step {
        Some((name, done, total)) => {
            let renamed = s.overlay.as_ref().is_none_or(|o| o.name != name);
            if renamed {
                let phase = match s.last_overlay.take() {
                    Some(last) if last.name == name => last,
                    _ => Phase::new(name, true),
                };
                s.overlay = Some(phase);
            }
            if let Some(o) = s.overlay.as_mut() {
                o.set(done, total);
            }
            s.last_overlay = s.overlay.clone();
            s.draw(renamed);
        }
        None => {
            s.overlay = None;
            if own {
                s.bar.finish_and_clear();
                drop(s);
                let mut active = ACTIVE.lock().unwrap_or_else(|p| p.into_inner());
                if active.as_ref().is_some_and(|a| Arc::ptr_eq(a, &state)) {
                    *active = None;
                }
            } else {
                s.draw(true);
            }
        }
    }
}

/// The label: `[k/n] command: phase`, at most [`PREFIX_WIDTH`] columns.
fn prefix(step: Option<(usize, usize)>, left: Option<Duration>, label: &str, p: &Phase) -> String {
    // A label or phase may name a file or a device: shown, never obeyed by the terminal.
    let label = crate::input::printable(label);
    let mut s = match (step, left) {
        (Some((k, n)), Some(l)) => format!("[{k}/{n} ~{}] {label}", hms(l.as_secs_f64())),
        (Some((k, n)), None) => format!("[{k}/{n}] {label}"),
        (None, _) => label.into_owned(),
    };
    s.push(':');
    if !p.name.is_empty() {
        s.push(' ');
        s.push_str(&crate::input::printable(&p.name));
    }
    if p.pass > 1 {
        s.push_str(&format!(" #{}", p.pass));
    }
    let width = s.chars().count();
    if width > PREFIX_WIDTH {
        s = s.chars().take(PREFIX_WIDTH - 1).collect();
        s.push('…');
    } else {
        s.push_str(&" ".repeat(PREFIX_WIDTH - width));
    }
    s
}

/// The figures after the bar: bytes done of total and the rate, or the percentage; the
/// ETA from the pass's average rate (`?` until it can be told); without a total, what is
/// done and the time.
fn figures(p: &Phase, elapsed: Duration) -> String {
    use crate::vocab::units::{format_bytes, format_rate};
    let secs = elapsed.as_secs_f64();
    let counted = p.done.saturating_sub(p.base);
    let rate = (secs > 0.2 && counted > 0).then(|| counted as f64 / secs);
    if p.total == 0 {
        return match (p.bytes, rate) {
            (true, Some(r)) => format!("{} {} {}", format_bytes(p.done), format_rate(r), hms(secs)),
            (true, None) => format!("{} {}", format_bytes(p.done), hms(secs)),
            (false, _) => format!("elapsed {}", hms(secs)),
        };
    }
    let eta = match rate {
        Some(r) if counted * 100 >= p.total.saturating_sub(p.base) || secs >= 2.0 => {
            hms(p.total.saturating_sub(p.done) as f64 / r)
        }
        _ => "?".to_string(),
    };
    if p.bytes {
        let rate = rate.map_or("".to_string(), |r| format!(" {}", format_rate(r)));
        format!(
            "{}/{}{rate} ETA {eta}",
            format_bytes(p.done),
            format_bytes(p.total)
        )
    } else if p.total < 1000 {
        format!("{}/{} ETA {eta}", p.done, p.total)
    } else {
        let pct = (p.done as f64 * 100.0 / p.total as f64).floor() as u64;
        format!("{pct:>3}% ETA {eta}")
    }
}

/// Seconds as `42s`, `3m05s`, `2h07m` (at most 6 columns).
fn hms(secs: f64) -> String {
    let s = if secs.is_finite() {
        secs.round() as u64
    } else {
        u64::MAX
    };
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m{:02}s", s / 60, s % 60),
        3600..360_000 => format!("{}h{:02}m", s / 3600, s % 3600 / 60),
        _ => ">99h".to_string(),
    }
}

fn style(template: &str) -> ProgressStyle {
    // The templates are constants: a bad one is caught by the unit test below.
    ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_bar())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_parse() {
        assert!(ProgressStyle::with_template(TEMPLATE).is_ok());
    }

    #[test]
    fn hidden_target_draws_nothing_and_keeps_the_count() {
        let mut p = Progress::to("t", ProgressDrawTarget::hidden());
        assert!(!p.is_drawn());
        p.update(5, 10);
        let main = lock(&p.state).main.clone();
        assert_eq!((main.done, main.total), (5, 10));
        p.update(20, 10);
        let main = lock(&p.state).main.clone();
        assert_eq!(
            (main.done, main.total),
            (20, 0),
            "a total passed is not known any more"
        );
    }

    /// The widest line any phase can draw, measured as rendered: label, bar and figures.
    #[test]
    fn the_widest_line_fits_80_columns() {
        let mut p = Phase::new("flushing the write cache", true);
        p.pass = 12;
        p.set(1023 * 1024 * 1024 + 1000, 1023 * 1024 * 1024 + 1023 * 1024);
        p.base = 0;
        let bytes = figures(&p, Duration::from_secs(359_000));
        let mut c = Phase::new("x", false);
        c.set(998, 999);
        let count = figures(&c, Duration::from_secs(359_000));
        c.set(99_999_999, 100_000_000);
        let share = figures(&c, Duration::from_secs(359_000));
        for f in [bytes, count, share] {
            let line = format!(
                "{} {} {f}",
                prefix(Some((10, 10)), None, "open-au", &p),
                "#".repeat(BAR_WIDTH)
            );
            assert!(line.chars().count() <= MAX_WIDTH, "{line:?}");
        }
    }

    #[test]
    fn auto_s_step_label_carries_what_its_plan_leaves_of_the_run() {
        let p = Phase::new("writing", true);
        let l = prefix(Some((3, 6)), Some(Duration::from_secs(185)), "open-au", &p);
        assert!(l.starts_with("[3/6 ~3m05s] open-au: writing"), "{l:?}");
        assert_eq!(l.chars().count(), PREFIX_WIDTH);
        let l = prefix(Some((3, 6)), None, "open-au", &p);
        assert!(l.starts_with("[3/6] open-au: writing"), "{l:?}");
    }

    #[test]
    fn a_count_that_starts_again_is_the_next_pass_not_a_bar_going_back() {
        let mut p = Phase::new("scanning", false);
        p.set(77, 100);
        p.set(14, 100);
        assert_eq!((p.pass, p.done), (2, 14));
        p.set(84, 100);
        assert_eq!(p.pass, 2);
        // A total that grows so that the share done falls is a new pass too.
        p.set(84, 1000);
        assert_eq!(p.pass, 3);
        assert!(prefix(None, None, "probe", &p).starts_with("probe: scanning #3"));
    }

    #[test]
    fn figures_name_bytes_and_rate_or_the_percentage() {
        let mut p = Phase::new("saving", true);
        p.set(0, 256 << 20);
        p.set(64 << 20, 256 << 20);
        let f = figures(&p, Duration::from_secs(4));
        assert_eq!(f, "64 MiB/256 MiB 16 MiB/s ETA 12s");
        let mut c = Phase::new("", false);
        c.set(0, 4);
        c.set(1, 4);
        assert_eq!(figures(&c, Duration::from_secs(3)), "1/4 ETA 9s");
        assert_eq!(figures(&c, Duration::from_millis(100)), "1/4 ETA ?");
        c.set(1000, 4000);
        assert_eq!(figures(&c, Duration::from_secs(3)), " 25% ETA 9s");
        assert_eq!(hms(3725.0), "1h02m");
        assert_eq!(hms(185.0), "3m05s");
    }

    #[test]
    fn a_bar_on_a_terminal_names_its_phase_and_the_overlay_over_it() {
        let term = indicatif::InMemoryTerm::new(4, 200);
        let mut p = Progress::to(
            "bench",
            ProgressDrawTarget::term_like(Box::new(term.clone())),
        );
        let state = p.state.clone();
        p.message("SEQ1M Q8T1 write");
        p.update(5, 12);
        lock(&state).draw(true);
        lock(&state).bar.tick();
        let shown = term.contents();
        assert!(shown.contains("bench: SEQ1M Q8T1 write"), "{shown:?}");
        assert!(shown.contains("5/12"), "{shown:?}");
        // Preserve mode's saving, over the test's bar, then the bar again where it was.
        {
            let mut s = lock(&state);
            s.overlay = Some(Phase::new("saving", true));
            s.overlay.as_mut().unwrap().set(32 << 20, 256 << 20);
            s.draw(true);
            s.bar.tick();
        }
        let shown = term.contents();
        assert!(
            shown.contains("bench: saving") && shown.contains("32 MiB/256 MiB"),
            "{shown:?}"
        );
        {
            let mut s = lock(&state);
            s.overlay = None;
            s.draw(true);
            s.bar.tick();
        }
        assert!(term.contents().contains("5/12"), "{:?}", term.contents());
        for line in term.contents().lines() {
            assert!(line.chars().count() <= MAX_WIDTH, "{line:?}");
        }
        p.finish();
        assert_eq!(term.contents().trim(), "", "finish clears the line");
    }
}
