//! The OpenSSH server: read with `sshd -T`, checked with `sshd -t` on a
//! throw-away `sshd_config` with a throw-away host key.

use super::validate::{parse_with, Checked, Scratch};
use super::{Protocol, Target};
use crate::discover::installed::{self as inst, Installed};
use crate::recommend::emit::{self, Emitter};
use anyhow::Result;
use std::path::{Path, PathBuf};

pub struct Sshd;

impl Target for Sshd {
    fn emitter(&self) -> &'static dyn Emitter {
        &emit::sshd::Sshd
    }
    fn protocol(&self) -> Protocol {
        Protocol::Ssh
    }
    fn programs(&self) -> &'static [&'static str] {
        &["sshd"]
    }
    fn config_path(&self) -> Option<PathBuf> {
        Some(PathBuf::from(inst::sshd::DEFAULT_FILE))
    }
    fn read_installed(&self, config_from: Option<&Path>) -> Result<Option<Installed>> {
        inst::sshd::read(config_from)
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
    fn keywords(&self) -> &'static [&'static str] {
        inst::sshd::KEYWORDS
    }
    fn ansible(&self) -> bool {
        true
    }
}
