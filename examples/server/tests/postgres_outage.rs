//! A server whose PostgreSQL goes away (SPEC section 7): down at start and mid-run, behind a
//! loopback relay the test opens and closes. `/healthz` says so, requests fail closed with the
//! operation's 500 message, and the server recovers without a restart. Run by `make pg-test`.

mod common;

use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rampart_core::totp::{self, Secret};
use serde_json::{Value, json};

use common::{Instance, master_key_file, postgres_database, server_command};

/// A TCP relay to the database that can be cut: while down it closes every relayed connection
/// and every new one at once, as a database host that went away.
struct Relay {
    port: u16,
    up: Arc<AtomicBool>,
    open: Arc<Mutex<Vec<TcpStream>>>,
}

impl Relay {
    fn start(target: std::net::SocketAddr) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let up = Arc::new(AtomicBool::new(false));
        let open: Arc<Mutex<Vec<TcpStream>>> = Arc::default();
        let (up2, open2) = (up.clone(), open.clone());
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { continue };
                if !up2.load(Ordering::SeqCst) {
                    let _ = client.shutdown(Shutdown::Both);
                    continue;
                }
                let Ok(server) = TcpStream::connect(target) else { continue };
                let mut sockets = open2.lock().unwrap();
                for s in [&client, &server] {
                    sockets.push(s.try_clone().unwrap());
                }
                for (mut from, mut to) in [(client.try_clone().unwrap(), server.try_clone().unwrap()), (server, client)]
                {
                    std::thread::spawn(move || {
                        let _ = std::io::copy(&mut from, &mut to);
                        let _ = to.shutdown(Shutdown::Both);
                    });
                }
            }
        });
        Self { port, up, open }
    }

    fn set_up(&self, up: bool) {
        self.up.store(up, Ordering::SeqCst);
        if !up {
            for s in self.open.lock().unwrap().drain(..) {
                let _ = s.shutdown(Shutdown::Both);
            }
        }
    }
}

fn get(client: &reqwest::blocking::Client, url: &str, key: Option<&str>) -> (u16, Value) {
    let mut req = client.get(url);
    if let Some(key) = key {
        req = req.bearer_auth(key);
    }
    let resp = req.send().unwrap();
    (resp.status().as_u16(), resp.json().unwrap())
}

fn post(client: &reqwest::blocking::Client, url: &str, key: &str, body: &Value) -> (u16, Value) {
    let resp = client.post(url).bearer_auth(key).json(body).send().unwrap();
    (resp.status().as_u16(), resp.json().unwrap())
}

fn message(code: u16, text: &str) -> (u16, Value) {
    (code, json!({ "message": text, "code": code }))
}

/// Wait (at most `limit`) for `probe` to give `want`; the time it took.
fn until(limit: Duration, want: &(u16, Value), mut probe: impl FnMut() -> (u16, Value)) -> Duration {
    let started = Instant::now();
    loop {
        let got = probe();
        if &got == want {
            return started.elapsed();
        }
        assert!(started.elapsed() < limit, "after {limit:?}: {got:?}, want {want:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs()
}

#[test]
fn a_database_down_at_start_and_mid_run_fails_closed_and_recovers_without_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let key = master_key_file(dir.path());
    let real = postgres_database();
    let mut url = url::Url::parse(&real).unwrap();
    let target = std::net::SocketAddr::from(([127, 0, 0, 1], url.port().unwrap()));
    let relay = Relay::start(target);
    url.set_port(Some(relay.port)).unwrap();
    url.set_password(Some("hunter2-secret")).unwrap(); // trust authentication ignores it
    let relayed = url.to_string();
    let client = reqwest::blocking::Client::builder().timeout(Duration::from_secs(15)).build().unwrap();

    // Down at start: the server comes up anyway and says the store is unreachable.
    let started = Instant::now();
    let server = Instance::start(&relayed, &key);
    let pid = server.child.id();
    assert!(started.elapsed() < Duration::from_secs(15), "start took {:?}", started.elapsed());
    let health = format!("{}/healthz", server.base);
    assert_eq!(get(&client, &health, None), message(503, "Store is unreachable."));

    // Up: healthy without a restart; the schema is migrated then (the database was empty).
    relay.set_up(true);
    until(Duration::from_secs(10), &message(200, "Store is reachable."), || get(&client, &health, None));
    let out = server_command()
        .args(["partner", "create", "--db", &real, "--name", "Outage", "--environment", "sandbox"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let partner: Value = serde_json::from_slice(&out.stdout).unwrap();
    let secret_key = partner["secretKey"].as_str().unwrap();
    let contact = uuid::Uuid::new_v4().to_string();
    let (status, created) =
        get(&client, &format!("{}/v1/auth/create2fa?contactId={contact}", server.base), Some(secret_key));
    assert_eq!(status, 200, "{created}");
    let secret = Secret::from_base32(created["details"]["manual"].as_str().unwrap()).unwrap();
    let enable = json!({ "contactId": contact, "token": totp::code_at(&secret, now() - 30) });
    assert_eq!(post(&client, &format!("{}/v1/auth/enable2fa", server.base), secret_key, &enable).0, 200);

    // Down mid-run: every operation answers its own 500, within the pool's 3 s wait; nothing
    // is accepted.
    relay.set_up(false);
    let status_url = format!("{}/v1/auth/2fa?contactId={contact}", server.base);
    let verify_url = format!("{}/v1/auth/verify2fa", server.base);
    let code = totp::code_at(&secret, now());
    let verify = json!({ "contactId": contact, "token": code });
    for (what, answer, want) in [
        (
            "status",
            Box::new(|| get(&client, &status_url, Some(secret_key))) as Box<dyn Fn() -> (u16, Value)>,
            "Error getting 2FA",
        ),
        ("verify", Box::new(|| post(&client, &verify_url, secret_key, &verify)), "Error verifying 2FA"),
    ] {
        let asked = Instant::now();
        assert_eq!(answer(), message(500, want), "{what}");
        assert!(asked.elapsed() < Duration::from_secs(5), "{what} took {:?}", asked.elapsed());
    }
    assert_eq!(get(&client, &health, None), message(503, "Store is unreachable."));

    // Back: the same process serves again, and the code refused above is still unused.
    relay.set_up(true);
    until(Duration::from_secs(10), &message(200, "Store is reachable."), || get(&client, &health, None));
    let valid =
        json!({ "message": "2FA token is valid.", "code": 200, "method": "token", "recoveryCodesRemaining": 10 });
    assert_eq!(post(&client, &verify_url, secret_key, &verify), (200, valid));
    assert_eq!(server.child.id(), pid);
    let log = server.log();
    assert!(log.contains("PostgreSQL unreachable at start"), "{log}");
    assert!(!log.contains("hunter2"), "the password reached the log: {log}");
}
