//! The PostgreSQL store against a real PostgreSQL (`make pg-test` starts one with
//! scripts/with-postgres.sh): exactly one success per code from 50 threads, the same answers as
//! the memory and SQLite stores for the same random operations, and no secret or secret key at
//! rest in `pg_dump` output, the data files or the WAL (T2, T18 and T17 of the scale-out
//! research note). The three run one at a time: each one's timing is its own, and the cluster
//! holds still while the at-rest test dumps and reads it.
#![cfg(feature = "postgres-tests")]

mod common;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::{self, Write as _};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Barrier, Mutex, MutexGuard, PoisonError, mpsc};
use std::thread;
use std::time::Instant;

use common::{Backend, Fixture, Needles, T0, TestStore, secret_forms};
use proptest::prelude::*;
use proptest::test_runner::{RngSeed, TestCaseError, TestError, TestRunner};
use rampart_core::crypto::Field;
use rampart_core::partner::{KeyOverlap, secret_key_hash};
use rampart_core::store::{ContactList, OrderFilter, OrderRecord, OrderStatus, PartnerRecord, StoreError};
use rampart_core::team::{Member, Role, SignInNext};
use rampart_core::totp::{self, Secret};
use rampart_core::widget::WidgetConfig;
use rampart_core::{
    Clock, Config, ContactId, Environment, Error, KeyRing, ManualClock, OrderId, OrderRequest, PartnerId, Service,
    SessionState, Token, Verification,
};

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn one_at_a_time() -> MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The master key of every service here (the fixture's).
const MASTER_KEY: [u8; 32] = [42; 32];

// ---------------------------------------------------------------------------------------------
// T2: exactly once under threads

/// 50 threads submit the same valid code for one enabled contact, released together by a
/// barrier; 200 rounds, each in a new time step (the clock moves 30 s between rounds). Every
/// round: exactly one acceptance and 49 rejections (a replay is an outcome, not an error), no
/// error, no failure counted, and the accepted step stored.
#[test]
fn fifty_threads_one_code_exactly_one_success_per_round() {
    const THREADS: usize = 50;
    const ROUNDS: usize = 200;
    let _serial = one_at_a_time();
    let f = Fixture::new(Backend::Postgres);
    let c = common::contact();
    let secret = f.enabled(&c);
    let first_step = f.now() / 30;
    let (start, done) = (Barrier::new(THREADS + 1), Barrier::new(THREADS + 1));
    let (answers, received) = mpsc::channel();
    let mut records = Vec::with_capacity(ROUNDS);
    let began = Instant::now();
    thread::scope(|s| {
        for _ in 0..THREADS {
            let answers = answers.clone();
            let (f, c, secret, start, done) = (&f, &c, &secret, &start, &done);
            s.spawn(move || {
                for round in 0..ROUNDS {
                    start.wait();
                    let code = f.code(secret, 0);
                    let answer = f.service.verify_2fa(&f.partner, c, code.as_str());
                    answers.send((round, answer)).unwrap();
                    done.wait();
                }
            });
        }
        // Nothing here may panic while the threads wait at a barrier: results are checked after.
        for _ in 0..ROUNDS {
            start.wait();
            done.wait();
            records.push(f.service.store().contact(&f.partner, &c));
            f.clock.advance(30);
        }
    });
    let elapsed = began.elapsed();
    drop(answers);
    let mut tally = vec![(0usize, 0usize, Vec::new()); ROUNDS];
    for (round, answer) in received {
        match answer {
            Ok(Verification::Accepted { .. }) => tally[round].0 += 1,
            Ok(Verification::Rejected) => tally[round].1 += 1,
            Err(e) => tally[round].2.push(format!("{} {}: {:?}", e.kind().name(), e.message(), e.cause())),
        }
    }
    let bad: Vec<String> = tally
        .iter()
        .enumerate()
        .filter(|(_, (accepted, rejected, errors))| (*accepted, *rejected) != (1, THREADS - 1) || !errors.is_empty())
        .map(|(round, (accepted, rejected, errors))| {
            format!("round {round}: {accepted} accepted, {rejected} rejected, errors {errors:?}")
        })
        .collect();
    assert!(bad.is_empty(), "{} of {ROUNDS} rounds went wrong:\n{}", bad.len(), bad.join("\n"));
    for (round, record) in records.into_iter().enumerate() {
        let record = record.unwrap().unwrap();
        assert_eq!(record.last_step, Some(first_step + round as u64), "round {round}");
        assert_eq!(record.failures, 0, "round {round}: replays are not counted");
    }
    eprintln!("{ROUNDS} rounds x {THREADS} threads: {elapsed:.2?}");
}

// ---------------------------------------------------------------------------------------------
// T18: the same answers on every store

/// Contacts per partner.
const CONTACTS: usize = 100;
/// Most operations pick one of the first few contacts, so that a contact goes through create,
/// enable, verify, replays, throttling and disable within one sequence.
const HOT: u8 = 4;
/// Widget session slots.
const SLOTS: usize = 3;
/// The emails that sign in to the widget, each mapped beforehand (the same on every store) to
/// a contact: a first sign-in would otherwise mint a random contact id per store.
const EMAILS: [(&str, usize); 6] = [
    ("ann@example.com", 0),
    ("bob@example.com", 1),
    ("cy@example.com", 2),
    ("dee@example.com", 3),
    ("eve@example.com", 10),
    ("fay@example.com", 99),
];
/// An email no contact signed in with.
const STRANGER: &str = "nobody@example.com";
const AMOUNTS: [&str; 4] = ["25", "25.50", "0.5", "25.505"];
const ADDRESS: &str = "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq";
const OPERATOR: &str = "equivalence test";
/// The partner index that names a partner no store holds.
const NO_PARTNER: u8 = 2;
/// The dashboard's team members, by index: the operator invites them to a partner's team.
const MEMBERS: [&str; 4] = ["ana@team.example", "ben@team.example", "col@team.example", "dot@team.example"];
const MEMBER_PASSWORD: &str = "violet tractor lamp 42";
const ROLES: [Role; 3] = [Role::Owner, Role::Developer, Role::Viewer];
const OVERLAPS: [KeyOverlap; 4] = [KeyOverlap::Now, KeyOverlap::Hour, KeyOverlap::Day, KeyOverlap::Week];
const LISTS: [ContactList; 3] = [ContactList::KycWithout2fa, ContactList::Locked, ContactList::LowRecoveryCodes];
const STATUSES: [OrderStatus; 3] = [OrderStatus::Created, OrderStatus::Completed, OrderStatus::Failed];

/// Which code an operation submits. "Right" and "the last accepted step" are computed from
/// the store's own secret for that contact (each store generates its own), the wrong code is
/// wrong for every store's secrets.
#[derive(Clone, Copy, Debug)]
enum Code {
    /// The code of now + this many steps.
    Right(i8),
    /// The code of the last accepted step (a replay), or of now when there is none.
    LastAccepted,
    Wrong,
    /// Not six digits: counted as a failure.
    Malformed,
    /// No code at all.
    Missing,
}

/// Which key [`Service::authenticate`] is given.
#[derive(Clone, Copy, Debug)]
enum Key {
    Current,
    /// The secret key before the last rotation.
    Previous,
    Publishable,
    /// The current key with a production prefix.
    OtherEnvironment,
}

/// The dashboard's order filter, in indexes: a status of [`STATUSES`], the coin (`btc`, which
/// every order is, or `eth`), a buyer of [`EMAILS`], and bounds in seconds after [`T0`].
#[derive(Clone, Copy, Debug)]
struct Filter {
    status: Option<u8>,
    btc: Option<bool>,
    buyer: Option<u8>,
    from: Option<u16>,
    until: Option<u16>,
}

impl Filter {
    fn of(self, ids: &Ids) -> OrderFilter {
        OrderFilter {
            status: self.status.map(|k| STATUSES[usize::from(k) % STATUSES.len()]),
            coin: self.btc.map(|btc| if btc { "btc" } else { "eth" }.to_owned()),
            contact: self.buyer.map(|e| ids.contacts[EMAILS[usize::from(e) % EMAILS.len()].1]),
            from: self.from.map(|s| T0 + u64::from(s)),
            until: self.until.map(|s| T0 + u64::from(s)),
        }
    }
}

/// One operation. Partners are 0, 1 and 2 (none), contacts 0..100, slots 0..3, emails index
/// [`EMAILS`] (and one past it is [`STRANGER`]), members index [`MEMBERS`].
#[derive(Clone, Debug)]
enum Op {
    /// Move every clock forward (seconds).
    Advance(u64),
    Create(u8, u8),
    Enable(u8, u8, Code),
    Verify(u8, u8, Code),
    Disable(u8, u8, Code),
    Status(u8, u8),
    Kyc(u8, u8, bool),
    Waiver(u8, bool),
    ResetLock(u8, u8),
    /// `is_2fa_required` and `may_purchase`.
    Required(u8, u8),
    /// `contacts_requiring_2fa` and the store's `kyc_contacts_without_2fa`.
    Requiring(u8),
    /// The stored record, its sealed secrets as present or not.
    Record(u8, u8),
    /// Create, then enable with the right code.
    Enrol(u8, u8),
    /// This many wrong codes in a row (the throttle).
    Burst(u8, u8, u8),
    /// Enrol, then this many wrong codes, each after the throttle delay: the way to the lock
    /// at 100 failures.
    Hammer(u8, u8, u8),
    /// Move the clock past the contact's throttle delay (as the store counts its failures).
    Wait(u8, u8),
    RotateKeys(u8),
    Authenticate(u8, Key),
    Partner(u8),
    /// Walk `contacts_with_secrets` to its end, from a (partner, contact) cursor, pages of `n`.
    WithSecrets(Option<(u8, u8)>, u8),
    Rewrap,
    AuditLog,
    OpenSession(u8, u8),
    /// Open a session in the slot, ask for a code for the email, try a wrong one, then sign in.
    SignedIn(u8, u8, u8),
    /// Create in the session, then enable with the right code.
    SessionEnrol(u8),
    RequestCode(u8, u8),
    /// Sign in with the code this slot was sent for the email (`true`), or a malformed one.
    SignIn(u8, u8, bool),
    SessionState(u8),
    SessionKyc(u8),
    SessionCreate(u8),
    SessionEnable(u8, Code),
    SessionVerify(u8, Code),
    /// Place an order of `AMOUNTS[a]` (the clock first moves 1 s, so no two orders share a
    /// time: orders of one second are ordered by their random ids, which differ per store);
    /// as an operation, this many orders.
    PlaceOrder(u8, u8, u8),
    /// Walk `Service::orders` of (partner, contact) to its end, starting after the k-th order
    /// placed (any contact's), pages of `n`.
    Orders(u8, u8, Option<u8>, u8),
    /// `Service::order` of the k-th order placed.
    Order(u8, u8),
    CloseSession(u8),
    ContactByEmail(u8, u8),
    /// The operator invites member `m` to partner `p`'s team with a role of [`ROLES`].
    Invite(u8, u8, u8),
    /// Member `m` accepts their latest invitation, with a good password or a too-short one.
    Accept(u8, bool),
    /// Member `m` finishes the authenticator setup with a code of its pending secret.
    FinishSetup(u8, Code),
    /// Invite, accept with a good password, finish the setup with the right code.
    Join(u8, u8, u8),
    /// Member `m`'s password step, with the right password or a wrong one.
    MemberSignIn(u8, bool),
    /// Member `m`'s code step.
    MemberCode(u8, Code),
    /// The password step with the right password, a wrong code, then the right one.
    MemberSignedIn(u8),
    /// A team's day: `m` joins partner `p` as an owner and `n` with a role of [`ROLES`]; `m`
    /// signs in, gives `n` the next role, lists the team, rolls the key and removes `n`.
    Staff(u8, u8, u8, u8),
    /// Member `m`'s signed-in session, touched.
    MemberSession(u8),
    /// Member `m` (by their session) lists the team.
    Team(u8),
    /// Member `m` gives member `n` a role of [`ROLES`].
    SetRole(u8, u8, u8),
    /// Member `m` removes member `n`.
    RemoveMember(u8, u8),
    /// Member `m` signs out.
    SignOut(u8),
    /// Member `m` rolls their partner's secret key with an overlap of [`OVERLAPS`].
    RollKey(u8, u8),
    Overview(u8),
    ContactCounts(u8),
    /// Walk a list of [`LISTS`] to its end, pages of `n`.
    ContactList(u8, u8, u8),
    /// Walk the partner's orders under a filter to their end, pages of `n`.
    PartnerOrders(u8, Filter, u8),
}

/// A comparable answer: a value shown with ids replaced by names the stores share (`p0`, `c7`,
/// `o2`), or an error's kind, message and wait.
#[derive(Debug, PartialEq, Eq)]
enum Answer {
    Ok(String),
    Err { kind: &'static str, message: String, retry_after: Option<u64> },
}

impl From<Error> for Answer {
    fn from(e: Error) -> Self {
        let mut message = e.message().to_owned();
        if e.code() >= 500 {
            // A store fault: name it, so the difference says what failed.
            let _ = write!(message, " (cause: {:?})", e.cause().map(ToString::to_string));
        }
        Self::Err { kind: e.kind().name(), message, retry_after: e.retry_after() }
    }
}

impl From<StoreError> for Answer {
    fn from(e: StoreError) -> Self {
        Self::Err { kind: "store", message: e.to_string(), retry_after: None }
    }
}

fn answer<T>(r: Result<T, impl Into<Answer>>, show: impl FnOnce(T) -> String) -> Answer {
    match r {
        Ok(v) => Answer::Ok(show(v)),
        Err(e) => e.into(),
    }
}

fn unit(r: rampart_core::Result<()>) -> Answer {
    answer(r, |()| String::new())
}

/// Ids shared by every store of a case, scattered so that id order is not index order.
struct Ids {
    partners: [PartnerId; 3],
    contacts: Vec<ContactId>,
    contact_index: HashMap<ContactId, usize>,
}

fn scattered(i: u64) -> uuid::Uuid {
    let mix = |mut z: u64| {
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    let a = mix(i.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let b = mix(a ^ i);
    let mut bytes = [0u8; 16];
    bytes[..8].copy_from_slice(&a.to_be_bytes());
    bytes[8..].copy_from_slice(&b.to_be_bytes());
    uuid::Builder::from_random_bytes(bytes).into_uuid()
}

impl Ids {
    fn new() -> Self {
        let partners = [0, 1, 2].map(|i| PartnerId::from_uuid(scattered(1_000 + i)));
        let contacts: Vec<ContactId> = (0..CONTACTS as u64).map(|i| ContactId::from_uuid(scattered(i))).collect();
        let contact_index = contacts.iter().enumerate().map(|(i, c)| (*c, i)).collect();
        Self { partners, contacts, contact_index }
    }

    fn partner(&self, id: &PartnerId) -> String {
        match self.partners.iter().position(|p| p == id) {
            Some(i) => format!("p{i}"),
            None => format!("unexpected partner {id}"),
        }
    }

    fn contact(&self, id: &ContactId) -> String {
        match self.contact_index.get(id) {
            Some(i) => format!("c{i}"),
            None => format!("unexpected contact {id}"),
        }
    }
}

/// A partner's keys as this store issued them.
struct PartnerKeys {
    secret: String,
    previous: Option<String>,
    publishable: String,
}

/// One store, its service and what the caller of that service holds: keys, session tokens,
/// sign-in codes, order ids.
struct World {
    name: &'static str,
    _store: TestStore,
    service: Service,
    clock: Arc<ManualClock>,
    keys: KeyRing,
    partner_keys: Vec<PartnerKeys>,
    sessions: [Option<String>; SLOTS],
    signed_in: [Option<(usize, usize)>; SLOTS],
    codes: HashMap<(u8, u8), String>,
    orders: Vec<OrderId>,
    /// Each member's latest invitation token and dashboard session token.
    invitations: HashMap<u8, String>,
    member_sessions: HashMap<u8, String>,
    /// This store's member and invitation ids, with the names the stores share
    /// (`member:ana@team.example`, `invitation 3`).
    names: Vec<(String, String)>,
    /// A code submitted matched a step it was not computed for (see [`World::token`]).
    coincidence: std::cell::Cell<bool>,
}

impl World {
    fn new(name: &'static str, backend: Backend, ids: &Ids, config: &Config) -> Self {
        let store = backend.open();
        let mut partner_keys = Vec::new();
        for (p, id) in ids.partners[..2].iter().enumerate() {
            let keys = PartnerKeys {
                secret: format!("sk_sandbox_equivalence{p}partner{p}initialkey"),
                previous: None,
                publishable: format!("pk_sandbox_equivalence{p}partner{p}initialkey"),
            };
            let record = PartnerRecord {
                id: *id,
                name: format!("Partner {p}"),
                environment: Environment::Sandbox,
                secret_key_hash: secret_key_hash(&keys.secret),
                publishable_key: keys.publishable.clone(),
                widget_text: None,
                widget_button_url: None,
                two_factor_waived: false,
                created_at: T0,
                widget_origins: Vec::new(),
                widget_approved: false,
                secret_key_last4: None,
                previous_key: None,
            };
            store.store.insert_partner(&record).unwrap();
            for (email, c) in EMAILS {
                store.store.contact_for_email(id, email, ids.contacts[c]).unwrap();
            }
            partner_keys.push(keys);
        }
        let clock = Arc::new(ManualClock::new(T0));
        let service = Service::builder_shared(store.store.clone())
            .master_keys(KeyRing::new(1, &MASTER_KEY))
            .config(config.clone())
            .clock(clock.clone())
            .build()
            .unwrap();
        Self {
            name,
            _store: store,
            service,
            clock,
            keys: KeyRing::new(1, &MASTER_KEY),
            partner_keys,
            sessions: Default::default(),
            signed_in: [None; SLOTS],
            codes: HashMap::new(),
            orders: Vec::new(),
            invitations: HashMap::new(),
            member_sessions: HashMap::new(),
            names: Vec::new(),
            coincidence: std::cell::Cell::new(false),
        }
    }

    fn now(&self) -> u64 {
        self.clock.now()
    }

    /// The 2FA record an operation submits a code for: a contact's, the one signed in to its
    /// slot, or a team member's (keyed by the member's id).
    fn target(&self, ids: &Ids, op: &Op) -> Option<(PartnerId, ContactId)> {
        let contact = |(p, c): (usize, usize)| Some((*ids.partners.get(p)?, *ids.contacts.get(c)?));
        match *op {
            Op::Enable(p, c, _) | Op::Verify(p, c, _) | Op::Disable(p, c, _) => contact((p.into(), c.into())),
            Op::SessionEnable(s, _) | Op::SessionVerify(s, _) => contact(self.signed_in[usize::from(s)]?),
            Op::FinishSetup(m, _) | Op::MemberCode(m, _) => {
                let member = self.service.store().member_by_email(MEMBERS[usize::from(m)]).ok()??;
                Some((member.partner_id, ContactId::from_uuid(member.id)))
            }
            _ => None,
        }
    }

    /// This store's secret of a 2FA record, opened.
    fn secret(&self, (partner, contact): (PartnerId, ContactId), field: Field) -> Option<Secret> {
        let record = self.service.store().contact(&partner, &contact).ok()??;
        let sealed = match field {
            Field::Secret => record.secret,
            Field::Pending => record.pending,
            // Contacts hold no webhook secrets.
            Field::WebhookSecret => None,
        }?;
        let plain = self.keys.open(&partner, &contact, field, &sealed).ok()?;
        Secret::from_bytes(plain.to_vec()).ok()
    }

    fn token(&self, target: Option<(PartnerId, ContactId)>, field: Field, code: Code, wrong: &str) -> Token {
        Token::parse(&self.code_text(target, field, code, wrong))
    }

    /// The text of the code an operation submits ("" for none).
    fn code_text(&self, target: Option<(PartnerId, ContactId)>, field: Field, code: Code, wrong: &str) -> String {
        let secret = target.and_then(|t| self.secret(t, field));
        let now = self.now();
        let intended = match (code, &secret) {
            (Code::Missing, _) => return String::new(),
            (Code::Malformed, _) => return "12a456".to_owned(),
            (Code::Wrong, _) | (Code::Right(_) | Code::LastAccepted, None) => return wrong.to_owned(),
            (Code::Right(steps), Some(_)) => now.checked_add_signed(i64::from(steps) * 30).unwrap() / 30,
            (Code::LastAccepted, Some(_)) => {
                let (partner, contact) = target.unwrap();
                let record = self.service.store().contact(&partner, &contact).ok().flatten();
                record.and_then(|r| r.last_step).unwrap_or(now / 30)
            }
        };
        let secret = secret.unwrap();
        let text = totp::hotp(&secret, intended);
        // Two steps of one secret share a code about once in a million: when the code matches
        // another step of the window than the one meant, this store's answer is not the
        // others' (their secrets differ), and the case stops there.
        let window = u64::from(self.service.config().window);
        let matched = (now / 30 - window..=now / 30 + window).filter(|&step| totp::hotp(&secret, step) == text);
        self.coincidence.set(self.coincidence.get() || matched.into_iter().any(|step| step != intended));
        text
    }

    fn session(&self, slot: u8) -> &str {
        self.sessions[usize::from(slot)].as_deref().unwrap_or("ws_none")
    }

    /// Member `m`'s dashboard session token (one no session has, when none).
    fn member_session(&self, m: u8) -> &str {
        self.member_sessions.get(&m).map_or("ds_none", String::as_str)
    }

    /// The member signed in on `m`'s session.
    fn member(&self, m: u8) -> rampart_core::Result<Member> {
        self.service.dashboard_session(self.member_session(m)).map(|s| s.member)
    }

    /// Member `n`'s id in this store (one no member has, when none).
    fn member_id(&self, n: u8) -> uuid::Uuid {
        let found = self.service.store().member_by_email(MEMBERS[usize::from(n)]);
        found.ok().flatten().map_or(uuid::Uuid::nil(), |m| m.id)
    }

    /// `text` with this store's member and invitation ids in the names every store shares.
    fn named(&self, text: &str) -> String {
        self.names.iter().fold(text.to_owned(), |t, (id, name)| t.replace(id, name))
    }

    fn show_member(ids: &Ids, m: &Member) -> String {
        format!(
            "{} of {} {} 2fa {} since {}",
            m.email,
            ids.partner(&m.partner_id),
            m.role.as_str(),
            m.two_factor,
            m.created_at - T0
        )
    }

    fn order_name(&self, id: &OrderId) -> String {
        match self.orders.iter().position(|o| o == id) {
            Some(i) => format!("o{i}"),
            None => format!("unexpected order {id}"),
        }
    }

    fn show_order(&self, ids: &Ids, o: &OrderRecord) -> String {
        format!(
            "{} of {}/{}: {} {} {} to {} at {} = {} {} created {} updated {}",
            self.order_name(&o.id),
            ids.partner(&o.partner_id),
            ids.contact(&o.contact_id),
            o.amount,
            o.currency,
            o.coin,
            o.address,
            o.price,
            o.quantity,
            o.status.as_str(),
            o.created_at - T0,
            o.updated_at - T0
        )
    }

    fn show_state(ids: &Ids, s: &SessionState) -> String {
        format!(
            "{} {} origin {:?} email {:?} contact {:?} kyc {} 2fa {:?} may purchase {}",
            ids.partner(&s.partner_id),
            s.environment,
            s.origin,
            s.email,
            s.contact_id.map(|c| ids.contact(&c)),
            s.kyc_passed,
            s.two_factor.map(|t| t.as_str()),
            s.may_purchase
        )
    }

    fn key(&self, p: u8, key: Key) -> String {
        let Some(keys) = self.partner_keys.get(usize::from(p)) else {
            return "sk_sandbox_NoSuchPartnerNoSuchPartnerNoSuch".to_owned();
        };
        match key {
            Key::Current => keys.secret.clone(),
            Key::Previous => keys.previous.clone().unwrap_or_else(|| "sk_sandbox_NeverIssuedNeverIssued".to_owned()),
            Key::Publishable => keys.publishable.clone(),
            Key::OtherEnvironment => keys.secret.replacen("sk_sandbox_", "sk_production_", 1),
        }
    }

    /// Run one operation; its answers, comparable across stores.
    fn apply(&mut self, ids: &Ids, op: &Op, wrong: &str) -> Vec<Answer> {
        let svc = &self.service;
        let pid = |p: u8| ids.partners[usize::from(p)];
        let cid = |c: u8| ids.contacts[usize::from(c)];
        let created = |setup: rampart_core::TwoFactorSetup| {
            let secret = Secret::from_base32(&setup.manual).unwrap();
            assert_eq!(secret.to_base32(), setup.manual);
            assert!(setup.qr_code.starts_with("data:image/png;base64,"));
            format!("created {}", setup.uri.replace(&setup.manual, "SECRET"))
        };
        let target = self.target(ids, op);
        let answer = match *op {
            Op::Advance(seconds) => {
                self.clock.advance(seconds);
                Answer::Ok(String::new())
            }
            Op::Create(p, c) => answer(svc.create_2fa(&pid(p), &cid(c), None), created),
            Op::Enable(p, c, code) => {
                let token = self.token(target, Field::Pending, code, wrong);
                unit(svc.enable_2fa(&pid(p), &cid(c), token).map(drop))
            }
            Op::Verify(p, c, code) => {
                let token = self.token(target, Field::Secret, code, wrong);
                answer(svc.verify_2fa(&pid(p), &cid(c), token), |v| format!("{v:?}"))
            }
            Op::Disable(p, c, code) => {
                let token = self.token(target, Field::Secret, code, wrong);
                unit(svc.disable_2fa(&pid(p), &cid(c), token))
            }
            Op::Status(p, c) => answer(svc.status_2fa(&pid(p), &cid(c)), |b| b.to_string()),
            Op::Kyc(p, c, passed) => unit(svc.set_kyc_passed(OPERATOR, &pid(p), &cid(c), passed)),
            Op::Waiver(p, waived) => unit(svc.set_2fa_waiver(OPERATOR, &pid(p), waived)),
            Op::ResetLock(p, c) => unit(svc.reset_lock(OPERATOR, &pid(p), &cid(c))),
            Op::Required(p, c) => {
                return vec![
                    answer(svc.is_2fa_required(&pid(p), &cid(c)), |b| b.to_string()),
                    answer(svc.may_purchase(&pid(p), &cid(c)), |b| b.to_string()),
                ];
            }
            Op::Requiring(p) => {
                let names =
                    |list: Vec<ContactId>| format!("{:?}", list.iter().map(|c| ids.contact(c)).collect::<Vec<_>>());
                return vec![
                    answer(svc.contacts_requiring_2fa(&pid(p)), names),
                    answer(svc.store().kyc_contacts_without_2fa(&pid(p)), names),
                ];
            }
            Op::Record(p, c) => answer(svc.store().contact(&pid(p), &cid(c)), |r| {
                format!(
                    "{:?}",
                    r.map(|r| (
                        r.kyc_passed,
                        r.enabled,
                        r.secret.is_some(),
                        r.pending.is_some(),
                        r.pending_created_at.map(|t| t - T0),
                        r.last_step,
                        r.failures,
                        r.last_failure_at.map(|t| t - T0),
                    ))
                )
            }),
            Op::Wait(p, c) => {
                let record = svc.store().contact(&pid(p), &cid(c));
                let failures = record.map(|r| r.map_or(0, |r| r.failures));
                let seconds = failures.map(|f| rampart_core::lifecycle::throttle_delay(f).unwrap_or(0));
                if let Ok(seconds) = seconds {
                    self.clock.advance(seconds);
                }
                answer(seconds, |s| s.to_string())
            }
            Op::Enrol(..)
            | Op::Burst(..)
            | Op::Hammer(..)
            | Op::SignedIn(..)
            | Op::SessionEnrol(..)
            | Op::Join(..)
            | Op::MemberSignedIn(..)
            | Op::Staff(..) => {
                unreachable!("run as its steps")
            }
            Op::RotateKeys(p) => {
                let rotated = svc.rotate_keys(OPERATOR, &pid(p));
                if let (Ok(creds), Some(keys)) = (&rotated, self.partner_keys.get_mut(usize::from(p))) {
                    let old = std::mem::replace(&mut keys.secret, creds.secret_key.expose().to_owned());
                    keys.previous = Some(old);
                    keys.publishable.clone_from(&creds.publishable_key);
                }
                answer(rotated, |creds| {
                    let prefix = |k: &str| k.get(..11).unwrap_or_default().to_owned();
                    format!(
                        "{} {} {} {}",
                        ids.partner(&creds.partner_id),
                        creds.environment,
                        prefix(creds.secret_key.expose()),
                        prefix(&creds.publishable_key)
                    )
                })
            }
            Op::Authenticate(p, key) => answer(svc.authenticate(&self.key(p, key)), |a| {
                format!("{} {:?}", ids.partner(&a.partner_id), a.method)
            }),
            Op::Partner(p) => {
                let publishable = self.partner_keys.get(usize::from(p)).map(|k| k.publishable.clone());
                answer(svc.partner(&pid(p)), |partner| {
                    format!(
                        "{} {:?} {} text {:?} url {:?} waived {} origins {:?} approved {} publishable key current {}",
                        ids.partner(&partner.id),
                        partner.name,
                        partner.environment,
                        partner.widget_text,
                        partner.widget_button_url,
                        partner.two_factor_waived,
                        partner.widget_origins,
                        partner.widget_approved,
                        Some(&partner.publishable_key) == publishable.as_ref()
                    )
                })
            }
            Op::WithSecrets(start, n) => {
                let mut cursor = start.map(|(p, c)| (pid(p), cid(c)));
                let (mut contacts, mut members) = (Vec::new(), Vec::new());
                let mut pages = 0;
                loop {
                    match svc.store().contacts_with_secrets(cursor, usize::from(n)) {
                        Ok(page) => {
                            let Some(&last) = page.last() else { break };
                            pages += 1;
                            assert!(pages < 1_000, "contacts_with_secrets does not end");
                            for (p, c) in &page {
                                match ids.contact_index.get(c) {
                                    Some(i) => contacts.push(format!("{}/c{i}", ids.partner(p))),
                                    // Team members' 2FA records are rewrapped too. Their ids
                                    // differ per store, and so do their places in the order
                                    // (and whether they follow a start cursor).
                                    None => members.push(format!("{}/{}", ids.partner(p), self.named(&c.to_string()))),
                                }
                            }
                            cursor = Some(last);
                        }
                        Err(e) => return vec![e.into()],
                    }
                }
                members.sort();
                if start.is_some() {
                    members.clear();
                }
                Answer::Ok(format!("{contacts:?} members {members:?}"))
            }
            Op::Rewrap => answer(svc.rewrap_secrets(OPERATOR), |r| format!("{r:?}")),
            Op::AuditLog => {
                let mut rows = Vec::new();
                let exported = svc.export_audit(None, None, |r| {
                    rows.push(r.clone());
                    Ok(())
                });
                let verified = svc
                    .verify_audit(None)
                    .map(|reports| reports.iter().map(|r| (r.rows, r.first_bad_seq)).collect::<Vec<_>>());
                answer(exported.and(verified), |verdicts| {
                    // Ids and hashes are random per store; what happened, in which order, is not.
                    let mut shown: Vec<String> = rows
                        .iter()
                        .map(|r| {
                            let partner = ids.partner(&PartnerId::parse(&r.partner_id).unwrap());
                            let contact = r.contact_id.as_deref().map(|c| ids.contact(&ContactId::parse(c).unwrap()));
                            let (actor, details) = (self.named(&r.actor), self.named(&r.details.to_string()));
                            format!("{partner} {} {actor} {} {contact:?} {details} {}", r.seq, r.event, r.at)
                        })
                        .collect();
                    shown.sort();
                    let mut verdicts = verdicts.clone();
                    verdicts.sort();
                    format!("{shown:?} {verdicts:?}")
                })
            }
            Op::OpenSession(slot, p) => {
                let key = self.key(p, Key::Publishable);
                let opened = svc.open_session(&key, None);
                if let Ok((token, _)) = &opened {
                    self.sessions[usize::from(slot)] = Some(token.as_str().to_owned());
                    self.signed_in[usize::from(slot)] = None;
                }
                answer(opened, |(token, state)| {
                    assert!(token.as_str().starts_with("ws_"));
                    Self::show_state(ids, &state)
                })
            }
            Op::RequestCode(slot, e) => {
                let sent = svc.request_sign_in_code(self.session(slot), EMAILS[usize::from(e)].0);
                answer(sent, |code| {
                    self.codes.insert((slot, e), code.code.to_string());
                    format!("code expires in {}", code.expires_in)
                })
            }
            Op::SignIn(slot, e, right) => {
                let code = if right { self.codes.get(&(slot, e)).cloned() } else { None };
                let signed =
                    svc.sign_in(self.session(slot), EMAILS[usize::from(e)].0, code.as_deref().unwrap_or("12a456"));
                if let Ok(state) = &signed {
                    let contact = state.contact_id.and_then(|c| ids.contact_index.get(&c).copied());
                    let partner = ids.partners.iter().position(|p| *p == state.partner_id);
                    self.signed_in[usize::from(slot)] = partner.zip(contact);
                }
                answer(signed, |s| Self::show_state(ids, &s))
            }
            Op::SessionState(slot) => answer(svc.session_state(self.session(slot)), |s| Self::show_state(ids, &s)),
            Op::SessionKyc(slot) => answer(svc.session_mark_kyc(self.session(slot)), |s| Self::show_state(ids, &s)),
            Op::SessionCreate(slot) => answer(svc.session_create_2fa(self.session(slot)), created),
            Op::SessionEnable(slot, code) => {
                let token = self.token(target, Field::Pending, code, wrong);
                answer(svc.session_enable_2fa(self.session(slot), token), |(s, _)| Self::show_state(ids, &s))
            }
            Op::SessionVerify(slot, code) => {
                let token = self.token(target, Field::Secret, code, wrong);
                answer(svc.session_verify_2fa(self.session(slot), token), |s| Self::show_state(ids, &s))
            }
            Op::PlaceOrder(slot, a, _) => {
                let request = OrderRequest {
                    coin: "btc".into(),
                    amount: AMOUNTS[usize::from(a)].into(),
                    currency: "usd".into(),
                    address: ADDRESS.into(),
                };
                let placed = svc.place_order(self.session(slot), &request, &WidgetConfig::default());
                if let Ok(order) = &placed {
                    self.orders.push(order.id);
                }
                answer(placed, |o| self.show_order(ids, &o))
            }
            Op::Orders(p, c, start, n) => {
                let first = start.and_then(|k| self.orders.get(usize::from(k) % self.orders.len().max(1)).copied());
                return walk(
                    first,
                    |after| svc.orders(&pid(p), &cid(c), after, usize::from(n)),
                    |page| {
                        let shown = format!(
                            "{:?} next {:?}",
                            page.orders.iter().map(|o| self.show_order(ids, o)).collect::<Vec<_>>(),
                            page.next.map(|o| self.order_name(&o))
                        );
                        (shown, page.next)
                    },
                );
            }
            Op::Order(p, k) => {
                let id = self.orders.get(usize::from(k) % self.orders.len().max(1)).copied();
                let id = id.unwrap_or_else(|| OrderId::from_uuid(scattered(2_000)));
                answer(svc.order(&pid(p), &id), |o| self.show_order(ids, &o))
            }
            Op::CloseSession(slot) => unit(svc.close_session(self.session(slot))),
            Op::ContactByEmail(p, e) => {
                let email = EMAILS.get(usize::from(e)).map_or(STRANGER, |(email, _)| email);
                answer(svc.contact_by_email(&pid(p), email), |c| ids.contact(&c))
            }
            Op::Invite(p, m, r) => {
                let role = ROLES[usize::from(r) % ROLES.len()];
                let issued = svc.invite_member_as_operator(OPERATOR, &pid(p), MEMBERS[usize::from(m)], role);
                if let Ok(i) = &issued {
                    self.invitations.insert(m, i.token.expose().to_owned());
                    self.names.push((i.invitation.id.to_string(), format!("invitation {}", self.names.len())));
                }
                answer(issued, |i| {
                    let i = i.invitation;
                    let id = self.named(&i.id.to_string());
                    format!("{id} {} {} at {} until {}", i.email, i.role.as_str(), i.created_at - T0, i.expires_at - T0)
                })
            }
            Op::Accept(m, good) => {
                let token = self.invitations.get(&m).map_or("inv_none", String::as_str);
                let accepted = svc.accept_invitation(token, if good { MEMBER_PASSWORD } else { "too short" });
                if let Ok((secret, session, _)) = &accepted {
                    self.member_sessions.insert(m, secret.expose().to_owned());
                    self.names.push((session.member.id.to_string(), session.member.email.clone()));
                }
                answer(accepted, |(_, session, setup)| {
                    format!("{} {:?} {}", Self::show_member(ids, &session.member), session.stage, created(setup))
                })
            }
            Op::FinishSetup(m, code) => {
                let text = self.code_text(target, Field::Pending, code, wrong);
                answer(svc.finish_member_setup(self.member_session(m), &text), |(session, codes)| {
                    format!(
                        "{} {:?} {} recovery codes",
                        Self::show_member(ids, &session.member),
                        session.stage,
                        codes.len()
                    )
                })
            }
            Op::MemberSignIn(m, right) => {
                let password = if right { MEMBER_PASSWORD } else { "not the password at all" };
                match svc.member_sign_in(MEMBERS[usize::from(m)], password) {
                    Ok(SignInNext::Code(secret)) => {
                        self.member_sessions.insert(m, secret.expose().to_owned());
                        Answer::Ok("code".to_owned())
                    }
                    Ok(SignInNext::Setup(secret, setup)) => {
                        self.member_sessions.insert(m, secret.expose().to_owned());
                        Answer::Ok(format!("setup {}", created(setup)))
                    }
                    Err(e) => e.into(),
                }
            }
            Op::MemberCode(m, code) => {
                let token = self.token(target, Field::Secret, code, wrong);
                answer(svc.member_sign_in_code(self.member_session(m), token), |session| {
                    format!("{} {:?}", Self::show_member(ids, &session.member), session.stage)
                })
            }
            Op::MemberSession(m) => answer(svc.dashboard_session(self.member_session(m)), |session| {
                format!("{} {:?}", Self::show_member(ids, &session.member), session.stage)
            }),
            Op::Team(m) => answer(self.member(m).and_then(|by| svc.team(&by)), |team| {
                let mut members: Vec<String> = team.members.iter().map(|m| Self::show_member(ids, m)).collect();
                let mut invitations: Vec<String> = team
                    .invitations
                    .iter()
                    .map(|i| {
                        let id = self.named(&i.id.to_string());
                        format!(
                            "{id} {} {} at {} until {}",
                            i.email,
                            i.role.as_str(),
                            i.created_at - T0,
                            i.expires_at - T0
                        )
                    })
                    .collect();
                // Members of one second are ordered by their ids, which differ per store.
                members.sort();
                invitations.sort();
                format!("{members:?} {invitations:?}")
            }),
            Op::SetRole(m, n, r) => {
                let role = ROLES[usize::from(r) % ROLES.len()];
                unit(self.member(m).and_then(|by| svc.set_member_role(&by, self.member_id(n), role)))
            }
            Op::RemoveMember(m, n) => unit(self.member(m).and_then(|by| svc.remove_member(&by, self.member_id(n)))),
            Op::SignOut(m) => unit(svc.end_dashboard_session(self.member_session(m))),
            Op::RollKey(m, o) => {
                let overlap = OVERLAPS[usize::from(o) % OVERLAPS.len()];
                let rolled =
                    self.member(m).and_then(|by| Ok((svc.member_roll_secret_key(&by, overlap)?, by.partner_id)));
                if let Ok((rolled, partner)) = &rolled {
                    let p = ids.partners.iter().position(|p| p == partner);
                    if let Some(keys) = p.and_then(|p| self.partner_keys.get_mut(p)) {
                        let old = std::mem::replace(&mut keys.secret, rolled.secret_key.expose().to_owned());
                        keys.previous = Some(old);
                    }
                }
                answer(rolled, |(r, _)| {
                    let previous = r.previous.map(|k| (k.last4.is_some(), k.expires_at - T0));
                    format!("{} previous {previous:?}", r.secret_key.expose().get(..11).unwrap_or_default())
                })
            }
            Op::Overview(p) => answer(svc.overview(&pid(p)), |o| format!("{o:?}")),
            Op::ContactCounts(p) => answer(svc.contact_counts(&pid(p)), |c| format!("{c:?}")),
            Op::ContactList(p, l, n) => {
                let list = LISTS[usize::from(l) % LISTS.len()];
                return walk(
                    None,
                    |after| svc.contacts_on(&pid(p), list, after.copied(), usize::from(n)),
                    |page| {
                        let shown: Vec<String> = page
                            .contacts
                            .iter()
                            .map(|c| {
                                format!(
                                    "{} enabled {} locked {} kyc {} codes {:?}",
                                    ids.contact(&c.contact_id),
                                    c.enabled,
                                    c.locked,
                                    c.kyc_passed,
                                    c.recovery_codes_remaining
                                )
                            })
                            .collect();
                        (format!("{shown:?}"), page.next)
                    },
                );
            }
            Op::PartnerOrders(p, filter, n) => {
                let filter = filter.of(ids);
                return walk(
                    None,
                    |after| svc.partner_orders(&pid(p), &filter, after, usize::from(n)),
                    |(orders, next)| {
                        let shown = format!(
                            "{:?} next {:?}",
                            orders.iter().map(|o| self.show_order(ids, o)).collect::<Vec<_>>(),
                            next.map(|o| self.order_name(&o))
                        );
                        (shown, *next)
                    },
                );
            }
        };
        vec![answer]
    }
}

/// A paged read walked to its end from the cursor `first`: each page as `show` tells it, with
/// the cursor of the next; a failure is the last answer.
fn walk<C, P>(
    first: Option<C>,
    mut fetch: impl FnMut(Option<&C>) -> rampart_core::Result<P>,
    mut show: impl FnMut(&P) -> (String, Option<C>),
) -> Vec<Answer> {
    let mut after = first;
    let mut pages = Vec::new();
    loop {
        match fetch(after.as_ref()) {
            Ok(page) => {
                assert!(pages.len() < 1_000, "a paged read does not end");
                let (shown, next) = show(&page);
                pages.push(shown);
                match next {
                    Some(next) => after = Some(next),
                    None => break,
                }
            }
            Err(e) => {
                let mut answers: Vec<Answer> = pages.into_iter().map(Answer::Ok).collect();
                answers.push(e.into());
                return answers;
            }
        }
    }
    vec![Answer::Ok(pages.join("; "))]
}

/// The steps an operation runs as: most are one step; an order first moves the clock.
fn steps(op: &Op) -> Vec<Op> {
    match *op {
        Op::Enrol(p, c) => vec![Op::Create(p, c), Op::Enable(p, c, Code::Right(0))],
        Op::Burst(p, c, n) => vec![Op::Verify(p, c, Code::Wrong); n.into()],
        Op::Hammer(p, c, n) => {
            let wrong = (0..n).flat_map(|_| [Op::Wait(p, c), Op::Verify(p, c, Code::Wrong)]);
            steps(&Op::Enrol(p, c)).into_iter().chain(wrong).collect()
        }
        Op::SignedIn(slot, p, e) => vec![
            Op::OpenSession(slot, p),
            Op::RequestCode(slot, e),
            Op::SignIn(slot, e, false),
            Op::SignIn(slot, e, true),
        ],
        Op::SessionEnrol(slot) => vec![Op::SessionCreate(slot), Op::SessionEnable(slot, Code::Right(0))],
        Op::Join(p, m, r) => vec![Op::Invite(p, m, r), Op::Accept(m, true), Op::FinishSetup(m, Code::Right(0))],
        Op::MemberSignedIn(m) => {
            vec![Op::MemberSignIn(m, true), Op::MemberCode(m, Code::Wrong), Op::MemberCode(m, Code::Right(0))]
        }
        Op::Staff(p, m, n, r) => [Op::Join(p, m, 0), Op::Join(p, n, r), Op::MemberSignedIn(m)]
            .iter()
            .flat_map(steps)
            .chain([Op::SetRole(m, n, (r + 1) % 3), Op::Team(m), Op::RollKey(m, r), Op::RemoveMember(m, n)])
            .collect(),
        Op::PlaceOrder(slot, a, n) => (0..n).flat_map(|_| [Op::Advance(1), Op::PlaceOrder(slot, a, 1)]).collect(),
        _ => vec![op.clone()],
    }
}

/// A six-digit code that is none of the codes near now of any store's secrets of the contact
/// the step submits a code for.
fn wrong_code(worlds: &[World], ids: &Ids, step: &Op) -> String {
    let mut taken = HashSet::new();
    for w in worlds {
        let Some(target) = w.target(ids, step) else { continue };
        for field in [Field::Secret, Field::Pending] {
            if let Some(s) = w.secret(target, field) {
                taken.extend((-3i64..=3).map(|k| totp::code_at(&s, w.now().checked_add_signed(k * 30).unwrap())));
            }
        }
    }
    (0..1_000_000).map(|v| format!("{v:06}")).find(|c| !taken.contains(c)).unwrap()
}

#[derive(Clone)]
struct Case {
    window: u8,
    throttling: bool,
    ops: Vec<Op>,
}

impl fmt::Debug for Case {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "window {}, throttling {}, {} operations:", self.window, self.throttling, self.ops.len())?;
        for (i, op) in self.ops.iter().enumerate() {
            writeln!(f, "  {i:3}: {op:?}")?;
        }
        Ok(())
    }
}

fn op() -> impl Strategy<Value = Op> {
    let p = || prop_oneof![8 => Just(0), 5 => Just(1), 1 => Just(NO_PARTNER)];
    let c = || prop_oneof![8 => 0..HOT, 1 => 0..CONTACTS as u8];
    let slot = || 0..SLOTS as u8;
    let email = || 0..EMAILS.len() as u8;
    let code = || {
        prop_oneof![
            8 => (-2i8..=2).prop_map(Code::Right),
            3 => Just(Code::LastAccepted),
            3 => Just(Code::Wrong),
            1 => Just(Code::Malformed),
            1 => Just(Code::Missing),
        ]
    };
    // Mostly within a step or two; now and then past the pending lifetime (600 s), a throttle
    // delay, or the session's idle limit (1800 s).
    let seconds = prop_oneof![
        8 => 1..=20u64,
        5 => Just(30u64),
        1 => Just(599u64),
        1 => Just(601u64),
        2 => prop::sample::select(vec![31u64, 61, 121, 241, 481, 961, 1_921, 3_601]),
    ];
    let key = prop_oneof![
        4 => Just(Key::Current),
        2 => Just(Key::Previous),
        1 => Just(Key::Publishable),
        1 => Just(Key::OtherEnvironment),
    ];
    // Orders are placed by the contacts that sign in.
    let buyer = prop_oneof![8 => prop::sample::select(EMAILS.map(|(_, c)| c as u8).to_vec()), 1 => 0..CONTACTS as u8];
    let page = || prop_oneof![8 => 1..=3u8, 1 => Just(0u8), 1 => Just(101u8)];
    let member = || 0..MEMBERS.len() as u8;
    let role = || 0..ROLES.len() as u8;
    // Bounds within the first hour or so, where a case's orders are.
    let bound = || prop::option::weighted(0.2, 0..4_000u16);
    let filter = (
        prop::option::weighted(0.2, 0..STATUSES.len() as u8),
        prop::option::weighted(0.2, prop::bool::weighted(0.8)),
        prop::option::weighted(0.3, 0..EMAILS.len() as u8),
        bound(),
        bound(),
    )
        .prop_map(|(status, btc, buyer, from, until)| Filter { status, btc, buyer, from, until });
    prop_oneof![
        12 => seconds.prop_map(Op::Advance),
        8 => (p(), c()).prop_map(|(p, c)| Op::Create(p, c)),
        10 => (p(), c(), code()).prop_map(|(p, c, k)| Op::Enable(p, c, k)),
        14 => (p(), c(), code()).prop_map(|(p, c, k)| Op::Verify(p, c, k)),
        4 => (p(), c(), code()).prop_map(|(p, c, k)| Op::Disable(p, c, k)),
        3 => (p(), c()).prop_map(|(p, c)| Op::Status(p, c)),
        4 => (p(), c(), any::<bool>()).prop_map(|(p, c, b)| Op::Kyc(p, c, b)),
        1 => (p(), any::<bool>()).prop_map(|(p, b)| Op::Waiver(p, b)),
        2 => (p(), c()).prop_map(|(p, c)| Op::ResetLock(p, c)),
        2 => (p(), c()).prop_map(|(p, c)| Op::Required(p, c)),
        2 => p().prop_map(Op::Requiring),
        3 => (p(), c()).prop_map(|(p, c)| Op::Record(p, c)),
        5 => (p(), c()).prop_map(|(p, c)| Op::Enrol(p, c)),
        2 => (p(), c(), 1..=8u8).prop_map(|(p, c, n)| Op::Burst(p, c, n)),
        2 => (p(), 0..HOT, prop_oneof![3 => 1..=10u8, 1 => 100..=105u8]).prop_map(|(p, c, n)| Op::Hammer(p, c, n)),
        1 => p().prop_map(Op::RotateKeys),
        3 => (p(), key).prop_map(|(p, k)| Op::Authenticate(p, k)),
        1 => p().prop_map(Op::Partner),
        2 => (prop::option::weighted(0.3, (p(), c())), 0..=9u8).prop_map(|(s, n)| Op::WithSecrets(s, n)),
        1 => Just(Op::Rewrap),
        1 => Just(Op::AuditLog),
        2 => (slot(), p()).prop_map(|(s, p)| Op::OpenSession(s, p)),
        4 => (slot(), p(), email()).prop_map(|(s, p, e)| Op::SignedIn(s, p, e)),
        3 => (slot(), email()).prop_map(|(s, e)| Op::RequestCode(s, e)),
        3 => (slot(), email(), prop::bool::weighted(0.8)).prop_map(|(s, e, r)| Op::SignIn(s, e, r)),
        2 => slot().prop_map(Op::SessionState),
        2 => slot().prop_map(Op::SessionKyc),
        2 => slot().prop_map(Op::SessionCreate),
        3 => slot().prop_map(Op::SessionEnrol),
        1 => (p(), c()).prop_map(|(p, c)| Op::Wait(p, c)),
        2 => (slot(), code()).prop_map(|(s, k)| Op::SessionEnable(s, k)),
        4 => (slot(), code()).prop_map(|(s, k)| Op::SessionVerify(s, k)),
        5 => (slot(), 0..AMOUNTS.len() as u8, 1..=3u8).prop_map(|(s, a, n)| Op::PlaceOrder(s, a, n)),
        4 => (p(), buyer, prop::option::weighted(0.3, any::<u8>()), page()).prop_map(|(p, c, k, n)| Op::Orders(p, c, k, n)),
        1 => (p(), any::<u8>()).prop_map(|(p, k)| Op::Order(p, k)),
        1 => slot().prop_map(Op::CloseSession),
        1 => (p(), 0..=EMAILS.len() as u8).prop_map(|(p, e)| Op::ContactByEmail(p, e)),
        // The dashboard: the team, its sign-in and sessions, the key roll, the lists.
        1 => (p(), member(), role()).prop_map(|(p, m, r)| Op::Invite(p, m, r)),
        1 => (member(), prop::bool::weighted(0.8)).prop_map(|(m, g)| Op::Accept(m, g)),
        1 => (member(), code()).prop_map(|(m, k)| Op::FinishSetup(m, k)),
        2 => (p(), member(), role()).prop_map(|(p, m, r)| Op::Join(p, m, r)),
        1 => (member(), prop::bool::weighted(0.7)).prop_map(|(m, r)| Op::MemberSignIn(m, r)),
        1 => (member(), code()).prop_map(|(m, k)| Op::MemberCode(m, k)),
        3 => member().prop_map(Op::MemberSignedIn),
        1 => (p(), member(), member(), role()).prop_map(|(p, m, n, r)| Op::Staff(p, m, n, r)),
        1 => member().prop_map(Op::MemberSession),
        2 => member().prop_map(Op::Team),
        2 => (member(), member(), role()).prop_map(|(m, n, r)| Op::SetRole(m, n, r)),
        1 => (member(), member()).prop_map(|(m, n)| Op::RemoveMember(m, n)),
        1 => member().prop_map(Op::SignOut),
        2 => (member(), 0..OVERLAPS.len() as u8).prop_map(|(m, o)| Op::RollKey(m, o)),
        1 => p().prop_map(Op::Overview),
        1 => p().prop_map(Op::ContactCounts),
        1 => (p(), 0..LISTS.len() as u8, page()).prop_map(|(p, l, n)| Op::ContactList(p, l, n)),
        3 => (p(), filter, page()).prop_map(|(p, f, n)| Op::PartnerOrders(p, f, n)),
    ]
}

fn case(ops: std::ops::RangeInclusive<usize>) -> impl Strategy<Value = Case> {
    (
        prop_oneof![1 => Just(0u8), 4 => Just(1u8), 1 => Just(2u8)],
        prop::bool::weighted(0.85),
        prop::collection::vec(op(), ops),
    )
        .prop_map(|(window, throttling, ops)| Case { window, throttling, ops })
}

/// What the answers were, across every case: the test checks that the sequences reached the
/// states worth comparing (so a change of weights cannot leave it comparing nothing).
static SEEN: Mutex<BTreeMap<String, usize>> = Mutex::new(BTreeMap::new());

fn op_name(op: &Op) -> String {
    let debug = format!("{op:?}");
    debug.split(['(', ' ']).next().unwrap_or_default().to_owned()
}

/// Where the stores first answered differently: the operation's index and the answers.
#[derive(Debug)]
struct Mismatch {
    at: usize,
    why: String,
}

/// Run a case on a fresh store of each kind, comparing every step's answers.
fn check(case: &Case) -> Result<(), Mismatch> {
    let ids = Ids::new();
    let config = Config { window: case.window, throttling: case.throttling, ..Config::default() };
    let mut worlds = [
        World::new("memory", Backend::Memory, &ids, &config),
        World::new("sqlite", Backend::Sqlite, &ids, &config),
        World::new("postgresql", Backend::Postgres, &ids, &config),
    ];
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    'ops: for (at, op) in case.ops.iter().enumerate() {
        for step in steps(op) {
            let wrong = wrong_code(&worlds, &ids, &step);
            let answers: Vec<Vec<Answer>> = worlds.iter_mut().map(|w| w.apply(&ids, &step, &wrong)).collect();
            if worlds.iter().any(|w| w.coincidence.get()) {
                *seen.entry("(a case cut short: two steps of a secret share a code)".to_owned()).or_default() += 1;
                break 'ops;
            }
            if answers.iter().any(|a| *a != answers[0]) {
                let mut why = format!("operation {at} ({step:?}) answered differently:\n");
                for (w, a) in worlds.iter().zip(&answers) {
                    let _ = writeln!(why, "  {:<10} {a:?}", w.name);
                }
                return Err(Mismatch { at, why });
            }
            for a in &answers[0] {
                let outcome = match a {
                    Answer::Ok(text) if text.starts_with("Accepted") || text.starts_with("Rejected") => {
                        text.split(' ').next().unwrap_or_default().to_owned()
                    }
                    Answer::Ok(text) if text.contains("next Some") => "a next page".to_owned(),
                    Answer::Ok(_) => "ok".to_owned(),
                    Answer::Err { kind, .. } => (*kind).to_owned(),
                };
                *seen.entry(format!("{} {outcome}", op_name(&step))).or_default() += 1;
            }
        }
    }
    let mut all = SEEN.lock().unwrap_or_else(PoisonError::into_inner);
    for (k, n) in seen {
        *all.entry(k).or_default() += n;
    }
    Ok(())
}

/// [`check`], a panic counting as a difference at the last operation.
fn attempt(case: &Case) -> Result<(), Mismatch> {
    std::panic::catch_unwind(|| check(case)).unwrap_or_else(|panic| {
        let text =
            panic.downcast_ref::<String>().cloned().or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()));
        Err(Mismatch { at: case.ops.len().saturating_sub(1), why: format!("panicked: {}", text.unwrap_or_default()) })
    })
}

/// A shorter sequence that still shows a difference: cut after the first difference, then drop
/// runs of operations, halving their length, while a difference remains. (Proptest's own
/// shrinking cannot go below the generated length's minimum and, at a second a run, takes many
/// minutes to remove operations one at a time.)
fn minimise(mut case: Case, mut found: Mismatch, budget: std::time::Duration) -> (Case, Mismatch) {
    let began = Instant::now();
    case.ops.truncate(found.at + 1);
    let mut run = case.ops.len().div_ceil(2);
    while run > 0 && began.elapsed() < budget {
        let mut start = 0;
        while start < case.ops.len() && began.elapsed() < budget {
            let mut trial = case.clone();
            trial.ops.drain(start..(start + run).min(trial.ops.len()));
            match attempt(&trial) {
                Err(m) => {
                    trial.ops.truncate(m.at + 1);
                    (case, found) = (trial, m);
                }
                Ok(()) => start += run,
            }
        }
        run /= 2;
    }
    (case, found)
}

/// T18: the same random operation sequences over 2 partners x 100 contacts (and a partner
/// that does not exist) on the memory, SQLite and PostgreSQL stores give the same answers,
/// operation by operation, and the same cursor orders. The sequences cover the 2FA lifecycle
/// (create; enable, verify and disable with right, wrong, replayed, malformed and missing
/// codes; status; KYC and waivers; the lock and its reset; the clock crossing the pending
/// lifetime and throttle waits), partner keys (rotation, authentication with current, old,
/// publishable and other-environment keys), the audit log, the widget (sessions, sign-in
/// codes, 2FA in the session, orders), and the partner dashboard (invitations, members
/// accepting with their own TOTP, the password and code steps, idle sessions, the team, roles,
/// removals, the last-owner rule, the key roll with its overlap, the overview, the contact
/// counts and lists, the partner's orders under filters). Reads that list are walked to their
/// end in small pages: `contacts_with_secrets`, `kyc_contacts_without_2fa`,
/// `contacts_requiring_2fa`, the contact's orders, the contact lists, the partner's orders.
/// Members' ids are random per store: answers name them by email. A fixed seed; a difference
/// prints the shortest sequence found to show it.
#[test]
fn same_answers_on_memory_sqlite_and_postgres() {
    const CASES: u32 = 16;
    let _serial = one_at_a_time();
    // Proptest generates (a fixed seed: the same cases every run); `minimise` shrinks.
    let config = ProptestConfig {
        cases: CASES,
        rng_seed: RngSeed::Fixed(0x5241_4D50_4152_5400),
        failure_persistence: None,
        max_shrink_iters: 0,
        ..ProptestConfig::default()
    };
    let began = Instant::now();
    let mut runner = TestRunner::new(config);
    let result = runner.run(&case(200..=300), |case| attempt(&case).map_err(|m| TestCaseError::fail(m.why)));
    match result {
        Ok(()) => {}
        Err(TestError::Fail(why, case)) => match attempt(&case) {
            Err(found) => {
                let (case, found) = minimise(case, found, std::time::Duration::from_secs(180));
                panic!("the stores disagree: {}\nshortest sequence found: {case:?}", found.why);
            }
            Ok(()) => panic!("the stores disagreed, but not when the case ran again: {why}\nsequence: {case:?}"),
        },
        Err(TestError::Abort(why)) => panic!("aborted: {why}"),
    }
    let seen = SEEN.lock().unwrap_or_else(PoisonError::into_inner);
    let compared: usize = seen.values().sum();
    eprintln!("{CASES} cases, {compared} answers compared, in {:.2?}; outcomes: {seen:?}", began.elapsed());
    let expected = [
        "Create ok",
        "Create must_disable_first",
        "Create partner_not_found",
        "Enable ok",
        "Enable token_failed",
        "Enable not_created",
        "Enable already_enabled",
        "Verify Accepted",
        "Verify Rejected",
        "Verify not_enabled",
        "Verify throttled",
        "Verify token_missing",
        "Verify locked",
        "Disable ok",
        "Disable token_failed",
        "Disable locked",
        "Authenticate ok",
        "Authenticate unauthorized",
        "WithSecrets ok",
        "SignIn ok",
        "SignIn sign_in_code_failed",
        "SessionVerify ok",
        "SessionEnable ok",
        "SessionCreate must_disable_first",
        "PlaceOrder ok",
        "PlaceOrder two_factor_required",
        "Orders a next page",
        "Invite ok",
        "Invite member_exists",
        "Accept ok",
        "Accept invitation_not_found",
        "FinishSetup ok",
        "MemberSignIn ok",
        "MemberSignIn sign_in_failed",
        "MemberCode ok",
        "MemberCode token_failed",
        "MemberSession ok",
        "MemberSession dashboard_session_required",
        "Team ok",
        "SetRole ok",
        "RemoveMember ok",
        "RollKey ok",
        "ContactList ok",
        "PartnerOrders a next page",
    ];
    let missing: Vec<&str> = expected.iter().copied().filter(|k| !seen.contains_key(*k)).collect();
    assert!(missing.is_empty(), "the sequences never reached {missing:?}: adjust the operation weights");
}

// ---------------------------------------------------------------------------------------------
// T17: at rest

/// A directory of the throwaway cluster. The at-rest test needs the cluster itself, so it fails
/// (never skips) against a database given by URL alone.
fn cluster_path(var: &str) -> PathBuf {
    match std::env::var_os(var) {
        Some(v) if !v.is_empty() => PathBuf::from(v),
        _ => panic!(
            "{var} is not set: the at-rest test reads the PostgreSQL cluster itself (pg_dump from \
             RAMPART_TEST_PG_BIN, every file under RAMPART_TEST_PGDATA), which scripts/with-postgres.sh \
             provides for the cluster it starts. With RAMPART_TEST_DATABASE_URL naming an external database \
             it cannot check anything: run `make pg-test` without RAMPART_TEST_DATABASE_URL, or also set \
             RAMPART_TEST_PG_BIN and RAMPART_TEST_PGDATA for that database's cluster"
        ),
    }
}

/// Every file under `dir`, recursively.
fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| {
        panic!("cannot list {}: {e} (run the test as root or as the cluster's owner)", dir.display())
    });
    for entry in entries {
        let entry = entry.unwrap();
        let kind = entry.file_type().unwrap();
        if kind.is_dir() {
            files_under(&entry.path(), out);
        } else if kind.is_file() {
            out.push(entry.path());
        }
    }
}

/// T17: after create and enable (20- and 32-byte secrets; 32 bytes make base32 padding), a
/// superseded and a live pending create, a verify and a key rotation, neither `pg_dump` output
/// nor any file of the cluster (after a CHECKPOINT: data files and WAL) holds a secret (raw,
/// base32 of either case with or without padding, hex of either case) or a secret key (as
/// given, its random part, that part decoded). Control values written beside them, through the
/// store (a partner name) and straight into a table (the raw bytes and base32 of a random
/// 20-byte "secret"), are found, so the scan cannot pass by looking in the wrong place.
#[test]
fn no_secret_or_secret_key_at_rest_in_pg_dump_data_files_or_wal() {
    let _serial = one_at_a_time();
    let bin = cluster_path("RAMPART_TEST_PG_BIN");
    let pgdata = cluster_path("RAMPART_TEST_PGDATA");
    let url = std::env::var("RAMPART_TEST_DATABASE_URL").expect("RAMPART_TEST_DATABASE_URL is not set");
    let pg_dump = bin.join("pg_dump");
    assert!(pg_dump.is_file(), "no pg_dump in RAMPART_TEST_PG_BIN ({})", pg_dump.display());
    assert!(pgdata.join("PG_VERSION").is_file(), "RAMPART_TEST_PGDATA ({}) is not a data directory", pgdata.display());

    let f = Fixture::new(Backend::Postgres);
    let long = Service::builder_shared(f.store.store.clone())
        .master_keys(KeyRing::new(1, &MASTER_KEY))
        .config(Config { secret_bytes: 32, ..Config::default() })
        .clock(f.clock.clone())
        .build()
        .unwrap();
    let mut secrets: Vec<(&str, Secret)> = Vec::new();
    // Created and enabled, then used.
    let (enabled, enabled_long, pending) = (common::contact(), common::contact(), common::contact());
    let s = f.enabled(&enabled);
    assert!(f.service.verify_2fa(&f.partner, &enabled, f.code(&s, 0).as_str()).unwrap().is_accepted());
    secrets.push(("the enabled 20-byte secret", s));
    let s = Secret::from_base32(&long.create_2fa(&f.partner, &enabled_long, None).unwrap().manual).unwrap();
    let codes = long.enable_2fa(&f.partner, &enabled_long, f.code(&s, 0).as_str()).unwrap();
    // Recovery codes: one used (the set rewritten), the rest never.
    let first = rampart_core::Factor::recovery_code(&codes.as_slice()[0]);
    assert!(long.verify_2fa(&f.partner, &enabled_long, first).unwrap().is_accepted());
    secrets.push(("the enabled 32-byte secret", s));
    // Created twice: the first pending secret is replaced, the second waits to be enabled.
    secrets.push(("the replaced pending secret", f.create(&pending)));
    let s = Secret::from_base32(&long.create_2fa(&f.partner, &pending, None).unwrap().manual).unwrap();
    secrets.push(("the pending secret", s));
    // Secret keys: the fixture partner's after a rotation, and a new partner's.
    let rotated = f.service.rotate_keys("at-rest test", &f.partner).unwrap();
    let marker = format!("at-rest control {}", uuid::Uuid::new_v4().simple());
    let second = f.service.create_partner(&marker, Environment::Sandbox).unwrap();
    assert!(f.service.authenticate(second.secret_key.expose()).is_ok());

    let mut needles = Vec::new();
    for (name, secret) in &secrets {
        needles.extend(secret_forms(name, secret));
    }
    for code in codes.as_slice() {
        let plain = code.replace('-', "");
        for form in [code.clone(), plain.clone(), plain.to_lowercase()] {
            needles.push(("a recovery code".to_owned(), form.into_bytes()));
        }
    }
    for (name, key) in
        [("the rotated secret key", &rotated.secret_key), ("the new partner's secret key", &second.secret_key)]
    {
        let key = key.expose();
        let random = key.strip_prefix("sk_sandbox_").unwrap();
        needles.push((name.to_owned(), key.as_bytes().to_vec()));
        needles.push((format!("{name} (its random part)"), random.as_bytes().to_vec()));
        needles.push((format!("{name} (its random part, decoded)"), bs58::decode(random).into_vec().unwrap()));
    }
    // Controls: the partner name, through the store; a random "secret" as raw bytes and base32
    // text, three rows (a WAL record split by a page header hides one; three are not all split).
    let control = Secret::generate(20).unwrap();
    let control_forms = secret_forms("control", &control);
    let control_raw = control_forms[0].0.clone();
    let control_b32 = "control (base32, upper case)".to_owned();
    let control_hex = "control (hex, lower case)".to_owned();
    needles.extend(control_forms);
    needles.push(("control: the new partner's name".to_owned(), marker.clone().into_bytes()));
    let needles = Needles::new(needles);
    let config: postgres::Config = url.parse().unwrap();
    let mut client = config.connect(postgres::NoTls).unwrap();
    let schema = format!("at_rest_control_{}", uuid::Uuid::new_v4().simple());
    client
        .batch_execute(&format!("CREATE SCHEMA {schema}; CREATE TABLE {schema}.control (raw BYTEA, text TEXT)"))
        .unwrap();
    for _ in 0..3 {
        client
            .execute(
                &format!("INSERT INTO {schema}.control VALUES ($1, $2)"),
                &[&control.as_bytes(), &data_encoding::BASE32.encode(control.as_bytes())],
            )
            .unwrap();
    }
    client.batch_execute("CHECKPOINT").unwrap();

    // pg_dump of the whole database.
    let began = Instant::now();
    let dump = std::process::Command::new(&pg_dump).arg("--no-password").arg("--dbname").arg(&url).output().unwrap();
    assert!(dump.status.success(), "pg_dump failed: {}", String::from_utf8_lossy(&dump.stderr));
    let found: HashSet<&str> = needles.found_in(&dump.stdout).into_iter().collect();
    let leaked: Vec<&&str> = found.iter().filter(|l| !l.starts_with("control")).collect();
    assert!(leaked.is_empty(), "pg_dump output holds {leaked:?}");
    for control in ["control: the new partner's name", &control_b32, &control_hex] {
        assert!(
            found.contains(control),
            "the scan does not find {control} in pg_dump output ({} bytes)",
            dump.stdout.len()
        );
    }

    // Every file of the cluster: data files, WAL, everything else.
    let mut files = Vec::new();
    files_under(&pgdata, &mut files);
    let (mut scanned, mut vanished) = (0usize, 0usize);
    let mut found_where: HashMap<String, Vec<PathBuf>> = HashMap::new();
    for path in &files {
        let bytes = match std::fs::read(path) {
            Ok(bytes) => bytes,
            // Temporary and statistics files come and go while the server runs.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                vanished += 1;
                continue;
            }
            Err(e) => panic!(
                "cannot read {}: {e}: the at-rest test must read every file of the cluster (run it as root or as \
                 the cluster's owner)",
                path.display()
            ),
        };
        scanned += bytes.len();
        for label in needles.found_in(&bytes) {
            found_where.entry(label.to_owned()).or_default().push(path.strip_prefix(&pgdata).unwrap().to_owned());
        }
    }
    let leaked: Vec<_> = found_where.iter().filter(|(l, _)| !l.starts_with("control")).collect();
    assert!(leaked.is_empty(), "the cluster's files hold {leaked:?}");
    let within =
        |label: &str, dir: &str| found_where.get(label).is_some_and(|paths| paths.iter().any(|p| p.starts_with(dir)));
    for control in [&control_raw, &control_b32] {
        assert!(within(control, "base"), "the scan does not find {control} in the data files: {found_where:?}");
        assert!(within(control, "pg_wal"), "the scan does not find {control} in the WAL: {found_where:?}");
    }
    assert!(
        within("control: the new partner's name", "base"),
        "the scan does not find the partner name: {found_where:?}"
    );
    eprintln!(
        "pg_dump {} bytes; {} files, {} MB scanned ({vanished} vanished while listed) in {:.2?}",
        dump.stdout.len(),
        files.len(),
        scanned / 1_000_000,
        began.elapsed()
    );
}
