//! Faults around several `rampart-server` processes sharing one PostgreSQL (SPEC section 7;
//! the T3, T4, T8, T9, T11 and T13 cases of the scale-out research note): exactly one success
//! per code across processes, exact failure counts, an operator reset seen by every server, a
//! server killed or frozen while it holds a row lock, connections killed by the database, and
//! servers racing to migrate. Run by `make pg-test` (`scripts/with-postgres.sh`); without
//! `RAMPART_TEST_DATABASE_URL` these tests fail rather than skip. Each test gets a database of
//! its own; they run one at a time, so the timing bounds hold on a two-core machine.

mod common;

mod postgres_faults {
    use std::collections::HashMap;
    use std::future::Future;
    use std::path::{Path, PathBuf};
    use std::process::{Command, Stdio};
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    use std::sync::{Arc, Mutex, PoisonError, RwLock};
    use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

    use rampart_core::totp::{self, STEP_SECONDS, Secret};
    use serde_json::{Value, json};

    use super::common::{
        Instance, Reply, contact, master_key_file, postgres_database as database, server_command as command,
        with_url_parameter, wrong_code,
    };

    const VALID: &str = "2FA token is valid.";
    const FAILED: &str = "Google 2FA failed";
    const VERIFY_ERROR: &str = "Error verifying 2FA";
    const ENABLE_ERROR: &str = "Error enabling 2FA";
    const ENABLED: &str = "Successfully enabled 2fa!";
    const ALREADY_ENABLED: &str = "Cannot enable 2FA again, it is already set";
    const LOCKED: &str = "2FA is locked after too many failed attempts";

    /// The tests share two cores with their servers and measure seconds: one at a time.
    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

    /// Run `body` on a runtime of its own, alone.
    fn alone(body: impl Future<Output = ()>) {
        let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner);
        let started = Instant::now();
        tokio::runtime::Builder::new_multi_thread().worker_threads(4).enable_all().build().unwrap().block_on(body);
        eprintln!("{}: {:.1?}", std::thread::current().name().unwrap_or("test"), started.elapsed());
    }

    fn now() -> u64 {
        SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs()
    }

    /// The clock of servers started with [`TestClock::args`]: the absolute Unix time in the file
    /// they read at every reading. It starts at the system's time and moves only when the test
    /// moves it, so `now()` is exactly what the servers read.
    struct TestClock {
        path: PathBuf,
        now: AtomicU64,
        write: Mutex<()>,
    }

    impl TestClock {
        fn new(dir: &Path) -> Arc<Self> {
            let clock = Arc::new(Self { path: dir.join("clock"), now: AtomicU64::new(now()), write: Mutex::new(()) });
            clock.advance(0);
            clock
        }

        fn args(&self) -> [&str; 2] {
            ["--test-clock-file", self.path.to_str().unwrap()]
        }

        /// What the servers read now.
        fn now(&self) -> u64 {
            self.now.load(Ordering::SeqCst)
        }

        /// Move the servers' clock forward. The file is replaced whole, so a server never reads
        /// it half written (it would keep its last time, and log a warning).
        fn advance(&self, seconds: u64) {
            let _one = self.write.lock().unwrap_or_else(PoisonError::into_inner);
            let at = self.now.load(Ordering::SeqCst) + seconds;
            let next = self.path.with_extension("next");
            std::fs::write(&next, format!("{at}\n")).unwrap();
            std::fs::rename(&next, &self.path).unwrap();
            self.now.store(at, Ordering::SeqCst);
        }
    }

    /// One value (tuples only, unaligned) of `sql` on `db`, by psql.
    fn psql(db: &str, sql: &str) -> String {
        let out = Command::new("psql").args([db, "-v", "ON_ERROR_STOP=1", "-tAqc", sql]).output().expect("run psql");
        assert!(out.status.success(), "psql {sql}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    }

    /// `uuid` as the store keeps it (`BYTEA`), for a `WHERE`.
    fn bytea(uuid: &str) -> String {
        format!("'\\x{}'::bytea", uuid.replace('-', ""))
    }

    /// A contact's stored `failures`.
    fn stored_failures(db: &str, contact: &str) -> u64 {
        psql(db, &format!("SELECT failures FROM contacts WHERE contact_id = {}", bytea(contact))).parse().unwrap()
    }

    /// `kill -SIG pid` (SIGSTOP, SIGCONT: the test crate has no libc).
    fn signal(signal: &str, pid: u32) {
        let status = Command::new("kill").args([&format!("-{signal}"), &pid.to_string()]).status().unwrap();
        assert!(status.success(), "kill -{signal} {pid}");
    }

    struct Partner {
        id: String,
        key: String,
    }

    /// A sandbox partner made by the CLI (which also migrates the database).
    fn create_partner(db: &str) -> Partner {
        let out = command()
            .args(["partner", "create", "--db", db, "--name", "Shared", "--environment", "sandbox"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let partner: Value = serde_json::from_slice(&out.stdout).unwrap();
        Partner {
            id: partner["superuserId"].as_str().unwrap().to_owned(),
            key: partner["secretKey"].as_str().unwrap().to_owned(),
        }
    }

    /// The partner's HTTP client. Requests time out (a stopped server never answers).
    #[derive(Clone)]
    struct Api {
        client: reqwest::Client,
        key: String,
    }

    impl Api {
        fn new(partner: &Partner) -> Self {
            let client =
                reqwest::Client::builder().no_proxy().timeout(Duration::from_secs(30)).build().expect("client");
            Self { client, key: partner.key.clone() }
        }

        async fn send(&self, req: reqwest::RequestBuilder) -> reqwest::Result<Reply> {
            let resp = req.bearer_auth(&self.key).send().await?;
            let status = resp.status().as_u16();
            let headers = resp.headers().clone();
            let text = resp.text().await?;
            let body = serde_json::from_str(&text).unwrap_or(Value::Null);
            Ok(Reply { status, headers, text, body })
        }

        async fn attempt(&self, base: &str, op: &str, contact: &str, code: &str) -> reqwest::Result<Reply> {
            let body = json!({ "contactId": contact, "token": code });
            self.send(self.client.post(format!("{base}/v1/auth/{op}")).json(&body)).await
        }

        async fn verify(&self, base: &str, contact: &str, code: &str) -> reqwest::Result<Reply> {
            self.attempt(base, "verify2fa", contact, code).await
        }

        async fn get(&self, base: &str, path: &str) -> Reply {
            self.send(self.client.get(format!("{base}{path}"))).await.expect("an answer")
        }

        /// Create a pending secret for `contact` through `base`.
        async fn create(&self, base: &str, contact: &str) -> Secret {
            let r = self.get(base, &format!("/v1/auth/create2fa?contactId={contact}")).await;
            assert_eq!(r.status, 200, "{}", r.text);
            Secret::from_base32(r.body["details"]["manual"].as_str().unwrap()).unwrap()
        }

        /// Create and enable 2FA for a new contact through `base` with the code of the step
        /// `now()` is in (on the servers' clock), so that the next step's code is the next to
        /// verify.
        async fn enabled(&self, base: &str, now: impl Fn() -> u64) -> (String, Secret) {
            let contact = contact();
            let secret = self.create(base, &contact).await;
            let code = totp::code_at(&secret, now());
            self.attempt(base, "enable2fa", &contact, &code).await.unwrap().assert_enabled();
            (contact, secret)
        }
    }

    /// A 429 of the throttle: "try again in N seconds" with `Retry-After: N`, N in `wait`.
    #[track_caller]
    fn assert_throttled(r: &Reply, wait: std::ops::RangeInclusive<u64>) {
        assert_eq!(r.status, 429, "{}", r.text);
        let seconds: u64 = r.header("retry-after").expect("Retry-After").parse().unwrap();
        assert!(wait.contains(&seconds), "{} (expected {wait:?} seconds)", r.text);
        r.assert_error(429, &format!("Too many failed 2FA attempts, try again in {seconds} seconds"));
    }

    /// Send `requests` at once (each to its server, each with its operation, contact and
    /// code) and return the answers in order.
    async fn at_once(api: &Api, requests: Vec<(String, &'static str, String, String)>) -> Vec<Reply> {
        let start = Arc::new(tokio::sync::Barrier::new(requests.len()));
        let tasks: Vec<_> = requests
            .into_iter()
            .map(|(base, op, contact, code)| {
                let (api, start) = (api.clone(), start.clone());
                tokio::spawn(async move {
                    start.wait().await;
                    api.attempt(&base, op, &contact, &code).await.expect("an answer")
                })
            })
            .collect();
        let mut replies = Vec::new();
        for task in tasks {
            replies.push(task.await.unwrap());
        }
        replies
    }

    /// A small deterministic generator for the load's choices.
    struct Rng(u64);

    impl Rng {
        fn below(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n
        }
    }

    /// Whether `step`'s code is also the code of a neighbouring step (one in a million): such a
    /// code could be accepted once for each step, so the load leaves it out.
    fn ambiguous(secret: &Secret, step: u64) -> bool {
        let code = |s: u64| totp::code_at(secret, s * STEP_SECONDS);
        code(step) == code(step - 1) || code(step) == code(step + 1)
    }

    /// 3 servers, one contact: 60 concurrent enables with one code (20 per server) give exactly
    /// one success; then for 100 steps, 60 concurrent verifies of the step's code give exactly
    /// one 200 and 59 replays (401, not counted as failures).
    #[test]
    fn three_servers_accept_each_code_once() {
        alone(async {
            let dir = tempfile::tempdir().unwrap();
            let (db, key, clock) = (database(), master_key_file(dir.path()), TestClock::new(dir.path()));
            let partner = create_partner(&db);
            let servers: Vec<_> = (0..3).map(|_| Instance::start_with(&db, &key, &clock.args())).collect();
            let api = Api::new(&partner);
            let each = |op: &'static str, contact: &str, code: &str| -> Vec<(String, &'static str, String, String)> {
                (0..60).map(|i| (servers[i % 3].base.clone(), op, contact.to_owned(), code.to_owned())).collect()
            };

            let contact = contact();
            let secret = api.create(&servers[0].base, &contact).await;
            let code = totp::code_at(&secret, clock.now());
            let replies = at_once(&api, each("enable2fa", &contact, &code)).await;
            let (ok, refused): (Vec<_>, Vec<_>) = replies.iter().partition(|r| r.status == 200);
            assert_eq!(
                ok.len(),
                1,
                "exactly one enable succeeds: {:?}",
                replies.iter().map(|r| r.status).collect::<Vec<_>>()
            );
            ok[0].assert_enabled();
            refused.iter().for_each(|r| r.assert_error(409, ALREADY_ENABLED));
            assert_eq!(psql(&db, "SELECT count(*) || ' ' || bool_and(enabled) FROM contacts"), "1 true");

            let mut last = 0;
            for round in 0..100 {
                clock.advance(STEP_SECONDS);
                while ambiguous(&secret, clock.now() / STEP_SECONDS) {
                    clock.advance(STEP_SECONDS);
                }
                let t = clock.now();
                last = t / STEP_SECONDS;
                let replies = at_once(&api, each("verify2fa", &contact, &totp::code_at(&secret, t))).await;
                let (ok, replayed): (Vec<_>, Vec<_>) = replies.iter().partition(|r| r.status == 200);
                let statuses: Vec<_> = replies.iter().map(|r| r.status).collect();
                assert_eq!(ok.len(), 1, "round {round}: exactly one success: {statuses:?}");
                ok[0].assert_valid("token", 10);
                replayed.iter().for_each(|r| r.assert_error(401, FAILED));
            }
            // Replays are refused without counting; the last success is the last step.
            let where_contact = format!("WHERE contact_id = {}", bytea(&contact));
            let stored = psql(&db, &format!("SELECT failures || ' ' || last_step FROM contacts {where_contact}"));
            assert_eq!(stored, format!("0 {last}"));
        });
    }

    /// 2 servers × 50 concurrent wrong codes for one contact. Throttle off (a sandbox-only test
    /// hook): every failure is counted, 100 stored. Throttle on: exactly 5 are evaluated
    /// (401) and the other 95 refused (429), 5 stored. Production refuses the hook.
    #[test]
    fn failure_counts_are_exact_across_two_servers() {
        alone(async {
            let dir = tempfile::tempdir().unwrap();
            let (db, key) = (database(), master_key_file(dir.path()));
            let partner = create_partner(&db);
            let unthrottled = [
                Instance::start_with(&db, &key, &["--throttling", "off"]),
                Instance::start_with(&db, &key, &["--throttling", "off"]),
            ];
            let throttled = [Instance::start(&db, &key), Instance::start(&db, &key)];
            let api = Api::new(&partner);
            let burst =
                |servers: &[Instance; 2], contact: &str, code: &str| -> Vec<(String, &'static str, String, String)> {
                    (0..100)
                        .map(|i| (servers[i % 2].base.clone(), "verify2fa", contact.to_owned(), code.to_owned()))
                        .collect()
                };

            let (contact, secret) = api.enabled(&unthrottled[0].base, now).await;
            let replies = at_once(&api, burst(&unthrottled, &contact, &wrong_code(&secret, now()))).await;
            replies.iter().for_each(|r| r.assert_error(401, FAILED));
            assert_eq!(stored_failures(&db, &contact), 100);

            let (contact, secret) = api.enabled(&throttled[0].base, now).await;
            let replies = at_once(&api, burst(&throttled, &contact, &wrong_code(&secret, now()))).await;
            let (evaluated, refused): (Vec<_>, Vec<_>) = replies.iter().partition(|r| r.status != 429);
            assert_eq!(evaluated.len(), 5, "{:?}", replies.iter().map(|r| r.status).collect::<Vec<_>>());
            evaluated.iter().for_each(|r| r.assert_error(401, FAILED));
            refused.iter().for_each(|r| assert_throttled(r, 1..=30));
            assert_eq!(stored_failures(&db, &contact), 5);

            for how in [&["--throttling", "off"][..], &[]] {
                let mut refused = command();
                if how.is_empty() {
                    refused.env("RAMPART_THROTTLING", "off");
                }
                let out = refused
                    .args(["--environment", "production", "--db", &db, "--master-key-file", &key])
                    .args(["--listen", "127.0.0.1:0"])
                    .args(how)
                    .output()
                    .unwrap();
                assert!(!out.status.success());
                let stderr = String::from_utf8_lossy(&out.stderr);
                assert!(stderr.contains("--throttling off is a test hook for sandbox servers only"), "{stderr}");
            }
        });
    }

    /// A contact locked by 100 failures spread over 2 servers (the test clock steps past each
    /// throttle wait) is locked on both; `contact reset-lock` by the CLI lifts it for both at
    /// once, audit-logged.
    #[test]
    fn reset_lock_by_the_cli_is_seen_by_every_server_at_once() {
        alone(async {
            let dir = tempfile::tempdir().unwrap();
            let (db, key, clock) = (database(), master_key_file(dir.path()), TestClock::new(dir.path()));
            let partner = create_partner(&db);
            let servers =
                [Instance::start_with(&db, &key, &clock.args()), Instance::start_with(&db, &key, &clock.args())];
            let api = Api::new(&partner);
            let (contact, secret) = api.enabled(&servers[0].base, || clock.now()).await;

            for failure in 1..=100u32 {
                let (here, there) = (&servers[failure as usize % 2].base, &servers[(failure as usize + 1) % 2].base);
                let wrong = wrong_code(&secret, clock.now());
                api.verify(here, &contact, &wrong).await.unwrap().assert_error(401, FAILED);
                if failure < 5 {
                    continue;
                }
                // min(30 * 2^(k - 5), 3600) s after the k-th failure
                let wait = (30u64 << (failure - 5).min(7)).min(3600);
                if failure < 100 {
                    // Throttled on the other server too, even for the right code.
                    let right = totp::code_at(&secret, clock.now());
                    assert_throttled(&api.verify(there, &contact, &right).await.unwrap(), wait - 2..=wait);
                }
                clock.advance(wait + 1);
            }
            assert_eq!(stored_failures(&db, &contact), 100);
            for server in &servers {
                let right = totp::code_at(&secret, clock.now());
                api.verify(&server.base, &contact, &right).await.unwrap().assert_error(423, LOCKED);
            }

            let out = command()
                .args(["--db", &db, "--master-key-file", &key, "contact", "reset-lock"])
                .args(["--partner", &partner.id, "--contact", &contact])
                .output()
                .unwrap();
            assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
            let said: Value = serde_json::from_slice(&out.stdout).unwrap();
            assert_eq!(said, json!({ "partnerId": partner.id, "contactId": contact, "lockReset": true }));
            // No server keeps the lock in memory: both accept a code at once (this step's and the
            // next's, each once).
            let t = clock.now();
            api.verify(&servers[0].base, &contact, &totp::code_at(&secret, t)).await.unwrap().assert_valid("token", 10);
            let next = totp::code_at(&secret, t + STEP_SECONDS);
            api.verify(&servers[1].base, &contact, &next).await.unwrap().assert_valid("token", 10);
            assert_eq!(stored_failures(&db, &contact), 0);
            let audit = psql(
                &db,
                "SELECT actor || ' ' || event || ' ' || details FROM audit_events WHERE event = '2fa.unlocked'",
            );
            assert_eq!(audit, r#"operator:tester 2fa.unlocked {"failures":100}"#);
        });
    }

    /// What one request of a load got.
    #[derive(Debug)]
    struct Sample {
        server: usize,
        /// Which start of that server the request went to.
        generation: usize,
        sent: Instant,
        done: Instant,
        contact: usize,
        step: u64,
        /// Status and message, or why there was no answer (connection refused or reset).
        reply: Result<(u16, String), String>,
    }

    /// 2 servers under a verify load of 16 clients over 6 contacts (the test clock moves a step
    /// every 500 ms); 20 times one of them is killed (SIGKILL) and started again. Over the whole
    /// run no (contact, step) is accepted twice, and the survivor's answers to requests sent 1 s
    /// or more after a kill are all below 500.
    #[test]
    fn killing_a_server_under_load_never_accepts_a_code_twice() {
        alone(async {
            let dir = tempfile::tempdir().unwrap();
            let (db, key, clock) = (database(), master_key_file(dir.path()), TestClock::new(dir.path()));
            let partner = create_partner(&db);
            let start = {
                let (db, key, clock) = (db.clone(), key.clone(), clock.clone());
                move || Instance::start_with(&db, &key, &clock.args())
            };
            let mut servers = [start(), start()];
            let api = Api::new(&partner);
            let mut contacts = Vec::new();
            for i in 0..6 {
                contacts.push(api.enabled(&servers[i % 2].base, || clock.now()).await);
            }
            let contacts = Arc::new(contacts);
            // (base, generation) of each server, as the clients see them.
            let targets = Arc::new(RwLock::new(servers.iter().map(|s| (s.base.clone(), 0)).collect::<Vec<_>>()));
            let samples = Arc::new(Mutex::new(Vec::new()));
            let stop = Arc::new(AtomicBool::new(false));

            let mut clients = Vec::new();
            for seed in 0..16u64 {
                let (api, clock, contacts, targets, samples, stop) =
                    (api.clone(), clock.clone(), contacts.clone(), targets.clone(), samples.clone(), stop.clone());
                clients.push(tokio::spawn(async move {
                    let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ (seed + 1).wrapping_mul(0x2545_f491_4f6c_dd1d));
                    while !stop.load(Ordering::SeqCst) {
                        let (server, contact) = (rng.below(2) as usize, rng.below(contacts.len() as u64) as usize);
                        let sent = Instant::now();
                        let (base, generation) = targets.read().unwrap()[server].clone();
                        let t = clock.now();
                        let (id, secret) = &contacts[contact];
                        if ambiguous(secret, t / STEP_SECONDS) {
                            tokio::time::sleep(Duration::from_millis(5)).await;
                            continue;
                        }
                        let reply = api.verify(&base, id, &totp::code_at(secret, t)).await;
                        let reply = reply
                            .map(|r| (r.status, r.body["message"].as_str().unwrap_or(&r.text).to_owned()))
                            .map_err(|e| format!("{e:?}"));
                        let refused = reply.is_err();
                        let sample = Sample {
                            server,
                            generation,
                            sent,
                            done: Instant::now(),
                            contact,
                            step: t / STEP_SECONDS,
                            reply,
                        };
                        samples.lock().unwrap().push(sample);
                        if refused {
                            tokio::time::sleep(Duration::from_millis(20)).await;
                        }
                    }
                }));
            }
            let ticker = {
                let (clock, stop) = (clock.clone(), stop.clone());
                tokio::spawn(async move {
                    while !stop.load(Ordering::SeqCst) {
                        tokio::time::sleep(Duration::from_millis(500)).await;
                        clock.advance(STEP_SECONDS);
                    }
                })
            };

            let mut rng = Rng(0x5eed_1234_abcd_ef01);
            // (when, victim) of each kill; when each generation of each server died.
            let mut kills = Vec::new();
            let mut died: HashMap<(usize, usize), Instant> = HashMap::new();
            for round in 0..20 {
                tokio::time::sleep(Duration::from_millis(150 + rng.below(300))).await;
                let victim = round % 2;
                // Taken before the signal: a client may see the connection drop at once.
                let when = Instant::now();
                servers[victim].kill();
                kills.push((when, victim));
                died.insert((victim, targets.read().unwrap()[victim].1), when);
                tokio::time::sleep(Duration::from_millis(1200)).await;
                servers[victim] = tokio::task::spawn_blocking(start.clone()).await.unwrap();
                let mut targets = targets.write().unwrap();
                targets[victim] = (servers[victim].base.clone(), targets[victim].1 + 1);
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
            stop.store(true, Ordering::SeqCst);
            for client in clients {
                client.await.unwrap();
            }
            ticker.await.unwrap();
            let end = Instant::now();
            let samples = std::mem::take(&mut *samples.lock().unwrap());

            let mut accepted: HashMap<(usize, u64), usize> = HashMap::new();
            for s in &samples {
                match &s.reply {
                    Ok((200, message)) => {
                        assert_eq!(message, VALID);
                        *accepted.entry((s.contact, s.step)).or_default() += 1;
                    }
                    Ok((401, message)) => assert_eq!(message, FAILED),
                    Ok((429, message)) => assert!(message.starts_with("Too many failed 2FA attempts"), "{message}"),
                    Ok((500, message)) => {
                        assert_eq!(message, VERIFY_ERROR);
                        // Only for a request under way at a kill or sent within 1 s after it.
                        let near_kill = kills.iter().any(|(k, _)| s.done >= *k && s.sent < *k + Duration::from_secs(1));
                        assert!(near_kill, "a 500 far from any kill: {s:?}");
                    }
                    Ok(other) => panic!("unexpected answer {other:?}"),
                    // No answer only from a server that was killed by the time it ended.
                    Err(_) => {
                        let gone = died.get(&(s.server, s.generation)).is_some_and(|k| *k <= s.done);
                        assert!(gone, "no answer from a running server: {s:?}");
                    }
                }
            }
            let twice: Vec<_> = accepted.iter().filter(|(_, n)| **n > 1).collect();
            assert!(twice.is_empty(), "(contact, step) accepted more than once: {twice:?}");
            for (i, (kill, victim)) in kills.iter().enumerate() {
                let survivor = 1 - victim;
                let until = kills.get(i + 1).map_or(end, |(k, _)| *k);
                let window: Vec<_> = samples
                    .iter()
                    .filter(|s| s.server == survivor && s.sent >= *kill + Duration::from_secs(1) && s.done < until)
                    .collect();
                assert!(!window.is_empty(), "kill {i}: no request to the survivor after 1 s");
                for s in window {
                    assert!(
                        s.reply.as_ref().is_ok_and(|(status, _)| *status < 500),
                        "kill {i}: survivor answered {s:?}"
                    );
                }
            }
            let errors = samples.iter().filter(|s| s.reply.as_ref().is_ok_and(|(status, _)| *status >= 500)).count();
            let refused = samples.iter().filter(|s| s.reply.is_err()).count();
            eprintln!(
                "{} requests, {} accepted (contact, step) pairs, {errors} answered 5xx, {refused} unanswered",
                samples.len(),
                accepted.len()
            );
            assert!(accepted.len() >= 100, "too few successes to mean anything: {}", accepted.len());
            // No transaction left open by a killed server outlives the idle-transaction limit.
            let stale = "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() \
                         AND state LIKE 'idle in transaction%' AND now() - state_change > interval '10 s'";
            assert_eq!(psql(&db, stale), "0");
        });
    }

    /// The backend of `application` that sits idle in a transaction holding a row lock on
    /// `contacts` (a `SELECT ... FOR UPDATE` done, its client stopped), if any. Locking the row
    /// gives the transaction an id; a statement only prepared (parsed, not run) locks the table
    /// but no row.
    fn lock_holder(db: &str, application: &str) -> Option<String> {
        let sql = format!(
            "SELECT a.pid FROM pg_stat_activity a JOIN pg_locks l ON l.pid = a.pid \
             WHERE a.datname = current_database() AND a.application_name = '{application}' \
             AND a.state = 'idle in transaction' AND l.locktype = 'relation' \
             AND l.relation = 'contacts'::regclass AND l.mode = 'RowShareLock' AND l.granted \
             AND EXISTS (SELECT 1 FROM pg_locks x WHERE x.pid = a.pid AND x.locktype = 'transactionid' \
             AND x.granted)"
        );
        let pids = psql(db, &sql);
        (!pids.is_empty()).then(|| pids.lines().next().unwrap().to_owned())
    }

    /// Server A is stopped (SIGSTOP) inside a verify of contact X, holding X's row lock, while
    /// server C's verify of X already waits for it. Server B's verify of X then fails closed
    /// (500) within 3 s, B serves other contacts meanwhile, and once PostgreSQL ends A's idle
    /// transaction (10 s) B verifies X again. A, continued, serves again without a restart.
    #[test]
    fn a_stopped_server_holding_a_row_lock_delays_only_that_contact() {
        alone(async {
            let dir = tempfile::tempdir().unwrap();
            let (db, key) = (database(), master_key_file(dir.path()));
            let partner = create_partner(&db);
            let named = |name: &str| Instance::start(&with_url_parameter(&db, "application_name", name), &key);
            let (a, b, c) = (named("inst_a"), named("inst_b"), named("inst_c"));
            let api = Api::new(&partner);
            let (x, x_secret) = api.enabled(&b.base, now).await;
            let (y, y_secret) = api.enabled(&b.base, now).await;
            let next_code = |secret: &Secret| totp::code_at(secret, now() + STEP_SECONDS);

            // A verifies X without pause from 4 clients (replays, mostly: the enable used this
            // step's code); each request locks X's row, and while one holds it another waits,
            // so a stopped A almost always ends up holding it.
            let stop = Arc::new(AtomicBool::new(false));
            let load: Vec<_> = (0..4)
                .map(|_| {
                    let (api, base, x, secret, stop) =
                        (api.clone(), a.base.clone(), x.clone(), x_secret.clone(), stop.clone());
                    tokio::spawn(async move {
                        while !stop.load(Ordering::SeqCst) {
                            let _ = api.verify(&base, &x, &totp::code_at(&secret, now())).await;
                        }
                    })
                })
                .collect();
            tokio::time::sleep(Duration::from_millis(300)).await;
            let mut holder = None;
            let mut stopped_at = Instant::now();
            for _ in 0..40 {
                signal("STOP", a.pid());
                stopped_at = Instant::now();
                // A statement running when A stopped finishes; then its backend idles.
                tokio::time::sleep(Duration::from_millis(200)).await;
                holder = lock_holder(&db, "inst_a");
                if holder.is_some() {
                    break;
                }
                // A stopped between transactions: let it run and try again.
                signal("CONT", a.pid());
                tokio::time::sleep(Duration::from_millis(50 + rand_millis() % 100)).await;
            }
            let holder = holder.expect("A never stopped inside a transaction in 40 tries");

            // C asks for X first and waits for the lock (in PostgreSQL's queue for the row).
            let queued = {
                let (api, base, x, code) = (api.clone(), c.base.clone(), x.clone(), next_code(&x_secret));
                tokio::spawn(async move { api.verify(&base, &x, &code).await.unwrap() })
            };
            let waiting = "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() \
                           AND application_name = 'inst_c' AND wait_event_type = 'Lock'";
            let since = Instant::now();
            while psql(&db, waiting) != "1" {
                assert!(since.elapsed() < Duration::from_secs(1), "C's verify of X is not waiting for the lock");
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            tokio::time::sleep(Duration::from_millis(500)).await;

            let asked = Instant::now();
            let blocked = {
                let (api, base, x, code) = (api.clone(), b.base.clone(), x.clone(), next_code(&x_secret));
                tokio::spawn(async move { api.verify(&base, &x, &code).await.unwrap() })
            };
            tokio::time::sleep(Duration::from_millis(100)).await;
            api.verify(&b.base, &y, &next_code(&y_secret)).await.unwrap().assert_valid("token", 10);
            let status = api.get(&b.base, &format!("/v1/auth/2fa?contactId={}", contact())).await;
            assert_eq!(
                status.body,
                json!({ "message": "2FA is false.", "code": 200, "status": false, "recoveryCodesRemaining": 0 })
            );
            assert!(!blocked.is_finished(), "B answered on X before its other requests");
            queued.await.unwrap().assert_error(500, VERIFY_ERROR);
            blocked.await.unwrap().assert_error(500, VERIFY_ERROR);
            // B queues behind C for the row, then for A's transaction: PostgreSQL's lock_timeout
            // bounds each of those waits on its own, so only a bound on the whole statement
            // keeps B within 3 s.
            let waited = asked.elapsed();
            assert!(waited >= Duration::from_secs(1), "B answered after {waited:?}, before any lock wait");
            assert!(waited < Duration::from_secs(3), "B answered 500 only after {waited:?} (queued behind C)");

            // Until the idle-transaction limit ends A's transaction, X fails closed; then it works.
            loop {
                let r = api.verify(&b.base, &x, &next_code(&x_secret)).await.unwrap();
                if r.status == 200 {
                    r.assert_valid("token", 10);
                    break;
                }
                r.assert_error(500, VERIFY_ERROR);
                assert!(stopped_at.elapsed() < Duration::from_secs(16), "X still blocked 16 s after A stopped");
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            let gone = format!("SELECT count(*) FROM pg_stat_activity WHERE pid = {holder}");
            assert_eq!(psql(&db, &gone), "0", "A's stopped transaction is still open");
            assert!(stopped_at.elapsed() >= Duration::from_secs(9), "X free before the idle-transaction limit");

            signal("CONT", a.pid());
            stop.store(true, Ordering::SeqCst);
            load.iter().for_each(tokio::task::JoinHandle::abort);
            let continued = Instant::now();
            loop {
                let r = api.get(&a.base, "/healthz").await;
                if r.status == 200 {
                    break;
                }
                assert!(continued.elapsed() < Duration::from_secs(5), "A unhealthy after SIGCONT: {}", r.text);
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            api.create(&a.base, &contact()).await;
        });
    }

    /// Milliseconds of the system clock: jitter for retries.
    fn rand_millis() -> u64 {
        u64::from(SystemTime::now().duration_since(UNIX_EPOCH).unwrap().subsec_millis())
    }

    /// One request of the termination load.
    #[derive(Debug)]
    struct Call {
        enable: bool,
        contact: String,
        /// The step of the code sent, and the servers' step when the answer came.
        step: u64,
        step_at_answer: u64,
        sent: Instant,
        done: Instant,
        status: u16,
        message: String,
    }

    /// Send an enable or verify of `contact` until it is answered below 500, each time with the
    /// code `code()` gives (and its step); every answer goes to `calls`. The last answer, code
    /// and step.
    async fn until_answered(
        api: &Api,
        base: &str,
        (enable, contact): (bool, &str),
        code: impl Fn() -> (String, u64),
        clock: &TestClock,
        calls: &Mutex<Vec<Call>>,
    ) -> (u16, String, String, u64) {
        let op = if enable { "enable2fa" } else { "verify2fa" };
        for _ in 0..50 {
            let (code, step) = code();
            let sent = Instant::now();
            let r = api.attempt(base, op, contact, &code).await.expect("an answer");
            let (done, step_at_answer) = (Instant::now(), clock.now() / STEP_SECONDS);
            let message = r.body["message"].as_str().unwrap_or(&r.text).to_owned();
            let (status, contact) = (r.status, contact.to_owned());
            let call = Call { enable, contact, step, step_at_answer, sent, done, status, message: message.clone() };
            calls.lock().unwrap().push(call);
            if status < 500 {
                return (status, message, code, step);
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("{op} of {contact} still failing after 50 tries");
    }

    /// Every connection of a server (found by its application_name) is terminated by PostgreSQL
    /// 4 times under a verify and enable load (the test clock moves a step every 500 ms).
    /// Requests in flight then answer 500; requests sent after a termination ended succeed;
    /// each 200 was committed (the same code right after is refused as used, and the stored
    /// rows show it); the server is never restarted.
    #[test]
    fn terminated_connections_fail_only_the_requests_in_flight() {
        alone(async {
            let dir = tempfile::tempdir().unwrap();
            let (db, key, clock) = (database(), master_key_file(dir.path()), TestClock::new(dir.path()));
            let partner = create_partner(&db);
            let url = with_url_parameter(&db, "application_name", "rampart_t11");
            let mut server = Instance::start_with(&url, &key, &clock.args());
            let pid = server.pid();
            let api = Api::new(&partner);

            // Each client verifies 4 contacts of its own; all take the pending ones to enable.
            let mut owned = Vec::new();
            for _ in 0..16 {
                let mut mine = Vec::new();
                for _ in 0..4 {
                    mine.push(api.enabled(&server.base, || clock.now()).await);
                }
                owned.push(mine);
            }
            let mut pending = Vec::new();
            for _ in 0..100 {
                let contact = contact();
                let secret = api.create(&server.base, &contact).await;
                pending.push((contact, secret));
            }
            let pending = Arc::new(Mutex::new(pending));
            let calls = Arc::new(Mutex::new(Vec::new()));
            let stop = Arc::new(AtomicBool::new(false));

            let mut clients = Vec::new();
            for mine in owned {
                let (api, base, clock, pending, calls, stop) =
                    (api.clone(), server.base.clone(), clock.clone(), pending.clone(), calls.clone(), stop.clone());
                clients.push(tokio::spawn(async move {
                    let mut turn = 0;
                    while !stop.load(Ordering::SeqCst) {
                        turn += 1;
                        // Every fourth turn enables a pending contact while there are some.
                        let next = if turn % 4 == 0 { pending.lock().unwrap().pop() } else { None };
                        let (enable, (contact, secret)) = match next {
                            Some(next) => (true, next),
                            None => (false, mine[turn % mine.len()].clone()),
                        };
                        // The current code at each try: after a 500 whose write did commit, the
                        // retry of a verify is a replay (or a later step), of an enable a 409.
                        let now = || {
                            let t = clock.now();
                            (totp::code_at(&secret, t), t / STEP_SECONDS)
                        };
                        if !enable && ambiguous(&secret, clock.now() / STEP_SECONDS) {
                            tokio::time::sleep(Duration::from_millis(5)).await;
                            continue;
                        }
                        let what = (enable, contact.as_str());
                        let (status, _, code, step) = until_answered(&api, &base, what, now, &clock, &calls).await;
                        if status == 200 {
                            // Committed: the same code again is used up.
                            let same = || (code.clone(), step);
                            let (status, message, ..) = until_answered(&api, &base, what, same, &clock, &calls).await;
                            let want = if enable { (409, ALREADY_ENABLED) } else { (401, FAILED) };
                            assert_eq!((status, message.as_str()), want, "a 200 not committed: {what:?} {step}");
                        }
                    }
                }));
            }
            let ticker = {
                let (clock, stop) = (clock.clone(), stop.clone());
                tokio::spawn(async move {
                    while !stop.load(Ordering::SeqCst) {
                        tokio::time::sleep(Duration::from_millis(500)).await;
                        clock.advance(STEP_SECONDS);
                    }
                })
            };
            // (began, ended) of each termination.
            let mut terminations = Vec::new();
            for _ in 0..4 {
                tokio::time::sleep(Duration::from_millis(700)).await;
                let db = db.clone();
                let began = Instant::now();
                // The server's backends first (materialized), so no other one is terminated;
                // each termination waits until the backend is gone.
                let killed = tokio::task::spawn_blocking(move || {
                    psql(
                        &db,
                        "WITH server AS MATERIALIZED (SELECT pid FROM pg_stat_activity \
                         WHERE datname = current_database() AND application_name = 'rampart_t11') \
                         SELECT count(*) FILTER (WHERE pg_terminate_backend(pid, 5000)) FROM server",
                    )
                })
                .await
                .unwrap();
                assert_ne!(killed, "0", "no server connection to terminate");
                terminations.push((began, Instant::now()));
            }
            tokio::time::sleep(Duration::from_millis(700)).await;
            stop.store(true, Ordering::SeqCst);
            for client in clients {
                client.await.unwrap();
            }
            ticker.await.unwrap();
            let calls = std::mem::take(&mut *calls.lock().unwrap());

            let mut errors = 0;
            let mut last_accepted: HashMap<&str, u64> = HashMap::new();
            for call in &calls {
                let during = |(began, ended): &(Instant, Instant)| call.sent < *ended && call.done >= *began;
                match (call.status, call.enable) {
                    (500, _) => {
                        errors += 1;
                        let said = if call.enable { ENABLE_ERROR } else { VERIFY_ERROR };
                        assert!(call.message == said || call.message == "Internal server error", "{call:?}");
                        assert!(terminations.iter().any(during), "a 500 not in flight at a termination: {call:?}");
                    }
                    (200, false) => {
                        assert_eq!(call.message, VALID);
                        let last = last_accepted.entry(&call.contact).or_default();
                        *last = (*last).max(call.step);
                    }
                    (200, true) => assert_eq!(call.message, ENABLED),
                    // A replay, or a code the test clock left behind while it was under way.
                    (401, false) => assert_eq!(call.message, FAILED),
                    (401, true) => {
                        assert_eq!(call.message, FAILED);
                        assert!(call.step_at_answer >= call.step + 2, "an enable refused its valid code: {call:?}");
                    }
                    (409, true) => assert_eq!(call.message, ALREADY_ENABLED),
                    _ => panic!("unexpected answer {call:?}"),
                }
            }
            // Requests sent after a termination ended (and before the next began) all succeeded.
            for (i, (_, ended)) in terminations.iter().enumerate() {
                let next = terminations.get(i + 1).map(|(began, _)| *began);
                for call in calls.iter().filter(|c| c.sent > *ended && next.is_none_or(|began| c.sent < began)) {
                    assert!(call.status < 500, "after termination {i}: {call:?}");
                }
            }
            let rows = psql(&db, "SELECT encode(contact_id, 'hex'), enabled, last_step, failures FROM contacts");
            let stored: HashMap<String, (bool, Option<u64>, u64)> = rows
                .lines()
                .map(|line| {
                    let f: Vec<_> = line.split('|').collect();
                    (f[0].to_owned(), (f[1] == "t", f[2].parse().ok(), f[3].parse().unwrap()))
                })
                .collect();
            let stored_for = |contact: &str| stored[&contact.replace('-', "")];
            for call in calls.iter().filter(|c| c.status == 200 && c.enable) {
                assert!(stored_for(&call.contact).0, "enabled by a 200 but not stored: {call:?}");
            }
            for (contact, step) in &last_accepted {
                assert_eq!(stored_for(contact).1, Some(*step), "{contact}: last accepted step not stored");
            }
            let enables = calls.iter().filter(|c| c.status == 200 && c.enable).count();
            eprintln!(
                "{} requests, {} verified, {enables} enabled, {errors} answered 500",
                calls.len(),
                last_accepted.len()
            );
            assert!(errors > 0, "no request was in flight at any termination");
            assert!(enables > 0 && !last_accepted.is_empty());
            assert!(server.child.try_wait().unwrap().is_none(), "the server exited");
            assert_eq!(server.pid(), pid);
            let health = api.get(&server.base, "/healthz").await;
            assert_eq!(health.body, json!({ "message": "Store is reachable.", "code": 200 }));
            server.kill();
        });
    }

    /// Run a server to its exit (at most 20 s): its status and stderr.
    fn run_to_exit(db: &str, key: &str) -> (std::process::ExitStatus, String) {
        let mut child = command()
            .args(["--db", db, "--master-key-file", key, "--listen", "127.0.0.1:0"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stderr = child.stderr.take().unwrap();
        let reader = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = std::io::Read::read_to_string(&mut stderr, &mut text);
            text
        });
        let started = Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            if started.elapsed() > Duration::from_secs(20) {
                let _ = child.kill();
                let _ = child.wait();
                panic!("the server did not exit within 20 s: {}", reader.join().unwrap());
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        (status, reader.join().unwrap())
    }

    /// Five servers starting at once on an empty database all serve, and the migrations are
    /// recorded once (as on a database one process migrated). A database one version newer,
    /// or whose recorded migration differs, is refused at start with a message saying so.
    #[test]
    fn five_servers_migrate_an_empty_database_once() {
        alone(async {
            let dir = tempfile::tempdir().unwrap();
            let (db, key) = (database(), master_key_file(dir.path()));
            let servers: Vec<Instance> = std::thread::scope(|scope| {
                let starting: Vec<_> = (0..5).map(|_| scope.spawn(|| Instance::start(&db, &key))).collect();
                starting.into_iter().map(|s| s.join().expect("a server started")).collect()
            });
            let partner = create_partner(&db);
            let api = Api::new(&partner);
            for server in &servers {
                let health = api.get(&server.base, "/healthz").await;
                assert_eq!(health.body, json!({ "message": "Store is reachable.", "code": 200 }));
                api.create(&server.base, &contact()).await;
            }
            drop(servers);
            let reference = database();
            create_partner(&reference);
            let migrations = "SELECT version || ' ' || encode(checksum, 'hex') FROM schema_migrations ORDER BY version";
            let applied = psql(&db, migrations);
            assert_eq!(applied, psql(&reference, migrations));
            let versions: Vec<u32> = applied.lines().map(|l| l.split(' ').next().unwrap().parse().unwrap()).collect();
            assert_eq!(versions, (1..=versions.len() as u32).collect::<Vec<_>>());

            let newer = versions.len() + 1;
            psql(&db, &format!("INSERT INTO schema_migrations (version, checksum) VALUES ({newer}, '\\x00')"));
            let (status, stderr) = run_to_exit(&db, &key);
            assert!(!status.success());
            assert!(stderr.contains("database schema is newer than this library"), "{stderr}");

            psql(&db, &format!("DELETE FROM schema_migrations WHERE version = {newer}"));
            psql(&db, "UPDATE schema_migrations SET checksum = '\\x00' WHERE version = 1");
            let (status, stderr) = run_to_exit(&db, &key);
            assert!(!status.success());
            let changed = "version 1 was applied from SQL other than this library's (checksum differs)";
            assert!(stderr.contains(changed), "{stderr}");
        });
    }
}
