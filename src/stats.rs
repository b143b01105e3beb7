//! Plain statistics shared by the layers that may not reach each other (the
//! engine's intervals in `measure::engine::stats`, the fleet's pooling): the one
//! median, and the one interval of a ratio of two medians ([`ratio_of_intervals`]
//! from the two medians' 95 % intervals, [`ratio_bootstrap`] from the samples).

/// The median of `sorted` (ascending, not empty): its middle value, or the mean
/// of its two middle values.
pub fn median_sorted(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    }
}

/// The median of `v` (not empty), which is sorted in place (NaN last).
pub fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    median_sorted(v)
}

/// Two-sided 97.5% quantile of Student's t for `df` degrees of freedom.
pub fn t975(df: usize) -> f64 {
    const T: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101,
        2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::INFINITY,
        1..=30 => T[df - 1],
        31..=60 => 2.0,
        _ => 1.96,
    }
}

/// 0-based ranks (lo, hi) of the order statistics that bound the median with at
/// least 95% confidence. With fewer than 6 samples no pair reaches 95%, so the
/// whole range is returned.
pub fn median_ci_ranks(n: usize) -> (usize, usize) {
    median_ci_ranks_at(n, 0.025)
}

/// [`median_ci_ranks`] at confidence 1 − 2·`tail` (0.025: 95%, 0.005: 99%); the
/// whole range when no pair of order statistics reaches it.
pub fn median_ci_ranks_at(n: usize, tail: f64) -> (usize, usize) {
    // Below this, even the extreme pair covers less: 2·2^-n > 2·tail.
    if n < 2 || 0.5f64.powi(n as i32) > tail {
        return (0, n.saturating_sub(1));
    }
    // Largest k with P(B <= k-1) <= 0.025 for B ~ Binomial(n, 1/2); then
    // [x_(k), x_(n-k+1)] (1-based) covers the median with >= 95%.
    let k = if n <= 1000 {
        let mut cdf = 0.0;
        // pmf(0) = 2^-n, computed in log space to avoid underflow.
        let ln_half_n = -(n as f64) * std::f64::consts::LN_2;
        let mut ln_choose = 0.0f64;
        let mut k = 0;
        for i in 0..n {
            let pmf = (ln_choose + ln_half_n).exp();
            if cdf + pmf > tail {
                k = i;
                break;
            }
            cdf += pmf;
            ln_choose += ((n - i) as f64).ln() - ((i + 1) as f64).ln();
        }
        k
    } else {
        let nf = n as f64;
        let z = if tail < 0.01 { 2.576 } else { 1.96 };
        ((nf / 2.0) - z * nf.sqrt() / 2.0).floor().max(0.0) as usize
    };
    // k counts how many order statistics lie strictly outside on each side.
    let lo = k.saturating_sub(1).min(n - 1);
    let lo = if k == 0 { 0 } else { lo };
    (lo, n - 1 - lo)
}

/// A ratio of two medians with its 95 % interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ratio {
    pub ratio: f64,
    pub low: f64,
    pub high: f64,
}

/// A ratio interval wider than this factor either way of its ratio says nothing a
/// user could act on: it is shown as "cannot tell", not as figures.
pub const CANNOT_TELL: f64 = 2.0;

impl Ratio {
    /// Wider than [`CANNOT_TELL`] either way (or unbounded).
    pub fn cannot_tell(&self) -> bool {
        !(self.low > 0.0 && self.high.is_finite()) || self.high > self.ratio * CANNOT_TELL || self.low * CANNOT_TELL < self.ratio
    }
}

/// The interval of `num / den` where each is a median with its own 95 % interval
/// `(median, low, high)`, the two measured independently: the MOVER method (Zou &
/// Donner) on the log scale. Each side's distance from its median to an end of
/// its interval is its error that way; the ratio's lower end takes the
/// numerator's lower and the denominator's upper error, combined in quadrature
/// (the two are independent), and the upper end the other two. This is what
/// Fieller's interval becomes when neither median's interval reaches zero; an
/// interval that does (a very noisy figure) bounds nothing: `None`. Adding the two
/// errors instead of combining them (dividing one interval's end by the other's)
/// makes an interval that claims far less than the data show.
pub fn ratio_of_intervals(num: (f64, f64, f64), den: (f64, f64, f64)) -> Option<Ratio> {
    let ok = |(m, lo, hi): (f64, f64, f64)| m > 0.0 && lo > 0.0 && hi >= m && lo <= m && hi.is_finite();
    if !ok(num) || !ok(den) {
        return None;
    }
    let down = |(m, lo, _): (f64, f64, f64)| (m / lo).ln();
    let up = |(m, _, hi): (f64, f64, f64)| (hi / m).ln();
    let r = num.0 / den.0;
    let lo = r * (-down(num).hypot(up(den))).exp();
    let hi = r * up(num).hypot(down(den)).exp();
    Some(Ratio {
        ratio: r,
        low: lo,
        high: hi,
    })
}

/// Rounds two subjects must share for [`paired_ratio`].
pub const PAIRED_MIN: usize = 3;

/// Student's t, two-sided 99% (the 0.995 quantile), for 2 to 7 degrees of freedom.
fn t995(df: usize) -> f64 {
    const T: [f64; 6] = [9.925, 5.841, 4.604, 4.032, 3.707, 3.499];
    match df {
        0 | 1 => f64::INFINITY,
        2..=7 => T[df - 2],
        _ => 2.576,
    }
}

/// The ratio `a / b` of two subjects measured back to back in the same rounds,
/// from `pairs` (one `(a, b)` per shared round): the median of the per-round
/// ratios, with a 99 % interval over rounds. The drift of the machine that hits
/// both members of a round alike cancels in each ratio, so this interval is as
/// wide as the within-round spread, not as the drift. 99 %, not 95 %: "two 95 %
/// intervals apart", the rule for independent figures, is a test at about 99.5 %,
/// and a run compares many pairs; at 95 % a run of 3 rounds ordered aes256-gcm
/// 1.26× aes128-gcm (1.04–1.65) where the write-up's pipe measured them equal.
/// From 8 rounds on, the order statistics of the log ratios that bound their
/// median (the sign test: distribution-free); with 3 to 7, too few for that,
/// Student's t over their mean. The interval always holds the median. `None`
/// with fewer than [`PAIRED_MIN`] pairs or a value not finite and above zero.
pub fn paired_ratio(pairs: &[(f64, f64)]) -> Option<Ratio> {
    let n = pairs.len();
    if n < PAIRED_MIN || pairs.iter().any(|(a, b)| !(a.is_finite() && b.is_finite() && *a > 0.0 && *b > 0.0)) {
        return None;
    }
    let mut logs: Vec<f64> = pairs.iter().map(|(a, b)| (a / b).ln()).collect();
    let mid = median(&mut logs);
    let (lo, hi) = if n >= 8 {
        let (l, h) = median_ci_ranks_at(n, 0.005);
        (logs[l], logs[h])
    } else {
        let mean = logs.iter().sum::<f64>() / n as f64;
        let sd = (logs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt();
        let half = t995(n - 1) * sd / (n as f64).sqrt();
        (mean - half, mean + half)
    };
    Some(Ratio {
        ratio: mid.exp(),
        low: lo.min(mid).exp(),
        high: hi.max(mid).exp(),
    })
}

/// Samples each side needs for [`ratio_bootstrap`]: with fewer, a resampled
/// median takes too few distinct values for its percentiles to mean much.
pub const BOOTSTRAP_MIN: usize = 6;

/// The interval of median(`num`) / median(`den`) by a percentile bootstrap over
/// the samples (each side resampled on its own: independent measurements),
/// `resamples` times, with a fixed `seed` (the same samples give the same
/// interval). `None` with fewer than [`BOOTSTRAP_MIN`] samples a side, or a
/// sample that is not finite or not above zero.
pub fn ratio_bootstrap(num: &[f64], den: &[f64], resamples: usize, seed: u64) -> Option<Ratio> {
    let fine = |v: &[f64]| v.len() >= BOOTSTRAP_MIN && v.iter().all(|x| x.is_finite() && *x > 0.0);
    if !fine(num) || !fine(den) || resamples < 40 {
        return None;
    }
    let mut state = seed;
    let mut next = move || {
        // splitmix64
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    let mut a = vec![0.0; num.len()];
    let mut b = vec![0.0; den.len()];
    let mut ratios = Vec::with_capacity(resamples);
    for _ in 0..resamples {
        for x in a.iter_mut() {
            *x = num[(next() % num.len() as u64) as usize];
        }
        for x in b.iter_mut() {
            *x = den[(next() % den.len() as u64) as usize];
        }
        ratios.push(median(&mut a) / median(&mut b));
    }
    ratios.sort_by(f64::total_cmp);
    let at = |q: f64| ratios[((q * (resamples - 1) as f64).round() as usize).min(resamples - 1)];
    let r = median(&mut num.to_vec()) / median(&mut den.to_vec());
    Some(Ratio {
        ratio: r,
        low: at(0.025).min(r),
        high: at(0.975).max(r),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A standard normal from a uniform pair (Box–Muller), for the simulations.
    pub(crate) fn normal(next: &mut impl FnMut() -> f64) -> f64 {
        let (u, v) = (next().max(1e-12), next());
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }

    /// A uniform in [0, 1) from a seed (the tests' own generator).
    pub(crate) fn uniform(seed: u64) -> impl FnMut() -> f64 {
        let mut s = seed;
        move || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 11) as f64 / (1u64 << 53) as f64
        }
    }

    /// The bootstrap interval of a ratio of two known distributions (log-normal,
    /// medians 300 and 240: a true ratio of 1.25) covers the true ratio in at
    /// least 90 % of 1,000 simulated pairs, and is not absurdly wide.
    #[test]
    fn bootstrap_ratio_covers_the_true_ratio() {
        let mut next = uniform(0x5eed);
        let (mut covered, mut widths) = (0, Vec::new());
        for i in 0..1000u64 {
            let a: Vec<f64> = (0..10).map(|_| 300.0 * (0.08 * normal(&mut next)).exp()).collect();
            let b: Vec<f64> = (0..10).map(|_| 240.0 * (0.08 * normal(&mut next)).exp()).collect();
            let r = ratio_bootstrap(&a, &b, 400, i).unwrap();
            covered += usize::from(r.low <= 1.25 && 1.25 <= r.high);
            widths.push(r.high / r.low);
        }
        let width = median(&mut widths);
        assert!(covered >= 900, "covered {covered} of 1000");
        assert!(width < 1.25, "median width ×{width:.3}");
        assert!(ratio_bootstrap(&[1.0; 5], &[1.0; 6], 400, 1).is_none(), "too few samples");
    }

    #[test]
    fn ratio_of_intervals_combines_the_two_errors() {
        let r = ratio_of_intervals((200.0, 190.0, 210.0), (100.0, 95.0, 105.0)).unwrap();
        assert!((r.ratio - 2.0).abs() < 1e-12);
        // Quadrature: narrower than dividing the ends (190/105 .. 210/95).
        assert!(r.low > 190.0 / 105.0 && r.high < 210.0 / 95.0, "{r:?}");
        assert!(r.low < 2.0 && r.high > 2.0 && r.low > 1.0 && !r.cannot_tell());
        // One side exact: the other's error alone.
        let r = ratio_of_intervals((200.0, 180.0, 220.0), (100.0, 100.0, 100.0)).unwrap();
        assert!((r.low - 1.8).abs() < 1e-9 && (r.high - 2.2).abs() < 1e-9, "{r:?}");
        // An interval through zero bounds nothing; a huge one cannot tell.
        assert!(ratio_of_intervals((245.0, -239.0, 731.0), (204.0, 10.0, 600.0)).is_none());
        let wide = ratio_of_intervals((278.0, 14.0, 5000.0), (278.0, 14.0, 5000.0)).unwrap();
        assert!(wide.cannot_tell() && wide.low < 1.0 && wide.high > 1.0, "{wide:?}");
    }

    /// Rounds whose drift (±35 %, common to both) swamps a true ratio of 1.25 in
    /// each side's own figures: the paired interval is about as wide as the
    /// within-round noise (±3 %), and holds 1.25; too few rounds give nothing.
    /// The 99% ranks are the 95% ones or wider, and their coverage, from the
    /// binomial, is at least 99% (8 is the first n where the extremes reach it).
    #[test]
    fn median_ranks_at_99_percent_cover_at_least_that() {
        assert_eq!(median_ci_ranks_at(7, 0.005), (0, 6));
        assert_eq!(median_ci_ranks_at(8, 0.005), (0, 7));
        for n in 8..=200usize {
            let (l95, h95) = median_ci_ranks(n);
            let (l99, h99) = median_ci_ranks_at(n, 0.005);
            assert!(l99 <= l95 && h99 >= h95, "{n}: {l99}..{h99} inside {l95}..{h95}");
            // P(the median lies below x_(l+1)) = P(Binomial(n, 1/2) <= l).
            let below: f64 = (0..=l99).map(|i| binom_half(n, i)).sum();
            assert!(below <= 0.005 + 1e-12, "{n}: {below}");
        }
    }

    fn binom_half(n: usize, i: usize) -> f64 {
        let ln_choose: f64 = (0..i).map(|j| ((n - j) as f64).ln() - ((j + 1) as f64).ln()).sum();
        (ln_choose - n as f64 * std::f64::consts::LN_2).exp()
    }

    #[test]
    fn paired_ratio_cancels_the_drift_of_each_round() {
        let mut next = uniform(0x9a1);
        let pairs: Vec<(f64, f64)> = (0..8)
            .map(|_| {
                let drift = 1.0 + 0.35 * (2.0 * next() - 1.0);
                let own = |n: &mut dyn FnMut() -> f64| 1.0 + 0.03 * (2.0 * n() - 1.0);
                (250.0 * drift * own(&mut next), 200.0 * drift * own(&mut next))
            })
            .collect();
        let r = paired_ratio(&pairs).unwrap();
        assert!(r.low <= 1.25 && 1.25 <= r.high && r.low > 1.15 && r.high < 1.35, "{r:?}");
        let small = paired_ratio(&pairs[..3]).unwrap();
        assert!(
            small.low <= small.ratio && small.ratio <= small.high && small.low > 1.0,
            "{small:?}"
        );
        assert!(paired_ratio(&pairs[..2]).is_none());
        assert!(paired_ratio(&[(1.0, 0.0), (1.0, 1.0), (1.0, 1.0)]).is_none());
    }

    #[test]
    fn odd_even_and_unsorted() {
        assert_eq!(median(&mut [5.0, 1.0, 3.0]), 3.0);
        assert_eq!(median(&mut [4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(median(&mut [7.0]), 7.0);
        assert_eq!(median(&mut [-1.0, 10.0]), 4.5);
        assert_eq!(median_sorted(&[1.0, 2.0, 3.0, 10.0]), 2.5);
        let mut v = [3.0, f64::NAN, 1.0];
        assert_eq!(median(&mut v), 3.0, "NaN sorts last");
    }
}
