//! Ctrl-C and SIGTERM: the first one asks the run to stop now. Every blocking step
//! waits in slices of at most 200 ms (`deadline::SLICE`) and looks at this flag
//! between them (sockets, `ssh` children, file reads, samples), so the run stops
//! within about a second, keeps and reports what it measured, closes its history
//! row as `interrupted`, removes its temporary files (their owners' `Drop`) and
//! exits 130.
//!
//! Two backstops: a second signal exits at once, and so does a run still going
//! [`WATCHDOG`] after the first one (a step that cannot be interrupted). Both run
//! the registered cleanups first (stopping private daemons, removing private
//! directories), whose `Drop` will not get the chance.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Duration;

static REQUESTED: AtomicBool = AtomicBool::new(false);
/// Set when the run's measuring deadline passed (see [`cut_at`]).
static CUT: AtomicBool = AtomicBool::new(false);
/// Cleanups that must run even when the process exits at once (e.g. stopping a
/// private daemon whose `Drop` will not get the chance).
static AT_FORCED_EXIT: Mutex<Vec<fn()>> = Mutex::new(Vec::new());
/// Private directories to remove on a forced exit.
static DIRS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// How long the run may take to stop after the first signal before it is ended.
pub const WATCHDOG: Duration = Duration::from_secs(4);

/// Registers `f` to run before a forced exit. Registering the same function twice
/// runs it once.
pub fn at_forced_exit(f: fn()) {
    let mut v = AT_FORCED_EXIT.lock().unwrap_or_else(|e| e.into_inner());
    if !v.iter().any(|g| *g as usize == f as usize) {
        v.push(f);
    }
}

/// Registers a private directory to remove on a forced exit (until [`forget_dir`]).
pub fn remove_on_forced_exit(dir: PathBuf) {
    DIRS.lock().unwrap_or_else(|e| e.into_inner()).push(dir);
}

pub fn forget_dir(dir: &std::path::Path) {
    DIRS.lock().unwrap_or_else(|e| e.into_inner()).retain(|d| d != dir);
}

fn forced_exit(why: &str) -> ! {
    eprintln!("\n{why}: exiting now");
    let hooks = AT_FORCED_EXIT.lock().map(|v| v.clone()).unwrap_or_default();
    for f in hooks {
        f();
    }
    let dirs = DIRS.lock().map(|v| v.clone()).unwrap_or_default();
    for d in dirs {
        let _ = std::fs::remove_dir_all(d);
    }
    std::process::exit(130);
}

/// Installs the handler. Safe to call more than once.
pub fn install() {
    let _ = ctrlc::set_handler(|| {
        if REQUESTED.swap(true, Ordering::SeqCst) {
            forced_exit("interrupted twice");
        }
        eprintln!("\ninterrupted: stopping and keeping the results so far (Ctrl-C again to quit at once)");
        std::thread::spawn(|| {
            std::thread::sleep(WATCHDOG);
            forced_exit(&format!("still not stopped {} s after the interrupt", WATCHDOG.as_secs()));
        });
    });
}

/// True once the run must stop measuring: the user asked (Ctrl-C, SIGTERM) or its
/// deadline passed ([`cut_at`]). Every measuring loop and blocking wait looks here.
pub fn requested() -> bool {
    REQUESTED.load(Ordering::SeqCst) || CUT.load(Ordering::SeqCst)
}

/// True once the user asked to stop (the run ends `interrupted`, exit 130).
pub fn by_user() -> bool {
    REQUESTED.load(Ordering::SeqCst)
}

/// True once the run's deadline cut it (the run ends `partial`).
pub fn cut() -> bool {
    CUT.load(Ordering::SeqCst) && !by_user()
}

/// At `at`, the run stops measuring as if interrupted, but keeps going to report
/// what it has: a thread sleeps until then (a loaded machine cannot starve a
/// loop's own clock check past it). Setting a later or earlier time replaces the
/// earlier one.
pub fn cut_at(at: std::time::Instant) {
    static AT: Mutex<Option<std::time::Instant>> = Mutex::new(None);
    *AT.lock().unwrap_or_else(|e| e.into_inner()) = Some(at);
    static STARTED: std::sync::Once = std::sync::Once::new();
    STARTED.call_once(|| {
        std::thread::spawn(|| loop {
            let when = *AT.lock().unwrap_or_else(|e| e.into_inner());
            match when {
                Some(t) if std::time::Instant::now() >= t => {
                    CUT.store(true, Ordering::SeqCst);
                    return;
                }
                Some(t) => std::thread::sleep(
                    t.saturating_duration_since(std::time::Instant::now())
                        .min(Duration::from_millis(100)),
                ),
                None => return,
            }
        });
    });
}
