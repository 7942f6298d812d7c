// The clap definition of `man` and `completions` (see [`super`]).

/// Arguments of `completions`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Examples:
  flashscope completions bash > /etc/bash_completion.d/flashscope
  flashscope completions zsh > /usr/local/share/zsh/site-functions/_flashscope
  flashscope completions fish > ~/.config/fish/completions/flashscope.fish

Exit code 2 for a shell not in the list.")]
pub struct Args {
    /// The shell to complete for.
    #[arg(value_enum, value_name = "SHELL")]
    pub shell: Shell,
}

/// The shells completions are written for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Shell {
    Bash,
    Zsh,
    Fish,
    Elvish,
    Powershell,
}
