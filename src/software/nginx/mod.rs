//! nginx: its lines (emit.rs), its installed configuration read with `nginx -T`
//! (read.rs), checked with `nginx -t` on a throw-away config.

pub mod emit;
pub mod read;

use super::negotiated::{Negotiation, Want};
use super::server;
use super::validate::{parse_with, Checked, Scratch};
use super::{Protocol, Target};
use crate::backend::nginx::PrivateNginx;
use crate::discover::installed::{Installed, TlsConfig};
use crate::recommend::choice::Emitter;
use anyhow::Result;
use std::path::{Path, PathBuf};

pub struct Nginx;

impl Target for Nginx {
    fn emitter(&self) -> &'static dyn Emitter {
        &emit::Nginx
    }
    fn protocol(&self) -> Protocol {
        Protocol::Tls
    }
    fn programs(&self) -> &'static [&'static str] {
        &["nginx"]
    }
    fn config_path(&self) -> Option<PathBuf> {
        Some(PathBuf::from(read::DEFAULT_FILE))
    }
    fn read_installed(&self, config_from: Option<&Path>) -> Result<Option<Installed>> {
        read::read(config_from)
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
    /// A private nginx (`backend::nginx`) started with the lines on 127.0.0.1,
    /// and one handshake by the installed libssl's default client: its usual peer.
    fn negotiate(&self, lines: &[String], want: &Want) -> Result<Negotiation> {
        server::negotiate("nginx", &["nginx"], lines, want, PrivateNginx::start)
    }
    fn installed_lines(&self, installed: &TlsConfig) -> Option<Vec<String>> {
        Some(emit::installed_lines(installed))
    }
    fn keywords(&self) -> &'static [&'static str] {
        read::KEYWORDS
    }
    fn ansible(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::software::server::tests::{gives_the_answer, gives_the_tls12_answer, installed, refused_in_the_clients_order};

    /// The emitted lines in a real nginx: a default client negotiates the
    /// answer's first TLS 1.3 suite (ChaCha20 here, not the client's own first,
    /// AES-256-GCM) over its first group.
    #[test]
    fn a_real_nginx_with_the_emitted_lines_gives_a_default_client_the_answer() {
        if installed(&["nginx"]) {
            gives_the_answer(&Nginx);
        }
    }

    /// Without `ssl_prefer_server_ciphers on` nginx follows the client, whose
    /// first TLS 1.3 suite is AES-256-GCM: the lines are refused with what was
    /// negotiated, never called the answer.
    #[test]
    fn lines_that_leave_the_order_to_the_client_are_refused_with_what_was_negotiated() {
        if installed(&["nginx"]) {
            refused_in_the_clients_order(&Nginx, |l| {
                l.into_iter().filter(|l| !l.starts_with("ssl_prefer_server_ciphers")).collect()
            });
        }
    }

    /// A TLS 1.2-only answer: its first suite (ECDSA ChaCha20) is negotiated.
    #[test]
    fn the_tls12_answer_is_negotiated_too() {
        if installed(&["nginx"]) {
            gives_the_tls12_answer(&Nginx);
        }
    }
}
