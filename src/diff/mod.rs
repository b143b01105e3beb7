//! The answer as a diff: installed → negotiated → measured → recommended → diff.
//!
//! Users do not start from nothing: their sshd, nginx or system OpenSSL already
//! negotiates something. This module reads that ([`crate::discover::installed`]),
//! works out what the usual peer negotiates with it ([`negotiate`]), names that
//! choice as subjects of the run ([`subjects`]; the measure stage measures them
//! with the same probes as everything else, and a local server's throughput
//! through private instances of it, as [`through`] plans them), and sets it
//! beside the recommendation: the measured change with intervals (or
//! "no measurable gain"), the security findings fixed and introduced, and the lines
//! as a unified diff against the real file ([`patch`]). `check` ([`check`]) turns
//! the same diff into findings and an exit code for CI and monitoring.

pub mod check;
mod figures;
pub mod names;
pub mod negotiate;
pub mod patch;
pub mod remote;
pub mod render;
mod steps;
pub mod subjects;
pub mod through;

#[cfg(test)]
use figures::figures;
pub use figures::{same_alg, same_choice, through_cpu_figure, through_figure, through_nzbget_figure};
pub use steps::*;

use crate::discover::installed::{Config, Installed, SshConfig};
use crate::judge::{Domain, Knowledge, Level, Policy};
use crate::model::{Document, Now, RecommendationRecord, ResultRecord};
use crate::recommend::{Outcome, Recommendation};
use negotiate::{Negotiated, TlsOffer};
use serde::Serialize;
use std::path::PathBuf;

/// What one end offers, resolved to lists.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[serde(tag = "protocol", rename_all = "lowercase")]
pub enum Offer {
    Tls(TlsOffer),
    Ssh(SshConfig),
}

/// The installed configuration, resolved, with what its usual peer negotiates.
#[derive(Debug, Clone)]
pub struct Current {
    pub installed: Installed,
    pub offer: Offer,
    /// The usual peer, in words.
    pub peer: String,
    pub peer_offer: Offer,
    pub negotiated: Result<Negotiated, String>,
    /// A remote server: the recommendation counts only within what it accepts.
    pub within_offer: bool,
}

/// The AEAD SSH ciphers (MAC implicit) of the local client, or the usual ones.
pub fn ssh_aead() -> Vec<String> {
    crate::discover::openssh::discover().map(|o| o.aead).unwrap_or_else(|_| {
        ["chacha20-poly1305@openssh.com", "aes128-gcm@openssh.com", "aes256-gcm@openssh.com"]
            .iter()
            .map(|s| s.to_string())
            .collect()
    })
}

/// Resolves an installed configuration and negotiates it with its usual peer.
pub fn current(installed: Installed, k: &Knowledge, peer_ssh: Option<&Installed>) -> anyhow::Result<Current> {
    match &installed.config {
        Config::Tls(t) => {
            let offer = match (negotiate::tls_offer(t, k), &t.connects_to) {
                (Ok(o), _) => o,
                // A client whose list its library refuses connects to nothing: that
                // is the finding (NZBGet: "Could not select cipher for TLS").
                (Err(e), Some(server)) if !t.server => {
                    let server_offer = negotiate::default_openssl_peer(true)?;
                    return Ok(Current {
                        offer: Offer::Tls(negotiate::TlsOffer {
                            protocols: Vec::new(),
                            suites: Vec::new(),
                            groups: Vec::new(),
                            server_order: false,
                            group_tiers: Vec::new(),
                            key_shares: Vec::new(),
                        }),
                        peer: format!("its server {server}"),
                        peer_offer: Offer::Tls(server_offer),
                        negotiated: Err(format!("{} cannot connect to it: {e:#}", cannot_connect_who(installed.software))),
                        installed,
                        within_offer: false,
                    });
                }
                (Err(e), _) => return Err(e),
            };
            let (peer, peer_offer, negotiated) = if t.server {
                let client = negotiate::default_openssl_peer(false)?;
                let (peer, n) = negotiate::server_now(&offer, t.endpoint.as_ref(), &client);
                (peer, client, n)
            } else {
                let server = negotiate::default_openssl_peer(false)?;
                let n = negotiate::tls(&server, &offer);
                ("a default OpenSSL server".to_string(), server, n)
            };
            Ok(Current {
                offer: Offer::Tls(offer),
                peer,
                peer_offer: Offer::Tls(peer_offer),
                negotiated,
                installed,
                within_offer: false,
            })
        }
        Config::Ssh(s) => {
            let aead = ssh_aead();
            // The other end. sshd's: a default client (this machine's ssh with no
            // configuration, `-F /dev/null`), the client that sshd's usual peers
            // run, and the one its lines are run with (target/sshd.rs): what it
            // negotiates with the installed lists is "now", with the emitted ones
            // the prediction, whatever Host block this machine's own client has.
            // The client's: this machine's sshd.
            let other = match peer_ssh {
                _ if s.server => crate::software::ssh::read::read_default()
                    .map_err(|e| anyhow::anyhow!("no default ssh client to negotiate with: {e:#}"))?,
                Some(p) => p.clone(),
                None => match crate::software::read_installed("sshd", None) {
                    Ok(Some(o)) => o,
                    // A client-only machine: the client is read all the same.
                    Ok(None) => {
                        let s = s.clone();
                        return Ok(without_sshd(installed, &s, &anyhow::anyhow!("no sshd is installed here")));
                    }
                    // The client's own configuration (`ssh -G`) does not depend on
                    // sshd: it is kept, and only what it negotiates is unknown.
                    Err(e) => {
                        let s = s.clone();
                        return Ok(without_sshd(installed, &s, &e));
                    }
                },
            };
            let Config::Ssh(o) = &other.config else {
                anyhow::bail!("not an SSH configuration")
            };
            let n = if s.server {
                negotiate::ssh(s, o, &aead)
            } else {
                negotiate::ssh(o, s, &aead)
            };
            Ok(Current {
                peer: if s.server {
                    format!("a default ssh client ({})", other.source)
                } else {
                    format!("this machine's sshd ({})", other.source)
                },
                offer: Offer::Ssh(s.clone()),
                peer_offer: Offer::Ssh(o.clone()),
                negotiated: n,
                installed,
                within_offer: false,
            })
        }
    }
}

/// How a negotiation that could not be modelled begins (its peer could not be
/// read): not a finding that the configuration negotiates nothing.
pub const PEER_UNREAD: &str = "not known: ";

/// The ssh client's configuration when its usual peer, this machine's sshd,
/// could not be read (`why`): its offer and findings stand, what it negotiates
/// is not known, and the note says why in sshd's words, not the client's.
fn without_sshd(mut installed: Installed, s: &crate::discover::installed::SshConfig, why: &anyhow::Error) -> Current {
    let why = format!("{why:#}");
    installed.notes.push(format!(
        "what ssh negotiates is not known: its usual peer, this machine's sshd, could not be read ({why}); ssh's own configuration does not depend on sshd and was read"
    ));
    Current {
        peer: "this machine's sshd (not read)".to_string(),
        offer: Offer::Ssh(s.clone()),
        peer_offer: Offer::Ssh(crate::discover::installed::SshConfig {
            server: true,
            ..Default::default()
        }),
        negotiated: Err(format!("{PEER_UNREAD}this machine's sshd could not be read ({why})")),
        installed,
        within_offer: false,
    }
}

/// The software's own name in a sentence.
fn cannot_connect_who(software: &str) -> &str {
    match software {
        "nzbget" => "NZBGet",
        "curl" => "curl",
        other => other,
    }
}

/// One offered option with its grade.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Graded {
    pub list: String,
    pub name: String,
    pub level: Level,
    pub allowed: bool,
    /// Why it is refused, with cited references, when it is.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub reasons: Vec<String>,
}

/// A measured figure.
#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
pub struct Figure {
    pub median: f64,
    pub ci95_low: f64,
    pub ci95_high: f64,
}

impl Figure {
    fn of(r: &ResultRecord) -> Option<Figure> {
        Some(Figure {
            median: r.median?,
            ci95_low: r.ci95_low?,
            ci95_high: r.ci95_high?,
        })
    }
}

/// The relative change of one metric from now to the recommendation (+0.25: 25 %
/// better), with its interval from the two 95 % intervals.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Change {
    /// `throughput`, `server CPU per GB`, `client CPU per GB`, `handshake`.
    pub metric: String,
    /// `bytes_per_sec`, `seconds` ...
    pub unit: String,
    pub higher_is_better: bool,
    pub now: Option<Figure>,
    pub recommended: Option<Figure>,
    pub gain: Option<f64>,
    pub gain_low: Option<f64>,
    pub gain_high: Option<f64>,
    /// Beyond the intervals (the gain interval excludes zero).
    pub measurable: bool,
    /// In words: `+24 % (18 – 31 %)`, `no measurable gain`, `not measured`, `unchanged`.
    pub verdict: String,
    /// How the figures were measured, when not as the rest of the run was (a
    /// throughput measured through a private server: `measure::tls::through`'s `how`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub how: Option<String>,
}

impl Change {
    fn new(metric: &str, unit: &str, higher: bool, now: Option<Figure>, rec: Option<Figure>, same: bool) -> Change {
        let mut c = Change {
            metric: metric.into(),
            unit: unit.into(),
            higher_is_better: higher,
            now,
            recommended: rec,
            gain: None,
            gain_low: None,
            gain_high: None,
            measurable: false,
            verdict: String::new(),
            how: None,
        };
        if same {
            c.gain = Some(0.0);
            c.verdict = "the same choice".into();
            return c;
        }
        let (Some(n), Some(r)) = (now, rec) else {
            c.verdict = "not measured".into();
            return c;
        };
        if n.ci95_low == n.ci95_high && r.ci95_low == r.ci95_high {
            let g = if higher { r.median / n.median } else { n.median / r.median };
            c.gain = Some(g - 1.0);
            c.verdict = format!("{} (medians only: no interval, so not called a gain)", pct(g - 1.0));
            return c;
        }
        c.gain_from_intervals(n, r);
        c
    }

    /// Sets the gain (a fraction: +0.25 is 25 % better) with its interval, and the
    /// verdict: measurable when the interval excludes zero, else "no measurable
    /// gain" and `why`.
    fn set_gain(&mut self, g: f64, lo: f64, hi: f64, why: &str) {
        self.gain = Some(g);
        self.gain_low = Some(lo);
        self.gain_high = Some(hi);
        self.measurable = lo > 0.0 || hi < 0.0;
        self.verdict = if self.measurable {
            format!("{} ({} to {})", pct(g), pct(lo), pct(hi))
        } else {
            format!("no measurable gain (median {}, but {why}: {} to {})", pct(g), pct(lo), pct(hi))
        };
    }

    /// The throughput change measured through two private instances of `sw`
    /// in turns: the gain is the median of neighbouring slices' ratios
    /// (`measure::tls::through`'s `paired_gain`), which cancels what moved the
    /// whole machine during the run, as a load generator's before/after rounds do;
    /// the figures stay each instance's own.
    fn through(self, sw: crate::measure::tls::through::Software, paired: Option<(f64, f64, f64, u64)>) -> Change {
        let how = sw.how();
        self.measured_through(&how, "paired slices", paired)
    }

    /// The download-rate change measured through two private NZBGet instances
    /// in turns (`measure::tls::nzbget`): the gain is the median of the paired
    /// rounds' ratios, as [`Change::through`]'s.
    fn through_nzbget_rounds(self, paired: Option<(f64, f64, f64, u64)>) -> Change {
        self.measured_through(crate::measure::tls::nzbget::HOW, "paired rounds", paired)
    }

    fn measured_through(mut self, how: &str, pairs_are: &str, paired: Option<(f64, f64, f64, u64)>) -> Change {
        self.how = Some(how.to_string());
        if let Some((g, lo, hi, pairs)) = paired {
            self.set_gain(g, lo, hi, &format!("the interval of {pairs} {pairs_are} reaches zero"));
            self.unless_too_wide(1.0 + g, 1.0 + lo, 1.0 + hi);
            self.how = Some(format!("{how}; gain from {pairs} {pairs_are}"));
        }
        self
    }
}

/// A fraction as a signed percentage, or "unbounded".
fn pct(x: f64) -> String {
    if x.is_finite() {
        format!("{:+.0} %", x * 100.0)
    } else {
        "unbounded".to_string()
    }
}

/// The paired gain of the step through a private `software` (gain, low, high,
/// pairs), when it compared exactly these two suites.
fn paired_through_gain(doc: &Document, software: &str, now: &Negotiated, rec: &Negotiated) -> Option<(f64, f64, f64, u64)> {
    paired_gain_of(doc, &format!("through_{software}"), now, rec)
}

/// The paired gain a through step stored under `key` (`through_nginx`,
/// `through_nzbget` ...), when it compared exactly these two suites.
fn paired_gain_of(doc: &Document, key: &str, now: &Negotiated, rec: &Negotiated) -> Option<(f64, f64, f64, u64)> {
    let (Negotiated::Tls { suite: n, .. }, Negotiated::Tls { suite: r, .. }) = (now, rec) else {
        return None;
    };
    let p = doc.run.settings.get(key)?.get("paired_gain")?;
    if !same_alg(p.get("now")?.as_str()?, n) || !same_alg(p.get("recommended")?.as_str()?, r) {
        return None;
    }
    let f = |k: &str| p.get(k).and_then(|v| v.as_f64());
    Some((f("gain")?, f("gain_low")?, f("gain_high")?, p.get("pairs")?.as_u64()?))
}

/// A security finding: an option the policy refuses.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Finding {
    pub list: String,
    pub name: String,
    pub level: Level,
    /// The reasons, each with its cited references.
    pub reasons: Vec<String>,
}

/// One software's diff.
#[derive(Debug, Clone, Serialize)]
pub struct SoftwareDiff {
    pub software: String,
    pub file: Option<PathBuf>,
    pub source: String,
    pub notes: Vec<String>,
    pub peer: String,
    /// What the usual peer negotiates now.
    pub now: Option<Negotiated>,
    /// Why it negotiates nothing, when it does not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub now_error: Option<String>,
    /// Everything the installed configuration offers, with grades.
    pub offered: Vec<Graded>,
    pub recommended: Option<Negotiated>,
    pub changes: Vec<Change>,
    pub fixed: Vec<Finding>,
    pub introduced: Vec<Finding>,
    /// Every option the change adds to what is offered now, and every one it takes
    /// away (allowed or not): `list name`.
    pub adds: Vec<String>,
    pub removes: Vec<String>,
    pub lines: Vec<String>,
    /// When it negotiates nothing: the recommended lines as they go into its file
    /// (NZBGet's `Server2.Cipher=` for the server that was read).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub fix: Vec<String>,
    pub patch: Option<String>,
    pub nothing_to_change: bool,
    pub policy: String,
}

fn graded(k: &Knowledge, policy: &Policy, list: &str, domain: Domain, name: &str) -> Graded {
    let v = k.judge(domain, name);
    let d = policy.allows(&v);
    let mut reasons: Vec<String> = Vec::new();
    if !d.allowed {
        // The reasons that make it fall short of the policy; else the policy's own words.
        for r in v.reasons.iter().filter(|r| r.ceiling < policy.min_level) {
            let refs: Vec<&str> = r.references.iter().map(|x| x.id.as_str()).collect();
            reasons.push(if refs.is_empty() {
                r.text.clone()
            } else {
                format!("{} [{}]", r.text, refs.join(", "))
            });
        }
        if reasons.is_empty() {
            reasons.extend(d.refusals.iter().cloned());
        }
    }
    Graded {
        list: list.into(),
        name: name.into(),
        level: v.level,
        allowed: d.allowed,
        reasons,
    }
}

/// Every option an offer holds, graded under `policy`.
pub fn grade_offer(offer: &Offer, k: &Knowledge, policy: &Policy) -> Vec<Graded> {
    let mut out = Vec::new();
    match offer {
        Offer::Tls(t) => {
            for p in &t.protocols {
                out.push(graded(k, policy, "protocols", Domain::Protocol, p));
            }
            for s in &t.suites {
                let (list, d) = if s.tls13() {
                    ("tls13_suites", Domain::Tls13Suite)
                } else {
                    ("tls12_suites", Domain::Tls12Suite)
                };
                out.push(graded(k, policy, list, d, &s.iana));
            }
            for g in &t.groups {
                out.push(graded(k, policy, "groups", Domain::Group, g));
            }
        }
        Offer::Ssh(s) => {
            for (list, d, v) in [
                ("ssh_ciphers", Domain::SshCipher, &s.ciphers),
                ("ssh_macs", Domain::SshMac, &s.macs),
                ("ssh_kex", Domain::SshKex, &s.kex),
                ("ssh_hostkeys", Domain::SshHostkey, &s.hostkeys),
            ] {
                for n in v {
                    out.push(graded(k, policy, list, d, n));
                }
            }
        }
    }
    out
}

/// The recommended configuration as an offer (the emitters enforce server order).
pub fn recommended_offer(r: &Recommendation, current: &Offer, k: &Knowledge) -> Offer {
    let list = |n: &str| r.choice.get(n).cloned().unwrap_or_default();
    match current {
        Offer::Tls(now) => {
            let mut suites = Vec::new();
            for n in list("tls13_suites").iter().chain(list("tls12_suites").iter()) {
                if let Some(s) = k.tls_suite(n) {
                    suites.push(crate::software::openssl::read::OfferedSuite {
                        iana: s.iana.clone(),
                        openssl: s.openssl.clone().unwrap_or_else(|| s.iana.clone()),
                        min_protocol: if s.is_tls13() { "TLSv1.3".into() } else { "TLSv1.2".into() },
                    });
                }
            }
            let groups: Vec<String> = list("groups")
                .iter()
                .map(|g| crate::aliases::group_name(g).map_or_else(|| g.clone(), str::to_string))
                .collect();
            Offer::Tls(TlsOffer {
                protocols: list("protocols"),
                suites,
                group_tiers: negotiate::emitted_tiers(k, &groups),
                groups: if groups.is_empty() { now.groups.clone() } else { groups },
                server_order: true,
                key_shares: Vec::new(),
            })
        }
        Offer::Ssh(now) => {
            // sshd's lines: within its defaults (`ssh_server_*` where they differ).
            // An empty list is no line (left out, or sshd's defaults unknown): the
            // installed list stays.
            let list = |name: &str, installed: &Vec<String>| match negotiate::server_list(&r.choice, now.server, name) {
                l if l.is_empty() => installed.clone(),
                l => l,
            };
            Offer::Ssh(SshConfig {
                server: now.server,
                ciphers: list("ciphers", &now.ciphers),
                macs: list("macs", &now.macs),
                kex: list("kex", &now.kex),
                hostkeys: list("hostkeys", &now.hostkeys),
            })
        }
    }
}

/// `rec` narrowed to what the server offers (a remote server: what it accepts).
pub fn within(rec: &Offer, server: &Offer) -> Offer {
    match (rec, server) {
        (Offer::Tls(r), Offer::Tls(s)) => Offer::Tls(TlsOffer {
            protocols: r.protocols.iter().filter(|p| s.protocols.contains(p)).cloned().collect(),
            suites: r
                .suites
                .iter()
                .filter(|x| s.suites.iter().any(|y| y.iana == x.iana))
                .cloned()
                .collect(),
            groups: r
                .groups
                .iter()
                .filter(|g| s.groups.is_empty() || s.groups.contains(g))
                .cloned()
                .collect(),
            server_order: r.server_order,
            group_tiers: r
                .group_tiers
                .iter()
                .map(|t| t.iter().filter(|g| s.groups.is_empty() || s.groups.contains(g)).cloned().collect())
                .filter(|t: &Vec<String>| !t.is_empty())
                .collect(),
            key_shares: r.key_shares.clone(),
        }),
        (Offer::Ssh(r), Offer::Ssh(s)) => {
            let keep = |a: &[String], b: &[String]| a.iter().filter(|x| b.contains(x)).cloned().collect();
            Offer::Ssh(SshConfig {
                server: r.server,
                ciphers: keep(&r.ciphers, &s.ciphers),
                macs: keep(&r.macs, &s.macs),
                kex: keep(&r.kex, &s.kex),
                hostkeys: keep(&r.hostkeys, &s.hostkeys),
            })
        }
        _ => rec.clone(),
    }
}

/// What the recommended offer negotiates with the same peer.
pub fn negotiate_recommended(c: &Current, rec: &Offer) -> Result<Negotiated, String> {
    match (rec, &c.peer_offer, &c.installed.config) {
        (Offer::Tls(r), Offer::Tls(p), Config::Tls(t)) => {
            if t.server {
                negotiate::tls(r, p)
            } else {
                negotiate::tls(p, r)
            }
        }
        (Offer::Ssh(r), Offer::Ssh(p), Config::Ssh(s)) => {
            let aead = ssh_aead();
            if s.server {
                negotiate::ssh(r, p, &aead)
            } else {
                negotiate::ssh(p, r, &aead)
            }
        }
        _ => Err("protocol mismatch".into()),
    }
}

/// Policy findings of an offer: the options the policy refuses.
fn findings(graded: &[Graded]) -> Vec<Finding> {
    graded
        .iter()
        .filter(|g| !g.allowed)
        .map(|g| Finding {
            list: g.list.clone(),
            name: g.name.clone(),
            level: g.level,
            reasons: g.reasons.clone(),
        })
        .collect()
}

/// The diff for one software, from a run's results and its recommendation.
pub fn build(c: &Current, doc: &Document, outcome: &Outcome, k: &Knowledge, policy: &Policy) -> SoftwareDiff {
    let i = &c.installed;
    let offered = grade_offer(&c.offer, k, policy);
    let protocol = match c.offer {
        Offer::Tls(_) => "tls",
        Offer::Ssh(_) => "ssh",
    };
    let rec = outcome
        .recommendations
        .iter()
        .find(|r| r.protocol == protocol && r.target == i.software);
    let mut notes = i.notes.clone();
    let (recommended, rec_offer) = recommended_side(c, rec, protocol, k, &mut notes);
    let rec_graded = rec_offer.as_ref().map(|o| grade_offer(o, k, policy)).unwrap_or_default();
    let (adds, removes, fixed) = delta(&offered, rec_offer.as_ref().map(|_| rec_graded.as_slice()));
    // What the change brings that the policy refuses: not what is offered now
    // under this or another name (that is no fix, and nothing new either).
    let introduced = findings(&rec_graded)
        .into_iter()
        .filter(|f| !offered.iter().any(|g| g.list == f.list && same_alg(&g.name, &f.name)))
        .collect();
    let mut changes = match (&c.negotiated, &recommended) {
        (Ok(now), Some(r)) => changes(i.software, doc, now, r, k),
        _ => Vec::new(),
    };
    if let (Some(r), Ok(now), Some(rn)) = (rec, &c.negotiated, &recommended) {
        if figures::tied_in_ranking(r, now, rn) {
            changes.iter_mut().filter(|x| x.metric == "throughput").for_each(Change::within_tie);
        }
    }
    let lines = rec.map(|r| r.lines.clone()).unwrap_or_default();
    let fix = match (&c.negotiated, crate::software::find(i.software)) {
        (Err(_), Some(t)) if !lines.is_empty() => t.file_lines(i, &lines),
        _ => Vec::new(),
    };
    let patch = rec.and_then(|r| {
        patch::unified(i, &r.lines).unwrap_or_else(|e| {
            notes.push(format!("no diff: {e}"));
            None
        })
    });
    let throughput = |sign: f64| {
        changes
            .iter()
            .any(|ch| ch.measurable && ch.gain.unwrap_or(0.0) * sign > 0.0 && ch.metric == "throughput")
    };
    let gain = throughput(1.0);
    if let (true, Some(r)) = (throughput(-1.0), &recommended) {
        notes.push(format!(
            "slower with {}: it picks {} from the recommended lines; where the client chooses, its own list decides (see its diff)",
            c.peer,
            r.label()
        ));
    }
    notes.extend(client_decides(c, doc, outcome, k, rec_offer.as_ref(), recommended.as_ref()));
    let nothing_to_change = rec.is_some() && c.negotiated.is_ok() && fixed.is_empty() && !gain;
    let spelling = names::Spelling::of(doc, c);
    SoftwareDiff {
        software: i.software.to_string(),
        file: i.file.clone(),
        source: i.source.clone(),
        notes,
        peer: c.peer.clone(),
        now: c.negotiated.clone().ok().map(|n| spelling.negotiated(n)),
        now_error: c.negotiated.clone().err(),
        offered,
        recommended: recommended.map(|n| spelling.negotiated(n)),
        changes,
        fixed,
        introduced,
        adds,
        removes,
        lines,
        fix,
        patch,
        nothing_to_change,
        policy: policy.name.clone(),
    }
}

/// sshd: the client picks the cipher (its first that the server offers), so
/// sshd's lines (or a note that its default already does it) leave the speed
/// order to the client. When this machine's client with its own recommended
/// Host block would negotiate another choice with the recommended sshd, and
/// that is a measurable gain outside a tie of the client's ranking, a note says
/// so and points to the client's block. Not a finding of sshd's: its lines are
/// right; the client's own diff (`check --for ssh`) makes the finding.
fn client_decides(
    c: &Current,
    doc: &Document,
    outcome: &Outcome,
    k: &Knowledge,
    rec_offer: Option<&Offer>,
    recommended: Option<&Negotiated>,
) -> Option<String> {
    let (Config::Ssh(s), Some(Offer::Ssh(server)), Some(r)) = (&c.installed.config, rec_offer, recommended) else {
        return None;
    };
    let client_rec = outcome
        .recommendations
        .iter()
        .find(|x| x.protocol == "ssh" && x.target == "ssh")
        .filter(|_| s.server)?;
    let Offer::Ssh(client) = recommended_offer(client_rec, &c.peer_offer, k) else {
        return None;
    };
    let n = negotiate::ssh(server, &client, &ssh_aead()).ok()?;
    if same_choice(r, &n) || figures::tied_in_ranking(client_rec, r, &n) {
        return None;
    }
    let ch = changes("ssh", doc, r, &n, k).into_iter().find(|x| x.metric == "throughput")?;
    let Negotiated::Ssh { cipher, .. } = &n else { return None };
    (ch.measurable && ch.gain? > 0.0).then(|| {
        format!(
            "the ssh client picks the cipher: with its recommended Host block (`cipherbench recommend --for ssh`) it would negotiate {cipher} with these lines, throughput {} (`cipherbench check --for ssh` checks the client)",
            ch.verdict
        )
    })
}

/// What the recommended offer adds and removes (as `LIST NAME`), and which of the
/// current offer's findings it fixes; nothing without a recommended offer.
fn delta(offered: &[Graded], rec: Option<&[Graded]>) -> (Vec<String>, Vec<String>, Vec<Finding>) {
    let Some(rec) = rec else {
        return (Vec::new(), Vec::new(), Vec::new());
    };
    // By algorithm, not by spelling: a name whose alias is on the other side is
    // neither added nor removed (`sntrup761x25519-sha512` for `…@openssh.com`).
    let missing = |a: &[Graded], b: &[Graded]| -> Vec<String> {
        let gone = a
            .iter()
            .filter(|x| !b.iter().any(|y| y.list == x.list && same_alg(&y.name, &x.name)));
        gone.map(|x| format!("{} {}", x.list, x.name)).collect()
    };
    let fixed = findings(offered)
        .into_iter()
        .filter(|f| !rec.iter().any(|g| g.list == f.list && same_alg(&g.name, &f.name)))
        .collect();
    (missing(rec, offered), missing(offered, rec), fixed)
}

/// What the recommended lines negotiate with the current peer, and the offer they
/// make (the recommendation kept within what the server offers where it must be).
fn recommended_side(
    c: &Current,
    rec: Option<&Recommendation>,
    protocol: &str,
    k: &Knowledge,
    notes: &mut Vec<String>,
) -> (Option<Negotiated>, Option<Offer>) {
    let Some(r) = rec else {
        notes.push(format!("no {protocol} recommendation for {} in this run", c.installed.software));
        return (None, None);
    };
    let mut o = recommended_offer(r, &c.offer, k);
    if c.within_offer {
        o = within(&o, &c.offer);
    }
    match negotiate_recommended(c, &o) {
        Ok(n) => (Some(n), Some(o)),
        // The peer could not be read: the note on it says so once.
        Err(_) if c.negotiated.as_ref().is_err_and(|e| e.starts_with(PEER_UNREAD)) => (None, Some(o)),
        Err(e) => {
            notes.push(format!("the recommended lines negotiate nothing with {}: {e}", c.peer));
            (None, Some(o))
        }
    }
}

/// Each measured figure now and with the recommendation. A server's throughput
/// and CPU (nginx, Apache, HAProxy, stunnel) come from its two private instances
/// when both were measured (never one side through the server and the other on
/// loopback); NZBGet's throughput is its download rate through two private NZBGet
/// instances, when both were measured.
fn changes(software: &str, doc: &Document, now: &Negotiated, r: &Negotiated, k: &Knowledge) -> Vec<Change> {
    use crate::measure::tls::through::Software;
    let same = same_choice(now, r);
    let server = Software::named(software).filter(|_| !same);
    let nzbget = match (
        software == "nzbget" && !same,
        through_nzbget_figure(doc, now),
        through_nzbget_figure(doc, r),
    ) {
        (true, Some(n), Some(rf)) => Some((n, rf)),
        _ => None,
    };
    let pair = |f: fn(&Document, &str, &Negotiated) -> Option<Figure>| match (server, f(doc, software, now), f(doc, software, r)) {
        (Some(_), Some(n), Some(rf)) => Some((n, rf)),
        _ => None,
    };
    let through = pair(through_figure);
    // The server's CPU per GB through the same instances: its own cost per
    // byte served, per-request work included, as the load generator sees it.
    let through_cpu = pair(through_cpu_figure);
    let mut changes = Vec::new();
    for ((metric, unit, higher, n), (_, _, _, rf)) in figures::figures_at(doc, now, k).into_iter().zip(figures::figures_at(doc, r, k)) {
        changes.push(match (server, through, through_cpu) {
            _ if metric == "throughput" && nzbget.is_some() => {
                let (tn, tr) = nzbget.expect("matched");
                Change::new(metric, unit, higher, Some(tn), Some(tr), same).through_nzbget_rounds(paired_gain_of(
                    doc,
                    "through_nzbget",
                    now,
                    r,
                ))
            }
            (Some(sw), Some((tn, tr)), _) if metric == "throughput" => {
                Change::new(metric, unit, higher, Some(tn), Some(tr), same).through(sw, paired_through_gain(doc, software, now, r))
            }
            (Some(sw), _, Some((cn, cr))) if metric == "server CPU per GB" => Change {
                how: Some(format!("{}; {}", sw.how(), sw.cpu_of())),
                ..Change::new(metric, unit, higher, Some(cn), Some(cr), same)
            },
            _ => Change::between(metric, unit, higher, (n, rf), same, doc),
        });
    }
    changes
}

#[cfg(test)]
impl SoftwareDiff {
    /// An empty diff for `software` under `intermediate`, for tests to fill in.
    pub fn blank(software: &str) -> SoftwareDiff {
        SoftwareDiff {
            software: software.into(),
            file: None,
            source: "test".into(),
            notes: vec![],
            peer: "p".into(),
            now: None,
            now_error: None,
            offered: vec![],
            recommended: None,
            changes: vec![],
            fixed: vec![],
            introduced: vec![],
            adds: vec![],
            removes: vec![],
            lines: vec![],
            fix: vec![],
            patch: None,
            nothing_to_change: false,
            policy: "intermediate".into(),
        }
    }
}

#[cfg(test)]
mod tests;
