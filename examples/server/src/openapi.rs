//! The OpenAPI 3.1 document served at `GET /openapi.json`, written by hand. A test reads it
//! from the running app and checks every documented route and response code against it.

use rampart_core::Environment;
use rampart_core::widget::address::Chain;
use rampart_core::widget::origins::{MAX_ORIGIN_BYTES, MAX_ORIGINS};
use rampart_core::widget::{
    MAX_CLIENT_NAME_CHARS, MAX_CONTAINER_ID_CHARS, MAX_HOME_SCREEN_MESSAGE_CHARS, MAX_OPTIONS, Target, WidgetConfig,
};
use serde_json::{Map, Value, json};

/// What one documented response code means.
fn describe(code: u16) -> &'static str {
    match code {
        200 => "Success",
        400 => "Bad input; the message names the field",
        401 => "Unauthorized, or (2FA) the token is missing or does not verify",
        403 => "Forbidden: the state does not allow this (the message says why)",
        409 => "The contact's 2FA state does not allow this",
        413 => "Request body is too large (over 64 KiB)",
        423 => "2FA is locked after too many failed attempts",
        429 => "Too many failed 2FA attempts; see Retry-After",
        500 => "Server failure; the message is the operation's fixed one",
        503 => "Unavailable: the store is unreachable, or the server has no mail service or payment provider",
        _ => "See the message",
    }
}

fn error_ref() -> Value {
    json!({ "$ref": "#/components/schemas/Error" })
}

fn responses(success: Value, codes: &[u16]) -> Value {
    let mut out = Map::new();
    out.insert(
        "200".into(),
        json!({ "description": describe(200), "content": { "application/json": { "schema": success } } }),
    );
    for &code in codes {
        let mut response = json!({
            "description": describe(code),
            "content": { "application/json": { "schema": error_ref() } },
        });
        if code == 429 {
            response["headers"] = json!({
                "Retry-After": { "description": "Whole seconds to wait", "schema": { "type": "integer" } }
            });
        }
        out.insert(code.to_string(), response);
    }
    Value::Object(out)
}

fn message_schema(extra: Value) -> Value {
    let mut properties = json!({
        "message": { "type": "string" },
        "code": { "type": "integer", "const": 200 },
    });
    let mut required = vec![json!("message"), json!("code")];
    if let Value::Object(extra) = extra {
        for (k, v) in extra {
            required.push(Value::String(k.clone()));
            properties[&k] = v;
        }
    }
    json!({ "type": "object", "properties": properties, "required": required })
}

fn contact_query() -> Value {
    json!({
        "name": "contactId", "in": "query", "required": true,
        "description": "The contact's hyphenated UUID (any case)",
        "schema": { "type": "string", "format": "uuid" }
    })
}

fn body(properties: Value, required: &[&str]) -> Value {
    json!({
        "required": true,
        "content": { "application/json": { "schema": {
            "type": "object", "properties": properties, "required": required
        } } }
    })
}

fn token_property() -> Value {
    json!({
        "description": "The 6-digit code as a string (\"123456\", \"123 456\") or an integer; \
            any other value is answered as a wrong code",
    })
}

fn recovery_code_property() -> Value {
    json!({
        "description": "A recovery code (24 Crockford base32 symbols; case, spaces and hyphens do not \
            matter, O reads as 0, I and L as 1), in place of token; both given is 400. Any other value \
            is answered as a wrong code",
    })
}

/// `{"contactId","token"}`: enable and regenerate (a `recoveryCode` there is 400).
fn token_body() -> Value {
    body(json!({ "contactId": { "type": "string", "format": "uuid" }, "token": token_property() }), &["contactId"])
}

/// `{"contactId","token"}` or `{"contactId","recoveryCode"}`: disable and verify.
fn factor_body() -> Value {
    body(
        json!({
            "contactId": { "type": "string", "format": "uuid" },
            "token": token_property(),
            "recoveryCode": recovery_code_property(),
        }),
        &["contactId"],
    )
}

/// Codes of enable, disable, verify and regenerate.
const ATTEMPT_CODES: &[u16] = &[400, 401, 409, 413, 423, 429, 500];

/// A set of recovery codes, shown once.
fn recovery_codes_schema() -> Value {
    json!({
        "type": "array", "minItems": 10, "maxItems": 10,
        "items": { "type": "string", "pattern": "^[0-9A-HJKMNP-TV-Z]{4}(-[0-9A-HJKMNP-TV-Z]{4}){5}$" },
        "description": "10 recovery codes, shown once (Cache-Control: no-store)",
    })
}

fn attempt(summary: &str, id: &str, message: &str, request: Value, success: Value) -> Value {
    json!({
        "summary": summary,
        "operationId": id,
        "tags": ["2FA"],
        "security": [{ "bearer": [] }],
        "requestBody": request,
        "responses": responses(message_schema(success), ATTEMPT_CODES),
        "x-success-message": message,
    })
}

/// A display text of at most `max` characters: not blank, no control characters (Rust's
/// `char::is_control`: U+0000 to U+001F and U+007F to U+009F).
fn display_text(max: usize, what: &str) -> Value {
    json!({
        "type": "string", "minLength": 1, "maxLength": max,
        "pattern": "^[^\\u0000-\\u001f\\u007f-\\u009f]*[^\\s\\u0000-\\u001f\\u007f-\\u009f][^\\u0000-\\u001f\\u007f-\\u009f]*$",
        "description": what,
    })
}

/// The widget options object (SPEC section 4) as JSON Schema, as far as JSON Schema can say
/// it. What it cannot is named by a `format` (an address of a chain with its checksum, a coin
/// list without duplicates) or stated in a description (a receive address only for a coin in
/// `tokens`, no secret key in any value); the server checks all of it and answers 400 naming
/// each option path.
fn widget_options_schema(target: Target, environment: Environment, widget: &WidgetConfig) -> Value {
    let coins: Vec<&str> = widget.coins().symbols().collect();
    let mut addresses = Map::new();
    for coin in widget.coins().iter() {
        let format = format!("rampart-{}-address", coin.chain.name());
        // The shape JSON Schema can state (so a tool that cannot run the format still tells a
        // mangled address from a valid one); the format adds the network and the checksum.
        let shape = match coin.chain {
            Chain::Ethereum => "^0x[0-9a-fA-F]{40}$",
            _ => "^([1-9A-HJ-NP-Za-km-z]{25,44}|[A-Za-z]{2,5}1[02-9ac-hj-np-zAC-HJ-NP-Z]{6,87})$",
        };
        addresses.insert(
            coin.symbol.clone(),
            json!({ "type": "string", "format": format, "pattern": shape, "description": format!("A {} address of this environment, checksum included", coin.name) }),
        );
    }
    let env = environment.as_str();
    let mut properties = json!({
        "clientName": display_text(MAX_CLIENT_NAME_CHARS, "Shown as the widget's title"),
        "environment": { "type": "string", "enum": [env], "description": "The server's environment; taken from the publishable key when left out" },
        "publicKey": { "type": "string", "pattern": format!("^pk_{env}_[A-Za-z0-9]{{1,128}}$"), "description": "The publishable key; the caller's own is used when neither key is given" },
        "apiKey": { "type": "string", "format": "uuid", "deprecated": true, "description": "Deprecated: the partner id; accepted with a warning" },
        "tokens": { "type": "string", "format": "rampart-coin-list", "description": format!("Comma-delimited coin symbols, lower case, no spaces or duplicates, each one of: {}", coins.join(", ")) },
        "homeScreenMessage": display_text(MAX_HOME_SCREEN_MESSAGE_CHARS, "The loading text"),
        "receiveAddress": {
            "type": "object", "minProperties": 1, "additionalProperties": false, "properties": addresses,
            "description": "Coin symbol -> address; each coin must be in tokens when tokens is given",
        },
        "darkTheme": { "type": "boolean" },
        "currencies": { "type": "string", "enum": ["usd", "eur", "gbp"] },
        "amount": {
            "type": "string", "pattern": "^([5-9]|[1-9][0-9]+)(\\.[0-9]{1,2})?$",
            "description": "A plain decimal of at least 5 in the chosen currency: no sign, exponent, leading zero or more than 2 decimals",
        },
    });
    properties[widget.logo_option()] = json!({ "type": "boolean", "description": "Show the brand's logo" });
    let mut schema = json!({
        "type": "object",
        "maxProperties": MAX_OPTIONS,
        "properties": properties,
        "description": "Widget options (SPEC section 4). Unknown options are accepted with a warning. No value may hold a \
            secret key (sk_...).",
    });
    match target {
        Target::Script => {
            schema["properties"]["targetContainerId"] = json!({
                "type": "string", "minLength": 1, "maxLength": MAX_CONTAINER_ID_CHARS,
                "pattern": "^[^\\s\\u0000-\\u001f\\u007f-\\u009f]+$",
                "description": "The id of the element the widget renders into",
            });
            schema["required"] = json!(["targetContainerId"]);
        }
        Target::Url => {
            schema["properties"]["targetContainerId"] = json!({ "description": "Ignored by URLs, with a warning" });
        }
    }
    schema
}

/// The embedding origins: at most 20 `http(s)://host[:port]`, none twice (SPEC section 6.2).
/// An origin is a named `format` (`rampart-origin`): JSON Schema cannot say which hosts a
/// browser's URL parser takes.
fn origins_schema(environment: Environment) -> Value {
    let schemes = if environment == Environment::Production { "https" } else { "http or https" };
    json!({
        "type": "array", "maxItems": MAX_ORIGINS, "uniqueItems": true,
        "items": {
            "type": "string", "format": "rampart-origin", "maxLength": MAX_ORIGIN_BYTES,
            "description": format!("An origin, {schemes}://host[:port]: no path, query, credentials or wildcard"),
        },
        "description": "Origins allowed to embed the widget, answered canonical (lower case, punycode, default port \
            left out) and never the same origin twice; sandbox also allows any http://localhost and \
            http://127.0.0.1 port without registering it",
    })
}

/// `GET /v1/widget/config?publicKey=`: public, what the widget page needs.
fn widget_config_route() -> Value {
    let nullable_string = json!({ "type": ["string", "null"] });
    json!({
        "summary": "What the widget page needs about a partner (public: no secret)",
        "operationId": "widgetConfig",
        "tags": ["Widget"],
        "security": [],
        "parameters": [{
            "name": "publicKey", "in": "query", "required": true,
            "description": "The partner's publishable key",
            "schema": { "type": "string", "minLength": 1 }
        }],
        "responses": responses(message_schema(json!({
            "partnerName": { "type": "string" },
            "environment": { "type": "string", "enum": ["sandbox", "production"] },
            "approved": { "type": "boolean", "description": "Sandbox widgets need no approval; production ones an operator's" },
            "purchases": { "type": "boolean", "description": "Whether the widget can take orders (sandbox only: no payment provider here)" },
            "widgetText": nullable_string,
            "widgetButtonURL": nullable_string,
            "widgetOrigins": { "type": "array", "items": { "type": "string" } },
            "coins": { "type": "array", "items": {
                "type": "object",
                "properties": { "symbol": { "type": "string" }, "name": { "type": "string" }, "chain": { "type": "string" } },
                "required": ["symbol", "name", "chain"],
            } },
        })), &[400, 404, 500]),
    })
}

/// `GET /widget/`: the page, framed only by the partner's registered origins.
fn widget_page_route() -> Value {
    let html =
        |what: &str| json!({ "description": what, "content": { "text/html": { "schema": { "type": "string" } } } });
    json!({
        "summary": "The widget page a custom URL or the loader's iframe opens; options as the query (SPEC section 4)",
        "operationId": "widgetPage",
        "tags": ["Widget"],
        "security": [],
        "parameters": [{
            "name": "publicKey", "in": "query", "required": true,
            "description": "The partner's publishable key; the page's Content-Security-Policy frame-ancestors lists the \
                partner's registered origins (and, in sandbox, http://localhost:* and http://127.0.0.1:*)",
            "schema": { "type": "string" }
        }],
        "responses": {
            "200": html("The page"),
            "400": html("An explanation: the URL has no publicKey or is not well formed (frame-ancestors 'none')"),
            "404": html("An explanation: no partner of this environment has this key (frame-ancestors 'none')"),
            "500": html("An explanation: the store failed"),
        },
    })
}

/// A static file of the widget.
fn static_route(id: &str, summary: &str, content_type: &str) -> Value {
    json!({
        "summary": summary,
        "operationId": id,
        "tags": ["Widget"],
        "security": [],
        "responses": { "200": { "description": summary, "content": { content_type: { "schema": { "type": "string" } } } } },
    })
}

/// `POST /v1/widget/check`: public, rate-limited per client address.
fn widget_check_route() -> Value {
    let mut answers = responses(
        message_schema(json!({ "valid": { "type": "boolean" }, "errors": widget_issues(),
            "warnings": widget_issues(), "mode": widget_mode(), "options": { "type": ["object", "null"] } })),
        &[400, 404, 413, 429, 500],
    );
    answers["429"]["description"] = json!("Too many requests from this client address; see Retry-After");
    json!({
        "summary": "Check widget options for the widget page (public, rate-limited per client address)",
        "operationId": "widgetCheck",
        "tags": ["Widget"],
        "security": [],
        "parameters": [{ "name": "target", "in": "query", "required": false,
            "description": "url (default) or script (a container id is then required)",
            "schema": { "type": "string", "enum": ["url", "script"] } }],
        "requestBody": widget_body(json!({
            "type": "object", "required": ["publicKey"],
            "properties": { "publicKey": { "type": "string", "minLength": 1, "description": "The partner's publishable key" } },
            "description": "Widget options with the partner's publishable key; the answer is /v1/widget/validate's",
        })),
        "responses": answers,
    })
}

/// A request body of widget options.
fn widget_body(schema: Value) -> Value {
    json!({ "required": true, "content": { "application/json": { "schema": schema } } })
}

/// An issue of the widget validation result.
fn widget_issues() -> Value {
    json!({ "type": "array", "items": {
        "type": "object",
        "properties": {
            "code": { "type": "string" }, "path": { "type": "string" }, "message": { "type": "string" },
            "value": { "type": ["string", "null"] }, "suggestion": { "type": ["string", "null"] },
        },
        "required": ["code", "path", "message"],
    } })
}

fn widget_mode() -> Value {
    json!({ "type": "object", "description": "{\"kind\":\"standard\"|\"oneScreenCheckout\"|\"incomplete\", \"missing\"?}" })
}

/// Codes of the widget routes (400 also carries `errors`, `warnings` and `mode`).
const WIDGET_CODES: &[u16] = &[400, 401, 413, 500];

fn widget_route(summary: &str, id: &str, parameters: Value, body: Value, success: Value) -> Value {
    json!({
        "summary": summary,
        "operationId": id,
        "tags": ["Widget"],
        "security": [{ "bearer": [] }],
        "parameters": parameters,
        "requestBody": widget_body(body),
        "responses": responses(message_schema(success), WIDGET_CODES),
    })
}

/// A widget session's state, as every session route answers it.
fn session_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "signedIn": { "type": "boolean" },
            "email": { "type": ["string", "null"], "description": "The signed-in email, trimmed and lower-cased" },
            "kycPassed": { "type": "boolean" },
            "twoFactor": { "enum": ["none", "setup", "verify", "passed", null],
                "description": "What the contact must do about 2FA before buying; null before sign-in" },
            "mayPurchase": { "type": "boolean" },
            "purchaseHoldUntil": { "type": ["string", "null"], "format": "date-time",
                "description": "RFC 3339 UTC: purchases are on hold until then after a 2FA recovery or reset" },
            "recoveryCodesRemaining": { "type": "integer", "minimum": 0, "maximum": 10 },
            "environment": { "type": "string", "enum": ["sandbox", "production"] },
        },
        "required": ["signedIn", "email", "kycPassed", "twoFactor", "mayPurchase", "purchaseHoldUntil",
            "recoveryCodesRemaining", "environment"],
    })
}

fn order_schema() -> Value {
    let text = json!({ "type": "string" });
    json!({
        "type": "object",
        "properties": {
            "orderId": { "type": "string", "format": "uuid" },
            "contactId": { "type": "string", "format": "uuid" },
            "coin": text, "amount": text, "currency": text, "address": text,
            "price": { "type": "string", "description": "One coin in currency (simulated in sandbox)" },
            "quantity": { "type": "string", "description": "Coins bought, at most 8 decimals" },
            "status": { "type": "string", "enum": ["created", "completed", "failed"] },
            "createdAt": { "type": "integer", "description": "Unix seconds" },
            "updatedAt": { "type": "integer", "description": "Unix seconds" },
        },
        "required": ["orderId", "contactId", "coin", "amount", "currency", "address", "price", "quantity", "status", "createdAt", "updatedAt"],
    })
}

/// A route the widget page calls with its session token.
fn session_route(summary: &str, id: &str, body: Option<Value>, success: Value, codes: &[u16]) -> Value {
    let mut route = json!({
        "summary": summary,
        "operationId": id,
        "tags": ["Widget session"],
        "security": [{ "session": [] }],
        "responses": responses(message_schema(success), codes),
    });
    if let Some(body) = body {
        route["requestBody"] = body;
    }
    route
}

/// The widget's purchase flow (SPEC section 6.3) and the partner's reads of its orders.
fn checkout_paths(environment: Environment, widget: &WidgetConfig) -> Map<String, Value> {
    let session = || json!({ "session": session_schema() });
    let email = json!({ "type": "string", "format": "email", "maxLength": 254 });
    let code = json!({ "type": "string", "pattern": "^[0-9]{6}$", "description": "The 6-digit sign-in code" });
    let totp = json!({ "token": { "description": "The 6-digit authenticator code, as for /v1/auth/verify2fa" } });
    let factor = json!({
        "token": { "description": "The 6-digit authenticator code, as for /v1/auth/verify2fa" },
        "recoveryCode": { "description": "A recovery code in place of token: it turns 2FA off (the way back when \
            the authenticator is lost), answered \"Successfully disbaled 2fa!\"; the purchase hold starts" },
    });
    let coins: Vec<&str> = widget.coins().symbols().collect();
    // The address's rules depend on the coin: one alternative per coin.
    let options = widget_options_schema(Target::Url, environment, widget);
    let per_coin: Vec<Value> = widget
        .coins()
        .iter()
        .map(|coin| {
            json!({ "properties": {
                "coin": { "const": coin.symbol },
                "address": options["properties"]["receiveAddress"]["properties"][&coin.symbol].clone(),
            } })
        })
        .collect();
    let order_body = json!({ "required": true, "content": { "application/json": { "schema": {
        "type": "object",
        "properties": {
            "coin": { "type": "string", "enum": coins },
            "amount": options["properties"]["amount"].clone(),
            "currency": { "enum": ["usd", "eur", "gbp", null], "description": "Default (absent or null) usd" },
            "address": { "type": "string", "description": "A receive address for coin, checksum included" },
        },
        "required": ["coin", "amount", "address"],
        "oneOf": per_coin,
    } } } });
    let sign_in_codes: &[u16] = &[400, 401, 413, 429, 500, 503];
    let two_factor_codes: &[u16] = &[400, 401, 409, 413, 423, 429, 500];
    let mut paths = Map::new();
    paths.insert("/v1/widget/session".into(), json!({
        "post": {
            "summary": "Open a widget session (public, rate-limited per client address)",
            "operationId": "openWidgetSession",
            "tags": ["Widget session"],
            "security": [],
            "requestBody": body(json!({
                "publicKey": { "type": "string", "minLength": 1, "description": "The partner's publishable key" },
                "origin": { "type": ["string", "null"], "description": "The embedding page's origin, from the loader's hello; null at the top level" },
            }), &["publicKey"]),
            "responses": responses(message_schema(json!({
                "token": { "type": "string", "pattern": "^ws_[A-Za-z0-9_-]{43}$", "description": "The bearer token of the session routes; keep it in memory" },
                "idleTimeout": { "type": "integer", "description": "Seconds the session lives after its last use (1800)" },
                "session": session_schema(),
            })), &[400, 403, 404, 413, 429, 500]),
        },
        "get": session_route("Where the session stands", "widgetSession", None, session(), &[401, 500]),
        "delete": session_route("Sign out: the token stops working", "closeWidgetSession", None, json!({}), &[401, 500]),
    }));
    paths.insert(
        "/v1/widget/session/email".into(),
        json!({ "post": session_route(
        "Send a sign-in code (sandbox: answered as sandboxCode; production here: 503, no mail service)",
        "widgetSignInCode",
        Some(body(json!({ "email": email }), &["email"])),
        json!({ "expiresIn": { "type": "integer" }, "sandboxCode": code }),
        sign_in_codes,
    ) }),
    );
    paths.insert(
        "/v1/widget/session/signin".into(),
        json!({ "post": session_route(
        "Sign in with the email's code",
        "widgetSignIn",
        Some(body(json!({ "email": email, "code": code }), &["email", "code"])),
        session(),
        &[400, 401, 413, 500],
    ) }),
    );
    paths.insert(
        "/v1/widget/session/kyc".into(),
        json!({ "post": session_route(
        "Sandbox: mark the signed-in contact as KYC-passed",
        "widgetMarkKyc",
        None,
        session(),
        &[401, 403, 500],
    ) }),
    );
    paths.insert(
        "/v1/widget/session/2fa/create".into(),
        json!({ "post": session_route(
        "Create 2FA for the signed-in contact (Cache-Control: no-store)",
        "widgetCreate2fa",
        None,
        json!({ "qrCode": { "type": "string" }, "manual": { "type": "string" } }),
        &[401, 403, 500],
    ) }),
    );
    paths.insert(
        "/v1/widget/session/2fa/enable".into(),
        json!({ "post": session_route(
        "Enable the created 2FA with a code; the 2FA step is then passed. Answers the 10 recovery codes once \
        (Cache-Control: no-store)",
        "widgetEnable2fa",
        Some(body(totp.clone(), &[])),
        json!({ "session": session_schema(), "recoveryCodes": recovery_codes_schema() }),
        two_factor_codes,
    ) }),
    );
    paths.insert(
        "/v1/widget/session/2fa/verify".into(),
        json!({ "post": session_route(
        "Pass the 2FA step with a code, or turn 2FA off with a recovery code",
        "widgetVerify2fa",
        Some(body(factor, &[])),
        session(),
        two_factor_codes,
    ) }),
    );
    paths.insert(
        "/v1/widget/session/2fa/recoveryCodes".into(),
        json!({ "post": session_route(
        "New recovery codes for the signed-in contact, proven by an authenticator code (Cache-Control: no-store)",
        "widgetRegenerateRecoveryCodes",
        Some(body(totp, &[])),
        json!({ "details": { "type": "object", "properties": { "recoveryCodes": recovery_codes_schema() },
            "required": ["recoveryCodes"] } }),
        two_factor_codes,
    ) }),
    );
    paths.insert(
        "/v1/widget/session/orders".into(),
        json!({ "post": session_route(
        "Buy: sandbox completes at once at a simulated price; production here answers 503",
        "widgetPlaceOrder",
        Some(order_body),
        json!({ "order": order_schema() }),
        &[400, 401, 403, 413, 500, 503],
    ) }),
    );
    paths.insert("/v1/widget/orders/{id}".into(), json!({ "get": {
        "summary": "A widget order of the partner: confirm it server-side",
        "operationId": "widgetOrder",
        "tags": ["Widget orders"],
        "security": [{ "bearer": [] }],
        "parameters": [{ "name": "id", "in": "path", "required": true, "schema": { "type": "string", "format": "uuid" } }],
        "responses": responses(message_schema(json!({ "order": order_schema() })), &[400, 401, 404, 500]),
    } }));
    paths.insert(
        "/v1/widget/orders".into(),
        json!({ "get": {
        "summary": "A contact's widget orders, newest first",
        "operationId": "widgetOrders",
        "tags": ["Widget orders"],
        "security": [{ "bearer": [] }],
        "parameters": [contact_query(),
            { "name": "limit", "in": "query", "required": false, "description": "1 to 100, default 20",
              "schema": { "type": "integer", "minimum": 1, "maximum": rampart_core::checkout::MAX_ORDERS_PAGE } },
            { "name": "after", "in": "query", "required": false, "description": "The previous page's next",
              "schema": { "type": "string", "format": "uuid" } }],
        "responses": responses(message_schema(json!({
            "orders": { "type": "array", "items": order_schema() },
            "next": { "type": ["string", "null"], "description": "after for the next page; null on the last" },
        })), &[400, 401, 404, 500]),
    } }),
    );
    paths.insert(
        "/v1/widget/contacts".into(),
        json!({ "get": {
        "summary": "The contact id of an email that signed in to the widget",
        "operationId": "widgetContact",
        "tags": ["Widget orders"],
        "security": [{ "bearer": [] }],
        "parameters": [{ "name": "email", "in": "query", "required": true, "schema": email }],
        "responses": responses(message_schema(json!({
            "contactId": { "type": "string", "format": "uuid" }, "email": { "type": "string" },
        })), &[400, 401, 404, 500]),
    } }),
    );
    paths
}

/// The document for a server of the sandbox environment with the default widget settings.
pub fn document() -> Value {
    document_for(Environment::Sandbox, &WidgetConfig::default())
}

/// The document for a server of `environment` whose widget routes use `widget`.
pub fn document_for(environment: Environment, widget: &WidgetConfig) -> Value {
    let mut document = base_document(environment, widget);
    if let Some(paths) = document["paths"].as_object_mut() {
        paths.extend(checkout_paths(environment, widget));
        paths.extend(audit_paths());
        paths.extend(webhook_paths());
    }
    document
}

/// `GET /v1/audit` (SPEC 9.1).
fn audit_paths() -> Map<String, Value> {
    let row = json!({
        "type": "object",
        "required": ["seq", "id", "at", "partnerId", "contactId", "actor", "event", "details", "prev", "hash"],
        "properties": {
            "seq": { "type": "integer", "minimum": 1, "description": "Place in the partner's chain: 1, 2, ..." },
            "id": { "type": "string", "format": "uuid" },
            "at": { "type": "string", "format": "date-time", "description": "RFC 3339 UTC, milliseconds" },
            "partnerId": { "type": "string", "format": "uuid" },
            "contactId": { "type": ["string", "null"], "format": "uuid" },
            "actor": { "type": "string", "description": "partner, operator:<name>, contact, member:<id> or system" },
            "event": { "type": "string", "description": "2fa.enabled, kyc.marked, ... (SPEC 9.1)" },
            "details": { "type": "object", "description": "Enums, counts, ids and times only" },
            "prev": { "type": "string", "pattern": "^[0-9a-f]{64}$", "description": "The previous row's hash; 64 zeros for seq 1" },
            "hash": { "type": "string", "pattern": "^[0-9a-f]{64}$",
                "description": "Hex SHA-256 of the RFC 8785 canonical JSON of the other nine members but hash" },
        },
    });
    let mut paths = Map::new();
    paths.insert(
        "/v1/audit".into(),
        json!({ "get": {
        "summary": "The partner's audit trail, oldest first: a hash chain anyone can check",
        "operationId": "auditEvents",
        "tags": ["Audit"],
        "security": [{ "bearer": [] }],
        "parameters": [
            { "name": "contactId", "in": "query", "required": false, "description": "Only the rows about this contact",
              "schema": { "type": "string", "format": "uuid" } },
            { "name": "after", "in": "query", "required": false, "description": "The previous page's next (a seq); default 0",
              "schema": { "type": "integer", "minimum": 0, "maximum": i64::MAX } },
            { "name": "limit", "in": "query", "required": false, "description": "1 to 500, default 100",
              "schema": { "type": "integer", "minimum": 1, "maximum": rampart_core::audit::MAX_PAGE } }],
        "responses": responses(message_schema(json!({
            "events": { "type": "array", "items": row },
            "next": { "type": ["integer", "null"], "description": "after for the next page; null on the last" },
        })), &[400, 401, 404, 500]),
    } }),
    );
    paths
}

/// A 202 with the message id queued.
fn accepted() -> Value {
    let mut r =
        responses(message_schema(json!({ "messageId": { "type": "string", "pattern": "^msg_" } })), &[401, 404, 500]);
    if let Some(ok) = r.as_object_mut().and_then(|r| r.remove("200")) {
        r["202"] = ok;
        r["202"]["description"] = json!("Accepted");
        r["202"]["content"]["application/json"]["schema"]["properties"]["code"] =
            json!({ "type": "integer", "const": 202 });
    }
    r
}

/// The partner's webhook endpoints (SPEC section 10).
fn webhook_paths() -> Map<String, Value> {
    let endpoint = json!({
        "type": "object",
        "required": ["id", "url", "events", "enabled", "createdAt"],
        "properties": {
            "id": { "type": "string", "format": "uuid" },
            "url": { "type": "string", "format": "uri" },
            "events": { "type": "array", "items": { "type": "string", "enum": rampart_core::webhooks::EVENTS } },
            "enabled": { "type": "boolean", "description": "false after a 410 or 5 days of failures" },
            "createdAt": { "type": "string", "format": "date-time" },
        },
    });
    let secret = json!({ "type": "string", "pattern": "^whsec_[A-Za-z0-9+/]{43}=$",
        "description": "The signing secret, shown only in this answer (Cache-Control: no-store)" });
    let id = json!([{ "name": "id", "in": "path", "required": true, "schema": { "type": "string" } }]);
    let mut created = responses(
        message_schema(json!({ "endpoint": endpoint.clone(), "secret": secret.clone() })),
        &[400, 401, 409, 413, 500],
    );
    if let Some(ok) = created.as_object_mut().and_then(|r| r.remove("200")) {
        created["201"] = ok;
        created["201"]["description"] = json!("Created");
        created["201"]["content"]["application/json"]["schema"]["properties"]["code"] =
            json!({ "type": "integer", "const": 201 });
    }
    let mut paths = Map::new();
    paths.insert("/v1/webhooks".into(), json!({
        "post": {
            "summary": "Create a webhook endpoint (at most 10); the secret is shown only here",
            "operationId": "createWebhookEndpoint",
            "tags": ["Webhooks"],
            "security": [{ "bearer": [] }],
            "requestBody": body(json!({
                "url": { "type": "string", "maxLength": 2048, "format": "rampart-webhook-url",
                    "description": "Absolute https URL without credentials whose host resolves only to public addresses \
                        (format rampart-webhook-url)" },
                "events": { "type": "array", "minItems": 1, "items": { "type": "string", "enum": rampart_core::webhooks::EVENTS } },
            }), &["url", "events"]),
            "responses": created,
        },
        "get": {
            "summary": "The partner's webhook endpoints, oldest first (no secrets)",
            "operationId": "webhookEndpoints",
            "tags": ["Webhooks"],
            "security": [{ "bearer": [] }],
            "responses": responses(message_schema(json!({ "endpoints": { "type": "array", "items": endpoint } })), &[401, 500]),
        },
    }));
    paths.insert(
        "/v1/webhooks/{id}".into(),
        json!({ "delete": {
        "summary": "Delete a webhook endpoint",
        "operationId": "deleteWebhookEndpoint",
        "tags": ["Webhooks"],
        "security": [{ "bearer": [] }],
        "parameters": id.clone(),
        "responses": responses(message_schema(json!({})), &[401, 404, 500]),
    } }),
    );
    paths.insert(
        "/v1/webhooks/{id}/test".into(),
        json!({ "post": {
        "summary": "Send a signed webhook.test message to this endpoint, whatever its events",
        "operationId": "testWebhookEndpoint",
        "tags": ["Webhooks"],
        "security": [{ "bearer": [] }],
        "parameters": id.clone(),
        "responses": accepted(),
    } }),
    );
    paths.insert(
        "/v1/webhooks/{id}/deliveries".into(),
        json!({ "get": {
        "summary": "The endpoint's delivery attempts, newest first",
        "operationId": "webhookDeliveries",
        "tags": ["Webhooks"],
        "security": [{ "bearer": [] }],
        "parameters": [
            id[0].clone(),
            { "name": "after", "in": "query", "required": false, "description": "The previous page's next",
              "schema": { "type": "string", "pattern": "^[0-9]{1,19}:msg_[0-9a-f]{32}$" } },
            { "name": "limit", "in": "query", "required": false, "description": "1 to 100, default 20",
              "schema": { "type": "integer", "minimum": 1, "maximum": 100 } }],
        "responses": responses(message_schema(json!({
            "attempts": { "type": "array", "items": { "type": "object",
                "required": ["messageId", "event", "at", "attempt", "status", "error", "latencyMs"],
                "properties": {
                    "messageId": { "type": "string" }, "event": { "type": "string" },
                    "at": { "type": "string", "format": "date-time" }, "attempt": { "type": "integer", "minimum": 1 },
                    "status": { "type": ["integer", "null"] }, "error": { "type": ["string", "null"] },
                    "latencyMs": { "type": "integer" },
                } } },
            "next": { "type": ["string", "null"] },
        })), &[400, 401, 404, 500]),
    } }),
    );
    paths.insert(
        "/v1/webhooks/messages/{id}/resend".into(),
        json!({ "post": {
        "summary": "Send a message again to the endpoints it went to",
        "operationId": "resendWebhookMessage",
        "tags": ["Webhooks"],
        "security": [{ "bearer": [] }],
        "parameters": [{ "name": "id", "in": "path", "required": true, "schema": { "type": "string" } }],
        "responses": accepted(),
    } }),
    );
    paths.insert(
        "/v1/webhooks/{id}/rotate-secret".into(),
        json!({ "post": {
        "summary": "A new signing secret, shown only here; the old one also signs for 24 hours",
        "operationId": "rotateWebhookSecret",
        "tags": ["Webhooks"],
        "security": [{ "bearer": [] }],
        "parameters": id,
        "responses": responses(message_schema(json!({ "secret": secret })), &[401, 404, 500]),
    } }),
    );
    paths
}

fn base_document(environment: Environment, widget: &WidgetConfig) -> Value {
    let nullable_string = json!({ "type": ["string", "null"] });
    let codes_details = json!({ "details": { "type": "object", "properties": { "recoveryCodes": recovery_codes_schema() },
        "required": ["recoveryCodes"] } });
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "Rampart example server",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "TOTP two-factor authentication for a partner's contacts and the partner's \
                widget confirmation-screen settings. Every error body is {\"message\", \"code\"} and the \
                HTTP status equals code. Unknown paths answer 404, wrong methods 405, both as JSON.",
        },
        "components": {
            "securitySchemes": {
                "bearer": {
                    "type": "http", "scheme": "bearer",
                    "description": "A secret key (sk_<environment>_...) or, deprecated, an HS256 JWT \
                        whose sub is the partner id; answers to a JWT carry Deprecation: true",
                },
                "session": {
                    "type": "http", "scheme": "bearer",
                    "description": "A widget session token (ws_...) from POST /v1/widget/session, held in the widget \
                        page's memory; unknown, closed and idle (30 minutes) tokens are 401",
                },
            },
            "schemas": {
                "Error": {
                    "type": "object",
                    "properties": { "message": { "type": "string" }, "code": { "type": "integer" } },
                    "required": ["message", "code"],
                }
            }
        },
        "paths": {
            "/v1/auth/create2fa": { "get": {
                "summary": "Create a pending 2FA secret for a contact",
                "operationId": "create2fa",
                "tags": ["2FA"],
                "security": [{ "bearer": [] }],
                "parameters": [contact_query(), {
                    "name": "twoFactorIssuer", "in": "query", "required": false,
                    "description": "1 to 64 characters without ':' or control characters; empty means the default",
                    "schema": { "type": "string", "maxLength": 64, "pattern": "^[^:\\u0000-\\u001f\\u007f-\\u009f]*$" }
                }],
                "responses": responses(message_schema(json!({
                    "details": {
                        "type": "object",
                        "properties": {
                            "qrCode": { "type": "string", "description": "data:image/png;base64,..." },
                            "manual": { "type": "string", "description": "The secret in unpadded base32" },
                        },
                        "required": ["qrCode", "manual"],
                    }
                })), &[400, 401, 403, 500]),
            } },
            "/v1/auth/enable2fa": { "post": attempt(
                "Confirm the pending secret with a code; answers the 10 recovery codes once (Cache-Control: no-store)",
                "enable2fa", "Successfully enabled 2fa!", token_body(), codes_details.clone()) },
            "/v1/auth/disable2fa": { "post": attempt(
                "Turn 2FA off with an authenticator code or a recovery code (which also starts the purchase hold)",
                "disable2fa", "Successfully disbaled 2fa!", factor_body(), json!({})) },
            "/v1/auth/verify2fa": { "post": attempt(
                "Check an authenticator code or use up a recovery code for a login or purchase (extension)",
                "verify2fa", "2FA token is valid.", factor_body(), json!({
                    "method": { "type": "string", "enum": ["token", "recoveryCode"] },
                    "recoveryCodesRemaining": { "type": "integer", "minimum": 0, "maximum": 10 },
                })) },
            "/v1/auth/recoveryCodes": { "post": attempt(
                "Replace the recovery codes with a new set, proven by an authenticator code (Cache-Control: no-store)",
                "regenerateRecoveryCodes", "Recovery codes regenerated.", token_body(), codes_details) },
            "/v1/auth/2fa": { "get": {
                "summary": "Whether 2FA is enabled for a contact",
                "operationId": "status2fa",
                "tags": ["2FA"],
                "security": [{ "bearer": [] }],
                "parameters": [contact_query()],
                "responses": responses(message_schema(json!({
                    "status": { "type": "boolean" },
                    "recoveryCodesRemaining": { "type": "integer", "minimum": 0, "maximum": 10,
                        "description": "Unused recovery codes (0 when 2FA is off)" },
                })), &[400, 401, 500]),
            } },
            "/v1/users/widgetText": {
                "post": {
                    "summary": "Set the confirmation-screen button text",
                    "operationId": "setWidgetText",
                    "tags": ["Widget settings"],
                    "security": [{ "bearer": [] }],
                    "requestBody": body(json!({ "widgetText": {
                        "type": "string", "minLength": 1, "maxLength": 64,
                        "pattern": "^[^\\u0000-\\u001f\\u007f-\\u009f]*$",
                        "description": "1 to 64 characters without control characters",
                    } }), &["widgetText"]),
                    "responses": responses(message_schema(json!({})), &[400, 401, 413, 500]),
                },
                "get": {
                    "summary": "The confirmation-screen button text",
                    "operationId": "getWidgetText",
                    "tags": ["Widget settings"],
                    "security": [{ "bearer": [] }],
                    "responses": responses(message_schema(json!({ "widgetText": nullable_string })), &[401, 500]),
                },
            },
            "/v1/users/widgetButtonURL": {
                "post": {
                    "summary": "Set the confirmation-screen button URL",
                    "operationId": "setWidgetButtonURL",
                    "tags": ["Widget settings"],
                    "security": [{ "bearer": [] }],
                    "requestBody": body(json!({ "widgetButtonURL": { "type": "string", "format": "uri", "maxLength": 2048 } }), &["widgetButtonURL"]),
                    "responses": responses(message_schema(json!({})), &[400, 401, 413, 500]),
                },
                "get": {
                    "summary": "The confirmation-screen button URL",
                    "operationId": "getWidgetButtonURL",
                    "tags": ["Widget settings"],
                    "security": [{ "bearer": [] }],
                    "responses": responses(message_schema(json!({ "widgetButtonURL": nullable_string })), &[401, 500]),
                },
            },
            "/v1/widget/validate": { "post": widget_route(
                "Check widget options: every error and warning at once (extension)",
                "widgetValidate",
                json!([{ "name": "target", "in": "query", "required": false,
                    "description": "url (default) or script (a container id is then required)",
                    "schema": { "type": "string", "enum": ["url", "script"] } }]),
                json!({ "type": "object", "description": "Any widget options: checking them is what this route does, \
                    so every object is answered 200 with the result" }),
                json!({ "valid": { "type": "boolean" }, "errors": widget_issues(), "warnings": widget_issues(),
                    "mode": widget_mode(), "options": { "type": ["object", "null"] } }),
            ) },
            "/v1/widget/url": { "post": widget_route(
                "The canonical widget URL, optionally signed (extension)",
                "widgetUrl",
                json!([{ "name": "sign", "in": "query", "required": false,
                    "description": "true: sign with the caller's secret key (timestamp and signature parameters)",
                    "schema": { "type": "boolean" } }]),
                widget_options_schema(Target::Url, environment, widget),
                json!({ "url": { "type": "string" }, "signed": { "type": "boolean" },
                    "warnings": widget_issues(), "mode": widget_mode() }),
            ) },
            "/v1/widget/snippet": { "post": widget_route(
                "Script and iframe snippets and the host page's CSP directives (extension)",
                "widgetSnippet",
                json!([{ "name": "nonce", "in": "query", "required": false,
                    "description": "A CSP nonce put on both script elements: 1 to 256 characters of A-Z a-z 0-9 + / = - _",
                    "schema": { "type": "string", "pattern": "^[A-Za-z0-9+/=_-]{1,256}$" } }]),
                widget_options_schema(Target::Script, environment, widget),
                json!({ "script": { "type": "string" }, "iframe": { "type": "string" },
                    "csp": { "type": "object", "properties": { "frameSrc": { "type": "string" }, "scriptSrc": { "type": "string" } } },
                    "warnings": widget_issues(), "mode": widget_mode() }),
            ) },
            "/v1/users/widgetOrigins": {
                "post": {
                    "summary": "Replace the origins allowed to embed the widget",
                    "operationId": "setWidgetOrigins",
                    "tags": ["Widget settings"],
                    "security": [{ "bearer": [] }],
                    "requestBody": body(json!({ "widgetOrigins": origins_schema(environment) }), &["widgetOrigins"]),
                    "responses": responses(message_schema(json!({ "widgetOrigins": origins_schema(environment) })), &[400, 401, 413, 500]),
                },
                "get": {
                    "summary": "The origins allowed to embed the widget",
                    "operationId": "getWidgetOrigins",
                    "tags": ["Widget settings"],
                    "security": [{ "bearer": [] }],
                    "responses": responses(message_schema(json!({ "widgetOrigins": origins_schema(environment) })), &[401, 500]),
                },
            },
            "/v1/widget/check": { "post": widget_check_route() },
            "/v1/widget/config": { "get": widget_config_route() },
            "/widget/": { "get": widget_page_route() },
            "/widget/page.js": { "get": static_route("widgetPageScript", "The widget page's script", "text/javascript") },
            "/widget/page.css": { "get": static_route("widgetPageStyles", "The widget page's styles", "text/css") },
            "/widget/v1/rampart.js": { "get": {
                "summary": "The widget loader (Rampart.render); immutable, loadable with integrity and crossorigin",
                "operationId": "widgetLoader",
                "tags": ["Widget"],
                "security": [],
                "responses": { "200": { "description": "The loader script",
                    "headers": { "Cache-Control": { "schema": { "type": "string", "const": "public, max-age=31536000, immutable" } } },
                    "content": { "text/javascript": { "schema": { "type": "string" } } } } },
            } },
            "/widget/v1/rampart.js.sri": { "get": {
                "summary": "The loader's subresource-integrity value, one line sha384-<base64>",
                "operationId": "widgetLoaderSri",
                "tags": ["Widget"],
                "security": [],
                "responses": { "200": { "description": "sha384-<base64>",
                    "content": { "text/plain": { "schema": { "type": "string", "pattern": "^sha384-[A-Za-z0-9+/]{64}\\n$" } } } } },
            } },
            "/openapi.json": { "get": {
                "summary": "This document",
                "operationId": "openapi",
                "tags": ["Server"],
                "responses": { "200": { "description": "The OpenAPI 3.1 document", "content": { "application/json": {} } } },
            } },
            "/healthz": { "get": {
                "summary": "Whether the store is reachable",
                "operationId": "healthz",
                "tags": ["Server"],
                "responses": responses(message_schema(json!({})), &[503]),
            } },
        }
    })
}
