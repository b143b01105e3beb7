//! OpenSSL: the system `openssl.cnf` (`$OPENSSL_CONF`), checked with `openssl ciphers`.

use super::validate::{labelled, parse_with, Checked};
use super::{Protocol, Target};
use crate::discover::installed::{self as inst, Installed};
use crate::recommend::emit::{self, Emitter};
use anyhow::Result;
use std::path::{Path, PathBuf};

pub struct OpenSsl;

impl Target for OpenSsl {
    fn emitter(&self) -> &'static dyn Emitter {
        &emit::openssl::OpenSsl
    }
    fn protocol(&self) -> Protocol {
        Protocol::Tls
    }
    fn config_path(&self) -> Option<PathBuf> {
        Some(inst::openssl::default_file())
    }
    fn read_installed(&self, config_from: Option<&Path>) -> Result<Option<Installed>> {
        inst::openssl::read(config_from)
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
    fn keywords(&self) -> &'static [&'static str] {
        &["ciphersuites", "cipherstring", "groups", "minprotocol"]
    }
    /// The emitter names the settings; openssl.cnf spells them this way.
    fn file_lines(&self, _installed: &Installed, emitted: &[String]) -> Vec<String> {
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
}
