//! Crash consistency under `kill -9`: the real `rampart-server` binary on a temporary SQLite
//! database, several concurrent clients doing create / enable / verify / disable with real TOTP
//! codes, killed with SIGKILL at random moments and restarted on the same database and key
//! file, cycle after cycle.
//!
//! What is asserted:
//! - every acknowledged write survives: after each restart, a contact whose last acknowledged
//!   write was an enable reads `status: true`, one whose last was a disable reads `false`;
//!   a pending secret whose create was acknowledged can still be enabled (an enable is never
//!   answered 409 "Must create 2FA before enabling it"), an acknowledged enable is never
//!   answered 409 "2FA is not enabled" by verify or disable, and the code of an acknowledged
//!   enable or verify, while still in the window, is refused as a replay (401) after the
//!   restart: the last accepted step survives too;
//! - a write whose answer was lost in the kill may or may not have landed: after the restart
//!   the status must be one of the two outcomes, and the model adopts what it reads;
//! - no answer is ever a 5xx, every status read is a 200;
//! - `PRAGMA integrity_check` says "ok" at the end.
//!
//! Replay protection lets a code's time step be accepted once per contact, and the binary has
//! no manual clock, so each client works through its own contacts with codes for the steps
//! the server's window allows (previous, current, next) and never reuses a step; a 401 from a
//! step boundary passing mid-request is a definite "not applied". Set `RAMPART_CRASH_SEED` to
//! replay a run's random choices (the seed is printed).

mod common;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rampart_core::totp::{self, Secret};
use serde_json::{Value, json};

const BIN: &str = env!("CARGO_BIN_EXE_rampart-server");
/// Kill and restart cycles (at least [`MIN_CYCLES`] must run within [`BUDGET`]).
const CYCLES: usize = 25;
const MIN_CYCLES: usize = 20;
/// Stop starting new cycles after this; the whole test stays well under a minute.
const BUDGET: Duration = Duration::from_secs(45);
/// Concurrent clients, each with its own contacts (at most [`MAX_CONTACTS`] each).
const CLIENTS: usize = 4;
const MAX_CONTACTS: usize = 40;
/// How long traffic runs before the kill, in milliseconds (uniform), after the restart check.
const KILL_AFTER_MS: std::ops::Range<u64> = 5..300;
const STEP: u64 = 30;

/// A small deterministic generator (xorshift64*), so a seed replays a run's choices.
#[derive(Clone)]
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).expect("clock after 1970").as_secs()
}

// ---------------------------------------------------------------------------------------------
// the server process
// ---------------------------------------------------------------------------------------------

/// A running server; its log is drained by a thread (so it never blocks on a full pipe) and
/// the last lines are kept for failure messages.
struct Server {
    child: Child,
    base: String,
    log: Arc<Mutex<Vec<String>>>,
}

impl Server {
    fn start(db: &Path, key_file: &Path) -> Server {
        let mut child = common::server_command()
            .args(["--db", db.to_str().expect("utf-8 path"), "--listen", "127.0.0.1:0", "--environment", "sandbox"])
            .arg("--master-key-file")
            .arg(key_file)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn rampart-server");
        let stderr = child.stderr.take().expect("stderr");
        let log = Arc::new(Mutex::new(Vec::new()));
        let (tx, rx) = std::sync::mpsc::channel();
        let kept = Arc::clone(&log);
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if line.contains(" listening ") {
                    let _ = tx.send(line.clone());
                }
                let mut kept = kept.lock().expect("log");
                if kept.len() >= 200 {
                    kept.remove(0);
                }
                kept.push(line);
            }
        });
        let line = match rx.recv_timeout(Duration::from_secs(30)) {
            Ok(line) => line,
            Err(_) => {
                let _ = child.kill();
                panic!("no listening line; log: {:?}", log.lock().expect("log"));
            }
        };
        let address = line.split("address=").nth(1).and_then(|a| a.split_whitespace().next()).expect("address");
        Server { child, base: format!("http://{address}"), log }
    }

    /// SIGKILL: no shutdown, no flush, no destructor runs in the server.
    fn kill(mut self) {
        self.child.kill().expect("SIGKILL");
        self.child.wait().expect("reap");
    }

    fn log(&self) -> String {
        self.log.lock().expect("log").join("\n")
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

// ---------------------------------------------------------------------------------------------
// the clients' model of what the server holds
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Create,
    Enable,
    Verify,
    Disable,
}

/// One contact as its client knows it from acknowledged answers.
struct Contact {
    id: String,
    /// The secret the server holds for the contact (pending or enabled), when known.
    secret: Option<Secret>,
    enabled: bool,
    /// The highest time step that may have been accepted for the contact (0: none).
    last_step: u64,
    /// A write sent whose answer was lost in a kill, with its step: it may or may not have landed.
    in_doubt: Option<(Op, u64)>,
    /// The step of the last acknowledged enable or verify while enabled: a replay of it must
    /// be refused after a restart too (the last accepted step is durable).
    accepted_step: Option<u64>,
}

/// Counts over the whole run.
#[derive(Default, Debug, Clone)]
struct Stats {
    acknowledged: [usize; 4],
    refused: usize,
    in_doubt: [usize; 4],
    landed: usize,
    status_reads: usize,
    replays_refused: usize,
}

/// How a request ended.
enum Outcome {
    /// An HTTP answer.
    Answer(u16, Value),
    /// The connection could not be made: the request was never sent.
    NotSent,
    /// Sent (maybe in part) but no complete answer: the server may or may not have acted.
    Lost,
}

struct Client {
    http: reqwest::Client,
    base: String,
    key: String,
    log: Arc<Mutex<Vec<String>>>,
}

impl Client {
    async fn send(&self, request: reqwest::RequestBuilder) -> Outcome {
        match request.bearer_auth(&self.key).send().await {
            Err(e) if e.is_connect() => Outcome::NotSent,
            Err(_) => Outcome::Lost,
            Ok(response) => {
                let status = response.status().as_u16();
                match response.bytes().await {
                    Err(_) => Outcome::Lost,
                    Ok(body) => {
                        assert!(
                            status < 500,
                            "a {status} answer: {}\nserver log:\n{}",
                            String::from_utf8_lossy(&body),
                            self.log.lock().expect("log").join("\n")
                        );
                        Outcome::Answer(status, serde_json::from_slice(&body).unwrap_or(Value::Null))
                    }
                }
            }
        }
    }

    async fn status(&self, contact: &str) -> bool {
        let url = format!("{}/v1/auth/2fa?contactId={contact}", self.base);
        match self.send(self.http.get(url)).await {
            Outcome::Answer(200, body) => {
                let enabled = body["status"].as_bool().expect("status is a boolean");
                let message = if enabled { "2FA is true." } else { "2FA is false." };
                let remaining = if enabled { 10 } else { 0 };
                assert_eq!(
                    body,
                    json!({"message": message, "code": 200, "status": enabled, "recoveryCodesRemaining": remaining})
                );
                enabled
            }
            Outcome::Answer(status, body) => panic!("status read answered {status} {body}"),
            _ => panic!("status read failed: the server is not up"),
        }
    }

    async fn write(&self, op: Op, contact: &str, code: &str) -> Outcome {
        let base = &self.base;
        let request = match op {
            Op::Create => self.http.get(format!("{base}/v1/auth/create2fa?contactId={contact}")),
            Op::Enable => self.http.post(format!("{base}/v1/auth/enable2fa")),
            Op::Verify => self.http.post(format!("{base}/v1/auth/verify2fa")),
            Op::Disable => self.http.post(format!("{base}/v1/auth/disable2fa")),
        };
        let request =
            if op == Op::Create { request } else { request.json(&json!({"contactId": contact, "token": code})) };
        self.send(request).await
    }
}

/// After a restart: every contact's status must match its acknowledged writes; a write in doubt
/// is resolved by what the server now says.
async fn check_after_restart(client: &Client, contacts: &mut [Contact], stats: &mut Stats) {
    for c in contacts.iter_mut() {
        let status = client.status(&c.id).await;
        stats.status_reads += 1;
        match c.in_doubt.take() {
            None => {
                assert_eq!(
                    status,
                    c.enabled,
                    "contact {}: acknowledged state {} lost across a kill -9\nserver log:\n{}",
                    c.id,
                    c.enabled,
                    client.log.lock().expect("log").join("\n")
                );
                probe_replay(client, c, stats).await;
            }
            Some((op, step)) => {
                c.last_step = c.last_step.max(step);
                match op {
                    // Creating never enables; the new pending secret (if it landed) is unknown.
                    Op::Create => {
                        assert!(!status, "contact {}: create in doubt but status true", c.id);
                        c.secret = None;
                    }
                    // Verifying never changes the state.
                    Op::Verify => assert!(status, "contact {}: verify in doubt but status false", c.id),
                    Op::Enable => {
                        stats.landed += usize::from(status);
                        if status {
                            c.accepted_step = Some(step);
                        }
                        c.enabled = status;
                    }
                    Op::Disable => {
                        stats.landed += usize::from(!status);
                        if !status {
                            c.secret = None;
                            c.accepted_step = None;
                        }
                        c.enabled = status;
                    }
                }
            }
        }
    }
}

/// For an enabled contact whose last acknowledged code is still in the window (its step is the
/// current one or later, so it stays in even if the step turns mid-request): sending it again
/// must be refused as a replay (401, not counted as a failure), never accepted.
async fn probe_replay(client: &Client, c: &Contact, stats: &mut Stats) {
    let (true, Some(secret), Some(step)) = (c.enabled, &c.secret, c.accepted_step) else { return };
    if step < now() / STEP {
        return;
    }
    match client.write(Op::Verify, &c.id, &totp::code_at(secret, step * STEP)).await {
        Outcome::Answer(401, body) => {
            assert_eq!(body, json!({"message": "Google 2FA failed", "code": 401}));
            stats.replays_refused += 1;
        }
        Outcome::Answer(429, _) => {}
        Outcome::Answer(status, body) => panic!(
            "contact {}: the code of step {step}, accepted before a kill -9, answered {status} {body} \
             after the restart: the last accepted step was lost",
            c.id
        ),
        _ => panic!("replay probe failed: the server is not up"),
    }
}

/// Traffic until the server goes away: each request on a contact the model allows.
async fn traffic(client: &Client, contacts: &mut Vec<Contact>, rng: &mut Rng, stats: &mut Stats, tag: usize) {
    loop {
        if contacts.len() < MAX_CONTACTS && (contacts.is_empty() || rng.below(4) == 0) {
            // Contacts are never dropped, so the count numbers them uniquely per client.
            let id = format!("{tag:08x}-0000-4000-8000-{:012x}", contacts.len());
            contacts.push(Contact {
                id,
                secret: None,
                enabled: false,
                last_step: 0,
                in_doubt: None,
                accepted_step: None,
            });
        }
        let current = now() / STEP;
        let index = rng.below(contacts.len() as u64) as usize;
        let c = &mut contacts[index];
        // The server's window is the previous, current and next step; a step is used once.
        let step = c.last_step.saturating_add(1).max(current - 1);
        let usable = step <= current + 1;
        let op = match (c.enabled, &c.secret) {
            (false, Some(_)) if usable && rng.below(4) != 0 => Op::Enable,
            (false, _) => Op::Create,
            (true, _) if usable => {
                if rng.below(3) == 0 {
                    Op::Verify
                } else {
                    Op::Disable
                }
            }
            // Enabled and every allowed step used: wait for the clock.
            (true, _) => {
                tokio::time::sleep(Duration::from_millis(2)).await;
                continue;
            }
        };
        let code = match (&c.secret, op) {
            (Some(secret), Op::Enable | Op::Verify | Op::Disable) => totp::code_at(secret, step * STEP),
            _ => String::new(),
        };
        let outcome = client.write(op, &c.id, &code).await;
        let slot = op as usize;
        match outcome {
            Outcome::NotSent => {
                stats.refused += 1;
                return;
            }
            Outcome::Lost => {
                stats.in_doubt[slot] += 1;
                c.in_doubt = Some((op, if op == Op::Create { 0 } else { step }));
                return;
            }
            Outcome::Answer(200, body) => {
                stats.acknowledged[slot] += 1;
                match op {
                    Op::Create => {
                        let manual = body["details"]["manual"].as_str().expect("manual");
                        c.secret = Some(Secret::from_base32(manual).expect("manual is base32"));
                    }
                    Op::Enable | Op::Verify => {
                        c.enabled = true;
                        c.last_step = step;
                        c.accepted_step = Some(step);
                    }
                    Op::Disable => {
                        c.enabled = false;
                        c.secret = None;
                        c.last_step = step;
                        c.accepted_step = None;
                    }
                }
            }
            Outcome::Answer(status, body) => {
                // Not applied. A step boundary passing mid-request (401) or throttling after
                // such failures (429) are the only expected refusals; a 409 or 403 would mean
                // the server forgot an acknowledged write.
                assert!(
                    matches!(status, 401 | 429) && op != Op::Create,
                    "contact {}: {op:?} answered {status} {body}, but the acknowledged state is \
                     enabled={} secret known={}",
                    c.id,
                    c.enabled,
                    c.secret.is_some()
                );
                if status == 401 {
                    // The step may have been the boundary's victim; never retry it.
                    c.last_step = c.last_step.max(step);
                }
            }
        }
    }
}

fn write_key_file(path: &Path) {
    let key: String = (0..32).map(|i| format!("{:02x}", (i * 37 + 11) % 256)).collect();
    std::fs::write(path, format!("1:{key}\n")).expect("key file");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).expect("chmod 600");
    }
}

fn create_partner(db: &Path) -> String {
    let out = Command::new(BIN)
        .args(["partner", "create", "--db", db.to_str().expect("utf-8 path"), "--name", "Crash"])
        .args(["--environment", "sandbox"])
        .env("RUST_LOG", "warn")
        .output()
        .expect("partner create");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    v["secretKey"].as_str().expect("secretKey").to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acknowledged_writes_survive_kill_9_at_random_moments() {
    // A hang (a server that stops answering) fails the test instead of blocking `cargo test`;
    // dropping the run kills the server it started.
    tokio::time::timeout(Duration::from_secs(120), kill_9_cycles())
        .await
        .expect("the kill -9 test took over 2 minutes");
}

async fn kill_9_cycles() {
    let started = Instant::now();
    let seed = std::env::var("RAMPART_CRASH_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| SystemTime::now().duration_since(UNIX_EPOCH).expect("clock").as_nanos() as u64 | 1);
    eprintln!("kill -9 test: RAMPART_CRASH_SEED={seed}");
    let mut rng = Rng(seed);

    let dir = tempfile::tempdir().expect("temp dir");
    let db = dir.path().join("crash.db");
    let key_file = dir.path().join("crash.key");
    write_key_file(&key_file);
    let key = create_partner(&db);
    // A fresh HTTP client per server, so no pooled connection outlives its server.
    let http = || reqwest::Client::builder().no_proxy().timeout(Duration::from_secs(10)).build().expect("client");

    let mut clients: Vec<(Vec<Contact>, Rng, Stats)> =
        (0..CLIENTS).map(|i| (Vec::new(), Rng(rng.next() | 1 << i), Stats::default())).collect();
    let mut cycles = 0;
    while cycles < CYCLES && started.elapsed() < BUDGET {
        let server = Server::start(&db, &key_file);
        let http = http();
        let connect =
            || Client { http: http.clone(), base: server.base.clone(), key: key.clone(), log: Arc::clone(&server.log) };
        // First every client checks its contacts against the new server (a failed check fails
        // the test here), then all of them send traffic until the kill.
        let checks: Vec<_> = clients
            .drain(..)
            .map(|(mut contacts, client_rng, mut stats)| {
                let client = connect();
                tokio::spawn(async move {
                    check_after_restart(&client, &mut contacts, &mut stats).await;
                    (contacts, client_rng, stats)
                })
            })
            .collect();
        for check in checks {
            clients.push(check.await.expect("a check after the restart failed"));
        }
        let mut tasks = Vec::new();
        for (tag, (mut contacts, mut client_rng, mut stats)) in clients.drain(..).enumerate() {
            let client = connect();
            tasks.push(tokio::spawn(async move {
                traffic(&client, &mut contacts, &mut client_rng, &mut stats, tag).await;
                (contacts, client_rng, stats)
            }));
        }
        tokio::time::sleep(Duration::from_millis(
            KILL_AFTER_MS.start + rng.below(KILL_AFTER_MS.end - KILL_AFTER_MS.start),
        ))
        .await;
        server.kill();
        for task in tasks {
            clients.push(task.await.expect("a client failed"));
        }
        cycles += 1;
    }

    // A last restart checks the last cycle's writes; then one more kill, and the file is sound.
    let server = Server::start(&db, &key_file);
    let client = Client { http: http(), base: server.base.clone(), key, log: Arc::clone(&server.log) };
    let mut total = Stats::default();
    let mut contacts = 0;
    for (list, _, stats) in &mut clients {
        check_after_restart(&client, list, stats).await;
        contacts += list.len();
        for i in 0..4 {
            total.acknowledged[i] += stats.acknowledged[i];
            total.in_doubt[i] += stats.in_doubt[i];
        }
        total.refused += stats.refused;
        total.landed += stats.landed;
        total.status_reads += stats.status_reads;
        total.replays_refused += stats.replays_refused;
    }
    let log = server.log();
    server.kill();
    let conn = rusqlite::Connection::open(&db).expect("open the database");
    let integrity: String = conn.query_row("PRAGMA integrity_check", [], |r| r.get(0)).expect("integrity_check");
    assert_eq!(integrity, "ok", "after {cycles} kills; last server log:\n{log}");

    let elapsed = started.elapsed();
    eprintln!(
        "kill -9 test: {cycles} cycles in {elapsed:.1?}, {contacts} contacts; acknowledged create/enable/verify/disable \
         {:?}; answers lost in a kill {:?} ({} of the enables/disables landed); {} requests refused after a kill; \
         {} status reads; {} replays of an acknowledged code refused after a restart",
        total.acknowledged, total.in_doubt, total.landed, total.refused, total.status_reads, total.replays_refused
    );
    assert!(cycles >= MIN_CYCLES, "only {cycles} cycles in {BUDGET:?}");
    assert!(total.acknowledged[Op::Enable as usize] > 0 && total.acknowledged[Op::Disable as usize] > 0);
}
