//! curl: command-line options; it has no configuration to read.

use super::validate::{unchecked, Checked};
use super::{Protocol, Target};
use crate::discover::installed::Installed;
use crate::recommend::emit::{self, Emitter};
use anyhow::Result;
use std::path::Path;

pub struct Curl;

impl Target for Curl {
    fn emitter(&self) -> &'static dyn Emitter {
        &emit::curl::Curl
    }
    fn protocol(&self) -> Protocol {
        Protocol::Tls
    }
    fn programs(&self) -> &'static [&'static str] {
        &["curl"]
    }
    fn reads_installed(&self) -> bool {
        false
    }
    fn read_installed(&self, _config_from: Option<&Path>) -> Result<Option<Installed>> {
        Ok(None)
    }
    fn validate(&self, _lines: &[String]) -> Result<Checked> {
        unchecked("curl's options are checked only when it connects")
    }
}
