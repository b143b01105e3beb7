//! The command line and the documents as a newcomer meets them: every command the
//! README shows parses, every link resolves, singular flags work, a misplaced flag
//! names the right one, and the completions and man pages made from the same clap
//! definitions work in a real bash and a real `man`.

mod common;

use assert_cmd::Command;
use std::path::{Path, PathBuf};

fn cb() -> Command {
    let mut c = Command::cargo_bin("cipherbench").unwrap();
    c.env_remove("NO_COLOR");
    c
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn documents() -> Vec<PathBuf> {
    let mut docs = vec![root().join("README.md")];
    let mut more: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .expect("docs/")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    more.sort();
    docs.extend(more);
    docs
}

/// Splits a command line as a shell would for these simple cases (single quotes).
fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    for c in line.chars() {
        match c {
            '\'' => quoted = !quoted,
            ' ' if !quoted => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
            c => cur.push(c),
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

#[test]
fn readme_is_short_and_every_link_resolves() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    assert!(
        readme.len() <= 9 * 1024,
        "README.md is {} bytes; keep it near 8 KB and move detail to docs/",
        readme.len()
    );
    for doc in documents() {
        let text = std::fs::read_to_string(&doc).unwrap();
        let dir = doc.parent().unwrap();
        for part in text.split("](").skip(1) {
            let target = &part[..part.find(')').unwrap_or(part.len())];
            if target.starts_with("http") || target.starts_with('#') {
                continue;
            }
            let file = target.split('#').next().unwrap();
            assert!(dir.join(file).exists(), "{}: link to {target} goes nowhere", doc.display());
        }
    }
}

#[test]
fn every_command_the_readme_shows_parses() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let mut checked = 0;
    for span in readme.split('`').skip(1).step_by(2) {
        if !span.starts_with("cipherbench") || span.contains('|') || span.contains("...") {
            continue;
        }
        let mut args = words(span);
        args.remove(0);
        // `--help` after the arguments: clap checks every flag before it, runs nothing.
        args.push("--help".into());
        let out = cb().args(&args).output().unwrap();
        assert!(
            out.status.success(),
            "`{span}` does not parse: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        checked += 1;
    }
    assert!(checked >= 10, "only {checked} commands found in the README");
}

#[test]
fn singular_flags_work_and_a_misplaced_flag_names_the_right_one() {
    let dir = tempfile::tempdir().unwrap();
    let out = cb()
        .args([
            "file",
            "--cipher",
            "aes-256-cbc",
            "--size",
            "64k",
            "--reps",
            "1",
            "--no-store",
            "--json",
        ])
        .env("TMPDIR", dir.path())
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let doc: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let algs: Vec<&str> = doc["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["subject"]["algorithm"].as_str())
        .collect();
    assert!(!algs.is_empty() && algs.iter().all(|a| *a == "aes-256-cbc"), "{algs:?}");

    let err = cb()
        .args(["tls", "--host", "example.org"])
        .assert()
        .code(2)
        .get_output()
        .stderr
        .clone();
    let err = String::from_utf8_lossy(&err);
    assert!(err.contains("--connect HOST:PORT"), "{err}");
    assert!(!err.contains("--no-store"), "clap's guess should give way: {err}");
    let err = cb().args(["run", "--full-matrix"]).assert().code(2).get_output().stderr.clone();
    assert!(String::from_utf8_lossy(&err).contains("cipherbench ssh, cipherbench tls"));
}

fn have(tool: &str) -> bool {
    std::process::Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

#[test]
fn bash_completion_completes_subcommands_and_flags() {
    if !have("bash") {
        eprintln!("SKIPPED: no bash");
        return;
    }
    let bin = assert_cmd::cargo::cargo_bin("cipherbench");
    let script = format!(
        r#"source <("{bin}" completions bash) || exit 3
complete -p cipherbench || exit 4
COMP_WORDS=(cipherbench tl); COMP_CWORD=1; COMP_LINE="cipherbench tl"; COMP_POINT=14
_cipherbench cipherbench tl cipherbench; echo "sub: ${{COMPREPLY[*]}}"
COMP_WORDS=(cipherbench tls --sui); COMP_CWORD=2; COMP_LINE="cipherbench tls --sui"; COMP_POINT=21
_cipherbench cipherbench --sui tls; echo "flag: ${{COMPREPLY[*]}}""#,
        bin = bin.display()
    );
    let out = std::process::Command::new("bash").args(["-c", &script]).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text} {}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("-F _cipherbench cipherbench"), "{text}");
    assert!(text.lines().any(|l| l == "sub: tls"), "{text}");
    assert!(text.lines().any(|l| l.starts_with("flag: ") && l.contains("--suites")), "{text}");
    for shell in ["zsh", "fish"] {
        let out = cb().args(["completions", shell]).assert().success().get_output().stdout.clone();
        assert!(String::from_utf8_lossy(&out).contains("cipherbench"), "{shell}");
    }
}

#[test]
fn man_pages_render_with_man() {
    let dir = tempfile::tempdir().unwrap();
    cb().args(["man", "--dir"]).arg(dir.path()).assert().success();
    for page in [
        "cipherbench.1",
        "cipherbench-tls.1",
        "cipherbench-ssh.1",
        "cipherbench-completions.1",
    ] {
        assert!(dir.path().join(page).is_file(), "{page} missing");
    }
    let main = std::fs::read_to_string(dir.path().join("cipherbench.1")).unwrap();
    assert!(
        main.starts_with(".ie") || main.contains(".TH cipherbench 1"),
        "{}",
        &main[..200.min(main.len())]
    );
    if !have("man") {
        common::missing("man is not installed");
        return;
    }
    let out = std::process::Command::new("man")
        .args(["-l", "-P", "cat"])
        .arg(Path::new(dir.path()).join("cipherbench-tls.1"))
        .env("MANWIDTH", "80")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("--suites") && text.contains("--connect"), "{text}");
}
