//! Issue 27's "never below the installed defaults" on this machine (Debian 12:
//! OpenSSH 9.2, OpenSSL 3.0, nginx 1.22; tests/debian13.rs does the same against
//! Debian 13's): the lines `run --policy modern` emits for sshd and nginx keep every
//! default of the installed software that the policy accepts, and sshd's add
//! nothing its defaults leave out; a default OpenSSL client gets from nginx with
//! the lines a group at least as good as with nginx's own default.

mod common;

use common::check::{s_client, serve, server_port};
use common::json_of;
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

fn policy_list(list: &str) -> Vec<String> {
    let path = format!("{}/data/policies/modern.toml", env!("CARGO_MANIFEST_DIR"));
    let v: toml::Value = toml::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    v[list]["only"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap().to_string())
        .collect()
}

fn value_list(lines: &[String], keyword: &str) -> Vec<String> {
    let l = lines
        .iter()
        .find_map(|l| l.strip_prefix(keyword).and_then(|v| v.strip_prefix(' ')))
        .unwrap_or_else(|| panic!("no {keyword} in {lines:?}"));
    l.trim_end_matches(';')
        .split([',', ':', '/'])
        .map(|x| x.trim_start_matches(['*', '?']).to_string())
        .collect()
}

/// The group a default `openssl s_client` ends on with 127.0.0.1:`port`.
fn group(port: u16) -> String {
    for _ in 0..10 {
        let out = Command::new("openssl")
            .args(["s_client", "-connect", &format!("127.0.0.1:{port}")])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
        let g = text.lines().find_map(|l| {
            l.strip_prefix("Negotiated TLS1.3 group: ")
                .or_else(|| l.strip_prefix("Server Temp Key: ").and_then(|v| v.split(',').next()))
                .or_else(|| l.strip_prefix("Peer Temp Key: ").and_then(|v| v.split(',').next()))
        });
        if let Some(g) = g {
            return g.trim().to_string();
        }
        std::thread::sleep(Duration::from_millis(300));
    }
    panic!("no handshake with nginx on {port}");
}

fn nginx_conf(d: &Path, port: u16, tls: &str) -> String {
    format!(
        "pid {d}/nginx.pid;\nerror_log {d}/error.log;\ndaemon off;\nevents {{}}\nhttp {{\n    access_log off;\n    \
         client_body_temp_path {d}/body;\n    proxy_temp_path {d}/proxy;\n    server {{\n        \
         listen 127.0.0.1:{port} ssl;\n        ssl_certificate {d}/cert.pem;\n        ssl_certificate_key {d}/key.pem;\n\
         {tls}\n    }}\n}}\n",
        d = d.display()
    )
}

/// The group a default client gets from a real nginx with `tls` (after `nginx -t`).
fn nginx_group(d: &Path, tls: &str) -> String {
    let port = server_port();
    let file = d.join("nginx.conf");
    std::fs::write(&file, nginx_conf(d, port.get(), tls)).unwrap();
    let nginx = || {
        let mut c = Command::new("nginx");
        c.arg("-p").arg(d).arg("-e").arg(d.join("error.log")).arg("-c").arg(&file);
        c
    };
    let t = nginx().arg("-t").output().unwrap();
    assert!(t.status.success(), "nginx -t refused {tls}: {}", String::from_utf8_lossy(&t.stderr));
    let _n = serve("nginx", &port, &[&file], |_| nginx());
    group(port.get())
}

#[test]
fn emitted_lines_never_undercut_this_machines_defaults() {
    for tool in ["sshd", "nginx", "ssh-keygen"] {
        let found = ["/usr/sbin/", "/usr/bin/"]
            .iter()
            .any(|p| Path::new(&format!("{p}{tool}")).exists());
        if !found {
            return common::missing(&format!("{tool}, for the installed defaults"));
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    // Each protocol measured on its own (a shared budget may leave one out), then
    // `recommend` on that run, as a user would.
    let cb = |target: &str| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_cipherbench"));
        c.arg("--db").arg(d.join(format!("{target}.sqlite")));
        c
    };
    let lines = |sub: &[&str], target: &str| -> Vec<String> {
        let run = cb(target)
            .args(sub)
            .args(["--budget", "20s", "--quiet", "--export-json"])
            .arg(d.join(format!("{target}.json")))
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&run.stderr).into_owned();
        assert!(run.status.success(), "{said}");
        recommend(cb(target), "modern", target, &said)
    };

    // sshd: `sshd -T` with an empty configuration is what it offers by default.
    let key = d.join("hostkey");
    let k = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-f"])
        .arg(&key)
        .output()
        .unwrap();
    assert!(k.status.success());
    let t = Command::new("/usr/sbin/sshd")
        .args(["-T", "-f", "/dev/null", "-h"])
        .arg(&key)
        .output()
        .unwrap();
    assert!(t.status.success(), "{}", String::from_utf8_lossy(&t.stderr));
    let defaults = String::from_utf8_lossy(&t.stdout).into_owned();
    // A small measurement (the lists are every allowed option of the host's either way).
    let ssh = [
        "ssh",
        "--ciphers",
        "aes128-ctr",
        "--macs",
        "hmac-sha2-256-etm@openssh.com",
        "--kex",
        "curve25519-sha256",
    ];
    let sshd = lines(&ssh, "sshd");
    for (keyword, word, list) in [
        ("KexAlgorithms", "kexalgorithms ", "ssh_kex"),
        ("Ciphers", "ciphers ", "ssh_ciphers"),
        ("MACs", "macs ", "ssh_macs"),
    ] {
        // The keyword in any case: OpenSSH 10.6's `sshd -T` prints `KexAlgorithms`.
        let default: Vec<&str> = defaults
            .lines()
            .find_map(|l| {
                l.split_once(' ')
                    .filter(|(k, _)| k.eq_ignore_ascii_case(word.trim()))
                    .map(|(_, v)| v)
            })
            .unwrap()
            .split(',')
            .collect();
        // A list that would restate sshd's default is a note: every default is then
        // one the policy accepts.
        let note = format!("# {keyword}: the default already does this");
        if sshd.contains(&note) {
            assert!(!sshd.iter().any(|l| l.starts_with(&format!("{keyword} "))), "{sshd:?}");
            for a in &default {
                assert!(policy_list(list).iter().any(|p| p == a), "{note}, but modern refuses {a}");
            }
            continue;
        }
        let emitted = value_list(&sshd, keyword);
        for a in &emitted {
            assert!(
                default.contains(&a.as_str()),
                "{keyword}: {a} is not among sshd's defaults {default:?}"
            );
        }
        for a in default.iter().filter(|a| policy_list(list).iter().any(|p| p == *a)) {
            assert!(
                emitted.iter().any(|e| e == a),
                "{keyword}: the default {a} modern accepts is missing: {emitted:?}"
            );
        }
    }
    let conf = d.join("sshd_config");
    std::fs::write(&conf, format!("HostKey {}\n{}\n", key.display(), sshd.join("\n"))).unwrap();
    let t = Command::new("/usr/sbin/sshd").arg("-t").arg("-f").arg(&conf).output().unwrap();
    assert!(
        t.status.success(),
        "sshd -t refused {sshd:?}: {}",
        String::from_utf8_lossy(&t.stderr)
    );

    // nginx: the lines load, and a default client gets what it gets with nginx's
    // own default (`ssl_ecdh_curve auto`).
    let nginx = lines(&["tls", "--suites", "TLS_AES_128_GCM_SHA256", "--groups", "x25519"], "nginx");
    // OpenSSL 3.0's default groups (x25519:secp256r1:x448:secp521r1:secp384r1) that modern accepts.
    for g in ["x25519", "secp256r1", "secp384r1"] {
        let emitted = value_list(&nginx, "ssl_ecdh_curve");
        assert!(emitted.iter().any(|e| e.eq_ignore_ascii_case(g)), "{g} missing: {nginx:?}");
    }
    let tls = |body: &str| format!("        {body}");
    let (cert, pkey) = common::p256_cert(d);
    assert_eq!((cert, pkey), (d.join("cert.pem"), d.join("key.pem")));
    let by_default = nginx_group(d, &tls("ssl_protocols TLSv1.2 TLSv1.3;"));
    let with_lines = nginx_group(d, &tls(&nginx.join("\n        ")));
    assert_eq!(with_lines, by_default, "{nginx:?}");

    // A policy that accepts exactly the installed libssl's default groups (ffdhe
    // included; OpenSSL 3.0's list, or 3.5 and later's with X25519MLKEM768 first, as
    // the run found them): `ssl_ecdh_curve` would restate `auto`, so it is a note,
    // and nginx with the lines gives a default client what nginx's default gives it.
    let export: Value = serde_json::from_slice(&std::fs::read(d.join("nginx.json")).unwrap()).unwrap();
    let found = export["run"]["capabilities"]["openssl"]["default_groups"]
        .as_array()
        .or_else(|| export["capabilities"]["openssl"]["default_groups"].as_array())
        .map(|a| a.iter().filter_map(Value::as_str).collect::<Vec<_>>());
    let defaults = found.unwrap_or_else(|| OPENSSL3_DEFAULT_GROUPS.to_vec());
    let policy = d.join("auto-groups.toml");
    std::fs::write(&policy, auto_policy(&defaults)).unwrap();
    let auto = recommend(cb("nginx"), policy.to_str().unwrap(), "nginx", "");
    assert!(
        auto.contains(&"# ssl_ecdh_curve: the default (auto) already does this".to_string()),
        "{auto:?}"
    );
    assert!(!auto.iter().any(|l| l.starts_with("ssl_ecdh_curve ")), "{auto:?}");
    assert_eq!(nginx_group(d, &tls(&auto.join("\n        "))), by_default, "{auto:?}");
}

/// OpenSSL 3.0's default groups (ssl/t1_lib.c's `supported_groups_default`), for
/// an export that does not say which groups the installed libssl's default has.
const OPENSSL3_DEFAULT_GROUPS: &[&str] = &[
    "x25519",
    "secp256r1",
    "x448",
    "secp521r1",
    "secp384r1",
    "ffdhe2048",
    "ffdhe3072",
    "ffdhe4096",
    "ffdhe6144",
    "ffdhe8192",
];

/// The built-in `none` policy, its groups limited to `groups`.
fn auto_policy(groups: &[&str]) -> String {
    let path = format!("{}/data/policies/none.toml", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(path)
        .unwrap()
        .replace("name = \"none\"", "name = \"auto-groups\"");
    let quoted: Vec<String> = groups.iter().map(|g| format!("\"{g}\"")).collect();
    format!("{text}\n[groups]\nonly = [{}]\n", quoted.join(", "))
}

/// `recommend --policy POLICY --for TARGET --json` on `cb`'s history: the target's lines.
fn recommend(mut cb: Command, policy: &str, target: &str, said: &str) -> Vec<String> {
    let out = cb
        .args(["recommend", "--policy", policy, "--for", target, "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let doc = json_of(&out.stdout);
    let r = doc["recommendations"].as_array().unwrap().iter().find(|r| r["target"] == target);
    let r = r.unwrap_or_else(|| panic!("no {target} lines: {:#}\n{said}", doc["recommendations"]));
    r["lines"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .map(str::to_string)
        .collect()
}

/// `check`'s "now" for a running nginx is a real handshake by the installed
/// libssl's default client: the version, suite and group a default `openssl
/// s_client` gets; with nginx stopped, the model, said so.
#[test]
fn check_now_is_a_real_handshake_with_a_running_nginx() {
    if !Path::new("/usr/sbin/nginx").exists() {
        return common::missing("nginx, for check against a running server");
    }
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    common::p256_cert(d);
    let port = server_port();
    let file = d.join("nginx.conf");
    std::fs::write(&file, nginx_conf(d, port.get(), "        ssl_protocols TLSv1.2 TLSv1.3;")).unwrap();
    let check = || {
        let out = Command::new(env!("CARGO_BIN_EXE_cipherbench"))
            .args(["check", "--json", "--no-store", "--for", "nginx", "--budget", "5s", "--config-from"])
            .arg(&file)
            .output()
            .unwrap();
        assert!(matches!(out.status.code(), Some(0 | 1)), "{}", String::from_utf8_lossy(&out.stderr));
        json_of(&out.stdout)["diffs"][0].clone()
    };
    let nginx = {
        serve("nginx", &port, &[&file], |_| {
            let mut c = Command::new("nginx");
            c.arg("-p").arg(d).arg("-e").arg(d.join("error.log")).arg("-c").arg(&file);
            c
        })
    };
    let port = port.get();
    let diff = check();
    let (version, suite) = s_client(port, &[]).unwrap();
    let real_group = group(port);
    let peer = diff["peer"].as_str().unwrap();
    assert!(peer.contains(&format!("a real handshake with 127.0.0.1:{port}")), "{diff:#}");
    assert_eq!(diff["now"]["version"], version.as_str(), "{diff:#}");
    assert_eq!(diff["now"]["openssl_name"], suite.as_str(), "{diff:#}");
    let now_group = diff["now"]["group"].as_str().unwrap_or_default();
    let same = |a: &str, b: &str| a.eq_ignore_ascii_case(b) || (a.eq_ignore_ascii_case("prime256v1") && b == "secp256r1");
    assert!(same(&real_group, now_group), "s_client: {real_group}, check: {diff:#}");
    drop(nginx);
    let diff = check();
    let peer = diff["peer"].as_str().unwrap();
    assert!(peer.contains("modelled") && peer.contains("not reachable"), "{diff:#}");
    assert_eq!(diff["now"]["version"], version.as_str(), "{diff:#}");
}
