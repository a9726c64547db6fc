//! `GET /v1/audit` (SPEC 9.1) and the metrics router (SPEC 9.2) over HTTP.

mod common;

use std::sync::Arc;

use common::{Server, Setup, contact};
use rampart_core::store::FaultyStore;
use serde_json::{Value, json};

#[tokio::test]
async fn the_partner_reads_its_own_chain_page_by_page() {
    let server = Server::sandbox().await;
    let (partner, key) = server.partner();
    let (_, other_key) = server.partner();
    let c = contact();
    let secret = server.enabled(&key, &c).await;
    let code = server.code(&secret);
    server.attempt("disable2fa", &key, &c, code.into()).await.assert_ok("Successfully disbaled 2fa!");
    server
        .post("/v1/users/widgetText", Some(&key), &json!({ "widgetText": "Done" }))
        .await
        .assert_ok("Widget text updated to: Done");

    let r = server.get("/v1/audit", Some(&key)).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!((r.body["message"].as_str(), r.body["code"].as_u64()), (Some("Audit events retrieved."), Some(200)));
    let events = r.body["events"].as_array().unwrap();
    let shown: Vec<(u64, &str, &str, Value)> = events
        .iter()
        .map(|e| {
            (
                e["seq"].as_u64().unwrap(),
                e["actor"].as_str().unwrap(),
                e["event"].as_str().unwrap(),
                e["details"].clone(),
            )
        })
        .collect();
    assert_eq!(
        shown,
        [
            (1, "partner", "2fa.created", json!({})),
            (2, "partner", "2fa.enabled", json!({})),
            (3, "partner", "recovery_codes.issued", json!({ "reason": "enable" })),
            (4, "partner", "2fa.disabled", json!({ "method": "token" })),
            (5, "partner", "widget.settings_changed", json!({ "field": "widgetText" })),
        ]
    );
    assert_eq!(r.body["next"], Value::Null);
    let first = &events[0];
    let mut keys: Vec<&str> = first.as_object().unwrap().keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(keys, ["actor", "at", "contactId", "details", "event", "hash", "id", "partnerId", "prev", "seq"]);
    assert_eq!(first["partnerId"], json!(partner.to_string()));
    assert_eq!(first["contactId"], json!(c));
    assert_eq!(events[4]["contactId"], Value::Null);
    assert_eq!(first["at"], json!(rampart_core::audit::rfc3339_millis(common::T0 * 1000)));

    // Pages, and one contact's rows.
    let r = server.get("/v1/audit?limit=3", Some(&key)).await;
    assert_eq!((r.body["events"].as_array().unwrap().len(), r.body["next"].as_u64()), (3, Some(3)));
    let r = server.get("/v1/audit?after=3&limit=3", Some(&key)).await;
    assert_eq!((r.body["events"][0]["seq"].as_u64(), r.body["next"].clone()), (Some(4), Value::Null));
    assert_eq!(r.body["events"].as_array().unwrap().len(), 2);
    let r = server.get(&format!("/v1/audit?contactId={}&after=1", c.to_uppercase()), Some(&key)).await;
    let seqs: Vec<u64> = r.body["events"].as_array().unwrap().iter().map(|e| e["seq"].as_u64().unwrap()).collect();
    assert_eq!(seqs, [2, 3, 4]);
    // Another partner's key sees its own, empty, chain.
    let r = server.get("/v1/audit", Some(&other_key)).await;
    assert_eq!((r.status, r.body["events"].clone()), (200, json!([])));
    server.stop().await;
}

#[tokio::test]
async fn bad_parameters_are_400_naming_them() {
    let server = Server::sandbox().await;
    let (_, key) = server.partner();
    let limit = "limit must be an integer from 1 to 500";
    let after = "after must be an integer from 0 to 9223372036854775807";
    for (query, message) in [
        ("limit=0", limit),
        ("limit=501", limit),
        ("limit=-1", limit),
        ("limit=1.5", limit),
        ("limit=abc", limit),
        ("limit=", limit),
        ("limit=%2B5", limit),
        ("limit=99999999999999999999999", limit),
        ("after=-1", after),
        ("after=x", after),
        ("after=1e3", after),
        ("after=9223372036854775808", after),
        ("contactId=nope", "contactId must be a UUID"),
        ("contactId=", "contactId must be a UUID"),
        ("limit=1&limit=2", "duplicate field: limit"),
    ] {
        server.get(&format!("/v1/audit?{query}"), Some(&key)).await.assert_error(400, message);
    }
    assert_eq!(server.get("/v1/audit?limit=500&after=9223372036854775807", Some(&key)).await.status, 200);
    // Credentials first.
    server.get("/v1/audit?limit=0", None).await.assert_error(401, "Unauthorized");
    server.get("/v1/audit", Some("sk_sandbox_wrong")).await.assert_error(401, "Unauthorized");
    server.stop().await;
}

#[tokio::test]
async fn a_failing_audit_write_is_the_operations_500_and_changes_nothing() {
    let store: Arc<FaultyStore> = Arc::new(FaultyStore::default());
    let server = Setup { store: store.clone(), ..Setup::default() }.start().await;
    let (_, key) = server.partner();
    let c = contact();
    let secret = server.create_secret(&key, &c).await;
    store.fail_audit_writes(true);
    let code = server.code(&secret);
    server.attempt("enable2fa", &key, &c, code.clone().into()).await.assert_error(500, "Error enabling 2FA");
    server.create(&key, &contact()).await.assert_error(500, "Error enabling 2FA");
    server
        .post("/v1/users/widgetText", Some(&key), &json!({ "widgetText": "Done" }))
        .await
        .assert_error(500, "Internal server error");
    store.fail_audit_writes(false);
    assert_eq!(server.status(&key, &c).await.body["status"], json!(false));
    let r = server.get("/v1/users/widgetText", Some(&key)).await;
    assert_eq!(r.body["widgetText"], Value::Null);
    let events = server.get("/v1/audit", Some(&key)).await.body["events"].as_array().unwrap().len();
    assert_eq!(events, 1, "only the first create's row");
    // The same code still enables now (nothing of the failed attempt was kept).
    server.attempt("enable2fa", &key, &c, code.into()).await.assert_enabled();
    let metrics = server.service.metrics_text();
    assert!(metrics.contains("\nrampart_audit_write_failures_total 3\n"), "{metrics}");
    server.stop().await;
}

#[tokio::test]
async fn requests_are_counted_by_route_template_never_by_path() {
    let server = Server::sandbox().await;
    let (_, key) = server.partner();
    let c = contact();
    assert_eq!(server.status(&key, &c).await.status, 200);
    assert_eq!(server.status(&key, &contact()).await.status, 200);
    server.get("/v1/widget/orders/5b1e8a52-07c1-4a8e-9a55-0ad6a2d1e8f3", Some(&key)).await;
    server.get("/nowhere/at/all", None).await.assert_error(404, "Not found");
    let r = server.send(server.client.patch(server.url("/v1/auth/2fa"))).await;
    assert_eq!(r.status, 405);
    let text = server.service.metrics_text();
    for line in [
        "rampart_http_requests_total{route=\"/v1/auth/2fa\",method=\"GET\",status=\"200\"} 2",
        "rampart_http_requests_total{route=\"/v1/widget/orders/{id}\",method=\"GET\",status=\"404\"} 1",
        "rampart_http_requests_total{route=\"unmatched\",method=\"GET\",status=\"404\"} 1",
        "rampart_http_requests_total{route=\"/v1/auth/2fa\",method=\"OTHER\",status=\"405\"} 1",
        "rampart_http_request_duration_seconds_count{route=\"/v1/auth/2fa\"} 3",
    ] {
        assert!(text.lines().any(|l| l == line), "{line} in\n{text}");
    }
    assert!(!text.contains(&c) && !text.contains("nowhere") && !text.contains("5b1e8a52"), "{text}");
    server.stop().await;
}

#[tokio::test]
async fn the_metrics_router_serves_only_metrics() {
    let server = Server::sandbox().await;
    let (_, key) = server.partner();
    server.enabled(&key, &contact()).await;
    // The public listener has no /metrics.
    server.get("/metrics", None).await.assert_error(404, "Not found");
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let app = rampart_server::metrics_app(server.service.clone());
    let task = tokio::spawn(async move { axum::serve(listener, app).await });
    let r = server.client.get(format!("{base}/metrics")).send().await.unwrap();
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["content-type"], "text/plain; version=0.0.4; charset=utf-8");
    let text = r.text().await.unwrap();
    assert!(
        text.lines()
            .any(|l| l == "rampart_2fa_attempts_total{operation=\"enable\",factor=\"token\",result=\"accepted\"} 1"),
        "{text}"
    );
    assert!(text.lines().any(|l| l == "rampart_audit_events{event=\"2fa.enabled\"} 1"), "{text}");
    let r = server.client.get(format!("{base}/v1/auth/2fa")).send().await.unwrap();
    assert_eq!(r.status(), 404);
    let r = server.client.post(format!("{base}/metrics")).send().await.unwrap();
    assert_eq!(r.status(), 405);
    task.abort();
    server.stop().await;
}
