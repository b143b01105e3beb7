//! The machine's noise, measured with the run and stored with it, so that every
//! interval holds on a second run and `compare` knows what change is real.
//!
//! A run's subjects are measured as independent samples spread across the run
//! (interleaved slices and batches, each on fresh probes). How far the samples of
//! one subject spread is what the machine does to a figure over the length of a
//! run: its drift, other processes, where threads land. A second run adds what
//! one run cannot see, the machine's state moving between runs; on a shared
//! 2-core VM (`bench/compare-calibration.sh`) medians moved by about 1.5 times the
//! spread inside one run. So the run's *noise* is [`RUN_TO_RUN`] times the median,
//! over its subjects with at least [`MIN_SAMPLES`] samples, of that spread: half
//! the range of a subject's samples relative to its median (the median over
//! subjects, so one subject's outlier does not set it). Every interval
//! of the run is then at least noise wide (as a factor, see [`floor`]): the order-statistic interval of the
//! median leaves out a subject's extreme samples, so one burst of another process
//! does not widen it, and the floor keeps a subject whose samples happened to
//! agree from claiming more than the machine allows.
//!
//! A run cannot see everything that moves between runs. Back-to-back tiny `speed`
//! runs on the shared 2-core VM whose samples agreed to under 1% moved by up to
//! 5.5% from one run to the next (a build on the other core started between
//! them; one subject of one process settled 5% below its usual figure), and 3 of
//! 38 such pairs were called different by the spread-only noise. So the noise is
//! at least [`FLOOR`], half the practical threshold: two runs' intervals then part
//! only where their medians are more than the 5% apart that the ranking and
//! `compare` ask for anyway. The noise is stored in the run's settings (`noise`,
//! per kind) and shown by `compare`.

use super::stats::MIN_SAMPLES;
use crate::measure::sink::Measurements;
use crate::model::{Kind, Metric, ResultRecord, Status, Summary};
use anyhow::Result;

/// How much more a repeat run's median moves than the samples spread inside one
/// run (measured, see the module's note).
pub const RUN_TO_RUN: f64 = 1.5;

/// The least noise a run claims: half of [`crate::model::PRACTICAL`], what moves
/// between runs that a run's own samples cannot show (see the module's note).
pub const FLOOR: f64 = crate::model::PRACTICAL / 2.0;

/// The relative half-range of a record's samples, when it has enough of them.
fn spread(r: &ResultRecord) -> Option<f64> {
    let (min, max, median) = (r.min?, r.max?, r.median?);
    (r.status == Status::Ok && r.metric != Metric::Accepted && r.samples? >= MIN_SAMPLES && median.abs() > 0.0)
        .then(|| (max - min) / 2.0 / median.abs())
}

/// The noise of a set of records: [`RUN_TO_RUN`] times the median of their
/// relative half-ranges, at least [`FLOOR`]; `None` without
/// any record of [`MIN_SAMPLES`] or more samples.
pub fn of<'a>(records: impl IntoIterator<Item = &'a ResultRecord>) -> Option<f64> {
    let v: Vec<f64> = records.into_iter().filter_map(spread).filter(|x| x.is_finite()).collect();
    let median = Summary::of(&v)?.median;
    Some((RUN_TO_RUN * median).max(FLOOR))
}

/// `r` with its interval at least a factor (1 + `noise`) either side of its
/// median: [m / (1 + noise), m × (1 + noise)]. A factor, not ±noise × m: the
/// figures are rates and times, which cannot reach zero, and on a machine busy
/// enough for a noise of 100% a subtracted floor would reach below zero and tie
/// anything with nothing. For the usual few percent the two hardly differ (3%:
/// −2.9% / +3%).
pub fn floor(mut r: ResultRecord, noise: f64) -> ResultRecord {
    if let (Status::Ok, Some(m), Some(lo), Some(hi)) = (r.status, r.median, r.ci95_low, r.ci95_high) {
        if r.metric != Metric::Accepted && noise > 0.0 {
            let (a, b) = (m / (1.0 + noise), m * (1.0 + noise));
            r.ci95_low = Some(lo.min(a.min(b)));
            r.ci95_high = Some(hi.max(a.max(b)));
        }
    }
    r
}

/// The noise stored in a run's settings for `kind` (see [`settle`]).
pub use crate::model::stored_noise as stored;

/// After a kind's pass: measures the noise of the session's records of `kinds`
/// from index `from` on and stores it per kind in the run's settings; where an
/// earlier pass of the kind stored more, that stands. Then every record of the
/// kind, this pass's and earlier ones', is widened to at least that noise: one
/// run ranks all its SSH ciphers with one noise, not a quiet pass's narrow
/// intervals against a busy pass's wide ones. Kinds without a record of
/// [`MIN_SAMPLES`] samples keep their intervals and store nothing.
pub fn settle(session: &mut Measurements, kinds: &[Kind], from: usize) -> Result<()> {
    let mut all = session.settings().get("noise").cloned().unwrap_or_else(|| serde_json::json!({}));
    for &kind in kinds {
        let idx: Vec<usize> = (from..session.results().len())
            .filter(|&i| session.results()[i].kind == kind)
            .collect();
        let Some(noise) = of(idx.iter().map(|&i| &session.results()[i])) else {
            continue;
        };
        // Several passes of one kind (the main job's SSH cipher and MAC passes):
        // the largest noise stands, for all of them.
        let before = all.get(kind.name()).and_then(|v| v.as_f64()).unwrap_or(0.0);
        let noise = noise.max(before);
        let of_kind: Vec<usize> = (0..session.results().len())
            .filter(|&i| session.results()[i].kind == kind)
            .collect();
        for i in of_kind {
            let r = floor(session.results()[i].clone(), noise);
            if r != session.results()[i] {
                session.replace(i, r)?;
            }
        }
        all[kind.name()] = serde_json::json!(noise);
    }
    if all.as_object().is_some_and(|m| !m.is_empty()) {
        session.set_setting("noise", all);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Subject, Summary};

    fn rec(values: &[f64]) -> ResultRecord {
        ResultRecord::ok(
            Kind::Primitive,
            Subject::default(),
            Metric::BytesPerSec,
            &Summary::of(values).unwrap(),
            None,
        )
    }

    #[test]
    fn noise_is_the_median_spread_and_floors_every_interval() {
        // Spreads ±1%, ±2%, ±5%; one subject with two samples does not count. The
        // median spread, 2%, times the run-to-run factor: 3% (above the floor).
        let rs = [
            rec(&[99.0, 100.0, 101.0]),
            rec(&[98.0, 100.0, 102.0]),
            rec(&[95.0, 100.0, 105.0]),
            rec(&[50.0, 150.0]),
        ];
        let n = of(&rs).unwrap();
        assert!((n - 0.02 * RUN_TO_RUN).abs() < 1e-12, "{n}");
        // A tight interval is widened to a factor 1.03 either side; a wide one is kept.
        let tight = floor(rec(&[100.0; 7]), n);
        let (lo, hi) = (tight.ci95_low.unwrap(), tight.ci95_high.unwrap());
        assert!((lo - 100.0 / 1.03).abs() < 1e-9 && (hi - 103.0).abs() < 1e-9, "{lo} {hi}");
        // A noise past 100% never reaches zero: the floor is a factor.
        let busy = floor(rec(&[100.0; 7]), 1.12);
        assert!(busy.ci95_low.unwrap() > 40.0 && busy.ci95_high.unwrap() > 200.0, "{busy:?}");
        let wide = floor(rs[2].clone(), n);
        assert_eq!((wide.ci95_low, wide.ci95_high), (rs[2].ci95_low, rs[2].ci95_high));
        assert!(of(&[rec(&[1.0, 2.0])]).is_none());
        // Samples that agree to 0.1% still claim the floor: between runs figures
        // move more than that.
        let quiet = of(&[rec(&[99.9, 100.0, 100.1])]).unwrap();
        assert!((quiet - FLOOR).abs() < 1e-12 && FLOOR >= 0.02, "{quiet}");
    }

    #[test]
    fn stored_noise_is_read_back_per_kind() {
        let s = serde_json::json!({"noise": {"primitive": 0.01, "tls-bulk": 0.03}});
        assert_eq!(stored(&s, Kind::Primitive), Some(0.01));
        assert_eq!(stored(&s, Kind::SshBulk), None);
        assert_eq!(crate::model::largest_noise(&s), Some(0.03));
        assert_eq!(crate::model::largest_noise(&serde_json::json!({})), None);
    }
}
