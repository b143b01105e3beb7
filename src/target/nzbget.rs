//! NZBGet: its `ServerN.Cipher=` line (`/etc/nzbget.conf`, `~/.nzbget`).

use super::validate::{unchecked, Checked};
use super::{Protocol, Target};
use crate::discover::installed::{self as inst, Installed};
use crate::recommend::emit::{self, Emitter};
use anyhow::Result;
use std::path::{Path, PathBuf};

pub struct Nzbget;

impl Target for Nzbget {
    fn emitter(&self) -> &'static dyn Emitter {
        &emit::nzbget::Nzbget
    }
    fn protocol(&self) -> Protocol {
        Protocol::Tls
    }
    fn programs(&self) -> &'static [&'static str] {
        &["nzbget"]
    }
    fn config_path(&self) -> Option<PathBuf> {
        Some(PathBuf::from("/etc/nzbget.conf"))
    }
    fn read_installed(&self, config_from: Option<&Path>) -> Result<Option<Installed>> {
        inst::nzbget::read(config_from)
    }
    fn validate(&self, _lines: &[String]) -> Result<Checked> {
        unchecked("NZBGet has no configuration check mode")
    }
    /// `ServerN`: the server that was read.
    fn file_lines(&self, installed: &Installed, emitted: &[String]) -> Vec<String> {
        let key = installed
            .directives
            .first()
            .and_then(|d| d.text.split('=').next())
            .map(|k| k.trim().to_string());
        emitted
            .iter()
            .map(|l| match (&key, l.split_once('=')) {
                (Some(k), Some((_, v))) => format!("{k}={v}"),
                _ => l.clone(),
            })
            .collect()
    }
    fn keeps_comments(&self) -> bool {
        false
    }
}
