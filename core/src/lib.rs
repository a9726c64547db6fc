//! # rampart-core
//!
//! TOTP two-factor authentication for a partner's contacts, partner keys and widget settings,
//! over a pluggable [`store::Store`] (embedded SQLite by default).
//!
//! ```
//! use rampart_core::{ContactId, KeyRing, MemoryStore, Service, Environment, totp};
//!
//! let service = Service::builder(MemoryStore::new()).master_keys(KeyRing::generate()?).build()?;
//! let partner = service.create_partner("Acme", Environment::Sandbox)?.partner_id;
//! let contact = ContactId::parse("6f1c2a4e-93b1-4c55-8f1e-0b9b6a0d2c11")?;
//!
//! let setup = service.create_2fa(&partner, &contact, None)?; // show setup.qr_code
//! let secret = totp::Secret::from_base32(&setup.manual)?;    // the user's app holds this
//! let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
//! service.enable_2fa(&partner, &contact, totp::code_at(&secret, now).as_str())?;
//! assert!(service.status_2fa(&partner, &contact)?);
//! # Ok::<(), rampart_core::Error>(())
//! ```

#![deny(missing_docs)]
pub mod audit;
pub mod chain;
pub mod checkout;
pub mod clock;
pub mod crypto;
pub mod egress;
pub mod error;
mod fsutil;
pub mod ids;
pub mod lifecycle;
pub mod metrics;
pub mod partner;
pub mod recovery;
pub mod reports;
pub mod rewrap;
pub mod service;
pub mod store;
pub mod team;
pub mod token;
pub mod totp;
pub mod vocab;
pub mod webhooks;
pub mod widget;

pub use audit::{AuditPage, AuditRow, ChainReport};
pub use checkout::{Order, OrderPage, OrderRequest, SessionState, SessionToken, SignInCode, TwoFactorStep};
pub use clock::{Clock, ManualClock, SystemClock};
pub use crypto::KeyRing;
pub use error::{Error, ErrorKind, Result};
pub use ids::{ContactId, OrderId, PartnerId};
pub use lifecycle::{TwoFactorSetup, Verification};
pub use partner::{AuthMethod, Authenticated, Environment, Partner, PartnerCredentials, SecretKey};
pub use recovery::{ContactState, Factor, Method, PurchaseCheck, RecoveryCode, RecoveryCodes};
pub use rewrap::RewrapReport;
pub use service::{Config, Service, ServiceBuilder};
pub use store::{MemoryStore, SqliteStore, Store, StoreError};
#[cfg(feature = "postgres")]
pub use store::{PostgresOptions, PostgresStore};
pub use token::Token;
