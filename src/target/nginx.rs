//! nginx: read with `nginx -T`, checked with `nginx -t` on a throw-away config.

use super::validate::{parse_with, Checked, Scratch};
use super::{Protocol, Target};
use crate::discover::installed::{self as inst, Installed};
use crate::recommend::emit::{self, Emitter};
use anyhow::Result;
use std::path::{Path, PathBuf};

pub struct Nginx;

impl Target for Nginx {
    fn emitter(&self) -> &'static dyn Emitter {
        &emit::nginx::Nginx
    }
    fn protocol(&self) -> Protocol {
        Protocol::Tls
    }
    fn programs(&self) -> &'static [&'static str] {
        &["nginx"]
    }
    fn config_path(&self) -> Option<PathBuf> {
        Some(PathBuf::from(inst::nginx::DEFAULT_FILE))
    }
    fn read_installed(&self, config_from: Option<&Path>) -> Result<Option<Installed>> {
        inst::nginx::read(config_from)
    }
    /// The lines in an `http` block of a minimal config, `nginx -t` under a
    /// private prefix (no root, no log file of the system's).
    fn validate(&self, lines: &[String]) -> Result<Checked> {
        let body: String = lines.iter().map(|l| format!("    {l}\n")).collect();
        let s = Scratch::new(
            "nginx.conf",
            &format!("pid nginx.pid;\nevents {{}}\nhttp {{\n    access_log off;\n{body}}}\n"),
        )?;
        let prefix = format!("{}/", s.dir.path().display());
        parse_with(&["nginx"], &["-t", "-q", "-e", "stderr", "-p", &prefix, "-c", &s.path()])
    }
    fn keywords(&self) -> &'static [&'static str] {
        inst::nginx::KEYWORDS
    }
    fn ansible(&self) -> bool {
        true
    }
}
