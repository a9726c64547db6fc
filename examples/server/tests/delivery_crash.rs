//! Webhooks survive `kill -9` (SPEC section 10, "Durable delivery"): with the receiver down,
//! every acknowledged change's message is in the outbox; the server is killed while it retries
//! them; after a restart with the receiver up, each arrives (once or more), none is lost.

mod common;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{Instance, master_key_file, server_command};
use rampart_core::totp::{self, Secret};
use serde_json::{Value, json};

fn now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs()
}

/// A receiver on `port` counting every message by its `webhook-id`.
async fn receive_on(port: u16, got: Arc<Mutex<HashMap<String, usize>>>) {
    let app = axum::Router::new().route(
        "/hook",
        axum::routing::post(move |headers: axum::http::HeaderMap| {
            let got = got.clone();
            async move {
                let id = headers.get("webhook-id").and_then(|v| v.to_str().ok()).unwrap_or_default().to_owned();
                *got.lock().unwrap().entry(id).or_default() += 1;
                axum::http::StatusCode::NO_CONTENT
            }
        }),
    );
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await.unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_with_the_receiver_down_loses_no_message() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("hooks.db");
    let dbs = db.to_str().unwrap();
    let key = master_key_file(dir.path());
    let out = server_command()
        .args(["partner", "create", "--db", dbs, "--name", "Hooks", "--environment", "sandbox"])
        .output()
        .unwrap();
    let partner: Value = serde_json::from_slice(&out.stdout).unwrap();
    let secret_key = partner["secretKey"].as_str().unwrap().to_owned();
    // A port nobody listens on yet: every attempt fails until the receiver starts.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let args = ["--webhook-allow-private", "--test-webhook-retry-scale", "0.001"];
    let mut server = Instance::start_with(dbs, &key, &args);
    let client = common::client();
    let post = |base: String, path: &str, body: Value| {
        let req = client.post(format!("{base}{path}")).bearer_auth(&secret_key).json(&body);
        async move {
            let resp = req.send().await.unwrap();
            (resp.status().as_u16(), resp.json::<Value>().await.unwrap_or(Value::Null))
        }
    };
    let url = format!("http://127.0.0.1:{port}/hook");
    let (status, created) =
        post(server.base.clone(), "/v1/webhooks", json!({ "url": url, "events": ["2fa.enabled"] })).await;
    assert_eq!(status, 201, "{created}");

    // 20 acknowledged enables, each an event for the outbox, while the receiver is down.
    let mut acknowledged = 0;
    for _ in 0..20 {
        let contact = uuid::Uuid::new_v4().to_string();
        let r = client
            .get(format!("{}/v1/auth/create2fa?contactId={contact}", server.base))
            .bearer_auth(&secret_key)
            .send()
            .await
            .unwrap()
            .json::<Value>()
            .await
            .unwrap();
        let secret = Secret::from_base32(r["details"]["manual"].as_str().unwrap()).unwrap();
        let body = json!({ "contactId": contact, "token": totp::code_at(&secret, now()) });
        if post(server.base.clone(), "/v1/auth/enable2fa", body).await.0 == 200 {
            acknowledged += 1;
        }
    }
    assert_eq!(acknowledged, 20);
    // Retrying against the closed port, then killed without warning.
    tokio::time::sleep(Duration::from_millis(300)).await;
    server.kill();

    // Receiver up, server back on the same database: every message arrives.
    let got: Arc<Mutex<HashMap<String, usize>>> = Arc::default();
    receive_on(port, got.clone()).await;
    let server = Instance::start_with(dbs, &key, &args);
    // A delivery leased by the killed server waits out its lease (60 s) before it is sent again.
    let deadline = Instant::now() + Duration::from_secs(90);
    while got.lock().unwrap().len() < 20 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let got = got.lock().unwrap().clone();
    assert_eq!(got.len(), 20, "every acknowledged change's message arrived: {got:?}\n{}", server.log());
    assert!(got.keys().all(|id| id.starts_with("msg_")));
}
