//! The OpenSSH server: read with `sshd -T`, checked with `sshd -t` on a
//! throw-away `sshd_config` with a throw-away host key, and run with its lines
//! as a private sshd on 127.0.0.1 that a default client (`ssh -F /dev/null`,
//! its usual peer) logs into.
//!
//! In SSH the client's order decides (RFC 4253 §7.1: each list's first
//! algorithm of the client's that the server also has). What a default client
//! negotiates with the lines must be within them and be what that rule
//! predicts from the two ends' lists; where it is not the answer's first
//! choice (a default client puts chacha20-poly1305 first, the answer on a
//! machine with AES instructions AES-GCM), that is said first and the lines are
//! marked "negotiates otherwise": no sshd line can make a client pick the
//! answer; the client's Host block (`--for ssh`) does.

pub mod emit;
pub mod read;

use super::negotiated::{self, Negotiation, Seen, Want, Who};
use super::validate::{parse_with, Checked, Refused, Scratch};
use super::{Protocol, Target};
use crate::backend::openssh::client::{self, Chosen};
use crate::backend::openssh::daemon::{Offer, PrivateSshd};
use crate::discover::installed::{self as inst, Config, Installed, SshConfig};
use crate::recommend::choice::Emitter;
use anyhow::Result;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub struct Sshd;

impl Target for Sshd {
    fn emitter(&self) -> &'static dyn Emitter {
        &emit::Sshd
    }
    fn protocol(&self) -> Protocol {
        Protocol::Ssh
    }
    fn programs(&self) -> &'static [&'static str] {
        &["sshd"]
    }
    fn config_path(&self) -> Option<PathBuf> {
        Some(PathBuf::from(read::DEFAULT_FILE))
    }
    fn read_installed(&self, config_from: Option<&Path>) -> Result<Option<Installed>> {
        read::read(config_from)
    }
    fn validate(&self, lines: &[String]) -> Result<Checked> {
        let s = Scratch::new("sshd_config", "")?;
        let key = s.dir.path().join("hostkey").display().to_string();
        let made = inst::run("ssh-keygen", &["-q", "-t", "ed25519", "-N", "", "-f", &key])?;
        if !made.ok {
            anyhow::bail!("ssh-keygen could not make a throw-away host key: {}", made.why());
        }
        std::fs::write(&s.file, format!("HostKey {key}\n{}\n", lines.join("\n")))?;
        // As root `sshd -t` refuses any file without /run/sshd: that is not the
        // lines' fault, and the check says so instead of calling them rejected.
        if let Err(e) = crate::backend::openssh::daemon::ensure_privsep_dir() {
            return Ok(Checked::Unchecked(format!("`sshd -t` cannot run here: {e:#}")));
        }
        parse_with(&["sshd"], &["-t", "-f", &s.path()])
    }
    /// A private sshd (`backend::openssh::daemon`) started with the lines on
    /// 127.0.0.1, and one login by the installed ssh client with no
    /// configuration (`-F /dev/null`, no algorithm option): its usual peer.
    fn negotiate(&self, lines: &[String], want: &Want) -> Result<Negotiation> {
        let Ok(sshd) = crate::discover::openssh::find_sshd() else {
            return Ok(Negotiation::NotRun("sshd is not installed".into()));
        };
        let Ok(openssh) = crate::discover::openssh::discover() else {
            return Ok(Negotiation::NotRun("no ssh client is installed to log in with".into()));
        };
        let within = match negotiated::time_for(Duration::from_secs(4)) {
            Ok(w) => w,
            Err(why) => return Ok(Negotiation::NotRun(why)),
        };
        let client = default_client()?;
        let daemon = PrivateSshd::start_offering(&sshd, &openssh, Offer::Lines(lines), within)?;
        let server = effective_lists(&sshd, &daemon.files().config)?;
        let chosen = client::negotiate_with_private(
            &openssh.ssh,
            Path::new("/dev/null"),
            &daemon.files(),
            daemon.port(),
            daemon.user(),
            within,
        )
        .map_err(|e| anyhow::anyhow!("a default client could not log in: {e:#}"))?;
        drop(daemon);
        Ok(Negotiation::Negotiated(judge_default_client(
            &chosen,
            &server,
            &client,
            &openssh.aead,
            want,
        )?))
    }
    fn keywords(&self) -> &'static [&'static str] {
        read::KEYWORDS
    }
    fn ansible(&self) -> bool {
        true
    }
}

/// This machine's ssh client as nobody configured it (`ssh -F /dev/null -G`).
fn default_client() -> Result<SshConfig> {
    match crate::software::ssh::read::read_default()?.config {
        Config::Ssh(c) => Ok(c),
        Config::Tls(_) => anyhow::bail!("the ssh client read as TLS"),
    }
}

/// What sshd offers with `config`, as sshd itself reads it (`sshd -T`): the
/// lines' lists, and sshd's defaults for those they do not set.
fn effective_lists(sshd: &Path, config: &Path) -> Result<SshConfig> {
    let ran = inst::run(&sshd.display().to_string(), &["-T", "-f", &config.display().to_string()])?;
    if !ran.ok {
        anyhow::bail!("`sshd -T` on the private configuration failed: {}", ran.why());
    }
    let l = crate::discover::openssh::parse_sshd_lists(&ran.out)
        .ok_or_else(|| anyhow::anyhow!("`sshd -T` did not print all of Ciphers, MACs, KexAlgorithms and HostKeyAlgorithms"))?;
    Ok(SshConfig {
        server: true,
        ciphers: l.ciphers,
        macs: l.macs,
        kex: l.kex,
        hostkeys: l.hostkeys,
    })
}

/// What a client with `client`'s lists picks from `server`'s (RFC 4253 §7.1:
/// its first that the server also has; no MAC with an AEAD cipher): the rule
/// `diff::negotiate::ssh` models, applied to the lists sshd itself reported.
fn predicted(server: &SshConfig, client: &SshConfig, aead: &[String]) -> Option<Seen> {
    let pick = |c: &[String], s: &[String]| c.iter().find(|x| s.iter().any(|y| y == *x)).cloned();
    let cipher = pick(&client.ciphers, &server.ciphers)?;
    let mac = if aead.contains(&cipher) {
        None
    } else {
        Some(pick(&client.macs, &server.macs)?)
    };
    Some(Seen::Ssh {
        cipher,
        mac,
        kex: pick(&client.kex, &server.kex)?,
    })
}

/// The one judgement of what a default client negotiated with sshd's lines:
/// within the lines' lists, what the client's order predicts, and the answer's
/// first choice (its first key exchange the client can do); a [`Refused`] that
/// starts with what it negotiated otherwise.
fn judge_default_client(chosen: &Chosen, server: &SshConfig, client: &SshConfig, aead: &[String], want: &Want) -> Result<String, Refused> {
    let seen = Seen::Ssh {
        cipher: chosen.cipher.clone(),
        mac: chosen.mac.clone(),
        kex: chosen.kex.clone(),
    };
    let within = |v: &str, l: &[String]| l.iter().any(|x| crate::aliases::same(x, v));
    let outside: Vec<&str> = [
        (!within(&chosen.cipher, &server.ciphers)).then_some("cipher"),
        chosen.mac.as_ref().filter(|m| !within(m, &server.macs)).map(|_| "MAC"),
        (!within(&chosen.kex, &server.kex)).then_some("key exchange"),
    ]
    .into_iter()
    .flatten()
    .collect();
    if !outside.is_empty() {
        return Err(Refused(format!(
            "sshd: a default client negotiated {seen}, whose {} sshd with these lines does not list",
            outside.join(" and ")
        )));
    }
    match predicted(server, client, aead) {
        Some(p) if p == seen => {}
        p => {
            return Err(Refused(format!(
                "sshd: a default client negotiated {seen}, not what its own order predicts with these lines ({})",
                p.map(|p| p.to_string()).unwrap_or_else(|| "nothing in common".into())
            )))
        }
    }
    let who = Who {
        software: "sshd",
        peer: "a default client",
        other_end_takes: Some(&client.kex),
    };
    negotiated::judge(&who, &seen, want).map_err(|Refused(said)| {
        Refused(format!(
            "{said}; in SSH the client's order decides, and a default client puts {} first; no sshd line changes that, the ssh Host block (`cipherbench recommend --for ssh`) gives clients the answer's order",
            client.ciphers.first().map(String::as_str).unwrap_or("its own")
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recommend::choice::{testdata, Choice};

    fn installed() -> bool {
        let ok = crate::discover::openssh::find_sshd().is_ok() && crate::discover::openssh::discover().is_ok();
        if !ok {
            crate::testing::missing("sshd or the ssh client is not installed");
        }
        ok
    }

    fn refused(e: anyhow::Error) -> String {
        e.downcast_ref::<Refused>().unwrap_or_else(|| panic!("{e:#}")).0.clone()
    }

    /// The answer puts AES-GCM first (a machine with AES instructions); sshd's
    /// lines list it first, yet a default client picks its own first,
    /// chacha20-poly1305: said first, and the lines are not called the answer.
    #[test]
    fn a_default_clients_own_first_is_said_first_and_never_called_the_answer() {
        if !installed() {
            return;
        }
        let client = default_client().unwrap();
        let choice = Choice::Ssh(testdata::ssh());
        let want = Want::new(&crate::recommend::choice_lists(&choice));
        assert_eq!(want.first("ssh_ciphers"), Some("aes128-gcm@openssh.com"));
        let lines = Sshd.lines(&choice).unwrap();
        assert!(lines.iter().any(|l| l.starts_with("Ciphers aes128-gcm@openssh.com,")), "{lines:?}");
        let first = client.ciphers.first().unwrap().clone();
        let msg = refused(Sshd.negotiate(&lines, &want).unwrap_err());
        assert!(
            msg.starts_with(&format!(
                "sshd: a default client negotiated {first} over curve25519-sha256, not the answer's first choice"
            )),
            "{msg}"
        );
        assert!(msg.contains("cipher aes128-gcm@openssh.com") && msg.contains("--for ssh"), "{msg}");
    }

    /// Lines whose first cipher is a default client's own first: it negotiates
    /// the answer, said as such.
    #[test]
    fn lines_a_default_client_follows_are_the_answer() {
        if !installed() {
            return;
        }
        let client = default_client().unwrap();
        let first = client.ciphers.first().unwrap().clone();
        let mut s = testdata::ssh();
        s.ciphers.retain(|c| *c != first);
        s.ciphers.insert(0, first.clone());
        let choice = Choice::Ssh(s);
        let want = Want::new(&crate::recommend::choice_lists(&choice));
        let lines = Sshd.lines(&choice).unwrap();
        let said = match Sshd.negotiate(&lines, &want).unwrap() {
            Negotiation::Negotiated(said) => said,
            other => panic!("{other:?}"),
        };
        let mac = if crate::discover::openssh::discover().unwrap().is_aead(&first) {
            String::new()
        } else {
            " with hmac-sha2-256-etm@openssh.com".to_string()
        };
        assert_eq!(
            said,
            format!("a default client negotiates {first}{mac} over curve25519-sha256 (the answer's first choice)")
        );
    }

    /// What the default client picked must be within the lines and what its
    /// order predicts: anything else is refused (a model that would be wrong).
    #[test]
    fn a_pick_outside_the_lines_or_the_prediction_is_refused() {
        let l = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let server = SshConfig {
            server: true,
            ciphers: l(&["aes128-gcm@openssh.com", "aes256-ctr"]),
            macs: l(&["hmac-sha2-256-etm@openssh.com"]),
            kex: l(&["curve25519-sha256"]),
            hostkeys: l(&["ssh-ed25519"]),
        };
        let client = SshConfig {
            server: false,
            ciphers: l(&["chacha20-poly1305@openssh.com", "aes256-ctr", "aes128-gcm@openssh.com"]),
            macs: l(&["umac-64-etm@openssh.com", "hmac-sha2-256-etm@openssh.com"]),
            kex: l(&["sntrup761x25519-sha512@openssh.com", "curve25519-sha256"]),
            hostkeys: l(&["ssh-ed25519"]),
        };
        let aead = l(&["chacha20-poly1305@openssh.com", "aes128-gcm@openssh.com"]);
        let want = Want::new(&std::collections::BTreeMap::from([
            ("ssh_ciphers".to_string(), l(&["aes256-ctr"])),
            ("ssh_macs".to_string(), l(&["hmac-sha2-256-etm@openssh.com"])),
            // A key exchange the client cannot do is not held against the lines.
            ("ssh_kex".to_string(), l(&["mlkem768x25519-sha256", "curve25519-sha256"])),
        ]));
        let chosen = |cipher: &str, mac: Option<&str>| Chosen {
            kex: "curve25519-sha256".into(),
            hostkey: "ssh-ed25519".into(),
            cipher: cipher.into(),
            mac: mac.map(str::to_string),
        };
        let ok = judge_default_client(
            &chosen("aes256-ctr", Some("hmac-sha2-256-etm@openssh.com")),
            &server,
            &client,
            &aead,
            &want,
        );
        assert_eq!(
            ok.unwrap(),
            "a default client negotiates aes256-ctr with hmac-sha2-256-etm@openssh.com over curve25519-sha256 (the answer's first choice)"
        );
        let e = judge_default_client(&chosen("chacha20-poly1305@openssh.com", None), &server, &client, &aead, &want)
            .unwrap_err()
            .0;
        assert!(e.contains("whose cipher sshd with these lines does not list"), "{e}");
        let e = judge_default_client(&chosen("aes128-gcm@openssh.com", None), &server, &client, &aead, &want)
            .unwrap_err()
            .0;
        assert!(
            e.contains("not what its own order predicts with these lines (aes256-ctr with"),
            "{e}"
        );
    }
}
