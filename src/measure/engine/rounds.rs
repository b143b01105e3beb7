//! Round keys: the one way interleaved measurements (A B C, A B C …) name their
//! rounds, so that `recommend` may order two subjects by their ratio within the
//! rounds they share (`ResultRecord::rounds`, `recommend::paired`). A key is
//! `KIND-S#R`: the sweep `S` (numbered per process, so the keys of a main job's
//! several passes never meet) and its round `R`. The SSH sweep's sessions and
//! the TLS bulk slices both take their keys here.

use crate::model::RoundValue;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Sweeps started by this process, over every kind.
static SWEEPS: AtomicUsize = AtomicUsize::new(0);

/// One sweep's key maker: a fresh sweep number for `kind` (`ssh-bulk`, `tls-bulk`).
#[derive(Debug, Clone)]
pub struct Sweep {
    prefix: String,
}

impl Sweep {
    /// A new sweep of `kind`, numbered after every sweep this process began.
    pub fn start(kind: &str) -> Sweep {
        let n = SWEEPS.fetch_add(1, Ordering::Relaxed) + 1;
        Sweep {
            prefix: format!("{kind}-{n}"),
        }
    }
    /// The key of this sweep's round `round` (1-based).
    pub fn key(&self, round: usize) -> String {
        format!("{}#{round}", self.prefix)
    }
    /// Values with their rounds (`None`: not in a round, left out); values that
    /// are not finite and positive are left out as well.
    pub fn values(&self, values: impl IntoIterator<Item = (Option<usize>, f64)>) -> Vec<RoundValue> {
        values
            .into_iter()
            .filter(|(_, v)| v.is_finite() && *v > 0.0)
            .filter_map(|(r, value)| {
                Some(RoundValue {
                    round: self.key(r?),
                    value,
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sweeps_never_share_keys_and_values_keep_their_rounds() {
        let (a, b) = (Sweep::start("tls-bulk"), Sweep::start("tls-bulk"));
        assert_ne!(a.key(1), b.key(1));
        assert!(a.key(3).starts_with("tls-bulk-") && a.key(3).ends_with("#3"));
        let v = a.values([(Some(1), 10.0), (None, 11.0), (Some(2), 0.0), (Some(3), f64::NAN), (Some(4), 12.0)]);
        let got: Vec<(String, f64)> = v.into_iter().map(|x| (x.round, x.value)).collect();
        assert_eq!(got, vec![(a.key(1), 10.0), (a.key(4), 12.0)]);
    }
}
