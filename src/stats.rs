//! Plain statistics shared by the layers that may not reach each other (the
//! engine's intervals in `measure::engine::stats`, the fleet's pooling): the one
//! median.

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

#[cfg(test)]
mod tests {
    use super::*;

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
