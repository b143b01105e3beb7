//! The installed choice as a subject of the run: measured with the same probes as
//! everything else (TLS on loopback with the system libssl, SSH through the
//! private sshd), interleaved with the options the policy allows, so that "now" and
//! "recommended" come from one run under the same conditions.

use super::negotiate::Negotiated;
use super::{Current, Offer};
use crate::judge::{Domain, Knowledge, Policy};
use crate::measure::sink::Measurements;
use crate::measure::tls::through::Software;
use crate::model::{Kind, Metric, Status};
use crate::units::Seconds;
use anyhow::Result;

/// What to measure for a set of installed configurations.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Subjects {
    /// TLS suites (IANA) for bulk, and groups for handshakes.
    pub tls_suites: Vec<String>,
    pub tls_groups: Vec<String>,
    pub ssh_ciphers: Vec<String>,
    pub ssh_macs: Vec<String>,
    pub ssh_kex: Vec<String>,
    /// Bulk only, no handshakes (the second pass of `check`: see [`Subjects::undecided`]).
    pub bulk_only: bool,
}

fn push(v: &mut Vec<String>, s: &str) {
    if !s.is_empty() && !v.iter().any(|x| x == s) {
        v.push(s.to_string());
    }
}

impl Subjects {
    /// The negotiated choices only (what the main job adds to its own subjects).
    pub fn negotiated(currents: &[Current]) -> Subjects {
        Subjects::of(currents.iter().filter_map(|c| c.negotiated.as_ref().ok()))
    }

    /// The subjects behind some negotiated choices.
    pub fn of<'a>(choices: impl IntoIterator<Item = &'a Negotiated>) -> Subjects {
        let mut s = Subjects::default();
        for n in choices {
            match n {
                Negotiated::Tls { suite, group, .. } => {
                    push(&mut s.tls_suites, suite);
                    if let Some(g) = group {
                        push(&mut s.tls_groups, g);
                    }
                }
                Negotiated::Ssh { cipher, mac, kex, .. } => {
                    push(&mut s.ssh_ciphers, cipher);
                    if let Some(m) = mac {
                        push(&mut s.ssh_macs, m);
                    }
                    push(&mut s.ssh_kex, kex);
                }
            }
        }
        s
    }

    /// What `check` measures again: for each diff whose throughput change is not
    /// yet measurable (the two intervals overlap, yet the choices differ), the
    /// choice now and the recommended one, bulk only. Their new samples are pooled
    /// with the first pass's (`Measurements::fold_in`), so the time left goes to the
    /// one comparison the answer is about.
    pub fn undecided(diffs: &[super::SoftwareDiff]) -> Subjects {
        // Not one measured through a private server: loopback samples would not
        // narrow it (see `measure_through`).
        let open = |d: &&super::SoftwareDiff| {
            d.changes.iter().any(|c| {
                c.metric == "throughput" && !c.measurable && c.gain.is_some_and(|g| g != 0.0) && c.gain_low.is_some() && c.how.is_none()
            })
        };
        let mut s = Subjects::of(diffs.iter().filter(open).flat_map(|d| d.now.iter().chain(d.recommended.iter())));
        s.tls_groups.clear();
        s.ssh_kex.clear();
        s.bulk_only = true;
        s
    }

    /// The negotiated choices and every option the policy allows that this machine
    /// has (TLS ≤ 1.2 suites for the certificate type in use): what `check` measures.
    pub fn with_candidates(currents: &[Current], k: &Knowledge, policy: &Policy) -> Subjects {
        let mut s = Subjects::negotiated(currents);
        let allowed = |d: Domain, n: &str| policy.allows(&k.judge(d, n)).allowed;
        if currents.iter().any(|c| matches!(c.offer, Offer::Tls(_))) {
            let local = crate::discover::openssl::tls_suites().unwrap_or_default();
            // The certificate type the installed server uses, judged by its negotiated suite.
            let au = currents
                .iter()
                .find_map(|c| match &c.negotiated {
                    Ok(Negotiated::Tls { suite, .. }) if suite.contains("_ECDSA_") => Some("ECDSA"),
                    Ok(Negotiated::Tls { .. }) => Some("RSA"),
                    _ => None,
                })
                .unwrap_or("RSA");
            // Few subjects, so each gets enough samples for a tight interval: the
            // TLS 1.3 suites and the AEAD ECDHE suites for that certificate.
            for l in &local {
                let tls13 = l.min_protocol == "TLSv1.3";
                let d = if tls13 { Domain::Tls13Suite } else { Domain::Tls12Suite };
                let aead12 = l.kx == "ECDH" && l.au == au && (l.enc.contains("GCM") || l.enc.contains("CHACHA"));
                if allowed(d, &l.iana) && (tls13 || aead12) && !l.enc.contains("CCM") {
                    push(&mut s.tls_suites, &l.iana);
                }
            }
            for g in ["x25519", "secp256r1"] {
                if allowed(Domain::Group, g) {
                    push(&mut s.tls_groups, g);
                }
            }
        }
        if currents.iter().any(|c| matches!(c.offer, Offer::Ssh(_))) {
            // Kept small (each SSH sample is a whole session): the AEAD ciphers and
            // two CTR ones, two encrypt-then-MAC MACs, and the first four key
            // exchanges the client would pick, each when the policy allows it.
            if let Ok(o) = crate::discover::openssh::discover() {
                for c in o
                    .ciphers
                    .iter()
                    .filter(|c| o.is_aead(c) || *c == "aes128-ctr" || *c == "aes256-ctr")
                {
                    if allowed(Domain::SshCipher, c) {
                        push(&mut s.ssh_ciphers, c);
                    }
                }
                for m in ["umac-128-etm@openssh.com", "hmac-sha2-256-etm@openssh.com"] {
                    if o.macs.iter().any(|x| x == m) && allowed(Domain::SshMac, m) {
                        push(&mut s.ssh_macs, m);
                    }
                }
                // sshd's peer is a default client (see `super::current`), the
                // ssh client's own diff this machine's configured one.
                let sshd = currents.iter().any(|c| matches!(&c.offer, Offer::Ssh(s) if s.server));
                let client = match sshd {
                    true => crate::software::ssh::read::read_default().ok(),
                    false => crate::software::read_installed("ssh", None).ok().flatten(),
                };
                let order: Vec<String> = match client.map(|c| c.config) {
                    Some(crate::discover::installed::Config::Ssh(c)) => c.kex,
                    _ => o.kex.clone(),
                };
                for x in order.iter().filter(|x| o.kex.contains(x) && allowed(Domain::SshKex, x)).take(4) {
                    push(&mut s.ssh_kex, x);
                }
            }
        }
        s
    }

    /// These subjects less what the run already measured (`r`, for the main job).
    pub fn not_in(&self, r: &[crate::model::ResultRecord]) -> Subjects {
        let ok = |kind: Kind, f: &dyn Fn(&crate::model::Subject) -> bool| {
            r.iter()
                .any(|x| x.kind == kind && x.status == Status::Ok && x.metric != Metric::Accepted && f(&x.subject))
        };
        Subjects {
            tls_suites: self
                .tls_suites
                .iter()
                .filter(|s| !ok(Kind::TlsBulk, &|x| x.suite.as_deref().is_some_and(|m| super::same_alg(m, s))))
                .cloned()
                .collect(),
            tls_groups: self
                .tls_groups
                .iter()
                .filter(|g| {
                    let canon = crate::backend::openssl::tls::canonical_group(g);
                    !ok(Kind::TlsHandshake, &|x| {
                        x.group.as_deref().and_then(crate::backend::openssl::tls::canonical_group) == canon
                    })
                })
                .cloned()
                .collect(),
            ssh_ciphers: self
                .ssh_ciphers
                .iter()
                .filter(|c| !ok(Kind::SshBulk, &|x| x.cipher.as_deref() == Some(c.as_str())))
                .cloned()
                .collect(),
            ssh_macs: self
                .ssh_macs
                .iter()
                .filter(|m| !ok(Kind::SshBulk, &|x| x.mac.as_deref() == Some(m.as_str())))
                .cloned()
                .collect(),
            ssh_kex: self
                .ssh_kex
                .iter()
                .filter(|k| !ok(Kind::SshHandshake, &|x| x.kex.as_deref().is_some_and(|m| super::same_alg(m, k))))
                .cloned()
                .collect(),
            bulk_only: self.bulk_only,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.tls_suites.is_empty() && self.tls_groups.is_empty() && self.ssh_ciphers.is_empty() && self.ssh_kex.is_empty()
    }
}

/// Measures `s` into `session` within `budget`: TLS first, then SSH (each half the
/// budget when both are needed).
pub fn measure(s: &Subjects, session: &mut Measurements, budget: Seconds) -> Result<()> {
    let tls = !s.tls_suites.is_empty() || !s.tls_groups.is_empty();
    let ssh = !s.ssh_ciphers.is_empty() || !s.ssh_kex.is_empty();
    let share = if tls && ssh { 0.5 } else { 1.0 };
    let t0 = std::time::Instant::now();
    if tls {
        measure_tls(s, session, Seconds(budget.0 * share))?;
    }
    if ssh && !crate::interrupt::requested() {
        let left = (budget.0 - t0.elapsed().as_secs_f64()).max(budget.0 * 0.25);
        measure_ssh(s, session, Seconds(left))?;
    }
    Ok(())
}

fn measure_tls(s: &Subjects, session: &mut Measurements, budget: Seconds) -> Result<()> {
    use crate::measure::tls as tls_kind;
    // One certificate type, the one the installed server's suites need, so that
    // handshakes compare key exchanges and not certificates.
    let cert = if s.tls_suites.iter().any(|x| x.contains("_ECDSA_")) && !s.tls_suites.iter().any(|x| x.contains("_RSA_")) {
        "ecdsa-p256"
    } else {
        "rsa-2048"
    };
    let suites = if s.tls_suites.is_empty() {
        vec!["TLS_AES_128_GCM_SHA256".to_string()]
    } else {
        s.tls_suites.clone()
    };
    let groups: Vec<String> = s
        .tls_groups
        .iter()
        .filter_map(|g| crate::backend::openssl::tls::canonical_group(g))
        .map(String::from)
        .collect();
    let options = crate::options::TlsOptions {
        suites,
        groups,
        certs: vec![cert.to_string()],
        protocols: vec!["1.2".to_string(), "1.3".to_string()],
        no_bulk: s.tls_suites.is_empty(),
        no_handshakes: s.bulk_only,
        ..crate::options::TlsOptions::default()
    };
    let mut plan = tls_kind::LoopbackPlan::new(&options, budget)?;
    // Handshakes: one per protocol and group (full handshakes), enough to show what a
    // group change costs; bulk: every suite.
    let mut seen: Vec<(crate::backend::openssl::tls::Protocol, Option<&str>)> = Vec::new();
    plan.items.retain(|it| match it.work {
        tls_kind::Work::Handshake { resumed: true } => false,
        tls_kind::Work::Handshake { .. } => {
            let key = (it.protocol, it.group);
            if seen.contains(&key) || it.suite.kx == "RSA" || it.suite.kx == "DH" {
                false
            } else {
                seen.push(key);
                true
            }
        }
        tls_kind::Work::Bulk(_) => true,
    });
    tls_kind::loopback(&plan, session)
}

/// The server software and its binary, when `c` is this machine's nginx,
/// Apache, HAProxy or stunnel server (not a remote server) and it is installed
/// here: then its throughput change is measured through two private instances
/// ([`measure_through`]).
pub fn through_binary(c: &Current) -> Option<(Software, std::path::PathBuf)> {
    let sw = Software::named(c.installed.software)?;
    match &c.installed.config {
        crate::discover::installed::Config::Tls(t) if t.server && !c.within_offer => {}
        _ => return None,
    }
    if sw == Software::Apache && crate::backend::apache::modules().is_none() {
        return None;
    }
    let bin = crate::discover::installed::find_program(sw.programs()).map(std::path::PathBuf::from)?;
    Some((sw, bin))
}

/// The installed configuration's TLS lines in `sw`'s own syntax, for its
/// private instance: every value its reader read, the order the server keeps
/// included ([`crate::software::Target::installed_lines`]).
pub fn now_lines_for(sw: Software, t: &crate::discover::installed::TlsConfig) -> Vec<String> {
    crate::software::find(sw.name())
        .and_then(|s| s.installed_lines(t))
        .unwrap_or_default()
}

/// The local software a through step can run (`binary` of it: what to start)
/// whose diff changes what is negotiated and has lines to change it with.
fn changing<'a, B>(
    currents: &'a [Current],
    diffs: &'a [super::SoftwareDiff],
    binary: impl Fn(&Current) -> Option<B>,
) -> Vec<(B, &'a Current, &'a super::SoftwareDiff)> {
    currents
        .iter()
        .filter_map(|c| {
            let bin = binary(c)?;
            let d = diffs.iter().find(|d| d.software == c.installed.software)?;
            (d.now.is_some() && d.recommended.is_some() && d.now != d.recommended && !d.lines.is_empty()).then_some((bin, c, d))
        })
        .collect()
}

/// A negotiated TLS choice's (version, suite).
type VersionSuite<'a> = (&'a str, &'a str);

/// A TLS diff's (version, suite) now and recommended; `None` for SSH.
fn tls_change(d: &super::SoftwareDiff) -> Option<(VersionSuite<'_>, VersionSuite<'_>)> {
    match (&d.now, &d.recommended) {
        (
            Some(Negotiated::Tls {
                version: nv, suite: ns, ..
            }),
            Some(Negotiated::Tls {
                version: rv, suite: rs, ..
            }),
        ) => Some(((nv.as_str(), ns.as_str()), (rv.as_str(), rs.as_str()))),
        _ => None,
    }
}

/// For each local nginx, Apache, HAProxy or stunnel whose diff changes the
/// negotiated TLS choice: its throughput now and with the recommended lines,
/// measured through two private instances of it (`measure::tls::through`)
/// within `budget`, into `session`.
/// Returns what could not be measured, one sentence each (the diff then keeps
/// the loopback figures).
pub fn measure_through(currents: &[Current], diffs: &[super::SoftwareDiff], session: &mut Measurements, budget: Seconds) -> Vec<String> {
    use crate::backend::openssl::certs::CertType;
    use crate::measure::tls::through;
    let mut notes = Vec::new();
    let t0 = std::time::Instant::now();
    let work = changing(currents, diffs, through_binary);
    for (k, ((sw, bin), c, d)) in work.iter().enumerate() {
        if crate::interrupt::requested() {
            break;
        }
        let Some(((nv, ns), (rv, rs))) = tls_change(d) else {
            continue;
        };
        let crate::discover::installed::Config::Tls(t) = &c.installed.config else {
            continue;
        };
        // The certificate the installed server's suites need (as `measure_tls` chooses).
        let cert = if ns.contains("_ECDSA_") {
            CertType::EcdsaP256
        } else {
            CertType::Rsa2048
        };
        let left = budget.0 - t0.elapsed().as_secs_f64();
        let plan = through::ThroughPlan {
            software: *sw,
            binary: bin.clone(),
            cert,
            instances: vec![
                through::Instance {
                    role: "now",
                    lines: now_lines_for(*sw, t),
                    expect: (nv.to_string(), ns.to_string()),
                },
                through::Instance {
                    role: "recommended",
                    // The emitters' notes are comments, not lines a server takes.
                    lines: d.lines.iter().filter(|l| !l.trim_start().starts_with('#')).cloned().collect(),
                    expect: (rv.to_string(), rs.to_string()),
                },
            ],
            budget: Seconds(left / (work.len() - k) as f64),
            timeout: std::time::Duration::from_secs(10),
        };
        if let Err(e) = through::through(&plan, session) {
            notes.push(format!(
                "{}: the throughput change could not be measured through a private {}, so it is the loopback figure: {e:#}",
                d.software,
                sw.shown()
            ));
        }
    }
    notes
}

/// The NZBGet binary, when `c` is this machine's NZBGet (or a file under review
/// for it) and NZBGet is installed here: then its throughput change is measured
/// through two private NZBGet instances ([`measure_through_nzbget`]).
pub fn through_nzbget_binary(c: &Current) -> Option<std::path::PathBuf> {
    if c.installed.software != "nzbget" || c.within_offer || !matches!(c.installed.config, crate::discover::installed::Config::Tls(_)) {
        return None;
    }
    crate::discover::installed::find_program(&["nzbget"]).map(std::path::PathBuf::from)
}

/// The installed NZBGet as the private one gets it: its Server cipher (empty:
/// OpenSSL's default list) and the OpenSSL configuration its drop-in names
/// (its text), if any.
pub fn nzbget_now(i: &crate::discover::installed::Installed) -> (String, Option<String>) {
    let cipher = match &i.config {
        crate::discover::installed::Config::Tls(t) => t.cipher_string.clone().unwrap_or_default(),
        _ => String::new(),
    };
    let conf = i.openssl_env.as_ref().and_then(|e| e.conf.as_ref()).map(|(_, text)| text.clone());
    (cipher, conf)
}

/// For each NZBGet whose diff changes the negotiated TLS choice: its download
/// rate now and with the recommended lines, measured through two private NZBGet
/// instances (`measure::tls::nzbget`) within `budget`, into `session`. Returns
/// what could not be measured, one sentence each (the diff then keeps the
/// loopback figures).
pub fn measure_through_nzbget(
    currents: &[Current],
    diffs: &[super::SoftwareDiff],
    session: &mut Measurements,
    budget: Seconds,
) -> Vec<String> {
    use crate::measure::tls::nzbget as through;
    let mut notes = Vec::new();
    let t0 = std::time::Instant::now();
    let work = changing(currents, diffs, through_nzbget_binary);
    for (k, (bin, c, d)) in work.iter().enumerate() {
        if crate::interrupt::requested() {
            break;
        }
        let Some(((nv, ns), (rv, rs))) = tls_change(d) else {
            continue;
        };
        let (cipher, conf) = nzbget_now(&c.installed);
        let (lines, cnf, _) = crate::software::nzbget::emit::parts(&d.lines);
        let rec_cipher = lines
            .first()
            .and_then(|l| l.split_once('='))
            .map(|(_, v)| v.to_string())
            .unwrap_or_default();
        let left = budget.0 - t0.elapsed().as_secs_f64();
        let plan = through::NzbgetPlan {
            nzbget: bin.clone(),
            instances: vec![
                through::Instance {
                    role: "now",
                    cipher,
                    openssl_conf: conf,
                    expect: (nv.to_string(), ns.to_string()),
                },
                through::Instance {
                    role: "recommended",
                    cipher: rec_cipher,
                    // Without a file of its own (NZBGet 25.4 and later), the
                    // installed one stays.
                    openssl_conf: cnf.or_else(|| nzbget_now(&c.installed).1),
                    expect: (rv.to_string(), rs.to_string()),
                },
            ],
            articles: through::ARTICLES,
            connections: through::CONNECTIONS,
            budget: Seconds(left / (work.len() - k) as f64),
        };
        if let Err(e) = through::through_nzbget(&plan, session) {
            notes.push(format!(
                "{}: the throughput change could not be measured through a private NZBGet, so it is the loopback figure: {e:#}",
                d.software
            ));
        }
    }
    notes
}

fn measure_ssh(s: &Subjects, session: &mut Measurements, budget: Seconds) -> Result<()> {
    use crate::backend::openssh::{Client, Destination, PrivateSshd};
    use crate::measure::ssh as ssh_kind;
    let o = crate::discover::openssh::discover()?;
    let sshd = crate::discover::openssh::find_sshd()?;
    let servable = o.private_hostkeys();
    let keep = |v: &[String], have: &[String]| -> Vec<String> { v.iter().filter(|x| have.contains(x)).cloned().collect() };
    // An empty list means "all" to the plan: fill the gaps with one option each.
    let or_one = |v: Vec<String>, one: Option<&String>| if v.is_empty() { one.into_iter().cloned().collect() } else { v };
    let ciphers = or_one(keep(&s.ssh_ciphers, &o.ciphers), o.aead.first());
    let macs = or_one(keep(&s.ssh_macs, &o.macs), o.macs.first());
    let measured_kex = keep(&s.ssh_kex, &o.kex);
    let handshakes = !measured_kex.is_empty();
    let kex = or_one(measured_kex, Some(&o.default_kex()));
    let hostkeys = vec!["ssh-ed25519".to_string()];
    let t0 = std::time::Instant::now();
    let plan = ssh_kind::SshPlan::new(
        &o,
        &ciphers,
        &macs,
        &kex,
        &hostkeys,
        Some(&servable),
        false,
        None,
        false,
        handshakes,
        budget,
    )?;
    let daemon = PrivateSshd::start(&sshd, &o)?;
    let plan = ssh_kind::SshPlan {
        budget: Seconds((budget.0 - t0.elapsed().as_secs_f64()).max(1.0)),
        ..plan
    };
    let client = Client {
        ssh: o.ssh.clone(),
        target: Destination::Private {
            port: daemon.port(),
            user: daemon.user().into(),
            key: daemon.files().client_key,
            known_hosts: daemon.files().known_hosts,
        },
    };
    let r = ssh_kind::sweep(&plan, &client, session);
    drop(daemon);
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diff::{Change, Figure, SoftwareDiff};

    fn tls(suite: &str) -> Negotiated {
        Negotiated::Tls {
            version: "TLSv1.2".into(),
            suite: suite.into(),
            openssl_name: String::new(),
            group: Some("x25519".into()),
        }
    }
    fn ssh(cipher: &str, mac: Option<&str>) -> Negotiated {
        Negotiated::Ssh {
            cipher: cipher.into(),
            mac: mac.map(String::from),
            kex: "curve25519-sha256".into(),
            hostkey: "ssh-ed25519".into(),
        }
    }
    fn diff(now: Negotiated, rec: Negotiated, n: (f64, f64, f64), r: (f64, f64, f64)) -> SoftwareDiff {
        let f = |(median, ci95_low, ci95_high): (f64, f64, f64)| {
            Some(Figure {
                median,
                ci95_low,
                ci95_high,
            })
        };
        SoftwareDiff {
            changes: vec![Change::new("throughput", "bytes_per_sec", true, f(n), f(r), now == rec)],
            now: Some(now),
            recommended: Some(rec),
            ..SoftwareDiff::blank("x")
        }
    }

    /// The installed TLS lines as the private nginx gets them: every value nginx
    /// read, a value with blanks quoted; and nginx itself accepts them and
    /// negotiates what the diff says (a default client gets the server's first
    /// CBC suite).
    #[test]
    fn now_lines_are_the_installed_values_and_nginx_takes_them() {
        use crate::discover::installed::TlsConfig;
        let t = TlsConfig {
            server: true,
            protocols: Some(vec!["TLSv1".into(), "TLSv1.1".into(), "TLSv1.2".into()]),
            cipher_string: Some("ECDHE-RSA-AES128-SHA:ECDHE-RSA-AES128-GCM-SHA256".into()),
            ciphersuites: None,
            groups: Some("X25519:prime256v1".into()),
            server_order: true,
            ..Default::default()
        };
        assert_eq!(
            now_lines_for(Software::Nginx, &t),
            [
                "ssl_protocols TLSv1 TLSv1.1 TLSv1.2;",
                "ssl_ciphers ECDHE-RSA-AES128-SHA:ECDHE-RSA-AES128-GCM-SHA256;",
                "ssl_ecdh_curve X25519:prime256v1;",
                "ssl_prefer_server_ciphers on;",
            ]
        );
        let spaced = TlsConfig {
            cipher_string: Some("HIGH:!aNULL !MD5".into()),
            ciphersuites: Some("TLS_AES_128_GCM_SHA256".into()),
            protocols: None,
            server_order: false,
            ..t.clone()
        };
        let l = now_lines_for(Software::Nginx, &spaced);
        assert!(l.contains(&"ssl_ciphers \"HIGH:!aNULL !MD5\";".to_string()), "{l:?}");
        assert!(
            l.contains(&"ssl_conf_command Ciphersuites TLS_AES_128_GCM_SHA256;".to_string()),
            "{l:?}"
        );
        assert!(l.contains(&"ssl_prefer_server_ciphers off;".to_string()) && !l.iter().any(|x| x.starts_with("ssl_protocols")));
        let Some(bin) = crate::discover::installed::find_program(&["nginx"]) else {
            crate::testing::missing("nginx is not installed");
            return;
        };
        let id = crate::backend::openssl::certs::Identity::generate(crate::backend::openssl::certs::CertType::Rsa2048).unwrap();
        for lines in [now_lines_for(Software::Nginx, &t), now_lines_for(Software::Nginx, &spaced)] {
            let n = crate::backend::nginx::PrivateNginx::start(&crate::backend::nginx::Spec {
                binary: std::path::Path::new(&bin),
                tls_lines: &lines,
                identity: &id,
                body: b"ok",
                start_within: std::time::Duration::from_secs(10),
            })
            .unwrap_or_else(|e| panic!("nginx refused {lines:?}: {e:#}"));
            drop(n);
        }
    }

    /// The installed values as Apache, HAProxy and stunnel lines: each the
    /// software's own syntax, and its private instance starts with them and a
    /// default client gets the server's first CBC suite over TLS 1.2, as the diff
    /// of such a file says; a client's order (`server_order` false) is kept.
    #[test]
    fn now_lines_for_each_server_are_its_own_and_it_takes_them() {
        use crate::discover::installed::TlsConfig;
        let t = TlsConfig {
            server: true,
            protocols: Some(vec!["TLSv1".into(), "TLSv1.1".into(), "TLSv1.2".into()]),
            cipher_string: Some("ECDHE-RSA-AES128-SHA:ECDHE-RSA-AES128-GCM-SHA256".into()),
            groups: Some("X25519:prime256v1".into()),
            server_order: true,
            ..Default::default()
        };
        assert_eq!(
            now_lines_for(Software::Apache, &t),
            [
                "SSLProtocol -all +TLSv1 +TLSv1.1 +TLSv1.2",
                "SSLCipherSuite ECDHE-RSA-AES128-SHA:ECDHE-RSA-AES128-GCM-SHA256",
                "SSLOpenSSLConfCmd Curves X25519:prime256v1",
                "SSLHonorCipherOrder on",
            ]
        );
        assert_eq!(
            now_lines_for(Software::Haproxy, &t),
            [
                "ssl-default-bind-ciphers ECDHE-RSA-AES128-SHA:ECDHE-RSA-AES128-GCM-SHA256",
                "ssl-default-bind-curves X25519:prime256v1",
                "ssl-default-bind-options ssl-min-ver TLSv1.0 ssl-max-ver TLSv1.2",
            ]
        );
        assert_eq!(
            now_lines_for(Software::Stunnel, &t),
            [
                "sslVersionMin = TLSv1",
                "sslVersionMax = TLSv1.2",
                "ciphers = ECDHE-RSA-AES128-SHA:ECDHE-RSA-AES128-GCM-SHA256",
                "curves = X25519:prime256v1",
                "options = CIPHER_SERVER_PREFERENCE",
            ]
        );
        let client = TlsConfig {
            server_order: false,
            ..t.clone()
        };
        assert!(now_lines_for(Software::Apache, &client).contains(&"SSLHonorCipherOrder off".to_string()));
        assert!(now_lines_for(Software::Haproxy, &client)
            .last()
            .is_some_and(|l| l.ends_with(" prefer-client-ciphers")));
        assert!(!now_lines_for(Software::Stunnel, &client).iter().any(|l| l.starts_with("options")));
        // Each private instance takes them: the plan's "now" side, as `check` runs it.
        for sw in [Software::Apache, Software::Haproxy, Software::Stunnel] {
            let Some(bin) = crate::discover::installed::find_program(sw.programs()) else {
                crate::testing::missing(&format!("{} is not installed", sw.name()));
                continue;
            };
            let id = crate::backend::openssl::certs::Identity::generate(crate::backend::openssl::certs::CertType::Rsa2048).unwrap();
            let lines = now_lines_for(sw, &t);
            let server = sw
                .start(&crate::backend::private::Spec {
                    binary: std::path::Path::new(&bin),
                    tls_lines: &lines,
                    identity: &id,
                    body: b"ok",
                    start_within: std::time::Duration::from_secs(10),
                })
                .unwrap_or_else(|e| panic!("{} refused {lines:?}: {e:#}", sw.name()));
            let (cipher, got) = crate::backend::private::tests::get_over_tls(server.addr(), crate::backend::private::PATH);
            assert_eq!(cipher, "ECDHE-RSA-AES128-SHA", "{}", sw.name());
            assert!(
                got.starts_with("HTTP/1.1 200") && got.ends_with("\r\n\r\nok"),
                "{}: {got}",
                sw.name()
            );
        }
    }

    /// Only comparisons the first pass could not call are measured again, bulk
    /// only: not a measurable one, not an unchanged one.
    #[test]
    fn the_second_pass_takes_only_the_open_comparisons() {
        let open = diff(
            tls("TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA"),
            tls("TLS_AES_128_GCM_SHA256"),
            (400.0, 200.0, 900.0),
            (1200.0, 500.0, 2500.0),
        );
        let called = diff(
            ssh("aes128-cbc", Some("hmac-sha1")),
            ssh("aes128-gcm@openssh.com", None),
            (300.0, 290.0, 310.0),
            (900.0, 880.0, 920.0),
        );
        let same = diff(
            ssh("aes256-ctr", Some("hmac-sha2-256")),
            ssh("aes256-ctr", Some("hmac-sha2-256")),
            (1.0, 0.5, 2.0),
            (1.0, 0.5, 2.0),
        );
        // Open, but measured through a private server: loopback samples would not
        // narrow it, so the second pass leaves it out.
        let mut through = diff(
            tls("TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA"),
            tls("TLS_CHACHA20_POLY1305_SHA256"),
            (400.0, 200.0, 900.0),
            (1200.0, 500.0, 2500.0),
        );
        through.changes[0].how = Some(crate::measure::tls::through::HOW.into());
        let s = Subjects::undecided(&[open, called, same, through]);
        assert_eq!(s.tls_suites, ["TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA", "TLS_AES_128_GCM_SHA256"]);
        assert!(s.ssh_ciphers.is_empty() && s.ssh_macs.is_empty(), "{s:?}");
        assert!(s.tls_groups.is_empty() && s.ssh_kex.is_empty() && s.bulk_only, "{s:?}");
        // Nothing open: nothing to measure again.
        assert!(Subjects::undecided(&[]).is_empty());
    }
}
