//! How an `ssh` child is stopped: at the run's deadline or on Ctrl-C, its whole
//! process group, and the reason named.

use super::SshError;
use std::process::{Child, ExitStatus};
use std::time::Duration;

/// SIGKILL to the process group `pid` leads (every `ssh` runs in its own group).
pub(super) fn kill_group(pid: u32) {
    // SAFETY: kill(2) on a group we created; no memory involved.
    unsafe {
        libc::kill(-(pid as i32), libc::SIGKILL);
    }
}

/// What stopped a child: the run's deadline, or Ctrl-C.
fn stop_reason() -> Option<SshError> {
    if crate::interrupt::by_user() {
        Some(SshError::Interrupted)
    } else if crate::deadline::run_expired() {
        Some(SshError::Deadline(format!("ssh was stopped at {}", crate::deadline::describe())))
    } else {
        None
    }
}

/// Waits for `child` (see [`crate::deadline::wait_child`]), naming why it was
/// stopped when it was.
pub(super) fn wait_bounded(child: &mut Child) -> Result<ExitStatus, SshError> {
    match crate::deadline::wait_child(child, true) {
        Ok(Some(st)) => Ok(st),
        Ok(None) => Err(stop_reason().unwrap_or(SshError::Interrupted)),
        Err(e) => Err(SshError::Failed {
            status: "unknown".into(),
            detail: e.to_string(),
        }),
    }
}

/// Kills a transfer's ssh at the run's deadline or on Ctrl-C, from a thread
/// (the main thread may be blocked writing into ssh's stdin).
pub(super) struct Watchdog {
    done: std::sync::Arc<std::sync::atomic::AtomicBool>,
    fired: std::sync::Arc<std::sync::Mutex<Option<SshError>>>,
}

impl Watchdog {
    pub(super) fn start(pid: u32) -> Watchdog {
        use std::sync::atomic::Ordering;
        let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let fired = std::sync::Arc::new(std::sync::Mutex::new(None));
        let (d, f) = (done.clone(), fired.clone());
        std::thread::spawn(move || {
            while !d.load(Ordering::SeqCst) {
                if let Some(why) = stop_reason() {
                    *f.lock().unwrap_or_else(|e| e.into_inner()) = Some(why);
                    if !d.load(Ordering::SeqCst) {
                        kill_group(pid);
                    }
                    return;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        });
        Watchdog { done, fired }
    }

    pub(super) fn disarm(&self) {
        self.done.store(true, std::sync::atomic::Ordering::SeqCst);
    }

    pub(super) fn fired(&self) -> Option<SshError> {
        self.fired.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        self.disarm();
    }
}
