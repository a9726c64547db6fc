//! The embedded SQLite store (the default).
//!
//! - One file, created mode 0600 before SQLite opens it (the `-wal` and `-shm` files inherit
//!   the database file's mode).
//! - WAL journal, `synchronous = NORMAL`, a 5 s busy timeout, `secure_delete` so erased
//!   ciphertexts do not linger in free pages.
//! - Versioned migrations in `PRAGMA user_version`.
//! - Writes go through one connection behind a mutex and run as `BEGIN IMMEDIATE`
//!   transactions, so each update is atomic across threads and, through SQLite's own locks,
//!   across processes. Reads use a bounded pool of connections that WAL lets run beside a
//!   writer; when every reader is busy, a read waits for one rather than opening another.
//! - Tunable through [`SqliteOptions`]: the reader count, the memory map and the page cache.

use std::path::{Path, PathBuf};
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, OptionalExtension, Row, TransactionBehavior, params};

use super::{
    AttemptRecord, AuditHead, AuditRow, ClaimedDelivery, ContactCounts, ContactList, ContactRecord,
    DashboardSessionRecord, DeliveryNext, DeliveryRecord, Effects, InvitationRecord, MemberRecord, OrderFilter,
    OrderRecord, OrderStatus, PartnerRecord, PreviousKey, RecoveryCodeSet, SealedSample, SessionRecord, SignInRecord,
    Store, StoreError, TeamRecord, WebhookEndpointRecord, WebhookEvent,
};
use crate::chain;
use crate::ids::{ContactId, OrderId, PartnerId};
use crate::vocab::Field;
use crate::vocab::{Environment, Role, SessionStage};

const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

/// How an [`SqliteStore`] uses memory and connections. The defaults suit a library inside a
/// partner's process; a server that wants a small resident set lowers `mmap_bytes`.
///
/// ```
/// use rampart_core::store::{SqliteOptions, SqliteStore};
/// # let dir = tempfile::tempdir()?;
/// let options = SqliteOptions { max_readers: 4, mmap_bytes: 0, ..SqliteOptions::default() };
/// let store = SqliteStore::open_with(dir.path().join("rampart.db"), &options)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SqliteOptions {
    /// Most read connections open at once (at least 1); reads beyond it wait. Default 8.
    pub max_readers: usize,
    /// Bytes of the file each connection memory-maps (`PRAGMA mmap_size`); 0 turns it off.
    /// Mapped pages are the OS page cache's and save a copy per page read, but they count in
    /// the process's resident set once per connection that touched them. Default 256 MiB.
    pub mmap_bytes: u64,
    /// Private page cache per connection in KiB (`PRAGMA cache_size`). Default 2048.
    pub cache_kib: u32,
    /// Write-ahead log size, in pages, at which a commit checkpoints it into the database
    /// file (`PRAGMA wal_autocheckpoint`). A checkpoint flushes the file to disk, which stalls
    /// writes; a larger log means fewer, slightly longer stalls. Default 1000 (SQLite's).
    pub checkpoint_pages: u32,
}

impl Default for SqliteOptions {
    fn default() -> Self {
        Self { max_readers: 8, mmap_bytes: 256 << 20, cache_kib: 2048, checkpoint_pages: 1000 }
    }
}

#[derive(Debug, Default)]
struct Readers {
    idle: Vec<Connection>,
    open: usize,
}

/// Each entry moves the schema from version `i` to `i + 1`. Never edit a shipped entry.
const MIGRATIONS: &[&str] = &[
    // 1: partners, contacts, audit log.
    "CREATE TABLE partners (
        id BLOB PRIMARY KEY NOT NULL,
        name TEXT NOT NULL,
        environment TEXT NOT NULL CHECK (environment IN ('sandbox', 'production')),
        secret_key_hash BLOB NOT NULL UNIQUE,
        publishable_key TEXT NOT NULL UNIQUE,
        widget_text TEXT,
        widget_button_url TEXT,
        two_factor_waived INTEGER NOT NULL DEFAULT 0,
        created_at INTEGER NOT NULL
    ) WITHOUT ROWID;
    CREATE TABLE contacts (
        partner_id BLOB NOT NULL,
        contact_id BLOB NOT NULL,
        kyc_passed INTEGER NOT NULL DEFAULT 0,
        enabled INTEGER NOT NULL DEFAULT 0,
        secret BLOB,
        pending BLOB,
        pending_created_at INTEGER,
        last_step INTEGER,
        failures INTEGER NOT NULL DEFAULT 0,
        last_failure_at INTEGER,
        PRIMARY KEY (partner_id, contact_id)
    ) WITHOUT ROWID;
    CREATE INDEX contacts_kyc_without_2fa ON contacts (partner_id, contact_id)
        WHERE kyc_passed = 1 AND enabled = 0;
    CREATE TABLE audit_log (
        id INTEGER PRIMARY KEY,
        at INTEGER NOT NULL,
        operator TEXT NOT NULL,
        action TEXT NOT NULL,
        partner_id BLOB NOT NULL,
        contact_id BLOB
    );",
    // 2: who may embed the widget (SPEC section 6.2).
    "ALTER TABLE partners ADD COLUMN widget_origins TEXT NOT NULL DEFAULT '[]';
    ALTER TABLE partners ADD COLUMN widget_approved INTEGER NOT NULL DEFAULT 0;",
    // 3: the widget's sessions, email sign-ins, email-to-contact map and orders.
    "CREATE TABLE widget_sessions (
        token_hash BLOB PRIMARY KEY NOT NULL,
        partner_id BLOB NOT NULL,
        origin TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        last_seen_at INTEGER NOT NULL,
        email TEXT,
        contact_id BLOB,
        two_factor_at INTEGER
    ) WITHOUT ROWID;
    CREATE INDEX widget_sessions_last_seen ON widget_sessions (last_seen_at);
    CREATE TABLE widget_sign_ins (
        partner_id BLOB NOT NULL,
        email TEXT NOT NULL,
        sent_at TEXT NOT NULL DEFAULT '[]',
        code_hash BLOB,
        expires_at INTEGER NOT NULL DEFAULT 0,
        tries INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (partner_id, email)
    ) WITHOUT ROWID;
    CREATE TABLE widget_emails (
        partner_id BLOB NOT NULL,
        email TEXT NOT NULL,
        contact_id BLOB NOT NULL,
        PRIMARY KEY (partner_id, email)
    ) WITHOUT ROWID;
    CREATE TABLE widget_orders (
        id BLOB PRIMARY KEY NOT NULL,
        partner_id BLOB NOT NULL,
        contact_id BLOB NOT NULL,
        coin TEXT NOT NULL,
        amount TEXT NOT NULL,
        currency TEXT NOT NULL,
        address TEXT NOT NULL,
        price TEXT NOT NULL,
        quantity TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('created', 'completed', 'failed')),
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL
    ) WITHOUT ROWID;
    CREATE INDEX widget_orders_by_contact ON widget_orders (partner_id, contact_id, created_at DESC, id DESC);",
    // 4: the audit trail, one hash chain per partner with its head kept with the partner (SPEC
    // 9.1); the operator log's rows move into the chains (`chain_operator_log`), then it goes.
    "CREATE TABLE audit_events (
        partner_id BLOB NOT NULL,
        seq INTEGER NOT NULL,
        id TEXT NOT NULL,
        at TEXT NOT NULL,
        contact_id BLOB,
        actor TEXT NOT NULL,
        event TEXT NOT NULL,
        details TEXT NOT NULL,
        prev TEXT NOT NULL,
        hash TEXT NOT NULL,
        PRIMARY KEY (partner_id, seq)
    ) WITHOUT ROWID;
    CREATE INDEX audit_events_by_contact ON audit_events (partner_id, contact_id, seq);
    ALTER TABLE partners ADD COLUMN audit_seq INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE partners ADD COLUMN audit_head TEXT NOT NULL
        DEFAULT '0000000000000000000000000000000000000000000000000000000000000000';",
    // 5: recovery codes (hashes only), their own throttle, the purchase hold (SPEC section 8).
    "ALTER TABLE contacts ADD COLUMN recovery_codes BLOB;
    ALTER TABLE contacts ADD COLUMN recovery_failures INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE contacts ADD COLUMN recovery_last_failure_at INTEGER;
    ALTER TABLE contacts ADD COLUMN hold_until INTEGER;",
    // 6: webhook endpoints (SPEC section 10), their secrets sealed; the outbox: each message once,
    // and its delivery to each endpoint.
    "CREATE TABLE webhook_endpoints (
        id BLOB PRIMARY KEY NOT NULL,
        partner_id BLOB NOT NULL,
        url TEXT NOT NULL,
        events TEXT NOT NULL,
        enabled INTEGER NOT NULL,
        secret BLOB NOT NULL,
        previous_secret BLOB,
        previous_until INTEGER,
        created_at INTEGER NOT NULL,
        failing_since INTEGER
    ) WITHOUT ROWID;
    CREATE INDEX webhook_endpoints_by_partner ON webhook_endpoints (partner_id, created_at, id);
    CREATE TABLE webhook_messages (
        id TEXT NOT NULL UNIQUE,
        partner_id BLOB NOT NULL,
        event TEXT NOT NULL,
        body TEXT NOT NULL,
        created_at INTEGER NOT NULL
    );
    CREATE TABLE webhook_deliveries (
        message_id TEXT NOT NULL,
        endpoint_id BLOB NOT NULL,
        partner_id BLOB NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        next_at INTEGER NOT NULL,
        lease_until INTEGER,
        state TEXT NOT NULL CHECK (state IN ('pending', 'delivered', 'failed')),
        PRIMARY KEY (message_id, endpoint_id)
    ) WITHOUT ROWID;
    CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_at) WHERE state = 'pending';
    CREATE TABLE webhook_attempts (
        endpoint_id BLOB NOT NULL,
        at_ms INTEGER NOT NULL,
        message_id TEXT NOT NULL,
        attempt INTEGER NOT NULL,
        event TEXT NOT NULL,
        status INTEGER,
        error TEXT,
        latency_ms INTEGER NOT NULL,
        PRIMARY KEY (endpoint_id, at_ms, message_id, attempt)
    ) WITHOUT ROWID;",
    // 7: the partner dashboard (SPEC 11): a rolled secret key's overlap and the keys' last 4
    // characters; team members (their 2FA is a contacts row marked `member`), invitations
    // (token hashes only) and dashboard sessions (token hashes only).
    "ALTER TABLE partners ADD COLUMN secret_key_last4 TEXT;
    ALTER TABLE partners ADD COLUMN previous_secret_key_hash BLOB;
    ALTER TABLE partners ADD COLUMN previous_key_last4 TEXT;
    ALTER TABLE partners ADD COLUMN previous_key_expires_at INTEGER;
    CREATE UNIQUE INDEX partners_previous_secret_key ON partners (previous_secret_key_hash)
        WHERE previous_secret_key_hash IS NOT NULL;
    ALTER TABLE contacts ADD COLUMN member INTEGER NOT NULL DEFAULT 0;
    CREATE TABLE team_members (
        id BLOB PRIMARY KEY NOT NULL,
        partner_id BLOB NOT NULL,
        email TEXT NOT NULL UNIQUE,
        role TEXT NOT NULL CHECK (role IN ('owner', 'developer', 'viewer')),
        password_hash TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        failures INTEGER NOT NULL DEFAULT 0,
        last_failure_at INTEGER
    ) WITHOUT ROWID;
    CREATE INDEX team_members_by_partner ON team_members (partner_id, created_at, id);
    CREATE TABLE team_invitations (
        id BLOB PRIMARY KEY NOT NULL,
        token_hash BLOB NOT NULL UNIQUE,
        partner_id BLOB NOT NULL,
        email TEXT NOT NULL,
        role TEXT NOT NULL CHECK (role IN ('owner', 'developer', 'viewer')),
        invited_by TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL
    ) WITHOUT ROWID;
    CREATE INDEX team_invitations_by_partner ON team_invitations (partner_id, created_at, id);
    CREATE TABLE dashboard_sessions (
        token_hash BLOB PRIMARY KEY NOT NULL,
        partner_id BLOB NOT NULL,
        member_id BLOB NOT NULL,
        stage TEXT NOT NULL CHECK (stage IN ('password', 'setup', 'signed_in')),
        created_at INTEGER NOT NULL,
        last_seen_at INTEGER NOT NULL
    ) WITHOUT ROWID;
    CREATE INDEX dashboard_sessions_by_partner ON dashboard_sessions (partner_id, member_id);
    CREATE INDEX dashboard_sessions_last_seen ON dashboard_sessions (last_seen_at);",
    // 8: the dashboard's lists (SPEC 11): a partner's orders newest first, and its contacts
    // locked or with few recovery codes left (kept beside the set, filled in for the sets there
    // are by the migration's second half).
    "ALTER TABLE contacts ADD COLUMN recovery_remaining INTEGER;
    CREATE INDEX widget_orders_by_partner ON widget_orders (partner_id, created_at DESC, id DESC);
    CREATE INDEX contacts_locked ON contacts (partner_id, contact_id) WHERE failures >= 100 AND member = 0;
    CREATE INDEX contacts_low_recovery_codes ON contacts (partner_id, contact_id)
        WHERE enabled = 1 AND recovery_remaining <= 3 AND member = 0;",
    // 9: the webhook outbox a change appends its messages to: a rowid table and nothing else, so
    // a message costs the change one appended row (SQLite splits the last leaf of a rowid table
    // cheaply, and of an index or `WITHOUT ROWID` table by rebalancing its siblings). The
    // delivery worker files them into `webhook_messages` and `webhook_deliveries`
    // (`drain_outbox`). `endpoints`: the receiving endpoints' 16-byte ids, concatenated.
    "CREATE TABLE webhook_outbox (
        seq INTEGER PRIMARY KEY,
        id TEXT NOT NULL,
        partner_id BLOB NOT NULL,
        event TEXT NOT NULL,
        body TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        endpoints BLOB NOT NULL
    );",
];

/// The schema version that adds `contacts.recovery_remaining`, filled in from the stored sets.
const RECOVERY_REMAINING_VERSION: usize = 8;

/// The schema version whose migration moves the operator log into the audit chains.
const AUDIT_CHAIN_VERSION: usize = 4;

/// A stored value that does not decode, raised inside a row mapping as the source of a
/// `FromSqlConversionFailure`; it surfaces as [`StoreError::Corrupt`].
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct CorruptValue(&'static str);

fn corrupt(idx: usize, what: &'static str) -> rusqlite::Error {
    rusqlite::Error::FromSqlConversionFailure(idx, rusqlite::types::Type::Text, Box::new(CorruptValue(what)))
}

impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> Self {
        if let rusqlite::Error::FromSqlConversionFailure(_, _, source) = &e
            && let Some(CorruptValue(what)) = source.downcast_ref::<CorruptValue>()
        {
            return Self::Corrupt(what);
        }
        Self::Backend(Box::new(e))
    }
}

/// A [`Store`] on an SQLite database file.
#[derive(Debug)]
pub struct SqliteStore {
    path: PathBuf,
    options: SqliteOptions,
    writer: Mutex<Connection>,
    readers: Mutex<Readers>,
    reader_returned: Condvar,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

fn to_sql_u64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

fn from_sql_u64(v: i64) -> rusqlite::Result<u64> {
    u64::try_from(v).map_err(|_| rusqlite::Error::IntegralValueOutOfRange(0, v))
}

fn uuid_col<T: From<uuid::Uuid>>(row: &Row<'_>, idx: usize) -> rusqlite::Result<T> {
    let bytes: [u8; 16] = row.get(idx)?;
    Ok(T::from(uuid::Uuid::from_bytes(bytes)))
}

fn opt_uuid_col<T: From<uuid::Uuid>>(row: &Row<'_>, idx: usize) -> rusqlite::Result<Option<T>> {
    Ok(row.get::<_, Option<[u8; 16]>>(idx)?.map(|bytes| T::from(uuid::Uuid::from_bytes(bytes))))
}

fn opt_u64_col(row: &Row<'_>, idx: usize) -> rusqlite::Result<Option<u64>> {
    row.get::<_, Option<i64>>(idx)?.map(from_sql_u64).transpose()
}

impl SqliteStore {
    /// Open (creating if needed, mode 0600) and migrate the database at `path`, with the
    /// default [`SqliteOptions`].
    pub fn open(path: impl AsRef<Path>) -> Result<Self, StoreError> {
        Self::open_with(path, &SqliteOptions::default())
    }

    /// [`open`](Self::open) with explicit options.
    pub fn open_with(path: impl AsRef<Path>, options: &SqliteOptions) -> Result<Self, StoreError> {
        let path = path.as_ref().to_path_buf();
        let options = SqliteOptions { max_readers: options.max_readers.max(1), ..options.clone() };
        crate::fsutil::touch_private(&path).map_err(|e| StoreError::Backend(Box::new(e)))?;
        let mut writer = Self::connect(&path, &options)?;
        writer.pragma_update_and_check(None, "journal_mode", "WAL", |r| r.get::<_, String>(0))?;
        Self::migrate(&mut writer)?;
        writer.pragma_update(None, "wal_autocheckpoint", options.checkpoint_pages)?;
        Ok(Self {
            path,
            options,
            writer: Mutex::new(writer),
            readers: Mutex::new(Readers::default()),
            reader_returned: Condvar::new(),
        })
    }

    /// The options the store was opened with.
    pub fn options(&self) -> &SqliteOptions {
        &self.options
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn connect(path: &Path, options: &SqliteOptions) -> Result<Connection, StoreError> {
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(path, flags)?;
        conn.busy_timeout(BUSY_TIMEOUT)?;
        conn.pragma_update(None, "synchronous", "NORMAL")?;
        conn.pragma_update(None, "secure_delete", "ON")?;
        // Random reads over a large file through a memory map avoid a pread per page; the
        // pages are the OS page cache's, shared by every connection.
        conn.pragma_update(None, "mmap_size", to_sql_u64(options.mmap_bytes))?;
        conn.pragma_update(None, "cache_size", -i64::from(options.cache_kib))?;
        conn.set_prepared_statement_cache_capacity(32);
        Ok(conn)
    }

    fn migrate(conn: &mut Connection) -> Result<(), StoreError> {
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let version: usize = tx.pragma_query_value(None, "user_version", |r| r.get(0))?;
        if version > MIGRATIONS.len() {
            return Err(StoreError::Corrupt("database schema is newer than this library"));
        }
        for (i, sql) in MIGRATIONS.iter().enumerate().skip(version) {
            tx.execute_batch(sql)?;
            if i + 1 == AUDIT_CHAIN_VERSION {
                chain_operator_log(&tx)?;
            }
            if i + 1 == RECOVERY_REMAINING_VERSION {
                fill_recovery_remaining(&tx)?;
            }
            tx.pragma_update(None, "user_version", i + 1)?;
        }
        tx.commit()?;
        Ok(())
    }

    /// Run `f` on a read connection from the pool.
    fn read<T>(&self, f: impl FnOnce(&Connection) -> rusqlite::Result<T>) -> Result<T, StoreError> {
        let lease = Lease { store: self, conn: Some(self.checkout()?) };
        Ok(f(lease.conn.as_ref().expect("a lease holds its connection until dropped"))?)
    }

    /// An idle read connection, a new one while fewer than `max_readers` are open, or else
    /// the next one returned. The pool's lock is never held while a connection is in use.
    fn checkout(&self) -> Result<Connection, StoreError> {
        let mut readers = lock(&self.readers);
        loop {
            if let Some(conn) = readers.idle.pop() {
                return Ok(conn);
            }
            if readers.open < self.options.max_readers {
                readers.open += 1;
                drop(readers);
                return Self::connect(&self.path, &self.options).inspect_err(|_| {
                    lock(&self.readers).open -= 1;
                    self.reader_returned.notify_one();
                });
            }
            readers = self.reader_returned.wait(readers).unwrap_or_else(PoisonError::into_inner);
        }
    }

    fn write<T>(&self, f: impl FnOnce(&rusqlite::Transaction<'_>) -> Result<T, StoreError>) -> Result<T, StoreError> {
        let mut conn = lock(&self.writer);
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let out = f(&tx)?;
        tx.commit()?;
        Ok(out)
    }
}

/// Migration 4's second half: the operator log's rows (oldest first) become the first rows of
/// their partners' chains, then the log table goes.
/// Migration 8's second half: each stored set's count of unused codes.
fn fill_recovery_remaining(tx: &rusqlite::Transaction<'_>) -> Result<(), StoreError> {
    let sets: Vec<(Vec<u8>, Vec<u8>, Vec<u8>)> = tx
        .prepare("SELECT partner_id, contact_id, recovery_codes FROM contacts WHERE recovery_codes IS NOT NULL")?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<rusqlite::Result<_>>()?;
    let mut update =
        tx.prepare("UPDATE contacts SET recovery_remaining = ?3 WHERE partner_id = ?1 AND contact_id = ?2")?;
    for (partner, contact, set) in sets {
        let remaining = RecoveryCodeSet::from_bytes(&set)?.remaining();
        update.execute(params![partner, contact, remaining])?;
    }
    Ok(())
}

fn chain_operator_log(tx: &rusqlite::Transaction<'_>) -> Result<(), StoreError> {
    let legacy: Vec<chain::LegacyEntry> = tx
        .prepare("SELECT partner_id, contact_id, at, operator, action FROM audit_log ORDER BY id")?
        .query_map([], |r| {
            Ok(chain::LegacyEntry {
                partner_id: uuid_col(r, 0)?,
                contact_id: opt_uuid_col(r, 1)?,
                at_secs: from_sql_u64(r.get(2)?)?,
                operator: r.get(3)?,
                action: r.get(4)?,
            })
        })?
        .collect::<rusqlite::Result<_>>()?;
    for (partner, drafts) in chain::legacy_drafts(legacy) {
        write_audit(tx, &partner, &drafts)?;
    }
    tx.execute_batch("DROP TABLE audit_log;")?;
    Ok(())
}

/// Chain `drafts` onto `partner`'s trail inside `tx`: read the head, insert the linked rows,
/// move the head. Any failure is [`StoreError::Audit`], and the caller's transaction rolls back.
fn write_audit(
    tx: &rusqlite::Transaction<'_>,
    partner: &PartnerId,
    drafts: &[chain::AuditDraft],
) -> Result<(), StoreError> {
    if drafts.is_empty() {
        return Ok(());
    }
    let run =
        || -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
            let head = tx
                .prepare_cached("SELECT audit_seq, audit_head FROM partners WHERE id = ?1")?
                .query_row([partner.as_bytes()], |r| Ok(AuditHead { seq: from_sql_u64(r.get(0)?)?, hash: r.get(1)? }))
                .optional()?
                .ok_or("no such partner")?;
            let (rows, head) = chain::link(partner, &head, drafts);
            let mut insert = tx.prepare_cached(
                "INSERT INTO audit_events (partner_id, seq, id, at, contact_id, actor, event, details, prev, hash) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            )?;
            for (row, draft) in rows.iter().zip(drafts) {
                insert.execute(params![
                    partner.as_bytes(),
                    to_sql_u64(row.seq),
                    row.id,
                    row.at,
                    draft.contact_id.as_ref().map(ContactId::as_bytes),
                    row.actor,
                    row.event,
                    row.details.to_string(),
                    row.prev,
                    row.hash,
                ])?;
            }
            tx.prepare_cached("UPDATE partners SET audit_seq = ?2, audit_head = ?3 WHERE id = ?1")?
                .execute(params![partner.as_bytes(), to_sql_u64(head.seq), head.hash])?;
            Ok(())
        };
    run().map_err(StoreError::Audit)
}

/// Audit row columns, in [`audit_row_from_row`]'s order.
macro_rules! audit_columns {
    () => {
        "partner_id, seq, id, at, contact_id, actor, event, details, prev, hash"
    };
}

fn audit_row_from_row(row: &Row<'_>) -> rusqlite::Result<AuditRow> {
    let details: String = row.get(7)?;
    Ok(AuditRow {
        partner_id: uuid_col::<PartnerId>(row, 0)?.to_string(),
        seq: from_sql_u64(row.get(1)?)?,
        id: row.get(2)?,
        at: row.get(3)?,
        contact_id: opt_uuid_col::<ContactId>(row, 4)?.map(|c| c.to_string()),
        actor: row.get(5)?,
        event: row.get(6)?,
        // A row whose details are not JSON still verifies as broken, not as unreadable.
        details: serde_json::from_str(&details).unwrap_or(serde_json::Value::String(details)),
        prev: row.get(8)?,
        hash: row.get(9)?,
    })
}

/// A read connection out of the pool; dropping it (even while unwinding) gives it back.
struct Lease<'a> {
    store: &'a SqliteStore,
    conn: Option<Connection>,
}

impl Drop for Lease<'_> {
    fn drop(&mut self) {
        if let Some(conn) = self.conn.take() {
            lock(&self.store.readers).idle.push(conn);
            self.store.reader_returned.notify_one();
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

fn partner_from_row(row: &Row<'_>) -> rusqlite::Result<PartnerRecord> {
    let env: String = row.get(2)?;
    let environment = env.parse::<Environment>().map_err(|_| {
        rusqlite::Error::FromSqlConversionFailure(2, rusqlite::types::Type::Text, "unknown environment".into())
    })?;
    Ok(PartnerRecord {
        id: uuid_col(row, 0)?,
        name: row.get(1)?,
        environment,
        secret_key_hash: row.get(3)?,
        publishable_key: row.get(4)?,
        widget_text: row.get(5)?,
        widget_button_url: row.get(6)?,
        two_factor_waived: row.get(7)?,
        created_at: from_sql_u64(row.get(8)?)?,
        widget_origins: serde_json::from_str(&row.get::<_, String>(9)?)
            .map_err(|e| rusqlite::Error::FromSqlConversionFailure(9, rusqlite::types::Type::Text, Box::new(e)))?,
        widget_approved: row.get(10)?,
        secret_key_last4: row.get(11)?,
        previous_key: match (row.get::<_, Option<[u8; 32]>>(12)?, row.get::<_, Option<i64>>(14)?) {
            (Some(hash), Some(expires_at)) => {
                Some(PreviousKey { hash, last4: row.get(13)?, expires_at: from_sql_u64(expires_at)? })
            }
            _ => None,
        },
    })
}

/// Contact columns, in [`contact_from_row`]'s order.
macro_rules! contact_columns {
    () => {
        "kyc_passed, enabled, secret, pending, pending_created_at, last_step, failures, last_failure_at, \
         recovery_codes, recovery_failures, recovery_last_failure_at, hold_until, member"
    };
}

fn contact_from_row(row: &Row<'_>) -> rusqlite::Result<ContactRecord> {
    contact_from_row_at(row, 0)
}

/// [`contact_from_row`] for columns starting at `at`.
fn contact_from_row_at(row: &Row<'_>, at: usize) -> rusqlite::Result<ContactRecord> {
    let opt_u64 = |i: usize| -> rusqlite::Result<Option<u64>> {
        row.get::<_, Option<i64>>(at + i)?.map(from_sql_u64).transpose()
    };
    Ok(ContactRecord {
        kyc_passed: row.get(at)?,
        enabled: row.get(at + 1)?,
        secret: row.get(at + 2)?,
        pending: row.get(at + 3)?,
        pending_created_at: opt_u64(4)?,
        last_step: opt_u64(5)?,
        failures: row.get(at + 6)?,
        last_failure_at: opt_u64(7)?,
        recovery: row
            .get::<_, Option<Vec<u8>>>(at + 8)?
            .map(|b| RecoveryCodeSet::from_bytes(&b))
            .transpose()
            .map_err(|_| corrupt(at + 8, "recovery codes do not decode"))?,
        recovery_failures: row.get(at + 9)?,
        recovery_last_failure_at: opt_u64(10)?,
        hold_until: opt_u64(11)?,
        member: row.get(at + 12)?,
    })
}

fn select_contact(
    conn: &Connection,
    partner: &PartnerId,
    contact: &ContactId,
) -> rusqlite::Result<Option<ContactRecord>> {
    conn.prepare_cached(concat!(
        "SELECT ",
        contact_columns!(),
        " FROM contacts WHERE partner_id = ?1 AND contact_id = ?2"
    ))?
    .query_row(params![partner.as_bytes(), contact.as_bytes()], contact_from_row)
    .optional()
}

/// Webhook endpoint columns, in [`endpoint_from_row`]'s order.
macro_rules! endpoint_columns {
    () => {
        "id, partner_id, url, events, enabled, secret, previous_secret, previous_until, created_at, failing_since"
    };
}

fn endpoint_from_row(row: &Row<'_>) -> rusqlite::Result<WebhookEndpointRecord> {
    let opt_u64 =
        |i: usize| -> rusqlite::Result<Option<u64>> { row.get::<_, Option<i64>>(i)?.map(from_sql_u64).transpose() };
    let id: Vec<u8> = row.get(0)?;
    Ok(WebhookEndpointRecord {
        id: uuid::Uuid::from_slice(&id).map_err(|_| corrupt(0, "endpoint id is not 16 bytes"))?,
        partner_id: uuid_col(row, 1)?,
        url: row.get(2)?,
        events: serde_json::from_str(&row.get::<_, String>(3)?).map_err(|_| corrupt(3, "endpoint events"))?,
        enabled: row.get(4)?,
        secret: row.get(5)?,
        previous_secret: row.get(6)?,
        previous_until: opt_u64(7)?,
        created_at: from_sql_u64(row.get(8)?)?,
        failing_since: opt_u64(9)?,
    })
}

fn select_endpoints(conn: &Connection, partner: &PartnerId) -> rusqlite::Result<Vec<WebhookEndpointRecord>> {
    conn.prepare_cached(concat!(
        "SELECT ",
        endpoint_columns!(),
        " FROM webhook_endpoints WHERE partner_id = ?1 ORDER BY created_at, id"
    ))?
    .query_map([partner.as_bytes()], endpoint_from_row)?
    .collect()
}

/// Write an update's effects in its transaction: its audit rows, then its webhook messages.
fn write_effects(tx: &rusqlite::Transaction<'_>, partner: &PartnerId, effects: &Effects) -> Result<(), StoreError> {
    write_audit(tx, partner, &effects.audit)?;
    write_webhooks(tx, partner, &effects.webhooks)
}

/// Queue the change's webhook messages: each one appended once to the outbox with the partner's
/// enabled endpoints that receive its event (none: nothing is written); [`drain_outbox`] files
/// it with a delivery for each.
fn write_webhooks(
    tx: &rusqlite::Transaction<'_>,
    partner: &PartnerId,
    events: &[WebhookEvent],
) -> Result<(), StoreError> {
    if events.is_empty() {
        return Ok(());
    }
    let endpoints: Vec<(Vec<u8>, String)> = tx
        .prepare_cached("SELECT id, events FROM webhook_endpoints WHERE partner_id = ?1 AND enabled = 1")?
        .query_map([partner.as_bytes()], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    for event in events {
        let quoted = format!("\"{}\"", event.event);
        let only = event.only_to.map(|id| id.as_bytes().to_vec());
        // The receiving endpoints' ids, concatenated.
        let to: Vec<u8> = endpoints
            .iter()
            .filter(|(id, names)| match &only {
                Some(only) => id == only,
                None => names.contains(&quoted),
            })
            .flat_map(|(id, _)| id.iter().copied())
            .collect();
        if to.is_empty() {
            continue;
        }
        tx.prepare_cached(
            "INSERT INTO webhook_outbox (id, partner_id, event, body, created_at, endpoints) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )?
        .execute(params![event.id, partner.as_bytes(), event.event, event.body, to_sql_u64(event.at), to])?;
    }
    Ok(())
}

/// A message as the change that caused it queued it, before [`drain_outbox`] files it.
struct Staged {
    /// Its place in the outbox (the rowid).
    seq: i64,
    id: String,
    partner_id: Vec<u8>,
    event: String,
    body: String,
    created_at: i64,
    /// The endpoints' 16-byte ids, one after the other.
    endpoints: Vec<u8>,
}

/// The most messages one claim files: a backlog (a store no worker claimed from for a while)
/// is filed over several claims, each a short transaction of bounded memory.
const DRAIN_BATCH: i64 = 1000;

/// File the oldest `limit` messages changes have queued: each into `webhook_messages` with a
/// pending delivery per endpoint, then out of the outbox. A claim runs this first, in its
/// transaction; the reads count or list the outbox beside the deliveries, and a resend finds a
/// message in either.
fn drain_outbox(tx: &rusqlite::Transaction<'_>, limit: i64) -> Result<(), StoreError> {
    let staged: Vec<Staged> = tx
        .prepare_cached(
            "SELECT seq, id, partner_id, event, body, created_at, endpoints FROM webhook_outbox \
             ORDER BY seq LIMIT ?1",
        )?
        .query_map([limit], |r| {
            Ok(Staged {
                seq: r.get(0)?,
                id: r.get(1)?,
                partner_id: r.get(2)?,
                event: r.get(3)?,
                body: r.get(4)?,
                created_at: r.get(5)?,
                endpoints: r.get(6)?,
            })
        })?
        .collect::<rusqlite::Result<_>>()?;
    let Some(last) = staged.last().map(|m| m.seq) else { return Ok(()) };
    for m in &staged {
        tx.prepare_cached(
            "INSERT INTO webhook_messages (id, partner_id, event, body, created_at) VALUES (?1, ?2, ?3, ?4, ?5)",
        )?
        .execute(params![m.id, m.partner_id, m.event, m.body, m.created_at])?;
        let mut queue = tx.prepare_cached(
            "INSERT INTO webhook_deliveries (message_id, endpoint_id, partner_id, next_at, state) \
             VALUES (?1, ?2, ?3, ?4, 'pending')",
        )?;
        for endpoint in m.endpoints.chunks(16) {
            queue.execute(params![m.id, endpoint, m.partner_id, m.created_at])?;
        }
    }
    tx.prepare_cached("DELETE FROM webhook_outbox WHERE seq <= ?1")?.execute([last])?;
    Ok(())
}

/// A text column parsed by `FromStr` (an enum as stored).
fn enum_col<T: std::str::FromStr>(row: &Row<'_>, idx: usize, what: &'static str) -> rusqlite::Result<T> {
    row.get::<_, String>(idx)?.parse().map_err(|_| corrupt(idx, what))
}

/// Team member columns, in [`member_from_row`]'s order.
macro_rules! member_columns {
    () => {
        "id, partner_id, email, role, password_hash, created_at, failures, last_failure_at"
    };
}

fn member_from_row(row: &Row<'_>) -> rusqlite::Result<MemberRecord> {
    Ok(MemberRecord {
        id: uuid_col(row, 0)?,
        partner_id: uuid_col(row, 1)?,
        email: row.get(2)?,
        role: enum_col::<Role>(row, 3, "unknown member role")?,
        password_hash: row.get(4)?,
        created_at: from_sql_u64(row.get(5)?)?,
        failures: row.get(6)?,
        last_failure_at: opt_u64_col(row, 7)?,
    })
}

/// Invitation columns, in [`invitation_from_row`]'s order.
macro_rules! invitation_columns {
    () => {
        "id, token_hash, partner_id, email, role, invited_by, created_at, expires_at"
    };
}

fn invitation_from_row(row: &Row<'_>) -> rusqlite::Result<InvitationRecord> {
    Ok(InvitationRecord {
        id: uuid_col(row, 0)?,
        token_hash: row.get(1)?,
        partner_id: uuid_col(row, 2)?,
        email: row.get(3)?,
        role: enum_col::<Role>(row, 4, "unknown invitation role")?,
        invited_by: row.get(5)?,
        created_at: from_sql_u64(row.get(6)?)?,
        expires_at: from_sql_u64(row.get(7)?)?,
    })
}

fn select_team(conn: &Connection, partner: &PartnerId) -> rusqlite::Result<TeamRecord> {
    let members = conn
        .prepare_cached(concat!(
            "SELECT ",
            member_columns!(),
            " FROM team_members WHERE partner_id = ?1 ORDER BY created_at, id"
        ))?
        .query_map([partner.as_bytes()], member_from_row)?
        .collect::<rusqlite::Result<_>>()?;
    let invitations = conn
        .prepare_cached(concat!(
            "SELECT ",
            invitation_columns!(),
            " FROM team_invitations WHERE partner_id = ?1 ORDER BY created_at, id"
        ))?
        .query_map([partner.as_bytes()], invitation_from_row)?
        .collect::<rusqlite::Result<_>>()?;
    Ok(TeamRecord { members, invitations })
}

/// Replace a partner's team rows with `team`, and end the sessions of members no longer in it.
fn write_team(tx: &rusqlite::Transaction<'_>, partner: &PartnerId, team: &TeamRecord) -> Result<(), StoreError> {
    let taken = |e: rusqlite::Error, what: &'static str| {
        if is_unique_violation(&e) { StoreError::Conflict(what) } else { e.into() }
    };
    tx.prepare_cached("DELETE FROM team_members WHERE partner_id = ?1")?.execute([partner.as_bytes()])?;
    tx.prepare_cached("DELETE FROM team_invitations WHERE partner_id = ?1")?.execute([partner.as_bytes()])?;
    let mut insert = tx.prepare_cached(concat!(
        "INSERT INTO team_members (",
        member_columns!(),
        ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"
    ))?;
    for m in &team.members {
        insert
            .execute(params![
                m.id.as_bytes(),
                partner.as_bytes(),
                m.email,
                m.role.as_str(),
                m.password_hash,
                to_sql_u64(m.created_at),
                m.failures,
                m.last_failure_at.map(to_sql_u64),
            ])
            .map_err(|e| taken(e, "member email already exists"))?;
    }
    let mut insert = tx.prepare_cached(concat!(
        "INSERT INTO team_invitations (",
        invitation_columns!(),
        ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)"
    ))?;
    for i in &team.invitations {
        insert
            .execute(params![
                i.id.as_bytes(),
                i.token_hash,
                partner.as_bytes(),
                i.email,
                i.role.as_str(),
                i.invited_by,
                to_sql_u64(i.created_at),
                to_sql_u64(i.expires_at),
            ])
            .map_err(|e| taken(e, "invitation token already exists"))?;
    }
    tx.prepare_cached(
        "DELETE FROM dashboard_sessions WHERE partner_id = ?1 \
         AND member_id NOT IN (SELECT id FROM team_members WHERE partner_id = ?1)",
    )?
    .execute([partner.as_bytes()])?;
    Ok(())
}

/// Dashboard session columns, in [`dashboard_session_from_row`]'s order.
macro_rules! dashboard_session_columns {
    () => {
        "token_hash, partner_id, member_id, stage, created_at, last_seen_at"
    };
}

fn dashboard_session_from_row(row: &Row<'_>) -> rusqlite::Result<DashboardSessionRecord> {
    Ok(DashboardSessionRecord {
        token_hash: row.get(0)?,
        partner_id: uuid_col(row, 1)?,
        member_id: uuid_col(row, 2)?,
        stage: enum_col::<SessionStage>(row, 3, "unknown dashboard session stage")?,
        created_at: from_sql_u64(row.get(4)?)?,
        last_seen_at: from_sql_u64(row.get(5)?)?,
    })
}

fn write_dashboard_session(
    tx: &rusqlite::Transaction<'_>,
    s: &DashboardSessionRecord,
    insert: bool,
) -> Result<(), StoreError> {
    let sql = if insert {
        concat!("INSERT INTO dashboard_sessions (", dashboard_session_columns!(), ") VALUES (?1, ?2, ?3, ?4, ?5, ?6)")
    } else {
        "UPDATE dashboard_sessions SET partner_id = ?2, member_id = ?3, stage = ?4, created_at = ?5, \
         last_seen_at = ?6 WHERE token_hash = ?1"
    };
    tx.prepare_cached(sql)?
        .execute(params![
            s.token_hash,
            s.partner_id.as_bytes(),
            s.member_id.as_bytes(),
            s.stage.as_str(),
            to_sql_u64(s.created_at),
            to_sql_u64(s.last_seen_at),
        ])
        .map_err(|e| {
            if is_unique_violation(&e) { StoreError::Conflict("session token already exists") } else { e.into() }
        })?;
    Ok(())
}

fn is_unique_violation(e: &rusqlite::Error) -> bool {
    matches!(e, rusqlite::Error::SqliteFailure(f, _) if f.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE
        || f.extended_code == rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY)
}

fn write_partner(tx: &rusqlite::Transaction<'_>, p: &PartnerRecord, insert: bool) -> Result<(), StoreError> {
    let sql = if insert {
        concat!(
            "INSERT INTO partners (",
            partner_columns!(),
            ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)"
        )
    } else {
        "UPDATE partners SET name = ?2, environment = ?3, secret_key_hash = ?4, publishable_key = ?5, \
         widget_text = ?6, widget_button_url = ?7, two_factor_waived = ?8, created_at = ?9, \
         widget_origins = ?10, widget_approved = ?11, secret_key_last4 = ?12, previous_secret_key_hash = ?13, \
         previous_key_last4 = ?14, previous_key_expires_at = ?15 WHERE id = ?1"
    };
    let previous = p.previous_key.as_ref();
    let origins = serde_json::to_string(&p.widget_origins).map_err(|e| StoreError::Backend(Box::new(e)))?;
    tx.prepare_cached(sql)?
        .execute(params![
            p.id.as_bytes(),
            p.name,
            p.environment.as_str(),
            p.secret_key_hash,
            p.publishable_key,
            p.widget_text,
            p.widget_button_url,
            p.two_factor_waived,
            to_sql_u64(p.created_at),
            origins,
            p.widget_approved,
            p.secret_key_last4,
            previous.map(|k| k.hash),
            previous.and_then(|k| k.last4.clone()),
            previous.map(|k| to_sql_u64(k.expires_at)),
        ])
        .map_err(|e| {
            if is_unique_violation(&e) { StoreError::Conflict("partner id or key already exists") } else { e.into() }
        })?;
    Ok(())
}

/// Session columns, in [`session_from_row`]'s order.
macro_rules! session_columns {
    () => {
        "token_hash, partner_id, origin, created_at, last_seen_at, email, contact_id, two_factor_at"
    };
}

fn session_from_row(row: &Row<'_>) -> rusqlite::Result<SessionRecord> {
    Ok(SessionRecord {
        token_hash: row.get(0)?,
        partner_id: uuid_col(row, 1)?,
        origin: row.get(2)?,
        created_at: from_sql_u64(row.get(3)?)?,
        last_seen_at: from_sql_u64(row.get(4)?)?,
        email: row.get(5)?,
        contact_id: opt_uuid_col(row, 6)?,
        two_factor_at: opt_u64_col(row, 7)?,
    })
}

/// Insert `s`, or update the session keyed `key` to `s` (every column but the key).
fn write_session(
    tx: &rusqlite::Transaction<'_>,
    key: &[u8; 32],
    s: &SessionRecord,
    insert: bool,
) -> Result<(), StoreError> {
    let sql = if insert {
        concat!("INSERT INTO widget_sessions (", session_columns!(), ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)")
    } else {
        "UPDATE widget_sessions SET partner_id = ?2, origin = ?3, created_at = ?4, last_seen_at = ?5, email = ?6, \
         contact_id = ?7, two_factor_at = ?8 WHERE token_hash = ?1"
    };
    tx.prepare_cached(sql)?
        .execute(params![
            key,
            s.partner_id.as_bytes(),
            s.origin,
            to_sql_u64(s.created_at),
            to_sql_u64(s.last_seen_at),
            s.email,
            s.contact_id.as_ref().map(ContactId::as_bytes),
            s.two_factor_at.map(to_sql_u64),
        ])
        .map_err(|e| {
            if is_unique_violation(&e) { StoreError::Conflict("session token already exists") } else { e.into() }
        })?;
    Ok(())
}

fn sign_in_from_row(row: &Row<'_>) -> rusqlite::Result<SignInRecord> {
    let sent_at: String = row.get(0)?;
    Ok(SignInRecord {
        sent_at: serde_json::from_str(&sent_at).map_err(|_| corrupt(0, "sign-in sent_at is not a list of times"))?,
        code_hash: row.get(1)?,
        expires_at: from_sql_u64(row.get(2)?)?,
        tries: row.get(3)?,
    })
}

/// Order columns, in [`order_from_row`]'s order.
macro_rules! order_columns {
    () => {
        "id, partner_id, contact_id, coin, amount, currency, address, price, quantity, status, created_at, \
         updated_at"
    };
}

fn order_from_row(row: &Row<'_>) -> rusqlite::Result<OrderRecord> {
    let status: String = row.get(9)?;
    Ok(OrderRecord {
        id: uuid_col(row, 0)?,
        partner_id: uuid_col(row, 1)?,
        contact_id: uuid_col(row, 2)?,
        coin: row.get(3)?,
        amount: row.get(4)?,
        currency: row.get(5)?,
        address: row.get(6)?,
        price: row.get(7)?,
        quantity: row.get(8)?,
        status: OrderStatus::from_name(&status).ok_or_else(|| corrupt(9, "unknown order status"))?,
        created_at: from_sql_u64(row.get(10)?)?,
        updated_at: from_sql_u64(row.get(11)?)?,
    })
}

fn select_order(conn: &Connection, partner: &PartnerId, id: &OrderId) -> rusqlite::Result<Option<OrderRecord>> {
    conn.prepare_cached(concat!("SELECT ", order_columns!(), " FROM widget_orders WHERE id = ?1 AND partner_id = ?2"))?
        .query_row(params![id.as_bytes(), partner.as_bytes()], order_from_row)
        .optional()
}

/// A contact's newest orders. This and [`ORDERS_NEXT_PAGE`] walk the `widget_orders_by_contact`
/// index in its order: no sort, and a page reads only its own rows.
const ORDERS_FIRST_PAGE: &str = concat!(
    "SELECT ",
    order_columns!(),
    " FROM widget_orders WHERE partner_id = ?1 AND contact_id = ?2 ORDER BY created_at DESC, id DESC LIMIT ?3"
);

/// A contact's orders strictly older than the `(created_at, id)` cursor `(?3, ?4)`.
const ORDERS_NEXT_PAGE: &str = concat!(
    "SELECT ",
    order_columns!(),
    " FROM widget_orders WHERE partner_id = ?1 AND contact_id = ?2 \
     AND (created_at < ?3 OR (created_at = ?3 AND id < ?4)) ORDER BY created_at DESC, id DESC LIMIT ?5"
);

/// A partner's orders passing the dashboard's filters (`?2` status, `?3` coin, `?4` contact;
/// NULL is "any"; `?5` from and `?6` until, always given, so the index walks only that range),
/// older than the `(created_at, id)` cursor `(?7, ?8)`, newest first, through
/// `widget_orders_by_partner`.
const ORDERS_FILTERED: &str = concat!(
    "SELECT ",
    order_columns!(),
    " FROM widget_orders WHERE partner_id = ?1 \
     AND created_at >= ?5 AND created_at < ?6 AND (created_at < ?7 OR (created_at = ?7 AND id < ?8)) \
     AND (?2 IS NULL OR status = ?2) AND (?3 IS NULL OR coin = ?3) AND (?4 IS NULL OR contact_id = ?4) \
     ORDER BY created_at DESC, id DESC LIMIT ?9"
);

/// The dashboard's contact lists, after the contact id `?2` (an empty blob, below every id, for
/// the first page), each through its partial index.
macro_rules! contacts_list {
    ($index:literal, $condition:literal) => {
        concat!(
            "SELECT contact_id, ",
            contact_columns!(),
            " FROM contacts INDEXED BY ",
            $index,
            " WHERE partner_id = ?1 AND contact_id > ?2 AND member = 0 AND ",
            $condition,
            " ORDER BY contact_id LIMIT ?3"
        )
    };
}
const CONTACTS_KYC_WITHOUT_2FA: &str = contacts_list!("contacts_kyc_without_2fa", "kyc_passed = 1 AND enabled = 0");
const CONTACTS_LOCKED: &str = contacts_list!("contacts_locked", "failures >= 100");
const CONTACTS_LOW_RECOVERY_CODES: &str =
    contacts_list!("contacts_low_recovery_codes", "enabled = 1 AND recovery_remaining <= 3");

/// Sessions idle since `?1`, through the `widget_sessions_last_seen` index.
const PURGE_IDLE_SESSIONS: &str = "DELETE FROM widget_sessions WHERE last_seen_at < ?1";

/// Insert `o`, or update the order keyed `key` to `o` (every column but the key).
fn write_order(tx: &rusqlite::Transaction<'_>, key: &OrderId, o: &OrderRecord, insert: bool) -> Result<(), StoreError> {
    let sql = if insert {
        concat!(
            "INSERT INTO widget_orders (",
            order_columns!(),
            ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)"
        )
    } else {
        "UPDATE widget_orders SET partner_id = ?2, contact_id = ?3, coin = ?4, amount = ?5, currency = ?6, \
         address = ?7, price = ?8, quantity = ?9, status = ?10, created_at = ?11, updated_at = ?12 WHERE id = ?1"
    };
    tx.prepare_cached(sql)?
        .execute(params![
            key.as_bytes(),
            o.partner_id.as_bytes(),
            o.contact_id.as_bytes(),
            o.coin,
            o.amount,
            o.currency,
            o.address,
            o.price,
            o.quantity,
            o.status.as_str(),
            to_sql_u64(o.created_at),
            to_sql_u64(o.updated_at),
        ])
        .map_err(
            |e| if is_unique_violation(&e) { StoreError::Conflict("order id already exists") } else { e.into() },
        )?;
    Ok(())
}

impl Store for SqliteStore {
    fn insert_partner(&self, partner: &PartnerRecord) -> Result<(), StoreError> {
        self.write(|tx| write_partner(tx, partner, true))
    }

    fn partner(&self, id: &PartnerId) -> Result<Option<PartnerRecord>, StoreError> {
        self.read(|c| {
            c.prepare_cached(concat!("SELECT ", partner_columns!(), " FROM partners WHERE id = ?1"))?
                .query_row([id.as_bytes()], partner_from_row)
                .optional()
        })
    }

    fn partner_by_publishable_key(&self, key: &str) -> Result<Option<PartnerRecord>, StoreError> {
        self.read(|c| {
            c.prepare_cached(concat!("SELECT ", partner_columns!(), " FROM partners WHERE publishable_key = ?1"))?
                .query_row([key], partner_from_row)
                .optional()
        })
    }

    fn partner_by_secret_key_hash(&self, hash: &[u8; 32]) -> Result<Option<PartnerRecord>, StoreError> {
        self.read(|c| {
            c.prepare_cached(concat!(
                "SELECT ",
                partner_columns!(),
                " FROM partners WHERE secret_key_hash = ?1 UNION ALL SELECT ",
                partner_columns!(),
                " FROM partners WHERE previous_secret_key_hash = ?1 LIMIT 1"
            ))?
            .query_row([hash], partner_from_row)
            .optional()
        })
    }

    fn update_partner(
        &self,
        id: &PartnerId,
        f: &mut dyn FnMut(&mut PartnerRecord, &mut Effects) -> bool,
    ) -> Result<bool, StoreError> {
        self.write(|tx| {
            let current = tx
                .prepare_cached(concat!("SELECT ", partner_columns!(), " FROM partners WHERE id = ?1"))?
                .query_row([id.as_bytes()], partner_from_row)
                .optional()?;
            let Some(mut record) = current else {
                return Ok(false);
            };
            let mut effects = Effects::default();
            if f(&mut record, &mut effects) {
                write_partner(tx, &record, false)?;
            }
            write_effects(tx, id, &effects)?;
            Ok(true)
        })
    }

    fn count_partners(&self) -> Result<u64, StoreError> {
        self.read(|c| c.query_row("SELECT COUNT(*) FROM partners", [], |r| r.get::<_, i64>(0)).and_then(from_sql_u64))
    }

    fn webhook_endpoints(&self, partner: &PartnerId) -> Result<Vec<WebhookEndpointRecord>, StoreError> {
        self.read(|c| select_endpoints(c, partner))
    }

    fn update_webhook_endpoints(
        &self,
        partner: &PartnerId,
        f: &mut dyn FnMut(&mut Vec<WebhookEndpointRecord>, &mut Effects) -> bool,
    ) -> Result<bool, StoreError> {
        self.write(|tx| {
            let exists = tx
                .prepare_cached("SELECT 1 FROM partners WHERE id = ?1")?
                .query_row([partner.as_bytes()], |_| Ok(()))
                .optional()?;
            if exists.is_none() {
                return Ok(false);
            }
            let mut list = select_endpoints(tx, partner)?;
            let mut effects = Effects::default();
            if f(&mut list, &mut effects) {
                tx.prepare_cached("DELETE FROM webhook_endpoints WHERE partner_id = ?1")?
                    .execute([partner.as_bytes()])?;
                let mut insert = tx.prepare_cached(concat!(
                    "INSERT INTO webhook_endpoints (",
                    endpoint_columns!(),
                    ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"
                ))?;
                for e in &list {
                    let events = serde_json::to_string(&e.events).map_err(|e| StoreError::Backend(Box::new(e)))?;
                    insert.execute(params![
                        e.id.as_bytes(),
                        partner.as_bytes(),
                        e.url,
                        events,
                        e.enabled,
                        e.secret,
                        e.previous_secret,
                        e.previous_until.map(to_sql_u64),
                        to_sql_u64(e.created_at),
                        e.failing_since.map(to_sql_u64),
                    ])?;
                }
            }
            write_effects(tx, partner, &effects)?;
            Ok(true)
        })
    }

    fn contact(&self, partner: &PartnerId, contact: &ContactId) -> Result<Option<ContactRecord>, StoreError> {
        self.read(|c| select_contact(c, partner, contact))
    }

    fn contact_enabled(&self, partner: &PartnerId, contact: &ContactId) -> Result<Option<bool>, StoreError> {
        self.read(|c| {
            c.prepare_cached("SELECT enabled FROM contacts WHERE partner_id = ?1 AND contact_id = ?2")?
                .query_row(params![partner.as_bytes(), contact.as_bytes()], |r| r.get::<_, bool>(0))
                .optional()
        })
    }

    fn update_contact(
        &self,
        partner: &PartnerId,
        contact: &ContactId,
        f: &mut dyn FnMut(&mut ContactRecord, &mut Effects) -> bool,
    ) -> Result<(), StoreError> {
        self.write(|tx| {
            let mut record = select_contact(tx, partner, contact)?.unwrap_or_default();
            let mut effects = Effects::default();
            if f(&mut record, &mut effects) {
                tx.prepare_cached(concat!(
                    "INSERT INTO contacts (partner_id, contact_id, ",
                    contact_columns!(),
                    ", recovery_remaining)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)
                     ON CONFLICT (partner_id, contact_id) DO UPDATE SET
                        kyc_passed = excluded.kyc_passed, enabled = excluded.enabled,
                        secret = excluded.secret, pending = excluded.pending,
                        pending_created_at = excluded.pending_created_at,
                        last_step = excluded.last_step, failures = excluded.failures,
                        last_failure_at = excluded.last_failure_at,
                        recovery_codes = excluded.recovery_codes,
                        recovery_failures = excluded.recovery_failures,
                        recovery_last_failure_at = excluded.recovery_last_failure_at,
                        hold_until = excluded.hold_until, member = excluded.member,
                        recovery_remaining = excluded.recovery_remaining"
                ))?
                .execute(params![
                    partner.as_bytes(),
                    contact.as_bytes(),
                    record.kyc_passed,
                    record.enabled,
                    record.secret,
                    record.pending,
                    record.pending_created_at.map(to_sql_u64),
                    record.last_step.map(to_sql_u64),
                    record.failures,
                    record.last_failure_at.map(to_sql_u64),
                    record.recovery.as_ref().map(RecoveryCodeSet::to_bytes),
                    record.recovery_failures,
                    record.recovery_last_failure_at.map(to_sql_u64),
                    record.hold_until.map(to_sql_u64),
                    record.member,
                    record.recovery.as_ref().map(RecoveryCodeSet::remaining),
                ])?;
            }
            write_effects(tx, partner, &effects)
        })
    }

    fn kyc_contacts_without_2fa(&self, partner: &PartnerId) -> Result<Vec<ContactId>, StoreError> {
        self.read(|c| {
            c.prepare_cached(
                "SELECT contact_id FROM contacts WHERE partner_id = ?1 AND kyc_passed = 1 AND enabled = 0 \
                 AND member = 0 ORDER BY contact_id",
            )?
            .query_map([partner.as_bytes()], |r| uuid_col(r, 0))?
            .collect()
        })
    }

    fn contacts_with_secrets(
        &self,
        after: Option<(PartnerId, ContactId)>,
        limit: usize,
    ) -> Result<Vec<(PartnerId, ContactId)>, StoreError> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let key = |r: &Row<'_>| Ok((uuid_col(r, 0)?, uuid_col(r, 1)?));
        self.read(|conn| match after {
            None => conn
                .prepare_cached(
                    "SELECT partner_id, contact_id FROM contacts WHERE secret IS NOT NULL OR pending IS NOT NULL \
                     ORDER BY partner_id, contact_id LIMIT ?1",
                )?
                .query_map([limit], key)?
                .collect(),
            Some((p, c)) => conn
                .prepare_cached(
                    "SELECT partner_id, contact_id FROM contacts WHERE (partner_id, contact_id) > (?1, ?2) \
                     AND (secret IS NOT NULL OR pending IS NOT NULL) ORDER BY partner_id, contact_id LIMIT ?3",
                )?
                .query_map(rusqlite::params![p.as_bytes(), c.as_bytes(), limit], key)?
                .collect(),
        })
    }

    fn sealed_samples(&self, per_header: usize) -> Result<Vec<SealedSample>, StoreError> {
        let limit = i64::try_from(per_header).unwrap_or(i64::MAX);
        // One pass over the table: a start-up check, not a request path (no index is kept for
        // it, so verify writes pay nothing).
        self.read(|c| {
            c.prepare_cached(
                "SELECT partner_id, contact_id, field, sealed FROM (
                    SELECT partner_id, contact_id, 0 AS field, secret AS sealed,
                        row_number() OVER (PARTITION BY substr(secret, 1, 5)) AS n
                    FROM contacts WHERE secret IS NOT NULL
                    UNION ALL
                    SELECT partner_id, contact_id, 1, pending,
                        row_number() OVER (PARTITION BY substr(pending, 1, 5))
                    FROM contacts WHERE pending IS NOT NULL
                    UNION ALL
                    SELECT partner_id, id, 2, sealed, row_number() OVER (PARTITION BY substr(sealed, 1, 5)) FROM (
                        SELECT partner_id, id, secret AS sealed FROM webhook_endpoints
                        UNION ALL
                        SELECT partner_id, id, previous_secret FROM webhook_endpoints WHERE previous_secret IS NOT NULL)
                 ) WHERE n <= ?1",
            )?
            .query_map([limit], |r| {
                Ok(SealedSample {
                    partner_id: uuid_col(r, 0)?,
                    contact_id: uuid_col(r, 1)?,
                    field: match r.get::<_, i64>(2)? {
                        0 => Field::Secret,
                        1 => Field::Pending,
                        _ => Field::WebhookSecret,
                    },
                    sealed: r.get(3)?,
                })
            })?
            .collect()
        })
    }

    fn insert_session(&self, session: &SessionRecord) -> Result<(), StoreError> {
        self.write(|tx| write_session(tx, &session.token_hash, session, true))
    }

    fn update_session(
        &self,
        token_hash: &[u8; 32],
        f: &mut dyn FnMut(&mut SessionRecord) -> bool,
    ) -> Result<Option<SessionRecord>, StoreError> {
        self.write(|tx| {
            let current = tx
                .prepare_cached(concat!("SELECT ", session_columns!(), " FROM widget_sessions WHERE token_hash = ?1"))?
                .query_row([token_hash], session_from_row)
                .optional()?;
            let Some(mut record) = current else { return Ok(None) };
            if f(&mut record) {
                write_session(tx, token_hash, &record, false)?;
            }
            Ok(Some(record))
        })
    }

    fn delete_session(&self, token_hash: &[u8; 32]) -> Result<bool, StoreError> {
        self.write(|tx| {
            Ok(tx.prepare_cached("DELETE FROM widget_sessions WHERE token_hash = ?1")?.execute([token_hash])? > 0)
        })
    }

    fn delete_sessions_idle_since(&self, before: u64) -> Result<u64, StoreError> {
        self.write(|tx| {
            let gone = tx.prepare_cached(PURGE_IDLE_SESSIONS)?.execute([to_sql_u64(before)])?;
            Ok(gone as u64)
        })
    }

    fn update_sign_in(
        &self,
        partner: &PartnerId,
        email: &str,
        f: &mut dyn FnMut(&mut SignInRecord) -> bool,
    ) -> Result<(), StoreError> {
        self.write(|tx| {
            let mut record = tx
                .prepare_cached(
                    "SELECT sent_at, code_hash, expires_at, tries FROM widget_sign_ins \
                     WHERE partner_id = ?1 AND email = ?2",
                )?
                .query_row(params![partner.as_bytes(), email], sign_in_from_row)
                .optional()?
                .unwrap_or_default();
            if f(&mut record) {
                let sent_at = serde_json::to_string(&record.sent_at).map_err(|e| StoreError::Backend(Box::new(e)))?;
                tx.prepare_cached(
                    "INSERT INTO widget_sign_ins (partner_id, email, sent_at, code_hash, expires_at, tries)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                     ON CONFLICT (partner_id, email) DO UPDATE SET
                        sent_at = excluded.sent_at, code_hash = excluded.code_hash,
                        expires_at = excluded.expires_at, tries = excluded.tries",
                )?
                .execute(params![
                    partner.as_bytes(),
                    email,
                    sent_at,
                    record.code_hash,
                    to_sql_u64(record.expires_at),
                    record.tries,
                ])?;
            }
            Ok(())
        })
    }

    fn contact_for_email(
        &self,
        partner: &PartnerId,
        email: &str,
        candidate: ContactId,
    ) -> Result<ContactId, StoreError> {
        self.write(|tx| {
            tx.prepare_cached(
                "INSERT INTO widget_emails (partner_id, email, contact_id) VALUES (?1, ?2, ?3)
                 ON CONFLICT (partner_id, email) DO NOTHING",
            )?
            .execute(params![partner.as_bytes(), email, candidate.as_bytes()])?;
            Ok(tx
                .prepare_cached("SELECT contact_id FROM widget_emails WHERE partner_id = ?1 AND email = ?2")?
                .query_row(params![partner.as_bytes(), email], |r| uuid_col(r, 0))?)
        })
    }

    fn contact_by_email(&self, partner: &PartnerId, email: &str) -> Result<Option<ContactId>, StoreError> {
        self.read(|c| {
            c.prepare_cached("SELECT contact_id FROM widget_emails WHERE partner_id = ?1 AND email = ?2")?
                .query_row(params![partner.as_bytes(), email], |r| uuid_col(r, 0))
                .optional()
        })
    }

    fn insert_order(&self, order: &OrderRecord, effects: &Effects) -> Result<(), StoreError> {
        self.write(|tx| {
            write_order(tx, &order.id, order, true)?;
            write_effects(tx, &order.partner_id, effects)
        })
    }

    fn order(&self, partner: &PartnerId, id: &OrderId) -> Result<Option<OrderRecord>, StoreError> {
        self.read(|c| select_order(c, partner, id))
    }

    fn update_order(
        &self,
        partner: &PartnerId,
        id: &OrderId,
        f: &mut dyn FnMut(&mut OrderRecord, &mut Effects) -> bool,
    ) -> Result<bool, StoreError> {
        self.write(|tx| {
            let Some(mut record) = select_order(tx, partner, id)? else { return Ok(false) };
            let mut effects = Effects::default();
            if f(&mut record, &mut effects) {
                write_order(tx, id, &record, false)?;
            }
            write_effects(tx, partner, &effects)?;
            Ok(true)
        })
    }

    fn claim_deliveries(&self, now: u64, lease_until: u64, limit: usize) -> Result<Vec<ClaimedDelivery>, StoreError> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        // Every server polls: an idle queue is answered from a reader, without the write lock.
        let any_due = self.read(|c| {
            c.prepare_cached(
                "SELECT 1 FROM webhook_outbox \
                 UNION ALL SELECT 1 FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id \
                 WHERE d.state = 'pending' AND d.next_at <= ?1 AND (d.lease_until IS NULL OR d.lease_until <= ?1) \
                 AND e.enabled = 1 LIMIT 1",
            )?
            .query_row([to_sql_u64(now)], |_| Ok(()))
            .optional()
        })?;
        if any_due.is_none() {
            return Ok(Vec::new());
        }
        self.write(|tx| {
            drain_outbox(tx, DRAIN_BATCH)?;
            let due: Vec<(String, Vec<u8>, u32, String, String)> = tx
                .prepare_cached(
                    "SELECT d.message_id, d.endpoint_id, d.attempts, m.event, m.body \
                     FROM webhook_deliveries d \
                     JOIN webhook_messages m ON m.id = d.message_id \
                     JOIN webhook_endpoints e ON e.id = d.endpoint_id \
                     WHERE d.state = 'pending' AND d.next_at <= ?1 AND (d.lease_until IS NULL OR d.lease_until <= ?1) \
                       AND e.enabled = 1 \
                     ORDER BY d.next_at, d.message_id LIMIT ?2",
                )?
                .query_map(params![to_sql_u64(now), limit], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
                })?
                .collect::<rusqlite::Result<_>>()?;
            let mut out = Vec::with_capacity(due.len());
            for (message_id, endpoint_id, attempts, event, body) in due {
                tx.prepare_cached(
                    "UPDATE webhook_deliveries SET lease_until = ?3 WHERE message_id = ?1 AND endpoint_id = ?2",
                )?
                .execute(params![message_id, endpoint_id, to_sql_u64(lease_until)])?;
                let endpoint = tx
                    .prepare_cached(concat!("SELECT ", endpoint_columns!(), " FROM webhook_endpoints WHERE id = ?1"))?
                    .query_row([&endpoint_id], endpoint_from_row)?;
                out.push(ClaimedDelivery {
                    partner_id: endpoint.partner_id,
                    message_id,
                    event,
                    body,
                    endpoint,
                    attempts,
                });
            }
            Ok(out)
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
        self.write(|tx| {
            let (state, next_at): (&str, Option<i64>) = match next {
                DeliveryNext::Delivered => ("delivered", None),
                DeliveryNext::Failed => ("failed", None),
                DeliveryNext::Retry(at) => ("pending", Some(to_sql_u64(*at))),
            };
            tx.prepare_cached(
                "UPDATE webhook_deliveries SET attempts = ?3, state = ?4, next_at = COALESCE(?5, next_at), \
                 lease_until = NULL WHERE message_id = ?1 AND endpoint_id = ?2",
            )?
            .execute(params![
                attempt.message_id,
                endpoint_id.as_bytes(),
                attempt.attempt,
                state,
                next_at
            ])?;
            tx.prepare_cached(
                "INSERT OR REPLACE INTO webhook_attempts \
                 (endpoint_id, at_ms, message_id, attempt, event, status, error, latency_ms) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            )?
            .execute(params![
                endpoint_id.as_bytes(),
                to_sql_u64(attempt.at_ms),
                attempt.message_id,
                attempt.attempt,
                attempt.event,
                attempt.status,
                attempt.error,
                to_sql_u64(attempt.latency_ms),
            ])?;
            if let Some(e) = endpoint {
                tx.prepare_cached("UPDATE webhook_endpoints SET enabled = ?2, failing_since = ?3 WHERE id = ?1")?
                    .execute(params![e.id.as_bytes(), e.enabled, e.failing_since.map(to_sql_u64)])?;
            }
            write_effects(tx, partner, effects)
        })
    }

    fn webhook_attempts(
        &self,
        partner: &PartnerId,
        endpoint_id: &uuid::Uuid,
        before: Option<(u64, String)>,
        limit: usize,
    ) -> Result<Vec<AttemptRecord>, StoreError> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let (at, msg) = before.map_or((i64::MAX, String::new()), |(t, m)| (to_sql_u64(t), m));
        self.read(|c| {
            c.prepare_cached(
                "SELECT a.message_id, a.event, a.at_ms, a.attempt, a.status, a.error, a.latency_ms \
                 FROM webhook_attempts a JOIN webhook_endpoints e ON e.id = a.endpoint_id \
                 WHERE a.endpoint_id = ?1 AND e.partner_id = ?2 \
                   AND (a.at_ms < ?3 OR (a.at_ms = ?3 AND a.message_id < ?4)) \
                 ORDER BY a.at_ms DESC, a.message_id DESC LIMIT ?5",
            )?
            .query_map(params![endpoint_id.as_bytes(), partner.as_bytes(), at, msg, limit], |r| {
                Ok(AttemptRecord {
                    message_id: r.get(0)?,
                    event: r.get(1)?,
                    at_ms: from_sql_u64(r.get(2)?)?,
                    attempt: r.get(3)?,
                    status: r.get(4)?,
                    error: r.get(5)?,
                    latency_ms: from_sql_u64(r.get(6)?)?,
                })
            })?
            .collect()
        })
    }

    fn resend_webhook_message(&self, partner: &PartnerId, message_id: &str, now: u64) -> Result<bool, StoreError> {
        self.write(|tx| {
            let n = tx
                .prepare_cached(
                    "UPDATE webhook_deliveries SET state = 'pending', next_at = ?3, lease_until = NULL \
                     WHERE message_id = ?1 AND partner_id = ?2",
                )?
                .execute(params![message_id, partner.as_bytes(), to_sql_u64(now)])?;
            if n > 0 {
                return Ok(true);
            }
            // Still in the outbox: not attempted yet, so already pending and due.
            Ok(tx
                .prepare_cached("SELECT 1 FROM webhook_outbox WHERE id = ?1 AND partner_id = ?2")?
                .query_row(params![message_id, partner.as_bytes()], |_| Ok(()))
                .optional()?
                .is_some())
        })
    }

    fn webhook_queue_depth(&self) -> Result<u64, StoreError> {
        self.read(|c| {
            c.query_row(
                "SELECT (SELECT COUNT(*) FROM webhook_deliveries WHERE state = 'pending') \
                 + (SELECT COALESCE(SUM(length(endpoints) / 16), 0) FROM webhook_outbox)",
                [],
                |r| r.get::<_, i64>(0),
            )
            .and_then(from_sql_u64)
        })
    }

    fn webhook_deliveries(&self, partner: &PartnerId) -> Result<Vec<DeliveryRecord>, StoreError> {
        let endpoint_id = |idx: usize, bytes: &[u8]| {
            uuid::Uuid::from_slice(bytes).map_err(|_| corrupt(idx, "endpoint id is not 16 bytes"))
        };
        // Filed deliveries and those still in the outbox (pending, not attempted), in one read
        // transaction (rolled back when dropped: it changes nothing): a drain between the two
        // would otherwise hide or repeat a message.
        let mut rows: Vec<(i64, DeliveryRecord)> = self.read(|c| {
            let c = c.unchecked_transaction()?;
            let mut rows = c
                .prepare_cached(
                    "SELECT m.created_at, d.message_id, d.endpoint_id, m.event, d.attempts, d.next_at, d.state \
                     FROM webhook_deliveries d JOIN webhook_messages m ON m.id = d.message_id \
                     WHERE d.partner_id = ?1",
                )?
                .query_map([partner.as_bytes()], |r| {
                    Ok((
                        r.get(0)?,
                        DeliveryRecord {
                            message_id: r.get(1)?,
                            endpoint_id: endpoint_id(2, &r.get::<_, Vec<u8>>(2)?)?,
                            event: r.get(3)?,
                            attempts: r.get(4)?,
                            next_at: from_sql_u64(r.get(5)?)?,
                            state: r.get(6)?,
                        },
                    ))
                })?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            let mut staged =
                c.prepare_cached("SELECT created_at, id, event, endpoints FROM webhook_outbox WHERE partner_id = ?1")?;
            let mut staged_rows = staged.query([partner.as_bytes()])?;
            while let Some(r) = staged_rows.next()? {
                let created_at: i64 = r.get(0)?;
                let (message_id, event): (String, String) = (r.get(1)?, r.get(2)?);
                for endpoint in r.get::<_, Vec<u8>>(3)?.chunks(16) {
                    rows.push((
                        created_at,
                        DeliveryRecord {
                            message_id: message_id.clone(),
                            endpoint_id: endpoint_id(3, endpoint)?,
                            event: event.clone(),
                            attempts: 0,
                            next_at: from_sql_u64(created_at)?,
                            state: "pending".to_owned(),
                        },
                    ));
                }
            }
            Ok(rows)
        })?;
        rows.sort_by(|(a, x), (b, y)| (a, &x.message_id, x.endpoint_id).cmp(&(b, &y.message_id, y.endpoint_id)));
        Ok(rows.into_iter().map(|(_, d)| d).collect())
    }

    fn orders_for_contact(
        &self,
        partner: &PartnerId,
        contact: &ContactId,
        before: Option<(u64, OrderId)>,
        limit: usize,
    ) -> Result<Vec<OrderRecord>, StoreError> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.read(|conn| match before {
            None => conn
                .prepare_cached(ORDERS_FIRST_PAGE)?
                .query_map(params![partner.as_bytes(), contact.as_bytes(), limit], order_from_row)?
                .collect(),
            Some((created_at, id)) => conn
                .prepare_cached(ORDERS_NEXT_PAGE)?
                .query_map(
                    params![partner.as_bytes(), contact.as_bytes(), to_sql_u64(created_at), id.as_bytes(), limit],
                    order_from_row,
                )?
                .collect(),
        })
    }

    fn audit_events(
        &self,
        partner: &PartnerId,
        contact: Option<&ContactId>,
        after: u64,
        limit: usize,
    ) -> Result<Vec<AuditRow>, StoreError> {
        let limit = to_sql_u64(limit as u64);
        self.read(|c| match contact {
            None => c
                .prepare_cached(concat!(
                    "SELECT ",
                    audit_columns!(),
                    " FROM audit_events WHERE partner_id = ?1 AND seq > ?2 ORDER BY seq LIMIT ?3"
                ))?
                .query_map(params![partner.as_bytes(), to_sql_u64(after), limit], audit_row_from_row)?
                .collect(),
            Some(contact) => c
                .prepare_cached(concat!(
                    "SELECT ",
                    audit_columns!(),
                    " FROM audit_events WHERE partner_id = ?1 AND contact_id = ?2 AND seq > ?3 ORDER BY seq LIMIT ?4"
                ))?
                .query_map(
                    params![partner.as_bytes(), contact.as_bytes(), to_sql_u64(after), limit],
                    audit_row_from_row,
                )?
                .collect(),
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
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.read(|conn| {
            conn.prepare_cached(ORDERS_FILTERED)?
                .query_map(
                    params![
                        partner.as_bytes(),
                        filter.status.map(OrderStatus::as_str),
                        filter.coin,
                        filter.contact.as_ref().map(ContactId::as_bytes),
                        filter.from.map_or(0, to_sql_u64),
                        until,
                        at,
                        id,
                        limit,
                    ],
                    order_from_row,
                )?
                .collect()
        })
    }

    fn contact_counts(&self, partner: &PartnerId) -> Result<ContactCounts, StoreError> {
        self.read(|conn| {
            conn.prepare_cached(
                "SELECT COALESCE(SUM(enabled = 1), 0), COALESCE(SUM(enabled = 0), 0), \
                 COALESCE(SUM(failures >= 100), 0), COALESCE(SUM(kyc_passed = 1 AND enabled = 0), 0), \
                 COALESCE(SUM(enabled = 1 AND recovery_remaining <= 3), 0) \
                 FROM contacts WHERE partner_id = ?1 AND member = 0",
            )?
            .query_row([partner.as_bytes()], |r| {
                let n = |i: usize| r.get::<_, i64>(i).map(|v| u64::try_from(v).unwrap_or(0));
                Ok(ContactCounts {
                    enabled: n(0)?,
                    not_enabled: n(1)?,
                    locked: n(2)?,
                    kyc_without_2fa: n(3)?,
                    low_recovery_codes: n(4)?,
                })
            })
        })
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
        let after: &[u8] = after.as_ref().map_or(&[], |c| c.as_bytes());
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.read(|conn| {
            conn.prepare_cached(sql)?
                .query_map(params![partner.as_bytes(), after, limit], |r| {
                    Ok((uuid_col(r, 0)?, contact_from_row_at(r, 1)?))
                })?
                .collect()
        })
    }

    fn webhook_answered(&self, partner: &PartnerId) -> Result<bool, StoreError> {
        self.read(|conn| {
            conn.prepare_cached(
                "SELECT 1 FROM webhook_endpoints e JOIN webhook_attempts a ON a.endpoint_id = e.id \
                 WHERE e.partner_id = ?1 AND a.status BETWEEN 200 AND 299 LIMIT 1",
            )?
            .query_row([partner.as_bytes()], |_| Ok(()))
            .optional()
            .map(|found| found.is_some())
        })
    }

    fn team(&self, partner: &PartnerId) -> Result<TeamRecord, StoreError> {
        self.read(|c| select_team(c, partner))
    }

    fn update_team(
        &self,
        partner: &PartnerId,
        f: &mut dyn FnMut(&mut TeamRecord, &mut Effects) -> bool,
    ) -> Result<bool, StoreError> {
        self.write(|tx| {
            let exists = tx
                .prepare_cached("SELECT 1 FROM partners WHERE id = ?1")?
                .query_row([partner.as_bytes()], |_| Ok(()))
                .optional()?;
            if exists.is_none() {
                return Ok(false);
            }
            let mut team = select_team(tx, partner)?;
            let mut effects = Effects::default();
            if f(&mut team, &mut effects) {
                write_team(tx, partner, &team)?;
            }
            write_effects(tx, partner, &effects)?;
            Ok(true)
        })
    }

    fn member_by_email(&self, email: &str) -> Result<Option<MemberRecord>, StoreError> {
        self.read(|c| {
            c.prepare_cached(concat!("SELECT ", member_columns!(), " FROM team_members WHERE email = ?1"))?
                .query_row([email], member_from_row)
                .optional()
        })
    }

    fn invitation_by_token(&self, token_hash: &[u8; 32]) -> Result<Option<InvitationRecord>, StoreError> {
        self.read(|c| {
            c.prepare_cached(concat!("SELECT ", invitation_columns!(), " FROM team_invitations WHERE token_hash = ?1"))?
                .query_row([token_hash], invitation_from_row)
                .optional()
        })
    }

    fn insert_dashboard_session(&self, session: &DashboardSessionRecord) -> Result<(), StoreError> {
        self.write(|tx| write_dashboard_session(tx, session, true))
    }

    fn update_dashboard_session(
        &self,
        token_hash: &[u8; 32],
        f: &mut dyn FnMut(&mut DashboardSessionRecord) -> bool,
    ) -> Result<Option<DashboardSessionRecord>, StoreError> {
        self.write(|tx| {
            let current = tx
                .prepare_cached(concat!(
                    "SELECT ",
                    dashboard_session_columns!(),
                    " FROM dashboard_sessions WHERE token_hash = ?1"
                ))?
                .query_row([token_hash], dashboard_session_from_row)
                .optional()?;
            let Some(mut record) = current else { return Ok(None) };
            if f(&mut record) {
                write_dashboard_session(tx, &record, false)?;
            }
            Ok(Some(record))
        })
    }

    fn delete_dashboard_session(&self, token_hash: &[u8; 32]) -> Result<bool, StoreError> {
        self.write(|tx| {
            Ok(tx.prepare_cached("DELETE FROM dashboard_sessions WHERE token_hash = ?1")?.execute([token_hash])? > 0)
        })
    }

    fn delete_dashboard_sessions_idle_since(&self, before: u64) -> Result<u64, StoreError> {
        self.write(|tx| {
            let gone = tx
                .prepare_cached("DELETE FROM dashboard_sessions WHERE last_seen_at < ?1")?
                .execute([to_sql_u64(before)])?;
            Ok(gone as u64)
        })
    }

    fn audit_heads(&self) -> Result<Vec<(PartnerId, AuditHead)>, StoreError> {
        self.read(|c| {
            c.prepare_cached("SELECT id, audit_seq, audit_head FROM partners ORDER BY id")?
                .query_map([], |r| Ok((uuid_col(r, 0)?, AuditHead { seq: from_sql_u64(r.get(1)?)?, hash: r.get(2)? })))?
                .collect()
        })
    }

    fn audit_counts(&self) -> Result<Vec<(String, u64)>, StoreError> {
        self.read(|c| {
            c.prepare_cached("SELECT event, COUNT(*) FROM audit_events GROUP BY event ORDER BY event")?
                .query_map([], |r| Ok((r.get(0)?, from_sql_u64(r.get(1)?)?)))?
                .collect()
        })
    }

    fn ping(&self) -> Result<(), StoreError> {
        self.read(|c| c.query_row("SELECT 1", [], |_| Ok(())))
    }

    fn kind(&self) -> &'static str {
        "sqlite"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::sample_order;

    #[test]
    fn a_version_2_file_migrates_to_the_widget_tables() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v2.db");
        let partner = PartnerId::random();
        {
            let conn = Connection::open(&path).unwrap();
            for sql in &MIGRATIONS[..2] {
                conn.execute_batch(sql).unwrap();
            }
            conn.pragma_update(None, "user_version", 2).unwrap();
            conn.execute(
                "INSERT INTO partners (id, name, environment, secret_key_hash, publishable_key, created_at) \
                 VALUES (?1, 'Acme', 'sandbox', ?2, 'pk_sandbox_1', 7)",
                params![partner.as_bytes(), [1u8; 32]],
            )
            .unwrap();
        }
        let store = SqliteStore::open(&path).unwrap();
        assert_eq!(MIGRATIONS.len(), 9);
        let version: usize = lock(&store.writer).pragma_query_value(None, "user_version", |r| r.get(0)).unwrap();
        assert_eq!(version, 9);
        assert_eq!(store.partner(&partner).unwrap().unwrap().name, "Acme");
        let o = sample_order(partner);
        store.insert_order(&o, &Effects::default()).unwrap();
        assert_eq!(store.order(&partner, &o.id).unwrap(), Some(o));
        drop(store);
        // Opening again runs nothing more.
        let again = SqliteStore::open(&path).unwrap();
        assert_eq!(again.count_partners().unwrap(), 1);
    }

    #[test]
    fn the_outbox_is_filed_oldest_first_a_batch_at_a_time() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(dir.path().join("outbox.db")).unwrap();
        let count = |tx: &rusqlite::Transaction<'_>, table: &str| -> i64 {
            tx.query_row(&format!("SELECT COUNT(*) FROM {table}"), [], |r| r.get(0)).unwrap()
        };
        {
            let mut conn = lock(&store.writer);
            let tx = conn.transaction().unwrap();
            for i in 0..2500i64 {
                tx.execute(
                    "INSERT INTO webhook_outbox (id, partner_id, event, body, created_at, endpoints) \
                     VALUES (?1, ?2, 'webhook.test', '{}', ?3, ?4)",
                    params![format!("msg_{i:032}"), [1u8; 16], i, [[2u8; 16], [3u8; 16]].concat()],
                )
                .unwrap();
            }
            drain_outbox(&tx, DRAIN_BATCH).unwrap();
            assert_eq!(
                (count(&tx, "webhook_outbox"), count(&tx, "webhook_messages"), count(&tx, "webhook_deliveries")),
                (1500, 1000, 2000)
            );
            let oldest_left: i64 =
                tx.query_row("SELECT MIN(created_at) FROM webhook_outbox", [], |r| r.get(0)).unwrap();
            assert_eq!(oldest_left, 1000);
            tx.commit().unwrap();
        }
        // Filed or not, every delivery is counted once.
        assert_eq!(store.webhook_queue_depth().unwrap(), 5000);
    }

    #[test]
    fn a_version_7_file_counts_its_recovery_codes() {
        use crate::store::{ContactList, RecoveryCodeSlot};
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v7.db");
        let (p, c) = (PartnerId::random(), ContactId::random());
        let set = RecoveryCodeSet {
            id: [3; 16],
            codes: (0..10u8).map(|i| RecoveryCodeSlot { hash: [i; 32], used: i >= 2 }).collect(),
        };
        {
            let conn = Connection::open(&path).unwrap();
            for sql in &MIGRATIONS[..7] {
                conn.execute_batch(sql).unwrap();
            }
            conn.pragma_update(None, "user_version", 7).unwrap();
            conn.execute(
                "INSERT INTO contacts (partner_id, contact_id, kyc_passed, enabled, recovery_codes) \
                 VALUES (?1, ?2, 0, 1, ?3)",
                params![p.as_bytes(), c.as_bytes(), set.to_bytes()],
            )
            .unwrap();
        }
        let store = SqliteStore::open(&path).unwrap();
        let low = store.contacts_page(&p, ContactList::LowRecoveryCodes, None, 10).unwrap();
        assert_eq!(
            low.iter().map(|(id, r)| (*id, r.recovery.as_ref().map(RecoveryCodeSet::remaining))).collect::<Vec<_>>(),
            [(c, Some(2))]
        );
        assert_eq!(store.contact_counts(&p).unwrap().low_recovery_codes, 1);
    }

    #[test]
    fn a_version_3_file_moves_the_operator_log_into_the_chains() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("v3.db");
        let (p, q, c) = (PartnerId::random(), PartnerId::random(), ContactId::random());
        {
            let conn = Connection::open(&path).unwrap();
            for sql in &MIGRATIONS[..3] {
                conn.execute_batch(sql).unwrap();
            }
            conn.pragma_update(None, "user_version", 3).unwrap();
            for (i, partner) in [p, q].iter().enumerate() {
                conn.execute(
                    "INSERT INTO partners (id, name, environment, secret_key_hash, publishable_key, created_at) \
                     VALUES (?1, 'Acme', 'sandbox', ?2, ?3, 7)",
                    params![partner.as_bytes(), [u8::try_from(i).unwrap(); 32], format!("pk_sandbox_{i}")],
                )
                .unwrap();
            }
            for (at, operator, action, partner, contact) in [
                (100, "alice", "contact.mark_kyc", p, Some(c)),
                (101, "bob", "partner.waive_2fa", q, None),
                (102, "alice", "contact.reset_lock", p, Some(c)),
                (103, "carol", "partner.retired_action", p, None),
            ] {
                conn.execute(
                    "INSERT INTO audit_log (at, operator, action, partner_id, contact_id) VALUES (?1, ?2, ?3, ?4, ?5)",
                    params![at, operator, action, partner.as_bytes(), contact.as_ref().map(ContactId::as_bytes)],
                )
                .unwrap();
            }
        }
        let store = SqliteStore::open(&path).unwrap();
        let rows = store.audit_events(&p, None, 0, 10).unwrap();
        let shown: Vec<_> = rows
            .iter()
            .map(|r| {
                (r.seq, r.at.as_str(), r.actor.as_str(), r.event.as_str(), r.contact_id.clone(), r.details.to_string())
            })
            .collect();
        assert_eq!(
            shown,
            [
                (1, "1970-01-01T00:01:40.000Z", "operator:alice", "kyc.marked", Some(c.to_string()), "{}".into()),
                (2, "1970-01-01T00:01:42.000Z", "operator:alice", "2fa.unlocked", Some(c.to_string()), "{}".into()),
                (
                    3,
                    "1970-01-01T00:01:43.000Z",
                    "operator:carol",
                    "operator.action",
                    None,
                    r#"{"legacyAction":"partner.retired_action"}"#.into()
                ),
            ]
        );
        let heads: std::collections::HashMap<_, _> = store.audit_heads().unwrap().into_iter().collect();
        let mut check = chain::ChainCheck::new();
        assert!(rows.iter().all(|r| check.push(r)));
        assert_eq!(check.finish(&heads[&p]), Ok(3));
        assert_eq!(store.audit_events(&q, None, 0, 10).unwrap()[0].event, "partner.waiver_set");
        assert_eq!(heads[&q].seq, 1);
        let tables: i64 = lock(&store.writer)
            .query_row("SELECT COUNT(*) FROM sqlite_master WHERE name = 'audit_log'", [], |r| r.get(0))
            .unwrap();
        assert_eq!(tables, 0, "the operator log is gone");
    }

    #[test]
    fn an_unknown_order_status_is_corrupt() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(dir.path().join("r.db")).unwrap();
        let o = sample_order(PartnerId::random());
        store.insert_order(&o, &Effects::default()).unwrap();
        {
            let conn = lock(&store.writer);
            // The CHECK constraint keeps such a row out; a file written by other means may hold one.
            conn.pragma_update(None, "ignore_check_constraints", true).unwrap();
            conn.execute("UPDATE widget_orders SET status = 'refunded' WHERE id = ?1", [o.id.as_bytes()]).unwrap();
            conn.pragma_update(None, "ignore_check_constraints", false).unwrap();
        }
        let corrupt = |r: Result<_, StoreError>| matches!(r, Err(StoreError::Corrupt("unknown order status")));
        assert!(corrupt(store.order(&o.partner_id, &o.id).map(drop)));
        assert!(corrupt(store.orders_for_contact(&o.partner_id, &o.contact_id, None, 10).map(drop)));
        assert!(corrupt(store.update_order(&o.partner_id, &o.id, &mut |_, _| unreachable!()).map(drop)));
    }

    #[test]
    fn order_pages_and_the_idle_purge_walk_their_indexes() {
        let dir = tempfile::tempdir().unwrap();
        let store = SqliteStore::open(dir.path().join("r.db")).unwrap();
        let conn = lock(&store.writer);
        let plan = |sql: &str, n: usize| -> String {
            let mut stmt = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
            let nulls = vec![rusqlite::types::Null; n];
            let rows: Vec<String> =
                stmt.query_map(rusqlite::params_from_iter(nulls), |r| r.get(3)).unwrap().map(Result::unwrap).collect();
            rows.join("; ")
        };
        for (sql, n) in [(ORDERS_FIRST_PAGE, 3), (ORDERS_NEXT_PAGE, 5)] {
            let p = plan(sql, n);
            assert!(p.contains("USING INDEX widget_orders_by_contact") && !p.contains("TEMP B-TREE"), "{p}");
        }
        let purge = plan(PURGE_IDLE_SESSIONS, 1);
        assert!(purge.contains("INDEX widget_sessions_last_seen"), "{purge}");
        // The dashboard's orders: a range of the partner's index (created_at bounded), no sort.
        let orders = plan(ORDERS_FILTERED, 9);
        assert!(
            orders.contains("USING INDEX widget_orders_by_partner (partner_id=? AND created_at>? AND created_at<?)")
                && !orders.contains("TEMP B-TREE"),
            "{orders}"
        );
        for (sql, index) in [
            (CONTACTS_KYC_WITHOUT_2FA, "contacts_kyc_without_2fa"),
            (CONTACTS_LOCKED, "contacts_locked"),
            (CONTACTS_LOW_RECOVERY_CODES, "contacts_low_recovery_codes"),
        ] {
            let p = plan(sql, 3);
            assert!(p.contains(index) && !p.contains("TEMP B-TREE"), "{p}");
        }
    }
}
