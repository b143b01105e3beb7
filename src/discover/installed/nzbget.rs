//! NZBGet is a TLS *client* of news servers: `ServerN.Cipher` (an OpenSSL cipher
//! string or a GnuTLS priority, depending on how NZBGet was built) is the list it
//! offers for server N, and a news server usually takes the client's first choice.
//! The first server with `ServerN.Encryption=yes` is read.

use super::{read_config, scan_directives, value_after, Config, Installed, TlsConfig};
use anyhow::Result;
use std::path::{Path, PathBuf};

pub fn from_text(file: &Path, text: &str) -> Option<(TlsConfig, Vec<super::Directive>, Option<usize>, String)> {
    // ServerN.Encryption=yes, first N.
    let n = text.lines().find_map(|l| {
        let l = l.trim();
        let rest = l.strip_prefix("Server")?;
        let (num, v) = rest.split_once(".Encryption=")?;
        (v.trim().eq_ignore_ascii_case("yes") && num.chars().all(|c| c.is_ascii_digit())).then(|| num.to_string())
    })?;
    let key = format!("server{n}.cipher");
    let d = scan_directives(file, text, &[key.as_str()], '#');
    let cipher = d
        .first()
        .and_then(|x| value_after(&x.text, &key))
        .filter(|v| !v.is_empty())
        .map(str::to_string);
    let enc = text
        .lines()
        .position(|l| l.trim().to_ascii_lowercase().starts_with(&format!("server{n}.encryption")))
        .map(|p| p + 1);
    let host_key = format!("server{n}.host");
    let host = scan_directives(file, text, &[host_key.as_str()], '#')
        .first()
        .and_then(|x| value_after(&x.text, &host_key))
        .filter(|v| !v.is_empty())
        .map(str::to_string);
    let config = TlsConfig {
        server: false,
        cipher_string: cipher,
        connects_to: Some(match host {
            Some(h) => format!("Server{n} ({h})"),
            None => format!("Server{n}"),
        }),
        ..Default::default()
    };
    Some((config, d, enc, n))
}

pub fn read(config_from: Option<&Path>) -> Result<Option<Installed>> {
    let candidates: Vec<PathBuf> = match config_from {
        Some(p) => vec![p.to_path_buf()],
        None => {
            let mut v = vec![PathBuf::from("/etc/nzbget.conf")];
            if let Some(h) = dirs::home_dir() {
                v.push(h.join(".nzbget"));
            }
            v
        }
    };
    let Some(file) = candidates.into_iter().find(|p| p.exists() || config_from.is_some()) else {
        return Ok(None);
    };
    let text = read_config(&file)?;
    let Some((config, directives, insert_at, n)) = from_text(&file, &text) else {
        let source = format!("parsed {}", file.display());
        return Ok(Some(
            Installed::new("nzbget", Some(file), source, Config::Tls(TlsConfig::default()))
                .with_notes(vec!["no ServerN.Encryption=yes: NZBGet does not use TLS here".into()]),
        ));
    };
    let mut notes = Vec::new();
    if config.cipher_string.is_none() {
        notes.push(format!("Server{n}.Cipher is empty: the TLS library's default list applies"));
    }
    let source = format!("parsed {} (Server{n})", file.display());
    Ok(Some(
        Installed::new("nzbget", Some(file), source, Config::Tls(config))
            .with_lines(directives, insert_at)
            .with_notes(notes),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_encrypted_server() {
        let text = "MainDir=~/downloads\nServer1.Host=news.example\nServer1.Encryption=no\nServer2.Host=secure.example\nServer2.Encryption=yes\nServer2.Cipher=RC4-MD5\n";
        let (c, d, at, n) = from_text(Path::new("/etc/nzbget.conf"), text).unwrap();
        assert_eq!(n, "2");
        assert_eq!(c.cipher_string.as_deref(), Some("RC4-MD5"));
        assert!(!c.server);
        assert_eq!(d[0].line, 6);
        assert_eq!(at, Some(5));
        assert_eq!(c.connects_to.as_deref(), Some("Server2 (secure.example)"));
        assert!(from_text(Path::new("/x"), "Server1.Encryption=no\n").is_none());
    }
}

/// The installed NZBGet's version and the system OpenSSL configuration its own
/// OpenSSL file builds on (read once).
pub fn environment() -> crate::model::NzbgetInstalled {
    static ENV: std::sync::OnceLock<crate::model::NzbgetInstalled> = std::sync::OnceLock::new();
    ENV.get_or_init(|| {
        let version = super::find_program(&["nzbget"])
            .and_then(|p| super::run(&p, &["-v"]).ok())
            .and_then(|r| version_of(&r.out));
        let dir = super::run("openssl", &["version", "-d"])
            .ok()
            .and_then(|r| r.out.split('"').nth(1).map(str::to_string))
            .unwrap_or_else(|| "/usr/lib/ssl".into());
        let system_cnf = format!("{dir}/openssl.cnf");
        let init_section = std::fs::read_to_string(&system_cnf)
            .ok()
            .and_then(|t| init_section(&t))
            .unwrap_or_else(|| "openssl_init".into());
        crate::model::NzbgetInstalled {
            version,
            system_cnf,
            init_section,
        }
    })
    .clone()
}

/// `nzbget version: 21.0` → `21.0`.
pub fn version_of(out: &str) -> Option<String> {
    let v = out.lines().find_map(|l| l.trim().strip_prefix("nzbget version:"))?.trim();
    (!v.is_empty()).then(|| v.to_string())
}

/// The section a configuration's top-level `openssl_conf` names.
fn init_section(text: &str) -> Option<String> {
    text.lines().take_while(|l| !l.trim_start().starts_with('[')).find_map(|l| {
        let (k, v) = l.split('#').next()?.split_once('=')?;
        (k.trim() == "openssl_conf").then(|| v.trim().to_string())
    })
}

#[cfg(test)]
mod environment_tests {
    #[test]
    fn version_and_init() {
        assert_eq!(super::version_of("nzbget version: 21.0\n").as_deref(), Some("21.0"));
        assert_eq!(super::version_of("x"), None);
        assert_eq!(
            super::init_section("HOME = .\nopenssl_conf = openssl_init # x\n[openssl_init]\n").as_deref(),
            Some("openssl_init")
        );
    }
}
