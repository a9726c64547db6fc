//! The purchase widget: options (plain objects, the spec's camelCase names) -> validation
//! (errors, warnings, mode, canonical URL), URL parsing and signing, snippets and CSP. Problems
//! with options are results; only whole-call failures throw (`code` the reason, `status` 400).
//! Synchronous: pure CPU work of a few microseconds.

use std::sync::{Arc, OnceLock};

use napi::Env;
use napi::bindgen_prelude::*;
use napi_derive::napi;
use rampart_core::Environment;
use rampart_core::widget::{
    self, CheckoutPart, IframeOptions, Issue as CoreIssue, Mode as CoreMode, ParsedUrl as CoreParsedUrl, Target,
    ValidatedOptions, Validation as CoreValidation, WidgetConfig,
};
use serde_json::Value;

use crate::convert::{Arg, Read, environment_arg, time_arg};

/// The rule of `width` and `height`.
const PIXELS: &str = "must be a whole number of pixels from 1 to 4294967295";
use crate::errors::{Failure, Throw};

type Outcome<T> = std::result::Result<T, Failure>;

/// Settings shared by the widget functions; each uses the fields that concern it.
// The shape of the settings object for index.d.ts; `Settings::read` reads it field by field.
#[allow(dead_code)]
#[napi(object)]
#[derive(Debug)]
pub struct WidgetSettings {
    /// `"url"` (default) or `"script"`; `validate` only (snippets and URLs pick their own).
    pub target: Option<String>,
    /// The caller's environment, used when the options carry none.
    pub default_environment: Option<String>,
    /// The widget configuration in the JSON form of the shared vectors (`domain`,
    /// `productionRoot`, `sandboxRoot`, `brand`, `coins`, `minimums`, ...).
    pub config: Option<Value>,
    /// `signUrl`: whole Unix seconds (0 to 2^53 - 1), default now.
    pub timestamp: Option<f64>,
    /// `verifySignedUrl`: the current Unix time (default now) and the longest age (default 600),
    /// whole seconds from 0 to 2^53 - 1.
    pub now: Option<f64>,
    pub max_age: Option<f64>,
    /// `scriptSnippet`: a CSP nonce for the script tag.
    pub nonce: Option<String>,
    /// `iframeSnippet`: size in whole pixels from 1 (default 420 x 550), title and lazy loading.
    pub width: Option<u32>,
    pub height: Option<u32>,
    pub title: Option<String>,
    pub lazy: Option<bool>,
}

/// `WidgetSettings` as read, every field checked.
#[derive(Debug, Default)]
struct Settings {
    target: Option<String>,
    default_environment: Option<String>,
    config: Option<Value>,
    timestamp: Option<u64>,
    now: Option<u64>,
    max_age: Option<u64>,
    nonce: Option<String>,
    width: Option<u32>,
    height: Option<u32>,
    title: Option<String>,
    lazy: Option<bool>,
}

impl Settings {
    /// The settings object read field by field; `undefined`/`null` is every default.
    fn read(value: Option<Unknown<'_>>) -> Read<Self> {
        let Some(o) = Arg::new("settings", value).opt_object()? else { return Ok(Self::default()) };
        // The range fits a u32.
        let size = |field| -> Read<Option<u32>> {
            Ok(o.get(field)?.opt_whole(1, u64::from(u32::MAX), PIXELS)?.map(|n| n as u32))
        };
        Ok(Self {
            target: o.get("target")?.opt_string()?,
            default_environment: o.get("defaultEnvironment")?.opt_string()?,
            config: Some(o.get("config")?.json("config")?).filter(|c| !c.is_null()),
            timestamp: o.get("timestamp")?.opt_seconds()?,
            now: o.get("now")?.opt_seconds()?,
            max_age: o.get("maxAge")?.opt_seconds()?,
            nonce: o.get("nonce")?.opt_string()?,
            width: size("width")?,
            height: size("height")?,
            title: o.get("title")?.opt_string()?,
            lazy: o.get("lazy")?.opt_bool()?,
        })
    }
}

/// One problem in the options: `code` (stable), `path`, `message` (fixed), the offending
/// `value` (keys redacted) and a `suggestion`.
#[napi(object)]
#[derive(Debug)]
pub struct Issue {
    pub code: String,
    pub path: String,
    pub message: String,
    pub value: Option<String>,
    pub suggestion: Option<String>,
    /// `"error"` or `"warning"`.
    pub severity: String,
}

fn issues(list: &[CoreIssue]) -> Vec<Issue> {
    list.iter()
        .map(|i| Issue {
            code: i.code.to_owned(),
            path: i.path.clone(),
            message: i.message.to_owned(),
            value: i.value.clone(),
            suggestion: i.suggestion.clone(),
            severity: match i.severity() {
                widget::Severity::Error => "error".into(),
                widget::Severity::Warning => "warning".into(),
            },
        })
        .collect()
}

/// The widget flow: `kind` is `"standard"`, `"oneScreenCheckout"` or `"incomplete"`, and for
/// `"incomplete"`, `missing` names the part (`"tokens"`, `"receiveAddress"` or `"amount"`).
#[napi(object)]
#[derive(Debug)]
pub struct Mode {
    pub kind: String,
    pub missing: Option<String>,
}

impl From<CoreMode> for Mode {
    fn from(m: CoreMode) -> Self {
        match m {
            CoreMode::Standard => Mode { kind: "standard".into(), missing: None },
            CoreMode::OneScreenCheckout => Mode { kind: "oneScreenCheckout".into(), missing: None },
            CoreMode::Incomplete { missing } => Mode {
                kind: "incomplete".into(),
                missing: Some(
                    match missing {
                        CheckoutPart::Token => "tokens",
                        CheckoutPart::ReceiveAddress => "receiveAddress",
                        CheckoutPart::Amount => "amount",
                    }
                    .into(),
                ),
            },
        }
    }
}

/// The outcome of `validate`: every error and warning, the mode, and when there is no error
/// the validated `options` (script form), `urlOptions` (what a URL carries) and `url`.
#[napi(object)]
#[derive(Debug)]
pub struct Validation {
    pub valid: bool,
    pub errors: Vec<Issue>,
    pub warnings: Vec<Issue>,
    pub mode: Mode,
    pub environment: Option<String>,
    pub options: Option<Value>,
    pub url_options: Option<Value>,
    pub url: Option<String>,
}

fn validation(v: &CoreValidation, config: &WidgetConfig) -> Validation {
    let o = v.options.as_ref();
    Validation {
        valid: v.is_valid(),
        errors: issues(&v.errors),
        warnings: issues(&v.warnings),
        mode: v.mode.into(),
        environment: o.map(|o| o.environment().as_str().to_owned()),
        options: o.map(|o| Value::Object(o.to_json())),
        url_options: o.map(|o| Value::Object(o.url_options())),
        url: o.map(|o| widget::build_url(o, config)),
    }
}

/// A URL read back into options: the root's `environment`, the `options` as carried, parsing
/// `warnings` (historical forms), their `validation` for the URL target, and the `canonical` URL
/// (null when invalid).
#[napi(object)]
#[derive(Debug)]
pub struct ParsedUrl {
    pub environment: String,
    pub options: Value,
    pub warnings: Vec<Issue>,
    pub validation: Validation,
    pub canonical: Option<String>,
}

fn parsed(p: &CoreParsedUrl, config: &WidgetConfig) -> ParsedUrl {
    let v = validation(&p.validate(config), config);
    ParsedUrl {
        environment: p.environment.as_str().to_owned(),
        options: Value::Object(p.options.clone()),
        warnings: issues(&p.warnings),
        canonical: v.url.clone(),
        validation: v,
    }
}

fn default_config() -> Arc<WidgetConfig> {
    static DEFAULT: OnceLock<Arc<WidgetConfig>> = OnceLock::new();
    DEFAULT.get_or_init(|| Arc::new(WidgetConfig::default())).clone()
}

pub(crate) fn config_arg(config: Option<&Value>) -> Outcome<Arc<WidgetConfig>> {
    match config {
        None | Some(Value::Null) => Ok(default_config()),
        Some(json) => WidgetConfig::from_json(json).map(Arc::new).map_err(|e| Failure::widget(e.code(), e.message())),
    }
}

fn hint_arg(s: &Settings) -> Outcome<Option<Environment>> {
    s.default_environment.as_deref().map(environment_arg).transpose().map_err(Failure::from)
}

/// Validates, then the options only when valid: URLs, signatures and snippets come only from
/// validated options.
fn validated(options: &Value, target: Target, s: &Settings, config: &WidgetConfig) -> Outcome<ValidatedOptions> {
    let v = widget::validate_value(options, target, hint_arg(s)?, config);
    v.options.ok_or_else(|| {
        let first = v.errors.first().map_or(String::new(), |i| format!(" ({}: {})", i.path, i.message));
        Failure { message: format!("The widget options have errors{first}."), ..Failure::widget("options_invalid", "") }
    })
}

/// The options object (any JSON value; a non-object is reported as `options_not_object`).
fn options_arg(options: Option<Unknown<'_>>) -> Read<Value> {
    Arg::new("options", options).json("")
}

/// Validates widget options (a plain object with the spec's camelCase names).
#[napi(ts_args_type = "options: Record<string, unknown>, settings?: WidgetSettings | null")]
pub fn validate(env: Env, options: Option<Unknown<'_>>, settings: Option<Unknown<'_>>) -> Result<Validation> {
    let run = || -> Outcome<Validation> {
        let (options, s) = (options_arg(options)?, Settings::read(settings)?);
        let config = config_arg(s.config.as_ref())?;
        let target = match s.target.as_deref() {
            None | Some("url") => Target::Url,
            Some("script") => Target::Script,
            Some(_) => return Err(Failure::widget("target_invalid", "target must be \"url\" or \"script\".")),
        };
        let v = widget::validate_value(&options, target, hint_arg(&s)?, &config);
        Ok(validation(&v, &config))
    };
    run().or_throw(&env)
}

/// The canonical custom URL of the options; throws `options_invalid` when they have errors.
#[napi(ts_args_type = "options: Record<string, unknown>, settings?: WidgetSettings | null")]
pub fn build_url(env: Env, options: Option<Unknown<'_>>, settings: Option<Unknown<'_>>) -> Result<String> {
    let run = || -> Outcome<String> {
        let (options, s) = (options_arg(options)?, Settings::read(settings)?);
        let config = config_arg(s.config.as_ref())?;
        Ok(widget::build_url(&validated(&options, Target::Url, &s, &config)?, &config))
    };
    run().or_throw(&env)
}

/// Reads a custom URL back into options (historical forms accepted with warnings).
#[napi(ts_args_type = "url: string, settings?: WidgetSettings | null")]
pub fn parse_url(env: Env, url: Option<Unknown<'_>>, settings: Option<Unknown<'_>>) -> Result<ParsedUrl> {
    let run = || -> Outcome<ParsedUrl> {
        let (url, s) = (Arg::new("url", url).string()?, Settings::read(settings)?);
        let config = config_arg(s.config.as_ref())?;
        let p = widget::parse_url(&url, &config).map_err(|e| Failure::widget(e.code(), e.message()))?;
        Ok(parsed(&p, &config))
    };
    run().or_throw(&env)
}

/// The canonical URL signed with the partner's secret key at `settings.timestamp` (default now).
#[napi(ts_args_type = "options: Record<string, unknown>, secretKey: string, settings?: WidgetSettings | null")]
pub fn sign_url(
    env: Env,
    options: Option<Unknown<'_>>,
    secret_key: Option<Unknown<'_>>,
    settings: Option<Unknown<'_>>,
) -> Result<String> {
    let run = || -> Outcome<String> {
        let (options, s) = (options_arg(options)?, Settings::read(settings)?);
        let secret_key = Arg::new("secretKey", secret_key).string()?;
        let ts = time_arg(s.timestamp);
        let config = config_arg(s.config.as_ref())?;
        let o = validated(&options, Target::Url, &s, &config)?;
        widget::sign_url(&o, &secret_key, ts, &config).map_err(|e| Failure::widget(e.code(), e.message()))
    };
    run().or_throw(&env)
}

/// Checks a signed URL's signature and age; throws a `RampartError` whose `code` says why it fails.
#[napi(ts_args_type = "url: string, secretKey: string, settings?: WidgetSettings | null")]
pub fn verify_signed_url(
    env: Env,
    url: Option<Unknown<'_>>,
    secret_key: Option<Unknown<'_>>,
    settings: Option<Unknown<'_>>,
) -> Result<ParsedUrl> {
    let run = || -> Outcome<ParsedUrl> {
        let (url, s) = (Arg::new("url", url).string()?, Settings::read(settings)?);
        let secret_key = Arg::new("secretKey", secret_key).string()?;
        let (now, max_age) = (time_arg(s.now), s.max_age.unwrap_or(600));
        let config = config_arg(s.config.as_ref())?;
        let p = widget::verify_signed_url(&url, &secret_key, now, max_age, &config)
            .map_err(|e| Failure::widget(e.code(), e.message()))?;
        Ok(parsed(&p, &config))
    };
    run().or_throw(&env)
}

/// The script snippet (container div, script tag, render call, no-script link).
#[napi(ts_args_type = "options: Record<string, unknown>, settings?: WidgetSettings | null")]
pub fn script_snippet(env: Env, options: Option<Unknown<'_>>, settings: Option<Unknown<'_>>) -> Result<String> {
    let run = || -> Outcome<String> {
        let (options, s) = (options_arg(options)?, Settings::read(settings)?);
        let config = config_arg(s.config.as_ref())?;
        let target = if s.target.as_deref() == Some("url") { Target::Url } else { Target::Script };
        let o = validated(&options, target, &s, &config)?;
        match &s.nonce {
            Some(n) => widget::script_snippet_with_nonce(&o, n, &config),
            None => widget::script_snippet(&o, &config),
        }
        .map_err(|e| Failure::widget(e.code(), e.message()))
    };
    run().or_throw(&env)
}

/// The iframe snippet on the canonical URL (420 x 550 by default).
#[napi(ts_args_type = "options: Record<string, unknown>, settings?: WidgetSettings | null")]
pub fn iframe_snippet(env: Env, options: Option<Unknown<'_>>, settings: Option<Unknown<'_>>) -> Result<String> {
    let run = || -> Outcome<String> {
        let (options, s) = (options_arg(options)?, Settings::read(settings)?);
        let config = config_arg(s.config.as_ref())?;
        let o = validated(&options, Target::Url, &s, &config)?;
        let frame = IframeOptions {
            width: s.width.unwrap_or(420),
            height: s.height.unwrap_or(550),
            title: s.title.clone(),
            lazy: s.lazy.unwrap_or(false),
        };
        Ok(widget::iframe_snippet(&o, &frame, &config))
    };
    run().or_throw(&env)
}

/// What the host page's Content-Security-Policy must allow.
#[napi(object)]
#[derive(Debug)]
pub struct CspDirectives {
    pub frame_src: String,
    pub script_src: String,
    pub header: String,
}

#[napi(ts_args_type = "environment: string, settings?: WidgetSettings | null")]
pub fn csp_directives(
    env: Env,
    environment: Option<Unknown<'_>>,
    settings: Option<Unknown<'_>>,
) -> Result<CspDirectives> {
    let run = || -> Outcome<CspDirectives> {
        let (environment, s) = (Arg::new("environment", environment).string()?, Settings::read(settings)?);
        let config = config_arg(s.config.as_ref())?;
        let d = widget::csp_directives(environment_arg(&environment)?, &config);
        Ok(CspDirectives { header: d.to_header_value(), frame_src: d.frame_src, script_src: d.script_src })
    };
    run().or_throw(&env)
}

/// The outcome of `validateAddress`: `valid`, and either `network` and `kind` (`p2pkh`,
/// `segwit_v0`, `evm`, ...) or `error` (a stable code) and `message`.
#[napi(object)]
#[derive(Debug)]
pub struct AddressCheck {
    pub valid: bool,
    pub chain: String,
    pub network: Option<String>,
    pub kind: Option<String>,
    pub error: Option<String>,
    pub message: Option<String>,
}

/// Checks a receive address for a chain (`bitcoin`, `litecoin`, `ethereum`, `solana`).
#[napi(ts_args_type = "chain: string, address: string, allowTestnet?: boolean | null")]
pub fn validate_address(
    env: Env,
    chain: Option<Unknown<'_>>,
    address: Option<Unknown<'_>>,
    allow_testnet: Option<Unknown<'_>>,
) -> Result<AddressCheck> {
    let args = || -> Outcome<_> {
        let chain = Arg::new("chain", chain).string()?;
        let c = widget::address::Chain::from_name(&chain)
            .ok_or_else(|| Failure::widget("chain_unknown", "chain must be bitcoin, litecoin, ethereum or solana."))?;
        Ok((c, Arg::new("address", address).string()?, Arg::new("allowTestnet", allow_testnet).opt_bool()?))
    };
    let (c, address, allow_testnet) = args().or_throw(&env)?;
    Ok(match widget::address::validate_address(c, &address, allow_testnet.unwrap_or(false)) {
        Ok(info) => AddressCheck {
            valid: true,
            chain: c.name().into(),
            network: Some(info.network.name().into()),
            kind: Some(info.kind.name().into()),
            error: None,
            message: None,
        },
        Err(e) => AddressCheck {
            valid: false,
            chain: c.name().into(),
            network: None,
            kind: None,
            error: Some(e.code().into()),
            message: Some(e.message().into()),
        },
    })
}

// ---- who may embed the widget (SPEC section 6.2) ----

/// The origins checked for a partner of `environment` and made canonical: at most 20, none
/// twice, https only in production; an error names the index
/// (`widgetOrigins[1] must be https in production`).
fn checked_origins(
    field: &'static str,
    origins: Option<Unknown<'_>>,
    environment: Option<Unknown<'_>>,
) -> Read<(Vec<String>, Environment)> {
    let origins = Arg::new(field, origins).origins()?;
    let environment = environment_arg(&Arg::new("environment", environment).string()?)?;
    Ok((widget::origins::check_origins(&origins, environment)?, environment))
}

/// Checks a list of embedding origins for `environment` (`"sandbox"` or `"production"`);
/// returns them canonical (as a browser serialises `event.origin`), in order. Throws
/// `invalid_input` naming the index.
#[napi(ts_args_type = "origins: Array<string>, environment: string")]
pub fn check_origins(env: Env, origins: Option<Unknown<'_>>, environment: Option<Unknown<'_>>) -> Result<Vec<String>> {
    checked_origins("origins", origins, environment).map(|(o, _)| o).or_throw(&env)
}

/// The `Content-Security-Policy` directive the widget page sends for these origins
/// (`frame-ancestors ...`; sandbox adds `http://localhost:*` and `http://127.0.0.1:*`,
/// production with none is `'none'`). The origins are checked first, as `checkOrigins` does,
/// so nothing but origins reaches the header.
#[napi(ts_args_type = "origins: Array<string>, environment: string")]
pub fn frame_ancestors(env: Env, origins: Option<Unknown<'_>>, environment: Option<Unknown<'_>>) -> Result<String> {
    let (origins, environment) = checked_origins("origins", origins, environment).or_throw(&env)?;
    Ok(widget::origins::frame_ancestors(&origins, environment))
}

/// Whether the widget page may talk to a parent page at `origin` (a browser's `event.origin`,
/// compared exactly): one of `registered` (checked and made canonical first), or in sandbox
/// any port of `http://localhost` or `http://127.0.0.1`.
#[napi(ts_args_type = "origin: string, registered: Array<string>, environment: string")]
pub fn origin_allowed(
    env: Env,
    origin: Option<Unknown<'_>>,
    registered: Option<Unknown<'_>>,
    environment: Option<Unknown<'_>>,
) -> Result<bool> {
    let run = || -> Read<bool> {
        let origin = Arg::new("origin", origin).string()?;
        let (registered, environment) = checked_origins("registered", registered, environment)?;
        Ok(widget::origins::origin_allowed(&origin, &registered, environment))
    };
    run().or_throw(&env)
}
