//! Ctrl-C and SIGTERM: the first one asks the run to stop after the current sample,
//! so what was measured is kept, stored and reported; daemons and temporary files
//! are then cleaned up by their owners' `Drop`. A second one exits at once.

use std::sync::atomic::{AtomicBool, Ordering};

static REQUESTED: AtomicBool = AtomicBool::new(false);

/// Installs the handler. Safe to call more than once.
pub fn install() {
    let _ = ctrlc::set_handler(|| {
        if REQUESTED.swap(true, Ordering::SeqCst) {
            eprintln!("\ninterrupted twice: exiting now");
            std::process::exit(130);
        }
        eprintln!("\ninterrupted: finishing the current sample and keeping the results (Ctrl-C again to quit now)");
    });
}

/// True once the user asked to stop.
pub fn requested() -> bool {
    REQUESTED.load(Ordering::SeqCst)
}
