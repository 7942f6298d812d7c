//! `flashscope smartctl ARGS…`, and flashscope run under the name `smartctl` (a symbolic
//! link): smartctl's command-line shapes in, smartctl's JSON out, smartctl's exit status
//! bits (docs/smartctl.md). Parsed here by hand, not by clap: smartctl's options
//! (`--json=c`, `-d TYPE`, `-ij`) and its exit codes are not flashscope's. Nothing is
//! written to stderr: Scrutiny reads stdout and stderr as one stream.

pub use super::defs::smartctl::*;

use crate::commands::smartctl::{self as cmd, Action, Answer, Params};
use crate::health::smartctl::Want;

/// What a command line asks.
#[derive(Debug)]
pub enum Parsed {
    Run(Box<Params>),
    Help,
    Version,
}

/// If this process is the smartctl mode (its name is `smartctl`, or its first argument),
/// answer and return the exit status; `None` for every other command line.
pub fn intercept() -> Option<u8> {
    let all: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let named = all
        .first()
        .and_then(|a| std::path::Path::new(a).file_name())
        .is_some_and(|n| n == "smartctl");
    let rest = if named {
        all.get(1..)?
    } else if all.get(1).is_some_and(|a| a == "smartctl") {
        all.get(2..)?
    } else {
        return None;
    };
    let mut args = Vec::with_capacity(rest.len());
    for a in rest {
        match a.to_str() {
            Some(s) => args.push(s.to_string()),
            None => {
                return Some(print(cmd::refused(
                    &["smartctl".to_string()],
                    &format!(
                        "an argument is not UTF-8: {}",
                        crate::input::printable(&a.to_string_lossy())
                    ),
                )))
            }
        }
    }
    Some(run(&args))
}

/// Answer `args` (smartctl's arguments, without the program name) on stdout; the exit
/// status.
pub fn run(args: &[String]) -> u8 {
    let argv: Vec<String> = std::iter::once("smartctl".to_string())
        .chain(args.iter().cloned())
        .collect();
    match parse(args) {
        Ok(Parsed::Run(p)) => print(cmd::answer(&p)),
        Ok(Parsed::Help) => {
            write_stdout(HELP.as_bytes());
            0
        }
        Ok(Parsed::Version) => {
            write_stdout(
                format!(
                    "flashscope {} answering in smartctl's JSON shape (not smartmontools)\n",
                    env!("CARGO_PKG_VERSION")
                )
                .as_bytes(),
            );
            0
        }
        Err(message) => print(cmd::refused(&argv, &message)),
    }
}

fn print(a: Answer) -> u8 {
    write_stdout(&a.stdout);
    a.exit_status
}

fn write_stdout(bytes: &[u8]) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(bytes).and_then(|_| out.flush());
}

/// Parse smartctl's arguments (without the program name). A message for a command line
/// that does not parse.
pub fn parse(args: &[String]) -> std::result::Result<Parsed, String> {
    let mut want = Want::default();
    let (mut scan, mut json) = (false, false);
    let mut device_type = None;
    let mut max_wear = "80%".to_string();
    let mut sysfs_root = None;
    let mut targets = Vec::new();
    let mut pass_on = Vec::new();
    let mut i = 0;
    // The value of an option: `--opt=V`, `--opt V`, `-oV` or `-o V`.
    let value = |i: &mut usize, inline: Option<&str>, name: &str| -> Result<String, String> {
        if let Some(v) = inline {
            return Ok(v.to_string());
        }
        *i += 1;
        args.get(*i)
            .cloned()
            .ok_or_else(|| format!("option {name} needs an argument"))
    };
    while i < args.len() {
        let a = args[i].as_str();
        let (name, inline) = match a.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n, Some(v)),
            _ => (a, None),
        };
        let start = i;
        let mut own = false;
        match name {
            "--scan" | "--scan-open" => scan = true,
            "--info" => want.info = true,
            "--health" | "--attributes" => want.health = true,
            "--all" | "--xall" => {
                want = Want {
                    info: true,
                    health: true,
                }
            }
            "--json" => {
                json = true;
                if let Some(flags) = inline {
                    if let Some(c) = flags.chars().find(|c| !"cgiosuvy".contains(*c)) {
                        return Err(format!("option --json: unknown flag '{c}' in '{flags}' (known: c g i o s u v y)"));
                    }
                }
            }
            "--device" => device_type = Some(value(&mut i, inline, "--device")?),
            "--nocheck" => {
                value(&mut i, inline, "--nocheck")?;
            }
            "--max-wear" => {
                max_wear = value(&mut i, inline, "--max-wear")?;
                own = true;
            }
            "--sysfs-root" => {
                sysfs_root = Some(value(&mut i, inline, "--sysfs-root")?);
                own = true;
            }
            "--help" | "--usage" => return Ok(Parsed::Help),
            "--version" | "--copyright" | "--license" => return Ok(Parsed::Version),
            _ if a.starts_with("--") => return Err(format!("unrecognized option: {a}")),
            _ if a.starts_with('-') && a.len() > 1 => {
                // Short options, several in one word (`-ij`); -d and -n take a value.
                let letters: Vec<char> = a[1..].chars().collect();
                let mut k = 0;
                while k < letters.len() {
                    let rest: String = letters[k + 1..].iter().collect();
                    let inline = (!rest.is_empty()).then_some(rest.as_str());
                    match letters[k] {
                        'i' => want.info = true,
                        'H' | 'A' => want.health = true,
                        'a' | 'x' => {
                            want = Want {
                                info: true,
                                health: true,
                            }
                        }
                        'j' => json = true,
                        'h' => return Ok(Parsed::Help),
                        'V' => return Ok(Parsed::Version),
                        'd' => {
                            device_type = Some(value(&mut i, inline, "-d")?);
                            break;
                        }
                        'n' => {
                            value(&mut i, inline, "-n")?;
                            break;
                        }
                        c => return Err(format!("unrecognized option: -{c} (in {a})")),
                    }
                    k += 1;
                }
            }
            _ => targets.push(a.to_string()),
        }
        i += 1;
        if !own {
            pass_on.extend(args[start..i].iter().cloned());
        }
    }
    if !json {
        return Err("flashscope answers only in smartctl's JSON shape: add --json (or -j)".into());
    }
    if device_type.as_deref() == Some("") {
        return Err("option --device needs a device type".into());
    }
    let max_wear_percent = crate::health::parse_max_wear(&max_wear).map_err(|e| e.to_string())?;
    let mut roots = crate::platform::Roots::system();
    if let Some(dir) = sysfs_root {
        let dir = std::path::PathBuf::from(dir);
        if !dir.is_dir() {
            return Err(format!(
                "--sysfs-root {}: not a directory",
                crate::input::printable(&dir.display().to_string())
            ));
        }
        roots.sys = dir;
    }
    let action = if scan {
        if !targets.is_empty() || want != Want::default() {
            return Err("--scan takes no device and no other query".into());
        }
        Action::Scan
    } else {
        let target = match targets.as_slice() {
            [t] => t.clone(),
            [] => return Err("give a device (e.g. /dev/mmcblk0) or --scan".into()),
            _ => return Err(format!("give one device, not {}", targets.len())),
        };
        if want == Want::default() {
            return Err("ask for --info, --health, --all or --xall".into());
        }
        Action::Device { want, target }
    };
    let argv = std::iter::once("smartctl".to_string())
        .chain(args.iter().cloned())
        .collect();
    Ok(Parsed::Run(Box::new(Params {
        argv,
        action,
        device_type,
        max_wear_percent,
        roots,
        pass_on,
    })))
}

/// What `-h` prints.
const HELP: &str = "\
flashscope smartctl: smartctl's command line and JSON for eMMC and SD cards (docs/smartctl.md)

Usage: flashscope smartctl [OPTIONS] --json DEVICE     (or flashscope linked as `smartctl`)
  --scan                 the cards flashscope has wear data for, then smartctl's own scan
  -i, --info             identity: model, serial, firmware, capacity
  -H, --health, -A       the verdict (smart_status) and the wear (NVMe-shaped health log)
  -a, --all, -x, --xall  both
  -j, --json[=FLAGS]     required: flashscope answers only in JSON
  -d, --device TYPE      passed on to smartctl for other disks; any type for a card
  -n, --nocheck MODE     accepted; reading an eMMC's wear wakes nothing
  --max-wear PERCENT     the wear at which a card counts as failing (default 80%)
SATA, SCSI, USB and NVMe disks are handed to the real smartctl with the same arguments.
Exit status: smartctl's bits: 1 command line, 2 device open or identity, 4 no wear data,
8 worn or at end of life (DISK FAILING).
";
