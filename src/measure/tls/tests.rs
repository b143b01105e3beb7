use super::probe::{bulk_probe, BulkProbe, HandshakeProbe, Refusals, Server};
use super::*;
use crate::backend::openssl::certs::{CertType, Identity};
use crate::backend::openssl::tls::Protocol;
use crate::backend::tls::TlsLibrary;
use crate::measure::engine::sampler::Probe;
use crate::model::{Metric, ResultRecord, Status};
use crate::units::Seconds;
use std::collections::BTreeMap;
use std::io::Read;
use std::time::{Duration, Instant};

#[test]
fn targets_split() {
    assert_eq!(split_target("example.org:563").unwrap(), ("example.org".into(), 563));
    assert_eq!(split_target("[::1]:443").unwrap(), ("::1".into(), 443));
    assert!(split_target("example.org").is_err());
    assert!(split_target("example.org:0").is_err());
    assert!(split_target("example.org:https").is_err());
}

#[test]
fn names_resolve_with_suggestions() {
    let local = local_suites().unwrap();
    let r = resolve_suites(&["ecdhe-rsa-aes128-gcm-sha256".into(), "TLS_AES_128_GCM_SHA256".into()], &local).unwrap();
    assert_eq!(r[0].iana, "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256");
    assert_eq!(r[1].openssl, "TLS_AES_128_GCM_SHA256");
    let e = resolve_suites(&["TLS_AES_128_GCM_SHA265".into()], &local).unwrap_err().to_string();
    assert!(e.contains("TLS_AES_128_GCM_SHA256"), "{e}");
}

impl LoopbackPlan {
    fn clone_for_test(&self, write_size: usize) -> LoopbackPlan {
        LoopbackPlan {
            items: Vec::new(),
            skipped: Vec::new(),
            certs: self.certs.clone(),
            write_size,
            ..*self
        }
    }
}

/// Hands out a fixed text a few bytes at a time, so lines and chunks straddle reads.
struct Dribble(Vec<u8>, usize);
impl Read for Dribble {
    fn read(&mut self, b: &mut [u8]) -> std::io::Result<usize> {
        let k = b.len().min(3).min(self.0.len() - self.1);
        b[..k].copy_from_slice(&self.0[self.1..self.1 + k]);
        self.1 += k;
        Ok(k)
    }
}

#[test]
fn chunked_bodies() {
    let body = b"4;ext=1\r\nWiki\r\n5\r\npedia\r\n0E\r\n in\r\n\r\nchunks.\r\n0\r\nX-Trailer: 1\r\n\r\n";
    let mut buf = [0u8; 7];
    // All of it already read with the headers, or arriving in small pieces.
    assert_eq!(read_chunked(&mut Dribble(Vec::new(), 0), &mut buf, body.to_vec()).unwrap(), 23);
    assert_eq!(
        read_chunked(&mut Dribble(body[5..].to_vec(), 0), &mut buf, body[..5].to_vec()).unwrap(),
        23
    );
    for bad in [&b"zz\r\nab\r\n0\r\n\r\n"[..], b"5\r\nab", b"2\r\nabc\r\n0\r\n\r\n", b"2\r\nab\r\n"] {
        assert!(
            read_chunked(&mut Dribble(bad.to_vec(), 0), &mut buf, Vec::new()).is_err(),
            "{bad:?}"
        );
    }
}

/// Two TLS 1.2 suites' bulk in interleaved slices, each a fresh verified
/// connection: A B A B A B, and every figure over at least 3 slices.
#[test]
fn loopback_bulk_is_measured_in_interleaved_slices() {
    let local = local_suites().unwrap();
    let suite = |n: &str| local.iter().find(|s| s.openssl == n).unwrap().clone();
    let item = |s: Suite| Item {
        protocol: Protocol::Tls12,
        suite: s,
        group: Some("X25519"),
        cert: CertType::EcdsaP256,
        work: Work::Bulk(Direction::Upload),
    };
    let plan = LoopbackPlan {
        items: vec![
            item(suite("ECDHE-ECDSA-AES128-GCM-SHA256")),
            item(suite("ECDHE-ECDSA-CHACHA20-POLY1305")),
        ],
        skipped: Vec::new(),
        threads: 1,
        write_size: 16 << 10,
        volume: None,
        verify: true,
        timeout: Duration::from_secs(5),
        // 0.9 s per subject: three rounds of 0.18 s slices, then the leaders.
        budget: Seconds(2.0),
        certs: vec![CertType::EcdsaP256],
    };
    let items: Vec<&Item> = plan.items.iter().collect();
    let mut order = Vec::new();
    let t0 = Instant::now();
    let lib = crate::backend::openssl::library::Openssl;
    let out = bulk_sliced(&plan, &items, &mut BTreeMap::new(), &lib, |it, spec| {
        order.push((it.suite.openssl.clone(), spec.index, spec.of))
    });
    let spent = t0.elapsed().as_secs_f64();
    assert!(spent < plan.budget.0 * 1.3, "{spent} s for a {} s budget", plan.budget.0);
    let (a, b) = ("ECDHE-ECDSA-AES128-GCM-SHA256", "ECDHE-ECDSA-CHACHA20-POLY1305");
    // A B, A B, A B; then, while the two are not apart, more rounds of both.
    let n = order.len() / 2;
    let want: Vec<(String, usize, usize)> = (0..n)
        .flat_map(|i| [(a.to_string(), i, 5.max(i + 1)), (b.to_string(), i, 5.max(i + 1))])
        .collect();
    assert!(n >= 3 && order.len() == 2 * n, "{order:?}");
    assert_eq!(order, want);
    let mut keys: Vec<Vec<String>> = Vec::new();
    for (it, r) in plan.items.iter().zip(out) {
        let records = r.expect("measured").expect("ok");
        // Each slice's value with its round's key, as the SSH sweep's sessions
        // (`ResultRecord::rounds`); only the throughput record carries them.
        let rounds = &records[0].rounds;
        assert_eq!(rounds.len(), records[0].samples.unwrap(), "{rounds:?}");
        assert!(
            rounds.iter().all(|v| v.round.starts_with("tls-bulk-") && v.value > 1e6),
            "{rounds:?}"
        );
        assert!(records[1..].iter().all(|r| r.rounds.is_empty()));
        // Stored and read back (the document's JSON), the keys and values stay.
        let back: ResultRecord = serde_json::from_str(&serde_json::to_string(&records[0]).unwrap()).unwrap();
        assert_eq!(back.rounds.len(), rounds.len());
        for (x, y) in back.rounds.iter().zip(rounds) {
            // JSON keeps the key exactly and the value to within its last digit.
            assert!(x.round == y.round && (x.value - y.value).abs() <= 1e-12 * y.value, "{x:?} {y:?}");
        }
        keys.push(rounds.iter().map(|v| v.round.clone()).collect());
        assert_eq!(records.len(), 3, "throughput, client and server CPU per GB");
        for r in &records {
            assert_eq!(r.status, Status::Ok, "{r:?}");
            assert_eq!(r.subject.suite.as_deref(), Some(it.suite.iana.as_str()));
            let n = r.samples.unwrap();
            assert!(n >= 3, "{n} slices: {r:?}");
            let (lo, med, hi) = (r.ci95_low.unwrap(), r.median.unwrap(), r.ci95_high.unwrap());
            assert!(lo <= med && med <= hi && med > 0.0, "{r:?}");
        }
        assert_eq!(records[0].metric, Metric::BytesPerSec);
        assert!(records[0].median.unwrap() > 1e6, "{:?}", records[0]);
    }
    // Slice i of both subjects was taken in round i+1 of one sweep: the same keys,
    // one per round.
    assert_eq!(keys[0], keys[1]);
    let mut distinct = keys[0].clone();
    distinct.dedup();
    assert_eq!(distinct.len(), n, "{keys:?}");
    assert!(keys[0][2].ends_with("#3"), "{keys:?}");
    // A flipped byte still fails the subject: `loopback_bulk_is_verified_by_the_far_side`
    // (tests/tls.rs) runs that in a process of its own (the hook is an environment variable).
}

/// A real loopback handshake and an upload whose hash the server checks.
#[test]
fn loopback_handshake_and_verified_bulk() {
    let local = local_suites().unwrap();
    let suite = local.iter().find(|s| s.iana == "TLS_AES_128_GCM_SHA256").unwrap().clone();
    let id = Identity::generate(CertType::EcdsaP256).unwrap();
    let plan = LoopbackPlan {
        items: Vec::new(),
        skipped: Vec::new(),
        threads: 1,
        write_size: 4096,
        volume: None,
        verify: true,
        timeout: Duration::from_secs(5),
        budget: Seconds(1.0),
        certs: vec![CertType::EcdsaP256],
    };
    let item = Item {
        protocol: Protocol::Tls13,
        suite,
        group: Some("X25519"),
        cert: CertType::EcdsaP256,
        work: Work::Bulk(Direction::Upload),
    };
    let lib = crate::backend::openssl::library::Openssl;
    let server = Server::loopback(lib.server(&item.selection(), &id).unwrap(), 1, plan.timeout, true, Refusals::Fail).unwrap();
    let client = lib.client(&item.selection(), true).unwrap();
    let mut hs = HandshakeProbe::new(&client, server.addr, None, plan.timeout, (true, true), |n| {
        check_negotiated(
            (Protocol::Tls13, "TLS_AES_128_GCM_SHA256", Some("X25519")),
            (&n.0, &n.1, n.2.as_deref()),
        )
    })
    .unwrap();
    assert_eq!(hs.run(3).unwrap(), 3.0);
    assert_eq!(hs.durations.len(), 3);
    let connect =
        |p: &LoopbackPlan, d: Direction| bulk_probe(&*client, server.addr, p.timeout, (d, p.write_size, p.verify), |n| item.check(n));
    let mut bulk = connect(&plan, Direction::Upload).unwrap();
    let calls = |b: &BulkProbe| b.s.io_calls().unwrap();
    let before = calls(&bulk).0;
    assert_eq!(bulk.run(5).unwrap(), 5.0 * 4096.0);
    assert!(bulk.history[0].0 > 0.0, "server CPU is measured");
    // The command and five 4 KiB records went out in one send(2), before the read
    // of the receipt.
    assert_eq!(calls(&bulk).0 - before, 1);
    bulk.tamper = true;
    let e = bulk.run(2).unwrap_err().to_string();
    assert!(e.contains("SHA-256 mismatch"), "{e}");
    // The server has one worker: one connection at a time.
    drop(bulk);
    // 40 large runs: records of 16 KiB, gathered 256 KiB at a time, checked on the far side.
    let mut big = plan.clone_for_test(16 << 10);
    big.verify = true;
    let mut up = connect(&big, Direction::Upload).unwrap();
    let before = calls(&up).0;
    assert_eq!(up.run(40).unwrap(), 40.0 * 16384.0);
    let sent = calls(&up).0 - before;
    assert!((3..=6).contains(&sent), "{sent} send(2) calls for 40 records of 16 KiB");
    drop(up);
    let mut down = connect(&big, Direction::Download).unwrap();
    assert_eq!(down.run(40).unwrap(), 40.0 * 16384.0);
    assert!(calls(&down).1 < 40, "{} recv(2) calls for 40 records", calls(&down).1);
    drop(down);
    // Asking for a suite the server does not have fails before timing.
    let other = Item {
        suite: local.iter().find(|s| s.iana == "TLS_AES_256_GCM_SHA384").unwrap().clone(),
        group: None,
        ..item.clone()
    };
    let client2 = lib.client(&other.selection(), false).unwrap();
    assert!(HandshakeProbe::new(&client2, server.addr, None, plan.timeout, (false, true), |n| other.check(n)).is_err());
    drop(hs);
    drop(server);
}

/// The libraries name what they support from the library itself: libssl has every
/// suite the `openssl` tool lists, and both have the usual groups.
#[test]
fn tls_libraries_name_what_they_support() {
    let openssl = super::libraries::library(crate::catalog::Library::DEFAULT).unwrap();
    assert_eq!(openssl.name(), "openssl");
    for s in local_suites().unwrap() {
        assert_eq!(openssl.lacks(&s.iana), None, "{}", s.iana);
    }
    assert!(openssl.lacks("TLS_NOT_A_SUITE").is_some());
    assert!(["X25519", "P-256", "ffdhe2048"]
        .iter()
        .all(|g| openssl.groups().iter().any(|h| h == g)));
    let Ok(gnutls) = super::libraries::library(crate::backend::libraries::named("gnutls").unwrap()) else {
        crate::testing::missing("GnuTLS is not installed");
        return;
    };
    assert_eq!(gnutls.name(), "gnutls");
    assert_eq!(gnutls.lacks("TLS_AES_128_GCM_SHA256"), None);
    assert!(gnutls.lacks("TLS_ECDHE_ECDSA_WITH_ARIA_128_GCM_SHA256").is_some());
    assert!(["X25519", "P-256", "ffdhe2048"]
        .iter()
        .all(|g| gnutls.groups().iter().any(|h| h == g)));
}

/// `--connect --lib rustls`: the remote pass through `TlsLibrary` with rustls as
/// the client, against this program's OpenSSL server limited to one TLS 1.3 suite,
/// two TLS 1.2 ones (one CBC, which rustls lacks) and two groups. The scan finds
/// exactly what the server accepts of what rustls can offer; what rustls lacks
/// (TLS 1.0, the CBC suite, ffdhe2048) is not offered and recorded as such; a
/// group the server lacks is refused; the accepted suites' handshakes are timed
/// through rustls.
#[test]
fn remote_pass_through_rustls_finds_what_the_server_accepts() {
    let local = local_suites().unwrap();
    let suite = |iana: &str| local.iter().find(|s| s.iana == iana).unwrap().clone();
    let served = [
        "TLS_CHACHA20_POLY1305_SHA256",
        "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
        "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA",
    ];
    let id = Identity::generate(CertType::Rsa2048).unwrap();
    let server_side = Selection {
        suites: served.iter().map(|s| suite(s).name()).collect(),
        groups: vec!["X25519".into(), "P-256".into()],
        ..Default::default()
    };
    let openssl = crate::backend::openssl::library::Openssl;
    let timeout = Duration::from_secs(5);
    let server = Server::loopback(openssl.server(&server_side, &id).unwrap(), 1, timeout, false, Refusals::Keep).unwrap();
    let rustls = super::libraries::library(crate::backend::libraries::named("rustls").unwrap()).unwrap();
    let mut suites: Vec<Suite> = served.iter().map(|s| suite(s)).collect();
    suites.push(suite("TLS_AES_128_GCM_SHA256"));
    let plan = RemotePlan {
        target: server.addr.to_string(),
        host: "127.0.0.1".into(),
        addr: server.addr,
        sni: None,
        protocols: vec![Protocol::Tls10, Protocol::Tls12, Protocol::Tls13],
        suites,
        groups: vec!["X25519", "P-256", "P-384", "X25519MLKEM768", "ffdhe2048"],
        threads: 1,
        timeout,
        // This server speaks the benchmark's own protocol, not HTTP: the
        // downloads through rustls are tests/tls.rs's, against `openssl s_server`.
        http_get: None,
        handshakes: true,
        budget: Seconds(1.0),
        lib: rustls,
        native: None,
    };
    let scan = scan(&plan, &|_| {}).unwrap();
    let accepted: Vec<(Protocol, &str)> = scan.accepted_suites().map(|(p, s)| (p, s.iana.as_str())).collect();
    assert_eq!(
        accepted,
        [
            (Protocol::Tls12, "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"),
            (Protocol::Tls13, "TLS_CHACHA20_POLY1305_SHA256")
        ]
    );
    let refused = |p: Protocol, iana: &str| scan.suites.iter().any(|(q, s, r)| *q == p && s.iana == iana && r.is_some());
    assert!(refused(Protocol::Tls13, "TLS_AES_128_GCM_SHA256"), "{:?}", scan.suites);
    let group = |p: Protocol, g: &str| scan.groups.iter().find(|(q, h, _)| *q == p && *h == g).map(|(_, _, r)| r.is_none());
    for p in [Protocol::Tls12, Protocol::Tls13] {
        assert_eq!(group(p, "X25519"), Some(true), "{p:?} {:?}", scan.groups);
        assert_eq!(group(p, "P-256"), Some(true), "{p:?} {:?}", scan.groups);
        assert_eq!(group(p, "P-384"), Some(false), "{p:?} {:?}", scan.groups);
    }
    // The hybrid rustls has and this server does not: offered, and refused.
    assert_eq!(group(Protocol::Tls13, "X25519MLKEM768"), Some(false), "{:?}", scan.groups);
    // What rustls lacks is not offered, with why, and not taken for a refusal.
    let not_offered = |f: &dyn Fn(&Subject) -> bool| scan.not_offered.iter().find(|(s, _)| f(s)).map(|(_, why)| why.clone());
    let why = not_offered(&|s| s.protocol.as_deref() == Some("TLSv1") && s.suite.is_none()).unwrap();
    assert!(why.contains("does not speak TLSv1"), "{why}");
    let why = not_offered(&|s| s.suite.as_deref() == Some("TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA")).unwrap();
    assert!(why.contains("CBC"), "{why}");
    let why = not_offered(&|s| s.group.as_deref() == Some("ffdhe2048")).unwrap();
    assert!(why.contains("ffdhe2048"), "{why}");
    assert!(!scan.protocols.iter().any(|(p, _)| *p == Protocol::Tls10));
    assert!(!scan.suites.iter().any(|(_, s, _)| s.iana.contains("CBC")));
    assert!(!scan.groups.iter().any(|(_, g, _)| *g == "ffdhe2048"));

    let mut session = crate::measure::sink::Measurements::new();
    remote(&plan, &scan, &mut session).unwrap();
    let results = session.results();
    for r in results.iter().filter(|r| r.subject.suite.is_some()) {
        assert_eq!(r.subject.library.as_deref(), Some("rustls"), "{r:?}");
    }
    let unsupported = |k: Kind| results.iter().filter(|r| r.kind == k && r.status == Status::Unsupported).count();
    assert_eq!(unsupported(Kind::TlsAccept), scan.not_offered.len());
    for (p, iana) in accepted {
        for op in ["full", "resumed"] {
            let r = results
                .iter()
                .find(|r| {
                    r.kind == Kind::TlsHandshake
                        && r.metric == Metric::HandshakesPerSec
                        && r.subject.protocol.as_deref() == Some(p.label())
                        && r.subject.suite.as_deref() == Some(iana)
                        && r.subject.op.as_deref() == Some(op)
                })
                .unwrap_or_else(|| panic!("no {op} handshakes for {iana}: {results:?}"));
            assert_eq!(r.status, Status::Ok, "{r:?}");
            assert!(r.median.unwrap() > 1.0, "{r:?}");
        }
    }
    drop(server);
}

/// Each subject's GnuTLS priority string (made from its selection) resolves to
/// exactly its one suite and puts its group first.
#[test]
fn gnutls_item_priority_offers_exactly_the_suite() {
    use crate::backend::gnutls::library::{gnutls_group, names as gnutls_names, priority_text};
    use crate::backend::gnutls::session::Priority;
    let names = gnutls_names().unwrap();
    let local = crate::measure::tls::local_suites().unwrap();
    for (iana, protocol, group, cert) in [
        ("TLS_AES_128_GCM_SHA256", Protocol::Tls13, Some("X25519"), CertType::Rsa2048),
        ("TLS_CHACHA20_POLY1305_SHA256", Protocol::Tls13, Some("P-384"), CertType::EcdsaP256),
        (
            "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA",
            Protocol::Tls12,
            Some("P-256"),
            CertType::Rsa2048,
        ),
        (
            "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
            Protocol::Tls12,
            Some("X25519"),
            CertType::EcdsaP384,
        ),
        (
            "TLS_DHE_RSA_WITH_AES_128_GCM_SHA256",
            Protocol::Tls12,
            Some("ffdhe2048"),
            CertType::Rsa2048,
        ),
        ("TLS_RSA_WITH_AES_128_GCM_SHA256", Protocol::Tls12, None, CertType::Rsa2048),
    ] {
        let suite = local.iter().find(|s| s.iana == iana).unwrap().clone();
        let item = Item {
            protocol,
            suite,
            group,
            cert,
            work: Work::Handshake { resumed: false },
        };
        assert!(names.by_iana(iana).is_some(), "GnuTLS lacks {iana}");
        let text = priority_text(&item.selection(), &names).unwrap();
        let p = Priority::new(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
        let got: Vec<String> = p.suites().iter().map(|s| names.iana_of(s)).collect();
        assert_eq!(got, [iana], "{text}");
        if let Some(gr) = group {
            assert_eq!(p.groups()[0], gnutls_group(gr).trim_start_matches("GROUP-"), "{text}");
        }
    }
    assert!(names.by_iana("TLS_ECDHE_ECDSA_WITH_ARIA_128_GCM_SHA256").is_none());
}

/// A priority string's suites, as the GnuTLS library walks them (`--connect
/// --priority`): in its order, each one's text offering that suite alone, in its
/// protocol family; a typo is a usage error with GnuTLS's position.
#[test]
fn gnutls_native_suites_each_offer_one_suite() {
    use crate::backend::gnutls::library::names as gnutls_names;
    use crate::backend::gnutls::session::Priority;
    let gnutls = super::libraries::library(crate::backend::libraries::named("gnutls").unwrap()).unwrap();
    let names = gnutls_names().unwrap();
    let text = "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2:-CIPHER-ALL:+AES-256-GCM:+CHACHA20-POLY1305:-KX-ALL:+ECDHE-RSA";
    let suites = gnutls.native_suites(text).expect("GnuTLS takes a priority string").unwrap();
    let whole: Vec<String> = Priority::new(text).unwrap().suites().iter().map(|s| names.iana_of(s)).collect();
    let walked: Vec<String> = suites.iter().map(|s| s.iana.clone()).collect();
    assert_eq!(walked, whole);
    assert!(walked.contains(&"TLS_AES_256_GCM_SHA384".to_string()), "{walked:?}");
    assert!(
        walked.contains(&"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256".to_string()),
        "{walked:?}"
    );
    for s in &suites {
        let alone = s.alone.as_ref().unwrap();
        let p = Priority::new(alone).unwrap();
        let got: Vec<String> = p.suites().iter().map(|x| names.iana_of(x)).collect();
        assert_eq!(got, std::slice::from_ref(&s.iana), "{alone}");
        let tls13 = s.iana.starts_with("TLS_AES_") || s.iana == "TLS_CHACHA20_POLY1305_SHA256";
        assert_eq!(s.protocol == Protocol::Tls13, tls13, "{s:?}");
    }
    let e = gnutls.native_suites("NORMAL:+VERS-TLS9.9").unwrap().unwrap_err();
    assert!(e.downcast_ref::<crate::error::UsageError>().is_some(), "{e:#}");
    assert!(format!("{e:#}").contains("+VERS-TLS9.9"), "{e:#}");
    // A library without such text has nothing to walk.
    assert!(super::libraries::library(crate::catalog::Library::DEFAULT)
        .unwrap()
        .native_suites("NORMAL")
        .is_none());
}
