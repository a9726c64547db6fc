//! SPEC section 3, "Connections", against the built `rampart-server` binary on loopback: slow
//! request heads are cut off at the header timeout while a well-behaved client keeps a low
//! latency and the server a small resident set; a head over 32 KiB gets hyper's 431 and a
//! malformed one hyper's 400, both without a body, while heads up to 32 KiB reach the routes'
//! JSON answers; a kept-alive connection outlives the header timeout and closes at the idle
//! timeout; connections over `--max-connections` wait in the listen backlog.
//!
//! The tests read `/proc/<pid>/status`, so they run on Linux only. The long one holds 300 slow
//! connections for 30 s; its name sorts first, so the test harness starts it first and the
//! others (about 25 s in all) run beside it.
#![cfg(target_os = "linux")]

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The header timeout the binary uses by default (SPEC: 10 s).
const HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// How late a close may be observed on a busy two-core machine.
const SLACK: Duration = Duration::from_secs(2);

/// A running server; killed when dropped.
struct Server {
    child: Child,
    addr: String,
    _dir: tempfile::TempDir,
}

impl Server {
    fn start(extra: &[&str]) -> Self {
        raise_open_files_limit(4096);
        let dir = tempfile::tempdir().unwrap();
        let db = dir.path().join("r.db");
        let mut cmd = common::server_command();
        cmd.args(["--db", db.to_str().unwrap(), "--listen", "127.0.0.1:0"])
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("spawn rampart-server");
        // Drain stderr for the whole run (one log line per request), keeping the address.
        let (tx, rx) = mpsc::channel();
        let stderr = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(rest) = line.split(" listening address=").nth(1) {
                    let _ = tx.send(rest.split_whitespace().next().unwrap_or_default().to_owned());
                }
            }
        });
        let addr = rx.recv_timeout(Duration::from_secs(30)).expect("the server logs its address");
        Self { child, addr, _dir: dir }
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    fn connect(&self) -> TcpStream {
        let s = TcpStream::connect(&self.addr).expect("connect");
        s.set_nodelay(true).unwrap();
        s
    }

    /// Resident set in bytes.
    fn rss(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid())).expect("status");
        let line = status.lines().find(|l| l.starts_with("VmRSS:")).expect("VmRSS");
        line.split_whitespace().nth(1).unwrap().parse::<u64>().unwrap() * 1024
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Room for the slow connections, in this process and (inherited) in the server.
fn raise_open_files_limit(want: u64) {
    use rustix::process::{Resource, getrlimit, setrlimit};
    let limit = getrlimit(Resource::Nofile);
    if limit.current.is_some_and(|soft| soft < want) {
        let raised = limit.maximum.map_or(want, |hard| hard.min(want));
        let _ = setrlimit(Resource::Nofile, rustix::process::Rlimit { current: Some(raised), maximum: limit.maximum });
    }
}

const HEALTHZ: &[u8] = b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n";

/// Read one response (head and a `content-length` body); `None` when the server closed first.
fn read_response(s: &mut TcpStream) -> Option<(u16, String)> {
    let mut buf = Vec::with_capacity(512);
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).into_owned();
            let len = head
                .lines()
                .find_map(|l| l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().to_owned()))
                .map_or(0, |v| v.parse::<usize>().unwrap());
            if buf.len() >= end + 4 + len {
                let status = head.split_whitespace().nth(1).unwrap().parse().unwrap();
                return Some((status, head));
            }
        }
        match s.read(&mut chunk) {
            Ok(0) | Err(_) => return None,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
}

/// One whole response: status, header lines as (lower-case name, value), body.
#[derive(Debug)]
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Answer {
    /// The header names, sorted.
    fn names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self.headers.iter().map(|(n, _)| n.as_str()).collect();
        names.sort_unstable();
        names
    }

    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }
}

/// Read one response (head and a `content-length` body) with its body; `None` when the server
/// closed first.
fn read_answer(s: &mut TcpStream) -> Option<Answer> {
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8(buf[..end].to_vec()).expect("an ASCII head");
            let mut lines = head.split("\r\n");
            let status = lines.next().unwrap().split_whitespace().nth(1).unwrap().parse().unwrap();
            let headers: Vec<(String, String)> = lines
                .map(|l| {
                    let (name, value) = l.split_once(':').expect("name: value");
                    (name.to_ascii_lowercase(), value.trim().to_owned())
                })
                .collect();
            let len = headers.iter().find(|(n, _)| n == "content-length").map_or(0, |(_, v)| v.parse().unwrap());
            if buf.len() >= end + 4 + len {
                let body = buf[end + 4..end + 4 + len].to_vec();
                return Some(Answer { status, headers, body });
            }
        }
        match s.read(&mut chunk) {
            Ok(0) | Err(_) => return None,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
}

fn get_healthz(s: &mut TcpStream) -> Option<u16> {
    s.write_all(HEALTHZ).ok()?;
    read_response(s).map(|(status, _)| status)
}

/// Wait for the server to close `s` (EOF or reset), up to `limit`; returns when it did, or
/// `None` if the socket is still open (or the server sent something instead).
fn wait_closed(s: &mut TcpStream, limit: Duration) -> Option<Duration> {
    let start = Instant::now();
    s.set_read_timeout(Some(limit)).unwrap();
    let mut byte = [0u8; 1];
    match s.read(&mut byte) {
        Ok(0) => Some(start.elapsed()),
        Err(e) if matches!(e.kind(), std::io::ErrorKind::ConnectionReset | std::io::ErrorKind::BrokenPipe) => {
            Some(start.elapsed())
        }
        _ => None,
    }
}

/// Is `s` still open, with nothing to read? Checked without blocking for long.
fn still_open(s: &mut TcpStream) -> bool {
    s.set_read_timeout(Some(Duration::from_millis(50))).unwrap();
    let mut byte = [0u8; 1];
    matches!(s.read(&mut byte), Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut))
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// What a slow client sends before it stalls (or trickles).
#[derive(Clone, Copy, Debug)]
enum Slow {
    /// Connect and send nothing.
    Nothing,
    /// Half a request line.
    RequestLine,
    /// A request line and two header lines, no blank line.
    Headers,
    /// 24 KiB of one unfinished header value (under the 32 KiB cap).
    BigHeader,
    /// A request line, then one more header line every second (classic slowloris).
    Trickle,
}

const SLOW_KINDS: [Slow; 5] = [Slow::Nothing, Slow::RequestLine, Slow::Headers, Slow::BigHeader, Slow::Trickle];

/// One slow connection until the server closes it; returns how long that took.
async fn slow_connection(addr: &str, kind: Slow) -> Result<Duration, String> {
    let mut s = tokio::net::TcpStream::connect(addr).await.map_err(|e| format!("connect: {e}"))?;
    let start = Instant::now();
    let first: Vec<u8> = match kind {
        Slow::Nothing => Vec::new(),
        Slow::RequestLine => b"GET /healthz HT".to_vec(),
        Slow::Headers => b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nUser-Agent: slow\r\n".to_vec(),
        Slow::BigHeader => [&b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Pad: "[..], &[b'a'; 24 * 1024]].concat(),
        Slow::Trickle => b"GET /healthz HTTP/1.1\r\n".to_vec(),
    };
    if !first.is_empty() {
        s.write_all(&first).await.map_err(|e| format!("write: {e}"))?;
    }
    let give_up = start + HEADER_TIMEOUT + SLACK + Duration::from_secs(1);
    let mut buf = [0u8; 64];
    let mut next_trickle = start + Duration::from_secs(1);
    loop {
        let wake = if matches!(kind, Slow::Trickle) { next_trickle.min(give_up) } else { give_up };
        tokio::select! {
            read = s.read(&mut buf) => {
                return match read {
                    Ok(0) | Err(_) => Ok(start.elapsed()),
                    Ok(n) => Err(format!("{kind:?}: the server answered {:?}", String::from_utf8_lossy(&buf[..n]))),
                };
            }
            () = tokio::time::sleep_until(wake.into()) => {
                if Instant::now() >= give_up {
                    let port = s.local_addr().map(|a| a.port()).unwrap_or(0);
                    return Err(format!("{kind:?}: still open after {:?}; sockets: {}", start.elapsed(), sockets_of(port)));
                }
                // A closed socket shows on the next read.
                let _ = s.write_all(b"X-Slow: 1\r\n").await;
                next_trickle += Duration::from_secs(1);
            }
        }
    }
}

/// The IPv4 sockets `/proc/net/tcp` lists: local address, remote address and state, as it
/// writes them (addresses `0100007F:1F90`, state in hex: 01 established, 03 a handshake in
/// progress).
fn tcp_sockets() -> Vec<[String; 3]> {
    let table = std::fs::read_to_string("/proc/net/tcp").unwrap_or_default();
    table
        .lines()
        .skip(1)
        .filter_map(|l| {
            let mut fields = l.split_whitespace().skip(1).map(str::to_owned);
            Some([fields.next()?, fields.next()?, fields.next()?])
        })
        .collect()
}

/// The sockets with `port` at either end: a client socket with no server-side twin is a
/// connection the server's kernel never completed.
fn sockets_of(port: u16) -> String {
    let hex = format!(":{port:04X}");
    let rows: Vec<String> =
        tcp_sockets().into_iter().filter(|s| s[..2].iter().any(|a| a.ends_with(&hex))).map(|s| s.join(" ")).collect();
    rows.join(" | ")
}

/// Server-side sockets of `port` that are established (accepted, or completed and queued in
/// the listen backlog), counted by their client's address: the kernel writes the table while
/// other tests open and close sockets, so one read may list a socket twice or miss it.
fn established_at(port: u16) -> usize {
    let local = format!("0100007F:{port:04X}");
    let clients: std::collections::HashSet<String> = tcp_sockets()
        .into_iter()
        .filter(|[l, _, state]| *l == local && state == "01")
        .map(|[_, remote, _]| remote)
        .collect();
    clients.len()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crowd_of_slow_heads_is_cut_off_while_a_good_client_is_served() {
    const SLOW: usize = 300;
    const HOLD: Duration = Duration::from_secs(30);
    let server = Server::start(&[]);
    let addr = server.addr.clone();
    let baseline = server.rss();
    let end = Instant::now() + HOLD;

    // Each slot reopens its slow connection whenever the server closes it.
    let closes = Arc::new(Mutex::new(Vec::<(Slow, Duration)>::new()));
    let failures = Arc::new(Mutex::new(Vec::<String>::new()));
    let mut slots = Vec::new();
    for i in 0..SLOW {
        let (addr, closes, failures) = (addr.clone(), closes.clone(), failures.clone());
        let kind = SLOW_KINDS[i % SLOW_KINDS.len()];
        slots.push(tokio::spawn(async move {
            while Instant::now() < end {
                match slow_connection(&addr, kind).await {
                    Ok(took) => closes.lock().unwrap().push((kind, took)),
                    Err(e) => {
                        failures.lock().unwrap().push(e);
                        return;
                    }
                }
            }
        }));
    }

    // The well-behaved client: sequential GET /healthz on one kept-alive connection.
    let stop = Arc::new(AtomicBool::new(false));
    let good = {
        let (stop, mut s) = (stop.clone(), server.connect());
        std::thread::spawn(move || {
            let mut latencies = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                let t = Instant::now();
                assert_eq!(get_healthz(&mut s), Some(200), "after {} requests", latencies.len());
                latencies.push(t.elapsed());
                std::thread::sleep(Duration::from_millis(2));
            }
            latencies
        })
    };

    let mut peak_rss = 0;
    while Instant::now() < end {
        peak_rss = peak_rss.max(server.rss());
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    stop.store(true, Ordering::Relaxed);
    let mut latencies = good.join().expect("the good client");
    for slot in &slots {
        slot.abort();
    }
    let hwm = {
        let status = std::fs::read_to_string(format!("/proc/{}/status", server.pid())).unwrap();
        status.lines().find(|l| l.starts_with("VmHWM:")).unwrap_or_default().to_owned()
    };

    latencies.sort();
    let (p50, p99, max) = (percentile(&latencies, 0.5), percentile(&latencies, 0.99), latencies[latencies.len() - 1]);
    let closes = closes.lock().unwrap().clone();
    let earliest = closes.iter().map(|c| c.1).min().unwrap_or_default();
    let latest = closes.iter().map(|c| c.1).max().unwrap_or_default();
    eprintln!(
        "slow heads: {} closes by the server in {earliest:?}..{latest:?}; RSS {:.1} MB at start, peak {:.1} MB ({hwm}); \
         good client: {} requests, p50 {p50:?}, p99 {p99:?}, max {max:?}",
        closes.len(),
        baseline as f64 / 1e6,
        peak_rss as f64 / 1e6,
        latencies.len(),
    );

    let failures = failures.lock().unwrap();
    assert!(
        failures.is_empty(),
        "{} slow connections misbehaved: {:?}",
        failures.len(),
        &failures[..failures.len().min(5)]
    );
    // Opened at the start, each slot's connection is closed at ~10 s and ~20 s at least.
    assert!(closes.len() >= 2 * SLOW, "only {} closes", closes.len());
    for (kind, took) in &closes {
        assert!(*took >= HEADER_TIMEOUT - Duration::from_millis(500), "{kind:?} closed early, after {took:?}");
        assert!(*took <= HEADER_TIMEOUT + SLACK, "{kind:?} closed late, after {took:?}");
    }
    // What 300 slow connections may cost: under 20 MB over the server's resting size (which
    // grows with the server's features, not with the attack).
    let growth = peak_rss.saturating_sub(baseline);
    assert!(growth < 20_000_000, "RSS grew by {growth} bytes under the slow heads (peak {peak_rss})");
    assert!(latencies.len() >= 1000, "only {} good requests", latencies.len());
    assert!(p99 < Duration::from_millis(10), "good client p99 {p99:?}");
}

#[test]
fn a_head_over_32_kib_gets_431() {
    let server = Server::start(&[]);
    let prefix = b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Pad: ";
    let head = |total: usize| {
        let pad = total - prefix.len() - 4;
        [&prefix[..], &vec![b'a'; pad], b"\r\n\r\n"].concat()
    };

    // Exactly 32 KiB (request line, headers and the blank line) is served, on a connection
    // that stays open.
    let mut s = server.connect();
    s.write_all(&head(32 * 1024)).unwrap();
    assert_eq!(read_response(&mut s).map(|r| r.0), Some(200));
    assert_eq!(get_healthz(&mut s), Some(200));

    // One byte more: hyper's 431 (no body), then the connection closes.
    let mut s = server.connect();
    s.write_all(&head(32 * 1024 + 1)).unwrap();
    assert_hyper_refusal(&mut s, 431);

    // A head still unfinished at the cap is refused at once, not at the header timeout.
    let mut s = server.connect();
    let start = Instant::now();
    s.write_all(&[&prefix[..], &vec![b'a'; 40 * 1024]].concat()).unwrap();
    assert_hyper_refusal(&mut s, 431);
    assert!(start.elapsed() < Duration::from_secs(2), "{:?}", start.elapsed());
}

/// A request head of exactly `total` bytes (request line, header lines, blank line) asking
/// `GET /v1/users/widgetText` with a bearer key padded to fit: not a partner's key.
fn head_with_bearer(total: usize) -> Vec<u8> {
    let prefix = b"GET /v1/users/widgetText HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer sk_sandbox_";
    let pad = total - prefix.len() - 4;
    [&prefix[..], &vec![b'K'; pad], b"\r\n\r\n"].concat()
}

/// hyper's own answer to a head it refuses before any route runs: the status, the headers
/// `connection: close`, `content-length: 0` and `date`, no body (so nothing of the request is
/// echoed); then the connection closes. docs/DESIGN.md ("Connections") says why there is no
/// `{"message","code"}` body.
#[track_caller]
fn assert_hyper_refusal(s: &mut TcpStream, status: u16) {
    let answer = read_answer(s).expect("an answer");
    assert_eq!(answer.status, status, "{answer:?}");
    assert_eq!(answer.names(), ["connection", "content-length", "date"], "{answer:?}");
    assert_eq!(answer.header("connection"), Some("close"));
    assert_eq!(answer.header("content-length"), Some("0"));
    assert!(answer.body.is_empty());
    assert!(wait_closed(s, Duration::from_secs(5)).is_some(), "still open after {status}");
}

#[test]
fn oversized_and_malformed_heads_get_hyper_s_answer_without_a_body() {
    let server = Server::start(&[]);
    let unauthorized = serde_json::json!({ "message": "Unauthorized", "code": 401 });

    // Heads of 32 KiB less one and exactly 32 KiB reach the routes: the (unknown) key gets the
    // server's JSON 401, and the connection stays open.
    for total in [32 * 1024 - 1, 32 * 1024] {
        let mut s = server.connect();
        s.write_all(&head_with_bearer(total)).unwrap();
        let answer = read_answer(&mut s).expect("an answer");
        assert_eq!(answer.status, 401, "{total}: {answer:?}");
        assert_eq!(answer.header("content-type"), Some("application/json"));
        assert_eq!(serde_json::from_slice::<serde_json::Value>(&answer.body).unwrap(), unauthorized);
        assert_eq!(get_healthz(&mut s), Some(200), "{total}: kept alive");
    }

    // One byte more, and a 100 KB Authorization header: hyper's 431, without a body.
    let mut s = server.connect();
    s.write_all(&head_with_bearer(32 * 1024 + 1)).unwrap();
    assert_hyper_refusal(&mut s, 431);
    let mut s = server.connect();
    let big = [
        &b"GET /v1/users/widgetText HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer sk_sandbox_"[..],
        &vec![b'K'; 100_000],
        b"\r\n\r\n",
    ]
    .concat();
    // The server may answer and close before it has read everything.
    let _ = s.write_all(&big);
    assert_hyper_refusal(&mut s, 431);

    // More than 100 header fields, however short: the same 431.
    let mut s = server.connect();
    let many: String = (0..101).map(|i| format!("X-Field-{i}: a\r\n")).collect();
    s.write_all(format!("GET /healthz HTTP/1.1\r\nHost: localhost\r\n{many}\r\n").as_bytes()).unwrap();
    assert_hyper_refusal(&mut s, 431);

    // A malformed request line or header line: hyper's 400, without a body.
    for head in [
        &b"NOT A REQUEST LINE\r\n\r\n"[..],
        b"GET /healthz HTTP/1.1 extra\r\nHost: localhost\r\n\r\n",
        b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nno colon here\r\n\r\n",
        b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nContent-Length: ten\r\n\r\n",
        b"POST /healthz HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: gzip\r\n\r\n",
    ] {
        let mut s = server.connect();
        s.write_all(head).unwrap();
        assert_hyper_refusal(&mut s, 400);
    }

    // The HTTP/2 preface: no answer, the connection closes.
    let mut s = server.connect();
    s.write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n").unwrap();
    assert!(wait_closed(&mut s, Duration::from_secs(5)).is_some(), "answered or still open");

    // Served as before, meanwhile.
    assert_eq!(get_healthz(&mut server.connect()), Some(200));
}

#[test]
fn a_kept_alive_connection_outlives_the_header_timeout() {
    // Real defaults: idle 60 s, header 10 s.
    let server = Server::start(&[]);
    let mut s = server.connect();
    assert_eq!(get_healthz(&mut s), Some(200));
    std::thread::sleep(HEADER_TIMEOUT + SLACK);
    assert!(still_open(&mut s), "closed while idle for {:?}", HEADER_TIMEOUT + SLACK);
    assert_eq!(get_healthz(&mut s), Some(200));
}

#[test]
fn idle_and_header_timeouts_run_from_the_right_moments() {
    // Shortened timeouts (hidden test flags): header 1 s, idle 3 s.
    let server = Server::start(&["--header-timeout-ms", "1000", "--idle-timeout-ms", "3000"]);
    let header = Duration::from_secs(1);
    let idle = Duration::from_secs(3);

    // Idle past the header timeout: still open; then closed at the idle timeout.
    let mut s = server.connect();
    assert_eq!(get_healthz(&mut s), Some(200));
    std::thread::sleep(header + Duration::from_millis(800));
    assert!(still_open(&mut s));
    assert_eq!(get_healthz(&mut s), Some(200));
    let took = wait_closed(&mut s, idle + SLACK + Duration::from_secs(1)).expect("closed when idle");
    assert!(took >= idle - Duration::from_millis(300) && took <= idle + SLACK, "idle close after {took:?}");

    // After some idling, the first byte of a request starts the header timeout.
    let mut s = server.connect();
    assert_eq!(get_healthz(&mut s), Some(200));
    std::thread::sleep(Duration::from_millis(1500));
    s.write_all(b"GET /heal").unwrap();
    let took = wait_closed(&mut s, idle + SLACK).expect("closed at the header timeout");
    assert!(took >= header - Duration::from_millis(300) && took <= header + SLACK, "header close after {took:?}");

    // A new connection that sends nothing has the header timeout, not the idle one.
    let mut s = server.connect();
    let took = wait_closed(&mut s, idle + SLACK).expect("closed at the header timeout");
    assert!(took >= header - Duration::from_millis(300) && took <= header + SLACK, "silent close after {took:?}");
}

#[test]
fn a_burst_of_connections_waits_in_a_backlog_larger_than_tokio_s() {
    // At a cap of 16, every connection beyond it waits in the listen backlog. 400 opened at
    // once, sending nothing: with tokio's default backlog of 128 the kernel completes 128 and
    // leaves the rest with a SYN cookie (established on the client's side only, forgotten on
    // the server's); with the server's backlog all of them (up to `net.core.somaxconn`).
    const BURST: usize = 400;
    let server = Server::start(&["--max-connections", "16"]);
    let port: u16 = server.addr.rsplit(':').next().unwrap().parse().unwrap();
    let mut held: Vec<TcpStream> = (0..16).map(|_| server.connect()).collect();
    for s in &mut held {
        assert_eq!(get_healthz(s), Some(200));
    }
    let burst: Vec<TcpStream> = (0..BURST).map(|_| server.connect()).collect();
    let somaxconn: usize = std::fs::read_to_string("/proc/sys/net/core/somaxconn").unwrap().trim().parse().unwrap();
    let expected = 16 + BURST.min(somaxconn);
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut seen = established_at(port);
    while seen != expected && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
        seen = established_at(port);
    }
    assert_eq!(seen, expected, "server-side connections of {} held and {BURST} waiting", held.len());
    drop(burst);
}

#[test]
fn connections_over_the_cap_wait_until_one_closes() {
    let server = Server::start(&["--max-connections", "20"]);
    let mut open: Vec<TcpStream> = (0..20).map(|_| server.connect()).collect();
    for s in &mut open {
        assert_eq!(get_healthz(s), Some(200));
    }

    // The 21st connects (the kernel's backlog completes the handshake) but is not served.
    let mut extra = server.connect();
    extra.write_all(HEALTHZ).unwrap();
    extra.set_read_timeout(Some(Duration::from_millis(1500))).unwrap();
    let mut byte = [0u8; 1];
    let waited = extra.read(&mut byte);
    assert!(
        matches!(&waited, Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut)),
        "the 21st connection was served at the cap: {waited:?}"
    );

    // One closes: the 21st is accepted and answered.
    drop(open.pop());
    extra.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let start = Instant::now();
    assert_eq!(read_response(&mut extra).map(|r| r.0), Some(200));
    assert!(start.elapsed() < Duration::from_secs(3), "{:?}", start.elapsed());
    // The others were never dropped.
    for s in &mut open {
        assert_eq!(get_healthz(s), Some(200));
    }
}

#[test]
fn a_stalled_body_is_answered_and_its_connection_freed() {
    // Shortened body timeout (hidden test flag): 1 s; the default is 30 s.
    let server = Server::start(&["--body-timeout-ms", "1000"]);
    let mut s = server.connect();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let start = Instant::now();
    s.write_all(b"POST /v1/widget/check HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 50\r\n\r\n{\"publ")
        .unwrap();
    let (status, _) = read_response(&mut s).expect("an answer");
    let took = start.elapsed();
    assert_eq!(status, 400);
    assert!(took >= Duration::from_millis(900) && took < Duration::from_secs(3), "answered after {took:?}");
    // The connection is not kept for the rest of the body.
    assert!(wait_closed(&mut s, Duration::from_secs(3)).is_some(), "still open after a stalled body");
    // Others are served meanwhile and after.
    assert_eq!(get_healthz(&mut server.connect()), Some(200));
}
