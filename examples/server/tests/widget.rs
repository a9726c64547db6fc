//! The widget routes over real HTTP: the shared vectors, the filled-in publishable key, the
//! 400 for invalid options, signing with the caller's secret key, and the snippets.

mod common;

use common::{Server, Setup};
use rampart_core::Environment;
use rampart_core::widget::{WidgetConfig, verify_signed_url};
use serde_json::{Value, json};

fn vectors(file: &str) -> Vec<Value> {
    // Found at run time (cargo sets it), not baked in: a shared target dir may serve other clones.
    let manifest = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| env!("CARGO_MANIFEST_DIR").to_owned());
    let path = format!("{manifest}/../../tests/vectors/widget/{file}");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert!(doc["config"].is_null(), "{file}: the server runs the default widget configuration");
    let cases = doc["cases"].as_array().unwrap().clone();
    assert!(!cases.is_empty(), "{file} has no cases");
    cases
}

/// Cases the server answers exactly as the library: default configuration, options that carry
/// a key (the server would otherwise supply one), and an environment named by the options or
/// the case's hint (the server's environment is its hint; with both given, they agree).
fn served(case: &Value) -> Option<Environment> {
    let options = case["options"].as_object()?;
    let keyed = options.contains_key("publicKey") || options.contains_key("apiKey");
    let config_default = case.get("config").is_none_or(Value::is_null);
    let parse = |v: &Value| match v.as_str() {
        Some("sandbox") => Some(Environment::Sandbox),
        Some("production") => Some(Environment::Production),
        _ => None,
    };
    let (named, hint) = (options.get("environment").and_then(parse), parse(&case["environment"]));
    let env = match (named, hint, case["environment"].is_null()) {
        (Some(n), None, true) => n,
        (None, Some(h), _) if !options.contains_key("environment") => h,
        (Some(n), Some(h), _) if n == h => n,
        _ => return None,
    };
    (keyed && config_default).then_some(env)
}

/// `{"code","path"}` of each issue (and `value`/`suggestion` when the vector gives them).
fn issues_match(got: &Value, want: &Value) -> bool {
    let (got, want) = (got.as_array().unwrap(), want.as_array().unwrap());
    got.len() == want.len()
        && got
            .iter()
            .zip(want)
            .all(|(g, w)| w.as_object().unwrap().iter().all(|(k, v)| g.get(k).unwrap_or(&Value::Null) == v))
}

struct Pair {
    sandbox: Server,
    production: Server,
    sandbox_key: String,
    production_key: String,
}

impl Pair {
    async fn start() -> Self {
        let sandbox = Setup::default().start().await;
        let production = Setup { environment: Environment::Production, ..Setup::default() }.start().await;
        let sandbox_key = sandbox.partner().1;
        let production_key = production.partner().1;
        Self { sandbox, production, sandbox_key, production_key }
    }

    fn on(&self, env: Environment) -> (&Server, &str) {
        match env {
            Environment::Sandbox => (&self.sandbox, &self.sandbox_key),
            Environment::Production => (&self.production, &self.production_key),
        }
    }
}

#[tokio::test]
async fn shared_vectors_answer_as_the_library() {
    let servers = Pair::start().await;
    let mut ran = 0;
    for case in vectors("validate.json").iter().chain(vectors("build.json").iter()) {
        let Some(env) = served(case) else { continue };
        let (s, key) = servers.on(env);
        let name = case["name"].as_str().unwrap();
        let target = case["target"].as_str().unwrap();
        let r = s.post(&format!("/v1/widget/validate?target={target}"), Some(key), &case["options"]).await;
        assert_eq!(r.status, 200, "{name}: {}", r.text);
        let want_errors = case.get("errors").cloned().unwrap_or(json!([]));
        assert!(issues_match(&r.body["errors"], &want_errors), "{name}: errors {}", r.body["errors"]);
        if let Some(warnings) = case.get("warnings") {
            assert!(issues_match(&r.body["warnings"], warnings), "{name}: warnings {}", r.body["warnings"]);
        }
        if let Some(mode) = case.get("mode") {
            assert_eq!(&r.body["mode"], mode, "{name}");
        }
        assert_eq!(r.body["valid"], json!(want_errors.as_array().unwrap().is_empty()), "{name}");
        if let (Some(url), "url") = (case.get("url"), target) {
            let r = s.post("/v1/widget/url", Some(key), &case["options"]).await;
            assert_eq!((r.status, &r.body["url"]), (200, url), "{name}: {}", r.text);
        }
        ran += 1;
    }
    assert!(ran >= 75, "only {ran} vector cases ran through the server");
}

#[tokio::test]
async fn the_partners_publishable_key_is_filled_in() {
    let s = Setup::default().start().await;
    let (partner, key) = s.partner();
    let pk = s.service.partner(&partner).unwrap().publishable_key;
    let options = json!({ "tokens": "btc", "amount": "50" });
    let r = s.post("/v1/widget/url", Some(&key), &options).await;
    assert_eq!(r.status, 200, "{}", r.text);
    let want = format!("https://widget-sandbox.rampart.network/?publicKey={pk}&tokens=btc&amount=50");
    assert_eq!(r.body["url"], json!(want));
    assert_eq!((r.body["message"].as_str(), r.body["signed"].as_bool()), (Some("Widget URL built."), Some(false)));
    assert_eq!(r.body["mode"], json!({ "kind": "incomplete", "missing": "receiveAddress" }));
    // The server's environment is the hint: production options are refused by a sandbox server.
    let r = s.post("/v1/widget/validate", Some(&key), &json!({ "environment": "production" })).await;
    assert_eq!((r.status, r.body["valid"].as_bool()), (200, Some(false)));
    assert!(r.body["errors"].as_array().unwrap().iter().any(|e| e["code"] == "environment_mismatch"), "{}", r.text);
    s.stop().await;
}

#[tokio::test]
async fn invalid_options_are_a_400_naming_each_path() {
    let s = Setup::default().start().await;
    let (_, key) = s.partner();
    let options = json!({ "tokens": "btc,BTC", "amount": "4.999", "darkTheme": "yes" });
    let r = s.post("/v1/widget/url", Some(&key), &options).await;
    assert_eq!(r.status, 400, "{}", r.text);
    assert_eq!(r.body["code"], json!(400));
    assert_eq!(r.body["message"], json!("Invalid widget options: tokens[1], darkTheme, amount"));
    assert_eq!(r.body["valid"], json!(false));
    let codes: Vec<&str> = r.body["errors"].as_array().unwrap().iter().map(|e| e["code"].as_str().unwrap()).collect();
    assert_eq!(codes, ["tokens_uppercase", "wrong_type", "amount_too_many_decimals"]);
    // Malformed bodies and query flags are plain 400s; no credential is a 401 before anything.
    assert_eq!(
        s.post_raw("/v1/widget/url", Some(&key), "[1]").await.body["message"],
        json!("body must be a JSON object")
    );
    let r = s.post("/v1/widget/validate?target=iframe", Some(&key), &json!({})).await;
    assert_eq!((r.status, r.body["message"].as_str()), (400, Some("target must be \"url\" or \"script\"")));
    let r = s.post("/v1/widget/url?sign=yes", Some(&key), &json!({})).await;
    assert_eq!((r.status, r.body["message"].as_str()), (400, Some("sign must be true or false")));
    for path in ["/v1/widget/validate", "/v1/widget/url", "/v1/widget/snippet"] {
        let r = s.post_raw(path, None, "{").await;
        assert_eq!((r.status, r.body["message"].as_str()), (401, Some("Unauthorized")), "{path}");
        let r = s.post_raw(path, Some("sk_sandbox_wrong"), "x".repeat(70_000)).await;
        assert_eq!(r.status, 401, "{path}");
        let r = s.post_raw(path, Some(&key), "x".repeat(70_000)).await;
        assert_eq!(r.status, 413, "{path}");
    }
    s.stop().await;
}

#[tokio::test]
async fn urls_are_signed_with_the_callers_secret_key() {
    let s = Setup::default().start().await;
    let (_, key) = s.partner();
    let r = s.post("/v1/widget/url?sign=true", Some(&key), &json!({ "tokens": "eth" })).await;
    assert_eq!((r.status, r.body["signed"].as_bool()), (200, Some(true)), "{}", r.text);
    let url = r.body["url"].as_str().unwrap();
    assert!(url.contains("&timestamp=") && url.contains("&signature="), "{url}");
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    let parsed = verify_signed_url(url, &key, now, 300, &WidgetConfig::default()).unwrap();
    assert_eq!(parsed.options["tokens"], json!("eth"));
    let (_, other) = s.partner();
    assert!(verify_signed_url(url, &other, now, 300, &WidgetConfig::default()).is_err());
    s.stop().await;
}

#[tokio::test]
async fn snippets_carry_the_container_the_frame_and_the_csp() {
    let s = Setup::default().start().await;
    let (_, key) = s.partner();
    let options = json!({ "environment": "sandbox", "targetContainerId": "buy", "clientName": "</script><b>\"x\"" });
    let r = s.post("/v1/widget/snippet", Some(&key), &options).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["message"], json!("Widget snippets built."));
    let script = r.body["script"].as_str().unwrap();
    assert!(script.starts_with("<div id=\"buy\"></div>"), "{script}");
    assert_eq!(script.matches("</script").count(), 2, "{script}");
    let iframe = r.body["iframe"].as_str().unwrap();
    assert!(iframe.contains("width=\"420\" height=\"550\"") && iframe.contains("referrerpolicy="), "{iframe}");
    assert_eq!(
        r.body["csp"],
        json!({ "frameSrc": "https://widget-sandbox.rampart.network", "scriptSrc": "https://widget-sandbox.rampart.network" })
    );
    // The script needs a container.
    let r = s.post("/v1/widget/snippet", Some(&key), &json!({ "environment": "sandbox" })).await;
    assert_eq!((r.status, r.body["message"].as_str()), (400, Some("Invalid widget options: targetContainerId")));
    s.stop().await;
}
