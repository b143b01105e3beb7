//! Ctrl-C and SIGTERM: the first one asks the run to stop after the current sample,
//! so what was measured is kept, stored and reported; daemons and temporary files
//! are then cleaned up by their owners' `Drop`. A second one exits at once.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

static REQUESTED: AtomicBool = AtomicBool::new(false);
/// Cleanups that must run even when a second Ctrl-C exits at once (e.g. stopping a
/// private daemon whose `Drop` will not get the chance).
static AT_FORCED_EXIT: Mutex<Vec<fn()>> = Mutex::new(Vec::new());

/// Registers `f` to run before a forced exit. Registering the same function twice
/// runs it once.
pub fn at_forced_exit(f: fn()) {
    let mut v = AT_FORCED_EXIT.lock().unwrap_or_else(|e| e.into_inner());
    if !v.iter().any(|g| *g as usize == f as usize) {
        v.push(f);
    }
}

/// Installs the handler. Safe to call more than once.
pub fn install() {
    let _ = ctrlc::set_handler(|| {
        if REQUESTED.swap(true, Ordering::SeqCst) {
            eprintln!("\ninterrupted twice: exiting now");
            let hooks = AT_FORCED_EXIT.lock().map(|v| v.clone()).unwrap_or_default();
            for f in hooks {
                f();
            }
            std::process::exit(130);
        }
        eprintln!("\ninterrupted: finishing the current sample and keeping the results (Ctrl-C again to quit now)");
    });
}

/// True once the user asked to stop.
pub fn requested() -> bool {
    REQUESTED.load(Ordering::SeqCst)
}
