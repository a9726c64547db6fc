//! The service: a store, a master key ring, a clock and the configuration.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use zeroize::Zeroizing;

use crate::chain::Actor;
use crate::clock::{Clock, SystemClock};
use crate::crypto::KeyRing;
use crate::error::{Error, ErrorKind, Result};
use crate::metrics::{Metered, Metrics};
use crate::store::{Store, StoreError};
use crate::totp;
use crate::vocab::Environment;

/// Default number of time steps accepted either side of now.
pub const DEFAULT_WINDOW: u8 = 1;
/// Default lifetime of a created, not yet enabled secret.
pub const DEFAULT_PENDING_TTL_SECS: u64 = 600;
/// Shortest accepted legacy JWT secret.
pub const MIN_JWT_SECRET_BYTES: usize = 32;
/// Longest accepted [`Config::auth_cache_ttl`].
pub const MAX_AUTH_CACHE_TTL: Duration = Duration::from_secs(60);
/// Longest service name (so the default issuer `<name>2FA` fits in 64 characters).
pub const MAX_SERVICE_NAME_CHARS: usize = 61;

/// Settings of a [`Service`].
#[derive(Clone)]
pub struct Config {
    /// The service name; the default issuer is this followed by `2FA`. Default `Rampart`.
    pub service_name: String,
    /// The environment whose keys this service accepts. Default sandbox.
    pub environment: Environment,
    /// Steps accepted either side of now, 0..=2. Default 1.
    pub window: u8,
    /// Seconds a created secret may wait to be enabled. Default 600.
    pub pending_ttl_secs: u64,
    /// Length of new secrets in bytes, 20..=64. Default 20.
    pub secret_bytes: usize,
    /// Refuse attempts after repeated failures and lock at 100 (on by default). When off,
    /// failures are still counted but never refused.
    pub throttling: bool,
    /// HS256 secret for legacy JWT authentication (at least 32 bytes); `None` disables JWTs.
    pub jwt_secret: Option<Zeroizing<Vec<u8>>>,
    /// How long a secret key that authenticated is remembered in memory (by its hash), so a
    /// busy server skips the store lookup. Rotating keys through this service forgets them at
    /// once; a rotation made by another process takes effect within this time. At most
    /// 60 s. Default zero: every call asks the store.
    pub auth_cache_ttl: Duration,
    /// Seconds a widget session lives after its last use. Default 1800 (30 minutes).
    pub session_idle_secs: u64,
    /// Seconds a widget sign-in code stays valid. Default 600 (10 minutes).
    pub sign_in_code_ttl_secs: u64,
    /// Seconds a contact may not purchase after a disable by recovery code or an operator
    /// reset, 0..=604800. Default 86400 (24 hours).
    pub purchase_hold_secs: u64,
    /// Webhook endpoints may use `http` and loopback or private addresses (tests, local
    /// development); never in production. Default off.
    pub webhook_allow_private: bool,
    /// Record metrics (SPEC 9.2). Default on; off, [`Service::metrics_text`] shows only
    /// `rampart_build_info` and recording costs nothing (a server that serves no metrics).
    pub metrics: bool,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            service_name: "Rampart".to_owned(),
            environment: Environment::Sandbox,
            window: DEFAULT_WINDOW,
            pending_ttl_secs: DEFAULT_PENDING_TTL_SECS,
            secret_bytes: totp::DEFAULT_SECRET_BYTES,
            throttling: true,
            jwt_secret: None,
            auth_cache_ttl: Duration::ZERO,
            session_idle_secs: crate::checkout::SESSION_IDLE_SECS,
            sign_in_code_ttl_secs: crate::checkout::SIGN_IN_CODE_TTL_SECS,
            purchase_hold_secs: crate::recovery::DEFAULT_HOLD_SECS,
            webhook_allow_private: false,
            metrics: true,
        }
    }
}

impl fmt::Debug for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Config")
            .field("service_name", &self.service_name)
            .field("environment", &self.environment)
            .field("window", &self.window)
            .field("pending_ttl_secs", &self.pending_ttl_secs)
            .field("secret_bytes", &self.secret_bytes)
            .field("throttling", &self.throttling)
            .field("jwt_secret", &self.jwt_secret.as_ref().map(|_| "<redacted>"))
            .field("auth_cache_ttl", &self.auth_cache_ttl)
            .field("session_idle_secs", &self.session_idle_secs)
            .field("sign_in_code_ttl_secs", &self.sign_in_code_ttl_secs)
            .field("purchase_hold_secs", &self.purchase_hold_secs)
            .field("webhook_allow_private", &self.webhook_allow_private)
            .field("metrics", &self.metrics)
            .finish()
    }
}

impl Config {
    fn validate(&self) -> Result<()> {
        let name = &self.service_name;
        let n = name.chars().count();
        if n == 0 || n > MAX_SERVICE_NAME_CHARS || name.contains(':') || name.chars().any(char::is_control) {
            return Err(Error::config("service name must be 1 to 61 characters without ':' or control characters"));
        }
        // Out-of-range numbers are the argument's own 400, as in every surface.
        if self.window > totp::MAX_WINDOW {
            return Err(Error::invalid_input("window", "must be 0, 1 or 2"));
        }
        if !(totp::DEFAULT_SECRET_BYTES..=totp::MAX_SECRET_BYTES).contains(&self.secret_bytes) {
            return Err(Error::invalid_input("secret_bytes", "must be 20 to 64"));
        }
        if self.pending_ttl_secs == 0 {
            return Err(Error::invalid_input("pending_ttl_secs", "must be at least 1"));
        }
        if self.jwt_secret.as_ref().is_some_and(|s| s.len() < MIN_JWT_SECRET_BYTES) {
            return Err(Error::config("JWT secret must be at least 32 bytes"));
        }
        if self.session_idle_secs == 0 {
            return Err(Error::invalid_input("session_idle_secs", "must be at least 1"));
        }
        if self.sign_in_code_ttl_secs == 0 {
            return Err(Error::invalid_input("sign_in_code_ttl_secs", "must be at least 1"));
        }
        if self.purchase_hold_secs > crate::recovery::MAX_HOLD_SECS {
            return Err(Error::invalid_input("purchase_hold_secs", "must be 0 to 604800"));
        }
        if self.webhook_allow_private && self.environment == Environment::Production {
            return Err(Error::config("webhook_allow_private is for tests and development, never production"));
        }
        if self.auth_cache_ttl > MAX_AUTH_CACHE_TTL {
            return Err(Error::config("authentication cache lifetime must be at most 60 seconds"));
        }
        Ok(())
    }
}

/// Rampart: 2FA lifecycle, partners and settings over a [`Store`].
///
/// Cheap to share: wrap it in an `Arc`; every method takes `&self` and is safe to call from
/// many threads at once.
pub struct Service {
    store: crate::metrics::Metered,
    metrics: Arc<Metrics>,
    keys: KeyRing,
    clock: Arc<dyn Clock>,
    config: Config,
    jwt_key: Option<jsonwebtoken::DecodingKey>,
    auth_cache: crate::partner::AuthCache,
}

impl fmt::Debug for Service {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Service")
            .field("store", &self.store)
            .field("keys", &self.keys)
            .field("clock", &self.clock)
            .field("config", &self.config)
            .finish()
    }
}

/// Builds a [`Service`]; see [`Service::builder`].
#[derive(Debug)]
pub struct ServiceBuilder {
    store: Arc<dyn Store>,
    keys: Option<KeyRing>,
    clock: Arc<dyn Clock>,
    config: Config,
    check_keys: bool,
}

impl ServiceBuilder {
    /// The master key ring that seals secrets at rest (required).
    pub fn master_keys(mut self, keys: KeyRing) -> Self {
        self.keys = Some(keys);
        self
    }

    /// The clock (default: the system clock).
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// All settings at once.
    pub fn config(mut self, config: Config) -> Self {
        self.config = config;
        self
    }

    /// The service name (default `Rampart`).
    pub fn service_name(mut self, name: impl Into<String>) -> Self {
        self.config.service_name = name.into();
        self
    }

    /// The environment (default sandbox).
    pub fn environment(mut self, env: Environment) -> Self {
        self.config.environment = env;
        self
    }

    /// The verification window, 0..=2 (default 1).
    pub fn window(mut self, window: u8) -> Self {
        self.config.window = window;
        self
    }

    /// Throttling and the lock (default on).
    pub fn throttling(mut self, on: bool) -> Self {
        self.config.throttling = on;
        self
    }

    /// The legacy JWT secret (at least 32 bytes).
    pub fn jwt_secret(mut self, secret: impl Into<Vec<u8>>) -> Self {
        self.config.jwt_secret = Some(Zeroizing::new(secret.into()));
        self
    }

    /// Remember authenticated secret keys for `ttl` (see [`Config::auth_cache_ttl`]).
    pub fn auth_cache_ttl(mut self, ttl: Duration) -> Self {
        self.config.auth_cache_ttl = ttl;
        self
    }

    /// Seconds a widget session lives after its last use (default 1800).
    pub fn session_idle_secs(mut self, secs: u64) -> Self {
        self.config.session_idle_secs = secs;
        self
    }

    /// Record metrics (default on; see [`Config::metrics`]).
    pub fn metrics(mut self, on: bool) -> Self {
        self.config.metrics = on;
        self
    }

    /// Let webhook endpoints use `http` and loopback or private addresses (sandbox only).
    pub fn webhook_allow_private(mut self, on: bool) -> Self {
        self.config.webhook_allow_private = on;
        self
    }

    /// Seconds purchases are on hold after a 2FA recovery or reset, 0..=604800 (default 86400).
    pub fn purchase_hold_secs(mut self, secs: u64) -> Self {
        self.config.purchase_hold_secs = secs;
        self
    }

    /// Seconds a widget sign-in code stays valid (default 600).
    pub fn sign_in_code_ttl_secs(mut self, secs: u64) -> Self {
        self.config.sign_in_code_ttl_secs = secs;
        self
    }

    /// Leave the check that the master keys open the stored secrets (which needs the store)
    /// to the caller, through [`Service::check_master_keys`] once the store answers. For a
    /// server that starts while its database is down; every 2FA call fails until it is back.
    pub fn defer_key_check(mut self) -> Self {
        self.check_keys = false;
        self
    }

    /// Check the settings (and, unless deferred, the master keys against the store) and build.
    pub fn build(self) -> Result<Service> {
        self.config.validate()?;
        let keys = self.keys.ok_or_else(|| {
            Error::config(match self.config.environment {
                Environment::Production => "production refuses to start without a master key",
                Environment::Sandbox => "a master key is required",
            })
        })?;
        // A ring that opens none of the stored secrets of a key id would fail every 2FA call of
        // those contacts: refuse it now, at start.
        if self.check_keys {
            keys.check_against(&*self.store)?;
        }
        let jwt_key = self.config.jwt_secret.as_ref().map(|s| jsonwebtoken::DecodingKey::from_secret(s));
        let auth_cache = crate::partner::AuthCache::new(self.config.auth_cache_ttl);
        let metrics = Arc::new(Metrics::new(self.config.metrics, self.config.environment.as_str(), self.store.kind()));
        let store = Metered { inner: self.store, metrics: metrics.clone(), queued: Default::default() };
        Ok(Service { store, metrics, keys, clock: self.clock, config: self.config, jwt_key, auth_cache })
    }
}

impl Service {
    /// Start building a service over `store`.
    pub fn builder(store: impl Store + 'static) -> ServiceBuilder {
        Self::builder_shared(Arc::new(store))
    }

    /// Start building a service over a store shared with other code.
    pub fn builder_shared(store: Arc<dyn Store>) -> ServiceBuilder {
        ServiceBuilder { store, keys: None, clock: Arc::new(SystemClock), config: Config::default(), check_keys: true }
    }

    /// Call `listener` after every committed change that queued webhook messages (an order, a
    /// 2FA change, a test message, a resend), on the thread that made it: the delivery worker's
    /// wake-up, so a message goes out at once instead of at the worker's next look at the queue.
    /// One listener per service: a second replaces the first.
    pub fn on_webhook_queued(&self, listener: impl Fn() + Send + Sync + 'static) {
        self.store.on_queued(Box::new(listener));
    }

    /// The settings.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The store.
    pub fn store(&self) -> &dyn Store {
        &self.store
    }

    /// This service's metrics registry (SPEC 9.2): its own, never shared with another service.
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// The metrics as Prometheus text (format 0.0.4), for a `/metrics` route. The audit gauge
    /// is read from the store first when it is more than 60 s old.
    pub fn metrics_text(&self) -> String {
        self.metrics.render(&self.store)
    }

    /// The check [`ServiceBuilder::build`] makes unless [deferred](ServiceBuilder::defer_key_check):
    /// for every key id sealing a stored secret, the master keys hold it and it opens one.
    pub fn check_master_keys(&self) -> Result<()> {
        self.keys.check_against(&self.store)
    }

    /// Whether the store answers (for health checks).
    pub fn ping(&self) -> Result<()> {
        self.store.ping().map_err(Self::internal)
    }

    pub(crate) fn now(&self) -> u64 {
        self.clock.now()
    }

    pub(crate) fn now_millis(&self) -> u64 {
        self.clock.now_millis()
    }

    pub(crate) fn auth_cache(&self) -> &crate::partner::AuthCache {
        &self.auth_cache
    }

    pub(crate) fn keys(&self) -> &KeyRing {
        &self.keys
    }

    pub(crate) fn jwt_key(&self) -> Option<&jsonwebtoken::DecodingKey> {
        self.jwt_key.as_ref()
    }

    pub(crate) fn internal(e: StoreError) -> Error {
        Error::new(ErrorKind::Internal).with_cause(e)
    }

    /// The actor of an operator action, checking the name.
    pub(crate) fn operator(operator: &str) -> Result<Actor> {
        if operator.trim().is_empty() || operator.chars().any(char::is_control) {
            return Err(Error::invalid_input("operator", "must name who acts, without control characters"));
        }
        Ok(Actor::Operator(operator.to_owned()))
    }
}

/// The master key ring against a store: the checks that need both, kept here so the sealing
/// code (`crypto`) depends on nothing above the bottom layer.
impl KeyRing {
    /// The sandbox default: read the key file, or create it (mode 0600) with one fresh key when
    /// it does not exist, but only over a store that holds no sealed secret. A store that holds
    /// some and finds no key file is refused, naming the file: a new key would lock out every
    /// enabled contact.
    pub fn load_or_generate(path: &std::path::Path, store: &dyn Store) -> Result<Self> {
        if path.exists() {
            return Self::load(path);
        }
        let holds_secrets = !store
            .contacts_with_secrets(None, 1)
            .map_err(|e| Error::config("cannot read the store").with_cause(e))?
            .is_empty();
        if holds_secrets {
            return Err(Error::config(format!(
                "master key file {} is missing, but the database holds 2FA secrets sealed under it: \
                 restore the file (a new key would lock out every contact with 2FA)",
                path.display()
            )));
        }
        Self::generate_into(path)
    }

    /// Check the ring against what a store holds: for every key id that seals a stored secret,
    /// the ring must hold that key and it must open at least one of the secrets sealed under
    /// it (a few are tried, so one damaged row does not block a start). Errors name the key
    /// file and the key's line when the ring came from a file; never a key.
    pub fn check_against(&self, store: &dyn Store) -> Result<()> {
        if self.is_empty() {
            // An empty ring opens nothing and seals nothing: there is nothing to check.
            return Ok(());
        }
        let samples = store
            .sealed_samples(crate::crypto::SAMPLES_PER_KEY)
            .map_err(|e| Error::config("cannot read the stored 2FA secrets to check the master keys").with_cause(e))?;
        let mut by_key: std::collections::BTreeMap<u32, bool> = std::collections::BTreeMap::new();
        for s in &samples {
            let Some(id) = crate::crypto::key_id_of(&s.sealed) else { continue };
            let opens = self.open(&s.partner_id, &s.contact_id, s.field, &s.sealed).is_ok();
            *by_key.entry(id).or_default() |= opens;
        }
        match by_key.into_iter().find(|&(_, opened)| !opened) {
            Some((id, _)) => Err(Error::config(self.key_problem(id))),
            None => Ok(()),
        }
    }
}
