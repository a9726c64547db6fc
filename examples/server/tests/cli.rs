//! The built `rampart-server` binary: partner and operator commands, the production start
//! check, a first start with its demo partner, logs without secrets, SIGTERM and a restart.

mod common;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use rampart_core::totp::{self, Secret};
use rampart_core::{ContactId, ErrorKind, KeyRing, ManualClock, PartnerId, Service, SqliteStore};
use serde_json::{Value, json};

use common::server_command as command;

fn run(args: &[&str]) -> Output {
    command().args(args).output().expect("run rampart-server")
}

fn stdout_json(out: &Output) -> Value {
    assert!(out.status.success(), "exit {:?}; stderr: {}", out.status, String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout.clone()).expect("utf-8");
    assert_eq!(text.lines().count(), 1, "exactly one line on stdout: {text:?}");
    let value: Value = serde_json::from_str(&text).expect("stdout is one JSON value");
    assert!(value.is_object());
    value
}

fn create_partner(db: &Path, env: &str) -> Value {
    stdout_json(&run(&["partner", "create", "--db", db.to_str().unwrap(), "--name", "Acme", "--environment", env]))
}

/// A service on the same database for checking what the binary did. The commands under test
/// never open sealed secrets, so a ring with no key will do.
fn open(db: &Path) -> Service {
    Service::builder(SqliteStore::open(db).unwrap()).master_keys(KeyRing::empty()).build().unwrap()
}

/// Write a master key file readable by its owner only, as the server asks.
fn write_key_file(path: &Path, text: &str) {
    std::fs::write(path, text).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
}

#[test]
fn partner_create_prints_exactly_one_json_object() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    for env in ["sandbox", "production"] {
        let v = create_partner(&db, env);
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys.len(), 4);
        for k in ["superuserId", "secretKey", "publicKey", "environment"] {
            assert!(v[k].is_string(), "{k} in {v}");
        }
        assert_eq!(v["environment"], json!(env));
        assert!(v["secretKey"].as_str().unwrap().starts_with(&format!("sk_{env}_")));
        assert!(v["publicKey"].as_str().unwrap().starts_with(&format!("pk_{env}_")));
        PartnerId::parse(v["superuserId"].as_str().unwrap()).unwrap();
    }
    // Flags come from RAMPART_* too.
    let other = dir.path().join("other.db");
    let out = command()
        .args(["partner", "create"])
        .env("RAMPART_DB", &other)
        .env("RAMPART_NAME", "From env")
        .env("RAMPART_ENVIRONMENT", "production")
        .output()
        .unwrap();
    let v = stdout_json(&out);
    assert_eq!(v["environment"], json!("production"));
    let service = open(&other);
    let partner = service.partner(&PartnerId::parse(v["superuserId"].as_str().unwrap()).unwrap()).unwrap();
    assert_eq!(partner.name, "From env");
    // Operator commands need no key file and do not create one.
    assert!(!dir.path().join("r.db.key").exists());
    // Bad input fails without a JSON line on stdout.
    let out = run(&["partner", "create", "--db", db.to_str().unwrap(), "--name", " ", "--environment", "sandbox"]);
    assert!(!out.status.success());
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("name must be 1 to 200 characters"));
    let out = run(&["partner", "create", "--db", db.to_str().unwrap(), "--name", "x", "--environment", "staging"]);
    assert!(!out.status.success());
    assert!(out.stdout.is_empty());
}

#[test]
fn operator_commands_change_state_and_are_audit_logged() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let dbs = db.to_str().unwrap();
    let created = create_partner(&db, "sandbox");
    let partner_text = created["superuserId"].as_str().unwrap().to_owned();
    let partner = PartnerId::parse(&partner_text).unwrap();
    let old_key = created["secretKey"].as_str().unwrap().to_owned();
    let contact_text = common::contact();
    let contact = ContactId::parse(&contact_text).unwrap();

    // Five failed attempts, made in-process on the same database.
    {
        let clock = std::sync::Arc::new(ManualClock::new(common::T0));
        let service = Service::builder(SqliteStore::open(&db).unwrap())
            .master_keys(KeyRing::generate().unwrap())
            .clock(clock)
            .build()
            .unwrap();
        service.create_2fa(&partner, &contact, None).unwrap();
        for _ in 0..5 {
            assert_eq!(service.enable_2fa(&partner, &contact, "abc").unwrap_err().kind(), ErrorKind::TokenFailed);
        }
        assert_eq!(service.store().contact(&partner, &contact).unwrap().unwrap().failures, 5);
    }

    let p = ["--db", dbs, "--partner", &partner_text];
    let pc = ["--db", dbs, "--partner", &partner_text, "--contact", &contact_text];
    let with = |base: &[&str], cmd: &[&str], extra: &[&str]| -> Output {
        let args: Vec<&str> = cmd.iter().chain(base).chain(extra).copied().collect();
        run(&args)
    };

    let v = stdout_json(&with(&pc, &["contact", "mark-kyc"], &["--operator", "alice"]));
    assert_eq!(v, json!({ "partnerId": partner_text, "contactId": contact_text, "kycPassed": true }));
    assert!(open(&db).is_2fa_required(&partner, &contact).unwrap());

    let v = stdout_json(&with(&p, &["partner", "waive-2fa"], &["--operator", "alice"]));
    assert_eq!(v, json!({ "partnerId": partner_text, "twoFactorWaived": true }));
    assert!(!open(&db).is_2fa_required(&partner, &contact).unwrap());
    let v = stdout_json(&with(&p, &["partner", "unwaive-2fa"], &[]));
    assert_eq!(v["twoFactorWaived"], json!(false));
    assert!(open(&db).is_2fa_required(&partner, &contact).unwrap());

    let v = stdout_json(&with(&pc, &["contact", "unmark-kyc"], &[]));
    assert_eq!(v["kycPassed"], json!(false));
    assert!(!open(&db).is_2fa_required(&partner, &contact).unwrap());

    let v = stdout_json(&with(&pc, &["contact", "reset-lock"], &["--operator", "bob"]));
    assert_eq!(v, json!({ "partnerId": partner_text, "contactId": contact_text, "lockReset": true }));
    assert_eq!(open(&db).store().contact(&partner, &contact).unwrap().unwrap().failures, 0);

    let v = stdout_json(&with(&p, &["partner", "rotate-keys"], &["--operator", "carol"]));
    assert_eq!(v["superuserId"], json!(partner_text));
    let new_key = v["secretKey"].as_str().unwrap();
    assert_ne!(new_key, old_key);
    let service = open(&db);
    assert_eq!(service.authenticate(&old_key).unwrap_err().kind(), ErrorKind::Unauthorized);
    assert_eq!(service.authenticate(new_key).unwrap().partner_id, partner);

    let v = stdout_json(&with(&p, &["partner", "approve-widget"], &["--operator", "dana"]));
    assert_eq!(v, json!({ "partnerId": partner_text, "widgetApproved": true }));
    assert!(open(&db).partner(&partner).unwrap().widget_approved);
    let v = stdout_json(&with(&p, &["partner", "unapprove-widget"], &["--operator", "dana"]));
    assert_eq!(v["widgetApproved"], json!(false));
    assert!(!open(&db).partner(&partner).unwrap().widget_approved);
    let service = open(&db);

    let log: Vec<(String, String)> =
        service.audit_events(&partner, None, 0, 500).unwrap().events.into_iter().map(|e| (e.actor, e.event)).collect();
    let expected = [
        ("partner", "2fa.created"),
        ("operator:alice", "kyc.marked"),
        ("operator:alice", "partner.waiver_set"),
        ("operator:tester", "partner.waiver_cleared"),
        ("operator:tester", "kyc.unmarked"),
        ("operator:bob", "2fa.unlocked"),
        ("operator:carol", "partner.keys_rotated"),
        ("operator:dana", "widget.approved"),
        ("operator:dana", "widget.unapproved"),
    ];
    let expected: Vec<(String, String)> = expected.iter().map(|(o, a)| ((*o).to_owned(), (*a).to_owned())).collect();
    assert_eq!(log, expected);

    // Unknown partner: a clear failure, nothing on stdout.
    let unknown = uuid::Uuid::new_v4().to_string();
    let out = run(&["partner", "waive-2fa", "--db", dbs, "--partner", &unknown]);
    assert!(!out.status.success());
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("Partner not found"));
    let out = run(&["contact", "reset-lock", "--db", dbs, "--partner", "nope", "--contact", &contact_text]);
    assert!(!out.status.success());
    assert!(out.stdout.is_empty());
}

#[test]
fn keys_rewrap_lets_an_old_master_key_be_removed() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let dbs = db.to_str().unwrap();
    let key_file = dir.path().join("master.keys");
    let kf = key_file.to_str().unwrap();
    let (k1, k2, k3) = ("2a".repeat(32), "2b".repeat(32), "2c".repeat(32));
    let rewrap = || run(&["keys", "rewrap", "--db", dbs, "--master-key-file", kf, "--operator", "dana"]);

    // No key file at all: refused, since a throwaway key would open nothing.
    let out = run(&["keys", "rewrap", "--db", dbs]);
    assert!(!out.status.success() && out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no master key file"), "{out:?}");

    // A contact enabled under key 1.
    let partner = PartnerId::parse(create_partner(&db, "sandbox")["superuserId"].as_str().unwrap()).unwrap();
    let contact = ContactId::parse(&common::contact()).unwrap();
    let clock = std::sync::Arc::new(ManualClock::new(common::T0));
    let with_key = |id: u32, byte: u8| {
        Service::builder(SqliteStore::open(&db).unwrap())
            .master_keys(KeyRing::new(id, &[byte; 32]))
            .clock(clock.clone())
            .build()
            .unwrap()
    };
    let setup = with_key(1, 0x2a).create_2fa(&partner, &contact, None).unwrap();
    let secret = Secret::from_base32(&setup.manual).unwrap();
    with_key(1, 0x2a).enable_2fa(&partner, &contact, totp::code_at(&secret, common::T0).as_str()).unwrap();

    // Key 2 added to the file, then rewrap: the secret moves to key 2; a second run does nothing.
    write_key_file(&key_file, &format!("1:{k1}\n2:{k2}\n"));
    assert_eq!(stdout_json(&rewrap()), json!({ "keyId": 2, "examined": 1, "rewrapped": 1, "unopenable": 0 }));
    assert_eq!(stdout_json(&rewrap()), json!({ "keyId": 2, "examined": 1, "rewrapped": 0, "unopenable": 0 }));
    let log: Vec<(String, String)> = open(&db)
        .audit_events(&partner, None, 0, 500)
        .unwrap()
        .events
        .into_iter()
        .filter(|e| e.actor.starts_with("operator:"))
        .map(|e| (e.actor, e.event))
        .collect();
    assert_eq!(log, [("operator:dana".to_owned(), "keys.rewrapped".to_owned())]);

    // Key 1 removed: the contact still verifies under key 2 alone.
    write_key_file(&key_file, &format!("2:{k2}\n"));
    clock.advance(30);
    let code = totp::code_at(&secret, common::T0 + 30);
    assert!(with_key(2, 0x2b).verify_2fa(&partner, &contact, code.as_str()).unwrap().is_accepted());

    // Key 2 removed too early: refused at start, naming the key id, and nothing changed.
    write_key_file(&key_file, &format!("3:{k3}\n"));
    let out = rewrap();
    assert!(!out.status.success() && out.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "master key file {kf}: stored 2FA secrets are sealed under key id 2, which it does not hold; put that key back"
        )),
        "{stderr}"
    );
    let later = totp::code_at(&secret, common::T0 + 60);
    clock.advance(30);
    assert!(with_key(2, 0x2b).verify_2fa(&partner, &contact, later.as_str()).unwrap().is_accepted());
}

#[test]
fn production_refuses_to_start_without_a_master_key() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("prod.db");
    let out = run(&["--environment", "production", "--db", db.to_str().unwrap(), "--listen", "127.0.0.1:0"]);
    assert!(!out.status.success());
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("production refuses to start without a master key"), "{stderr}");
    assert!(!db.exists(), "a refused start leaves no database behind");
    assert!(!dir.path().join("prod.db.key").exists());
    // The same through the environment.
    let out = command()
        .env("RAMPART_ENVIRONMENT", "production")
        .env("RAMPART_DB", &db)
        .env("RAMPART_LISTEN", "127.0.0.1:0")
        .output()
        .unwrap();
    assert!(!out.status.success());
    // A missing key file is refused as well.
    let missing = dir.path().join("missing.key");
    let out = run(&[
        "--environment",
        "production",
        "--db",
        db.to_str().unwrap(),
        "--master-key-file",
        missing.to_str().unwrap(),
    ]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(&format!("master key file {}: cannot be read", missing.display())), "{stderr}");
}

/// SPEC section 3: a production server refuses to start with any of the hidden test hooks,
/// given by flag or by environment variable, before it touches the database.
#[test]
fn the_test_hooks_are_refused_outside_sandbox() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("prod.db");
    let key_file = dir.path().join("master.key");
    write_key_file(&key_file, &format!("1:{}\n", "ab".repeat(32)));
    let clock = dir.path().join("clock");
    std::fs::write(&clock, "1764170000\n").unwrap();
    let clock = clock.to_str().unwrap();
    for (hook, flag, variable) in [
        ("--test-clock-file", ["--test-clock-file", clock], ("RAMPART_TEST_CLOCK_FILE", clock)),
        ("--throttling off", ["--throttling", "off"], ("RAMPART_THROTTLING", "off")),
        ("--session-idle-secs", ["--session-idle-secs", "3"], ("RAMPART_SESSION_IDLE_SECS", "3")),
        ("--sign-in-code-ttl-secs", ["--sign-in-code-ttl-secs", "2"], ("RAMPART_SIGN_IN_CODE_TTL_SECS", "2")),
    ] {
        let production = [
            "--environment",
            "production",
            "--db",
            db.to_str().unwrap(),
            "--master-key-file",
            key_file.to_str().unwrap(),
        ];
        for by_flag in [true, false] {
            let mut refused = command();
            refused.args(production).args(["--listen", "127.0.0.1:0"]);
            if by_flag {
                refused.args(flag);
            } else {
                refused.env(variable.0, variable.1);
            }
            let out = refused.output().unwrap();
            assert!(!out.status.success(), "{hook} (flag: {by_flag}) started");
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(stderr.contains(&format!("{hook} is a test hook for sandbox servers only")), "{stderr}");
            assert!(!db.exists(), "a refused start leaves no database behind");
        }
    }
}

/// Start the server on `db` with `args`, expecting a refusal; returns stderr.
fn refused(db: &Path, args: &[&str]) -> String {
    let mut all = vec!["--db", db.to_str().unwrap(), "--listen", "127.0.0.1:0"];
    all.extend_from_slice(args);
    let out = run(&all);
    assert!(!out.status.success(), "started: {}", String::from_utf8_lossy(&out.stderr));
    assert!(out.stdout.is_empty());
    String::from_utf8(out.stderr).unwrap()
}

#[test]
fn master_key_files_that_would_lose_or_leak_secrets_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let default_key = dir.path().join("r.db.key");
    let (k1, k2) = ("2a".repeat(32), "2b".repeat(32));
    // A sandbox database with an enabled contact, sealed under <db>.key.
    write_key_file(&default_key, &format!("1:{k1}\n"));
    let partner = PartnerId::parse(create_partner(&db, "sandbox")["superuserId"].as_str().unwrap()).unwrap();
    let service = Service::builder(SqliteStore::open(&db).unwrap())
        .master_keys(KeyRing::load(&default_key).unwrap())
        .build()
        .unwrap();
    let contact = ContactId::parse(&common::contact()).unwrap();
    let setup = service.create_2fa(&partner, &contact, None).unwrap();
    let secret = Secret::from_base32(&setup.manual).unwrap();
    service.enable_2fa(&partner, &contact, totp::code_at(&secret, real_now()).as_str()).unwrap();
    drop(service);

    // The key file gone: no new key is made over sealed secrets; the start names the file.
    std::fs::rename(&default_key, dir.path().join("aside")).unwrap();
    let stderr = refused(&db, &[]);
    assert!(
        stderr.contains(&format!(
            "master key file {} is missing, but the database holds 2FA secrets sealed under it",
            default_key.display()
        )),
        "{stderr}"
    );
    assert!(!default_key.exists(), "no key was generated");
    std::fs::rename(dir.path().join("aside"), &default_key).unwrap();

    // Readable by group or others: refused with the file and its mode, as ssh does.
    #[cfg(unix)]
    for m in [0o644, 0o640, 0o604] {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&default_key, std::fs::Permissions::from_mode(m)).unwrap();
        let stderr = refused(&db, &[]);
        let want = format!(
            "master key file {0}: has mode {m:04o}; it must be readable by its owner only (chmod 600 {0})",
            default_key.display()
        );
        assert!(stderr.contains(&want), "{stderr}");
        assert!(!stderr.contains(&k1[..16]), "the key is never printed");
    }
    let other = dir.path().join("other.keys");
    let ks = other.to_str().unwrap();
    // One key id twice: refused, naming the line.
    write_key_file(&other, &format!("1:{k1}\n# next\n1:{k2}\n"));
    let stderr = refused(&db, &["--master-key-file", ks]);
    assert!(
        stderr.contains(&format!("master key file {ks}: line 3: key id 1 is given twice (first on line 1)")),
        "{stderr}"
    );
    // A key file whose key 1 is another key: it opens none of the stored secrets.
    write_key_file(&other, &format!("1:{k2}\n"));
    let stderr = refused(&db, &["--master-key-file", ks]);
    assert!(
        stderr.contains(&format!("master key file {ks} line 1: key id 1 opens none of the stored 2FA secrets")),
        "{stderr}"
    );
    assert!(!stderr.contains(&k2[..16]));
    // The right file, 0600: the server starts.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&default_key, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    let mut server = Running::start(&["--db", db.to_str().unwrap(), "--listen", "127.0.0.1:0"]);
    let address = server.address();
    let health = std::net::TcpStream::connect(&address).and_then(|mut s| {
        use std::io::{Read, Write};
        s.write_all(b"GET /healthz HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")?;
        let mut answer = String::new();
        s.read_to_string(&mut answer).map(|_| answer)
    });
    assert!(health.unwrap().starts_with("HTTP/1.1 200"));
    server.terminate();
}

/// A running binary whose output lines are collected as they come.
struct Running {
    child: Child,
    lines: mpsc::Receiver<(bool, String)>,
    stdout: Vec<String>,
    stderr: Vec<String>,
}

impl Running {
    fn start(args: &[&str]) -> Self {
        Self::start_with(command().args(args))
    }

    fn start_with(cmd: &mut Command) -> Self {
        let mut child = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("spawn");
        let (tx, rx) = mpsc::channel();
        let out = child.stdout.take().unwrap();
        let err = child.stderr.take().unwrap();
        for (is_err, reader) in [(false, Box::new(out) as Box<dyn std::io::Read + Send>), (true, Box::new(err))] {
            let tx = tx.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(reader).lines().map_while(Result::ok) {
                    if tx.send((is_err, line)).is_err() {
                        break;
                    }
                }
            });
        }
        Self { child, lines: rx, stdout: Vec::new(), stderr: Vec::new() }
    }

    fn take(&mut self, timeout: Duration) -> bool {
        match self.lines.recv_timeout(timeout) {
            Ok((true, line)) => {
                self.stderr.push(line);
                true
            }
            Ok((false, line)) => {
                self.stdout.push(line);
                true
            }
            Err(_) => false,
        }
    }

    /// Wait for the "listening" log line and return the address.
    fn address(&mut self) -> String {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(line) = self.stderr.iter().find(|l| l.contains(" listening ")) {
                let addr = line.split("address=").nth(1).expect("address field");
                return addr.split_whitespace().next().unwrap().to_owned();
            }
            assert!(Instant::now() < deadline, "no listening line; stderr: {:?}", self.stderr);
            self.take(Duration::from_millis(200));
        }
    }

    /// SIGTERM, then wait for a clean exit and collect the rest of the output.
    fn terminate(mut self) -> (Vec<String>, Vec<String>) {
        let pid = self.child.id().to_string();
        assert!(Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
        let deadline = Instant::now() + Duration::from_secs(30);
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            assert!(Instant::now() < deadline, "server did not stop on SIGTERM");
            self.take(Duration::from_millis(50));
        };
        while self.take(Duration::from_millis(200)) {}
        assert!(status.success(), "exit {status:?}; stderr: {:?}", self.stderr);
        (std::mem::take(&mut self.stdout), std::mem::take(&mut self.stderr))
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn real_now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs()
}

#[cfg(unix)]
fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[tokio::test]
async fn first_start_prints_a_demo_partner_and_a_working_curl_line_then_restarts_with_state() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("rampart.db");
    let dbs = db.to_str().unwrap();
    let mut server = Running::start(&["--db", dbs, "--listen", "127.0.0.1:0"]);
    let address = server.address();
    while !server.stdout.iter().any(|l| l.contains("curl")) {
        assert!(server.take(Duration::from_secs(10)), "no curl line; stdout: {:?}", server.stdout);
    }
    let curl = server.stdout.iter().find(|l| l.contains("curl")).unwrap().clone();
    // curl -s -H 'Authorization: Bearer sk_...' 'http://127.0.0.1:PORT/v1/auth/create2fa?contactId=...'
    let quoted: Vec<&str> = curl.split('\'').collect();
    assert_eq!(quoted.len(), 5, "{curl}");
    let key = quoted[1].strip_prefix("Authorization: Bearer ").expect("bearer header").to_owned();
    let url = quoted[3].to_owned();
    assert!(key.starts_with("sk_sandbox_"));
    assert!(url.starts_with(&format!("http://{address}/v1/auth/create2fa?contactId=")), "{url}");
    assert!(server.stdout.iter().any(|l| l.contains(&key) && l.contains("secretKey")));
    assert!(server.stdout.iter().any(|l| l.contains("publicKey") && l.contains("pk_sandbox_")));
    #[cfg(unix)]
    {
        assert_eq!(mode(&dir.path().join("rampart.db.key")), 0o600);
        assert_eq!(mode(&db), 0o600);
    }

    // The printed widget URL opens the widget page.
    while !server.stdout.iter().any(|l| l.contains("/widget/?publicKey=")) {
        assert!(server.take(Duration::from_secs(10)), "no widget line; stdout: {:?}", server.stdout);
    }
    let widget = server.stdout.iter().find(|l| l.contains("/widget/?publicKey=")).unwrap().trim().to_owned();
    assert!(widget.starts_with(&format!("http://{address}/widget/?publicKey=pk_sandbox_")), "{widget}");
    let client = common::client();
    let page = client.get(&widget).send().await.unwrap();
    assert_eq!(page.status().as_u16(), 200);
    assert!(page.headers()["content-security-policy"].to_str().unwrap().contains("frame-ancestors http://localhost:*"));

    // The second line to open: the demo partner page, embedding the widget with its snippet.
    let demo_line = format!("Open http://{address}/demo");
    while !server.stdout.contains(&demo_line) {
        assert!(server.take(Duration::from_secs(10)), "no demo line; stdout: {:?}", server.stdout);
    }
    let public_key = widget.split("publicKey=").nth(1).unwrap().to_owned();
    let demo = client.get(format!("http://{address}/demo")).send().await.unwrap();
    assert_eq!(demo.status().as_u16(), 200);
    let csp = demo.headers()["content-security-policy"].to_str().unwrap().to_owned();
    assert!(csp.contains(&format!("frame-src http://{address}")), "{csp}");
    let demo = demo.text().await.unwrap();
    assert!(demo.contains(&format!("&quot;publicKey&quot;:&quot;{public_key}&quot;")), "the snippet shown");
    assert!(demo.contains(&format!("<script src=\"http://{address}/widget/v1/rampart.js\" nonce=")), "{demo}");
    assert!(demo.contains("<ol id=\"events\""));

    // Then the demo partner's dashboard: a one-time invitation for its owner, which works.
    while !server.stdout.iter().any(|l| l.contains("/dashboard/#invite=")) {
        assert!(server.take(Duration::from_secs(10)), "no invitation line; stdout: {:?}", server.stdout);
    }
    let link = server.stdout.iter().find(|l| l.contains("/dashboard/#invite=")).unwrap().trim().to_owned();
    assert!(link.starts_with(&format!("http://{address}/dashboard/#invite=inv_")), "{link}");
    let invitation_token = link.split("#invite=").nth(1).unwrap().to_owned();
    let (status, found) = look_again(address.clone(), invitation_token.clone()).await;
    assert_eq!(
        (status, &found["invitation"]["email"], &found["invitation"]["role"]),
        (200, &json!("owner@demo.example"), &json!("owner"))
    );

    // Paste the curl line: a QR code.
    let resp = client.get(&url).header("authorization", format!("Bearer {key}")).send().await.unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    assert_eq!(resp.headers()["cache-control"], "no-store");
    let body: Value = resp.json().await.unwrap();
    assert!(body["details"]["qrCode"].as_str().unwrap().starts_with("data:image/png;base64,"));
    let manual = body["details"]["manual"].as_str().unwrap().to_owned();
    let contact = url.split("contactId=").nth(1).unwrap().to_owned();
    let secret = Secret::from_base32(&manual).unwrap();
    let code = totp::code_at(&secret, real_now());
    let base = format!("http://{address}");
    let resp = client
        .post(format!("{base}/v1/auth/enable2fa"))
        .bearer_auth(&key)
        .json(&json!({ "contactId": contact, "token": code }))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    let enabled = resp.json::<Value>().await.unwrap();
    assert_eq!(
        (&enabled["message"], enabled["details"]["recoveryCodes"].as_array().map(Vec::len)),
        (&json!("Successfully enabled 2fa!"), Some(10))
    );
    let recovery_codes: Vec<String> = serde_json::from_value(enabled["details"]["recoveryCodes"].clone()).unwrap();

    let (stdout, stderr) = server.terminate();
    // Logs: one line per request, never a key, code, secret, QR data or query string.
    let log = stderr.join("\n");
    let mut secrets = vec![
        key.as_str(),
        manual.as_str(),
        code.as_str(),
        "data:image",
        "otpauth",
        "contactId=",
        "Bearer",
        invitation_token.as_str(),
    ];
    secrets.extend(recovery_codes.iter().map(String::as_str));
    for secret_text in secrets {
        assert!(!log.contains(secret_text), "log holds {secret_text:?}:\n{log}");
    }
    assert!(log.contains(r#"method=GET route="/v1/auth/create2fa" status=200"#), "{log}");
    assert!(log.contains(r#"method=POST route="/v1/auth/enable2fa" status=200"#), "{log}");
    assert!(log.contains(r#"method=GET route="/widget/" status=200"#), "{log}");
    assert_eq!(stderr.iter().filter(|l| l.contains("rampart::http")).count(), 5);
    assert!(log.contains("shutdown signal received"));
    // The key appears on stdout only in the demo block.
    assert!(stdout.iter().filter(|l| l.contains(&key)).count() == 2);

    // Restart on the same database and key file: no new demo partner, state kept.
    let mut server = Running::start(&["--db", dbs, "--listen", "127.0.0.1:0"]);
    let address = server.address();
    let resp =
        client.get(format!("http://{address}/v1/auth/2fa?contactId={contact}")).bearer_auth(&key).send().await.unwrap();
    assert_eq!(
        resp.json::<Value>().await.unwrap(),
        json!({ "message": "2FA is true.", "code": 200, "status": true, "recoveryCodesRemaining": 10 })
    );
    // The demo line again (the partner is found from the key kept beside the database), and a
    // new invitation while the owner has not joined: the one before no longer works.
    while !server.stdout.iter().any(|l| l.contains("/dashboard/#invite=")) {
        assert!(server.take(Duration::from_secs(10)), "no invitation line; stdout: {:?}", server.stdout);
    }
    let (status, _) = look_again(address.clone(), invitation_token).await;
    assert_eq!(status, 404, "replaced by the new link");
    let (stdout, _) = server.terminate();
    assert_eq!(stdout.len(), 3, "{stdout:?}");
    assert_eq!(stdout[0], format!("Open http://{address}/demo"));
    assert_eq!(
        stdout[1],
        "Partner dashboard: open this one-time link (valid 72 hours) to set a password and an authenticator as owner@demo.example:"
    );
    assert!(stdout[2].starts_with(&format!("  http://{address}/dashboard/#invite=inv_")), "{stdout:?}");
}

#[tokio::test]
async fn production_starts_with_a_key_file_and_uses_the_jwt_secret_from_the_environment() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("prod.db");
    let key_file = dir.path().join("master.key");
    write_key_file(&key_file, &format!("1:{}\n", "ab".repeat(32)));
    let partner = create_partner(&db, "production");
    let id = partner["superuserId"].as_str().unwrap();
    let jwt_secret = "a-legacy-jwt-secret-of-32-bytes-or-more";
    let mut server = Running::start_with(
        command()
            .args(["--environment", "production", "--listen", "127.0.0.1:0"])
            .env("RAMPART_DB", &db)
            .env("RAMPART_MASTER_KEY_FILE", &key_file)
            .env("RAMPART_JWT_SECRET", jwt_secret),
    );
    let address = server.address();
    let client = common::client();
    let exp = real_now() + 600;
    let token = jsonwebtoken::encode(
        &jsonwebtoken::Header::default(),
        &json!({ "sub": id, "exp": exp }),
        &jsonwebtoken::EncodingKey::from_secret(jwt_secret.as_bytes()),
    )
    .unwrap();
    let url = format!("http://{address}/v1/users/widgetText");
    let resp = client.get(&url).bearer_auth(&token).send().await.unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    assert_eq!(resp.headers()["deprecation"], "true");
    let resp = client.get(&url).bearer_auth(partner["secretKey"].as_str().unwrap()).send().await.unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    assert!(resp.headers().get("deprecation").is_none());
    let resp = client.get(format!("http://{address}/healthz")).send().await.unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    let (stdout, stderr) = server.terminate();
    assert!(stdout.is_empty(), "production prints no demo partner: {stdout:?}");
    assert!(!stderr.join("\n").contains(jwt_secret));
    assert!(!dir.path().join("prod.db.key").exists());
}

#[tokio::test]
async fn the_jwt_secret_comes_from_a_file_and_the_command_line_is_warned_about() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let partner = create_partner(&db, "sandbox");
    let id = partner["superuserId"].as_str().unwrap();
    let jwt_secret = "a-legacy-jwt-secret-from-a-file-of-32-bytes";
    let secret_file = dir.path().join("jwt.secret");
    std::fs::write(&secret_file, format!("{jwt_secret}\n")).unwrap();
    let token = jsonwebtoken::encode(
        &jsonwebtoken::Header::default(),
        &json!({ "sub": id, "exp": real_now() + 600 }),
        &jsonwebtoken::EncodingKey::from_secret(jwt_secret.as_bytes()),
    )
    .unwrap();
    let warning = "the JWT secret was given on the command line";
    for args in [["--jwt-secret-file", secret_file.to_str().unwrap()], ["--jwt-secret", jwt_secret]] {
        let mut server =
            Running::start(&[&["--db", db.to_str().unwrap(), "--listen", "127.0.0.1:0"][..], &args[..]].concat());
        let address = server.address();
        let resp = common::client()
            .get(format!("http://{address}/v1/users/widgetText"))
            .bearer_auth(&token)
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status().as_u16(), 200, "{args:?}");
        let (_, stderr) = server.terminate();
        let log = stderr.join("\n");
        assert_eq!(log.contains(warning), args[0] == "--jwt-secret", "{log}");
        assert!(!log.contains(jwt_secret));
    }
    // An empty file is refused, naming it.
    std::fs::write(&secret_file, "\n").unwrap();
    let stderr = refused(&db, &["--jwt-secret-file", secret_file.to_str().unwrap()]);
    assert!(stderr.contains(&format!("JWT secret file {} is empty", secret_file.display())), "{stderr}");
}

/// A metrics address that cannot be bound refuses the start, naming the address; nothing of
/// the public listener is left serving.
#[test]
fn a_metrics_listener_that_cannot_bind_refuses_the_start() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = taken.local_addr().unwrap().to_string();
    let out = run(&["--db", db.to_str().unwrap(), "--listen", "127.0.0.1:0", "--metrics-listen", &address]);
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(&format!("cannot listen for metrics on {address}: ")), "{stderr}");
    let out = run(&["--db", db.to_str().unwrap(), "--listen", "127.0.0.1:0", "--metrics-listen", "not-an-address"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot listen for metrics on not-an-address: "));
}

/// POST /v1/dashboard/invitation on the server at `address`: its status and body.
async fn look_again(address: String, token: String) -> (u16, Value) {
    let origin = format!("http://{address}");
    let r = common::client()
        .post(format!("{origin}/v1/dashboard/invitation"))
        .header("origin", &origin)
        .json(&json!({ "token": token }))
        .send()
        .await
        .unwrap();
    (r.status().as_u16(), r.json::<Value>().await.unwrap())
}
