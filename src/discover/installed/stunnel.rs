//! stunnel has no dump: its configuration file is read directly. `ciphers`,
//! `ciphersuites`, `sslVersionMin`/`sslVersionMax`/`sslVersion`, `curves` and
//! `options = CIPHER_SERVER_PREFERENCE` decide what a service offers; the global
//! section and the first service are read (a later service may differ; the note says
//! so).

use super::{read_config, scan_directives, value_after, Config, Installed, TlsConfig};
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

pub fn from_text(file: &Path, text: &str) -> (TlsConfig, Vec<super::Directive>, Option<usize>, Vec<String>) {
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
        Some(v) if !v.eq_ignore_ascii_case("all") => vec![super::normalise_version(&v)],
        _ => super::version_range(get("sslversionmin").as_deref().or(Some("TLSv1.2")), get("sslversionmax").as_deref()),
    };
    let mut notes = Vec::new();
    if sections.len() > 1 {
        notes.push(format!("{} services: the first one is shown", sections.len()));
    }
    let config = TlsConfig {
        server: !get("client").is_some_and(|v| v.eq_ignore_ascii_case("yes")),
        protocols: Some(protocols),
        cipher_string: get("ciphers"),
        ciphersuites: get("ciphersuites"),
        groups: get("curves"),
        server_order: d
            .iter()
            .any(|x| x.keyword == "options" && x.text.to_ascii_uppercase().contains("CIPHER_SERVER_PREFERENCE")),
        ..Default::default()
    };
    let at = d
        .iter()
        .filter(|x| x.keyword != "client")
        .map(|x| x.line)
        .max()
        .or(sections.first().copied());
    (config, d.into_iter().filter(|x| x.keyword != "client").collect(), at, notes)
}

pub fn read(config_from: Option<&Path>) -> Result<Option<Installed>> {
    let file = match config_from {
        Some(p) => p.to_path_buf(),
        None => {
            if super::find_program(&["stunnel4", "stunnel"]).is_none() {
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
    let (config, directives, insert_at, mut notes) = from_text(&file, &text);
    notes.push("stunnel has no dump: unset values are stunnel's built-in defaults, which depend on its version".into());
    Ok(Some(Installed {
        software: "stunnel",
        file: Some(file.clone()),
        source: format!("parsed {}", file.display()),
        config: Config::Tls(config),
        directives,
        insert_at,
        notes,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_service() {
        let text = "; stunnel.conf\npid = /run/stunnel.pid\n[https]\naccept = 443\nconnect = 80\nciphers = AES128-SHA:ECDHE-RSA-AES128-GCM-SHA256\nsslVersionMin = TLSv1\noptions = CIPHER_SERVER_PREFERENCE\n[other]\nciphers = RC4\n";
        let (c, d, at, notes) = from_text(Path::new("/etc/stunnel/s.conf"), text);
        assert!(c.server);
        assert_eq!(c.cipher_string.as_deref(), Some("AES128-SHA:ECDHE-RSA-AES128-GCM-SHA256"));
        assert_eq!(c.protocols.unwrap()[0], "TLSv1");
        assert!(c.server_order);
        assert_eq!(d.iter().find(|x| x.keyword == "ciphers").unwrap().line, 6);
        assert_eq!(at, Some(8));
        assert_eq!(notes.len(), 1);
    }
}
