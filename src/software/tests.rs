use super::*;
use crate::recommend::choice::testdata;

#[test]
fn the_registry_holds_every_target_once_with_its_own_place_in_the_reports() {
    let mut targets = names();
    targets.sort();
    let mut unique = targets.clone();
    unique.dedup();
    assert_eq!(unique, targets);
    // Each target's emitter writes under its own name.
    for t in ALL {
        assert_eq!(t.emitter().target(), t.name());
    }
    // The recommendations' order: the TLS libraries, servers, clients; then SSH.
    let order: Vec<&str> = emitters(&[]).iter().map(|e| e.target()).collect();
    assert_eq!(
        order,
        ["openssl", "gnutls", "apache", "nginx", "haproxy", "stunnel", "curl", "rustls", "nzbget", "ssh", "sshd"]
    );
    let picked: Vec<&str> = emitters(&["SSHD".into(), "nginx".into()]).iter().map(|e| e.target()).collect();
    assert_eq!(picked, ["nginx", "sshd"]);
}

#[test]
fn each_target_takes_the_lists_of_its_protocol() {
    let (t, s) = (Choice::Tls(testdata::tls()), Choice::Ssh(testdata::ssh()));
    for target in ALL {
        let speaks = match target.protocol() {
            Protocol::Tls => (target.lines(&t).is_some(), target.lines(&s).is_none()),
            Protocol::Ssh => (target.lines(&s).is_some(), target.lines(&t).is_none()),
        };
        assert_eq!(speaks, (true, true), "{}", target.name());
        assert!(!target.lists().is_empty());
    }
    assert_eq!(ansible(), vec!["nginx", "sshd"]);
    assert!(!readable().contains(&"curl"));
}

/// Every target's lines pass its own parser, where this machine has it.
#[test]
fn lines_pass_each_targets_own_parser() {
    let (t, s) = (Choice::Tls(testdata::tls()), Choice::Ssh(testdata::ssh()));
    for target in ALL {
        let lines = target.lines(&t).or_else(|| target.lines(&s)).unwrap();
        match target.validate(&lines) {
            Ok(Checked::Parsed(how)) => assert!(!how.is_empty()),
            Ok(Checked::Unchecked(why)) if why.ends_with("is not installed") => crate::testing::missing(&why),
            Ok(Checked::Unchecked(why)) => eprintln!("{}: not checked: {why}", target.name()),
            Err(e) => panic!("{}: {e:#}\n{lines:#?}", target.name()),
        }
    }
}

#[test]
fn a_parser_refuses_a_bad_line() {
    for (name, bad) in [
        ("nginx", "ssl_protocols TLSv9;"),
        ("sshd", "Ciphers no-such-cipher"),
        ("openssl", "cipher list: NO-SUCH-CIPHER"),
    ] {
        let t = find(name).unwrap();
        match t.validate(&[bad.to_string()]) {
            // Each of these has a parser: only its absence may leave the line
            // unchecked, and that follows the missing-tool rule (under CI=true it
            // fails); any other `Unchecked` is a target that stopped checking.
            Ok(Checked::Unchecked(why)) if why.ends_with("is not installed") => crate::testing::missing(&why),
            Ok(Checked::Unchecked(why)) => panic!("{name} has a parser, yet {bad} was not checked: {why}"),
            Ok(Checked::Parsed(how)) => panic!("{name} accepted {bad} ({how})"),
            Err(e) => assert!(format!("{e:#}").contains("refused"), "{e:#}"),
        }
    }
}

#[test]
fn unknown_software_lists_the_readable_ones() {
    let e = read_installed("curl", None).unwrap_err();
    let msg = format!("{e:#}");
    assert!(msg.contains("curl"), "{msg}");
    assert!(e.downcast_ref::<UsageError>().is_some());
}

#[test]
fn unreadable_config_names_the_file() {
    let e = read_installed("nginx", Some(Path::new("/nonexistent/dir/nginx.conf"))).unwrap_err();
    let msg = format!("{e:#}");
    assert!(msg.contains("/nonexistent/dir/nginx.conf"), "{msg}");
    assert!(e.downcast_ref::<UsageError>().is_some());
}

#[test]
fn each_target_says_where_its_lines_go() {
    for t in ALL {
        assert!(!t.location().is_empty(), "{}", t.name());
    }
    assert_eq!(
        find("nginx").unwrap().config_path(),
        Some(std::path::PathBuf::from("/etc/nginx/nginx.conf"))
    );
    assert_eq!(find("curl").unwrap().config_path(), None);
}

/// One target's lines for `c`.
fn lines(target: &str, c: &Choice) -> Option<Vec<String>> {
    find(target).unwrap().lines(c)
}

/// The value after `prefix` on the line that starts with it.
fn value(lines: &[String], prefix: &str) -> String {
    lines
        .iter()
        .find_map(|l| l.strip_prefix(prefix))
        .unwrap_or_else(|| panic!("{prefix} in {lines:?}"))
        .trim()
        .trim_end_matches(';')
        .to_string()
}

fn openssl_resolves(tls13: &str, tls12: &str) -> Vec<String> {
    let out = std::process::Command::new("openssl")
        .args(["ciphers", "-v", "-stdname", "-ciphersuites", tls13, tls12])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.split_whitespace().next().unwrap().to_string())
        .collect()
}

#[test]
fn every_target_speaks_exactly_one_protocol() {
    let (t, s) = (Choice::Tls(testdata::tls()), Choice::Ssh(testdata::ssh()));
    for e in emitters(&[]) {
        let (a, b) = (e.emit(&t), e.emit(&s));
        assert!(a.is_some() != b.is_some(), "{}", e.target());
        assert!(!a.or(b).unwrap().is_empty(), "{}", e.target());
    }
    assert_eq!(emitters(&[]).len(), 11);
}

#[test]
fn apache_haproxy_and_stunnel_strings_resolve_in_openssl_to_the_choice() {
    let t = testdata::tls();
    let want: Vec<String> = t.tls13.iter().chain(t.tls12.iter()).map(|s| s.iana.clone()).collect();
    let c = Choice::Tls(t);
    let apache = lines("apache", &c).unwrap();
    let a13 = value(&apache, "SSLCipherSuite TLSv1.3 ");
    let a12 = apache
        .iter()
        .find_map(|l| l.strip_prefix("SSLCipherSuite ").filter(|v| !v.starts_with("TLSv1.3")))
        .unwrap();
    assert_eq!(openssl_resolves(&a13, a12), want);
    assert_eq!(value(&apache, "SSLProtocol"), "-all +TLSv1.2 +TLSv1.3");
    let h = lines("haproxy", &c).unwrap();
    assert_eq!(
        openssl_resolves(&value(&h, "ssl-default-bind-ciphersuites"), &value(&h, "ssl-default-bind-ciphers")),
        want
    );
    let s = lines("stunnel", &c).unwrap();
    assert_eq!(openssl_resolves(&value(&s, "ciphersuites ="), &value(&s, "ciphers =")), want);
    assert_eq!(value(&s, "sslVersionMin ="), "TLSv1.2");
    assert_eq!(value(&s, "sslVersionMax ="), "TLSv1.3");
}

#[test]
fn gnutls_orders_by_key_exchange_then_cipher_like_the_choice() {
    // ECDSA suites first, ChaCha20 before AES: gnutls-cli must print the same order.
    let t = testdata::tls();
    let p = crate::software::gnutls::emit::priority(&t);
    let out = std::process::Command::new("gnutls-cli")
        .args(["--priority", &p, "-l"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{p}: {text}");
    let got: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("TLS_"))
        .map(|l| l.split('\t').next().unwrap().trim())
        .collect();
    let want: Vec<String> = t.tls13.iter().chain(t.tls12.iter()).map(|s| s.gnutls.clone().unwrap()).collect();
    assert_eq!(got, want, "{p}");
}
