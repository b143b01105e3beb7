//! The HTML report's pieces, rendered from small documents.

use super::*;

#[test]
fn inline_code_escapes_both_its_text_and_its_code() {
    assert_eq!(
        inline_code("then `sshd -t` <b>").into_string(),
        "then <code class=\"nb\">sshd -t</code> &lt;b&gt;"
    );
    assert_eq!(
        inline_code("`<img src=x onerror=alert(1)>`\"'&").into_string(),
        "<code class=\"nb\">&lt;img src=x onerror=alert(1)&gt;</code>&quot;'&amp;"
    );
}

#[test]
fn control_and_invisible_format_characters_leave_as_escapes() {
    let page = finish(maud::html! { p title="\u{1b}]0;x\u{7}" { "a\u{1b}[2J\u{85}\u{2028}\u{202e}b" } "\n" });
    assert_eq!(page, "<p title=\"\\x1b]0;x\\x07\">a\\x1b[2J\\x85\\u{2028}\\u{202e}b</p>\n");
}

#[test]
fn settings_read_as_words_never_as_json() {
    let settings = serde_json::json!({
        "budget_seconds": 90.0,
        "targets": ["nginx", "sshd"],
        "race": {"seconds": 4.5, "contests": [{"list": "tls13_suites", "contenders": ["A", "B"]}]}
    });
    let mut rows = Vec::new();
    settings_rows("", &settings, &mut rows);
    let text: Vec<String> = rows.iter().map(|(k, v)| format!("{k} = {v}")).collect();
    assert_eq!(
        text,
        [
            "Budget = 90 s",
            "Targets = nginx, sshd",
            "Race › seconds = 4.5",
            "Race › contests = list: tls13_suites; contenders: A, B",
        ]
    );
    assert!(rows.iter().all(|(k, v)| !(k.contains('{') || v.contains('{') || v.contains('"'))));
}

#[test]
fn the_answer_names_ties_and_the_cost_of_safety_in_words() {
    let ranking: crate::model::RankingRecord = serde_json::from_value(serde_json::json!({
        "list": "tls13_suites", "metric": "bytes_per_sec", "higher_is_better": true,
        "ranked": [
            {"name": "TLS_AES_128_GCM_SHA256", "rank": 1, "tied": true, "level": "recommended", "median": 1.0e9},
            {"name": "TLS_AES_256_GCM_SHA384", "rank": 1, "tied": true, "level": "recommended", "median": 0.9e9},
            {"name": "TLS_AES_128_CCM_SHA256", "rank": 3, "tied": false, "level": "secure", "median": 0.5e9}
        ],
        "fastest_refused": {"name": "TLS_AES_128_CCM_8_SHA256", "level": "weak", "median": 1.2e9, "tied_with_best": false}
    }))
    .unwrap();
    let html = pick(&ranking).unwrap().into_string();
    assert!(html.contains(">TLS 1.3 cipher suites<"), "{html}");
    assert!(html.contains("2 tied") && html.contains("TLS_<wbr>AES_<wbr>256_<wbr>GCM"), "{html}");
    assert!(!html.contains("CCM_<wbr>SHA256"), "rank 3 is not an answer: {html}");
    assert!(html.contains("20% faster") && html.contains("level-weak"), "{html}");
    assert!(html.contains("1.00 GB/s"), "{html}");
}

fn result(kind: Kind, metric: Metric, subject: crate::model::Subject, median: f64) -> ResultRecord {
    let mut r = ResultRecord::accepted(kind, subject, true, None);
    r.metric = metric;
    for v in [&mut r.median, &mut r.mean, &mut r.min, &mut r.max] {
        *v = Some(median);
    }
    r.ci95_low = Some(median * 0.9);
    r.ci95_high = Some(median * 1.1);
    r.samples = Some(5);
    r
}

/// The shared fixture with markup in the run id and host names (the page escapes them).
fn doc(results: Vec<ResultRecord>) -> Document {
    let mut d = crate::testing::doc_of(results);
    d.run.id = "r<1>".into();
    d.run.host.cpu_model = "CPU \"<b>\"".into();
    d.run.host.hostname = "h&h".into();
    d
}

/// `data-value`s of the datum elements inside the figure with this id.
fn values_in(html: &str, id: &str) -> Vec<f64> {
    let start = html.find(&format!("<figure id=\"{id}\"")).unwrap_or_else(|| panic!("no {id}"));
    let fig = &html[start..start + html[start..].find("</figure>").unwrap()];
    fig.split("class=\"datum\"")
        .skip(1)
        .map(|p| {
            let v = &p[p.find("data-value=\"").unwrap() + 12..];
            v[..v.find('"').unwrap()].parse().unwrap()
        })
        .collect()
}

#[test]
fn ssh_matrix_and_tls_bars_carry_their_values_and_text_is_escaped() {
    use crate::model::Subject;
    let ssh = |c: &str, m: Option<&str>, v: f64| {
        let s = Subject {
            cipher: Some(c.into()),
            mac: m.map(String::from),
            kex: Some("curve25519-sha256".into()),
            ..Subject::default()
        };
        result(Kind::SshBulk, Metric::BytesPerSec, s, v)
    };
    let tls = |suite: &str, kind: Kind, metric: Metric, v: f64| {
        let s = Subject {
            protocol: Some("TLSv1.3".into()),
            suite: Some(suite.into()),
            ..Subject::default()
        };
        result(kind, metric, s, v)
    };
    let d = doc(vec![
        ssh("aes128-ctr", Some("hmac-sha2-256"), 4.0e8),
        ssh("aes128-ctr", Some("umac-64@openssh.com"), 5.0e8),
        ssh("aes128-gcm@openssh.com", None, 6.0e8),
        tls("TLS_AES_128_GCM_SHA256", Kind::TlsBulk, Metric::BytesPerSec, 2.0e9),
        tls("TLS_<AES>", Kind::TlsHandshake, Metric::HandshakesPerSec, 2350.0),
        tls("x", Kind::SshHandshake, Metric::Seconds, 0.05),
    ]);
    let html = render(&d);
    assert_eq!(values_in(&html, "chart-ssh-matrix-0"), vec![4.0e8, 5.0e8, 6.0e8]);
    assert!(html.contains("data-label=\"aes128-gcm@openssh.com\" data-series=\"(implicit)\""));
    assert_eq!(values_in(&html, "chart-tls-bulk"), vec![2.0e9]);
    assert_eq!(values_in(&html, "chart-tls-handshake"), vec![2350.0]);
    assert_eq!(values_in(&html, "chart-other-0"), vec![0.05]);
    assert!(html.contains("TLS_&lt;AES&gt;") && !html.contains("TLS_<AES>"));
    assert!(html.contains("CPU &quot;&lt;b&gt;&quot;") && html.contains("h&amp;h") && html.contains("r&lt;1&gt;"));
}

#[test]
fn the_gain_section_shows_a_before_and_after_when_the_run_has_one() {
    let mut d = doc(vec![]);
    d.recommendations = vec![serde_json::from_value(serde_json::json!({
        "protocol": "ssh", "target": "sshd", "location": "/etc/ssh/sshd_config", "policy": "intermediate",
        "choice": {"ssh_ciphers": ["aes128-gcm@openssh.com"]},
        "lines": ["Ciphers aes128-gcm@openssh.com"],
        "rankings": []
    }))
    .unwrap()];
    let none = gain_section(&d).into_string();
    assert!(none.contains("id=\"gain\"") && none.contains("no before and after"), "{none}");
    let r = &mut d.recommendations[0];
    r.now = Some(Some(crate::model::Now::Lists(
        [("ssh_ciphers".to_string(), vec!["aes128-cbc".to_string()])].into(),
    )));
    r.gain = Some("+38% throughput (95% CI +20% to +55%)".into());
    r.diff = Some(
        [
            "--- sshd_config",
            "+++ sshd_config",
            "-Ciphers aes128-cbc",
            "+Ciphers aes128-gcm@openssh.com",
        ]
        .map(String::from)
        .to_vec(),
    );
    d.run.settings = serde_json::json!({"installed_diff": [{"software": "sshd", "recommended":
        {"protocol": "ssh", "cipher": "aes128-gcm@openssh.com", "mac": null, "kex": "curve25519-sha256", "hostkey": "ssh-ed25519"}}]});
    let html = gain_section(&d).into_string();
    assert!(html.contains(">sshd (server)<"), "{html}");
    assert!(
        html.contains("<th>Recommended</th><td>aes128-gcm@openssh.com (implicit MAC) · curve25519-sha256 · ssh-ed25519</td>"),
        "{html}"
    );
    assert!(html.contains("<th>Now</th><td>ssh ciphers: aes128-cbc</td>"), "{html}");
    assert!(html.contains("<th>Gain</th><td>+38% throughput"), "{html}");
    assert!(html.contains("<span class=\"del\">-Ciphers aes128-cbc</span>"), "{html}");
    assert!(
        html.contains("<span class=\"add\">+Ciphers aes128-gcm@openssh.com</span>"),
        "{html}"
    );
    assert!(html.contains("<span class=\"ctx\">--- sshd_config</span>"), "{html}");
}

#[test]
fn a_file_run_answers_with_the_fastest_cipher_the_judge_accepts() {
    use crate::model::Subject;
    let file = |alg: &str, v: f64| {
        let s = Subject {
            algorithm: Some(alg.into()),
            op: Some("encrypt".into()),
            path: Some("/tmp/big.iso".into()),
            mode: Some("memory".into()),
            bytes: Some(1 << 20),
            ..Subject::default()
        };
        result(Kind::File, Metric::BytesPerSec, s, v)
    };
    let mut d = doc(vec![file("aes-256-ecb", 9.0e9), file("aes-256-ctr", 7.0e9), file("des-cbc", 0.1e9)]);
    d.verdicts = serde_json::from_value(serde_json::json!([
        {"subject": {"domain": "primitive", "name": "aes-256-ecb"}, "level": "insecure", "reasons": []},
        {"subject": {"domain": "primitive", "name": "AES-256-CTR"}, "level": "secure", "reasons": []},
    ]))
    .unwrap();
    let html: String = file_picks(&d).into_iter().map(|m| m.into_string()).collect();
    let choice = &html[html.find("class=\"choice\"").unwrap()..];
    assert!(choice.starts_with("class=\"choice\"><code>aes-<wbr>256-<wbr>ctr</code>"), "{html}");
    assert!(
        html.contains("Fastest of all: <code>aes-<wbr>256-<wbr>ecb</code>") && html.contains("level-insecure"),
        "{html}"
    );
    assert!(
        html.contains("7.00 GB/s") && html.contains("big.iso (1 MiB, memory mode)"),
        "{html}"
    );
}

#[test]
fn a_level_badge_takes_only_our_classes() {
    assert_eq!(level_badge("weak").into_string(), "<span class=\"level level-weak\">weak</span>");
    assert_eq!(
        level_badge("x level-recommended\" onclick=\"alert(1)").into_string(),
        "<span class=\"level level-unrated\">x level-recommended&quot; onclick=&quot;alert(1)</span>"
    );
}
