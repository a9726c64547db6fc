//! The service handle: opening, the 2FA lifecycle, partners, widget settings, operator actions.

use std::ffi::{c_char, c_void};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rampart_core::store::FaultyStore;
use rampart_core::{
    AuthMethod, Clock, Config, Environment, Error, ErrorKind, KeyRing, MemoryStore, Method, PostgresStore, Service,
    SqliteStore, Store, Verification,
};
use zeroize::Zeroizing;

use crate::boundary::{
    Out, c_bytes, contact_arg, factor_arg, field_arg, non_null, null_arg, opt_str_arg, partner_arg, status_call,
    str_arg, token_arg, value_call,
};
use crate::recovery::{codes_handle, rampart_recovery_codes, rampart_verify_method};
use crate::status::rampart_status;
use crate::strings::{Pending, library_string, secret_string};
use crate::widget::{origins_arg, origins_string};

/// The environment a service serves, or a partner belongs to.
#[repr(u32)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(non_camel_case_types)]
pub enum rampart_environment {
    /// Test keys (`sk_sandbox_...`), test widget.
    RAMPART_ENVIRONMENT_SANDBOX = 0,
    /// Live keys (`sk_production_...`).
    RAMPART_ENVIRONMENT_PRODUCTION = 1,
}

/// Environments arrive as plain numbers: C may pass any value, which a Rust enum must never hold.
fn environment_arg(value: u32, what: &str) -> Result<Environment, Error> {
    match value {
        v if v == rampart_environment::RAMPART_ENVIRONMENT_SANDBOX as u32 => Ok(Environment::Sandbox),
        v if v == rampart_environment::RAMPART_ENVIRONMENT_PRODUCTION as u32 => Ok(Environment::Production),
        _ => Err(Error::invalid_input(what, "must be RAMPART_ENVIRONMENT_SANDBOX or RAMPART_ENVIRONMENT_PRODUCTION")),
    }
}

/// A clock: returns the current Unix time in whole seconds. `context` is the config's
/// `clock_context`. It is called from whichever thread makes a call, possibly from several at
/// once, so it must be thread-safe; it must not call back into Rampart, and (from C++) must
/// not throw.
pub type rampart_clock_fn = Option<unsafe extern "C" fn(context: *mut c_void) -> u64>;

/// Settings for `rampart_service_open` and `rampart_service_open_memory`. Start from
/// `rampart_config_default()` and change what you need: a zeroed struct is not the default
/// (its window would be 0 and its pending lifetime invalid).
///
/// Ownership: the service copies everything it needs while opening (strings and key bytes);
/// the struct and what it points to may be freed or reused as soon as the open call returns.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct rampart_config {
    /// Service name, UTF-8, 1 to 61 characters without ':' or control characters; the default
    /// 2FA issuer is this followed by "2FA". NULL means "Rampart".
    pub service_name: *const c_char,
    /// A `rampart_environment` value: whose secret keys `rampart_service_authenticate`
    /// accepts. Default sandbox.
    pub environment: u32,
    /// Time steps (30 s each) accepted either side of now, 0 to 2. Default 1.
    pub window: u8,
    /// Refuse attempts for a while after 5 consecutive failures and lock the contact's 2FA
    /// after 100 (until `rampart_service_reset_lock`); wrong recovery codes have their own back-off
    /// and never lock. Default true.
    pub throttling: bool,
    /// The master key sealing TOTP secrets at rest: exactly 32 bytes, or NULL. With NULL, a
    /// sandbox service on a database file loads the key from `<db_path>.key`, creating that
    /// file (mode 0600) with a random key the first time, but only while the database holds
    /// no 2FA secret (a new key would lock out every contact with 2FA: open then refuses,
    /// naming the missing file); a sandbox in-memory service uses a random key; production
    /// and a PostgreSQL URL (every service sharing it needs the same key) refuse to open.
    pub master_key: *const u8,
    /// Length of `master_key` in bytes (32); 0 when `master_key` is NULL.
    pub master_key_len: usize,
    /// The id stored beside every secret sealed under `master_key`. Default 1.
    pub master_key_id: u32,
    /// Seconds a created secret may wait to be enabled, at least 1. Default 600.
    pub pending_ttl_secs: u64,
    /// HS256 secret (at least 32 bytes) enabling legacy JWT bearer authentication, or NULL
    /// (the default) to refuse JWTs.
    pub jwt_secret: *const u8,
    /// Length of `jwt_secret` in bytes; 0 when `jwt_secret` is NULL.
    pub jwt_secret_len: usize,
    /// The clock, or NULL (the default) for the system clock. Tests use it to move time.
    pub clock: rampart_clock_fn,
    /// Passed to `clock` unchanged; not used otherwise. The caller keeps it alive, and safe to
    /// use from any thread, for as long as the service lives.
    pub clock_context: *mut c_void,
    /// Seconds a contact may not purchase after a disable by recovery code or an operator reset
    /// (`rampart_service_reset_2fa`), 0 to 604800. Default 86400 (24 hours).
    pub purchase_hold_secs: u64,
}

const DEFAULT_CONFIG: rampart_config = rampart_config {
    service_name: std::ptr::null(),
    environment: rampart_environment::RAMPART_ENVIRONMENT_SANDBOX as u32,
    window: rampart_core::service::DEFAULT_WINDOW,
    throttling: true,
    master_key: std::ptr::null(),
    master_key_len: 0,
    master_key_id: 1,
    pending_ttl_secs: rampart_core::service::DEFAULT_PENDING_TTL_SECS,
    jwt_secret: std::ptr::null(),
    jwt_secret_len: 0,
    clock: None,
    clock_context: std::ptr::null_mut(),
    purchase_hold_secs: rampart_core::recovery::DEFAULT_HOLD_SECS,
};

/// The default settings: service name "Rampart", sandbox, window 1, throttling on, no master
/// key (see `master_key`), key id 1, pending lifetime 600 s, no JWT secret, system clock,
/// purchase hold 86400 s.
///
/// Ownership: returned by value; nothing to free. Thread-safe.
#[unsafe(no_mangle)]
pub extern "C" fn rampart_config_default() -> rampart_config {
    DEFAULT_CONFIG
}

/// A clock implemented in C.
struct CClock {
    now: unsafe extern "C" fn(*mut c_void) -> u64,
    context: *mut c_void,
}

// SAFETY: the header requires the callback and its context to be usable from any thread, at
// once, for the service's whole life; Rampart only passes the context back to the callback.
unsafe impl Send for CClock {}
// SAFETY: as above.
unsafe impl Sync for CClock {}

impl fmt::Debug for CClock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("CClock")
    }
}

impl Clock for CClock {
    fn now(&self) -> u64 {
        // SAFETY: the caller supplied this function for exactly this use (see `rampart_clock_fn`).
        unsafe { (self.now)(self.context) }
    }
}

/// A copy of bytes given as pointer and length, wiped on drop.
///
/// # Safety
/// `ptr` is NULL or valid for reads of `len` bytes.
unsafe fn secret_bytes(ptr: *const u8, len: usize, name: &str) -> Result<Option<Zeroizing<Vec<u8>>>, Error> {
    if ptr.is_null() {
        return if len == 0 { Ok(None) } else { Err(Error::config(format!("{name} is NULL but its length is not 0"))) };
    }
    // SAFETY: non-NULL and readable for `len` bytes (caller's contract).
    let bytes = unsafe { std::slice::from_raw_parts(ptr, len) };
    Ok(Some(Zeroizing::new(bytes.to_vec())))
}

/// Where the master key comes from.
enum MasterKey {
    Given(KeyRing),
    /// Sandbox without a key: beside the database file, or random for a memory store.
    SandboxDefault,
}

/// A config read and checked, before any store is opened.
struct Settings {
    config: Config,
    key: MasterKey,
    clock: Option<Arc<dyn Clock>>,
}

/// Why a PostgreSQL URL without `master_key` is refused (there is no file to keep a key beside).
const NEEDS_MASTER_KEY: &str = "a PostgreSQL database needs config.master_key: every service sharing it must seal \
                                and open secrets with the same key";

/// `postgres`: the service opens a PostgreSQL URL, so it needs a key given explicitly.
///
/// # Safety
/// `config` is NULL or points to a `rampart_config` whose pointers obey its field docs.
unsafe fn settings(config: *const rampart_config, postgres: bool) -> Result<Settings, Error> {
    let ptr = non_null(config, "config")?;
    // SAFETY: non-NULL and points to a readable `rampart_config` (caller's contract); the
    // struct is plain data, copied.
    let c = unsafe { ptr.as_ptr().read() };
    let defaults = Config::default();
    // SAFETY: the field's contract: NULL or a NUL-terminated string.
    let service_name = unsafe { opt_str_arg(c.service_name, "config.service_name") }?
        .map_or(defaults.service_name.clone(), str::to_owned);
    let environment = environment_arg(c.environment, "config.environment").map_err(|_| {
        Error::config("environment must be RAMPART_ENVIRONMENT_SANDBOX or RAMPART_ENVIRONMENT_PRODUCTION")
    })?;
    // SAFETY: the field's contract: NULL or `master_key_len` readable bytes.
    let key = match unsafe { secret_bytes(c.master_key, c.master_key_len, "master_key") }? {
        Some(bytes) => {
            let key: &[u8; 32] =
                bytes.as_slice().try_into().map_err(|_| Error::config("master key must be exactly 32 bytes"))?;
            MasterKey::Given(KeyRing::new(c.master_key_id, key))
        }
        None if postgres => return Err(Error::config(NEEDS_MASTER_KEY)),
        None if environment == Environment::Production => {
            return Err(Error::config("production refuses to start without a master key"));
        }
        None => MasterKey::SandboxDefault,
    };
    // SAFETY: the field's contract: NULL or `jwt_secret_len` readable bytes.
    let jwt_secret = unsafe { secret_bytes(c.jwt_secret, c.jwt_secret_len, "jwt_secret") }?;
    let clock = c.clock.map(|now| Arc::new(CClock { now, context: c.clock_context }) as Arc<dyn Clock>);
    let config = Config {
        service_name,
        environment,
        window: c.window,
        pending_ttl_secs: c.pending_ttl_secs,
        throttling: c.throttling,
        jwt_secret,
        purchase_hold_secs: c.purchase_hold_secs,
        ..defaults
    };
    // Check every rule now, on a throwaway store, so a bad config never creates files or connects.
    Service::builder(MemoryStore::new()).master_keys(KeyRing::new(0, &[0; 32])).config(config.clone()).build()?;
    Ok(Settings { config, key, clock })
}

/// An open service. Opaque to C.
pub struct rampart_service {
    service: Service,
    faults: Option<Arc<FaultyStore>>,
}

impl fmt::Debug for rampart_service {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("rampart_service").field("service", &self.service).finish_non_exhaustive()
    }
}

fn open(settings: Settings, store: Arc<dyn Store>, key_file: Option<&Path>) -> Result<Box<rampart_service>, Error> {
    let keys = match settings.key {
        MasterKey::Given(keys) => keys,
        MasterKey::SandboxDefault => match key_file {
            Some(path) => KeyRing::load_or_generate(path, &*store)?,
            None => KeyRing::generate()?,
        },
    };
    let mut builder = Service::builder_shared(store).master_keys(keys).config(settings.config);
    if let Some(clock) = settings.clock {
        builder = builder.clock(clock);
    }
    Ok(Box::new(rampart_service { service: builder.build()?, faults: None }))
}

#[cfg(unix)]
fn path_from_bytes(bytes: &[u8]) -> Result<PathBuf, Error> {
    use std::os::unix::ffi::OsStrExt;
    Ok(PathBuf::from(std::ffi::OsStr::from_bytes(bytes)))
}

#[cfg(not(unix))]
fn path_from_bytes(bytes: &[u8]) -> Result<PathBuf, Error> {
    std::str::from_utf8(bytes).map(PathBuf::from).map_err(|_| Error::not_unicode("db_path"))
}

/// `<db>.key`, beside the database (as the example server does).
fn key_path(db: &Path) -> PathBuf {
    let mut name = db.as_os_str().to_owned();
    name.push(".key");
    PathBuf::from(name)
}

/// A `postgres://` or `postgresql://` URL, not a file name.
fn is_postgres_url(bytes: &[u8]) -> bool {
    bytes.starts_with(b"postgres://") || bytes.starts_with(b"postgresql://")
}

/// Open a service on the SQLite database at `db_path` (created, mode 0600, when missing, and
/// migrated), or on the PostgreSQL database a `postgres://` or `postgresql://` URL names
/// (connected and migrated; any number of services, in any number of processes, may share
/// it). `db_path` is a file name in the platform's encoding (on Unix any bytes), or a UTF-8
/// URL such as `postgres://rampart:PASSWORD@db.internal:5432/rampart`. A URL to a TCP host
/// uses TLS and verifies the server's certificate (the system's CAs, or the file a
/// `sslrootcert=PATH` parameter names) unless it says `sslmode=disable`; a Unix socket
/// (`?host=/run/postgresql`) needs none.
///
/// Errors: `RAMPART_STATUS_CONFIG` for settings that break a rule (the message says which), a
/// database file that cannot be opened (the cause says why), a URL without
/// `config.master_key` ("a PostgreSQL database needs config.master_key: ..."), or master keys
/// that would not work, each message naming the key file and line, never a key: `<db_path>.key`
/// readable by group or others ("has mode 0644; it must be readable by its owner only"), a key
/// id given twice, a key (given or read) that opens none of the stored secrets sealed under its
/// id, or a missing key file while the database holds 2FA secrets (no new key is written then).
/// `RAMPART_STATUS_INTERNAL` for a PostgreSQL database that cannot be used: unreachable,
/// refusing the connection or its TLS, or failing to migrate (`rampart_last_error_cause` says
/// why; neither it nor the message ever shows the password).
/// `RAMPART_STATUS_INVALID_INPUT` for NULL arguments, out-of-range numbers (`window`,
/// `pending_ttl_secs`) and a URL that is not UTF-8. Nothing is created or connected to when
/// the settings are invalid.
///
/// Ownership: on success `*out_service` receives a new handle, freed with
/// `rampart_service_free`. `db_path` and `config` are copied; nothing is kept.
///
/// Threading: the handle is thread-safe: any number of threads may use one handle at once
/// (every call takes it as `const`); only `rampart_service_free` needs exclusive access.
/// Several handles, in one process or several, may open the same database. A PostgreSQL
/// service must not be opened or used on a thread that runs a Rust async runtime's tasks
/// (tokio): call it from plain threads (freeing it is safe anywhere).
///
/// # Safety
/// `db_path` is NULL or a NUL-terminated string; `config` is NULL or a valid config (see
/// `rampart_config`); `out_service` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_service_open(
    db_path: *const c_char,
    config: *const rampart_config,
    out_service: *mut *mut rampart_service,
) -> rampart_status {
    status_call(|| {
        // SAFETY: NULL or NUL-terminated (caller's contract).
        let db = unsafe { c_bytes(db_path) }.ok_or_else(|| null_arg("db_path"))?;
        let postgres = is_postgres_url(db);
        // SAFETY: forwarded contract.
        let settings = unsafe { settings(config, postgres) }?;
        let out = Out::new(out_service, "out_service")?;
        let handle = if postgres {
            let url = std::str::from_utf8(db).map_err(|_| Error::not_unicode("db_path"))?;
            // Unreachable, refusing or failing to migrate: the store failed. Its errors never
            // quote the URL.
            let store = PostgresStore::open(url).map_err(|e| Error::new(ErrorKind::Internal).with_cause(e))?;
            open(settings, Arc::new(store), None)?
        } else {
            let path = path_from_bytes(db)?;
            let store =
                SqliteStore::open(&path).map_err(|e| Error::config("cannot open the database").with_cause(e))?;
            open(settings, Arc::new(store), Some(&key_path(&path)))?
        };
        // SAFETY: checked writable out-pointer (caller's contract).
        unsafe { out.write(Box::into_raw(handle)) };
        Ok(())
    })
}

/// Open a service on an in-memory store: nothing is kept after `rampart_service_free`. For
/// tests and short-lived tools. Errors, ownership and threading as `rampart_service_open`.
///
/// # Safety
/// `config` is NULL or a valid config; `out_service` is NULL or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_service_open_memory(
    config: *const rampart_config,
    out_service: *mut *mut rampart_service,
) -> rampart_status {
    status_call(|| {
        // SAFETY: forwarded contract.
        let settings = unsafe { settings(config, false) }?;
        let out = Out::new(out_service, "out_service")?;
        let handle = open(settings, Arc::new(MemoryStore::new()), None)?;
        // SAFETY: checked writable out-pointer.
        unsafe { out.write(Box::into_raw(handle)) };
        Ok(())
    })
}

/// Testing aid: open a service on an in-memory store that fails on demand (see
/// `rampart_service_set_faults`), to check that your code fails closed when storage fails.
/// Errors, ownership and threading as `rampart_service_open`.
///
/// Ownership: as `rampart_service_open_memory`: `config` is copied; the handle is freed with `rampart_service_free`.
///
/// # Safety
/// As for `rampart_service_open_memory`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_service_open_faulty(
    config: *const rampart_config,
    out_service: *mut *mut rampart_service,
) -> rampart_status {
    status_call(|| {
        // SAFETY: forwarded contract.
        let settings = unsafe { settings(config, false) }?;
        let out = Out::new(out_service, "out_service")?;
        let faults = Arc::new(FaultyStore::new(MemoryStore::new()));
        let mut handle = open(settings, faults.clone(), None)?;
        handle.faults = Some(faults);
        // SAFETY: checked writable out-pointer.
        unsafe { out.write(Box::into_raw(handle)) };
        Ok(())
    })
}

/// Testing aid, for a handle from `rampart_service_open_faulty`: while `fail_reads` is true
/// every store read fails, while `fail_writes` is true every store write fails (nothing is
/// kept); with `spare_partner_reads` partner lookups keep working while reads fail. Calls then
/// return the operation's 500 status (`RAMPART_STATUS_STATUS_FAILED`, ...).
///
/// Errors: `RAMPART_STATUS_INVALID_INPUT` for any other handle. Threading: safe to call
/// while other threads use the handle; their calls see the new faults from then on.
///
/// Ownership: nothing is kept or returned.
///
/// # Safety
/// `service` is NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_service_set_faults(
    service: *const rampart_service,
    fail_reads: bool,
    fail_writes: bool,
    spare_partner_reads: bool,
) -> rampart_status {
    status_call(|| {
        // SAFETY: forwarded contract.
        let handle = unsafe { handle(service) }?;
        let faults = handle
            .faults
            .as_ref()
            .ok_or_else(|| Error::invalid_input("service", "was not opened with rampart_service_open_faulty"))?;
        faults.fail_reads(fail_reads);
        faults.fail_writes(fail_writes);
        faults.spare_partner_reads(spare_partner_reads);
        Ok(())
    })
}

/// Close a service and free its handle. NULL is a no-op, so calling it twice on a pointer
/// reset to NULL is harmless.
///
/// Ownership: takes ownership of `service`; the pointer is invalid afterwards. Strings already
/// returned stay valid (they are independent of the handle).
///
/// Threading: must not run while any other call uses the same handle.
///
/// # Safety
/// `service` is NULL or a handle from `rampart_service_open*` not freed yet.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_service_free(service: *mut rampart_service) {
    value_call((), || {
        if !service.is_null() {
            // SAFETY: a handle made by `Box::into_raw` in an open call, freed once (caller's contract).
            drop(unsafe { Box::from_raw(service) });
        }
    })
}

/// # Safety
/// `ptr` is NULL or a live handle that is not freed during the call.
unsafe fn handle<'a>(ptr: *const rampart_service) -> Result<&'a rampart_service, Error> {
    let ptr = non_null(ptr, "service")?;
    // SAFETY: a live handle (caller's contract); only shared references are ever made.
    Ok(unsafe { ptr.as_ref() })
}

/// # Safety
/// `ptr` is NULL or a live handle.
unsafe fn service<'a>(ptr: *const rampart_service) -> Result<&'a Service, Error> {
    // SAFETY: forwarded contract.
    unsafe { handle(ptr) }.map(|h| &h.service)
}

/// The core service behind a handle, for the other modules of the ABI.
///
/// # Safety
/// `ptr` is NULL or a live handle.
pub(crate) unsafe fn service_ref<'a>(ptr: *const rampart_service) -> Result<&'a Service, Error> {
    // SAFETY: forwarded contract.
    unsafe { service(ptr) }
}

/// Check that the store answers (for health checks).
///
/// Errors: `RAMPART_STATUS_INTERNAL` when it does not. Threading: thread-safe on a shared handle.
///
/// Ownership: nothing is kept or returned.
///
/// # Safety
/// `service` is NULL or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_service_ping(service: *const rampart_service) -> rampart_status {
    // SAFETY: forwarded contract.
    status_call(|| unsafe { self::service(service) }?.ping())
}

// ---------------------------------------------------------------------------------------------
// The 2FA lifecycle
// ---------------------------------------------------------------------------------------------

/// Create a new pending TOTP secret for a contact (replacing an earlier pending one), to be
/// confirmed by `rampart_service_enable_2fa` within the pending lifetime.
///
/// `partner_id` and `contact_id` are hyphenated UUIDs (any case). `issuer` (shown in the
/// authenticator app) may be NULL or "" for the default, the service name followed by "2FA";
/// otherwise 1 to 64 characters without ':' or control characters. `label` is the account
/// name shown in the app; NULL means the contact id.
///
/// Errors: `RAMPART_STATUS_CONTACT_ID_REQUIRED` (NULL or "" contact id),
/// `RAMPART_STATUS_CONTACT_ID_INVALID` (not a UUID, or not UTF-8),
/// `RAMPART_STATUS_ISSUER_INVALID` (also for an issuer that is not UTF-8),
/// `RAMPART_STATUS_PARTNER_NOT_FOUND` (no such partner: nothing is created),
/// `RAMPART_STATUS_MUST_DISABLE_FIRST` (2FA is enabled), `RAMPART_STATUS_CREATE_FAILED`
/// (storage), `RAMPART_STATUS_INVALID_INPUT` (other arguments, a label that is not UTF-8).
///
/// Ownership: on success `*out_qr_code` receives the Key URI as a QR code
/// (`data:image/png;base64,...`), `*out_manual` the secret in unpadded base32 for manual
/// entry, and `*out_uri` (if `out_uri` is not NULL) the otpauth Key URI; all are library
/// strings holding the secret, each freed with `rampart_string_free`. Show them to the user
/// once and do not store or log them.
///
/// Threading: thread-safe on a shared handle.
///
/// # Safety
/// Pointers are NULL or valid: strings NUL-terminated, out-pointers writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_service_create_2fa(
    service: *const rampart_service,
    partner_id: *const c_char,
    contact_id: *const c_char,
    issuer: *const c_char,
    label: *const c_char,
    out_qr_code: *mut *mut c_char,
    out_manual: *mut *mut c_char,
    out_uri: *mut *mut c_char,
) -> rampart_status {
    status_call(|| {
        // SAFETY: pointers obey the contract above.
        let service = unsafe { self::service(service) }?;
        // SAFETY: as above.
        let partner = unsafe { partner_arg(partner_id) }?;
        // SAFETY: as above.
        let contact = unsafe { contact_arg(contact_id) }?;
        // SAFETY: as above.
        let issuer = unsafe { opt_str_arg(issuer, "issuer") }?;
        // SAFETY: as above.
        let label = unsafe { opt_str_arg(label, "label") }?;
        let out_qr_code = Out::new(out_qr_code, "out_qr_code")?;
        let out_manual = Out::new(out_manual, "out_manual")?;
        let out_uri = Out::optional(out_uri);
        let setup = match label {
            Some(label) => service.create_2fa_with_label(&partner, &contact, issuer, label)?,
            None => service.create_2fa(&partner, &contact, issuer)?,
        };
        let mut pending = Pending::default();
        let qr = pending.keep(secret_string(setup.qr_code))?;
        let manual = pending.keep(secret_string(setup.manual))?;
        let uri = match out_uri {
            Some(_) => Some(pending.keep(secret_string(setup.uri))?),
            None => {
                drop(Zeroizing::new(setup.uri));
                None
            }
        };
        pending.release();
        // SAFETY: checked writable out-pointers.
        unsafe {
            out_qr_code.write(qr);
            out_manual.write(manual);
        }
        if let (Some(out), Some(uri)) = (out_uri, uri) {
            // SAFETY: checked writable out-pointer.
            unsafe { out.write(uri) };
        }
        Ok(())
    })
}

/// Confirm the pending secret with a code from it: 2FA becomes enabled, the code's time step
/// is used up (so the same code cannot then disable), and a set of 10 recovery codes is issued
/// in the same transaction.
///
/// `token` is the code as the user typed it ("123456", " 123 456", "123-456"); NULL or only
/// white space is a missing token. Anything that is not a 6-digit code (including bytes that
/// are not UTF-8) is answered as a wrong code.
///
/// Errors, in this order: the id statuses as for create; `RAMPART_STATUS_ALREADY_ENABLED`;
/// `RAMPART_STATUS_NOT_CREATED` (no pending secret, or it expired); `RAMPART_STATUS_LOCKED`;
/// `RAMPART_STATUS_THROTTLED` (see `rampart_last_retry_after`); `RAMPART_STATUS_TOKEN_MISSING`;
/// `RAMPART_STATUS_TOKEN_FAILED` (wrong, malformed or replayed code);
/// `RAMPART_STATUS_ENABLE_FAILED` (storage, or a secret that does not open).
///
/// Ownership: on success `*out_codes` (if `out_codes` is not NULL) receives the recovery codes,
/// freed with `rampart_recovery_codes_free`. Show them to the person once (they are never shown
/// again; only `rampart_service_regenerate_recovery_codes` makes a new set) and never store or
/// log them. With NULL they are discarded. Threading: thread-safe on a shared handle; of several
/// concurrent calls with one valid code exactly one succeeds.
///
/// # Safety
/// Pointers are NULL or valid NUL-terminated strings; `service` a live handle; `out_codes` NULL
/// or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_service_enable_2fa(
    service: *const rampart_service,
    partner_id: *const c_char,
    contact_id: *const c_char,
    token: *const c_char,
    out_codes: *mut *mut rampart_recovery_codes,
) -> rampart_status {
    status_call(|| {
        // SAFETY: pointers obey the contract above.
        let (service, partner, contact) =
            unsafe { (self::service(service)?, partner_arg(partner_id)?, contact_arg(contact_id)?) };
        // SAFETY: as above.
        let token = unsafe { token_arg(token) };
        let out = Out::optional(out_codes);
        let codes = service.enable_2fa(&partner, &contact, token)?;
        if let Some(out) = out {
            let handle = codes_handle(&codes)?;
            // SAFETY: checked writable out-pointer.
            unsafe { out.write(handle) };
        }
        Ok(())
    })
}

/// Turn 2FA off with an authenticator code (`token`) or a recovery code (`recovery_code`): give
/// one, pass NULL for the other. The secret and the recovery codes are erased. A recovery code
/// is used up, works while the contact is locked (clearing the lock and both failure counters)
/// and starts the purchase hold (`config.purchase_hold_secs`).
///
/// `token` reads as in `rampart_service_enable_2fa`. `recovery_code` is read as SPEC section
/// 8.1 says (white space, hyphens and case do not matter; `O` is `0`, `I` and `L` are `1`);
/// NULL, empty or only white space is not given, and anything that is not a code of the set
/// (bytes that are not UTF-8 included) is a wrong code.
///
/// Errors: `RAMPART_STATUS_FACTOR_CONFLICT` (both given), then as `rampart_service_enable_2fa`,
/// with `RAMPART_STATUS_NOT_ENABLED` for the state, `RAMPART_STATUS_TOKEN_MISSING` when neither
/// is given and `RAMPART_STATUS_DISABLE_FAILED` for storage. Wrong recovery codes have their own
/// back-off (`RAMPART_STATUS_THROTTLED`) and never lock; a used one is
/// `RAMPART_STATUS_TOKEN_FAILED` without counting. Ownership: nothing is returned or kept.
/// Threading: thread-safe on a shared handle; of several concurrent calls with one valid code
/// exactly one succeeds.
///
/// # Safety
/// Pointers are NULL or valid NUL-terminated strings; `service` a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_service_disable_2fa(
    service: *const rampart_service,
    partner_id: *const c_char,
    contact_id: *const c_char,
    token: *const c_char,
    recovery_code: *const c_char,
) -> rampart_status {
    status_call(|| {
        // SAFETY: pointers obey the contract above.
        let (service, partner, contact) =
            unsafe { (self::service(service)?, partner_arg(partner_id)?, contact_arg(contact_id)?) };
        // SAFETY: as above.
        let factor = unsafe { factor_arg(token, recovery_code) }?;
        service.disable_2fa(&partner, &contact, factor)
    })
}

/// Whether 2FA is enabled for a contact (unknown contacts: false).
///
/// Errors: the id statuses, `RAMPART_STATUS_STATUS_FAILED` (storage). Ownership: on success
/// `*out_enabled` is written. Threading: thread-safe on a shared handle.
///
/// # Safety
/// Pointers are NULL or valid; `service` a live handle; `out_enabled` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_service_status_2fa(
    service: *const rampart_service,
    partner_id: *const c_char,
    contact_id: *const c_char,
    out_enabled: *mut bool,
) -> rampart_status {
    status_call(|| {
        // SAFETY: pointers obey the contract above.
        let (service, partner, contact) =
            unsafe { (self::service(service)?, partner_arg(partner_id)?, contact_arg(contact_id)?) };
        let out = Out::new(out_enabled, "out_enabled")?;
        let enabled = service.status_2fa(&partner, &contact)?;
        // SAFETY: checked writable out-pointer.
        unsafe { out.write(enabled) };
        Ok(())
    })
}

/// Check a code at login or purchase, under the same replay and throttle rules as enable and
/// disable: an authenticator code (`token`) or a recovery code (`recovery_code`), one given and
/// the other NULL, read as in `rampart_service_disable_2fa`. A recovery code is used up; 2FA
/// stays enabled. A wrong code is an outcome, not an error: the call returns `RAMPART_OK` with
/// `*out_accepted` false (wrong, malformed and replayed codes are not told apart).
///
/// Errors: the id statuses, `RAMPART_STATUS_FACTOR_CONFLICT` (both given),
/// `RAMPART_STATUS_NOT_ENABLED`, `RAMPART_STATUS_LOCKED` (authenticator codes only),
/// `RAMPART_STATUS_THROTTLED`, `RAMPART_STATUS_TOKEN_MISSING` (neither given),
/// `RAMPART_STATUS_VERIFY_FAILED` (storage).
///
/// Ownership: on success `*out_accepted` is written; `*out_method` (if not NULL) receives the
/// factor that passed (`RAMPART_VERIFY_METHOD_NONE` when rejected) and
/// `*out_recovery_codes_remaining` (if not NULL) the unused recovery codes after an accepted
/// code (0 when rejected). Threading: thread-safe on a shared handle; of several concurrent
/// calls with one valid code exactly one is accepted.
///
/// # Safety
/// Pointers are NULL or valid; `service` a live handle; out-pointers NULL or writable.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn rampart_service_verify_2fa(
    service: *const rampart_service,
    partner_id: *const c_char,
    contact_id: *const c_char,
    token: *const c_char,
    recovery_code: *const c_char,
    out_accepted: *mut bool,
    out_method: *mut rampart_verify_method,
    out_recovery_codes_remaining: *mut u32,
) -> rampart_status {
    status_call(|| {
        // SAFETY: pointers obey the contract above.
        let (service, partner, contact) =
            unsafe { (self::service(service)?, partner_arg(partner_id)?, contact_arg(contact_id)?) };
        // SAFETY: as above.
        let factor = unsafe { factor_arg(token, recovery_code) }?;
        let out = Out::new(out_accepted, "out_accepted")?;
        let (out_method, out_remaining) = (Out::optional(out_method), Out::optional(out_recovery_codes_remaining));
        let (accepted, method, remaining) = match service.verify_2fa(&partner, &contact, factor)? {
            Verification::Accepted { method: Method::Token, recovery_codes_remaining } => {
                (true, rampart_verify_method::RAMPART_VERIFY_METHOD_TOKEN, recovery_codes_remaining)
            }
            Verification::Accepted { method: Method::RecoveryCode, recovery_codes_remaining } => {
                (true, rampart_verify_method::RAMPART_VERIFY_METHOD_RECOVERY_CODE, recovery_codes_remaining)
            }
            Verification::Rejected => (false, rampart_verify_method::RAMPART_VERIFY_METHOD_NONE, 0),
        };
        // SAFETY: checked writable out-pointers.
        unsafe {
            out.write(accepted);
            if let Some(out) = out_method {
                out.write(method);
            }
            if let Some(out) = out_remaining {
                out.write(remaining);
            }
        }
        Ok(())
    })
}

// ---------------------------------------------------------------------------------------------
// Partners and keys
// ---------------------------------------------------------------------------------------------

/// Create a partner in an environment (a `rampart_environment` value) and hand out its keys.
/// `name` is 1 to 200 characters without control characters.
///
/// Errors: `RAMPART_STATUS_INVALID_INPUT` (name, environment), `RAMPART_STATUS_INTERNAL`
/// (storage).
///
/// Ownership: on success `*out_partner_id` receives the partner's id (a UUID, also the legacy
/// widget `apiKey`), `*out_secret_key` the secret API key (`sk_<environment>_...`, shown only
/// now: Rampart keeps only its hash) and `*out_publishable_key` the widget key
/// (`pk_<environment>_...`); each is a library string freed with `rampart_string_free`.
/// Threading: thread-safe on a shared handle.
///
/// # Safety
/// Pointers are NULL or valid; `name` NUL-terminated; out-pointers writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_service_create_partner(
    service: *const rampart_service,
    name: *const c_char,
    environment: u32,
    out_partner_id: *mut *mut c_char,
    out_secret_key: *mut *mut c_char,
    out_publishable_key: *mut *mut c_char,
) -> rampart_status {
    status_call(|| {
        // SAFETY: pointers obey the contract above.
        let (service, name) = unsafe { (self::service(service)?, str_arg(name, "name")?) };
        let environment = environment_arg(environment, "environment")?;
        let out_id = Out::new(out_partner_id, "out_partner_id")?;
        let out_secret = Out::new(out_secret_key, "out_secret_key")?;
        let out_public = Out::new(out_publishable_key, "out_publishable_key")?;
        let creds = service.create_partner(name, environment)?;
        let mut pending = Pending::default();
        let id = pending.keep(library_string(&creds.partner_id.to_string()))?;
        let secret = pending.keep(library_string(creds.secret_key.expose()))?;
        let public = pending.keep(library_string(&creds.publishable_key))?;
        pending.release();
        // SAFETY: checked writable out-pointers.
        unsafe {
            out_id.write(id);
            out_secret.write(secret);
            out_public.write(public);
        }
        Ok(())
    })
}

/// Authenticate a bearer credential: the value after `Bearer ` in an `Authorization` header
/// (not the header itself). Accepts a secret key of the service's environment, or, when the
/// config has a JWT secret, a legacy HS256 JWT whose `sub` is the partner id.
///
/// Errors: `RAMPART_STATUS_UNAUTHORIZED` for anything else (publishable keys, the other
/// environment's keys, rotated keys, bad JWTs), `RAMPART_STATUS_INTERNAL` (storage).
///
/// Ownership: on success `*out_partner_id` receives the partner id, a library string freed
/// with `rampart_string_free`; `*out_legacy_jwt` (if `out_legacy_jwt` is not NULL) is true
/// when a legacy JWT was used (answer with a `Deprecation: true` header). Threading:
/// thread-safe on a shared handle.
///
/// # Safety
/// Pointers are NULL or valid; `bearer` NUL-terminated; out-pointers writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_service_authenticate(
    service: *const rampart_service,
    bearer: *const c_char,
    out_partner_id: *mut *mut c_char,
    out_legacy_jwt: *mut bool,
) -> rampart_status {
    status_call(|| {
        // SAFETY: pointers obey the contract above.
        let service = unsafe { self::service(service) }?;
        // A credential that is not UTF-8 cannot be a key or a JWT: the same answer as a bad one.
        // SAFETY: as above.
        let bearer = unsafe { field_arg(bearer, "bearer", ErrorKind::Unauthorized) }?;
        let out_id = Out::new(out_partner_id, "out_partner_id")?;
        let out_jwt = Out::optional(out_legacy_jwt);
        let auth = service.authenticate(bearer)?;
        let id = library_string(&auth.partner_id.to_string())?;
        // SAFETY: checked writable out-pointers.
        unsafe {
            out_id.write(id);
            if let Some(out) = out_jwt {
                out.write(auth.method == AuthMethod::LegacyJwt);
            }
        }
        Ok(())
    })
}

/// Replace a partner's secret and publishable keys: an operator action, written to the partner's
/// audit trail (`partner.keys_rotated`, actor `operator:<operator>`; who acts: non-empty, no
/// control characters) in the same transaction as the change.
/// The old keys stop working at once on this handle.
///
/// Errors: `RAMPART_STATUS_PARTNER_NOT_FOUND`, `RAMPART_STATUS_INVALID_INPUT`,
/// `RAMPART_STATUS_INTERNAL`. Ownership: as `rampart_service_create_partner` for the two keys.
/// Threading: thread-safe on a shared handle.
///
/// # Safety
/// Pointers are NULL or valid; strings NUL-terminated; out-pointers writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_service_rotate_keys(
    service: *const rampart_service,
    operator_name: *const c_char,
    partner_id: *const c_char,
    out_secret_key: *mut *mut c_char,
    out_publishable_key: *mut *mut c_char,
) -> rampart_status {
    status_call(|| {
        // SAFETY: pointers obey the contract above.
        let (service, operator) = unsafe { (self::service(service)?, str_arg(operator_name, "operator_name")?) };
        // SAFETY: as above.
        let partner = unsafe { partner_arg(partner_id) }?;
        let out_secret = Out::new(out_secret_key, "out_secret_key")?;
        let out_public = Out::new(out_publishable_key, "out_publishable_key")?;
        let creds = service.rotate_keys(operator, &partner)?;
        let mut pending = Pending::default();
        let secret = pending.keep(library_string(creds.secret_key.expose()))?;
        let public = pending.keep(library_string(&creds.publishable_key))?;
        pending.release();
        // SAFETY: checked writable out-pointers.
        unsafe {
            out_secret.write(secret);
            out_public.write(public);
        }
        Ok(())
    })
}

// ---------------------------------------------------------------------------------------------
// Widget settings: the confirmation screen, who may embed the widget
// ---------------------------------------------------------------------------------------------

/// Set a partner's confirmation-screen button text: 1 to 64 characters, no control characters;
/// stored exactly as given.
///
/// Errors: `RAMPART_STATUS_WIDGET_TEXT_INVALID`, `RAMPART_STATUS_PARTNER_NOT_FOUND`,
/// `RAMPART_STATUS_INTERNAL`. Ownership: `text` is copied. Threading: thread-safe on a shared
/// handle.
///
/// # Safety
/// Pointers are NULL or valid NUL-terminated strings; `service` a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_service_set_widget_text(
    service: *const rampart_service,
    partner_id: *const c_char,
    text: *const c_char,
) -> rampart_status {
    status_call(|| {
        // SAFETY: pointers obey the contract above.
        let (service, partner) = unsafe { (self::service(service)?, partner_arg(partner_id)?) };
        // SAFETY: as above.
        let text = unsafe { str_arg(text, "text") }?;
        service.set_widget_text(&partner, text).map(drop)
    })
}

/// A partner's confirmation-screen button text.
///
/// Errors: `RAMPART_STATUS_PARTNER_NOT_FOUND`, `RAMPART_STATUS_INTERNAL`. Ownership: on success
/// `*out_text` receives a library string freed with `rampart_string_free`, or NULL when no
/// text is set. Threading: thread-safe on a shared handle.
///
/// # Safety
/// Pointers are NULL or valid; `out_text` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_service_widget_text(
    service: *const rampart_service,
    partner_id: *const c_char,
    out_text: *mut *mut c_char,
) -> rampart_status {
    status_call(|| {
        // SAFETY: pointers obey the contract above.
        let (service, partner) = unsafe { (self::service(service)?, partner_arg(partner_id)?) };
        let out = Out::new(out_text, "out_text")?;
        let text = service.widget_text(&partner)?.as_deref().map(library_string).transpose()?;
        // SAFETY: checked writable out-pointer.
        unsafe { out.write(text.unwrap_or(std::ptr::null_mut())) };
        Ok(())
    })
}

/// Set a partner's confirmation-screen button URL: an absolute http(s) URL with a host, no
/// credentials, no white space or control characters, at most 2048 characters; stored exactly
/// as given.
///
/// Errors: `RAMPART_STATUS_WIDGET_BUTTON_URL_INVALID`, `RAMPART_STATUS_PARTNER_NOT_FOUND`,
/// `RAMPART_STATUS_INTERNAL`. Ownership: `url` is copied. Threading: thread-safe on a shared
/// handle.
///
/// # Safety
/// Pointers are NULL or valid NUL-terminated strings; `service` a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_service_set_widget_button_url(
    service: *const rampart_service,
    partner_id: *const c_char,
    url: *const c_char,
) -> rampart_status {
    status_call(|| {
        // SAFETY: pointers obey the contract above.
        let (service, partner) = unsafe { (self::service(service)?, partner_arg(partner_id)?) };
        // SAFETY: as above.
        let url = unsafe { str_arg(url, "url") }?;
        service.set_widget_button_url(&partner, url).map(drop)
    })
}

/// A partner's confirmation-screen button URL. Errors, ownership (NULL when unset) and
/// threading as `rampart_service_widget_text`.
///
/// Ownership: on success `*out_url` receives a library string freed with `rampart_string_free`, or NULL when unset.
///
/// # Safety
/// Pointers are NULL or valid; `out_url` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_service_widget_button_url(
    service: *const rampart_service,
    partner_id: *const c_char,
    out_url: *mut *mut c_char,
) -> rampart_status {
    status_call(|| {
        // SAFETY: pointers obey the contract above.
        let (service, partner) = unsafe { (self::service(service)?, partner_arg(partner_id)?) };
        let out = Out::new(out_url, "out_url")?;
        let url = service.widget_button_url(&partner)?.as_deref().map(library_string).transpose()?;
        // SAFETY: checked writable out-pointer.
        unsafe { out.write(url.unwrap_or(std::ptr::null_mut())) };
        Ok(())
    })
}

/// Replace the origins allowed to embed a partner's widget (SPEC section 6.2).
/// `origins_json` is a JSON array of strings, each `http(s)://host[:port]` (no path, query,
/// credentials or wildcard): at most 20, none twice, https only for a production partner. They
/// are stored canonical, as a browser serialises `event.origin` (`"HTTPS://Shop.Example:443"` is
/// `"https://shop.example"`); `[]` removes them all.
///
/// Errors: `RAMPART_STATUS_PARTNER_NOT_FOUND`, `RAMPART_STATUS_INVALID_INPUT`
/// with the last error naming the index or the argument, as `rampart_widget_check_origins`
/// (`"widgetOrigins[1] must be https in production"`, `"widgetOrigins[0] must be valid Unicode
/// text"`, `"origins_json must be JSON text"`); nothing is stored then.
/// `RAMPART_STATUS_PAYLOAD_TOO_LARGE`, `RAMPART_STATUS_INTERNAL` (storage).
///
/// Ownership: `origins_json` is copied, never kept. On success `*out_origins_json` (if
/// `out_origins_json` is not NULL) receives the stored origins as a compact JSON array
/// (`["https://shop.example"]`), a library string freed with `rampart_string_free`.
/// Threading: thread-safe on a shared handle.
///
/// # Safety
/// Pointers are NULL or valid: strings NUL-terminated, `out_origins_json` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_service_set_widget_origins(
    service: *const rampart_service,
    partner_id: *const c_char,
    origins_json: *const c_char,
    out_origins_json: *mut *mut c_char,
) -> rampart_status {
    status_call(|| {
        // SAFETY: pointers obey the contract above.
        let (service, partner) = unsafe { (self::service(service)?, partner_arg(partner_id)?) };
        // SAFETY: as above.
        let origins = unsafe { origins_arg(origins_json, "origins_json") }?;
        let out = Out::optional(out_origins_json);
        let stored = service.set_widget_origins(&partner, &origins)?;
        if let Some(out) = out {
            let text = origins_string(&stored)?;
            // SAFETY: checked writable out-pointer.
            unsafe { out.write(text) };
        }
        Ok(())
    })
}

/// The origins allowed to embed a partner's widget, canonical.
///
/// Errors: `RAMPART_STATUS_PARTNER_NOT_FOUND`, `RAMPART_STATUS_INVALID_INPUT` (arguments),
/// `RAMPART_STATUS_INTERNAL`. Ownership: on success `*out_origins_json` receives them as a
/// compact JSON array (`[]` when none), a library string freed with `rampart_string_free`.
/// Threading: thread-safe on a shared handle.
///
/// # Safety
/// Pointers are NULL or valid; `out_origins_json` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_service_widget_origins(
    service: *const rampart_service,
    partner_id: *const c_char,
    out_origins_json: *mut *mut c_char,
) -> rampart_status {
    status_call(|| {
        // SAFETY: pointers obey the contract above.
        let (service, partner) = unsafe { (self::service(service)?, partner_arg(partner_id)?) };
        let out = Out::new(out_origins_json, "out_origins_json")?;
        let text = origins_string(&service.widget_origins(&partner)?)?;
        // SAFETY: checked writable out-pointer.
        unsafe { out.write(text) };
        Ok(())
    })
}

/// Whether an operator approved a partner's production widget (`rampart_service_set_widget_approval`;
/// sandbox widgets work without it).
///
/// Errors: `RAMPART_STATUS_PARTNER_NOT_FOUND`, `RAMPART_STATUS_INVALID_INPUT` (arguments),
/// `RAMPART_STATUS_INTERNAL`. Ownership: on success `*out_approved` is written (a plain value).
/// Threading: thread-safe on a shared handle.
///
/// # Safety
/// Pointers are NULL or valid; `out_approved` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_service_widget_approved(
    service: *const rampart_service,
    partner_id: *const c_char,
    out_approved: *mut bool,
) -> rampart_status {
    status_call(|| {
        // SAFETY: pointers obey the contract above.
        let (service, partner) = unsafe { (self::service(service)?, partner_arg(partner_id)?) };
        let out = Out::new(out_approved, "out_approved")?;
        let approved = service.partner(&partner)?.widget_approved;
        // SAFETY: checked writable out-pointer.
        unsafe { out.write(approved) };
        Ok(())
    })
}

// ---------------------------------------------------------------------------------------------
// KYC rule and operator actions
// ---------------------------------------------------------------------------------------------

/// Mark (`passed` true) or unmark a contact as KYC-passed: an operator action, audit-logged
/// under `operator_name` (`kyc.marked` / `kyc.unmarked`; `rampart_service_audit_events` reads
/// the trail). 2FA is then required for the contact unless the partner has a waiver.
///
/// Errors: the id statuses, `RAMPART_STATUS_PARTNER_NOT_FOUND`, `RAMPART_STATUS_INVALID_INPUT`
/// (operator name), `RAMPART_STATUS_INTERNAL`. Threading: thread-safe on a shared handle.
///
/// Ownership: the strings are copied, never kept; nothing to free.
///
/// # Safety
/// Pointers are NULL or valid NUL-terminated strings; `service` a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_service_set_kyc_passed(
    service: *const rampart_service,
    operator_name: *const c_char,
    partner_id: *const c_char,
    contact_id: *const c_char,
    passed: bool,
) -> rampart_status {
    status_call(|| {
        // SAFETY: pointers obey the contract above.
        let (service, operator) = unsafe { (self::service(service)?, str_arg(operator_name, "operator_name")?) };
        // SAFETY: as above.
        let (partner, contact) = unsafe { (partner_arg(partner_id)?, contact_arg(contact_id)?) };
        service.set_kyc_passed(operator, &partner, &contact, passed)
    })
}

/// Waive (`waived` true) or restore the KYC 2FA requirement for a partner: an operator action,
/// audit-logged under `operator_name` (`partner.waiver_set` / `partner.waiver_cleared`). Errors
/// and threading as `rampart_service_set_kyc_passed`.
///
/// Ownership: the strings are copied, never kept; nothing to free.
///
/// # Safety
/// Pointers are NULL or valid NUL-terminated strings; `service` a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_service_set_2fa_waiver(
    service: *const rampart_service,
    operator_name: *const c_char,
    partner_id: *const c_char,
    waived: bool,
) -> rampart_status {
    status_call(|| {
        // SAFETY: pointers obey the contract above.
        let (service, operator) = unsafe { (self::service(service)?, str_arg(operator_name, "operator_name")?) };
        // SAFETY: as above.
        let partner = unsafe { partner_arg(partner_id) }?;
        service.set_2fa_waiver(operator, &partner, waived)
    })
}

/// Approve (`approved` true) or withdraw the approval of a partner's production widget: an
/// operator action, audit-logged under `operator_name` (`widget.approved` /
/// `widget.unapproved`). Until approved a production widget page explains it and the
/// loader reports `not_approved`; sandbox widgets need no approval. Errors and threading as
/// `rampart_service_set_kyc_passed`.
///
/// Ownership: the strings are copied, never kept; nothing to free.
///
/// # Safety
/// Pointers are NULL or valid NUL-terminated strings; `service` a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_service_set_widget_approval(
    service: *const rampart_service,
    operator_name: *const c_char,
    partner_id: *const c_char,
    approved: bool,
) -> rampart_status {
    status_call(|| {
        // SAFETY: pointers obey the contract above.
        let (service, operator) = unsafe { (self::service(service)?, str_arg(operator_name, "operator_name")?) };
        // SAFETY: as above.
        let partner = unsafe { partner_arg(partner_id) }?;
        service.set_widget_approval(operator, &partner, approved)
    })
}

/// Clear a contact's failure count, lifting a lock (`RAMPART_STATUS_LOCKED`) or a throttle: an
/// operator action, audit-logged under `operator_name` (`2fa.unlocked`, `details.failures` the
/// count before), never a partner call. Errors and threading as `rampart_service_set_kyc_passed`.
///
/// Ownership: the strings are copied, never kept; nothing to free.
///
/// # Safety
/// Pointers are NULL or valid NUL-terminated strings; `service` a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_service_reset_lock(
    service: *const rampart_service,
    operator_name: *const c_char,
    partner_id: *const c_char,
    contact_id: *const c_char,
) -> rampart_status {
    status_call(|| {
        // SAFETY: pointers obey the contract above.
        let (service, operator) = unsafe { (self::service(service)?, str_arg(operator_name, "operator_name")?) };
        // SAFETY: as above.
        let (partner, contact) = unsafe { (partner_arg(partner_id)?, contact_arg(contact_id)?) };
        service.reset_lock(operator, &partner, &contact)
    })
}

/// What `rampart_service_rewrap_secrets` did.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct rampart_rewrap_report {
    /// The newest master key id: every secret the key ring opens is now sealed under it.
    pub key_id: u32,
    /// Sealed secrets (enabled or pending) looked at.
    pub examined: u64,
    /// Secrets re-sealed under the newest key.
    pub rewrapped: u64,
    /// Secrets no key of the ring opens (a key removed too early, or damage); left as they were.
    /// Older keys may be removed from the key file once this is 0.
    pub unopenable: u64,
}

/// Re-seal every stored secret under the newest master key (after a line with a higher id was
/// added to the key file), so older keys can then be removed: an operator action, audit-logged
/// under `operator_name` once per partner changed (`keys.rewrapped`, `details.keyId`). Each contact is re-sealed in its own atomic
/// update, so it may run while other threads serve; a second run changes nothing.
///
/// Errors: `RAMPART_STATUS_INVALID_INPUT` (operator name), `RAMPART_STATUS_INTERNAL`.
/// Ownership: the string is copied, never kept; on success `*out_report` is written (a plain
/// value). Threading: thread-safe on a shared handle.
///
/// # Safety
/// Pointers are NULL or valid; `operator_name` NUL-terminated; `out_report` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_service_rewrap_secrets(
    service: *const rampart_service,
    operator_name: *const c_char,
    out_report: *mut rampart_rewrap_report,
) -> rampart_status {
    status_call(|| {
        // SAFETY: pointers obey the contract above.
        let (service, operator) = unsafe { (self::service(service)?, str_arg(operator_name, "operator_name")?) };
        let out = Out::new(out_report, "out_report")?;
        let r = service.rewrap_secrets(operator)?;
        let report = rampart_rewrap_report {
            key_id: r.key_id,
            examined: r.examined,
            rewrapped: r.rewrapped,
            unopenable: r.unopenable,
        };
        // SAFETY: checked writable out-pointer.
        unsafe { out.write(report) };
        Ok(())
    })
}

/// Whether 2FA is required for a contact: it passed KYC and its partner has no waiver.
///
/// Errors: the id statuses, `RAMPART_STATUS_PARTNER_NOT_FOUND`, `RAMPART_STATUS_INTERNAL`.
/// Ownership: on success `*out_required` is written. Threading: thread-safe on a shared handle.
///
/// # Safety
/// Pointers are NULL or valid; `out_required` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_service_is_2fa_required(
    service: *const rampart_service,
    partner_id: *const c_char,
    contact_id: *const c_char,
    out_required: *mut bool,
) -> rampart_status {
    status_call(|| {
        // SAFETY: pointers obey the contract above.
        let (service, partner) = unsafe { (self::service(service)?, partner_arg(partner_id)?) };
        // SAFETY: as above.
        let contact = unsafe { contact_arg(contact_id) }?;
        let out = Out::new(out_required, "out_required")?;
        let required = service.is_2fa_required(&partner, &contact)?;
        // SAFETY: checked writable out-pointer.
        unsafe { out.write(required) };
        Ok(())
    })
}

/// Whether a contact may purchase: refused while 2FA is required and not enabled, and during a
/// purchase hold (`rampart_service_purchase_check` says which and until when). Errors,
/// ownership (`*out_allowed`) and threading as `rampart_service_is_2fa_required`.
///
/// Ownership: the strings are copied, never kept; `*out` is a plain value.
///
/// # Safety
/// Pointers are NULL or valid; `out_allowed` writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn rampart_service_may_purchase(
    service: *const rampart_service,
    partner_id: *const c_char,
    contact_id: *const c_char,
    out_allowed: *mut bool,
) -> rampart_status {
    status_call(|| {
        // SAFETY: pointers obey the contract above.
        let (service, partner) = unsafe { (self::service(service)?, partner_arg(partner_id)?) };
        // SAFETY: as above.
        let contact = unsafe { contact_arg(contact_id) }?;
        let out = Out::new(out_allowed, "out_allowed")?;
        let allowed = service.may_purchase(&partner, &contact)?;
        // SAFETY: checked writable out-pointer.
        unsafe { out.write(allowed) };
        Ok(())
    })
}
