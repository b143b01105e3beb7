//! The rounds of a sweep's bulk sessions. Sessions are interleaved (A B C, A B C
//! …, `racer::in_rounds` and the races): a round is a run of consecutive
//! sessions in which no racer comes twice, so the machine's drift from second to
//! second hits every member of a round alike. Each session's value is stored
//! with its round's key (`ResultRecord::rounds`), unique within the run, so that
//! `recommend` may order two subjects by their ratio within the rounds they share.

use super::racer::Racer;
use crate::measure::engine::rounds::Sweep;

/// Gives every session of `racers` its round key (`ssh-bulk-S#R`): the
/// sessions in the order they ended, a new round whenever a racer comes again.
/// Each sweep's keys get its own number (`engine::rounds::Sweep`), so the keys
/// of a main job's several sweeps (bulk pass, race) never meet.
pub(super) fn assign(racers: &mut [Racer]) {
    let sweep = Sweep::start(crate::model::Kind::SshBulk.name());
    let mut events: Vec<(std::time::Instant, usize, usize)> = racers
        .iter()
        .enumerate()
        .flat_map(|(i, r)| r.at.iter().enumerate().map(move |(j, t)| (*t, i, j)))
        .collect();
    events.sort();
    for r in racers.iter_mut() {
        r.rounds = vec![String::new(); r.at.len()];
    }
    let (mut round, mut seen) = (1usize, Vec::<usize>::new());
    for (_, i, j) in events {
        if seen.contains(&i) {
            round += 1;
            seen.clear();
        }
        seen.push(i);
        racers[i].rounds[j] = sweep.key(round);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    /// A B C A B | A A B: a new round whenever a racer comes again.
    #[test]
    fn a_round_ends_when_a_racer_comes_again() {
        let mut racers = super::super::tests::racers_for_rounds(3);
        let t0 = Instant::now();
        for (k, i) in [0usize, 1, 2, 0, 1, 0, 0, 1].into_iter().enumerate() {
            racers[i].at.push(t0 + Duration::from_millis(k as u64));
        }
        assign(&mut racers);
        let round = |i: usize, j: usize| racers[i].rounds[j].rsplit('#').next().unwrap().to_string();
        assert_eq!((round(0, 0), round(1, 0), round(2, 0)), ("1".into(), "1".into(), "1".into()));
        assert_eq!((round(0, 1), round(1, 1)), ("2".into(), "2".into()));
        assert_eq!((round(0, 2), round(0, 3), round(1, 2)), ("3".into(), "4".into(), "4".into()));
        let prefix = racers[0].rounds[0].split('#').next().unwrap().to_string();
        assert!(racers.iter().flat_map(|r| &r.rounds).all(|k| k.starts_with(&prefix)));
        // Another sweep's keys never meet this one's.
        assign(&mut racers);
        assert!(!racers[0].rounds[0].starts_with(&format!("{prefix}#")));
    }
}
