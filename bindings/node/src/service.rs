//! `Service`: the 2FA lifecycle, partners, widget settings and operator actions over a store.
//! Every method that touches storage returns a Promise whose work runs on the libuv pool.

use std::path::{Path, PathBuf};
use std::sync::{Arc, PoisonError, RwLock};

use napi::bindgen_prelude::*;
use napi::{Env, Task};
use napi_derive::napi;
use rampart_core::{
    AuthMethod, Clock, Config, Environment, Error as CoreError, ErrorKind, KeyRing, MemoryStore, PostgresStore,
    Service as CoreService, SqliteStore, Store,
};

use crate::audit::{AuditPage, ChainReport, audit_query, opt_partner_arg};
use crate::checkout::{
    OpenedSession, Order, OrderPage, SessionState, SignInCode, order_arg, order_request, orders_options,
    publishable_key_arg, session_arg,
};
use crate::convert::{Arg, MAX_SAFE, Read, SECONDS, cast, contact_arg, environment_arg, partner_arg};
use crate::errors::{Failure, Throw};
use crate::recovery::{ContactState, PurchaseCheck, Verified, code_list, verified};
use crate::widget::config_arg;

/// `Debug` that names the type and shows nothing else: these hold secrets, handles or closures.
macro_rules! opaque_debug {
    ($($t:ident),*) => {$(
        impl std::fmt::Debug for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(concat!(stringify!($t), "(<redacted>)"))
            }
        }
    )*};
}
pub(crate) use opaque_debug;

opaque_debug!(ManualClock, ServiceOptions, TwoFactorSetup, PartnerCredentials, Service);

impl<T> std::fmt::Debug for Call<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Call")
    }
}

type Work<T> = Box<dyn FnOnce(&CoreService) -> std::result::Result<T, CoreError> + Send>;

/// One storage call, run on the libuv pool. A bad argument or a closed service is carried in as
/// a failure, so the Promise rejects rather than the call throwing.
pub struct Call<T> {
    service: Option<Arc<CoreService>>,
    work: Option<Work<T>>,
    failure: Option<Failure>,
}

impl<T> Call<T> {
    fn failed(f: impl Into<Failure>) -> Self {
        Self { service: None, work: None, failure: Some(f.into()) }
    }
}

impl<T: ToNapiValue + TypeName + Send + 'static> Task for Call<T> {
    type Output = T;
    type JsValue = T;

    fn compute(&mut self) -> Result<T> {
        if self.failure.is_none()
            && let (Some(service), Some(work)) = (self.service.take(), self.work.take())
        {
            match work(&service) {
                Ok(v) => return Ok(v),
                Err(e) => self.failure = Some(e.into()),
            }
        }
        let message = self.failure.as_ref().map_or_else(String::new, |f| f.message.clone());
        Err(napi::Error::new(Status::GenericFailure, message))
    }

    fn resolve(&mut self, _env: Env, output: T) -> Result<T> {
        Ok(output)
    }

    fn reject(&mut self, env: Env, err: napi::Error) -> Result<T> {
        match self.failure.take() {
            Some(f) => Err(f.into_js(&env)),
            None => Err(err),
        }
    }
}

/// A clock the caller moves by hand (tests, simulations). Shared with the service, so
/// `clock.advance(30)` is seen by the next call.
#[napi]
pub struct ManualClock {
    inner: Arc<rampart_core::ManualClock>,
}

/// A clock time or step in whole seconds, 0 to 2^53 - 1 (what a JS number holds exactly).
fn clock_arg(field: &'static str, value: Option<Unknown<'_>>) -> Read<u64> {
    Arg::new(field, value).whole(0, MAX_SAFE, SECONDS)
}

#[napi]
impl ManualClock {
    /// Starts at `now` (whole Unix seconds), default 0.
    #[napi(constructor, ts_args_type = "now?: number")]
    pub fn new(env: Env, now: Option<Unknown<'_>>) -> Result<Self> {
        let now = Arg::new("now", now).opt_whole(0, MAX_SAFE, SECONDS).or_throw(&env)?.unwrap_or(0);
        Ok(Self { inner: Arc::new(rampart_core::ManualClock::new(now)) })
    }

    /// The current Unix time in seconds.
    #[napi(getter)]
    pub fn now(&self) -> f64 {
        self.inner.now() as f64
    }

    #[napi(ts_args_type = "now: number")]
    pub fn set(&self, env: Env, now: Option<Unknown<'_>>) -> Result<()> {
        self.inner.set(clock_arg("now", now).or_throw(&env)?);
        Ok(())
    }

    /// Moves the clock forward; the new time stays within 2^53 - 1.
    #[napi(ts_args_type = "seconds: number")]
    pub fn advance(&self, env: Env, seconds: Option<Unknown<'_>>) -> Result<()> {
        let room = MAX_SAFE - self.inner.now().min(MAX_SAFE);
        let rule = format!("must be a whole number of seconds from 0 to {room}");
        self.inner.advance(Arg::new("seconds", seconds).whole(0, room, &rule).or_throw(&env)?);
        Ok(())
    }
}

/// Settings of a `Service`; every field is optional.
#[napi(object)]
pub struct ServiceOptions {
    /// Names the default issuer (`Rampart` gives `Rampart2FA`).
    pub service_name: Option<String>,
    /// `"sandbox"` (default) or `"production"` (which needs `masterKey`).
    pub environment: Option<String>,
    /// Steps either side accepted: 0, 1 (default) or 2.
    pub window: Option<u32>,
    /// Failed-attempt throttling (default true).
    pub throttling: Option<bool>,
    /// How long a created secret may be enabled, in whole seconds from 1 to 4294967295
    /// (default 600).
    pub pending_ttl_secs: Option<u32>,
    /// 32 bytes; default a key generated into `<path>.key` (or in memory). Required for a
    /// PostgreSQL URL: every service sharing the database needs the same key.
    pub master_key: Option<Buffer>,
    /// The id of `masterKey`, 0 to 4294967295 (default 1).
    pub master_key_id: Option<u32>,
    /// HS256 secret for legacy partner JWTs.
    pub jwt_secret: Option<Buffer>,
    /// Seconds a contact may not purchase after a disable by recovery code or an operator reset,
    /// 0 to 604800 (default 86400).
    pub purchase_hold_secs: Option<u32>,
}

/// What `create2fa` hands to the user: show `qrCode` (an `<img src>`) or `manual`.
#[napi(object)]
pub struct TwoFactorSetup {
    pub qr_code: String,
    pub manual: String,
    pub uri: String,
}

/// A new partner's (or rotated) keys. The secret key is shown only here.
#[napi(object)]
pub struct PartnerCredentials {
    pub partner_id: String,
    pub secret_key: String,
    pub publishable_key: String,
    pub environment: String,
}

impl From<rampart_core::PartnerCredentials> for PartnerCredentials {
    fn from(c: rampart_core::PartnerCredentials) -> Self {
        Self {
            partner_id: c.partner_id.to_string(),
            secret_key: c.secret_key.expose().to_owned(),
            publishable_key: c.publishable_key,
            environment: c.environment.as_str().to_owned(),
        }
    }
}

/// A partner as stored (no key material but the publishable key).
#[napi(object)]
#[derive(Debug)]
pub struct Partner {
    pub id: String,
    pub name: String,
    pub environment: String,
    pub publishable_key: String,
    pub widget_text: Option<String>,
    pub widget_button_url: Option<String>,
    pub two_factor_waived: bool,
    /// The origins allowed to embed the widget, canonical (SPEC section 6.2).
    pub widget_origins: Vec<String>,
    /// An operator approved the production widget (sandbox widgets need no approval).
    pub widget_approved: bool,
}

/// Who a bearer value authenticated, and how (`"secretKey"` or `"legacyJwt"`).
#[napi(object)]
#[derive(Debug)]
pub struct Authenticated {
    pub partner_id: String,
    pub method: String,
}

/// What `rewrapSecrets` did: every secret the key ring opens is now sealed under `keyId`;
/// `unopenable` secrets open under no key and were left as they were.
#[napi(object)]
#[derive(Debug)]
pub struct RewrapReport {
    pub key_id: u32,
    pub examined: f64,
    pub rewrapped: f64,
    pub unopenable: f64,
}

/// The `clock` argument: a `ManualClock`, or none for the system clock.
fn clock_of(env: &Env, value: Option<Unknown<'_>>) -> Read<Option<Arc<dyn Clock>>> {
    let wrong = || CoreError::invalid_input("clock", "must be a ManualClock");
    let Some(value) = value else { return Ok(None) };
    match value.get_type().map_err(|_| wrong())? {
        napi::ValueType::Undefined | napi::ValueType::Null => Ok(None),
        napi::ValueType::Object if ManualClock::instance_of(env, &value).unwrap_or(false) => {
            // The conversion checks the wrapped class itself, not only the prototype chain.
            let clock: ClassInstance<'_, ManualClock> = cast(value).map_err(|_| wrong())?;
            Ok(Some(clock.inner.clone() as Arc<dyn Clock>))
        }
        _ => Err(wrong()),
    }
}

/// `<db>.key`, beside the database (as the example server and the C ABI do).
fn key_path(db: &Path) -> PathBuf {
    let mut name = db.as_os_str().to_owned();
    name.push(".key");
    PathBuf::from(name)
}

/// A `postgres://` or `postgresql://` URL, not a file name.
fn is_postgres_url(path: &str) -> bool {
    path.starts_with("postgres://") || path.starts_with("postgresql://")
}

/// Why a PostgreSQL URL without `masterKey` is refused (there is no file to keep a key beside).
const NEEDS_MASTER_KEY: &str =
    "a PostgreSQL database needs masterKey: every service sharing it must seal and open secrets with the same key";

/// Rampart over a SQLite file, a PostgreSQL database other services share (a `postgres://`
/// URL), or, with no path, an in-memory store. One instance may serve any number of concurrent
/// calls.
// Threads: the PostgreSQL client panics on a thread that runs async (tokio) tasks. The
// constructor runs on the JS thread and every storage call on the libuv pool (`AsyncTask`,
// never a napi `async fn`, which would run on napi's tokio runtime); the store closes its
// connections on a thread of its own when dropped.
#[napi]
pub struct Service {
    inner: RwLock<Option<Arc<CoreService>>>,
    /// The SQLite file; `None` in memory and for PostgreSQL (whose URL may hold a password).
    path: Option<String>,
}

impl Service {
    fn get(&self) -> std::result::Result<Arc<CoreService>, CoreError> {
        let guard = self.inner.read().unwrap_or_else(PoisonError::into_inner);
        guard.clone().ok_or_else(|| CoreError::config("the service is closed"))
    }

    /// Schedules `f` on the pool, or a rejection if the service is closed.
    fn call<T>(
        &self,
        f: impl FnOnce(&CoreService) -> std::result::Result<T, CoreError> + Send + 'static,
    ) -> AsyncTask<Call<T>>
    where
        T: ToNapiValue + TypeName + Send + 'static,
    {
        AsyncTask::new(match self.get() {
            Ok(service) => Call { service: Some(service), work: Some(Box::new(f)), failure: None },
            Err(e) => Call::failed(e),
        })
    }

    /// Like `call`, after the arguments parsed.
    fn call_with<A, T>(
        &self,
        args: Read<A>,
        f: impl FnOnce(&CoreService, A) -> std::result::Result<T, CoreError> + Send + 'static,
    ) -> AsyncTask<Call<T>>
    where
        A: Send + 'static,
        T: ToNapiValue + TypeName + Send + 'static,
    {
        match args {
            Ok(a) => self.call(move |s| f(s, a)),
            Err(e) => AsyncTask::new(Call::failed(e)),
        }
    }
}

type JsArg<'a> = Option<Unknown<'a>>;

fn ids(partner_id: JsArg<'_>, contact_id: JsArg<'_>) -> Read<(rampart_core::PartnerId, rampart_core::ContactId)> {
    Ok((partner_arg(partner_id)?, contact_arg(contact_id)?))
}

/// A partner id and one required string (an operator, a setting's value).
fn partner_and(
    partner_id: JsArg<'_>,
    field: &'static str,
    value: JsArg<'_>,
) -> Read<(rampart_core::PartnerId, String)> {
    Ok((partner_arg(partner_id)?, Arg::new(field, value).string()?))
}

/// Disable's and verify's three arguments; the factor is a token (SPEC section 2's grammar) or a
/// `{ token }` / `{ recoveryCode }` object (section 8.1).
fn ids_factor(
    partner_id: JsArg<'_>,
    contact_id: JsArg<'_>,
    factor: JsArg<'_>,
) -> Read<(rampart_core::PartnerId, rampart_core::ContactId, rampart_core::Factor)> {
    let (p, c) = ids(partner_id, contact_id)?;
    Ok((p, c, Arg::new("token", factor).factor()?))
}

/// The lifecycle's three arguments; the token follows SPEC section 2's grammar.
fn ids_token(
    partner_id: JsArg<'_>,
    contact_id: JsArg<'_>,
    token: JsArg<'_>,
) -> Read<(rampart_core::PartnerId, rampart_core::ContactId, rampart_core::Token)> {
    let (p, c) = ids(partner_id, contact_id)?;
    Ok((p, c, Arg::new("token", token).token()?))
}

/// `Service` options read from a plain object; a wrong type names the field.
fn service_options(arg: Arg<'_>) -> Read<ServiceOptions> {
    let Some(o) = arg.opt_object()? else {
        return Ok(ServiceOptions {
            service_name: None,
            environment: None,
            window: None,
            throttling: None,
            pending_ttl_secs: None,
            master_key: None,
            master_key_id: None,
            jwt_secret: None,
            purchase_hold_secs: None,
        });
    };
    let u32_max = u64::from(u32::MAX);
    let whole = |field, min, max, rule| -> Read<Option<u32>> {
        // Every `max` here fits a u32.
        Ok(o.get(field)?.opt_whole(min, max, rule)?.map(|n| n as u32))
    };
    Ok(ServiceOptions {
        service_name: o.get("serviceName")?.opt_string()?,
        environment: o.get("environment")?.opt_string()?,
        window: whole("window", 0, u64::from(rampart_core::totp::MAX_WINDOW), "must be 0, 1 or 2")?,
        throttling: o.get("throttling")?.opt_bool()?,
        pending_ttl_secs: whole(
            "pendingTtlSecs",
            1,
            u32_max,
            "must be a whole number of seconds from 1 to 4294967295",
        )?,
        master_key: o.get("masterKey")?.opt_bytes()?.map(Buffer::from),
        master_key_id: whole("masterKeyId", 0, u32_max, "must be a whole number from 0 to 4294967295")?,
        jwt_secret: o.get("jwtSecret")?.opt_bytes()?.map(Buffer::from),
        purchase_hold_secs: whole(
            "purchaseHoldSecs",
            0,
            rampart_core::recovery::MAX_HOLD_SECS,
            "must be a whole number of seconds from 0 to 604800",
        )?,
    })
}

#[napi]
impl Service {
    /// Opens (creating if needed) the SQLite file at `path`, or connects to and migrates the
    /// PostgreSQL database a `postgres://` or `postgresql://` URL names, which needs
    /// `options.masterKey` (the same in every service sharing it). A TCP host is reached over
    /// TLS that verifies its certificate (the system's CAs, or the file `sslrootcert=PATH`
    /// names) unless the URL says `sslmode=disable`; a database that cannot be reached throws
    /// `internal` (500), never showing the URL. No path means an in-memory store.
    #[napi(
        constructor,
        ts_args_type = "path?: string | null, options?: ServiceOptions | null, clock?: ManualClock | null"
    )]
    pub fn new(
        env: Env,
        path: Option<Unknown<'_>>,
        options: Option<Unknown<'_>>,
        clock: Option<Unknown<'_>>,
    ) -> Result<Self> {
        let path = Arg::new("path", path).opt_string().or_throw(&env)?;
        let o = service_options(Arg::new("options", options)).or_throw(&env)?;
        let clock = clock_of(&env, clock).or_throw(&env)?;
        let defaults = Config::default();
        let environment = match &o.environment {
            Some(e) => environment_arg(e).or_throw(&env)?,
            None => Environment::Sandbox,
        };
        let config = Config {
            service_name: o.service_name.unwrap_or_else(|| "Rampart".to_owned()),
            environment,
            window: o.window.map_or(defaults.window, |w| w as u8),
            pending_ttl_secs: o.pending_ttl_secs.map_or(defaults.pending_ttl_secs, u64::from),
            throttling: o.throttling.unwrap_or(defaults.throttling),
            jwt_secret: o.jwt_secret.map(|b| b.to_vec().into()),
            purchase_hold_secs: o.purchase_hold_secs.map_or(defaults.purchase_hold_secs, u64::from),
            ..defaults
        };
        let given = match o.master_key {
            Some(bytes) => {
                let key: &[u8; 32] = bytes
                    .as_ref()
                    .try_into()
                    .map_err(|_| CoreError::config("master key must be exactly 32 bytes"))
                    .or_throw(&env)?;
                Some(KeyRing::new(o.master_key_id.unwrap_or(1), key))
            }
            // No file to keep a key beside, and every service on the database needs the same one.
            None if path.as_deref().is_some_and(is_postgres_url) => {
                return Err(CoreError::config(NEEDS_MASTER_KEY)).or_throw(&env);
            }
            None if environment == Environment::Production => {
                return Err(CoreError::config("production refuses to start without a master key")).or_throw(&env);
            }
            None => None,
        };
        // Check every setting first, so a bad config never creates files or connects.
        CoreService::builder(MemoryStore::new())
            .master_keys(KeyRing::new(0, &[0; 32]))
            .config(config.clone())
            .build()
            .or_throw(&env)?;
        let (store, keys): (Arc<dyn Store>, KeyRing) = match &path {
            Some(url) if is_postgres_url(url) => {
                let keys = given.ok_or_else(|| CoreError::config(NEEDS_MASTER_KEY)).or_throw(&env)?;
                // Unreachable, refusing or failing to migrate: the store failed (`internal`).
                let store = PostgresStore::open(url)
                    .map_err(|e| CoreError::new(ErrorKind::Internal).with_cause(e))
                    .or_throw(&env)?;
                (Arc::new(store), keys)
            }
            Some(db) => {
                let db = Path::new(db);
                let store = SqliteStore::open(db)
                    .map_err(|e| CoreError::config("cannot open the database").with_cause(e))
                    .or_throw(&env)?;
                let keys = match given {
                    Some(k) => k,
                    None => KeyRing::load_or_generate(&key_path(db), &store).or_throw(&env)?,
                };
                (Arc::new(store), keys)
            }
            None => (
                Arc::new(MemoryStore::new()),
                match given {
                    Some(k) => k,
                    None => KeyRing::generate().or_throw(&env)?,
                },
            ),
        };
        let mut builder = CoreService::builder_shared(store).master_keys(keys).config(config);
        if let Some(clock) = clock {
            builder = builder.clock(clock);
        }
        let service = builder.build().or_throw(&env)?;
        let path = path.filter(|p| !is_postgres_url(p));
        Ok(Self { inner: RwLock::new(Some(Arc::new(service))), path })
    }

    /// The SQLite file, or null for an in-memory or PostgreSQL service.
    #[napi(getter)]
    pub fn path(&self) -> Option<String> {
        self.path.clone()
    }

    #[napi(getter)]
    pub fn environment(&self, env: Env) -> Result<String> {
        Ok(self.get().or_throw(&env)?.config().environment.as_str().to_owned())
    }

    #[napi(getter)]
    pub fn service_name(&self, env: Env) -> Result<String> {
        Ok(self.get().or_throw(&env)?.config().service_name.clone())
    }

    #[napi(getter)]
    pub fn window(&self, env: Env) -> Result<u32> {
        Ok(u32::from(self.get().or_throw(&env)?.config().window))
    }

    #[napi(getter)]
    pub fn closed(&self) -> bool {
        self.inner.read().unwrap_or_else(PoisonError::into_inner).is_none()
    }

    /// Releases the store. Calls already running finish first; later ones reject.
    #[napi]
    pub fn close(&self) {
        drop(self.inner.write().unwrap_or_else(PoisonError::into_inner).take());
    }

    /// Resolves when the store answers.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn ping(&self) -> AsyncTask<Call<()>> {
        self.call(|s| s.ping())
    }

    // ---- partners ----

    #[napi(ts_args_type = "name: string, environment?: string | null", ts_return_type = "Promise<PartnerCredentials>")]
    pub fn create_partner(
        &self,
        name: Option<Unknown<'_>>,
        environment: Option<Unknown<'_>>,
    ) -> AsyncTask<Call<PartnerCredentials>> {
        let args = || -> Read<_> {
            let name = Arg::new("name", name).string()?;
            let env = match Arg::new("environment", environment).opt_string()? {
                Some(e) => environment_arg(&e)?,
                None => self.get()?.config().environment,
            };
            Ok((name, env))
        };
        self.call_with(args(), |s, (name, env)| s.create_partner(&name, env).map(Into::into))
    }

    #[napi(ts_args_type = "partnerId: string, operator: string", ts_return_type = "Promise<PartnerCredentials>")]
    pub fn rotate_keys(
        &self,
        partner_id: Option<Unknown<'_>>,
        operator: Option<Unknown<'_>>,
    ) -> AsyncTask<Call<PartnerCredentials>> {
        self.call_with(partner_and(partner_id, "operator", operator), |s, (p, operator)| {
            s.rotate_keys(&operator, &p).map(Into::into)
        })
    }

    #[napi(ts_args_type = "partnerId: string", ts_return_type = "Promise<Partner>")]
    pub fn partner(&self, partner_id: Option<Unknown<'_>>) -> AsyncTask<Call<Partner>> {
        self.call_with(partner_arg(partner_id), |s, p| {
            let r = s.partner(&p)?;
            Ok(Partner {
                id: r.id.to_string(),
                name: r.name,
                environment: r.environment.as_str().to_owned(),
                publishable_key: r.publishable_key,
                widget_text: r.widget_text,
                widget_button_url: r.widget_button_url,
                two_factor_waived: r.two_factor_waived,
                widget_origins: r.widget_origins,
                widget_approved: r.widget_approved,
            })
        })
    }

    #[napi(ts_return_type = "Promise<number>")]
    pub fn partner_count(&self) -> AsyncTask<Call<f64>> {
        self.call(|s| s.partner_count().map(|n| n as f64))
    }

    /// Authenticates a secret key (or legacy JWT); an `Authorization` header value
    /// (`"Bearer sk_..."`) is accepted too.
    #[napi(ts_args_type = "bearer: string", ts_return_type = "Promise<Authenticated>")]
    pub fn authenticate(&self, bearer: Option<Unknown<'_>>) -> AsyncTask<Call<Authenticated>> {
        self.call_with(Arg::new("bearer", bearer).string(), |s, bearer| {
            let value = rampart_core::partner::bearer_token(&bearer).unwrap_or(&bearer);
            let a = s.authenticate(value)?;
            let method = match a.method {
                AuthMethod::SecretKey => "secretKey",
                AuthMethod::LegacyJwt => "legacyJwt",
            };
            Ok(Authenticated { partner_id: a.partner_id.to_string(), method: method.to_owned() })
        })
    }

    #[napi(ts_args_type = "partnerId: string, text: string", ts_return_type = "Promise<string>")]
    pub fn set_widget_text(
        &self,
        partner_id: Option<Unknown<'_>>,
        text: Option<Unknown<'_>>,
    ) -> AsyncTask<Call<String>> {
        self.call_with(partner_and(partner_id, "widgetText", text), |s, (p, text)| s.set_widget_text(&p, &text))
    }

    #[napi(ts_args_type = "partnerId: string", ts_return_type = "Promise<string | null>")]
    pub fn widget_text(&self, partner_id: Option<Unknown<'_>>) -> AsyncTask<Call<Option<String>>> {
        self.call_with(partner_arg(partner_id), |s, p| s.widget_text(&p))
    }

    #[napi(ts_args_type = "partnerId: string, url: string", ts_return_type = "Promise<string>")]
    pub fn set_widget_button_url(
        &self,
        partner_id: Option<Unknown<'_>>,
        url: Option<Unknown<'_>>,
    ) -> AsyncTask<Call<String>> {
        self.call_with(partner_and(partner_id, "widgetButtonUrl", url), |s, (p, url)| s.set_widget_button_url(&p, &url))
    }

    #[napi(ts_args_type = "partnerId: string", ts_return_type = "Promise<string | null>")]
    pub fn widget_button_url(&self, partner_id: Option<Unknown<'_>>) -> AsyncTask<Call<Option<String>>> {
        self.call_with(partner_arg(partner_id), |s, p| s.widget_button_url(&p))
    }

    /// An operator action: waive (or restore) the 2FA requirement for a partner's KYC contacts.
    #[napi(
        js_name = "set2faWaiver",
        ts_args_type = "partnerId: string, waived: boolean, operator: string",
        ts_return_type = "Promise<void>"
    )]
    pub fn set_2fa_waiver(
        &self,
        partner_id: Option<Unknown<'_>>,
        waived: Option<Unknown<'_>>,
        operator: Option<Unknown<'_>>,
    ) -> AsyncTask<Call<()>> {
        let args = || -> Read<_> {
            Ok((partner_arg(partner_id)?, Arg::new("waived", waived).bool()?, Arg::new("operator", operator).string()?))
        };
        self.call_with(args(), |s, (p, waived, operator)| s.set_2fa_waiver(&operator, &p, waived))
    }

    /// Replaces the origins allowed to embed the partner's widget (SPEC section 6.2): at most 20,
    /// each `http(s)://host[:port]`, https only in production; resolves to them canonical (as a
    /// browser serialises `event.origin`). An empty array removes them all.
    #[napi(ts_args_type = "partnerId: string, origins: Array<string>", ts_return_type = "Promise<Array<string>>")]
    pub fn set_widget_origins(
        &self,
        partner_id: Option<Unknown<'_>>,
        origins: Option<Unknown<'_>>,
    ) -> AsyncTask<Call<Vec<String>>> {
        let args = || -> Read<_> { Ok((partner_arg(partner_id)?, Arg::new("origins", origins).origins()?)) };
        self.call_with(args(), |s, (p, origins)| s.set_widget_origins(&p, &origins))
    }

    /// The origins allowed to embed the partner's widget.
    #[napi(ts_args_type = "partnerId: string", ts_return_type = "Promise<Array<string>>")]
    pub fn widget_origins(&self, partner_id: Option<Unknown<'_>>) -> AsyncTask<Call<Vec<String>>> {
        self.call_with(partner_arg(partner_id), |s, p| s.widget_origins(&p))
    }

    /// An operator action: approve (or withdraw the approval of) the partner's production widget,
    /// audit-logged (`widget.approved` / `widget.unapproved`).
    #[napi(ts_args_type = "partnerId: string, approved: boolean, operator: string", ts_return_type = "Promise<void>")]
    pub fn set_widget_approval(
        &self,
        partner_id: Option<Unknown<'_>>,
        approved: Option<Unknown<'_>>,
        operator: Option<Unknown<'_>>,
    ) -> AsyncTask<Call<()>> {
        let args = || -> Read<_> {
            Ok((
                partner_arg(partner_id)?,
                Arg::new("approved", approved).bool()?,
                Arg::new("operator", operator).string()?,
            ))
        };
        self.call_with(args(), |s, (p, approved, operator)| s.set_widget_approval(&operator, &p, approved))
    }

    // ---- the 2FA lifecycle ----

    /// A new pending secret (replacing an earlier pending one). `issuer` defaults to the
    /// service's; `label` (the Key URI's account) defaults to the contact id.
    #[napi(
        js_name = "create2fa",
        ts_args_type = "partnerId: string, contactId: string, issuer?: string | null, label?: string | null",
        ts_return_type = "Promise<TwoFactorSetup>"
    )]
    pub fn create_2fa(
        &self,
        partner_id: Option<Unknown<'_>>,
        contact_id: Option<Unknown<'_>>,
        issuer: Option<Unknown<'_>>,
        label: Option<Unknown<'_>>,
    ) -> AsyncTask<Call<TwoFactorSetup>> {
        let args = || -> Read<_> {
            let (p, c) = ids(partner_id, contact_id)?;
            Ok((p, c, Arg::new("issuer", issuer).opt_string()?, Arg::new("label", label).opt_string()?))
        };
        self.call_with(args(), |s, (p, c, issuer, label)| {
            let label = label.unwrap_or_else(|| c.to_string());
            let setup = s.create_2fa_with_label(&p, &c, issuer.as_deref(), &label)?;
            Ok(TwoFactorSetup { qr_code: setup.qr_code.clone(), manual: setup.manual.clone(), uri: setup.uri.clone() })
        })
    }

    /// Resolves to the 10 recovery codes (`XXXX-XXXX-XXXX-XXXX-XXXX-XXXX`) when enabled, to show
    /// the person once: they are never shown again. Rejects with the lifecycle's errors.
    #[napi(
        js_name = "enable2fa",
        ts_args_type = "partnerId: string, contactId: string, token: unknown",
        ts_return_type = "Promise<Array<string>>"
    )]
    pub fn enable_2fa(
        &self,
        partner_id: Option<Unknown<'_>>,
        contact_id: Option<Unknown<'_>>,
        token: Option<Unknown<'_>>,
    ) -> AsyncTask<Call<Vec<String>>> {
        self.call_with(ids_token(partner_id, contact_id, token), |s, (p, c, t)| {
            s.enable_2fa(&p, &c, t).map(|codes| code_list(&codes))
        })
    }

    /// A new set of recovery codes for an authenticator code; the old set stops working.
    /// Rejects with `not_enabled` when 2FA is off, and the lifecycle's token errors.
    #[napi(
        ts_args_type = "partnerId: string, contactId: string, token: unknown",
        ts_return_type = "Promise<Array<string>>"
    )]
    pub fn regenerate_recovery_codes(
        &self,
        partner_id: Option<Unknown<'_>>,
        contact_id: Option<Unknown<'_>>,
        token: Option<Unknown<'_>>,
    ) -> AsyncTask<Call<Vec<String>>> {
        self.call_with(ids_token(partner_id, contact_id, token), |s, (p, c, t)| {
            s.regenerate_recovery_codes(&p, &c, t).map(|codes| code_list(&codes))
        })
    }

    /// Resolves when disabled (the secret and recovery codes erased); rejects with the
    /// lifecycle's errors. `factor` is an authenticator code, or `{ recoveryCode }` (which also
    /// clears the lock and starts the purchase hold); both given reject with `factor_conflict`.
    #[napi(
        js_name = "disable2fa",
        ts_args_type = "partnerId: string, contactId: string, factor: Factor | unknown",
        ts_return_type = "Promise<void>"
    )]
    pub fn disable_2fa(
        &self,
        partner_id: Option<Unknown<'_>>,
        contact_id: Option<Unknown<'_>>,
        factor: Option<Unknown<'_>>,
    ) -> AsyncTask<Call<()>> {
        self.call_with(ids_factor(partner_id, contact_id, factor), |s, (p, c, f)| s.disable_2fa(&p, &c, f))
    }

    /// Whether 2FA is enabled for the contact.
    #[napi(
        js_name = "status2fa",
        ts_args_type = "partnerId: string, contactId: string",
        ts_return_type = "Promise<boolean>"
    )]
    pub fn status_2fa(
        &self,
        partner_id: Option<Unknown<'_>>,
        contact_id: Option<Unknown<'_>>,
    ) -> AsyncTask<Call<bool>> {
        self.call_with(ids(partner_id, contact_id), |s, (p, c)| s.status_2fa(&p, &c))
    }

    /// Unused recovery codes of the contact (0 when 2FA is off).
    #[napi(ts_args_type = "partnerId: string, contactId: string", ts_return_type = "Promise<number>")]
    pub fn recovery_codes_remaining(
        &self,
        partner_id: Option<Unknown<'_>>,
        contact_id: Option<Unknown<'_>>,
    ) -> AsyncTask<Call<u32>> {
        self.call_with(ids(partner_id, contact_id), |s, (p, c)| {
            s.status_with_recovery_codes(&p, &c).map(|(_, remaining)| remaining)
        })
    }

    /// Checks an authenticator code, or `{ recoveryCode }` (used up; 2FA stays on). Resolves to
    /// `false` for a wrong, malformed or replayed code, and to `{ method, recoveryCodesRemaining }`
    /// when accepted, so `if (await service.verify2fa(...))` passes only on an accepted code.
    /// State, lock, throttle, missing-token and `factor_conflict` answers reject.
    #[napi(
        js_name = "verify2fa",
        ts_args_type = "partnerId: string, contactId: string, factor: Factor | unknown",
        ts_return_type = "Promise<false | Verified>"
    )]
    pub fn verify_2fa(
        &self,
        partner_id: Option<Unknown<'_>>,
        contact_id: Option<Unknown<'_>>,
        factor: Option<Unknown<'_>>,
    ) -> AsyncTask<Call<Either<bool, Verified>>> {
        self.call_with(ids_factor(partner_id, contact_id, factor), |s, (p, c, f)| {
            Ok(verified(s.verify_2fa(&p, &c, f)?).map_or(Either::A(false), Either::B))
        })
    }

    // ---- KYC rule and operator actions ----

    #[napi(
        ts_args_type = "partnerId: string, contactId: string, passed: boolean, operator: string",
        ts_return_type = "Promise<void>"
    )]
    pub fn set_kyc_passed(
        &self,
        partner_id: Option<Unknown<'_>>,
        contact_id: Option<Unknown<'_>>,
        passed: Option<Unknown<'_>>,
        operator: Option<Unknown<'_>>,
    ) -> AsyncTask<Call<()>> {
        let args = || -> Read<_> {
            let (p, c) = ids(partner_id, contact_id)?;
            Ok((p, c, Arg::new("passed", passed).bool()?, Arg::new("operator", operator).string()?))
        };
        self.call_with(args(), |s, (p, c, passed, operator)| s.set_kyc_passed(&operator, &p, &c, passed))
    }

    /// An operator action: lift the lock after too many failed attempts.
    #[napi(ts_args_type = "partnerId: string, contactId: string, operator: string", ts_return_type = "Promise<void>")]
    pub fn reset_lock(
        &self,
        partner_id: Option<Unknown<'_>>,
        contact_id: Option<Unknown<'_>>,
        operator: Option<Unknown<'_>>,
    ) -> AsyncTask<Call<()>> {
        let args = || -> Read<_> {
            let (p, c) = ids(partner_id, contact_id)?;
            Ok((p, c, Arg::new("operator", operator).string()?))
        };
        self.call_with(args(), |s, (p, c, operator)| s.reset_lock(&operator, &p, &c))
    }

    /// An operator action for a contact who lost the authenticator and the codes: erases the
    /// secret and recovery codes, clears both counters and the lock, starts the purchase hold,
    /// audits `2fa.reset`. `reason`: 1 to 500 characters. For a production partner `approvedBy`
    /// must name another operator (four eyes). Resolves to the state before the reset.
    #[napi(
        js_name = "reset2fa",
        ts_args_type = "partnerId: string, contactId: string, operator: string, reason: string, approvedBy?: string | null",
        ts_return_type = "Promise<ContactState>"
    )]
    pub fn reset_2fa(
        &self,
        partner_id: Option<Unknown<'_>>,
        contact_id: Option<Unknown<'_>>,
        operator: Option<Unknown<'_>>,
        reason: Option<Unknown<'_>>,
        approved_by: Option<Unknown<'_>>,
    ) -> AsyncTask<Call<ContactState>> {
        let args = || -> Read<_> {
            let (p, c) = ids(partner_id, contact_id)?;
            let operator = Arg::new("operator", operator).string()?;
            Ok((
                p,
                c,
                operator,
                Arg::new("reason", reason).string()?,
                Arg::new("approvedBy", approved_by).opt_string()?,
            ))
        };
        self.call_with(args(), |s, (p, c, operator, reason, approved_by)| {
            s.reset_2fa(&operator, &p, &c, &reason, approved_by.as_deref()).map(Into::into)
        })
    }

    /// The contact's 2FA state for support, read-only (never a secret).
    #[napi(ts_args_type = "partnerId: string, contactId: string", ts_return_type = "Promise<ContactState>")]
    pub fn contact_state(
        &self,
        partner_id: Option<Unknown<'_>>,
        contact_id: Option<Unknown<'_>>,
    ) -> AsyncTask<Call<ContactState>> {
        self.call_with(ids(partner_id, contact_id), |s, (p, c)| s.contact_state(&p, &c).map(Into::into))
    }

    /// Whether the contact may purchase, and why not (`mayPurchase` without the reason).
    #[napi(ts_args_type = "partnerId: string, contactId: string", ts_return_type = "Promise<PurchaseCheck>")]
    pub fn purchase_check(
        &self,
        partner_id: Option<Unknown<'_>>,
        contact_id: Option<Unknown<'_>>,
    ) -> AsyncTask<Call<PurchaseCheck>> {
        self.call_with(ids(partner_id, contact_id), |s, (p, c)| s.purchase_check(&p, &c).map(Into::into))
    }

    #[napi(
        js_name = "is2faRequired",
        ts_args_type = "partnerId: string, contactId: string",
        ts_return_type = "Promise<boolean>"
    )]
    pub fn is_2fa_required(
        &self,
        partner_id: Option<Unknown<'_>>,
        contact_id: Option<Unknown<'_>>,
    ) -> AsyncTask<Call<bool>> {
        self.call_with(ids(partner_id, contact_id), |s, (p, c)| s.is_2fa_required(&p, &c))
    }

    #[napi(ts_args_type = "partnerId: string, contactId: string", ts_return_type = "Promise<boolean>")]
    pub fn may_purchase(
        &self,
        partner_id: Option<Unknown<'_>>,
        contact_id: Option<Unknown<'_>>,
    ) -> AsyncTask<Call<bool>> {
        self.call_with(ids(partner_id, contact_id), |s, (p, c)| s.may_purchase(&p, &c))
    }

    #[napi(
        js_name = "contactsRequiring2fa",
        ts_args_type = "partnerId: string",
        ts_return_type = "Promise<Array<string>>"
    )]
    pub fn contacts_requiring_2fa(&self, partner_id: Option<Unknown<'_>>) -> AsyncTask<Call<Vec<String>>> {
        self.call_with(partner_arg(partner_id), |s, p| {
            Ok(s.contacts_requiring_2fa(&p)?.iter().map(ToString::to_string).collect())
        })
    }

    /// An operator action: re-seal every stored secret under the newest master key (after a
    /// line with a higher id was added to the key file), so older keys can then be removed.
    #[napi(ts_args_type = "operator: string", ts_return_type = "Promise<RewrapReport>")]
    pub fn rewrap_secrets(&self, operator: Option<Unknown<'_>>) -> AsyncTask<Call<RewrapReport>> {
        self.call_with(Arg::new("operator", operator).string(), |s, operator| {
            let r = s.rewrap_secrets(&operator)?;
            Ok(RewrapReport {
                key_id: r.key_id,
                examined: r.examined as f64,
                rewrapped: r.rewrapped as f64,
                unopenable: r.unopenable as f64,
            })
        })
    }

    // ---- the widget's purchase flow (SPEC section 6.3) ----

    /// Opens a widget session for the partner with this publishable key, embedded by `origin`
    /// (null or `""`: at the top level). Rejects with `partner_not_found`, `widget_not_approved`
    /// (production, awaiting an operator) or `origin_not_allowed`.
    #[napi(ts_args_type = "publishableKey: string, origin?: string | null", ts_return_type = "Promise<OpenedSession>")]
    pub fn open_session(
        &self,
        publishable_key: Option<Unknown<'_>>,
        origin: Option<Unknown<'_>>,
    ) -> AsyncTask<Call<OpenedSession>> {
        let args = || -> Read<_> {
            let key = publishable_key_arg(Arg::new("publishableKey", publishable_key))?;
            Ok((key, Arg::new("origin", origin).opt_string()?))
        };
        self.call_with(args(), |s, (key, origin)| {
            let (token, state) = s.open_session(&key, origin.as_deref())?;
            Ok(OpenedSession { session_token: token.as_str().to_owned(), session: state.into() })
        })
    }

    /// Where the session stands (restarting its 30-minute idle clock).
    #[napi(ts_args_type = "sessionToken: string", ts_return_type = "Promise<SessionState>")]
    pub fn session_state(&self, session_token: Option<Unknown<'_>>) -> AsyncTask<Call<SessionState>> {
        self.call_with(session_arg(Arg::new("sessionToken", session_token)), |s, token| {
            s.session_state(&token).map(Into::into)
        })
    }

    /// Signs out: the token stops working (`session_expired` from then on).
    #[napi(ts_args_type = "sessionToken: string", ts_return_type = "Promise<void>")]
    pub fn close_session(&self, session_token: Option<Unknown<'_>>) -> AsyncTask<Call<()>> {
        self.call_with(session_arg(Arg::new("sessionToken", session_token)), |s, token| s.close_session(&token))
    }

    /// A new 6-digit sign-in code for `email`, usable only by this session; deliver it to the
    /// email's owner. Rejects with `sign_in_throttled` (and `retryAfter`) after 3 codes to one
    /// email in 10 minutes.
    #[napi(ts_args_type = "sessionToken: string, email: string", ts_return_type = "Promise<SignInCode>")]
    pub fn request_sign_in_code(
        &self,
        session_token: Option<Unknown<'_>>,
        email: Option<Unknown<'_>>,
    ) -> AsyncTask<Call<SignInCode>> {
        let args = || -> Read<_> {
            Ok((session_arg(Arg::new("sessionToken", session_token))?, Arg::new("email", email).string()?))
        };
        self.call_with(args(), |s, (token, email)| {
            let sent = s.request_sign_in_code(&token, &email)?;
            Ok(SignInCode { code: sent.code.as_str().to_owned(), expires_in: sent.expires_in as f64 })
        })
    }

    /// Signs the session in with the code sent to `email`; the email becomes a contact.
    #[napi(
        ts_args_type = "sessionToken: string, email: string, code: string",
        ts_return_type = "Promise<SessionState>"
    )]
    pub fn sign_in(
        &self,
        session_token: Option<Unknown<'_>>,
        email: Option<Unknown<'_>>,
        code: Option<Unknown<'_>>,
    ) -> AsyncTask<Call<SessionState>> {
        let args = || -> Read<_> {
            Ok((
                session_arg(Arg::new("sessionToken", session_token))?,
                Arg::new("email", email).string()?,
                Arg::new("code", code).sign_in_code()?,
            ))
        };
        self.call_with(args(), |s, (token, email, code)| s.sign_in(&token, &email, &code).map(Into::into))
    }

    /// Passes the session's 2FA step with a code from the contact's app (a wrong code rejects
    /// with `token_failed`, as over HTTP), or recovers with `{ recoveryCode }`: that disables 2FA
    /// through the session and starts the purchase hold.
    #[napi(
        js_name = "sessionVerify2fa",
        ts_args_type = "sessionToken: string, factor: Factor | unknown",
        ts_return_type = "Promise<SessionState>"
    )]
    pub fn session_verify_2fa(
        &self,
        session_token: Option<Unknown<'_>>,
        factor: Option<Unknown<'_>>,
    ) -> AsyncTask<Call<SessionState>> {
        let args = || -> Read<_> {
            Ok((session_arg(Arg::new("sessionToken", session_token))?, Arg::new("token", factor).factor()?))
        };
        self.call_with(args(), |s, (session, factor)| s.session_verify_2fa(&session, factor).map(Into::into))
    }

    /// New recovery codes for the session's contact, proven by an authenticator code.
    #[napi(ts_args_type = "sessionToken: string, token: unknown", ts_return_type = "Promise<Array<string>>")]
    pub fn session_regenerate_recovery_codes(
        &self,
        session_token: Option<Unknown<'_>>,
        token: Option<Unknown<'_>>,
    ) -> AsyncTask<Call<Vec<String>>> {
        let args = || -> Read<_> {
            Ok((session_arg(Arg::new("sessionToken", session_token))?, Arg::new("token", token).token()?))
        };
        self.call_with(args(), |s, (session, code)| {
            s.session_regenerate_recovery_codes(&session, code).map(|codes| code_list(&codes))
        })
    }

    /// Buys as the signed-in contact. The request is checked as widget options under `config`
    /// (the JSON form of `WidgetSettings.config`; default the built-in one), then the 2FA step;
    /// a sandbox order completes at once at a simulated price, production rejects with
    /// `purchases_unavailable`.
    #[napi(
        ts_args_type = "sessionToken: string, request: OrderRequest, config?: Record<string, unknown> | null",
        ts_return_type = "Promise<Order>"
    )]
    pub fn place_order(
        &self,
        session_token: Option<Unknown<'_>>,
        request: Option<Unknown<'_>>,
        config: Option<Unknown<'_>>,
    ) -> AsyncTask<Call<Order>> {
        let args = || -> std::result::Result<_, Failure> {
            let token = session_arg(Arg::new("sessionToken", session_token))?;
            let request = order_request(Arg::new("request", request))?;
            let config = Arg::new("config", config).json("config")?;
            Ok((token, request, config_arg(Some(&config))?))
        };
        match args() {
            Ok((token, request, config)) => {
                self.call(move |s| s.place_order(&token, &request, &config).map(Into::into))
            }
            Err(f) => AsyncTask::new(Call::failed(f)),
        }
    }

    /// A partner's order (rejects with `order_not_found` for an unknown id or another
    /// partner's).
    #[napi(ts_args_type = "partnerId: string, orderId: string", ts_return_type = "Promise<Order>")]
    pub fn order(&self, partner_id: Option<Unknown<'_>>, order_id: Option<Unknown<'_>>) -> AsyncTask<Call<Order>> {
        let args = || -> Read<_> { Ok((partner_arg(partner_id)?, order_arg(Arg::new("orderId", order_id))?)) };
        self.call_with(args(), |s, (p, id)| s.order(&p, &id).map(Into::into))
    }

    /// Up to `limit` (1 to 100, default 20) orders of a partner's contact, newest first, after
    /// the order `after` (the previous page's `next`).
    #[napi(
        ts_args_type = "partnerId: string, contactId: string, options?: OrdersOptions | null",
        ts_return_type = "Promise<OrderPage>"
    )]
    pub fn orders(
        &self,
        partner_id: Option<Unknown<'_>>,
        contact_id: Option<Unknown<'_>>,
        options: Option<Unknown<'_>>,
    ) -> AsyncTask<Call<OrderPage>> {
        let args = || -> Read<_> {
            let (p, c) = ids(partner_id, contact_id)?;
            let (after, limit) = orders_options(Arg::new("options", options))?;
            Ok((p, c, after, limit))
        };
        self.call_with(args(), |s, (p, c, after, limit)| s.orders(&p, &c, after.as_ref(), limit).map(Into::into))
    }

    /// The contact id of an email that signed in to the partner's widget (rejects with
    /// `contact_not_found` when it never did).
    #[napi(ts_args_type = "partnerId: string, email: string", ts_return_type = "Promise<string>")]
    pub fn contact_by_email(
        &self,
        partner_id: Option<Unknown<'_>>,
        email: Option<Unknown<'_>>,
    ) -> AsyncTask<Call<String>> {
        self.call_with(partner_and(partner_id, "email", email), |s, (p, email)| {
            s.contact_by_email(&p, &email).map(|c| c.to_string())
        })
    }

    // ---- the audit trail and metrics (SPEC section 9) ----

    /// A page of the partner's audit chain, oldest first: rows with `seq` after `after` (default
    /// 0, the start), only those about `contactId` unless it is null, at most `limit` (1 to 500,
    /// default 100). Pass the page's `next` as `after` for the next page.
    #[napi(
        ts_args_type = "partnerId: string, contactId?: string | null, after?: number | null, limit?: number | null",
        ts_return_type = "Promise<AuditPage>"
    )]
    pub fn audit_events(
        &self,
        partner_id: Option<Unknown<'_>>,
        contact_id: Option<Unknown<'_>>,
        after: Option<Unknown<'_>>,
        limit: Option<Unknown<'_>>,
    ) -> AsyncTask<Call<AuditPage>> {
        self.call_with(audit_query(partner_id, contact_id, after, limit), |s, q| {
            s.audit_events(&q.partner, q.contact.as_ref(), q.after, q.limit).map(Into::into)
        })
    }

    /// Checks the audit chain of one partner, or of every partner when `partnerId` is null (in
    /// partner id order): each row's `seq`, `prev` and `hash`, and the head kept with the
    /// partner. A broken chain is a report (`firstBadSeq`), not a rejection.
    #[napi(ts_args_type = "partnerId?: string | null", ts_return_type = "Promise<Array<ChainReport>>")]
    pub fn verify_audit(&self, partner_id: Option<Unknown<'_>>) -> AsyncTask<Call<Vec<ChainReport>>> {
        self.call_with(opt_partner_arg(partner_id), |s, p| {
            Ok(s.verify_audit(p.as_ref())?.into_iter().map(Into::into).collect())
        })
    }

    /// This service's metrics as Prometheus text (SPEC section 9.2), to serve on a route of
    /// your own. The counts are this instance's, never shared with another `Service`. A Promise:
    /// it may read the store (the audit gauge).
    #[napi(ts_return_type = "Promise<string>")]
    pub fn metrics_text(&self) -> AsyncTask<Call<String>> {
        self.call(|s| Ok(s.metrics_text()))
    }
}
