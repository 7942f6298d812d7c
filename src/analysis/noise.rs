//! The machine-noise model every measuring command shares: what the machine did to a
//! run (load, hypervisor steal, stalled reads) and the `noisy_environment` warning that
//! names the causes (align, interval and bench).

use crate::vocab::units::format_ns;
use crate::vocab::Warning;
use serde::{Deserialize, Serialize};

/// What the machine did to the measurement, from the run's own figures.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(test, derive(schemars::JsonSchema))]
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
    /// Share of the run some task waited for a CPU (the kernel's CPU pressure); absent where
    /// the kernel keeps no such figure, and on the simulated card.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_wait_share: Option<f64>,
}

/// Share of a run's time some task may wait for a CPU before the machine counts as busy
/// (the kernel's CPU pressure over the run). open-au takes a measurement again above it.
pub const BUSY_CPU_SHARE: f64 = 0.10;

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
    match env.cpu_wait_share {
        // The kernel's pressure figure covers the run itself; the 1-minute load average
        // trails it by a minute either way (a quiet run just after a busy one kept a load
        // of 7 on 2 CPUs), so it decides only where the kernel has no pressure figure.
        Some(share) if share > BUSY_CPU_SHARE => causes.push(format!(
            "tasks waited for a CPU {:.0} % of the run (other programs competed for the CPU; load average {:.1} on {} CPUs)",
            100.0 * share,
            env.load1,
            env.cpus
        )),
        Some(_) => {}
        None if env.cpus > 0 && env.load1 >= env.cpus as f64 + 1.0 => causes.push(format!(
            "load average {:.1} on {} CPUs (other programs competed for the CPU)",
            env.load1, env.cpus
        )),
        None => {}
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

    #[test]
    fn the_runs_own_cpu_pressure_outweighs_a_trailing_load_average() {
        // Just after a busy minute: the load average is still high, the run was quiet.
        let after_the_storm = Environment {
            load1: 7.1,
            cpus: 2,
            reads: 1000,
            cpu_wait_share: Some(0.01),
            ..Default::default()
        };
        assert_eq!(noisy_environment(&after_the_storm), None);
        // Busy from the start: the load average has not caught up, the pressure has.
        let storm = Environment {
            load1: 1.2,
            cpu_wait_share: Some(0.85),
            ..after_the_storm
        };
        let m = noisy_environment(&storm).unwrap().to_string();
        assert!(m.contains("tasks waited for a CPU 85 % of the run"), "{m}");
        // No pressure figure: the load average decides, as before.
        let old_kernel = Environment {
            cpu_wait_share: None,
            ..after_the_storm
        };
        assert!(noisy_environment(&old_kernel).is_some());
    }
}
