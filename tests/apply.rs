//! deploy/ansible/apply.yml with the real engine, over real SSH to private sshds on
//! 127.0.0.N (the harness of tests/fleet.rs, `tests/common/fleet.rs`):
//!
//! - a class line the controller's client cannot use (`Ciphers aes128-cbc`, valid
//!   for `sshd -t`) on the second host of three: the canary host takes its good
//!   lines, the bad host rolls itself back (its old file back, sshd reloaded) and
//!   still accepts a new login, the play fails naming it and the third host is not
//!   touched; with good lines every host accepts a new login after the reload, and
//!   a second run changes nothing;
//! - copies of the stock Debian 12 and Debian 13 `sshd_config` and `nginx.conf`
//!   (tests/fixtures/), each served by a real sshd and a real nginx with TLS: the
//!   lines go into an sshd drop-in and in place of nginx's own ssl_* directives,
//!   pass `sshd -t`/`nginx -t`, take effect (`sshd -T`, `nginx -T`), a new login and
//!   a TLS handshake work; an nginx line no client here can use is rolled back.
//!
//! The host's vars come from `cipherbench fleet --ansible-vars` over real exports;
//! the tests then set each host's sshd lines.
//!
//! Also here (to keep tests/fleet.rs within its 3 minutes): profile.yml's own
//! guard, an export over `cipherbench_max_export_bytes` is not fetched.

#[path = "common/fleet.rs"]
mod hosts;
#[path = "common/ports.rs"]
mod ports;

use hosts::*;
use serde_json::{json, Value};
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const GOOD_SSHD: &[&str] = &[
    "Ciphers chacha20-poly1305@openssh.com,aes128-gcm@openssh.com,aes256-gcm@openssh.com",
    "MACs hmac-sha2-256-etm@openssh.com,hmac-sha2-512-etm@openssh.com",
    "KexAlgorithms curve25519-sha256,curve25519-sha256@libssh.org",
];

/// Host vars for every host of `f` from `cipherbench fleet --ansible-vars` over a
/// real export (one copy per host, each its own run).
fn fleet_vars(f: &Fleet) {
    let results = f.tmp.path().join("results");
    std::fs::create_dir_all(&results).unwrap();
    let base = f.tmp.path().join("base.json");
    let st = Command::new(bin())
        .args(["speed", "aes-128-gcm", "chacha20-poly1305", "--bytes", "16k", "--budget", "1s"])
        .args(["--no-store", "--quiet", "--export-json"])
        .arg(&base)
        .status()
        .unwrap();
    assert!(st.success());
    let text = std::fs::read_to_string(&base).unwrap();
    for h in &f.hosts {
        let mut v: Value = serde_json::from_str(&text).unwrap();
        v["run"]["id"] = format!("run-{}", h.addr).into();
        std::fs::write(results.join(format!("{}.json", h.addr)), v.to_string()).unwrap();
    }
    let out = Command::new(bin())
        .arg("fleet")
        .arg(&results)
        .args(["--quiet", "--no-store", "--ansible-vars"])
        .arg(f.inventory_dir())
        .output()
        .unwrap();
    assert!(out.status.success(), "fleet: {}", text_of(&out));
}

fn text_of(o: &std::process::Output) -> String {
    text(o)
}

fn vars_path(f: &Fleet, host: Ipv4Addr) -> PathBuf {
    f.inventory_dir().join(format!("host_vars/{host}.json"))
}

/// Sets one list of lines (`sshd` or `nginx`) in a host's vars, as the writer
/// writes them (strings Ansible never templates).
fn set_lines(f: &Fleet, host: Ipv4Addr, target: &str, lines: &[&str]) {
    let p = vars_path(f, host);
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
    v[format!("cipherbench_class_{target}_lines")] = lines.iter().map(|l| json!({"__ansible_unsafe": l})).collect();
    std::fs::write(&p, serde_json::to_vec_pretty(&v).unwrap()).unwrap();
}

/// Backups (`NAME.PID.DATE~`) of `file` in its directory.
fn backups(file: &Path) -> Vec<String> {
    let name = file.file_name().unwrap().to_string_lossy().to_string();
    std::fs::read_dir(file.parent().unwrap())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().to_string())
        .filter(|n| n.starts_with(&format!("{name}.")) && n.ends_with('~'))
        .collect()
}

fn recap_line<'a>(out: &'a str, host: &str) -> Option<&'a str> {
    out.lines().find(|l| l.starts_with(&format!("{host} ")) && l.contains(" : ok="))
}

fn skip() -> Option<PathBuf> {
    let Some(sshd) = sshd_path() else {
        missing("no sshd");
        return None;
    };
    if !venv_ok() {
        return None;
    }
    Some(sshd)
}

#[test]
fn a_line_the_controller_cannot_use_is_rolled_back_and_stops_the_rollout() {
    let Some(sshd) = skip() else { return };
    let f = Fleet::start(&sshd, &[11, 12, 13]);
    let missing_nginx = f.tmp.path().join("no-nginx.conf");
    f.write_inventory_with(|h| {
        format!(
            "cipherbench_sshd_config={} cipherbench_nginx_conf={} cipherbench_sshd_reload_command='{}'",
            h.config().display(),
            missing_nginx.display(),
            h.reload_command()
        )
    });
    fleet_vars(&f);
    let [a, b, c] = [0, 1, 2].map(|i| f.hosts[i].addr);
    set_lines(&f, a, "sshd", GOOD_SSHD);
    // Valid for `sshd -t`, but the controller's client offers no CBC cipher.
    set_lines(&f, b, "sshd", &["Ciphers aes128-cbc"]);
    set_lines(&f, c, "sshd", GOOD_SSHD);
    let before: Vec<Vec<u8>> = f.hosts.iter().map(|h| std::fs::read(h.config()).unwrap()).collect();
    let extra = json!({"cipherbench_rollback_seconds": 15});

    let t0 = Instant::now();
    let out = f.ansible("apply.yml", &extra, &[]);
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    eprintln!("apply.yml with one bad host: {:.0?}", t0.elapsed());
    assert!(!out.status.success(), "the play must fail: {}", text(&out));
    assert!(
        stdout.contains(&format!("{b}: sshd lines not applied, rolled back")),
        "the bad host is named: {stdout}"
    );
    assert!(stdout.contains("a new login works again"), "{stdout}");
    // The canary took its lines and still lets a new login in.
    let conf_a = std::fs::read_to_string(f.hosts[0].config()).unwrap();
    assert!(
        conf_a.starts_with("# BEGIN cipherbench fleet\n") && conf_a.contains(GOOD_SSHD[0]),
        "{conf_a}"
    );
    assert_eq!(backups(&f.hosts[0].config()).len(), 1);
    // The bad host is as it was, byte for byte, with no backup left, and lets a new login in.
    assert_eq!(std::fs::read(f.hosts[1].config()).unwrap(), before[1], "not rolled back");
    assert_eq!(backups(&f.hosts[1].config()), Vec::<String>::new(), "a backup is left");
    // The rollout stopped before the third host.
    assert_eq!(std::fs::read(f.hosts[2].config()).unwrap(), before[2], "the rollout did not stop");
    assert!(
        recap_line(&stdout, &c.to_string()).is_none_or(|l| l.contains("changed=0")),
        "{stdout}"
    );
    for h in &f.hosts {
        let login = f.login(h);
        assert!(login.status.success(), "{}: a new login after apply.yml: {}", h.addr, text(&login));
    }
    let became = std::fs::read_to_string(f.become_log()).unwrap_or_default();
    assert!(!became.is_empty(), "the writes and reloads go through become");

    // Good lines everywhere: every host takes them and lets a new login in.
    set_lines(&f, b, "sshd", GOOD_SSHD);
    let t0 = Instant::now();
    let out = f.ansible("apply.yml", &extra, &[]);
    eprintln!("apply.yml, good lines: {:.0?}", t0.elapsed());
    assert!(out.status.success(), "apply.yml: {}", text(&out));
    for h in &f.hosts {
        let conf = std::fs::read_to_string(h.config()).unwrap();
        assert!(conf.starts_with("# BEGIN cipherbench fleet\n"), "{}: {conf}", h.addr);
        let login = f.login(h);
        assert!(login.status.success(), "{}: a new login after the reload: {}", h.addr, text(&login));
        let t = Command::new(&sshd).arg("-T").arg("-f").arg(h.config()).output().unwrap();
        assert!(
            String::from_utf8_lossy(&t.stdout).contains(&GOOD_SSHD[0].to_lowercase()),
            "{}: sshd -T does not show the Ciphers line",
            h.addr
        );
    }
    // Once more: nothing changes, no new backup.
    let out = f.ansible("apply.yml", &extra, &[]);
    assert!(out.status.success(), "apply.yml: {}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    for h in &f.hosts {
        let line = recap_line(&stdout, &h.addr.to_string()).unwrap_or_else(|| panic!("{stdout}"));
        assert!(line.contains("changed=0") && line.contains("failed=0"), "{line}");
        assert_eq!(backups(&h.config()).len(), 1, "{}", h.addr);
    }
}

/// A real nginx on ADDR:PORT from `conf` (a copy of a stock nginx.conf), with a
/// TLS site in the private sites-enabled directory.
struct Nginx {
    child: Child,
    port: u16,
}

impl Drop for Nginx {
    fn drop(&mut self) {
        // SIGTERM so the master stops its workers too.
        // SAFETY: signals our own child by its pid.
        unsafe { libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM) };
        let t0 = Instant::now();
        while t0.elapsed() < Duration::from_secs(5) {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A private copy of a stock file set up for `addr`: nginx.conf and sshd_config
/// with their absolute paths pointed into `dir` (pid, logs, conf.d,
/// sites-enabled, sshd_config.d), nothing else changed.
struct Stock {
    dir: PathBuf,
    sshd_config: PathBuf,
    dropin_dir: PathBuf,
    nginx_conf: PathBuf,
}

fn stock(release: &str, base: &Path, addr: Ipv4Addr) -> Stock {
    let dir = base.join(format!("stock-{release}-{addr}"));
    let fixtures = repo().join("tests/fixtures").join(release);
    let d = dir.display().to_string();
    for sub in ["sshd_config.d", "conf.d", "sites-enabled", "log"] {
        std::fs::create_dir_all(dir.join(sub)).unwrap();
    }
    let sshd = std::fs::read_to_string(fixtures.join("sshd_config")).unwrap();
    assert!(sshd.contains("\nInclude /etc/ssh/sshd_config.d/*.conf\n"));
    let sshd = sshd.replace("/etc/ssh/sshd_config.d/", &format!("{d}/sshd_config.d/"));
    std::fs::write(dir.join("sshd_config"), sshd).unwrap();
    let nginx = std::fs::read_to_string(fixtures.join("nginx.conf")).unwrap();
    let mut relocated = nginx.clone();
    for (from, to) in [
        ("/run/nginx.pid", format!("{d}/nginx.pid")),
        ("/var/log/nginx/", format!("{d}/log/")),
        ("/etc/nginx/conf.d/", format!("{d}/conf.d/")),
        ("/etc/nginx/sites-enabled/", format!("{d}/sites-enabled/")),
    ] {
        assert!(relocated.contains(from), "{release} nginx.conf: {from}");
        relocated = relocated.replace(from, &to);
    }
    std::fs::write(dir.join("nginx.conf"), relocated).unwrap();
    Stock {
        sshd_config: dir.join("sshd_config"),
        dropin_dir: dir.join("sshd_config.d"),
        nginx_conf: dir.join("nginx.conf"),
        dir,
    }
}

fn start_nginx(nginx: &Path, s: &Stock, addr: Ipv4Addr) -> Nginx {
    let status = Command::new("openssl")
        .args(["req", "-x509", "-nodes", "-days", "1", "-subj", "/CN=localhost", "-newkey", "ec"])
        .args(["-pkeyopt", "ec_paramgen_curve:P-256", "-keyout", "key.pem", "-out", "cert.pem"])
        .current_dir(&s.dir)
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let d = s.dir.display();
    // On a port of its own, its stderr (bind errors) in nginx.stderr; the error log
    // is log/error.log.
    let (port, child) = ports::start("nginx", &s.dir.join("nginx.stderr"), |port| {
        std::fs::write(
            s.dir.join("sites-enabled/tls"),
            format!(
                "server {{\n\tlisten {addr}:{port} ssl;\n\tssl_certificate {d}/cert.pem;\n\tssl_certificate_key {d}/key.pem;\n\
\tclient_body_temp_path {d}/body;\n\tproxy_temp_path {d}/proxy;\n\treturn 204;\n}}\n"
            ),
        )
        .unwrap();
        let mut c = Command::new(nginx);
        c.arg("-c").arg(&s.nginx_conf).args(["-g", "daemon off;"]);
        c
    });
    Nginx { child, port }
}

fn handshake(addr: Ipv4Addr, port: u16) -> bool {
    Command::new("openssl")
        .args(["s_client", "-brief", "-connect", &format!("{addr}:{port}")])
        .stdin(Stdio::null())
        .output()
        .unwrap()
        .status
        .success()
}

#[test]
fn stock_debian_12_and_13_configs_take_the_lines_and_a_bad_nginx_line_is_rolled_back() {
    let Some(sshd) = skip() else { return };
    let Some(nginx) = nginx_path() else {
        missing("no nginx");
        return;
    };
    if !is_root() {
        eprintln!("skipped: the stock configs name /etc and /var paths only root may use (nginx -t opens its logs)");
        return;
    }
    let mut f = Fleet::empty();
    let client_pub = f.client_pub();
    let mut setups = Vec::new();
    let mut servers = Vec::new();
    for (n, release) in [(14u8, "debian12"), (15, "debian13")] {
        let addr = Ipv4Addr::new(127, 0, 0, n);
        let s = stock(release, f.tmp.path(), addr);
        f.hosts
            .push(HostSshd::start_from(&sshd, addr, f.tmp.path(), &client_pub, &s.sshd_config));
        servers.push(start_nginx(&nginx, &s, addr));
        setups.push(s);
    }
    let pid_of = |s: &Stock| std::fs::read_to_string(s.dir.join("nginx.pid")).unwrap().trim().to_string();
    f.write_inventory_with(|h| {
        let i = f.hosts.iter().position(|x| x.addr == h.addr).unwrap();
        let s = &setups[i];
        format!(
            "cipherbench_sshd_config={} cipherbench_sshd_dropin_dir={} cipherbench_sshd_reload_command='{}' \
cipherbench_nginx_conf={} cipherbench_nginx_reload_command='kill -HUP {}' cipherbench_nginx_check_port={}",
            s.sshd_config.display(),
            s.dropin_dir.display(),
            h.reload_command(),
            s.nginx_conf.display(),
            pid_of(s),
            servers[i].port
        )
    });
    fleet_vars(&f);
    for h in &f.hosts {
        set_lines(&f, h.addr, "sshd", GOOD_SSHD);
    }
    let nginx_before: Vec<String> = setups.iter().map(|s| std::fs::read_to_string(&s.nginx_conf).unwrap()).collect();
    let sshd_before: Vec<String> = setups.iter().map(|s| std::fs::read_to_string(&s.sshd_config).unwrap()).collect();

    let t0 = Instant::now();
    let out = f.ansible("apply.yml", &json!({"cipherbench_rollback_seconds": 15}), &[]);
    eprintln!("apply.yml on stock configs: {:.0?}", t0.elapsed());
    assert!(out.status.success(), "apply.yml ({}): {}", out.status, text(&out));
    for (i, s) in setups.iter().enumerate() {
        let h = &f.hosts[i];
        // sshd: a drop-in, sshd_config itself unchanged; sshd -t passes, sshd -T shows the lines.
        assert_eq!(std::fs::read_to_string(&s.sshd_config).unwrap(), sshd_before[i], "{}", h.addr);
        let dropin = std::fs::read_to_string(s.dropin_dir.join("00-cipherbench.conf")).unwrap();
        assert!(dropin.contains(GOOD_SSHD[0]), "{dropin}");
        let t = Command::new(&sshd).arg("-t").arg("-f").arg(&s.sshd_config).output().unwrap();
        assert!(t.status.success(), "sshd -t: {}", text(&t));
        let t = Command::new(&sshd).arg("-T").arg("-f").arg(&s.sshd_config).output().unwrap();
        let effective = String::from_utf8_lossy(&t.stdout).to_string();
        for l in GOOD_SSHD {
            assert!(effective.contains(&l.to_lowercase()), "{}: sshd -T lacks {l}", h.addr);
        }
        assert!(f.login(h).status.success(), "{}: a new login", h.addr);
        // nginx: the lines stand where nginx's own stood, those are commented out;
        // nginx -t passes, nginx -T shows them, a handshake completes.
        let conf = std::fs::read_to_string(&s.nginx_conf).unwrap();
        assert!(conf.contains("\t# BEGIN cipherbench fleet\n"), "{conf}");
        assert!(conf.contains("\t# cipherbench fleet replaced: ssl_protocols "), "{conf}");
        assert!(
            conf.contains("\t# cipherbench fleet replaced: ssl_prefer_server_ciphers "),
            "{conf}"
        );
        let t = Command::new(&nginx).arg("-t").arg("-c").arg(&s.nginx_conf).output().unwrap();
        assert!(t.status.success(), "nginx -t: {}", text(&t));
        let t = Command::new(&nginx).arg("-T").arg("-c").arg(&s.nginx_conf).output().unwrap();
        let dump = String::from_utf8_lossy(&t.stdout).to_string();
        let hv: Value = serde_json::from_str(&std::fs::read_to_string(vars_path(&f, h.addr)).unwrap()).unwrap();
        let lines: Vec<&str> = hv["cipherbench_class_nginx_lines"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l["__ansible_unsafe"].as_str().unwrap())
            .collect();
        assert!(!lines.is_empty());
        for l in &lines {
            assert!(dump.lines().any(|d| d.trim() == *l), "{}: nginx -T lacks {l}", h.addr);
        }
        let active: Vec<&str> = dump.lines().map(str::trim).filter(|d| d.starts_with("ssl_protocols ")).collect();
        assert_eq!(active.len(), 1, "one ssl_protocols in force: {active:?}");
        assert!(handshake(h.addr, servers[i].port), "{}: no TLS handshake after the reload", h.addr);
        assert_ne!(conf, nginx_before[i]);
        assert_eq!(backups(&s.nginx_conf).len(), 1);
    }

    // Two bad nginx lines, both hosts in one batch: on the first a protocol the
    // controller's OpenSSL refuses (valid for nginx -t) is rolled back after the
    // reload; on the second a curve nginx -t refuses is never written. Both fail
    // by name, both files are as they were, no backup is added.
    let (h1, h2) = (f.hosts[0].addr, f.hosts[1].addr);
    set_lines(&f, h1, "nginx", &["ssl_protocols TLSv1.1;"]);
    set_lines(&f, h2, "nginx", &["ssl_ecdh_curve nosuchcurve;"]);
    let applied: Vec<String> = setups.iter().map(|s| std::fs::read_to_string(&s.nginx_conf).unwrap()).collect();
    let out = f.ansible(
        "apply.yml",
        &json!({"cipherbench_serial": 2, "cipherbench_rollback_seconds": 15}),
        &[],
    );
    assert!(!out.status.success(), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains(&format!("{h1}: nginx lines not applied, rolled back")), "{stdout}");
    assert!(stdout.contains("A TLS handshake after the restore: works"), "{stdout}");
    assert!(stdout.contains("nginx -t` fails (nothing written, no backup)"), "{stdout}");
    assert!(
        recap_line(&stdout, &h2.to_string()).is_some_and(|l| l.contains("failed=1")),
        "{stdout}"
    );
    for (i, s) in setups.iter().enumerate() {
        assert_eq!(std::fs::read_to_string(&s.nginx_conf).unwrap(), applied[i], "{}", f.hosts[i].addr);
        assert_eq!(backups(&s.nginx_conf).len(), 1, "only the first run's backup");
        assert!(handshake(f.hosts[i].addr, servers[i].port));
    }
    f.hosts.iter_mut().for_each(|h| h.stop());
}

/// profile.yml does not fetch an export larger than cipherbench_max_export_bytes:
/// the host is named in results/HOST.failed, nothing is left on it, and nothing
/// ran as root.
#[test]
fn profile_does_not_fetch_an_export_over_the_limit() {
    let Some(sshd) = skip() else { return };
    let f = Fleet::start(&sshd, &[16]);
    let results = f.tmp.path().join("results");
    let out = f.profile_with(
        &results,
        "speed",
        1,
        &["aes-128-gcm", "--bytes", "16k"],
        serde_json::json!({"cipherbench_max_export_bytes": 1000}),
    );
    assert!(!out.status.success(), "{}", text(&out));
    assert!(!results.join("127.0.0.16.json").exists());
    let why = std::fs::read_to_string(results.join("127.0.0.16.failed")).unwrap_or_else(|e| panic!("{e}: {}", text(&out)));
    assert!(why.contains("over cipherbench_max_export_bytes (1000): not fetched"), "{why}");
    f.assert_nothing_left();
    assert!(!f.become_log().exists(), "profile.yml became root");
}

/// What an unprivileged local user on the host can do against the roll-back:
/// watch every process's command line in /proc (world-readable) and the names in
/// /tmp and /run, and `touch` every confirmation path it sees (and `NAME/confirmed`
/// in it). Runs as `nobody` until killed; writes `seen PATH` and `touched PATH`.
const ATTACK: &str = r#"
while :; do
  for p in $( { cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\0' '\n'; ls -d /tmp/* /tmp/*/* /run/* /run/*/* 2>/dev/null; } \
      | grep -o "/[^ \"';]*cipherbench-confirm[^ \"';]*" | sort -u); do
    d=${p%/confirmed}
    echo "seen $p"
    touch "$p" 2>/dev/null && echo "touched $p"
    touch "$d/confirmed" 2>/dev/null && echo "touched $d/confirmed"
  done
  sleep 0.05
done
"#;

/// A local user who is not root cannot stop a roll-back: while apply.yml applies a
/// line the controller's client cannot use (so no new login can confirm it), a
/// real unprivileged user (`nobody`, through setpriv) watches /proc/*/cmdline,
/// /tmp and /run and touches every confirmation path it finds. The host must
/// still put back its old sshd config and reload by itself. Against the old
/// playbook (a confirmation file in /tmp named on the watchdog's command line) the
/// attacker's touch confirmed the bad lines and they stayed.
#[test]
fn an_unprivileged_local_user_cannot_cancel_the_sshd_roll_back() {
    let Some(sshd) = skip() else { return };
    if !is_root() {
        eprintln!("skipped: acting as another local user (nobody) needs root");
        return;
    }
    let nobody = |flag: &str| {
        let o = Command::new("id").args([flag, "nobody"]).output().unwrap();
        String::from_utf8_lossy(&o.stdout).trim().to_string()
    };
    let (uid, gid) = (nobody("-u"), nobody("-g"));
    assert!(!uid.is_empty() && uid != "0", "no unprivileged user nobody here");
    let f = Fleet::start(&sshd, &[18]);
    let missing_nginx = f.tmp.path().join("no-nginx.conf");
    f.write_inventory_with(|h| {
        format!(
            "cipherbench_sshd_config={} cipherbench_nginx_conf={} cipherbench_sshd_reload_command='{}'",
            h.config().display(),
            missing_nginx.display(),
            h.reload_command()
        )
    });
    fleet_vars(&f);
    let host = f.hosts[0].addr;
    set_lines(&f, host, "sshd", &["Ciphers aes128-cbc"]);
    let before = std::fs::read(f.hosts[0].config()).unwrap();

    // Confirmation names already in /tmp or /run (left by an earlier run, e.g. of
    // the old playbook) are not this run's: the attacker's touches of them count
    // for nothing.
    let stale: Vec<String> = ["/tmp", "/run"]
        .iter()
        .flat_map(|d| std::fs::read_dir(d).into_iter().flatten().flatten().map(move |e| (d, e)))
        .map(|(d, e)| format!("{d}/{}", e.file_name().to_string_lossy()))
        .filter(|p| p.contains("cipherbench-confirm"))
        .collect();
    let fresh = |line: &&str| {
        !stale
            .iter()
            .any(|s| line.split_once(' ').is_some_and(|(_, p)| p.starts_with(s.as_str())))
    };
    // The play's confirmation base: a fresh folder of root's in /run that anyone
    // may list (the attacker sees the names in it), so that what is left in it
    // afterwards is this play's alone (other plays of this binary and of the
    // fleet tests run beside this one and use /run too).
    let base = tempfile::Builder::new().prefix("cb-apply-attack.").tempdir_in("/run").unwrap();
    std::fs::set_permissions(base.path(), std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let log_path = f.tmp.path().join("attack.log");
    let log = std::fs::File::create(&log_path).unwrap();
    let mut attacker = Command::new("setpriv")
        .args([&format!("--reuid={uid}"), &format!("--regid={gid}"), "--clear-groups"])
        .args(["--inh-caps=-all", "--bounding-set=-all", "--", "sh", "-c", ATTACK])
        .current_dir("/")
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(Stdio::null())
        .spawn()
        .expect("setpriv");
    let t0 = Instant::now();
    let out = f.ansible(
        "apply.yml",
        &json!({"cipherbench_rollback_seconds": 15, "cipherbench_confirm_base": base.path()}),
        &[],
    );
    eprintln!("apply.yml under attack: {:.0?}", t0.elapsed());
    let _ = attacker.kill();
    let _ = attacker.wait();
    let attack = std::fs::read_to_string(&log_path).unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();

    // The attack ran during the watchdog's window and saw the confirmation path.
    let seen: std::collections::BTreeSet<&str> = attack.lines().filter(|l| l.starts_with("seen ")).filter(fresh).collect();
    assert!(!seen.is_empty(), "the attacker never saw a confirmation path: {}", text(&out));
    let touched: Vec<&str> = attack.lines().filter(|l| l.starts_with("touched ")).filter(fresh).collect();
    assert!(touched.is_empty(), "nobody wrote a confirmation: {touched:?}\n{stdout}");
    // The roll-back happened anyway: the play fails naming the host, the host put
    // its old file back and reloaded by itself, and a new login works.
    assert!(!out.status.success(), "the play must fail: {}", text(&out));
    assert!(
        stdout.contains(&format!("{host}: sshd lines not applied, rolled back")),
        "the host is named: {stdout}"
    );
    assert!(stdout.contains("reloaded sshd by itself (restored)"), "{stdout}");
    assert_eq!(std::fs::read(f.hosts[0].config()).unwrap(), before, "not rolled back: {stdout}");
    assert!(f.login(&f.hosts[0]).status.success(), "a new login after the roll-back");
    // The attacker saw this play's confirmation directory, and nothing of it is left.
    let base_name = base.path().display().to_string();
    assert!(seen.iter().any(|s| s.contains(&base_name)), "{seen:?} (base {base_name})");
    let left: Vec<String> = std::fs::read_dir(base.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().to_string())
        .collect();
    assert!(left.is_empty(), "left in {base_name}: {left:?}");
}
