//! The real `ssh` client, run as a child process: one command line per algorithm
//! choice, bytes pumped from memory into its stdin, its CPU time read from the
//! kernel, and its failures sorted into errors a user can act on.
//!
//! Every `ssh` child keeps the run's deadline (`crate::deadline`): a handshake
//! is waited for on a pidfd in slices, a transfer has a watchdog, and either
//! kills the child's process group when the deadline passes or Ctrl-C comes.
//! Before the first `ssh` to a remote host, [`Client::reach`] reads the host's
//! banner itself, so a host that accepts and stays silent, drips bytes, or
//! speaks something else is named as such (not "unreachable").
//!
//! Its parts: the command line and a handshake's run here; the failures sorted
//! in `error.rs`; the banner read before the first `ssh` in `banner.rs`; a bulk
//! transfer fed from memory in `transfer.rs`; how a child is stopped at the
//! deadline or on Ctrl-C in `stop.rs`; a login into a private sshd that reports
//! what was negotiated in `negotiate.rs`.

mod banner;
mod error;
mod negotiate;
mod stop;
mod transfer;

pub use error::{classify, SshError};
pub use negotiate::{negotiate_with_private, Chosen};
pub use transfer::Transfer;

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use stop::wait_bounded;

/// Where the client connects.
#[derive(Debug, Clone)]
pub enum Destination {
    /// The private daemon: its own key and known_hosts, no user configuration.
    Private {
        port: u16,
        user: String,
        key: PathBuf,
        known_hosts: PathBuf,
    },
    /// A remote host, through the user's own ssh configuration and keys.
    Remote {
        destination: String,
        port: Option<u16>,
        identity: Option<PathBuf>,
        /// Extra `-o` options the user asked for.
        options: Vec<String>,
    },
}

/// The algorithms forced for one connection; `None` leaves the client's default.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Algorithms {
    pub cipher: Option<String>,
    pub mac: Option<String>,
    pub kex: Option<String>,
    pub hostkey: Option<String>,
}

/// Runs the `ssh` binary against one target.
#[derive(Debug, Clone)]
pub struct Client {
    pub ssh: PathBuf,
    pub target: Destination,
}

impl Client {
    /// The full command line for `remote` under `algs`.
    pub fn command(&self, algs: &Algorithms, remote: &str) -> Command {
        let mut c = Command::new(&self.ssh);
        self.options(&mut c);
        if let Some(k) = &algs.kex {
            c.arg("-o").arg(format!("KexAlgorithms={k}"));
        }
        if let Some(h) = &algs.hostkey {
            c.arg("-o").arg(format!("HostKeyAlgorithms={h}"));
        }
        if let Some(ci) = &algs.cipher {
            c.arg("-c").arg(ci);
        }
        if let Some(m) = &algs.mac {
            c.arg("-m").arg(m);
        }
        self.destination_args(&mut c);
        c.arg(remote);
        // Own process group: a terminal's Ctrl-C goes to cipherbench, which ends
        // the current sample cleanly, instead of killing ssh mid-transfer.
        c.process_group(0);
        c
    }

    /// The `-o` options: batch mode, no multiplexing or forwarding, a connect
    /// timeout within the run's deadline, and for the private daemon its key only.
    fn options(&self, c: &mut Command) {
        let mut o = |opt: &str| {
            c.arg("-o").arg(opt);
        };
        match &self.target {
            Destination::Private { .. } => {
                o("BatchMode=yes");
                o("IdentitiesOnly=yes");
                o("IdentityAgent=none");
                o("PasswordAuthentication=no");
                o("KbdInteractiveAuthentication=no");
                o("GlobalKnownHostsFile=/dev/null");
                // Our own daemon's host keys are written into known_hosts: full checking.
                o("StrictHostKeyChecking=yes");
                o("CheckHostIP=no");
                o("UpdateHostKeys=no");
            }
            Destination::Remote { .. } => {
                // The user's config and keys; host-key checking stays as configured.
                o("BatchMode=yes");
            }
        }
        // A multiplexed session would reuse a master connection's algorithms.
        o("ControlMaster=no");
        o("ControlPath=none");
        o("Compression=no");
        // Covers the TCP connect and the banner exchange; never past the run's deadline.
        let left = crate::deadline::run().left().as_secs_f64().ceil().clamp(1.0, 10.0);
        o(&format!("ConnectTimeout={left}"));
        o("RequestTTY=no");
        o("ForwardAgent=no");
        o("ForwardX11=no");
        o("ClearAllForwardings=yes");
    }

    /// The destination: the private daemon on 127.0.0.1, or the user's host.
    fn destination_args(&self, c: &mut Command) {
        match &self.target {
            Destination::Private {
                port,
                user,
                key,
                known_hosts,
            } => {
                if let Some(p) = super::placement::placement() {
                    super::placement::pin(c, &p.client);
                }
                c.arg("-F").arg("/dev/null");
                c.arg("-o").arg(format!("UserKnownHostsFile={}", known_hosts.display()));
                c.arg("-i").arg(key);
                c.arg("-p").arg(port.to_string());
                c.arg("-l").arg(user);
                c.arg("127.0.0.1");
            }
            Destination::Remote {
                destination,
                port,
                identity,
                options,
            } => {
                for opt in options {
                    c.arg("-o").arg(opt);
                }
                if let Some(p) = port {
                    c.arg("-p").arg(p.to_string());
                }
                if let Some(i) = identity {
                    c.arg("-i").arg(i).arg("-o").arg("IdentitiesOnly=yes");
                }
                c.arg("--").arg(destination);
            }
        }
    }

    /// Starts `cmd` (this client's command line) with stderr piped; a client
    /// that cannot start is a failure saying why.
    fn spawn(&self, cmd: &mut Command) -> Result<std::process::Child, SshError> {
        cmd.stderr(Stdio::piped()).spawn().map_err(|e| SshError::Failed {
            status: "not started".into(),
            detail: format!("cannot run {}: {e}", self.ssh.display()),
        })
    }

    /// Runs `remote` with no input (a handshake: connect, authenticate, run).
    /// Stopped (its whole process group) at the run's deadline or on Ctrl-C.
    pub fn run(&self, algs: &Algorithms, remote: &str) -> Result<(), SshError> {
        let mut child = self.spawn(self.command(algs, remote).stdin(Stdio::null()).stdout(Stdio::null()))?;
        // ssh prints little on stderr; a thread keeps the pipe from filling up.
        let stderr = child.stderr.take().map(|mut r| {
            std::thread::spawn(move || {
                let mut v = Vec::new();
                let _ = r.read_to_end(&mut v);
                v
            })
        });
        let status = wait_bounded(&mut child);
        let err = stderr.and_then(|h| h.join().ok()).unwrap_or_default();
        match classify(status?, &String::from_utf8_lossy(&err), remote) {
            None => Ok(()),
            Some(e) => Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remote_command_line_keeps_the_users_checking() {
        let cl = Client {
            ssh: "ssh".into(),
            target: Destination::Remote {
                destination: "me@example.org".into(),
                port: Some(2222),
                identity: None,
                options: vec!["ProxyJump=gw".into()],
            },
        };
        let algs = Algorithms {
            cipher: Some("aes128-ctr".into()),
            mac: Some("hmac-sha1".into()),
            kex: Some("curve25519-sha256".into()),
            hostkey: None,
        };
        let cmd = cl.command(&algs, "cat > /dev/null");
        let args: Vec<String> = cmd.get_args().map(|a| a.to_string_lossy().into_owned()).collect();
        let line = args.join(" ");
        assert!(line.contains("BatchMode=yes") && line.contains("-c aes128-ctr") && line.contains("-m hmac-sha1"));
        assert!(line.contains("KexAlgorithms=curve25519-sha256") && line.contains("-p 2222") && line.contains("-o ProxyJump=gw"));
        assert!(!line.contains("StrictHostKeyChecking"), "{line}");
        assert!(!line.contains("-F"), "remote mode must use the user's config: {line}");
        assert!(line.ends_with("-- me@example.org cat > /dev/null"), "{line}");
    }
}
