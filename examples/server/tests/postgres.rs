//! Several `rampart-server` processes on one PostgreSQL (SPEC section 7). Run by `make pg-test`
//! (`scripts/with-postgres.sh` starts a throwaway cluster or uses `RAMPART_TEST_DATABASE_URL`);
//! without that variable these tests fail rather than skip. Each test gets a database of its own.

mod common;

mod postgres {
    use std::time::{Duration, SystemTime, UNIX_EPOCH};

    use rampart_core::totp::{self, Secret};
    use serde_json::{Value, json};

    use super::common::{
        Instance, master_key_file as key_file, postgres_database as database, server_command as command,
    };

    fn now() -> u64 {
        SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs()
    }

    async fn post(client: &reqwest::Client, url: String, key: &str, body: Value) -> (u16, Value) {
        let resp = client.post(url).bearer_auth(key).json(&body).send().await.unwrap();
        (resp.status().as_u16(), resp.json().await.unwrap())
    }

    /// Two servers share one database: a partner made by the CLI is known to both; of 20
    /// concurrent verifies of one valid code spread over both, exactly one succeeds, 10 times;
    /// a key rotated through one is refused by the other.
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn two_servers_one_database_one_success_per_code() {
        let dir = tempfile::tempdir().unwrap();
        let db = database();
        let key = key_file(dir.path());
        let (partner, secret_key) = create_partner(&db, "Shared");
        let servers = [Instance::start(&db, &key), Instance::start(&db, &key)];
        let client = reqwest::Client::new();

        for round in 0..10 {
            let contact = uuid::Uuid::new_v4().to_string();
            // Created through one server, enabled through the other.
            let secret = create(&client, &servers[round % 2].base, &secret_key, &contact).await;
            let t = now();
            let enable = json!({ "contactId": contact, "token": totp::code_at(&secret, t - 30) });
            let url = format!("{}/v1/auth/enable2fa", servers[(round + 1) % 2].base);
            assert_eq!(post(&client, url, &secret_key, enable).await.0, 200);
            // The current step's code, 20 times at once across both servers.
            let code = totp::code_at(&secret, t);
            let mut tasks = Vec::new();
            for i in 0..20 {
                let url = format!("{}/v1/auth/verify2fa", servers[i % 2].base);
                let (client, key, body) =
                    (client.clone(), secret_key.clone(), json!({ "contactId": contact, "token": code }));
                tasks.push(tokio::spawn(async move { post(&client, url, &key, body).await }));
            }
            let mut statuses = Vec::new();
            for task in tasks {
                statuses.push(task.await.unwrap().0);
            }
            statuses.sort_unstable();
            let mut want = vec![401; 19];
            want.insert(0, 200);
            assert_eq!(statuses, want, "round {round}: exactly one success");
        }

        // Rotate by the CLI (another process): both servers refuse the old key within their
        // authentication cache's lifetime (1 s by default).
        let rotated = std::time::Instant::now();
        let out = command().args(["partner", "rotate-keys", "--db", &db, "--partner", &partner]).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        for server in &servers {
            loop {
                let resp = client
                    .get(format!("{}/v1/users/widgetText", server.base))
                    .bearer_auth(&secret_key)
                    .send()
                    .await
                    .unwrap();
                if resp.status().as_u16() == 401 {
                    break;
                }
                assert!(rotated.elapsed() < Duration::from_secs(3), "the old key still works after 3 s");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
        for server in &servers {
            let health: Value =
                client.get(format!("{}/healthz", server.base)).send().await.unwrap().json().await.unwrap();
            assert_eq!(health, json!({ "message": "Store is reachable.", "code": 200 }));
        }
    }

    /// Three servers share one database: of 50 concurrent uses of one recovery code spread over
    /// the three (verifies and disables mixed), exactly one succeeds, for three codes; then the
    /// CLI's `contact show` and `contact reset-2fa` see and change the state the servers wrote.
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn three_servers_one_success_per_recovery_code() {
        let dir = tempfile::tempdir().unwrap();
        let db = database();
        let key = key_file(dir.path());
        let (partner, secret_key) = create_partner(&db, "Recovery");
        let servers = [Instance::start(&db, &key), Instance::start(&db, &key), Instance::start(&db, &key)];
        let client = reqwest::Client::new();
        let contact = uuid::Uuid::new_v4().to_string();
        let secret = create(&client, &servers[0].base, &secret_key, &contact).await;
        let enable = json!({ "contactId": contact, "token": totp::code_at(&secret, now()) });
        let (status, body) = post(&client, format!("{}/v1/auth/enable2fa", servers[1].base), &secret_key, enable).await;
        assert_eq!(status, 200, "{body}");
        let codes: Vec<String> = serde_json::from_value(body["details"]["recoveryCodes"].clone()).unwrap();
        assert_eq!(codes.len(), 10);

        for (round, code) in codes.iter().take(3).enumerate() {
            let mut tasks = Vec::new();
            for i in 0..50 {
                // Only verifies in the first two rounds; the last round mixes in disables.
                let route = if round == 2 && i % 2 == 1 { "disable2fa" } else { "verify2fa" };
                let url = format!("{}/v1/auth/{route}", servers[i % 3].base);
                let (client, key, body) =
                    (client.clone(), secret_key.clone(), json!({ "contactId": contact, "recoveryCode": code }));
                tasks.push(tokio::spawn(async move { post(&client, url, &key, body).await }));
            }
            let mut answers = Vec::new();
            for task in tasks {
                answers.push(task.await.unwrap());
            }
            let wins: Vec<_> = answers.iter().filter(|(status, _)| *status == 200).collect();
            assert_eq!(wins.len(), 1, "round {round}: {answers:?}");
            // After a winning disable the rest find 2FA off (409); otherwise a used code (401).
            let off = wins[0].1["message"] == json!("Successfully disbaled 2fa!");
            assert!(answers.iter().all(|(s, _)| *s == 200 || *s == 401 || (off && *s == 409)), "{answers:?}");
            if round < 2 {
                assert_eq!(wins[0].1["recoveryCodesRemaining"], json!(9 - round), "{:?}", wins[0]);
            }
        }

        // The support view from another process: 2FA off by the last round's winner (a verify
        // leaves it on, a disable turns it off), the reuse attempts not counted as failures.
        let show = command()
            .args(["contact", "show", "--db", &db, "--partner", &partner, "--contact", &contact])
            .output()
            .unwrap();
        assert!(show.status.success(), "{}", String::from_utf8_lossy(&show.stderr));
        let state: Value = serde_json::from_slice(&show.stdout).unwrap();
        assert_eq!((state["failures"].clone(), state["recoveryFailures"].clone()), (json!(0), json!(0)), "{state}");
        let reset = command()
            .args(["contact", "reset-2fa", "--db", &db, "--partner", &partner, "--contact", &contact])
            .args(["--reason", "lost phone", "--operator", "alice"])
            .output()
            .unwrap();
        assert!(reset.status.success(), "{}", String::from_utf8_lossy(&reset.stderr));
        let before: Value = serde_json::from_slice(&reset.stdout).unwrap();
        assert_eq!(before["enabled"], state["enabled"]);
        let status: Value = client
            .get(format!("{}/v1/auth/2fa?contactId={contact}", servers[2].base))
            .bearer_auth(&secret_key)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(
            status,
            json!({ "message": "2FA is false.", "code": 200, "status": false, "recoveryCodesRemaining": 0 })
        );
    }

    /// Three servers on one PostgreSQL share the webhook queue: 1,000 messages (test messages
    /// posted through all three), each delivered, none to the receiver twice at the same time;
    /// one server is killed with deliveries in flight, and its leased messages are sent by the
    /// others once the leases expire.
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn three_servers_share_the_webhook_queue() {
        use std::collections::HashMap;
        use std::sync::{Arc, Mutex};
        let dir = tempfile::tempdir().unwrap();
        let db = database();
        let key = key_file(dir.path());
        let (_, secret_key) = create_partner(&db, "Queue");
        // The receiver: deliveries by id, and any id seen twice at once.
        let got: Arc<Mutex<HashMap<String, usize>>> = Arc::default();
        let active: Arc<Mutex<HashMap<String, usize>>> = Arc::default();
        let overlaps: Arc<Mutex<Vec<String>>> = Arc::default();
        let (g, a, o) = (got.clone(), active.clone(), overlaps.clone());
        let app = axum::Router::new().route(
            "/hook",
            axum::routing::post(move |headers: axum::http::HeaderMap| {
                let (g, a, o) = (g.clone(), a.clone(), o.clone());
                async move {
                    /// Leaves the "in flight" count when the request ends, also when its sender
                    /// dies mid-request and the handler is dropped.
                    struct InFlight(Arc<Mutex<HashMap<String, usize>>>, String);
                    impl Drop for InFlight {
                        fn drop(&mut self) {
                            if let Some(n) = self.0.lock().unwrap().get_mut(&self.1) {
                                *n -= 1;
                            }
                        }
                    }
                    let id = headers.get("webhook-id").and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
                    {
                        let mut a = a.lock().unwrap();
                        let n = a.entry(id.clone()).or_default();
                        *n += 1;
                        if *n > 1 {
                            o.lock().unwrap().push(id.clone());
                        }
                    }
                    let _in_flight = InFlight(a.clone(), id.clone());
                    tokio::time::sleep(Duration::from_millis(5)).await;
                    *g.lock().unwrap().entry(id).or_default() += 1;
                    axum::http::StatusCode::NO_CONTENT
                }
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await });

        let args = ["--webhook-allow-private"];
        let mut servers = [
            Instance::start_with(&db, &key, &args),
            Instance::start_with(&db, &key, &args),
            Instance::start_with(&db, &key, &args),
        ];
        let client = reqwest::Client::new();
        let (status, created) = post(
            &client,
            format!("{}/v1/webhooks", servers[0].base),
            &secret_key,
            json!({ "url": url, "events": ["webhook.test"] }),
        )
        .await;
        assert_eq!(status, 201, "{created}");
        let id = created["endpoint"]["id"].as_str().unwrap().to_owned();
        let mut sent = Vec::new();
        for chunk in 0..10 {
            let mut tasks = Vec::new();
            for i in 0..100 {
                let url = format!("{}/v1/webhooks/{id}/test", servers[i % 3].base);
                let (client, key) = (client.clone(), secret_key.clone());
                tasks.push(tokio::spawn(async move { post(&client, url, &key, json!({})).await }));
            }
            for task in tasks {
                let (status, body) = task.await.unwrap();
                assert_eq!(status, 202, "chunk {chunk}: {body}");
                sent.push(body["messageId"].as_str().unwrap().to_owned());
            }
        }
        // One server dies with deliveries leased to it.
        servers[0].kill();
        let deadline = std::time::Instant::now() + Duration::from_secs(120);
        while got.lock().unwrap().len() < sent.len() && std::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        let got = got.lock().unwrap().clone();
        let missing: Vec<&String> = sent.iter().filter(|m| !got.contains_key(*m)).collect();
        assert!(
            missing.is_empty(),
            "{} of {} messages never arrived: {:?}",
            missing.len(),
            sent.len(),
            &missing[..missing.len().min(5)]
        );
        assert!(overlaps.lock().unwrap().is_empty(), "sent twice at the same time: {:?}", overlaps.lock().unwrap());
        let twice = got.values().filter(|n| **n > 1).count();
        println!("1000 messages over 3 servers (one killed): {twice} delivered more than once, none at the same time");
    }

    /// A partner made by the CLI; its id and secret key.
    fn create_partner(db: &str, name: &str) -> (String, String) {
        let out = command()
            .args(["partner", "create", "--db", db, "--name", name, "--environment", "sandbox"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let made: Value = serde_json::from_slice(&out.stdout).unwrap();
        (made["superuserId"].as_str().unwrap().to_owned(), made["secretKey"].as_str().unwrap().to_owned())
    }

    /// Create 2FA for `contact` through the server at `base`; the secret from `manual`.
    async fn create(client: &reqwest::Client, base: &str, key: &str, contact: &str) -> Secret {
        let created: Value = client
            .get(format!("{base}/v1/auth/create2fa?contactId={contact}"))
            .bearer_auth(key)
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        Secret::from_base32(created["details"]["manual"].as_str().unwrap()).unwrap()
    }

    /// Create, enable and disable 2FA for a new contact, each step through another server.
    async fn lifecycle(client: reqwest::Client, bases: Vec<String>, key: String, first: usize) -> Vec<u16> {
        let contact = uuid::Uuid::new_v4().to_string();
        let base = |i: usize| bases[(first + i) % bases.len()].clone();
        let secret = create(&client, &base(0), &key, &contact).await;
        let t = now();
        let enable = json!({ "contactId": contact, "token": totp::code_at(&secret, t - 30) });
        let enabled = post(&client, format!("{}/v1/auth/enable2fa", base(1)), &key, enable).await.0;
        let disable = json!({ "contactId": contact, "token": totp::code_at(&secret, t) });
        let disabled = post(&client, format!("{}/v1/auth/disable2fa", base(2)), &key, disable).await.0;
        vec![enabled, disabled]
    }

    /// Three servers, 20 contacts of one partner going through create, enable and disable at
    /// once, each step on another server: 80 audited changes (with enable's recovery_codes.issued) that serialize on the partner's
    /// head, leaving one gap-free, fork-free chain that `audit verify` accepts. Then a
    /// transaction holding one partner's row: the other partner's changes do not wait on it.
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn servers_sharing_a_database_keep_one_chain_per_partner() {
        let dir = tempfile::tempdir().unwrap();
        let db = database();
        let key = key_file(dir.path());
        let (partner, secret_key) = create_partner(&db, "Busy");
        let (_, other_key) = create_partner(&db, "Other");
        let servers = [Instance::start(&db, &key), Instance::start(&db, &key), Instance::start(&db, &key)];
        let bases: Vec<String> = servers.iter().map(|s| s.base.clone()).collect();
        let client = reqwest::Client::new();
        let tasks: Vec<_> =
            (0..20).map(|i| tokio::spawn(lifecycle(client.clone(), bases.clone(), secret_key.clone(), i))).collect();
        for task in tasks {
            assert_eq!(task.await.unwrap(), [200, 200]);
        }
        let mut rows = Vec::new();
        let mut after = 0;
        loop {
            let page: Value = client
                .get(format!("{}/v1/audit?after={after}&limit=7", bases[after as usize % 3]))
                .bearer_auth(&secret_key)
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            rows.extend(page["events"].as_array().unwrap().iter().cloned());
            match page["next"].as_u64() {
                Some(next) => after = next,
                None => break,
            }
        }
        assert_eq!(rows.iter().map(|r| r["seq"].as_u64().unwrap()).collect::<Vec<_>>(), (1..=80).collect::<Vec<_>>());
        let mut prev = rampart_core::audit::GENESIS.to_owned();
        for row in &rows {
            assert_eq!(row["prev"].as_str().unwrap(), prev, "seq {} links to the row before", row["seq"]);
            prev = row["hash"].as_str().unwrap().to_owned();
        }
        for event in ["2fa.created", "2fa.enabled", "2fa.disabled"] {
            assert_eq!(rows.iter().filter(|r| r["event"] == event).count(), 20, "{event}");
        }
        let out = command().args(["audit", "verify", "--db", &db, "--partner", &partner]).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let said: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(said, json!({ "verified": true, "partners": 1, "rows": 80 }));

        // Another transaction holds the busy partner's row (its chain head) for 4 s.
        let hold = format!(
            "BEGIN; SELECT 1 FROM partners WHERE id = '\\x{}'::bytea FOR UPDATE; SELECT pg_sleep(4); COMMIT;",
            partner.replace('-', "")
        );
        let mut holder = std::process::Command::new("psql")
            .args([db.as_str(), "-v", "ON_ERROR_STOP=1", "-qc", &hold])
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap();
        tokio::time::sleep(Duration::from_millis(500)).await;
        // The other partner: not waiting.
        let started = std::time::Instant::now();
        let other_contact = uuid::Uuid::new_v4().to_string();
        let r = client
            .get(format!("{}/v1/auth/create2fa?contactId={other_contact}", bases[0]))
            .bearer_auth(&other_key)
            .send()
            .await
            .unwrap();
        let other_took = started.elapsed();
        assert_eq!(r.status(), 200);
        // The busy partner: its audited change waits for the head, up to the 1 s lock timeout.
        let started = std::time::Instant::now();
        let r = client
            .get(format!("{}/v1/auth/create2fa?contactId={}", bases[1], uuid::Uuid::new_v4()))
            .bearer_auth(&secret_key)
            .send()
            .await
            .unwrap();
        let busy_took = started.elapsed();
        assert_eq!(r.status(), 500, "the busy partner's change waited for the held head and gave up");
        assert!(other_took < Duration::from_millis(500), "the other partner waited {other_took:?}");
        assert!(busy_took >= Duration::from_millis(900), "the busy partner waited only {busy_took:?}");
        println!(
            "a change of another partner took {other_took:?}; one of the partner whose head is held: {busy_took:?}"
        );
        assert!(holder.wait().unwrap().success());
        let out = command().args(["audit", "verify", "--db", &db]).output().unwrap();
        let said: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(said, json!({ "verified": true, "partners": 2, "rows": 81 }));
    }

    /// SPEC 11's key roll across two servers on one database (their clocks a shared test
    /// file): a member rolls through one; the new key works on both at once; the old one works
    /// on both until its expiry and is refused from that second on, though the other server
    /// had just authenticated it (its key cache honours the expiry).
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn a_rolled_key_overlaps_to_the_second_on_both_servers() {
        let dir = tempfile::tempdir().unwrap();
        let db = database();
        let key = key_file(dir.path());
        let clock = dir.path().join("clock");
        let t0 = now();
        std::fs::write(&clock, format!("{t0}\n")).unwrap();
        let (partner, old_key) = create_partner(&db, "Rolling");
        let out = command()
            .args([
                "partner",
                "invite",
                "--db",
                &db,
                "--partner",
                &partner,
                "--email",
                "ops@example.com",
                "--role",
                "developer",
            ])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let invited: Value = serde_json::from_slice(&out.stdout).unwrap();
        let token = invited["link"].as_str().unwrap().split("#invite=").nth(1).unwrap().to_owned();
        let clock_arg = clock.to_str().unwrap();
        let servers = [
            Instance::start_with(&db, &key, &["--test-clock-file", clock_arg]),
            Instance::start_with(&db, &key, &["--test-clock-file", clock_arg]),
        ];
        let client = reqwest::Client::new();
        // Join through the first server (its own origin), as the page does.
        let a = &servers[0].base;
        let join = |path: &str, body: Value, cookie: Option<String>| {
            let mut req = client.post(format!("{a}{path}")).header("origin", a.as_str()).json(&body);
            if let Some(c) = cookie {
                req = req.header("cookie", c);
            }
            req.send()
        };
        let accepted = join(
            "/v1/dashboard/invitation/accept",
            json!({ "token": token, "password": "violet tractor lamp 42" }),
            None,
        )
        .await
        .unwrap();
        assert_eq!(accepted.status().as_u16(), 200);
        let cookie = accepted.headers()["set-cookie"].to_str().unwrap().split(';').next().unwrap().to_owned();
        let body: Value = accepted.json().await.unwrap();
        let secret = Secret::from_base32(body["twoFactor"]["manualKey"].as_str().unwrap()).unwrap();
        let enabled =
            join("/v1/dashboard/setup/enable", json!({ "code": totp::code_at(&secret, t0) }), Some(cookie.clone()))
                .await
                .unwrap();
        assert_eq!(enabled.status().as_u16(), 200);
        let csrf = enabled.json::<Value>().await.unwrap()["csrfToken"].as_str().unwrap().to_owned();
        let rolled: Value = client
            .post(format!("{a}/v1/dashboard/keys/roll"))
            .header("origin", a.as_str())
            .header("cookie", &cookie)
            .header("x-csrf-token", &csrf)
            .json(&json!({ "expiresIn": "1h" }))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let new_key = rolled["secretKey"].as_str().unwrap().to_owned();
        let status = |base: String, bearer: String| {
            let client = client.clone();
            async move {
                let url = format!("{base}/v1/auth/2fa?contactId={}", uuid::Uuid::new_v4());
                client.get(url).bearer_auth(bearer).send().await.unwrap().status().as_u16()
            }
        };
        for s in &servers {
            assert_eq!(status(s.base.clone(), new_key.clone()).await, 200, "the new key at once");
            assert_eq!(status(s.base.clone(), old_key.clone()).await, 200, "the old key in its overlap");
        }
        std::fs::write(&clock, format!("{}\n", t0 + 3599)).unwrap();
        for s in &servers {
            assert_eq!(status(s.base.clone(), old_key.clone()).await, 200, "its last second");
        }
        std::fs::write(&clock, format!("{}\n", t0 + 3600)).unwrap();
        for s in &servers {
            assert_eq!(status(s.base.clone(), old_key.clone()).await, 401, "refused from its expiry on");
            assert_eq!(status(s.base.clone(), new_key.clone()).await, 200);
        }
        std::fs::write(&clock, format!("{}\n", t0 + 3601)).unwrap();
        assert_eq!(status(servers[1].base.clone(), old_key.clone()).await, 401);
        // The new key appeared in that one answer only: never in a log.
        for s in &servers {
            assert!(!s.log().contains(&new_key) && !s.log().contains(&old_key));
        }
    }

    /// A PostgreSQL database needs the master key file: no server generates its own.
    #[test]
    fn a_postgres_database_needs_a_master_key_file() {
        let db = database();
        let out = command().args(["--db", &db, "--listen", "127.0.0.1:0"]).output().unwrap();
        assert!(!out.status.success());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("a PostgreSQL database needs --master-key-file"), "{stderr}");
    }

    /// An operator command on an unreachable database fails, naming it without the password.
    /// (A server starts and waits for it: tests/postgres_outage.rs.)
    #[test]
    fn an_unreachable_database_is_named_without_its_password() {
        let dir = tempfile::tempdir().unwrap();
        let key = key_file(dir.path());
        let db = "postgres://app:s3cret@127.0.0.1:9/none?connect_timeout=2&sslmode=disable";
        let out = command()
            .args([
                "partner",
                "create",
                "--db",
                db,
                "--master-key-file",
                &key,
                "--name",
                "X",
                "--environment",
                "sandbox",
            ])
            .output()
            .unwrap();
        assert!(!out.status.success());
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("cannot open database postgres://app:***@127.0.0.1:9/none"), "{stderr}");
        assert!(!stderr.contains("s3cret"), "{stderr}");
    }
}
