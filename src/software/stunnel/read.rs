//! stunnel has no dump of a configuration file, but `stunnel -version` prints its
//! built-in service defaults (`ciphers`, `ciphersuites`, `curves`, `options`): the
//! file's `ciphers`, `ciphersuites`, `sslVersionMin`/`sslVersionMax`/`sslVersion`,
//! `curves` and `options = CIPHER_SERVER_PREFERENCE` are laid over them. The global
//! section and the first service are read (a later service may differ; the note
//! says so). `sslVersionMin` defaults to TLSv1 (stunnel(8)).

use crate::discover::installed::{self as inst, read_config, run, scan_directives, value_after, Installed, Parsed, TlsConfig};
use anyhow::Result;
use std::path::{Path, PathBuf};

pub const KEYWORDS: &[&str] = &[
    "ciphers",
    "ciphersuites",
    "sslversionmin",
    "sslversionmax",
    "sslversion",
    "curves",
    "options",
    "client",
];

/// stunnel's built-in service defaults, from `stunnel -version`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Defaults {
    pub ciphers: Option<String>,
    pub ciphersuites: Option<String>,
    pub curves: Option<String>,
    pub server_order: bool,
}

/// The `Service-level options:` block of `stunnel -version`
/// (`ciphersuites = LIST (with TLSv1.3)`, one `options = X` line per option).
pub fn parse_defaults(text: &str) -> Defaults {
    let mut d = Defaults::default();
    let block = text.split("Service-level options:").nth(1).unwrap_or("");
    for l in block.lines() {
        let Some((k, v)) = l.split_once('=') else { continue };
        let v = v.trim().trim_end_matches("(with TLSv1.3)").trim().to_string();
        match k.trim() {
            "ciphers" => d.ciphers = Some(v),
            "ciphersuites" => d.ciphersuites = Some(v),
            "curves" => d.curves = Some(v),
            "options" if v == "CIPHER_SERVER_PREFERENCE" => d.server_order = true,
            _ => {}
        }
    }
    d
}

/// The file's settings over `defaults`.
pub fn from_text(file: &Path, text: &str, defaults: &Defaults) -> Parsed {
    // The global part and the first [service].
    let sections: Vec<usize> = text
        .lines()
        .enumerate()
        .filter(|(_, l)| l.trim_start().starts_with('['))
        .map(|(i, _)| i + 1)
        .collect();
    let end = sections.get(1).copied().unwrap_or(usize::MAX);
    let d: Vec<_> = scan_directives(file, text, KEYWORDS, ';')
        .into_iter()
        .filter(|x| x.line < end && !x.text.trim_start().starts_with('#'))
        .collect();
    let get = |k: &str| {
        d.iter()
            .rev()
            .find(|x| x.keyword == k)
            .and_then(|x| value_after(&x.text, k))
            .map(str::to_string)
    };
    let protocols = match get("sslversion") {
        Some(v) if !v.eq_ignore_ascii_case("all") => vec![inst::normalise_version(&v)],
        _ => inst::version_range(
            get("sslversionmin")
                .as_deref()
                .filter(|v| !v.eq_ignore_ascii_case("all"))
                .or(Some("TLSv1")),
            get("sslversionmax").as_deref().filter(|v| !v.eq_ignore_ascii_case("all")),
        ),
    };
    let mut notes = Vec::new();
    if sections.len() > 1 {
        notes.push(format!("{} services: the first one is shown", sections.len()));
    }
    // `options` lines accumulate: only the one that sets the server's order is a
    // line the recommendation replaces (the others, NO_TICKET ..., stay).
    let order = |x: &inst::Directive| x.text.to_ascii_uppercase().contains("CIPHER_SERVER_PREFERENCE");
    let server_order = match d.iter().rev().find(|x| x.keyword == "options" && order(x)) {
        Some(x) => !value_after(&x.text, "options").is_some_and(|v| v.starts_with('-')),
        None => defaults.server_order,
    };
    let config = TlsConfig {
        server: !get("client").is_some_and(|v| v.eq_ignore_ascii_case("yes")),
        protocols: Some(protocols),
        cipher_string: get("ciphers").or_else(|| defaults.ciphers.clone()),
        ciphersuites: get("ciphersuites").or_else(|| defaults.ciphersuites.clone()),
        groups: get("curves").or_else(|| defaults.curves.clone()),
        server_order,
        endpoint: accept_endpoint(text),
        ..Default::default()
    };
    let directives: Vec<_> = d
        .into_iter()
        .filter(|x| x.keyword != "client" && (x.keyword != "options" || order(x)))
        .collect();
    let insert_at = directives.iter().map(|x| x.line).max().or(sections.first().copied());
    Parsed::new(config, directives, insert_at, notes)
}

/// The first service's `accept = [host:]port`, when it is an address of this
/// machine (`endpoint::local`) and the service is a server (not `client = yes`).
fn accept_endpoint(text: &str) -> Option<inst::Endpoint> {
    let mut service = text.lines().map(str::trim).skip_while(|l| !l.starts_with('['));
    let first: Vec<(String, String)> = service
        .by_ref()
        .skip(1)
        .take_while(|l| !l.starts_with('['))
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let value = |k: &str| first.iter().rev().find(|(key, _)| key == k).map(|(_, v)| v.as_str());
    if value("client").is_some_and(|v| v.eq_ignore_ascii_case("yes")) {
        return None;
    }
    let address = inst::endpoint::local(value("accept")?)?;
    Some(inst::Endpoint {
        address,
        server_name: None,
    })
}

pub fn read(config_from: Option<&Path>) -> Result<Option<Installed>> {
    let stunnel = inst::find_program(&["stunnel4", "stunnel"]);
    let file = match config_from {
        Some(p) => p.to_path_buf(),
        None => {
            if stunnel.is_none() {
                return Ok(None);
            }
            let found = std::fs::read_dir("/etc/stunnel").ok().and_then(|rd| {
                let mut v: Vec<PathBuf> = rd
                    .flatten()
                    .map(|e| e.path())
                    .filter(|p| p.extension().is_some_and(|e| e == "conf"))
                    .collect();
                v.sort();
                v.into_iter().next()
            });
            match found {
                Some(f) => f,
                None => return Ok(None),
            }
        }
    };
    let text = read_config(&file)?;
    let mut source = format!("parsed {}", file.display());
    let mut note = None;
    let defaults = match &stunnel {
        Some(s) => {
            // `-version` prints to stderr and exits non-zero on some builds.
            let inst::Ran { out, err, .. } = run(s, &["-version"])?;
            let d = parse_defaults(&format!("{out}{err}"));
            if d.ciphers.is_some() {
                source = format!("{source} over `{s} -version` (its built-in defaults)");
            } else {
                note = Some(format!("`{s} -version` printed no defaults: unset values are OpenSSL's"));
            }
            d
        }
        None => {
            note = Some("stunnel is not installed: unset values are OpenSSL's defaults, not stunnel's".to_string());
            Defaults::default()
        }
    };
    let mut parsed = from_text(&file, &text, &defaults);
    parsed.notes.extend(note);
    Ok(Some(parsed.installed("stunnel", Some(file), source)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_service() {
        let text = "; stunnel.conf\npid = /run/stunnel.pid\n[https]\naccept = 443\nconnect = 80\nciphers = AES128-SHA:ECDHE-RSA-AES128-GCM-SHA256\nsslVersionMin = TLSv1\noptions = CIPHER_SERVER_PREFERENCE\n[other]\nciphers = RC4\n";
        let Parsed {
            config: c,
            directives: d,
            insert_at: at,
            notes,
        } = from_text(Path::new("/etc/stunnel/s.conf"), text, &Defaults::default());
        assert!(c.server);
        assert_eq!(c.cipher_string.as_deref(), Some("AES128-SHA:ECDHE-RSA-AES128-GCM-SHA256"));
        assert_eq!(c.protocols.unwrap()[0], "TLSv1");
        assert!(c.server_order);
        assert_eq!(d.iter().find(|x| x.keyword == "ciphers").unwrap().line, 6);
        assert_eq!(at, Some(8));
        assert_eq!(notes.len(), 1);
        assert_eq!(c.endpoint.map(|e| e.address).as_deref(), Some("127.0.0.1:443"));
    }

    /// The first service's `accept` of this machine is asked; a client service's,
    /// another machine's or a later service's is not.
    #[test]
    fn the_first_services_accept_is_the_endpoint() {
        let at = |text: &str| accept_endpoint(text).map(|e| e.address);
        assert_eq!(
            at("pid =\n[a]\naccept = 127.0.0.1:8443\n[b]\naccept = 9443\n").as_deref(),
            Some("127.0.0.1:8443")
        );
        assert_eq!(at("[a]\nconnect = 80\n[b]\naccept = 9443\n"), None);
        assert_eq!(at("[a]\nclient = yes\naccept = 8443\n"), None);
        assert_eq!(at("[a]\naccept = 192.0.2.4:443\n"), None);
        assert_eq!(at("accept = 443\n"), None);
    }

    /// The shape of `stunnel -version`: defaults under `Service-level options:`,
    /// laid under the file's values; an `options` line other than the server's
    /// order is not a line the recommendation replaces.
    #[test]
    fn defaults_from_version_under_the_file() {
        let version = "stunnel 5.68 on x86_64-pc-linux-gnu platform\nGlobal options:\nRNDbytes               = 1024\n \nService-level options:\nciphers                = HIGH:!aNULL:!SSLv2:!DH:!kDHEPSK\nciphersuites           = TLS_AES_256_GCM_SHA384:TLS_AES_128_GCM_SHA256 (with TLSv1.3)\ncurves                 = X25519:P-256\noptions                = NO_SSLv2\n";
        let defaults = parse_defaults(version);
        assert_eq!(defaults.ciphers.as_deref(), Some("HIGH:!aNULL:!SSLv2:!DH:!kDHEPSK"));
        assert_eq!(
            defaults.ciphersuites.as_deref(),
            Some("TLS_AES_256_GCM_SHA384:TLS_AES_128_GCM_SHA256")
        );
        assert!(!defaults.server_order);
        let text = "[s]\naccept = 127.0.0.1:1\noptions = NO_TICKET\nciphersuites = TLS_AES_128_GCM_SHA256\nsslVersionMax = TLSv1.2\n";
        let p = from_text(Path::new("/s.conf"), text, &defaults);
        assert_eq!(p.config.cipher_string, defaults.ciphers);
        assert_eq!(p.config.ciphersuites.as_deref(), Some("TLS_AES_128_GCM_SHA256"));
        assert_eq!(p.config.groups.as_deref(), Some("X25519:P-256"));
        assert_eq!(p.config.protocols.unwrap(), vec!["TLSv1", "TLSv1.1", "TLSv1.2"]);
        assert!(!p.config.server_order);
        assert!(!p.directives.iter().any(|d| d.keyword == "options"), "{:?}", p.directives);
        assert_eq!(p.insert_at, Some(5));
    }

    /// The real `stunnel -version` has the block this reader expects.
    #[test]
    fn real_stunnel_prints_its_defaults() {
        let Some(s) = inst::find_program(&["stunnel4", "stunnel"]) else {
            crate::testing::missing("stunnel is not installed");
            return;
        };
        let inst::Ran { out, err, .. } = run(&s, &["-version"]).unwrap();
        let d = parse_defaults(&format!("{out}{err}"));
        assert!(
            d.ciphers.is_some() && d.ciphersuites.is_some() && d.curves.is_some(),
            "{d:?}\n{out}{err}"
        );
        assert!(!d.ciphersuites.unwrap().contains('('));
    }
}
