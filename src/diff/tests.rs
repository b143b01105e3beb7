//! Unit tests of the diff (mod.rs).

use super::*;
use crate::model::{Kind, Metric};

fn f(median: f64, lo: f64, hi: f64) -> Option<Figure> {
    Some(Figure {
        median,
        ci95_low: lo,
        ci95_high: hi,
    })
}

#[test]
fn gains_with_intervals_or_no_measurable_gain() {
    // Throughput 100 → 200 with tight intervals: +100 %, measurable.
    let c = Change::new(
        "throughput",
        "bytes_per_sec",
        true,
        f(100.0, 95.0, 105.0),
        f(200.0, 190.0, 210.0),
        false,
    );
    assert!(c.measurable);
    assert!((c.gain.unwrap() - 1.0).abs() < 1e-9);
    // The ratio's own interval (the two errors in quadrature): tighter than
    // dividing the ends (190/105), yet around the true +100 %.
    let ratio = crate::stats::ratio_of_intervals((200.0, 190.0, 210.0), (100.0, 95.0, 105.0)).unwrap();
    assert!((c.gain_low.unwrap() - (ratio.low - 1.0)).abs() < 1e-9);
    assert!(c.gain_low.unwrap() > 190.0 / 105.0 - 1.0 && c.gain_low.unwrap() < 1.0, "{c:?}");
    assert!(c.verdict.starts_with("+100 %"), "{}", c.verdict);
    // Overlapping intervals: no measurable gain, whatever the medians say.
    let c = Change::new(
        "throughput",
        "bytes_per_sec",
        true,
        f(100.0, 80.0, 120.0),
        f(110.0, 90.0, 130.0),
        false,
    );
    assert!(!c.measurable);
    assert!(c.verdict.starts_with("no measurable gain"), "{}", c.verdict);
    // Lower is better (CPU per GB): 2 s → 1 s is +100 %.
    let c = Change::new("server CPU per GB", "seconds", false, f(2.0, 1.9, 2.1), f(1.0, 0.95, 1.05), false);
    assert!(c.measurable && (c.gain.unwrap() - 1.0).abs() < 1e-9);
    // Medians only: never called a gain.
    let c = Change::new("client CPU per GB", "seconds", false, f(2.0, 2.0, 2.0), f(1.0, 1.0, 1.0), false);
    assert!(!c.measurable);
    // An interval through zero (a noisy run) bounds nothing: never measurable.
    let c = Change::new(
        "handshakes",
        "handshakes_per_sec",
        true,
        f(245.0, -239.0, 731.0),
        f(204.0, -199.0, 607.0),
        false,
    );
    assert!(!c.measurable);
    assert!(c.verdict.starts_with("cannot tell"), "{}", c.verdict);
    // An interval of a ratio wider than ×2 either way: cannot tell, no figures.
    let c = Change::new(
        "throughput",
        "bytes_per_sec",
        true,
        f(278.4, 30.0, 900.0),
        f(278.0, 40.0, 800.0),
        false,
    );
    assert!(
        !c.measurable && c.verdict.starts_with("cannot tell (median ") && c.verdict.contains("wider than ×2"),
        "{}",
        c.verdict
    );
    // The same choice: unchanged; nothing measured: not measured.
    assert_eq!(
        Change::new("throughput", "bytes_per_sec", true, None, None, true).verdict,
        "the same choice"
    );
    assert_eq!(
        Change::new("throughput", "bytes_per_sec", true, f(1.0, 1.0, 1.0), None, false).verdict,
        "not measured"
    );
}

/// The sshd diff reads the server's CPU per GB from the `server-cpu-per-gb`
/// records of the negotiated pair (not another pair's, not the throughput).
#[test]
fn ssh_figures_carry_the_server_cpu_per_gb_of_the_pair() {
    use crate::model::Subject;
    let mut doc = crate::testing::doc(serde_json::json!([]));
    let rec = |cipher: &str, mode: Option<&str>, metric: Metric, v: &[f64]| {
        let subject = Subject {
            cipher: Some(cipher.into()),
            mac: Some("hmac-sha2-256".into()),
            kex: Some("curve25519-sha256".into()),
            mode: mode.map(str::to_string),
            ..Default::default()
        };
        ResultRecord::ok(Kind::SshBulk, subject, metric, &crate::model::Summary::of(v).unwrap(), None)
    };
    doc.results = vec![
        rec("aes128-ctr", None, Metric::BytesPerSec, &[4e8, 5e8, 6e8]),
        rec("aes128-ctr", Some("server-cpu-per-gb"), Metric::Seconds, &[1.0, 1.2, 1.4]),
        rec("3des-cbc", None, Metric::BytesPerSec, &[2e7, 2.5e7, 3e7]),
        rec("3des-cbc", Some("server-cpu-per-gb"), Metric::Seconds, &[30.0, 40.0, 50.0]),
    ];
    let k = Knowledge::builtin().unwrap();
    let n = |cipher: &str| Negotiated::Ssh {
        cipher: cipher.into(),
        mac: Some("hmac-sha2-256".into()),
        kex: "curve25519-sha256".into(),
        hostkey: "ssh-ed25519".into(),
    };
    let server = |cipher: &str| {
        figures(&doc, &n(cipher), &k)
            .into_iter()
            .find(|x| x.0 == "server CPU per GB")
            .and_then(|x| x.3)
    };
    assert_eq!(server("aes128-ctr"), f(1.2, 1.0, 1.4));
    assert_eq!(server("3des-cbc"), f(40.0, 30.0, 50.0));
    assert_eq!(server("aes256-ctr"), None);
    let thr = figures(&doc, &n("aes128-ctr"), &k).remove(0);
    assert_eq!((thr.0, thr.3.unwrap().median), ("throughput", 5e8));
    // 3DES now, AES recommended: the server's CPU per GB falls, beyond the intervals.
    let c = Change::new(
        "server CPU per GB",
        "seconds",
        false,
        server("3des-cbc"),
        server("aes128-ctr"),
        false,
    );
    assert!(c.measurable && c.gain.unwrap() > 10.0, "{c:?}");
}

/// The through-nginx throughput change takes its gain from the paired slices
/// when they compared these two suites, and keeps each side's own figure.
#[test]
fn a_through_change_takes_the_paired_gain_of_its_two_suites() {
    let tls = |v: &str, s: &str| Negotiated::Tls {
        version: v.into(),
        suite: s.into(),
        openssl_name: String::new(),
        group: None,
    };
    let (now, rec) = (
        tls("TLSv1.2", "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA"),
        tls("TLSv1.3", "TLS_AES_128_GCM_SHA256"),
    );
    let mut doc: Document = serde_json::from_value(serde_json::json!({
        "schema": "cipherbench/1",
        "run": {"id": "r", "started_at": "t", "status": "complete", "command": "check",
                "host": {"cpu_model": "c", "cores": 2, "cpu_flags": [], "kernel": "k", "arch": "x86_64", "hostname": "h"},
                "libraries": {}, "settings": {"through_nginx": {"paired_gain": {
                    "now": "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA", "recommended": "TLS_AES_128_GCM_SHA256",
                    "pairs": 6, "gain": 1.95, "gain_low": 1.9, "gain_high": 2.0}}}},
        "results": []
    }))
    .unwrap();
    assert_eq!(paired_through_gain(&doc, "nginx", &now, &rec), Some((1.95, 1.9, 2.0, 6)));
    // The figures alone would give about [+125 %, +278 %]: the pairs are much tighter.
    let c = Change::new("throughput", "bytes_per_sec", true, f(5e8, 4e8, 6e8), f(1.5e9, 1.2e9, 1.6e9), false).through(
        crate::measure::tls::through::Software::Nginx,
        paired_through_gain(&doc, "nginx", &now, &rec),
    );
    assert_eq!(
        (c.gain, c.gain_low, c.gain_high, c.measurable),
        (Some(1.95), Some(1.9), Some(2.0), true)
    );
    assert_eq!(c.verdict, "+195 % (+190 % to +200 %)");
    assert!(c.how.as_deref().unwrap().ends_with("gain from 6 paired slices"), "{:?}", c.how);
    assert_eq!(c.now.unwrap().median, 5e8);
    // Other suites: the pairs do not apply, the figures' interval stands.
    let other = tls("TLSv1.3", "TLS_AES_256_GCM_SHA384");
    assert_eq!(paired_through_gain(&doc, "nginx", &now, &other), None);
    let c = Change::new("throughput", "bytes_per_sec", true, f(5e8, 4e8, 6e8), f(1.5e9, 1.2e9, 1.6e9), false)
        .through(crate::measure::tls::through::Software::Nginx, None);
    let ratio = crate::stats::ratio_of_intervals((1.5e9, 1.2e9, 1.6e9), (5e8, 4e8, 6e8)).unwrap();
    assert!(
        (c.gain_low.unwrap() - (ratio.low - 1.0)).abs() < 1e-9 && (c.gain_high.unwrap() - (ratio.high - 1.0)).abs() < 1e-9,
        "{c:?}"
    );
    // A pair interval reaching zero is no measurable gain; one wider than ×2
    // either way (-1 % to +200 % around +195 %) cannot tell.
    doc.run.settings["through_nginx"]["paired_gain"]["gain_low"] = serde_json::json!(-0.01);
    let through = |doc: &Document| {
        Change::new("throughput", "bytes_per_sec", true, f(5e8, 4e8, 6e8), f(1.5e9, 1.2e9, 1.6e9), false).through(
            crate::measure::tls::through::Software::Nginx,
            paired_through_gain(doc, "nginx", &now, &rec),
        )
    };
    let c = through(&doc);
    assert!(!c.measurable && c.verdict.starts_with("cannot tell"), "{}", c.verdict);
    doc.run.settings["through_nginx"]["paired_gain"]["gain"] = serde_json::json!(0.3);
    doc.run.settings["through_nginx"]["paired_gain"]["gain_high"] = serde_json::json!(0.5);
    let c = through(&doc);
    assert!(!c.measurable && c.verdict.starts_with("no measurable gain"), "{}", c.verdict);
}

/// Loopback and through-nginx records of one suite never mix: `figures` reads
/// the loopback one, `through_figure` the one measured through nginx.
#[test]
fn through_nginx_records_stay_apart_from_loopback() {
    use crate::model::Subject;
    let mut doc: Document = serde_json::from_value(serde_json::json!({
        "schema": "cipherbench/1",
        "run": {"id": "r", "started_at": "t", "status": "complete", "command": "check",
                "host": {"cpu_model": "c", "cores": 2, "cpu_flags": [], "kernel": "k", "arch": "x86_64", "hostname": "h"},
                "libraries": {}, "settings": null},
        "results": []
    }))
    .unwrap();
    let rec = |mode: Option<&str>, v: &[f64]| {
        let subject = Subject {
            protocol: Some("TLSv1.2".into()),
            suite: Some("TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA".into()),
            library: Some("openssl".into()),
            threads: Some(1),
            mode: mode.map(str::to_string),
            ..Default::default()
        };
        ResultRecord::ok(
            Kind::TlsBulk,
            subject,
            Metric::BytesPerSec,
            &crate::model::Summary::of(v).unwrap(),
            None,
        )
    };
    let n = Negotiated::Tls {
        version: "TLSv1.2".into(),
        suite: "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA".into(),
        openssl_name: "ECDHE-RSA-AES128-SHA".into(),
        group: None,
    };
    let k = Knowledge::builtin().unwrap();
    doc.results = vec![rec(Some(crate::measure::tls::through::MODE), &[4e8, 5e8, 6e8, 7e8])];
    assert_eq!(figures(&doc, &n, &k)[0].3, None, "a through-nginx record is not a loopback figure");
    assert_eq!(through_figure(&doc, "nginx", &n).map(|f| f.median), Some(5.5e8));
    doc.results.push(rec(None, &[9e8, 1e9, 1.1e9]));
    assert_eq!(figures(&doc, &n, &k)[0].3.map(|f| f.median), Some(1e9));
    assert_eq!(through_figure(&doc, "nginx", &n).map(|f| f.median), Some(5.5e8));
    // Another protocol's record is not this choice's.
    let n13 = Negotiated::Tls {
        version: "TLSv1.3".into(),
        suite: "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA".into(),
        openssl_name: String::new(),
        group: None,
    };
    assert_eq!(through_figure(&doc, "nginx", &n13), None);
}

#[test]
fn grades_name_the_reason_and_the_policy() {
    let k = Knowledge::builtin().unwrap();
    let p = Policy::builtin("intermediate").unwrap();
    let offer = Offer::Ssh(SshConfig {
        server: true,
        ciphers: vec!["aes128-cbc".into(), "aes128-gcm@openssh.com".into()],
        macs: vec!["hmac-sha1".into()],
        kex: vec!["curve25519-sha256".into()],
        hostkeys: vec!["ssh-ed25519".into()],
    });
    let g = grade_offer(&offer, &k, &p);
    let cbc = g.iter().find(|x| x.name == "aes128-cbc").unwrap();
    assert!(!cbc.allowed);
    assert_eq!(cbc.level, Level::Weak);
    assert!(cbc.reasons[0].contains('['), "{:?}", cbc.reasons);
    assert!(g.iter().find(|x| x.name == "aes128-gcm@openssh.com").unwrap().allowed);
    let fs = findings(&g);
    assert_eq!(
        fs.iter().map(|f| f.name.as_str()).collect::<Vec<_>>(),
        vec!["aes128-cbc", "hmac-sha1"]
    );
}

/// An sshd offering the pre-standard spellings (`…@openssh.com`, `…@libssh.org`)
/// of exactly the key exchanges the recommendation lists under both names.
fn sshd_by_other_names() -> (Current, Outcome) {
    let strings = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let ssh = |server: bool, kex: &[&str]| SshConfig {
        server,
        ciphers: strings(&["aes128-gcm@openssh.com"]),
        macs: strings(&["hmac-sha2-256-etm@openssh.com"]),
        kex: strings(kex),
        hostkeys: strings(&["ssh-ed25519"]),
    };
    let both = [
        "sntrup761x25519-sha512",
        "sntrup761x25519-sha512@openssh.com",
        "curve25519-sha256",
        "curve25519-sha256@libssh.org",
    ];
    let (offer, peer) = (ssh(true, &[both[1], both[3]]), ssh(false, &both));
    let installed = Installed {
        software: "sshd",
        file: None,
        source: "test".into(),
        config: Config::Ssh(offer.clone()),
        directives: vec![],
        insert_at: None,
        notes: vec![],
        openssl_env: None,
    };
    let c = Current {
        negotiated: negotiate::ssh(&offer, &peer, &ssh_aead()),
        installed,
        offer: Offer::Ssh(offer),
        peer: "a client".into(),
        peer_offer: Offer::Ssh(peer),
        within_offer: false,
    };
    let rec: Recommendation = serde_json::from_value(serde_json::json!({
        "protocol": "ssh", "target": "sshd", "location": "l", "policy": "intermediate",
        "choice": {"ssh_ciphers": ["aes128-gcm@openssh.com"], "ssh_macs": ["hmac-sha2-256-etm@openssh.com"],
                   "ssh_kex": both, "ssh_hostkeys": ["ssh-ed25519"]},
        "lines": [format!("KexAlgorithms {}", both.join(","))], "rankings": []
    }))
    .unwrap();
    let outcome = Outcome {
        protocols: vec![],
        recommendations: vec![rec],
        verdicts: vec![],
    };
    (c, outcome)
}

/// Aliases are one algorithm in the diff: the standard spelling the
/// recommendation adds beside a pre-standard one offered now is not an
/// addition, the negotiated key exchange is one choice shown under one name,
/// and `check` finds nothing.
#[test]
fn the_other_name_of_an_offered_algorithm_is_no_change() {
    let (c, outcome) = sshd_by_other_names();
    let (k, p) = (Knowledge::builtin().unwrap(), Policy::builtin("intermediate").unwrap());
    let d = build(&c, &crate::testing::doc(serde_json::json!([])), &outcome, &k, &p);
    assert_eq!((d.adds.as_slice(), d.removes.as_slice()), (&[][..], &[][..]), "{d:#?}");
    assert!(d.introduced.is_empty() && d.fixed.is_empty(), "{d:#?}");
    // Negotiated on the wire: `…@openssh.com` now, the standard name with the
    // recommended lines; shown as one name (the one the client lists first).
    assert!(matches!(&c.negotiated, Ok(Negotiated::Ssh { kex, .. }) if kex == "sntrup761x25519-sha512@openssh.com"));
    assert_eq!(d.now, d.recommended);
    assert!(
        matches!(&d.now, Some(Negotiated::Ssh { kex, .. }) if kex == "sntrup761x25519-sha512"),
        "{:?}",
        d.now
    );
    assert!(
        d.changes.iter().all(|x| x.verdict == "the same choice" && x.gain_low.is_none()),
        "{:?}",
        d.changes
    );
    assert!(d.nothing_to_change);
    assert!(check::findings(std::slice::from_ref(&d), 0.1).is_empty());
    let text = render::one(&d);
    assert!(!text.contains("@openssh.com ·") && text.contains("(the same choice)"), "{text}");
    assert!(text.contains("curve25519-sha256@libssh.org [recommended]"), "{text}");
}

/// Adds and removes compare algorithms, not spellings: OpenSSL and IANA suite
/// names, curve names, SSH pre-standard names; a real change still shows.
#[test]
fn adds_and_removes_match_by_algorithm() {
    let g = |list: &str, name: &str| Graded {
        list: list.into(),
        name: name.into(),
        level: Level::Recommended,
        allowed: true,
        reasons: vec![],
    };
    let now = [
        g("tls12_suites", "ECDHE-RSA-AES128-GCM-SHA256"),
        g("groups", "prime256v1"),
        g("ssh_kex", "curve25519-sha256@libssh.org"),
        g("ssh_kex", "ecdh-sha2-nistp256"),
    ];
    let rec = [
        g("tls12_suites", "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"),
        g("groups", "P-256"),
        g("ssh_kex", "curve25519-sha256"),
        g("ssh_kex", "curve25519-sha256@libssh.org"),
        g("ssh_kex", "sntrup761x25519-sha512"),
    ];
    let (adds, removes, fixed) = delta(&now, Some(&rec));
    assert_eq!(adds, vec!["ssh_kex sntrup761x25519-sha512"]);
    assert_eq!(removes, vec!["ssh_kex ecdh-sha2-nistp256"]);
    assert!(fixed.is_empty());
    // The same name in another list is another option.
    let (adds, _, _) = delta(&[g("ssh_macs", "curve25519-sha256")], Some(&[g("ssh_kex", "curve25519-sha256")]));
    assert_eq!(adds, vec!["ssh_kex curve25519-sha256"]);
}

/// sshd leaves the cipher to the client: when the client's own recommended
/// Host block would negotiate a measurably faster cipher with sshd's
/// recommended lines, sshd's diff says so in a note (not a finding: sshd's
/// lines are right); when it would not, nothing is said.
#[test]
fn sshd_notes_a_faster_cipher_the_clients_block_would_pick() {
    use crate::model::Subject;
    let (chacha, gcm) = ("chacha20-poly1305@openssh.com", "aes256-gcm@openssh.com");
    let bulk = |cipher: &str, m: f64| {
        let v: Vec<f64> = (0..10).map(|i| m * (1.0 + 0.01 * (i as f64 - 4.5) / 4.5)).collect();
        let subject = Subject {
            cipher: Some(cipher.into()),
            ..Default::default()
        };
        let mut r = ResultRecord::ok(
            Kind::SshBulk,
            subject,
            Metric::BytesPerSec,
            &crate::model::Summary::of(&v).unwrap(),
            None,
        );
        r.values = v;
        r
    };
    let (mut c, mut outcome) = sshd_by_other_names();
    let ciphers = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    for o in [&mut c.offer, &mut c.peer_offer] {
        if let Offer::Ssh(s) = o {
            s.ciphers = ciphers(&[chacha, gcm]);
        }
    }
    c.negotiated = match (&c.offer, &c.peer_offer) {
        (Offer::Ssh(s), Offer::Ssh(p)) => negotiate::ssh(s, p, &ssh_aead()),
        _ => unreachable!(),
    };
    outcome.recommendations[0]
        .choice
        .insert("ssh_ciphers".into(), ciphers(&[chacha, gcm]));
    let mut client = outcome.recommendations[0].clone();
    client.target = "ssh".into();
    client.choice.insert("ssh_ciphers".into(), ciphers(&[gcm, chacha]));
    outcome.recommendations.push(client);
    let (k, p) = (Knowledge::builtin().unwrap(), Policy::builtin("intermediate").unwrap());
    let note = |gcm_speed: f64| {
        let doc = crate::testing::doc_of(vec![bulk(chacha, 2.0e8), bulk(gcm, gcm_speed)]);
        let d = build(&c, &doc, &outcome, &k, &p);
        assert!(check::findings(std::slice::from_ref(&d), 0.1).is_empty(), "{d:#?}");
        d.notes.into_iter().find(|n| n.contains("Host block"))
    };
    let n = note(2.6e8).expect("a note");
    assert!(n.contains(&format!("negotiate {gcm}")) && n.contains("+30 %"), "{n}");
    assert_eq!(note(2.0e8), None, "no measurable gain: no note");
    assert_eq!(note(1.6e8), None, "slower: no note");
}

/// NZBGet's throughput change comes from the records measured through a private
/// NZBGet and its paired rounds, when both sides were measured; nginx never
/// takes them, and without them NZBGet keeps the loopback figures.
#[test]
fn nzbget_takes_its_through_nzbget_records_and_paired_rounds() {
    use crate::model::Subject;
    let mut doc: Document = serde_json::from_value(serde_json::json!({
        "schema": "cipherbench/1",
        "run": {"id": "r", "started_at": "t", "status": "complete", "command": "check",
                "host": {"cpu_model": "c", "cores": 2, "cpu_flags": [], "kernel": "k", "arch": "x86_64", "hostname": "h"},
                "libraries": {}, "settings": {"through_nzbget": {"paired_gain": {
                    "now": "TLS_AES_256_GCM_SHA384", "recommended": "TLS_CHACHA20_POLY1305_SHA256",
                    "pairs": 14, "gain": 0.5, "gain_low": 0.4, "gain_high": 0.6}}}},
        "results": []
    }))
    .unwrap();
    let rec = |suite: &str, mode: Option<&str>, v: &[f64]| {
        let subject = Subject {
            protocol: Some("TLSv1.3".into()),
            suite: Some(suite.into()),
            library: Some("openssl".into()),
            threads: Some(1),
            mode: mode.map(str::to_string),
            ..Default::default()
        };
        ResultRecord::ok(
            Kind::TlsBulk,
            subject,
            Metric::BytesPerSec,
            &crate::model::Summary::of(v).unwrap(),
            None,
        )
    };
    let tls = |s: &str| Negotiated::Tls {
        version: "TLSv1.3".into(),
        suite: s.into(),
        openssl_name: String::new(),
        group: None,
    };
    let (now, r) = (tls("TLS_AES_256_GCM_SHA384"), tls("TLS_CHACHA20_POLY1305_SHA256"));
    let k = Knowledge::builtin().unwrap();
    let through = crate::measure::tls::nzbget::MODE;
    doc.results = vec![
        rec("TLS_AES_256_GCM_SHA384", None, &[1e9, 1.1e9, 1.2e9]),
        rec("TLS_CHACHA20_POLY1305_SHA256", None, &[3e9, 3.1e9, 3.2e9]),
        rec("TLS_AES_256_GCM_SHA384", Some(through), &[4e7, 4.1e7, 4.2e7]),
        rec("TLS_CHACHA20_POLY1305_SHA256", Some(through), &[6e7, 6.1e7, 6.2e7]),
    ];
    let thr = |software: &str, doc: &Document| {
        changes(software, doc, &now, &r, &k)
            .into_iter()
            .find(|c| c.metric == "throughput")
            .unwrap()
    };
    let c = thr("nzbget", &doc);
    assert_eq!((c.now.unwrap().median, c.recommended.unwrap().median), (4.1e7, 6.1e7), "{c:?}");
    assert_eq!(
        (c.gain, c.gain_low, c.gain_high, c.measurable),
        (Some(0.5), Some(0.4), Some(0.6), true)
    );
    assert!(c.how.as_deref().unwrap().ends_with("gain from 14 paired rounds"), "{:?}", c.how);
    // nginx reads no NZBGet records: its loopback figures.
    let c = thr("nginx", &doc);
    assert_eq!((c.now.unwrap().median, c.how), (1.1e9, None));
    // One side only through NZBGet: both loopback, never one of each.
    doc.results.pop();
    let c = thr("nzbget", &doc);
    assert_eq!((c.now.unwrap().median, c.recommended.unwrap().median, c.how), (1.1e9, 3.1e9, None));
}
