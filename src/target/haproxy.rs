//! HAProxy: read and checked with `haproxy -c -f` (the lines in a `global` section
//! of a minimal configuration).

use super::validate::{parse_with, Checked, Scratch};
use super::{Protocol, Target};
use crate::discover::installed::{self as inst, Installed};
use crate::recommend::emit::{self, Emitter};
use anyhow::Result;
use std::path::{Path, PathBuf};

pub struct Haproxy;

impl Target for Haproxy {
    fn emitter(&self) -> &'static dyn Emitter {
        &emit::haproxy::Haproxy
    }
    fn protocol(&self) -> Protocol {
        Protocol::Tls
    }
    fn programs(&self) -> &'static [&'static str] {
        &["haproxy"]
    }
    fn config_path(&self) -> Option<PathBuf> {
        Some(PathBuf::from(inst::haproxy::DEFAULT_FILE))
    }
    fn read_installed(&self, config_from: Option<&Path>) -> Result<Option<Installed>> {
        inst::haproxy::read(config_from)
    }
    fn validate(&self, lines: &[String]) -> Result<Checked> {
        let body: String = lines.iter().map(|l| format!("    {l}\n")).collect();
        // A listener that is never opened: without one `haproxy -c` exits 2.
        let rest = "defaults\n    mode tcp\n    timeout connect 5s\n    timeout client 5s\n    timeout server 5s\n\nfrontend check\n    bind 127.0.0.1:9\n";
        let s = Scratch::new("haproxy.cfg", &format!("global\n{body}\n{rest}"))?;
        parse_with(&["haproxy"], &["-c", "-f", &s.path()])
    }
    fn keywords(&self) -> &'static [&'static str] {
        inst::haproxy::KEYWORDS
    }
}
