//! `rampart-server`: serve the API, or run a partner or operator command on the database.
//!
//! Every flag can also come from the environment as `RAMPART_<FLAG>` (`RAMPART_DB`,
//! `RAMPART_LISTEN`, `RAMPART_JWT_SECRET`, ...). Logs go to stderr (filter with `RUST_LOG`,
//! default `info`); stdout carries only what a command prints for its caller.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use clap::{Args, Parser, Subcommand, ValueEnum};
use rampart_core::store::{PostgresOptions, PostgresStore};
use rampart_core::widget::WidgetConfig;
use rampart_core::{ContactId, Environment, KeyRing, PartnerCredentials, PartnerId, Service, SqliteStore, Store};
use serde_json::json;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::SubscriberExt;
use zeroize::Zeroizing;

#[derive(Parser, Debug)]
#[command(name = "rampart-server", version, about = "Rampart example HTTP server and operator commands")]
struct Cli {
    /// SQLite database file (created 0600 when missing), or a `postgres://` URL shared by
    /// several servers (which then all need the same --master-key-file).
    #[arg(long, global = true, env = "RAMPART_DB", default_value = "./rampart.db", value_parser = Db::parse)]
    db: Db,

    /// Address to listen on.
    #[arg(long, env = "RAMPART_LISTEN", default_value = "127.0.0.1:8080")]
    listen: String,

    /// Serve Prometheus metrics (`GET /metrics`) on this separate address (`127.0.0.1:9464`);
    /// off when absent. Keep it private: it is never served on the public listener.
    #[arg(long, env = "RAMPART_METRICS_LISTEN")]
    metrics_listen: Option<String>,

    /// The environment served (and, for `partner create`, the new partner's environment).
    #[arg(long, global = true, env = "RAMPART_ENVIRONMENT", value_enum, default_value_t = EnvironmentArg::Sandbox)]
    environment: EnvironmentArg,

    /// Service name; the default 2FA issuer is this followed by `2FA`.
    #[arg(long, env = "RAMPART_SERVICE_NAME", default_value = "Rampart")]
    service_name: String,

    /// HS256 secret (at least 32 bytes) enabling legacy JWT authentication; off when absent.
    /// Every local user can read a command line: prefer --jwt-secret-file (or the environment).
    #[arg(long, env = "RAMPART_JWT_SECRET", hide_env_values = true, value_parser = parse_secret, conflicts_with = "jwt_secret_file")]
    jwt_secret: Option<JwtSecret>,

    /// File holding the legacy JWT secret (its first line, surrounding white space removed).
    #[arg(long, env = "RAMPART_JWT_SECRET_FILE")]
    jwt_secret_file: Option<PathBuf>,

    /// Master key file (`id:hex` lines). Without it, sandbox uses `<db>.key` (generated 0600
    /// when missing) and production refuses to start.
    #[arg(long, global = true, env = "RAMPART_MASTER_KEY_FILE")]
    master_key_file: Option<PathBuf>,

    /// Seconds a secret key that authenticated is remembered in memory (0 to 60). A key
    /// rotated by this server is refused at once; one rotated by `partner rotate-keys` (another
    /// process) within this time.
    #[arg(long, env = "RAMPART_AUTH_CACHE_SECS", default_value_t = 1, value_parser = clap::value_parser!(u64).range(0..=60))]
    auth_cache_secs: u64,

    /// The server's public base URL (`https://pay.example.com`): the widget's root is this +
    /// `/widget/`, in the URLs, snippets and loader it hands out. Default `http://<listen>`
    /// (a loopback or unspecified address reads as 127.0.0.1). `partner invite` builds its
    /// link on it too.
    #[arg(long, global = true, env = "RAMPART_PUBLIC_URL")]
    public_url: Option<String>,

    /// Client connections open at once; more wait in the listen backlog until one closes.
    /// Default: the open-files limit (`ulimit -n`) less a reserve of 64 plus 4 per core.
    #[arg(long, env = "RAMPART_MAX_CONNECTIONS", value_parser = clap::value_parser!(u64).range(1..))]
    max_connections: Option<u64>,

    /// Test hook: the header timeout in milliseconds (SPEC: 10 s).
    #[arg(long, env = "RAMPART_HEADER_TIMEOUT_MS", hide = true)]
    header_timeout_ms: Option<u64>,

    /// Test hook: the idle keep-alive timeout in milliseconds (SPEC: 60 s).
    #[arg(long, env = "RAMPART_IDLE_TIMEOUT_MS", hide = true)]
    idle_timeout_ms: Option<u64>,

    /// Test hook: the request body timeout in milliseconds (default 30 s).
    #[arg(long, env = "RAMPART_BODY_TIMEOUT_MS", hide = true)]
    body_timeout_ms: Option<u64>,

    /// Test hook: seconds a widget session lives after its last use (SPEC: 30 minutes).
    #[arg(long, env = "RAMPART_SESSION_IDLE_SECS", hide = true, value_parser = clap::value_parser!(u64).range(1..))]
    session_idle_secs: Option<u64>,

    /// Test hook, sandbox only: the server's clock is the absolute Unix time in this file
    /// (`1764170000` or `1764170000.25`), re-read at every reading, so a test can pass throttle
    /// waits. Refused at start unless it holds a valid time; a later bad reading keeps the last
    /// good time (see `FileClock`).
    #[arg(long, env = "RAMPART_TEST_CLOCK_FILE", hide = true)]
    test_clock_file: Option<PathBuf>,

    /// Test hook, sandbox only: `off` counts failed 2FA attempts but never refuses one (no
    /// throttle, no lock), so a test can count every failure of a concurrent burst.
    #[arg(long, env = "RAMPART_THROTTLING", hide = true, value_enum, default_value_t = Switch::On)]
    throttling: Switch,

    /// Seconds a contact may not purchase after a disable by recovery code or an operator
    /// reset (0 to 604800; default 86400, 24 hours).
    #[arg(long, global = true, env = "RAMPART_PURCHASE_HOLD_SECS", default_value_t = rampart_core::recovery::DEFAULT_HOLD_SECS,
          value_parser = clap::value_parser!(u64).range(0..=604_800))]
    purchase_hold_secs: u64,

    /// Test hook, sandbox only: multiply every webhook retry delay by F (0 < F <= 1), so a test
    /// can walk the schedule in seconds. `Retry-After` is not scaled.
    #[arg(long, env = "RAMPART_TEST_WEBHOOK_RETRY_SCALE", hide = true, value_parser = parse_retry_scale)]
    test_webhook_retry_scale: Option<f64>,

    /// Let webhook endpoints use `http` and loopback or private addresses (tests, `make run`,
    /// local development). Refused in production.
    #[arg(long, env = "RAMPART_WEBHOOK_ALLOW_PRIVATE")]
    webhook_allow_private: bool,

    /// Test hook: seconds a widget sign-in code stays valid (SPEC: 10 minutes).
    #[arg(long, env = "RAMPART_SIGN_IN_CODE_TTL_SECS", hide = true, value_parser = clap::value_parser!(u64).range(1..))]
    sign_in_code_ttl_secs: Option<u64>,

    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum Switch {
    On,
    Off,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
enum EnvironmentArg {
    Sandbox,
    Production,
}

impl From<EnvironmentArg> for Environment {
    fn from(e: EnvironmentArg) -> Self {
        match e {
            EnvironmentArg::Sandbox => Environment::Sandbox,
            EnvironmentArg::Production => Environment::Production,
        }
    }
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Partner accounts and keys.
    Partner {
        #[command(subcommand)]
        action: PartnerCommand,
    },
    /// Operator actions on a contact.
    Contact {
        #[command(subcommand)]
        action: ContactCommand,
    },
    /// The master keys that seal 2FA secrets at rest.
    Keys {
        #[command(subcommand)]
        action: KeysCommand,
    },
    /// The audit trail: one hash chain per partner.
    Audit {
        #[command(subcommand)]
        action: AuditCommand,
    },
}

#[derive(Subcommand, Debug)]
enum AuditCommand {
    /// Print the audit rows as JSON lines, oldest first (partner by partner, in id order).
    Export {
        /// Only this partner's chain.
        #[arg(long, env = "RAMPART_PARTNER", value_parser = parse_partner)]
        partner: Option<PartnerId>,
        /// Only rows at or after this RFC 3339 time (`2026-11-26T00:00:00Z`).
        #[arg(long, value_parser = parse_time)]
        since: Option<u64>,
    },
    /// Check every chain (or one partner's): each row's hash and link, and the head kept with
    /// the partner. Prints {"verified":true,"partners","rows"}; on a break exits 1 and prints
    /// {"verified":false,"partnerId","firstBadSeq"}.
    Verify {
        /// Only this partner's chain.
        #[arg(long, env = "RAMPART_PARTNER", value_parser = parse_partner)]
        partner: Option<PartnerId>,
    },
}

#[derive(Subcommand, Debug)]
enum KeysCommand {
    /// Re-seal every stored 2FA secret under the newest key of the key file, so that older
    /// keys can then be removed from it; prints {"keyId","examined","rewrapped","unopenable"}
    /// and fails when a secret opens under no key of the file. Safe while the server runs.
    Rewrap {
        /// Who acts, for the audit log (default: $USER, else "operator").
        #[arg(long, env = "RAMPART_OPERATOR")]
        operator: Option<String>,
    },
}

#[derive(Subcommand, Debug)]
enum PartnerCommand {
    /// Create a partner in `--environment`; prints {"superuserId","secretKey","publicKey","environment"}.
    Create {
        /// The partner's display name.
        #[arg(long, env = "RAMPART_NAME")]
        name: String,
    },
    /// Replace a partner's keys (the old ones stop working); prints the new keys.
    RotateKeys(PartnerTarget),
    /// Waive the KYC 2FA requirement for a partner's contacts.
    #[command(name = "waive-2fa")]
    Waive2fa(PartnerTarget),
    /// Restore the KYC 2FA requirement.
    #[command(name = "unwaive-2fa")]
    Unwaive2fa(PartnerTarget),
    /// Approve a partner's production widget (sandbox widgets need no approval).
    ApproveWidget(PartnerTarget),
    /// Withdraw the approval of a partner's production widget.
    UnapproveWidget(PartnerTarget),
    /// Invite a person to a partner's dashboard team: prints a one-time link (valid 72 hours,
    /// on --public-url) to hand over yourself; no mail is sent.
    Invite(InviteTarget),
}

#[derive(Args, Debug)]
struct InviteTarget {
    #[command(flatten)]
    target: PartnerTarget,
    /// The person's email: their sign-in name.
    #[arg(long)]
    email: String,
    /// Their role: owner (everything), developer (keys, widget, webhooks) or viewer (read only).
    #[arg(long, value_parser = parse_role)]
    role: rampart_core::vocab::Role,
}

#[derive(Subcommand, Debug)]
enum ContactCommand {
    /// Mark a contact KYC-passed (2FA becomes required unless waived).
    MarkKyc(ContactTarget),
    /// Clear a contact's KYC-passed mark.
    UnmarkKyc(ContactTarget),
    /// Clear a contact's failed attempts, lifting a lock or throttle.
    ResetLock(ContactTarget),
    /// Reset a contact's 2FA after a lost authenticator: erase the secret and recovery codes,
    /// clear the lock, start the purchase hold; prints the state before. Production needs
    /// --approved-by naming a second operator.
    #[command(name = "reset-2fa")]
    Reset2fa(ResetTarget),
    /// Show a contact's 2FA state for support (read-only, never a secret).
    Show(ContactKey),
}

#[derive(Args, Debug)]
struct ResetTarget {
    #[command(flatten)]
    target: ContactTarget,
    /// Why (1 to 500 characters, no control characters): kept in the audit trail.
    #[arg(long)]
    reason: String,
    /// The second operator who approved the reset (required in production, not --operator).
    #[arg(long)]
    approved_by: Option<String>,
}

#[derive(Args, Debug)]
struct ContactKey {
    /// The partner's id (superuserId).
    #[arg(long, env = "RAMPART_PARTNER", value_parser = parse_partner)]
    partner: PartnerId,
    /// The contact's id.
    #[arg(long, env = "RAMPART_CONTACT", value_parser = parse_contact)]
    contact: ContactId,
}

#[derive(Args, Debug)]
struct PartnerTarget {
    /// The partner's id (superuserId).
    #[arg(long, env = "RAMPART_PARTNER", value_parser = parse_partner)]
    partner: PartnerId,
    /// Who acts, for the audit log (default: $USER, else "operator").
    #[arg(long, env = "RAMPART_OPERATOR")]
    operator: Option<String>,
}

#[derive(Args, Debug)]
struct ContactTarget {
    /// The partner's id (superuserId).
    #[arg(long, env = "RAMPART_PARTNER", value_parser = parse_partner)]
    partner: PartnerId,
    /// The contact's id.
    #[arg(long, env = "RAMPART_CONTACT", value_parser = parse_contact)]
    contact: ContactId,
    /// Who acts, for the audit log (default: $USER, else "operator").
    #[arg(long, env = "RAMPART_OPERATOR")]
    operator: Option<String>,
}

/// The JWT secret as given; zeroized on drop, redacted in `Debug`.
#[derive(Clone)]
struct JwtSecret(Zeroizing<String>);

impl std::fmt::Debug for JwtSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("JwtSecret(<redacted>)")
    }
}

fn parse_secret(s: &str) -> Result<JwtSecret, String> {
    Ok(JwtSecret(Zeroizing::new(s.to_owned())))
}

fn parse_retry_scale(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(f) if f > 0.0 && f <= 1.0 => Ok(f),
        _ => Err("must be a number above 0 and at most 1".to_owned()),
    }
}

fn parse_partner(s: &str) -> Result<PartnerId, String> {
    PartnerId::parse(s).map_err(|_| "must be a UUID".to_owned())
}

fn parse_time(s: &str) -> Result<u64, String> {
    rampart_core::audit::parse_rfc3339_millis(s)
        .ok_or_else(|| "must be an RFC 3339 time (2026-11-26T00:00:00Z)".to_owned())
}

fn parse_role(s: &str) -> Result<rampart_core::vocab::Role, String> {
    s.parse().map_err(|_| "must be owner, developer or viewer".to_owned())
}

fn parse_contact(s: &str) -> Result<ContactId, String> {
    ContactId::parse(s).map_err(|_| "must be a UUID".to_owned())
}

fn operator_name(given: Option<String>) -> String {
    given.or_else(|| std::env::var("USER").ok().filter(|u| !u.trim().is_empty())).unwrap_or_else(|| "operator".into())
}

type Failure = Box<dyn std::error::Error>;

/// A core error with its cause, for the operator's terminal (never a secret: the core keeps
/// secrets out of messages and causes).
fn explain(e: rampart_core::Error) -> Failure {
    match e.cause() {
        Some(cause) => format!("{}: {cause}", e.message()).into(),
        None => e.message().to_owned().into(),
    }
}

fn init_tracing() {
    let from_env = std::env::var("RUST_LOG").ok().filter(|s| !s.trim().is_empty());
    let parsed = from_env.as_deref().map(str::parse::<Targets>);
    let filter = match &parsed {
        Some(Ok(t)) => t.clone(),
        _ => Targets::new().with_default(tracing::Level::INFO),
    };
    let subscriber = tracing_subscriber::fmt().with_writer(std::io::stderr).finish().with(filter);
    // Only fails when a subscriber is already set, which main never does.
    let _ = tracing::subscriber::set_global_default(subscriber);
    if let Some(Err(e)) = parsed {
        tracing::warn!(error = %e, "RUST_LOG is not a valid filter; logging at info");
    }
}

/// `<db>.key`: the sandbox master key file beside the database.
/// Where the state lives: a SQLite file, or a PostgreSQL database several servers share.
#[derive(Clone, PartialEq, Eq)]
enum Db {
    File(PathBuf),
    Postgres(String),
}

impl Db {
    fn parse(text: &str) -> Result<Db, String> {
        if text.starts_with("postgres://") || text.starts_with("postgresql://") {
            Ok(Db::Postgres(text.to_owned()))
        } else if text.is_empty() {
            Err("give a database file or a postgres:// URL".to_owned())
        } else {
            Ok(Db::File(PathBuf::from(text)))
        }
    }

    /// The file, for what is kept beside it (the sandbox key, the demo partner's key).
    fn file(&self) -> Option<&Path> {
        match self {
            Db::File(path) => Some(path),
            Db::Postgres(_) => None,
        }
    }

    /// For messages and logs: the file, or the URL without its password.
    fn describe(&self) -> String {
        match self {
            Db::File(path) => path.display().to_string(),
            Db::Postgres(text) => PostgresStore::redact_url(text),
        }
    }

    /// Threads for store work. A SQLite call works on this machine's cores: one per core. A
    /// PostgreSQL call mostly waits for the database: four per core, at least 8 (and as many
    /// connections; docs/SCALING.md sizes them against `max_connections`).
    fn store_threads(&self) -> usize {
        match self {
            Db::File(_) => rampart_server::blocking_threads(),
            Db::Postgres(_) => (4 * rampart_server::blocking_threads()).max(8),
        }
    }

    /// Open (and migrate) the store. SQLite gets the server's settings; PostgreSQL a pool as
    /// large as the blocking pool. A server (`serving`) starts on a PostgreSQL that is down,
    /// failing calls until it answers; an operator command needs it up. Also answers whether
    /// the store was reached.
    fn open(&self, serving: bool) -> Result<(Arc<dyn Store>, bool), Failure> {
        let failed = |e: rampart_core::StoreError| format!("cannot open database {}: {e}", self.describe());
        Ok(match self {
            Db::File(path) => {
                (Arc::new(SqliteStore::open_with(path, &rampart_server::sqlite_options()).map_err(failed)?), true)
            }
            Db::Postgres(text) => {
                let max_connections = u32::try_from(self.store_threads()).unwrap_or(u32::MAX);
                let options =
                    PostgresOptions { max_connections, start_unreachable: serving, ..PostgresOptions::default() };
                let store = PostgresStore::connect(text, &options).map_err(failed)?;
                let reached = store.schema_checked();
                (Arc::new(store), reached)
            }
        })
    }
}

impl std::fmt::Debug for Db {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Db({})", self.describe())
    }
}

/// After a start without the database: once it answers, make the key check `build` skipped,
/// and stop the server (as a start would have been refused) when the keys do not fit it or
/// its schema is one this server cannot use.
fn check_keys_when_reachable(service: Arc<Service>) {
    let check = move || {
        loop {
            std::thread::sleep(std::time::Duration::from_secs(1));
            match service.store().ping() {
                Ok(()) => {}
                Err(rampart_core::StoreError::Corrupt(problem)) => {
                    tracing::error!(problem, "the database cannot be used; stopping");
                    std::process::exit(1);
                }
                Err(_) => continue,
            }
            match service.check_master_keys() {
                Ok(()) => {
                    tracing::info!("the database answers; the master keys open its stored secrets");
                    return;
                }
                // Gone again between the two calls: wait for it.
                Err(_) if service.store().ping().is_err() => {}
                Err(e) => {
                    tracing::error!(error = %e, "the master keys do not fit the database; stopping");
                    std::process::exit(1);
                }
            }
        }
    };
    if let Err(e) = std::thread::Builder::new().name("rampart-key-check".into()).spawn(check) {
        tracing::error!(error = %e, "cannot start the master key check; stopping");
        std::process::exit(1);
    }
}

fn default_key_path(db: &Path) -> PathBuf {
    beside(db, ".key")
}

/// The latest Unix time a clock file may hold: 9999-12-31T23:59:59Z. A later one is refused,
/// so nothing computed from the clock (milliseconds, the stores' signed 64-bit columns) can
/// overflow.
const MAX_FILE_TIME: u64 = 253_402_300_799;

/// The test hook's clock (`--test-clock-file`): the absolute Unix time written in a file,
/// seconds with an optional fraction, surrounding white space ignored: `1764170000`,
/// `1764170000.25\n`; no sign, exponent or other text. Kept to the millisecond;
/// [`rampart_core::Clock::now`] drops the fraction, as the system clock does.
///
/// The file is read at every reading, so a test moves the clock by rewriting it (best by
/// writing a new file and renaming it over the old one, so a reading never sees it half
/// written). The clock goes wherever the file says, backwards too, and stands still between
/// writes. A start is refused unless the file holds a valid time ([`FileClock::open`]); after
/// that a reading that fails (the file gone, empty, half written or not a time) keeps the last
/// good time and never panics; the first such failure is logged as a warning, later ones at
/// debug level.
#[derive(Debug)]
struct FileClock {
    path: PathBuf,
    /// The last time read successfully, in milliseconds.
    last_millis: AtomicU64,
    /// Whether a failed reading was already logged as a warning.
    warned: AtomicBool,
}

impl FileClock {
    /// The clock of `path`, which must hold a valid time now.
    fn open(path: &Path) -> Result<Self, Failure> {
        let now = read_clock_file(path).map_err(|why| format!("--test-clock-file {}: {why}", path.display()))?;
        Ok(Self { path: path.to_owned(), last_millis: AtomicU64::new(now), warned: AtomicBool::new(false) })
    }

    /// The file's time in milliseconds, or the last good one when it cannot be read now.
    fn read_millis(&self) -> u64 {
        match read_clock_file(&self.path) {
            Ok(now) => {
                self.last_millis.store(now, Ordering::SeqCst);
                now
            }
            Err(problem) => {
                let last = self.last_millis.load(Ordering::SeqCst);
                let file = self.path.display();
                if self.warned.swap(true, Ordering::SeqCst) {
                    tracing::debug!(%file, %problem, last_ms = last, "test clock file unreadable; keeping its last time");
                } else {
                    tracing::warn!(
                        %file, %problem, last_ms = last,
                        "test clock file unreadable; keeping its last time (later failures are logged at debug level)"
                    );
                }
                last
            }
        }
    }
}

impl rampart_core::Clock for FileClock {
    fn now(&self) -> u64 {
        self.read_millis() / 1000
    }

    fn now_millis(&self) -> u64 {
        self.read_millis()
    }
}

/// The time in a clock file in milliseconds, or why there is none.
fn read_clock_file(path: &Path) -> Result<u64, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot be read ({})", e.kind()))?;
    parse_unix_time(&text).ok_or_else(|| {
        if text.trim_ascii().is_empty() {
            "is empty; write the Unix time in seconds, such as 1764170000".to_owned()
        } else {
            "does not hold a Unix time in seconds (digits, optionally a fraction: 1764170000.25)".to_owned()
        }
    })
}

/// Seconds as `digits` or `digits.digits`, surrounding ASCII white space ignored, at most
/// [`MAX_FILE_TIME`]: the time in milliseconds (further digits of the fraction are dropped).
fn parse_unix_time(text: &str) -> Option<u64> {
    let text = text.trim_ascii();
    let (whole, fraction) = text.split_once('.').unwrap_or((text, "0"));
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(whole) || !digits(fraction) {
        return None;
    }
    let seconds = whole.parse::<u64>().ok().filter(|&t| t <= MAX_FILE_TIME)?;
    // The first three digits of the fraction, as milliseconds ("25" is 250).
    let millis = fraction.bytes().chain(std::iter::repeat(b'0')).take(3).fold(0, |m, d| m * 10 + u64::from(d - b'0'));
    Some(seconds * 1000 + millis)
}

/// `<db><suffix>`: a file kept next to the database.
fn beside(db: &Path, suffix: &str) -> PathBuf {
    let mut name = OsString::from(db.as_os_str());
    name.push(suffix);
    PathBuf::from(name)
}

/// The sandbox demo partner's publishable key (not a credential), kept beside the database so
/// `/demo` finds the partner after a restart.
fn demo_key_path(db: &Path) -> PathBuf {
    beside(db, ".demo-partner")
}

/// The demo partner's webhook signing secret (`make run`), kept beside the database (0600) so
/// `/demo/webhooks` checks signatures after a restart.
fn demo_webhook_path(db: &Path) -> PathBuf {
    beside(db, ".demo-webhook")
}

/// Write a file only its owner may read.
fn write_private(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(path)?.write_all(text.as_bytes())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_tracing();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!(error = %e, "rampart-server failed");
            eprintln!("rampart-server: error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(mut cli: Cli) -> Result<(), Failure> {
    match cli.command.take() {
        None => serve(cli),
        Some(Command::Partner { action }) => partner_command(&cli, action),
        Some(Command::Contact { action }) => contact_command(&cli, action),
        Some(Command::Keys { action }) => keys_command(&cli, action),
        Some(Command::Audit { action }) => audit_command(&cli, action),
    }
}

/// SPEC section 3's connection limits, with the cap from `--max-connections` when given.
fn connection_limits(cli: &Cli) -> rampart_server::ConnectionLimits {
    let mut limits = rampart_server::ConnectionLimits::default();
    if let Some(n) = cli.max_connections {
        limits.max_connections = usize::try_from(n).unwrap_or(usize::MAX);
    }
    if let Some(ms) = cli.header_timeout_ms {
        limits.header_timeout = std::time::Duration::from_millis(ms);
    }
    if let Some(ms) = cli.idle_timeout_ms {
        limits.idle_timeout = std::time::Duration::from_millis(ms);
    }
    if let Some(ms) = cli.body_timeout_ms {
        limits.body_timeout = std::time::Duration::from_millis(ms);
    }
    limits
}

/// The legacy JWT secret: from `--jwt-secret-file`, or from `--jwt-secret` / the environment.
/// A secret given on the command line is readable by every local user (`ps`), so it is warned
/// about; the environment variable and the file are not.
fn jwt_secret(cli: &Cli) -> Result<Option<JwtSecret>, Failure> {
    if let Some(path) = &cli.jwt_secret_file {
        let text = Zeroizing::new(
            std::fs::read_to_string(path)
                .map_err(|e| format!("cannot read JWT secret file {}: {}", path.display(), e.kind()))?,
        );
        let line = text.lines().next().unwrap_or_default().trim();
        if line.is_empty() {
            return Err(format!("JWT secret file {} is empty", path.display()).into());
        }
        return Ok(Some(JwtSecret(Zeroizing::new(line.to_owned()))));
    }
    if cli.jwt_secret.is_some()
        && std::env::args_os()
            .any(|a| a == "--jwt-secret" || a.to_str().is_some_and(|a| a.starts_with("--jwt-secret=")))
    {
        tracing::warn!(
            "the JWT secret was given on the command line, where every local user can read it; \
             use --jwt-secret-file PATH or RAMPART_JWT_SECRET instead"
        );
    }
    Ok(cli.jwt_secret.clone())
}

/// The first of SPEC section 3's test hooks given (by flag or environment), for the refusal of a
/// production start. The connection timeouts (`--header-timeout-ms` and the like) are the
/// server's own hooks (docs/DESIGN.md, "Connections"), not among the SPEC's.
fn test_hook_given(cli: &Cli) -> Option<&'static str> {
    [
        (cli.test_clock_file.is_some(), "--test-clock-file"),
        (cli.throttling == Switch::Off, "--throttling off"),
        (cli.session_idle_secs.is_some(), "--session-idle-secs"),
        (cli.sign_in_code_ttl_secs.is_some(), "--sign-in-code-ttl-secs"),
        (cli.webhook_allow_private, "--webhook-allow-private"),
        (cli.test_webhook_retry_scale.is_some(), "--test-webhook-retry-scale"),
    ]
    .into_iter()
    .find_map(|(given, hook)| given.then_some(hook))
}

fn serve(cli: Cli) -> Result<(), Failure> {
    let environment = Environment::from(cli.environment);
    // Check what needs no database first, so a refused start leaves nothing behind.
    if environment != Environment::Sandbox
        && let Some(hook) = test_hook_given(&cli)
    {
        return Err(format!("{hook} is a test hook for sandbox servers only").into());
    }
    let test_clock = cli.test_clock_file.as_deref().map(FileClock::open).transpose()?;
    let given_keys = match (&cli.master_key_file, environment) {
        (Some(path), _) => Some(KeyRing::load(path).map_err(explain)?),
        (None, _) if cli.db.file().is_none() => {
            return Err("a PostgreSQL database needs --master-key-file: every server sharing it must seal \
                        and open secrets with the same keys"
                .into());
        }
        (None, Environment::Sandbox) => None,
        (None, Environment::Production) => {
            return Err("production refuses to start without a master key: pass --master-key-file PATH \
                        (or set RAMPART_MASTER_KEY_FILE)"
                .into());
        }
    };
    let jwt_secret = jwt_secret(&cli)?;
    let (store, reached) = cli.db.open(true)?;
    // Sandbox default: `<db>.key`, generated only into a store that holds no sealed secret.
    let keys = match (given_keys, cli.db.file()) {
        (Some(keys), _) => keys,
        (None, Some(file)) => KeyRing::load_or_generate(&default_key_path(file), &*store).map_err(explain)?,
        (None, None) => return Err("a PostgreSQL database needs --master-key-file".into()),
    };
    // Building checks the keys open the stored secrets (one per key id in use).
    let mut builder = Service::builder_shared(store)
        .master_keys(keys)
        .environment(environment)
        .service_name(cli.service_name.clone())
        .auth_cache_ttl(std::time::Duration::from_secs(cli.auth_cache_secs))
        .throttling(cli.throttling == Switch::On)
        .purchase_hold_secs(cli.purchase_hold_secs)
        .webhook_allow_private(cli.webhook_allow_private)
        // Counted only when served: a server without a metrics listener records nothing.
        .metrics(cli.metrics_listen.is_some());
    if let Some(secret) = jwt_secret {
        builder = builder.jwt_secret(secret.0.as_bytes().to_vec());
    }
    if let Some(clock) = test_clock {
        builder = builder.clock(Arc::new(clock));
    }
    if let Some(secs) = cli.session_idle_secs {
        builder = builder.session_idle_secs(secs);
    }
    if let Some(secs) = cli.sign_in_code_ttl_secs {
        builder = builder.sign_in_code_ttl_secs(secs);
    }
    if !reached {
        builder = builder.defer_key_check();
    }
    let service = Arc::new(builder.build().map_err(explain)?);
    if !reached {
        check_keys_when_reachable(service.clone());
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .max_blocking_threads(cli.db.store_threads())
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let listener = rampart_server::listen(&cli.listen)
            .await
            .map_err(|e| format!("cannot listen on {}: {e}", cli.listen))?;
        let address = listener.local_addr()?;
        let metrics_listener = match &cli.metrics_listen {
            Some(given) => Some(
                rampart_server::listen(given)
                    .await
                    .map_err(|e| format!("cannot listen for metrics on {given}: {e}"))?,
            ),
            None => None,
        };
        // Before anything is printed: a SIGTERM from then on shuts down gracefully.
        let shutdown = rampart_server::shutdown_signal();
        let public_url = public_url(cli.public_url.as_deref(), address)?;
        let widget = widget_config(&public_url, environment)?;
        let mut demo_key = None;
        let mut demo_webhook = None;
        if environment == Environment::Sandbox && !reached {
            tracing::warn!("the database is unreachable: no demo partner is offered");
        } else if environment == Environment::Sandbox {
            let svc = service.clone();
            let created = tokio::task::spawn_blocking(move || -> rampart_core::Result<_> {
                if svc.partner_count()? == 0 {
                    svc.create_partner("Demo partner", Environment::Sandbox).map(Some)
                } else {
                    Ok(None)
                }
            })
            .await?
            .map_err(explain)?;
            demo_key = match created {
                Some(creds) => {
                    print_demo(&creds, address, &public_url);
                    // `make run` (which allows private addresses) also gives the demo partner a
                    // webhook endpoint on this server, so its page shows the signed messages.
                    if cli.webhook_allow_private {
                        let (svc, partner, url) =
                            (service.clone(), creds.partner_id, format!("{public_url}/demo/webhooks"));
                        let made = tokio::task::spawn_blocking(move || {
                            let events = ["order.created", "order.completed", "2fa.enabled", "2fa.disabled", "2fa.reset"];
                            svc.create_webhook_endpoint(&partner, &url, &events)
                        })
                        .await?;
                        match (made, cli.db.file()) {
                            (Ok((_, secret)), Some(db)) => {
                                if let Err(e) = write_private(&demo_webhook_path(db), &format!("{}\n", secret.as_str())) {
                                    tracing::warn!(error = %e, "cannot keep the demo webhook secret beside the database");
                                }
                                demo_webhook = rampart_core::webhooks::WebhookSecret::parse(&secret).ok();
                            }
                            (Ok((_, secret)), None) => demo_webhook = rampart_core::webhooks::WebhookSecret::parse(&secret).ok(),
                            (Err(e), _) => tracing::warn!(error = %e.message(), "no demo webhook endpoint"),
                        }
                    }
                    let kept = cli.db.file().map(|db| std::fs::write(demo_key_path(db), format!("{}\n", creds.publishable_key)));
                    if let Some(Err(e)) = kept {
                        tracing::warn!(error = %e, "cannot keep the demo partner's publishable key beside the database");
                    }
                    Some(creds.publishable_key)
                }
                None => {
                    demo_webhook = cli
                        .db
                        .file()
                        .and_then(|db| std::fs::read_to_string(demo_webhook_path(db)).ok())
                        .and_then(|s| rampart_core::webhooks::WebhookSecret::parse(s.trim()).ok());
                    cli.db.file().and_then(|db| std::fs::read_to_string(demo_key_path(db)).ok()).map(|k| k.trim().to_owned())
                }
            };
            if let Some(key) = demo_key.clone() {
                println!("Open {public_url}/demo");
                let (svc, base) = (service.clone(), public_url.clone());
                match tokio::task::spawn_blocking(move || demo_dashboard(&svc, &key, &base)).await? {
                    Ok(lines) => println!("{lines}"),
                    Err(e) => tracing::warn!(error = %e.message(), "no dashboard invitation for the demo partner"),
                }
            }
        }
        tracing::info!(%address, environment = environment.as_str(), db = %cli.db.describe(), "listening");
        let limits = connection_limits(&cli);
        tracing::info!(max_connections = limits.max_connections, "connection limits");
        tracing::info!(public_url = %public_url, "widget root {}", widget.root(environment));
        // One shutdown signal stops both listeners.
        let (stop, stopped) = tokio::sync::watch::channel(false);
        tokio::spawn(async move {
            shutdown.await;
            let _ = stop.send(true);
        });
        let until_stopped = |mut rx: tokio::sync::watch::Receiver<bool>| async move {
            let _ = rx.wait_for(|stop| *stop).await;
        };
        let metrics = match metrics_listener {
            Some(metrics_listener) => {
                let metrics_address = metrics_listener.local_addr()?;
                tracing::info!(address = %metrics_address, "metrics listening");
                println!("Metrics: http://{}/metrics", reachable(metrics_address));
                let app = rampart_server::metrics_app(service.clone());
                let limits = connection_limits(&cli);
                Some(tokio::spawn(rampart_server::serve_with(metrics_listener, app, limits, until_stopped(stopped.clone()))))
            }
            None => None,
        };
        // The webhook worker: stops with the listeners, finishing the attempts in flight.
        let options = rampart_server::delivery::WorkerOptions {
            allow_private: cli.webhook_allow_private,
            retry_scale: cli.test_webhook_retry_scale.unwrap_or(1.0),
        };
        let worker = tokio::spawn(rampart_server::delivery::run(service.clone(), options, stopped.clone()));
        let app = rampart_server::app_with_demo_webhooks(service, widget, demo_key.as_deref(), demo_webhook);
        rampart_server::serve_with(listener, app, limits, until_stopped(stopped)).await?;
        if let Some(metrics) = metrics {
            metrics.await??;
        }
        worker.await?;
        tracing::info!("stopped");
        Ok(())
    })
}

/// The public base URL, without a trailing `/`: the flag's, else `http://<listen address>`.
fn public_url(given: Option<&str>, address: std::net::SocketAddr) -> Result<String, Failure> {
    let Some(given) = given else {
        return Ok(format!("http://{}", reachable(address)));
    };
    let url = url::Url::parse(given).map_err(|_| format!("--public-url {given:?} is not an absolute URL"))?;
    let ok = matches!(url.scheme(), "http" | "https")
        && url.host_str().is_some_and(|h| !h.is_empty())
        && url.username().is_empty()
        && url.password().is_none()
        && url.query().is_none()
        && url.fragment().is_none();
    if !ok {
        return Err(
            format!("--public-url {given:?} must be an http(s) URL without credentials, query or fragment").into()
        );
    }
    Ok(url.as_str().trim_end_matches('/').to_owned())
}

/// The widget settings of a server whose public base URL is `public_url`: its environment's
/// root is `<public_url>/widget/` (https, or http on a loopback host).
fn widget_config(public_url: &str, environment: Environment) -> Result<WidgetConfig, Failure> {
    let root = format!("{public_url}/widget/");
    let config = WidgetConfig::default();
    let config = match environment {
        Environment::Production => config.with_production_root(&root),
        Environment::Sandbox => config.with_sandbox_root(&root),
    };
    config.map_err(|e| format!("--public-url: the widget root {root} is refused: {}", e.message()).into())
}

/// An address a browser on this machine can open: an unspecified IP reads as loopback.
fn reachable(address: std::net::SocketAddr) -> std::net::SocketAddr {
    let mut reach = address;
    if reach.ip().is_unspecified() {
        reach.set_ip(match reach {
            std::net::SocketAddr::V4(_) => std::net::Ipv4Addr::LOCALHOST.into(),
            std::net::SocketAddr::V6(_) => std::net::Ipv6Addr::LOCALHOST.into(),
        });
    }
    reach
}

/// The one place a key is printed: to stdout, for the newcomer who just ran `make run`.
fn print_demo(creds: &PartnerCredentials, address: std::net::SocketAddr, public_url: &str) {
    let reach = reachable(address);
    let contact = uuid::Uuid::new_v4();
    println!("No partner yet: created a sandbox demo partner. Its secret key is shown only this once.");
    println!("  superuserId: {}", creds.partner_id);
    println!("  secretKey:   {}", creds.secret_key.expose());
    println!("  publicKey:   {}", creds.publishable_key);
    println!("Create a 2FA secret for a contact:");
    println!(
        "  curl -s -H 'Authorization: Bearer {}' 'http://{reach}/v1/auth/create2fa?contactId={contact}'",
        creds.secret_key.expose()
    );
    println!("Open the widget (sandbox: any http://localhost or 127.0.0.1 page may also embed it):");
    println!("  {public_url}/widget/?publicKey={}", creds.publishable_key);
}

/// The demo partner's dashboard owner: whom `make run` invites.
const DEMO_OWNER: &str = "owner@demo.example";

/// What `make run` says about the demo partner's dashboard: a fresh one-time invitation for
/// its owner while nobody has joined (each start replaces the last link), then where to sign in.
fn demo_dashboard(service: &Service, publishable_key: &str, public_url: &str) -> rampart_core::Result<String> {
    let partner =
        service.partner_by_publishable_key(publishable_key)?.ok_or(rampart_core::ErrorKind::PartnerNotFound)?;
    let team = service
        .store()
        .team(&partner.id)
        .map_err(|e| rampart_core::Error::new(rampart_core::ErrorKind::Internal).with_cause(e))?;
    if let Some(owner) = team.members.first() {
        return Ok(format!("Partner dashboard: {public_url}/dashboard/ (sign in as {})", owner.email));
    }
    let issued =
        service.invite_member_as_operator("demo", &partner.id, DEMO_OWNER, rampart_core::vocab::Role::Owner)?;
    Ok(format!(
        "Partner dashboard: open this one-time link (valid 72 hours) to set a password and an authenticator as {DEMO_OWNER}:\n  {}",
        rampart_server::dashboard::invitation_link(public_url, &issued.token)
    ))
}

fn credentials_json(creds: &PartnerCredentials) -> serde_json::Value {
    json!({
        "superuserId": creds.partner_id.to_string(),
        "secretKey": creds.secret_key.expose(),
        "publicKey": creds.publishable_key,
        "environment": creds.environment.as_str(),
    })
}

/// The configured master key file, else `<db>.key` when it exists.
fn existing_key_file(cli: &Cli) -> Option<PathBuf> {
    cli.master_key_file.clone().or_else(|| cli.db.file().map(default_key_path).filter(|p| p.exists()))
}

/// A service for operator commands. Partner and contact commands never seal or open a 2FA
/// secret, so without a key file they run on a ring with no key (which opens and seals nothing)
/// and no key file is written; `keys rewrap` needs the real one (`needs_keys`).
fn operator_service(cli: &Cli, needs_keys: bool) -> Result<Service, Failure> {
    let keys = match existing_key_file(cli) {
        Some(path) => KeyRing::load(&path).map_err(explain)?,
        None if needs_keys => {
            return Err(match cli.db.file() {
                Some(db) => format!(
                    "no master key file: give --master-key-file, or keep {} beside the database",
                    default_key_path(db).display()
                ),
                None => "no master key file: give --master-key-file".to_owned(),
            }
            .into());
        }
        None => KeyRing::empty(),
    };
    Service::builder_shared(cli.db.open(false)?.0)
        .master_keys(keys)
        .environment(cli.environment.into())
        .purchase_hold_secs(cli.purchase_hold_secs)
        .build()
        .map_err(explain)
}

fn print_json(value: &serde_json::Value) {
    println!("{value}");
}

fn partner_command(cli: &Cli, action: PartnerCommand) -> Result<(), Failure> {
    let service = operator_service(cli, false)?;
    match action {
        PartnerCommand::Create { name } => {
            let environment = Environment::from(cli.environment);
            let creds = service.create_partner(&name, environment).map_err(explain)?;
            tracing::info!(partner = %creds.partner_id, environment = environment.as_str(), "partner created");
            print_json(&credentials_json(&creds));
        }
        PartnerCommand::RotateKeys(target) => {
            let operator = operator_name(target.operator);
            let creds = service.rotate_keys(&operator, &target.partner).map_err(explain)?;
            tracing::info!(%operator, partner = %target.partner, "partner keys rotated");
            print_json(&credentials_json(&creds));
        }
        PartnerCommand::Waive2fa(target) => set_waiver(&service, target, true)?,
        PartnerCommand::Unwaive2fa(target) => set_waiver(&service, target, false)?,
        PartnerCommand::ApproveWidget(target) => set_widget_approval(&service, target, true)?,
        PartnerCommand::UnapproveWidget(target) => set_widget_approval(&service, target, false)?,
        PartnerCommand::Invite(invite) => {
            let operator = operator_name(invite.target.operator);
            let partner = invite.target.partner;
            let address = cli.listen.parse().unwrap_or(std::net::SocketAddr::from(([127, 0, 0, 1], 8080)));
            let base = public_url(cli.public_url.as_deref(), address)?;
            let issued =
                service.invite_member_as_operator(&operator, &partner, &invite.email, invite.role).map_err(explain)?;
            tracing::info!(%operator, %partner, role = invite.role.as_str(), "dashboard invitation issued");
            print_json(&json!({
                "partnerId": partner.to_string(),
                "email": issued.invitation.email,
                "role": issued.invitation.role.as_str(),
                "expiresAt": rampart_core::recovery::rfc3339(issued.invitation.expires_at),
                "link": rampart_server::dashboard::invitation_link(&base, &issued.token),
            }));
        }
    }
    Ok(())
}

fn set_widget_approval(service: &Service, target: PartnerTarget, approved: bool) -> Result<(), Failure> {
    let operator = operator_name(target.operator);
    service.set_widget_approval(&operator, &target.partner, approved).map_err(explain)?;
    tracing::info!(%operator, partner = %target.partner, approved, "widget approval changed");
    print_json(&json!({ "partnerId": target.partner.to_string(), "widgetApproved": approved }));
    Ok(())
}

fn set_waiver(service: &Service, target: PartnerTarget, waived: bool) -> Result<(), Failure> {
    let operator = operator_name(target.operator);
    service.set_2fa_waiver(&operator, &target.partner, waived).map_err(explain)?;
    tracing::info!(%operator, partner = %target.partner, waived, "2FA waiver changed");
    print_json(&json!({ "partnerId": target.partner.to_string(), "twoFactorWaived": waived }));
    Ok(())
}

fn contact_command(cli: &Cli, action: ContactCommand) -> Result<(), Failure> {
    let service = operator_service(cli, false)?;
    let (target, kyc) = match action {
        ContactCommand::MarkKyc(t) => (t, Some(true)),
        ContactCommand::UnmarkKyc(t) => (t, Some(false)),
        ContactCommand::ResetLock(t) => (t, None),
        ContactCommand::Reset2fa(r) => return reset_2fa(&service, r),
        ContactCommand::Show(key) => {
            let state = service.contact_state(&key.partner, &key.contact).map_err(explain)?;
            print_json(&state.to_json());
            return Ok(());
        }
    };
    let operator = operator_name(target.operator);
    let (partner, contact) = (target.partner, target.contact);
    let output = match kyc {
        Some(passed) => {
            service.set_kyc_passed(&operator, &partner, &contact, passed).map_err(explain)?;
            tracing::info!(%operator, %partner, %contact, passed, "contact KYC mark changed");
            json!({ "partnerId": partner.to_string(), "contactId": contact.to_string(), "kycPassed": passed })
        }
        None => {
            service.reset_lock(&operator, &partner, &contact).map_err(explain)?;
            tracing::info!(%operator, %partner, %contact, "contact lock reset");
            json!({ "partnerId": partner.to_string(), "contactId": contact.to_string(), "lockReset": true })
        }
    };
    print_json(&output);
    Ok(())
}

/// `contact reset-2fa`: the state before the reset as one JSON object, never a secret.
fn reset_2fa(service: &Service, r: ResetTarget) -> Result<(), Failure> {
    let operator = operator_name(r.target.operator);
    let (partner, contact) = (r.target.partner, r.target.contact);
    let before =
        service.reset_2fa(&operator, &partner, &contact, &r.reason, r.approved_by.as_deref()).map_err(|e| {
            match e.message() {
                // The flag's own name, where the library names its argument.
                m if m.starts_with("approvedBy ") => {
                    Failure::from(format!("--approved-by{}", &m["approvedBy".len()..]))
                }
                m if m.starts_with("reason ") => Failure::from(format!("--reason{}", &m["reason".len()..])),
                _ => explain(e),
            }
        })?;
    tracing::info!(%operator, %partner, %contact, "contact 2FA reset");
    print_json(&before.to_json());
    Ok(())
}

fn keys_command(cli: &Cli, action: KeysCommand) -> Result<(), Failure> {
    let service = operator_service(cli, true)?;
    let KeysCommand::Rewrap { operator } = action;
    let operator = operator_name(operator);
    let r = service.rewrap_secrets(&operator).map_err(explain)?;
    print_json(&json!({
        "keyId": r.key_id,
        "examined": r.examined,
        "rewrapped": r.rewrapped,
        "unopenable": r.unopenable,
    }));
    if r.unopenable > 0 {
        return Err(format!(
            "{} secrets open under no key of the key file: put the removed key back and run again",
            r.unopenable
        )
        .into());
    }
    Ok(())
}

/// The operator's audit reads. A broken chain is exit 1, naming the partner and the first bad
/// `seq`; the JSON on stdout says the same for scripts.
fn audit_command(cli: &Cli, action: AuditCommand) -> Result<(), Failure> {
    use std::io::Write;
    let service = operator_service(cli, false)?;
    match action {
        AuditCommand::Export { partner, since } => {
            let stdout = std::io::stdout();
            let mut out = std::io::BufWriter::new(stdout.lock());
            let mut written = Ok(());
            service
                .export_audit(partner.as_ref(), since, |row| {
                    if written.is_ok() {
                        written = serde_json::to_writer(&mut out, row)
                            .map_err(std::io::Error::from)
                            .and_then(|()| out.write_all(b"\n"));
                    }
                    Ok(())
                })
                .map_err(explain)?;
            written?;
            out.flush()?;
        }
        AuditCommand::Verify { partner } => {
            let reports = service.verify_audit(partner.as_ref()).map_err(explain)?;
            if let Some(bad) = reports.iter().find(|r| r.first_bad_seq.is_some()) {
                let seq = bad.first_bad_seq.unwrap_or_default();
                print_json(&json!({ "verified": false, "partnerId": bad.partner_id.to_string(), "firstBadSeq": seq }));
                eprintln!(
                    "rampart-server: audit verify: partner {}: the chain breaks at seq {seq} (a row's hash or link \
                     is wrong, or rows are missing)",
                    bad.partner_id
                );
                std::process::exit(1);
            }
            let rows: u64 = reports.iter().map(|r| r.rows).sum();
            print_json(&json!({ "verified": true, "partners": reports.len(), "rows": rows }));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::*;

    #[test]
    fn command_line_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn db_is_a_file_or_a_postgres_url_shown_without_its_password() {
        let cli =
            Cli::try_parse_from(["rampart-server", "--db", "postgres://app:s3cret@db.internal:5432/rampart"]).unwrap();
        assert_eq!(cli.db, Db::Postgres("postgres://app:s3cret@db.internal:5432/rampart".to_owned()));
        assert_eq!(cli.db.describe(), "postgres://app:***@db.internal:5432/rampart");
        assert!(!format!("{cli:?}").contains("s3cret"));
        assert!(cli.db.file().is_none());
        let cli = Cli::try_parse_from(["rampart-server", "--db", "postgresql://host/db?password=s3cret"]).unwrap();
        assert_eq!(cli.db.describe(), "postgresql://host/db");
        let cli = Cli::try_parse_from(["rampart-server", "--db", "data/r.db"]).unwrap();
        assert_eq!(cli.db.file(), Some(Path::new("data/r.db")));
        assert!(Cli::try_parse_from(["rampart-server", "--db", ""]).is_err());
    }

    #[test]
    fn defaults_and_redacted_debug() {
        let cli =
            Cli::try_parse_from(["rampart-server", "--jwt-secret", "top-secret-jwt-value-of-32-bytes!!"]).unwrap();
        assert_eq!(cli.db, Db::File(PathBuf::from("./rampart.db")));
        assert_eq!(cli.listen, "127.0.0.1:8080");
        assert_eq!(cli.environment, EnvironmentArg::Sandbox);
        assert_eq!(cli.service_name, "Rampart");
        assert!(cli.master_key_file.is_none() && cli.command.is_none());
        assert!(!format!("{cli:?}").contains("top-secret"));
        assert_eq!(default_key_path(Path::new("./data/r.db")), PathBuf::from("./data/r.db.key"));
    }

    #[test]
    fn public_url_gives_the_widget_root() {
        let address: std::net::SocketAddr = "0.0.0.0:8080".parse().unwrap();
        assert_eq!(public_url(None, address).unwrap(), "http://127.0.0.1:8080");
        assert_eq!(public_url(Some("https://pay.example.com/"), address).unwrap(), "https://pay.example.com");
        assert_eq!(
            public_url(Some("https://pay.example.com/rampart"), address).unwrap(),
            "https://pay.example.com/rampart"
        );
        for bad in ["pay.example.com", "ftp://pay.example.com", "https://u:p@pay.example.com", "https://a.example/?x"] {
            assert!(public_url(Some(bad), address).is_err(), "{bad}");
        }
        let sandbox = widget_config("http://127.0.0.1:8080", Environment::Sandbox).unwrap();
        assert_eq!(sandbox.root(Environment::Sandbox).as_str(), "http://127.0.0.1:8080/widget/");
        let production = widget_config("https://pay.example.com", Environment::Production).unwrap();
        assert_eq!(production.root(Environment::Production).as_str(), "https://pay.example.com/widget/");
        let refused = widget_config("http://pay.example.com", Environment::Production).unwrap_err().to_string();
        assert!(refused.contains("http only for localhost or a loopback address"), "{refused}");
    }

    #[test]
    fn subcommands_parse() {
        let id = "6f1c2a4e-93b1-4c55-8f1e-0b9b6a0d2c11";
        for args in [
            vec!["partner", "create", "--db", "x.db", "--name", "Acme", "--environment", "production"],
            vec!["--db", "x.db", "partner", "rotate-keys", "--partner", id],
            vec!["partner", "waive-2fa", "--partner", id, "--operator", "alice"],
            vec!["partner", "unwaive-2fa", "--partner", id],
            vec!["partner", "approve-widget", "--partner", id, "--operator", "olga"],
            vec!["partner", "unapprove-widget", "--partner", id],
            vec!["contact", "mark-kyc", "--partner", id, "--contact", id],
            vec!["contact", "unmark-kyc", "--partner", id, "--contact", id],
            vec!["contact", "reset-lock", "--partner", id, "--contact", id],
            vec!["keys", "rewrap", "--operator", "alice"],
        ] {
            let full: Vec<&str> = std::iter::once("rampart-server").chain(args.iter().copied()).collect();
            assert!(Cli::try_parse_from(&full).is_ok(), "{args:?}");
        }
        assert!(Cli::try_parse_from(["rampart-server", "partner", "waive-2fa", "--partner", "x"]).is_err());
        assert!(Cli::try_parse_from(["rampart-server", "--environment", "staging"]).is_err());
    }

    #[test]
    fn a_clock_file_holds_whole_seconds_with_an_optional_fraction() {
        assert_eq!(parse_unix_time("1764170000"), Some(1_764_170_000_000));
        assert_eq!(parse_unix_time(" 1764170000.75\n"), Some(1_764_170_000_750));
        assert_eq!(parse_unix_time("1764170000.0259999"), Some(1_764_170_000_025));
        assert_eq!(parse_unix_time("0"), Some(0));
        assert_eq!(parse_unix_time("253402300799.999"), Some(MAX_FILE_TIME * 1000 + 999));
        for bad in [
            "",
            " \n",
            "-1",
            "+1764170000",
            "1764170000.",
            ".5",
            "1.2.3",
            "1e9",
            "0x10",
            "17641 70000",
            "1764170000s",
            "253402300800",
            "99999999999999999999",
            "\u{0661}\u{0662}",
        ] {
            assert_eq!(parse_unix_time(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn the_file_clock_keeps_its_last_good_time_when_a_reading_fails() {
        use rampart_core::Clock;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("clock");
        let refused = FileClock::open(&path).unwrap_err().to_string();
        assert!(refused.starts_with(&format!("--test-clock-file {}: cannot be read", path.display())), "{refused}");
        std::fs::write(&path, "soon").unwrap();
        let refused = FileClock::open(&path).unwrap_err().to_string();
        assert!(refused.contains("does not hold a Unix time"), "{refused}");
        std::fs::write(&path, "1764170000.5\n").unwrap();
        let clock = FileClock::open(&path).unwrap();
        assert_eq!(clock.now(), 1_764_170_000);
        std::fs::write(&path, "1764170031").unwrap();
        assert_eq!(clock.now(), 1_764_170_031, "re-read at every reading");
        std::fs::write(&path, "1764169000").unwrap();
        assert_eq!(clock.now(), 1_764_169_000, "backwards too");
        for broken in ["", "later", "1764170031.x"] {
            std::fs::write(&path, broken).unwrap();
            assert_eq!(clock.now(), 1_764_169_000, "{broken:?}");
        }
        std::fs::remove_file(&path).unwrap();
        assert_eq!(clock.now(), 1_764_169_000, "gone");
        std::fs::write(&path, "1764170100").unwrap();
        assert_eq!(clock.now(), 1_764_170_100, "back");
    }

    #[test]
    fn connection_limits_default_to_the_spec_and_take_a_cap() {
        let limits = connection_limits(&Cli::try_parse_from(["rampart-server"]).unwrap());
        assert_eq!(limits, rampart_server::ConnectionLimits::default());
        assert_eq!(limits.header_timeout, std::time::Duration::from_secs(10));
        assert_eq!(limits.idle_timeout, std::time::Duration::from_secs(60));
        assert_eq!(limits.max_header_bytes, 32 * 1024);
        let cli = Cli::try_parse_from(["rampart-server", "--max-connections", "20"]).unwrap();
        assert_eq!(connection_limits(&cli).max_connections, 20);
        assert!(Cli::try_parse_from(["rampart-server", "--max-connections", "0"]).is_err());
        let help = Cli::command().render_long_help().to_string();
        assert!(help.contains("--max-connections") && !help.contains("timeout-ms"), "{help}");
    }
}
