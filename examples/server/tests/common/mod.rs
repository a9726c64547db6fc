//! Shared test harness: the app on 127.0.0.1 (port 0) with a controlled clock, a real HTTP
//! client, and helpers to read answers and compute codes.
#![allow(dead_code)] // each test binary uses a different part of the harness

use std::sync::Arc;

use rampart_core::store::FaultyStore;
use rampart_core::totp::{self, Secret};
use rampart_core::{Environment, KeyRing, ManualClock, MemoryStore, PartnerCredentials, PartnerId, Service, Store};
use serde_json::Value;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// The built `rampart-server` binary with a clean environment: no inherited `RAMPART_*`
/// variable, an explicit log filter (`info`), an operator name for the audit log, no stdin.
pub fn server_command() -> std::process::Command {
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_rampart-server"));
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("RAMPART_") {
            c.env_remove(name);
        }
    }
    c.env("RUST_LOG", "info").env("USER", "tester").stdin(std::process::Stdio::null());
    c
}

/// A new, empty database on the test PostgreSQL (`RAMPART_TEST_DATABASE_URL`, which
/// `make pg-test` sets): its URL, with the base URL's parameters. Never skips: without the
/// variable it panics.
pub fn postgres_database() -> String {
    let base = std::env::var("RAMPART_TEST_DATABASE_URL")
        .expect("RAMPART_TEST_DATABASE_URL must name a PostgreSQL: run `make pg-test`");
    let name = format!("t_{}", uuid::Uuid::new_v4().simple());
    let out = std::process::Command::new("psql")
        .args([base.as_str(), "-v", "ON_ERROR_STOP=1", "-qc", &format!("CREATE DATABASE {name}")])
        .output()
        .expect("run psql");
    assert!(out.status.success(), "CREATE DATABASE: {}", String::from_utf8_lossy(&out.stderr));
    let mut url = url::Url::parse(&base).expect("RAMPART_TEST_DATABASE_URL is a URL");
    url.set_path(&format!("/{name}"));
    url.to_string()
}

/// `url` with `name=value` added to its query (`application_name=inst_a`, ...).
pub fn with_url_parameter(url: &str, name: &str, value: &str) -> String {
    let mut url = url::Url::parse(url).expect("a database URL");
    url.query_pairs_mut().append_pair(name, value);
    url.to_string()
}

/// A master key file (`1:<hex>`, mode 0600) in `dir`, the same key for every test server:
/// its path.
pub fn master_key_file(dir: &std::path::Path) -> String {
    let path = dir.join("master.key");
    std::fs::write(&path, format!("1:{}\n", "7d".repeat(32))).expect("write the key file");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).expect("chmod the key file");
    }
    path.to_str().expect("a UTF-8 path").to_owned()
}

/// A `rampart-server` process serving `--db` on 127.0.0.1 (a free port); killed when dropped.
pub struct Instance {
    pub child: std::process::Child,
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    log: Arc<std::sync::Mutex<std::collections::VecDeque<String>>>,
}

/// Lines of a server's log kept for [`Instance::log`].
const LOG_LINES: usize = 200;

impl Instance {
    pub fn start(db: &str, key: &str) -> Self {
        Self::start_with(db, key, &[])
    }

    /// Start with more arguments (`--test-clock-file F`, ...) and wait until it listens.
    pub fn start_with(db: &str, key: &str, args: &[&str]) -> Self {
        use std::io::{BufRead, BufReader};
        let mut child = server_command()
            .args(["--db", db, "--master-key-file", key, "--listen", "127.0.0.1:0"])
            .args(args)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("spawn rampart-server");
        let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
        let mut seen = Vec::new();
        let address = loop {
            let Some(Ok(line)) = lines.next() else {
                let _ = child.kill();
                let _ = child.wait();
                panic!("the server exited before listening:\n{}", seen.join("\n"));
            };
            let address =
                line.split(" listening address=").nth(1).map(|rest| rest.split_whitespace().next().map(str::to_owned));
            seen.push(line);
            if let Some(address) = address {
                break address.expect("an address");
            }
        };
        // Keep draining the log so the server never blocks on a full pipe; the last lines stay.
        let kept: std::collections::VecDeque<String> = seen.into_iter().rev().take(LOG_LINES).rev().collect();
        let log = Arc::new(std::sync::Mutex::new(kept));
        let kept = log.clone();
        std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                let mut kept = kept.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                if kept.len() == LOG_LINES {
                    kept.pop_front();
                }
                kept.push_back(line);
            }
        });
        Self { child, base: format!("http://{address}"), log }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// The last lines of the server's log, for a failure message.
    pub fn log(&self) -> String {
        let kept = self.log.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        kept.iter().cloned().collect::<Vec<_>>().join("\n")
    }

    /// SIGKILL, and wait for the process to be gone.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        self.kill();
    }
}

/// A fixed start time (Unix seconds) for the manual clock.
pub const T0: u64 = 1_700_000_010;

/// A JWT secret of the required length.
pub const JWT_SECRET: &[u8] = b"an-hs256-secret-of-at-least-32-bytes!!";

/// A running app.
pub struct Server {
    pub base: String,
    pub service: Arc<Service>,
    pub clock: Arc<ManualClock>,
    pub client: reqwest::Client,
    shutdown: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<std::io::Result<()>>>,
}

/// An answer: status, headers and the body as JSON (`Value::Null` when it is not JSON).
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    pub text: String,
    pub body: Value,
}

impl Reply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// Assert an error answer `{"message","code"}` with exactly these two fields.
    #[track_caller]
    pub fn assert_error(&self, code: u16, message: &str) {
        assert_eq!(self.status, code, "status of {}", self.text);
        assert_eq!(self.body, serde_json::json!({ "message": message, "code": code }), "body");
    }

    /// Assert a plain success `{"message","code":200}`.
    #[track_caller]
    pub fn assert_ok(&self, message: &str) {
        self.assert_error(200, message);
    }

    /// Assert enable's success: the message, `details.recoveryCodes` (10 codes of six groups of
    /// four Crockford symbols) and `Cache-Control: no-store`; returns the codes.
    #[track_caller]
    pub fn assert_enabled(&self) -> Vec<String> {
        self.assert_codes("Successfully enabled 2fa!")
    }

    /// Assert an answer that shows a new set of recovery codes; returns them.
    #[track_caller]
    pub fn assert_codes(&self, message: &str) -> Vec<String> {
        assert_eq!(self.status, 200, "status of {}", self.text);
        let codes: Vec<String> = serde_json::from_value(self.body["details"]["recoveryCodes"].clone()).expect("codes");
        assert_eq!(
            self.body,
            serde_json::json!({ "message": message, "code": 200, "details": { "recoveryCodes": codes } })
        );
        assert_eq!(codes.len(), 10);
        for code in &codes {
            assert!(
                code.len() == 29
                    && code
                        .split('-')
                        .all(|g| g.len() == 4 && g.bytes().all(|b| b"0123456789ABCDEFGHJKMNPQRSTVWXYZ".contains(&b))),
                "{code}"
            );
        }
        assert_eq!(self.header("cache-control"), Some("no-store"));
        codes
    }

    /// Assert verify's success: `method` and `recoveryCodesRemaining`.
    #[track_caller]
    pub fn assert_valid(&self, method: &str, remaining: u32) {
        assert_eq!(self.status, 200, "status of {}", self.text);
        assert_eq!(
            self.body,
            serde_json::json!({ "message": "2FA token is valid.", "code": 200, "method": method, "recoveryCodesRemaining": remaining })
        );
    }
}

pub fn client() -> reqwest::Client {
    reqwest::Client::builder().no_proxy().build().expect("client")
}

/// Options for a test service.
pub struct Setup {
    pub environment: Environment,
    pub jwt: bool,
    pub store: Arc<dyn Store>,
    pub keys: KeyRing,
}

impl Default for Setup {
    fn default() -> Self {
        Self {
            environment: Environment::Sandbox,
            jwt: false,
            store: Arc::new(MemoryStore::new()),
            keys: KeyRing::generate().expect("keys"),
        }
    }
}

impl Setup {
    pub fn build(self, clock: Arc<ManualClock>) -> Service {
        let mut b =
            Service::builder_shared(self.store).master_keys(self.keys).environment(self.environment).clock(clock);
        if self.jwt {
            b = b.jwt_secret(JWT_SECRET.to_vec());
        }
        b.build().expect("service")
    }

    pub async fn start(self) -> Server {
        let clock = Arc::new(ManualClock::new(T0));
        let service = Arc::new(self.build(clock.clone()));
        Server::start(service, clock).await
    }
}

impl Server {
    /// A sandbox app on a memory store.
    pub async fn sandbox() -> Self {
        Setup::default().start().await
    }

    pub async fn start(service: Arc<Service>, clock: Arc<ManualClock>) -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let base = format!("http://{}", listener.local_addr().expect("addr"));
        let (tx, rx) = oneshot::channel::<()>();
        let task = tokio::spawn(rampart_server::serve(listener, service.clone(), async move {
            let _ = rx.await;
        }));
        Self { base, service, clock, client: client(), shutdown: Some(tx), task: Some(task) }
    }

    /// Stop gracefully and wait for the server to finish.
    pub async fn stop(mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(task) = self.task.take() {
            task.await.expect("server task").expect("server result");
        }
    }

    /// A new partner of the server's environment and its secret key.
    pub fn partner(&self) -> (PartnerId, String) {
        let env = self.service.config().environment;
        let creds = self.service.create_partner("Test partner", env).expect("partner");
        (creds.partner_id, creds.secret_key.expose().to_owned())
    }

    pub fn credentials(&self, env: Environment) -> PartnerCredentials {
        self.service.create_partner("Test partner", env).expect("partner")
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    pub async fn send(&self, req: reqwest::RequestBuilder) -> Reply {
        let resp = req.send().await.expect("request");
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        let text = resp.text().await.expect("body");
        let body = serde_json::from_str(&text).unwrap_or(Value::Null);
        Reply { status, headers, text, body }
    }

    pub async fn get(&self, path: &str, key: Option<&str>) -> Reply {
        let mut req = self.client.get(self.url(path));
        if let Some(k) = key {
            req = req.bearer_auth(k);
        }
        self.send(req).await
    }

    pub async fn post_raw(&self, path: &str, key: Option<&str>, body: impl Into<reqwest::Body>) -> Reply {
        let mut req = self.client.post(self.url(path)).header("content-type", "application/json").body(body);
        if let Some(k) = key {
            req = req.bearer_auth(k);
        }
        self.send(req).await
    }

    pub async fn post(&self, path: &str, key: Option<&str>, body: &Value) -> Reply {
        self.post_raw(path, key, body.to_string()).await
    }

    pub async fn create(&self, key: &str, contact: &str) -> Reply {
        self.get(&format!("/v1/auth/create2fa?contactId={contact}"), Some(key)).await
    }

    /// Create and return the secret from `manual`.
    pub async fn create_secret(&self, key: &str, contact: &str) -> Secret {
        let r = self.create(key, contact).await;
        assert_eq!(r.status, 200, "{}", r.text);
        Secret::from_base32(r.body["details"]["manual"].as_str().expect("manual")).expect("base32")
    }

    pub async fn attempt(&self, op: &str, key: &str, contact: &str, token: Value) -> Reply {
        let body = serde_json::json!({ "contactId": contact, "token": token });
        self.post(&format!("/v1/auth/{op}"), Some(key), &body).await
    }

    pub async fn status(&self, key: &str, contact: &str) -> Reply {
        self.get(&format!("/v1/auth/2fa?contactId={contact}"), Some(key)).await
    }

    /// The code for `secret` now (on the manual clock).
    pub fn code(&self, secret: &Secret) -> String {
        use rampart_core::Clock;
        totp::code_at(secret, self.clock.now())
    }

    /// Create and enable 2FA for a contact; returns the secret. Moves the clock to the next step
    /// so the enabling code's step is behind.
    pub async fn enabled(&self, key: &str, contact: &str) -> Secret {
        let secret = self.create_secret(key, contact).await;
        let code = self.code(&secret);
        self.attempt("enable2fa", key, contact, code.into()).await.assert_enabled();
        self.clock.advance(totp::STEP_SECONDS);
        secret
    }
}

/// A fresh contact id.
pub fn contact() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// A wrong code for `secret` at `now` (differs from every code in the window).
pub fn wrong_code(secret: &Secret, now: u64) -> String {
    let valid: Vec<String> = (0..=4).map(|i| totp::code_at(secret, now - 60 + i * 30)).collect();
    (0..1_000_000).map(|n| format!("{n:06}")).find(|c| !valid.contains(c)).expect("a wrong code")
}

/// A store whose reads and writes fail on demand while partner lookups keep working, so
/// requests still authenticate and reach the failing operation.
pub fn failing_store() -> Arc<FaultyStore> {
    let store = Arc::new(FaultyStore::default());
    store.spare_partner_reads(true);
    store
}

/// Turn the faults of a [`failing_store`] on or off.
pub fn set_failing(store: &FaultyStore, on: bool) {
    store.fail_reads(on);
    store.fail_writes(on);
}
