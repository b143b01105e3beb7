//! Apache httpd (mod_ssl): `apache2ctl -t -D DUMP_INCLUDES` names every file the
//! server loads; their `SSLProtocol`, `SSLCipherSuite` (and its `TLSv1.3` form),
//! `SSLOpenSSLConfCmd Curves|Groups|Ciphersuites` and `SSLHonorCipherOrder` lines
//! decide what is offered. The last one read wins, as in the server's global scope.

use super::{read_config, run, scan_directives, Config, Directive, Installed, TlsConfig};
use anyhow::Result;
use std::path::{Path, PathBuf};

pub const KEYWORDS: &[&str] = &[
    "sslprotocol",
    "sslciphersuite tlsv1.3",
    "sslciphersuite",
    "sslopensslconfcmd curves",
    "sslopensslconfcmd groups",
    "sslopensslconfcmd ciphersuites",
    "sslhonorcipherorder",
];

/// Files from `apache2ctl -t -D DUMP_INCLUDES`, in load order.
pub fn parse_includes(text: &str) -> Vec<PathBuf> {
    text.lines()
        .filter_map(|l| {
            let l = l.trim();
            l.starts_with('(')
                .then(|| l.split_once(") ").map(|(_, p)| PathBuf::from(p.trim())))?
        })
        .collect()
}

/// `SSLProtocol` words → enabled protocols (`all` is SSLv3 to TLSv1.3).
pub fn protocols(words: &[&str]) -> Vec<String> {
    let all: Vec<String> = super::TLS_VERSIONS.iter().map(|s| s.to_string()).collect();
    let mut on: Vec<String> = Vec::new();
    for w in words {
        let (sign, name) = match w.chars().next() {
            Some('+') => ('+', &w[1..]),
            Some('-') => ('-', &w[1..]),
            _ => ('=', *w),
        };
        let set: Vec<String> = if name.eq_ignore_ascii_case("all") {
            all.clone()
        } else {
            vec![super::normalise_version(name)]
        };
        for v in set {
            if sign == '-' {
                on.retain(|x| *x != v);
            } else if !on.contains(&v) {
                on.push(v);
            }
        }
    }
    let mut v: Vec<String> = all.into_iter().filter(|x| on.contains(x)).collect();
    v.dedup();
    v
}

/// The configuration from the loaded files' texts.
pub fn from_files(files: &[(PathBuf, String)]) -> (TlsConfig, Vec<Directive>, Option<usize>) {
    let mut last: Vec<Directive> = Vec::new();
    for (f, t) in files {
        for d in scan_directives(f, t, KEYWORDS, '#') {
            last.retain(|x| x.keyword != d.keyword);
            last.push(d);
        }
    }
    let words = |k: &str| -> Option<Vec<String>> {
        let d = last.iter().find(|d| d.keyword == k)?;
        Some(d.text.split_whitespace().skip(k.split(' ').count()).map(str::to_string).collect())
    };
    let joined = |k: &str| words(k).map(|w| w.join(" "));
    let config = TlsConfig {
        server: true,
        protocols: Some(protocols(
            &words("sslprotocol")
                .unwrap_or_else(|| vec!["all".into(), "-SSLv3".into()])
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>(),
        )),
        cipher_string: Some(joined("sslciphersuite").unwrap_or_else(|| "DEFAULT".into())),
        ciphersuites: joined("sslciphersuite tlsv1.3").or_else(|| joined("sslopensslconfcmd ciphersuites")),
        groups: joined("sslopensslconfcmd groups").or_else(|| joined("sslopensslconfcmd curves")),
        server_order: joined("sslhonorcipherorder").is_some_and(|v| v.eq_ignore_ascii_case("on")),
        ..Default::default()
    };
    let main = files
        .iter()
        .find(|(_, t)| t.to_ascii_lowercase().contains("sslciphersuite"))
        .map(|(f, _)| f.clone());
    let insert_at = last.iter().filter(|d| Some(&d.file) == main.as_ref()).map(|d| d.line).max();
    (config, last, insert_at)
}

pub fn read(config_from: Option<&Path>) -> Result<Option<Installed>> {
    let ctl = super::find_program(&["apache2ctl", "apachectl"]);
    let mut notes = Vec::new();
    let (paths, source) = match (config_from, &ctl) {
        (Some(p), _) => (vec![p.to_path_buf()], format!("parsed {}", p.display())),
        (None, None) => return Ok(None),
        (None, Some(ctl)) => {
            let (ok, out, err) = run(ctl, &["-t", "-D", "DUMP_INCLUDES"])?;
            if !ok {
                anyhow::bail!("`{ctl} -t -D DUMP_INCLUDES` failed: {}", err.trim());
            }
            (parse_includes(&out), format!("{ctl} -t -D DUMP_INCLUDES and the files it names"))
        }
    };
    let mut files = Vec::new();
    for p in &paths {
        match read_config(p) {
            Ok(t) => files.push((p.clone(), t)),
            Err(e) if config_from.is_none() => notes.push(e.to_string()),
            Err(e) => return Err(e.into()),
        }
    }
    let (config, directives, insert_at) = from_files(&files);
    let file = directives
        .iter()
        .find(|d| d.keyword == "sslciphersuite")
        .map(|d| d.file.clone())
        .or(config_from.map(Path::to_path_buf));
    Ok(Some(Installed {
        software: "apache",
        file,
        source,
        config: Config::Tls(config),
        directives,
        insert_at,
        notes,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    const DUMP: &str = "Included configuration files:\n  (*) /etc/apache2/apache2.conf\n    (146) /etc/apache2/mods-enabled/ssl.conf\n    (225) /etc/apache2/sites-enabled/default-ssl.conf\n";

    #[test]
    fn includes_and_directives() {
        assert_eq!(
            parse_includes(DUMP),
            vec![
                PathBuf::from("/etc/apache2/apache2.conf"),
                PathBuf::from("/etc/apache2/mods-enabled/ssl.conf"),
                PathBuf::from("/etc/apache2/sites-enabled/default-ssl.conf")
            ]
        );
        let files = vec![
            (
                PathBuf::from("/etc/apache2/mods-enabled/ssl.conf"),
                "<IfModule mod_ssl.c>\n\tSSLCipherSuite HIGH:!aNULL\n\tSSLProtocol all -SSLv3\n</IfModule>\n".to_string(),
            ),
            (
                PathBuf::from("/etc/apache2/sites-enabled/default-ssl.conf"),
                "SSLCipherSuite RC4-SHA:AES128-SHA\nSSLCipherSuite TLSv1.3 TLS_AES_128_GCM_SHA256\nSSLHonorCipherOrder on\n".to_string(),
            ),
        ];
        let (c, d, at) = from_files(&files);
        assert_eq!(c.cipher_string.as_deref(), Some("RC4-SHA:AES128-SHA"));
        assert_eq!(c.ciphersuites.as_deref(), Some("TLS_AES_128_GCM_SHA256"));
        assert_eq!(c.protocols.unwrap(), vec!["TLSv1", "TLSv1.1", "TLSv1.2", "TLSv1.3"]);
        assert!(c.server_order);
        assert_eq!(d.iter().find(|x| x.keyword == "sslciphersuite").unwrap().line, 1);
        assert_eq!(at, Some(3));
        assert_eq!(protocols(&["-all", "+TLSv1.2", "+TLSv1.3"]), vec!["TLSv1.2", "TLSv1.3"]);
    }
}
