//! Loopback subjects in rounds: every subject a slice per round (A B C, A B C …,
//! each slice fresh connections, `sampler::interleave` one round at a time), so
//! that the machine's drift hits them alike and `recommend` may order them by
//! their ratio within the rounds they share (`ResultRecord::rounds`,
//! `recommend::paired`).
//!
//! The order of spending: every subject gets [`MIN_ROUNDS`] rounds first, the
//! slice shrunk (down to [`SLICE_FLOOR`]) rather than a round dropped when the
//! budget is small; then only the leaders of each class (the subjects one
//! ranking compares: a protocol's bulk suites, a protocol and certificate's
//! groups) go on, round after round, until the leader is apart from the rest by
//! its paired ratio (the rule `recommend` orders by), the budget is spent or
//! [`MAX_ROUNDS`] is reached.

use super::probe::{client_hello_bytes, durations, HandshakeProbe, Refusals, Server};
use super::wire::sliced_handshake_records;
use super::{Item, LoopbackPlan, Work};
use crate::backend::openssl::certs::{CertType, Identity};
use crate::backend::tls::{ClientConfig, TlsLibrary};
use crate::measure::engine::sampler::{self, Measurement, Rate, SamplerConfig, SliceSpec, Sliced};
use crate::model::{Kind, ResultRecord, PRACTICAL};
use crate::units::Seconds;
use anyhow::{anyhow, Result};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

/// Rounds every subject gets before any leader gets more (and before the
/// refused subjects of a policy-first run are measured at all).
pub const MIN_ROUNDS: usize = 3;
/// Most rounds of one sweep.
pub const MAX_ROUNDS: usize = 24;
/// The slice aimed for when the budget has room (connection, warm-up and
/// samples included)...
const SLICE_TARGET: f64 = 0.35;
/// ...the shortest it is shrunk to, so that each subject still gets
/// [`MIN_ROUNDS`]...
pub const SLICE_FLOOR: f64 = 0.04;
/// ...and, with a long budget, the rounds per subject the slices grow for.
const PLANNED_ROUNDS: usize = 12;
/// Rounds' worth of a subject's share that a small budget's slices are cut for:
/// [`MIN_ROUNDS`] for every subject, the rest left to the leaders.
const SHARE_ROUNDS: usize = MIN_ROUNDS + 2;
/// The share of a pass's budget that bulk gets at least when handshakes share
/// it (the suites' order is decided by bulk, where a slice costs more).
const BULK_SHARE: f64 = 0.4;

/// The slice length for `n` subjects sharing `budget` seconds: the target when
/// each subject's share holds [`SHARE_ROUNDS`] of it, longer when it holds more
/// than [`PLANNED_ROUNDS`], else shrunk to a [`SHARE_ROUNDS`]th of the share
/// (not below [`SLICE_FLOOR`]): every subject's [`MIN_ROUNDS`] fit, and the
/// leaders have the rest.
pub fn slice_length(budget: f64, n: usize) -> f64 {
    let per = budget / n.max(1) as f64;
    if per >= PLANNED_ROUNDS as f64 * SLICE_TARGET {
        per / PLANNED_ROUNDS as f64
    } else if per >= SHARE_ROUNDS as f64 * SLICE_TARGET {
        SLICE_TARGET
    } else {
        (per / SHARE_ROUNDS as f64).max(SLICE_FLOOR)
    }
}

impl LoopbackPlan {
    /// The seconds this plan's handshakes and its bulk subjects get: an equal
    /// share per item (as [`LoopbackPlan::sampler`] shares it), bulk raised to
    /// [`BULK_SHARE`] of both when handshakes are many.
    pub fn kind_budgets(&self) -> (f64, f64) {
        let n = self.items.len();
        let bulk = self.items.iter().filter(|i| matches!(i.work, Work::Bulk(_))).count();
        let hands = n - bulk;
        let per = |w: Work| self.sampler(w, n).budget.0;
        let h = hands as f64 * per(Work::Handshake { resumed: false });
        let b = bulk as f64 * per(Work::Bulk(super::Direction::Upload));
        if hands == 0 || bulk == 0 {
            return (h, b);
        }
        let b2 = b.max((h + b) * BULK_SHARE);
        (h + b - b2, b2)
    }
}

/// Which ranking an item's figure goes to: subjects of one class are the ones
/// whose order the leaders' rounds decide.
pub(super) fn class(item: &Item) -> (String, String, String, String) {
    let p = item.protocol.label().to_string();
    match item.work {
        Work::Bulk(d) => (p, d.label().to_string(), String::new(), String::new()),
        Work::Handshake { resumed } => (
            p,
            if resumed { "resumed" } else { "full" }.to_string(),
            item.cert.name().to_string(),
            super::kex_label(item.group).to_string(),
        ),
    }
}

/// One subject's slices so far.
struct Track {
    slices: Vec<Measurement>,
    rounds: Vec<usize>,
    /// Each slice's value (its work over its wall time) with its round.
    values: Vec<(usize, f64)>,
    error: Option<anyhow::Error>,
    active: bool,
}

impl Track {
    fn new() -> Track {
        Track {
            slices: Vec::new(),
            rounds: Vec::new(),
            values: Vec::new(),
            error: None,
            active: true,
        }
    }

    /// Keeps what one round's slice gave (taken in `round`): how many slices,
    /// and whether the run must stop (Ctrl-C, or the run's deadline cut it:
    /// the slices taken stay). An error ends the subject.
    fn take(&mut self, r: Result<Option<Sliced>>, round: usize) -> (usize, bool) {
        match r {
            Err(_) if crate::interrupt::requested() || crate::deadline::run_expired() => (0, true),
            Err(e) => {
                self.error = Some(e);
                self.active = false;
                (0, false)
            }
            Ok(None) => (0, false),
            Ok(Some(sl)) => {
                let (n, mut stop) = (sl.slices.len(), false);
                for m in sl.slices {
                    stop |= m.interrupted;
                    if let Some(v) = slice_value(&m) {
                        self.values.push((round, v));
                    }
                    self.slices.push(m);
                    self.rounds.push(round);
                }
                (n, stop)
            }
        }
    }
}

/// A slice's value: its total work over its total wall time (or the inverse).
fn slice_value(m: &Measurement) -> Option<f64> {
    let wall: f64 = m.samples.iter().map(|s| s.wall.0).sum();
    let work: f64 = m.samples.iter().map(|s| s.work).sum();
    let v = match m.rate {
        Rate::PerSecond => work / wall,
        Rate::SecondsPer => wall / work,
    };
    (v.is_finite() && v > 0.0).then_some(v)
}

/// Measures subjects in rounds within `budget` seconds (see the module's
/// text). `cfgs[i]` is subject i's sampler (its sample length, warm-up, units);
/// `classes[i]` its class; values are rates (higher is better). `slice` opens
/// fresh probes for the subject the [`SliceSpec`] names and measures them
/// ([`SliceSpec::measure`]); `spec.index` is the subject's slice number and
/// `spec.of` the rounds planned. An error ends that subject; Ctrl-C and the
/// run's deadline end all, keeping every slice taken. Per subject: `Ok(None)`
/// when it got no slice.
pub fn in_rounds<C: PartialEq, F>(cfgs: &[SamplerConfig], classes: &[C], budget: Seconds, mut slice: F) -> Vec<Result<Option<Sliced>>>
where
    F: FnMut(&SliceSpec) -> Result<Measurement>,
{
    let n = cfgs.len();
    let s = slice_length(budget.0, n);
    let planned = ((budget.0 / n.max(1) as f64 / s).floor() as usize).clamp(MIN_ROUNDS, MAX_ROUNDS);
    let mut t: Vec<Track> = (0..n).map(|_| Track::new()).collect();
    let start = Instant::now();
    let (mut taken, mut spent) = (0usize, 0.0f64);
    for round in 1..=MAX_ROUNDS {
        let active: Vec<usize> = (0..n).filter(|&i| t[i].active).collect();
        if active.is_empty() || crate::interrupt::requested() || crate::deadline::run_expired() {
            break;
        }
        if round > 1
            && !room(
                budget.0,
                start.elapsed().as_secs_f64(),
                spent / taken.max(1) as f64 * active.len() as f64,
                round,
            )
        {
            break;
        }
        let round_cfgs: Vec<SamplerConfig> = active
            .iter()
            .map(|&i| SamplerConfig {
                budget: Seconds(s),
                slice: Seconds(s),
                // A shrunk slice still holds several samples.
                sample_time: Seconds(cfgs[i].sample_time.0.min(s / 4.0)),
                ..cfgs[i]
            })
            .collect();
        let t0 = Instant::now();
        let out = {
            let t = &t;
            sampler::interleave(&round_cfgs, |spec| {
                let i = active[spec.subject];
                let mut own = spec.clone();
                own.subject = i;
                own.index = t[i].slices.len();
                own.of = planned.max(own.index + 1);
                slice(&own)
            })
        };
        let mut stop = false;
        for (&i, r) in active.iter().zip(out) {
            let (k, cut) = t[i].take(r, round);
            taken += k;
            stop |= cut;
        }
        spent += t0.elapsed().as_secs_f64();
        if stop {
            break;
        }
        if round >= MIN_ROUNDS {
            separate(&mut t, classes);
        }
    }
    t.into_iter()
        .map(|x| match x.error {
            Some(e) => Err(e),
            None => Ok(Sliced::from_slices(x.slices).map(|s| Sliced { rounds: x.rounds, ..s })),
        })
        .collect()
}

/// Whether round `round` (after the first) may start, `elapsed` seconds into
/// a sweep of `budget`, when it would cost about `cost`: the first
/// [`MIN_ROUNDS`] may overrun the sweep's budget by half (a slice's connection
/// and warm-up do not shrink with it), the leaders' rounds may not; no round
/// starts that the run's own budget has no room for.
fn room(budget: f64, elapsed: f64, cost: f64, round: usize) -> bool {
    let allowed = if round <= MIN_ROUNDS { budget * 1.5 } else { budget };
    let run = crate::deadline::budget_left().is_none_or(|left| left.0 >= cost);
    elapsed + cost <= allowed && run
}

/// After a round: in each class, the subjects whose shared rounds put the
/// leader (the highest median) measurably ahead ([`apart`]) stop; a class left
/// with one subject stops.
fn separate<C: PartialEq>(t: &mut [Track], classes: &[C]) {
    let n = t.len();
    let median = |x: &Track| {
        let mut v: Vec<f64> = x.values.iter().map(|p| p.1).collect();
        if v.is_empty() {
            return f64::NEG_INFINITY;
        }
        crate::stats::median(&mut v)
    };
    for i in 0..n {
        let members: Vec<usize> = (0..n).filter(|&j| t[j].active && classes[j] == classes[i]).collect();
        if members.first() != Some(&i) {
            continue;
        }
        let leader = members
            .iter()
            .copied()
            .max_by(|&a, &b| median(&t[a]).partial_cmp(&median(&t[b])).unwrap_or(std::cmp::Ordering::Equal));
        let Some(leader) = leader else { continue };
        for &j in members.iter().filter(|&&j| j != leader) {
            if apart(&t[leader].values, &t[j].values) {
                t[j].active = false;
            }
        }
        if members.iter().filter(|&&j| t[j].active).count() <= 1 {
            t[leader].active = false;
        }
    }
}

/// Whether the rounds `a` and `b` share put `a` measurably ahead: their paired
/// ratio's interval above 1 and its median at least [`PRACTICAL`] from it, as
/// `recommend::paired` orders.
pub fn apart(a: &[(usize, f64)], b: &[(usize, f64)]) -> bool {
    let pairs: Vec<(f64, f64)> = a
        .iter()
        .filter_map(|(r, x)| b.iter().find(|(q, _)| q == r).map(|(_, y)| (*x, *y)))
        .collect();
    crate::stats::paired_ratio(&pairs).is_some_and(|q| q.low > 1.0 && 1.0 - 1.0 / q.ratio >= PRACTICAL)
}

/// One handshake subject of [`handshake_rounds`]: its server stays up for all
/// its slices.
struct HandSubject<'a> {
    item: &'a Item,
    client: Arc<dyn ClientConfig>,
    server: Server,
    cfg: SamplerConfig,
    /// Every timed handshake's duration, over all slices.
    latencies: Vec<f64>,
}

/// Measures the handshake items in rounds ([`in_rounds`], the plan's handshake
/// budget): each slice fresh probes (each connects once, untimed, and checks
/// what was negotiated) against the subject's server. The handshake rate is
/// stored with each slice's round (`ResultRecord::rounds`, kind
/// `tls-handshake`), so that the groups are ordered by paired rounds as the
/// bulk suites are. `progress` hears of every slice before it starts. Per item:
/// `None` when Ctrl-C came before its first slice, else its records or why it
/// failed.
pub(super) fn handshake_rounds(
    plan: &LoopbackPlan,
    items: &[&Item],
    ids: &mut BTreeMap<CertType, Identity>,
    lib: &dyn TlsLibrary,
    mut progress: impl FnMut(&Item, &SliceSpec),
) -> Vec<Option<Result<Vec<ResultRecord>>>> {
    let mut out: Vec<Option<Result<Vec<ResultRecord>>>> = items.iter().map(|_| None).collect();
    let mut ready: Vec<(usize, HandSubject)> = Vec::new();
    for (k, item) in items.iter().enumerate() {
        let Work::Handshake { resumed } = item.work else {
            out[k] = Some(Err(anyhow!("not a handshake subject")));
            continue;
        };
        let setup = (|| -> Result<HandSubject> {
            let selection = item.selection();
            let id = super::identity(ids, item.cert)?;
            Ok(HandSubject {
                item,
                server: Server::loopback(lib.server(&selection, id)?, plan.threads, plan.timeout, false, Refusals::Fail)?,
                client: lib.client(&selection, resumed)?,
                cfg: plan.sampler(item.work, plan.items.len()),
                latencies: Vec::new(),
            })
        })();
        match setup {
            Ok(h) => ready.push((k, h)),
            Err(e) => out[k] = Some(Err(e)),
        }
    }
    let cfgs: Vec<SamplerConfig> = ready.iter().map(|(_, h)| h.cfg).collect();
    let classes: Vec<_> = ready.iter().map(|(_, h)| class(h.item)).collect();
    let sweep = crate::measure::engine::rounds::Sweep::start(Kind::TlsHandshake.name());
    let measured = in_rounds(&cfgs, &classes, Seconds(plan.kind_budgets().0), |spec| {
        let h = &mut ready[spec.subject].1;
        let item = h.item;
        progress(item, spec);
        let resumed = item.work == (Work::Handshake { resumed: true });
        let mut probes = (0..plan.threads)
            .map(|_| HandshakeProbe::new(&h.client, h.server.addr, None, plan.timeout, (resumed, true), |n| item.check(n)))
            .collect::<Result<Vec<_>>>()?;
        let m = spec.measure(&mut probes, Rate::PerSecond)?;
        let timed = (m.units as usize).saturating_mul(m.samples.len());
        for d in durations(&probes) {
            h.latencies.extend_from_slice(&d[d.len().saturating_sub(timed)..]);
        }
        Ok(m)
    });
    for ((k, h), r) in ready.into_iter().zip(measured) {
        out[k] = match r {
            Ok(None) => None,
            Ok(Some(m)) => Some(match h.server.error() {
                Some(e) => Err(anyhow!("the loopback server failed: {e}")),
                None => {
                    let mut records = sliced_handshake_records(Kind::TlsHandshake, h.item.subject(plan), &m, &h.latencies, &sweep);
                    if h.item.work == (Work::Handshake { resumed: false }) {
                        records[0].client_hello_bytes = client_hello_bytes(&h.client, plan.timeout).ok();
                    }
                    Ok(records)
                }
            }),
            Err(e) => Some(Err(e)),
        };
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::engine::sampler::Probe;

    #[test]
    fn slices_shrink_before_rounds_are_dropped() {
        // 2.7 s over 6 suites: shorter slices, three rounds for all in 1.6 s.
        assert!((slice_length(2.7, 6) - 0.09).abs() < 1e-9);
        assert_eq!(slice_length(0.01, 6), SLICE_FLOOR);
        assert_eq!(slice_length(8.0, 4), SLICE_TARGET);
        assert!((slice_length(100.0, 2) - 50.0 / PLANNED_ROUNDS as f64).abs() < 1e-9);
    }

    /// A probe with a known speed: `rate` units per second of its own clock.
    struct Known {
        rate: f64,
        last: (Seconds, Seconds),
    }
    impl Probe for Known {
        fn run(&mut self, units: u64) -> Result<f64> {
            std::thread::sleep(std::time::Duration::from_micros(200));
            let w = Seconds(units as f64 / self.rate);
            self.last = (w, w);
            Ok(units as f64)
        }
        fn timed_region(&self) -> Option<(Seconds, Seconds)> {
            Some(self.last)
        }
    }

    /// Every subject gets the first rounds, in order; then the leaders of each
    /// class go on until they separate: a class whose leader is far ahead
    /// stops at the first rounds, a tie goes on while the budget lasts.
    #[test]
    fn every_subject_first_then_the_leaders_until_apart() {
        let cfg = SamplerConfig {
            sample_time: Seconds(0.002),
            warmup: Seconds(0.0),
            ..SamplerConfig::default()
        };
        // Class 0: 1000 against 500 (apart at once); class 1: a tie.
        let rates = [1000.0, 500.0, 800.0, 800.0];
        let classes = [0, 0, 1, 1];
        let mut order: Vec<(usize, usize)> = Vec::new();
        let out = in_rounds(&[cfg; 4], &classes, Seconds(1.2), |spec| {
            order.push((spec.subject, spec.index));
            let mut p = [Known {
                rate: rates[spec.subject],
                last: (Seconds(0.0), Seconds(0.0)),
            }];
            spec.measure(&mut p, Rate::PerSecond)
        });
        let first: Vec<(usize, usize)> = (0..MIN_ROUNDS).flat_map(|r| (0..4).map(move |i| (i, r))).collect();
        assert_eq!(order[..first.len()], first[..], "{order:?}");
        let rounds: Vec<usize> = out.iter().map(|r| r.as_ref().unwrap().as_ref().unwrap().rounds.len()).collect();
        assert_eq!(&rounds[..2], &[MIN_ROUNDS, MIN_ROUNDS], "{rounds:?}");
        assert!(rounds[2] > MIN_ROUNDS && rounds[2] == rounds[3], "{rounds:?}");
        // Round numbers are shared: the tie's rounds pair one to one.
        let a = out[2].as_ref().unwrap().as_ref().unwrap();
        let b = out[3].as_ref().unwrap().as_ref().unwrap();
        assert_eq!(a.rounds, b.rounds);
        assert!(apart(&[(1, 10.0), (2, 11.0), (3, 10.5)], &[(1, 5.0), (2, 5.5), (3, 5.2)]));
        assert!(!apart(&[(1, 10.0), (2, 11.0), (3, 10.5)], &[(1, 10.1), (2, 10.9), (3, 10.4)]));
        assert!(!apart(&[(1, 10.0), (2, 11.0)], &[(1, 5.0), (2, 5.5)]), "fewer than 3 shared rounds");
    }
}
