//! The webhook endpoint routes of SPEC section 10 over HTTP.

mod common;

use common::Server;
use serde_json::{Value, json};

const PUBLIC: &str = "https://93.184.216.34/hooks/rampart";

async fn create(s: &Server, key: &str, body: Value) -> common::Reply {
    s.post("/v1/webhooks", Some(key), &body).await
}

#[tokio::test]
async fn endpoints_are_created_listed_rotated_and_deleted() {
    let s = Server::sandbox().await;
    let (_, key) = s.partner();
    let r = create(&s, &key, json!({ "url": PUBLIC, "events": ["order.completed", "2fa.reset"] })).await;
    assert_eq!(r.status, 201, "{}", r.text);
    assert_eq!(r.header("cache-control"), Some("no-store"));
    let endpoint = r.body["endpoint"].clone();
    let secret = r.body["secret"].as_str().unwrap().to_owned();
    assert!(secret.starts_with("whsec_") && secret.len() == 50);
    let id = endpoint["id"].as_str().unwrap().to_owned();
    assert_eq!(
        r.body,
        json!({
            "message": "Webhook endpoint created.",
            "code": 201,
            "endpoint": {
                "id": id, "url": PUBLIC, "events": ["order.completed", "2fa.reset"], "enabled": true,
                "createdAt": endpoint["createdAt"],
            },
            "secret": secret,
        })
    );
    let r = s.get("/v1/webhooks", Some(&key)).await;
    assert_eq!(r.body, json!({ "message": "Webhook endpoints retrieved.", "code": 200, "endpoints": [endpoint] }));
    assert!(!r.text.contains(&secret[6..]), "no secret in the list");

    let r = s.post_raw(&format!("/v1/webhooks/{id}/rotate-secret"), Some(&key), "").await;
    assert_eq!((r.status, r.header("cache-control")), (200, Some("no-store")), "{}", r.text);
    let rotated = r.body["secret"].as_str().unwrap();
    assert!(rotated.starts_with("whsec_") && rotated != secret);

    let other = s.partner().1;
    let del = |k: &str, id: &str| s.send(s.client.delete(s.url(&format!("/v1/webhooks/{id}"))).bearer_auth(k));
    del(&other, &id).await.assert_error(404, "Webhook endpoint not found");
    del(&key, "not-an-id").await.assert_error(404, "Webhook endpoint not found");
    del(&key, &id).await.assert_ok("Webhook endpoint deleted.");
    del(&key, &id).await.assert_error(404, "Webhook endpoint not found");
    s.post_raw(&format!("/v1/webhooks/{id}/rotate-secret"), Some(&key), "")
        .await
        .assert_error(404, "Webhook endpoint not found");
    // The trail has the three changes, ids only.
    let audit = s.get("/v1/audit", Some(&key)).await;
    let changes: Vec<Value> = audit.body["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["event"] == "webhook.endpoint_changed")
        .map(|e| e["details"].clone())
        .collect();
    assert_eq!(
        changes,
        [
            json!({ "endpointId": id, "change": "created" }),
            json!({ "endpointId": id, "change": "secret_rotated" }),
            json!({ "endpointId": id, "change": "deleted" }),
        ]
    );
    s.stop().await;
}

#[tokio::test]
async fn bad_endpoints_are_400_naming_the_field_and_the_11th_is_409() {
    let s = Server::sandbox().await;
    let (_, key) = s.partner();
    let rule = "url must be an absolute https URL without credentials, at most 2048 characters";
    for (body, message) in [
        (json!({ "events": ["webhook.test"] }), "url is required".to_owned()),
        (json!({ "url": PUBLIC }), "events is required".to_owned()),
        (json!({ "url": PUBLIC, "events": [] }), "events must name at least one event".to_owned()),
        (
            json!({ "url": PUBLIC, "events": ["order.shipped"] }),
            "events has an unknown event: order.shipped".to_owned(),
        ),
        (json!({ "url": PUBLIC, "events": [7] }), "events[0] must be a string".to_owned()),
        (json!({ "url": "http://93.184.216.34/h", "events": ["webhook.test"] }), rule.to_owned()),
        (json!({ "url": "https://a:b@93.184.216.34/h", "events": ["webhook.test"] }), rule.to_owned()),
        (json!({ "url": format!("{PUBLIC}/{}", "x".repeat(2048)), "events": ["webhook.test"] }), rule.to_owned()),
        (
            json!({ "url": "https://127.0.0.1/h", "events": ["webhook.test"] }),
            "url resolves to a non-public address: loopback".to_owned(),
        ),
        (
            json!({ "url": "https://[::1]/h", "events": ["webhook.test"] }),
            "url resolves to a non-public address: loopback".to_owned(),
        ),
        (
            json!({ "url": "https://169.254.169.254/h", "events": ["webhook.test"] }),
            "url resolves to a non-public address: cloud-metadata".to_owned(),
        ),
        (
            json!({ "url": "https://0177.0.0.1/h", "events": ["webhook.test"] }),
            "url resolves to a non-public address: loopback".to_owned(),
        ),
        (
            json!({ "url": "https://localhost/h", "events": ["webhook.test"] }),
            "url resolves to a non-public address: loopback".to_owned(),
        ),
    ] {
        create(&s, &key, body.clone()).await.assert_error(400, &message);
    }
    for i in 0..10 {
        assert_eq!(
            create(&s, &key, json!({ "url": format!("{PUBLIC}/{i}"), "events": ["webhook.test"] })).await.status,
            201
        );
    }
    create(&s, &key, json!({ "url": PUBLIC, "events": ["webhook.test"] }))
        .await
        .assert_error(409, "At most 10 webhook endpoints");
    s.get("/v1/webhooks", None).await.assert_error(401, "Unauthorized");
    s.stop().await;
}

#[tokio::test]
async fn test_messages_the_delivery_log_and_resend() {
    let s = Server::sandbox().await;
    let (partner, key) = s.partner();
    let r = create(&s, &key, json!({ "url": PUBLIC, "events": ["order.completed"] })).await;
    let id = r.body["endpoint"]["id"].as_str().unwrap().to_owned();
    let r = s.post_raw(&format!("/v1/webhooks/{id}/test"), Some(&key), "").await;
    assert_eq!(r.status, 202, "{}", r.text);
    let message = r.body["messageId"].as_str().unwrap().to_owned();
    assert!(message.starts_with("msg_"));
    assert_eq!(r.body, json!({ "message": "Webhook test message queued.", "code": 202, "messageId": message }));
    // Queued for this endpoint although it does not receive webhook.test.
    let queued = s.service.store().webhook_deliveries(&partner).unwrap();
    assert_eq!(
        (queued.len(), queued[0].event.as_str(), queued[0].message_id.as_str()),
        (1, "webhook.test", message.as_str())
    );
    let r = s.get(&format!("/v1/webhooks/{id}/deliveries"), Some(&key)).await;
    assert_eq!(
        r.body,
        json!({ "message": "Webhook deliveries retrieved.", "code": 200, "attempts": [], "next": null })
    );
    for (query, msg) in [
        ("limit=0", "limit must be an integer from 1 to 100"),
        ("limit=101", "limit must be an integer from 1 to 100"),
        ("after=x", "after must be a previous page's next"),
    ] {
        s.get(&format!("/v1/webhooks/{id}/deliveries?{query}"), Some(&key)).await.assert_error(400, msg);
    }
    let r = s.post_raw(&format!("/v1/webhooks/messages/{message}/resend"), Some(&key), "").await;
    assert_eq!((r.status, &r.body["messageId"]), (202, &json!(message)), "{}", r.text);
    let other = s.partner().1;
    for k in [&other, &key] {
        let bad = if k == &key { "msg_unknown".to_owned() } else { message.clone() };
        s.post_raw(&format!("/v1/webhooks/messages/{bad}/resend"), Some(k), "")
            .await
            .assert_error(404, "Webhook message not found");
    }
    for path in [format!("/v1/webhooks/{}/test", uuid::Uuid::new_v4()), "/v1/webhooks/nope/test".to_owned()] {
        s.post_raw(&path, Some(&key), "").await.assert_error(404, "Webhook endpoint not found");
    }
    s.get(&format!("/v1/webhooks/{id}/deliveries"), Some(&other)).await.assert_error(404, "Webhook endpoint not found");
    s.stop().await;
}

#[tokio::test]
async fn the_demo_partner_page_lists_its_verified_webhooks() {
    use rampart_core::webhooks::{self, WebhookSecret};
    let clock = std::sync::Arc::new(rampart_core::ManualClock::new(common::T0));
    let service = std::sync::Arc::new(common::Setup::default().build(clock));
    let demo = service.create_partner("Demo partner", rampart_core::Environment::Sandbox).unwrap();
    let secret = WebhookSecret::generate().unwrap();
    let app = rampart_server::app_with_demo_webhooks(
        service.clone(),
        rampart_core::widget::WidgetConfig::default(),
        Some(&demo.publishable_key),
        Some(secret.clone()),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task =
        tokio::spawn(rampart_server::serve_with(listener, app, rampart_server::ConnectionLimits::default(), async {
            let _ = stopped.await;
        }));
    let client = common::client();
    let page = client.get(format!("{base}/demo")).send().await.unwrap();
    let csp = page.headers()["content-security-policy"].to_str().unwrap().to_owned();
    assert!(csp.ends_with("; connect-src 'self'"), "{csp}");
    assert!(page.text().await.unwrap().contains("Webhooks this server received"));
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    let body = r#"{"type":"order.completed","timestamp":"2026-11-26T15:00:00.000Z","data":{}}"#;
    let send = |signature: String| {
        client
            .post(format!("{base}/demo/webhooks"))
            .header("webhook-id", "msg_1")
            .header("webhook-timestamp", now.to_string())
            .header("webhook-signature", signature)
            .body(body)
            .send()
    };
    let forged =
        send(webhooks::sign(&[&WebhookSecret::generate().unwrap()], "msg_1", now, body.as_bytes())).await.unwrap();
    assert_eq!(forged.status().as_u16(), 400);
    let signed = send(webhooks::sign(&[&secret], "msg_1", now, body.as_bytes())).await.unwrap();
    assert_eq!(signed.status().as_u16(), 204);
    let listed: Value = client.get(format!("{base}/demo/webhooks")).send().await.unwrap().json().await.unwrap();
    assert_eq!(
        listed["webhooks"],
        json!([{ "webhookId": "msg_1", "type": "order.completed", "timestamp": "2026-11-26T15:00:00.000Z", "verified": true }])
    );
    stop.send(()).unwrap();
    task.await.unwrap().unwrap();
}
