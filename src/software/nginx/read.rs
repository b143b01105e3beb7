//! nginx: `nginx -T` prints every configuration file it loaded, each after a
//! `# configuration file PATH:` line. The files are parsed into statements with
//! their `include`s expanded, and the TLS directives are taken from the first
//! `server` block that listens with `ssl` (falling back to the `http` level, then to
//! nginx's defaults). When `nginx -T` fails (a file under review whose certificates
//! do not exist yet), the file is parsed by itself and the note says why.

use crate::discover::installed::{self as inst, read_config, run, Directive, Installed, Parsed, TlsConfig};
use anyhow::Result;
use std::path::{Path, PathBuf};

pub const DEFAULT_FILE: &str = "/etc/nginx/nginx.conf";
/// The directives that decide what is negotiated.
pub const KEYWORDS: &[&str] = &[
    "ssl_protocols",
    "ssl_ciphers",
    "ssl_prefer_server_ciphers",
    "ssl_ecdh_curve",
    "ssl_conf_command ciphersuites",
];

/// One statement: its words, where it starts, and its block when it has one.
#[derive(Debug, Clone)]
pub struct Stmt {
    pub words: Vec<String>,
    pub file: PathBuf,
    pub line: usize,
    pub block: Option<Vec<Stmt>>,
}

/// Splits `nginx -T` output into (file, content) sections.
pub fn sections(dump: &str) -> Vec<(PathBuf, String)> {
    let mut out: Vec<(PathBuf, String)> = Vec::new();
    for l in dump.lines() {
        if let Some(p) = l.strip_prefix("# configuration file ").and_then(|r| r.strip_suffix(':')) {
            out.push((PathBuf::from(p), String::new()));
        } else if let Some((_, t)) = out.last_mut() {
            t.push_str(l);
            t.push('\n');
        }
    }
    // nginx -T adds one blank line after each file.
    for (_, t) in &mut out {
        if t.ends_with("\n\n") {
            t.pop();
        }
    }
    out
}

#[derive(Debug)]
enum Tok {
    Word(String, usize),
    Open(usize),
    Close,
    End,
}

fn tokens(text: &str) -> Vec<Tok> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let mut chars = line.chars().peekable();
        let mut word = String::new();
        let flush = |w: &mut String, out: &mut Vec<Tok>| {
            if !w.is_empty() {
                out.push(Tok::Word(std::mem::take(w), n + 1));
            }
        };
        while let Some(c) = chars.next() {
            match c {
                '#' if word.is_empty() => break,
                '"' | '\'' => {
                    for d in chars.by_ref() {
                        if d == c {
                            break;
                        }
                        word.push(d);
                    }
                }
                ';' => {
                    flush(&mut word, &mut out);
                    out.push(Tok::End);
                }
                '{' => {
                    flush(&mut word, &mut out);
                    out.push(Tok::Open(n + 1));
                }
                '}' => {
                    flush(&mut word, &mut out);
                    out.push(Tok::Close);
                }
                c if c.is_whitespace() => flush(&mut word, &mut out),
                c => word.push(c),
            }
        }
        flush(&mut word, &mut out);
    }
    out
}

/// Parses one file's text into statements (without expanding includes).
pub fn parse(file: &Path, text: &str) -> Vec<Stmt> {
    /// Deeper than any real nginx.conf; what a hostile file nests below this is
    /// skipped, so the parser's stack is bounded.
    const MAX_DEPTH: usize = 64;
    fn skip_block(toks: &[Tok], i: &mut usize) {
        let mut depth = 1usize;
        while *i < toks.len() && depth > 0 {
            match toks[*i] {
                Tok::Open(_) => depth += 1,
                Tok::Close => depth -= 1,
                _ => {}
            }
            *i += 1;
        }
    }
    fn block(toks: &[Tok], i: &mut usize, file: &Path, depth: usize) -> Vec<Stmt> {
        let mut out = Vec::new();
        let mut words: Vec<String> = Vec::new();
        let mut line = 0;
        while *i < toks.len() {
            let t = &toks[*i];
            *i += 1;
            match t {
                Tok::Word(w, l) => {
                    if words.is_empty() {
                        line = *l;
                    }
                    words.push(w.clone());
                }
                Tok::End => {
                    if !words.is_empty() {
                        out.push(Stmt {
                            words: std::mem::take(&mut words),
                            file: file.to_path_buf(),
                            line,
                            block: None,
                        });
                    }
                }
                Tok::Open(l) => {
                    let inner = if depth < MAX_DEPTH {
                        block(toks, i, file, depth + 1)
                    } else {
                        skip_block(toks, i);
                        Vec::new()
                    };
                    out.push(Stmt {
                        line: if words.is_empty() { *l } else { line },
                        words: std::mem::take(&mut words),
                        file: file.to_path_buf(),
                        block: Some(inner),
                    });
                }
                Tok::Close => return out,
            }
        }
        out
    }
    let toks = tokens(text);
    let mut i = 0;
    block(&toks, &mut i, file, 0)
}

/// `*` and `?` glob match of a whole path (`*` does not cross `/`). Dynamic
/// programming over (pattern, path) prefixes, one row at a time: time is at most
/// pattern × path, whatever a hostile pattern holds, and nothing recurses.
fn glob(pattern: &str, s: &str) -> bool {
    let (p, s) = (pattern.as_bytes(), s.as_bytes());
    // row[j]: p[..i] matches s[..j].
    let mut row = vec![false; s.len() + 1];
    row[0] = true;
    for &pc in p {
        let mut next = vec![false; s.len() + 1];
        if pc == b'*' {
            next[0] = row[0];
            for j in 1..=s.len() {
                next[j] = row[j] || (next[j - 1] && s[j - 1] != b'/');
            }
        } else {
            for j in 1..=s.len() {
                next[j] = row[j - 1] && (pc == b'?' || pc == s[j - 1]);
            }
        }
        row = next;
    }
    row[s.len()]
}

/// The statements of `files[0]` with every `include` replaced by the statements of
/// the files it names (relative to `prefix`).
pub fn expand(files: &[(PathBuf, String)], prefix: &Path) -> Vec<Stmt> {
    /// The most statements an expansion makes: far above any real configuration,
    /// and a bound on what a file that includes itself many times can cost.
    const MAX_STATEMENTS: usize = 200_000;
    struct Walk<'a> {
        files: &'a [(PathBuf, String)],
        prefix: &'a Path,
        /// The files being expanded now: one that includes itself is not entered again.
        stack: Vec<PathBuf>,
        left: usize,
    }
    fn walk(stmts: Vec<Stmt>, w: &mut Walk<'_>) -> Vec<Stmt> {
        let mut out = Vec::new();
        for mut s in stmts {
            if w.left == 0 {
                break;
            }
            w.left -= 1;
            if s.words.first().map(String::as_str) == Some("include") && s.block.is_none() {
                if w.stack.len() >= 16 {
                    continue;
                }
                let pat = s.words.get(1).cloned().unwrap_or_default();
                let pat = if pat.starts_with('/') {
                    pat
                } else {
                    w.prefix.join(pat).display().to_string()
                };
                let named: Vec<(PathBuf, String)> = w
                    .files
                    .iter()
                    .filter(|(f, _)| glob(&pat, &f.display().to_string()) && !w.stack.contains(f))
                    .cloned()
                    .collect();
                for (f, t) in named {
                    // Parsing costs by size: a big file included many times uses up the bound too.
                    w.left = w.left.saturating_sub(t.len() / 64);
                    w.stack.push(f.clone());
                    let inner = parse(&f, &t);
                    out.extend(walk(inner, w));
                    w.stack.pop();
                }
                continue;
            }
            if let Some(b) = s.block.take() {
                s.block = Some(walk(b, w));
            }
            out.push(s);
        }
        out
    }
    let Some((f, t)) = files.first() else { return Vec::new() };
    let mut w = Walk {
        files,
        prefix,
        stack: vec![f.clone()],
        left: MAX_STATEMENTS,
    };
    walk(parse(f, t), &mut w)
}

fn key(s: &Stmt) -> Option<String> {
    let w0 = s.words.first()?.to_ascii_lowercase();
    if w0 == "ssl_conf_command" {
        let k = format!("ssl_conf_command {}", s.words.get(1)?.to_ascii_lowercase());
        return KEYWORDS.contains(&k.as_str()).then_some(k);
    }
    KEYWORDS.contains(&w0.as_str()).then_some(w0)
}

/// The effective TLS directives: (directive statements, anchor statement, notes).
fn effective(stmts: &[Stmt]) -> (Vec<Stmt>, Option<Stmt>, Vec<String>) {
    let mut notes = Vec::new();
    let http = stmts
        .iter()
        .find(|s| s.words.first().map(String::as_str) == Some("http"))
        .and_then(|s| s.block.clone())
        .unwrap_or_default();
    let level = |b: &[Stmt]| -> Vec<Stmt> { b.iter().filter(|s| key(s).is_some()).cloned().collect() };
    let servers: Vec<&Stmt> = http
        .iter()
        .filter(|s| s.words.first().map(String::as_str) == Some("server"))
        .collect();
    let tls = |s: &&Stmt| {
        s.block.as_deref().unwrap_or(&[]).iter().any(|d| {
            let w = &d.words;
            (w.first().map(String::as_str) == Some("listen") && w.iter().any(|x| x == "ssl"))
                || w.first().map(String::as_str) == Some("ssl_certificate")
        })
    };
    let tls_servers: Vec<&&Stmt> = servers.iter().filter(|s| tls(s)).collect();
    let mut chosen = level(&http);
    let mut anchor = http.iter().rfind(|s| key(s).is_some()).cloned();
    match tls_servers.first() {
        Some(srv) => {
            let inner = srv.block.as_deref().unwrap_or(&[]);
            for d in level(inner) {
                chosen.retain(|c| key(c) != key(&d));
                chosen.push(d);
            }
            anchor = inner
                .iter()
                .rfind(|s| key(s).is_some() || s.words.first().is_some_and(|w| w.starts_with("ssl_") || w == "listen"))
                .cloned()
                .or(anchor);
            if tls_servers.len() > 1 {
                notes.push(format!(
                    "{} server blocks listen with ssl: the first ({}:{}) is the one shown",
                    tls_servers.len(),
                    srv.file.display(),
                    srv.line
                ));
            }
        }
        None => notes.push("no server block listens with ssl: the http-level values (or nginx's defaults) are shown".into()),
    }
    (chosen, anchor, notes)
}

/// Where the first server block that listens with `ssl` listens (`listen 443 ssl`,
/// `listen 127.0.0.1:8443 ssl`, `listen [::]:443 ssl`; a wildcard address as the
/// loopback one, a unix socket not at all) and its first `server_name`.
fn endpoint(stmts: &[Stmt]) -> Option<inst::Endpoint> {
    let http = stmts.iter().find(|s| s.words.first().map(String::as_str) == Some("http"))?;
    http.block
        .as_deref()?
        .iter()
        .filter(|s| s.words.first().map(String::as_str) == Some("server"))
        .find_map(|srv| {
            let inner = srv.block.as_deref()?;
            let listen = inner
                .iter()
                .find(|d| d.words.first().map(String::as_str) == Some("listen") && d.words.iter().any(|x| x == "ssl"))?;
            let address = listen_address(listen.words.get(1)?)?;
            let server_name = inner
                .iter()
                .find(|d| d.words.first().map(String::as_str) == Some("server_name"))
                .and_then(|d| d.words.get(1).cloned())
                .filter(|n| !n.is_empty() && n != "_" && !n.contains(['*', '~']));
            Some(inst::Endpoint { address, server_name })
        })
}

/// `host:port` to connect to for nginx's `listen` address (`443`, `*:443`,
/// `0.0.0.0:443`, `[::]:443`, `127.0.0.1:8443`, `localhost:443`), only an address
/// of this machine (`endpoint::local`); `None` for a unix socket or another.
fn listen_address(a: &str) -> Option<String> {
    if a.starts_with("unix:") {
        return None;
    }
    inst::endpoint::local(a)
}

/// nginx's defaults for this version: `ssl_protocols` gained TLSv1.3 and lost
/// TLSv1/1.1 in 1.23.4.
fn default_protocols(version: Option<(u32, u32, u32)>) -> Vec<String> {
    let new = version.is_some_and(|v| v >= (1, 23, 4));
    let v: &[&str] = if new {
        &["TLSv1.2", "TLSv1.3"]
    } else {
        &["TLSv1", "TLSv1.1", "TLSv1.2", "TLSv1.3"]
    };
    v.iter().map(|s| s.to_string()).collect()
}

fn version(nginx: &str) -> Option<(u32, u32, u32)> {
    let inst::Ran { err, .. } = run(nginx, &["-v"]).ok()?;
    let v = err.split("nginx/").nth(1)?.split_whitespace().next()?.to_string();
    let n: Vec<u32> = v.split('.').filter_map(|x| x.parse().ok()).collect();
    Some((*n.first()?, *n.get(1)?, *n.get(2).unwrap_or(&0)))
}

/// The configuration from parsed files (the first one is the main file).
pub fn from_files(files: &[(PathBuf, String)], prefix: &Path, version: Option<(u32, u32, u32)>) -> Parsed {
    let stmts = expand(files, prefix);
    let (chosen, anchor, notes) = effective(&stmts);
    let get = |k: &str| chosen.iter().find(|s| key(s).as_deref() == Some(k));
    let rest = |s: &Stmt, skip: usize| s.words[skip..].join(" ");
    let config = TlsConfig {
        library: inst::LinkedLibrary::Openssl,
        server: true,
        protocols: Some(
            get("ssl_protocols")
                .map(|s| s.words[1..].iter().map(|p| inst::normalise_version(p)).collect())
                .unwrap_or_else(|| default_protocols(version)),
        ),
        cipher_string: Some(get("ssl_ciphers").map(|s| rest(s, 1)).unwrap_or_else(|| "HIGH:!aNULL:!MD5".into())),
        ciphersuites: get("ssl_conf_command ciphersuites").map(|s| rest(s, 2)),
        groups: get("ssl_ecdh_curve").map(|s| rest(s, 1)).filter(|g| g != "auto"),
        server_order: get("ssl_prefer_server_ciphers").is_some_and(|s| s.words.get(1).is_some_and(|v| v == "on")),
        endpoint: endpoint(&stmts),
        connects_to: None,
    };
    let line_text = |s: &Stmt| {
        files
            .iter()
            .find(|(f, _)| *f == s.file)
            .and_then(|(_, t)| t.lines().nth(s.line - 1))
            .unwrap_or("")
            .to_string()
    };
    let main = files.first().map(|(f, _)| f.clone());
    let directives: Vec<Directive> = chosen
        .iter()
        .map(|s| Directive {
            keyword: key(s).unwrap_or_default(),
            file: s.file.clone(),
            line: s.line,
            text: line_text(s),
        })
        .collect();
    // New lines go after the anchor, when it is in the main file.
    let insert_at = anchor.filter(|a| Some(&a.file) == main.as_ref()).map(|a| a.line);
    Parsed::new(config, directives, insert_at, notes)
}

/// Whether `nginx -T` failed only because a file the configuration names (a
/// certificate, a key) is missing or unreadable, after parsing it: the
/// configuration itself loads. A crash, a syntax error or an include loop is not.
fn only_missing_files(ran: &inst::Ran) -> bool {
    if !ran.status.starts_with("exit status") {
        return false;
    }
    let emerg: Vec<&str> = ran.err.lines().filter(|l| l.contains("[emerg]")).collect();
    !emerg.is_empty()
        && emerg.iter().all(|l| {
            (l.contains("cannot load certificate") || l.contains("BIO_new_file") || l.contains("open()"))
                && (l.contains("No such file") || l.contains("Permission denied"))
                && !l.contains(".conf")
        })
}

pub fn read(config_from: Option<&Path>) -> Result<Option<Installed>> {
    let nginx = inst::find_program(&["nginx"]);
    let file = config_from.map(Path::to_path_buf).unwrap_or_else(|| PathBuf::from(DEFAULT_FILE));
    if nginx.is_none() && config_from.is_none() {
        return Ok(None);
    }
    let text = read_config(&file)?;
    let prefix = file.parent().unwrap_or(Path::new("/etc/nginx")).to_path_buf();
    let mut notes = Vec::new();
    let mut files = vec![(file.clone(), text.clone())];
    let mut source = format!("parsed {}", file.display());
    let mut ver = None;
    if let Some(n) = &nginx {
        ver = version(n);
        let f = file.display().to_string();
        let p = format!("{}/", prefix.display());
        let args: Vec<&str> = match config_from {
            Some(_) => vec!["-T", "-q", "-e", "stderr", "-p", &p, "-c", &f],
            None => vec!["-T", "-q", "-e", "stderr"],
        };
        let ran = run(n, &args)?;
        let missing_only = only_missing_files(&ran);
        // What nginx says may quote a file the configuration includes: relayed
        // as that file's name and line only.
        let ran = ran.about(&file);
        let dumped = sections(&ran.out);
        if ran.ok && !dumped.is_empty() {
            files = dumped;
            source = format!("nginx {}", args.join(" "));
        } else if missing_only {
            // A file under review may name certificates that are not there yet (or
            // readable only by root): nginx parsed it, so it is read by itself.
            notes.push(format!(
                "`nginx -T` refused to load a file the configuration names ({}): the file is parsed by itself, without its includes",
                ran.why()
            ));
        } else {
            return Err(crate::error::UsageError::Invalid(format!(
                "nginx cannot load {} (`{} {}`: {}); no findings or patch are made from a configuration nginx itself refuses",
                crate::untrusted::shown(&file.display().to_string()),
                n,
                args.join(" "),
                ran.why()
            ))
            .into());
        }
    } else {
        notes.push("nginx is not installed: the file is parsed by itself, with nginx 1.22's defaults".into());
    }
    let mut parsed = from_files(&files, &prefix, ver);
    notes.append(&mut parsed.notes);
    Ok(Some(Parsed { notes, ..parsed }.installed("nginx", Some(file), source)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shape of real `nginx -T` output: the main file, then an included site.
    const DUMP: &str = "# configuration file /etc/nginx/nginx.conf:\nuser www-data;\nevents {\n\tworker_connections 768;\n}\nhttp {\n\tssl_protocols TLSv1 TLSv1.1 TLSv1.2 TLSv1.3; # Dropping SSLv3\n\tssl_prefer_server_ciphers on;\n\tinclude /etc/nginx/sites-enabled/*;\n}\n\n# configuration file /etc/nginx/sites-enabled/default:\nserver {\n\tlisten 443 ssl;\n\tssl_certificate /etc/ssl/c.pem;\n\tssl_ciphers \"ECDHE-RSA-AES128-SHA:ECDHE-RSA-AES128-GCM-SHA256\";\n\tssl_protocols TLSv1.2;\n}\n\n";

    #[test]
    fn dump_sections_and_effective_values() {
        let files = sections(DUMP);
        assert_eq!(files.len(), 2);
        assert_eq!(files[1].0, PathBuf::from("/etc/nginx/sites-enabled/default"));
        let Parsed {
            config: c,
            directives: d,
            insert_at: at,
            notes,
        } = from_files(&files, Path::new("/etc/nginx"), Some((1, 22, 1)));
        assert_eq!(c.protocols, Some(vec!["TLSv1.2".to_string()]));
        assert_eq!(c.cipher_string.as_deref(), Some("ECDHE-RSA-AES128-SHA:ECDHE-RSA-AES128-GCM-SHA256"));
        assert!(c.server_order);
        assert_eq!(c.ciphersuites, None);
        let ciphers = d.iter().find(|x| x.keyword == "ssl_ciphers").unwrap();
        assert_eq!(ciphers.file, PathBuf::from("/etc/nginx/sites-enabled/default"));
        assert_eq!(ciphers.line, 4);
        assert!(ciphers.text.contains("ECDHE-RSA-AES128-SHA"));
        // The server's ssl_protocols overrides http's, from the site file.
        let p = d.iter().find(|x| x.keyword == "ssl_protocols").unwrap();
        assert_eq!(p.line, 5);
        // The anchor is in an included file, not the main one.
        assert_eq!(at, None);
        assert!(notes.is_empty(), "{notes:?}");
    }

    #[test]
    fn defaults_when_unset() {
        let files = vec![(
            PathBuf::from("/n.conf"),
            "http {\n server {\n  listen 443 ssl;\n }\n}\n".to_string(),
        )];
        let Parsed {
            config: c,
            directives: d,
            insert_at: at,
            ..
        } = from_files(&files, Path::new("/"), Some((1, 22, 1)));
        assert_eq!(c.cipher_string.as_deref(), Some("HIGH:!aNULL:!MD5"));
        assert_eq!(c.protocols.unwrap().len(), 4);
        assert!(!c.server_order);
        assert!(d.is_empty());
        assert_eq!(at, Some(3));
        assert!(glob("/etc/nginx/sites-enabled/*", "/etc/nginx/sites-enabled/default"));
        assert!(!glob("/etc/nginx/*.conf", "/etc/nginx/a/b.conf"));
    }

    /// The real nginx: `nginx -T -c FILE` of a file with a certificate.
    #[test]
    fn real_nginx_dump() {
        if inst::find_program(&["nginx"]).is_none() {
            crate::testing::missing("nginx is not installed");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let st = std::process::Command::new("openssl")
            .args([
                "req",
                "-x509",
                "-nodes",
                "-days",
                "1",
                "-subj",
                "/CN=localhost",
                "-newkey",
                "rsa:2048",
            ])
            .arg("-keyout")
            .arg(d.join("key.pem"))
            .arg("-out")
            .arg(d.join("cert.pem"))
            .stderr(std::process::Stdio::null())
            .status()
            .unwrap();
        assert!(st.success());
        let conf = format!(
            "pid {d}/nginx.pid;\nerror_log {d}/error.log;\nevents {{}}\nhttp {{\n    access_log off;\n    server {{\n        listen 127.0.0.1:8443 ssl;\n        ssl_certificate {d}/cert.pem;\n        ssl_certificate_key {d}/key.pem;\n        ssl_protocols TLSv1.2;\n        ssl_ciphers ECDHE-RSA-AES256-SHA:ECDHE-RSA-AES128-GCM-SHA256;\n        ssl_prefer_server_ciphers on;\n    }}\n}}\n",
            d = d.display()
        );
        let f = d.join("nginx.conf");
        std::fs::write(&f, conf).unwrap();
        let i = read(Some(&f)).unwrap().unwrap();
        assert!(i.source.starts_with("nginx -T"), "{i:?}");
        let inst::Config::Tls(c) = &i.config else { panic!() };
        assert_eq!(c.cipher_string.as_deref(), Some("ECDHE-RSA-AES256-SHA:ECDHE-RSA-AES128-GCM-SHA256"));
        assert!(c.server_order);
        assert_eq!(i.directives.iter().find(|x| x.keyword == "ssl_ciphers").unwrap().line, 11);
        assert_eq!(i.insert_at, Some(12));
    }
}
