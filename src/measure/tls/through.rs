//! Through a private server: what a change of TLS lines gains for nginx, Apache,
//! HAProxy or stunnel, measured through that software itself.
//!
//! Why: the loopback figures (`loopback`) time TLS records in-process, which is
//! what a cipher changes, and nothing else. A real server adds per-request work
//! the cipher does not touch (reading the file, HTTP, copies, a second process on
//! the same cores), so its gain is diluted: on the 2-core VM the loopback
//! predicted +310 % where ApacheBench through nginx measured +172 %. So when the
//! software is nginx, Apache, HAProxy or stunnel and its binary is here, two
//! private instances are started ([`Software`]: `backend::nginx`, `apache`,
//! `haproxy`, `stunnel`), one with the installed TLS lines and one with the
//! recommended ones, and HTTP/1.1 keep-alive GETs of a 1 MiB file are timed
//! through each with the same probe `--connect --http-get` uses ([`HttpProbe`]),
//! the two interleaved in slices (`sampler::interleave`, as loopback bulk is).
//! nginx and Apache serve the file themselves; HAProxy and stunnel terminate TLS
//! in front of a plaintext HTTP server thread of this process
//! (`backend::private::PlainHttp`), as they front a web server or a service.
//!
//! Before anything is timed each instance proves it does real work: one GET whose
//! body must hash to the served file, over the suite and protocol the diff says a
//! default client negotiates there. Its records are `tls-bulk` with op `http-get`
//! and mode `through-SOFTWARE` ([`MODE`] for nginx; and the server's CPU per GB,
//! `server-cpu-per-gb-through-SOFTWARE`: `model::through_mode`), so they never
//! mix with loopback records.

use super::http::HttpProbe;
use crate::backend::apache::{self, PrivateApache};
use crate::backend::haproxy;
use crate::backend::nginx::{PrivateNginx, PATH};
use crate::backend::openssl::certs::{CertType, Identity};
use crate::backend::private::{cpu_seconds, Served, Spec};
use crate::backend::stunnel;
use crate::backend::tls::ClientConfig;
use crate::measure::engine::sampler::{self, over_slices, Probe, Rate, SamplerConfig};
use crate::measure::engine::stats::MIN_SAMPLES;
use crate::measure::sink::Measurements;
use crate::model::{Kind, Metric, ResultRecord, Status, Subject, Summary};
use crate::units::Seconds;
use anyhow::{anyhow, bail, Context, Result};
use openssl::ssl::{SslContext, SslMethod, SslOptions, SslSessionCacheMode, SslVerifyMode};
use serde_json::json;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The server software a throughput change is measured through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Software {
    Nginx,
    Apache,
    Haproxy,
    Stunnel,
}

impl Software {
    pub const ALL: [Software; 4] = [Software::Nginx, Software::Apache, Software::Haproxy, Software::Stunnel];

    /// Its `--for` name.
    pub fn name(self) -> &'static str {
        match self {
            Software::Nginx => "nginx",
            Software::Apache => "apache",
            Software::Haproxy => "haproxy",
            Software::Stunnel => "stunnel",
        }
    }

    /// The one named `name` (a `--for` name).
    pub fn named(name: &str) -> Option<Software> {
        Software::ALL.into_iter().find(|s| s.name() == name)
    }

    /// Its programs, the first installed one being run.
    pub fn programs(self) -> &'static [&'static str] {
        match self {
            Software::Nginx => &["nginx"],
            Software::Apache => apache::PROGRAMS,
            Software::Haproxy => &["haproxy"],
            Software::Stunnel => stunnel::PROGRAMS,
        }
    }

    /// Its name in sentences.
    pub fn shown(self) -> &'static str {
        match self {
            Software::Nginx => "nginx",
            Software::Apache => "Apache",
            Software::Haproxy => "HAProxy",
            Software::Stunnel => "stunnel",
        }
    }

    /// The mode of its throughput records.
    pub fn mode(self) -> String {
        crate::model::through_mode(self.name())
    }

    /// The mode of its CPU per GB records.
    pub fn cpu_mode(self) -> String {
        crate::model::through_cpu_mode(self.name())
    }

    /// How its figures were measured, in words (the diff shows it).
    pub fn how(self) -> String {
        match self {
            Software::Nginx => HOW.to_string(),
            Software::Apache => HOW.replace("nginx", "Apache"),
            Software::Haproxy => format!("{} (in front of a plaintext HTTP server)", HOW.replace("nginx", "HAProxy")),
            Software::Stunnel => format!("{} (in front of a plaintext HTTP server)", HOW.replace("nginx", "stunnel")),
        }
    }

    /// Whose CPU the server CPU per GB is, in words.
    pub fn cpu_of(self) -> &'static str {
        match self {
            Software::Nginx => "the nginx worker's CPU",
            Software::Apache => "the Apache processes' CPU",
            Software::Haproxy => "HAProxy's CPU",
            Software::Stunnel => "stunnel's CPU",
        }
    }

    /// Starts a private instance as `spec` says.
    pub fn start(self, spec: &Spec) -> Result<Box<dyn Served>> {
        Ok(match self {
            Software::Nginx => Box::new(PrivateNginx::start(spec)?),
            Software::Apache => Box::new(PrivateApache::start(spec)?),
            Software::Haproxy => Box::new(haproxy::start(spec)?),
            Software::Stunnel => Box::new(stunnel::start(spec)?),
        })
    }
}

/// CPU seconds of `pids` together, when every one can be read.
fn cpu_of(pids: &[u32]) -> Option<f64> {
    pids.iter().map(|p| cpu_seconds(*p)).sum()
}

/// The mode of the throughput records measured through a private nginx.
#[cfg_attr(not(test), allow(dead_code))]
pub const MODE: &str = crate::model::THROUGH_NGINX;
/// How these figures were measured, in words (the diff shows it).
pub const HOW: &str = "through a private nginx with your TLS lines, HTTP/1.1 keep-alive, 1 MiB responses";
/// The size of the served file.
pub const BODY_BYTES: usize = 1 << 20;

/// One private instance to measure.
#[derive(Debug, Clone)]
pub struct Instance {
    /// `now` or `recommended`, for messages.
    pub role: &'static str,
    /// Whole `ssl_…;` lines.
    pub lines: Vec<String>,
    /// What a default client must negotiate there: (protocol, IANA suite).
    pub expect: (String, String),
}

/// What to measure through which server.
#[derive(Debug, Clone)]
pub struct ThroughPlan {
    pub software: Software,
    /// Its binary, by absolute path.
    pub binary: PathBuf,
    /// The certificate type the installed server's suites need.
    pub cert: CertType,
    pub instances: Vec<Instance>,
    /// Everything included: key, start-up, checks, samples, teardown.
    pub budget: Seconds,
    /// Per connection and read (capped by the run's deadline).
    pub timeout: Duration,
}

/// A client as a program on this machine gets it: libssl's defaults (the system
/// `openssl.cnf`), no certificate check (this measures, it does not authenticate),
/// no session reuse (each slice pays its own full handshake, untimed).
fn default_client() -> Result<Arc<dyn ClientConfig>> {
    let mut b = SslContext::builder(SslMethod::tls_client())?;
    b.set_verify(SslVerifyMode::NONE);
    b.set_session_cache_mode(SslSessionCacheMode::OFF);
    b.set_options(SslOptions::NO_TICKET);
    Ok(Arc::new(crate::backend::openssl::library::Client(b.build())))
}

/// Keep-alive connections at once, each a client thread of its own. One: the
/// load generator it stands for (ApacheBench, one process however many
/// connections) and the one worker are then two processes on the machine, as in
/// the before/after benchmark; two client threads measured the same gain there
/// (+162 % against +164 %) with more exposure to other load.
const CONNECTIONS: usize = 1;

/// The GET probe, and the server's CPU over each run.
struct Through {
    http: HttpProbe,
    /// The serving processes to read, on the one probe that reads them.
    serving: Vec<u32>,
    /// Probes running at once, the same units each: this run's share of the
    /// worker's CPU is 1/connections of it.
    connections: usize,
    /// Per run: (worker CPU seconds, body bytes of every connection).
    runs: Vec<(f64, f64)>,
}

impl Probe for Through {
    fn run(&mut self, units: u64) -> Result<f64> {
        let read = !self.serving.is_empty();
        let c0 = read.then(|| cpu_of(&self.serving)).flatten();
        let work = self.http.run(units)?;
        if let (Some(a), Some(b)) = (c0, read.then(|| cpu_of(&self.serving)).flatten()) {
            self.runs.push((b - a, work * self.connections as f64));
        }
        Ok(work)
    }
    fn timed_region(&self) -> Option<(Seconds, Seconds)> {
        self.http.timed_region()
    }
}

/// What one connection negotiated: (protocol, IANA suite, OpenSSL name, group).
fn negotiated(p: &HttpProbe) -> Option<Negotiated> {
    let (version, suite, group) = p.stream.as_ref()?.connection().negotiated();
    let name = openssl::ssl::cipher_name(&suite).to_string();
    Some((version, suite, name, group))
}

/// One GET outside any timing: the body must be the served file, over the
/// expected protocol and suite. Returns what was negotiated.
fn verify(
    client: &Arc<dyn ClientConfig>,
    sw: Software,
    addr: SocketAddr,
    inst: &Instance,
    want: &[u8; 32],
    timeout: Duration,
) -> Result<Negotiated> {
    let what = sw.shown();
    let mut p = HttpProbe::new(client, addr, None, "localhost".into(), PATH, timeout);
    p.digest = Some(openssl::sha::Sha256::new());
    let got = p.get()?;
    let digest = p.digest.take().map(|d| d.finish());
    if got != BODY_BYTES as u64 || digest.as_ref() != Some(want) {
        bail!(
            "the private {what} ({}) served {got} bytes that are not the {BODY_BYTES}-byte file it was given",
            inst.role
        );
    }
    let neg = negotiated(&p).ok_or_else(|| anyhow!("the private {what} ({}) closed a keep-alive connection", inst.role))?;
    if (neg.0.as_str(), neg.1.as_str()) != (inst.expect.0.as_str(), inst.expect.1.as_str()) {
        bail!(
            "through a private {what} with the {} lines a default client negotiated {} {}, not {} {} as worked out",
            inst.role,
            neg.0,
            neg.1,
            inst.expect.0,
            inst.expect.1
        );
    }
    Ok(neg)
}

/// Each of `passes` (the name of the software whose diff it measures, for the
/// notes; its plan) through [`through`], one after the other within `budget`.
/// Returns what could not be measured, one sentence each (the diff then keeps
/// the loopback figures).
pub fn through_each(passes: Vec<(String, ThroughPlan)>, session: &mut Measurements, budget: Seconds) -> Vec<String> {
    in_turn(
        passes,
        budget,
        |plan: &mut ThroughPlan, share| {
            plan.budget = share;
            through(plan, session)
        },
        |software, plan, e| {
            format!(
                "{software}: the throughput change could not be measured through a private {}, so it is the loopback figure: {e:#}",
                plan.software.shown()
            )
        },
    )
}

/// Runs `passes` (a software's name, its plan) in turn within `budget`, `run`
/// giving each an even share of what is left when it starts (the passes after
/// it get the rest); none starts once Ctrl-C is asked. A pass that fails becomes
/// a note (`note`: the software, its plan, the error).
pub(super) fn in_turn<P>(
    passes: Vec<(String, P)>,
    budget: Seconds,
    mut run: impl FnMut(&mut P, Seconds) -> Result<()>,
    note: impl Fn(&str, &P, &anyhow::Error) -> String,
) -> Vec<String> {
    let mut notes = Vec::new();
    let t0 = Instant::now();
    let n = passes.len();
    for (k, (software, mut plan)) in passes.into_iter().enumerate() {
        if crate::interrupt::requested() {
            break;
        }
        let left = budget.0 - t0.elapsed().as_secs_f64();
        if let Err(e) = run(&mut plan, Seconds(left / (n - k) as f64)) {
            notes.push(note(&software, &plan, &e));
        }
    }
    notes
}

/// Starts one private server per instance, checks each, and measures HTTP/1.1
/// keep-alive GETs through them in interleaved slices within `plan.budget`. The
/// records go to `session`; the instances are stopped and their directories
/// removed before it returns, whatever happened.
pub fn through(plan: &ThroughPlan, session: &mut Measurements) -> Result<()> {
    let t0 = Instant::now();
    let sw = plan.software;
    let left = || Seconds(plan.budget.0 - t0.elapsed().as_secs_f64());
    session.progress_start(plan.instances.len() as u64);
    session.progress_message(&format!("starting private {} instances", sw.shown()));
    let client = default_client()?;
    // Both up before anything is timed; each stops (Drop) on every way out.
    let servers = start_servers(plan, &client)?;
    let share = left().0 * 0.9 / plan.instances.len().max(1) as f64;
    if share < 0.3 {
        bail!("no time left to measure through {} ({:.1} s)", sw.shown(), left().0);
    }
    let cfg = SamplerConfig {
        max_units: 1000,
        ..crate::measure::plans::share(Seconds(share), 1)
    };
    let (measured, server_cpu) = measure_servers(plan, &*session, &client, &servers, cfg);
    let suites: Vec<&str> = servers.iter().map(|s| s.neg.1.as_str()).collect();
    let paired = paired_gain(&plan.instances, &suites, &measured);
    for (k, (server, r)) in servers.iter().zip(measured).enumerate() {
        record_instance(plan, session, &server.neg, r, &server_cpu[k])?;
    }
    drop(servers);
    session.set_setting(
        &format!("through_{}", sw.name()),
        json!({
            "how": sw.how(),
            "measured": "interleaved slices, each a fresh keep-alive connection (TCP and full handshake untimed, checked), a short untimed warm-up, then GETs timed from request to last body byte; each slice is one sample",
            "instances": plan.instances.iter().map(|i| json!({"role": i.role, "lines": i.lines})).collect::<Vec<_>>(),
            "cert": plan.cert.name(),
            "budget_seconds": plan.budget.0,
            "seconds": t0.elapsed().as_secs_f64(),
            "paired_gain": paired,
        }),
    );
    session.progress_finish();
    Ok(())
}

/// What a default client negotiated: version, suite, OpenSSL name, group.
type Negotiated = (String, String, String, Option<String>);

/// A private server with one instance's lines, checked before timing.
struct Server {
    running: Box<dyn Served>,
    serving: Vec<u32>,
    neg: Negotiated,
}

/// Starts one private server per instance with a fresh identity and body, and
/// checks that each serves the body and negotiates what was worked out.
fn start_servers(plan: &ThroughPlan, client: &Arc<dyn ClientConfig>) -> Result<Vec<Server>> {
    let id = Identity::generate(plan.cert)?;
    let mut body = vec![0u8; BODY_BYTES];
    openssl::rand::rand_bytes(&mut body)?;
    let want = openssl::sha::sha256(&body);
    let mut servers = Vec::new();
    let sw = plan.software;
    for inst in &plan.instances {
        let spec = Spec {
            binary: &plan.binary,
            tls_lines: &inst.lines,
            identity: &id,
            body: &body,
            start_within: Duration::from_secs(10),
        };
        let running = sw
            .start(&spec)
            .with_context(|| format!("the private {} with the {} TLS lines", sw.shown(), inst.role))?;
        let neg = verify(client, sw, running.addr(), inst, &want, plan.timeout)?;
        let serving = running.serving();
        if serving.is_empty() {
            bail!("the private {} ({}) has no serving process", sw.shown(), inst.role);
        }
        servers.push(Server { running, serving, neg });
    }
    Ok(servers)
}

/// The servers' slices and, per server, each slice's worker CPU readings.
type ServersMeasured = (Vec<Result<Option<sampler::Sliced>>>, Vec<Vec<Vec<(f64, f64)>>>);

/// Measures the servers in interleaved slices, each a fresh connection.
fn measure_servers(
    plan: &ThroughPlan,
    s: &Measurements,
    client: &Arc<dyn ClientConfig>,
    servers: &[Server],
    cfg: SamplerConfig,
) -> ServersMeasured {
    let cfgs = vec![cfg; servers.len()];
    let mut server_cpu: Vec<Vec<Vec<(f64, f64)>>> = vec![Vec::new(); servers.len()];
    let measured = sampler::interleave(&cfgs, |spec| {
        let server = &servers[spec.subject];
        let (inst, neg) = (&plan.instances[spec.subject], &server.neg);
        s.progress_message(&format!(
            "through {} ({}): {} {} (slice {}/{})",
            plan.software.shown(),
            inst.role,
            neg.0,
            neg.1,
            spec.index + 1,
            spec.of
        ));
        let mut probes: Vec<Through> = (0..CONNECTIONS)
            .map(|k| Through {
                http: HttpProbe::new(client, server.running.addr(), None, "localhost".into(), PATH, plan.timeout),
                // One probe reads the server's CPU over each sample (all run at once).
                serving: if k == 0 { server.serving.clone() } else { Vec::new() },
                connections: CONNECTIONS,
                runs: Vec::new(),
            })
            .collect();
        let m = spec.measure(&mut probes, Rate::PerSecond)?;
        check_negotiated(&probes, inst, neg)?;
        let runs = &probes[0].runs;
        if !m.samples.is_empty() {
            server_cpu[spec.subject].push(runs[runs.len().saturating_sub(m.samples.len())..].to_vec());
        }
        Ok(m)
    });
    (measured, server_cpu)
}

/// Every slice's connections negotiated what was checked.
fn check_negotiated(probes: &[Through], inst: &Instance, neg: &Negotiated) -> Result<()> {
    for p in probes {
        if let Some(got) = negotiated(&p.http) {
            if got != *neg {
                bail!(
                    "a new connection to the private server ({}) negotiated {} {}",
                    inst.role,
                    got.0,
                    got.1
                );
            }
        }
    }
    Ok(())
}

/// Records one instance's throughput and server CPU (or why it failed).
fn record_instance(
    plan: &ThroughPlan,
    session: &mut Measurements,
    neg: &Negotiated,
    r: Result<Option<sampler::Sliced>>,
    server_cpu: &[Vec<(f64, f64)>],
) -> Result<()> {
    let subject = Subject {
        protocol: Some(neg.0.clone()),
        suite: Some(neg.1.clone()),
        openssl_name: Some(neg.2.clone()),
        group: neg.3.clone(),
        cert: Some(plan.cert.name().into()),
        library: Some("openssl".into()),
        threads: Some(CONNECTIONS),
        op: Some("http-get".into()),
        path: Some(PATH.into()),
        bytes: Some(BODY_BYTES as u64),
        mode: Some(plan.software.mode()),
        ..Default::default()
    };
    let mut cpu_subject = subject.clone();
    cpu_subject.mode = Some(plan.software.cpu_mode());
    match r {
        Ok(Some(m)) => {
            for rec in records(subject, cpu_subject, &m, server_cpu) {
                session.record(rec)?;
            }
        }
        Ok(None) => {}
        Err(e) => {
            let why = format!("{e:#}");
            session.record(ResultRecord::not_ok(
                Kind::TlsBulk,
                subject,
                Metric::BytesPerSec,
                Status::Failed,
                why.clone(),
            ))?;
            session.record(ResultRecord::not_ok(
                Kind::TlsBulk,
                cpu_subject,
                Metric::Seconds,
                Status::Failed,
                why,
            ))?;
        }
    }
    Ok(())
}

/// The recommended instance's throughput against the current one's, slice by
/// slice: the two were measured in turns (now, recommended, now, ...), so each
/// pair of neighbouring slices saw the same machine, and the ratio of a pair
/// cancels what moved the whole machine between pairs (another process starting,
/// the clock), as a load generator's before/after rounds do. The gain is the
/// median of the pairs' ratios minus one, with the engine's interval of that
/// median; `null` without both instances or [`MIN_SAMPLES`] pairs.
fn paired_gain(instances: &[Instance], suites: &[&str], measured: &[anyhow::Result<Option<sampler::Sliced>>]) -> serde_json::Value {
    let at = |role: &str| instances.iter().position(|i| i.role == role);
    let (Some(n), Some(r)) = (at("now"), at("recommended")) else {
        return serde_json::Value::Null;
    };
    let per_slice = |k: usize| -> Vec<f64> {
        match measured.get(k) {
            // One sample per slice in `combined`: the slice's work over its time.
            Some(Ok(Some(m))) => m.combined.samples.iter().map(|s| s.work / s.wall.0).collect(),
            _ => Vec::new(),
        }
    };
    let ratios = pair_ratios(&per_slice(n), &per_slice(r));
    let Some(sum) = (ratios.len() >= MIN_SAMPLES).then(|| Summary::of(&ratios)).flatten() else {
        return serde_json::Value::Null;
    };
    json!({
        "now": suites.get(n),
        "recommended": suites.get(r),
        "pairs": ratios.len(),
        "gain": sum.median - 1.0,
        "gain_low": sum.ci95_low - 1.0,
        "gain_high": sum.ci95_high - 1.0,
    })
}

/// Ratios of neighbouring slices, `rec[i] / now[i]`, over the slices both have
/// with a positive rate.
pub(super) fn pair_ratios(now: &[f64], rec: &[f64]) -> Vec<f64> {
    now.iter()
        .zip(rec)
        .filter(|(n, r)| **n > 0.0 && **r > 0.0 && n.is_finite() && r.is_finite())
        .map(|(n, r)| r / n)
        .collect()
}

/// The throughput record over slices, and the worker's CPU per GB per slice
/// (its CPU over the slice's sampled runs, over their bytes).
fn records(subject: Subject, cpu_subject: Subject, m: &sampler::Sliced, server: &[Vec<(f64, f64)>]) -> Vec<ResultRecord> {
    let kind = Kind::TlsBulk;
    let mut out = vec![match m.wall() {
        Some(w) => ResultRecord::ok(kind, subject.clone(), Metric::BytesPerSec, &w, m.cpu().as_ref()).with_values(m.combined.values_wall()),
        None => ResultRecord::not_ok(kind, subject, Metric::BytesPerSec, Status::Failed, "no samples"),
    }];
    let per_gb = |(cpu, bytes): (f64, f64)| (bytes > 0.0).then(|| cpu / bytes * 1e9);
    let total = |sl: &Vec<(f64, f64)>| sl.iter().fold((0.0, 0.0), |(c, b), (x, y)| (c + x, b + y));
    let per_slice: Vec<f64> = server.iter().filter_map(|sl| per_gb(total(sl))).collect();
    let within: Vec<Vec<f64>> = server.iter().map(|sl| sl.iter().filter_map(|x| per_gb(*x)).collect()).collect();
    out.push(match over_slices(&per_slice, &within) {
        Some(sum) if per_slice.iter().any(|&x| x > 0.0) => {
            ResultRecord::ok(kind, cpu_subject, Metric::Seconds, &sum, None).with_values(per_slice)
        }
        _ => ResultRecord::not_ok(
            kind,
            cpu_subject,
            Metric::Seconds,
            Status::Failed,
            "the server's CPU could not be read from /proc",
        ),
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Neighbouring slices pair up; a slice without a rate pairs with nothing.
    #[test]
    fn slices_pair_in_turn() {
        let r = pair_ratios(&[100.0, 50.0, 0.0, 200.0], &[300.0, 150.0, 90.0, 500.0, 7.0]);
        assert_eq!(r, vec![3.0, 3.0, 2.5]);
        assert!(pair_ratios(&[], &[1.0]).is_empty());
    }

    /// Passes run in turn, each with an even share of what is left when it
    /// starts (the last one gets all of it); one that fails is a note with its
    /// software's name, and the next still runs.
    #[test]
    fn passes_run_in_turn_with_even_shares_of_what_is_left() {
        let passes: Vec<(String, u32)> = vec![("nginx".into(), 1), ("apache".into(), 2), ("haproxy".into(), 3)];
        let mut shares = Vec::new();
        let notes = in_turn(
            passes,
            Seconds(9.0),
            |p: &mut u32, share| {
                shares.push((*p, share.0));
                if *p == 2 {
                    bail!("refused");
                }
                Ok(())
            },
            |software, p, e| format!("{software} ({p}): {e:#}"),
        );
        assert_eq!(notes, ["apache (2): refused"]);
        assert_eq!(shares.iter().map(|s| s.0).collect::<Vec<_>>(), [1, 2, 3]);
        // Nothing was spent: a third of 9 s, a half of what is left, all of it.
        for ((_, got), want) in shares.iter().zip([3.0, 4.5, 9.0]) {
            assert!(*got <= want && *got > want - 0.5, "{shares:?}");
        }
        assert!(in_turn(Vec::<(String, u32)>::new(), Seconds(1.0), |_, _| Ok(()), |_, _, _| String::new()).is_empty());
    }

    fn nginx() -> Option<PathBuf> {
        crate::discover::installed::find_program(&["nginx"]).map(PathBuf::from)
    }

    fn lines(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    const NOW: [&str; 3] = [
        "ssl_protocols TLSv1 TLSv1.1 TLSv1.2;",
        "ssl_ciphers ECDHE-RSA-AES128-SHA:ECDHE-RSA-AES128-GCM-SHA256;",
        "ssl_prefer_server_ciphers on;",
    ];
    const REC: [&str; 4] = [
        "ssl_protocols TLSv1.2 TLSv1.3;",
        "ssl_ciphers ECDHE-RSA-AES128-GCM-SHA256;",
        "ssl_conf_command Ciphersuites TLS_AES_128_GCM_SHA256;",
        "ssl_prefer_server_ciphers on;",
    ];

    /// The known answer: the body a GET receives through nginx hashes to the
    /// served file, and a different file (or another suite than expected) fails.
    #[test]
    fn the_probe_gets_the_served_file_and_notices_another() {
        let Some(bin) = nginx() else {
            crate::testing::missing("nginx is not installed");
            return;
        };
        let id = Identity::generate(CertType::Rsa2048).unwrap();
        let mut body = vec![0u8; BODY_BYTES];
        openssl::rand::rand_bytes(&mut body).unwrap();
        let tls = lines(&NOW);
        let n = PrivateNginx::start(&Spec {
            binary: &bin,
            tls_lines: &tls,
            identity: &id,
            body: &body,
            start_within: Duration::from_secs(10),
        })
        .unwrap();
        let client = default_client().unwrap();
        let inst = Instance {
            role: "now",
            lines: tls.clone(),
            expect: ("TLSv1.2".into(), "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA".into()),
        };
        let t = Duration::from_secs(10);
        let neg = verify(&client, Software::Nginx, n.addr(), &inst, &openssl::sha::sha256(&body), t).unwrap();
        assert_eq!((neg.0.as_str(), neg.2.as_str()), ("TLSv1.2", "ECDHE-RSA-AES128-SHA"));
        // One byte different: not the file.
        body[BODY_BYTES / 2] ^= 1;
        let e = verify(&client, Software::Nginx, n.addr(), &inst, &openssl::sha::sha256(&body), t).unwrap_err();
        assert!(e.to_string().contains("not the"), "{e:#}");
        body[BODY_BYTES / 2] ^= 1;
        // Another suite than worked out: said, not measured.
        let wrong = Instance {
            expect: ("TLSv1.2".into(), "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256".into()),
            ..inst
        };
        let e = verify(&client, Software::Nginx, n.addr(), &wrong, &openssl::sha::sha256(&body), t).unwrap_err();
        assert!(
            e.to_string().contains("negotiated TLSv1.2 TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA"),
            "{e:#}"
        );
    }

    /// Each software's installed-style lines and recommended ones, and what a
    /// default client negotiates with each.
    fn instances(sw: Software) -> Vec<Instance> {
        let (now, rec): (&[&str], &[&str]) = match sw {
            Software::Nginx => (&NOW, &REC),
            Software::Apache => (
                &[
                    "SSLProtocol -all +TLSv1.2",
                    "SSLCipherSuite ECDHE-RSA-AES128-SHA:ECDHE-RSA-AES128-GCM-SHA256",
                    "SSLHonorCipherOrder on",
                ],
                &[
                    "SSLProtocol -all +TLSv1.2 +TLSv1.3",
                    "SSLCipherSuite ECDHE-RSA-AES128-GCM-SHA256",
                    "SSLCipherSuite TLSv1.3 TLS_AES_128_GCM_SHA256",
                    "SSLHonorCipherOrder on",
                ],
            ),
            Software::Haproxy => (
                &[
                    "ssl-default-bind-ciphers ECDHE-RSA-AES128-SHA:ECDHE-RSA-AES128-GCM-SHA256",
                    "ssl-default-bind-options ssl-min-ver TLSv1.2 ssl-max-ver TLSv1.2",
                ],
                &[
                    "ssl-default-bind-ciphers ECDHE-RSA-AES128-GCM-SHA256",
                    "ssl-default-bind-ciphersuites TLS_AES_128_GCM_SHA256",
                    "ssl-default-bind-options ssl-min-ver TLSv1.2 ssl-max-ver TLSv1.3",
                ],
            ),
            Software::Stunnel => (
                &[
                    "sslVersionMax = TLSv1.2",
                    "ciphers = ECDHE-RSA-AES128-SHA:ECDHE-RSA-AES128-GCM-SHA256",
                    "options = CIPHER_SERVER_PREFERENCE",
                ],
                &[
                    "sslVersionMin = TLSv1.2",
                    "sslVersionMax = TLSv1.3",
                    "ciphers = ECDHE-RSA-AES128-GCM-SHA256",
                    "ciphersuites = TLS_AES_128_GCM_SHA256",
                    "options = CIPHER_SERVER_PREFERENCE",
                ],
            ),
        };
        vec![
            Instance {
                role: "now",
                lines: lines(now),
                expect: ("TLSv1.2".into(), "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA".into()),
            },
            Instance {
                role: "recommended",
                lines: lines(rec),
                expect: ("TLSv1.3".into(), "TLS_AES_128_GCM_SHA256".into()),
            },
        ]
    }

    /// Two instances of `sw` measured interleaved: one throughput and one server
    /// CPU per GB record each, under its through modes, with the suites
    /// negotiated, and the paired gain.
    fn both_instances_are_measured_through(sw: Software) {
        let Some(bin) = crate::discover::installed::find_program(sw.programs()).map(PathBuf::from) else {
            crate::testing::missing(&format!("{} is not installed", sw.name()));
            return;
        };
        let plan = ThroughPlan {
            software: sw,
            binary: bin,
            cert: CertType::Rsa2048,
            instances: instances(sw),
            // Enough for two paired slices per instance after both start, also
            // when the machine is busy (2.5 s left one slice in 1 of 2 runs).
            budget: Seconds(5.0),
            timeout: Duration::from_secs(10),
        };
        let mut session = crate::measure::sink::Measurements::new();
        through(&plan, &mut session).unwrap();
        let r = session.results();
        let find = |suite: &str, mode: &str| {
            r.iter()
                .find(|x| x.subject.suite.as_deref() == Some(suite) && x.subject.mode.as_deref() == Some(mode))
                .unwrap_or_else(|| panic!("no {mode} record of {suite}: {r:#?}"))
        };
        for suite in ["TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA", "TLS_AES_128_GCM_SHA256"] {
            let thr = find(suite, &sw.mode());
            assert_eq!(
                (thr.kind, thr.metric, thr.status),
                (Kind::TlsBulk, Metric::BytesPerSec, Status::Ok),
                "{thr:?}"
            );
            assert_eq!(thr.subject.op.as_deref(), Some("http-get"));
            assert!(thr.samples.unwrap_or(0) >= 2 && thr.median.unwrap() > 1e6, "{thr:?}");
            let cpu = find(suite, &sw.cpu_mode());
            assert_eq!((cpu.metric, cpu.status), (Metric::Seconds, Status::Ok), "{cpu:?}");
            assert!(cpu.median.unwrap() > 0.0, "{cpu:?}");
        }
        let through = format!("through-{}", sw.name());
        assert!(r.iter().all(|x| x.subject.mode.as_deref().is_some_and(|m| m.ends_with(&through))));
        let setting = &session.settings[&format!("through_{}", sw.name())];
        assert_eq!(setting["how"], sw.how());
        assert_eq!(setting["paired_gain"]["now"], "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA", "{setting:#}");
    }

    #[test]
    fn both_instances_are_measured_and_recorded_apart() {
        both_instances_are_measured_through(Software::Nginx);
    }

    #[test]
    fn both_apache_instances_are_measured_and_recorded_apart() {
        both_instances_are_measured_through(Software::Apache);
    }

    #[test]
    fn both_haproxy_instances_are_measured_and_recorded_apart() {
        both_instances_are_measured_through(Software::Haproxy);
    }

    #[test]
    fn both_stunnel_instances_are_measured_and_recorded_apart() {
        both_instances_are_measured_through(Software::Stunnel);
    }
}
