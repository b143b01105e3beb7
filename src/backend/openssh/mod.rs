//! OpenSSH: the system `ssh` client and a private `sshd` started from the system
//! binary. Knows OpenSSH, not the benchmark.

pub mod client;
pub mod cpu;
pub mod daemon;
pub mod placement;

pub use client::{Client, Destination};
pub use daemon::PrivateSshd;

use std::path::{Path, PathBuf};

impl PrivateSshd {
    /// The client for this daemon: the system `ssh` at `ssh`, logging in as the
    /// daemon's user on its port with the daemon's own client key and
    /// known_hosts (no user configuration). The one way every command reaches
    /// its private sshd.
    pub fn client(&self, ssh: &Path) -> Client {
        let f = self.files();
        Client {
            ssh: ssh.to_path_buf(),
            target: Destination::Private {
                port: self.port(),
                user: self.user().into(),
                key: f.client_key,
                known_hosts: f.known_hosts,
            },
        }
    }
}

/// The value of the first `keyword value` line of a `sshd -T` / `ssh -G` dump
/// whose keyword is `k` in any case: OpenSSH up to 10.0 prints keywords in
/// lower case (`ciphers`), OpenSSH 10.6 (Debian forky) capitalised (`Ciphers`,
/// `Macs`, `KexAlgorithms`).
pub fn dump_value<'a>(text: &'a str, k: &str) -> Option<&'a str> {
    text.lines().find_map(|l| {
        let (word, rest) = l.split_once([' ', '\t'])?;
        word.eq_ignore_ascii_case(k).then_some(rest.trim())
    })
}

/// The local OpenSSH client's algorithm lists, in its own order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenSsh {
    /// The `ssh` binary that was queried.
    pub ssh: PathBuf,
    /// `ssh -V`, e.g. `OpenSSH_9.2p1 Debian-2+deb12u3, OpenSSL 3.0.19 ...`.
    pub version: String,
    pub ciphers: Vec<String>,
    /// `ssh -Q cipher-auth`: authenticated ciphers, whose MAC is implicit.
    pub aead: Vec<String>,
    pub macs: Vec<String>,
    pub kex: Vec<String>,
    /// `ssh -Q key`: public key types.
    pub keys: Vec<String>,
    /// `ssh -Q HostKeyAlgorithms`: signature algorithms for host keys.
    pub hostkey_algorithms: Vec<String>,
    /// `ssh -Q PubkeyAcceptedAlgorithms` (empty on versions without that query).
    pub pubkey_algorithms: Vec<String>,
}

/// The host-key algorithms cipherbench can serve from its private daemon (it
/// generates one ed25519, one ecdsa P-256 and one RSA host key), in sweep order.
pub const PRIVATE_HOSTKEYS: &[&str] = &["ssh-ed25519", "ecdsa-sha2-nistp256", "rsa-sha2-512", "rsa-sha2-256", "ssh-rsa"];
impl OpenSsh {
    pub fn is_aead(&self, cipher: &str) -> bool {
        self.aead.iter().any(|a| a == cipher)
    }

    /// Host-key algorithms this client supports and the private daemon can serve.
    pub fn private_hostkeys(&self) -> Vec<String> {
        PRIVATE_HOSTKEYS
            .iter()
            .filter(|h| self.hostkey_algorithms.iter().any(|x| x == *h))
            .map(|h| h.to_string())
            .collect()
    }

    /// The fixed kex used while sweeping bulk speed (cost paid once per connection).
    pub fn default_kex(&self) -> String {
        ["curve25519-sha256", "curve25519-sha256@libssh.org", "ecdh-sha2-nistp256"]
            .iter()
            .find(|k| self.kex.iter().any(|x| x == *k))
            .map(|k| k.to_string())
            .unwrap_or_else(|| self.kex.first().cloned().unwrap_or_default())
    }
}
