//! The purchase widget: options (a dict or keyword arguments) -> `Validation` (errors,
//! warnings, mode, canonical URL), URL parsing and signing, snippets and CSP directives.
//! Problems with options are results; only whole-call failures raise `WidgetError`.

use std::sync::{Arc, OnceLock};

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString, PyTuple};
use rampart_core::Environment;
use rampart_core::widget::{
    self, CheckoutPart, IframeOptions, Issue as CoreIssue, Mode as CoreMode, ParsedUrl as CoreParsedUrl, Target,
    ValidatedOptions as CoreValidated, Validation as CoreValidation, WidgetConfig as CoreConfig,
};
use serde_json::{Map, Value};

use crate::convert::{
    environment_arg, int_arg, key_text, map_to_dict, opt_environment_arg, opt_text_arg, origins_arg, py_repr,
    seconds_arg, text_arg, time_arg, to_json,
};
use crate::errors::{Raise, signature_error, widget_error};

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<WidgetConfig>()?;
    m.add_class::<Issue>()?;
    m.add_class::<Mode>()?;
    m.add_class::<Validation>()?;
    m.add_class::<ValidatedOptions>()?;
    m.add_class::<ParsedUrl>()?;
    m.add_class::<CspDirectives>()?;
    m.add_class::<AddressCheck>()?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(build_url, m)?)?;
    m.add_function(wrap_pyfunction!(parse_url, m)?)?;
    m.add_function(wrap_pyfunction!(sign_url, m)?)?;
    m.add_function(wrap_pyfunction!(verify_signed_url, m)?)?;
    m.add_function(wrap_pyfunction!(script_snippet, m)?)?;
    m.add_function(wrap_pyfunction!(iframe_snippet, m)?)?;
    m.add_function(wrap_pyfunction!(csp_directives, m)?)?;
    m.add_function(wrap_pyfunction!(validate_address, m)?)?;
    m.add_function(wrap_pyfunction!(check_origins, m)?)?;
    m.add_function(wrap_pyfunction!(frame_ancestors, m)?)?;
    m.add_function(wrap_pyfunction!(origin_allowed, m)?)?;
    Ok(())
}

fn default_config() -> Arc<CoreConfig> {
    static DEFAULT: OnceLock<Arc<CoreConfig>> = OnceLock::new();
    DEFAULT.get_or_init(|| Arc::new(CoreConfig::default())).clone()
}

pub(crate) fn config_arg(config: Option<&WidgetConfig>) -> Arc<CoreConfig> {
    config.map_or_else(default_config, |c| c.0.clone())
}

/// Roots, brand, defaults, coins and minimums of the widget. Every argument is optional and
/// applied over the defaults (the names of `WidgetConfig.from_dict` in snake_case).
#[pyclass(frozen, module = "rampart")]
pub(crate) struct WidgetConfig(Arc<CoreConfig>);

fn config_from_json(json: &Value) -> PyResult<WidgetConfig> {
    CoreConfig::from_json(json).map(|c| WidgetConfig(Arc::new(c))).map_err(|e| widget_error(e.code(), e.message()))
}

#[pymethods]
impl WidgetConfig {
    #[new]
    #[pyo3(signature = (
        *, domain = None, production_root = None, sandbox_root = None, brand = None, default_client_name = None,
        default_home_screen_message = None, coins = None, minimums = None
    ))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        domain: Option<&Bound<'_, PyAny>>,
        production_root: Option<&Bound<'_, PyAny>>,
        sandbox_root: Option<&Bound<'_, PyAny>>,
        brand: Option<&Bound<'_, PyAny>>,
        default_client_name: Option<&Bound<'_, PyAny>>,
        default_home_screen_message: Option<&Bound<'_, PyAny>>,
        coins: Option<&Bound<'_, PyAny>>,
        minimums: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let mut map = Map::new();
        let texts = [
            ("domain", "domain", domain),
            ("productionRoot", "production_root", production_root),
            ("sandboxRoot", "sandbox_root", sandbox_root),
            ("brand", "brand", brand),
            ("defaultClientName", "default_client_name", default_client_name),
            ("defaultHomeScreenMessage", "default_home_screen_message", default_home_screen_message),
        ];
        for (name, arg, value) in texts {
            if let Some(v) = opt_text_arg(value, arg)? {
                map.insert(name.to_owned(), Value::String(v));
            }
        }
        if let Some(c) = coins {
            map.insert("coins".to_owned(), to_json(c, "coins", "coins")?);
        }
        if let Some(m) = minimums {
            map.insert("minimums".to_owned(), to_json(m, "minimums", "minimums")?);
        }
        config_from_json(&Value::Object(map))
    }

    /// From the JSON form the shared test vectors use (`{"domain", "productionRoot", ...}`).
    #[staticmethod]
    fn from_dict(config: &Bound<'_, PyAny>) -> PyResult<Self> {
        config_from_json(&to_json(config, "", "config")?)
    }

    #[getter]
    fn brand(&self) -> &str {
        self.0.brand()
    }

    #[getter]
    fn logo_option(&self) -> &str {
        self.0.logo_option()
    }

    #[getter]
    fn production_root(&self) -> &str {
        self.0.root(Environment::Production).as_str()
    }

    #[getter]
    fn sandbox_root(&self) -> &str {
        self.0.root(Environment::Sandbox).as_str()
    }

    #[getter]
    fn coins(&self) -> Vec<String> {
        self.0.coins().symbols().map(str::to_owned).collect()
    }

    fn __repr__(&self) -> String {
        format!(
            "WidgetConfig(production_root='{}', sandbox_root='{}', brand='{}')",
            self.production_root(),
            self.sandbox_root(),
            self.brand()
        )
    }
}

/// One problem in the options: `code` (stable), `path`, `message` (fixed), the offending
/// `value` (keys redacted) and a `suggestion`.
#[pyclass(frozen, eq, module = "rampart")]
#[derive(PartialEq)]
pub(crate) struct Issue {
    #[pyo3(get)]
    code: String,
    #[pyo3(get)]
    path: String,
    #[pyo3(get)]
    message: String,
    #[pyo3(get)]
    value: Option<String>,
    #[pyo3(get)]
    suggestion: Option<String>,
    #[pyo3(get)]
    severity: &'static str,
}

impl From<&CoreIssue> for Issue {
    fn from(i: &CoreIssue) -> Self {
        Issue {
            code: i.code.to_owned(),
            path: i.path.clone(),
            message: i.message.to_owned(),
            value: i.value.clone(),
            suggestion: i.suggestion.clone(),
            severity: match i.severity() {
                widget::Severity::Error => "error",
                widget::Severity::Warning => "warning",
            },
        }
    }
}

#[pymethods]
impl Issue {
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("code", &self.code)?;
        d.set_item("path", &self.path)?;
        d.set_item("message", &self.message)?;
        d.set_item("value", &self.value)?;
        d.set_item("suggestion", &self.suggestion)?;
        Ok(d)
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        let mut s = format!("Issue(code='{}', path={}", self.code, py_repr(py, &self.path));
        if let Some(v) = &self.value {
            s.push_str(&format!(", value={}", py_repr(py, v)));
        }
        if let Some(v) = &self.suggestion {
            s.push_str(&format!(", suggestion={}", py_repr(py, v)));
        }
        s.push(')');
        s
    }
}

fn issues<'py>(py: Python<'py>, list: &[CoreIssue]) -> PyResult<Bound<'py, PyTuple>> {
    let items: Vec<Issue> = list.iter().map(Issue::from).collect();
    PyTuple::new(py, items)
}

/// The widget flow: `kind` is `"standard"`, `"oneScreenCheckout"` or `"incomplete"`, and for
/// `"incomplete"`, `missing` names the part (`"tokens"`, `"receiveAddress"` or `"amount"`).
#[pyclass(frozen, eq, module = "rampart")]
#[derive(PartialEq)]
pub(crate) struct Mode {
    #[pyo3(get)]
    kind: &'static str,
    #[pyo3(get)]
    missing: Option<&'static str>,
}

impl From<CoreMode> for Mode {
    fn from(m: CoreMode) -> Self {
        match m {
            CoreMode::Standard => Mode { kind: "standard", missing: None },
            CoreMode::OneScreenCheckout => Mode { kind: "oneScreenCheckout", missing: None },
            CoreMode::Incomplete { missing } => Mode {
                kind: "incomplete",
                missing: Some(match missing {
                    CheckoutPart::Token => "tokens",
                    CheckoutPart::ReceiveAddress => "receiveAddress",
                    CheckoutPart::Amount => "amount",
                }),
            },
        }
    }
}

#[pymethods]
impl Mode {
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("kind", self.kind)?;
        if let Some(m) = self.missing {
            d.set_item("missing", m)?;
        }
        Ok(d)
    }

    fn __repr__(&self) -> String {
        match self.missing {
            Some(m) => format!("Mode(kind='{}', missing='{m}')", self.kind),
            None => format!("Mode(kind='{}')", self.kind),
        }
    }
}

/// The outcome of `validate`: every error and warning, the mode, and when there is no error
/// the validated `options` and their canonical `url`.
#[pyclass(frozen, module = "rampart")]
pub(crate) struct Validation {
    inner: CoreValidation,
    config: Arc<CoreConfig>,
}

#[pymethods]
impl Validation {
    #[getter]
    fn errors<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        issues(py, &self.inner.errors)
    }

    #[getter]
    fn warnings<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        issues(py, &self.inner.warnings)
    }

    #[getter]
    fn mode(&self) -> Mode {
        self.inner.mode.into()
    }

    #[getter]
    fn valid(&self) -> bool {
        self.inner.is_valid()
    }

    #[getter]
    fn options(&self) -> Option<ValidatedOptions> {
        self.inner.options.clone().map(|o| ValidatedOptions { inner: o, config: self.config.clone() })
    }

    /// The canonical custom URL, or None when there are errors.
    #[getter]
    fn url(&self) -> Option<String> {
        self.inner.options.as_ref().map(|o| widget::build_url(o, &self.config))
    }

    fn __bool__(&self) -> bool {
        self.inner.is_valid()
    }

    fn __repr__(&self) -> String {
        let codes = |list: &[CoreIssue]| list.iter().map(|i| format!("'{}'", i.code)).collect::<Vec<_>>().join(", ");
        format!(
            "Validation(valid={}, errors=[{}], warnings=[{}], mode={})",
            if self.inner.is_valid() { "True" } else { "False" },
            codes(&self.inner.errors),
            codes(&self.inner.warnings),
            Mode::from(self.inner.mode).__repr__()
        )
    }
}

/// Options that passed validation; URLs, signatures and snippets are made only from these.
#[pyclass(frozen, module = "rampart")]
pub(crate) struct ValidatedOptions {
    inner: CoreValidated,
    config: Arc<CoreConfig>,
}

#[pymethods]
impl ValidatedOptions {
    #[getter]
    fn target(&self) -> &'static str {
        target_name(self.inner.target())
    }

    #[getter]
    fn environment(&self) -> &'static str {
        self.inner.environment().as_str()
    }

    #[getter]
    fn mode(&self) -> Mode {
        self.inner.mode().into()
    }

    /// The options as given (script/JSON form).
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        map_to_dict(py, &self.inner.to_json())
    }

    /// The options a URL carries, as `parse_url` gives them back.
    fn url_options<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        map_to_dict(py, &self.inner.url_options())
    }

    fn url(&self) -> String {
        widget::build_url(&self.inner, &self.config)
    }

    fn __repr__(&self) -> String {
        format!(
            "ValidatedOptions(target='{}', environment='{}', mode={})",
            self.target(),
            self.environment(),
            Mode::from(self.inner.mode()).__repr__()
        )
    }
}

fn target_name(t: Target) -> &'static str {
    match t {
        Target::Url => "url",
        Target::Script => "script",
    }
}

fn target_arg(obj: &Bound<'_, PyAny>) -> PyResult<Target> {
    match text_arg(obj, "target")?.as_str() {
        "url" => Ok(Target::Url),
        "script" => Ok(Target::Script),
        _ => Err(widget_error("target_invalid", "target must be \"url\" or \"script\".")),
    }
}

/// snake_case keyword names to the widget's camelCase option names (`public_key` ->
/// `publicKey`, `show_logo` -> the configured logo option); camelCase passes through.
fn option_name(key: &str, config: &CoreConfig) -> String {
    if key == "show_logo" {
        return config.logo_option().to_owned();
    }
    let mut out = String::with_capacity(key.len());
    let mut upper = false;
    for c in key.chars() {
        if c == '_' && !out.is_empty() {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// Validate widget options, given as a dict (the spec's camelCase names) and/or keyword
/// arguments (camelCase or snake_case). `default_environment` is the caller's environment
/// (for a URL, when the options carry none).
///
/// A str that is not valid Unicode (a lone surrogate) anywhere in the options is an
/// `InvalidInputError` naming its path ("receiveAddress.btc must be valid Unicode text").
#[pyfunction]
#[pyo3(
    signature = (options = None, /, *, target = None, default_environment = None, config = None, **kwargs),
    text_signature = "(options=None, /, *, target='url', default_environment=None, config=None, **kwargs)"
)]
fn validate(
    py: Python<'_>,
    options: Option<&Bound<'_, PyAny>>,
    target: Option<&Bound<'_, PyAny>>,
    default_environment: Option<&Bound<'_, PyAny>>,
    config: Option<&WidgetConfig>,
    kwargs: Option<&Bound<'_, PyDict>>,
) -> PyResult<Validation> {
    let config = config_arg(config);
    let target = target.map_or(Ok(Target::Url), target_arg)?;
    let hint = opt_environment_arg(default_environment, "default_environment")?;
    let mut value = match options {
        Some(o) => to_json(o, "", "options")?,
        None => Value::Object(Map::new()),
    };
    // Keyword options join (and override) the dict's; a non-dict is reported as it is.
    if let (Some(kw), Value::Object(map)) = (kwargs, &mut value) {
        for (k, v) in kw.iter() {
            let key = key_text(k.downcast::<PyString>()?, "", "options")?;
            let name = option_name(&key, &config);
            let json = to_json(&v, &name, "options")?;
            map.insert(name, json);
        }
    }
    let inner = py.allow_threads(|| widget::validate_value(&value, target, hint, &config));
    Ok(Validation { inner, config })
}

/// The canonical custom URL of validated options.
#[pyfunction]
fn build_url(options: &ValidatedOptions) -> String {
    options.url()
}

/// A custom URL read back into options (historical forms accepted with warnings).
#[pyclass(frozen, module = "rampart")]
pub(crate) struct ParsedUrl {
    inner: CoreParsedUrl,
    config: Arc<CoreConfig>,
}

#[pymethods]
impl ParsedUrl {
    #[getter]
    fn options<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        map_to_dict(py, &self.inner.options)
    }

    #[getter]
    fn environment(&self) -> &'static str {
        self.inner.environment.as_str()
    }

    #[getter]
    fn warnings<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        issues(py, &self.inner.warnings)
    }

    /// Validate the options for the URL target in the root's environment (parse warnings first).
    fn validate(&self) -> Validation {
        Validation { inner: self.inner.validate(&self.config), config: self.config.clone() }
    }

    fn __repr__(&self) -> String {
        format!(
            "ParsedUrl(environment='{}', options={}, warnings={})",
            self.environment(),
            self.inner.options.len(),
            self.inner.warnings.len()
        )
    }
}

/// A URL argument: a str that is not valid Unicode cannot be a URL (`url_invalid`, as the C ABI
/// answers bytes that are not UTF-8).
fn url_arg(obj: &Bound<'_, PyAny>) -> PyResult<String> {
    let s = obj.downcast::<PyString>().map_err(|_| pyo3::exceptions::PyTypeError::new_err("url must be a str"))?;
    s.to_str().map(str::to_owned).map_err(|_| {
        let e = widget::UrlError::Invalid;
        widget_error(e.code(), e.message())
    })
}

#[pyfunction]
#[pyo3(signature = (url, *, config = None))]
fn parse_url(url: &Bound<'_, PyAny>, config: Option<&WidgetConfig>) -> PyResult<ParsedUrl> {
    let config = config_arg(config);
    let url = url_arg(url)?;
    let inner = widget::parse_url(&url, &config).map_err(|e| widget_error(e.code(), e.message()))?;
    Ok(ParsedUrl { inner, config })
}

/// The canonical URL signed with the partner's secret key at `timestamp` (default now).
#[pyfunction]
#[pyo3(signature = (options, secret_key, *, timestamp = None))]
fn sign_url(
    options: &ValidatedOptions,
    secret_key: &Bound<'_, PyAny>,
    timestamp: Option<&Bound<'_, PyAny>>,
) -> PyResult<String> {
    let (secret_key, timestamp) = (text_arg(secret_key, "secret_key")?, time_arg(timestamp, "timestamp")?);
    widget::sign_url(&options.inner, &secret_key, timestamp, &options.config)
        .map_err(|e| signature_error(e.code(), e.message()))
}

/// Check a signed URL's signature and age; raises `SignatureError` (`.kind` says why).
#[pyfunction]
#[pyo3(
    signature = (url, secret_key, *, max_age = None, now = None, config = None),
    text_signature = "(url, secret_key, *, max_age=600, now=None, config=None)"
)]
fn verify_signed_url(
    url: &Bound<'_, PyAny>,
    secret_key: &Bound<'_, PyAny>,
    max_age: Option<&Bound<'_, PyAny>>,
    now: Option<&Bound<'_, PyAny>>,
    config: Option<&WidgetConfig>,
) -> PyResult<ParsedUrl> {
    let config = config_arg(config);
    let (url, secret_key) = (url_arg(url)?, text_arg(secret_key, "secret_key")?);
    let max_age = max_age.map_or(Ok(600), |m| seconds_arg(m, "max_age"))?;
    let now = time_arg(now, "now")?;
    let inner = widget::verify_signed_url(&url, &secret_key, now, max_age, &config)
        .map_err(|e| signature_error(e.code(), e.message()))?;
    Ok(ParsedUrl { inner, config })
}

/// The script snippet (container div, script tag, render call, no-script link).
#[pyfunction]
#[pyo3(signature = (options, *, nonce = None))]
fn script_snippet(options: &ValidatedOptions, nonce: Option<&Bound<'_, PyAny>>) -> PyResult<String> {
    match opt_text_arg(nonce, "nonce")? {
        Some(n) => widget::script_snippet_with_nonce(&options.inner, &n, &options.config),
        None => widget::script_snippet(&options.inner, &options.config),
    }
    .map_err(|e| widget_error(e.code(), e.message()))
}

/// The iframe snippet on the canonical URL.
#[pyfunction]
#[pyo3(
    signature = (options, *, width = None, height = None, title = None, lazy = false),
    text_signature = "(options, *, width=420, height=550, title=None, lazy=False)"
)]
fn iframe_snippet(
    options: &ValidatedOptions,
    width: Option<&Bound<'_, PyAny>>,
    height: Option<&Bound<'_, PyAny>>,
    title: Option<&Bound<'_, PyAny>>,
    lazy: bool,
) -> PyResult<String> {
    let size = |obj: Option<&Bound<'_, PyAny>>, name: &str, default: u32| {
        obj.map_or(Ok(default), |o| int_arg::<u32>(o, name, 0..=u64::from(u32::MAX), None))
    };
    let (width, height) = (size(width, "width", 420)?, size(height, "height", 550)?);
    let title = opt_text_arg(title, "title")?;
    Ok(widget::iframe_snippet(&options.inner, &IframeOptions { width, height, title, lazy }, &options.config))
}

/// What the host page's Content-Security-Policy must allow.
#[pyclass(frozen, eq, module = "rampart")]
#[derive(PartialEq)]
pub(crate) struct CspDirectives {
    #[pyo3(get)]
    frame_src: String,
    #[pyo3(get)]
    script_src: String,
    #[pyo3(get)]
    header: String,
}

#[pymethods]
impl CspDirectives {
    fn __repr__(&self) -> String {
        format!("CspDirectives(frame_src='{}', script_src='{}')", self.frame_src, self.script_src)
    }
}

#[pyfunction]
#[pyo3(signature = (environment, *, config = None))]
fn csp_directives(environment: &Bound<'_, PyAny>, config: Option<&WidgetConfig>) -> PyResult<CspDirectives> {
    let d = widget::csp_directives(environment_arg(environment, "environment")?, &config_arg(config));
    Ok(CspDirectives { header: d.to_header_value(), frame_src: d.frame_src, script_src: d.script_src })
}

/// The outcome of `validate_address`: `valid`, and either `network` and `kind`
/// (`p2pkh`, `segwit_v0`, `evm`, ...) or `error` (a stable code) and `message`.
#[pyclass(frozen, eq, module = "rampart")]
#[derive(PartialEq)]
pub(crate) struct AddressCheck {
    #[pyo3(get)]
    valid: bool,
    #[pyo3(get)]
    chain: &'static str,
    #[pyo3(get)]
    network: Option<&'static str>,
    #[pyo3(get)]
    kind: Option<&'static str>,
    #[pyo3(get)]
    error: Option<&'static str>,
    #[pyo3(get)]
    message: Option<&'static str>,
}

#[pymethods]
impl AddressCheck {
    fn __bool__(&self) -> bool {
        self.valid
    }

    fn __repr__(&self) -> String {
        match (self.network, self.kind, self.error) {
            (Some(n), Some(k), _) => {
                format!("AddressCheck(valid=True, chain='{}', network='{n}', kind='{k}')", self.chain)
            }
            (_, _, e) => format!("AddressCheck(valid=False, chain='{}', error='{}')", self.chain, e.unwrap_or("")),
        }
    }
}

/// Check a receive address for a chain (`bitcoin`, `litecoin`, `ethereum`, `solana`).
#[pyfunction]
#[pyo3(signature = (chain, address, *, allow_testnet = false))]
fn validate_address(
    chain: &Bound<'_, PyAny>,
    address: &Bound<'_, PyAny>,
    allow_testnet: bool,
) -> PyResult<AddressCheck> {
    let chain = text_arg(chain, "chain")?;
    let c = widget::address::Chain::from_name(&chain)
        .ok_or_else(|| widget_error("chain_unknown", "chain must be bitcoin, litecoin, ethereum or solana."))?;
    // An address that is not valid Unicode is an address with a bad character (a result, as
    // for any other bad address, and as the C ABI answers bytes that are not UTF-8).
    let s =
        address.downcast::<PyString>().map_err(|_| pyo3::exceptions::PyTypeError::new_err("address must be a str"))?;
    let checked = match s.to_str() {
        Ok(text) => widget::address::validate_address(c, text, allow_testnet),
        Err(_) => Err(widget::address::AddressError::BadCharacter),
    };
    Ok(match checked {
        Ok(info) => AddressCheck {
            valid: true,
            chain: c.name(),
            network: Some(info.network.name()),
            kind: Some(info.kind.name()),
            error: None,
            message: None,
        },
        Err(e) => AddressCheck {
            valid: false,
            chain: c.name(),
            network: None,
            kind: None,
            error: Some(e.code()),
            message: Some(e.message()),
        },
    })
}

// ---- who may embed the widget (SPEC section 6.2) ----

/// The origins checked for a partner of `environment` and made canonical (as a browser
/// serialises `event.origin`): at most 20, none twice, https only in production. Raises
/// `InvalidInputError` naming the index (`widgetOrigins[1] must be https in production`).
fn checked_origins(
    origins: &Bound<'_, PyAny>,
    arg: &str,
    environment: &Bound<'_, PyAny>,
) -> PyResult<(Vec<String>, Environment)> {
    let (origins, environment) = (origins_arg(origins, arg)?, environment_arg(environment, "environment")?);
    Ok((widget::origins::check_origins(&origins, environment).or_raise()?, environment))
}

/// Check a list of embedding origins for `environment`; returns them canonical, in order.
#[pyfunction]
fn check_origins(origins: &Bound<'_, PyAny>, environment: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
    checked_origins(origins, "origins", environment).map(|(o, _)| o)
}

/// The `Content-Security-Policy` directive the widget page sends for these origins
/// (`frame-ancestors ...`; sandbox adds `http://localhost:*` and `http://127.0.0.1:*`,
/// production with none is `'none'`). The origins are checked first, as `check_origins` does,
/// so nothing but origins reaches the header.
#[pyfunction]
fn frame_ancestors(origins: &Bound<'_, PyAny>, environment: &Bound<'_, PyAny>) -> PyResult<String> {
    let (origins, environment) = checked_origins(origins, "origins", environment)?;
    Ok(widget::origins::frame_ancestors(&origins, environment))
}

/// Whether the widget page may talk to a parent page at `origin` (a browser's `event.origin`,
/// compared exactly): one of `registered` (checked and made canonical first), or in sandbox any
/// port of `http://localhost` or `http://127.0.0.1`.
#[pyfunction]
fn origin_allowed(
    origin: &Bound<'_, PyAny>,
    registered: &Bound<'_, PyAny>,
    environment: &Bound<'_, PyAny>,
) -> PyResult<bool> {
    let origin = text_arg(origin, "origin")?;
    let (registered, environment) = checked_origins(registered, "registered", environment)?;
    Ok(widget::origins::origin_allowed(&origin, &registered, environment))
}
