//! The GnuTLS system priority: `/etc/gnutls/config` (its `[overrides]`
//! `default-priority-string`, or a `SYSTEM` entry of `[priorities]`), else `NORMAL`,
//! which is what `@SYSTEM` means without a config file. `gnutls-cli --priority P -l`
//! resolves a priority string with GnuTLS's own parser.

use crate::discover::installed::{self as inst, read_config, run, Config, Directive, Installed, LinkedLibrary, TlsConfig};
use crate::software::openssl::read::OfferedSuite;
use anyhow::Result;
use std::path::{Path, PathBuf};

pub const DEFAULT_FILE: &str = "/etc/gnutls/config";

/// What a priority string resolves to: suites in order, protocols and groups.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Resolved {
    pub suites: Vec<OfferedSuite>,
    pub protocols: Vec<String>,
    pub groups: Vec<String>,
}

/// A suite's IANA name and OpenSSL name (if it has one) by its two-byte code: the
/// caller's name table (the knowledge base's codes).
pub type SuiteNames<'a> = &'a dyn Fn(u16) -> Option<(String, Option<String>)>;

/// `gnutls-cli -l` output → suites (IANA names through `names`, by code).
pub fn parse_list(text: &str, names: SuiteNames) -> Resolved {
    let mut r = Resolved::default();
    for l in text.lines() {
        let f: Vec<&str> = l.split('\t').map(str::trim).collect();
        if l.starts_with("TLS_") && f.len() >= 3 {
            let code = f[1]
                .split(',')
                .filter_map(|b| u8::from_str_radix(b.trim().trim_start_matches("0x"), 16).ok())
                .fold(0u16, |a, b| (a << 8) | b as u16);
            let min = match f[2] {
                "TLS1.3" => "TLSv1.3",
                "TLS1.2" => "TLSv1.2",
                "TLS1.1" => "TLSv1.1",
                _ => "TLSv1",
            };
            let (iana, openssl) = match names(code) {
                Some((iana, openssl)) => (iana, openssl.unwrap_or_else(|| f[0].to_string())),
                None => (f[0].to_string(), f[0].to_string()),
            };
            if !r.suites.iter().any(|s| s.iana == iana) {
                r.suites.push(OfferedSuite {
                    iana,
                    openssl,
                    min_protocol: min.into(),
                });
            }
        } else if let Some(p) = l.strip_prefix("Protocols: ") {
            r.protocols = p
                .split(", ")
                .filter_map(|v| v.strip_prefix("VERS-TLS"))
                .map(inst::normalise_version)
                .collect();
        } else if let Some(g) = l.strip_prefix("Groups: ") {
            r.groups = g.split(", ").map(|x| x.trim_start_matches("GROUP-").to_string()).collect();
        }
    }
    r
}

/// Resolves a priority string with the real `gnutls-cli`.
pub fn resolve(priority: &str, names: SuiteNames) -> Result<Resolved> {
    // `--priority=VALUE`: a configuration's priority string is never read as an option.
    let flag = format!("--priority={priority}");
    let inst::Ran { ok, out, err, .. } = run("gnutls-cli", &[&flag, "-l"])?;
    if !ok || !out.contains("Cipher suites") {
        anyhow::bail!(
            "GnuTLS refuses the priority string `{priority}`: {}",
            (err.trim().to_string() + out.trim()).trim()
        );
    }
    Ok(parse_list(&out, names))
}

/// The system priority from a config text: (priority, its directive).
pub fn system_priority(file: &Path, text: &str) -> Option<(String, Directive)> {
    let mut section = String::new();
    for (i, l) in text.lines().enumerate() {
        let t = l.split('#').next().unwrap_or("").trim();
        if let Some(s) = t.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
            section = s.trim().to_ascii_lowercase();
            continue;
        }
        let Some((k, v)) = t.split_once('=') else { continue };
        let k = k.trim().to_ascii_lowercase();
        if (section == "overrides" && k == "default-priority-string") || (section == "priorities" && k == "system") {
            return Some((
                v.trim().to_string(),
                Directive {
                    keyword: k,
                    file: file.to_path_buf(),
                    line: i + 1,
                    text: l.to_string(),
                },
            ));
        }
    }
    None
}

/// The configuration file read when none is given: `$GNUTLS_SYSTEM_PRIORITY_FILE`, else [`DEFAULT_FILE`].
pub fn default_file() -> PathBuf {
    std::env::var_os("GNUTLS_SYSTEM_PRIORITY_FILE")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(DEFAULT_FILE))
}

pub fn read(config_from: Option<&Path>) -> Result<Option<Installed>> {
    if inst::find_program(&["gnutls-cli"]).is_none() && config_from.is_none() {
        return Ok(None);
    }
    let file = config_from.map(Path::to_path_buf).unwrap_or_else(default_file);
    let (priority, directives, known_file, note) = if file.exists() || config_from.is_some() {
        let text = read_config(&file)?;
        match system_priority(&file, &text) {
            Some((p, d)) => (p, vec![d], Some(file.clone()), None),
            None => (
                "NORMAL".to_string(),
                Vec::new(),
                Some(file.clone()),
                Some(format!("{} sets no system priority: NORMAL applies", file.display())),
            ),
        }
    } else {
        (
            "NORMAL".to_string(),
            Vec::new(),
            None,
            Some(format!("{} does not exist: @SYSTEM is NORMAL", file.display())),
        )
    };
    let source = format!("gnutls-cli --priority {priority} -l");
    let config = Config::Tls(TlsConfig {
        library: LinkedLibrary::Gnutls,
        server: false,
        cipher_string: Some(priority),
        ..Default::default()
    });
    Ok(Some(
        Installed::new("gnutls", known_file, source, config)
            .with_lines(directives, None)
            .with_notes(note.into_iter().collect()),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_override() {
        let text = "[global]\noverride-mode = blocklist\n\n[overrides]\ndefault-priority-string = SECURE256:-VERS-TLS1.2\n";
        let (p, d) = system_priority(Path::new("/etc/gnutls/config"), text).unwrap();
        assert_eq!(p, "SECURE256:-VERS-TLS1.2");
        assert_eq!(d.line, 5);
        assert!(system_priority(Path::new("/x"), "[global]\n").is_none());
    }

    /// The real gnutls-cli: NORMAL resolves with TLS 1.3 first; nonsense is refused.
    #[test]
    fn real_gnutls_resolves_priorities() {
        if inst::find_program(&["gnutls-cli"]).is_none() {
            crate::testing::missing("gnutls-cli is not installed");
            return;
        }
        let k = crate::judge::Knowledge::builtin().unwrap();
        let names = |c| k.suite_names_by_code(c);
        let r = resolve("NORMAL", &names).unwrap();
        assert_eq!(r.suites[0].min_protocol, "TLSv1.3");
        assert!(r.suites.iter().any(|s| s.iana == "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"), "{r:?}");
        assert!(r.protocols.contains(&"TLSv1.3".to_string()));
        assert!(!r.groups.is_empty());
        let only12 = resolve("NORMAL:-VERS-ALL:+VERS-TLS1.2", &names).unwrap();
        assert!(only12.suites.iter().all(|s| !s.tls13()));
        assert!(resolve("NONSENSE-PRIORITY", &names).is_err());
    }
}
