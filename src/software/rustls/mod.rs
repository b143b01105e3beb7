//! rustls (0.23, aws-lc-rs provider): a Rust snippet that builds the provider
//! with the answer's suites and groups. Its parser is the linked rustls itself:
//! every constant the snippet names must be one this build's provider has, and
//! a rustls client built from exactly those constants, in that order, must
//! negotiate the answer's first choice with a private server.

pub mod emit;

use super::negotiated::{self, Negotiation, Want, Who};
use super::validate::{Checked, Refused};
use super::{Protocol, Target};
use crate::backend::openssl::tls::Protocol as Version;
use crate::backend::tls::{SelectedSuite, Selection, TlsLibrary};
use crate::discover::installed::Installed;
use crate::recommend::choice::Emitter;
use anyhow::Result;
use std::path::Path;
use std::time::Duration;

pub struct Rustls;

/// What a snippet names: suites (IANA), groups (canonical) and versions.
#[derive(Debug, PartialEq)]
struct Named {
    suites: Vec<String>,
    groups: Vec<String>,
    versions: Vec<Version>,
}

/// The `NAME`s of `prefix::NAME` items in the `vec![…]` of the line that starts
/// with `field:`.
fn items(lines: &[String], field: &str, prefix: &str) -> Option<Vec<String>> {
    let line = lines.iter().find(|l| l.trim_start().starts_with(&format!("{field}:")))?;
    let inside = line.split_once("vec![")?.1.rsplit_once(']')?.0;
    Some(
        inside
            .split(',')
            .map(str::trim)
            .filter(|i| !i.is_empty())
            .map(|i| i.strip_prefix(prefix).unwrap_or(i).to_string())
            .collect(),
    )
}

/// Reads the snippet back into what it names; a name that is not one of
/// rustls's constants is refused with the names it has.
fn read(lines: &[String]) -> Result<Named, Refused> {
    let unknown = |what: &str, n: &str, known: Vec<&str>| {
        Refused(format!(
            "rustls: the snippet names {what} {}, which {} has not (it has {})",
            crate::untrusted::shown(n),
            crate::backend::rustls::version(),
            known.join(", ")
        ))
    };
    let mut suites = Vec::new();
    for c in items(lines, "cipher_suites", "cipher_suite::").unwrap_or_default() {
        let iana = emit::SUITES.iter().find(|(_, k)| *k == c).map(|(i, _)| i.to_string());
        suites.push(iana.ok_or_else(|| unknown("the suite", &c, emit::SUITES.iter().map(|(_, k)| *k).collect()))?);
    }
    let mut groups = Vec::new();
    for c in items(lines, "kx_groups", "kx_group::").unwrap_or_default() {
        let g = emit::GROUPS.iter().find(|(_, _, k)| *k == c).map(|(_, g, _)| g.to_string());
        groups.push(g.ok_or_else(|| unknown("the group", &c, emit::GROUPS.iter().map(|(_, _, k)| *k).collect()))?);
    }
    let line = lines
        .iter()
        .find(|l| l.starts_with("let versions"))
        .map(String::as_str)
        .unwrap_or("");
    let mut versions = Vec::new();
    if line.contains("version::TLS13") {
        versions.push(Version::Tls13);
    }
    if line.contains("version::TLS12") {
        versions.push(Version::Tls12);
    }
    Ok(Named { suites, groups, versions })
}

impl Rustls {
    /// The linked rustls's client configuration from exactly what the snippet
    /// names: the suites and groups in its order, one version when it names one.
    fn client(&self, n: &Named) -> Result<std::sync::Arc<dyn crate::backend::tls::ClientConfig>> {
        let selection = Selection {
            protocol: (n.versions.len() == 1).then(|| n.versions[0]),
            suites: n
                .suites
                .iter()
                // rustls names suites by IANA name only.
                .map(|iana| SelectedSuite {
                    iana: iana.clone(),
                    openssl: String::new(),
                    tls13: !iana.contains("_WITH_"),
                })
                .collect(),
            groups: n.groups.clone(),
            native: None,
        };
        crate::backend::rustls::library::Rustls.client(&selection, false)
    }
}

impl Target for Rustls {
    fn emitter(&self) -> &'static dyn Emitter {
        &emit::Rustls
    }
    fn protocol(&self) -> Protocol {
        Protocol::Tls
    }
    fn reads_installed(&self) -> bool {
        false
    }
    fn read_installed(&self, _config_from: Option<&Path>) -> Result<Option<Installed>> {
        Ok(None)
    }
    /// Every constant the snippet names is one of the linked rustls's, and its
    /// provider builds from them.
    fn validate(&self, lines: &[String]) -> Result<Checked> {
        let named = read(lines)?;
        if named.suites.is_empty() && named.groups.is_empty() {
            return Err(Refused("rustls: the snippet names no cipher suite and no group".into()).into());
        }
        self.client(&named)
            .map_err(|e| Refused(format!("rustls refused the snippet's provider: {e:#}")))?;
        Ok(Checked::Parsed(format!(
            "{} built a client from its {} suites and {} groups",
            crate::backend::rustls::version(),
            named.suites.len(),
            named.groups.len()
        )))
    }
    /// A client of the linked rustls built from exactly the snippet's constants
    /// connects to the private recording server on 127.0.0.1 (it accepts
    /// everything and honours the client's order); what the server recorded
    /// must be the answer's first choice, among the groups that server's
    /// libssl has.
    fn negotiate(&self, lines: &[String], want: &Want) -> Result<Negotiation> {
        use crate::backend::recording::{RecordingServer, Spec};
        let within = match negotiated::time_for(Duration::from_secs(3)) {
            Ok(w) => w,
            Err(why) => return Ok(Negotiation::NotRun(why)),
        };
        let client = self.client(&read(lines)?)?;
        let server = RecordingServer::start(
            Spec {
                connections: 1,
                within,
                tls12_only: false,
            },
            crate::backend::recording::plain(),
        )?;
        let addr = std::net::SocketAddr::from(([127, 0, 0, 1], server.port()));
        if let Err(e) = client.connect(addr, None, within, None, false).map(|mut c| c.close()) {
            return Err(Refused(format!("rustls: rustls could not connect with the snippet's provider ({e})")).into());
        }
        let Some(got) = server.settled(Duration::from_secs(2)).into_iter().next() else {
            return Err(Refused("rustls: the private server recorded no handshake".into()).into());
        };
        let seen = negotiated::Seen::Tls {
            version: got.protocol,
            suite: got.suite,
            group: got.group,
        };
        let takes: Vec<String> = crate::backend::openssl::tls::supported_groups(&crate::backend::openssl::tls::PROBE_GROUPS)
            .into_iter()
            .map(str::to_string)
            .collect();
        let who = Who {
            software: "rustls",
            peer: "rustls",
            other_end_takes: Some(&takes),
        };
        Ok(Negotiation::Negotiated(negotiated::judge(&who, &seen, want)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recommend::choice::{testdata, Choice};

    fn want() -> Want {
        Want::new(&crate::recommend::choice_lists(&Choice::Tls(testdata::tls())))
    }

    /// The snippet reads back to the answer's lists; a constant rustls lacks is
    /// refused with the ones it has.
    #[test]
    fn the_snippet_reads_back_and_an_unknown_constant_is_refused() {
        let t = testdata::tls();
        let lines = Rustls.lines(&Choice::Tls(t.clone())).unwrap();
        let n = read(&lines).unwrap();
        let iana: Vec<String> = t.tls13.iter().chain(&t.tls12).map(|s| s.iana.clone()).collect();
        assert_eq!(n.suites, iana);
        assert_eq!(n.groups, ["X25519", "P-256", "P-384"]);
        assert_eq!(n.versions, [Version::Tls13, Version::Tls12]);
        let bad: Vec<String> = lines
            .iter()
            .map(|l| l.replace("TLS13_AES_128_GCM_SHA256", "TLS13_AES_128_CCM_SHA256"))
            .collect();
        let e = Rustls.validate(&bad).unwrap_err();
        let msg = &e.downcast_ref::<Refused>().unwrap_or_else(|| panic!("{e:#}")).0;
        assert!(
            msg.contains("names the suite TLS13_AES_128_CCM_SHA256, which rustls 0.23."),
            "{msg}"
        );
    }

    /// The linked rustls, built from the snippet, negotiates the answer's first
    /// suite (ChaCha20, not rustls's own first, AES-256-GCM) over its first
    /// group; with the order turned round it negotiates AES and is refused.
    #[test]
    fn the_linked_rustls_built_from_the_snippet_negotiates_the_answer() {
        let lines = Rustls.lines(&Choice::Tls(testdata::tls())).unwrap();
        match Rustls.validate(&lines).unwrap() {
            Checked::Parsed(how) => assert!(how.starts_with("rustls 0.23."), "{how}"),
            other => panic!("{other:?}"),
        }
        match Rustls.negotiate(&lines, &want()).unwrap() {
            Negotiation::Negotiated(said) => assert_eq!(
                said,
                "rustls negotiates TLSv1.3 TLS_CHACHA20_POLY1305_SHA256 over X25519 (the answer's first choice)"
            ),
            other => panic!("{other:?}"),
        }
        let turned: Vec<String> = lines
            .iter()
            .map(|l| {
                l.replace(
                    "cipher_suite::TLS13_CHACHA20_POLY1305_SHA256, cipher_suite::TLS13_AES_128_GCM_SHA256",
                    "cipher_suite::TLS13_AES_128_GCM_SHA256, cipher_suite::TLS13_CHACHA20_POLY1305_SHA256",
                )
            })
            .collect();
        assert_ne!(turned, lines);
        let e = Rustls.negotiate(&turned, &want()).unwrap_err();
        let msg = &e.downcast_ref::<Refused>().unwrap_or_else(|| panic!("{e:#}")).0;
        assert!(msg.starts_with("rustls: rustls negotiated TLSv1.3 TLS_AES_128_GCM_SHA256"), "{msg}");
    }
}
