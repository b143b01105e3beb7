//! HAProxy: read and checked with `haproxy -c -f` (the lines in a `global` section
//! of a minimal configuration).

pub mod emit;
pub mod read;

use super::negotiated::{Negotiation, Want};
use super::server;
use super::validate::{parse_with, Checked, Scratch};
use super::{Protocol, Target};
use crate::backend::haproxy;
use crate::discover::installed::{Installed, TlsConfig};
use crate::recommend::choice::Emitter;
use anyhow::Result;
use std::path::{Path, PathBuf};

pub struct Haproxy;

impl Target for Haproxy {
    fn emitter(&self) -> &'static dyn Emitter {
        &emit::Haproxy
    }
    fn protocol(&self) -> Protocol {
        Protocol::Tls
    }
    fn programs(&self) -> &'static [&'static str] {
        &["haproxy"]
    }
    fn config_path(&self) -> Option<PathBuf> {
        Some(PathBuf::from(read::DEFAULT_FILE))
    }
    fn read_installed(&self, config_from: Option<&Path>) -> Result<Option<Installed>> {
        read::read(config_from)
    }
    fn validate(&self, lines: &[String]) -> Result<Checked> {
        let body: String = lines.iter().map(|l| format!("    {l}\n")).collect();
        // A listener that is never opened: without one `haproxy -c` exits 2.
        let rest = "defaults\n    mode tcp\n    timeout connect 5s\n    timeout client 5s\n    timeout server 5s\n\nfrontend check\n    bind 127.0.0.1:9\n";
        let s = Scratch::new("haproxy.cfg", &format!("global\n{body}\n{rest}"))?;
        parse_with(&["haproxy"], &["-c", "-f", &s.path()])
    }
    /// A private HAProxy (`backend::haproxy`) started with the lines in its
    /// `global` section on 127.0.0.1, and one handshake by the installed
    /// libssl's default client.
    fn negotiate(&self, lines: &[String], want: &Want) -> Result<Negotiation> {
        server::negotiate("haproxy", &["haproxy"], lines, want, haproxy::start)
    }
    fn installed_lines(&self, installed: &TlsConfig) -> Option<Vec<String>> {
        Some(emit::installed_lines(installed))
    }
    fn keywords(&self) -> &'static [&'static str] {
        read::KEYWORDS
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::software::server::tests::{gives_the_answer, gives_the_tls12_answer, installed, refused_in_the_clients_order};

    /// The emitted lines in a real HAProxy: a default client negotiates the
    /// answer's first TLS 1.3 suite (ChaCha20, not its own first) over its
    /// first group.
    #[test]
    fn a_real_haproxy_with_the_emitted_lines_gives_a_default_client_the_answer() {
        if installed(&["haproxy"]) {
            gives_the_answer(&Haproxy);
        }
    }

    /// With `prefer-client-ciphers` HAProxy follows the client: refused with
    /// what was negotiated.
    #[test]
    fn lines_that_leave_the_order_to_the_client_are_refused_with_what_was_negotiated() {
        if installed(&["haproxy"]) {
            refused_in_the_clients_order(&Haproxy, |l| {
                l.into_iter()
                    .map(|l| match l.strip_prefix("ssl-default-bind-options ") {
                        Some(o) => format!("ssl-default-bind-options prefer-client-ciphers {o}"),
                        None => l,
                    })
                    .collect()
            });
        }
    }

    /// A TLS 1.2-only answer: its first suite (ECDSA ChaCha20) is negotiated.
    #[test]
    fn the_tls12_answer_is_negotiated_too() {
        if installed(&["haproxy"]) {
            gives_the_tls12_answer(&Haproxy);
        }
    }
}
