//! `rampart.Service`: the 2FA lifecycle, partners, widget settings and operator actions over a
//! store. Every call that touches storage runs with the GIL released.

use std::path::PathBuf;
use std::sync::{Arc, PoisonError, RwLock};

use pyo3::prelude::*;
use rampart_core::checkout::OrderRequest;
use rampart_core::{
    AuthMethod, Clock, Config, Environment, Error, ErrorKind, KeyRing, MemoryStore,
    PartnerCredentials as CoreCredentials, PostgresStore, RecoveryCodes, Service as CoreService, SqliteStore, Store,
};

use crate::audit::{AuditPage, ChainReport};
use crate::checkout::{
    Order, OrderPage, SessionState, SignInCode, credential_arg, limit_arg, order_arg, session_arg, sign_in_code_arg,
};
use crate::convert::{
    contact_arg, contact_filter_arg, factor_arg, int_arg, opt_environment_arg, opt_text_arg, origins_arg, partner_arg,
    path_arg, py_repr, seconds_arg, text_arg, token_arg, window_arg,
};
use crate::errors::Raise;
use crate::recovery::{ContactState, PurchaseCheck, Verification};
use crate::widget::{WidgetConfig, config_arg};

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Service>()?;
    m.add_class::<ManualClock>()?;
    m.add_class::<TwoFactorSetup>()?;
    m.add_class::<PartnerCredentials>()?;
    m.add_class::<Partner>()?;
    m.add_class::<Authenticated>()?;
    m.add_class::<RewrapReport>()?;
    Ok(())
}

/// A clock the caller moves by hand (tests, simulations). Shared with the service, so
/// `clock.advance(30)` is seen by the next call.
#[pyclass(frozen, module = "rampart")]
pub(crate) struct ManualClock(Arc<rampart_core::ManualClock>);

#[pymethods]
impl ManualClock {
    #[new]
    #[pyo3(signature = (now = None), text_signature = "(now=0)")]
    fn new(now: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let now = now.map_or(Ok(0), |n| seconds_arg(n, "now"))?;
        Ok(Self(Arc::new(rampart_core::ManualClock::new(now))))
    }

    /// The current Unix time in seconds.
    #[getter]
    fn now(&self) -> u64 {
        self.0.now()
    }

    fn set(&self, now: &Bound<'_, PyAny>) -> PyResult<()> {
        self.0.set(seconds_arg(now, "now")?);
        Ok(())
    }

    /// Move the time forward; never past the largest Unix time (2^64 - 1).
    fn advance(&self, seconds: &Bound<'_, PyAny>) -> PyResult<()> {
        let seconds = seconds_arg(seconds, "seconds")?;
        if self.0.now().checked_add(seconds).is_none() {
            return Err(Error::invalid_input("seconds", "must not move the clock past 18446744073709551615"))
                .or_raise();
        }
        self.0.advance(seconds);
        Ok(())
    }

    fn __repr__(&self) -> String {
        format!("ManualClock(now={})", self.0.now())
    }
}

/// What `create_2fa` hands to the user: show `qr_code` (an `<img src>`) or `manual`.
#[pyclass(frozen, module = "rampart")]
pub(crate) struct TwoFactorSetup {
    #[pyo3(get)]
    qr_code: String,
    #[pyo3(get)]
    manual: String,
    #[pyo3(get)]
    uri: String,
}

#[pymethods]
impl TwoFactorSetup {
    fn __repr__(&self) -> &'static str {
        "TwoFactorSetup(<redacted>)"
    }
}

/// A new partner's (or rotated) keys. The secret key is shown only here; the repr hides it.
#[pyclass(frozen, module = "rampart")]
pub(crate) struct PartnerCredentials {
    #[pyo3(get)]
    partner_id: String,
    #[pyo3(get)]
    secret_key: String,
    #[pyo3(get)]
    publishable_key: String,
    #[pyo3(get)]
    environment: &'static str,
}

impl From<CoreCredentials> for PartnerCredentials {
    fn from(c: CoreCredentials) -> Self {
        Self {
            partner_id: c.partner_id.to_string(),
            secret_key: c.secret_key.expose().to_owned(),
            publishable_key: c.publishable_key,
            environment: c.environment.as_str(),
        }
    }
}

#[pymethods]
impl PartnerCredentials {
    fn __repr__(&self) -> String {
        format!(
            "PartnerCredentials(partner_id='{}', secret_key=<redacted>, publishable_key='{}', environment='{}')",
            self.partner_id, self.publishable_key, self.environment
        )
    }
}

/// A partner as stored (no key material but the publishable key).
#[pyclass(frozen, eq, module = "rampart")]
#[derive(PartialEq)]
pub(crate) struct Partner {
    #[pyo3(get)]
    id: String,
    #[pyo3(get)]
    name: String,
    #[pyo3(get)]
    environment: &'static str,
    #[pyo3(get)]
    publishable_key: String,
    #[pyo3(get)]
    widget_text: Option<String>,
    #[pyo3(get)]
    widget_button_url: Option<String>,
    #[pyo3(get)]
    two_factor_waived: bool,
    /// The origins allowed to embed the widget, canonical (SPEC section 6.2).
    #[pyo3(get)]
    widget_origins: Vec<String>,
    /// An operator approved the production widget (sandbox widgets need no approval).
    #[pyo3(get)]
    widget_approved: bool,
}

fn py_bool(b: bool) -> &'static str {
    if b { "True" } else { "False" }
}

#[pymethods]
impl Partner {
    fn __repr__(&self, py: Python<'_>) -> String {
        format!(
            "Partner(id='{}', name={}, environment='{}', two_factor_waived={}, widget_approved={})",
            self.id,
            py_repr(py, &self.name),
            self.environment,
            py_bool(self.two_factor_waived),
            py_bool(self.widget_approved)
        )
    }
}

/// Who a bearer value authenticated, and how (`"secret_key"` or `"legacy_jwt"`).
#[pyclass(frozen, eq, module = "rampart")]
#[derive(PartialEq)]
pub(crate) struct Authenticated {
    #[pyo3(get)]
    partner_id: String,
    #[pyo3(get)]
    method: &'static str,
}

#[pymethods]
impl Authenticated {
    fn __repr__(&self) -> String {
        format!("Authenticated(partner_id='{}', method='{}')", self.partner_id, self.method)
    }
}

/// What `Service.rewrap_secrets` did: every secret the key ring opens is now sealed under
/// `key_id`; `unopenable` secrets open under no key and were left as they were.
#[pyclass(frozen, eq, module = "rampart")]
#[derive(PartialEq)]
pub(crate) struct RewrapReport {
    #[pyo3(get)]
    key_id: u32,
    #[pyo3(get)]
    examined: u64,
    #[pyo3(get)]
    rewrapped: u64,
    #[pyo3(get)]
    unopenable: u64,
}

#[pymethods]
impl RewrapReport {
    fn __repr__(&self) -> String {
        format!(
            "RewrapReport(key_id={}, examined={}, rewrapped={}, unopenable={})",
            self.key_id, self.examined, self.rewrapped, self.unopenable
        )
    }
}

/// Recovery codes as the plain list that shows them (the one value that ever holds them).
fn code_list(codes: &RecoveryCodes) -> Vec<String> {
    codes.as_slice().to_vec()
}

/// `<db>.key`, beside the database (as the example server and the C ABI do).
fn key_path(db: &std::path::Path) -> PathBuf {
    let mut name = db.as_os_str().to_owned();
    name.push(".key");
    PathBuf::from(name)
}

/// Why a PostgreSQL URL without `master_key` is refused (there is no file to keep a key beside).
const NEEDS_MASTER_KEY: &str =
    "a PostgreSQL database needs master_key: every service sharing it must seal and open secrets with the same key";

/// Where a service keeps its state.
enum Database {
    Memory,
    File(PathBuf),
    /// A `postgres://` or `postgresql://` URL, as given (it may hold a password).
    Postgres(String),
}

impl Database {
    /// `path`: None (memory), a PostgreSQL URL, or else a SQLite file.
    fn from_arg(path: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let Some(path) = path_arg(path, "path")? else { return Ok(Self::Memory) };
        let bytes = path.as_os_str().as_encoded_bytes();
        if !(bytes.starts_with(b"postgres://") || bytes.starts_with(b"postgresql://")) {
            return Ok(Self::File(path));
        }
        let url = path.into_os_string().into_string().map_err(|_| Error::not_unicode("path")).or_raise()?;
        Ok(Self::Postgres(url))
    }

    /// What `repr` and `path` show: the URL never with its password.
    fn place(&self) -> Place {
        match self {
            Self::Memory => Place::Memory,
            Self::File(path) => Place::File(path.clone()),
            Self::Postgres(url) => Place::Postgres(PostgresStore::redact_url(url)),
        }
    }
}

/// A [`Database`] as shown: a PostgreSQL URL without its password and query.
enum Place {
    Memory,
    File(PathBuf),
    Postgres(String),
}

/// Rampart over a SQLite file, a PostgreSQL database shared with other services (a
/// `postgres://` URL), or, with no path, an in-memory store.
///
/// Thread-safe: share one instance between threads. A context manager: leaving the `with`
/// block closes it, after which every call raises `ConfigError`.
#[pyclass(frozen, module = "rampart")]
pub(crate) struct Service {
    inner: RwLock<Option<Arc<CoreService>>>,
    place: Place,
}

impl Service {
    fn get(&self) -> PyResult<Arc<CoreService>> {
        let guard = self.inner.read().unwrap_or_else(PoisonError::into_inner);
        guard.clone().ok_or_else(|| crate::errors::to_py(Error::config("the service is closed")))
    }

    /// Runs `f` on the service with the GIL released.
    fn call<T: Send>(&self, py: Python<'_>, f: impl FnOnce(&CoreService) -> Result<T, Error> + Send) -> PyResult<T> {
        let service = self.get()?;
        py.allow_threads(move || f(&service)).or_raise()
    }
}

#[pymethods]
impl Service {
    // The numbers and texts are read by `convert` (so a bad one is the argument's own 400, not
    // an OverflowError or UnicodeEncodeError); `text_signature` shows the real defaults.
    #[new]
    #[pyo3(
        signature = (
            path = None, *, service_name = None, environment = None, window = None, throttling = true,
            pending_ttl_secs = None, master_key = None, master_key_id = None, jwt_secret = None, clock = None,
            purchase_hold_secs = None
        ),
        text_signature = "(path=None, *, service_name='Rampart', environment='sandbox', window=1, throttling=True, \
                          pending_ttl_secs=600, master_key=None, master_key_id=1, jwt_secret=None, clock=None, \
                          purchase_hold_secs=86400)"
    )]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        path: Option<&Bound<'_, PyAny>>,
        service_name: Option<&Bound<'_, PyAny>>,
        environment: Option<&Bound<'_, PyAny>>,
        window: Option<&Bound<'_, PyAny>>,
        throttling: bool,
        pending_ttl_secs: Option<&Bound<'_, PyAny>>,
        master_key: Option<Vec<u8>>,
        master_key_id: Option<&Bound<'_, PyAny>>,
        jwt_secret: Option<Vec<u8>>,
        clock: Option<&ManualClock>,
        purchase_hold_secs: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let db = Database::from_arg(path)?;
        let service_name = opt_text_arg(service_name, "service_name")?.unwrap_or_else(|| "Rampart".to_owned());
        let environment = opt_environment_arg(environment, "environment")?.unwrap_or(Environment::Sandbox);
        let window = window_arg(window)?;
        let pending_ttl_secs = match pending_ttl_secs {
            Some(t) => int_arg(t, "pending_ttl_secs", 1..=u64::MAX, None)?,
            None => rampart_core::service::DEFAULT_PENDING_TTL_SECS,
        };
        let master_key_id = match master_key_id {
            Some(id) => int_arg(id, "master_key_id", 0..=u64::from(u32::MAX), None)?,
            None => 1,
        };
        let purchase_hold_secs = match purchase_hold_secs {
            // The core's range and message.
            Some(h) => int_arg(
                h,
                "purchase_hold_secs",
                0..=rampart_core::recovery::MAX_HOLD_SECS,
                Some("must be 0 to 604800"),
            )?,
            None => rampart_core::recovery::DEFAULT_HOLD_SECS,
        };
        let config = Config {
            service_name,
            environment,
            window,
            pending_ttl_secs,
            throttling,
            jwt_secret: jwt_secret.map(Into::into),
            purchase_hold_secs,
            ..Config::default()
        };
        let given = match master_key {
            Some(bytes) => {
                let key: &[u8; 32] = bytes
                    .as_slice()
                    .try_into()
                    .map_err(|_| Error::config("master key must be exactly 32 bytes"))
                    .or_raise()?;
                Some(KeyRing::new(master_key_id, key))
            }
            // No file to keep a key beside, and every service on the database needs the same one.
            None if matches!(db, Database::Postgres(_)) => {
                return Err(Error::config(NEEDS_MASTER_KEY)).or_raise();
            }
            None if environment == Environment::Production => {
                return Err(Error::config("production refuses to start without a master key")).or_raise();
            }
            None => None,
        };
        // Check every setting first, so a bad config never creates files or connects.
        CoreService::builder(MemoryStore::new())
            .master_keys(KeyRing::new(0, &[0; 32]))
            .config(config.clone())
            .build()
            .or_raise()?;
        let clock: Option<Arc<dyn Clock>> = clock.map(|c| c.0.clone() as Arc<dyn Clock>);
        let place = db.place();
        // Opening connects (PostgreSQL) or migrates (both): on this plain thread, without the GIL.
        let service = py
            .allow_threads(move || -> Result<CoreService, Error> {
                let (store, keys): (Arc<dyn Store>, KeyRing) = match db {
                    Database::File(db) => {
                        let store = SqliteStore::open(&db)
                            .map_err(|e| Error::config("cannot open the database").with_cause(e))?;
                        let keys = match given {
                            Some(k) => k,
                            None => KeyRing::load_or_generate(&key_path(&db), &store)?,
                        };
                        (Arc::new(store), keys)
                    }
                    Database::Postgres(url) => {
                        let keys = given.ok_or_else(|| Error::config(NEEDS_MASTER_KEY))?;
                        // Unreachable, refusing or failing to migrate: the store failed (`StorageError`).
                        let store =
                            PostgresStore::open(&url).map_err(|e| Error::new(ErrorKind::Internal).with_cause(e))?;
                        (Arc::new(store), keys)
                    }
                    Database::Memory => (
                        Arc::new(MemoryStore::new()),
                        match given {
                            Some(k) => k,
                            None => KeyRing::generate()?,
                        },
                    ),
                };
                let mut builder = CoreService::builder_shared(store).master_keys(keys).config(config);
                if let Some(clock) = clock {
                    builder = builder.clock(clock);
                }
                builder.build()
            })
            .or_raise()?;
        Ok(Self { inner: RwLock::new(Some(Arc::new(service))), place })
    }

    /// The SQLite file, or None for an in-memory or PostgreSQL service.
    #[getter]
    fn path(&self) -> Option<PathBuf> {
        match &self.place {
            Place::File(path) => Some(path.clone()),
            Place::Memory | Place::Postgres(_) => None,
        }
    }

    #[getter]
    fn environment(&self) -> PyResult<&'static str> {
        Ok(self.get()?.config().environment.as_str())
    }

    #[getter]
    fn service_name(&self) -> PyResult<String> {
        Ok(self.get()?.config().service_name.clone())
    }

    #[getter]
    fn window(&self) -> PyResult<u8> {
        Ok(self.get()?.config().window)
    }

    #[getter]
    fn closed(&self) -> bool {
        self.inner.read().unwrap_or_else(PoisonError::into_inner).is_none()
    }

    /// Release the store. Calls already running finish first; later ones raise.
    fn close(&self, py: Python<'_>) {
        let taken = self.inner.write().unwrap_or_else(PoisonError::into_inner).take();
        // Dropping the last reference closes the store's connections: do it without the GIL.
        py.allow_threads(move || drop(taken));
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (exc_type, exc, traceback))]
    fn __exit__(
        &self,
        py: Python<'_>,
        exc_type: &Bound<'_, PyAny>,
        exc: &Bound<'_, PyAny>,
        traceback: &Bound<'_, PyAny>,
    ) -> bool {
        let _ = (exc_type, exc, traceback);
        self.close(py);
        false
    }

    fn __repr__(&self, py: Python<'_>) -> String {
        let place = match &self.place {
            Place::Memory => "memory".to_owned(),
            Place::File(path) => py_repr(py, &path.display().to_string()),
            Place::Postgres(url) => py_repr(py, url),
        };
        match self.inner.read().unwrap_or_else(PoisonError::into_inner).as_ref() {
            Some(s) => format!("Service({place}, environment='{}')", s.config().environment.as_str()),
            None => format!("Service({place}, closed)"),
        }
    }

    /// Whether the store answers.
    fn ping(&self, py: Python<'_>) -> PyResult<()> {
        self.call(py, |s| s.ping())
    }

    // ---- partners ----

    #[pyo3(signature = (name, environment = None))]
    fn create_partner(
        &self,
        py: Python<'_>,
        name: &Bound<'_, PyAny>,
        environment: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PartnerCredentials> {
        let name = text_arg(name, "name")?;
        let env = match opt_environment_arg(environment, "environment")? {
            Some(e) => e,
            None => self.get()?.config().environment,
        };
        self.call(py, move |s| s.create_partner(&name, env)).map(Into::into)
    }

    #[pyo3(signature = (partner_id, *, operator))]
    fn rotate_keys(
        &self,
        py: Python<'_>,
        partner_id: &Bound<'_, PyAny>,
        operator: &Bound<'_, PyAny>,
    ) -> PyResult<PartnerCredentials> {
        let p = partner_arg(partner_id)?;
        let operator = text_arg(operator, "operator")?;
        self.call(py, move |s| s.rotate_keys(&operator, &p)).map(Into::into)
    }

    fn partner(&self, py: Python<'_>, partner_id: &Bound<'_, PyAny>) -> PyResult<Partner> {
        let p = partner_arg(partner_id)?;
        let r = self.call(py, move |s| s.partner(&p))?;
        Ok(Partner {
            id: r.id.to_string(),
            name: r.name,
            environment: r.environment.as_str(),
            publishable_key: r.publishable_key,
            widget_text: r.widget_text,
            widget_button_url: r.widget_button_url,
            two_factor_waived: r.two_factor_waived,
            widget_origins: r.widget_origins,
            widget_approved: r.widget_approved,
        })
    }

    fn partner_count(&self, py: Python<'_>) -> PyResult<u64> {
        self.call(py, |s| s.partner_count())
    }

    /// Authenticate a secret key (or legacy JWT); an `Authorization` header value
    /// (`"Bearer sk_..."`) is accepted too.
    fn authenticate(&self, py: Python<'_>, bearer: &Bound<'_, PyAny>) -> PyResult<Authenticated> {
        // A credential that is not valid Unicode cannot be a key or a JWT: the same answer as a
        // bad one (as in the C ABI), not a 400 that would tell it apart.
        let bearer = match text_arg(bearer, "bearer") {
            Err(e) if e.is_instance_of::<pyo3::exceptions::PyTypeError>(py) => return Err(e),
            Err(_) => return Err(Error::new(ErrorKind::Unauthorized)).or_raise(),
            Ok(b) => b,
        };
        let a = self.call(py, move |s| {
            let value = rampart_core::partner::bearer_token(&bearer).unwrap_or(&bearer);
            s.authenticate(value)
        })?;
        let method = match a.method {
            AuthMethod::SecretKey => "secret_key",
            AuthMethod::LegacyJwt => "legacy_jwt",
        };
        Ok(Authenticated { partner_id: a.partner_id.to_string(), method })
    }

    fn set_widget_text(
        &self,
        py: Python<'_>,
        partner_id: &Bound<'_, PyAny>,
        text: &Bound<'_, PyAny>,
    ) -> PyResult<String> {
        let p = partner_arg(partner_id)?;
        let text = text_arg(text, "text")?;
        self.call(py, move |s| s.set_widget_text(&p, &text))
    }

    fn widget_text(&self, py: Python<'_>, partner_id: &Bound<'_, PyAny>) -> PyResult<Option<String>> {
        let p = partner_arg(partner_id)?;
        self.call(py, move |s| s.widget_text(&p))
    }

    fn set_widget_button_url(
        &self,
        py: Python<'_>,
        partner_id: &Bound<'_, PyAny>,
        url: &Bound<'_, PyAny>,
    ) -> PyResult<String> {
        let p = partner_arg(partner_id)?;
        let url = text_arg(url, "url")?;
        self.call(py, move |s| s.set_widget_button_url(&p, &url))
    }

    fn widget_button_url(&self, py: Python<'_>, partner_id: &Bound<'_, PyAny>) -> PyResult<Option<String>> {
        let p = partner_arg(partner_id)?;
        self.call(py, move |s| s.widget_button_url(&p))
    }

    #[pyo3(signature = (partner_id, waived, *, operator))]
    fn set_2fa_waiver(
        &self,
        py: Python<'_>,
        partner_id: &Bound<'_, PyAny>,
        waived: bool,
        operator: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let p = partner_arg(partner_id)?;
        let operator = text_arg(operator, "operator")?;
        self.call(py, move |s| s.set_2fa_waiver(&operator, &p, waived))
    }

    /// Replace the origins allowed to embed the partner's widget (SPEC section 6.2); returns
    /// them canonical. An empty list removes them all.
    fn set_widget_origins(
        &self,
        py: Python<'_>,
        partner_id: &Bound<'_, PyAny>,
        origins: &Bound<'_, PyAny>,
    ) -> PyResult<Vec<String>> {
        let p = partner_arg(partner_id)?;
        let origins = origins_arg(origins, "origins")?;
        self.call(py, move |s| s.set_widget_origins(&p, &origins))
    }

    fn widget_origins(&self, py: Python<'_>, partner_id: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
        let p = partner_arg(partner_id)?;
        self.call(py, move |s| s.widget_origins(&p))
    }

    /// Approve (or withdraw the approval of) the partner's production widget: an operator
    /// action, audit-logged (`widget.approved` / `widget.unapproved`).
    #[pyo3(signature = (partner_id, approved, *, operator))]
    fn set_widget_approval(
        &self,
        py: Python<'_>,
        partner_id: &Bound<'_, PyAny>,
        approved: bool,
        operator: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let p = partner_arg(partner_id)?;
        let operator = text_arg(operator, "operator")?;
        self.call(py, move |s| s.set_widget_approval(&operator, &p, approved))
    }

    // ---- the 2FA lifecycle ----

    #[pyo3(signature = (partner_id, contact_id, issuer = None, *, label = None))]
    fn create_2fa(
        &self,
        py: Python<'_>,
        partner_id: &Bound<'_, PyAny>,
        contact_id: &Bound<'_, PyAny>,
        issuer: Option<&Bound<'_, PyAny>>,
        label: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<TwoFactorSetup> {
        let (p, c) = (partner_arg(partner_id)?, contact_arg(contact_id)?);
        let (issuer, label) = (opt_text_arg(issuer, "issuer")?, opt_text_arg(label, "label")?);
        let setup = self.call(py, move |s| {
            let label = label.unwrap_or_else(|| c.to_string());
            s.create_2fa_with_label(&p, &c, issuer.as_deref(), &label)
        })?;
        Ok(TwoFactorSetup { qr_code: setup.qr_code.clone(), manual: setup.manual.clone(), uri: setup.uri.clone() })
    }

    /// Enable 2FA with a code from the pending secret. Returns the 10 recovery codes
    /// (`XXXX-XXXX-XXXX-XXXX-XXXX-XXXX`), to show the person once: they are never shown again.
    fn enable_2fa(
        &self,
        py: Python<'_>,
        partner_id: &Bound<'_, PyAny>,
        contact_id: &Bound<'_, PyAny>,
        token: &Bound<'_, PyAny>,
    ) -> PyResult<Vec<String>> {
        let (p, c, t) = (partner_arg(partner_id)?, contact_arg(contact_id)?, token_arg(token));
        self.call(py, move |s| s.enable_2fa(&p, &c, t)).map(|codes| code_list(&codes))
    }

    /// A new set of recovery codes for an authenticator code (the old set stops working).
    /// `ConflictError` `not_enabled` when 2FA is off.
    fn regenerate_recovery_codes(
        &self,
        py: Python<'_>,
        partner_id: &Bound<'_, PyAny>,
        contact_id: &Bound<'_, PyAny>,
        token: &Bound<'_, PyAny>,
    ) -> PyResult<Vec<String>> {
        let (p, c, t) = (partner_arg(partner_id)?, contact_arg(contact_id)?, token_arg(token));
        self.call(py, move |s| s.regenerate_recovery_codes(&p, &c, t)).map(|codes| code_list(&codes))
    }

    /// Turn 2FA off with an authenticator code (`token`) or, keyword only, a `recovery_code`
    /// (which also clears the lock and starts the purchase hold). Both given raise
    /// `InvalidInputError` `factor_conflict`.
    #[pyo3(signature = (partner_id, contact_id, token = None, *, recovery_code = None))]
    fn disable_2fa(
        &self,
        py: Python<'_>,
        partner_id: &Bound<'_, PyAny>,
        contact_id: &Bound<'_, PyAny>,
        token: Option<&Bound<'_, PyAny>>,
        recovery_code: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let (p, c) = (partner_arg(partner_id)?, contact_arg(contact_id)?);
        let factor = factor_arg(token, recovery_code)?;
        self.call(py, move |s| s.disable_2fa(&p, &c, factor))
    }

    fn status_2fa(
        &self,
        py: Python<'_>,
        partner_id: &Bound<'_, PyAny>,
        contact_id: &Bound<'_, PyAny>,
    ) -> PyResult<bool> {
        let (p, c) = (partner_arg(partner_id)?, contact_arg(contact_id)?);
        self.call(py, move |s| s.status_2fa(&p, &c))
    }

    /// Unused recovery codes of the contact (0 when 2FA is off).
    fn recovery_codes_remaining(
        &self,
        py: Python<'_>,
        partner_id: &Bound<'_, PyAny>,
        contact_id: &Bound<'_, PyAny>,
    ) -> PyResult<u32> {
        let (p, c) = (partner_arg(partner_id)?, contact_arg(contact_id)?);
        self.call(py, move |s| s.status_with_recovery_codes(&p, &c)).map(|(_, remaining)| remaining)
    }

    /// Check an authenticator code (`token`) or, keyword only, a `recovery_code` (used up; 2FA
    /// stays on). A `Verification`, truthy only when accepted; a wrong, malformed or replayed
    /// code is a falsy one, not an exception. State, lock, throttle, missing-token and
    /// `factor_conflict` answers raise.
    #[pyo3(signature = (partner_id, contact_id, token = None, *, recovery_code = None))]
    fn verify_2fa(
        &self,
        py: Python<'_>,
        partner_id: &Bound<'_, PyAny>,
        contact_id: &Bound<'_, PyAny>,
        token: Option<&Bound<'_, PyAny>>,
        recovery_code: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Verification> {
        let (p, c) = (partner_arg(partner_id)?, contact_arg(contact_id)?);
        let factor = factor_arg(token, recovery_code)?;
        self.call(py, move |s| s.verify_2fa(&p, &c, factor)).map(Into::into)
    }

    // ---- KYC rule and operator actions ----

    #[pyo3(signature = (partner_id, contact_id, passed, *, operator))]
    fn set_kyc_passed(
        &self,
        py: Python<'_>,
        partner_id: &Bound<'_, PyAny>,
        contact_id: &Bound<'_, PyAny>,
        passed: bool,
        operator: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let (p, c) = (partner_arg(partner_id)?, contact_arg(contact_id)?);
        let operator = text_arg(operator, "operator")?;
        self.call(py, move |s| s.set_kyc_passed(&operator, &p, &c, passed))
    }

    #[pyo3(signature = (partner_id, contact_id, *, operator))]
    fn reset_lock(
        &self,
        py: Python<'_>,
        partner_id: &Bound<'_, PyAny>,
        contact_id: &Bound<'_, PyAny>,
        operator: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let (p, c) = (partner_arg(partner_id)?, contact_arg(contact_id)?);
        let operator = text_arg(operator, "operator")?;
        self.call(py, move |s| s.reset_lock(&operator, &p, &c))
    }

    /// Reset the contact's 2FA: an operator action for a contact who lost the authenticator and
    /// the codes. Erases the secret and recovery codes, clears both counters and the lock,
    /// starts the purchase hold, audits `2fa.reset`. `reason`: 1 to 500 characters. For a
    /// production partner `approved_by` must name another operator (four eyes). Returns the
    /// state before the reset.
    #[pyo3(signature = (partner_id, contact_id, *, operator, reason, approved_by = None))]
    fn reset_2fa(
        &self,
        py: Python<'_>,
        partner_id: &Bound<'_, PyAny>,
        contact_id: &Bound<'_, PyAny>,
        operator: &Bound<'_, PyAny>,
        reason: &Bound<'_, PyAny>,
        approved_by: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<ContactState> {
        let (p, c) = (partner_arg(partner_id)?, contact_arg(contact_id)?);
        let (operator, reason) = (text_arg(operator, "operator")?, text_arg(reason, "reason")?);
        let approved_by = opt_text_arg(approved_by, "approvedBy")?;
        self.call(py, move |s| s.reset_2fa(&operator, &p, &c, &reason, approved_by.as_deref())).map(Into::into)
    }

    /// The contact's 2FA state for support, read-only (never a secret).
    fn contact_state(
        &self,
        py: Python<'_>,
        partner_id: &Bound<'_, PyAny>,
        contact_id: &Bound<'_, PyAny>,
    ) -> PyResult<ContactState> {
        let (p, c) = (partner_arg(partner_id)?, contact_arg(contact_id)?);
        self.call(py, move |s| s.contact_state(&p, &c)).map(Into::into)
    }

    /// Whether the contact may purchase, and why not: truthy only when allowed.
    fn purchase_check(
        &self,
        py: Python<'_>,
        partner_id: &Bound<'_, PyAny>,
        contact_id: &Bound<'_, PyAny>,
    ) -> PyResult<PurchaseCheck> {
        let (p, c) = (partner_arg(partner_id)?, contact_arg(contact_id)?);
        self.call(py, move |s| s.purchase_check(&p, &c)).map(Into::into)
    }

    fn is_2fa_required(
        &self,
        py: Python<'_>,
        partner_id: &Bound<'_, PyAny>,
        contact_id: &Bound<'_, PyAny>,
    ) -> PyResult<bool> {
        let (p, c) = (partner_arg(partner_id)?, contact_arg(contact_id)?);
        self.call(py, move |s| s.is_2fa_required(&p, &c))
    }

    fn may_purchase(
        &self,
        py: Python<'_>,
        partner_id: &Bound<'_, PyAny>,
        contact_id: &Bound<'_, PyAny>,
    ) -> PyResult<bool> {
        let (p, c) = (partner_arg(partner_id)?, contact_arg(contact_id)?);
        self.call(py, move |s| s.may_purchase(&p, &c))
    }

    fn contacts_requiring_2fa(&self, py: Python<'_>, partner_id: &Bound<'_, PyAny>) -> PyResult<Vec<String>> {
        let p = partner_arg(partner_id)?;
        let ids = self.call(py, move |s| s.contacts_requiring_2fa(&p))?;
        Ok(ids.iter().map(ToString::to_string).collect())
    }

    /// Re-seal every stored secret under the newest master key (after a line with a higher
    /// id was added to the key file), so older keys can then be removed: an operator action.
    #[pyo3(signature = (*, operator))]
    fn rewrap_secrets(&self, py: Python<'_>, operator: &Bound<'_, PyAny>) -> PyResult<RewrapReport> {
        let operator = text_arg(operator, "operator")?;
        let r = self.call(py, move |s| s.rewrap_secrets(&operator))?;
        Ok(RewrapReport { key_id: r.key_id, examined: r.examined, rewrapped: r.rewrapped, unopenable: r.unopenable })
    }

    // ---- the widget's purchase flow (SPEC section 6.3) ----

    /// Open a widget session for the partner with this publishable key, embedded by `origin`
    /// (None or "": at the top level). Returns the session's bearer token (`ws_...`, a secret
    /// kept in the widget page's memory) and its state.
    #[pyo3(signature = (publishable_key, origin = None))]
    fn open_session(
        &self,
        py: Python<'_>,
        publishable_key: &Bound<'_, PyAny>,
        origin: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<(String, SessionState)> {
        let key = credential_arg(publishable_key, "publishable_key", ErrorKind::PartnerNotFound)?;
        let origin = opt_text_arg(origin, "origin")?;
        let (token, state) = self.call(py, move |s| s.open_session(&key, origin.as_deref()))?;
        Ok((token.as_str().to_owned(), state.into()))
    }

    /// Where the session stands (restarting its 30-minute idle clock).
    fn session_state(&self, py: Python<'_>, session_token: &Bound<'_, PyAny>) -> PyResult<SessionState> {
        let token = session_arg(session_token)?;
        self.call(py, move |s| s.session_state(&token)).map(Into::into)
    }

    /// Sign out: the token stops working.
    fn close_session(&self, py: Python<'_>, session_token: &Bound<'_, PyAny>) -> PyResult<()> {
        let token = session_arg(session_token)?;
        self.call(py, move |s| s.close_session(&token))
    }

    /// A new 6-digit sign-in code for `email`, usable only by this session; deliver it to the
    /// email's owner.
    fn request_sign_in_code(
        &self,
        py: Python<'_>,
        session_token: &Bound<'_, PyAny>,
        email: &Bound<'_, PyAny>,
    ) -> PyResult<SignInCode> {
        let (token, email) = (session_arg(session_token)?, text_arg(email, "email")?);
        self.call(py, move |s| s.request_sign_in_code(&token, &email)).map(Into::into)
    }

    /// Sign the session in with the code sent to `email`; the email becomes a contact.
    fn sign_in(
        &self,
        py: Python<'_>,
        session_token: &Bound<'_, PyAny>,
        email: &Bound<'_, PyAny>,
        code: &Bound<'_, PyAny>,
    ) -> PyResult<SessionState> {
        let (token, email, code) = (session_arg(session_token)?, text_arg(email, "email")?, sign_in_code_arg(code)?);
        self.call(py, move |s| s.sign_in(&token, &email, &code)).map(Into::into)
    }

    /// Pass the session's 2FA step with a code from the contact's app (a wrong code raises
    /// `AuthenticationError` `token_failed`, as over HTTP), or recover with a `recovery_code`:
    /// that disables 2FA through the session and starts the purchase hold.
    #[pyo3(signature = (session_token, token = None, *, recovery_code = None))]
    fn session_verify_2fa(
        &self,
        py: Python<'_>,
        session_token: &Bound<'_, PyAny>,
        token: Option<&Bound<'_, PyAny>>,
        recovery_code: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<SessionState> {
        let (session, factor) = (session_arg(session_token)?, factor_arg(token, recovery_code)?);
        self.call(py, move |s| s.session_verify_2fa(&session, factor)).map(Into::into)
    }

    /// New recovery codes for the session's contact, proven by an authenticator code.
    fn session_regenerate_recovery_codes(
        &self,
        py: Python<'_>,
        session_token: &Bound<'_, PyAny>,
        token: &Bound<'_, PyAny>,
    ) -> PyResult<Vec<String>> {
        let (session, code) = (session_arg(session_token)?, token_arg(token));
        self.call(py, move |s| s.session_regenerate_recovery_codes(&session, code)).map(|codes| code_list(&codes))
    }

    /// Buy as the signed-in contact. The request is checked as widget options under `config`
    /// (default: `WidgetConfig()`), then the 2FA step; a sandbox order completes at once at a
    /// simulated price, production refuses (503 `purchases_unavailable`).
    #[pyo3(signature = (session_token, *, coin, amount, address, currency = None, config = None))]
    #[allow(clippy::too_many_arguments)]
    fn place_order(
        &self,
        py: Python<'_>,
        session_token: &Bound<'_, PyAny>,
        coin: &Bound<'_, PyAny>,
        amount: &Bound<'_, PyAny>,
        address: &Bound<'_, PyAny>,
        currency: Option<&Bound<'_, PyAny>>,
        config: Option<&WidgetConfig>,
    ) -> PyResult<Order> {
        let token = session_arg(session_token)?;
        let request = OrderRequest {
            coin: text_arg(coin, "coin")?,
            amount: text_arg(amount, "amount")?,
            currency: opt_text_arg(currency, "currency")?.unwrap_or_else(|| "usd".to_owned()),
            address: text_arg(address, "address")?,
        };
        let config = config_arg(config);
        self.call(py, move |s| s.place_order(&token, &request, &config)).map(Into::into)
    }

    /// A partner's order (`NotFoundError` `order_not_found` for an unknown id or another
    /// partner's).
    fn order(&self, py: Python<'_>, partner_id: &Bound<'_, PyAny>, order_id: &Bound<'_, PyAny>) -> PyResult<Order> {
        let (p, id) = (partner_arg(partner_id)?, order_arg(order_id, "order_id")?);
        self.call(py, move |s| s.order(&p, &id)).map(Into::into)
    }

    /// Up to `limit` (1 to 100) orders of a partner's contact, newest first, after the order
    /// `after` (the previous page's `next`).
    #[pyo3(signature = (partner_id, contact_id, after = None, limit = None), text_signature = "($self, partner_id, contact_id, after=None, limit=20)")]
    fn orders(
        &self,
        py: Python<'_>,
        partner_id: &Bound<'_, PyAny>,
        contact_id: &Bound<'_, PyAny>,
        after: Option<&Bound<'_, PyAny>>,
        limit: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<OrderPage> {
        let (p, c) = (partner_arg(partner_id)?, contact_arg(contact_id)?);
        let after = after.filter(|a| !a.is_none()).map(|a| order_arg(a, "after")).transpose()?;
        let limit = limit_arg(limit.filter(|l| !l.is_none()))?;
        self.call(py, move |s| s.orders(&p, &c, after.as_ref(), limit)).map(Into::into)
    }

    /// The contact id of an email that signed in to the partner's widget (`NotFoundError`
    /// `contact_not_found` when it never did).
    fn contact_by_email(
        &self,
        py: Python<'_>,
        partner_id: &Bound<'_, PyAny>,
        email: &Bound<'_, PyAny>,
    ) -> PyResult<String> {
        let (p, email) = (partner_arg(partner_id)?, text_arg(email, "email")?);
        self.call(py, move |s| s.contact_by_email(&p, &email)).map(|c| c.to_string())
    }

    // ---- the audit trail and metrics (SPEC section 9) ----

    /// A page of the partner's audit chain, oldest first: rows with `seq` after `after` (0:
    /// from the start), only those about `contact_id` unless it is None, at most `limit` (1 to
    /// 500). Pass the page's `next` as `after` for the next page.
    #[pyo3(
        signature = (partner_id, contact_id = None, after = None, limit = None),
        text_signature = "($self, partner_id, contact_id=None, after=0, limit=100)"
    )]
    fn audit_events(
        &self,
        py: Python<'_>,
        partner_id: &Bound<'_, PyAny>,
        contact_id: Option<&Bound<'_, PyAny>>,
        after: Option<&Bound<'_, PyAny>>,
        limit: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<AuditPage> {
        let (p, c) = (partner_arg(partner_id)?, contact_filter_arg(contact_id)?);
        // The core's own ranges and messages, for any Python value (a bool, a float, a huge int).
        let after = match after.filter(|a| !a.is_none()) {
            Some(a) => int_arg(a, "after", 0..=i64::MAX as u64, None)?,
            None => 0,
        };
        let limit = match limit.filter(|l| !l.is_none()) {
            Some(l) => int_arg(l, "limit", 1..=rampart_core::audit::MAX_PAGE as u64, None)?,
            None => rampart_core::audit::DEFAULT_PAGE,
        };
        self.call(py, move |s| s.audit_events(&p, c.as_ref(), after, limit)).map(Into::into)
    }

    /// Check the audit chain of one partner, or of every partner (in partner id order): each
    /// row's `seq`, `prev` and `hash`, and the head kept with the partner. A broken chain is a
    /// report (`first_bad_seq`), not an exception.
    #[pyo3(signature = (partner_id = None))]
    fn verify_audit(&self, py: Python<'_>, partner_id: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<ChainReport>> {
        let p = partner_id.filter(|p| !p.is_none()).map(partner_arg).transpose()?;
        let reports = self.call(py, move |s| s.verify_audit(p.as_ref()))?;
        Ok(reports.into_iter().map(Into::into).collect())
    }

    /// This service's metrics as Prometheus text (SPEC section 9.2), to serve on a route of
    /// your own. The counts are this instance's, never shared with another `Service`.
    fn metrics_text(&self, py: Python<'_>) -> PyResult<String> {
        // It may read the store (the audit gauge), so without the GIL.
        self.call(py, |s| Ok(s.metrics_text()))
    }
}
