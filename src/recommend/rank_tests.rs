//! The ranking's rules on hand-made figures: ties, tiers, aliases, chains of
//! overlapping intervals, and what a budget may change.

use super::*;

/// Inside a tie, the smaller key of one construction comes first and the
/// others keep their places; names without a key size are untouched.
#[test]
fn key_size_orders_only_one_construction() {
    assert_eq!(key_size("aes256-gcm@openssh.com"), Some(("aes#-gcm@openssh.com".to_string(), 256)));
    assert_eq!(key_size("TLS_AES_128_GCM_SHA256"), Some(("tls_aes_#_gcm_sha256".to_string(), 128)));
    assert_eq!(key_size("chacha20-poly1305@openssh.com"), None);
    assert_ne!(key_size("aes128-ctr").unwrap().0, key_size("aes256-gcm@openssh.com").unwrap().0);
}
use crate::judge::{Domain, Knowledge};

fn s(median: f64, half: f64) -> Summary {
    Summary {
        median,
        mean: median,
        min: median - half,
        max: median + half,
        ci95_low: median - half,
        ci95_high: median + half,
        samples: 10,
        cv: 0.01,
    }
}

/// A candidate of `domain` with the tier the knowledge gives it.
fn candidate(k: &Knowledge, domain: Domain, name: &str, m: Option<Summary>) -> Candidate {
    let verdict = k.judge(domain, name);
    Candidate {
        tier: crate::recommend::tier(k, &verdict),
        verdict,
        measured: m.map(|summary| Measured {
            summary,
            basis: "test".into(),
        }),
        physics: None,
        rounds: Vec::new(),
    }
}

fn cand(k: &Knowledge, name: &str, m: Option<Summary>) -> Candidate {
    candidate(k, Domain::SshCipher, name, m)
}

#[test]
fn ties_share_a_rank_and_refused_options_stay_out() {
    let k = Knowledge::builtin().unwrap();
    let p = Policy::builtin("intermediate").unwrap();
    let cands = vec![
        cand(&k, "aes128-ctr", Some(s(100.0, 2.0))),
        cand(&k, "aes256-gcm@openssh.com", Some(s(300.0, 5.0))),
        cand(&k, "aes128-gcm@openssh.com", Some(s(303.0, 5.0))),
        cand(&k, "3des-cbc", Some(s(900.0, 1.0))),
        cand(&k, "aes192-ctr", None),
    ];
    let r = rank("ssh_ciphers", "bytes_per_sec", true, &cands, &p);
    let names: Vec<(&str, usize, bool)> = r.ranked.iter().map(|x| (x.name.as_str(), x.rank, x.tied)).collect();
    assert_eq!(names.len(), 3, "{names:?}");
    assert_eq!((names[0].1, names[1].1), (1, 1), "the two GCMs overlap: {names:?}");
    assert!(names[0].2 && names[1].2);
    assert_eq!(names[2], ("aes128-ctr", 3, false));
    // Tied, one construction: the smaller key first, whatever the policy's order
    // or the medians (here aes256-gcm's is the lower).
    assert_eq!(names[0].0, "aes128-gcm@openssh.com", "{names:?}");
    assert_eq!(r.unmeasured, vec!["aes192-ctr".to_string()]);
    let f = r.fastest_refused.as_ref().expect("3des is refused");
    assert_eq!(f.name, "3des-cbc");
    assert!(f.level < Level::Secure);
    let cost = r.safety_cost.unwrap();
    assert!((cost - 900.0 / 303.0).abs() < 1e-9 || (cost - 900.0 / 300.0).abs() < 1e-9, "{cost}");
    // A figure from too few samples is tied with everything, never ranked.
    let few = Summary {
        samples: 1,
        ..s(50.0, 0.0)
    };
    let r2 = rank(
        "ssh_ciphers",
        "bytes_per_sec",
        true,
        &[cands[1].clone(), cand(&k, "aes128-ctr", Some(few))],
        &p,
    );
    assert!(r2.ranked.iter().all(|x| x.rank == 1 && x.tied), "{:?}", r2.ranked);
    // Lower is better (seconds): the order flips.
    let r = rank("ssh_ciphers", "seconds", false, &cands, &p);
    assert_eq!(r.ranked[0].name, "aes128-ctr");
}

fn kex(k: &Knowledge, name: &str, m: Option<Summary>) -> Candidate {
    candidate(k, Domain::SshKex, name, m)
}

/// Post-quantum first even when it costs more; an option ssh-audit fails after
/// everything else even when it is cheapest; the unmeasured kept, in the policy's
/// order, after the measured of their tier, except among post-quantum options: an
/// unmeasured hybrid is not ordered after a measured one (issue 27: OpenSSH 10's
/// default mlkem768x25519 first, whichever hybrid the budget reached).
#[test]
fn post_quantum_leads_and_auditor_failed_options_trail_whatever_the_speed() {
    let k = Knowledge::builtin().unwrap();
    let p = Policy::builtin("intermediate").unwrap();
    let cands = vec![
        kex(&k, "mlkem768x25519-sha256", None),
        kex(&k, "sntrup761x25519-sha512", Some(s(0.012, 0.0005))),
        kex(&k, "curve25519-sha256", Some(s(0.010, 0.0005))),
        kex(&k, "ecdh-sha2-nistp256", Some(s(0.008, 0.0005))),
        kex(&k, "diffie-hellman-group16-sha512", None),
        kex(&k, "diffie-hellman-group1-sha1", Some(s(0.001, 0.0001))),
    ];
    let r = rank("ssh_kex", "cpu_seconds", false, &cands, &p);
    assert_eq!(
        r.choice(),
        [
            "mlkem768x25519-sha256",
            "sntrup761x25519-sha512",
            "curve25519-sha256",
            "diffie-hellman-group16-sha512",
            "ecdh-sha2-nistp256"
        ]
    );
    assert_eq!(r.unmeasured, ["mlkem768x25519-sha256", "diffie-hellman-group16-sha512"]);
    assert!(r.ranked[0].tied, "not separated from the unmeasured hybrid: {:?}", r.ranked);
    assert_eq!(r.fastest_refused.as_ref().unwrap().name, "diffie-hellman-group1-sha1");
    // The refused option's price is set against the cheapest accepted one, not the first.
    assert!((r.safety_cost.unwrap() - 0.008 / 0.001).abs() < 1e-9);
}

/// Two measured hybrids: tied, the policy's order (mlkem768x25519 first); only
/// intervals apart put the cheaper first, and then in every run that measures so.
#[test]
fn measured_hybrids_keep_the_policy_order_unless_clearly_apart() {
    let k = Knowledge::builtin().unwrap();
    let p = Policy::builtin("modern").unwrap();
    let with = |ml: Summary, sn: Summary| {
        let cands = vec![
            kex(&k, "mlkem768x25519-sha256", Some(ml)),
            kex(&k, "sntrup761x25519-sha512", Some(sn)),
            kex(&k, "curve25519-sha256", Some(s(0.010, 0.0005))),
        ];
        rank("ssh_kex", "cpu_seconds", false, &cands, &p).choice()
    };
    // sntrup's median lower, but the intervals overlap: a tie.
    assert_eq!(with(s(0.0300, 0.004), s(0.0290, 0.004))[0], "mlkem768x25519-sha256");
    assert_eq!(with(s(0.0300, 0.0005), s(0.0600, 0.0005))[0], "mlkem768x25519-sha256");
    assert_eq!(with(s(0.0600, 0.0005), s(0.0300, 0.0005))[0], "sntrup761x25519-sha512");
}

/// A pre-standard name is configured right after the name it was measured as,
/// not after everything measured; a twin that is measured too keeps its place.
#[test]
fn an_unmeasured_alias_follows_its_measured_twin() {
    let k = Knowledge::builtin().unwrap();
    let p = Policy::builtin("modern").unwrap();
    let cands = vec![
        kex(&k, "sntrup761x25519-sha512@openssh.com", Some(s(0.065, 0.002))),
        kex(&k, "curve25519-sha256", Some(s(0.011, 0.0005))),
        kex(&k, "curve25519-sha256@libssh.org", None),
        kex(&k, "diffie-hellman-group-exchange-sha256", Some(s(0.015, 0.0005))),
        kex(&k, "sntrup761x25519-sha512", None),
    ];
    let mut r = rank("ssh_kex", "cpu_seconds", false, &cands, &p);
    let before = r.choice();
    assert_eq!(
        before.last().map(String::as_str),
        Some("curve25519-sha256@libssh.org"),
        "{before:?}"
    );
    r.follow_twins(|n| k.twin(Domain::SshKex, n));
    assert_eq!(
        r.choice(),
        [
            "sntrup761x25519-sha512@openssh.com",
            "sntrup761x25519-sha512",
            "curve25519-sha256",
            "curve25519-sha256@libssh.org",
            "diffie-hellman-group-exchange-sha256"
        ]
    );
    // Both directions of the relation are known, whichever entry states it.
    assert_eq!(
        k.twin(Domain::SshKex, "curve25519-sha256").as_deref(),
        Some("curve25519-sha256@libssh.org")
    );
    assert_eq!(k.twin(Domain::SshKex, "diffie-hellman-group16-sha512"), None);
}

/// Wide intervals that overlap in a chain tie the three (the middle one is
/// apart from neither), yet the slowest never goes before the fastest: the
/// order the evidence gives inside the tie stays in the configured order.
#[test]
fn a_chain_of_overlaps_keeps_the_extremes_in_order() {
    let k = Knowledge::builtin().unwrap();
    let p = Policy::builtin("intermediate").unwrap();
    let cands = [
        cand(&k, "chacha20-poly1305@openssh.com", Some(s(55.0, 28.0))),
        cand(&k, "aes128-gcm@openssh.com", Some(s(400.0, 250.0))),
        cand(&k, "aes192-ctr", Some(s(170.0, 120.0))),
    ];
    let r = rank("ssh_ciphers", "bytes_per_sec", true, &cands, &p);
    let at = |n: &str| r.choice().iter().position(|x| x == n).unwrap();
    assert!(at("aes128-gcm@openssh.com") < at("chacha20-poly1305@openssh.com"), "{:?}", r.ranked);
    assert_eq!(r.choice()[0], "aes128-gcm@openssh.com");
    assert!(r.ranked.iter().all(|x| x.tied && x.rank == 1), "{:?}", r.ranked);
}

/// The main job's TLS 1.2 reversal (two runs of one machine): AES-128 apart
/// from AES-256 in one run and from ChaCha20 in the other, the third tied
/// with both each time. A leader-based split ranked ChaCha20 before AES-256
/// in the first run and AES-256 before ChaCha20 in the second; neither run
/// may rank a pair the other ranks the opposite way.
#[test]
fn an_option_tied_with_two_others_orders_neither_pair() {
    let k = Knowledge::builtin().unwrap();
    let p = Policy::builtin("intermediate").unwrap();
    let (a128, a256, chacha) = ("aes128-gcm@openssh.com", "aes256-gcm@openssh.com", "chacha20-poly1305@openssh.com");
    let runs = [
        // Run 1: ChaCha20 1385 [1309-1547] ties AES-128; AES-256 1409 [1268-1484] does not.
        [
            (a128, 1570.0, 1500.0, 1640.0),
            (chacha, 1385.0, 1309.0, 1547.0),
            (a256, 1409.0, 1268.0, 1484.0),
        ],
        // The long run: AES-128 apart from ChaCha20, AES-256 tied with both.
        [
            (a128, 1650.0, 1600.0, 1700.0),
            (chacha, 1385.0, 1309.0, 1547.0),
            (a256, 1500.0, 1420.0, 1610.0),
        ],
    ];
    let mut orders = Vec::new();
    for figures in runs {
        let cands: Vec<Candidate> = figures
            .iter()
            .map(|&(n, m, lo, hi)| {
                let mut x = s(m, 0.0);
                (x.ci95_low, x.ci95_high) = (lo, hi);
                cand(&k, n, Some(x))
            })
            .collect();
        let r = rank("ssh_ciphers", "bytes_per_sec", true, &cands, &p);
        assert_eq!(r.choice()[0], a128, "{:?}", r.ranked);
        let rank_of = |n: &str| r.ranked.iter().find(|x| x.name == n).unwrap().rank;
        orders.push([a128, a256, chacha].map(rank_of));
    }
    for i in 0..3 {
        for j in 0..3 {
            let (x, y) = (orders[0], orders[1]);
            assert!(!(x[i] < x[j] && y[j] < y[i]), "reversed pair {i},{j}: {orders:?}");
        }
    }
}

/// Speed decides only beyond the intervals and [`PRACTICAL`]: 3% apart with
/// tight intervals is a tie (policy order), 20% apart is an order.
#[test]
fn speed_orders_only_measurable_differences() {
    let k = Knowledge::builtin().unwrap();
    let p = Policy::builtin("modern").unwrap();
    let close = [
        cand(&k, "chacha20-poly1305@openssh.com", Some(s(100.0, 0.5))),
        cand(&k, "aes128-gcm@openssh.com", Some(s(103.0, 0.5))),
    ];
    let r = rank("ssh_ciphers", "bytes_per_sec", true, &close, &p);
    assert_eq!(r.choice(), ["chacha20-poly1305@openssh.com", "aes128-gcm@openssh.com"]);
    assert!(r.ranked.iter().all(|x| x.tied && x.rank == 1), "{:?}", r.ranked);
    let far = [
        cand(&k, "chacha20-poly1305@openssh.com", Some(s(100.0, 0.5))),
        cand(&k, "aes128-gcm@openssh.com", Some(s(120.0, 0.5))),
    ];
    let r = rank("ssh_ciphers", "bytes_per_sec", true, &far, &p);
    assert_eq!(r.choice(), ["aes128-gcm@openssh.com", "chacha20-poly1305@openssh.com"]);
    assert!(!measurably_different(&s(100.0, 0.5), &s(103.0, 0.5)));
    assert!(!measurably_different(&s(100.0, 10.0), &s(120.0, 10.0)), "overlapping intervals");
    assert!(measurably_different(&s(100.0, 0.5), &s(120.0, 0.5)));
}

/// A small budget (nothing measured) and a large one (everything measured) give
/// the same set: budgets change the order, never what is configured.
#[test]
fn a_budget_changes_the_order_never_the_set() {
    let k = Knowledge::builtin().unwrap();
    let p = Policy::builtin("intermediate").unwrap();
    let names = [
        "aes256-ctr",
        "aes128-gcm@openssh.com",
        "chacha20-poly1305@openssh.com",
        "3des-cbc",
        "aes128-cbc",
    ];
    let none: Vec<Candidate> = names.iter().map(|n| cand(&k, n, None)).collect();
    let all: Vec<Candidate> = names
        .iter()
        .enumerate()
        .map(|(i, n)| cand(&k, n, Some(s(100.0 * (i + 1) as f64, 1.0))))
        .collect();
    let some: Vec<Candidate> = names
        .iter()
        .enumerate()
        .map(|(i, n)| cand(&k, n, (i % 2 == 0).then(|| s(100.0 * (i + 1) as f64, 1.0))))
        .collect();
    let set = |c: &[Candidate]| {
        let mut v = rank("ssh_ciphers", "bytes_per_sec", true, c, &p).choice();
        v.sort();
        v
    };
    assert_eq!(set(&none), set(&all));
    assert_eq!(set(&some), set(&all));
    assert_eq!(set(&all).len(), 3, "{:?}", set(&all));
}

#[test]
fn serial_throughput_is_slower_than_either_part() {
    let x = serial(&s(100.0, 1.0), &s(100.0, 1.0));
    assert!((x.median - 50.0).abs() < 1e-9);
    assert!(x.ci95_low < x.median && x.median < x.ci95_high);
}
