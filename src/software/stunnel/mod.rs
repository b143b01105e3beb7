//! stunnel: its files are parsed (`/etc/stunnel/*.conf`). It has no check mode
//! and reads a service's lines when it starts it: they are checked by starting
//! a private stunnel with them (`backend::stunnel`).

pub mod emit;
pub mod read;

use super::negotiated::{Negotiation, Want};
use super::server;
use super::validate::{unchecked, Checked};
use super::{Protocol, Target};
use crate::backend::openssl::certs::{CertType, Identity};
use crate::backend::private::Spec;
use crate::backend::stunnel::{self, PROGRAMS};
use crate::discover::installed::{self as inst, Installed, TlsConfig};
use crate::recommend::choice::Emitter;
use anyhow::Result;
use std::path::Path;
use std::time::Duration;

pub struct Stunnel;

impl Target for Stunnel {
    fn emitter(&self) -> &'static dyn Emitter {
        &emit::Stunnel
    }
    fn protocol(&self) -> Protocol {
        Protocol::Tls
    }
    fn programs(&self) -> &'static [&'static str] {
        &["stunnel4", "stunnel"]
    }
    fn read_installed(&self, config_from: Option<&Path>) -> Result<Option<Installed>> {
        read::read(config_from)
    }
    /// stunnel has no check mode: a private stunnel started with the lines in
    /// a service is its parser (a line it refuses ends it, in its words).
    fn validate(&self, lines: &[String]) -> Result<Checked> {
        let Some(binary) = inst::find_program(PROGRAMS) else {
            return unchecked("stunnel is not installed");
        };
        let within = match super::negotiated::time_for(Duration::from_secs(2)) {
            Ok(w) => w,
            Err(why) => return unchecked(&why),
        };
        let identity = Identity::generate(CertType::EcdsaP256)?;
        let spec = Spec {
            binary: Path::new(&binary),
            tls_lines: &server::tls_lines(lines),
            identity: &identity,
            body: b"cipherbench",
            start_within: within,
        };
        match stunnel::start(&spec) {
            Ok(_) => Ok(Checked::Parsed(binary.rsplit('/').next().unwrap_or("stunnel").to_string())),
            Err(e) if crate::deadline::run_expired() || crate::interrupt::requested() => Err(e),
            Err(e) => Err(super::Refused(format!("stunnel refused the lines: {}", crate::untrusted::shown(&format!("{e:#}")))).into()),
        }
    }
    /// A private stunnel (`backend::stunnel`) started with the lines in its
    /// service on 127.0.0.1, and one handshake by the installed libssl's
    /// default client.
    fn negotiate(&self, lines: &[String], want: &Want) -> Result<Negotiation> {
        server::negotiate("stunnel", PROGRAMS, lines, want, stunnel::start)
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

    /// The emitted lines in a real stunnel: a default client negotiates the
    /// answer's first TLS 1.3 suite (ChaCha20, not its own first) over its
    /// first group.
    #[test]
    fn a_real_stunnel_with_the_emitted_lines_gives_a_default_client_the_answer() {
        if installed(PROGRAMS) {
            gives_the_answer(&Stunnel);
        }
    }

    /// Without `options = CIPHER_SERVER_PREFERENCE` stunnel follows the
    /// client: refused with what was negotiated.
    #[test]
    fn lines_that_leave_the_order_to_the_client_are_refused_with_what_was_negotiated() {
        if installed(PROGRAMS) {
            refused_in_the_clients_order(&Stunnel, |l| {
                l.into_iter().filter(|l| !l.contains("CIPHER_SERVER_PREFERENCE")).collect()
            });
        }
    }

    /// A TLS 1.2-only answer: its first suite (ECDSA ChaCha20) is negotiated.
    #[test]
    fn the_tls12_answer_is_negotiated_too() {
        if installed(PROGRAMS) {
            gives_the_tls12_answer(&Stunnel);
        }
    }
}
