//! Through a private NZBGet: what a change of NZBGet's TLS lines gains, measured
//! through NZBGet itself, as `through` measures nginx's.
//!
//! Why: NZBGet is a news client. What a cipher changes is its download rate,
//! and NZBGet adds its own work per byte that the cipher does not touch (yEnc
//! decoding, writing the file), so the loopback figure (TLS records alone) says
//! more than NZBGet will gain. So, where NZBGet is installed, two private NZBGet
//! instances are started (`backend::nzbget`), each with its own private news
//! server on 127.0.0.1 (`backend::nntp`, which honours the client's order): one
//! with the installed Server cipher (and the OpenSSL configuration the installed
//! drop-in gives it, or none) and one with the emitted lines (ServerX.Cipher and,
//! before NZBGet 25.4, the emitted OpenSSL configuration as its `OPENSSL_CONF`).
//! Each round, each downloads the same NZB of yEnc articles over TLS, the two in
//! turns (now, recommended; then recommended, now ...).
//!
//! NZBGet downloads over [`CONNECTIONS`] connections, as a real download does,
//! so that it decrypts and decodes on every core: with one connection the rate
//! is bound by the turn-around between articles more than by the cipher (on the
//! 2-core VM with AES masked, AES-256-GCM to ChaCha20 measured +9 % through one
//! connection and +210 % through four).
//! The rate of a round is timed at the news server, per connection: from its
//! first article's command to its last one's, over the articles in between (NZBGet
//! asks for an article once it has read and decoded the one before on that
//! connection), the connections' rates added up. That is NZBGet's own download
//! and decoding of those articles; NZBGet's
//! queue, start-up and history bookkeeping, the same for both, are left out. A
//! round ends once every article is served and NZBGet's queue holds nothing of
//! it; NZBGet then takes about 0.6 s to move the file into its history, which
//! the next round waits for only when an earlier one is still not there (at
//! most one round behind): every round's history is judged as it comes
//! (SUCCESS, every article decoded, the file's size), all of them before the
//! figures are recorded.
//!
//! Before anything is timed each instance proves it does real work (the known
//! answer): one download whose history says SUCCESS with every article decoded,
//! whose file hashes to the file the articles are parts of, over the suite and
//! protocol the diff says NZBGet negotiates there. Its records are `tls-bulk`
//! with op `nzbget-download` and mode [`MODE`], so they never mix with loopback
//! records.

use crate::backend::nntp::{Articles, NewsServer, Spec};
use crate::backend::nzbget::{Download, Downloaded, PrivateNzbget};
use crate::deadline::Deadline;
use crate::measure::engine::stats::{few_samples, MIN_SAMPLES};
use crate::measure::sink::Measurements;
use crate::model::{Kind, Metric, ResultRecord, Status, Subject, Summary};
use crate::units::Seconds;
use anyhow::{anyhow, bail, Context, Result};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The mode of the download records measured through a private NZBGet.
pub const MODE: &str = crate::model::THROUGH_NZBGET;
/// How these figures were measured, in words (the diff shows it).
pub const HOW: &str = "through a private NZBGet downloading yEnc articles over TLS (four connections) from a private news server";
/// The articles of one round: 16 parts of 768,000 bytes (12 MB), the size of
/// a usual Usenet article, four per connection.
pub const ARTICLES: Articles = Articles { count: 16, size: 768_000 };
/// NZBGet's connections to its news server (`Server1.Connections`): four, as
/// `bench/nzbget.sh` downloads, so that NZBGet decrypts and decodes on every
/// core as a download does, not one article at a time.
pub const CONNECTIONS: usize = 4;
/// How long one JSON-RPC call to NZBGet may take (within the deadline).
const RPC_WITHIN: Duration = Duration::from_secs(5);
/// The most rounds NZBGet may have downloaded and not yet moved into its
/// history (it does that one NZB at a time, about 0.6 s each) before the next
/// round waits for it.
const BACKLOG: usize = 1;
/// How long a private NZBGet may take to answer once started.
const START_WITHIN: Duration = Duration::from_secs(10);
/// The longest the last rounds may take to reach NZBGet's history (past the
/// budget, within the run's deadline).
const SETTLE_MOST: Duration = Duration::from_secs(10);
/// Kept at the end for the last rounds to reach NZBGet's history.
const SETTLE: Duration = Duration::from_secs(1);
/// The most rounds per instance.
const MAX_ROUNDS: usize = 40;

/// One private NZBGet to measure.
#[derive(Debug, Clone)]
pub struct Instance {
    /// `now` or `recommended`, for messages.
    pub role: &'static str,
    /// Its Server1.Cipher.
    pub cipher: String,
    /// The OpenSSL configuration it gets as `OPENSSL_CONF` (its text), if any.
    pub openssl_conf: Option<String>,
    /// What it must negotiate with the news server: (protocol, IANA suite).
    pub expect: (String, String),
}

/// What to measure through NZBGet.
#[derive(Debug, Clone)]
pub struct NzbgetPlan {
    pub nzbget: PathBuf,
    pub instances: Vec<Instance>,
    pub articles: Articles,
    /// NZBGet's connections to its news server.
    pub connections: usize,
    /// Everything included: start-up, the known answer, rounds, teardown.
    pub budget: Seconds,
}

/// A private NZBGet with its private news server, checked.
pub struct Client {
    news: NewsServer,
    nzbget: PrivateNzbget,
    /// What the news server negotiated with it: (protocol, suite, group).
    neg: (String, String, Option<String>),
    articles: Articles,
    rounds: usize,
    /// Rounds not yet judged by their history.
    pending: Vec<i64>,
}

/// Starts the news server and NZBGet of `inst` and makes the known-answer
/// download: it must succeed, decode every article to the file the articles
/// are parts of, and negotiate what was worked out.
pub fn start_client(plan: &NzbgetPlan, inst: &Instance, within: Duration) -> Result<Client> {
    // The news server outlives the rounds by the wait for their history; it
    // stops when dropped in any case.
    let news = NewsServer::start(Spec {
        articles: plan.articles,
        connections: usize::MAX,
        within: within + SETTLE_MOST,
        tls12_only: false,
    })?;
    let nzbget = PrivateNzbget::downloading(
        &plan.nzbget,
        inst.openssl_conf.as_deref(),
        Download {
            port: news.port(),
            cipher: &inst.cipher,
            connections: plan.connections,
        },
        within.min(START_WITHIN),
    )
    .with_context(|| format!("the private NZBGet with the {} lines", inst.role))?;
    let mut c = Client {
        news,
        nzbget,
        neg: Default::default(),
        articles: plan.articles,
        rounds: 0,
        pending: Vec::new(),
    };
    let d = c.download(inst, Deadline::after(within))?;
    let file = d.dest.join(crate::backend::nntp::FILE);
    let got = sha256_of(&file)?;
    let _ = std::fs::remove_dir_all(&d.dest);
    if got != c.news.file_sha256() {
        bail!(
            "the private NZBGet ({}) wrote {} that is not the file the articles are parts of",
            inst.role,
            file.display()
        );
    }
    let seen = c.news.negotiated();
    let first = seen
        .first()
        .ok_or_else(|| anyhow!("the private NZBGet ({}) downloaded without a TLS handshake", inst.role))?;
    if (first.protocol.as_str(), first.suite.as_str()) != (inst.expect.0.as_str(), inst.expect.1.as_str()) {
        bail!(
            "through a private NZBGet with the {} lines NZBGet negotiated {} {}, not {} {} as worked out",
            inst.role,
            first.protocol,
            first.suite,
            inst.expect.0,
            inst.expect.1
        );
    }
    c.neg = (first.protocol.clone(), first.suite.clone(), first.group.clone());
    Ok(c)
}

impl Client {
    /// One download of the NZB, waited for until NZBGet's history has it; it
    /// must have succeeded ([`Client::judge`]).
    fn download(&mut self, inst: &Instance, deadline: Deadline) -> Result<Downloaded> {
        let id = self.append(inst, deadline)?;
        let d = self.nzbget.wait_history(id, deadline)?;
        self.judge(inst, &d)?;
        Ok(d)
    }

    fn append(&mut self, inst: &Instance, deadline: Deadline) -> Result<i64> {
        self.rounds += 1;
        let name = format!("cipherbench-{}-{}.nzb", inst.role, self.rounds);
        self.nzbget.append(&name, &self.news.nzb(), deadline.cap(Duration::from_secs(10)))
    }

    /// NZBGet's history must say the download succeeded with every article
    /// decoded and the whole file's size.
    fn judge(&self, inst: &Instance, d: &Downloaded) -> Result<()> {
        let a = self.articles;
        if !d.status.starts_with("SUCCESS")
            || d.success_articles != a.count as u64
            || d.failed_articles != 0
            || d.file_bytes != (a.count * a.size) as u64
        {
            bail!(
                "the private NZBGet ({}) did not download the NZB: status {}, {} of {} articles decoded, {} failed, {} of {} bytes",
                inst.role,
                d.status,
                d.success_articles,
                a.count,
                d.failed_articles,
                d.file_bytes,
                a.count * a.size
            );
        }
        Ok(())
    }

    /// The rounds NZBGet has finished since the last look (its history): each
    /// must have succeeded; their files are removed. Waits (until `deadline`)
    /// while more than `most` rounds are not in the history yet.
    fn settle(&mut self, inst: &Instance, most: usize, deadline: Deadline) -> Result<()> {
        loop {
            let Some(slice) = deadline.slice() else {
                bail!("the private NZBGet ({}) did not finish its downloads in time", inst.role);
            };
            for (id, d) in self.nzbget.history(deadline.cap(RPC_WITHIN).max(slice))? {
                if let Some(k) = self.pending.iter().position(|p| *p == id) {
                    self.pending.swap_remove(k);
                    self.judge(inst, &d)?;
                    let _ = std::fs::remove_dir_all(&d.dest);
                }
            }
            if self.pending.len() <= most {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(10).min(slice));
        }
    }

    /// One timed round: the download rate in bytes per second, from the news
    /// server's times (see the module doc); every handshake of it negotiated
    /// what the known answer did. The round ends when the news server has
    /// served every article and NZBGet's queue has nothing left of it; what
    /// NZBGet does after (moving the file into its history) is judged later,
    /// by [`Client::settle`].
    fn round(&mut self, inst: &Instance, deadline: Deadline) -> Result<f64> {
        self.settle(inst, BACKLOG, deadline)?;
        let before = self.news.served().len();
        let id = self.append(inst, deadline)?;
        self.pending.push(id);
        loop {
            let Some(slice) = deadline.slice() else {
                bail!("the private NZBGet ({}) did not finish a round in time", inst.role);
            };
            if self.news.served().len() >= before + self.articles.count
                && self.nzbget.remaining(id, deadline.cap(RPC_WITHIN).max(slice))?.unwrap_or(0) == 0
            {
                break;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        let served = self.news.served();
        let rate = rate_of(&served[before.min(served.len())..])
            .ok_or_else(|| anyhow!("the private NZBGet ({}) downloaded fewer than two articles in a round", inst.role))?;
        if let Some(n) = self
            .news
            .negotiated()
            .iter()
            .find(|n| (&n.protocol, &n.suite) != (&self.neg.0, &self.neg.1))
        {
            bail!("a new connection of the private NZBGet ({}) negotiated {n}", inst.role);
        }
        Ok(rate)
    }
}

/// The rate of one round's articles: on each connection, the bytes of all its
/// articles but the last over the time from its first article's command to its
/// last one's; the connections' rates added up (they download side by side).
/// `None` when no connection had two articles with time between them.
pub fn rate_of(served: &[crate::backend::nntp::Served]) -> Option<f64> {
    let mut conns: Vec<usize> = served.iter().map(|s| s.conn).collect();
    conns.sort_unstable();
    conns.dedup();
    let rates: Vec<f64> = conns
        .iter()
        .filter_map(|c| {
            let on: Vec<_> = served.iter().filter(|s| s.conn == *c).collect();
            let (first, last) = (on.first()?, on.last()?);
            let span = last.asked.checked_duration_since(first.asked)?.as_secs_f64();
            let bytes: usize = on[..on.len() - 1].iter().map(|s| s.bytes).sum();
            (on.len() >= 2 && span > 0.0).then(|| bytes as f64 / span)
        })
        .collect();
    (!rates.is_empty()).then(|| rates.iter().sum())
}

fn sha256_of(p: &Path) -> Result<[u8; 32]> {
    use std::io::Read;
    let mut f = std::fs::File::open(p).with_context(|| format!("NZBGet wrote no {}", p.display()))?;
    let mut h = openssl::sha::Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = f.read(&mut buf)?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(h.finish())
}

/// Each of `passes` (the name of the software whose diff it measures, for the
/// notes; its plan) through [`through_nzbget`], one after the other within
/// `budget` (as `through::through_each`). Returns what could not be measured,
/// one sentence each (the diff then keeps the loopback figures).
pub fn through_nzbget_each(passes: Vec<(String, NzbgetPlan)>, session: &mut Measurements, budget: Seconds) -> Vec<String> {
    super::through::in_turn(
        passes,
        budget,
        |plan: &mut NzbgetPlan, share| {
            plan.budget = share;
            through_nzbget(plan, session)
        },
        |software, _, e| {
            format!("{software}: the throughput change could not be measured through a private NZBGet, so it is the loopback figure: {e:#}")
        },
    )
}

/// Starts one private NZBGet (and news server) per instance, checks each with
/// the known answer, and times downloads through them in interleaved rounds
/// within `plan.budget`. The records go to `session`; the instances are stopped
/// and their directories removed before it returns, whatever happened.
pub fn through_nzbget(plan: &NzbgetPlan, session: &mut Measurements) -> Result<()> {
    let t0 = Instant::now();
    let end = crate::deadline::run().min(Deadline::after(Duration::from_secs_f64(plan.budget.0.max(0.0))));
    session.progress_message("starting private NZBGet instances");
    let mut clients = Vec::new();
    for inst in &plan.instances {
        clients.push(start_client(plan, inst, end.left())?);
    }
    let mut rates: Vec<Vec<f64>> = vec![Vec::new(); clients.len()];
    let mut pair_time = Duration::ZERO;
    for r in 0..MAX_ROUNDS {
        // Another pair only when it fits in what is left (the last one's time and
        // a half more, and the last rounds' wait for their history).
        if crate::interrupt::requested() || end.left() < pair_time.mul_f64(1.5) + SETTLE || end.expired() {
            break;
        }
        let p0 = Instant::now();
        let order: Vec<usize> = if r % 2 == 0 {
            (0..clients.len()).collect()
        } else {
            (0..clients.len()).rev().collect()
        };
        for k in order {
            let inst = &plan.instances[k];
            session.progress_message(&format!(
                "through NZBGet ({}): {} {} (round {})",
                inst.role,
                clients[k].neg.0,
                clients[k].neg.1,
                r + 1
            ));
            match clients[k].round(inst, end) {
                Ok(v) => rates[k].push(v),
                // The deadline cut a round short: the rounds before it stand.
                Err(_) if end.expired() || crate::interrupt::requested() => break,
                Err(e) => return Err(e),
            }
        }
        pair_time = p0.elapsed();
    }
    // Every round must have succeeded, as its history says (a little past the
    // budget: the run's deadline bounds it).
    let settle_by = crate::deadline::run().min(Deadline::after(SETTLE_MOST));
    for (c, inst) in clients.iter_mut().zip(&plan.instances) {
        c.settle(inst, 0, settle_by)?;
    }
    // The pairs both finished.
    let pairs = rates.iter().map(Vec::len).min().unwrap_or(0);
    let paired = paired_gain(&plan.instances, &clients, &rates, pairs);
    for (c, v) in clients.iter().zip(&rates) {
        session.record(record(plan, c, v))?;
    }
    drop(clients);
    session.set_setting(
        "through_nzbget",
        json!({
            "how": HOW,
            "measured": "interleaved rounds, each a download of the same NZB by one private NZBGet after the other (in turns); each round's rate is timed at the news server from the first article's command to the last one's; a known-answer download first (untimed)",
            "instances": plan.instances.iter().map(|i| json!({"role": i.role, "cipher": i.cipher, "openssl_conf": i.openssl_conf})).collect::<Vec<_>>(),
            "articles": {"count": plan.articles.count, "size": plan.articles.size},
            "connections": plan.connections,
            "budget_seconds": plan.budget.0,
            "seconds": t0.elapsed().as_secs_f64(),
            "rounds": pairs,
            "paired_gain": paired,
        }),
    );
    Ok(())
}

/// The recommended instance's rate over the current one's, round by round (the
/// two downloaded in turns), as `through::paired_gain`: the median of the
/// ratios minus one with the engine's interval; `null` without [`MIN_SAMPLES`].
fn paired_gain(instances: &[Instance], clients: &[Client], rates: &[Vec<f64>], pairs: usize) -> serde_json::Value {
    let at = |role: &str| instances.iter().position(|i| i.role == role);
    let (Some(n), Some(r)) = (at("now"), at("recommended")) else {
        return serde_json::Value::Null;
    };
    let ratios = super::through::pair_ratios(&rates[n][..pairs], &rates[r][..pairs]);
    let Some(sum) = (ratios.len() >= MIN_SAMPLES).then(|| Summary::of(&ratios)).flatten() else {
        return serde_json::Value::Null;
    };
    json!({
        "now": clients[n].neg.1,
        "recommended": clients[r].neg.1,
        "pairs": ratios.len(),
        "gain": sum.median - 1.0,
        "gain_low": sum.ci95_low - 1.0,
        "gain_high": sum.ci95_high - 1.0,
    })
}

/// One instance's download-rate record (or why it has none).
fn record(plan: &NzbgetPlan, c: &Client, rates: &[f64]) -> ResultRecord {
    let subject = Subject {
        protocol: Some(c.neg.0.clone()),
        suite: Some(c.neg.1.clone()),
        group: c.neg.2.clone(),
        library: Some("openssl".into()),
        threads: Some(plan.connections),
        op: Some("nzbget-download".into()),
        bytes: Some((plan.articles.count * plan.articles.size) as u64),
        mode: Some(MODE.into()),
        ..Default::default()
    };
    match Summary::of(rates) {
        Some(s) => {
            ResultRecord::ok(Kind::TlsBulk, subject, Metric::BytesPerSec, &few_samples(s, rates, 1.1), None).with_values(rates.to_vec())
        }
        None => ResultRecord::not_ok(
            Kind::TlsBulk,
            subject,
            Metric::BytesPerSec,
            Status::Failed,
            "no round finished within the budget",
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::nntp::Served;

    fn nzbget() -> Option<PathBuf> {
        let p = crate::discover::installed::find_program(&["nzbget"]).map(PathBuf::from);
        if p.is_none() {
            crate::testing::missing("nzbget is not installed");
        }
        p
    }

    /// A round's rate: the bytes of all but the last article over the time
    /// between the first and the last command.
    #[test]
    fn the_rate_spans_the_first_to_the_last_article() {
        let t = Instant::now();
        let s = |conn: usize, ms: u64| Served {
            asked: t + Duration::from_millis(ms),
            conn,
            bytes: 1000,
        };
        let r = rate_of(&[s(1, 0), s(1, 10), s(1, 20)]).unwrap();
        assert!((r - 2000.0 / 0.020).abs() < 1e-6, "{r}");
        // Two connections side by side: their rates add up; one with a single
        // article has none of its own.
        let r = rate_of(&[s(1, 0), s(2, 5), s(1, 10), s(2, 25), s(1, 20), s(3, 7)]).unwrap();
        assert!((r - (2000.0 / 0.020 + 1000.0 / 0.020)).abs() < 1e-6, "{r}");
        assert_eq!(rate_of(&[s(1, 0), s(2, 3)]), None);
        assert_eq!(rate_of(&[]), None);
    }

    fn plan(bin: PathBuf, instances: Vec<Instance>, budget: f64) -> NzbgetPlan {
        NzbgetPlan {
            nzbget: bin,
            instances,
            articles: Articles { count: 8, size: 64 * 1024 },
            connections: 2,
            budget: Seconds(budget),
        }
    }

    fn default_tls13() -> String {
        let k = crate::discover::installed::run("openssl", &["ciphers", "-s", "-stdname", "-tls1_3"]).unwrap();
        k.out.split_whitespace().next().unwrap().to_string()
    }

    /// The known answer: the real NZBGet downloads and decodes every article
    /// (its history says SUCCESS, the byte count and the file's hash match)
    /// over the suite worked out; a suite other than the one it negotiates is
    /// said, not measured.
    #[test]
    fn the_known_answer_is_a_real_download_and_another_suite_is_noticed() {
        let Some(bin) = nzbget() else { return };
        let default = default_tls13();
        let inst = Instance {
            role: "now",
            cipher: String::new(),
            openssl_conf: None,
            expect: ("TLSv1.3".into(), default.clone()),
        };
        let p = plan(bin, vec![inst.clone()], 30.0);
        let mut c = start_client(&p, &inst, Duration::from_secs(30)).unwrap();
        assert_eq!(c.neg.1, default);
        let before = c.news.served().len();
        let rate = c.round(&inst, Deadline::after(Duration::from_secs(30))).unwrap();
        assert_eq!(c.news.served().len() - before, 8, "one round is every article once");
        c.settle(&inst, 0, Deadline::after(Duration::from_secs(30))).unwrap();
        assert!(c.pending.is_empty());
        assert!(rate > 1e5 && rate.is_finite(), "{rate}");
        // Parts whose CRC-32 does not match: NZBGet fails them, and so does the probe.
        c.news.corrupt();
        let e = c
            .download(&inst, Deadline::after(Duration::from_secs(30)))
            .expect_err("corrupt articles passed");
        assert!(e.to_string().contains("did not download the NZB"), "{e:#}");
        drop(c);
        let other = if default == "TLS_CHACHA20_POLY1305_SHA256" {
            "TLS_AES_128_GCM_SHA256"
        } else {
            "TLS_CHACHA20_POLY1305_SHA256"
        };
        let wrong = Instance {
            expect: ("TLSv1.3".into(), other.into()),
            ..inst
        };
        let e = start_client(&p, &wrong, Duration::from_secs(30))
            .err()
            .expect("another suite was not noticed");
        assert!(
            e.to_string()
                .contains(&format!("negotiated TLSv1.3 {default}, not TLSv1.3 {other}")),
            "{e:#}"
        );
    }

    /// Two instances in rounds: the one with an OpenSSL configuration putting
    /// ChaCha20 first negotiates it, each has a download-rate record, and the
    /// paired gain is there with its interval.
    #[test]
    fn both_instances_are_measured_in_rounds() {
        let Some(bin) = nzbget() else { return };
        let system = crate::software::nzbget::read::environment();
        let cnf = format!(
            ".include {}\n[ {} ]\nssl_conf = cb_ssl\n[ cb_ssl ]\nsystem_default = cb_tls\n[ cb_tls ]\nCiphersuites = TLS_CHACHA20_POLY1305_SHA256:TLS_AES_128_GCM_SHA256\n",
            system.system_cnf, system.init_section
        );
        let default = default_tls13();
        if default == "TLS_CHACHA20_POLY1305_SHA256" {
            return eprintln!("skipped: OpenSSL's default is ChaCha20 already");
        }
        let p = plan(
            bin,
            vec![
                Instance {
                    role: "now",
                    cipher: String::new(),
                    openssl_conf: None,
                    expect: ("TLSv1.3".into(), default.clone()),
                },
                Instance {
                    role: "recommended",
                    cipher: "ECDHE-ECDSA-CHACHA20-POLY1305".into(),
                    openssl_conf: Some(cnf),
                    expect: ("TLSv1.3".into(), "TLS_CHACHA20_POLY1305_SHA256".into()),
                },
            ],
            12.0,
        );
        let mut session = Measurements::new();
        through_nzbget(&p, &mut session).unwrap();
        let r = session.results();
        for suite in [default.as_str(), "TLS_CHACHA20_POLY1305_SHA256"] {
            let x = r
                .iter()
                .find(|x| x.subject.suite.as_deref() == Some(suite))
                .unwrap_or_else(|| panic!("no record of {suite}: {r:#?}"));
            assert_eq!(
                (x.kind, x.metric, x.status),
                (Kind::TlsBulk, Metric::BytesPerSec, Status::Ok),
                "{x:?}"
            );
            assert_eq!(x.subject.mode.as_deref(), Some(MODE));
            assert!(x.samples.unwrap_or(0) >= MIN_SAMPLES && x.median.unwrap() > 1e5, "{x:?}");
        }
        let s = &session.settings["through_nzbget"];
        eprintln!("{s:#}");
        assert_eq!(s["how"], HOW);
        let g = &s["paired_gain"];
        assert_eq!(g["recommended"], "TLS_CHACHA20_POLY1305_SHA256", "{s:#}");
        assert!(g["gain_low"].as_f64().unwrap() <= g["gain"].as_f64().unwrap(), "{g}");
    }
}
