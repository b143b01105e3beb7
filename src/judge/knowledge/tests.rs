//! Tests of the data invariants, ratings and lookups.

use super::*;
use crate::judge::verdict::KeyKind;
use std::collections::{BTreeSet, HashSet};

fn kb() -> Knowledge {
    match Knowledge::builtin() {
        Ok(kb) => kb,
        Err(e) => panic!("built-in knowledge base does not load:\n{e}"),
    }
}

fn all_entries(kb: &Knowledge) -> Vec<(Table, &dyn Entry)> {
    Table::ALL
        .iter()
        .flat_map(|&t| kb.table_entries(t).into_iter().map(move |e| (t, e)))
        .collect()
}

// ---- data invariants ---------------------------------------------------

#[test]
fn builtin_loads_and_is_not_empty() {
    let kb = kb();
    assert!(!kb.revision().is_empty());
    assert!(kb.tls_suites().len() > 200, "suites: {}", kb.tls_suites().len());
    assert_eq!(kb.protocols().len(), 9);
    for domain in Domain::ALL {
        assert!(!kb.entries(domain).is_empty(), "no entries for domain {domain}");
    }
}

#[test]
fn every_entry_has_known_reasons_and_a_consistent_level() {
    let kb = kb();
    for (table, entry) in all_entries(&kb) {
        let at = format!("{} `{}`", table.label(), entry.name());
        assert!(!entry.reason_ids().is_empty(), "{at}: no reason");
        let ceilings: Vec<Level> = entry
            .reason_ids()
            .iter()
            .map(|id| match kb.reason(id) {
                Some(r) => r.ceiling,
                None => panic!("{at}: unknown reason `{id}`"),
            })
            .collect();
        assert!(Level::RATED.contains(&entry.level()), "{at}: level");
        assert_eq!(
            Some(entry.level()),
            ceilings.iter().copied().min(),
            "{at}: level must equal the lowest reason ceiling"
        );
        assert!(kb.source(entry.follows()).is_some(), "{at}: follows");
        for opinion in entry.opinions() {
            assert!(kb.source(&opinion.source).is_some(), "{at}: opinion source");
            assert!(kb.reason(&opinion.reason).is_some(), "{at}: opinion reason");
            assert!(Level::RATED.contains(&opinion.level), "{at}: opinion level");
        }
    }
}

#[test]
fn every_reason_cites_existing_sources() {
    let kb = kb();
    assert!(!kb.reasons().is_empty());
    for (id, reason) in kb.reasons() {
        assert!(!reason.refs.is_empty(), "reason `{id}` has no reference");
        assert!(Level::RATED.contains(&reason.ceiling), "reason `{id}`");
        for source in &reason.refs {
            assert!(kb.source(source).is_some(), "reason `{id}` cites unknown source `{source}`");
        }
    }
    for (id, source) in kb.sources() {
        assert!(source.url.starts_with("https://"), "source `{id}`");
    }
}

#[test]
fn every_reason_and_source_is_used() {
    let kb = kb();
    let mut used_reasons = BTreeSet::new();
    let mut used_sources = BTreeSet::new();
    for (_, entry) in all_entries(&kb) {
        used_reasons.extend(entry.reason_ids().iter().cloned());
        used_sources.insert(entry.follows().to_string());
        for o in entry.opinions() {
            used_reasons.insert(o.reason.clone());
            used_sources.insert(o.source.clone());
        }
    }
    for id in &used_reasons {
        if let Some(r) = kb.reason(id) {
            used_sources.extend(r.refs.iter().cloned());
        }
    }
    let unused: Vec<_> = kb.reasons().keys().filter(|id| !used_reasons.contains(*id)).collect();
    assert!(unused.is_empty(), "unused reasons: {unused:?}");
    let unused: Vec<_> = kb.sources().keys().filter(|id| !used_sources.contains(*id)).collect();
    assert!(unused.is_empty(), "unused sources: {unused:?}");
}

#[test]
fn suite_codes_are_well_formed_and_unique() {
    let kb = kb();
    let mut seen = HashSet::new();
    for suite in kb.tls_suites() {
        for code in std::iter::once(&suite.code).chain(suite.sslv2_code.iter()) {
            let bytes = parse_code(code).unwrap_or_else(|| panic!("{}: malformed code {code}", suite.iana));
            assert_eq!(&format_code(&bytes), code, "{}", suite.iana);
            assert!(seen.insert(bytes), "duplicate code {code} ({})", suite.iana);
        }
    }
    let mut groups = HashSet::new();
    for group in kb.groups() {
        if let Some(code) = &group.code {
            assert!(groups.insert(code.clone()), "duplicate group code {code}");
        }
    }
}

#[test]
fn names_are_unique_within_each_table() {
    let kb = kb();
    for table in Table::ALL {
        let mut seen = HashMap::new();
        for entry in kb.table_entries(table) {
            for name in entry.names() {
                if let Some(other) = seen.insert(name.to_ascii_lowercase(), entry.name()) {
                    assert_eq!(other, entry.name(), "{}: `{name}` used twice", table.label());
                }
            }
        }
    }
}

#[test]
fn validation_rejects_broken_data() {
    let base = KnowledgeTexts::builtin();

    let reasons = base
        .reasons
        .replace("refs = [\"rfc7465\", \"rfc8758\"]", "refs = [\"rfc7465\", \"no-such-source\"]");
    let err = Knowledge::from_texts(KnowledgeTexts { reasons: &reasons, ..base }).expect_err("unknown source must be rejected");
    assert!(err.to_string().contains("no-such-source"), "{err}");

    let ssh = base
        .ssh
        .replacen("reasons = [\"rc4\"]", "reasons = [\"rc4\", \"no-such-reason\"]", 1);
    let err = Knowledge::from_texts(KnowledgeTexts { ssh: &ssh, ..base }).expect_err("unknown reason must be rejected");
    assert!(err.to_string().contains("no-such-reason"), "{err}");

    // A level better than its reasons allow.
    let ssh = base.ssh.replacen(
        "level = \"insecure\"\nfollows = \"rfc8758\"",
        "level = \"secure\"\nfollows = \"rfc8758\"",
        1,
    );
    let err = Knowledge::from_texts(KnowledgeTexts { ssh: &ssh, ..base }).expect_err("inconsistent level must be rejected");
    assert!(err.to_string().contains("lowest ceiling"), "{err}");

    // A duplicate name.
    let tls = base.tls.replace("aliases = [\"P-384\",", "aliases = [\"P-256\", \"P-384\",");
    let err = Knowledge::from_texts(KnowledgeTexts { tls: &tls, ..base }).expect_err("duplicate name must be rejected");
    assert!(err.to_string().contains("`P-256`"), "{err}");
}

#[test]
fn unknown_keys_and_levels_in_data_name_the_line() {
    let base = KnowledgeTexts::builtin();
    let tls = base
        .tls
        .replacen("wire_version = \"0x0002\"", "wire_version = \"0x0002\"\nbogus = 1", 1);
    let line = tls.lines().position(|l| l == "bogus = 1").map(|i| i + 1);
    let err = Knowledge::from_texts(KnowledgeTexts { tls: &tls, ..base }).expect_err("unknown key must be rejected");
    let text = err.to_string();
    assert!(text.contains("unknown field `bogus`"), "{text}");
    assert!(text.contains(&format!("tls.toml:{}:", line.unwrap_or(0))), "{text}");

    let tls = base.tls.replacen("level = \"insecure\"", "level = \"unrated\"", 1);
    let err = Knowledge::from_texts(KnowledgeTexts { tls: &tls, ..base }).expect_err("`unrated` is not a data level");
    assert!(err.to_string().contains("unknown variant `unrated`"), "{err}");
}

// ---- ratings ---------------------------------------------------------------

#[test]
fn known_bad_items_are_insecure() {
    let kb = kb();
    for (domain, name) in [
        (Domain::Tls12Suite, "RC4-MD5"),
        (Domain::Tls12Suite, "TLS_RSA_WITH_RC4_128_MD5"),
        (Domain::Tls12Suite, "RC4-SHA"),
        (Domain::Tls12Suite, "DES-CBC3-SHA"),
        (Domain::Tls12Suite, "NULL-MD5"),
        (Domain::Tls12Suite, "NULL-SHA"),
        (Domain::Tls12Suite, "ADH-AES128-GCM-SHA256"),
        (Domain::Protocol, "SSLv3"),
        (Domain::Protocol, "SSLv2"),
        (Domain::Primitive, "des-cbc"),
        (Domain::Primitive, "des-ecb"),
        (Domain::Primitive, "rc4"),
        (Domain::Primitive, "aes-128-ecb"),
        (Domain::Primitive, "md5"),
        (Domain::Primitive, "hmac-md5"),
        (Domain::SshCipher, "arcfour"),
        (Domain::SshCipher, "arcfour256"),
        (Domain::SshCipher, "3des-cbc"),
        (Domain::SshMac, "hmac-md5"),
        (Domain::SshMac, "hmac-md5-96-etm@openssh.com"),
        (Domain::SshKex, "diffie-hellman-group1-sha1"),
        (Domain::SshHostkey, "ssh-dss"),
        (Domain::Group, "dh-1024"),
        (Domain::Cert, "rsa-1024"),
    ] {
        let v = kb.judge(domain, name);
        assert_eq!(v.level, Level::Insecure, "{domain} {name}: {v:?}");
        assert!(v.reasons.iter().all(|r| !r.references.is_empty()));
    }
    let exports: Vec<&TlsSuite> = kb.tls_suites().iter().filter(|s| s.export).collect();
    assert!(exports.len() >= 10, "EXPORT suites: {}", exports.len());
    for suite in exports {
        assert!(suite.openssl.as_deref().is_some_and(|n| n.starts_with("EXP")), "{}", suite.iana);
        assert_eq!(suite.level, Level::Insecure, "{}", suite.iana);
        assert!(suite.reasons.iter().any(|r| r == "export"), "{}", suite.iana);
    }
    let v = kb.judge(Domain::Tls12Suite, "EXP-RC4-MD5");
    assert_eq!(v.level, Level::Insecure);
    assert!(v.reasons.iter().flat_map(|r| &r.references).any(|r| r.id == "cve-2015-0204"));
}

#[test]
fn known_good_items_are_recommended_or_secure() {
    let kb = kb();
    for (domain, name, level) in [
        (Domain::Tls13Suite, "TLS_AES_128_GCM_SHA256", Level::Recommended),
        (Domain::Tls13Suite, "TLS_CHACHA20_POLY1305_SHA256", Level::Recommended),
        (Domain::Tls12Suite, "ECDHE-RSA-AES128-GCM-SHA256", Level::Recommended),
        (Domain::Tls12Suite, "DHE-RSA-AES256-GCM-SHA384", Level::Secure),
        (Domain::Protocol, "TLSv1.3", Level::Recommended),
        (Domain::Protocol, "TLSv1.2", Level::Secure),
        (Domain::Group, "x25519", Level::Recommended),
        (Domain::Group, "X25519MLKEM768", Level::Recommended),
        (Domain::Cert, "ecdsa-p256", Level::Recommended),
        (Domain::SshCipher, "chacha20-poly1305@openssh.com", Level::Recommended),
        (Domain::SshCipher, "aes128-gcm@openssh.com", Level::Recommended),
        (Domain::SshCipher, "aes256-ctr", Level::Secure),
        (Domain::SshMac, "hmac-sha2-256-etm@openssh.com", Level::Recommended),
        (Domain::SshKex, "curve25519-sha256", Level::Recommended),
        (Domain::SshKex, "mlkem768x25519-sha256", Level::Recommended),
        (Domain::SshHostkey, "ssh-ed25519", Level::Recommended),
        (Domain::Primitive, "aes-256-gcm", Level::Recommended),
        (Domain::Primitive, "chacha20-poly1305", Level::Recommended),
        (Domain::Primitive, "sha256", Level::Recommended),
        (Domain::Primitive, "aes-128-cbc", Level::Secure),
    ] {
        let v = kb.judge(domain, name);
        assert_eq!(v.level, level, "{domain} {name}");
        assert_eq!(v.subject.domain, domain, "{name}");
        assert!(v.follows.is_some());
    }
}

#[test]
fn chacha20_poly1305_at_openssh_carries_a_terrapin_caveat() {
    let kb = kb();
    let v = kb.judge(Domain::SshCipher, "chacha20-poly1305@openssh.com");
    assert_eq!(v.level, Level::Recommended);
    let terrapin = v.caveats().find(|r| r.text.contains("Terrapin")).expect("Terrapin caveat");
    assert!(terrapin.references.iter().any(|r| r.id == "cve-2023-48795"));
    // CBC ciphers carry the CBC + EtM variant.
    let v = kb.judge(Domain::SshCipher, "aes128-cbc");
    assert_eq!(v.level, Level::Weak);
    assert!(v.caveats().any(|r| r.id == "terrapin-cbc-etm"));
}

#[test]
fn disagreements_are_kept_as_opinions() {
    let kb = kb();
    for name in ["ecdh-sha2-nistp256", "ecdh-sha2-nistp384", "ecdh-sha2-nistp521"] {
        let v = kb.judge(Domain::SshKex, name);
        assert_eq!(v.level, Level::Secure, "{name}");
        assert_eq!(v.follows.as_ref().map(|r| r.id.as_str()), Some("nist-sp800-56a-r3"));
        assert_eq!(v.opinion("ssh-audit").map(|o| o.level), Some(Level::Insecure), "{name}");
        assert_eq!(v.opinion("nist-sp800-56a-r3").map(|o| o.level), Some(Level::Secure));
    }
    let v = kb.judge(Domain::SshHostkey, "ecdsa-sha2-nistp256");
    assert_eq!(v.opinion("ssh-audit").map(|o| o.level), Some(Level::Insecure));
    assert_eq!(v.opinion("fips-186-5").map(|o| o.level), Some(Level::Secure));
    let v = kb.judge(Domain::SshMac, "hmac-sha1");
    assert_eq!(v.level, Level::Weak);
    assert_eq!(v.opinion("ssh-audit").map(|o| o.level), Some(Level::Insecure));
    assert_eq!(v.opinion("nist-sp800-131a-r2").map(|o| o.level), Some(Level::Secure));
    let v = kb.judge(Domain::Tls12Suite, "ECDHE-RSA-AES128-SHA256");
    assert_eq!(v.level, Level::Weak);
    assert_eq!(v.opinion("nist-sp800-52r2").map(|o| o.level), Some(Level::Secure));
}

#[test]
fn unknown_names_are_unrated() {
    let kb = kb();
    for domain in Domain::ALL {
        let v = kb.judge(domain, "no-such-algorithm-42");
        assert_eq!(v.level, Level::Unrated);
        assert!(v.level < Level::Insecure);
        assert!(v.follows.is_none());
        assert_eq!(v.subject.domain, domain);
        assert!(!v.reasons.is_empty());
    }
    // A name from another domain is unknown here too.
    assert_eq!(kb.judge(Domain::SshCipher, "aes-128-gcm").level, Level::Unrated);
}

// ---- lookups -----------------------------------------------------------

#[test]
fn suites_are_found_by_every_name_and_code() {
    let kb = kb();
    let by_iana = kb.tls_suite("TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256");
    assert!(by_iana.is_some());
    for name in [
        "ECDHE-RSA-AES128-GCM-SHA256",
        "ecdhe-rsa-aes128-gcm-sha256",
        "tls_ecdhe_rsa_with_aes_128_gcm_sha256",
        "TLS_ECDHE_RSA_AES_128_GCM_SHA256",
        " ECDHE-RSA-AES128-GCM-SHA256 ",
        "0xC0,0x2F",
    ] {
        assert_eq!(kb.tls_suite(name), by_iana, "{name}");
    }
    assert_eq!(kb.tls_suite_by_code(0xC02F), by_iana);
    assert_eq!(kb.tls_suite("EDH-RSA-DES-CBC3-SHA").map(|s| s.code.as_str()), Some("0x00,0x16"));
    let suite = kb.tls_suite("TLS_AES_128_GCM_SHA256").expect("TLS 1.3 suite");
    assert!(suite.is_tls13());
    assert_eq!(suite.code_u16(), Some(0x1301));
    assert_eq!(
        kb.judge(Domain::Tls12Suite, "TLS_AES_128_GCM_SHA256").subject.domain,
        Domain::Tls13Suite
    );
    // SSLv2 kinds keep their 3-byte codes.
    assert_eq!(
        kb.tls_suite("RC4-MD5").and_then(|s| s.sslv2_code.as_deref()),
        Some("0x01,0x00,0x80")
    );
    assert!(kb.tls_suite("DES-CBC3-MD5").is_some());
}

#[test]
fn other_domains_accept_their_usual_spellings() {
    let kb = kb();
    for name in ["TLSv1", "tls1", "TLS1.0", "VERS-TLS1.0", "tlsv1.0"] {
        assert_eq!(kb.protocol(name).map(|p| p.name.as_str()), Some("TLSv1.0"), "{name}");
    }
    for name in ["P-256", "prime256v1", "SECP256R1", "GROUP-SECP256R1"] {
        assert_eq!(kb.group(name).map(|g| g.name.as_str()), Some("secp256r1"), "{name}");
    }
    assert_eq!(kb.cert("rsa:2048").map(|c| c.name.as_str()), Some("rsa-2048"));
    assert_eq!(kb.primitive("AES-128-GCM").map(|p| p.name.as_str()), Some("aes-128-gcm"));
    assert_eq!(kb.primitive("id-aes256-GCM").map(|p| p.name.as_str()), Some("aes-256-gcm"));
    assert_eq!(kb.primitive("BLAKE2b512").map(|p| p.name.as_str()), Some("blake2b512"));
    assert!(kb.ssh_cipher("Chacha20-Poly1305@OpenSSH.com").is_some());
    assert!(kb.ssh_kex("curve25519-sha256@libssh.org").is_some());
    assert!(kb.ssh_hostkey("rsa-sha2-512-cert-v01@openssh.com").is_some());
    assert!(kb.ssh_mac("umac-64@openssh.com").is_some());
}

#[test]
fn verdicts_are_fresh_values() {
    let kb = kb();
    let mut first = kb.judge(Domain::Tls12Suite, "RC4-MD5");
    let pristine = first.clone();
    first.level = Level::Recommended;
    first.reasons.clear();
    let first = first.with_key_bits(KeyKind::Rsa, 4096);
    assert_eq!(first.key_bits.last().map(|k| k.bits), Some(4096));
    assert_eq!(kb.judge(Domain::Tls12Suite, "RC4-MD5"), pristine);
}

#[test]
fn verdicts_carry_key_sizes() {
    let kb = kb();
    let v = kb.judge(Domain::Tls12Suite, "EXP-RC4-MD5");
    assert!(v.key_bits.iter().any(|k| k.kind == KeyKind::Symmetric && k.bits == 40));
    assert!(v.key_bits.iter().any(|k| k.kind == KeyKind::Rsa && k.bits == 512));
    let v = kb.judge(Domain::SshKex, "diffie-hellman-group14-sha256");
    assert_eq!(v.key_bits.first().map(|k| (k.kind, k.bits)), Some((KeyKind::FiniteField, 2048)));
    assert!(kb.judge(Domain::SshHostkey, "rsa-sha2-256").key_bits.is_empty());
}

#[test]
fn required_names_from_the_issue_are_present() {
    let kb = kb();
    let mut missing = Vec::new();
    let mut primitives: Vec<String> = Vec::new();
    for bits in [128, 192, 256] {
        for mode in ["gcm", "ccm", "ocb", "ctr", "cbc", "ecb"] {
            primitives.push(format!("aes-{bits}-{mode}"));
        }
        for family in ["camellia", "aria"] {
            primitives.push(format!("{family}-{bits}-cbc"));
            primitives.push(format!("{family}-{bits}-ecb"));
        }
    }
    primitives.extend(["aes-128-xts", "aes-256-xts"].map(String::from));
    primitives.extend(
        [
            "chacha20",
            "chacha20-poly1305",
            "sm4-cbc",
            "sm4-ecb",
            "des-ecb",
            "des-cbc",
            "des-ede3-cbc",
            "rc4",
            "rc2-cbc",
            "rc2-ecb",
            "bf-cbc",
            "bf-ecb",
            "cast5-cbc",
            "cast5-ecb",
            "idea-cbc",
            "idea-ecb",
            "seed-cbc",
            "seed-ecb",
            "md5",
            "sha1",
            "sha224",
            "sha256",
            "sha384",
            "sha512",
            "sha3-256",
            "blake2b512",
            "blake2s256",
            "hmac-md5",
            "hmac-sha1",
            "hmac-sha256",
            "poly1305",
        ]
        .map(String::from),
    );
    missing.extend(primitives.iter().filter(|n| kb.primitive(n).is_none()).cloned());
    for name in ["arcfour", "arcfour128", "arcfour256", "blowfish-cbc", "cast128-cbc", "3des-cbc"] {
        if kb.ssh_cipher(name).is_none() {
            missing.push(name.to_string());
        }
    }
    for name in [
        "hmac-md5",
        "hmac-md5-96",
        "hmac-ripemd160",
        "hmac-ripemd160@openssh.com",
        "hmac-ripemd160-etm@openssh.com",
    ] {
        if kb.ssh_mac(name).is_none() {
            missing.push(name.to_string());
        }
    }
    for name in ["diffie-hellman-group1-sha1", "diffie-hellman-group-exchange-sha1"] {
        if kb.ssh_kex(name).is_none() {
            missing.push(name.to_string());
        }
    }
    if kb.ssh_hostkey("ssh-dss").is_none() {
        missing.push("ssh-dss".to_string());
    }
    for name in [
        "RC4-MD5",
        "RC4-SHA",
        "DES-CBC3-SHA",
        "EXP-RC4-MD5",
        "EXP-RC2-CBC-MD5",
        "EXP-DES-CBC-SHA",
        "EXP-EDH-RSA-DES-CBC-SHA",
        "EXP-EDH-DSS-DES-CBC-SHA",
        "NULL-MD5",
        "NULL-SHA",
        "DES-CBC-SHA",
        "EDH-RSA-DES-CBC3-SHA",
        "RC2-CBC-MD5",
        "DES-CBC3-MD5",
    ] {
        if kb.tls_suite(name).is_none() {
            missing.push(name.to_string());
        }
    }
    for name in [
        "x25519",
        "x448",
        "secp256r1",
        "P-256",
        "secp384r1",
        "secp521r1",
        "ffdhe2048",
        "ffdhe3072",
        "ffdhe4096",
        "ffdhe6144",
        "ffdhe8192",
    ] {
        if kb.group(name).is_none() {
            missing.push(name.to_string());
        }
    }
    for name in [
        "rsa-1024",
        "rsa-2048",
        "rsa-3072",
        "rsa-4096",
        "ecdsa-p256",
        "ecdsa-p384",
        "ecdsa-p521",
        "ed25519",
        "ed448",
        "dsa-2048",
    ] {
        if kb.cert(name).is_none() {
            missing.push(name.to_string());
        }
    }
    for name in ["SSLv2", "SSLv3", "TLSv1.0", "TLSv1.1", "TLSv1.2", "TLSv1.3"] {
        if kb.protocol(name).is_none() {
            missing.push(name.to_string());
        }
    }
    assert!(missing.is_empty(), "missing entries: {missing:?}");
}
