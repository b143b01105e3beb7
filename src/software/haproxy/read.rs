//! HAProxy: `haproxy -c -f FILE` checks the file with HAProxy's own parser; the
//! `ssl-default-bind-*` lines of its `global` section decide what every `bind … ssl`
//! offers unless a bind line overrides it. HAProxy enforces its own suite order
//! unless `prefer-client-ciphers` is set, and defaults to TLS 1.2 as the minimum.

use crate::discover::installed::{self as inst, read_config, run, scan_directives, value_after, Installed, Parsed, TlsConfig};
use anyhow::Result;
use std::path::{Path, PathBuf};

pub const DEFAULT_FILE: &str = "/etc/haproxy/haproxy.cfg";
pub const KEYWORDS: &[&str] = &[
    "ssl-default-bind-ciphers",
    "ssl-default-bind-ciphersuites",
    "ssl-default-bind-curves",
    "ssl-default-bind-options",
];

pub fn from_text(file: &Path, text: &str) -> Parsed {
    let d = scan_directives(file, text, KEYWORDS, '#');
    let get = |k: &str| {
        d.iter()
            .find(|x| x.keyword == k)
            .and_then(|x| value_after(&x.text, k))
            .map(str::to_string)
    };
    let options: Vec<String> = get("ssl-default-bind-options")
        .map(|o| o.split_whitespace().map(str::to_string).collect())
        .unwrap_or_default();
    let opt = |name: &str| options.iter().position(|o| o == name).and_then(|i| options.get(i + 1)).cloned();
    let mut protocols = inst::version_range(
        Some(opt("ssl-min-ver").as_deref().unwrap_or("TLSv1.2")),
        opt("ssl-max-ver").as_deref(),
    );
    for (flag, v) in [
        ("no-tlsv10", "TLSv1"),
        ("no-tlsv11", "TLSv1.1"),
        ("no-tlsv12", "TLSv1.2"),
        ("no-tlsv13", "TLSv1.3"),
    ] {
        if options.iter().any(|o| o == flag) {
            protocols.retain(|p| p != v);
        }
    }
    let mut notes = Vec::new();
    let binds: Vec<&str> = text.lines().map(str::trim).filter(|l| l.starts_with("bind ")).collect();
    if binds.iter().any(|l| l.contains(" ciphers ") || l.contains(" ciphersuites ")) {
        notes.push("a bind line sets its own ciphers: the ssl-default-bind values are shown".into());
    }
    if !binds.iter().any(|l| l.split_whitespace().any(|w| w == "ssl")) {
        notes.push("no bind line has `ssl`: these defaults apply to no listener yet".into());
    }
    let config = TlsConfig {
        server: true,
        protocols: Some(protocols),
        cipher_string: get("ssl-default-bind-ciphers"),
        ciphersuites: get("ssl-default-bind-ciphersuites"),
        groups: get("ssl-default-bind-curves"),
        server_order: !text.contains("prefer-client-ciphers"),
        endpoint: binds.iter().find_map(|l| bind_endpoint(l)),
        ..Default::default()
    };
    let at = d
        .iter()
        .map(|x| x.line)
        .max()
        .or_else(|| text.lines().position(|l| l.trim() == "global").map(|p| p + 1));
    Parsed::new(config, d, at, notes)
}

/// The address of a `bind … ssl` line (`bind :443 ssl crt …`, `bind
/// ipv4@127.0.0.1:8443 ssl`, the first of `a:1,b:2`, the first port of a range),
/// when it is one of this machine (`endpoint::local`).
fn bind_endpoint(line: &str) -> Option<inst::Endpoint> {
    let w: Vec<&str> = line.split_whitespace().collect();
    if w.first() != Some(&"bind") || !w.contains(&"ssl") {
        return None;
    }
    let first = w.get(1)?.split(',').next()?;
    let first = first.strip_prefix("ipv4@").or_else(|| first.strip_prefix("ipv6@")).unwrap_or(first);
    if first.contains('@') {
        return None;
    }
    let (host, ports) = first.rsplit_once(':')?;
    let port = ports.split('-').next()?;
    let address = inst::endpoint::local(&format!("{host}:{port}"))?;
    Some(inst::Endpoint {
        address,
        server_name: None,
    })
}

pub fn read(config_from: Option<&Path>) -> Result<Option<Installed>> {
    let haproxy = inst::find_program(&["haproxy"]);
    let file = config_from.map(Path::to_path_buf).unwrap_or_else(|| PathBuf::from(DEFAULT_FILE));
    if haproxy.is_none() && config_from.is_none() {
        return Ok(None);
    }
    let text = read_config(&file)?;
    let mut parsed = from_text(&file, &text);
    let mut source = format!("parsed {}", file.display());
    if let Some(h) = haproxy {
        let f = file.display().to_string();
        // What HAProxy says may quote another file: relayed as its name and line only.
        let ran = run(&h, &["-c", "-f", &f])?.about(&file);
        if ran.ok {
            source = format!("haproxy -c -f {f} and its ssl-default-bind lines");
        } else {
            parsed.notes.push(format!("`haproxy -c -f {f}` refused the file: {}", ran.why()));
        }
    } else {
        parsed
            .notes
            .push("haproxy is not installed: the file was not checked by HAProxy".into());
    }
    Ok(Some(parsed.installed("haproxy", Some(file), source)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn global_defaults() {
        let text = "global\n    log /dev/log local0\n    ssl-default-bind-ciphers ECDHE-RSA-AES128-SHA:AES128-SHA\n    ssl-default-bind-options ssl-min-ver TLSv1.0 no-tls-tickets\n\nfrontend f\n    bind :443 ssl crt /etc/haproxy/site.pem\n";
        let Parsed {
            config: c,
            directives: d,
            insert_at: at,
            notes,
        } = from_text(Path::new("/etc/haproxy/haproxy.cfg"), text);
        assert_eq!(c.cipher_string.as_deref(), Some("ECDHE-RSA-AES128-SHA:AES128-SHA"));
        assert_eq!(c.protocols.unwrap(), vec!["TLSv1", "TLSv1.1", "TLSv1.2", "TLSv1.3"]);
        assert!(c.server_order);
        assert_eq!(d.len(), 2);
        assert_eq!(at, Some(4));
        assert!(notes.is_empty());
        let p = from_text(Path::new("/x"), "global\n    maxconn 10\n");
        assert_eq!(p.config.protocols.unwrap(), vec!["TLSv1.2", "TLSv1.3"]);
        assert_eq!(p.config.cipher_string, None);
        assert_eq!(p.insert_at, Some(1));
        assert_eq!(p.notes, vec!["no bind line has `ssl`: these defaults apply to no listener yet"]);
    }

    /// `check` asks the first `bind … ssl` address of this machine; a plain bind, a
    /// socket and another machine's address are not asked.
    #[test]
    fn the_first_ssl_bind_of_this_machine_is_the_endpoint() {
        let at = |text: &str| from_text(Path::new("/x"), text).config.endpoint.map(|e| e.address);
        let f = |binds: &str| format!("global\n    maxconn 10\nfrontend f\n{binds}");
        assert_eq!(
            at(&f("    bind :80\n    bind :443 ssl crt /x.pem\n")).as_deref(),
            Some("127.0.0.1:443")
        );
        assert_eq!(
            at(&f("    bind ipv4@127.0.0.1:8443-8445 ssl crt /x.pem\n")).as_deref(),
            Some("127.0.0.1:8443")
        );
        assert_eq!(at(&f("    bind *:8443,*:9443 ssl crt /x.pem\n")).as_deref(), Some("127.0.0.1:8443"));
        assert_eq!(at(&f("    bind :::443 v4v6 ssl crt /x.pem\n")).as_deref(), Some("[::1]:443"));
        assert_eq!(at(&f("    bind :80\n")), None);
        assert_eq!(at(&f("    bind unix@/run/h.sock ssl crt /x.pem\n")), None);
        assert_eq!(at(&f("    bind 192.0.2.9:443 ssl crt /x.pem\n")), None);
    }
}
