//! OpenSSH: the system `ssh` client and a private `sshd` started from the system
//! binary. Knows OpenSSH, not the benchmark.

pub mod client;
pub mod cpu;
pub mod daemon;
pub mod placement;

pub use client::{Client, Target};
pub use daemon::PrivateSshd;
