//! The machine-noise model every measuring command shares: what the machine did to a
//! run (load, hypervisor steal, stalled reads) and the `noisy_environment` warning that
//! names the causes (align, interval and bench).

use crate::vocab::units::format_ns;
use crate::vocab::Warning;
use serde::{Deserialize, Serialize};

/// What the machine did to the measurement, from the run's own figures.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Environment {
    /// 1-minute load average at the end of the run, and the CPUs available.
    pub load1: f64,
    pub cpus: usize,
    /// Fraction of CPU time stolen by a hypervisor during the run.
    pub steal: f64,
    /// Reads that took more than twice their row's fast reads + 100 µs, of all reads.
    pub stalled_reads: u64,
    pub reads: u64,
    /// Longest stall beyond its row's fast reads, in ns.
    pub worst_stall_ns: f64,
}

/// Share of reads that may stall before the run is called noisy.
const NOISY_STALL_SHARE: f64 = 0.01;

/// A `noisy_environment` warning naming the causes, when the machine was busy: more
/// runnable tasks than CPUs besides this one, hypervisor steal above 5 %, or more than 1 %
/// of reads stalled. `None` when the run was quiet.
pub fn noisy_environment(env: &Environment) -> Option<Warning> {
    noisy_environment_with(env, crate::vocab::warning::NoiseEffect::AlignAnswers)
}

/// The same `noisy_environment` judgement for another command's figures (`effect` says
/// what the noise does to them).
pub fn noisy_environment_with(
    env: &Environment,
    effect: crate::vocab::warning::NoiseEffect,
) -> Option<Warning> {
    let causes = busy_causes(env);
    (!causes.is_empty()).then_some(Warning::NoisyEnvironment { causes, effect })
}

/// What made the machine busy during a run, in words (empty when it was quiet): more
/// runnable tasks than CPUs besides this one, hypervisor steal above 5 %, more than 1 % of
/// reads stalled. Shared by every measuring command's `noisy_environment` warning.
pub fn busy_causes(env: &Environment) -> Vec<String> {
    let mut causes = Vec::new();
    if env.cpus > 0 && env.load1 >= env.cpus as f64 + 1.0 {
        causes.push(format!(
            "load average {:.1} on {} CPUs (other programs competed for the CPU)",
            env.load1, env.cpus
        ));
    }
    if env.steal > 0.05 {
        causes.push(format!(
            "{:.0} % of CPU time stolen by the hypervisor",
            100.0 * env.steal
        ));
    }
    let share = env.stalled_reads as f64 / env.reads.max(1) as f64;
    if share > NOISY_STALL_SHARE {
        causes.push(format!(
            "{} of {} reads stalled ({:.1} %, the longest by {})",
            env.stalled_reads,
            env.reads,
            100.0 * share,
            format_ns(env.worst_stall_ns)
        ));
    }
    causes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_busy_machine_is_named_and_a_quiet_one_is_not() {
        let quiet = Environment {
            load1: 0.5,
            cpus: 2,
            reads: 1000,
            ..Default::default()
        };
        assert_eq!(noisy_environment(&quiet), None);
        let busy = Environment {
            load1: 4.2,
            steal: 0.1,
            stalled_reads: 30,
            worst_stall_ns: 7e6,
            ..quiet
        };
        let m = noisy_environment(&busy).unwrap().to_string();
        assert!(m.contains("load average 4.2 on 2 CPUs"), "{m}");
        assert!(m.contains("10 % of CPU time stolen"), "{m}");
        assert!(m.contains("30 of 1000 reads stalled"), "{m}");
    }
}
