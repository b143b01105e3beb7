//! The OpenSSH client: read with `ssh -G`, checked with `ssh -G -F` on a
//! throw-away config, and run with its Host block against a private sshd with
//! sshd's own defaults on 127.0.0.1: the client's order decides what SSH
//! negotiates, so it must negotiate the answer's first cipher, MAC (none with
//! an AEAD cipher) and key exchange.

pub mod emit;
pub mod read;

use super::negotiated::{self, Negotiation, Seen, Want, Who};
use super::validate::{parse_with, Checked, Scratch};
use super::{Protocol, Target};
use crate::backend::openssh::client;
use crate::backend::openssh::daemon::{Offer, PrivateSshd};
use crate::discover::installed::Installed;
use crate::recommend::choice::Emitter;
use anyhow::Result;
use std::path::Path;
use std::time::Duration;

pub struct Ssh;

impl Target for Ssh {
    fn emitter(&self) -> &'static dyn Emitter {
        &emit::OpenSshClient
    }
    fn protocol(&self) -> Protocol {
        Protocol::Ssh
    }
    fn programs(&self) -> &'static [&'static str] {
        &["ssh"]
    }
    fn read_installed(&self, config_from: Option<&Path>) -> Result<Option<Installed>> {
        read::read(config_from)
    }
    fn validate(&self, lines: &[String]) -> Result<Checked> {
        let s = Scratch::new("ssh_config", &format!("{}\n", lines.join("\n")))?;
        parse_with(&["ssh"], &["-G", "-F", &s.path(), "HOST"])
    }
    /// The Host block, for `Host 127.0.0.1`, as the whole configuration of the
    /// real ssh (`-F`, no algorithm option on its command line), logging into a
    /// private sshd (`backend::openssh::daemon`) that keeps sshd's own defaults.
    fn negotiate(&self, lines: &[String], want: &Want) -> Result<Negotiation> {
        let Ok(sshd) = crate::discover::openssh::find_sshd() else {
            return Ok(Negotiation::NotRun("no sshd is installed to log into".into()));
        };
        let Ok(openssh) = crate::discover::openssh::discover() else {
            return Ok(Negotiation::NotRun("ssh is not installed".into()));
        };
        let within = match negotiated::time_for(Duration::from_secs(4)) {
            Ok(w) => w,
            Err(why) => return Ok(Negotiation::NotRun(why)),
        };
        let config = Scratch::new("ssh_config", &private_block(lines))?;
        let daemon = PrivateSshd::start_offering(&sshd, &openssh, Offer::Lines(&[]), within)?;
        let chosen = client::negotiate_with_private(&openssh.ssh, &config.file, &daemon.files(), daemon.port(), daemon.user(), within)
            .map_err(|e| anyhow::anyhow!("ssh with these lines could not log into a default sshd: {e:#}"))?;
        drop(daemon);
        let seen = Seen::Ssh {
            cipher: chosen.cipher,
            mac: chosen.mac,
            kex: chosen.kex,
        };
        let who = Who {
            software: "ssh",
            peer: "ssh against a default sshd",
            other_end_takes: None,
        };
        Ok(Negotiation::Negotiated(negotiated::judge(&who, &seen, want)?))
    }
    fn keywords(&self) -> &'static [&'static str] {
        crate::software::sshd::read::KEYWORDS
    }
    /// The Host block's lines, for the top of the client config.
    fn file_lines(&self, _installed: &Installed, emitted: &[String]) -> Vec<String> {
        emitted
            .iter()
            .filter(|l| !l.starts_with("Host "))
            .map(|l| l.trim().to_string())
            .collect()
    }
}

/// The emitted Host block for the private sshd: its `Host` line (`Host HOST`)
/// names 127.0.0.1, so that ssh applies it there.
fn private_block(lines: &[String]) -> String {
    let mut out = String::new();
    if !lines.iter().any(|l| l.trim_start().starts_with("Host ")) {
        out.push_str("Host 127.0.0.1\n");
    }
    for l in lines {
        if l.trim_start().starts_with("Host ") {
            out.push_str("Host 127.0.0.1\n");
        } else {
            out.push_str(l);
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recommend::choice::{testdata, Choice};
    use crate::software::Refused;

    fn installed() -> bool {
        let ok = crate::discover::openssh::find_sshd().is_ok() && crate::discover::openssh::discover().is_ok();
        if !ok {
            crate::testing::missing("sshd or the ssh client is not installed");
        }
        ok
    }

    #[test]
    fn the_host_block_names_the_private_sshd() {
        let b = private_block(&["Host HOST".into(), "    Ciphers aes128-ctr".into()]);
        assert_eq!(b, "Host 127.0.0.1\n    Ciphers aes128-ctr\n");
    }

    /// The emitted Host block in the real ssh against sshd's defaults: it
    /// negotiates the answer's first cipher (AES-GCM, not the client's own
    /// first) and key exchange.
    #[test]
    fn the_real_ssh_with_the_emitted_block_negotiates_the_answer() {
        if !installed() {
            return;
        }
        let choice = Choice::Ssh(testdata::ssh());
        let want = Want::new(&crate::recommend::choice_lists(&choice));
        let lines = Ssh.lines(&choice).unwrap();
        match Ssh.negotiate(&lines, &want).unwrap() {
            Negotiation::Negotiated(said) => assert_eq!(
                said,
                "ssh against a default sshd negotiates aes128-gcm@openssh.com over curve25519-sha256 (the answer's first choice)"
            ),
            other => panic!("{other:?}"),
        }
    }

    /// A block without its Ciphers line leaves the client's own order: it
    /// negotiates the client's first, said first and refused.
    #[test]
    fn a_block_that_leaves_the_cipher_to_the_default_is_refused_with_what_it_negotiated() {
        if !installed() {
            return;
        }
        let choice = Choice::Ssh(testdata::ssh());
        let want = Want::new(&crate::recommend::choice_lists(&choice));
        let lines: Vec<String> = Ssh
            .lines(&choice)
            .unwrap()
            .into_iter()
            .filter(|l| !l.trim_start().starts_with("Ciphers"))
            .collect();
        let e = Ssh.negotiate(&lines, &want).unwrap_err();
        let msg = &e.downcast_ref::<Refused>().unwrap_or_else(|| panic!("{e:#}")).0;
        assert!(msg.starts_with("ssh: ssh against a default sshd negotiated "), "{msg}");
        assert!(!msg.contains("negotiated aes128-gcm"), "{msg}");
        assert!(msg.contains("cipher aes128-gcm@openssh.com"), "{msg}");
    }
}
