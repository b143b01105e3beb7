//! The sweep: decomposed (the policy's ciphers with one MAC, then its MACs with
//! one cipher, refused last, all with one kex; handshakes over kex × host key) or
//! the full matrix, and the comparison of two sweeps.

use super::*;
use crate::backend::openssh::client::{Algorithms, Client, SshError};
use crate::measure::engine::race;
use crate::measure::engine::sampler::{self, Measurement, Rate};
use crate::measure::sink::Measurements;
use crate::model::{Kind, Metric, ResultRecord, Status};
use anyhow::{bail, Result};
use serde_json::json;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Runs the plan: preflight, feature check, bulk, handshakes, racing. Results go
/// to the session as they are made.
///
/// The whole sweep keeps to `plan.budget` (within a few percent): connecting,
/// the feature check, session set-up and priming count against it, no session
/// starts that would not end in time, and subjects left over when it is spent
/// are recorded as skipped, with a warning. Every bulk sample is one session
/// (with `--bytes`, of that volume); no session's figure is thrown away.
pub fn sweep(plan: &SshPlan, client: &Client, session: &mut Measurements) -> Result<()> {
    sweep_with(plan, client, session, &mut Preflight::default())
}

/// What sweeps learnt about one target before measuring: what one connection
/// costs (with which sink command) and which single algorithms both sides
/// accept. Passed from sweep to sweep against the same target and client (the
/// main job's bulk pass, MAC pass and race), it spares the later ones the
/// preflight connection and every feature check already made; they check only
/// the algorithms that are new to them.
#[derive(Debug, Clone, Default)]
pub struct Preflight {
    pub(super) conn: Option<(&'static str, f64)>,
    pub(super) accepted: Accepted,
}

/// [`sweep`], reusing and extending what `pre` knows about the target.
///
/// The noise of the run is the throughput's and the handshakes' (as before the
/// server's CPU was read): the server CPU per GB records are made after it is
/// settled, and floored by it like every other interval.
pub fn sweep_with(plan: &SshPlan, client: &Client, session: &mut Measurements, pre: &mut Preflight) -> Result<()> {
    use crate::measure::engine::noise;
    let from = session.results().len();
    let server_cpu = sweep_pass(plan, client, session, pre)?;
    noise::settle(session, &[Kind::SshBulk, Kind::SshHandshake], from)?;
    let floor = noise::stored(session.settings(), Kind::SshBulk);
    for r in server_cpu {
        session.record(match floor {
            Some(n) => noise::floor(r, n),
            None => r,
        })?;
    }
    Ok(())
}

/// [`sweep_with`] before the run's noise is settled; returns the server CPU per
/// GB records (one per bulk subject measured, none for a remote server).
///
/// The order of spending (`stages.rs`): the first passes of the allowed ciphers,
/// then of the allowed MACs, in rounds (A B C, A B C …); the handshakes; then,
/// stage by stage, the top-ups and the race of each stage's leaders; the refused
/// subjects last, with the time kept for them, and only if it is left.
fn sweep_pass(plan: &SshPlan, client: &Client, session: &mut Measurements, pre: &mut Preflight) -> Result<Vec<ResultRecord>> {
    let start = Instant::now();
    let clock = Clock::new(start, plan.budget);
    // Preflight: the target answers, lets us in and has the sink command.
    let sink = if plan.verify { HASH_SINK } else { SINK };
    let conn = connection_cost(client, session, pre, sink, start)?;
    session.set_setting("ssh_bulk_samples", json!(BULK_SAMPLES));
    let (accepted, plan) = feature_check(&plan.narrowed(), client, session, &clock, pre.accepted.clone())?;
    pre.accepted = accepted.clone();
    let plan = &plan;

    let staged = plan.staged_items();
    let hands = plan.handshake_items();
    session.progress_start((staged.len() + hands.len()) as u64);
    let mut racers = racers_for(plan, &staged, &accepted, session)?;
    // Handshakes get what five each would take (each about one connection), at
    // most 25% of the time left; the refused subjects what one session each
    // takes, at most 15% of the rest; the allowed stages the remainder, a
    // cipher three times a MAC's weight in the first passes and six times in the
    // races (the ciphers decide what the answer leads with). First passes take
    // three quarters of it; time a phase does not use flows on to the next.
    let left = clock.left();
    let reserve = (hands.len() as f64 * HANDSHAKE_SAMPLES as f64 * conn).min(0.25 * left);
    let spend = Spending::new(&racers, (left - reserve).max(0.0), conn);
    let mut bulk = Bulk::new(plan, client, conn)?;
    let first_end = Instant::now() + Duration::from_secs_f64(0.75 * spend.allowed);
    for stage in [Stage::Ciphers, Stage::Macs] {
        // The MACs' first pass keeps to its share too: what the ciphers leave
        // goes on to the ciphers' race, not to more MAC sessions.
        let stop = match stage {
            Stage::Ciphers => Instant::now() + Duration::from_secs_f64(0.75 * spend.allowed * spend.part(stage, 3.0)),
            _ => (Instant::now() + Duration::from_secs_f64(0.75 * spend.allowed * spend.part(stage, 3.0))).min(first_end),
        };
        if !bulk.earlier_first(&mut racers, &spend, stage, session, stop)? {
            break;
        }
        bulk.first_pass(&mut racers[spend.range(stage)], session, stop)?;
    }
    let skipped_hands = if crate::interrupt::requested() {
        0
    } else {
        let hand_stop = Instant::now() + Duration::from_secs_f64(reserve.min(clock.left()));
        handshakes(&hands, client, session, &accepted, &clock, hand_stop, conn)?
    };
    let allowed_end = clock.end.checked_sub(Duration::from_secs_f64(spend.refused)).unwrap_or(clock.end);
    for stage in [Stage::Ciphers, Stage::Macs, Stage::Refused] {
        if crate::interrupt::requested() {
            break;
        }
        let stop = match stage {
            // The race for first place weighs a cipher six times a MAC.
            Stage::Ciphers => Instant::now() + Duration::from_secs_f64(until(allowed_end) * spend.part(stage, 6.0)),
            Stage::Macs => allowed_end,
            Stage::Refused => clock.end,
        };
        if !bulk.earlier_first(&mut racers, &spend, stage, session, stop)? {
            break;
        }
        // The ciphers race for first place (what the answer leads with), the
        // rest for the `TOP` places; the refused do not race.
        let top = match stage {
            Stage::Ciphers if plan.admitted.is_some() && !plan.full_matrix => Some(1),
            Stage::Refused => None,
            _ => Some(TOP),
        };
        bulk.rest(&mut racers[spend.range(stage)], session, stop, top)?;
    }
    settle(&mut racers, session, &clock, skipped_hands)
}

/// How the bulk time is shared between the stages (the racers are in stage order).
struct Spending {
    /// The racers of each stage: (stage, first index, end index).
    ranges: Vec<(Stage, usize, usize)>,
    /// Seconds for the allowed stages, and kept back for the refused.
    allowed: f64,
    refused: f64,
}

impl Spending {
    fn new(racers: &[Racer], bulk: f64, conn: f64) -> Spending {
        let mut ranges: Vec<(Stage, usize, usize)> = Vec::new();
        for (i, r) in racers.iter().enumerate() {
            match ranges.last_mut() {
                Some((s, _, end)) if *s == r.stage => *end = i + 1,
                _ => ranges.push((r.stage, i, i + 1)),
            }
        }
        let n = |st: Stage| ranges.iter().filter(|(s, _, _)| *s == st).map(|(_, a, b)| b - a).sum::<usize>();
        let one = first_overhead(conn) + warmup_for(MIN_BULK_SECONDS) + 2.0 * MIN_BULK_SECONDS;
        let refused = (n(Stage::Refused) as f64 * one).min(0.15 * bulk);
        Spending {
            ranges,
            allowed: bulk - refused,
            refused,
        }
    }
    /// The first stage before `stage` with a subject that has no session yet
    /// (and has not failed).
    fn unmeasured_before(&self, racers: &[Racer], stage: Stage) -> Option<Stage> {
        self.ranges
            .iter()
            .filter(|(s, _, _)| *s < stage)
            .find(|(_, a, b)| racers[*a..*b].iter().any(|r| !r.out && r.m.samples.is_empty()))
            .map(|(s, _, _)| *s)
    }
    /// The racers of `stage` (an empty range when it has none).
    fn range(&self, stage: Stage) -> std::ops::Range<usize> {
        self.ranges.iter().find(|(s, _, _)| *s == stage).map_or(0..0, |(_, a, b)| *a..*b)
    }
    /// The share of the allowed stages' time that `stage` gets, a cipher
    /// weighing `cipher` MACs.
    fn part(&self, stage: Stage, cipher: f64) -> f64 {
        let w = |s: Stage| self.range(s).len() as f64 * if s == Stage::Ciphers { cipher } else { 1.0 };
        let total = w(Stage::Ciphers) + w(Stage::Macs);
        if total == 0.0 {
            0.0
        } else {
            w(stage) / total
        }
    }
}

/// The bulk side of a sweep: how its sessions are run, and what they learnt.
struct Bulk<'a> {
    plan: &'a SshPlan,
    client: &'a Client,
    buf: Arc<Vec<u8>>,
    /// The fixed-volume probe (`--bytes`).
    fixed: Option<BulkProbe>,
    guess: f64,
    over: f64,
    brute: bool,
}

impl<'a> Bulk<'a> {
    fn new(plan: &'a SshPlan, client: &'a Client, conn: f64) -> Result<Bulk<'a>> {
        let buf = Arc::new(pattern());
        Ok(Bulk {
            plan,
            client,
            buf: buf.clone(),
            fixed: plan
                .bytes
                .map(|b| BulkProbe::open(client, Algorithms::default(), buf, Some(b), plan.verify))
                .transpose()?,
            // An untried session: the handshake and priming plus the volume at a modest 50 MB/s.
            guess: first_overhead(conn) + plan.bytes.unwrap_or(0) as f64 / 50e6,
            // Adaptive sessions: their cost beyond warm-up and span, learnt as they run.
            over: first_overhead(conn),
            // The brute-force full matrix at a fixed volume is the write-up's method: one
            // session per combination, nothing dropped, no racing.
            brute: plan.full_matrix && plan.bytes.is_some(),
        })
    }
    /// A stage's first pass, until `stop_at`.
    fn first_pass(&mut self, racers: &mut [Racer], session: &mut Measurements, stop_at: Instant) -> Result<()> {
        match self.fixed.as_mut() {
            Some(p) if self.brute => fixed_once(racers, p, session, stop_at, &mut self.guess),
            Some(p) => fixed_rounds(racers, p, session, stop_at, &mut self.guess, FIRST_PASS_SESSIONS),
            None => adaptive_pass(racers, self.plan, self.client, session, &self.buf, stop_at, &mut self.over),
        }
    }
    /// A stage starts only once every subject of the stages before it has a
    /// session: those left without one get the stage's time first (until
    /// `stop_at`). Whether `stage` may start.
    fn earlier_first(
        &mut self,
        racers: &mut [Racer],
        spend: &Spending,
        stage: Stage,
        session: &mut Measurements,
        stop_at: Instant,
    ) -> Result<bool> {
        while let Some(before) = spend.unmeasured_before(racers, stage) {
            let waiting = |r: &[Racer]| r.iter().filter(|r| !r.out && r.m.samples.is_empty()).count();
            let range = spend.range(before);
            let was = waiting(&racers[range.clone()]);
            self.first_pass(&mut racers[range.clone()], session, stop_at)?;
            if crate::interrupt::requested() || waiting(&racers[range]) >= was {
                return Ok(false);
            }
        }
        Ok(true)
    }
    /// A stage's pairs the first pass did not reach, then the race for its
    /// `race` first places (none: no race), until `stop_at`.
    fn rest(&mut self, racers: &mut [Racer], session: &mut Measurements, stop_at: Instant, race: Option<usize>) -> Result<()> {
        let clock = Clock { end: stop_at };
        match self.fixed.as_mut() {
            Some(p) if self.brute => fixed_once(racers, p, session, stop_at, &mut self.guess),
            Some(p) => {
                fixed_rounds(racers, p, session, stop_at, &mut self.guess, FIRST_PASS_SESSIONS)?;
                if let Some(top) = race {
                    fixed_race(racers, p, session, stop_at, top)?;
                }
                Ok(())
            }
            None => {
                adaptive_pass(racers, self.plan, self.client, session, &self.buf, stop_at, &mut self.over)?;
                if let Some(top) = race {
                    adaptive_race(racers, self.plan, self.client, session, &self.buf, &clock, &mut self.over, top)?;
                }
                Ok(())
            }
        }
    }
}

/// What one connection to the target costs (its first connection, once per
/// sink command): it checks reachability, login and the sink command.
fn connection_cost(client: &Client, session: &mut Measurements, pre: &mut Preflight, sink: &'static str, start: Instant) -> Result<f64> {
    match pre.conn {
        Some((s, conn)) if s == sink => Ok(conn),
        _ => {
            session.progress_message("ssh: connecting");
            // The client's defaults: this checks reachability, login and the sink command.
            let outcome = client.run(&Algorithms::default(), sink);
            // What one connection costs here: every session pays it before its samples.
            let conn = start.elapsed().as_secs_f64();
            if let Err(e) = outcome {
                match e {
                    SshError::Refused(_) => {}
                    // The run's time is up: every subject below is skipped, saying so.
                    SshError::Deadline(_) => {}
                    e => return Err(e.into()),
                }
            }
            pre.conn = Some((sink, conn));
            Ok(conn)
        }
    }
}

/// A racer per bulk item whose algorithms were all accepted; the others are
/// recorded as refused.
fn racers_for(plan: &SshPlan, bulk: &[(Stage, BulkItem)], accepted: &Accepted, session: &mut Measurements) -> Result<Vec<Racer>> {
    let mut racers: Vec<Racer> = Vec::new();
    for (stage, item) in bulk {
        let subject = bulk_subject(item, &plan.bulk_hostkey);
        if let Some(why) = accepted.refusal(&subject) {
            session.record(ResultRecord::not_ok(
                Kind::SshBulk,
                subject,
                Metric::BytesPerSec,
                Status::Unsupported,
                format!("refused: {why}"),
            ))?;
            continue;
        }
        racers.push(Racer {
            algs: Algorithms {
                cipher: Some(item.cipher.clone()),
                mac: item.mac.clone(),
                kex: Some(item.kex.clone()),
                hostkey: plan.bulk_hostkey.clone(),
            },
            item: item.clone(),
            stage: *stage,
            subject,
            m: Measurement::empty(Rate::PerSecond, 1, sampler::Basis::Wall),
            idx: None,
            cost: 0.0,
            out: false,
            server: Vec::new(),
            at: Vec::new(),
            rounds: Vec::new(),
        });
    }
    Ok(racers)
}

/// Stores the widened figures of one or two sessions, then records (and says)
/// what the budget did not reach; returns the server CPU records.
fn settle(racers: &mut [Racer], session: &mut Measurements, clock: &Clock, skipped_hands: usize) -> Result<Vec<ResultRecord>> {
    // Figures of one or two sessions are stored widened by the spread seen on the
    // others; that spread is best known now.
    // Each session's round is known once all are done: every measured figure is
    // stored again with its per-round values.
    let k = racers_slack(racers);
    super::rounds::assign(racers);
    for r in racers.iter_mut().filter(|r| !r.out && !r.m.samples.is_empty()) {
        r.keep_measurement(session, k)?;
    }
    let server_cpu: Vec<ResultRecord> = racers.iter().filter_map(|r| r.server_record(k)).collect();
    session.progress_finish();
    if crate::interrupt::by_user() {
        return Ok(server_cpu);
    }
    // Whatever the budget (or the cut at the deadline) did not reach is recorded
    // as skipped, and said.
    let mut skipped_bulk = 0;
    for r in racers.iter_mut().filter(|r| !r.out && r.m.samples.is_empty()) {
        skipped_bulk += 1;
        let rec = clock.skipped(Kind::SshBulk, Metric::BytesPerSec, r.subject.clone());
        r.keep(session, rec)?;
    }
    if skipped_bulk + skipped_hands > 0 {
        crate::progress::warn(&format!(
            "ssh: the budget was spent before {skipped_bulk} bulk subject(s) and {skipped_hands} handshake subject(s) were measured; they are recorded as skipped (raise --budget)"
        ));
    }
    Ok(server_cpu)
}

/// One cipher × MAC pair's bulk figure in a sweep: its own record (decomposed
/// sweep), or its records pooled over kex (full matrix; kex does not touch the
/// bulk bytes, so each kex's figure is one more sample of the same pair).
#[derive(Debug, Clone)]
pub struct PairFigure {
    /// `cipher MAC`, the MAC `(implicit)` for AEAD ciphers.
    pub pair: String,
    pub summary: crate::model::Summary,
    /// How many records (kex) were pooled.
    pub records: usize,
}

/// The pairs of `doc`'s `ssh-bulk` results, fastest median first.
pub fn pair_figures(doc: &crate::model::Document) -> Vec<PairFigure> {
    let mut groups: Vec<(String, Vec<&ResultRecord>)> = Vec::new();
    for r in doc
        .results
        .iter()
        .filter(|r| r.kind == Kind::SshBulk && r.metric == Metric::BytesPerSec && r.status == Status::Ok && r.median.is_some())
    {
        let pair = format!(
            "{} {}",
            r.subject.cipher.as_deref().unwrap_or("?"),
            r.subject.mac.as_deref().unwrap_or("(implicit)")
        );
        match groups.iter_mut().find(|(p, _)| *p == pair) {
            Some((_, v)) => v.push(r),
            None => groups.push((pair, vec![r])),
        }
    }
    let mut out: Vec<PairFigure> = groups
        .into_iter()
        .filter_map(|(pair, rs)| {
            let summary = if rs.len() == 1 {
                rs[0].summary()?
            } else {
                crate::model::Summary::of(&rs.iter().filter_map(|r| r.median).collect::<Vec<_>>())?
            };
            Some(PairFigure {
                pair,
                summary,
                records: rs.len(),
            })
        })
        .collect();
    out.sort_by(|a, b| b.summary.median.total_cmp(&a.summary.median));
    out
}

/// The pairs that could place among the `TOP` by the tool's own ties (95%
/// intervals overlap): fewer than `TOP` others are certainly faster.
pub(super) fn top_up_to_ties(f: &[PairFigure]) -> Vec<String> {
    let iv: Vec<_> = f.iter().map(|p| Some((p.summary.ci95_low, p.summary.ci95_high))).collect();
    race::could_place(&iv, TOP).into_iter().map(|i| f[i].pair.clone()).collect()
}

/// Both sweeps' top `TOP` pairs with their intervals, and whether they agree:
/// exactly, or up to ties (each sweep's top pairs could place in the other's top
/// by that sweep's intervals), or not.
pub fn compare_sweeps(dec: &crate::model::Document, full: &crate::model::Document) -> (String, bool) {
    let (a, b) = (pair_figures(dec), pair_figures(full));
    let mb = |x: f64| x / 1e6;
    let mut s = String::new();
    for (title, f) in [("decomposed", &a), ("full matrix, pooled over kex", &b)] {
        s.push_str(&format!("top {TOP}, {title} (MB/s, median [95% interval], samples):\n"));
        for (i, p) in f.iter().take(TOP).enumerate() {
            let tie = if i > 0 && p.summary.ties_with(&f[i - 1].summary) {
                format!("  tied with #{i}")
            } else {
                String::new()
            };
            s.push_str(&format!(
                "  #{} {:<46} {:>8.1} [{:.1}, {:.1}]  n={}{}{tie}\n",
                i + 1,
                p.pair,
                mb(p.summary.median),
                mb(p.summary.ci95_low),
                mb(p.summary.ci95_high),
                p.summary.samples,
                if p.records > 1 {
                    format!(" ({} kex)", p.records)
                } else {
                    String::new()
                },
            ));
        }
        let t = top_up_to_ties(f);
        s.push_str(&format!(
            "  could place in the top {TOP} (ties): {} pair(s): {}\n",
            t.len(),
            t.join(", ")
        ));
    }
    let top = |f: &[PairFigure]| f.iter().take(TOP).map(|p| p.pair.clone()).collect::<Vec<_>>();
    let (ta, tb) = (top(&a), top(&b));
    let (ra, rb) = (top_up_to_ties(&a), top_up_to_ties(&b));
    let mut sa = ta.clone();
    let mut sb = tb.clone();
    sa.sort();
    sb.sort();
    let (verdict, agree) = if ta.len() < TOP || tb.len() < TOP {
        (format!("fewer than {TOP} pairs measured: nothing to compare"), false)
    } else if ta == tb {
        (format!("same top {TOP}, same order"), true)
    } else if sa == sb {
        (format!("same top {TOP}, order differs"), true)
    } else if ta.iter().all(|p| rb.contains(p)) && tb.iter().all(|p| ra.contains(p)) {
        let only_a: Vec<_> = ta.iter().filter(|p| !tb.contains(p)).cloned().collect();
        let only_b: Vec<_> = tb.iter().filter(|p| !ta.contains(p)).cloned().collect();
        (
            format!(
                "same top {TOP} up to ties: {} (decomposed) and {} (full matrix) tie with the other sweep's top {TOP} within the tool's 95% intervals",
                only_a.join(", "),
                only_b.join(", ")
            ),
            true,
        )
    } else {
        (format!("top {TOP} differ, also up to ties"), false)
    };
    s.push_str(&verdict);
    s.push('\n');
    (s, agree)
}

/// `ssh --compare-sweeps DECOMPOSED FULL` (hidden, for the bench script): reads
/// two `--json` documents and prints [`compare_sweeps`]. Exit status 0 when the
/// top pairs agree (up to ties), 1 when they differ.
pub fn compare_sweep_files(dec: &std::path::Path, full: &std::path::Path) -> Result<()> {
    let load = |p: &std::path::Path| -> Result<crate::model::Document> {
        let bytes = std::fs::read(p).map_err(|e| anyhow::anyhow!("cannot read {}: {e}", p.display()))?;
        serde_json::from_slice(&bytes).map_err(|e| anyhow::anyhow!("{} is not a cipherbench --json document: {e}", p.display()))
    };
    let (text, agree) = compare_sweeps(&load(dec)?, &load(full)?);
    print!("{text}");
    if !agree {
        bail!("the two sweeps' top {TOP} differ");
    }
    Ok(())
}
