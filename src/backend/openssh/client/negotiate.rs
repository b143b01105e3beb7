//! One login into a private sshd, with its algorithms from an emitted `Host`
//! block or the client's defaults, and what its first key exchange chose, as
//! `ssh -v` reports it.

use super::{classify, SshError};
use anyhow::{bail, Result};
use std::process::Command;
use std::time::Duration;

/// What the first key exchange of one connection chose, as `ssh -v` reports it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Chosen {
    pub kex: String,
    pub hostkey: String,
    pub cipher: String,
    /// `None`: implicit in an AEAD cipher (`MAC: <implicit>`).
    pub mac: Option<String>,
}

/// The first key exchange's choice in `ssh -v` output (`kex: algorithm:`,
/// `kex: host key algorithm:`, `kex: client->server cipher: C MAC: M ...`); a
/// rekey's later lines are not read. `None` when one of them is missing.
pub fn chosen(debug: &str) -> Option<Chosen> {
    let after = |key: &str| debug.lines().find_map(|l| l.split_once(key).map(|(_, v)| v.trim()));
    let kex = after("kex: algorithm: ")?;
    let hostkey = after("kex: host key algorithm: ")?;
    let f: Vec<&str> = after("kex: client->server cipher: ")?.split_whitespace().collect();
    let cipher = f.first()?;
    let mac = f.iter().position(|x| *x == "MAC:").and_then(|i| f.get(i + 1))?;
    Some(Chosen {
        kex: kex.to_string(),
        hostkey: hostkey.to_string(),
        cipher: cipher.to_string(),
        mac: (*mac != "<implicit>").then(|| mac.to_string()),
    })
}

/// One login of the real `ssh` into a private sshd on 127.0.0.1:`port`, with no
/// algorithm option on its command line: its algorithms come from `config` (an
/// emitted `Host` block) or, with `/dev/null`, are the client's own defaults (a
/// server's usual peer). Its key and known_hosts are the daemon's; `ssh -v`
/// says what was negotiated. Stopped after `within` (and at the run's deadline).
pub fn negotiate_with_private(
    ssh: &std::path::Path,
    config: &std::path::Path,
    files: &crate::backend::openssh::daemon::Files,
    port: u16,
    user: &str,
    within: Duration,
) -> Result<Chosen> {
    use crate::backend::process::{run_bounded, Stop};
    let mut c = Command::new(ssh);
    c.arg("-v").arg("-F").arg(config);
    for o in [
        "BatchMode=yes",
        "IdentitiesOnly=yes",
        "IdentityAgent=none",
        "PasswordAuthentication=no",
        "KbdInteractiveAuthentication=no",
        "GlobalKnownHostsFile=/dev/null",
        "StrictHostKeyChecking=yes",
        "CheckHostIP=no",
        "UpdateHostKeys=no",
        "ControlMaster=no",
        "ControlPath=none",
        "RequestTTY=no",
    ] {
        c.arg("-o").arg(o);
    }
    let secs = within.as_secs_f64().ceil().clamp(1.0, 10.0);
    c.arg("-o").arg(format!("ConnectTimeout={secs}"));
    c.arg("-o").arg(format!("UserKnownHostsFile={}", files.known_hosts.display()));
    c.arg("-i").arg(&files.client_key);
    c.arg("-p").arg(port.to_string()).arg("-l").arg(user).arg("127.0.0.1").arg("true");
    let (status, _, err) = run_bounded(&mut c, crate::deadline::op(within), Stop::Requested)
        .map_err(|e| anyhow::anyhow!("cannot run {}: {e}", ssh.display()))?;
    let err = String::from_utf8_lossy(&err);
    let Some(status) = status else {
        bail!("ssh did not finish within {:.0} s and was stopped", within.as_secs_f64());
    };
    if let Some(e) = classify(status, &err, "true") {
        // What a refusal said is ssh's own words; the debug lines are left out.
        let said: String = err
            .lines()
            .filter(|l| !l.starts_with("debug") && !l.starts_with("OpenSSH_"))
            .collect::<Vec<_>>()
            .join("; ");
        return Err(match e {
            SshError::Refused(_) => anyhow::anyhow!("refused: {said}"),
            _ => anyhow::anyhow!("{e}"),
        });
    }
    chosen(&err).ok_or_else(|| anyhow::anyhow!("`ssh -v` did not say what it negotiated"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_first_key_exchanges_choice() {
        let v = "OpenSSH_9.2p1\ndebug1: kex: algorithm: sntrup761x25519-sha512@openssh.com\n\
debug1: kex: host key algorithm: ssh-ed25519\n\
debug1: kex: server->client cipher: chacha20-poly1305@openssh.com MAC: <implicit> compression: none\n\
debug1: kex: client->server cipher: chacha20-poly1305@openssh.com MAC: <implicit> compression: none\n\
debug1: kex: algorithm: curve25519-sha256\n";
        assert_eq!(
            chosen(v),
            Some(Chosen {
                kex: "sntrup761x25519-sha512@openssh.com".into(),
                hostkey: "ssh-ed25519".into(),
                cipher: "chacha20-poly1305@openssh.com".into(),
                mac: None,
            })
        );
        let ctr = "debug1: kex: algorithm: curve25519-sha256\ndebug1: kex: host key algorithm: rsa-sha2-512\n\
debug1: kex: client->server cipher: aes128-ctr MAC: hmac-sha2-256-etm@openssh.com compression: none\n";
        assert_eq!(chosen(ctr).unwrap().mac.as_deref(), Some("hmac-sha2-256-etm@openssh.com"));
        assert_eq!(chosen("debug1: kex: algorithm: curve25519-sha256\n"), None);
    }
}
