//! Apache httpd (mod_ssl): read through `apache2ctl -t -D DUMP_INCLUDES`.

use super::validate::{unchecked, Checked};
use super::{Protocol, Target};
use crate::discover::installed::{self as inst, Installed};
use crate::recommend::emit::{self, Emitter};
use anyhow::Result;
use std::path::{Path, PathBuf};

pub struct Apache;

impl Target for Apache {
    fn emitter(&self) -> &'static dyn Emitter {
        &emit::apache::Apache
    }
    fn protocol(&self) -> Protocol {
        Protocol::Tls
    }
    fn programs(&self) -> &'static [&'static str] {
        &["apache2", "httpd"]
    }
    fn config_path(&self) -> Option<PathBuf> {
        Some(PathBuf::from("/etc/apache2/apache2.conf"))
    }
    fn read_installed(&self, config_from: Option<&Path>) -> Result<Option<Installed>> {
        inst::apache::read(config_from)
    }
    fn validate(&self, _lines: &[String]) -> Result<Checked> {
        unchecked("`apache2ctl -t` checks a whole server configuration with mod_ssl loaded, not lines alone")
    }
    fn keywords(&self) -> &'static [&'static str] {
        inst::apache::KEYWORDS
    }
    /// mod_ssl's `SSLOpenSSLConfCmd Ciphersuites` is `SSLCipherSuite TLSv1.3` given
    /// another way (and applied after it, so left in place it would win), and
    /// `Curves` is `Groups`.
    fn same_setting(&self, a: &str, b: &str) -> bool {
        const SAME: &[[&str; 2]] = &[
            ["sslciphersuite tlsv1.3", "sslopensslconfcmd ciphersuites"],
            ["sslopensslconfcmd curves", "sslopensslconfcmd groups"],
        ];
        a == b || SAME.iter().any(|g| g.contains(&a) && g.contains(&b))
    }
}
