//! Real-time pacing: the simulated card's command queue laid onto the monotonic clock,
//! and a waiter that sleeps for long waits and spins for the last microseconds.

use crate::backend::monotonic_ns;
use std::collections::VecDeque;
use std::time::Duration;

/// The last stretch of every wait is spun, not slept: a sleeping thread wakes up tens of
/// microseconds late in a VM, which would blur a 30 µs erase-block boundary cost.
pub const DEFAULT_SPIN_NS: u64 = 50_000;

/// When a request may start, when the card is done with it and when its reply leaves,
/// in monotonic nanoseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    pub start_ns: u64,
    pub deadline_ns: u64,
    /// `deadline_ns` less the transport lead, never before the request arrived.
    pub reply_ns: u64,
}

/// The card works on one command at a time: a request starts when it arrives or when the
/// previous one is done, whichever is later, and takes the time the model gave it (the
/// model itself overlaps command time when several are outstanding, see
/// [`Pacer::outstanding`]).
///
/// Scheduling against the previous *deadline* (not the moment the previous reply really
/// left) keeps the server's own overhead out of the device's timeline whenever requests
/// queue up, as they do at a queue depth above one.
///
/// The way to the server and back (the loop driver, FUSE, the wake-ups of both sides)
/// costs time a card on a host's bus does not have. The reply leaves that much (the
/// *lead*, measured when the server starts) before the card's deadline, so a client
/// waiting for it sees the model's time; the card's own timeline is not moved, so
/// throughput at a deeper queue stays the model's.
#[derive(Debug, Clone)]
pub struct Pacer {
    device_free_ns: u64,
    lead_ns: u64,
    /// Reply times of the requests whose replies have not left yet, in order.
    replies: VecDeque<u64>,
}

impl Pacer {
    /// A card that has been idle until `now_ns`, with no lead.
    pub fn new(now_ns: u64) -> Self {
        Pacer {
            device_free_ns: now_ns,
            lead_ns: 0,
            replies: VecDeque::new(),
        }
    }

    /// Send replies `lead_ns` ahead of the card's deadlines (the measured transport time).
    pub fn set_lead(&mut self, lead_ns: u64) {
        self.lead_ns = lead_ns;
    }

    pub fn lead_ns(&self) -> u64 {
        self.lead_ns
    }

    /// How many requests the host has outstanding at the card when one arrives at
    /// `arrival_ns`: it and those whose replies are still to leave. A host at queue depth
    /// one sends its next request only after the reply, so this is 1 there, whatever the
    /// lead.
    pub fn outstanding(&mut self, arrival_ns: u64) -> usize {
        while self.replies.front().is_some_and(|&r| r <= arrival_ns) {
            self.replies.pop_front();
        }
        self.replies.len() + 1
    }

    /// Real time the card has sat idle before a request that arrives at `arrival_ns`; the
    /// model's virtual clock advances by it so idle-time effects (the SLC cache draining)
    /// follow real time.
    pub fn idle_before(&self, arrival_ns: u64) -> u64 {
        arrival_ns.saturating_sub(self.device_free_ns)
    }

    /// Queue a request that arrived at `arrival_ns` and costs `model_ns` of card time.
    pub fn schedule(&mut self, arrival_ns: u64, model_ns: u64) -> Slot {
        let start_ns = arrival_ns.max(self.device_free_ns);
        let deadline_ns = start_ns.saturating_add(model_ns);
        self.device_free_ns = deadline_ns;
        let reply_ns = deadline_ns.saturating_sub(self.lead_ns).max(arrival_ns);
        // Replies leave in order (the completer sends them first in, first out).
        let reply_ns = reply_ns.max(self.replies.back().copied().unwrap_or(0));
        self.replies.push_back(reply_ns);
        Slot {
            start_ns,
            deadline_ns,
            reply_ns,
        }
    }

    /// When the card will have finished everything queued so far.
    pub fn device_free_ns(&self) -> u64 {
        self.device_free_ns
    }
}

/// Wait until the monotonic clock reaches `deadline_ns`: sleep while more than `spin_ns`
/// remain, then spin (yielding, so a thread pinned to the same CPU still gets to run).
/// Returns the clock when the wait ended (never before the deadline).
pub fn wait_until(deadline_ns: u64, spin_ns: u64) -> u64 {
    loop {
        let now = monotonic_ns();
        if now >= deadline_ns {
            return now;
        }
        let remaining = deadline_ns - now;
        if remaining > spin_ns {
            std::thread::sleep(Duration::from_nanos(remaining - spin_ns));
        } else {
            std::thread::yield_now();
        }
    }
}

/// Ask the kernel to wake this thread's timed sleeps without the default 50 µs of slack.
pub fn tighten_timer_slack() {
    // 1 ns: the smallest slack the kernel takes (0 would mean "the default" again).
    let _ = rustix::thread::set_current_timer_slack(std::num::NonZeroU64::new(1));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_idle_card_starts_at_arrival_and_a_busy_one_queues() {
        let mut p = Pacer::new(1_000);
        assert_eq!(p.idle_before(5_000), 4_000);
        let a = p.schedule(5_000, 300);
        assert_eq!(
            a,
            Slot {
                start_ns: 5_000,
                deadline_ns: 5_300,
                reply_ns: 5_300,
            }
        );
        // Arrives while the first is still being served: waits for it.
        let b = p.schedule(5_100, 300);
        assert_eq!(b.start_ns, 5_300);
        assert_eq!(b.deadline_ns, 5_600);
        assert_eq!(p.idle_before(5_200), 0, "no idle time while busy");
        // Arrives after the queue drained: idle in between, starts at once.
        assert_eq!(p.idle_before(9_000), 3_400);
        assert_eq!(p.schedule(9_000, 0).deadline_ns, 9_000);
    }

    #[test]
    fn queued_requests_add_up_to_exactly_their_model_time() {
        let mut p = Pacer::new(0);
        let mut last = Slot {
            start_ns: 0,
            deadline_ns: 0,
            reply_ns: 0,
        };
        for i in 0..32u64 {
            last = p.schedule(10 + i, 1_000);
        }
        assert_eq!(last.deadline_ns, 10 + 32 * 1_000);
    }

    #[test]
    fn replies_lead_the_deadline_but_the_card_keeps_its_timeline() {
        let mut p = Pacer::new(0);
        p.set_lead(80);
        // Queue depth one: each request arrives when the previous reply has crossed back
        // (the lead later): the host sees exactly the model's 300 per request, and the
        // card never counts two outstanding.
        let mut arrival = 1_000;
        for _ in 0..4 {
            assert_eq!(p.outstanding(arrival), 1);
            let s = p.schedule(arrival, 300);
            assert_eq!(
                (s.start_ns, s.deadline_ns, s.reply_ns),
                (arrival, arrival + 300, arrival + 220)
            );
            arrival = s.reply_ns + 80;
        }
        // A request cheaper than the lead is answered at once, never before it arrived.
        let s = p.schedule(arrival, 10);
        assert_eq!(s.reply_ns, arrival);
        // A deeper queue: the card's timeline is back to back at the model's time.
        let mut p = Pacer::new(0);
        p.set_lead(80);
        let slots: Vec<Slot> = (0..8u64)
            .map(|i| {
                let n = p.outstanding(100 + i);
                assert_eq!(n, i as usize + 1, "request {i} sees those before it");
                p.schedule(100 + i, 300)
            })
            .collect();
        assert_eq!(slots[7].deadline_ns, 100 + 8 * 300);
        assert_eq!(slots[7].reply_ns, 100 + 8 * 300 - 80);
        // Once replies have left they no longer count.
        assert_eq!(p.outstanding(slots[3].reply_ns), 5);
    }

    #[test]
    fn waiting_never_ends_before_the_deadline() {
        tighten_timer_slack();
        for wait in [0u64, 20_000, 120_000, 400_000] {
            let deadline = monotonic_ns() + wait;
            let ended = wait_until(deadline, DEFAULT_SPIN_NS);
            assert!(ended >= deadline);
        }
    }
}
