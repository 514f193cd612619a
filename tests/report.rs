//! `kerntune report` as a user runs it: a page from a fleet's merged database, checked as text
//! (every part there, nothing fetched from elsewhere) and in a real headless Chromium (it loads
//! with no console message and every chart has marks). The browser part needs Debian's
//! `chromium` (`make test` installs it); without it the part is skipped, and fails when
//! `KERNTUNE_REQUIRE_BROWSER` is set. The page is served over loopback HTTP, so a snap's
//! Chromium (Ubuntu's) can load it too.

use kerntune::analysis::roofline::Peaks;
use kerntune::store::db::DbFile;
use kerntune::testing::synthetic_entry;
use kerntune::Limits;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn kerntune(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kerntune")).args(args).env_remove("KERNTUNE_LOG").output().expect("kerntune runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `e` alone in the JSON database `db` in `dir`, and `kerntune report`'s page of it, written to
/// `page` there: the database's path and the page.
fn report_of_entry(dir: &Path, db: impl AsRef<Path>, page: &str, e: kerntune::store::db::Entry) -> (PathBuf, String) {
    let mut f = DbFile::default();
    f.entries.insert(e.id.key(), e);
    let db = dir.join(db);
    std::fs::write(&db, serde_json::to_string(&f).unwrap()).unwrap();
    let out = dir.join(page);
    let o = kerntune(&["report", "--db", db.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    (db, std::fs::read_to_string(&out).unwrap())
}

/// A merged fleet database: the triad on an H100 (peaks stored), on an H200 (none stored: the
/// preset's, an estimate) and on the H100 at a small size, plus another kernel.
fn fleet(dir: &Path) -> PathBuf {
    let mut f = DbFile::default();
    let mut h100 = synthetic_entry("NVIDIA H100 80GB HBM3", "cuda-sm_90-h100", "n=16777216", 400, 1.0, 1);
    Peaks::from_limits(&Limits::preset("h100").unwrap().1, "cuda device limits: theoretical peaks from its clocks and widths")
        .unwrap()
        .write(&mut h100.env.details);
    let mut h200 = synthetic_entry("NVIDIA H200", "cuda-sm_90-h200", "n=16777216", 300, 0.7, 2);
    // Tuned on two devices: each measurement names the one that measured it.
    for (i, m) in h200.measurements.values_mut().enumerate() {
        m.trace.as_mut().expect("synthetic entries are traced").device = Some(i % 2);
    }
    let small = synthetic_entry("NVIDIA H100 80GB HBM3", "cuda-sm_90-h100", "n=1024", 200, 0.01, 3);
    let mut other = synthetic_entry("NVIDIA H100 80GB HBM3", "cuda-sm_90-h100", "m=64,n=1", 20, 1.0, 4);
    other.id.kernel = "gemm".into();
    for e in [h100, h200, small, other] {
        f.entries.insert(e.id.key(), e);
    }
    let p = dir.join("fleet.json");
    std::fs::write(&p, serde_json::to_string(&f).unwrap()).unwrap();
    p
}

/// The `<figure data-chart=…>` blocks of a page: chart kind and its markup.
fn figures(html: &str) -> Vec<(String, &str)> {
    html.split("<figure data-chart=\"")
        .skip(1)
        .map(|s| {
            let kind = s.split('"').next().unwrap_or_default().to_string();
            (kind, &s[..s.find("</figure>").expect("closed figure")])
        })
        .collect()
}

/// Data marks in an SVG: dots, and bars or boxes (the white background excluded).
fn marks(svg: &str) -> usize {
    let rects = svg.split("<rect").skip(1).filter(|r| !r[..r.find('>').unwrap_or(r.len())].to_ascii_uppercase().contains("FILL=\"#FFFFFF\"")).count();
    svg.matches("<circle").count() + rects
}

/// Fewest marks each kind of chart must have on the fleet page (legend marks included).
fn least(kind: &str) -> usize {
    match kind {
        "distribution" => 8,
        "parameter" => 6,
        "failures" => 1,
        "comparison" => 4,
        _ => 20,
    }
}

fn check_charts(html: &str) {
    let f = figures(html);
    let kinds: std::collections::BTreeSet<&str> = f.iter().map(|(k, _)| k.as_str()).collect();
    for k in ["distribution", "parameter", "trace", "timeline", "compile", "failures", "roofline", "comparison"] {
        assert!(kinds.contains(k), "no {k} chart; charts: {kinds:?}");
    }
    for (kind, body) in &f {
        assert!(body.contains("<svg"), "{kind} has no SVG");
        let n = marks(body);
        assert!(n >= least(kind), "the {kind} chart has {n} marks");
        if kind == "distribution" {
            // Its legend stands right of the plot (880 wide, the last 200 pixels kept for it),
            // not over the default's line and the slowest bars.
            let at = body.find("\nconfigs per bin\n").expect("the legend names the bars");
            let tag = &body[body[..at].rfind("<text").unwrap()..at];
            let x: f64 = tag.split("x=\"").nth(1).and_then(|t| t.split('"').next()).unwrap().parse().unwrap();
            assert!(x > 680.0, "the distribution's legend at x = {x}");
        }
    }
}

#[test]
fn a_fleet_database_becomes_one_self_contained_page() {
    let d = tempfile::tempdir().unwrap();
    let db = fleet(d.path());
    let out = d.path().join("triad.html");
    // A misspelt kernel: the kernels there and the nearest.
    let o = kerntune(&["report", "--kernel", "traid", "--db", db.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(!o.status.success() && stderr(&o).contains("has no entry for kernel `traid`; did you mean `triad`? it holds `gemm`, `triad`;"), "{}", stderr(&o));
    // A size given two values: the entries of either (three triad entries: two at n=16777216,
    // one at n=1024), and of one alone.
    for (keys, n) in [(&["--key", "n=1024", "--key", "n=16777216"][..], 3), (&["--key", "n=1024"][..], 1)] {
        let o = kerntune(&[&["report", "--kernel", "triad", "--db", db.to_str().unwrap(), "--out", out.to_str().unwrap()], keys].concat());
        let said = String::from_utf8_lossy(&o.stdout);
        assert!(o.status.success() && said.contains(&format!("{n} entr")), "{keys:?}: {said}{}", stderr(&o));
    }
    let o = kerntune(&["report", "--kernel", "triad", "--db", db.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let said = String::from_utf8_lossy(&o.stdout);
    assert!(said.contains("3 entries, 900 measured configs") || said.contains("3 entries"), "{said}");
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(html.contains("more measured configs are not listed; `kerntune db export` has them all."), "a database's entries are exported from it");
    // Nothing is fetched: no script, stylesheet link, image or font, and the only URL is the
    // SVG namespace (a name, never loaded).
    for bad in ["<script", "<link", "<img", "<iframe", "@import", "url(", "src="] {
        assert!(!html.contains(bad), "the page holds `{bad}`");
    }
    let urls = html.matches("http").count();
    assert_eq!(urls, html.matches("http://www.w3.org/2000/svg").count(), "a URL other than the SVG namespace");
    assert!(html.split("href=\"").skip(1).all(|h| h.starts_with('#')), "a link out of the page");
    // Every part, for every entry.
    for part in [
        "Side by side",
        "Portability",
        "entry-1",
        "entry-2",
        "entry-3",
        "Fastest configs",
        "Parameters",
        "Search",
        "Where the time went",
        "Compile times",
        "Failures",
        "Roofline",
    ] {
        assert!(html.contains(part), "no `{part}`");
    }
    assert!(!html.contains("gemm"), "another kernel's entry is not shown");
    // The portability table's diagonal, the roofline in words, the estimate named.
    assert!(html.matches("100 %</td>").count() >= 3, "each winner is 100 % on its own entry");
    assert!(html.contains("% of peak bandwidth (memory-bound)"));
    assert!(html.contains("an estimate for this device"), "the H200's peaks come from the preset");
    assert!(html.contains("default"), "the default is marked");
    assert!(html.contains("illegal memory access"), "a failure cause with its message");
    assert!(html.contains(", on 2 devices (device 0: "), "the H200 entry's runs say which device measured how many");
    // Each of the three entries was measured by two runs: both runs' timelines, the earlier
    // folded below the newest.
    let timelines: Vec<&str> = figures(&html).into_iter().filter(|(k, _)| k == "timeline").map(|(_, f)| f).collect();
    assert_eq!(timelines.len(), 6, "a timeline per run");
    assert_eq!(timelines.iter().filter(|f| f.contains("Run 2: ")).count(), 3);
    assert_eq!(timelines.iter().filter(|f| f.contains("Run 1: ") && f.contains("keeps one record")).count(), 3);
    assert_eq!(html.matches("<summary>Earlier runs (1)</summary>").count(), 3);
    check_charts(&html);

    // `--out /dev/stdout` into a reader that stops early (`| head -c 100`): the page goes down
    // the pipe, and the closed pipe ends the command quietly, as a closed standard output does.
    #[cfg(unix)]
    {
        use std::io::Read;
        let mut child = Command::new(env!("CARGO_BIN_EXE_kerntune"))
            .args(["report", "--kernel", "triad", "--db", db.to_str().unwrap(), "--out", "/dev/stdout"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut head = [0u8; 100];
        child.stdout.take().unwrap().read_exact(&mut head).unwrap(); // then closed: the page is larger than a pipe holds
        let o = child.wait_with_output().unwrap();
        assert_eq!(&head[..15], b"<!DOCTYPE html>");
        assert!(o.status.success() && stderr(&o).is_empty(), "{:?}: {}", o.status, stderr(&o));
    }
}

/// Serves `page` over HTTP on 127.0.0.1 to every request until the browser stops asking (a
/// second of quiet after the first), on a thread; returns its URL and the thread.
fn serve_page(page: Vec<u8>) -> (String, std::thread::JoinHandle<()>) {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    let url = format!("http://{}/triad.html", listener.local_addr().unwrap());
    listener.set_nonblocking(true).unwrap();
    let server = std::thread::spawn(move || {
        let (start, mut last) = (std::time::Instant::now(), None::<std::time::Instant>);
        loop {
            match listener.accept() {
                Ok((mut s, _)) => {
                    s.set_nonblocking(false).unwrap();
                    s.set_read_timeout(Some(std::time::Duration::from_secs(5))).unwrap();
                    let mut req = [0u8; 4096];
                    let n = s.read(&mut req).unwrap_or(0);
                    let wanted = String::from_utf8_lossy(&req[..n]).starts_with("GET /triad.html ");
                    let (status, body): (&str, &[u8]) = if wanted { ("200 OK", &page) } else { ("404 Not Found", b"") };
                    let head =
                        format!("HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n", body.len());
                    let _ = s.write_all(head.as_bytes()).and_then(|_| s.write_all(body));
                    last = Some(std::time::Instant::now());
                }
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    let quiet = last.map_or(start.elapsed().as_secs() >= 120, |t| t.elapsed().as_secs() >= 1);
                    if quiet {
                        return;
                    }
                    std::thread::sleep(std::time::Duration::from_millis(10));
                }
                Err(e) => panic!("the page server: {e}"),
            }
        }
    });
    (url, server)
}

/// Whether `program` on PATH is a snap's (Ubuntu's `chromium`: a link into /snap or to
/// /usr/bin/snap).
fn in_a_snap(program: &str) -> bool {
    let Some(path) = std::env::var_os("PATH") else { return false };
    std::env::split_paths(&path).map(|d| d.join(program)).find(|p| p.is_file()).is_some_and(|p| {
        let real = p.canonicalize().unwrap_or(p.clone());
        p.starts_with("/snap") || real.starts_with("/snap") || real == Path::new("/usr/bin/snap")
    })
}

#[test]
fn the_page_loads_in_a_real_browser_without_a_console_message() {
    let Some(chromium) =
        ["chromium", "chromium-browser", "google-chrome"].into_iter().find(|b| Command::new(b).arg("--version").output().is_ok_and(|o| o.status.success()))
    else {
        assert!(std::env::var_os("KERNTUNE_REQUIRE_BROWSER").is_none(), "KERNTUNE_REQUIRE_BROWSER is set but no chromium here; run scripts/setup.sh --test");
        kerntune::testing::skipped("the report's browser test: no chromium, chromium-browser or google-chrome on PATH (Debian: apt-get install chromium)");
        return;
    };
    let d = tempfile::tempdir().unwrap();
    let db = fleet(d.path());
    let out = d.path().join("triad.html");
    let o = kerntune(&["report", "--kernel", "triad", "--db", db.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    // Served over loopback rather than read from a file: Ubuntu's Chromium is a snap, which has
    // its own /tmp and cannot read the test's files there, but may reach 127.0.0.1.
    let (url, server) = serve_page(std::fs::read(&out).unwrap());
    let profile = d.path().join("profile");
    let mut b = Command::new(chromium);
    b.args(["--headless=new", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr", "--v=0", "--dump-dom"])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(&url);
    // Outside a snap, the browser's other files (its NSS database, crash reports) stay out of
    // the user's home too; a snap sets its own HOME.
    if !in_a_snap(chromium) {
        b.env("HOME", d.path());
    }
    let b = b.output().expect("chromium runs");
    server.join().expect("the page server ends");
    let (dom, log) = (String::from_utf8_lossy(&b.stdout).into_owned(), stderr(&b));
    assert!(b.status.success(), "chromium failed: {log}");
    let console: Vec<&str> = log.lines().filter(|l| l.contains(":CONSOLE")).collect();
    assert!(console.is_empty(), "console messages: {console:#?}");
    assert!(dom.contains("</html>") && dom.contains("Side by side"), "the page did not render: {}", &dom[..dom.len().min(500)]);
    // The browser parsed every chart, with its marks.
    check_charts(&dom);
}

#[test]
fn bad_report_requests_get_one_line_saying_what_to_do() {
    let d = tempfile::tempdir().unwrap();
    let db = fleet(d.path());
    let (db, out) = (db.to_str().unwrap(), d.path().join("r.html"));
    let out = out.to_str().unwrap();
    let cases: [(&[&str], &str); 9] = [
        (&["report", "--db", "/nonexistent/db.sqlite", "--out", out], "does not exist"),
        (&["report", "--db", db, "--out", out], "2 kernels (`gemm`, `triad`); name one with --kernel"),
        (
            &["report", "--db", db, "--kernel", "triad", "--out", "/nonexistent/r.html"],
            "--out: cannot write /nonexistent/r.html: the folder /nonexistent does not exist",
        ),
        (&["report", "--db", db, "--kernel", "conv", "--out", out], "no entry for kernel `conv`"),
        (&["report", "--db", db, "--kernel", "triad", "--key", "n", "--out", out], "--key: `n` is not NAME=VALUE"),
        (&["report", "--db", db, "--kernel", "triad", "--key", "n=7", "--out", out], "no entry of `triad` matches"),
        (&["report", "--db", db, "--kernel", "triad", "--out", "r.png"], "--out: r.png does not end in .html"),
        // Without --kernel, filters that leave entries of two kernels, or none.
        (&["report", "--db", db, "--target", "h100", "--out", out], "entries of 2 kernels match --key/--target (`gemm`, `triad`); name one with --kernel"),
        (&["report", "--db", db, "--key", "n=7", "--out", out], "no entry in"),
    ];
    for (args, want) in cases {
        let o = kerntune(args);
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {e}");
        assert!(e.starts_with("error: ") && e.contains(want) && e.lines().count() == 1, "{args:?}: {e}");
    }
    // A problem of several sizes is named as `tune --key` names it, or one size per --key.
    for keys in [&["--key", "m=64,n=1"][..], &["--key", "m=64", "--key", "n=1"][..], &["--key", "n=1"][..]] {
        let o = kerntune(&[&["report", "--db", db, "--kernel", "gemm", "--out", out][..], keys].concat());
        assert!(o.status.success(), "{keys:?}: {}", stderr(&o));
    }
    // Without --kernel, filters that leave one kernel's entries pick it.
    let o = kerntune(&["report", "--db", db, "--key", "n=1024", "--out", out]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(std::fs::read_to_string(out).unwrap().contains("kernel triad"));
    let o = kerntune(&["report", "--db", db, "--kernel", "gemm", "--key", "m=64,n=2", "--out", out]);
    assert!(stderr(&o).contains("no entry of `gemm` matches"), "{}", stderr(&o));
    // A filter that leaves one entry gives a page without the side-by-side part.
    let o = kerntune(&["report", "--db", db, "--kernel", "triad", "--key", "n=1024", "--target", "h100", "--out", out]);
    assert!(o.status.success(), "{}", stderr(&o));
    let html = std::fs::read_to_string(out).unwrap();
    assert!(html.contains("entry-1") && !html.contains("entry-2") && !html.contains("Side by side"));
}

/// The numeric tick labels of an SVG chart, in order.
fn numeric_labels(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| {
            let inner = t[t.find('>')? + 1..t.find("</text>")?].trim().to_string();
            inner.parse::<f64>().is_ok().then_some(inner)
        })
        .collect()
}

/// A tune of a few configs: its count axes (configs per bin, evaluations, failed configs) read in
/// whole numbers — they read "0 0 1 1 1 2", plotters' ticks at quarter steps rounded — one
/// failure kind fills its own slot, not half of two; and under the failures' table, what the
/// tune found out (stored with its run) and what the configs that timed out share.
#[test]
fn a_small_tune_reads_in_whole_numbers_and_names_what_its_failures_share() {
    use kerntune::store::db::{Measurement, Status};
    let d = tempfile::tempdir().unwrap();
    let mut e = synthetic_entry("llvmpipe", "wgpu-llvmpipe", "n=1024", 5, 1.0, 1);
    e.measurements.retain(|_, m| matches!(m.status, Status::Ok { .. }));
    assert!(e.measurements.len() >= 4, "{}", e.measurements.len());
    for last in [8i64, 9] {
        let config = kerntune::Config::new([("a", 9i64), ("b", 9), ("c", 9), ("d", 9), ("e", last)]);
        let status = Status::Failed { failure: kerntune::FailureKind::TimedOut, message: "timed out after 1.000 s".into() };
        // Evaluations of the newer run, after its two measured configs.
        let trace = kerntune::store::db::Trace {
            run: 1_763_990_000,
            seq: 2 + (last - 8) as usize,
            elapsed_s: 0.4,
            compile_s: None,
            eval_s: None,
            device: None,
            by: None,
            spans: vec![],
            shard: None,
        };
        e.record(config.key(), Measurement { config, status, usage: None, at: 1, verified: None, trace: Some(trace), flops: None, bytes: None });
    }
    // The tune's own findings, stored with its run (the report shows them before what the
    // records show; the shared value once, counted over the records).
    let limit = "timed out: a launch did not end within the 1 s limit ([bench] timeout), 400× the slowest config measured (2.5 ms)";
    let shared = "timed out: every config that timed out has a = 9 (2 configs), and no config measured has it";
    let note = kerntune::store::db::RunNote {
        run: 1_763_990_000,
        strategy: "exhaustive".into(),
        prior: None,
        search: None,
        findings: vec![limit.into(), shared.replace("(2 configs)", "(3 configs)")],
        verification: None,
        memcheck: None,
        time: None,
        winner_withheld: None,
        time_limit_ms: None,
        shard: None,
    };
    e.note_runs([&note]);
    let (_, html) = report_of_entry(d.path(), "small.json", "small.html", e);
    for (kind, body) in figures(&html) {
        let labels = numeric_labels(body);
        assert!(labels.windows(2).all(|w| w[0] != w[1]), "the {kind} chart repeats a tick label: {labels:?}");
        if kind == "failures" {
            assert!(labels.iter().all(|l| !l.contains('.')), "the {kind} chart counts configs in fractions: {labels:?}");
        }
    }
    // The two failed evaluations are drawn in the search chart too (a red tick each, in each
    // half, and one in the legend of the two runs' lines), and its caption counts them.
    let trace = figures(&html).into_iter().find(|(k, _)| k == "trace").expect("a search chart").1;
    assert_eq!(trace.matches("stroke=\"#C0392B\"").count(), 2 * 2 + 1, "a red tick per failed evaluation in each half: {trace}");
    assert!(html.contains("Red ticks along the top are the 2 evaluations that failed (see Failures)."), "the search chart's caption counts them");
    let failures = figures(&html).into_iter().find(|(k, _)| k == "failures").expect("a failures chart").1;
    assert!(numeric_labels(failures).starts_with(&["0".to_string(), "1".to_string(), "2".to_string()]), "{:?}", numeric_labels(failures));
    // Drawn by the parameter that tells the failed configs from the measured: every `a = 9` timed out.
    assert!(failures.contains("Configs by a: measured, and failed by kind"), "{failures}");
    assert_eq!(html.matches(shared).count(), 1, "the shared value, once");
    assert!(!html.contains("(3 configs)"), "the records' count replaces the run's own on the same kind");
    assert!(html.find(limit).is_some_and(|at| at < html.find(shared).unwrap()), "the tune's findings, in its order");
}

/// A run whose winner the memory checker saw reading past a buffer (`tune --memcheck`, stored
/// with the run): the report says so in bold under the run, and `db show` after the winner; a
/// clean verdict is a plain line.
#[test]
fn a_winner_that_reads_past_its_buffers_is_said_by_the_report_and_db_show() {
    let d = tempfile::tempdir().unwrap();
    let said = "the winner (a=1) passed verification, but compute-sanitizer (memcheck) reported: Invalid __global__ read of size 4 bytes";
    for (verdict, bold) in [("out of bounds", true), ("clean", false)] {
        let mut e = synthetic_entry("NVIDIA H200", "cuda-sm_90-h200", "n=1024", 4, 1.0, 1);
        let run = e.measurements.values().find_map(|m| m.trace.as_ref().map(|t| t.run)).unwrap_or(1);
        let note = kerntune::store::db::RunNote {
            run,
            strategy: "exhaustive".into(),
            prior: None,
            search: None,
            findings: Vec::new(),
            verification: Some("default config".into()),
            memcheck: Some(kerntune::store::db::WinnerMemcheck { config: "a=1".into(), verdict: verdict.into(), line: said.into() }),
            time: None,
            winner_withheld: None,
            time_limit_ms: None,
            shard: None,
        };
        e.note_runs([&note]);
        let (db, html) = report_of_entry(d.path(), format!("{}.json", verdict.replace(' ', "-")), "memcheck.html", e);
        let o = kerntune(&["db", "show", "--db", db.to_str().unwrap()]);
        let shown = String::from_utf8_lossy(&o.stdout).to_string();
        if bold {
            assert!(html.contains("<strong>the winner reads or writes past its buffers</strong> (memcheck): the winner (a=1) passed verification"), "{html}");
            assert!(shown.contains("; the winner reads or writes past its buffers (tune --memcheck)"), "{shown}");
        } else {
            assert!(html.contains(&format!("memcheck: {said}")) && !html.contains("<strong>the winner reads"), "{html}");
            assert!(!shown.contains("reads or writes past"), "{shown}");
        }
    }
}

/// A run its time limit stopped says so in the run's line (a later tune given more time
/// searches on from it), a shard's run names its shard and `confirm`'s says what it was; a
/// run of one evaluation is said in the singular.
#[test]
fn a_run_its_time_limit_stopped_is_said() {
    let d = tempfile::tempdir().unwrap();
    // Two configs: one measured by each of the entry's two runs.
    let mut e = synthetic_entry("NVIDIA H200", "cuda-sm_90-h200", "n=1024", 2, 1.0, 1);
    let mut runs: Vec<u64> = e.measurements.values().filter_map(|m| m.trace.as_ref().map(|t| t.run)).collect();
    runs.sort();
    assert_eq!(runs.len(), 2);
    // The first a shard's, its time limit stopped; the second `confirm`'s (listed configs).
    let shard = Some(kerntune::spec::settings::Shard { index: 0, count: 2 });
    let first = kerntune::store::db::RunNote { run: runs[0], strategy: "random".into(), time_limit_ms: Some(3000), shard, ..Default::default() };
    let second = kerntune::store::db::RunNote { run: runs[1], strategy: kerntune::store::db::LISTED.into(), ..Default::default() };
    for m in e.measurements.values_mut() {
        if let Some(t) = m.trace.as_mut().filter(|t| t.run == runs[0]) {
            t.shard = shard;
        }
    }
    e.note_runs([&first, &second]);
    let (_, html) = report_of_entry(d.path(), "timed.json", "timed.html", e);
    let lines: Vec<&str> = html.split("<li>").skip(1).filter(|l| l.starts_with("run ")).collect();
    assert_eq!(lines.len(), 2, "{html}");
    assert!(lines[0].contains(": 1 evaluation over ") && lines[0].contains(" s, stopped at its time limit of 3 s, strategy "), "{}", lines[0]);
    assert!(lines[1].contains(": 1 evaluation over ") && !lines[1].contains("time limit"), "{}", lines[1]);
    assert!(lines[0].starts_with("run 1 (shard 0/2), started "), "{}", lines[0]);
    assert!(lines[1].starts_with("run 2 (the listed configs measured again: <code>kerntune confirm</code>), started "), "{}", lines[1]);
    assert!(html.contains("run 1, shard 0/2 (1 evaluation)"), "the chart's legend");
    assert!(!html.contains("(1 evaluations)"), "the chart's legend");
}

/// A problem without sizes (a T1 spec's) is named by the kernel alone: no ` ()` and no space
/// before a colon, in `db show` and in `report`'s words for entries that do not match.
#[test]
fn a_problem_without_sizes_is_named_by_its_kernel_alone() {
    let d = tempfile::tempdir().unwrap();
    let e = synthetic_entry("NVIDIA H200", "cuda-sm_90-h200", "", 4, 1.0, 1);
    let (db, _) = report_of_entry(d.path(), "t1.json", "t1.html", e);
    let db = db.to_str().unwrap();
    let o = kerntune(&["db", "show", "--db", db]);
    let shown = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(shown.contains("triad on NVIDIA H200 [cuda-sm_90-h200]: 4 measured (0 failed)"), "{shown}");
    let o = kerntune(&["report", "--db", db, "--target", "A100", "-o", d.path().join("none.html").to_str().unwrap()]);
    let err = stderr(&o);
    assert!(!o.status.success() && err.contains("the database has: NVIDIA H200") && !err.contains("()"), "{err}");
}

/// One GPU through two backends has one device name: its two entries of one problem are named
/// by their targets too, in the list, the headings and the side-by-side table; an entry alone
/// on its device and problem keeps its plain name. Entries of an edited kernel or another
/// toolchain on one target are named by their source or toolchain.
#[test]
fn one_gpu_through_two_backends_is_named_apart() {
    let d = tempfile::tempdir().unwrap();
    let mut f = DbFile::default();
    let cuda = synthetic_entry("NVIDIA H100 80GB HBM3", "cuda-sm_90-h100", "n=1024", 40, 1.0, 1);
    let vulkan = synthetic_entry("NVIDIA H100 80GB HBM3", "wgpu-vulkan-10de-h100", "n=1024", 40, 0.8, 2);
    let big = synthetic_entry("NVIDIA H100 80GB HBM3", "cuda-sm_90-h100", "n=4096", 40, 4.0, 3);
    for e in [cuda, vulkan, big] {
        f.entries.insert(e.id.key(), e);
    }
    let db = d.path().join("two.json");
    std::fs::write(&db, serde_json::to_string(&f).unwrap()).unwrap();
    let out = d.path().join("two.html");
    let o = kerntune(&["report", "--db", db.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let html = std::fs::read_to_string(&out).unwrap();
    for t in ["cuda-sm_90-h100", "wgpu-vulkan-10de-h100"] {
        assert!(html.contains(&format!("NVIDIA H100 80GB HBM3 [{t}] (n=1024)")), "{t}");
    }
    assert!(html.contains("NVIDIA H100 80GB HBM3 (n=4096)") && !html.contains("[cuda-sm_90-h100] (n=4096)"));
    // An edited kernel on one device and problem: named by its source; with a new driver's entry
    // beside them, by what tells each from the others.
    let old = synthetic_entry("NVIDIA H100 80GB HBM3", "cuda-sm_90-h100", "n=1024", 40, 1.0, 1);
    let mut edited = old.clone();
    edited.id.kernel_hash = "4cd2bf2dc052a1b2c3".into();
    let mut driver = old.clone();
    driver.id.toolchain = "nvrtc-13.1".into();
    let page = |entries: &[&kerntune::store::db::Entry]| {
        let mut f = DbFile::default();
        for e in entries {
            f.entries.insert(e.id.key(), (*e).clone());
        }
        std::fs::write(&db, serde_json::to_string(&f).unwrap()).unwrap();
        let o = kerntune(&["report", "--db", db.to_str().unwrap(), "--out", out.to_str().unwrap()]);
        assert!(o.status.success(), "{}", stderr(&o));
        std::fs::read_to_string(&out).unwrap()
    };
    let html = page(&[&old, &edited]);
    for name in ["[source synthetic]", "[source 4cd2bf2dc052]"] {
        assert!(html.contains(&format!("NVIDIA H100 80GB HBM3 {name} (n=1024)")), "{name}");
    }
    let html = page(&[&old, &edited, &driver]);
    for name in ["[source synthetic, toolchain synthetic]", "[source 4cd2bf2dc052, toolchain synthetic]", "[source synthetic, toolchain nvrtc-13.1]"] {
        assert!(html.contains(&format!("NVIDIA H100 80GB HBM3 {name} (n=1024)")), "{name}");
    }
}

/// An entry whose every config failed (a stencil that reads past its input everywhere): the page
/// says so where each part would show measurements, and blames no older kerntune.
#[test]
fn an_entry_of_failures_says_every_config_failed() {
    use kerntune::store::db::Status;
    let d = tempfile::tempdir().unwrap();
    let mut e = synthetic_entry("NVIDIA H200", "cuda-sm_90-h200", "n=1024", 6, 1.0, 1);
    e.winner = None;
    for m in e.measurements.values_mut() {
        m.status = Status::Failed { failure: kerntune::FailureKind::DeviceLost, message: "CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access".into() };
    }
    let (_, html) = report_of_entry(d.path(), "failed.json", "failed.html", e);
    assert!(html.contains("no winner: every config measured failed (6; see Failures)"), "the reason there is no winner");
    assert!(!html.contains("did not finish") && !html.contains("older kerntune"), "no wrong reason");
    assert_eq!(html.matches("Nothing was measured successfully.").count(), 3, "times, the fastest configs and search say so");
    assert!(!html.contains("<th>time</th>"), "no empty table of the fastest");
    // The compiles the failed configs took are drawn, and the roofline blames no spec.
    assert!(html.contains("Compile seconds per config (6 configs, 6 of them failed") && html.contains("red crosses: configs that failed after compiling"));
    assert!(html.contains("No roofline: nothing was measured successfully.") && !html.contains("the spec gives no `flops`"));
}

/// A database damaged or edited by hand draws, never panics: a span 10^300 s into its run, a
/// job on device 2^53, a compile of −5 s and a run started in the year 285 million (before, the
/// report panicked or aborted on each); the page says what it left out.
#[test]
fn records_no_tune_could_have_made_are_left_out_of_the_pictures() {
    let d = tempfile::tempdir().unwrap();
    let mut e = synthetic_entry("NVIDIA H200", "cuda-sm_90-h200", "n=1024", 40, 1.0, 1);
    let mut traces = e.measurements.values_mut().filter_map(|m| m.trace.as_mut());
    let t = traces.next().unwrap();
    t.spans.push(kerntune::store::db::Span { what: kerntune::store::db::SpanKind::Compile, device: None, from_s: 1e300, to_s: 1e300 });
    t.compile_s = Some(-5.0);
    let t = traces.next().unwrap();
    t.spans.push(kerntune::store::db::Span { what: kerntune::store::db::SpanKind::Measure, device: Some(1 << 53), from_s: 1.0, to_s: 2.0 });
    t.run = 1 << 53;
    let (_, html) = report_of_entry(d.path(), "damaged.json", "damaged.html", e);
    assert!(html.contains("2 recorded span(s) or run time(s) no tune could have recorded"), "the page says what it left out");
    assert!(html.contains("s after 1970 (not a date: a damaged record)"));
    let kinds: Vec<String> = figures(&html).into_iter().map(|(k, _)| k).collect();
    for want in ["timeline", "trace", "compile"] {
        assert!(kinds.iter().any(|k| k == want), "no {want} chart: {kinds:?}");
    }
}

/// Configs at one arithmetic intensity are drawn by rank (a roofline of them is one column of
/// dots), in FLOP/s where the kernel is compute-bound by its intensity; configs whose intensities
/// differ are drawn on the roofline.
#[test]
fn one_intensity_is_drawn_by_rank_and_several_on_the_roofline() {
    let d = tempfile::tempdir().unwrap();
    let chart = |flops: &dyn Fn(usize) -> f64| {
        let mut e = synthetic_entry("llvmpipe", "wgpu-llvmpipe", "n=1024", 8, 1.0, 1);
        for (i, m) in e.measurements.values_mut().enumerate() {
            m.flops = Some(flops(i));
        }
        let (_, html) = report_of_entry(d.path(), "intensity.json", "intensity.html", e);
        figures(&html).into_iter().find(|(k, _)| k == "roofline").expect("a rate chart").1.to_string()
    };
    // 24 × 2^24 bytes per launch; 100 FLOP per byte for every config: compute-bound.
    let one = chart(&|_| 2400.0 * (1u64 << 24) as f64);
    assert!(one.contains("rank by time") && one.contains("Achieved GFLOP/s per config"), "{one}");
    let several = chart(&|i| (1 + i) as f64 * (1u64 << 24) as f64);
    assert!(several.contains("arithmetic intensity (FLOP/byte, log)"), "{several}");
}

/// A kernel with a byte formula alone: its rates are drawn against rank by time, and a config's
/// dot stands at the rank the table gives it (the winner at 1; the chart counted from 0, so
/// every dot stood one rank left of its row). A tune without priors says nothing of sources.
#[test]
fn the_rank_chart_numbers_configs_as_the_table_does() {
    let d = tempfile::tempdir().unwrap();
    let mut e = synthetic_entry("llvmpipe", "wgpu-llvmpipe", "n=1024", 8, 1.0, 1);
    e.measurements.retain(|_, m| matches!(m.status, kerntune::store::db::Status::Ok { .. }));
    for m in e.measurements.values_mut() {
        m.flops = None;
    }
    let (_, html) = report_of_entry(d.path(), "ranks.json", "ranks.html", e);
    let svg = figures(&html).into_iter().find(|(k, _)| k == "roofline").expect("a rank chart").1;
    assert!(svg.contains("rank by time"), "the chart of rates against rank");
    // The x axis's tick labels: numbers centred below the plot, all on one line.
    let attr = |t: &str, name: &str| -> Option<f64> {
        let at = t.find(&format!(" {name}=\""))? + name.len() + 3;
        t[at..at + t[at..].find('"')?].parse().ok()
    };
    let ticks: Vec<(f64, f64, f64)> = svg
        .split("<text")
        .skip(1)
        .filter(|t| t.contains("text-anchor=\"middle\"") && !t.contains("rotate"))
        .filter_map(|t| {
            let label: f64 = t[t.find('>')? + 1..t.find("</text>")?].trim().parse().ok()?;
            Some((label, attr(t, "x")?, attr(t, "y")?))
        })
        .collect();
    let bottom = ticks.iter().map(|t| t.2).fold(0.0, f64::max);
    let axis: Vec<(f64, f64)> = ticks.iter().filter(|t| t.2 == bottom).map(|t| (t.0, t.1)).collect();
    assert!(axis.len() >= 2, "two rank labels at least: {ticks:?}");
    let ((r0, x0), (r1, x1)) = (axis[0], axis[axis.len() - 1]);
    let rank_at = |x: f64| r0 + (x - x0) * (r1 - r0) / (x1 - x0);
    // The winner's dot: the larger circle in the winner's colour, not its legend mark.
    let winner = svg.split("<circle").skip(1).find(|c| c.contains("r=\"6\"") && c.contains("#1B9E77")).and_then(|c| attr(c, "cx")).expect("the winner's dot");
    assert!((rank_at(winner) - 1.0).abs() < 0.1, "the winner (the fastest) stands at rank {:.2}, not 1", rank_at(winner));
    assert!(!html.contains("sources' ranking"), "no run learned from sources");
}

/// A Kernel Tuner cache as Kernel Tuner writes it: `device`'s times of `b` ∈ 1..=6 (ms), one
/// config failing to compile, timestamps a second apart in the order measured (not the
/// keys' order), compile and benchmark times in ms.
fn kt_cache(device: &str, fast: i64) -> String {
    let mut cache = serde_json::Map::new();
    for (n, b) in [3i64, 1, 5, 2, 6, 4].into_iter().enumerate() {
        let time = if b == 5 { serde_json::json!("CompilationFailedConfig") } else { serde_json::json!(1.0 + (b - fast).abs() as f64) };
        cache.insert(
            format!("{b},7"),
            serde_json::json!({"b": b, "c": 7, "time": time, "times": [1.0 + (b - fast).abs() as f64], "compile_time": 300.0 + 100.0 * b as f64,
                "benchmark_time": 50.0, "verification_time": 0, "GB/s": 100.0 / (1.0 + (b - fast).abs() as f64), "timestamp": format!("2026-11-20 22:58:{:02}.000000+00:00", 10 + n)}),
        );
    }
    serde_json::json!({"device_name": device, "kernel_name": "stencil", "problem_size": [4096, 4096], "tune_params_keys": ["b", "c"],
        "tune_params": {"b": [1, 2, 3, 4, 5, 6], "c": [7]}, "objective": "time", "cache": cache})
    .to_string()
}

/// Kernel Tuner users' results as pictures: caches of two GPUs drawn side by side, each one entry
/// (its device, kernel and problem; the fastest config the winner; the search in the order the
/// timestamps give; compile times; the failure). Any other command given such a file as its
/// database says what it is and what to do, and never suggests clearing it.
#[test]
fn kernel_tuner_caches_are_drawn_as_entries() {
    use std::io::Write;
    let d = tempfile::tempdir().unwrap();
    let a = d.path().join("stencil_A100.json");
    std::fs::write(&a, kt_cache("NVIDIA A100", 2)).unwrap();
    let b = d.path().join("stencil_W7800.json.gz");
    let mut gz = flate2::write::GzEncoder::new(std::fs::File::create(&b).unwrap(), flate2::Compression::default());
    gz.write_all(kt_cache("AMD Radeon PRO W7800", 4).as_bytes()).unwrap();
    gz.finish().unwrap();
    let out = d.path().join("kt.html");
    let o = kerntune(&["report", "--db", a.to_str().unwrap(), b.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let html = std::fs::read_to_string(&out).unwrap();
    for want in ["stencil on NVIDIA A100 (problem_size=4096x4096)", "stencil on AMD Radeon PRO W7800", "Portability", "CompilationFailedConfig (as recorded)"] {
        assert!(html.contains(want), "`{want}` missing");
    }
    let kinds: Vec<String> = figures(&html).into_iter().map(|(k, _)| k).collect();
    for want in ["distribution", "trace", "compile", "failures", "comparison"] {
        assert!(kinds.iter().any(|k| k == want), "no {want} chart: {kinds:?}");
    }
    // `--charts DIR` writes each chart as an SVG file of its own, named by entry and kind.
    let charts = d.path().join("charts");
    let o = kerntune(&["report", "--db", a.to_str().unwrap(), b.to_str().unwrap(), "-o", out.to_str().unwrap(), "--charts", charts.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let mut files: Vec<String> = std::fs::read_dir(&charts).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    files.sort();
    assert_eq!(files.len(), kinds.len(), "one file per chart of the page: {files:?}");
    for want in ["side-by-side-comparison.svg", "entry-1-distribution.svg", "entry-2-failures.svg", "entry-1-trace.svg"] {
        assert!(files.iter().any(|f| f == want), "no {want}: {files:?}");
    }
    let svg = std::fs::read_to_string(charts.join("entry-1-distribution.svg")).unwrap();
    assert!(svg.starts_with("<svg ") && svg.contains("xmlns=\"http://www.w3.org/2000/svg\"") && svg.trim_end().ends_with("</svg>"), "a standalone SVG");
    // A folder that cannot be made is one line naming it, said before the page is written.
    let fresh = d.path().join("fresh.html");
    let o = kerntune(&["report", "--db", a.to_str().unwrap(), "-o", fresh.to_str().unwrap(), "--charts", a.to_str().unwrap()]);
    let err = stderr(&o);
    assert!(!o.status.success() && err.lines().filter(|l| l.starts_with("error:")).count() == 1 && err.contains("--charts"), "{err}");
    assert!(!fresh.exists(), "no page without its charts");
    // Each winner is its cache's fastest config; the trace spans the timestamps (5 s).
    assert!(html.contains("b=2,c=7") && html.contains("b=4,c=7"));
    assert!(html.contains("6 evaluations over 5.0 s"), "the run as its timestamps give it");
    // Kernel Tuner's GB/s observer: bytes per launch, so the achieved rate per config is drawn.
    assert!(kinds.iter().any(|k| k == "roofline"), "no rate chart: {kinds:?}");
    assert!(html.contains("A recorded space (a Kernel Tuner cache or T4 file) keeps no record of when each compile"), "why no timeline");
    // `c` has one value: a chart for `b` in each entry, none for `c`, and a line that says so.
    assert_eq!(kinds.iter().filter(|k| *k == "parameter").count(), 2, "{kinds:?}");
    assert_eq!(html.matches("No chart for a parameter with one value measured (1).").count(), 2);
    // ... and the tables say it once instead of in every key.
    assert_eq!(html.matches("Every measured config has <code>c=7</code>, left out of the keys below.").count(), 2);
    assert!(html.contains("<td><code>b=2</code></td>"), "a key without `c`");
    // One launch per config: no interval column; Kernel Tuner's GB/s: a rate column.
    assert!(!html.contains("<th>±95 %</th>") && html.contains("<th>GB/s</th>") && !html.contains("<th>GFLOP/s</th>"));
    // Without timestamps (as the recorded spaces in ../shared/spaces/gpus are kept) the run has
    // no start: the seconds are the recorded compile and benchmark times summed (3.9 + 0.3 s),
    // not since 1970.
    let c = d.path().join("stencil_untimed.json");
    let mut untimed: serde_json::Value = serde_json::from_str(&kt_cache("NVIDIA A100", 2)).unwrap();
    for e in untimed["cache"].as_object_mut().unwrap().values_mut() {
        e.as_object_mut().unwrap().remove("timestamp");
    }
    std::fs::write(&c, untimed.to_string()).unwrap();
    let o = kerntune(&["report", "--db", c.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(html.contains("run 1 (its start not recorded): 6 evaluations over 4.2 s") && !html.contains("1970"), "the run without a start");
    for args in [vec!["db", "show", "--db", a.to_str().unwrap()], vec!["db", "show", "--db", b.to_str().unwrap()]] {
        let o = kerntune(&args);
        let err = stderr(&o);
        assert!(!o.status.success() && err.contains("is a Kernel Tuner cache, not a kerntune database") && err.contains("--prior"), "{err}");
        assert!(!err.contains("db clear"), "never the advice to delete it: {err}");
    }
}

/// A tune's `--json` report (as `kerntune tune --json --no-db` prints it, trimmed to what a
/// report of `n` configs holds) is drawn as its database entry would be: its run started when the
/// report says, and the configs beyond the table are in the file, not in a database to export.
#[test]
fn a_tune_report_is_drawn_and_its_file_named_for_the_configs_not_listed() {
    let d = tempfile::tempdir().unwrap();
    let stats = |ms: f64| serde_json::json!({"samples": 5, "mean": ms / 1e3, "median": ms / 1e3, "min": ms / 1e3, "max": ms / 1e3, "stddev": 0.0, "ci_half": 1e-6, "raced": false});
    let results: Vec<serde_json::Value> = (0..30)
        .map(|i| {
            serde_json::json!({"config": {"params": [["bx", 32 * (i + 1)]]}, "outcome": "measured", "stats": stats(1.0 + i as f64 / 10.0),
                "usage": null, "from_db": false, "flops": null, "bytes": null, "compile_seconds": 0.2, "eval_seconds": 0.01, "seq": i,
                "elapsed_s": 0.3 + i as f64 * 0.05, "verified": true, "spans": [{"what": "compile", "from_s": 0.0, "to_s": 0.2}]})
        })
        .collect();
    let report = serde_json::json!([{
        "target": {"backend": "cuda", "vendor": "nvidia", "arch": "sm_90", "name": "NVIDIA H100 80GB HBM3", "fingerprint": "cuda-sm_90-h100"},
        "entry": {"kernel": "triad", "kernel_hash": "abc", "target": "cuda-sm_90-h100", "toolchain": "cuda 13", "problem": "n=1024"},
        "db_hit": false, "winner": {"params": [["bx", 32]]}, "winner_stats": stats(1.0), "tie_band": [{"params": [["bx", 32]]}],
        "results": results, "candidates": 30, "strategy": "exhaustive", "reference": "cpu:triad", "wall_seconds": 2.0, "compile_threads": 4, "devices": [{}],
        "timing": "events", "ended_early": false, "notes": [], "started": 1_796_558_400u64
    }]);
    let path = d.path().join("triad.json");
    std::fs::write(&path, report.to_string()).unwrap();
    let out = d.path().join("triad.html");
    let o = kerntune(&["report", "--db", path.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(html.contains("triad on NVIDIA H100 80GB HBM3 (n=1024)") && html.contains("30 evaluations over"), "the entry and its run");
    assert!(html.contains("run 1, started 2026-12-06 12:00:00 UTC: 30 evaluations"), "the run's start, from the report's `started`");
    assert!(html.contains("5 more measured configs are not listed; the file they were read from has them all."), "the table's tail");
}

/// A Kernel Tuner cache as Python's `json` writes it (`NaN` and `Infinity` where numbers go) and
/// as a run still writing it leaves it (cut off inside an entry): `report` draws both, says the
/// second was cut off and how many entries it read, `simulate` reads them with the same note, and
/// a command given one as its database says what it is, never that it is a damaged database
/// to clear (both read `is corrupt … run kerntune db clear` before).
#[test]
fn kernel_tuner_caches_with_python_numbers_or_cut_off_are_read() {
    let d = tempfile::tempdir().unwrap();
    // Kernel Tuner writes its header first and its cache last, entry by entry.
    let v: serde_json::Value = serde_json::from_str(&kt_cache("NVIDIA A100", 2)).unwrap();
    let mut head = v.clone();
    head.as_object_mut().unwrap().remove("cache");
    let head = head.to_string();
    let text = format!("{},\"cache\":{}}}", &head[..head.len() - 1], v["cache"]);
    // Python's non-finite numbers: a config timed NaN, a repetition and a rate infinite.
    let python = text.replacen(r#""time":5.0"#, r#""time":NaN"#, 1).replacen(r#""times":[2.0]"#, r#""times":[2.0,Infinity]"#, 1).replacen(
        r#""GB/s":50.0"#,
        r#""GB/s":-Infinity"#,
        1,
    );
    assert!(python.contains("NaN") && python.contains("[2.0,Infinity]") && python.contains("-Infinity"), "{python}");
    let a = d.path().join("python.json");
    std::fs::write(&a, &python).unwrap();
    // Cut off in the middle of its fifth entry, as Kernel Tuner leaves a cache it is writing.
    let cut = d.path().join("cut.json");
    let fifth = text.match_indices("\"timestamp\"").nth(4).unwrap().0;
    std::fs::write(&cut, &text[..fifth + 5]).unwrap();
    let out = d.path().join("kt.html");
    let o = kerntune(&["report", "--db", a.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let html = std::fs::read_to_string(&out).unwrap();
    assert!(html.contains("NaN (no time) (as recorded)"), "the config timed NaN is a failure");
    let o = kerntune(&["report", "--db", cut.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("cut.json: the file ends before its last closing braces") && stderr(&o).contains("its 4 complete entries were read"),
        "{}",
        stderr(&o)
    );
    assert!(std::fs::read_to_string(&out).unwrap().contains("its 4 complete entries were read"), "the page says so too");
    let o = kerntune(&["simulate", cut.to_str().unwrap(), a.to_str().unwrap(), "--repeats", "2", "--budget", "3", "--strategy", "random"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("its 4 complete entries were read"), "{}", stderr(&o));
    for file in [&a, &cut] {
        let o = kerntune(&["db", "show", "--db", file.to_str().unwrap()]);
        let err = stderr(&o);
        assert!(!o.status.success() && err.contains("is a Kernel Tuner cache, not a kerntune database"), "{err}");
        assert!(!err.contains("db clear"), "never the advice to delete it: {err}");
    }
    assert_eq!(std::fs::read_to_string(&a).unwrap(), python, "left untouched");
}

/// Two parameters whose best values depend on each other are drawn as a grid of the fastest
/// time of each pair of values, with the winner's cell outlined and the caption saying how much
/// they explain together; parameters that act alone get no such chart.
#[test]
fn parameters_that_act_together_are_drawn_as_a_grid() {
    let cache = |interact: bool| {
        let mut cache = serde_json::Map::new();
        for b in [1i64, 2, 4, 8] {
            for c in [1i64, 2, 4, 8] {
                for d in [0i64, 1] {
                    // Fastest where b × c = 8, or, acting alone, with b and c each small.
                    let t = if interact { 1.0 + ((b * c) as f64 / 8.0).log2().abs() } else { (b * c) as f64 } * (1.0 + 0.01 * d as f64);
                    cache.insert(format!("{b},{c},{d}"), serde_json::json!({"b": b, "c": c, "d": d, "time": t, "times": [t]}));
                }
            }
        }
        serde_json::json!({"device_name": "NVIDIA A100", "kernel_name": "tiles", "problem_size": [4096], "tune_params_keys": ["b", "c", "d"],
            "tune_params": {"b": [1, 2, 4, 8], "c": [1, 2, 4, 8], "d": [0, 1]}, "objective": "time", "cache": cache})
        .to_string()
    };
    let d = tempfile::tempdir().unwrap();
    for interact in [true, false] {
        let file = d.path().join(format!("tiles_{interact}.json"));
        std::fs::write(&file, cache(interact)).unwrap();
        let out = d.path().join(format!("{interact}.html"));
        let o = kerntune(&["report", "--db", file.to_str().unwrap(), "-o", out.to_str().unwrap()]);
        assert!(o.status.success(), "{}", stderr(&o));
        let html = std::fs::read_to_string(&out).unwrap();
        let grid: Vec<(String, &str)> = figures(&html).into_iter().filter(|(k, _)| k == "interaction").collect();
        if !interact {
            assert!(grid.is_empty(), "parameters acting alone drawn as a pair");
            continue;
        }
        assert_eq!(grid.len(), 1, "no grid of the pair");
        let body = grid[0].1;
        assert!(body.contains("b × c: the fastest of each pair of values"), "{body}");
        assert!(body.contains("b and c together explain 100 % of the variance of log(time)") && body.contains("the fastest c depends on b"), "{body}");
        assert!(body.contains("outlined: the winner"), "{body}");
        // 16 cells, each written in: the four where b × c = 8 read 1.00 (the `d = 0` configs).
        assert!(marks(body) >= 16, "{} marks", marks(body));
        assert_eq!(body.matches(">\n1.00\n<").count(), 4, "{body}");
    }
}
