//! stunnel: its files are parsed (`/etc/stunnel/*.conf`).

use super::validate::{unchecked, Checked};
use super::{Protocol, Target};
use crate::discover::installed::{self as inst, Installed};
use crate::recommend::emit::{self, Emitter};
use anyhow::Result;
use std::path::Path;

pub struct Stunnel;

impl Target for Stunnel {
    fn emitter(&self) -> &'static dyn Emitter {
        &emit::stunnel::Stunnel
    }
    fn protocol(&self) -> Protocol {
        Protocol::Tls
    }
    fn programs(&self) -> &'static [&'static str] {
        &["stunnel4", "stunnel"]
    }
    fn read_installed(&self, config_from: Option<&Path>) -> Result<Option<Installed>> {
        inst::stunnel::read(config_from)
    }
    fn validate(&self, _lines: &[String]) -> Result<Checked> {
        unchecked("stunnel has no check mode: it reads a service's lines only when it starts it")
    }
    fn keywords(&self) -> &'static [&'static str] {
        inst::stunnel::KEYWORDS
    }
}
