//! The main job's plan: which subjects its quick pass measures and how the budget
//! is shared between the kinds. Pure names and shares, made from what discovery
//! found; the measurement kinds turn it into their own plans (`measure/`), so
//! nothing here reaches into them.

use crate::discover::openssh::OpenSsh;
use crate::units::{Bytes, Seconds};

/// Shares of the budget for the quick pass; what is left races the ties.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Shares {
    pub primitives: f64,
    pub tls: f64,
    pub ssh: f64,
}

impl Shares {
    /// The quick pass's total share.
    pub fn first_pass(&self) -> f64 {
        self.primitives + self.tls + self.ssh
    }
}

/// The SSH subjects of the main job, decomposed as the write-up's point says (Enc
/// and Mac per byte, Kx per handshake): the ciphers that decide the answer with
/// one MAC, the MACs with one cipher, the kex by handshakes on one host key.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SshPicks {
    pub ciphers: Vec<String>,
    pub macs: Vec<String>,
    pub kex: Vec<String>,
    pub hostkeys: Vec<String>,
    /// The cipher the MACs are measured with (when installed).
    pub mac_cipher: Vec<String>,
    /// What the policy allows (app fills it in): measured first.
    pub admitted: Option<Admitted>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct MainPlan {
    pub budget: Seconds,
    pub shares: Shares,
    /// Primitive block sizes: a TLS record's worth and a small message.
    pub sizes: [Bytes; 2],
    /// `None` when SSH is skipped (no client or daemon).
    pub ssh: Option<SshPicks>,
}

impl MainPlan {
    /// Seconds of `budget` for a share.
    pub fn share(&self, f: f64) -> Seconds {
        Seconds(self.budget.0 * f)
    }
}

/// What the policy allows, as plain names in the policy's order: app makes it
/// from judge (measure may not import judge) and hands it down, so that every
/// command measures first what the policy allows. A name not listed is refused.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Admitted {
    pub ssh_ciphers: Vec<String>,
    pub ssh_macs: Vec<String>,
    pub ssh_kex: Vec<String>,
    /// TLS suites (TLS 1.3 and 1.2; OpenSSL or IANA names), groups and
    /// certificate types.
    pub tls_suites: Vec<String>,
    pub groups: Vec<String>,
    pub certs: Vec<String>,
    /// Most refused options measured per list, after every allowed one: what the
    /// "fastest refused, for comparison" line needs. `None`: every refused option
    /// the user named is measured (still after the allowed ones).
    pub refused_cap: Option<usize>,
}

impl Admitted {
    /// Where `name` stands in `list` (case-insensitive), `None` when refused.
    pub fn rank(list: &[String], name: &str) -> Option<usize> {
        list.iter().position(|a| a.eq_ignore_ascii_case(name))
    }
}

const CIPHERS: [&str; 6] = [
    "aes128-gcm@openssh.com",
    "aes256-gcm@openssh.com",
    "chacha20-poly1305@openssh.com",
    "aes128-ctr",
    "aes256-ctr",
    "aes128-cbc",
];
const MACS: [&str; 4] = [
    "umac-128-etm@openssh.com",
    "hmac-sha2-256-etm@openssh.com",
    "hmac-sha2-512-etm@openssh.com",
    "hmac-sha1",
];
const KEX: [&str; 5] = [
    // OpenSSH 10's default (Debian 13); missing before 9.9, and then not picked.
    "mlkem768x25519-sha256",
    "curve25519-sha256",
    "sntrup761x25519-sha512@openssh.com",
    "ecdh-sha2-nistp256",
    "diffie-hellman-group14-sha256",
];

/// The main job's plan for `budget`, with SSH when `openssh` is usable.
pub fn main_job(budget: Seconds, openssh: Option<&OpenSsh>) -> MainPlan {
    let pick = |wanted: &[&str], have: &[String]| -> Vec<String> {
        wanted
            .iter()
            .filter(|w| have.iter().any(|h| h == *w))
            .map(|w| w.to_string())
            .collect()
    };
    let ssh = openssh.map(|o| {
        let ciphers = pick(&CIPHERS, &o.ciphers);
        let mac_cipher = ciphers.iter().filter(|c| c.as_str() == "aes128-ctr").cloned().collect();
        SshPicks {
            macs: pick(&MACS, &o.macs),
            kex: pick(&KEX, &o.kex),
            hostkeys: pick(&["ssh-ed25519"], &o.hostkey_algorithms),
            ciphers,
            mac_cipher,
            admitted: None,
        }
    });
    // SSH pays a handshake per session (a TLS slice's connection is cheaper), and
    // its leaders need several sessions each to separate; TLS's refused suites
    // are no longer swept, so its share goes further.
    let shares = if ssh.is_some() {
        Shares {
            primitives: 0.15,
            tls: 0.3,
            ssh: 0.35,
        }
    } else {
        Shares {
            primitives: 0.2,
            tls: 0.55,
            ssh: 0.0,
        }
    };
    MainPlan {
        budget,
        shares,
        sizes: [Bytes(1024), Bytes(16384)],
        ssh,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn without_ssh_the_share_goes_to_tls_and_racing_keeps_a_fifth() {
        let p = main_job(Seconds(90.0), None);
        assert!(p.ssh.is_none());
        assert_eq!(p.shares.ssh, 0.0);
        assert!((p.shares.first_pass() - 0.75).abs() < 1e-9);
        assert_eq!(p.share(p.shares.tls), Seconds(90.0 * 0.55));
    }
}
