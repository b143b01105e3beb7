//! OpenSSL: the system `openssl.cnf` (`$OPENSSL_CONF`), checked with `openssl ciphers`.

pub mod emit;
pub mod read;

use super::negotiated::{self, Negotiation, Want, Who};
use super::validate::{labelled, parse_with, Checked, Scratch};
use super::{Protocol, Target};
use crate::discover::installed::{self as inst, Installed};
use crate::recommend::choice::Emitter;
use anyhow::Result;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub struct OpenSsl;

impl Target for OpenSsl {
    fn emitter(&self) -> &'static dyn Emitter {
        &emit::OpenSsl
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
    /// `openssl ciphers -s` with both lists (the groups are not checked).
    fn validate(&self, lines: &[String]) -> Result<Checked> {
        let mut args = vec!["ciphers", "-s"];
        if let Some(s) = labelled(lines, "ciphersuites") {
            args.extend(["-ciphersuites", s]);
        }
        if let Some(c) = labelled(lines, "cipher list") {
            // After `--`, a cipher list is never an option.
            args.extend(["--", c]);
        }
        parse_with(&["openssl"], &args)
    }
    /// The emitted settings as the `system_default` section of an openssl.cnf
    /// ([`system_cnf`], what the patch writes into the installed one) loaded by
    /// the real `openssl s_client -connect 127.0.0.1:PORT` through
    /// `OPENSSL_CONF`, with no cipher option of its own and its input closed,
    /// against the private recording server (`backend::recording`: it accepts
    /// everything and honours the client's order). What the server recorded
    /// must be the answer's first choice.
    fn negotiate(&self, lines: &[String], want: &Want) -> Result<Negotiation> {
        let Some(binary) = inst::find_program(&["openssl"]) else {
            return Ok(Negotiation::NotRun("openssl is not installed".into()));
        };
        let within = match negotiated::time_for(Duration::from_secs(3)) {
            Ok(w) => w,
            Err(why) => return Ok(Negotiation::NotRun(why)),
        };
        let cnf = Scratch::new("openssl.cnf", &system_cnf(lines))?;
        let seen = negotiated::client_run("openssl", crate::backend::recording::plain(), within, |port| {
            let mut c = std::process::Command::new(&binary);
            c.args(["s_client", "-connect", &format!("127.0.0.1:{port}")]);
            c.env("OPENSSL_CONF", &cnf.file);
            c
        })?;
        // It offers only the groups the `groups` line names (the emitter
        // leaves out those the host's OpenSSL cannot take): held to the
        // answer's first among them.
        let groups: Option<Vec<String>> = labelled(lines, "groups").map(negotiated::openssl_groups);
        let who = Who {
            software: "openssl",
            peer: "openssl s_client",
            other_end_takes: groups.as_deref(),
        };
        Ok(Negotiation::Negotiated(negotiated::judge(&who, &seen, want)?))
    }
    fn keywords(&self) -> &'static [&'static str] {
        &["ciphersuites", "cipherstring", "groups", "minprotocol"]
    }
    /// The emitter names the settings; openssl.cnf spells them this way.
    fn file_lines(&self, _installed: &Installed, emitted: &[String]) -> Vec<String> {
        settings(emitted)
    }
}

/// The emitted lines as openssl.cnf spells them in a `system_default` section.
fn settings(emitted: &[String]) -> Vec<String> {
    emitted
        .iter()
        .filter_map(|l| {
            let (k, v) = l.split_once(':')?;
            let key = match k.trim() {
                "ciphersuites" => "Ciphersuites",
                "cipher list" => "CipherString",
                "groups" => "Groups",
                _ => return None,
            };
            Some(format!("{key} = {}", v.trim()))
        })
        .collect()
}

/// An openssl.cnf whose `system_default` section holds the emitted settings
/// (reached as Debian's is: `openssl_conf` → `ssl_conf` → `system_default`),
/// and nothing else: what every program linked to libssl that sets nothing
/// itself then gets.
fn system_cnf(emitted: &[String]) -> String {
    let mut text = String::from(
        "openssl_conf = cipherbench_init\n\n[ cipherbench_init ]\nssl_conf = cipherbench_ssl\n\n\
         [ cipherbench_ssl ]\nsystem_default = cipherbench_tls\n\n[ cipherbench_tls ]\n",
    );
    for l in settings(emitted) {
        text.push_str(&l);
        text.push('\n');
    }
    text
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
        let ok = inst::find_program(&["openssl"]).is_some();
        if !ok {
            crate::testing::missing("openssl is not installed");
        }
        ok
    }

    #[test]
    fn the_settings_are_a_system_default_section() {
        let cnf = system_cnf(&OpenSsl.lines(&Choice::Tls(testdata::tls())).unwrap());
        assert!(cnf.starts_with("openssl_conf = cipherbench_init\n"), "{cnf}");
        let section = cnf.split("[ cipherbench_tls ]\n").nth(1).unwrap();
        assert!(
            section.starts_with("Ciphersuites = TLS_CHACHA20_POLY1305_SHA256:")
                && section.contains("\nCipherString = ECDHE-ECDSA-CHACHA20-POLY1305:")
                && section.contains("\nGroups = "),
            "{cnf}"
        );
    }

    /// The emitted settings as the system configuration: the real `openssl
    /// s_client`, with no cipher option, negotiates the answer's first TLS 1.3
    /// suite (ChaCha20 here, not OpenSSL's own first, AES-256-GCM).
    #[test]
    fn s_client_under_the_emitted_system_configuration_negotiates_the_answer() {
        if !installed() {
            return;
        }
        let lines = OpenSsl.lines(&Choice::Tls(testdata::tls())).unwrap();
        match OpenSsl.negotiate(&lines, &want()).unwrap() {
            Negotiation::Negotiated(said) => assert_eq!(
                said,
                "openssl s_client negotiates TLSv1.3 TLS_CHACHA20_POLY1305_SHA256 over X25519 (the answer's first choice)"
            ),
            other => panic!("{other:?}"),
        }
    }

    /// Without its `ciphersuites` line the system configuration leaves TLS 1.3
    /// in OpenSSL's own order: refused, with what s_client negotiated first.
    #[test]
    fn a_configuration_without_the_tls13_order_is_refused_with_what_was_negotiated() {
        if !installed() {
            return;
        }
        let lines: Vec<String> = OpenSsl
            .lines(&Choice::Tls(testdata::tls()))
            .unwrap()
            .into_iter()
            .filter(|l| !l.starts_with("ciphersuites"))
            .collect();
        let e = OpenSsl.negotiate(&lines, &want()).unwrap_err();
        let msg = &e.downcast_ref::<Refused>().unwrap_or_else(|| panic!("{e:#}")).0;
        assert!(
            msg.starts_with("openssl: openssl s_client negotiated TLSv1.3 TLS_AES_256_GCM_SHA384"),
            "{msg}"
        );
        assert!(msg.contains("suite TLS_CHACHA20_POLY1305_SHA256"), "{msg}");
    }
}
