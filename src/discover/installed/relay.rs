//! What a configuration tool said (`sshd -T`, `ssh -G`, `nginx -T`, `apache2 -t`,
//! `haproxy -c` …), made fit to relay: nothing from a file the user did not name
//! reaches the output.
//!
//! A tool that refuses a configuration quotes the offending text, and the text
//! may come from a file the named one `Include`s: `Include /etc/shadow` in an
//! sshd_config makes sshd print each shadow line as a "Bad configuration
//! option". So every line of the tool's stderr that cites a place (file and
//! line) in another file is replaced by that place alone, and the lines that
//! follow it without a place of their own (Apache's second line, say) are left
//! out, up to the next line that cites a place. Lines about the named file, and
//! lines that cite no place before any other file was cited, are kept.
//!
//! The places each tool prints, as seen from the real programs:
//! - sshd, ssh: `FILE: line N: Bad configuration option: TEXT`, `FILE line N: …`
//! - nginx: `… unknown directive "TEXT" in FILE:N`
//! - Apache: `AH00526: Syntax error on line N of FILE:` then `Invalid command 'TEXT' …`
//! - HAProxy: `… parsing [FILE:N] : unknown keyword 'TEXT' …`
//! - stunnel: `[!] FILE:N: "TEXT": …`

use std::path::Path;
#[cfg(test)]
use std::path::PathBuf;

/// The places a line of a tool's message cites: (file as printed, line). All of
/// them: quoted text could itself look like a place in the named file.
fn places(line: &str) -> Vec<(String, usize)> {
    let mut v: Vec<(String, usize)> = apache_place(line).into_iter().chain(ssh_place(line)).collect();
    v.extend(colon_places(line));
    v
}

/// `on line N of FILE:` (Apache).
fn apache_place(line: &str) -> Option<(String, usize)> {
    let (_, rest) = line.split_once("on line ")?;
    let (n, rest) = rest.split_once(" of ")?;
    let file = rest.trim().trim_end_matches(':').trim();
    Some((file.to_string(), n.trim().parse().ok()?)).filter(|(f, _)| !f.is_empty())
}

/// `FILE: line N:` or `FILE line N:` at the start of the line (sshd, ssh). A
/// path may hold blanks; another first word may not.
fn ssh_place(line: &str) -> Option<(String, usize)> {
    let at = line.find(" line ")?;
    let file = line[..at].trim().trim_end_matches(':');
    let digits: String = line[at + 6..].chars().take_while(char::is_ascii_digit).collect();
    if file.is_empty() || (file.contains(' ') && !file.starts_with('/')) || digits.is_empty() {
        return None;
    }
    Some((file.to_string(), digits.parse().ok()?))
}

/// Every `FILE:N` where FILE is a path (it holds a '/'): nginx's `in FILE:N`,
/// HAProxy's `[FILE:N]`, stunnel's `FILE:N:`.
fn colon_places(line: &str) -> Vec<(String, usize)> {
    let stop = |c: char| c.is_whitespace() || matches!(c, '[' | ']' | '"' | '\'' | '(' | ')' | ',' | '`');
    let mut found = Vec::new();
    for token in line.split(stop) {
        let mut rest = token;
        while let Some(i) = rest.rfind(':') {
            let (file, after) = (&rest[..i], &rest[i + 1..]);
            let digits: String = after.chars().take_while(char::is_ascii_digit).collect();
            if !digits.is_empty() && file.contains('/') && !file.contains(':') {
                if let Ok(n) = digits.parse() {
                    found.push((file.to_string(), n));
                }
                break;
            }
            rest = file;
        }
    }
    found
}

/// The one file a place may cite with its text shown: `named`, compared as the
/// real files (symbolic links resolved) when both exist, else as absolute paths.
fn same_file(cited: &str, named: &Path) -> bool {
    let cited = Path::new(cited);
    let cited = if cited.is_absolute() {
        cited.to_path_buf()
    } else {
        // A tool prints a relative include against the named file's directory.
        named.parent().map_or_else(|| cited.to_path_buf(), |d| d.join(cited))
    };
    let real = |p: &Path| std::fs::canonicalize(p).ok();
    match (real(&cited), real(named)) {
        (Some(a), Some(b)) => a == b,
        _ => std::path::absolute(&cited).ok() == std::path::absolute(named).ok(),
    }
}

/// `said` (a tool's stderr about the configuration `named`) with every line that
/// quotes another file replaced by the file and line it came from.
pub fn relay(said: &str, named: &Path) -> String {
    let mut out: Vec<String> = Vec::new();
    // Inside the lines that follow a place in another file.
    let mut elsewhere = false;
    for line in said.lines() {
        let cited = places(line);
        match cited.iter().find(|(file, _)| !same_file(file, named)) {
            Some((file, n)) => {
                elsewhere = true;
                out.push(format!(
                    "[a message about {} line {n}; its text is not shown: that file was not named]",
                    crate::untrusted::shown(file)
                ));
            }
            None if !cited.is_empty() => {
                elsewhere = false;
                out.push(line.to_string());
            }
            None if elsewhere => {}
            None => out.push(line.to_string()),
        }
    }
    // One message per place, in order.
    out.dedup();
    let mut text = out.join("\n");
    if said.ends_with('\n') && !text.is_empty() {
        text.push('\n');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    const MARK: &str = "SECRET-MARKER";

    fn named() -> (tempfile::TempDir, PathBuf) {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("main.conf");
        std::fs::write(&f, "x\n").unwrap();
        (d, f)
    }

    #[test]
    fn each_tools_place_in_another_file_hides_its_text() {
        let (_d, f) = named();
        for said in [
            format!("/etc/shadow: line 1: Bad configuration option: root:{MARK}:1:2"),
            format!("/etc/shadow line 2: Bad SSH2 cipher spec '{MARK}'."),
            format!("2026/11/29 06:04:40 [emerg] 1#1: unknown directive \"{MARK}\" in /etc/shadow:1"),
            format!("AH00526: Syntax error on line 1 of /etc/shadow:\nInvalid command '{MARK}', perhaps misspelled"),
            format!("[ALERT]    (1) : config : parsing [/etc/shadow:1]: unknown keyword '{MARK}' out of section."),
            format!("[!] /etc/shadow:1: \"{MARK} one\": No '=' found"),
        ] {
            let r = relay(&said, &f);
            assert!(!r.contains(MARK), "{said:?} → {r:?}");
            assert!(r.contains("/etc/shadow line "), "{said:?} → {r:?}");
        }
    }

    #[test]
    fn the_named_files_own_lines_and_placeless_lines_are_kept() {
        let (_d, f) = named();
        let own = format!("{}: line 3: Bad configuration option: Chipers", f.display());
        assert_eq!(relay(&own, &f), own);
        let plain = "Could not load host key: /etc/ssh/ssh_host_rsa_key\nsshd: no hostkeys available -- exiting.";
        assert_eq!(relay(plain, &f), plain);
        // After a place in another file, placeless lines are its own until a new place.
        let mixed = format!(
            "AH00526: Syntax error on line 1 of /etc/shadow:\nInvalid command '{MARK}'\n[!] {}:2: \"include = /etc/shadow\": Failed to include a file",
            f.display()
        );
        let r = relay(&mixed, &f);
        assert!(!r.contains(MARK), "{r}");
        assert!(r.contains("Failed to include a file"), "{r}");
        // A relative place is the named file's neighbour, and a link to the named file is it.
        let link = f.with_file_name("link.conf");
        std::os::unix::fs::symlink(&f, &link).unwrap();
        assert!(same_file("main.conf", &f));
        assert!(same_file(&link.display().to_string(), &f));
        assert!(!same_file("other.conf", &f));
        // Quoted text that looks like a place in the named file does not make a
        // line about another file shown.
        let spoof = format!("[emerg] unknown directive \"{MARK} {}:1\" in /etc/shadow:1", f.display());
        assert!(!relay(&spoof, &f).contains(MARK));
        let spaced = format!("/tmp/a b/inc.conf line 2: Bad SSH2 cipher spec '{MARK}'.");
        assert!(!relay(&spaced, &f).contains(MARK));
    }

    #[test]
    fn things_that_are_not_places_stay() {
        let (_d, f) = named();
        for l in [
            "error:80000002:system library::No such file or directory:calling fopen(/x/cert.pem, r)",
            "2026/11/29 06:04:40 [emerg] 1#1: cannot load certificate \"/x/cert.pem\"",
            "nginx: configuration file /etc/nginx/nginx.conf test failed",
        ] {
            assert_eq!(relay(l, &f), l);
        }
    }
}
