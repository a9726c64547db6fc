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
        let out = command()
            .args(["partner", "create", "--db", &db, "--name", "Shared", "--environment", "sandbox"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let partner: Value = serde_json::from_slice(&out.stdout).unwrap();
        let secret_key = partner["secretKey"].as_str().unwrap().to_owned();
        let servers = [Instance::start(&db, &key), Instance::start(&db, &key)];
        let client = reqwest::Client::new();

        for round in 0..10 {
            let contact = uuid::Uuid::new_v4().to_string();
            // Created through one server, enabled through the other.
            let created: Value = client
                .get(format!("{}/v1/auth/create2fa?contactId={contact}", servers[round % 2].base))
                .bearer_auth(&secret_key)
                .send()
                .await
                .unwrap()
                .json()
                .await
                .unwrap();
            let secret = Secret::from_base32(created["details"]["manual"].as_str().unwrap()).unwrap();
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
        let out = command()
            .args(["partner", "rotate-keys", "--db", &db, "--partner", partner["superuserId"].as_str().unwrap()])
            .output()
            .unwrap();
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
