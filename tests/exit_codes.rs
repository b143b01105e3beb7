//! Every error path docs/exit-codes.md documents, one real invocation each: the
//! table below has a row per cause the document names (code 1 to 4 and 130), and
//! each row runs the binary, then checks the exit code and that the message names
//! the cause. A row whose code or message is wrong fails the test, and the
//! failures are listed together. A check of the document itself makes sure that
//! each code's row in it still names the causes tested here.

use std::io::{Read, Write};
use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_cipherbench")
}

fn cb() -> Command {
    let mut c = Command::new(bin());
    c.env("NO_COLOR", "1").env_remove("OPENSSL_CONF").stdin(Stdio::null());
    c
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// The files every row may use, made by real runs.
struct Ctx {
    dir: tempfile::TempDir,
    /// A history with one run (speed sha256).
    db: PathBuf,
    /// Exports: sha256 (a), the same figures halved (slow), md5 (c).
    a: PathBuf,
    slow: PathBuf,
    c: PathBuf,
}

impl Ctx {
    fn new() -> Ctx {
        let dir = tempfile::Builder::new().prefix("cb-exit-codes-").tempdir().unwrap();
        // Other users (the read-only row) pass through it.
        std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        let p = |n: &str| dir.path().join(n);
        let (db, a, slow, c) = (p("h/history.sqlite"), p("a.json"), p("slow.json"), p("c.json"));
        let out = cb()
            .args(["speed", "sha256", "--bytes", "1k", "--budget", "1s", "-q", "--db"])
            .arg(&db)
            .arg("--export-json")
            .arg(&a)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out));
        let out = cb()
            .args([
                "speed",
                "md5",
                "--bytes",
                "1k",
                "--budget",
                "1s",
                "-q",
                "--no-store",
                "--export-json",
            ])
            .arg(&c)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out));
        let mut doc: serde_json::Value = serde_json::from_slice(&std::fs::read(&a).unwrap()).unwrap();
        for r in doc["results"].as_array_mut().unwrap() {
            for k in ["median", "mean", "min", "max", "ci95_low", "ci95_high", "cpu_median", "wall_median"] {
                if let Some(v) = r[k].as_f64() {
                    r[k] = (v * 0.5).into();
                }
            }
        }
        std::fs::write(&slow, serde_json::to_vec(&doc).unwrap()).unwrap();
        Ctx { dir, db, a, slow, c }
    }
    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
}

fn text(o: &Output) -> String {
    format!(
        "exit {:?}\nstdout: {}\nstderr: {}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A row's invocation; `None` when this machine cannot run it.
type Invocation = dyn Fn(&Ctx) -> Option<Output>;

/// One documented cause: its code, the words of docs/exit-codes.md that name it,
/// a real invocation, and what the message must say.
struct Row {
    code: i32,
    /// Words of the code's row in docs/exit-codes.md that name this cause.
    documented: &'static str,
    /// Runs the invocation; `None` when this machine cannot (said, and counted).
    run: Box<Invocation>,
    /// Each must appear in stderr.
    says: &'static [&'static str],
    /// None may appear in stderr (a misleading cause).
    not: &'static [&'static str],
}

fn row(code: i32, documented: &'static str, says: &'static [&'static str], run: impl Fn(&Ctx) -> Option<Output> + 'static) -> Row {
    Row {
        code,
        documented,
        run: Box::new(run),
        says,
        not: &[],
    }
}

fn out(c: &mut Command) -> Option<Output> {
    Some(c.output().unwrap())
}

/// A server on 127.0.0.1 that does `serve` with each of a few connections and
/// stops by itself after 30 s.
fn server(serve: fn(std::net::TcpStream)) -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    l.set_nonblocking(true).unwrap();
    std::thread::spawn(move || {
        let end = Instant::now() + Duration::from_secs(30);
        while Instant::now() < end {
            match l.accept() {
                Ok((s, _)) => {
                    let _ = s.set_nonblocking(false);
                    std::thread::spawn(move || serve(s));
                }
                Err(_) => std::thread::sleep(Duration::from_millis(20)),
            }
        }
    });
    port
}

fn tls_connect(port: u16, extra: &[&str]) -> Command {
    let mut c = cb();
    c.args(["tls", "--no-store", "--connect", &format!("127.0.0.1:{port}")]).args(extra);
    c
}

/// As `nobody`, through setpriv (root only).
fn as_nobody(args: &[&str], db: &Path) -> Option<Output> {
    if !is_root() {
        return None;
    }
    out(Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", bin()])
        .args(args)
        .arg("--db")
        .arg(db)
        .env("NO_COLOR", "1")
        .env_remove("OPENSSL_CONF")
        .stdin(Stdio::null()))
}

fn rows() -> Vec<Row> {
    let speed = ["speed", "sha256", "--bytes", "1k", "--budget", "1s", "-q", "--no-store"];
    vec![
        // 1: findings.
        row(1, "a regression under `compare --fail-on-regression`", &["regression"], |x| {
            out(cb().arg("compare").arg(&x.a).arg(&x.slow).arg("--fail-on-regression"))
        }),
        row(1, "two runs that share no result at all", &["share no measured result"], |x| {
            out(cb().arg("compare").arg(&x.a).arg(&x.c).arg("--fail-on-regression"))
        }),
        row(1, "a policy failure", &["finding"], |x| {
            let conf = x.path("weak_sshd_config");
            std::fs::write(&conf, "Ciphers 3des-cbc,aes128-cbc\nMACs hmac-md5\n").unwrap();
            out(cb()
                .args(["check", "--for", "sshd", "--budget", "5s", "-q", "--no-store", "--config-from"])
                .arg(&conf))
        }),
        // 2: bad input.
        row(2, "unknown algorithm", &["unknown algorithm 'aes-128-gmc'", "aes-128-gcm"], |_| {
            out(cb().args(["speed", "aes-128-gmc", "--no-store"]))
        }),
        row(2, "suite", &["unknown TLS suite 'NOPE'"], |_| {
            out(cb().args(["tls", "--suites", "NOPE", "--no-store"]))
        }),
        row(2, "target", &["unknown target 'nginxx'"], |_| {
            out(cb().args(["recommend", "--for", "nginxx", "--no-store"]))
        }),
        row(2, "policy names", &["unknown policy", "strictest"], move |_| {
            out(cb().args(speed).args(["--policy", "strictest"]))
        }),
        row(2, "bad sizes", &["'12q'", "--bytes"], |_| {
            out(cb().args(["speed", "--bytes", "12q", "--no-store"]))
        }),
        row(2, "durations", &["'5parsecs'", "--budget"], |_| {
            out(cb().args(["speed", "--budget", "5parsecs", "--no-store"]))
        }),
        row(2, "a malformed policy file", &["bad.toml:"], move |x| {
            let p = x.path("bad.toml");
            std::fs::write(&p, "x = [\n").unwrap();
            out(cb().args(speed).arg("--policy").arg(&p))
        }),
        row(2, "a malformed or foreign JSON file for `compare`", &["not.json", "JSON"], |x| {
            let p = x.path("not.json");
            std::fs::write(&p, "{ not json").unwrap();
            out(cb().arg("compare").arg(&p).arg(&x.a))
        }),
        row(
            2,
            "a malformed or foreign JSON file for `compare`",
            &["foreign.json is not a cipherbench JSON document"],
            |x| {
                let p = x.path("foreign.json");
                std::fs::write(&p, r#"{"foo": 1}"#).unwrap();
                out(cb().arg("compare").arg(&p).arg(&x.a))
            },
        ),
        row(2, "an export path", &["--export-json", "does not exist"], move |x| {
            out(cb().args(speed).arg("--export-json").arg(x.path("no-such-folder/x.json")))
        }),
        row(2, "which is a directory", &["--export-csv", "is a directory"], move |x| {
            out(cb().args(speed).arg("--export-csv").arg(x.dir.path()))
        }),
        row(
            2,
            "`report -o` file whose folder is missing",
            &["-o", "no-such-folder", "does not exist"],
            |x| {
                out(cb()
                    .args(["report", "-o"])
                    .arg(x.path("no-such-folder/r.md"))
                    .arg("--db")
                    .arg(&x.db))
            },
        ),
        row(
            2,
            "`report -o` file whose folder is missing or which is a directory",
            &["-o", "is a directory"],
            |x| {
                out(cb()
                    .args(["report", "--format", "md", "-o"])
                    .arg(x.dir.path())
                    .arg("--db")
                    .arg(&x.db))
            },
        ),
        row(
            2,
            "an unwritable history database (a read-only file",
            &["cannot write the history database", "history.sqlite"],
            |x| {
                // Root's history, readable by nobody, who cannot write it.
                std::fs::set_permissions(x.db.parent().unwrap(), std::fs::Permissions::from_mode(0o755)).unwrap();
                std::fs::set_permissions(&x.db, std::fs::Permissions::from_mode(0o644)).unwrap();
                as_nobody(&["speed", "sha256", "--bytes", "1k", "--budget", "1s", "-q"], &x.db)
            },
        ),
        row(2, "reports directory", &["reports directory"], |x| {
            let blocked = x.path("xdg-is-a-file");
            std::fs::write(&blocked, "a file where a folder should be").unwrap();
            out(cb()
                .env("XDG_DATA_HOME", &blocked)
                .args(["run", "--budget", "30s", "--db"])
                .arg(x.path("run.sqlite")))
        }),
        row(
            2,
            "a file that is not SQLite",
            &["not a cipherbench history database", "not an SQLite database"],
            |x| {
                let p = x.path("notes.sqlite");
                std::fs::write(&p, "just some notes, not SQLite at all, long enough to have a header......................................................").unwrap();
                out(cb()
                    .args(["speed", "sha256", "--bytes", "1k", "--budget", "1s", "-q", "--db"])
                    .arg(&p))
            },
        ),
        row(
            2,
            "another program's SQLite database",
            &["not a cipherbench history database", "another program"],
            |x| {
                let p = x.path("other.sqlite");
                let c = rusqlite::Connection::open(&p).unwrap();
                c.execute_batch("PRAGMA application_id = 1234; CREATE TABLE t(x);").unwrap();
                drop(c);
                out(cb().arg("history").arg("--db").arg(&p))
            },
        ),
        row(
            2,
            "one a newer cipherbench made",
            &["not a cipherbench history database", "a newer cipherbench"],
            |x| {
                let p = x.path("newer.sqlite");
                let c = rusqlite::Connection::open(&p).unwrap();
                c.execute_batch("PRAGMA application_id = 1128427107; PRAGMA user_version = 99; CREATE TABLE t(x);")
                    .unwrap();
                drop(c);
                out(cb().arg("history").arg("--db").arg(&p))
            },
        ),
        row(
            2,
            "owned by another user",
            &["refusing the history database", "owned by another user"],
            |x| {
                if !is_root() {
                    return None;
                }
                let p = x.path("theirs.sqlite");
                std::fs::write(&p, "").unwrap();
                std::os::unix::fs::chown(&p, Some(65534), Some(65534)).unwrap();
                out(cb().arg("history").arg("--db").arg(&p))
            },
        ),
        row(
            2,
            "a symbolic link another user owns",
            &["refusing the history database", "symbolic link owned by another user"],
            |x| {
                if !is_root() {
                    return None;
                }
                let p = x.path("their-link.sqlite");
                std::os::unix::fs::symlink(x.path("their-target.sqlite"), &p).unwrap();
                std::os::unix::fs::lchown(&p, Some(65534), Some(65534)).unwrap();
                out(cb()
                    .args(["speed", "sha256", "--bytes", "1k", "--budget", "1s", "-q", "--db"])
                    .arg(&p))
            },
        ),
        row(
            2,
            "a history or reports folder owned by another user, writable by others",
            &["refusing the history folder", "others can write in it"],
            |x| {
                let xdg = x.path("xdg-open");
                std::fs::create_dir_all(xdg.join("cipherbench")).unwrap();
                std::fs::set_permissions(xdg.join("cipherbench"), std::fs::Permissions::from_mode(0o777)).unwrap();
                out(cb().env("XDG_DATA_HOME", &xdg).arg("history"))
            },
        ),
        row(
            2,
            "no private place for the default history",
            &["no private place for the history database", "does not exist", "--db"],
            |x| {
                out(cb()
                    .env_remove("XDG_DATA_HOME")
                    .env_remove("XDG_RUNTIME_DIR")
                    .env("HOME", x.path("no-such-home"))
                    .args(["speed", "sha256", "--bytes", "1k", "--budget", "1s", "-q"]))
            },
        ),
        Row {
            not: &["install the package"],
            ..row(
                2,
                "a temporary folder (`TMPDIR`) that is missing",
                &["temporary folder", "(TMPDIR)"],
                |x| {
                    out(cb()
                        .env("TMPDIR", x.path("no-such-tmp"))
                        .args(["ssh", "--budget", "3s", "--no-store"]))
                },
            )
        },
        row(
            2,
            "a device, FIFO or socket given to `file`",
            &["/dev/null is a character device"],
            |_| out(cb().args(["file", "/dev/null", "--no-store"])),
        ),
        row(
            2,
            "`speed --threads × --bytes` beyond the memory available",
            &["available"],
            |_| out(cb().args(["speed", "aes-128-gcm", "--threads", "1024", "--bytes", "64M", "--no-store"])),
        ),
        // 3: could not measure.
        row(
            3,
            "a peer is unreachable, refuses the connection",
            &["cannot connect to 127.0.0.1:1", "refused"],
            |_| out(&mut tls_connect(1, &["--timeout", "2s", "--budget", "3s"])),
        ),
        row(3, "or the handshake", &["refused a TLS handshake"], |_| {
            // Reads the ClientHello and answers a fatal handshake_failure alert.
            let port = server(|mut s| {
                let mut b = [0u8; 4096];
                let _ = s.read(&mut b);
                let _ = s.write_all(b"\x15\x03\x03\x00\x02\x02\x28");
                std::thread::sleep(Duration::from_millis(300));
            });
            out(&mut tls_connect(port, &["--timeout", "2s", "--budget", "3s"]))
        }),
        row(3, "accepts and stays silent", &["accepted the connection but sent nothing"], |_| {
            let port = server(|mut s| {
                let mut b = [0u8; 4096];
                let _ = s.set_read_timeout(Some(Duration::from_secs(10)));
                while let Ok(n) = s.read(&mut b) {
                    if n == 0 {
                        break;
                    }
                }
            });
            out(&mut tls_connect(port, &["--timeout", "1s", "--budget", "3s"]))
        }),
        row(3, "sends too slowly to measure", &["too slow to measure"], |_| {
            // A TLS record header whose body comes one byte every 700 ms.
            let port = server(|mut s| {
                let bytes = b"\x16\x03\x03\x40\x00\x02\x02\x02\x02\x02\x02\x02";
                let _ = s.set_read_timeout(Some(Duration::from_millis(100)));
                let mut b = [0u8; 4096];
                for i in 0..40 {
                    let _ = s.read(&mut b);
                    if s.write_all(&bytes[i % bytes.len()..][..1]).is_err() {
                        return;
                    }
                    std::thread::sleep(Duration::from_millis(700));
                }
            });
            out(&mut tls_connect(port, &["--timeout", "30s", "--budget", "3s"]))
        }),
        row(3, "does not speak the protocol", &["does not speak TLS"], |_| {
            let port = server(|mut s| {
                let mut b = [0u8; 512];
                let _ = s.read(&mut b);
                let _ = s.write_all(b"220 mail.example ESMTP this is not TLS at all\r\n");
                std::thread::sleep(Duration::from_millis(300));
            });
            out(&mut tls_connect(port, &["--timeout", "2s", "--budget", "3s"]))
        }),
        row(
            3,
            "a needed tool (`sshd`, `ssh`) is missing",
            &["sshd not found", "openssh-server"],
            |_| {
                out(cb()
                    .env("CIPHERBENCH_SSHD", "/nonexistent/sshd")
                    .args(["ssh", "--budget", "3s", "--no-store"]))
            },
        ),
        row(
            3,
            "a needed tool (`sshd`, `ssh`) is missing",
            &["cannot run the OpenSSH client", "openssh-client"],
            |_| {
                out(cb()
                    .env("CIPHERBENCH_SSH", "/nonexistent/ssh")
                    .args(["ssh", "--budget", "3s", "--no-store"]))
            },
        ),
        row(
            3,
            "OpenSSL offers no random numbers or algorithms",
            &["(OPENSSL_CONF)", "null provider"],
            |x| {
                let conf = x.path("null.cnf");
                std::fs::write(
                    &conf,
                    "openssl_conf = openssl_init\n[openssl_init]\nproviders = p\n[p]\nnull = n\n[n]\nactivate = 1\n",
                )
                .unwrap();
                out(cb()
                    .env("OPENSSL_CONF", &conf)
                    .args(["speed", "sha256", "--bytes", "1k", "--budget", "1s", "--no-store"]))
            },
        ),
        row(
            3,
            "the run's deadline (budget + grace) passed before anything could be measured",
            &["is capped", "budget"],
            |_| {
                // A peer that never answers, a --timeout longer than the budget: the
                // deadline ends the run with nothing measured.
                let port = server(|mut s| {
                    let mut b = [0u8; 4096];
                    let _ = s.set_read_timeout(Some(Duration::from_secs(20)));
                    let _ = s.read(&mut b);
                    std::thread::sleep(Duration::from_secs(10));
                });
                out(&mut tls_connect(port, &["--timeout", "30s", "--budget", "2s"]))
            },
        ),
        // 4: measured, not saved.
        row(4, "a locked database", &["history database", "failed"], |x| {
            let db = x.path("locked.sqlite");
            let made = cb()
                .args(["speed", "sha256", "--bytes", "1k", "--budget", "1s", "-q", "--db"])
                .arg(&db)
                .output()
                .unwrap();
            assert!(made.status.success(), "{}", text(&made));
            let (tx, rx) = std::sync::mpsc::channel();
            let locker = std::thread::spawn({
                let db = db.clone();
                move || {
                    let c = rusqlite::Connection::open(&db).unwrap();
                    c.busy_timeout(Duration::from_secs(10)).unwrap();
                    c.execute_batch("BEGIN EXCLUSIVE").unwrap();
                    tx.send(()).unwrap();
                    std::thread::sleep(Duration::from_millis(3500));
                    c.execute_batch("COMMIT").unwrap();
                }
            });
            rx.recv().unwrap();
            let o = cb()
                .args(["speed", "sha256", "aes-128-gcm", "--bytes", "1k", "--budget", "4s", "-q", "--db"])
                .arg(&db)
                .output()
                .unwrap();
            locker.join().unwrap();
            Some(o)
        }),
        row(4, "a full disk", &["No space left on device", "out.json"], |x| {
            if !is_root() {
                return None;
            }
            let mnt = x.path("small");
            std::fs::create_dir(&mnt).unwrap();
            let mounted = Command::new("mount")
                .args(["-t", "tmpfs", "-o", "size=64k", "tmpfs"])
                .arg(&mnt)
                .status()
                .is_ok_and(|s| s.success());
            if !mounted {
                return None;
            }
            let mut f = std::fs::File::create(mnt.join("filler")).unwrap();
            let chunk = vec![7u8; 4096];
            while f.write_all(&chunk).is_ok() {}
            drop(f);
            let o = cb()
                .args([
                    "speed",
                    "sha256",
                    "--bytes",
                    "1k",
                    "--budget",
                    "1s",
                    "-q",
                    "--no-store",
                    "--export-json",
                ])
                .arg(mnt.join("out.json"))
                .output()
                .unwrap();
            let _ = Command::new("umount").arg(&mnt).status();
            Some(o)
        }),
        // 130: interrupted.
        row(130, "Ctrl-C or SIGTERM", &["interrupted"], |_| {
            let child = cb()
                .args(["speed", "--all", "--budget", "120s", "-q", "--no-store"])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            std::thread::sleep(Duration::from_millis(2000));
            // SAFETY: kill has no memory preconditions; the pid is our child's.
            unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
            Some(child.wait_with_output().unwrap())
        }),
    ]
}

/// The row of docs/exit-codes.md for `code`, with whitespace folded.
fn documented(code: i32) -> String {
    let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/exit-codes.md")).unwrap();
    let line = doc
        .lines()
        .find(|l| l.starts_with(&format!("| {code} |")))
        .unwrap_or_else(|| panic!("docs/exit-codes.md has no row for {code}"));
    line.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[test]
fn every_documented_error_path_exits_with_its_code_and_names_its_cause() {
    let ctx = Ctx::new();
    let mut failed = Vec::new();
    let mut skipped = Vec::new();
    let all = rows();
    for r in &all {
        let doc = documented(r.code);
        assert!(
            doc.contains(r.documented),
            "the test's cause {:?} is not in docs/exit-codes.md's row {}: {doc}",
            r.documented,
            r.code
        );
        let Some(o) = (r.run)(&ctx) else {
            skipped.push(r.documented);
            continue;
        };
        let err = String::from_utf8_lossy(&o.stderr);
        let mut wrong = Vec::new();
        if o.status.code() != Some(r.code) {
            wrong.push(format!("exit {:?}, not {}", o.status.code(), r.code));
        }
        wrong.extend(r.says.iter().filter(|s| !err.contains(*s)).map(|s| format!("does not say {s:?}")));
        wrong.extend(r.not.iter().filter(|s| err.contains(*s)).map(|s| format!("says {s:?}")));
        if err.contains("panicked") {
            wrong.push("panicked".into());
        }
        if !wrong.is_empty() {
            failed.push(format!(
                "[{} {}] {}\n  {}",
                r.code,
                r.documented,
                wrong.join("; "),
                text(&o).replace('\n', "\n  ")
            ));
        }
    }
    if !skipped.is_empty() {
        eprintln!("not run on this machine (needs root): {skipped:?}");
    }
    // Every code of the document has rows here.
    for code in [1, 2, 3, 4, 130] {
        assert!(all.iter().any(|r| r.code == code), "no row for exit {code}");
    }
    assert!(
        failed.is_empty(),
        "{} of {} documented error paths wrong:\n{}",
        failed.len(),
        all.len(),
        failed.join("\n")
    );
}
