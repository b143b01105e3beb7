use super::*;
use crate::backend::openssh::client::{Algorithms, Client, Destination, SshError};
use crate::discover::openssh::OpenSsh;
use crate::measure::engine::race;
use crate::measure::engine::race::{could_place, MAX_SPREAD as MAX_SLACK, MIN_SPREAD as MIN_SLACK};
use crate::measure::engine::sampler::{self, Measurement, Probe, Rate};
use crate::model::{Kind, Metric, ResultRecord, Subject};
use crate::units::Seconds;
use serde_json::json;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The racing interval of a measurement as the sweep sees it.
fn race_interval(m: &Measurement, slack: f64) -> Option<race::Interval> {
    race::interval(&m.values_wall(), slack)
}
fn slack(ms: &[&Measurement]) -> f64 {
    race::spread(&ms.iter().filter_map(|m| m.wall()).collect::<Vec<_>>())
}
fn critical(iv: &[Option<race::Interval>], med: &[f64], n: &[usize], alive: &[usize], cap: usize) -> Vec<usize> {
    race::critical(iv, med, n, alive, TOP, cap)
}

fn openssh() -> OpenSsh {
    OpenSsh {
        ssh: "ssh".into(),
        version: "OpenSSH_9.2p1".into(),
        ciphers: [
            "aes128-ctr",
            "aes256-ctr",
            "aes128-gcm@openssh.com",
            "chacha20-poly1305@openssh.com",
        ]
        .map(String::from)
        .to_vec(),
        aead: ["aes128-gcm@openssh.com", "chacha20-poly1305@openssh.com"]
            .map(String::from)
            .to_vec(),
        macs: ["hmac-sha2-256", "umac-64-etm@openssh.com", "hmac-sha1"].map(String::from).to_vec(),
        kex: ["ecdh-sha2-nistp256", "curve25519-sha256"].map(String::from).to_vec(),
        keys: vec![],
        hostkey_algorithms: ["ssh-ed25519", "rsa-sha2-512"].map(String::from).to_vec(),
        pubkey_algorithms: vec![],
    }
}

fn plan(full: bool, ciphers: &[&str]) -> SshPlan {
    let o = openssh();
    let serve = o.hostkey_algorithms.clone();
    let c: Vec<String> = ciphers.iter().map(|s| s.to_string()).collect();
    SshPlan::new(&o, &c, &[], &[], &[], Some(&serve), full, None, false, true, Seconds(10.0)).unwrap()
}

#[test]
fn decomposed_sweep_measures_aead_once_and_fixes_kex() {
    let p = plan(false, &[]);
    let b = p.bulk_items();
    // 2 plain ciphers × 3 MACs + 2 AEADs.
    assert_eq!(b.len(), 8);
    assert!(b.iter().all(|i| i.kex == "curve25519-sha256"));
    assert_eq!(b.iter().filter(|i| i.mac.is_none()).count(), 2);
    // kex × host key: 2 × 2.
    assert_eq!(p.handshake_items().len(), 4);
}

/// A small budget measures only the first handshake subjects: those a
/// recommendation puts in front (post-quantum, X25519) come first, not in
/// `ssh -Q kex` order, which puts post-quantum last.
#[test]
fn handshakes_measure_what_is_recommended_first() {
    let mut o = openssh();
    o.kex = [
        "diffie-hellman-group14-sha1",
        "diffie-hellman-group16-sha512",
        "ecdh-sha2-nistp256",
        "curve25519-sha256",
        "curve25519-sha256@libssh.org",
        "sntrup761x25519-sha512@openssh.com",
    ]
    .map(String::from)
    .to_vec();
    let serve = vec!["ssh-ed25519".to_string()];
    let p = SshPlan::new(&o, &[], &[], &[], &[], Some(&serve), false, None, false, true, Seconds(10.0)).unwrap();
    let order: Vec<String> = p.handshake_items().into_iter().map(|h| h.kex).collect();
    assert_eq!(
        order,
        [
            "sntrup761x25519-sha512@openssh.com",
            "curve25519-sha256",
            "curve25519-sha256@libssh.org",
            "diffie-hellman-group16-sha512",
            "ecdh-sha2-nistp256",
            "diffie-hellman-group14-sha1"
        ]
    );
}

#[test]
fn full_matrix_is_the_three_way_product() {
    let p = plan(true, &[]);
    assert_eq!(p.bulk_items().len(), 8 * 2);
    assert!(p.handshake_items().is_empty());
}

#[test]
fn names_are_validated_with_suggestions() {
    let p = plan(false, &["AES128-CTR"]);
    assert_eq!(p.ciphers, vec!["aes128-ctr"]);
    let o = openssh();
    let err = SshPlan::new(
        &o,
        &["aes128-crt".into()],
        &[],
        &[],
        &[],
        None,
        false,
        None,
        false,
        true,
        Seconds(1.0),
    )
    .unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("unknown cipher 'aes128-crt'") && msg.contains("aes128-ctr"), "{msg}");
    let err = SshPlan::new(
        &o,
        &[],
        &[],
        &[],
        &["ssh-dss".into()],
        Some(&o.hostkey_algorithms),
        false,
        None,
        false,
        true,
        Seconds(1.0),
    )
    .unwrap_err();
    assert!(err.to_string().contains("unknown host-key algorithm"), "{err}");
}

#[test]
fn algorithms_checked_by_an_earlier_sweep_are_not_checked_again() {
    // A client that cannot run at all: any check it made would fail and be recorded.
    let client = Client {
        ssh: "/nonexistent/ssh".into(),
        target: Destination::Remote {
            destination: "nowhere.invalid".into(),
            port: None,
            identity: None,
            options: vec![],
        },
    };
    let kex = |k: &str| Subject {
        kex: Some(k.into()),
        ..Default::default()
    };
    let mut acc = Accepted {
        accepted: vec![kex("k1")],
        refused: vec![(kex("k2"), "no matching key exchange".into())],
    };
    let mut session = crate::measure::sink::Measurements::new();
    let clock = Clock::new(Instant::now(), Seconds(10.0));
    let checks = |names: &[&str]| names.iter().map(|k| (kex(k), Algorithms::default())).collect::<Vec<_>>();
    run_checks(checks(&["k1", "k2"]), &client, &mut session, &mut acc, &clock).unwrap();
    assert!(session.results().is_empty(), "{:?}", session.results());
    assert_eq!((acc.accepted.len(), acc.refused.len()), (1, 1));
    // A new one is checked (and here fails: the client cannot run).
    run_checks(checks(&["k1", "k3"]), &client, &mut session, &mut acc, &clock).unwrap();
    assert_eq!(session.results().len(), 1);
    assert!(acc.knows(&kex("k3")) && acc.refusal(&kex("k3")).is_some());
}

#[test]
fn refusal_of_one_algorithm_covers_its_combinations() {
    let acc = Accepted {
        accepted: vec![],
        refused: vec![(
            Subject {
                mac: Some("hmac-sha1".into()),
                ..Default::default()
            },
            "no matching MAC".into(),
        )],
    };
    let s = |mac: Option<&str>| Subject {
        cipher: Some("aes128-ctr".into()),
        mac: mac.map(String::from),
        kex: Some("k".into()),
        ..Default::default()
    };
    assert!(acc.refusal(&s(Some("hmac-sha1"))).is_some());
    assert!(acc.refusal(&s(Some("hmac-sha2-256"))).is_none());
    assert!(acc.refusal(&s(None)).is_none());
}

/// The private daemon and a client for it.
fn private() -> (crate::backend::openssh::PrivateSshd, Client) {
    let o = crate::discover::openssh::discover().unwrap();
    let d = crate::backend::openssh::PrivateSshd::start(&crate::discover::openssh::find_sshd().unwrap(), &o).unwrap();
    let client = d.client(&o.ssh);
    (d, client)
}

/// A non-AEAD pair every OpenSSH supports.
fn ctr_hmac() -> Algorithms {
    Algorithms {
        cipher: Some("aes128-ctr".into()),
        mac: Some("hmac-sha2-256".into()),
        ..Default::default()
    }
}

#[test]
fn far_side_hash_must_match_and_can_fail() {
    let (_d, client) = private();
    let algs = ctr_hmac();
    let buf = Arc::new(pattern());
    // Honest far side: every byte arrives, the hashes match.
    let mut p = BulkProbe::open(&client, algs.clone(), buf.clone(), None, true).unwrap();
    assert_eq!(p.run(3).unwrap(), (3 * CHUNK) as f64);
    let (wall, cpu) = p.timed_region().unwrap();
    assert!(wall.0 > 0.0 && cpu.0 > 0.0, "{wall:?} {cpu:?}");
    p.close().expect("hash of what crossed matches");
    // A far side that alters one byte value: the check must notice.
    let mut t = client
        .transfer(&algs, &format!("echo {READY} && tr 'A' 'B' | {HASH_SINK}"), true)
        .unwrap();
    t.wait_for_line(READY).unwrap();
    t.send(b"cipherbench: A byte that changes").unwrap();
    let err = t.finish().unwrap_err().to_string();
    assert!(err.contains("received different bytes"), "{err}");
    // Fixed-volume mode: one whole session per sample.
    let mut p = BulkProbe::open(&client, algs, buf, Some(3 * CHUNK as u64 + 17), true).unwrap();
    assert_eq!(p.run(1).unwrap(), (3 * CHUNK + 17) as f64);
    p.close().unwrap();
}

#[test]
fn fixed_volume_needs_the_far_side_to_say_it_read_everything() {
    let (_d, client) = private();
    let algs = ctr_hmac();
    // The real far side: primed, then done.
    let buf = Arc::new(pattern());
    let mut p = BulkProbe::open(&client, algs.clone(), buf.clone(), Some(CHUNK as u64), false).unwrap();
    assert_eq!(p.run(1).unwrap(), CHUNK as f64);
    assert!(p.timed_region().unwrap().0 .0 > 0.0);
    // A far side that reads everything but never says so: an error, not a figure.
    let mut t = client.transfer(&algs, &format!("echo {READY} && {SINK}"), false).unwrap();
    t.wait_for_line(READY).unwrap();
    t.send(&buf).unwrap();
    let err = t.end_input_and_wait(Some(DONE)).unwrap_err().to_string();
    assert!(err.contains("without saying it had read all"), "{err}");
    // Nor may it skip the priming checkpoint.
    let mut t = client
        .transfer(&algs, &format!("echo {READY} && {SINK} && echo {DONE}"), false)
        .unwrap();
    t.wait_for_line(READY).unwrap();
    t.send(&buf).unwrap();
    drop(t.end_input_and_wait(Some(PRIMED)).unwrap_err());
}

#[test]
fn sessions_interleave_in_rounds_and_fit_the_share() {
    assert_eq!(rounds(&[2, 0, 1], 3), vec![2, 0, 1, 2, 0, 1, 2, 0, 1]);
    assert!(rounds(&[4], 0).is_empty());
    // A generous share: three sessions, each sampling no longer than the cap.
    let (n, span) = session_plan(MAX_BULK_SECONDS, 0.3);
    assert_eq!(n, FIRST_PASS_SESSIONS);
    assert!((MIN_BULK_SECONDS..=MAX_SESSION_SECONDS).contains(&span), "{span}");
    assert!(n as f64 * (0.3 + warmup_for(span) + span) <= MAX_BULK_SECONDS + 1e-9);
    // Room for about two: two. None fits: one, at the least span.
    assert_eq!(session_plan(2.0 * (0.3 + 0.3 + 0.05), 0.3).0, 2);
    assert_eq!(session_plan(0.1, 0.3), (1, MIN_BULK_SECONDS));
}

#[test]
fn fewer_than_three_sessions_store_a_widened_interval() {
    let one = record(Kind::SshBulk, Metric::BytesPerSec, Subject::default(), &m(&[100.0]), 1.5);
    assert_eq!(one.median, Some(100.0));
    assert!(
        (one.ci95_low.unwrap() - 100.0 / 1.5).abs() < 1e-9 && (one.ci95_high.unwrap() - 150.0).abs() < 1e-9,
        "{one:?}"
    );
    let two = record(Kind::SshBulk, Metric::BytesPerSec, Subject::default(), &m(&[100.0, 120.0]), 2.0);
    assert_eq!((two.ci95_low, two.ci95_high), (Some(50.0), Some(240.0)));
    // From three on, the tool's own interval (below 6, the range).
    let three = record(
        Kind::SshBulk,
        Metric::BytesPerSec,
        Subject::default(),
        &m(&[100.0, 120.0, 110.0]),
        2.0,
    );
    assert_eq!((three.ci95_low, three.ci95_high), (Some(100.0), Some(120.0)));
    // The race sees the same interval as the record.
    assert_eq!(
        race_interval(&m(&[100.0]), 1.5),
        Some((one.ci95_low.unwrap(), one.ci95_high.unwrap()))
    );
}

#[test]
fn handshakes_are_taken_in_rounds_within_the_time() {
    let sample = || sampler::Sample {
        wall: Seconds(0.001),
        cpu: Seconds(0.0),
        work: 1.0,
    };
    // Three subjects, one failing at its second handshake: the others go on,
    // in rounds 0 1 2, 0 1 2 …, each to HANDSHAKE_SAMPLES at least.
    let mut order = Vec::new();
    // Each handshake: (subject, when it started, how long it took).
    let mut calls: Vec<(usize, Instant, Duration)> = Vec::new();
    let stop = Instant::now() + Duration::from_millis(300);
    let out = handshake_rounds(3, 0.001, stop, |k, i| {
        let t = Instant::now();
        order.push(k);
        std::thread::sleep(Duration::from_millis(1));
        calls.push((k, t, t.elapsed()));
        if k == 1 && i == 1 {
            anyhow::bail!("refused now");
        }
        Ok(sample())
    });
    assert_eq!(&order[..6], &[0, 1, 2, 0, 1, 2]);
    assert_eq!(&order[6..8], &[0, 2], "the failed subject is out");
    assert!(out[1].1.is_some() && out[1].0.samples.len() == 1);
    for k in [0, 2] {
        assert!(out[k].1.is_none());
        assert!(out[k].0.samples.len() >= HANDSHAKE_SAMPLES, "{}", out[k].0.samples.len());
    }
    // No handshake started that would not end by `stop`, each guessed at its
    // subject's longest so far (the first at the 1 ms given): what keeps the run
    // within its deadline, whatever the machine's load makes one handshake take.
    for (n, &(k, t, _)) in calls.iter().enumerate() {
        let guess = calls[..n]
            .iter()
            .filter(|c| c.0 == k)
            .map(|c| c.2)
            .max()
            .unwrap_or(Duration::from_millis(1));
        assert!(
            t + guess <= stop,
            "handshake {n} (subject {k}) started {guess:?} or less before the stop"
        );
    }
    // No time: nothing starts.
    let out = handshake_rounds(2, 0.5, Instant::now() + Duration::from_millis(100), |_, _| Ok(sample()));
    assert!(out.iter().all(|(m, e)| m.samples.is_empty() && e.is_none()));
}

#[test]
fn handshake_probe_and_refusals() {
    let (_d, client) = private();
    let mut h = HandshakeProbe {
        client: client.clone(),
        algs: Algorithms {
            kex: Some("curve25519-sha256".into()),
            hostkey: Some("ssh-ed25519".into()),
            ..Default::default()
        },
        last: None,
        cpu: LoginCpu::for_target(&client.target),
    };
    assert_eq!(h.run(3).unwrap(), 3.0);
    assert!(h.timed_region().unwrap().0 .0 > 0.0);
    // Both ends' CPU per login: the client's from wait4, the private sshd's from its
    // cgroup or its listener's reaped children (a login re-executes sshd: never free).
    let cpu = h.cpu.figure().expect("cpu per login");
    let (client_cpu, server_cpu) = (cpu.client.unwrap(), cpu.server.expect("the private sshd is observable"));
    assert_eq!((client_cpu.samples, server_cpu.samples), (3, 3));
    assert!(client_cpu.mean > 0.0 && server_cpu.mean > 0.0, "{cpu:?}");
    assert!(cpu.total.unwrap().mean > client_cpu.mean);
    // A cipher the client does not know is refused, not fatal.
    let e = client
        .run(
            &Algorithms {
                cipher: Some("rijndael-cbc@lysator.liu.se".into()),
                ..Default::default()
            },
            "true",
        )
        .unwrap_err();
    assert!(matches!(e, SshError::Refused(_)), "{e:?}");
}

fn m(values: &[f64]) -> Measurement {
    Measurement {
        samples: values
            .iter()
            .map(|v| sampler::Sample {
                wall: Seconds(1.0),
                cpu: Seconds(0.5),
                work: *v,
            })
            .collect(),
        rate: Rate::PerSecond,
        units: 1,
        interrupted: false,
        basis: sampler::Basis::Wall,
    }
}

#[test]
fn clear_losers_cannot_place_and_one_sample_is_widened() {
    let iv = |vals: &[&[f64]], k: f64| -> Vec<Option<(f64, f64)>> { vals.iter().map(|v| race_interval(&m(v), k)).collect() };
    // Three pairs near 100, one near 95 (within noise), one at 20 (3des-like).
    let rows: [&[f64]; 5] = [&[100.0, 102.0, 98.0], &[101.0, 99.0, 103.0], &[97.0, 99.0, 100.0], &[95.0], &[20.0]];
    let places = could_place(&iv(&rows, 2.0), TOP);
    assert_eq!(places, vec![0, 1, 2, 3], "the one-sample 95 stays in, the 20 is out");
    // Narrow intervals with three samples each: the fourth is certainly slower.
    let rows: [&[f64]; 4] = [
        &[100.0, 101.0, 102.0],
        &[110.0, 111.0, 112.0],
        &[120.0, 121.0, 122.0],
        &[90.0, 91.0, 92.0],
    ];
    assert_eq!(could_place(&iv(&rows, 2.0), TOP), vec![0, 1, 2]);
    // No interval (not measured): not in the running.
    assert!(could_place(&[None, Some((1.0, 2.0))], TOP) == vec![1]);
}

#[test]
fn first_rounds_take_everyone_fastest_first_then_clear_losers_are_passed_over() {
    // True speeds: three contenders near 100, two near 60, one at 20.
    let speeds = [60.0, 100.0, 20.0, 98.0, 59.0, 101.0];
    let mut racers: Vec<Racer> = racers_for_rounds(speeds.len());
    let mut order = Vec::new();
    in_rounds(&mut racers, 3, |r, i| {
        // A little spread between sessions, as on a quiet machine.
        let wobble = [1.0, 1.02, 0.99][r[i].m.samples.len()];
        r[i].m.samples.push(m(&[speeds[i] * wobble]).samples[0]);
        order.push(i);
        Ok(true)
    })
    .unwrap();
    // Round 1: everyone, in the plan's order; round 2: everyone again, fastest
    // first, the three fastest taking their third session at once (a budget
    // that ends inside round 2 has served the contenders).
    assert_eq!(&order[..15], &[0, 1, 2, 3, 4, 5, 5, 5, 1, 1, 3, 3, 0, 4, 2], "{order:?}");
    // Round 3: the contenders have their three sessions, the spread is known, and
    // the clear losers (60, 59, 20) get no third.
    assert_eq!(order.len(), 15, "{order:?}");
    // Out of time: the scheduler stops at once.
    let mut calls = 0;
    for r in racers.iter_mut() {
        r.m = m(&[]);
    }
    in_rounds(&mut racers, 3, |_, _| {
        calls += 1;
        Ok(false)
    })
    .unwrap();
    assert_eq!(calls, 1);
}

#[test]
fn slack_follows_the_observed_spread_within_bounds() {
    let (a, b, c) = (m(&[100.0, 110.0, 105.0]), m(&[50.0, 55.0, 52.0]), m(&[10.0]));
    assert!((slack(&[&a, &b, &c]) - 1.1).abs() < 1e-9);
    let wild = m(&[10.0, 100.0, 50.0]);
    assert_eq!(slack(&[&wild]), MAX_SLACK);
    assert_eq!(slack(&[&c]), MAX_SLACK, "no pair with 3 samples yet: the widest");
    let tight = m(&[100.0, 100.5, 100.2]);
    assert_eq!(slack(&[&tight]), MIN_SLACK);
}

#[test]
fn racing_samples_the_pairs_on_the_boundary_and_stops_when_settled() {
    // Ranked by median: 0 (200), 1 (150), 2 (120), 3 (118), 4 (50).
    let iv = vec![
        Some((190.0, 210.0)),
        Some((140.0, 160.0)),
        Some((110.0, 125.0)),
        Some((112.0, 124.0)),
        Some((45.0, 55.0)),
    ];
    let med = [200.0, 150.0, 120.0, 118.0, 50.0];
    let alive = [0, 1, 2, 3];
    // Places 1 and 2 are settled; the third is between 2 and 3.
    assert_eq!(critical(&iv, &med, &[5, 5, 5, 5, 1], &alive, 30), vec![2, 3]);
    // One of them capped: only the other is sampled.
    assert_eq!(critical(&iv, &med, &[5, 5, 30, 5, 1], &alive, 30), vec![3]);
    // Both capped: nothing left that could settle it.
    assert!(critical(&iv, &med, &[5, 5, 30, 30, 1], &alive, 30).is_empty());
    // First place open too: both places get samples in the same round.
    let mut two = iv.clone();
    two[0] = Some((145.0, 210.0));
    assert_eq!(critical(&two, &med, &[5; 5], &alive, 30), vec![0, 1, 2, 3]);
    // Separated: settled.
    let mut sep = iv.clone();
    sep[3] = Some((100.0, 105.0));
    assert!(critical(&sep, &med, &[5; 5], &alive, 30).is_empty());
}

fn doc(rows: &[(&str, Option<&str>, &str, &[f64])]) -> crate::model::Document {
    let results = rows
        .iter()
        .map(|(c, mac, k, v)| {
            let s = crate::model::Summary::of(v).unwrap();
            let subject = Subject {
                cipher: Some(c.to_string()),
                mac: mac.map(String::from),
                kex: Some(k.to_string()),
                ..Default::default()
            };
            ResultRecord::ok(Kind::SshBulk, subject, Metric::BytesPerSec, &s, None)
        })
        .collect();
    let mut d: crate::model::Document = serde_json::from_value(json!({
        "schema": "cipherbench/1",
        "run": {"id": "t", "started_at": "now", "status": "complete", "command": "ssh",
                "host": crate::discover::host::fingerprint(), "libraries": {}, "settings": {}},
        "results": [], "verdicts": [], "recommendations": []
    }))
    .unwrap();
    d.results = results;
    d
}

#[test]
fn full_matrix_pairs_pool_over_kex_and_ties_decide_agreement() {
    let spread = |x: f64| [x - 2.0, x - 1.0, x, x + 1.0, x + 2.0, x + 0.5, x - 0.5];
    let (a, b, c, d, e) = (spread(300.0), spread(250.0), spread(200.0), spread(199.0), spread(100.0));
    let dec = doc(&[
        ("aes128-gcm@openssh.com", None, "k1", &a),
        ("aes128-ctr", Some("umac-64-etm@openssh.com"), "k1", &b),
        ("aes256-ctr", Some("umac-64-etm@openssh.com"), "k1", &c),
        ("aes128-ctr", Some("hmac-sha1"), "k1", &d),
        ("3des-cbc", Some("hmac-sha1"), "k1", &e),
    ]);
    // Full matrix: one figure per kex, pooled per pair; AEAD counted once.
    let mut rows = Vec::new();
    let kex = ["k1", "k2", "k3", "k4", "k5", "k6", "k7"];
    for (i, k) in kex.iter().enumerate() {
        rows.push(("aes128-gcm@openssh.com", None, *k, vec![301.0 + i as f64]));
        rows.push(("aes128-ctr", Some("umac-64-etm@openssh.com"), *k, vec![249.0 + i as f64]));
        // The 3rd and 4th swap places, within each other's intervals.
        rows.push(("aes256-ctr", Some("umac-64-etm@openssh.com"), *k, vec![197.0 + i as f64]));
        rows.push(("aes128-ctr", Some("hmac-sha1"), *k, vec![198.0 + i as f64]));
        rows.push(("3des-cbc", Some("hmac-sha1"), *k, vec![20.0 + i as f64]));
    }
    let rows: Vec<(&str, Option<&str>, &str, &[f64])> = rows.iter().map(|(c, m, k, v)| (*c, *m, *k, v.as_slice())).collect();
    let full = doc(&rows);
    let f = pair_figures(&full);
    assert_eq!(f.len(), 5);
    assert_eq!(f[0].pair, "aes128-gcm@openssh.com (implicit)");
    assert_eq!((f[0].records, f[0].summary.samples), (7, 7));
    let (text, agree) = compare_sweeps(&dec, &full);
    assert!(agree, "{text}");
    assert!(text.contains("same top 3 up to ties"), "{text}");
    assert!(text.contains("#1 aes128-gcm@openssh.com (implicit)"), "{text}");
    // A full matrix whose third place is far ahead of the decomposed one's: they differ.
    let mut rows2 = rows.clone();
    let fast = [400.0];
    for r in rows2.iter_mut().filter(|r| r.0 == "3des-cbc") {
        r.3 = &fast;
    }
    let (text, agree) = compare_sweeps(&dec, &doc(&rows2));
    assert!(!agree && text.contains("top 3 differ"), "{text}");
    // Identical: the same top 3 in the same order.
    let (text, agree) = compare_sweeps(&dec, &dec);
    assert!(agree && text.contains("same top 3, same order"), "{text}");
}

#[test]
fn pattern_is_not_compressible_filler() {
    let p = pattern();
    assert_eq!(p.len(), CHUNK);
    let zeros = p.iter().filter(|&&b| b == 0).count();
    assert!(zeros < CHUNK / 100, "{zeros}");
}

#[test]
fn server_cpu_record_is_seconds_per_gb_per_session() {
    let subject = Subject {
        cipher: Some("aes128-ctr".into()),
        mac: Some("hmac-sha2-256".into()),
        ..Default::default()
    };
    // (server CPU seconds, bytes) per session: 1.0, 1.2 and 1.5 s per GB; a
    // session without bytes says nothing.
    let r = server_cpu_record(&subject, &[(0.5, 0.5e9), (1.2, 1e9), (0.0, 0.0), (3.0, 2e9)], 2.0).unwrap();
    assert_eq!(
        (r.kind, r.metric, r.status),
        (Kind::SshBulk, Metric::Seconds, crate::model::Status::Ok)
    );
    assert_eq!(r.subject.mode.as_deref(), Some(SERVER_CPU_PER_GB));
    assert_eq!(r.subject.cipher, subject.cipher);
    assert_eq!((r.median, r.samples), (Some(1.2), Some(3)));
    assert_eq!((r.ci95_low, r.ci95_high), (Some(1.0), Some(1.5)));
    assert_eq!(r.values.len(), 3, "kept for pooling with a race's sessions");
    // One session: the engine's few-samples interval, never a point.
    let one = server_cpu_record(&subject, &[(1.0, 1e9)], 2.0).unwrap();
    assert_eq!((one.ci95_low, one.median, one.ci95_high), (Some(0.5), Some(1.0), Some(2.0)));
    // No reading (a remote server): no record.
    assert!(server_cpu_record(&subject, &[], 2.0).is_none());
}

/// The two ways of reading the private sshd's CPU agree over a bulk session's
/// timed part: the tick reading (live descendants summed, what a non-root run
/// uses) against the daemon's cgroup (microseconds, where this runs as root).
/// 3DES keeps the server busy enough (tenths of a second) for ticks to resolve.
#[test]
fn tick_and_cgroup_readings_of_a_bulk_session_agree() {
    use crate::backend::openssh::cpu::ServerClock;
    let (d, client) = private();
    let listener = d.pid().unwrap();
    let cgroup = ServerClock::of_listener(Some(listener));
    if !matches!(cgroup, ServerClock::Cgroup { .. }) {
        eprintln!("no cgroup v2 of the daemon's own here (not root): nothing to compare the tick reading with");
        return;
    }
    let algs = Algorithms {
        cipher: Some("3des-cbc".into()),
        mac: Some("hmac-sha1".into()),
        ..Default::default()
    };
    let mut p = BulkProbe::open(&client, algs, Arc::new(pattern()), Some(8 * CHUNK as u64), false).unwrap();
    // Sessions alternate between the two clocks, so drift treats both alike.
    let ticks = ServerClock::Ticks { listener };
    let (mut by_cgroup, mut by_ticks) = (0.0, 0.0);
    for _ in 0..3 {
        for (clock, sum) in [(&cgroup, &mut by_cgroup), (&ticks, &mut by_ticks)] {
            p.server = clock.clone();
            p.run(1).unwrap();
            *sum += p.server_cpu.take().expect("a server reading").0 / 3.0;
        }
    }
    eprintln!("server CPU over 8 MiB of 3DES: cgroup {by_cgroup:.3} s, ticks {by_ticks:.3} s");
    assert!(by_cgroup > 0.05, "8 MiB of 3DES costs the server tenths of a second: {by_cgroup}");
    assert!(
        (by_ticks - by_cgroup).abs() <= 0.06 + 0.3 * by_cgroup,
        "ticks {by_ticks:.3} s against cgroup {by_cgroup:.3} s for the same work"
    );
}

/// `n` racers with no sessions, for the rounds' tests.
pub(super) fn racers_for_rounds(n: usize) -> Vec<Racer> {
    (0..n)
        .map(|_| Racer {
            item: BulkItem {
                cipher: "c".into(),
                mac: None,
                kex: "k".into(),
            },
            stage: Stage::Ciphers,
            subject: Subject::default(),
            algs: Algorithms::default(),
            m: m(&[]),
            idx: None,
            cost: 0.0,
            out: false,
            server: Vec::new(),
            at: Vec::new(),
            rounds: Vec::new(),
        })
        .collect()
}
