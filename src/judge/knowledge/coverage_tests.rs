//! Coverage against the local tools: every name `openssl ciphers`, `ssh -Q` and
//! `gnutls-cli -l` list must have an entry, and the facts must agree. A tool that is
//! not installed is skipped with a printed note.

use super::Knowledge;
use crate::judge::entries::Entry;
use std::collections::{BTreeSet, HashMap};
use std::io::ErrorKind;
use std::process::Command;

/// Whether the knowledge base has an entry for a name.
type Lookup = fn(&Knowledge, &str) -> bool;

fn kb() -> Knowledge {
    match Knowledge::builtin() {
        Ok(kb) => kb,
        Err(e) => panic!("built-in knowledge base does not load:\n{e}"),
    }
}

/// Runs a tool; `None` (with a printed note) when it is not installed.
fn run_tool(program: &str, args: &[&str]) -> Option<String> {
    match Command::new(program).args(args).output() {
        Ok(out) if out.status.success() => Some(String::from_utf8_lossy(&out.stdout).into_owned()),
        Ok(out) => panic!("`{program} {}` failed: {}", args.join(" "), String::from_utf8_lossy(&out.stderr)),
        Err(e) if e.kind() == ErrorKind::NotFound => {
            crate::testing::missing(&format!("`{program}` is not installed"));
            None
        }
        Err(e) => panic!("cannot run `{program}`: {e}"),
    }
}

const OPENSSL_ALL: &str = "ALL:COMPLEMENTOFALL:@SECLEVEL=0";

#[test]
fn covers_every_suite_openssl_lists() {
    let kb = kb();
    let mut missing = Vec::new();
    for args in [
        vec!["ciphers", "-v", "-stdname", OPENSSL_ALL],
        vec!["ciphers", "-s", "-v", "-stdname", "-tls1_3", OPENSSL_ALL],
    ] {
        let Some(out) = run_tool("openssl", &args) else {
            return;
        };
        for line in out.lines() {
            let tokens: Vec<&str> = line.split_whitespace().collect();
            let [iana, "-", openssl, ..] = tokens.as_slice() else {
                continue;
            };
            match (kb.tls_suite(iana), kb.tls_suite(openssl)) {
                (Some(a), Some(b)) if a == b => {}
                _ => missing.push(format!("{iana} / {openssl}")),
            }
        }
    }
    assert!(missing.is_empty(), "suites without an entry: {missing:?}");
}

#[test]
fn suite_facts_match_openssl() {
    let kb = kb();
    let mut wrong = Vec::new();
    for args in [
        vec!["ciphers", "-V", "-stdname", OPENSSL_ALL],
        vec![
            "ciphers",
            "-V",
            "-stdname",
            "-ciphersuites",
            "TLS_AES_128_CCM_SHA256:TLS_AES_128_CCM_8_SHA256",
            "eNULL:@SECLEVEL=0",
        ],
    ] {
        let Some(out) = run_tool("openssl", &args) else {
            return;
        };
        for line in out.lines() {
            let tokens: Vec<&str> = line.split_whitespace().collect();
            let [code, "-", iana, "-", openssl, proto, rest @ ..] = tokens.as_slice() else {
                continue;
            };
            let Some(suite) = kb.tls_suite(iana) else {
                wrong.push(format!("{iana}: missing"));
                continue;
            };
            let field = |key: &str| rest.iter().find_map(|t| t.strip_prefix(key)).unwrap_or_default().to_string();
            let enc = field("Enc=");
            let (enc_name, enc_bits) = match enc.strip_suffix(')').and_then(|e| e.split_once('(')) {
                Some((name, bits)) => (name.to_string(), bits.parse().unwrap_or(u32::MAX)),
                None => (enc.clone(), 0),
            };
            let proto = if *proto == "TLSv1" { "TLSv1.0" } else { proto };
            let checks = [
                ("code", suite.code.as_str() == *code),
                ("openssl", suite.openssl.as_deref() == Some(*openssl)),
                ("protocol", suite.protocols.first().map(String::as_str) == Some(proto)),
                ("kx", suite.kx == field("Kx=")),
                ("au", suite.au == field("Au=")),
                ("enc", suite.enc == enc_name),
                ("enc_bits", suite.enc_bits == enc_bits),
                ("mac", suite.mac == field("Mac=")),
            ];
            for (what, ok) in checks {
                if !ok {
                    wrong.push(format!("{iana}: {what} differs from `{line}`"));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn covers_every_algorithm_ssh_lists() {
    let kb = kb();
    let mut missing = Vec::new();
    let queries: [(&str, Lookup); 5] = [
        ("cipher", |kb, n| kb.ssh_cipher(n).is_some()),
        ("mac", |kb, n| kb.ssh_mac(n).is_some()),
        ("kex", |kb, n| kb.ssh_kex(n).is_some()),
        ("key", |kb, n| kb.ssh_hostkey(n).is_some()),
        ("HostKeyAlgorithms", |kb, n| kb.ssh_hostkey(n).is_some()),
    ];
    for (query, known) in queries {
        let out = match Command::new("ssh").args(["-Q", query]).output() {
            Ok(out) if out.status.success() => String::from_utf8_lossy(&out.stdout).into_owned(),
            Ok(_) => {
                println!("skipped: this ssh does not support `ssh -Q {query}`");
                continue;
            }
            Err(e) if e.kind() == ErrorKind::NotFound => {
                crate::testing::missing("`ssh` is not installed");
                return;
            }
            Err(e) => panic!("cannot run ssh: {e}"),
        };
        for name in out.split_whitespace() {
            if !known(&kb, name) {
                missing.push(format!("{query}: {name}"));
            }
        }
    }
    assert!(missing.is_empty(), "SSH algorithms without an entry: {missing:?}");
}

#[test]
fn covers_every_suite_group_and_protocol_gnutls_lists() {
    let kb = kb();
    let Some(out) = run_tool("gnutls-cli", &["-l"]) else {
        return;
    };
    let mut problems = Vec::new();
    let mut suites = 0;
    for line in out.lines() {
        let tokens: Vec<&str> = line.split_whitespace().collect();
        if let [name, hi, lo, ..] = tokens.as_slice() {
            if name.starts_with("TLS_") && hi.starts_with("0x") {
                suites += 1;
                let code = format!("{},{}", hi.trim_end_matches(','), lo).to_ascii_uppercase();
                match kb.tls_suite(name) {
                    Some(s) if s.code.to_ascii_uppercase() == code => {}
                    Some(s) => problems.push(format!("{name}: code {code}, data says {}", s.code)),
                    None => problems.push(format!("suite {name}: missing")),
                }
                continue;
            }
        }
        let list = |prefix: &str| {
            line.strip_prefix(prefix)
                .map(|rest| rest.split(',').map(|s| s.trim().to_string()).collect::<Vec<_>>())
        };
        if let Some(names) = list("Protocols:") {
            for name in names.iter().filter(|n| !n.is_empty()) {
                if kb.protocol(name).is_none() {
                    problems.push(format!("protocol {name}: missing"));
                }
            }
        }
        if let Some(names) = list("Groups:") {
            for name in names.iter().filter(|n| !n.is_empty()) {
                if kb.group(name).is_none() {
                    problems.push(format!("group {name}: missing"));
                }
            }
        }
    }
    assert!(suites > 100, "parsed only {suites} suites from gnutls-cli -l");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn primitive_providers_match_openssl() {
    let kb = kb();
    // A name may be provided by both providers (RIPEMD160 since OpenSSL 3.0.7).
    let mut provided: HashMap<String, BTreeSet<String>> = HashMap::new();
    for what in ["-cipher-algorithms", "-digest-algorithms"] {
        let Some(out) = run_tool("openssl", &["list", what, "-provider", "default", "-provider", "legacy"]) else {
            return;
        };
        let section = out.split("Provided:").nth(1).unwrap_or_default();
        for line in section.lines() {
            let Some((names, provider)) = line.rsplit_once(" @ ") else {
                continue;
            };
            for name in names.trim().trim_matches(|c| c == '{' || c == '}').split(',') {
                let name = name.trim();
                if !name.is_empty() && !name.starts_with(|c: char| c.is_ascii_digit()) {
                    provided
                        .entry(name.to_ascii_lowercase())
                        .or_default()
                        .insert(provider.trim().to_string());
                }
            }
        }
    }
    assert!(provided.len() > 50, "could not parse `openssl list`");
    let mut wrong = Vec::new();
    let mut checked = 0;
    for p in kb.primitives() {
        let found = p.names().iter().find_map(|n| provided.get(&n.to_ascii_lowercase()));
        if let Some(providers) = found {
            checked += 1;
            // `default` whenever the default provider has it, else `legacy`.
            let expected = if providers.contains("default") {
                crate::judge::entries::Provider::Default
            } else {
                crate::judge::entries::Provider::Legacy
            };
            if p.provider != expected {
                wrong.push(format!(
                    "{}: data says {:?}, openssl provides it from {providers:?}",
                    p.name, p.provider
                ));
            }
        }
    }
    assert!(checked > 60, "only {checked} primitives found in openssl's list");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// OpenSSH 10.6's host-key algorithms (`ssh -Q HostKeyAlgorithms` in Debian
/// forky's root, 2026-11-29) beyond this machine's: each has an entry, the
/// ML-DSA hybrid rated secure with its own reason.
#[test]
fn openssh_10_6_host_keys_are_rated() {
    let kb = kb();
    for name in [
        "ssh-mldsa44-ed25519",
        "ssh-mldsa44-ed25519-cert",
        "webauthn-sk-ecdsa-sha2-nistp256-cert-v01@openssh.com",
    ] {
        let e = kb.ssh_hostkey(name).unwrap_or_else(|| panic!("{name} has no entry"));
        assert_eq!(e.name(), name);
    }
    let v = kb.ssh_hostkey("ssh-mldsa44-ed25519").unwrap();
    assert_eq!(format!("{:?}", v.level).to_lowercase(), "secure");
    assert!(v.reasons.iter().any(|r| r == "pq-hybrid-signature"), "{:?}", v.reasons);
}
