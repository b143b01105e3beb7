use super::*;
use crate::recommend::emit::testdata;

#[test]
fn the_registry_holds_every_emitter_once() {
    let mut emitters: Vec<&str> = crate::recommend::emit::all().iter().map(|e| e.target()).collect();
    let mut targets = names();
    emitters.sort();
    targets.sort();
    assert_eq!(targets, emitters);
    let mut unique = targets.clone();
    unique.dedup();
    assert_eq!(unique, targets);
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
    assert_eq!(ansible(), vec!["sshd", "nginx"]);
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
