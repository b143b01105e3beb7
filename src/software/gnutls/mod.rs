//! GnuTLS: the system priority file (`$GNUTLS_SYSTEM_PRIORITY_FILE`), checked with
//! `gnutls-cli --priority … -l`.

pub mod emit;
pub mod read;

use super::negotiated::{self, Negotiation, Want, Who};
use super::validate::{parse_with, Checked};
use super::{Protocol, Target};
use crate::discover::installed::{self as inst, Installed};
use crate::recommend::choice::Emitter;
use anyhow::Result;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub struct GnuTls;

impl Target for GnuTls {
    fn emitter(&self) -> &'static dyn Emitter {
        &emit::GnuTls
    }
    fn protocol(&self) -> Protocol {
        Protocol::Tls
    }
    fn config_path(&self) -> Option<PathBuf> {
        Some(read::default_file())
    }
    fn read_installed(&self, config_from: Option<&Path>) -> Result<Option<Installed>> {
        read::read(config_from)
    }
    fn validate(&self, lines: &[String]) -> Result<Checked> {
        let priority = lines.first().map(String::as_str).unwrap_or("");
        // `--priority=VALUE`: the string is never read as an option.
        parse_with(&["gnutls-cli"], &[&format!("--priority={priority}"), "-l"])
    }
    /// The real `gnutls-cli` with the emitted priority string (`--priority=…`,
    /// one argument: never read as an option) and its input closed, against the
    /// private recording server on 127.0.0.1 (`backend::recording`: it accepts
    /// everything and honours the client's order; `--insecure`, its certificate
    /// is generated). What the server recorded must be the answer's first choice.
    fn negotiate(&self, lines: &[String], want: &Want) -> Result<Negotiation> {
        let Some(binary) = inst::find_program(&["gnutls-cli"]) else {
            return Ok(Negotiation::NotRun("gnutls-cli is not installed".into()));
        };
        let Some(priority) = lines.first() else {
            return Ok(Negotiation::NotRun("no priority string".into()));
        };
        let within = match negotiated::time_for(Duration::from_secs(3)) {
            Ok(w) => w,
            Err(why) => return Ok(Negotiation::NotRun(why)),
        };
        let seen = negotiated::client_run("gnutls-cli", crate::backend::recording::plain(), within, |port| {
            let mut c = std::process::Command::new(&binary);
            c.args([format!("--priority={priority}"), format!("--port={port}")]);
            c.args(["--insecure", "--", "127.0.0.1"]);
            c
        })?;
        // It offers only the groups its string names (the emitter leaves out
        // those GnuTLS cannot take): held to the answer's first among them.
        let groups = offered_groups(priority);
        let who = Who {
            software: "gnutls",
            peer: "gnutls-cli",
            other_end_takes: (!groups.is_empty()).then_some(groups.as_slice()),
        };
        Ok(Negotiation::Negotiated(negotiated::judge(&who, &seen, want)?))
    }
    fn keywords(&self) -> &'static [&'static str] {
        &["default-priority-string"]
    }
    fn file_lines(&self, _installed: &Installed, emitted: &[String]) -> Vec<String> {
        emitted.iter().map(|l| format!("default-priority-string = {l}")).collect()
    }
    fn keeps_comments(&self) -> bool {
        false
    }
}

/// The groups a priority string names (`+GROUP-X25519` → `GROUP-X25519`, a
/// name the knowledge base knows as x25519), in its order.
fn offered_groups(priority: &str) -> Vec<String> {
    priority
        .split(':')
        .filter_map(|i| i.strip_prefix('+'))
        .filter(|i| i.starts_with("GROUP-"))
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recommend::choice::{testdata, Choice};
    use crate::software::Refused;

    fn want() -> Want {
        Want::new(&crate::recommend::choice_lists(&Choice::Tls(testdata::tls())))
    }

    fn installed() -> bool {
        let ok = inst::find_program(&["gnutls-cli"]).is_some();
        if !ok {
            crate::testing::missing("gnutls-cli is not installed");
        }
        ok
    }

    /// A group the string leaves out (one GnuTLS cannot take, such as a hybrid
    /// it lacks) is not held against it: the answer's first group it names is.
    #[test]
    fn it_is_held_to_the_first_group_its_string_names() {
        let mut want = want();
        want.lists.get_mut("groups").unwrap().insert(0, "X25519MLKEM768".into());
        let takes = offered_groups("NONE:+VERS-TLS1.3:+CHACHA20-POLY1305:+AEAD:+GROUP-X25519:+GROUP-SECP256R1:+SIGN-ALL");
        assert_eq!(takes, ["GROUP-X25519", "GROUP-SECP256R1"]);
        let who = Who {
            software: "gnutls",
            peer: "gnutls-cli",
            other_end_takes: Some(&takes),
        };
        let seen = |group: &str| negotiated::Seen::Tls {
            version: "TLSv1.3".into(),
            suite: "TLS_CHACHA20_POLY1305_SHA256".into(),
            group: Some(group.into()),
        };
        assert!(negotiated::judge(&who, &seen("X25519"), &want).is_ok());
        assert!(negotiated::judge(&who, &seen("secp256r1"), &want).is_err());
    }

    /// The emitted priority string in the real gnutls-cli: it negotiates the
    /// answer's first TLS 1.3 suite (ChaCha20 here, not GnuTLS's own first on
    /// a CPU with AES instructions, AES-256-GCM) over its first group.
    #[test]
    fn gnutls_cli_with_the_emitted_priority_negotiates_the_answer() {
        if !installed() {
            return;
        }
        let lines = GnuTls.lines(&Choice::Tls(testdata::tls())).unwrap();
        match GnuTls.negotiate(&lines, &want()).unwrap() {
            Negotiation::Negotiated(said) => assert_eq!(
                said,
                "gnutls-cli negotiates TLSv1.3 TLS_CHACHA20_POLY1305_SHA256 over X25519 (the answer's first choice)"
            ),
            other => panic!("{other:?}"),
        }
    }

    /// The same string from `NORMAL` instead of `NONE`: GnuTLS's own order
    /// stays first (what it adds is already there), and on a CPU with AES
    /// instructions that is AES-256-GCM: refused, with what was negotiated.
    #[test]
    fn a_priority_without_its_order_is_refused_with_what_was_negotiated() {
        if !installed() {
            return;
        }
        let line = &GnuTls.lines(&Choice::Tls(testdata::tls())).unwrap()[0];
        let normal = format!("NORMAL{}", line.strip_prefix("NONE").unwrap());
        match GnuTls.negotiate(&[normal], &want()) {
            Err(e) => {
                let msg = &e.downcast_ref::<Refused>().unwrap_or_else(|| panic!("{e:#}")).0;
                assert!(msg.starts_with("gnutls: gnutls-cli negotiated TLSv1.3 TLS_AES_"), "{msg}");
                assert!(msg.contains("suite TLS_CHACHA20_POLY1305_SHA256"), "{msg}");
            }
            Ok(n) if !crate::discover::host::fingerprint().cpu_flags.iter().any(|f| f == "aes") => {
                eprintln!("skipped: without AES instructions GnuTLS's own first is ChaCha20 ({n:?})")
            }
            Ok(n) => panic!("GnuTLS's own order gave the answer: {n:?}"),
        }
    }
}
