// Options that several commands take, each defined once (ripgrep's flag table, in clap):
// one type per option name, one value parser per kind of value, one value name. A command
// says only what the option means for it and its default, in a [`Use`]:
//
// ```ignore
// pub struct AlignBudget;
// impl Use for AlignBudget {
//     const HELP: &'static str = "Stop repeating after this much device time.";
//     const DEFAULT: Option<&'static str> = Some(ALIGN_TIME_BUDGET);
// }
// #[command(flatten)]
// pub time_budget: TimeBudget<AlignBudget>,
// ```
//
// clap appends `[default: ...]` to the help from `DEFAULT`, so a stated default is the
// default. The test `one_option_one_definition` walks the whole command tree and fails on
// a long option with two value types, value names or actions.

#[allow(unused_imports)]
use crate::cli::values::*;

/// What one command says about a shared option.
pub trait Use {
    /// The help: what the option does in this command (a sentence or two).
    const HELP: &'static str;
    /// The default as a user would type it; `None` for none (or one the command computes,
    /// which `HELP` then describes).
    const DEFAULT: Option<&'static str> = None;
    /// Hidden from --help (kept for old scripts).
    const HIDE: bool = false;
    /// Old spellings this command still accepts, hidden from --help.
    const ALIASES: &'static [&'static str] = &[];
    /// The command cannot run without it.
    const REQUIRED: bool = false;
    /// An option whose value is optional takes it only as `--name=VALUE` here, so the bare
    /// flag never eats the next word (a command where it was a plain flag before).
    const REQUIRE_EQUALS: bool = false;
}

/// One shared option: its struct (the value, if given or defaulted) and clap's glue.
macro_rules! shared_option {
    (
        $(#[$doc:meta])*
        $name:ident: $value:ty, slot = $slot:ty, id = $id:literal, build = $build:expr, many = $many:tt
    ) => {
        $(#[$doc])*
        pub struct $name<U> {
            /// The value(s) given, else the command's default.
            pub value: $slot,
            _use: std::marker::PhantomData<fn() -> U>,
        }

        impl<U> Clone for $name<U> {
            fn clone(&self) -> Self {
                $name { value: self.value.clone(), _use: std::marker::PhantomData }
            }
        }

        impl<U> Default for $name<U> {
            fn default() -> Self {
                $name { value: Default::default(), _use: std::marker::PhantomData }
            }
        }

        impl<U> std::fmt::Debug for $name<U> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($name)).field("value", &self.value).finish()
            }
        }

        impl<U> $name<U> {
            /// The option's id in clap's matches (and its long name with `-` for `_`).
            pub const ID: &'static str = $id;
        }

        impl<U: Use> clap::FromArgMatches for $name<U> {
            fn from_arg_matches(m: &clap::ArgMatches) -> Result<Self, clap::Error> {
                Ok($name {
                    value: shared_option!(@get $many m, $id, $value),
                    _use: std::marker::PhantomData,
                })
            }
            fn update_from_arg_matches(&mut self, m: &clap::ArgMatches) -> Result<(), clap::Error> {
                *self = Self::from_arg_matches(m)?;
                Ok(())
            }
        }

        impl<U: Use> clap::Args for $name<U> {
            fn augment_args(cmd: clap::Command) -> clap::Command {
                let build: fn(clap::Arg) -> clap::Arg = $build;
                let mut arg = build(clap::Arg::new($id))
                    .help(U::HELP)
                    .hide(U::HIDE)
                    .aliases(U::ALIASES)
                    .required(U::REQUIRED);
                if U::REQUIRE_EQUALS {
                    arg = arg.require_equals(true);
                }
                if let Some(d) = U::DEFAULT {
                    arg = arg.default_value(d);
                }
                cmd.arg(arg)
            }
            fn augment_args_for_update(cmd: clap::Command) -> clap::Command {
                Self::augment_args(cmd)
            }
        }
    };
    (@get one $m:ident, $id:literal, $value:ty) => { $m.get_one::<$value>($id).cloned() };
    (@get many $m:ident, $id:literal, $value:ty) => {
        $m.get_many::<$value>($id).map(|v| v.cloned().collect()).unwrap_or_default()
    };
}

shared_option! {
    /// `--time-budget DURATION`: the device time (virtual on sim:) a run may take; when it
    /// is spent the run stops and reports what it has. Nanoseconds, and the text given.
    TimeBudget: Given<u64>, slot = Option<Given<u64>>, id = "time_budget", build = |a| {
        a.long("time-budget")
            .value_name("DURATION")
            .value_parser(given(parse_duration_ns))
    }, many = one
}

shared_option! {
    /// `--plot FILE.svg`: where to write the command's SVG chart.
    Plot: PathBuf, slot = Option<PathBuf>, id = "plot", build = |a| {
        a.long("plot")
            .value_name("FILE.svg")
            .value_parser(clap::value_parser!(PathBuf))
    }, many = one
}

shared_option! {
    /// `--blocksize SIZE` (`-b`, fio's `--bs`): the size of each request, or the smallest
    /// of a sweep. Bytes (a plain number, or K, M, G, T = powers of 1024), and the text given.
    BlockSize: Given<u64>, slot = Option<Given<u64>>, id = "blocksize", build = blocksize, many = one
}

shared_option! {
    /// `--blocksize SIZE` given several times: each a request size of its own.
    BlockSizes: Given<u64>, slot = Vec<Given<u64>>, id = "blocksize", build = |a| {
        blocksize(a).action(clap::ArgAction::Append)
    }, many = many
}

/// The one `--blocksize`: its names, value name and parser.
fn blocksize(a: clap::Arg) -> clap::Arg {
    a.long("blocksize")
        .short('b')
        .alias("bs")
        .value_name("SIZE")
        .value_parser(given(parse_block_size))
}

shared_option! {
    /// `--size SIZE`: how much a command reads or writes (a region, a file, a model's
    /// total). Bytes (K, M, G, T = powers of 1024), neither zero nor negative, and the text
    /// given.
    Size: Given<u64>, slot = Option<Given<u64>>, id = "size", build = |a| {
        a.long("size")
            .value_name("SIZE")
            .allow_hyphen_values(true)
            .value_parser(given(parse_size_arg))
    }, many = one
}

shared_option! {
    /// `--erase-size SIZE`: the erase block (allocation unit) size. Bytes, neither zero
    /// nor negative, and the text given.
    EraseSize: Given<u64>, slot = Option<Given<u64>>, id = "erase_size", build = |a| {
        a.long("erase-size")
            .value_name("SIZE")
            .allow_hyphen_values(true)
            .value_parser(given(parse_erase_size))
    }, many = one
}

shared_option! {
    /// `--sync[=MODE]`: open with O_SYNC (`sync`, the bare flag), O_DSYNC (`dsync`) or
    /// neither (`none`), fio's `sync=`.
    Sync: SyncMode, slot = Option<SyncMode>, id = "sync", build = |a| {
        a.long("sync")
            .value_name("MODE")
            .num_args(0..=1)
            .default_missing_value("sync")
            .allow_negative_numbers(true)
            .value_parser(parse_sync_mode)
    }, many = one
}

shared_option! {
    /// `--fsync[=N]`: fsync after every N writes (the bare flag: after every write; 0:
    /// never), fio's `fsync=`.
    Fsync: u32, slot = Option<u32>, id = "fsync", build = |a| {
        a.long("fsync")
            .value_name("N")
            .num_args(0..=1)
            .default_missing_value("1")
            .allow_negative_numbers(true)
            .value_parser(clap::value_parser!(u32))
    }, many = one
}

shared_option! {
    /// `--cpus CPUS`: pin the command's threads to these CPUs, a list like 0 or 0-1,3
    /// (fio's cpus_allowed).
    Cpus: Vec<usize>, slot = Option<Vec<usize>>, id = "cpus", build = |a| {
        a.long("cpus")
            .value_name("CPUS")
            .value_parser(parse_cpus)
    }, many = one
}

shared_option! {
    /// `--pattern PATTERN`: the data written: random (incompressible), zeros, ones or a
    /// byte like 0x5a.
    PatternOpt: Pattern, slot = Option<Pattern>, id = "pattern", build = |a| {
        a.long("pattern")
            .value_name("PATTERN")
            .value_parser(parse_pattern)
    }, many = one
}

shared_option! {
    /// `--engine ENGINE`: the I/O engine: sync (pread/pwrite), uring (io_uring) or null
    /// (no I/O: the harness alone).
    Engine: EngineKind, slot = Option<EngineKind>, id = "engine", build = |a| {
        a.long("engine")
            .value_name("ENGINE")
            .value_parser(parse_engine)
    }, many = one
}

shared_option! {
    /// `--output FILE` (`-o`): the file a command writes besides its document (an HTML
    /// page, a table).
    OutputFile: PathBuf, slot = Option<PathBuf>, id = "output", build = |a| {
        a.long("output")
            .short('o')
            .value_name("FILE")
            .value_parser(clap::value_parser!(PathBuf))
    }, many = one
}

shared_option! {
    /// `--positions N`: how many places each size or alignment is measured at.
    Positions: usize, slot = Option<usize>, id = "positions", build = |a| {
        a.long("positions")
            .value_name("N")
            .value_parser(clap::value_parser!(usize))
    }, many = one
}

shared_option! {
    /// `--offset SIZE`: where the region a command uses starts. Bytes (K, M, G, T = powers
    /// of 1024; 0 is the start), and the text given.
    Offset: Given<u64>, slot = Option<Given<u64>>, id = "offset", build = |a| {
        a.long("offset")
            .value_name("SIZE")
            .value_parser(given(parse_size))
    }, many = one
}

shared_option! {
    /// `--iodepth N`: requests in flight, at least 1 (fio's iodepth).
    IoDepth: u32, slot = Option<u32>, id = "iodepth", build = |a| {
        a.long("iodepth")
            .value_name("N")
            .value_parser(parse_iodepth)
    }, many = one
}
