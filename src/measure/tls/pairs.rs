//! Library pairs (`--lib openssl,gnutls`, `--lib gnutls`, `--priority`): the
//! loopback subjects of `loopback.rs` (protocol × suite × group × certificate,
//! handshakes and bulk) through every client → server pair of the libraries
//! asked for, each end any `backend::tls::TlsLibrary`.
//!
//! - Results carry the client's library in `subject.library` and the server's in
//!   `subject.server_library`, so the report shows the interop matrix; a refused
//!   handshake is a failed record with the library's reason, a suite a library
//!   lacks an unsupported one.
//! - Bulk runs the wire protocol of `wire.rs` (command header, SHA-256 receipts with
//!   `--verify`), so any client interoperates with any server.
//! - `--priority`: every end whose library takes its own configuration text
//!   (GnuTLS: a priority string) uses exactly that text, every other end its
//!   library's default; the subject is what was negotiated.

use super::libraries::{library, pairs};
use super::probe::{bulk_probe, durations, HandshakeProbe, Refusals, Server};
use super::wire::{bulk_records, handshake_records};
use super::{Direction, Item, LoopbackPlan, Work};
use crate::backend::openssl::certs::{CertType, Identity};
use crate::backend::openssl::tls::Protocol;
use crate::backend::tls::{ClientConfig, Negotiated, Selection, ServerConfig, TlsLibrary};
use crate::catalog::Library;
use crate::error::UsageError;
use crate::measure::engine::sampler::{self, Rate};
use crate::measure::sink::Measurements;
use crate::model::{Kind, Metric, ResultRecord, Status, Subject};
use anyhow::{anyhow, bail, Result};
use serde_json::json;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A client's and a server's configuration for one subject.
type Ends = (Arc<dyn ClientConfig>, Arc<dyn ServerConfig>);

/// The library pairs of a loopback run (`--lib`), and `--priority`.
pub struct LibraryPairs {
    pub pairs: Vec<(Library, Library)>,
    /// `--priority`: every end whose library takes its own configuration text
    /// uses exactly this text (and every other library its default, so the text
    /// decides).
    pub priority: Option<String>,
    libs: BTreeMap<Library, Arc<dyn TlsLibrary>>,
}

impl LibraryPairs {
    pub fn new(libs: &[Library], priority: Option<&str>) -> Result<LibraryPairs> {
        let pairs = pairs(libs);
        let mut l = BTreeMap::new();
        for &(c, _) in &pairs {
            l.insert(c, library(c)?);
        }
        if let Some(text) = priority {
            let Some((native, _)) = crate::backend::libraries::takes_native(libs) else {
                return Err(UsageError::Invalid(format!(
                    "--priority is a library's own configuration text: add {}",
                    crate::backend::libraries::native_libs()
                ))
                .into());
            };
            // Checked by its library before anything runs: a typo is exit 2.
            l[&native]
                .native_suites(text)
                .unwrap_or_else(|| Err(anyhow!("{} takes no configuration text of its own", native.as_str())))?;
        }
        Ok(LibraryPairs {
            pairs,
            priority: priority.map(str::to_string),
            libs: l,
        })
    }

    pub fn settings(&self, plan: &LoopbackPlan) -> serde_json::Value {
        let mut v = plan.settings();
        v["libraries"] = json!(self
            .pairs
            .iter()
            .map(|(c, s)| format!("{}->{}", c.as_str(), s.as_str()))
            .collect::<Vec<_>>());
        if let Some(p) = &self.priority {
            v["priority"] = json!(p);
        }
        v
    }

    /// The ends for one item and pair. `Err` is a reason the pair cannot run it.
    fn ends(&self, item: &Item, pair: (Library, Library), id: &Identity, resumption: bool) -> Result<Ends> {
        let selection = match &self.priority {
            Some(p) => Selection {
                native: Some(p.clone()),
                ..Default::default()
            },
            None => item.selection(),
        };
        let client = self.libs[&pair.0].client(&selection, resumption).map_err(|e| anyhow!("{e:#}"))?;
        let server = self.libs[&pair.1].server(&selection, id).map_err(|e| anyhow!("{e:#}"))?;
        Ok((client, server))
    }

    fn subject(&self, item: &Item, plan: &LoopbackPlan, pair: (Library, Library)) -> Subject {
        let mut s = item.subject(plan);
        s.library = Some(pair.0.as_str().into());
        s.server_library = Some(pair.1.as_str().into());
        s
    }

    /// What a connection negotiated, against what the subject asked for (with
    /// `--priority`: the subject becomes whatever the string negotiated).
    fn seen(&self, item: &Item, subject: &mut Subject, got: &Negotiated) -> Result<()> {
        if self.priority.is_some() {
            negotiated_subject(subject, got);
            return Ok(());
        }
        item.check(got)
    }

    fn measure(&self, plan: &LoopbackPlan, item: &Item, pair: (Library, Library), id: &Identity, n: usize) -> Result<Vec<ResultRecord>> {
        let resumption = matches!(item.work, Work::Handshake { resumed: true });
        let (client, server_end) = self.ends(item, pair, id, resumption)?;
        let bulk = matches!(item.work, Work::Bulk(_));
        let server = Server::loopback(server_end, plan.threads, plan.timeout, bulk, Refusals::Keep)?;
        let mut subject = self.subject(item, plan, pair);
        let cfg = plan.sampler(item.work, n);
        let out = (|| -> Result<Vec<ResultRecord>> {
            Ok(match item.work {
                Work::Handshake { resumed } => {
                    let mut probes = Vec::new();
                    for _ in 0..plan.threads {
                        let check = |got: &Negotiated| self.seen(item, &mut subject, got);
                        probes.push(HandshakeProbe::new(
                            &client,
                            server.addr,
                            None,
                            plan.timeout,
                            (resumed, true),
                            check,
                        )?);
                    }
                    let m = sampler::measure(&mut probes, Rate::PerSecond, &cfg)?;
                    handshake_records(Kind::TlsHandshake, subject.clone(), &durations(&probes), &m)
                }
                Work::Bulk(direction) => {
                    let mut probes = Vec::new();
                    for _ in 0..plan.threads {
                        let check = |got: &Negotiated| self.seen(item, &mut subject, got);
                        let how = (direction, plan.write_size, plan.verify);
                        probes.push(bulk_probe(&*client, server.addr, plan.timeout, how, check)?);
                    }
                    let m = sampler::measure(&mut probes, Rate::PerSecond, &cfg)?;
                    bulk_records(subject.clone(), &probes, &m)
                }
            })
        })();
        // A refusal reads better with the server's side of it.
        // The server thread may still be failing its side.
        let until = Instant::now() + Duration::from_secs(1);
        while out.is_err() && server.refusal().is_none() && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(10));
        }
        let out = match (out, server.refusal()) {
            (Err(e), Some(why)) => bail!("{e:#} (server: {why})"),
            (out, _) => out?,
        };
        if let Some(e) = server.error() {
            bail!("the loopback server failed: {e}");
        }
        Ok(out)
    }
}

/// With `--priority`, the subject is what the string negotiated.
fn negotiated_subject(s: &mut Subject, got: &Negotiated) {
    s.protocol = Some(got.0.clone());
    s.suite = Some(got.1.clone());
    s.group = got.2.clone();
    let local = crate::discover::openssl::tls_suites().unwrap_or_default();
    s.openssl_name = local.iter().find(|l| l.iana == got.1).map(|l| l.openssl.clone());
    s.kex = None;
}

/// With `--priority`: one subject per certificate and work, the suite left to the string.
pub fn priority_items(plan: &LoopbackPlan, a: &crate::options::TlsOptions) -> Result<Vec<Item>> {
    let local = crate::measure::tls::local_suites()?;
    // A placeholder suite: the subject is rewritten with what was negotiated.
    let suite = local
        .iter()
        .find(|s| s.iana == "TLS_AES_128_GCM_SHA256")
        .or_else(|| local.first())
        .cloned()
        .ok_or_else(|| anyhow!("this OpenSSL lists no TLS suites"))?;
    let mut items = Vec::new();
    let directions: &[Direction] = if a.both_directions {
        &[Direction::Upload, Direction::Download]
    } else {
        &[Direction::Upload]
    };
    if !a.no_handshakes {
        for &c in &plan.certs {
            items.push(Item {
                protocol: Protocol::Tls13,
                suite: suite.clone(),
                group: None,
                cert: c,
                work: Work::Handshake { resumed: false },
            });
        }
        items.push(Item {
            protocol: Protocol::Tls13,
            suite: suite.clone(),
            group: None,
            cert: plan.certs[0],
            work: Work::Handshake { resumed: true },
        });
    }
    if !a.no_bulk {
        for d in directions {
            items.push(Item {
                protocol: Protocol::Tls13,
                suite: suite.clone(),
                group: None,
                cert: plan.certs[0],
                work: Work::Bulk(*d),
            });
        }
    }
    Ok(items)
}

/// Runs the loopback plan for every library pair; results go to the session.
/// Why `lib` cannot run `group` (the groups swept are those OpenSSL has; GnuTLS
/// may lack some, e.g. the ML-KEM groups), if it cannot.
fn lacks_group(lib: &dyn TlsLibrary, group: Option<&str>) -> Option<String> {
    let g = group?;
    (!lib.groups().iter().any(|h| h == g)).then(|| format!("{} does not implement the group {g}", lib.version()))
}

pub fn loopback(plan: &LoopbackPlan, g: &LibraryPairs, session: &mut Measurements) -> Result<()> {
    let np = g.pairs.len();
    let total: usize = plan.skipped.len() * np + plan.items.iter().map(|i| i.records().len()).sum::<usize>() * np;
    session.progress_start(total as u64);
    for (kind, subject, why) in &plan.skipped {
        for &pair in &g.pairs {
            let mut s = subject.clone();
            s.library = Some(pair.0.as_str().into());
            s.server_library = Some(pair.1.as_str().into());
            let metric = if *kind == Kind::TlsBulk {
                Metric::BytesPerSec
            } else {
                Metric::HandshakesPerSec
            };
            session.record(ResultRecord::not_ok(*kind, s, metric, Status::Unsupported, why.clone()))?;
        }
    }
    let n = plan.items.len() * np;
    let mut ids: BTreeMap<CertType, Identity> = BTreeMap::new();
    for item in &plan.items {
        for &pair in &g.pairs {
            if crate::interrupt::requested() {
                break;
            }
            session.progress_message(&format!("{}→{} {}", pair.0.as_str(), pair.1.as_str(), item.label()));
            let id = crate::measure::tls::identity(&mut ids, item.cert)?;
            let lacks = match g.priority {
                Some(_) => None,
                None => [pair.0, pair.1]
                    .iter()
                    .find_map(|l| g.libs[l].lacks(&item.suite.iana).or_else(|| lacks_group(&*g.libs[l], item.group))),
            };
            let records = if let Some(why) = lacks {
                Err((Status::Unsupported, why))
            } else {
                g.measure(plan, item, pair, id, n).map_err(|e| (Status::Failed, format!("{e:#}")))
            };
            match records {
                Ok(rs) => {
                    for r in rs {
                        session.record(r)?;
                    }
                }
                Err((status, why)) => {
                    let mut subject = g.subject(item, plan, pair);
                    if g.priority.is_some() {
                        // Nothing was negotiated: no suite to name.
                        (subject.protocol, subject.suite, subject.openssl_name, subject.kex) = (None, None, None, None);
                    }
                    for (kind, metric, mode) in item.records() {
                        let mut s = subject.clone();
                        s.mode = mode.map(str::to_string);
                        session.record(ResultRecord::not_ok(kind, s, metric, status, why.clone()))?;
                    }
                }
            }
        }
    }
    session.progress_finish();
    Ok(())
}
