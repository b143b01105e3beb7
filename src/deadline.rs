//! One deadline per run: the budget plus a stated grace, counted from the start of
//! the process, and kept by every probe.
//!
//! Why one deadline and not per-call timeouts: a socket timeout restarts with
//! every byte, so a peer that drips one byte every two seconds holds a 5 s
//! timeout forever. Every blocking step (TCP connect, TLS handshake, a read, an
//! `ssh` child, the private daemon's start-up, a file read) instead asks how much
//! of *this run's* time is left and blocks for at most a short slice of it, so
//! the run also notices Ctrl-C within a slice.
//!
//! The run's deadline is process-wide ([`set_run`], [`run`]): it is one fact about
//! the run, and the backends that keep it (OpenSSL sockets, the `ssh` client, the
//! private sshd, file reads) are reached from many measuring loops. A probe that
//! has its own, shorter limit (`--timeout`) takes [`op`]: that limit from now,
//! never later than the run's deadline.

use crate::units::Seconds;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The longest a blocking call waits before it looks at Ctrl-C and the clock again.
pub const SLICE: Duration = Duration::from_millis(200);

/// A point in time after which nothing more may block. `None`: no limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Deadline {
    at: Option<Instant>,
}

/// The grace a budget gets on top: 1 s plus 5% (teardown, the last sample in
/// flight, writing the report). Stated in the README.
pub fn grace(budget: Seconds) -> Seconds {
    Seconds(1.0 + 0.05 * budget.0.max(0.0))
}

impl Deadline {
    /// No deadline at all (`--serve`, `history`, runs without a budget).
    pub const NONE: Deadline = Deadline { at: None };

    /// `d` from now.
    pub fn after(d: Duration) -> Deadline {
        Deadline {
            at: Instant::now().checked_add(d),
        }
    }

    /// The measuring deadline: `budget` plus its [`grace`] less what is kept
    /// back for the report ([`reserve`]), counted from `start`.
    pub fn for_budget(start: Instant, budget: Seconds) -> Deadline {
        let total = budget.0.max(0.0) + (grace(budget).0 - reserve(budget));
        Deadline {
            at: start.checked_add(Duration::from_secs_f64(total.min(1e9))),
        }
    }

    /// The earlier of the two.
    pub fn min(self, other: Deadline) -> Deadline {
        match (self.at, other.at) {
            (Some(a), Some(b)) => Deadline { at: Some(a.min(b)) },
            (a, b) => Deadline { at: a.or(b) },
        }
    }

    /// Time left (a very long time when there is no deadline).
    pub fn left(&self) -> Duration {
        match self.at {
            Some(at) => at.saturating_duration_since(Instant::now()),
            None => Duration::from_secs(86_400 * 365),
        }
    }

    pub fn expired(&self) -> bool {
        self.at.is_some_and(|at| Instant::now() >= at)
    }

    /// `t`, but no longer than what is left.
    pub fn cap(&self, t: Duration) -> Duration {
        t.min(self.left())
    }

    /// How long the next blocking call may wait: at most [`SLICE`], and `None`
    /// once the deadline has passed or the user asked to stop.
    pub fn slice(&self) -> Option<Duration> {
        if crate::interrupt::requested() {
            return None;
        }
        let left = self.left();
        (!left.is_zero()).then(|| left.min(SLICE))
    }
}

struct Run {
    deadline: Deadline,
    budget: Option<Seconds>,
    /// Start + budget, without grace: what a plan may spend.
    budget_end: Option<Instant>,
    /// Seconds of budget + grace kept back from measuring for what follows it
    /// ([`reserve`], or more after [`keep_for_after`]).
    kept: f64,
}

static RUN: Mutex<Run> = Mutex::new(Run {
    deadline: Deadline::NONE,
    budget: None,
    budget_end: None,
    kept: 0.0,
});

/// Keeps `secs` of the run's budget + grace back from measuring for what follows
/// it, where that is more than the [`reserve`] sized for a native machine: the
/// measuring deadline (and the cut, [`crate::interrupt::cut_at`]) moves earlier,
/// never later. For a machine that runs tools many times slower than usual (an
/// emulated one), measured by how long discovery took.
pub fn keep_for_after(secs: f64) {
    let mut r = RUN.lock().unwrap_or_else(|e| e.into_inner());
    let (Some(budget), Some(end)) = (r.budget, r.budget_end) else {
        return;
    };
    if secs.is_nan() || secs <= r.kept {
        return;
    }
    r.kept = secs;
    let d = r.deadline.min(Deadline {
        at: measuring_end(end, budget, secs),
    });
    r.deadline = d;
    if let Some(at) = d.at {
        crate::interrupt::cut_at(at);
    }
}

/// When measuring must end: the budget's end plus its grace, less `kept`.
fn measuring_end(budget_end: Instant, budget: Seconds, kept: f64) -> Option<Instant> {
    let offset = grace(budget).0 - kept;
    if offset >= 0.0 {
        budget_end.checked_add(Duration::from_secs_f64(offset.min(1e9)))
    } else {
        budget_end.checked_sub(Duration::from_secs_f64((-offset).min(1e9)))
    }
}

/// `budget`, or less when start-up already spent some of it: what a plan made now
/// may share out.
pub fn plan_budget(budget: Seconds) -> Seconds {
    budget_left().map_or(budget, |l| Seconds(l.0.min(budget.0)))
}

/// What is left of the run's budget itself (no grace), for plans that share the
/// rest out after a step of unknown length (a scan, a daemon's start); `None`
/// when no run deadline is set.
pub fn budget_left() -> Option<Seconds> {
    let r = RUN.lock().unwrap_or_else(|e| e.into_inner());
    r.budget_end
        .map(|end| Seconds(end.saturating_duration_since(Instant::now()).as_secs_f64()))
}

/// When the process started (`main` marks it first thing): a run's budget counts
/// from here, so start-up under load is inside it.
static PROCESS_START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();

/// Seconds since the process started (or since first asked, before `main` marked it).
pub fn since_start() -> f64 {
    PROCESS_START.get_or_init(Instant::now).elapsed().as_secs_f64()
}

/// Marks the start of the process. Called once, first thing in `main`.
pub fn mark_process_start() {
    let _ = PROCESS_START.set(Instant::now());
}

/// What measuring leaves of the grace for what comes after it (judging, the
/// report, the exports, stopping private daemons), so the whole run ends within
/// budget + grace even on a loaded machine: half the grace, at least 0.4 s.
fn reserve(budget: Seconds) -> f64 {
    (grace(budget).0 * 0.5).max(0.4)
}

/// Sets the run's deadline: `budget` plus its grace less the report's reserve, from the start of the
/// process (or `start`, when earlier), for every probe; and at that moment the run
/// is cut ([`crate::interrupt::cut_at`]): whatever still measures stops within a
/// slice, and the run reports what it kept with status `partial`.
pub fn set_run(start: Instant, budget: Seconds) {
    let start = PROCESS_START.get().map_or(start, |p| (*p).min(start));
    let d = Deadline::for_budget(start, budget);
    let at = d.at;
    let mut r = RUN.lock().unwrap_or_else(|e| e.into_inner());
    r.deadline = d;
    r.budget = Some(budget);
    r.budget_end = start.checked_add(Duration::from_secs_f64(budget.0.clamp(0.0, 1e9)));
    r.kept = reserve(budget);
    if let Some(at) = at {
        crate::interrupt::cut_at(at);
    }
}

/// The run's deadline ([`Deadline::NONE`] until [`set_run`]).
pub fn run() -> Deadline {
    RUN.lock().unwrap_or_else(|e| e.into_inner()).deadline
}

/// `timeout` from now, never past the run's deadline.
pub fn op(timeout: Duration) -> Deadline {
    Deadline::after(timeout).min(run())
}

/// Whether the run's own deadline (not an operation's timeout) has passed.
pub fn run_expired() -> bool {
    run().expired()
}

/// "the run's deadline (budget 10 s + grace 1.5 s)", for messages.
pub fn describe() -> String {
    let r = RUN.lock().unwrap_or_else(|e| e.into_inner());
    match r.budget {
        Some(b) if r.kept <= grace(b).0 => format!(
            "the run's deadline (budget {:.0} s + {:.1} s of its {:.1} s grace; the rest is for the report)",
            b.0,
            grace(b).0 - r.kept,
            grace(b).0
        ),
        Some(b) => format!(
            "the run's deadline (budget {:.0} s less {:.1} s kept for what follows measuring: start-up was slow here, as on an emulated machine)",
            b.0,
            r.kept - grace(b).0
        ),
        None => "the run's deadline".to_string(),
    }
}

/// The error a probe returns when the run's deadline passed while it waited.
#[derive(Debug, thiserror::Error)]
#[error("stopped at {what}: {doing}")]
pub struct DeadlinePassed {
    pub what: String,
    pub doing: String,
}

impl DeadlinePassed {
    pub fn new(doing: impl Into<String>) -> DeadlinePassed {
        DeadlinePassed {
            what: describe(),
            doing: doing.into(),
        }
    }
}

/// Waits for `child` a slice at a time (on a pidfd, so its exit is seen at
/// once), and kills it (its whole process group when `group`: it was started as
/// a group leader) at the run's deadline or on Ctrl-C. `Ok(None)`: it was killed.
pub fn wait_child(child: &mut std::process::Child, group: bool) -> std::io::Result<Option<std::process::ExitStatus>> {
    wait_child_by(child, group, run())
}

/// [`wait_child`] with a deadline of the caller's (at most the run's, as a rule:
/// `run().min(...)`).
pub fn wait_child_by(
    child: &mut std::process::Child,
    group: bool,
    deadline: Deadline,
) -> std::io::Result<Option<std::process::ExitStatus>> {
    wait_child_until(child, group, deadline, crate::interrupt::requested)
}

/// [`wait_child_by`], stopping when `stop` says so instead of on
/// [`crate::interrupt::requested`] (e.g. on Ctrl-C only, not at the run's cut).
pub fn wait_child_until(
    child: &mut std::process::Child,
    group: bool,
    deadline: Deadline,
    stop: fn() -> bool,
) -> std::io::Result<Option<std::process::ExitStatus>> {
    let pid = child.id();
    // SAFETY: pidfd_open(2) on our own child; -1 on kernels without it.
    let pidfd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid as libc::c_int, 0) } as libc::c_int;
    let result = loop {
        match child.try_wait() {
            Ok(Some(st)) => break Ok(Some(st)),
            Ok(None) => {}
            Err(e) => break Err(e),
        }
        if stop() || deadline.expired() {
            let target = if group { -(pid as i32) } else { pid as i32 };
            // SAFETY: kill(2) on our own, not yet reaped child (or its group).
            unsafe { libc::kill(target, libc::SIGKILL) };
            let _ = child.wait();
            break Ok(None);
        }
        let slice = deadline.cap(SLICE).max(Duration::from_millis(1));
        if pidfd >= 0 {
            let mut p = libc::pollfd {
                fd: pidfd,
                events: libc::POLLIN,
                revents: 0,
            };
            // SAFETY: one pollfd we own.
            unsafe { libc::poll(&mut p, 1, slice.as_millis().max(1) as i32) };
        } else {
            std::thread::sleep(slice.min(Duration::from_millis(2)));
        }
    };
    if pidfd >= 0 {
        // SAFETY: closing the pidfd we opened.
        unsafe { libc::close(pidfd) };
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grace_and_arithmetic() {
        assert!((grace(Seconds(10.0)).0 - 1.5).abs() < 1e-9);
        // Counted from `start`, not from whenever the next statement runs (a loaded
        // machine can pause the thread between two statements for any time).
        let start = Instant::now();
        let d = Deadline::for_budget(start, Seconds(0.2));
        // 0.2 s + 1.01 s of grace - 0.505 s kept for the report
        let at = d.at.unwrap().duration_since(start);
        assert!(at.abs_diff(Duration::from_millis(705)) < Duration::from_micros(1), "{at:?}");
        assert!(d.left() <= Duration::from_millis(705));
        let sooner = Deadline {
            at: start.checked_add(Duration::from_millis(50)),
        };
        assert_eq!(d.min(sooner), sooner);
        assert_eq!(sooner.min(d), sooner);
        assert_eq!(Deadline::NONE.min(sooner), sooner);
        let far = Deadline::after(Duration::from_secs(3600));
        assert!(!far.expired());
        assert!(far.cap(Duration::from_secs(30)) == Duration::from_secs(30));
        let short = Deadline::after(Duration::from_millis(50));
        assert!(short.cap(Duration::from_secs(30)) <= Duration::from_millis(50));
        std::thread::sleep(Duration::from_millis(60));
        assert!(short.expired());
        assert_eq!(short.slice(), None);
        assert!(Deadline::NONE.slice().is_some_and(|s| s == SLICE));
    }

    #[test]
    fn what_is_kept_for_after_measuring_moves_the_measuring_end_earlier() {
        let end = Instant::now() + Duration::from_secs(100);
        let b = Seconds(60.0); // grace 4 s
        let at = |kept| measuring_end(end, b, kept).unwrap();
        assert_eq!(at(2.0), end + Duration::from_secs(2));
        assert_eq!(at(4.0), end);
        // More than the grace: measuring ends before the budget does.
        assert_eq!(at(9.5), end - Duration::from_millis(5500));
        assert!(at(9.5) < at(2.0));
    }
}
