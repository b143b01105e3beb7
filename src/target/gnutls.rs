//! GnuTLS: the system priority file (`$GNUTLS_SYSTEM_PRIORITY_FILE`), checked with
//! `gnutls-cli --priority … -l`.

use super::validate::{parse_with, Checked};
use super::{Protocol, Target};
use crate::discover::installed::{self as inst, Installed};
use crate::recommend::emit::{self, Emitter};
use anyhow::Result;
use std::path::{Path, PathBuf};

pub struct GnuTls;

impl Target for GnuTls {
    fn emitter(&self) -> &'static dyn Emitter {
        &emit::gnutls::GnuTls
    }
    fn protocol(&self) -> Protocol {
        Protocol::Tls
    }
    fn config_path(&self) -> Option<PathBuf> {
        Some(inst::gnutls::default_file())
    }
    fn read_installed(&self, config_from: Option<&Path>) -> Result<Option<Installed>> {
        inst::gnutls::read(config_from)
    }
    fn validate(&self, lines: &[String]) -> Result<Checked> {
        let priority = lines.first().map(String::as_str).unwrap_or("");
        // `--priority=VALUE`: the string is never read as an option.
        parse_with(&["gnutls-cli"], &[&format!("--priority={priority}"), "-l"])
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
