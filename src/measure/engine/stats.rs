//! Statistics over repeated samples.
//!
//! Throughput samples on a shared machine are skewed: interference only ever makes a
//! sample slower. So the reported centre is the median, and its 95% confidence
//! interval comes from order statistics (distribution-free, no normality assumed).
//! Two subjects whose intervals overlap are *tied*: the instrument cannot order them.
//!
//! CPU per SSH login is the one figure made differently, as a mean with a
//! Student's t interval ([`mean_interval`]): it is read as a running total
//! rounded to clock ticks, where a median would not be informative (see there).

use crate::model::CpuFigure;
pub use crate::model::Summary;
pub use crate::stats::median_ci_ranks;
use crate::stats::t975;

/// The one tie rule: two intervals (low, high) overlap, so a second run could
/// order the two subjects the other way.
pub fn overlap(a: (f64, f64), b: (f64, f64)) -> bool {
    a.0 <= b.1 && b.0 <= a.1
}

/// Fewer samples than this give no interval of their own (a 95% order-statistic
/// interval needs 6; nothing is ranked below 3): [`few_samples`] widens theirs
/// when it is made, and [`Summary::for_ties`] ties it with everything when it is
/// ranked.
pub const MIN_SAMPLES: usize = 3;

/// The one rule for a subject with fewer than [`MIN_SAMPLES`] samples (TLS
/// slices, SSH sessions, handshakes): one or two samples would claim a certainty
/// they do not have, so the interval covers every value seen (the samples, and
/// `seen`: e.g. each slice's own samples) and is widened by the factor `spread`
/// each way (`spread` ≥ 1.1, i.e. at least about ±10%); min and max become the
/// lowest and highest value seen. `samples` is kept, so `recommend` still ties
/// such a figure with everything. From [`MIN_SAMPLES`] on, `s` is returned as is.
pub fn few_samples(mut s: Summary, seen: &[f64], spread: f64) -> Summary {
    if s.samples >= MIN_SAMPLES {
        return s;
    }
    let (lo, hi) = seen
        .iter()
        .filter(|v| v.is_finite())
        .fold((s.min, s.max), |(lo, hi), &v| (lo.min(v), hi.max(v)));
    let spread = spread.max(1.0);
    s.ci95_low = lo.min(s.median) / spread;
    s.ci95_high = hi.max(s.median) * spread;
    s.min = lo;
    s.max = hi;
    s
}

/// The interval of a mean: the mean of `v` and its 95% interval from Student's t
/// (`mean ± t(0.975, n−1) · s/√n`), the low end kept at 0 or above (CPU time is
/// never negative). `None` when `v` is empty.
///
/// Why a mean and t, when every other interval here is an order-statistic
/// interval of the median: this is for CPU per SSH login, and the server's
/// reading may be a running total rounded down to clock ticks (10 ms) while a
/// login costs a few ms. Each login's value is then 0 or 1 tick (sometimes 2):
/// a median would be 0 or 10 ms, whichever way the rounding fell most often,
/// and its order-statistic interval `[0, 10 ms]` however many logins were made.
/// The *mean* of the per-login differences is unbiased: they telescope, so
/// their sum is the last total less the first, off by under one tick in all.
/// The values are bounded and the samples independent logins, so their mean is
/// close to normal from a handful on, which is what t assumes; and the skew that
/// makes the median right for throughput (interference only slows a sample)
/// is small next to the rounding here.
///
/// Few samples: t's quantile is this interval's own rule for them (12.7 with
/// two logins, 4.3 with three), so [`few_samples`] (made for order statistics)
/// is not applied. One value has no spread at all: its interval is `[0,
/// f64::MAX]` (JSON has no infinity), so it ties with everything, as
/// [`few_samples`] makes a figure of fewer than [`MIN_SAMPLES`] samples do.
pub fn mean_interval(v: &[f64]) -> Option<CpuFigure> {
    if v.is_empty() {
        return None;
    }
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let half = if v.len() < 2 {
        f64::MAX
    } else {
        let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
        t975(v.len() - 1) * (var / n).sqrt()
    };
    Some(CpuFigure {
        mean,
        ci95_low: (mean - half).max(0.0),
        ci95_high: if half == f64::MAX { f64::MAX } else { mean + half },
        samples: v.len(),
    })
}

/// Above this coefficient of variation the machine is called noisy.
pub const NOISY_CV: f64 = 0.05;

impl Summary {
    /// Summarises `values`; `None` when there are none or any is not finite.
    pub fn of(values: &[f64]) -> Option<Summary> {
        if values.is_empty() || values.iter().any(|v| !v.is_finite()) {
            return None;
        }
        let mut v = values.to_vec();
        v.sort_by(|a, b| a.partial_cmp(b).expect("finite"));
        let n = v.len();
        let median = crate::stats::median_sorted(&v);
        let mean = v.iter().sum::<f64>() / n as f64;
        let var = if n > 1 {
            v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64
        } else {
            0.0
        };
        let cv = if mean != 0.0 { var.sqrt() / mean.abs() } else { 0.0 };
        let (lo, hi) = median_ci_ranks(n);
        Some(Summary {
            median,
            mean,
            min: v[0],
            max: v[n - 1],
            ci95_low: v[lo],
            ci95_high: v[hi],
            samples: n,
            cv,
        })
    }

    /// Half-width of the interval relative to the median.
    pub fn relative_precision(&self) -> f64 {
        if self.median == 0.0 {
            return f64::INFINITY;
        }
        (self.ci95_high - self.ci95_low) / 2.0 / self.median.abs()
    }

    /// True when the two 95% intervals overlap: the pair is tied.
    pub fn ties_with(&self, other: &Summary) -> bool {
        overlap((self.ci95_low, self.ci95_high), (other.ci95_low, other.ci95_high))
    }

    /// True from [`MIN_SAMPLES`] samples on: the figure may be ordered against
    /// others. Below that, [`few_samples`] widened its interval when it was made,
    /// and ranking ties it with everything ([`Summary::for_ties`]).
    pub fn can_be_ordered(&self) -> bool {
        self.samples >= MIN_SAMPLES
    }

    /// The summary a ranking compares: itself, or, below [`MIN_SAMPLES`] samples,
    /// an unbounded interval, so that it ties with everything and is never ranked
    /// above or below anything (the second half of the few-samples rule).
    pub fn for_ties(&self) -> Summary {
        let mut w = *self;
        if !self.can_be_ordered() {
            w.ci95_low = f64::NEG_INFINITY;
            w.ci95_high = f64::INFINITY;
        }
        w
    }

    pub fn is_noisy(&self) -> bool {
        self.cv > NOISY_CV
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_interval_covers_the_mean_and_narrows_with_n() {
        let few = mean_interval(&[0.01, 0.02, 0.0, 0.01]).unwrap();
        assert!((few.mean - 0.01).abs() < 1e-12);
        assert!(few.ci95_low <= few.mean && few.mean <= few.ci95_high);
        let many: Vec<f64> = (0..40).map(|i| [0.01, 0.02, 0.0, 0.01][i % 4]).collect();
        let many = mean_interval(&many).unwrap();
        assert!(many.ci95_high - many.ci95_low < few.ci95_high - few.ci95_low);
        assert_eq!(mean_interval(&[0.5]).unwrap().ci95_high, f64::MAX);
        assert!(mean_interval(&[]).is_none());
    }

    #[test]
    fn mean_interval_matches_the_t_table() {
        // 1, 2, 3: mean 2, s = 1, t(0.975, 2) = 4.303, half-width 4.303/sqrt(3).
        let f = mean_interval(&[1.0, 2.0, 3.0]).unwrap();
        let half = 4.303 / 3f64.sqrt();
        assert!((f.ci95_high - (2.0 + half)).abs() < 1e-9, "{f:?}");
        assert_eq!(f.ci95_low, 0.0, "never below zero: {f:?}");
        // Tick-rounded logins of a true 4 ms (0 or 10 ms, 40% of them 10 ms): the
        // mean finds 4 ms where the median says 0.
        let ticks: Vec<f64> = (0..50).map(|i| if i % 5 < 2 { 0.01 } else { 0.0 }).collect();
        let f = mean_interval(&ticks).unwrap();
        assert!((f.mean - 0.004).abs() < 1e-12 && f.ci95_low < 0.004 && 0.004 < f.ci95_high, "{f:?}");
        assert_eq!(Summary::of(&ticks).unwrap().median, 0.0);
    }

    #[test]
    fn median_and_spread() {
        let s = Summary::of(&[5.0, 1.0, 3.0, 2.0, 4.0]).unwrap();
        assert_eq!(s.median, 3.0);
        assert_eq!(s.mean, 3.0);
        assert_eq!(s.min, 1.0);
        assert_eq!(s.max, 5.0);
        assert_eq!(s.samples, 5);
        // Fewer than 6 samples: the interval is the range.
        assert_eq!((s.ci95_low, s.ci95_high), (1.0, 5.0));
        let even = Summary::of(&[1.0, 2.0, 3.0, 10.0]).unwrap();
        assert_eq!(even.median, 2.5);
    }

    #[test]
    fn median_ci_ranks_match_binomial_tables() {
        // Known 1-based ranks for the 95% median interval: n=6 -> (1,6),
        // n=10 -> (2,9), n=20 -> (6,15), n=100 -> (40,61).
        assert_eq!(median_ci_ranks(6), (0, 5));
        assert_eq!(median_ci_ranks(10), (1, 8));
        assert_eq!(median_ci_ranks(20), (5, 14));
        assert_eq!(median_ci_ranks(100), (39, 60));
        let (lo, hi) = median_ci_ranks(5000);
        assert!(lo > 2400 && hi < 2600 && lo + hi == 4999);
    }

    #[test]
    fn interval_narrows_with_more_samples() {
        let few: Vec<f64> = (0..10).map(|i| 100.0 + (i % 5) as f64).collect();
        let many: Vec<f64> = (0..200).map(|i| 100.0 + (i % 5) as f64).collect();
        let a = Summary::of(&few).unwrap();
        let b = Summary::of(&many).unwrap();
        assert!(b.ci95_high - b.ci95_low <= a.ci95_high - a.ci95_low);
        assert!(b.relative_precision() < 0.03);
    }

    #[test]
    fn ties_are_overlapping_intervals() {
        let a = Summary::of(&[10.0, 10.5, 11.0, 10.2, 10.8, 10.4, 10.6]).unwrap();
        let b = Summary::of(&[10.7, 11.2, 11.5, 11.1, 11.3, 11.0, 11.4]).unwrap();
        let c = Summary::of(&[20.0, 20.5, 21.0, 20.2, 20.8, 20.4, 20.6]).unwrap();
        assert!(a.ties_with(&b));
        assert!(!a.ties_with(&c));
        assert!(!c.ties_with(&a));
    }

    /// The ratio interval made from two medians' order-statistic intervals (what a
    /// stored run keeps) covers the true ratio of two known distributions in at
    /// least 90 % of 1,000 simulated pairs, at a width that still orders a 25 %
    /// difference; dividing the intervals' ends instead is much wider.
    #[test]
    fn ratio_of_two_medians_intervals_covers_the_true_ratio() {
        let mut s = 0x9e37_79b9_u64;
        let mut next = move || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 11) as f64 / (1u64 << 53) as f64
        };
        let mut normal = move || {
            let (u, v) = (next().max(1e-12), next());
            (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
        };
        let (mut covered, mut widths, mut ends) = (0, Vec::new(), Vec::new());
        for i in 0..1000 {
            // Log-normal sessions (medians 300 and 240: ratio 1.25), 8 to 12 a side.
            let n = 8 + i % 5;
            let a: Vec<f64> = (0..n).map(|_| 300.0 * (0.1 * normal()).exp()).collect();
            let b: Vec<f64> = (0..n).map(|_| 240.0 * (0.1 * normal()).exp()).collect();
            let (x, y) = (Summary::of(&a).unwrap(), Summary::of(&b).unwrap());
            let r = crate::stats::ratio_of_intervals((x.median, x.ci95_low, x.ci95_high), (y.median, y.ci95_low, y.ci95_high)).unwrap();
            covered += usize::from(r.low <= 1.25 && 1.25 <= r.high);
            widths.push(r.high / r.low);
            ends.push((x.ci95_high / y.ci95_low) / (x.ci95_low / y.ci95_high));
        }
        let (width, old) = (crate::stats::median(&mut widths), crate::stats::median(&mut ends));
        assert!(covered >= 900, "covered {covered} of 1000");
        assert!(width < 1.5 && width < old, "median width ×{width:.3} (ends divided: ×{old:.3})");
    }

    #[test]
    fn noise_is_flagged() {
        let quiet = Summary::of(&[100.0, 101.0, 99.0, 100.5, 99.5, 100.0]).unwrap();
        let noisy = Summary::of(&[100.0, 130.0, 70.0, 110.0, 90.0, 100.0]).unwrap();
        assert!(!quiet.is_noisy());
        assert!(noisy.is_noisy());
        assert!(Summary::of(&[]).is_none());
        assert!(Summary::of(&[1.0, f64::NAN]).is_none());
    }
}
