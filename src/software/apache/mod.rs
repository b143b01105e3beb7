//! Apache httpd (mod_ssl): read through `apache2ctl -t -D DUMP_INCLUDES`, checked
//! with `apache2 -t` on a minimal configuration with mod_ssl loaded, and run with
//! its lines in a private Apache (`backend::apache`).

pub mod emit;
pub mod read;

use super::negotiated::{Negotiation, Want};
use super::server;
use super::validate::{parse_with, unchecked, Checked, Scratch};
use super::{Protocol, Target};
use crate::backend::apache::{self as private, PrivateApache};
use crate::discover::installed::{Installed, TlsConfig};
use crate::recommend::choice::Emitter;
use anyhow::Result;
use std::path::{Path, PathBuf};

pub struct Apache;

impl Target for Apache {
    fn emitter(&self) -> &'static dyn Emitter {
        &emit::Apache
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
        read::read(config_from)
    }
    /// The lines in the server config of a minimal configuration that loads
    /// mod_ssl from the system's modules, `apache2 -t` (`-d` a scratch root).
    fn validate(&self, lines: &[String]) -> Result<Checked> {
        let Some(modules) = private::modules() else {
            return unchecked("Apache's mod_ssl is not installed");
        };
        let tls = server::tls_lines(lines);
        let s = Scratch::new("apache2.conf", "")?;
        let d = s.dir.path();
        let text = match private::base_config(d, &d.join("error.log"), &modules, &tls) {
            Ok(t) => t,
            Err(e) => return Err(super::Refused(format!("{e:#}")).into()),
        };
        std::fs::write(&s.file, text)?;
        parse_with(private::PROGRAMS, &["-t", "-d", &d.display().to_string(), "-f", &s.path()])
    }
    /// A private Apache (`backend::apache`) started with the lines on
    /// 127.0.0.1, and one handshake by the installed libssl's default client.
    fn negotiate(&self, lines: &[String], want: &Want) -> Result<Negotiation> {
        server::negotiate("apache", private::PROGRAMS, lines, want, PrivateApache::start)
    }
    fn installed_lines(&self, installed: &TlsConfig) -> Option<Vec<String>> {
        Some(emit::installed_lines(installed))
    }
    fn keywords(&self) -> &'static [&'static str] {
        read::KEYWORDS
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::software::server::tests::{gives_the_answer, gives_the_tls12_answer, refused_in_the_clients_order};

    fn installed() -> bool {
        let ok = crate::discover::installed::find_program(private::PROGRAMS).is_some() && private::modules().is_some();
        if !ok {
            crate::testing::missing("apache2 with mod_ssl is not installed");
        }
        ok
    }

    /// The emitted lines in a real Apache: a default client negotiates the
    /// answer's first TLS 1.3 suite (ChaCha20, not its own first) over its
    /// first group.
    #[test]
    fn a_real_apache_with_the_emitted_lines_gives_a_default_client_the_answer() {
        if installed() {
            gives_the_answer(&Apache);
        }
    }

    /// Without `SSLHonorCipherOrder on` Apache follows the client: refused with
    /// what was negotiated.
    #[test]
    fn lines_that_leave_the_order_to_the_client_are_refused_with_what_was_negotiated() {
        if installed() {
            refused_in_the_clients_order(&Apache, |l| {
                l.into_iter().filter(|l| !l.starts_with("SSLHonorCipherOrder")).collect()
            });
        }
    }

    /// A TLS 1.2-only answer: its first suite (ECDSA ChaCha20) is negotiated.
    #[test]
    fn the_tls12_answer_is_negotiated_too() {
        if installed() {
            gives_the_tls12_answer(&Apache);
        }
    }
}
