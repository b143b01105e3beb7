//! The OpenSSH client: read with `ssh -G`, checked with `ssh -G -F` on a
//! throw-away config.

use super::validate::{parse_with, Checked, Scratch};
use super::{Protocol, Target};
use crate::discover::installed::{self as inst, Installed};
use crate::recommend::emit::{self, Emitter};
use anyhow::Result;
use std::path::Path;

pub struct Ssh;

impl Target for Ssh {
    fn emitter(&self) -> &'static dyn Emitter {
        &emit::openssh_client::OpenSshClient
    }
    fn protocol(&self) -> Protocol {
        Protocol::Ssh
    }
    fn programs(&self) -> &'static [&'static str] {
        &["ssh"]
    }
    fn read_installed(&self, config_from: Option<&Path>) -> Result<Option<Installed>> {
        inst::ssh::read(config_from)
    }
    fn validate(&self, lines: &[String]) -> Result<Checked> {
        let s = Scratch::new("ssh_config", &format!("{}\n", lines.join("\n")))?;
        parse_with(&["ssh"], &["-G", "-F", &s.path(), "HOST"])
    }
    fn keywords(&self) -> &'static [&'static str] {
        inst::sshd::KEYWORDS
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
