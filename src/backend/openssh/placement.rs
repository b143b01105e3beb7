//! Where the loopback `ssh` client and the private `sshd` run.
//!
//! On one machine the client (`ssh`, encrypting) and the server (`sshd`,
//! decrypting, and `cat`) compete for the same CPUs. Left to the scheduler, a
//! fresh session's two busy processes often start on the same CPU (a pipe or
//! socket wake-up pulls the woken process next to its waker) and stay there for
//! part of the transfer: one session then moves half as many bytes per second as
//! the next, by luck. Two real machines never share a CPU, so on a machine with
//! two or more CPUs the private daemon (and everything it forks) runs on one half
//! of the CPUs this process may use and the client on the other half. Remote
//! hosts are left alone.

use std::os::unix::process::CommandExt;
use std::process::Command;
use std::sync::OnceLock;

/// The two halves of the CPUs: the client's and the server's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placement {
    pub client: Vec<usize>,
    pub server: Vec<usize>,
}

impl Placement {
    /// Splits `cpus` into a client half (the first) and a server half; `None`
    /// with fewer than two CPUs, where there is nothing to separate.
    pub fn split(cpus: &[usize]) -> Option<Placement> {
        if cpus.len() < 2 {
            return None;
        }
        let (c, s) = cpus.split_at(cpus.len() / 2);
        Some(Placement {
            client: c.to_vec(),
            server: s.to_vec(),
        })
    }

    /// For the run's settings, e.g. "ssh client on CPU 0, sshd on CPU 1".
    pub fn describe(&self) -> String {
        let list = |v: &[usize]| {
            let s: Vec<String> = v.iter().map(|c| c.to_string()).collect();
            format!("CPU{} {}", if v.len() > 1 { "s" } else { "" }, s.join(","))
        };
        format!("ssh client on {}, sshd on {}", list(&self.client), list(&self.server))
    }
}

/// The CPUs this process may run on.
fn allowed_cpus() -> Vec<usize> {
    // SAFETY: a zeroed cpu_set_t is a valid empty set; the call fills it.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    let ok = unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) } == 0;
    if !ok {
        return Vec::new();
    }
    (0..libc::CPU_SETSIZE as usize)
        .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
        .collect()
}

/// This machine's placement, worked out once.
pub fn placement() -> Option<&'static Placement> {
    static P: OnceLock<Option<Placement>> = OnceLock::new();
    P.get_or_init(|| Placement::split(&allowed_cpus())).as_ref()
}

/// Makes `cmd`'s process (and whatever it forks) run only on `cpus`.
pub fn pin(cmd: &mut Command, cpus: &[usize]) {
    // SAFETY: as above; the set is built here, before the fork.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &c in cpus {
        unsafe { libc::CPU_SET(c, &mut set) };
    }
    // SAFETY: between fork and exec only sched_setaffinity runs, a plain
    // system call on memory the child already has. A failure leaves the
    // process where the scheduler puts it, which is still a correct run.
    unsafe {
        cmd.pre_exec(move || {
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
            Ok(())
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cpus_are_split_in_two_halves() {
        assert_eq!(Placement::split(&[0]), None);
        let p = Placement::split(&[0, 1]).unwrap();
        assert_eq!((p.client, p.server), (vec![0], vec![1]));
        let p = Placement::split(&[0, 2, 5, 7, 9]).unwrap();
        assert_eq!((p.client.clone(), p.server.clone()), (vec![0, 2], vec![5, 7, 9]));
        assert_eq!(p.describe(), "ssh client on CPUs 0,2, sshd on CPUs 5,7,9");
    }

    #[test]
    fn a_pinned_child_runs_only_on_its_cpus() {
        let Some(p) = placement() else { return };
        let mut cmd = Command::new("sh");
        cmd.arg("-c").arg("grep Cpus_allowed_list /proc/self/status");
        pin(&mut cmd, &p.server);
        let out = String::from_utf8(cmd.output().unwrap().stdout).unwrap();
        // The kernel prints a list of ranges, e.g. "1" or "2-3,6".
        let list = out.split(':').nth(1).unwrap().trim();
        let mut got = Vec::new();
        for part in list.split(',') {
            let (a, b) = part.split_once('-').unwrap_or((part, part));
            got.extend(a.parse::<usize>().unwrap()..=b.parse::<usize>().unwrap());
        }
        assert_eq!(got, p.server, "{out}");
    }
}
