//! The command line: one file per subcommand (arguments → library call → output).

pub mod align;
pub mod analyze;
pub mod auto;
pub mod bench;
pub mod compare;
pub mod completions;
pub mod fat;
pub mod fs;
pub mod gen;
pub mod health;
pub mod history;
pub mod info;
pub mod interval;
pub mod io;
pub mod model;
pub mod open_au;
pub mod probe;
pub mod program;
pub mod report;
pub mod restore;
pub mod scatter;
pub mod serve;
pub mod sim;
pub mod slc;
pub mod smartctl;
pub mod values;
pub mod verify;
pub mod write_args;

pub mod defs;
pub use defs::top::{Cli, Command};

use crate::commands::write_probe::Finished;
use crate::report::export::{lava, Exporter, Exports, FileFormat};
use crate::report::Document;
use crate::vocab::error::Verdict;
use crate::Result;

impl Cli {
    /// Parse the process's arguments; on a usage error print clap's message and exit 2.
    /// A value that starts with `-` (`--blocksize -5`) reaches its option's check, which
    /// names the option, instead of being taken for an unknown flag.
    pub fn parse_args() -> Cli {
        use clap::{CommandFactory, FromArgMatches};
        let cmd = negative_values_allowed(Cli::command());
        let parsed = cmd
            .try_get_matches()
            .and_then(|m| Cli::from_arg_matches(&m));
        parsed.unwrap_or_else(|e| {
            // --help and --version go to stdout as clap draws them; an error's message,
            // which quotes what was typed, goes through the one stderr line.
            if !e.use_stderr() {
                e.exit()
            }
            say(&e.render().to_string());
            std::process::exit(e.exit_code())
        })
    }
}

/// Write `text` to stderr: every line flashscope prints there goes through here, so an
/// error, a warning or a notice that quotes a device, a file, a document or a database
/// shows its control characters (escape sequences, bells, carriage returns) as text
/// ([`crate::input::printable_text`]) and never moves the cursor, retitles the window or
/// overwrites a line. A line break is added unless `text` ends with one; an empty text
/// prints nothing. A closed stderr is not an error worth stopping for.
pub fn say(text: &str) {
    use std::io::Write;
    if text.is_empty() {
        return;
    }
    let shown = crate::input::printable_text(text);
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(shown.as_bytes());
    if !shown.ends_with('\n') {
        let _ = err.write_all(b"\n");
    }
    let _ = err.flush();
}

/// The command line's definition as clap builds it: what `build.rs` renders the man page
/// and completions from.
pub fn command_tree() -> clap::Command {
    <Cli as clap::CommandFactory>::command()
}

/// `cmd` and all its subcommands with negative numbers taken as values.
fn negative_values_allowed(cmd: clap::Command) -> clap::Command {
    cmd.allow_negative_numbers(true)
        .mut_subcommands(negative_values_allowed)
}

/// How results are printed: JSON, text or LAVA calls on stdout, progress and warnings on
/// stderr, and the export files (`--prometheus`, `--junit`), opened before the command
/// measures anything and written with its result.
#[derive(Debug)]
pub struct Output {
    pub json: bool,
    pub lava: bool,
    exports: std::cell::RefCell<Exports>,
    /// An export that failed after the result was printed: the run's error (exit 1).
    failure: std::cell::RefCell<Option<crate::Error>>,
    /// Where a measuring command's result is recorded (`None`: not recorded), or why
    /// recording is off (said once, as a warning, when a measurement is emitted).
    history: std::result::Result<Option<std::path::PathBuf>, String>,
}

impl Default for Output {
    fn default() -> Self {
        Output {
            json: false,
            lava: false,
            exports: Default::default(),
            failure: None.into(),
            history: Ok(None),
        }
    }
}

impl Output {
    /// Output as `cli` asks; a missing or unwritable export path is a usage error (exit 2)
    /// here, before anything is measured (clap refuses an empty `--history` path).
    pub fn new(cli: &Cli) -> Result<Output> {
        let mut files = Vec::new();
        if let Some(p) = &cli.prometheus {
            files.push((FileFormat::Prometheus, p.as_path()));
        }
        if let Some(p) = &cli.junit {
            files.push((FileFormat::Junit, p.as_path()));
        }
        let history = if matches!(cli.command, Command::History(_)) {
            Ok(None)
        } else {
            let env = std::env::var("FLASHSCOPE_HISTORY").ok();
            crate::history::recording_place(cli.history.as_deref(), cli.no_history, env.as_deref())
        };
        Ok(Output {
            json: cli.json,
            lava: cli.lava,
            exports: Exports::open(&files)?.into(),
            failure: None.into(),
            history,
        })
    }

    /// The history this run is recorded into, if any: the one `health` projects the wear
    /// from (so --no-history and FLASHSCOPE_HISTORY=off read no stored runs either).
    pub fn recording_place(&self) -> Option<&std::path::Path> {
        self.history.as_ref().ok().and_then(|p| p.as_deref())
    }

    /// Whether the output is only standard output, JSON or text (no export files, no
    /// `--lava`): a command may then write it as it goes, in the same bytes.
    pub fn plain(&self) -> bool {
        !self.lava && self.exports.borrow().is_empty()
    }

    /// Print the document as JSON, or the text rendering followed by its warnings (or,
    /// with `--lava`, the `lava-test-case` calls), and write the export files.
    ///
    /// A closed stdout (`flashscope ... | head`) is not an error: the rest is dropped.
    pub fn emit(&self, doc: &Document) {
        self.emit_text(doc, crate::output::render)
    }

    /// [`Output::emit`] with another text than the document's own (`auto --verbose`'s
    /// steps, `history show`'s header).
    pub fn emit_text(&self, doc: &Document, text: impl FnOnce(&Document) -> String) {
        use std::io::Write;
        let helper = if self.lava {
            lava::helper_on_path()
        } else {
            None
        };
        // Written as made: the JSON of a document that holds a large log, or its text, is
        // not copied into further strings first.
        let write = |bytes: &[u8]| {
            let mut stdout = std::io::stdout().lock();
            stdout.write_all(bytes).and_then(|_| stdout.flush())
        };
        let _ = if self.json {
            let mut stdout = std::io::stdout().lock();
            doc.write_json(&mut stdout).and_then(|_| stdout.flush())
        } else if self.lava && helper.is_none() {
            let mut v = Vec::new();
            let _ = lava::Lava.write(doc, &mut v);
            write(String::from_utf8_lossy(&v).as_bytes())
        } else {
            // No terminal control reaches the screen: a device, file or saved document
            // may hold escape sequences or carriage returns in any string it gave.
            let text = text(doc);
            write(crate::input::printable_text(&text).as_bytes())
        };
        if !self.json {
            for w in &doc.warnings {
                say(&format!(
                    "warning: {}",
                    crate::input::printable(&w.to_string())
                ));
            }
        }
        let mut result = self.exports.borrow_mut().finish(doc);
        if let (Ok(()), Some(h)) = (&result, &helper) {
            result = lava::call(h, doc);
        }
        if let Err(e) = result {
            self.failure.borrow_mut().get_or_insert(e);
        }
        self.record(doc);
    }

    /// Store a measuring command's document in the history; a history that cannot be
    /// used never fails the run: one warning on stderr, and this run is not stored.
    fn record(&self, doc: &Document) {
        if let Err(e) = crate::history::record_run(&self.history, doc) {
            say(&format!(
                "warning: history is off for this run: {}",
                crate::input::printable(&e.to_string())
            ));
        }
    }

    /// The error an export met, if one did.
    fn take_failure(&self) -> Option<crate::Error> {
        self.failure.borrow_mut().take()
    }
}

/// Print a writing test's document and return its verdict; a test a signal stopped has
/// said so on stderr and prints nothing.
fn emit_finished(finished: Finished, out: &Output) -> Result<Verdict> {
    match finished {
        Finished::Done { mut doc, verdict } => {
            crate::commands::host_path::attach(&mut doc);
            out.emit(&doc);
            Ok(verdict)
        }
        Finished::Stopped { verdict } => Ok(verdict),
    }
}

/// A measuring command's document with its target's host path: read once per run, here,
/// after the measurement (nothing of it is measured).
fn with_host_path(mut doc: Document) -> Document {
    crate::commands::host_path::attach(&mut doc);
    doc
}

/// Run a parsed command line; returns its verdict (`main` maps it to the exit code).
pub fn run(cli: Cli) -> Result<Verdict> {
    // Every document of this run carries the time it started.
    crate::report::run_started_at();
    let out = Output::new(&cli)?;
    let verdict = match &cli.command {
        Command::Info(a) => info::run(a, &out),
        Command::Health(a) => {
            let db = out.recording_place().map(|p| p.to_path_buf());
            health::run(a, db.as_deref(), &out)
        }
        Command::Probe(a) => probe::run(a, &out),
        Command::Verify(a) => verify::run(a, &out),
        Command::Sim(c) => sim::run(c, &out),
        Command::Io(a) => io::run(a, &out),
        Command::Bench(a) => bench::run(a, &out),
        Command::Align(a) => align::run(a, &out),
        Command::Auto(a) => auto::run(a, &out),
        Command::Scatter(a) => scatter::run(a, &out),
        Command::Interval(a) => interval::run(a, &out),
        Command::Analyze(a) => analyze::run(a, &out),
        Command::Fs(c) => fs::run(c, &out),
        Command::Model(a) => model::run(a, &out),
        Command::Restore(a) => restore::run(a, &out),
        Command::OpenAu(a) => open_au::run(a, &out),
        Command::Fat(a) => fat::run(a, &out),
        Command::Program(a) => program::run(a, &out),
        Command::Slc(a) => slc::run(a, &out),
        Command::Report(a) => report::run(a),
        Command::Compare(a) => {
            let db = crate::history::reading_place(cli.history.as_deref(), cli.no_history).ok();
            compare::run(a, db.as_deref(), &out)
        }
        // `main` answers `flashscope smartctl …` before clap parses anything; here only
        // when a global option came first, which smartctl's shape has no place for.
        Command::Smartctl(_) => Err(crate::Error::usage(
            "smartctl: give it first, as `flashscope smartctl ARGS` (flashscope's global options do not apply to it)",
        )),
        Command::Man => completions::man(),
        Command::Completions(a) => completions::run(a),
        Command::History(c) => history::run(
            c,
            &crate::history::reading_place(cli.history.as_deref(), cli.no_history)?,
            &out,
        ),
    }?;
    match out.take_failure() {
        Some(e) => Err(e),
        None => Ok(verdict),
    }
}

/// A shared option's value where its command has a default: clap fills the default in,
/// so it is always there; a definition without one is a usage error, not a panic.
fn defaulted<T: Clone>(value: &Option<T>, option: &str) -> Result<T> {
    value
        .clone()
        .ok_or_else(|| crate::Error::usage(format!("{option} needs a value")))
}

/// A path option for a command that takes its file name as text: refused unless UTF-8
/// (as clap refused it when the option was a string).
fn utf8_path(path: &Option<std::path::PathBuf>, option: &str) -> Result<Option<String>> {
    path.as_ref()
        .map(|p| {
            p.to_str().map(str::to_string).ok_or_else(|| {
                crate::Error::usage(format!(
                    "{option} {}: give a file name in UTF-8",
                    crate::input::printable(&p.to_string_lossy())
                ))
            })
        })
        .transpose()
}
