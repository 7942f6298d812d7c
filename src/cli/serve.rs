//! `flashscope sim serve SPEC MOUNTPOINT [--loop] [--cpus N]`: the simulated card as a real
//! block device (FUSE file + loop device), with the model's time spent in real time.

pub use super::defs::serve::*;

use super::Output;
use crate::output;
use crate::serve::{serve, ServeOptions};
use crate::vocab::error::Verdict;
use crate::Result;
use std::io::Write;

/// `--cpus` here names one CPU: the server pins its threads to it.
fn one_cpu(cpus: &Option<Vec<usize>>) -> Result<Option<usize>> {
    match cpus.as_deref() {
        None => Ok(None),
        Some([cpu]) => Ok(Some(*cpu)),
        Some(_) => Err(crate::Error::usage(
            "sim serve --cpus takes one CPU, e.g. --cpus 1: the server's threads share it",
        )),
    }
}

pub fn run(args: &Args, out: &Output) -> Result<Verdict> {
    let cfg = crate::commands::sim::served_config(&args.spec)?;
    let spin_ns = args.spin;
    let opts = ServeOptions {
        cfg: cfg.clone(),
        mountpoint: args.mountpoint.clone(),
        attach_loop: args.attach_loop,
        cpu: one_cpu(&args.cpu.value)?,
        spin_ns,
        realtime: !args.no_realtime,
    };
    let outcome = serve(&opts, |ready| {
        super::say(&output::sim::serving(args.spec.as_str(), cfg.size, ready));
        // One line on stdout with the path to open, so scripts can capture it.
        let path = ready.loop_device.as_ref().unwrap_or(&ready.image);
        let mut stdout = std::io::stdout().lock();
        let _ = writeln!(stdout, "{}", path.display());
        let _ = stdout.flush();
    })?;
    super::say(&output::sim::served(&outcome));
    if out.json {
        let doc = crate::commands::sim::served(args.spec.as_str(), &opts, &outcome);
        println!("{}", doc.to_json());
    }
    Ok(Verdict::Ok)
}
