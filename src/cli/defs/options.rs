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
                let mut arg = build(clap::Arg::new($id)).help(U::HELP).hide(U::HIDE);
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
