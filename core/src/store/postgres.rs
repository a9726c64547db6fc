//! The PostgreSQL store (cargo feature `postgres`): one database shared by any number of
//! servers (SPEC section 7), with the behaviour of [`SqliteStore`](super::SqliteStore), proven
//! by the same conformance suite.
//!
//! - The synchronous `postgres` client behind an `r2d2` pool: at most
//!   [`PostgresOptions::max_connections`] connections, each tested when checked out, a 3 s wait
//!   for one, and per session a 1 s lock timeout, a 5 s statement timeout and a 10 s limit on
//!   an idle open transaction, so a stuck peer fails a call instead of hanging it.
//! - Every `update_*` is one READ COMMITTED transaction that locks the row
//!   (`SELECT ... FOR UPDATE`) before it reads it, runs the caller's closure once on what it
//!   read, writes only when the closure says so, and answers only after COMMIT.
//! - Records that read as a default when absent (contacts, sign-ins): a missing row is first
//!   inserted with its defaults (`ON CONFLICT DO NOTHING`, which waits for a racing insert to
//!   commit or roll back), then locked and read. When the closure does not write, the
//!   transaction rolls back, so a default row is never seen by anyone else: a contact never
//!   written still reads as `None`.
//! - A deadlock or serialization failure is retried (up to [`MAX_ATTEMPTS`] transactions) only
//!   while the closure has not run in that transaction: the closures are not all re-runnable
//!   (`create_2fa`'s moves its sealed secret into the record), and with one row lock per
//!   transaction neither failure is expected after the lock is taken.
//! - Versioned, checksummed migrations in `schema_migrations`, applied at open in one
//!   transaction under a transaction-scoped advisory lock, so servers starting together
//!   migrate once.
//! - Ids are `BYTEA`, compared bytewise, so every "id order" is the SQLite store's order.
//! - TLS with rustls on every TCP connection, verifying the certificate chain (the system's
//!   trust store, or the CA file the URL's `sslrootcert` names) and the host name, as libpq's
//!   `verify-full`. Plain TCP only when the connection string says `sslmode=disable`; `prefer`
//!   (libpq's default, which falls back to plain text) is read as `require`. Unix sockets need
//!   no TLS.
//! - [`PostgresOptions::start_unreachable`]: a database down at open is tried again at each
//!   call, and migrated at the first connection, so a server starts, reports itself
//!   unhealthy, and recovers without a restart.
//!
//! Threads: the client runs a small tokio runtime per connection and panics when it is
//! created, used or dropped on a thread that runs async tasks. Call the store from plain
//! threads or `spawn_blocking`; dropping the store is safe anywhere (it closes its connections
//! on a thread of its own).

use std::cell::Cell;
use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, mpsc};
use std::time::Duration;

use percent_encoding::percent_decode_str;
use postgres::config::{Host, SslMode};
use postgres::error::SqlState;
use postgres::types::ToSql;
use postgres::{Config, GenericClient, IsolationLevel, Row, Statement, Transaction};
use r2d2::{ManageConnection, Pool, PooledConnection};
use rustls::pki_types::CertificateDer;
use rustls::pki_types::pem::PemObject;
use sha2::{Digest, Sha256};
use tokio_postgres_rustls::MakeRustlsConnect;

use super::{
    AttemptRecord, AuditHead, AuditRow, ClaimedDelivery, ContactCounts, ContactList, ContactRecord,
    DashboardSessionRecord, DeliveryNext, DeliveryRecord, Effects, InvitationRecord, MemberRecord, OrderFilter,
    OrderRecord, OrderStatus, PartnerRecord, PreviousKey, RecoveryCodeSet, SealedSample, SessionRecord, SignInRecord,
    Store, StoreError, TeamRecord, WebhookEndpointRecord, WebhookEvent,
};
use crate::chain;
use crate::ids::{ContactId, OrderId, PartnerId};
use crate::vocab::{Environment, Role, SessionStage};
use crate::vocab::{Field, KEY_HEADER_LEN};

/// The TLS connector: rustls on ring, trusting the CA certificates in the PEM file `roots`, or
/// else the system's trust store. rustls checks the chain and the host name.
fn tls_connector(roots: Option<&Path>) -> Result<MakeRustlsConnect, StoreError> {
    let mut store = rustls::RootCertStore::empty();
    match roots {
        Some(path) => {
            let unreadable =
                |e: &dyn fmt::Display| StoreError::Backend(format!("sslrootcert {}: {e}", path.display()).into());
            let certs = CertificateDer::pem_file_iter(path)
                .and_then(Iterator::collect::<Result<Vec<_>, _>>)
                .map_err(|e| unreadable(&e))?;
            if certs.is_empty() {
                return Err(unreadable(&"holds no PEM certificate"));
            }
            for cert in certs {
                store.add(cert).map_err(|e| unreadable(&e))?;
            }
        }
        None => {
            // Unreadable entries are skipped; with none at all, every TLS connection fails to
            // verify, naming the unknown issuer.
            store.add_parsable_certificates(rustls_native_certs::load_native_certs().certs);
        }
    }
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .map_err(|e| StoreError::Backend(Box::new(e)))?
        .with_root_certificates(store)
        .with_no_client_auth();
    Ok(MakeRustlsConnect::new(config))
}

/// TLS on every TCP connection unless the configuration says `sslmode=disable` (never a
/// default, so always a choice made); `prefer`, which would fall back to plain text, becomes
/// `require`. Unix sockets carry no TLS.
fn require_tls_over_tcp(config: &mut Config) {
    let tcp = !config.get_hostaddrs().is_empty() || config.get_hosts().iter().any(|h| matches!(h, Host::Tcp(_)));
    if !tcp {
        config.ssl_mode(SslMode::Disable);
    } else if config.get_ssl_mode() != SslMode::Disable {
        config.ssl_mode(SslMode::Require);
    }
}

/// Parse a connection string. In a `postgres://` URL, libpq's `sslrootcert` (which the client
/// does not know) is taken out and returned, and `sslmode=verify-full` read as `require`
/// (which verifies as much); `verify-ca` (a chain without the host name) is refused. No error
/// quotes the text, which may hold a password.
fn parse_connection_string(text: &str) -> Result<(Config, Option<PathBuf>), StoreError> {
    let unparsable = || backend("the PostgreSQL connection string does not parse (not shown)");
    let mut root_certificates = None;
    let text = match text.split_once('?') {
        Some((base, query)) if text.starts_with("postgres://") || text.starts_with("postgresql://") => {
            let mut kept = Vec::new();
            for pair in query.split('&') {
                let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
                let value = percent_decode_str(value).decode_utf8().map_err(|_| unparsable())?;
                match (key, &*value) {
                    ("sslrootcert", path) => root_certificates = Some(PathBuf::from(path)),
                    ("sslmode", "verify-full") => kept.push("sslmode=require"),
                    ("sslmode", "verify-ca") => {
                        return Err(backend(
                            "sslmode=verify-ca is not supported: use verify-full (or require), which also checks \
                             the host name",
                        ));
                    }
                    _ => kept.push(pair),
                }
            }
            format!("{base}?{}", kept.join("&"))
        }
        _ => text.to_owned(),
    };
    Ok((text.parse().map_err(|_| unparsable())?, root_certificates))
}

/// Transactions tried per update when PostgreSQL reports a deadlock or serialization failure.
const MAX_ATTEMPTS: u32 = 4;

/// Run on every new connection. The lock timeout bounds a wait for a row another server holds:
/// PostgreSQL applies it to each lock a statement waits for, and a `FOR UPDATE` behind other
/// waiters waits twice (for its place in the row's queue, then for the holder), so 1 s per
/// wait answers within 2 s. The statement timeout bounds any call; the idle-transaction
/// timeout frees row locks held by a client that stopped mid-transaction.
const SESSION_SETTINGS: &str = "SET lock_timeout = '1s'; SET statement_timeout = '5s'; \
     SET idle_in_transaction_session_timeout = '10s'";

/// The key of the advisory lock migrations run under ("rampart1").
const MIGRATION_LOCK: i64 = 0x7261_6d70_6172_7431;

/// Each entry moves the schema from version `i` to `i + 1`, recorded with its SHA-256 in
/// `schema_migrations`. Never edit a shipped entry. Version 1 is the SQLite store's three
/// migrations at once (this store started with all of them).
const MIGRATIONS: &[&str] = &[
    // 1: partners, contacts, audit log; the widget's sessions, sign-ins, emails and orders.
    "CREATE TABLE partners (
        id BYTEA PRIMARY KEY,
        name TEXT NOT NULL,
        environment TEXT NOT NULL CHECK (environment IN ('sandbox', 'production')),
        secret_key_hash BYTEA NOT NULL UNIQUE,
        publishable_key TEXT NOT NULL UNIQUE,
        widget_text TEXT,
        widget_button_url TEXT,
        two_factor_waived BOOLEAN NOT NULL DEFAULT FALSE,
        created_at BIGINT NOT NULL,
        widget_origins TEXT NOT NULL DEFAULT '[]',
        widget_approved BOOLEAN NOT NULL DEFAULT FALSE
    );
    CREATE TABLE contacts (
        partner_id BYTEA NOT NULL,
        contact_id BYTEA NOT NULL,
        kyc_passed BOOLEAN NOT NULL DEFAULT FALSE,
        enabled BOOLEAN NOT NULL DEFAULT FALSE,
        secret BYTEA,
        pending BYTEA,
        pending_created_at BIGINT,
        last_step BIGINT,
        failures BIGINT NOT NULL DEFAULT 0,
        last_failure_at BIGINT,
        PRIMARY KEY (partner_id, contact_id)
    );
    CREATE INDEX contacts_kyc_without_2fa ON contacts (partner_id, contact_id)
        WHERE kyc_passed AND NOT enabled;
    CREATE TABLE audit_log (
        id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        at BIGINT NOT NULL,
        operator TEXT NOT NULL,
        action TEXT NOT NULL,
        partner_id BYTEA NOT NULL,
        contact_id BYTEA
    );
    CREATE TABLE widget_sessions (
        token_hash BYTEA PRIMARY KEY,
        partner_id BYTEA NOT NULL,
        origin TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        last_seen_at BIGINT NOT NULL,
        email TEXT,
        contact_id BYTEA,
        two_factor_at BIGINT
    );
    CREATE INDEX widget_sessions_last_seen ON widget_sessions (last_seen_at);
    CREATE TABLE widget_sign_ins (
        partner_id BYTEA NOT NULL,
        email TEXT NOT NULL,
        sent_at TEXT NOT NULL DEFAULT '[]',
        code_hash BYTEA,
        expires_at BIGINT NOT NULL DEFAULT 0,
        tries BIGINT NOT NULL DEFAULT 0,
        PRIMARY KEY (partner_id, email)
    );
    CREATE TABLE widget_emails (
        partner_id BYTEA NOT NULL,
        email TEXT NOT NULL,
        contact_id BYTEA NOT NULL,
        PRIMARY KEY (partner_id, email)
    );
    CREATE TABLE widget_orders (
        id BYTEA PRIMARY KEY,
        partner_id BYTEA NOT NULL,
        contact_id BYTEA NOT NULL,
        coin TEXT NOT NULL,
        amount TEXT NOT NULL,
        currency TEXT NOT NULL,
        address TEXT NOT NULL,
        price TEXT NOT NULL,
        quantity TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('created', 'completed', 'failed')),
        created_at BIGINT NOT NULL,
        updated_at BIGINT NOT NULL
    );
    CREATE INDEX widget_orders_by_contact ON widget_orders (partner_id, contact_id, created_at DESC, id DESC);",
    // 2: the audit trail, one hash chain per partner with its head kept with the partner (SPEC
    // 9.1); the operator log's rows move into the chains (`chain_operator_log`), then it goes.
    "CREATE TABLE audit_events (
        partner_id BYTEA NOT NULL,
        seq BIGINT NOT NULL,
        id TEXT NOT NULL,
        at TEXT NOT NULL,
        contact_id BYTEA,
        actor TEXT NOT NULL,
        event TEXT NOT NULL,
        details TEXT NOT NULL,
        prev TEXT NOT NULL,
        hash TEXT NOT NULL,
        PRIMARY KEY (partner_id, seq)
    );
    CREATE INDEX audit_events_by_contact ON audit_events (partner_id, contact_id, seq);
    ALTER TABLE partners ADD COLUMN audit_seq BIGINT NOT NULL DEFAULT 0;
    ALTER TABLE partners ADD COLUMN audit_head TEXT NOT NULL
        DEFAULT '0000000000000000000000000000000000000000000000000000000000000000';",
    // 3: recovery codes (hashes only), their own throttle, the purchase hold (SPEC section 8).
    "ALTER TABLE contacts ADD COLUMN recovery_codes BYTEA;
    ALTER TABLE contacts ADD COLUMN recovery_failures BIGINT NOT NULL DEFAULT 0;
    ALTER TABLE contacts ADD COLUMN recovery_last_failure_at BIGINT;
    ALTER TABLE contacts ADD COLUMN hold_until BIGINT;",
    // 4: webhook endpoints (SPEC section 10), their secrets sealed; the outbox: each message once,
    // and its delivery to each endpoint.
    "CREATE TABLE webhook_endpoints (
        id BYTEA PRIMARY KEY,
        partner_id BYTEA NOT NULL,
        url TEXT NOT NULL,
        events TEXT NOT NULL,
        enabled BOOLEAN NOT NULL,
        secret BYTEA NOT NULL,
        previous_secret BYTEA,
        previous_until BIGINT,
        created_at BIGINT NOT NULL,
        failing_since BIGINT
    );
    CREATE INDEX webhook_endpoints_by_partner ON webhook_endpoints (partner_id, created_at, id);
    CREATE TABLE webhook_messages (
        id TEXT PRIMARY KEY,
        partner_id BYTEA NOT NULL,
        event TEXT NOT NULL,
        body TEXT NOT NULL,
        created_at BIGINT NOT NULL
    );
    CREATE TABLE webhook_deliveries (
        message_id TEXT NOT NULL,
        endpoint_id BYTEA NOT NULL,
        partner_id BYTEA NOT NULL,
        attempts BIGINT NOT NULL DEFAULT 0,
        next_at BIGINT NOT NULL,
        lease_until BIGINT,
        state TEXT NOT NULL CHECK (state IN ('pending', 'delivered', 'failed')),
        PRIMARY KEY (message_id, endpoint_id)
    );
    CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_at) WHERE state = 'pending';
    CREATE TABLE webhook_attempts (
        endpoint_id BYTEA NOT NULL,
        at_ms BIGINT NOT NULL,
        message_id TEXT NOT NULL,
        attempt BIGINT NOT NULL,
        event TEXT NOT NULL,
        status INTEGER,
        error TEXT,
        latency_ms BIGINT NOT NULL,
        PRIMARY KEY (endpoint_id, at_ms, message_id, attempt)
    );",
    // 5: the partner dashboard (SPEC 11): a rolled secret key's overlap and the keys' last 4
    // characters; team members (their 2FA is a contacts row marked `member`), invitations
    // (token hashes only) and dashboard sessions (token hashes only).
    "ALTER TABLE partners ADD COLUMN secret_key_last4 TEXT;
    ALTER TABLE partners ADD COLUMN previous_secret_key_hash BYTEA;
    ALTER TABLE partners ADD COLUMN previous_key_last4 TEXT;
    ALTER TABLE partners ADD COLUMN previous_key_expires_at BIGINT;
    CREATE UNIQUE INDEX partners_previous_secret_key ON partners (previous_secret_key_hash)
        WHERE previous_secret_key_hash IS NOT NULL;
    ALTER TABLE contacts ADD COLUMN member BOOLEAN NOT NULL DEFAULT false;
    CREATE TABLE team_members (
        id BYTEA PRIMARY KEY,
        partner_id BYTEA NOT NULL,
        email TEXT NOT NULL UNIQUE,
        role TEXT NOT NULL CHECK (role IN ('owner', 'developer', 'viewer')),
        password_hash TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        failures BIGINT NOT NULL DEFAULT 0,
        last_failure_at BIGINT
    );
    CREATE INDEX team_members_by_partner ON team_members (partner_id, created_at, id);
    CREATE TABLE team_invitations (
        id BYTEA PRIMARY KEY,
        token_hash BYTEA NOT NULL UNIQUE,
        partner_id BYTEA NOT NULL,
        email TEXT NOT NULL,
        role TEXT NOT NULL CHECK (role IN ('owner', 'developer', 'viewer')),
        invited_by TEXT NOT NULL,
        created_at BIGINT NOT NULL,
        expires_at BIGINT NOT NULL
    );
    CREATE INDEX team_invitations_by_partner ON team_invitations (partner_id, created_at, id);
    CREATE TABLE dashboard_sessions (
        token_hash BYTEA PRIMARY KEY,
        partner_id BYTEA NOT NULL,
        member_id BYTEA NOT NULL,
        stage TEXT NOT NULL CHECK (stage IN ('password', 'setup', 'signed_in')),
        created_at BIGINT NOT NULL,
        last_seen_at BIGINT NOT NULL
    );
    CREATE INDEX dashboard_sessions_by_partner ON dashboard_sessions (partner_id, member_id);
    CREATE INDEX dashboard_sessions_last_seen ON dashboard_sessions (last_seen_at);",
    // 6: the dashboard's lists (SPEC 11): a partner's orders newest first, and its contacts
    // locked or with few recovery codes left (kept beside the set, filled in for the sets there
    // are by the migration's second half).
    "ALTER TABLE contacts ADD COLUMN recovery_remaining BIGINT;
    CREATE INDEX widget_orders_by_partner ON widget_orders (partner_id, created_at DESC, id DESC);
    CREATE INDEX contacts_locked ON contacts (partner_id, contact_id) WHERE failures >= 100 AND NOT member;
    CREATE INDEX contacts_low_recovery_codes ON contacts (partner_id, contact_id)
        WHERE enabled AND recovery_remaining <= 3 AND NOT member;",
];

/// The schema version that adds `contacts.recovery_remaining`, filled in from the stored sets.
const RECOVERY_REMAINING_VERSION: usize = 6;

/// The schema version whose migration moves the operator log into the audit chains.
const AUDIT_CHAIN_VERSION: usize = 2;

/// What [`PostgresStore::open`] says when the SQL recorded for `MIGRATIONS[i]` is not this
/// library's: one fixed text per version, so the error names it.
const MIGRATION_CHANGED: &[&str] = &[
    "schema_migrations: version 1 was applied from SQL other than this library's (checksum differs)",
    "schema_migrations: version 2 was applied from SQL other than this library's (checksum differs)",
    "schema_migrations: version 3 was applied from SQL other than this library's (checksum differs)",
    "schema_migrations: version 4 was applied from SQL other than this library's (checksum differs)",
    "schema_migrations: version 5 was applied from SQL other than this library's (checksum differs)",
    "schema_migrations: version 6 was applied from SQL other than this library's (checksum differs)",
];

const _: () = assert!(MIGRATION_CHANGED.len() == MIGRATIONS.len());

/// How a [`PostgresStore`] uses connections. The defaults suit up to about six servers on a
/// PostgreSQL with the default `max_connections` of 100.
///
/// ```no_run
/// use rampart_core::store::{PostgresOptions, PostgresStore};
/// let config: postgres::Config = "postgres://rampart@db.internal/rampart".parse()?;
/// let options = PostgresOptions { max_connections: 8, ..PostgresOptions::default() };
/// let store = PostgresStore::open_with(config, &options)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PostgresOptions {
    /// Most connections open at once (at least 1); calls beyond it wait for one. Default 16.
    pub max_connections: u32,
    /// How long a call waits for a connection (an idle one or a new one) before it fails; also
    /// the connect timeout when the configuration sets none. Default 3 s.
    pub checkout_timeout: Duration,
    /// A PEM file of the CA certificates that may sign the server's certificate (libpq's
    /// `sslrootcert`; a connection URL's `sslrootcert` parameter takes precedence). Default
    /// `None`: the system's trust store.
    pub root_certificates: Option<PathBuf>,
    /// When the database cannot be reached at open: `false` (the default) fails the open;
    /// `true` opens anyway, every call failing (as [`StoreError::Backend`]) until a connection
    /// succeeds, and the schema is migrated (or refused) on that first connection. For a
    /// server that must start, report itself unhealthy and recover without a restart. A
    /// schema that is newer or changed still fails the open when the database answers.
    pub start_unreachable: bool,
}

impl Default for PostgresOptions {
    fn default() -> Self {
        Self {
            max_connections: 16,
            checkout_timeout: Duration::from_secs(3),
            root_certificates: None,
            start_unreachable: false,
        }
    }
}

/// A [`Store`] on a PostgreSQL database, shareable by any number of processes.
///
/// ```no_run
/// use rampart_core::{KeyRing, PostgresStore, Service};
/// // From a plain thread (or `spawn_blocking`), never from an async task.
/// let store = PostgresStore::open("postgres://rampart@db.internal/rampart")?;
/// let service = Service::builder(store).master_keys(KeyRing::generate()?).build()?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct PostgresStore {
    /// `None` only while dropping.
    pool: Option<Pool<Manager>>,
    /// Hosts, ports and database name: what `Debug` shows (never the password).
    target: String,
    options: PostgresOptions,
    /// Whether this store has checked (and brought up to date) the schema; see
    /// [`PostgresOptions::start_unreachable`].
    migrated: AtomicBool,
    /// Held by the connection that migrates, so calls after a late start migrate once.
    migrating: Mutex<()>,
}

impl fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PostgresStore")
            .field("target", &self.target)
            .field("options", &self.options)
            .field("pool", &self.pool.as_ref().map(Pool::state))
            .finish()
    }
}

/// Opens the pool's connections (with [`SESSION_SETTINGS`]) and tests them when checked out.
struct Manager {
    config: Config,
    tls: MakeRustlsConnect,
}

impl ManageConnection for Manager {
    type Connection = Connection;
    type Error = ConnectError;

    fn connect(&self) -> Result<Connection, ConnectError> {
        let mut client = self.config.connect(self.tls.clone())?;
        client.batch_execute(SESSION_SETTINGS)?;
        Ok(Connection { client, statements: Statements::default(), lost: false })
    }

    fn is_valid(&self, conn: &mut Connection) -> Result<(), ConnectError> {
        Ok(conn.client.simple_query("").map(drop)?)
    }

    fn has_broken(&self, conn: &mut Connection) -> bool {
        conn.lost || conn.client.is_closed()
    }
}

/// A pooled connection: the client and the statements prepared on it so far. Each statement
/// is prepared once per connection; a text query would cost a prepare, an execute and a close.
struct Connection {
    client: postgres::Client,
    statements: Statements,
    /// A call found it ended by the database: the pool drops it.
    lost: bool,
}

/// The store's statements prepared on one connection, by their text (a fixed set, so bounded).
/// Prepared statements outlive the transaction that prepared them, even one rolled back.
#[derive(Default)]
struct Statements(HashMap<&'static str, Statement>);

impl Statements {
    fn get(&mut self, client: &mut impl GenericClient, sql: &'static str) -> Result<Statement, postgres::Error> {
        if let Some(statement) = self.0.get(sql) {
            return Ok(statement.clone());
        }
        let statement = client.prepare(sql)?;
        self.0.insert(sql, statement.clone());
        Ok(statement)
    }
}

/// Where the store's statements run, prepared: a pooled connection, or a transaction on one.
trait Sql {
    fn query(&mut self, sql: &'static str, params: &[&(dyn ToSql + Sync)]) -> Result<Vec<Row>, postgres::Error>;
    fn execute(&mut self, sql: &'static str, params: &[&(dyn ToSql + Sync)]) -> Result<u64, postgres::Error>;
}

impl Sql for Connection {
    fn query(&mut self, sql: &'static str, params: &[&(dyn ToSql + Sync)]) -> Result<Vec<Row>, postgres::Error> {
        let statement = self.statements.get(&mut self.client, sql)?;
        self.client.query(&statement, params)
    }

    fn execute(&mut self, sql: &'static str, params: &[&(dyn ToSql + Sync)]) -> Result<u64, postgres::Error> {
        let statement = self.statements.get(&mut self.client, sql)?;
        self.client.execute(&statement, params)
    }
}

/// The migration's transaction: statements run once, so none is kept prepared.
impl Sql for Transaction<'_> {
    fn query(&mut self, sql: &'static str, params: &[&(dyn ToSql + Sync)]) -> Result<Vec<Row>, postgres::Error> {
        postgres::GenericClient::query(self, sql, params)
    }

    fn execute(&mut self, sql: &'static str, params: &[&(dyn ToSql + Sync)]) -> Result<u64, postgres::Error> {
        postgres::GenericClient::execute(self, sql, params)
    }
}

/// A READ COMMITTED transaction, with its connection's prepared statements.
struct Tx<'c> {
    tx: Transaction<'c>,
    statements: &'c mut Statements,
}

impl Sql for Tx<'_> {
    fn query(&mut self, sql: &'static str, params: &[&(dyn ToSql + Sync)]) -> Result<Vec<Row>, postgres::Error> {
        let statement = self.statements.get(&mut self.tx, sql)?;
        self.tx.query(&statement, params)
    }

    fn execute(&mut self, sql: &'static str, params: &[&(dyn ToSql + Sync)]) -> Result<u64, postgres::Error> {
        let statement = self.statements.get(&mut self.tx, sql)?;
        self.tx.execute(&statement, params)
    }
}

/// A connection failure whose message carries its causes: the pool keeps only the message of
/// the last one, and "error performing TLS handshake" alone does not say which check failed.
#[derive(Debug)]
struct ConnectError(postgres::Error);

impl From<postgres::Error> for ConnectError {
    fn from(e: postgres::Error) -> Self {
        Self(e)
    }
}

impl fmt::Display for ConnectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut shown = self.0.to_string();
        let mut source = std::error::Error::source(&self.0);
        while let Some(cause) = source {
            let text = cause.to_string();
            if !shown.contains(&text) {
                shown = format!("{shown}: {text}");
            }
            source = cause.source();
        }
        f.write_str(&shown)
    }
}

impl std::error::Error for ConnectError {}

impl From<postgres::Error> for StoreError {
    fn from(e: postgres::Error) -> Self {
        Self::Backend(Box::new(e))
    }
}

fn backend(message: &'static str) -> StoreError {
    StoreError::Backend(message.into())
}

/// A unique violation as [`StoreError::Conflict`], anything else as a backend failure.
fn conflict(what: &'static str) -> impl FnOnce(postgres::Error) -> StoreError {
    move |e| if e.code() == Some(&SqlState::UNIQUE_VIOLATION) { StoreError::Conflict(what) } else { e.into() }
}

/// A deadlock or serialization failure: the transaction may succeed if tried again.
fn is_transient(e: &StoreError) -> bool {
    let StoreError::Backend(source) = e else { return false };
    source
        .downcast_ref::<postgres::Error>()
        .and_then(postgres::Error::code)
        .is_some_and(|code| *code == SqlState::T_R_SERIALIZATION_FAILURE || *code == SqlState::T_R_DEADLOCK_DETECTED)
}

/// A connection the database ended or lost (terminated, restarted, network gone): nothing
/// more can run on it.
fn is_lost(e: &StoreError) -> bool {
    let StoreError::Backend(source) = e else { return false };
    let Some(e) = source.downcast_ref::<postgres::Error>() else { return false };
    e.is_closed()
        || e.code().is_some_and(|code| {
            [SqlState::ADMIN_SHUTDOWN, SqlState::CRASH_SHUTDOWN, SqlState::CANNOT_CONNECT_NOW].contains(code)
        })
        || std::error::Error::source(e).is_some_and(|cause| cause.is::<std::io::Error>())
}

/// "host:port,.../dbname", for `Debug` and logs.
fn describe(config: &Config) -> String {
    let ports = config.get_ports();
    let port = |i: usize| ports.get(i).or(ports.first()).copied().unwrap_or(5432);
    let mut hosts: Vec<String> = config
        .get_hosts()
        .iter()
        .enumerate()
        .map(|(i, host)| match host {
            Host::Tcp(name) => format!("{name}:{}", port(i)),
            #[cfg(unix)]
            Host::Unix(dir) => format!("{}:{}", dir.display(), port(i)),
        })
        .collect();
    if hosts.is_empty() {
        hosts = config.get_hostaddrs().iter().enumerate().map(|(i, addr)| format!("{addr}:{}", port(i))).collect();
    }
    format!("{}/{}", hosts.join(","), config.get_dbname().unwrap_or_default())
}

fn to_sql_u64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

fn to_sql_limit(v: usize) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

fn bytes<const N: usize>(row: &Row, idx: usize, what: &'static str) -> Result<[u8; N], StoreError> {
    let value: &[u8] = row.try_get(idx)?;
    <[u8; N]>::try_from(value).map_err(|_| StoreError::Corrupt(what))
}

fn opt_bytes<const N: usize>(row: &Row, idx: usize, what: &'static str) -> Result<Option<[u8; N]>, StoreError> {
    let value: Option<&[u8]> = row.try_get(idx)?;
    value.map(|v| <[u8; N]>::try_from(v).map_err(|_| StoreError::Corrupt(what))).transpose()
}

fn id<T: From<uuid::Uuid>>(row: &Row, idx: usize) -> Result<T, StoreError> {
    Ok(T::from(uuid::Uuid::from_bytes(bytes(row, idx, "stored id is not 16 bytes")?)))
}

fn opt_id<T: From<uuid::Uuid>>(row: &Row, idx: usize) -> Result<Option<T>, StoreError> {
    Ok(opt_bytes(row, idx, "stored id is not 16 bytes")?.map(|b| T::from(uuid::Uuid::from_bytes(b))))
}

fn hash(row: &Row, idx: usize) -> Result<[u8; 32], StoreError> {
    bytes(row, idx, "stored hash is not 32 bytes")
}

fn time(row: &Row, idx: usize) -> Result<u64, StoreError> {
    u64::try_from(row.try_get::<_, i64>(idx)?).map_err(|_| StoreError::Corrupt("stored time is negative"))
}

fn opt_time(row: &Row, idx: usize) -> Result<Option<u64>, StoreError> {
    row.try_get::<_, Option<i64>>(idx)?
        .map(|v| u64::try_from(v).map_err(|_| StoreError::Corrupt("stored time is negative")))
        .transpose()
}

fn count(row: &Row, idx: usize) -> Result<u32, StoreError> {
    u32::try_from(row.try_get::<_, i64>(idx)?).map_err(|_| StoreError::Corrupt("stored count is out of range"))
}

/// Run the caller's closure, noting that it ran (a transaction in which it ran is not retried).
fn run<R>(ran: &Cell<bool>, f: &mut dyn FnMut(&mut R) -> bool, record: &mut R) -> bool {
    ran.set(true);
    f(record)
}

/// [`run`] for an update with [`Effects`]: fresh, empty effects on every run.
fn run_with_effects<R>(
    ran: &Cell<bool>,
    f: &mut dyn FnMut(&mut R, &mut Effects) -> bool,
    record: &mut R,
) -> (bool, Effects) {
    ran.set(true);
    let mut effects = Effects::default();
    let write = f(record, &mut effects);
    (write, effects)
}

/// Migration 2's second half: the operator log's rows (oldest first) become the first rows of
/// their partners' chains, then the log table goes.
/// Migration 6's second half: each stored set's count of unused codes.
fn fill_recovery_remaining(tx: &mut postgres::Transaction<'_>) -> Result<(), StoreError> {
    let sets =
        tx.query("SELECT partner_id, contact_id, recovery_codes FROM contacts WHERE recovery_codes IS NOT NULL", &[])?;
    for row in &sets {
        let (p, c): (&[u8], &[u8]) = (row.try_get(0)?, row.try_get(1)?);
        let remaining = i64::from(RecoveryCodeSet::from_bytes(row.try_get(2)?)?.remaining());
        tx.execute(
            "UPDATE contacts SET recovery_remaining = $3 WHERE partner_id = $1 AND contact_id = $2",
            &[&p, &c, &remaining],
        )?;
    }
    Ok(())
}

fn chain_operator_log(tx: &mut postgres::Transaction<'_>) -> Result<(), StoreError> {
    let legacy = tx
        .query("SELECT partner_id, contact_id, at, operator, action FROM audit_log ORDER BY id", &[])?
        .iter()
        .map(|r| {
            Ok(chain::LegacyEntry {
                partner_id: id(r, 0)?,
                contact_id: opt_id(r, 1)?,
                at_secs: time(r, 2)?,
                operator: r.try_get(3)?,
                action: r.try_get(4)?,
            })
        })
        .collect::<Result<Vec<_>, StoreError>>()?;
    for (partner, drafts) in chain::legacy_drafts(legacy) {
        write_audit(tx, &partner, &drafts)?;
    }
    tx.batch_execute("DROP TABLE audit_log")?;
    Ok(())
}

/// Chain `drafts` onto `partner`'s trail inside the transaction: lock the partner's row and
/// read its head, insert the linked rows, move the head. Only changes of one partner wait on
/// each other. Any failure is [`StoreError::Audit`], and the transaction rolls back.
/// Write an update's effects in its transaction: its audit rows, then its webhook messages.
fn write_effects(tx: &mut impl Sql, partner: &PartnerId, effects: &Effects) -> Result<(), StoreError> {
    write_audit(tx, partner, &effects.audit)?;
    write_webhooks(tx, partner, &effects.webhooks)
}

/// Queue the change's webhook messages, one statement each: the message stored once and a
/// delivery for each of the partner's enabled endpoints that receive its event (none: nothing).
fn write_webhooks(tx: &mut impl Sql, partner: &PartnerId, events: &[WebhookEvent]) -> Result<(), StoreError> {
    const QUEUE: &str = "WITH targets AS (SELECT id FROM webhook_endpoints \
         WHERE partner_id = $1 AND CASE WHEN $6::bytea IS NULL THEN enabled AND events::jsonb ? $3 ELSE id = $6 END), \
       message AS (INSERT INTO webhook_messages (id, partner_id, event, body, created_at) \
         SELECT $2, $1, $3, $4, $5 WHERE EXISTS (SELECT 1 FROM targets) RETURNING id) \
       INSERT INTO webhook_deliveries (message_id, endpoint_id, partner_id, next_at, state) \
         SELECT message.id, targets.id, $1, $5, 'pending' FROM message, targets";
    let p = partner.as_bytes().as_slice();
    for e in events {
        let only = e.only_to.map(|id| id.as_bytes().to_vec());
        tx.execute(QUEUE, &[&p, &e.id, &e.event, &e.body, &to_sql_u64(e.at), &only])?;
    }
    Ok(())
}

fn write_audit(tx: &mut impl Sql, partner: &PartnerId, drafts: &[chain::AuditDraft]) -> Result<(), StoreError> {
    if drafts.is_empty() {
        return Ok(());
    }
    let p = partner.as_bytes().as_slice();
    let mut run = || -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
        let head = one(tx, "SELECT audit_seq, audit_head FROM partners WHERE id = $1 FOR UPDATE", &[&p], |r| {
            Ok(AuditHead { seq: time(r, 0)?, hash: r.try_get(1)? })
        })?
        .ok_or("no such partner")?;
        let (rows, head) = chain::link(partner, &head, drafts);
        for (row, draft) in rows.iter().zip(drafts) {
            tx.execute(
                "INSERT INTO audit_events (partner_id, seq, id, at, contact_id, actor, event, details, prev, hash) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)",
                &[
                    &p,
                    &to_sql_u64(row.seq),
                    &row.id,
                    &row.at,
                    &draft.contact_id.as_ref().map(|c| c.as_bytes().as_slice()),
                    &row.actor,
                    &row.event,
                    &row.details.to_string(),
                    &row.prev,
                    &row.hash,
                ],
            )?;
        }
        tx.execute(
            "UPDATE partners SET audit_seq = $2, audit_head = $3 WHERE id = $1",
            &[&p, &to_sql_u64(head.seq), &head.hash],
        )?;
        Ok(())
    };
    run().map_err(StoreError::Audit)
}

/// `update_contact`'s write of the record; a macro so the audited statement can embed it.
macro_rules! update_contact_sql {
    () => {
        "UPDATE contacts SET kyc_passed = $3, enabled = $4, secret = $5, pending = $6, \
         pending_created_at = $7, last_step = $8, failures = $9, last_failure_at = $10, \
         recovery_codes = $11, recovery_failures = $12, recovery_last_failure_at = $13, hold_until = $14, \
         member = $15, recovery_remaining = $16 WHERE partner_id = $1 AND contact_id = $2"
    };
}

/// `update_contact`'s write of the record.
const UPDATE_CONTACT: &str = update_contact_sql!();

/// The parameters of [`UPDATE_CONTACT`]: the key and the record's columns.
const CONTACT_FIELDS: usize = 16;

/// [`UPDATE_CONTACT`] with its audit events, in one statement: lock the partner's head, insert
/// the rows linked to it and to each other (each hash finished from [`chain::canonical_prefix`]
/// with the previous row's hash and the next `seq`, as the chain rule makes it), move the head.
/// Answers one row, the head's, when the partner exists. `drafts` (1 or 2: an enable writes
/// `2fa.enabled` and `recovery_codes.issued`) take 7 parameters each after the record's 16.
/// For the change's webhook messages (`webhooks`, 0 or 1; 2 parameters each after the drafts':
/// the event and the one endpoint it is for, if any) the statement answers how many endpoints
/// take them, and only then does [`write_webhooks`] queue them: an audited change of a contact
/// costs one round trip when its partner has no endpoint for it (the usual case), and the
/// statement opens no outbox table (queuing the message inside it cost about 20 µs a change
/// even when nothing was queued).
fn update_contact_audited_sql(drafts: usize, webhooks: usize) -> String {
    let mut sql = format!(
        "WITH contact AS ({UPDATE_CONTACT}), \
         head AS (SELECT audit_seq AS seq, audit_head AS hash FROM partners WHERE id = $1 FOR UPDATE)"
    );
    let mut rows = Vec::with_capacity(drafts);
    for k in 0..drafts {
        let from = if k == 0 { "head".to_owned() } else { format!("linked{}", k - 1) };
        let p = CONTACT_FIELDS + 1 + 7 * k;
        sql.push_str(&format!(
            ", linked{k} AS (SELECT seq + 1 AS seq, hash AS prev, encode(sha256(convert_to(${p} || hash || \
             '\",\"seq\":' || (seq + 1)::text || '}}', 'UTF8')), 'hex') AS hash FROM {from})"
        ));
        rows.push(format!(
            // Typed: a UNION's parameters get no type from the INSERT's columns.
            "SELECT $1::bytea, seq, ${}::text, ${}::text, ${}::bytea, ${}::text, ${}::text, ${}::text, prev, hash \
             FROM linked{k}",
            p + 1,
            p + 2,
            p + 3,
            p + 4,
            p + 5,
            p + 6
        ));
    }
    for k in 0..webhooks {
        let p = CONTACT_FIELDS + 1 + 7 * drafts + 2 * k;
        let (event, only) = (p, p + 1);
        sql.push_str(&format!(
            ", targets{k} AS (SELECT 1 FROM webhook_endpoints WHERE partner_id = $1 AND CASE WHEN ${only}::bytea IS NULL \
             THEN enabled AND events::jsonb ? ${event}::text ELSE id = ${only} END)"
        ));
    }
    let targets: Vec<String> = (0..webhooks).map(|k| format!("(SELECT count(*) FROM targets{k})")).collect();
    let targets = if targets.is_empty() { "0::bigint".to_owned() } else { targets.join(" + ") };
    let last = drafts.saturating_sub(1);
    sql.push_str(&format!(
        ", written AS (INSERT INTO audit_events (partner_id, seq, id, at, contact_id, actor, event, details, prev, \
         hash) {} RETURNING seq) \
         UPDATE partners SET audit_seq = linked{last}.seq, audit_head = linked{last}.hash \
         FROM linked{last} WHERE partners.id = $1 AND (SELECT count(*) FROM written) = {drafts} \
         RETURNING {targets}",
        rows.join(" UNION ALL ")
    ));
    sql
}

/// The most audit events one contact write carries in a single statement; more go through
/// [`write_audit`].
const AUDITED_IN_ONE_STATEMENT: usize = 2;

/// The most webhook messages one contact write asks its audited statement about; with more,
/// the record, its rows and its messages go through [`write_audit`] and [`write_webhooks`].
const WEBHOOKS_IN_ONE_STATEMENT: usize = 1;

/// [`update_contact_audited_sql`] for 1 and 2 events with 0 or 1 webhook message, made once.
fn update_contact_audited_statement(drafts: usize, webhooks: usize) -> &'static str {
    const SHAPES: usize = AUDITED_IN_ONE_STATEMENT * (WEBHOOKS_IN_ONE_STATEMENT + 1);
    static SQL: [std::sync::OnceLock<String>; SHAPES] = [const { std::sync::OnceLock::new() }; SHAPES];
    SQL[(drafts - 1) * (WEBHOOKS_IN_ONE_STATEMENT + 1) + webhooks]
        .get_or_init(|| update_contact_audited_sql(drafts, webhooks))
}

/// Write the contact record with its 1 or 2 audit events in one statement
/// ([`update_contact_audited_sql`]), then its webhook message (0 or 1) if an endpoint takes it.
/// A failure of the statement is [`StoreError::Audit`]: the record and its rows stand or fall
/// together (and with the message, in the same transaction).
fn update_contact_audited(
    tx: &mut impl Sql,
    partner: &PartnerId,
    drafts: &[chain::AuditDraft],
    webhooks: &[WebhookEvent],
    fields: &[&(dyn ToSql + Sync); CONTACT_FIELDS],
) -> Result<(), StoreError> {
    struct Bound<'a> {
        prefix: String,
        id: String,
        at: String,
        contact: Option<&'a [u8]>,
        actor: String,
        event: &'static str,
        details: String,
    }
    let bound: Vec<Bound<'_>> = drafts
        .iter()
        .map(|draft| Bound {
            prefix: chain::canonical_prefix(partner, draft),
            id: draft.id.to_string(),
            at: chain::rfc3339_millis(draft.at_ms),
            contact: draft.contact_id.as_ref().map(|c| c.as_bytes().as_slice()),
            actor: draft.actor.to_string(),
            event: draft.event,
            details: serde_json::Value::Object(draft.details.clone()).to_string(),
        })
        .collect();
    let mut params: Vec<&(dyn ToSql + Sync)> = fields.to_vec();
    for b in &bound {
        params.extend_from_slice(&[&b.prefix, &b.id, &b.at, &b.contact, &b.actor, &b.event, &b.details]);
    }
    let only: Vec<Option<&[u8]>> =
        webhooks.iter().map(|e| e.only_to.as_ref().map(|id| id.as_bytes().as_slice())).collect();
    for (e, only) in webhooks.iter().zip(&only) {
        params.extend_from_slice(&[&e.event, only]);
    }
    match tx.query(update_contact_audited_statement(drafts.len(), webhooks.len()), &params) {
        Ok(rows) if rows.len() == 1 => {
            if rows[0].try_get::<_, i64>(0)? > 0 {
                write_webhooks(tx, partner, webhooks)?;
            }
            Ok(())
        }
        Ok(_) => Err(StoreError::audit("no such partner")),
        Err(e) => match StoreError::from(e) {
            // A lost connection or a deadlock is the database's, not the audit row's.
            failed if is_transient(&failed) || is_lost(&failed) => Err(failed),
            StoreError::Backend(source) => Err(StoreError::Audit(source)),
            other => Err(other),
        },
    }
}

fn audit_row_from_row(row: &Row) -> Result<AuditRow, StoreError> {
    let details: String = row.try_get(7)?;
    Ok(AuditRow {
        partner_id: id::<PartnerId>(row, 0)?.to_string(),
        seq: time(row, 1)?,
        id: row.try_get(2)?,
        at: row.try_get(3)?,
        contact_id: opt_id::<ContactId>(row, 4)?.map(|c| c.to_string()),
        actor: row.try_get(5)?,
        event: row.try_get(6)?,
        // A row whose details are not JSON still verifies as broken, not as unreadable.
        details: serde_json::from_str(&details).unwrap_or(serde_json::Value::String(details)),
        prev: row.try_get(8)?,
        hash: row.try_get(9)?,
    })
}

/// How a transaction body ends.
enum Finish<T> {
    /// Something was written: commit, then answer.
    Commit(T),
    /// Nothing to keep (including a default row inserted only to lock it): roll back, answer.
    Rollback(T),
}

/// The first row of `sql`, decoded, or `None`.
fn one<T>(
    client: &mut impl Sql,
    sql: &'static str,
    params: &[&(dyn ToSql + Sync)],
    decode: impl FnOnce(&Row) -> Result<T, StoreError>,
) -> Result<Option<T>, StoreError> {
    client.query(sql, params)?.first().map(decode).transpose()
}

/// Every row of `sql`, decoded.
fn all<T>(
    client: &mut impl Sql,
    sql: &'static str,
    params: &[&(dyn ToSql + Sync)],
    decode: impl Fn(&Row) -> Result<T, StoreError>,
) -> Result<Vec<T>, StoreError> {
    client.query(sql, params)?.iter().map(decode).collect()
}

impl PostgresStore {
    /// Connect to the database at `url` (`postgres://user:password@host:port/dbname?...` or
    /// `host=... dbname=...`) with the default [`PostgresOptions`], and migrate it. Call from a
    /// plain thread, not an async task.
    ///
    /// TCP connections use TLS and verify the server's certificate and host name (against the
    /// system's trust store, or the CA file a `sslrootcert=PATH` parameter names) unless the
    /// URL says `sslmode=disable`; Unix sockets (`?host=/run/postgresql`) need no TLS.
    pub fn open(url: &str) -> Result<Self, StoreError> {
        Self::connect(url, &PostgresOptions::default())
    }

    /// [`open`](Self::open) with explicit options; the URL's `sslrootcert` takes precedence
    /// over [`PostgresOptions::root_certificates`].
    pub fn connect(url: &str, options: &PostgresOptions) -> Result<Self, StoreError> {
        let (config, root_certificates) = parse_connection_string(url)?;
        let root_certificates = root_certificates.or_else(|| options.root_certificates.clone());
        Self::open_with(config, &PostgresOptions { root_certificates, ..options.clone() })
    }

    /// [`open`](Self::open) with a parsed configuration and explicit options.
    pub fn open_with(mut config: Config, options: &PostgresOptions) -> Result<Self, StoreError> {
        let options = PostgresOptions { max_connections: options.max_connections.max(1), ..options.clone() };
        require_tls_over_tcp(&mut config);
        if config.get_connect_timeout().is_none() {
            config.connect_timeout(options.checkout_timeout);
        }
        if config.get_application_name().is_none() {
            config.application_name("rampart");
        }
        let target = describe(&config);
        let pool = Pool::builder()
            .max_size(options.max_connections)
            // Connections open on demand, on the pool's own threads; idle ones close after 10 min.
            .min_idle(Some(0))
            .connection_timeout(options.checkout_timeout)
            // Not tested when taken (a round trip per call): calls run again on a lost one.
            .test_on_check_out(false)
            .build(Manager { config, tls: tls_connector(options.root_certificates.as_deref())? })
            .map_err(|e| StoreError::Backend(Box::new(e)))?;
        let store =
            Self { pool: Some(pool), target, options, migrated: AtomicBool::new(false), migrating: Mutex::new(()) };
        match store.connection() {
            Ok(mut conn) => store.migrate_once(&mut conn.client)?,
            Err(e) if store.options.start_unreachable => {
                tracing::warn!(database = %store.target, error = %e, "PostgreSQL unreachable at start; calls fail until it answers");
            }
            Err(e) => return Err(e),
        }
        Ok(store)
    }

    /// Whether the store has reached the database and found its schema up to date (always,
    /// after an open without [`PostgresOptions::start_unreachable`]).
    pub fn schema_checked(&self) -> bool {
        self.migrated.load(Ordering::Acquire)
    }

    /// A connection URL as it may be shown (logs, messages, a binding's `repr`): the password
    /// as `***`, no query or fragment (they may carry `password=` or file paths); a text that
    /// does not parse as a URL is not shown at all.
    pub fn redact_url(text: &str) -> String {
        const HIDDEN: &str = "a postgres:// URL (not shown)";
        let Ok(mut url) = url::Url::parse(text) else { return HIDDEN.to_owned() };
        if url.password().is_some() && url.set_password(Some("***")).is_err() {
            return HIDDEN.to_owned();
        }
        url.set_query(None);
        url.set_fragment(None);
        url.to_string()
    }

    /// The options the store was opened with.
    pub fn options(&self) -> &PostgresOptions {
        &self.options
    }

    /// A pooled connection to a migrated schema.
    fn conn(&self) -> Result<PooledConnection<Manager>, StoreError> {
        let mut conn = self.connection()?;
        self.migrate_once(&mut conn.client)?;
        Ok(conn)
    }

    /// Run `f` (reads, or writes that may run twice) on a connection, and once more on a fresh
    /// one when the first turns out to be lost (the database restarted or ended it). Taking a
    /// connection from the pool does not test it; this does, without a round trip per call.
    fn again_if_lost<T>(&self, f: impl Fn(&mut Connection) -> Result<T, StoreError>) -> Result<T, StoreError> {
        let mut conn = self.conn()?;
        match f(&mut conn) {
            Err(e) if is_lost(&e) => {
                conn.lost = true;
                drop(conn);
                f(&mut *self.tested_conn()?)
            }
            other => other,
        }
    }

    /// A connection that answers: after one was found lost, the others in the pool may be too
    /// (a restart ends them all), so each is tried with an empty query, and dropped if it fails.
    fn tested_conn(&self) -> Result<PooledConnection<Manager>, StoreError> {
        for _ in 0..self.options.max_connections {
            let mut conn = self.conn()?;
            match conn.client.simple_query("") {
                Ok(_) => return Ok(conn),
                Err(_) => conn.lost = true,
            }
        }
        // Every pooled one was lost; this one is new.
        self.conn()
    }

    fn connection(&self) -> Result<PooledConnection<Manager>, StoreError> {
        let pool = self.pool.as_ref().ok_or_else(|| backend("the store is closed"))?;
        pool.get().map_err(|e| StoreError::Backend(Box::new(e)))
    }

    /// Migrate on the first connection (at open, or the first call after a late start).
    fn migrate_once(&self, conn: &mut postgres::Client) -> Result<(), StoreError> {
        if self.migrated.load(Ordering::Acquire) {
            return Ok(());
        }
        let _one = self.migrating.lock().unwrap_or_else(PoisonError::into_inner);
        if !self.migrated.load(Ordering::Acquire) {
            Self::migrate(conn)?;
            self.migrated.store(true, Ordering::Release);
        }
        Ok(())
    }

    fn migrate(client: &mut postgres::Client) -> Result<(), StoreError> {
        let mut tx = client.build_transaction().isolation_level(IsolationLevel::ReadCommitted).start()?;
        // Longer limits than a request's, for this transaction only: a server starting beside
        // one that is migrating waits for it, and a migration may rebuild a large table.
        tx.batch_execute("SET LOCAL lock_timeout = '60s'; SET LOCAL statement_timeout = '10min'")?;
        tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])?;
        tx.batch_execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations (
                version INTEGER PRIMARY KEY,
                checksum BYTEA NOT NULL,
                applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
            )",
        )?;
        let applied = tx.query("SELECT version, checksum FROM schema_migrations ORDER BY version", &[])?;
        if let Some(last) = applied.last()
            && !usize::try_from(last.try_get::<_, i32>(0)?).is_ok_and(|v| v <= MIGRATIONS.len())
        {
            return Err(StoreError::Corrupt("database schema is newer than this library"));
        }
        for (i, row) in applied.iter().enumerate() {
            if usize::try_from(row.try_get::<_, i32>(0)?).ok() != Some(i + 1) {
                return Err(StoreError::Corrupt("schema_migrations skips a version"));
            }
            if row.try_get::<_, &[u8]>(1)? != Sha256::digest(MIGRATIONS[i].as_bytes()).as_slice() {
                return Err(StoreError::Corrupt(MIGRATION_CHANGED[i]));
            }
        }
        for (i, sql) in MIGRATIONS.iter().enumerate().skip(applied.len()) {
            tx.batch_execute(sql)?;
            if i + 1 == AUDIT_CHAIN_VERSION {
                chain_operator_log(&mut tx)?;
            }
            if i + 1 == RECOVERY_REMAINING_VERSION {
                fill_recovery_remaining(&mut tx)?;
            }
            let version = i32::try_from(i + 1).map_err(|_| backend("too many migrations"))?;
            let checksum = Sha256::digest(sql.as_bytes()).to_vec();
            tx.execute("INSERT INTO schema_migrations (version, checksum) VALUES ($1, $2)", &[&version, &checksum])?;
        }
        tx.commit()?;
        Ok(())
    }

    /// Run `body` in a READ COMMITTED transaction; commit or roll back as it says, then answer.
    /// A deadlock or serialization failure starts again while the caller's closure has not run.
    fn write<T>(
        &self,
        mut body: impl FnMut(&mut Tx<'_>, &Cell<bool>) -> Result<Finish<T>, StoreError>,
    ) -> Result<T, StoreError> {
        let mut conn = self.conn()?;
        let ran = Cell::new(false);
        let mut attempt = 1;
        loop {
            match Self::transaction(&mut conn, &mut body, &ran) {
                Err(e) if attempt < MAX_ATTEMPTS && !ran.get() && is_transient(&e) => attempt += 1,
                // Nothing was decided on a connection lost before the closure ran: a fresh one.
                Err(e) if attempt < MAX_ATTEMPTS && !ran.get() && is_lost(&e) => {
                    attempt += 1;
                    conn.lost = true;
                    drop(conn);
                    conn = self.tested_conn()?;
                }
                other => return other,
            }
        }
    }

    /// One try of [`write`](Self::write). An error rolls back (dropping the transaction does).
    fn transaction<T>(
        conn: &mut Connection,
        body: &mut impl FnMut(&mut Tx<'_>, &Cell<bool>) -> Result<Finish<T>, StoreError>,
        ran: &Cell<bool>,
    ) -> Result<T, StoreError> {
        let Connection { client, statements, .. } = conn;
        let tx = client.build_transaction().isolation_level(IsolationLevel::ReadCommitted).start()?;
        let mut tx = Tx { tx, statements };
        let out = match body(&mut tx, ran)? {
            Finish::Commit(out) => tx.tx.commit().map(|()| out),
            Finish::Rollback(out) => tx.tx.rollback().map(|()| out),
        };
        Ok(out?)
    }

    /// Lock and read the row `select` (a `FOR UPDATE` query) finds; when there is none, insert
    /// the defaults with `insert_default` (`ON CONFLICT DO NOTHING`) and lock what is there then.
    fn lock_or_default<T>(
        tx: &mut Tx<'_>,
        select: &'static str,
        insert_default: &'static str,
        key: &[&(dyn ToSql + Sync)],
        decode: impl Fn(&Row) -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        Self::lock_or_insert_default(tx, select, insert_default, key, decode).map(|(record, _)| record)
    }

    /// [`lock_or_default`](Self::lock_or_default), also saying whether this call inserted the
    /// row (so a transaction that commits for other reasons can take it out again).
    fn lock_or_insert_default<T>(
        tx: &mut Tx<'_>,
        select: &'static str,
        insert_default: &'static str,
        key: &[&(dyn ToSql + Sync)],
        decode: impl Fn(&Row) -> Result<T, StoreError>,
    ) -> Result<(T, bool), StoreError> {
        if let Some(record) = one(tx, select, key, &decode)? {
            return Ok((record, false));
        }
        let inserted = tx.execute(insert_default, key)? == 1;
        let record = one(tx, select, key, &decode)?.ok_or_else(|| backend("a row inserted to be locked is gone"))?;
        Ok((record, inserted))
    }
}

impl Drop for PostgresStore {
    /// Closes the connections on a plain thread and waits for it: a `postgres` client dropped
    /// on an async runtime's thread panics, and a panic in `drop` can abort the process.
    fn drop(&mut self) {
        let Some(pool) = self.pool.take() else { return };
        let (send, receive) = mpsc::channel::<Pool<Manager>>();
        let closer = std::thread::Builder::new().name("rampart-pg-close".into()).spawn(move || drop(receive.recv()));
        match closer {
            Ok(handle) => {
                // Should the thread be gone, the pool comes back: leak it rather than close here.
                if let Err(mpsc::SendError(pool)) = send.send(pool) {
                    std::mem::forget(pool);
                }
                // A panic over there stays there.
                let _ = handle.join();
            }
            Err(_) => std::mem::forget(pool),
        }
    }
}

/// Partner columns, in [`partner_from_row`]'s order; a macro so statements stay literals.
macro_rules! partner_columns {
    () => {
        "id, name, environment, secret_key_hash, publishable_key, widget_text, widget_button_url, \
         two_factor_waived, created_at, widget_origins, widget_approved, secret_key_last4, \
         previous_secret_key_hash, previous_key_last4, previous_key_expires_at"
    };
}

fn partner_from_row(row: &Row) -> Result<PartnerRecord, StoreError> {
    let environment =
        row.try_get::<_, &str>(2)?.parse::<Environment>().map_err(|_| StoreError::Corrupt("unknown environment"))?;
    Ok(PartnerRecord {
        id: id(row, 0)?,
        name: row.try_get(1)?,
        environment,
        secret_key_hash: hash(row, 3)?,
        publishable_key: row.try_get(4)?,
        widget_text: row.try_get(5)?,
        widget_button_url: row.try_get(6)?,
        two_factor_waived: row.try_get(7)?,
        created_at: time(row, 8)?,
        widget_origins: serde_json::from_str(row.try_get(9)?)
            .map_err(|_| StoreError::Corrupt("partner widget origins are not a list of origins"))?,
        widget_approved: row.try_get(10)?,
        secret_key_last4: row.try_get(11)?,
        previous_key: match (opt_bytes(row, 12, "stored hash is not 32 bytes")?, opt_time(row, 14)?) {
            (Some(hash), Some(expires_at)) => Some(PreviousKey { hash, last4: row.try_get(13)?, expires_at }),
            _ => None,
        },
    })
}

fn write_partner(client: &mut impl Sql, p: &PartnerRecord, insert: bool) -> Result<(), StoreError> {
    let sql = if insert {
        concat!(
            "INSERT INTO partners (",
            partner_columns!(),
            ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)"
        )
    } else {
        "UPDATE partners SET name = $2, environment = $3, secret_key_hash = $4, publishable_key = $5, \
         widget_text = $6, widget_button_url = $7, two_factor_waived = $8, created_at = $9, \
         widget_origins = $10, widget_approved = $11, secret_key_last4 = $12, previous_secret_key_hash = $13, \
         previous_key_last4 = $14, previous_key_expires_at = $15 WHERE id = $1"
    };
    let previous = p.previous_key.as_ref();
    let (previous_hash, previous_last4, previous_expires) = (
        previous.map(|k| k.hash.as_slice()),
        previous.and_then(|k| k.last4.clone()),
        previous.map(|k| to_sql_u64(k.expires_at)),
    );
    let origins = serde_json::to_string(&p.widget_origins).map_err(|e| StoreError::Backend(Box::new(e)))?;
    client
        .execute(
            sql,
            &[
                &p.id.as_bytes().as_slice(),
                &p.name,
                &p.environment.as_str(),
                &p.secret_key_hash.as_slice(),
                &p.publishable_key,
                &p.widget_text,
                &p.widget_button_url,
                &p.two_factor_waived,
                &to_sql_u64(p.created_at),
                &origins,
                &p.widget_approved,
                &p.secret_key_last4,
                &previous_hash,
                &previous_last4,
                &previous_expires,
            ],
        )
        .map_err(conflict("partner id or key already exists"))?;
    Ok(())
}

/// Contact columns, in [`contact_from_row`]'s order.
macro_rules! contact_columns {
    () => {
        "kyc_passed, enabled, secret, pending, pending_created_at, last_step, failures, last_failure_at, \
         recovery_codes, recovery_failures, recovery_last_failure_at, hold_until, member"
    };
}

fn contact_from_row(row: &Row) -> Result<ContactRecord, StoreError> {
    contact_from_row_at(row, 0)
}

/// [`contact_from_row`] for columns starting at `at`.
fn contact_from_row_at(row: &Row, at: usize) -> Result<ContactRecord, StoreError> {
    Ok(ContactRecord {
        kyc_passed: row.try_get(at)?,
        enabled: row.try_get(at + 1)?,
        secret: row.try_get(at + 2)?,
        pending: row.try_get(at + 3)?,
        pending_created_at: opt_time(row, at + 4)?,
        last_step: opt_time(row, at + 5)?,
        failures: count(row, at + 6)?,
        last_failure_at: opt_time(row, at + 7)?,
        recovery: row.try_get::<_, Option<Vec<u8>>>(at + 8)?.map(|b| RecoveryCodeSet::from_bytes(&b)).transpose()?,
        recovery_failures: count(row, at + 9)?,
        recovery_last_failure_at: opt_time(row, at + 10)?,
        hold_until: opt_time(row, at + 11)?,
        member: row.try_get(at + 12)?,
    })
}

/// Session columns, in [`session_from_row`]'s order.
macro_rules! session_columns {
    () => {
        "token_hash, partner_id, origin, created_at, last_seen_at, email, contact_id, two_factor_at"
    };
}

fn session_from_row(row: &Row) -> Result<SessionRecord, StoreError> {
    Ok(SessionRecord {
        token_hash: hash(row, 0)?,
        partner_id: id(row, 1)?,
        origin: row.try_get(2)?,
        created_at: time(row, 3)?,
        last_seen_at: time(row, 4)?,
        email: row.try_get(5)?,
        contact_id: opt_id(row, 6)?,
        two_factor_at: opt_time(row, 7)?,
    })
}

/// Insert `s`, or update the session keyed `key` to `s` (every column but the key).
fn write_session(client: &mut impl Sql, key: &[u8; 32], s: &SessionRecord, insert: bool) -> Result<(), StoreError> {
    let sql = if insert {
        concat!("INSERT INTO widget_sessions (", session_columns!(), ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8)")
    } else {
        "UPDATE widget_sessions SET partner_id = $2, origin = $3, created_at = $4, last_seen_at = $5, email = $6, \
         contact_id = $7, two_factor_at = $8 WHERE token_hash = $1"
    };
    client
        .execute(
            sql,
            &[
                &key.as_slice(),
                &s.partner_id.as_bytes().as_slice(),
                &s.origin,
                &to_sql_u64(s.created_at),
                &to_sql_u64(s.last_seen_at),
                &s.email,
                &s.contact_id.as_ref().map(|c| c.as_bytes().as_slice()),
                &s.two_factor_at.map(to_sql_u64),
            ],
        )
        .map_err(conflict("session token already exists"))?;
    Ok(())
}

/// A text column parsed by `FromStr` (an enum as stored).
fn enum_col<T: std::str::FromStr>(row: &Row, idx: usize, what: &'static str) -> Result<T, StoreError> {
    row.try_get::<_, &str>(idx)?.parse().map_err(|_| StoreError::Corrupt(what))
}

/// Team member columns, in [`member_from_row`]'s order.
macro_rules! member_columns {
    () => {
        "id, partner_id, email, role, password_hash, created_at, failures, last_failure_at"
    };
}

fn member_from_row(row: &Row) -> Result<MemberRecord, StoreError> {
    Ok(MemberRecord {
        id: id(row, 0)?,
        partner_id: id(row, 1)?,
        email: row.try_get(2)?,
        role: enum_col::<Role>(row, 3, "unknown member role")?,
        password_hash: row.try_get(4)?,
        created_at: time(row, 5)?,
        failures: count(row, 6)?,
        last_failure_at: opt_time(row, 7)?,
    })
}

/// Invitation columns, in [`invitation_from_row`]'s order.
macro_rules! invitation_columns {
    () => {
        "id, token_hash, partner_id, email, role, invited_by, created_at, expires_at"
    };
}

fn invitation_from_row(row: &Row) -> Result<InvitationRecord, StoreError> {
    Ok(InvitationRecord {
        id: id(row, 0)?,
        token_hash: hash(row, 1)?,
        partner_id: id(row, 2)?,
        email: row.try_get(3)?,
        role: enum_col::<Role>(row, 4, "unknown invitation role")?,
        invited_by: row.try_get(5)?,
        created_at: time(row, 6)?,
        expires_at: time(row, 7)?,
    })
}

const SELECT_MEMBERS: &str =
    concat!("SELECT ", member_columns!(), " FROM team_members WHERE partner_id = $1 ORDER BY created_at, id");
const SELECT_INVITATIONS: &str =
    concat!("SELECT ", invitation_columns!(), " FROM team_invitations WHERE partner_id = $1 ORDER BY created_at, id");

fn select_team(client: &mut impl Sql, p: &[u8]) -> Result<TeamRecord, StoreError> {
    Ok(TeamRecord {
        members: all(client, SELECT_MEMBERS, &[&p], member_from_row)?,
        invitations: all(client, SELECT_INVITATIONS, &[&p], invitation_from_row)?,
    })
}

/// Replace a partner's team rows with `team`, and end the sessions of members no longer in it.
fn write_team(tx: &mut impl Sql, p: &[u8], team: &TeamRecord) -> Result<(), StoreError> {
    tx.execute("DELETE FROM team_members WHERE partner_id = $1", &[&p])?;
    tx.execute("DELETE FROM team_invitations WHERE partner_id = $1", &[&p])?;
    for m in &team.members {
        tx.execute(
            concat!("INSERT INTO team_members (", member_columns!(), ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8)"),
            &[
                &m.id.as_bytes().as_slice(),
                &p,
                &m.email,
                &m.role.as_str(),
                &m.password_hash,
                &to_sql_u64(m.created_at),
                &i64::from(m.failures),
                &m.last_failure_at.map(to_sql_u64),
            ],
        )
        .map_err(conflict("member email already exists"))?;
    }
    for i in &team.invitations {
        tx.execute(
            concat!(
                "INSERT INTO team_invitations (",
                invitation_columns!(),
                ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8)"
            ),
            &[
                &i.id.as_bytes().as_slice(),
                &i.token_hash.as_slice(),
                &p,
                &i.email,
                &i.role.as_str(),
                &i.invited_by,
                &to_sql_u64(i.created_at),
                &to_sql_u64(i.expires_at),
            ],
        )
        .map_err(conflict("invitation token already exists"))?;
    }
    tx.execute(
        "DELETE FROM dashboard_sessions WHERE partner_id = $1 \
         AND member_id NOT IN (SELECT id FROM team_members WHERE partner_id = $1)",
        &[&p],
    )?;
    Ok(())
}

/// Dashboard session columns, in [`dashboard_session_from_row`]'s order.
macro_rules! dashboard_session_columns {
    () => {
        "token_hash, partner_id, member_id, stage, created_at, last_seen_at"
    };
}

fn dashboard_session_from_row(row: &Row) -> Result<DashboardSessionRecord, StoreError> {
    Ok(DashboardSessionRecord {
        token_hash: hash(row, 0)?,
        partner_id: id(row, 1)?,
        member_id: id(row, 2)?,
        stage: enum_col::<SessionStage>(row, 3, "unknown dashboard session stage")?,
        created_at: time(row, 4)?,
        last_seen_at: time(row, 5)?,
    })
}

fn write_dashboard_session(client: &mut impl Sql, s: &DashboardSessionRecord, insert: bool) -> Result<(), StoreError> {
    let sql = if insert {
        concat!("INSERT INTO dashboard_sessions (", dashboard_session_columns!(), ") VALUES ($1, $2, $3, $4, $5, $6)")
    } else {
        "UPDATE dashboard_sessions SET partner_id = $2, member_id = $3, stage = $4, created_at = $5, \
         last_seen_at = $6 WHERE token_hash = $1"
    };
    client
        .execute(
            sql,
            &[
                &s.token_hash.as_slice(),
                &s.partner_id.as_bytes().as_slice(),
                &s.member_id.as_bytes().as_slice(),
                &s.stage.as_str(),
                &to_sql_u64(s.created_at),
                &to_sql_u64(s.last_seen_at),
            ],
        )
        .map_err(conflict("session token already exists"))?;
    Ok(())
}

fn sign_in_from_row(row: &Row) -> Result<SignInRecord, StoreError> {
    Ok(SignInRecord {
        sent_at: serde_json::from_str(row.try_get(0)?)
            .map_err(|_| StoreError::Corrupt("sign-in sent_at is not a list of times"))?,
        code_hash: opt_bytes(row, 1, "stored hash is not 32 bytes")?,
        expires_at: time(row, 2)?,
        tries: count(row, 3)?,
    })
}

/// Order columns, in [`order_from_row`]'s order.
macro_rules! order_columns {
    () => {
        "id, partner_id, contact_id, coin, amount, currency, address, price, quantity, status, created_at, \
         updated_at"
    };
}

fn order_from_row(row: &Row) -> Result<OrderRecord, StoreError> {
    Ok(OrderRecord {
        id: id(row, 0)?,
        partner_id: id(row, 1)?,
        contact_id: id(row, 2)?,
        coin: row.try_get(3)?,
        amount: row.try_get(4)?,
        currency: row.try_get(5)?,
        address: row.try_get(6)?,
        price: row.try_get(7)?,
        quantity: row.try_get(8)?,
        status: OrderStatus::from_name(row.try_get(9)?).ok_or(StoreError::Corrupt("unknown order status"))?,
        created_at: time(row, 10)?,
        updated_at: time(row, 11)?,
    })
}

/// Insert `o`, or update the order keyed `key` to `o` (every column but the key).
fn write_order(client: &mut impl Sql, key: &OrderId, o: &OrderRecord, insert: bool) -> Result<(), StoreError> {
    let sql = if insert {
        concat!(
            "INSERT INTO widget_orders (",
            order_columns!(),
            ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)"
        )
    } else {
        "UPDATE widget_orders SET partner_id = $2, contact_id = $3, coin = $4, amount = $5, currency = $6, \
         address = $7, price = $8, quantity = $9, status = $10, created_at = $11, updated_at = $12 WHERE id = $1"
    };
    client
        .execute(
            sql,
            &[
                &key.as_bytes().as_slice(),
                &o.partner_id.as_bytes().as_slice(),
                &o.contact_id.as_bytes().as_slice(),
                &o.coin,
                &o.amount,
                &o.currency,
                &o.address,
                &o.price,
                &o.quantity,
                &o.status.as_str(),
                &to_sql_u64(o.created_at),
                &to_sql_u64(o.updated_at),
            ],
        )
        .map_err(conflict("order id already exists"))?;
    Ok(())
}

const SELECT_PARTNER: &str = concat!("SELECT ", partner_columns!(), " FROM partners WHERE id = $1");
const LOCK_PARTNER: &str = concat!("SELECT ", partner_columns!(), " FROM partners WHERE id = $1 FOR UPDATE");
/// Webhook endpoint columns, in [`endpoint_from_row`]'s order.
macro_rules! endpoint_columns {
    () => {
        "id, partner_id, url, events, enabled, secret, previous_secret, previous_until, created_at, failing_since"
    };
}
const SELECT_ENDPOINTS: &str =
    concat!("SELECT ", endpoint_columns!(), " FROM webhook_endpoints WHERE partner_id = $1 ORDER BY created_at, id");

fn endpoint_from_row(row: &Row) -> Result<WebhookEndpointRecord, StoreError> {
    let events: String = row.try_get(3)?;
    Ok(WebhookEndpointRecord {
        id: id::<uuid::Uuid>(row, 0)?,
        partner_id: id(row, 1)?,
        url: row.try_get(2)?,
        events: serde_json::from_str(&events).map_err(|_| StoreError::Corrupt("endpoint events"))?,
        enabled: row.try_get(4)?,
        secret: row.try_get(5)?,
        previous_secret: row.try_get(6)?,
        previous_until: opt_time(row, 7)?,
        created_at: time(row, 8)?,
        failing_since: opt_time(row, 9)?,
    })
}
const SELECT_CONTACT: &str =
    concat!("SELECT ", contact_columns!(), " FROM contacts WHERE partner_id = $1 AND contact_id = $2");
const LOCK_CONTACT: &str =
    concat!("SELECT ", contact_columns!(), " FROM contacts WHERE partner_id = $1 AND contact_id = $2 FOR UPDATE");
const INSERT_DEFAULT_CONTACT: &str =
    "INSERT INTO contacts (partner_id, contact_id) VALUES ($1, $2) ON CONFLICT (partner_id, contact_id) DO NOTHING";
const LOCK_SESSION: &str =
    concat!("SELECT ", session_columns!(), " FROM widget_sessions WHERE token_hash = $1 FOR UPDATE");
const LOCK_SIGN_IN: &str = "SELECT sent_at, code_hash, expires_at, tries FROM widget_sign_ins \
     WHERE partner_id = $1 AND email = $2 FOR UPDATE";
const INSERT_DEFAULT_SIGN_IN: &str =
    "INSERT INTO widget_sign_ins (partner_id, email) VALUES ($1, $2) ON CONFLICT (partner_id, email) DO NOTHING";
const SELECT_EMAIL: &str = "SELECT contact_id FROM widget_emails WHERE partner_id = $1 AND email = $2";
const SELECT_ORDER: &str =
    concat!("SELECT ", order_columns!(), " FROM widget_orders WHERE id = $1 AND partner_id = $2");
const LOCK_ORDER: &str =
    concat!("SELECT ", order_columns!(), " FROM widget_orders WHERE id = $1 AND partner_id = $2 FOR UPDATE");

/// A contact's newest orders. This and [`ORDERS_NEXT_PAGE`] walk the `widget_orders_by_contact`
/// index in its order.
const ORDERS_FIRST_PAGE: &str = concat!(
    "SELECT ",
    order_columns!(),
    " FROM widget_orders WHERE partner_id = $1 AND contact_id = $2 ORDER BY created_at DESC, id DESC LIMIT $3"
);

/// A contact's orders strictly older than the `(created_at, id)` cursor `($3, $4)`.
const ORDERS_NEXT_PAGE: &str = concat!(
    "SELECT ",
    order_columns!(),
    " FROM widget_orders WHERE partner_id = $1 AND contact_id = $2 \
     AND (created_at < $3 OR (created_at = $3 AND id < $4)) ORDER BY created_at DESC, id DESC LIMIT $5"
);

/// A partner's orders passing the dashboard's filters (`$2` status, `$3` coin, `$4` contact;
/// NULL is "any"; `$5` from and `$6` until, always given, so the index walks only that range),
/// older than the `(created_at, id)` cursor `($7, $8)`, newest first, through
/// `widget_orders_by_partner`.
const ORDERS_FILTERED: &str = concat!(
    "SELECT ",
    order_columns!(),
    " FROM widget_orders WHERE partner_id = $1 \
     AND created_at >= $5 AND created_at < $6 AND (created_at < $7 OR (created_at = $7 AND id < $8)) \
     AND ($2::text IS NULL OR status = $2) AND ($3::text IS NULL OR coin = $3) \
     AND ($4::bytea IS NULL OR contact_id = $4) \
     ORDER BY created_at DESC, id DESC LIMIT $9"
);

/// The dashboard's contact lists, after the contact id `$2` (an empty value, below every id,
/// for the first page), through their partial indexes.
macro_rules! contacts_list {
    ($condition:literal) => {
        concat!(
            "SELECT contact_id, ",
            contact_columns!(),
            " FROM contacts WHERE partner_id = $1 AND contact_id > $2 AND NOT member AND ",
            $condition,
            " ORDER BY contact_id LIMIT $3"
        )
    };
}
const CONTACTS_KYC_WITHOUT_2FA: &str = contacts_list!("kyc_passed AND NOT enabled");
const CONTACTS_LOCKED: &str = contacts_list!("failures >= 100");
const CONTACTS_LOW_RECOVERY_CODES: &str = contacts_list!("enabled AND recovery_remaining <= 3");

impl Store for PostgresStore {
    fn insert_partner(&self, partner: &PartnerRecord) -> Result<(), StoreError> {
        write_partner(&mut *self.conn()?, partner, true)
    }

    fn partner(&self, id: &PartnerId) -> Result<Option<PartnerRecord>, StoreError> {
        self.again_if_lost(|c| one(c, SELECT_PARTNER, &[&id.as_bytes().as_slice()], partner_from_row))
    }

    fn partner_by_secret_key_hash(&self, hash: &[u8; 32]) -> Result<Option<PartnerRecord>, StoreError> {
        let sql = concat!(
            "SELECT ",
            partner_columns!(),
            " FROM partners WHERE secret_key_hash = $1 UNION ALL SELECT ",
            partner_columns!(),
            " FROM partners WHERE previous_secret_key_hash = $1 LIMIT 1"
        );
        self.again_if_lost(|c| one(c, sql, &[&hash.as_slice()], partner_from_row))
    }

    fn partner_by_publishable_key(&self, key: &str) -> Result<Option<PartnerRecord>, StoreError> {
        let sql = concat!("SELECT ", partner_columns!(), " FROM partners WHERE publishable_key = $1");
        self.again_if_lost(|c| one(c, sql, &[&key], partner_from_row))
    }

    fn update_partner(
        &self,
        id: &PartnerId,
        f: &mut dyn FnMut(&mut PartnerRecord, &mut Effects) -> bool,
    ) -> Result<bool, StoreError> {
        self.write(|tx, ran| {
            let Some(mut record) = one(tx, LOCK_PARTNER, &[&id.as_bytes().as_slice()], partner_from_row)? else {
                return Ok(Finish::Rollback(false));
            };
            let (write, effects) = run_with_effects(ran, f, &mut record);
            if !write && effects.is_empty() {
                return Ok(Finish::Rollback(true));
            }
            if write {
                write_partner(tx, &record, false)?;
            }
            write_effects(tx, id, &effects)?;
            Ok(Finish::Commit(true))
        })
    }

    fn webhook_endpoints(&self, partner: &PartnerId) -> Result<Vec<WebhookEndpointRecord>, StoreError> {
        self.again_if_lost(|c| all(c, SELECT_ENDPOINTS, &[&partner.as_bytes().as_slice()], endpoint_from_row))
    }

    fn update_webhook_endpoints(
        &self,
        partner: &PartnerId,
        f: &mut dyn FnMut(&mut Vec<WebhookEndpointRecord>, &mut Effects) -> bool,
    ) -> Result<bool, StoreError> {
        let p = partner.as_bytes().as_slice();
        self.write(|tx, ran| {
            // The partner's row lock serializes changes of its endpoints.
            if one(tx, LOCK_PARTNER, &[&p], partner_from_row)?.is_none() {
                return Ok(Finish::Rollback(false));
            }
            let mut list = all(tx, SELECT_ENDPOINTS, &[&p], endpoint_from_row)?;
            let (write, effects) = run_with_effects(ran, f, &mut list);
            if !write && effects.is_empty() {
                return Ok(Finish::Rollback(true));
            }
            if write {
                tx.execute("DELETE FROM webhook_endpoints WHERE partner_id = $1", &[&p])?;
                for e in &list {
                    let events = serde_json::to_string(&e.events).map_err(|e| StoreError::Backend(Box::new(e)))?;
                    tx.execute(
                        concat!(
                            "INSERT INTO webhook_endpoints (",
                            endpoint_columns!(),
                            ") VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)"
                        ),
                        &[
                            &e.id.as_bytes().as_slice(),
                            &p,
                            &e.url,
                            &events,
                            &e.enabled,
                            &e.secret,
                            &e.previous_secret,
                            &e.previous_until.map(to_sql_u64),
                            &to_sql_u64(e.created_at),
                            &e.failing_since.map(to_sql_u64),
                        ],
                    )?;
                }
            }
            write_effects(tx, partner, &effects)?;
            Ok(Finish::Commit(true))
        })
    }

    fn count_partners(&self) -> Result<u64, StoreError> {
        let n: i64 =
            self.again_if_lost(|c| one(c, "SELECT COUNT(*) FROM partners", &[], |r| Ok(r.try_get(0)?)))?.unwrap_or(0);
        u64::try_from(n).map_err(|_| StoreError::Corrupt("negative count"))
    }

    fn contact(&self, partner: &PartnerId, contact: &ContactId) -> Result<Option<ContactRecord>, StoreError> {
        let key: [&(dyn ToSql + Sync); 2] = [&partner.as_bytes().as_slice(), &contact.as_bytes().as_slice()];
        self.again_if_lost(|c| one(c, SELECT_CONTACT, &key, contact_from_row))
    }

    fn contact_enabled(&self, partner: &PartnerId, contact: &ContactId) -> Result<Option<bool>, StoreError> {
        let key: [&(dyn ToSql + Sync); 2] = [&partner.as_bytes().as_slice(), &contact.as_bytes().as_slice()];
        let sql = "SELECT enabled FROM contacts WHERE partner_id = $1 AND contact_id = $2";
        self.again_if_lost(|c| one(c, sql, &key, |r| Ok(r.try_get::<_, bool>(0)?)))
    }

    fn update_contact(
        &self,
        partner: &PartnerId,
        contact: &ContactId,
        f: &mut dyn FnMut(&mut ContactRecord, &mut Effects) -> bool,
    ) -> Result<(), StoreError> {
        let (p, c) = (partner.as_bytes().as_slice(), contact.as_bytes().as_slice());
        self.write(|tx, ran| {
            let (mut record, inserted) =
                Self::lock_or_insert_default(tx, LOCK_CONTACT, INSERT_DEFAULT_CONTACT, &[&p, &c], contact_from_row)?;
            let (write, effects) = run_with_effects(ran, f, &mut record);
            if !write {
                if effects.is_empty() {
                    return Ok(Finish::Rollback(()));
                }
                // Only the audit events to keep: not the row inserted to lock.
                if inserted {
                    tx.execute("DELETE FROM contacts WHERE partner_id = $1 AND contact_id = $2", &[&p, &c])?;
                }
                write_effects(tx, partner, &effects)?;
                return Ok(Finish::Commit(()));
            }
            let (pending_at, last_step, failures, failed_at) = (
                record.pending_created_at.map(to_sql_u64),
                record.last_step.map(to_sql_u64),
                i64::from(record.failures),
                record.last_failure_at.map(to_sql_u64),
            );
            let remaining = record.recovery.as_ref().map(|r| i64::from(r.remaining()));
            let (recovery, recovery_failures, recovery_failed_at, hold_until) = (
                record.recovery.as_ref().map(RecoveryCodeSet::to_bytes),
                i64::from(record.recovery_failures),
                record.recovery_last_failure_at.map(to_sql_u64),
                record.hold_until.map(to_sql_u64),
            );
            let fields: [&(dyn ToSql + Sync); CONTACT_FIELDS] = [
                &p,
                &c,
                &record.kyc_passed,
                &record.enabled,
                &record.secret,
                &record.pending,
                &pending_at,
                &last_step,
                &failures,
                &failed_at,
                &recovery,
                &recovery_failures,
                &recovery_failed_at,
                &hold_until,
                &record.member,
                &remaining,
            ];
            match (effects.audit.as_slice(), effects.webhooks.as_slice()) {
                // The usual audited change, one or two events and its webhook message: the
                // record, the rows and the head in one statement that also tells whether any
                // endpoint takes the message, so with none it costs no round trip more than an
                // unaudited change.
                (drafts, webhooks)
                    if (1..=AUDITED_IN_ONE_STATEMENT).contains(&drafts.len())
                        && webhooks.len() <= WEBHOOKS_IN_ONE_STATEMENT =>
                {
                    update_contact_audited(tx, partner, drafts, webhooks, &fields)?;
                }
                (drafts, webhooks) => {
                    tx.execute(UPDATE_CONTACT, &fields)?;
                    write_audit(tx, partner, drafts)?;
                    write_webhooks(tx, partner, webhooks)?;
                }
            }
            Ok(Finish::Commit(()))
        })
    }

    fn kyc_contacts_without_2fa(&self, partner: &PartnerId) -> Result<Vec<ContactId>, StoreError> {
        let sql = "SELECT contact_id FROM contacts WHERE partner_id = $1 AND kyc_passed AND NOT enabled \
                   AND NOT member ORDER BY contact_id";
        self.again_if_lost(|c| all(c, sql, &[&partner.as_bytes().as_slice()], |r| id(r, 0)))
    }

    fn contacts_with_secrets(
        &self,
        after: Option<(PartnerId, ContactId)>,
        limit: usize,
    ) -> Result<Vec<(PartnerId, ContactId)>, StoreError> {
        let limit = to_sql_limit(limit);
        let key = |r: &Row| Ok((id(r, 0)?, id(r, 1)?));
        self.again_if_lost(|conn| match after {
            None => all(
                conn,
                "SELECT partner_id, contact_id FROM contacts WHERE secret IS NOT NULL OR pending IS NOT NULL \
                 ORDER BY partner_id, contact_id LIMIT $1",
                &[&limit],
                key,
            ),
            Some((p, c)) => all(
                conn,
                "SELECT partner_id, contact_id FROM contacts WHERE (partner_id, contact_id) > ($1, $2) \
                 AND (secret IS NOT NULL OR pending IS NOT NULL) ORDER BY partner_id, contact_id LIMIT $3",
                &[&p.as_bytes().as_slice(), &c.as_bytes().as_slice(), &limit],
                key,
            ),
        })
    }

    fn sealed_samples(&self, per_header: usize) -> Result<Vec<SealedSample>, StoreError> {
        let header = i32::try_from(KEY_HEADER_LEN).map_err(|_| backend("key header length out of range"))?;
        // One pass over the table: a start-up check, not a request path.
        self.again_if_lost(|c| {
            all(
                c,
                "SELECT partner_id, contact_id, field, sealed FROM (
                SELECT partner_id, contact_id, 0 AS field, secret AS sealed,
                    row_number() OVER (PARTITION BY substring(secret FROM 1 FOR $2)) AS n
                FROM contacts WHERE secret IS NOT NULL
                UNION ALL
                SELECT partner_id, contact_id, 1, pending,
                    row_number() OVER (PARTITION BY substring(pending FROM 1 FOR $2))
                FROM contacts WHERE pending IS NOT NULL
                UNION ALL
                SELECT partner_id, id, 2, sealed, row_number() OVER (PARTITION BY substring(sealed FROM 1 FOR $2))
                FROM (SELECT partner_id, id, secret AS sealed FROM webhook_endpoints
                      UNION ALL
                      SELECT partner_id, id, previous_secret FROM webhook_endpoints WHERE previous_secret IS NOT NULL)
                     AS endpoint_secrets
             ) AS samples WHERE n <= $1",
                &[&to_sql_limit(per_header), &header],
                |r| {
                    Ok(SealedSample {
                        partner_id: id(r, 0)?,
                        contact_id: id(r, 1)?,
                        field: match r.try_get::<_, i32>(2)? {
                            0 => Field::Secret,
                            1 => Field::Pending,
                            _ => Field::WebhookSecret,
                        },
                        sealed: r.try_get(3)?,
                    })
                },
            )
        })
    }

    fn insert_session(&self, session: &SessionRecord) -> Result<(), StoreError> {
        write_session(&mut *self.conn()?, &session.token_hash, session, true)
    }

    fn update_session(
        &self,
        token_hash: &[u8; 32],
        f: &mut dyn FnMut(&mut SessionRecord) -> bool,
    ) -> Result<Option<SessionRecord>, StoreError> {
        self.write(|tx, ran| {
            let Some(mut record) = one(tx, LOCK_SESSION, &[&token_hash.as_slice()], session_from_row)? else {
                return Ok(Finish::Rollback(None));
            };
            if !run(ran, f, &mut record) {
                return Ok(Finish::Rollback(Some(record)));
            }
            write_session(tx, token_hash, &record, false)?;
            Ok(Finish::Commit(Some(record)))
        })
    }

    fn delete_session(&self, token_hash: &[u8; 32]) -> Result<bool, StoreError> {
        let sql = "DELETE FROM widget_sessions WHERE token_hash = $1";
        Ok(self.conn()?.execute(sql, &[&token_hash.as_slice()])? > 0)
    }

    fn delete_sessions_idle_since(&self, before: u64) -> Result<u64, StoreError> {
        let sql = "DELETE FROM widget_sessions WHERE last_seen_at < $1";
        Ok(self.conn()?.execute(sql, &[&to_sql_u64(before)])?)
    }

    fn update_sign_in(
        &self,
        partner: &PartnerId,
        email: &str,
        f: &mut dyn FnMut(&mut SignInRecord) -> bool,
    ) -> Result<(), StoreError> {
        let p = partner.as_bytes().as_slice();
        self.write(|tx, ran| {
            let mut record =
                Self::lock_or_default(tx, LOCK_SIGN_IN, INSERT_DEFAULT_SIGN_IN, &[&p, &email], sign_in_from_row)?;
            if !run(ran, f, &mut record) {
                return Ok(Finish::Rollback(()));
            }
            let sent_at = serde_json::to_string(&record.sent_at).map_err(|e| StoreError::Backend(Box::new(e)))?;
            tx.execute(
                "UPDATE widget_sign_ins SET sent_at = $3, code_hash = $4, expires_at = $5, tries = $6 \
                 WHERE partner_id = $1 AND email = $2",
                &[
                    &p,
                    &email,
                    &sent_at,
                    &record.code_hash.as_ref().map(|h| h.as_slice()),
                    &to_sql_u64(record.expires_at),
                    &i64::from(record.tries),
                ],
            )?;
            Ok(Finish::Commit(()))
        })
    }

    fn contact_for_email(
        &self,
        partner: &PartnerId,
        email: &str,
        candidate: ContactId,
    ) -> Result<ContactId, StoreError> {
        let p = partner.as_bytes().as_slice();
        // The insert waits for a racing one to commit, then does nothing; the next statement
        // (a new snapshot at READ COMMITTED) sees the row that won. Rows are never deleted, so
        // the loop ends at once; it is bounded all the same. Run again on a lost connection:
        // an insert that did land is found by the next run's insert-or-read.
        fn insert_or_read(
            conn: &mut Connection,
            p: &[u8],
            email: &str,
            candidate: ContactId,
        ) -> Result<ContactId, StoreError> {
            for _ in 0..MAX_ATTEMPTS {
                let inserted = one(
                    conn,
                    "INSERT INTO widget_emails (partner_id, email, contact_id) VALUES ($1, $2, $3) \
                     ON CONFLICT (partner_id, email) DO NOTHING RETURNING contact_id",
                    &[&p, &email, &candidate.as_bytes().as_slice()],
                    |r| id(r, 0),
                )?;
                if let Some(contact) = inserted {
                    return Ok(contact);
                }
                if let Some(contact) = one(conn, SELECT_EMAIL, &[&p, &email], |r| id(r, 0))? {
                    return Ok(contact);
                }
            }
            Err(backend("the email's contact id could not be stored or read"))
        }
        self.again_if_lost(|conn| insert_or_read(conn, p, email, candidate))
    }

    fn contact_by_email(&self, partner: &PartnerId, email: &str) -> Result<Option<ContactId>, StoreError> {
        self.again_if_lost(|c| one(c, SELECT_EMAIL, &[&partner.as_bytes().as_slice(), &email], |r| id(r, 0)))
    }

    fn insert_order(&self, order: &OrderRecord, effects: &Effects) -> Result<(), StoreError> {
        if effects.is_empty() {
            return write_order(&mut *self.conn()?, &order.id, order, true);
        }
        self.write(|tx, _| {
            write_order(tx, &order.id, order, true)?;
            write_effects(tx, &order.partner_id, effects)?;
            Ok(Finish::Commit(()))
        })
    }

    fn order(&self, partner: &PartnerId, id: &OrderId) -> Result<Option<OrderRecord>, StoreError> {
        let key: [&(dyn ToSql + Sync); 2] = [&id.as_bytes().as_slice(), &partner.as_bytes().as_slice()];
        self.again_if_lost(|c| one(c, SELECT_ORDER, &key, order_from_row))
    }

    fn update_order(
        &self,
        partner: &PartnerId,
        id: &OrderId,
        f: &mut dyn FnMut(&mut OrderRecord, &mut Effects) -> bool,
    ) -> Result<bool, StoreError> {
        let (o, p) = (id.as_bytes().as_slice(), partner.as_bytes().as_slice());
        self.write(|tx, ran| {
            let Some(mut record) = one(tx, LOCK_ORDER, &[&o, &p], order_from_row)? else {
                return Ok(Finish::Rollback(false));
            };
            let (write, effects) = run_with_effects(ran, f, &mut record);
            if !write && effects.is_empty() {
                return Ok(Finish::Rollback(true));
            }
            if write {
                write_order(tx, id, &record, false)?;
            }
            write_effects(tx, partner, &effects)?;
            Ok(Finish::Commit(true))
        })
    }

    fn claim_deliveries(&self, now: u64, lease_until: u64, limit: usize) -> Result<Vec<ClaimedDelivery>, StoreError> {
        // SKIP LOCKED: servers claiming at once take different rows; the lease keeps a row from
        // being claimed again until it is finished or its server is gone long enough.
        const CLAIM: &str = "WITH due AS (SELECT d.message_id, d.endpoint_id FROM webhook_deliveries d \
               JOIN webhook_endpoints e ON e.id = d.endpoint_id \
               WHERE d.state = 'pending' AND d.next_at <= $1 AND (d.lease_until IS NULL OR d.lease_until <= $1) \
                 AND e.enabled \
               ORDER BY d.next_at, d.message_id LIMIT $3 FOR UPDATE OF d SKIP LOCKED) \
             UPDATE webhook_deliveries w SET lease_until = $2 \
             FROM due, webhook_messages m, webhook_endpoints e \
             WHERE w.message_id = due.message_id AND w.endpoint_id = due.endpoint_id \
               AND m.id = w.message_id AND e.id = w.endpoint_id \
             RETURNING e.id, e.partner_id, e.url, e.events, e.enabled, e.secret, e.previous_secret, \
               e.previous_until, e.created_at, e.failing_since, w.message_id, w.attempts, m.event, m.body";
        let (now, until, limit) = (to_sql_u64(now), to_sql_u64(lease_until), to_sql_limit(limit));
        // Every server polls: an idle queue is answered by one read, without a write transaction.
        const ANY_DUE: &str = "SELECT 1 FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id \
               WHERE d.state = 'pending' AND d.next_at <= $1 AND (d.lease_until IS NULL OR d.lease_until <= $1) \
                 AND e.enabled LIMIT 1";
        if self.again_if_lost(|c| one(c, ANY_DUE, &[&now], |_| Ok(())))?.is_none() {
            return Ok(Vec::new());
        }
        self.write(|tx, _| {
            let claimed = all(tx, CLAIM, &[&now, &until, &limit], |r| {
                let endpoint = endpoint_from_row(r)?;
                Ok(ClaimedDelivery {
                    partner_id: endpoint.partner_id,
                    message_id: r.try_get(10)?,
                    attempts: count(r, 11)?,
                    event: r.try_get(12)?,
                    body: r.try_get(13)?,
                    endpoint,
                })
            })?;
            Ok(Finish::Commit(claimed))
        })
    }

    fn finish_delivery(
        &self,
        partner: &PartnerId,
        endpoint_id: &uuid::Uuid,
        attempt: &AttemptRecord,
        next: &DeliveryNext,
        endpoint: Option<&WebhookEndpointRecord>,
        effects: &Effects,
    ) -> Result<(), StoreError> {
        let (state, next_at): (&str, Option<i64>) = match next {
            DeliveryNext::Delivered => ("delivered", None),
            DeliveryNext::Failed => ("failed", None),
            DeliveryNext::Retry(at) => ("pending", Some(to_sql_u64(*at))),
        };
        let e_id = endpoint_id.as_bytes().as_slice();
        let (n, at, latency) = (i64::from(attempt.attempt), to_sql_u64(attempt.at_ms), to_sql_u64(attempt.latency_ms));
        let status = attempt.status.map(i32::from);
        if endpoint.is_none() && effects.is_empty() {
            // The common case (the endpoint's state unchanged, nothing audited): one statement,
            // committed on its own, one round trip. It sets values rather than adding to them,
            // so running it again on a fresh connection after a lost one changes nothing more.
            const FINISH: &str = "WITH d AS (UPDATE webhook_deliveries SET attempts = $4, state = $9, \
                   next_at = COALESCE($10, next_at), lease_until = NULL WHERE message_id = $3 AND endpoint_id = $1) \
                 INSERT INTO webhook_attempts (endpoint_id, at_ms, message_id, attempt, event, status, error, latency_ms) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT DO NOTHING";
            let params: [&(dyn ToSql + Sync); 10] = [
                &e_id,
                &at,
                &attempt.message_id,
                &n,
                &attempt.event,
                &status,
                &attempt.error,
                &latency,
                &state,
                &next_at,
            ];
            return self.again_if_lost(|c| c.execute(FINISH, &params).map(|_| ()).map_err(StoreError::from));
        }
        self.write(|tx, _| {
            tx.execute(
                "UPDATE webhook_deliveries SET attempts = $3, state = $4, next_at = COALESCE($5, next_at), \
                 lease_until = NULL WHERE message_id = $1 AND endpoint_id = $2",
                &[&attempt.message_id, &e_id, &n, &state, &next_at],
            )?;
            tx.execute(
                "INSERT INTO webhook_attempts (endpoint_id, at_ms, message_id, attempt, event, status, error, latency_ms) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT DO NOTHING",
                &[&e_id, &at, &attempt.message_id, &n, &attempt.event, &status, &attempt.error, &latency],
            )?;
            if let Some(e) = endpoint {
                tx.execute(
                    "UPDATE webhook_endpoints SET enabled = $2, failing_since = $3 WHERE id = $1",
                    &[&e.id.as_bytes().as_slice(), &e.enabled, &e.failing_since.map(to_sql_u64)],
                )?;
            }
            write_effects(tx, partner, effects)?;
            Ok(Finish::Commit(()))
        })
    }

    fn webhook_attempts(
        &self,
        partner: &PartnerId,
        endpoint_id: &uuid::Uuid,
        before: Option<(u64, String)>,
        limit: usize,
    ) -> Result<Vec<AttemptRecord>, StoreError> {
        let sql = "SELECT a.message_id, a.event, a.at_ms, a.attempt, a.status, a.error, a.latency_ms \
                   FROM webhook_attempts a JOIN webhook_endpoints e ON e.id = a.endpoint_id \
                   WHERE a.endpoint_id = $1 AND e.partner_id = $2 AND (a.at_ms, a.message_id) < ($3, $4) \
                   ORDER BY a.at_ms DESC, a.message_id DESC LIMIT $5";
        let (at, msg) = before.map_or((i64::MAX, String::new()), |(t, m)| (to_sql_u64(t), m));
        let (e, p, limit) = (endpoint_id.as_bytes().as_slice(), partner.as_bytes().as_slice(), to_sql_limit(limit));
        let msg = if at == i64::MAX { "\u{10FFFF}".to_owned() } else { msg };
        self.again_if_lost(|c| {
            all(c, sql, &[&e, &p, &at, &msg, &limit], |r| {
                Ok(AttemptRecord {
                    message_id: r.try_get(0)?,
                    event: r.try_get(1)?,
                    at_ms: time(r, 2)?,
                    attempt: count(r, 3)?,
                    status: r.try_get::<_, Option<i32>>(4)?.and_then(|s| u16::try_from(s).ok()),
                    error: r.try_get(5)?,
                    latency_ms: time(r, 6)?,
                })
            })
        })
    }

    fn resend_webhook_message(&self, partner: &PartnerId, message_id: &str, now: u64) -> Result<bool, StoreError> {
        let (p, now) = (partner.as_bytes().as_slice(), to_sql_u64(now));
        self.write(|tx, _| {
            let n = tx.execute(
                "UPDATE webhook_deliveries SET state = 'pending', next_at = $3, lease_until = NULL \
                 WHERE message_id = $1 AND partner_id = $2",
                &[&message_id, &p, &now],
            )?;
            Ok(Finish::Commit(n > 0))
        })
    }

    fn webhook_queue_depth(&self) -> Result<u64, StoreError> {
        let n: i64 = self
            .again_if_lost(|c| {
                one(c, "SELECT COUNT(*) FROM webhook_deliveries WHERE state = 'pending'", &[], |r| Ok(r.try_get(0)?))
            })?
            .unwrap_or(0);
        u64::try_from(n).map_err(|_| StoreError::Corrupt("negative count"))
    }

    fn webhook_deliveries(&self, partner: &PartnerId) -> Result<Vec<DeliveryRecord>, StoreError> {
        let sql = "SELECT d.message_id, d.endpoint_id, m.event, d.attempts, d.next_at, d.state \
                   FROM webhook_deliveries d JOIN webhook_messages m ON m.id = d.message_id \
                   WHERE d.partner_id = $1 ORDER BY m.created_at, d.message_id, d.endpoint_id";
        self.again_if_lost(|c| {
            all(c, sql, &[&partner.as_bytes().as_slice()], |r| {
                Ok(DeliveryRecord {
                    message_id: r.try_get(0)?,
                    endpoint_id: id::<uuid::Uuid>(r, 1)?,
                    event: r.try_get(2)?,
                    attempts: count(r, 3)?,
                    next_at: time(r, 4)?,
                    state: r.try_get(5)?,
                })
            })
        })
    }

    fn orders_for_contact(
        &self,
        partner: &PartnerId,
        contact: &ContactId,
        before: Option<(u64, OrderId)>,
        limit: usize,
    ) -> Result<Vec<OrderRecord>, StoreError> {
        let (p, c, limit) = (partner.as_bytes().as_slice(), contact.as_bytes().as_slice(), to_sql_limit(limit));
        self.again_if_lost(|conn| match before {
            None => all(conn, ORDERS_FIRST_PAGE, &[&p, &c, &limit], order_from_row),
            Some((created_at, id)) => all(
                conn,
                ORDERS_NEXT_PAGE,
                &[&p, &c, &to_sql_u64(created_at), &id.as_bytes().as_slice(), &limit],
                order_from_row,
            ),
        })
    }

    fn audit_events(
        &self,
        partner: &PartnerId,
        contact: Option<&ContactId>,
        after: u64,
        limit: usize,
    ) -> Result<Vec<AuditRow>, StoreError> {
        let (p, after, limit) = (partner.as_bytes().as_slice(), to_sql_u64(after), to_sql_u64(limit as u64));
        self.again_if_lost(|c| match contact {
            None => all(
                c,
                "SELECT partner_id, seq, id, at, contact_id, actor, event, details, prev, hash FROM audit_events \
                 WHERE partner_id = $1 AND seq > $2 ORDER BY seq LIMIT $3",
                &[&p, &after, &limit],
                audit_row_from_row,
            ),
            Some(contact) => all(
                c,
                "SELECT partner_id, seq, id, at, contact_id, actor, event, details, prev, hash FROM audit_events \
                 WHERE partner_id = $1 AND contact_id = $2 AND seq > $3 ORDER BY seq LIMIT $4",
                &[&p, &contact.as_bytes().as_slice(), &after, &limit],
                audit_row_from_row,
            ),
        })
    }

    fn orders_page(
        &self,
        partner: &PartnerId,
        filter: &OrderFilter,
        before: Option<(u64, OrderId)>,
        limit: usize,
    ) -> Result<Vec<OrderRecord>, StoreError> {
        let (until, (at, id)) = filter.bounds(before);
        let (p, limit) = (partner.as_bytes().as_slice(), to_sql_limit(limit));
        let status = filter.status.map(OrderStatus::as_str);
        let contact = filter.contact.as_ref().map(|c| c.as_bytes().as_slice());
        let from = filter.from.map_or(0, to_sql_u64);
        let id = id.as_slice();
        self.again_if_lost(|conn| {
            all(
                conn,
                ORDERS_FILTERED,
                &[&p, &status, &filter.coin, &contact, &from, &until, &at, &id, &limit],
                order_from_row,
            )
        })
    }

    fn contact_counts(&self, partner: &PartnerId) -> Result<ContactCounts, StoreError> {
        let sql = "SELECT count(*) FILTER (WHERE enabled), count(*) FILTER (WHERE NOT enabled), \
                   count(*) FILTER (WHERE failures >= 100), count(*) FILTER (WHERE kyc_passed AND NOT enabled), \
                   count(*) FILTER (WHERE enabled AND recovery_remaining <= 3) \
                   FROM contacts WHERE partner_id = $1 AND NOT member";
        let p = partner.as_bytes().as_slice();
        let found = self.again_if_lost(|conn| {
            one(conn, sql, &[&p], |r| {
                let n = |i: usize| -> Result<u64, StoreError> {
                    u64::try_from(r.try_get::<_, i64>(i)?).map_err(|_| StoreError::Corrupt("negative count"))
                };
                Ok(ContactCounts {
                    enabled: n(0)?,
                    not_enabled: n(1)?,
                    locked: n(2)?,
                    kyc_without_2fa: n(3)?,
                    low_recovery_codes: n(4)?,
                })
            })
        })?;
        Ok(found.unwrap_or_default())
    }

    fn contacts_page(
        &self,
        partner: &PartnerId,
        list: ContactList,
        after: Option<ContactId>,
        limit: usize,
    ) -> Result<Vec<(ContactId, ContactRecord)>, StoreError> {
        let sql = match list {
            ContactList::KycWithout2fa => CONTACTS_KYC_WITHOUT_2FA,
            ContactList::Locked => CONTACTS_LOCKED,
            ContactList::LowRecoveryCodes => CONTACTS_LOW_RECOVERY_CODES,
        };
        let a: &[u8] = after.as_ref().map_or(&[], |c| c.as_bytes().as_slice());
        let (p, limit) = (partner.as_bytes().as_slice(), to_sql_limit(limit));
        self.again_if_lost(|conn| all(conn, sql, &[&p, &a, &limit], |r| Ok((id(r, 0)?, contact_from_row_at(r, 1)?))))
    }

    fn webhook_answered(&self, partner: &PartnerId) -> Result<bool, StoreError> {
        let sql = "SELECT 1 FROM webhook_endpoints e JOIN webhook_attempts a ON a.endpoint_id = e.id \
                   WHERE e.partner_id = $1 AND a.status BETWEEN 200 AND 299 LIMIT 1";
        let p = partner.as_bytes().as_slice();
        Ok(self.again_if_lost(|conn| one(conn, sql, &[&p], |_| Ok(())))?.is_some())
    }

    fn team(&self, partner: &PartnerId) -> Result<TeamRecord, StoreError> {
        let p = partner.as_bytes().as_slice();
        self.again_if_lost(|c| select_team(c, p))
    }

    fn update_team(
        &self,
        partner: &PartnerId,
        f: &mut dyn FnMut(&mut TeamRecord, &mut Effects) -> bool,
    ) -> Result<bool, StoreError> {
        let p = partner.as_bytes().as_slice();
        self.write(|tx, ran| {
            // The partner's row lock serializes changes of its team.
            if one(tx, LOCK_PARTNER, &[&p], partner_from_row)?.is_none() {
                return Ok(Finish::Rollback(false));
            }
            let mut team = select_team(tx, p)?;
            let (write, effects) = run_with_effects(ran, f, &mut team);
            if !write && effects.is_empty() {
                return Ok(Finish::Rollback(true));
            }
            if write {
                write_team(tx, p, &team)?;
            }
            write_effects(tx, partner, &effects)?;
            Ok(Finish::Commit(true))
        })
    }

    fn member_by_email(&self, email: &str) -> Result<Option<MemberRecord>, StoreError> {
        let sql = concat!("SELECT ", member_columns!(), " FROM team_members WHERE email = $1");
        self.again_if_lost(|c| one(c, sql, &[&email], member_from_row))
    }

    fn invitation_by_token(&self, token_hash: &[u8; 32]) -> Result<Option<InvitationRecord>, StoreError> {
        let sql = concat!("SELECT ", invitation_columns!(), " FROM team_invitations WHERE token_hash = $1");
        self.again_if_lost(|c| one(c, sql, &[&token_hash.as_slice()], invitation_from_row))
    }

    fn insert_dashboard_session(&self, session: &DashboardSessionRecord) -> Result<(), StoreError> {
        write_dashboard_session(&mut *self.conn()?, session, true)
    }

    fn update_dashboard_session(
        &self,
        token_hash: &[u8; 32],
        f: &mut dyn FnMut(&mut DashboardSessionRecord) -> bool,
    ) -> Result<Option<DashboardSessionRecord>, StoreError> {
        const LOCK: &str = concat!(
            "SELECT ",
            dashboard_session_columns!(),
            " FROM dashboard_sessions WHERE token_hash = $1 FOR UPDATE"
        );
        self.write(|tx, ran| {
            let Some(mut record) = one(tx, LOCK, &[&token_hash.as_slice()], dashboard_session_from_row)? else {
                return Ok(Finish::Rollback(None));
            };
            if !run(ran, f, &mut record) {
                return Ok(Finish::Rollback(Some(record)));
            }
            write_dashboard_session(tx, &record, false)?;
            Ok(Finish::Commit(Some(record)))
        })
    }

    fn delete_dashboard_session(&self, token_hash: &[u8; 32]) -> Result<bool, StoreError> {
        let sql = "DELETE FROM dashboard_sessions WHERE token_hash = $1";
        Ok(self.conn()?.execute(sql, &[&token_hash.as_slice()])? > 0)
    }

    fn delete_dashboard_sessions_idle_since(&self, before: u64) -> Result<u64, StoreError> {
        let sql = "DELETE FROM dashboard_sessions WHERE last_seen_at < $1";
        Ok(self.conn()?.execute(sql, &[&to_sql_u64(before)])?)
    }

    fn audit_heads(&self) -> Result<Vec<(PartnerId, AuditHead)>, StoreError> {
        self.again_if_lost(|c| {
            all(c, "SELECT id, audit_seq, audit_head FROM partners ORDER BY id", &[], |r| {
                Ok((id(r, 0)?, AuditHead { seq: time(r, 1)?, hash: r.try_get(2)? }))
            })
        })
    }

    fn audit_counts(&self) -> Result<Vec<(String, u64)>, StoreError> {
        self.again_if_lost(|c| {
            all(c, "SELECT event, COUNT(*) FROM audit_events GROUP BY event ORDER BY event", &[], |r| {
                Ok((r.try_get(0)?, time(r, 1)?))
            })
        })
    }

    fn ping(&self) -> Result<(), StoreError> {
        self.again_if_lost(|conn| Ok(conn.client.batch_execute("SELECT 1")?))
    }

    fn kind(&self) -> &'static str {
        "postgres"
    }
}

/// Run against the PostgreSQL `RAMPART_TEST_DATABASE_URL` names (`make pg-test` starts one),
/// each test in schemas of its own; the store's behaviour itself is the conformance suite's
/// (core/tests). These cover what only this store has: migrations, several stores (servers) on
/// one database racing, dropping on an async thread, and what `Debug` and errors show.
#[cfg(all(test, feature = "postgres-tests"))]
mod tests {
    use std::sync::{Arc, Barrier};
    use std::thread;

    use super::*;
    use crate::store::sample_order;
    use crate::totp::{self, Secret};
    use crate::{Environment, KeyRing, ManualClock, Service};

    fn url() -> String {
        std::env::var("RAMPART_TEST_DATABASE_URL").unwrap_or_else(|_| {
            panic!(
                "RAMPART_TEST_DATABASE_URL is not set: `make pg-test` (scripts/with-postgres.sh) starts a PostgreSQL"
            )
        })
    }

    /// A new empty schema, and the configuration whose connections use it.
    fn schema() -> (Config, String) {
        let mut config: Config = url().parse().unwrap();
        let name = format!("t_{}", uuid::Uuid::new_v4().simple());
        config.connect(postgres::NoTls).unwrap().batch_execute(&format!("CREATE SCHEMA {name}")).unwrap();
        config.options(&format!("-c search_path={name}"));
        (config, name)
    }

    fn open(config: &Config) -> PostgresStore {
        PostgresStore::open_with(config.clone(), &PostgresOptions::default()).unwrap()
    }

    /// Run `n` threads released together; collect their results.
    fn together<T: Send>(n: usize, f: impl Fn(usize) -> T + Sync) -> Vec<T> {
        let barrier = Barrier::new(n);
        thread::scope(|s| {
            let handles: Vec<_> = (0..n)
                .map(|i| {
                    let (f, barrier) = (&f, &barrier);
                    s.spawn(move || {
                        barrier.wait();
                        f(i)
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        })
    }

    fn session(token_hash: [u8; 32]) -> SessionRecord {
        SessionRecord {
            token_hash,
            partner_id: PartnerId::random(),
            origin: "https://shop.example".into(),
            created_at: 1000,
            last_seen_at: 1000,
            email: None,
            contact_id: None,
            two_factor_at: None,
        }
    }

    #[test]
    fn migrations_are_recorded_once_with_their_checksums() {
        let (config, _) = schema();
        // Eight servers starting at once on an empty database: one migrates, the others wait.
        let stores = together(8, |_| open(&config));
        let mut client = config.connect(postgres::NoTls).unwrap();
        let rows = client.query("SELECT version, checksum FROM schema_migrations ORDER BY version", &[]).unwrap();
        assert_eq!(rows.len(), MIGRATIONS.len());
        for (i, row) in rows.iter().enumerate() {
            assert_eq!(row.get::<_, i32>(0), i32::try_from(i + 1).unwrap());
            assert_eq!(row.get::<_, Vec<u8>>(1), Sha256::digest(MIGRATIONS[i].as_bytes()).to_vec());
        }
        drop(stores);
        // Opening again runs nothing more.
        let store = open(&config);
        assert_eq!(store.count_partners().unwrap(), 0);
        let n: i64 = client.query_one("SELECT COUNT(*) FROM schema_migrations", &[]).unwrap().get(0);
        assert_eq!(n, i64::try_from(MIGRATIONS.len()).unwrap());
    }

    #[test]
    fn a_version_1_database_moves_the_operator_log_into_the_chains() {
        let (config, _) = schema();
        let (p, c) = (PartnerId::random(), ContactId::random());
        {
            let mut client = config.connect(postgres::NoTls).unwrap();
            client
                .batch_execute(&format!(
                    "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, checksum BYTEA NOT NULL, \
                     applied_at TIMESTAMPTZ NOT NULL DEFAULT now()); {}",
                    MIGRATIONS[0]
                ))
                .unwrap();
            let checksum = Sha256::digest(MIGRATIONS[0].as_bytes()).to_vec();
            client.execute("INSERT INTO schema_migrations (version, checksum) VALUES (1, $1)", &[&checksum]).unwrap();
            client
                .execute(
                    "INSERT INTO partners (id, name, environment, secret_key_hash, publishable_key, created_at) \
                     VALUES ($1, 'Acme', 'sandbox', $2, 'pk_sandbox_1', 7)",
                    &[&p.as_bytes().as_slice(), &[1u8; 32].as_slice()],
                )
                .unwrap();
            for (at, operator, action, contact) in
                [(100i64, "alice", "contact.mark_kyc", Some(c)), (101, "bob", "partner.rotate_keys", None)]
            {
                client
                    .execute(
                        "INSERT INTO audit_log (at, operator, action, partner_id, contact_id) VALUES ($1, $2, $3, $4, $5)",
                        &[&at, &operator, &action, &p.as_bytes().as_slice(), &contact.as_ref().map(|c| c.as_bytes().as_slice())],
                    )
                    .unwrap();
            }
        }
        let store = open(&config);
        let rows = store.audit_events(&p, None, 0, 10).unwrap();
        let shown: Vec<_> = rows
            .iter()
            .map(|r| (r.seq, r.at.as_str(), r.actor.as_str(), r.event.as_str(), r.contact_id.clone()))
            .collect();
        assert_eq!(
            shown,
            [
                (1, "1970-01-01T00:01:40.000Z", "operator:alice", "kyc.marked", Some(c.to_string())),
                (2, "1970-01-01T00:01:41.000Z", "operator:bob", "partner.keys_rotated", None),
            ]
        );
        let head = store.audit_heads().unwrap().into_iter().find(|(id, _)| *id == p).unwrap().1;
        let mut check = chain::ChainCheck::new();
        assert!(rows.iter().all(|r| check.push(r)));
        assert_eq!(check.finish(&head), Ok(2));
        let mut client = config.connect(postgres::NoTls).unwrap();
        let gone: i64 = client
            .query_one(
                "SELECT COUNT(*) FROM information_schema.tables WHERE table_name = 'audit_log' \
                        AND table_schema = current_schema()",
                &[],
            )
            .unwrap()
            .get(0);
        assert_eq!(gone, 0, "the operator log is gone");
    }

    #[test]
    fn a_newer_schema_and_a_changed_migration_are_refused() {
        let (config, _) = schema();
        drop(open(&config));
        let mut client = config.connect(postgres::NoTls).unwrap();
        let next = i32::try_from(MIGRATIONS.len() + 1).unwrap();
        client.execute("INSERT INTO schema_migrations (version, checksum) VALUES ($1, '\\x00')", &[&next]).unwrap();
        let err = PostgresStore::open_with(config.clone(), &PostgresOptions::default()).unwrap_err();
        assert!(matches!(err, StoreError::Corrupt("database schema is newer than this library")), "{err}");

        client.execute("DELETE FROM schema_migrations WHERE version = $1", &[&next]).unwrap();
        client.execute("UPDATE schema_migrations SET checksum = '\\x00' WHERE version = 1", &[]).unwrap();
        let err = PostgresStore::open_with(config.clone(), &PostgresOptions::default()).unwrap_err();
        assert!(matches!(err, StoreError::Corrupt(m) if m == MIGRATION_CHANGED[0]), "{err}");
        assert!(err.to_string().contains("version 1"), "{err}");
    }

    #[test]
    fn dropping_on_an_async_worker_thread_does_not_panic() {
        let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        runtime.block_on(async {
            // Created and used where blocking is allowed, as a server does...
            let store = tokio::task::spawn_blocking(|| {
                let (config, _) = schema();
                let store = open(&config);
                store.ping().unwrap();
                store.insert_session(&session([1; 32])).unwrap();
                store
            })
            .await
            .unwrap();
            // ...and dropped on a worker thread, holding an open connection.
            tokio::spawn(async move {
                assert!(store.pool.as_ref().unwrap().state().connections > 0);
                drop(store);
            })
            .await
            .unwrap();
        });
    }

    #[test]
    fn debug_and_errors_never_show_the_password() {
        let (mut config, _) = schema();
        config.password("hunter2-secret");
        let store = open(&config);
        let shown = format!("{store:?}");
        assert!(shown.contains(&describe(&config)) && !shown.contains("hunter2"), "{shown}");
        // A malformed URL: the parser's message could quote it.
        let err = PostgresStore::open("postgres://u:hunter2-secret@[::1/db?port=x").unwrap_err();
        assert!(!format!("{err} {err:?}").contains("hunter2"), "{err:?}");
        // Nothing listens: a prompt failure, naming no password.
        let mut closed: Config = "postgres://u:hunter2-secret@127.0.0.1:1/db".parse().unwrap();
        closed.connect_timeout(Duration::from_secs(1));
        let options = PostgresOptions { checkout_timeout: Duration::from_secs(1), ..PostgresOptions::default() };
        let started = std::time::Instant::now();
        let err = PostgresStore::open_with(closed, &options).unwrap_err();
        assert!(matches!(err, StoreError::Backend(_)) && !format!("{err} {err:?}").contains("hunter2"), "{err:?}");
        assert!(started.elapsed() < Duration::from_secs(10));
    }

    /// The test cluster's port, and a new schema there as a URL parameter (percent-encoded).
    fn port_and_schema() -> (u16, String) {
        let (config, name) = schema();
        (config.get_ports()[0], format!("options=-c%20search_path%3D{name}"))
    }

    fn cluster_env(name: &str) -> String {
        std::env::var(name)
            .unwrap_or_else(|_| panic!("{name} is not set: run `make pg-test` (scripts/with-postgres.sh)"))
    }

    /// Whether the store's connection is encrypted, as the server sees it.
    fn encrypted(store: &PostgresStore) -> bool {
        let sql = "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()";
        store.conn().unwrap().client.query_one(sql, &[]).unwrap().get(0)
    }

    fn quick() -> PostgresOptions {
        PostgresOptions { checkout_timeout: Duration::from_secs(1), ..PostgresOptions::default() }
    }

    #[test]
    fn tls_verifies_the_certificate_chain_and_host_name() {
        // The cluster's certificate is signed by a CA of the test's own, for localhost and
        // 127.0.0.1 only.
        let ca = cluster_env("RAMPART_TEST_PG_CA");
        let (port, schema) = port_and_schema();
        let url = |host: &str, params: &str| format!("postgres://postgres@{host}:{port}/postgres?{schema}{params}");

        // Not in the system's trust store: refused, whatever the sslmode short of disable.
        for params in ["", "&sslmode=prefer", "&sslmode=require", "&sslmode=verify-full"] {
            let err = PostgresStore::connect(&url("localhost", params), &quick()).unwrap_err();
            assert!(err.to_string().contains("invalid peer certificate: UnknownIssuer"), "{params}: {err}");
        }
        // With its CA: encrypted, by name or by address, and as libpq spells it.
        for (host, params) in [
            ("localhost", format!("&sslrootcert={ca}")),
            ("127.0.0.1", format!("&sslmode=verify-full&sslrootcert={ca}")),
        ] {
            let store = PostgresStore::connect(&url(host, &params), &quick()).unwrap();
            assert!(encrypted(&store), "{host}");
        }
        let options = PostgresOptions { root_certificates: Some(ca.clone().into()), ..quick() };
        assert!(encrypted(&PostgresStore::connect(&url("localhost", ""), &options).unwrap()));
        // The right chain for another name: refused.
        let err =
            PostgresStore::connect(&url("rampart.invalid", &format!("&hostaddr=127.0.0.1&sslrootcert={ca}")), &quick())
                .unwrap_err();
        assert!(
            err.to_string().contains("invalid peer certificate: certificate not valid for name \"rampart.invalid\""),
            "{err}"
        );
        // A chain without the name check is not offered.
        let err = PostgresStore::connect(&url("localhost", "&sslmode=verify-ca"), &quick()).unwrap_err();
        assert!(err.to_string().contains(": sslmode=verify-ca is not supported: use verify-full"), "{err}");
        // A CA file that is not one.
        let err = PostgresStore::connect(&url("localhost", "&sslrootcert=/nonexistent/ca.pem"), &quick()).unwrap_err();
        assert!(err.to_string().contains(": sslrootcert /nonexistent/ca.pem: "), "{err}");
    }

    #[test]
    fn plain_tcp_only_when_the_url_says_so_and_unix_sockets_need_no_tls() {
        use std::io::{Read, Write};
        // A server that declines TLS (answers 'N' to every SSLRequest) and records what else
        // it is sent: a client falling back to plain text would send its startup message.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let fake = listener.local_addr().unwrap().port();
        let recorder = thread::spawn(move || {
            listener.set_nonblocking(true).unwrap();
            let (mut requests, mut other) = (0, Vec::new());
            let deadline = std::time::Instant::now() + Duration::from_secs(3);
            while std::time::Instant::now() < deadline {
                let Ok((mut socket, _)) = listener.accept() else {
                    thread::sleep(Duration::from_millis(10));
                    continue;
                };
                socket.set_nonblocking(false).unwrap();
                socket.set_read_timeout(Some(Duration::from_millis(300))).unwrap();
                let mut request = [0u8; 8];
                if socket.read_exact(&mut request).is_ok() && request == [0, 0, 0, 8, 4, 210, 22, 47] {
                    requests += 1;
                    socket.write_all(b"N").unwrap();
                    let mut rest = Vec::new();
                    let _ = socket.read_to_end(&mut rest);
                    other.extend(rest);
                }
            }
            (requests, other)
        });
        let url = format!("postgres://postgres@127.0.0.1:{fake}/postgres");
        let err = PostgresStore::connect(&url, &quick()).unwrap_err();
        assert!(err.to_string().contains("server does not support TLS"), "{err}");
        let (requests, other) = recorder.join().unwrap();
        assert!(requests >= 1, "the client asked for TLS first");
        assert!(other.is_empty(), "nothing sent in plain text after the refusal: {other:?}");

        // Written into the URL: plain TCP.
        let (port, schema) = port_and_schema();
        let plain = format!("postgres://postgres@127.0.0.1:{port}/postgres?{schema}&sslmode=disable");
        assert!(!encrypted(&PostgresStore::connect(&plain, &quick()).unwrap()));
        // A Unix socket: no TLS needed, whatever the URL asks.
        let socket = cluster_env("RAMPART_TEST_PG_SOCKET");
        let local = format!("postgres://postgres@/postgres?host={socket}&port={port}&{schema}&sslmode=require");
        let store = PostgresStore::connect(&local, &quick()).unwrap();
        assert!(!encrypted(&store));
        assert_eq!(store.count_partners().unwrap(), 0);
    }

    #[test]
    fn an_unreachable_database_fails_the_open_or_each_call_as_asked() {
        let closed = "postgres://postgres@127.0.0.1:1/postgres?sslmode=disable";
        assert!(matches!(PostgresStore::connect(closed, &quick()), Err(StoreError::Backend(_))));
        let late = PostgresOptions { start_unreachable: true, ..quick() };
        let store = PostgresStore::connect(closed, &late).unwrap();
        assert!(matches!(store.ping(), Err(StoreError::Backend(_))));
        assert!(matches!(store.count_partners(), Err(StoreError::Backend(_))));
        assert!(!store.migrated.load(Ordering::Acquire));
        // Reachable: a newer schema is refused at open even so.
        let (config, _) = schema();
        drop(open(&config));
        let next = i32::try_from(MIGRATIONS.len() + 1).unwrap();
        let mut client = config.connect(postgres::NoTls).unwrap();
        client.execute("INSERT INTO schema_migrations (version, checksum) VALUES ($1, '\\x00')", &[&next]).unwrap();
        let err = PostgresStore::open_with(config, &late).unwrap_err();
        assert!(matches!(err, StoreError::Corrupt("database schema is newer than this library")), "{err}");
    }

    #[test]
    fn calls_after_the_database_ended_the_connections_succeed() {
        let (mut config, _) = schema();
        config.application_name("rampart_lost_test");
        let store =
            PostgresStore::open_with(config.clone(), &PostgresOptions { max_connections: 2, ..quick() }).unwrap();
        let (p, c) = (PartnerId::random(), ContactId::random());
        let mut bump = |r: &mut ContactRecord, _: &mut crate::store::Effects| {
            r.failures += 1;
            true
        };
        store.update_contact(&p, &c, &mut bump).unwrap();
        let mut admin = config.connect(postgres::NoTls).unwrap();
        for round in 1..=3 {
            let ended: i64 = admin
                .query_one(
                    "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity \
                     WHERE application_name = 'rampart_lost_test' AND pid <> pg_backend_pid()",
                    &[],
                )
                .unwrap()
                .get(0);
            assert!(ended >= 1, "round {round}");
            // The pooled connections are dead; reads and writes run again on fresh ones.
            assert_eq!(store.contact(&p, &c).unwrap().unwrap().failures, round);
            store.ping().unwrap();
            admin
                .query_one(
                    "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity \
                     WHERE application_name = 'rampart_lost_test' AND pid <> pg_backend_pid()",
                    &[],
                )
                .unwrap();
            store.update_contact(&p, &c, &mut bump).unwrap();
        }
        assert_eq!(store.contact(&p, &c).unwrap().unwrap().failures, 4);
    }

    #[test]
    fn every_connection_carries_the_timeouts() {
        let (config, _) = schema();
        let options = PostgresOptions { max_connections: 0, ..PostgresOptions::default() };
        let store = PostgresStore::open_with(config.clone(), &options).unwrap();
        assert_eq!(store.options().max_connections, 1);
        let mut conn = store.conn().unwrap();
        for (setting, value) in
            [("lock_timeout", "1s"), ("statement_timeout", "5s"), ("idle_in_transaction_session_timeout", "10s")]
        {
            let shown: String = conn.client.query_one(&format!("SHOW {setting}"), &[]).unwrap().get(0);
            assert_eq!(shown, value, "{setting}");
        }
        let name: String = conn.client.query_one("SHOW application_name", &[]).unwrap().get(0);
        assert_eq!(name, "rampart");
        // A row another transaction holds: the wait ends after the lock timeout, as an error.
        let s = session([3; 32]);
        drop(conn);
        store.insert_session(&s).unwrap();
        let mut other = config.connect(postgres::NoTls).unwrap();
        let mut holder = other.transaction().unwrap();
        holder.execute("SELECT 1 FROM widget_sessions FOR UPDATE", &[]).unwrap();
        let started = std::time::Instant::now();
        let err = store.update_session(&s.token_hash, &mut |_| unreachable!()).unwrap_err();
        assert!(matches!(&err, StoreError::Backend(_)), "{err:?}");
        assert!(started.elapsed() >= Duration::from_secs(1) && started.elapsed() < Duration::from_secs(4));
        holder.rollback().unwrap();
        assert!(store.update_session(&s.token_hash, &mut |_| false).unwrap().is_some());
    }

    #[test]
    fn undecodable_rows_are_corrupt() {
        let (config, _) = schema();
        let store = open(&config);
        let mut client = config.connect(postgres::NoTls).unwrap();
        let o = sample_order(PartnerId::random());
        store.insert_order(&o, &Effects::default()).unwrap();
        // The CHECK constraint keeps such a row out; a database written by other means may hold one.
        client.batch_execute("ALTER TABLE widget_orders DROP CONSTRAINT widget_orders_status_check").unwrap();
        client.execute("UPDATE widget_orders SET status = 'refunded'", &[]).unwrap();
        let corrupt = |r: Result<(), StoreError>, what: &str| matches!(r, Err(StoreError::Corrupt(m)) if m == what);
        assert!(corrupt(store.order(&o.partner_id, &o.id).map(drop), "unknown order status"));
        assert!(corrupt(
            store.orders_for_contact(&o.partner_id, &o.contact_id, None, 10).map(drop),
            "unknown order status"
        ));
        assert!(corrupt(
            store.update_order(&o.partner_id, &o.id, &mut |_, _| unreachable!()).map(drop),
            "unknown order status"
        ));

        let s = session([2; 32]);
        store.insert_session(&s).unwrap();
        client.execute("UPDATE widget_sessions SET partner_id = '\\x0102'", &[]).unwrap();
        assert!(corrupt(
            store.update_session(&s.token_hash, &mut |_| unreachable!()).map(drop),
            "stored id is not 16 bytes"
        ));

        let (p, c) = (PartnerId::random(), ContactId::random());
        store
            .update_contact(&p, &c, &mut |r, _| {
                r.failures = 1;
                true
            })
            .unwrap();
        client.execute("UPDATE contacts SET failures = -1", &[]).unwrap();
        assert!(corrupt(store.contact(&p, &c).map(drop), "stored count is out of range"));
        client.execute("UPDATE contacts SET failures = 0, last_step = -5", &[]).unwrap();
        assert!(corrupt(store.contact(&p, &c).map(drop), "stored time is negative"));
    }

    #[test]
    fn absent_records_race_into_one_row_and_count_every_write() {
        // Two stores on one schema, as two servers: 16 threads write a contact and a sign-in
        // that do not exist yet (each first inserts the default row: the insert race), 10 times
        // each. Every write sees the one before; none is lost.
        let (config, _) = schema();
        let stores = [open(&config), open(&config)];
        let (partner, contact, email) = (PartnerId::random(), ContactId::random(), "race@example.com");
        let untouched = ContactId::random();
        together(16, |i| {
            let store = &stores[i % 2];
            for _ in 0..10 {
                store
                    .update_contact(&partner, &contact, &mut |r, _| {
                        r.failures += 1;
                        true
                    })
                    .unwrap();
                store
                    .update_sign_in(&partner, email, &mut |r| {
                        r.tries += 1;
                        true
                    })
                    .unwrap();
                // Read, not written: leaves no row behind, even while others wait on it.
                store.update_contact(&partner, &untouched, &mut |_, _| false).unwrap();
            }
        });
        assert_eq!(stores[1].contact(&partner, &contact).unwrap().unwrap().failures, 160);
        let mut tries = 0;
        stores[0]
            .update_sign_in(&partner, email, &mut |r| {
                tries = r.tries;
                false
            })
            .unwrap();
        assert_eq!(tries, 160);
        assert_eq!(stores[0].contact(&partner, &untouched).unwrap(), None);
    }

    #[test]
    fn concurrent_session_updates_lose_nothing_across_stores() {
        let (config, _) = schema();
        let stores = [open(&config), open(&config)];
        let s = session([7; 32]);
        stores[0].insert_session(&s).unwrap();
        let seen = together(16, |i| {
            (0..25)
                .map(|_| {
                    let after = stores[i % 2].update_session(&s.token_hash, &mut |r| {
                        r.last_seen_at += 1;
                        true
                    });
                    after.unwrap().unwrap().last_seen_at
                })
                .collect::<Vec<u64>>()
        });
        let mut all: Vec<u64> = seen.into_iter().flatten().collect();
        all.sort_unstable();
        assert_eq!(all, (1001..=1400).collect::<Vec<u64>>(), "each update saw every earlier one");
    }

    #[test]
    fn first_sign_ins_of_one_email_get_one_contact_id_across_stores() {
        let (config, _) = schema();
        let stores = [open(&config), open(&config)];
        let partner = PartnerId::random();
        for round in 0..20 {
            let email = format!("user{round}@example.com");
            let candidates: Vec<ContactId> = (0..16).map(|_| ContactId::random()).collect();
            let got = together(16, |i| stores[i % 2].contact_for_email(&partner, &email, candidates[i]).unwrap());
            assert!(candidates.contains(&got[0]), "round {round}");
            assert!(got.iter().all(|id| *id == got[0]), "round {round}: {got:?}");
            assert_eq!(stores[1].contact_by_email(&partner, &email).unwrap(), Some(got[0]));
        }
    }

    #[test]
    fn one_code_is_accepted_once_across_servers() {
        // Two services (two servers) on one database, 16 threads with the same code each step:
        // exactly one is accepted, and replays are not failures.
        let (config, _) = schema();
        let clock = Arc::new(ManualClock::new(56_666_666 * 30));
        let service = |store| {
            Service::builder(store).master_keys(KeyRing::new(1, &[42; 32])).clock(clock.clone()).build().unwrap()
        };
        let servers = [service(open(&config)), service(open(&config))];
        let partner = servers[0].create_partner("Acme", Environment::Sandbox).unwrap().partner_id;
        let contact = ContactId::random();
        let setup = servers[1].create_2fa(&partner, &contact, None).unwrap();
        let secret = Secret::from_base32(&setup.manual).unwrap();
        let now = || crate::Clock::now(&*clock);
        servers[0].enable_2fa(&partner, &contact, totp::code_at(&secret, now()).as_str()).unwrap();
        for round in 0..20 {
            clock.advance(30);
            let code = totp::code_at(&secret, now());
            let results = together(16, |i| servers[i % 2].verify_2fa(&partner, &contact, code.as_str()).unwrap());
            assert_eq!(results.iter().filter(|v| v.is_accepted()).count(), 1, "round {round}");
            let record = servers[0].store().contact(&partner, &contact).unwrap().unwrap();
            assert_eq!(record.failures, 0, "round {round}: replays do not count");
        }
    }
}
