//! The recommended lines as a unified diff against the real files.
//!
//! Each emitted line replaces the line that sets the same keyword (its
//! indentation kept); lines the file lacks go after the software's anchor (the
//! last TLS directive of the server block, the line before sshd's first `Match`,
//! the top of an ssh client config ...). Headers are `a/PATH` and `b/PATH` with the
//! leading `/` dropped, so `patch -d / -p1` applies the diff where it belongs.

use crate::discover::installed::{read_config, Directive, Installed};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Every keyword a software's lines can start with (two-word ones first).
fn keywords(software: &str) -> &'static [&'static str] {
    use crate::discover::installed as i;
    match software {
        "nginx" => i::nginx::KEYWORDS,
        "sshd" | "ssh" => i::sshd::KEYWORDS,
        "apache" => i::apache::KEYWORDS,
        "haproxy" => i::haproxy::KEYWORDS,
        "stunnel" => i::stunnel::KEYWORDS,
        "openssl" => &["ciphersuites", "cipherstring", "groups", "minprotocol"],
        "gnutls" => &["default-priority-string"],
        _ => &[],
    }
}

/// The keyword a line sets (lower case), as [`Directive::keyword`] spells it.
pub fn keyword_of(software: &str, line: &str) -> String {
    let tokens = crate::discover::installed::leading_words(line);
    let two = tokens.join(" ");
    let kw = keywords(software);
    if kw.contains(&two.as_str()) {
        return two;
    }
    tokens.first().cloned().unwrap_or_default()
}

/// Whether keywords `a` and `b` set the same value, so that an emitted line
/// replaces either: mod_ssl's `SSLOpenSSLConfCmd Ciphersuites` is `SSLCipherSuite
/// TLSv1.3` given another way (and applied after it, so left in place it would
/// win), and `Curves` is `Groups`.
fn same_setting(software: &str, a: &str, b: &str) -> bool {
    const APACHE: &[[&str; 2]] = &[
        ["sslciphersuite tlsv1.3", "sslopensslconfcmd ciphersuites"],
        ["sslopensslconfcmd curves", "sslopensslconfcmd groups"],
    ];
    a == b || (software == "apache" && APACHE.iter().any(|g| g.contains(&a) && g.contains(&b)))
}

/// The emitted lines in the syntax of the file they go into.
pub fn file_lines(installed: &Installed, emitted: &[String]) -> Vec<String> {
    match installed.software {
        // The openssl emitter names the settings; openssl.cnf spells them this way.
        "openssl" => emitted
            .iter()
            .filter_map(|l| {
                let (k, v) = l.split_once(':')?;
                let key = match k.trim() {
                    "ciphersuites" => "Ciphersuites",
                    "cipher list" => "CipherString",
                    "groups" => "Groups",
                    _ => return None,
                };
                Some(format!("{key} = {}", v.trim()))
            })
            .collect(),
        "gnutls" => emitted.iter().map(|l| format!("default-priority-string = {l}")).collect(),
        // The Host block's lines, for the top of the client config.
        "ssh" => emitted
            .iter()
            .filter(|l| !l.starts_with("Host "))
            .map(|l| l.trim().to_string())
            .collect(),
        // ServerN: the server that was read.
        "nzbget" => {
            let key = installed
                .directives
                .first()
                .and_then(|d| d.text.split('=').next())
                .map(|k| k.trim().to_string());
            emitted
                .iter()
                .map(|l| match (&key, l.split_once('=')) {
                    (Some(k), Some((_, v))) => format!("{k}={v}"),
                    _ => l.clone(),
                })
                .collect()
        }
        _ => emitted.to_vec(),
    }
}

/// The unified diff (possibly over several files), or `None` when the file is unknown
/// or nothing changes. Unreadable files are an error naming them.
pub fn unified(installed: &Installed, emitted: &[String]) -> Result<Option<String>, crate::error::UsageError> {
    let lines = file_lines(installed, emitted);
    let Some(main) = installed.file.clone() else { return Ok(None) };
    let mut files: BTreeMap<PathBuf, Vec<String>> = BTreeMap::new();
    let load = |p: &PathBuf, files: &mut BTreeMap<PathBuf, Vec<String>>| -> Result<(), crate::error::UsageError> {
        if !files.contains_key(p) {
            let t = read_config(p)?;
            files.insert(p.clone(), t.lines().map(str::to_string).collect());
        }
        Ok(())
    };
    let originals: BTreeMap<PathBuf, String> = {
        let mut m = BTreeMap::new();
        for p in installed.directives.iter().map(|d| d.file.clone()).chain([main.clone()]) {
            if let std::collections::btree_map::Entry::Vacant(e) = m.entry(p.clone()) {
                e.insert(read_config(&p)?);
            }
        }
        m
    };
    load(&main, &mut files)?;
    // Replacements first (line numbers stay valid), then insertions from the bottom.
    let mut missing: Vec<String> = Vec::new();
    for l in &lines {
        let k = keyword_of(installed.software, l);
        let hits: Vec<&Directive> = installed
            .directives
            .iter()
            .filter(|d| same_setting(installed.software, &d.keyword, &k))
            .collect();
        if hits.is_empty() {
            missing.push(l.clone());
            continue;
        }
        for d in hits {
            load(&d.file, &mut files)?;
            let f = files.get_mut(&d.file).expect("loaded");
            if let Some(old) = f.get_mut(d.line - 1) {
                let indent: String = old.chars().take_while(|c| c.is_whitespace()).collect();
                let comment = old
                    .find(" #")
                    .filter(|_| !matches!(installed.software, "nzbget" | "gnutls"))
                    .map(|i| old[i..].to_string())
                    .unwrap_or_default();
                *old = format!("{indent}{}{comment}", l.trim());
            }
        }
    }
    if !missing.is_empty() {
        // Where: after the last directive of the file holding most of them, else the anchor.
        let mut count: BTreeMap<&PathBuf, usize> = BTreeMap::new();
        for d in &installed.directives {
            *count.entry(&d.file).or_default() += 1;
        }
        let target = count.iter().max_by_key(|(_, n)| **n).map(|(p, _)| (*p).clone());
        let (file, after) = match (&target, installed.insert_at) {
            (Some(p), _) if *p != main || installed.insert_at.is_none() => (
                p.clone(),
                installed
                    .directives
                    .iter()
                    .filter(|d| d.file == *p)
                    .map(|d| d.line)
                    .max()
                    .unwrap_or(0),
            ),
            (_, Some(at)) => (main.clone(), at),
            _ => return Ok(None),
        };
        load(&file, &mut files)?;
        let f = files.get_mut(&file).expect("loaded");
        let indent: String = if after > 0 {
            f.get(after - 1)
                .map(|l| l.chars().take_while(|c| c.is_whitespace()).collect())
                .unwrap_or_default()
        } else {
            String::new()
        };
        let at = after.min(f.len());
        for (i, l) in missing.iter().enumerate() {
            f.insert(at + i, format!("{indent}{}", l.trim()));
        }
    }
    let mut out = String::new();
    for (p, new) in &files {
        let old = &originals[p];
        let mut new_text = new.join("\n");
        if old.ends_with('\n') {
            new_text.push('\n');
        }
        if *old == new_text {
            continue;
        }
        let name = p.display().to_string();
        let rel = name.trim_start_matches('/');
        let d = similar::TextDiff::from_lines(old.as_str(), new_text.as_str());
        out.push_str(
            &d.unified_diff()
                .context_radius(3)
                .header(&format!("a/{rel}"), &format!("b/{rel}"))
                .to_string(),
        );
    }
    Ok((!out.is_empty()).then_some(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discover::installed::{Config, SshConfig};

    fn installed(software: &'static str, file: &std::path::Path, directives: Vec<Directive>, insert_at: Option<usize>) -> Installed {
        Installed::new(software, Some(file.to_path_buf()), "test", Config::Ssh(SshConfig::default())).with_lines(directives, insert_at)
    }

    #[test]
    fn replaces_in_place_and_inserts_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("sshd_config");
        let text = "Port 22\nCiphers aes128-cbc,aes128-ctr\nMACs hmac-sha1\n\n# per user\nMatch User bob\n    X11Forwarding no\n";
        std::fs::write(&f, text).unwrap();
        let d = crate::discover::installed::sshd::global_directives(&f, text);
        let i = installed("sshd", &f, d, Some(crate::discover::installed::sshd::insert_line(text)));
        let lines = vec![
            "Ciphers aes128-gcm@openssh.com,aes128-ctr".to_string(),
            "MACs hmac-sha2-256-etm@openssh.com".to_string(),
            "KexAlgorithms curve25519-sha256".to_string(),
        ];
        let p = unified(&i, &lines).unwrap().unwrap();
        let rel = f.display().to_string();
        assert!(p.contains(&format!("--- a{rel}")), "{p}");
        assert!(p.contains("\n-Ciphers aes128-cbc,aes128-ctr\n"), "{p}");
        assert!(p.contains("\n+Ciphers aes128-gcm@openssh.com,aes128-ctr\n"), "{p}");
        assert!(p.contains("+KexAlgorithms curve25519-sha256\n"), "{p}");
        // Applied with the real patch program, the kex line lands before the Match comment.
        let st = std::process::Command::new("patch")
            .args(["-s", "-d", "/", "-p1"])
            .stdin(std::process::Stdio::piped())
            .spawn()
            .and_then(|mut c| {
                use std::io::Write;
                c.stdin.take().unwrap().write_all(p.as_bytes())?;
                c.wait()
            })
            .unwrap();
        assert!(st.success());
        let after = std::fs::read_to_string(&f).unwrap();
        assert_eq!(
            after,
            "Port 22\nCiphers aes128-gcm@openssh.com,aes128-ctr\nMACs hmac-sha2-256-etm@openssh.com\nKexAlgorithms curve25519-sha256\n\n# per user\nMatch User bob\n    X11Forwarding no\n"
        );
        // The same lines again: nothing changes.
        let d = crate::discover::installed::sshd::global_directives(&f, &after);
        let i = installed("sshd", &f, d, Some(crate::discover::installed::sshd::insert_line(&after)));
        assert_eq!(unified(&i, &lines).unwrap(), None);
    }

    #[test]
    fn keywords_and_file_syntax() {
        assert_eq!(
            keyword_of("nginx", "ssl_conf_command Ciphersuites X;"),
            "ssl_conf_command ciphersuites"
        );
        assert_eq!(keyword_of("apache", "SSLCipherSuite TLSv1.3 X"), "sslciphersuite tlsv1.3");
        assert_eq!(keyword_of("apache", "SSLCipherSuite ECDHE"), "sslciphersuite");
        assert_eq!(keyword_of("stunnel", "ciphers = X"), "ciphers");
        assert!(same_setting("apache", "sslopensslconfcmd ciphersuites", "sslciphersuite tlsv1.3"));
        assert!(!same_setting("apache", "sslciphersuite", "sslciphersuite tlsv1.3"));
        assert!(!same_setting("nginx", "sslopensslconfcmd curves", "sslopensslconfcmd groups"));
        let i = installed("openssl", std::path::Path::new("/x"), vec![], None);
        assert_eq!(
            file_lines(
                &i,
                &["cipher list:  ECDHE-RSA-AES128-GCM-SHA256".into(), "groups:       X25519".into()]
            ),
            vec!["CipherString = ECDHE-RSA-AES128-GCM-SHA256", "Groups = X25519"]
        );
    }
}
