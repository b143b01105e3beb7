//! GnuTLS's own part of `cipherbench tls` (the library itself is
//! `backend::gnutls`, a `backend::tls::TlsLibrary` like OpenSSL; library pairs
//! are `pairs.rs`):
//!
//! - `--priority`: a user's priority string, checked (a typo is exit 2).
//! - `--connect` with GnuTLS: which suites of the priority string the server
//!   accepts (one per handshake) and handshake rates per accepted suite.
//! - `--serve ADDR`: the benchmark server alone, for a peer such as `gnutls-cli`.
//! - `list tls --lib gnutls`: what a priority string resolves to.

pub use super::libraries::{pairs, user_priority};
pub use super::pairs::{loopback, priority_items, GnutlsPlan};
pub use super::RemotePlan;

use super::libraries::library;
use super::probe::{durations, HandshakeProbe, Log, Refusals, Server};
use super::wire::{handshake_records, record_or_fail};
use crate::backend::gnutls::library::names as gnutls_names;
use crate::backend::gnutls::session::{Priority, SuiteInfo};
use crate::backend::openssl::certs::Identity;
use crate::backend::openssl::tls::ConnectError;
use crate::backend::tls::{Negotiated, Selection};
use crate::catalog::Library;
use crate::error::UsageError;
use crate::measure::engine::sampler::{self, Rate, SamplerConfig};
use crate::measure::sink::Measurements;
use crate::model::{Kind, Metric, ResultRecord, Subject};
use crate::units::Seconds;
use anyhow::{anyhow, bail, Context, Result};
use serde_json::json;
use std::net::{SocketAddr, TcpListener};
use std::sync::Arc;
use std::time::Duration;

// ---------------------------------------------------------------------------
// Remote (--connect) with a GnuTLS client

/// The run's settings for a server measured through a GnuTLS client.
pub fn settings(plan: &RemotePlan) -> serde_json::Value {
    json!({
        "mode": "remote",
        "target": plan.target,
        "sni": plan.sni,
        "library": plan.lib.name(),
        "priority": plan.priority.as_ref().map(|p| p.text()),
        "threads": plan.threads,
        "timeout_seconds": plan.timeout.as_secs_f64(),
        "budget_seconds": plan.budget.0,
    })
}

/// A selection that is exactly a priority string.
fn native(text: &str) -> Selection {
    Selection {
        native: Some(text.to_string()),
        ..Default::default()
    }
}

/// The priority string that offers one suite of `base` (and its protocol family).
fn one_suite(base: &str, s: &SuiteInfo) -> String {
    if s.min_version == "TLS1.3" {
        format!("{base}:-VERS-ALL:+VERS-TLS1.3:-CIPHER-ALL:+{}", s.cipher)
    } else {
        format!(
            "{base}:-VERS-TLS1.3:-CIPHER-ALL:+{}:-MAC-ALL:+{}:-KX-ALL:+{}",
            s.cipher, s.mac, s.kx
        )
    }
}

fn gnutls_subject(protocol: &str, iana: &str, threads: usize) -> Subject {
    let local = crate::discover::openssl::tls_suites().unwrap_or_default();
    Subject {
        protocol: Some(protocol.to_string()),
        suite: Some(iana.to_string()),
        openssl_name: local.iter().find(|l| l.iana == iana).map(|l| l.openssl.clone()),
        library: Some("gnutls".into()),
        threads: Some(threads),
        ..Default::default()
    }
}

/// Which suites of the priority string the server accepts (one per handshake), then
/// handshake rates per accepted suite.
pub fn remote(plan: &RemotePlan, session: &mut Measurements, progress: &dyn Fn(&str)) -> Result<()> {
    let t = &plan.target;
    let priority = plan.priority.as_ref().ok_or_else(|| anyhow!("no GnuTLS priority string to walk"))?;
    progress(&format!("reaching {t}"));
    if let Err(e) = plan.offer(&native(priority.text())) {
        return Err(super::unreachable(t, e, plan.timeout, |e| {
            format!("{t} refused a GnuTLS handshake with priority '{}': {e}", priority.text())
        }));
    }
    let names = gnutls_names()?;
    let suites = priority.suites();
    session.progress_start((suites.len() * (1 + 2 * plan.handshakes as usize)) as u64);
    let mut accepted: Vec<(String, String, String)> = Vec::new();
    for s in &suites {
        if crate::interrupt::requested() {
            break;
        }
        let iana = names.iana_of(s);
        session.progress_message(&format!("{t}: {iana}"));
        let text = one_suite(priority.text(), s);
        let family = if s.min_version == "TLS1.3" { "TLSv1.3" } else { "TLSv1.2" };
        let (protocol, refusal) = match Priority::new(&text) {
            Err(e) => (family.to_string(), Some(e.to_string())),
            Ok(_) => match plan.offer(&native(&text)) {
                Ok((v, got, _)) if got == iana => {
                    accepted.push((v.clone(), iana.clone(), text.clone()));
                    (v, None)
                }
                Ok((v, got, _)) => (v, Some(format!("offered alone, yet {got} was negotiated"))),
                Err(ConnectError::Rejected(e)) => (family.to_string(), Some(e)),
                Err(e) => bail!("{t}: {e} while enumerating its suites"),
            },
        };
        let subject = gnutls_subject(&protocol, &iana, 1);
        session.record(ResultRecord::accepted(Kind::TlsAccept, subject, refusal.is_none(), refusal))?;
    }
    if plan.handshakes {
        let cfg = crate::measure::plans::share(Seconds(plan.budget.0 * 0.9), accepted.len().max(1));
        let cfg = SamplerConfig { max_units: 10_000, ..cfg };
        for (protocol, iana, text) in &accepted {
            if crate::interrupt::requested() {
                break;
            }
            session.progress_message(&format!("{protocol} {iana} handshakes"));
            let mut subject = gnutls_subject(protocol, iana, plan.threads);
            subject.op = Some("full".into());
            let r = (|| -> Result<Vec<ResultRecord>> {
                let client = plan.lib.client(&native(text), false)?;
                let mut probes = Vec::new();
                for _ in 0..plan.threads {
                    let any = |_: &Negotiated| Ok(());
                    probes.push(HandshakeProbe::new(
                        &client,
                        plan.addr,
                        plan.sni.as_deref(),
                        plan.timeout,
                        (false, false),
                        any,
                    )?);
                }
                let m = sampler::measure(&mut probes, Rate::PerSecond, &cfg)?;
                let mut s = subject.clone();
                s.group = probes.last().and_then(|p| p.negotiated.2.clone());
                Ok(handshake_records(Kind::TlsHandshake, s, &durations(&probes), &m))
            })();
            let metrics = [(Metric::HandshakesPerSec, None), (Metric::Seconds, Some("latency"))];
            record_or_fail(session, r, &subject, &metrics, Kind::TlsHandshake)?;
        }
    }
    session.progress_finish();
    Ok(())
}

// ---------------------------------------------------------------------------
// --serve

/// `tls --serve ADDR`: the benchmark server alone until Ctrl-C. Prints the address
/// it listens on, then one line per connection (negotiated protocol, suite, group,
/// or why the handshake failed).
pub fn serve(a: &crate::options::TlsOptions, addr: &str, quiet: bool) -> Result<()> {
    let sa: SocketAddr = addr
        .parse()
        .map_err(|_| UsageError::Invalid(format!("--serve wants IP:PORT (e.g. 127.0.0.1:4433), got '{addr}'")))?;
    let libs: Vec<Library> = pairs(&a.libraries).into_iter().filter(|(c, s)| c == s).map(|(c, _)| c).collect();
    let [lib] = libs[..] else {
        return Err(UsageError::Invalid(format!("--serve runs one library: {}", crate::backend::libraries::every_lib())).into());
    };
    let selection = match (&a.priority, crate::backend::libraries::native_text(lib)) {
        (Some(_), None) => {
            return Err(UsageError::Invalid(format!(
                "--priority is a library's own configuration text: use {}",
                crate::backend::libraries::native_libs()
            ))
            .into())
        }
        (p, Some(_)) => native(user_priority(p.as_deref().unwrap_or("NORMAL"))?.text()),
        (None, None) => Selection::default(),
    };
    let cert = crate::measure::tls::parse_certs(&a.certs)?[0];
    let timeout = Duration::from_secs_f64(a.timeout.0);
    let id = Identity::generate(cert)?;
    let tls = library(lib)?;
    let end = tls.server(&selection, &id)?;
    let listener = TcpListener::bind(sa).with_context(|| format!("cannot listen on {sa}"))?;
    let local = listener.local_addr()?;
    let log: Log = Arc::new(move |m: &str| {
        if !quiet {
            eprintln!("{}", crate::untrusted::for_terminal(m));
        }
    });
    let server = Server::start(listener, end, a.threads as usize, timeout, false, Refusals::Log(log))?;
    let version = tls.version();
    // Always printed: a peer (or test) needs the port.
    eprintln!(
        "cipherbench: serving TLS with {version}{} and a {} certificate on {local}; Ctrl-C stops",
        a.priority.as_deref().map(|p| format!(", priority '{p}'")).unwrap_or_default(),
        cert.name()
    );
    server.wait();
    Ok(())
}

// ---------------------------------------------------------------------------
// list tls --lib gnutls

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::gnutls::library::{gnutls_group, priority_text};
    use crate::backend::openssl::certs::CertType;
    use crate::backend::openssl::tls::Protocol;
    use crate::measure::tls::{Item, Work};

    #[test]
    fn gnutls_pairs_cover_both_directions() {
        let (o, g) = (Library::DEFAULT, crate::backend::libraries::named("gnutls").unwrap());
        assert_eq!(pairs(&[g]), [(g, g)]);
        assert_eq!(pairs(&[o, g, o]), [(o, o), (o, g), (g, o), (g, g)]);
    }

    /// Each subject's priority string resolves to exactly its one suite.
    #[test]
    fn gnutls_item_priority_offers_exactly_the_suite() {
        let names = gnutls_names().unwrap();
        let local = crate::measure::tls::local_suites().unwrap();
        for (iana, protocol, group, cert) in [
            ("TLS_AES_128_GCM_SHA256", Protocol::Tls13, Some("X25519"), CertType::Rsa2048),
            ("TLS_CHACHA20_POLY1305_SHA256", Protocol::Tls13, Some("P-384"), CertType::EcdsaP256),
            (
                "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA",
                Protocol::Tls12,
                Some("P-256"),
                CertType::Rsa2048,
            ),
            (
                "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
                Protocol::Tls12,
                Some("X25519"),
                CertType::EcdsaP384,
            ),
            (
                "TLS_DHE_RSA_WITH_AES_128_GCM_SHA256",
                Protocol::Tls12,
                Some("ffdhe2048"),
                CertType::Rsa2048,
            ),
            ("TLS_RSA_WITH_AES_128_GCM_SHA256", Protocol::Tls12, None, CertType::Rsa2048),
        ] {
            let suite = local.iter().find(|s| s.iana == iana).unwrap().clone();
            let item = Item {
                protocol,
                suite,
                group,
                cert,
                work: Work::Handshake { resumed: false },
            };
            assert!(names.by_iana(iana).is_some(), "GnuTLS lacks {iana}");
            let text = priority_text(&item.selection(), &names).unwrap();
            let p = Priority::new(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
            let got: Vec<String> = p.suites().iter().map(|s| names.iana_of(s)).collect();
            assert_eq!(got, [iana], "{text}");
            if let Some(gr) = group {
                assert_eq!(p.groups()[0], gnutls_group(gr).trim_start_matches("GROUP-"), "{text}");
            }
        }
        assert!(names.by_iana("TLS_ECDHE_ECDSA_WITH_ARIA_128_GCM_SHA256").is_none());
    }
}
