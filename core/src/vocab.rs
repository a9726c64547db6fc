//! The words every layer shares: the bottom of the core, beside `ids`, `error` and `clock`.
//! The store and the sealing code depend on this module and nothing above it (`make test`
//! step 1 checks), so the modules above (service, lifecycle, partner, audit, ...) can each do
//! one job without import cycles.

use std::fmt;
use std::str::FromStr;

use crate::error::{Error, Result};

/// `sandbox` or `production`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Environment {
    /// Test keys, test widget, testnet addresses allowed.
    Sandbox,
    /// Live keys.
    Production,
}

impl Environment {
    /// `"sandbox"` or `"production"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Sandbox => "sandbox",
            Self::Production => "production",
        }
    }
}

impl FromStr for Environment {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "sandbox" => Ok(Self::Sandbox),
            "production" => Ok(Self::Production),
            _ => Err(Error::invalid_input("environment", "must be sandbox or production")),
        }
    }
}

impl fmt::Display for Environment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A partner team member's role in the dashboard (SPEC 11).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Role {
    /// Everything, the team included.
    Owner,
    /// Keys, widget settings and webhooks; reads everything else.
    Developer,
    /// Reads only.
    Viewer,
}

impl Role {
    /// `"owner"`, `"developer"` or `"viewer"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Owner => "owner",
            Self::Developer => "developer",
            Self::Viewer => "viewer",
        }
    }
}

impl FromStr for Role {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "owner" => Ok(Self::Owner),
            "developer" => Ok(Self::Developer),
            "viewer" => Ok(Self::Viewer),
            _ => Err(Error::invalid_input("role", "must be owner, developer or viewer")),
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How far a dashboard session has come.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionStage {
    /// The password was right; the authenticator code is next.
    Password,
    /// The member has a password but no authenticator yet: only its setup is open.
    Setup,
    /// Signed in.
    SignedIn,
}

impl SessionStage {
    /// `"password"`, `"setup"` or `"signed_in"`, as stored.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Password => "password",
            Self::Setup => "setup",
            Self::SignedIn => "signed_in",
        }
    }
}

impl FromStr for SessionStage {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "password" => Ok(Self::Password),
            "setup" => Ok(Self::Setup),
            "signed_in" => Ok(Self::SignedIn),
            _ => Err(Error::invalid_input("stage", "must be password, setup or signed_in")),
        }
    }
}

/// Consecutive failures at which a contact's 2FA locks until an operator reset (SPEC 2); the
/// stores' lists of locked contacts use it too.
pub const LOCK_AFTER: u32 = 100;

/// The leading bytes of a sealed value that name its key: the format version and the key id.
/// Stores group sealed values by them to find the key ids in use.
pub const KEY_HEADER_LEN: usize = 1 + 4;

/// Which secret of a contact a ciphertext holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// The enabled secret.
    Secret,
    /// A created secret not yet confirmed.
    Pending,
    /// A webhook endpoint's signing secret (sealed under the endpoint's id in place of a
    /// contact's).
    WebhookSecret,
}

impl Field {
    pub(crate) fn name(self) -> &'static [u8] {
        match self {
            Self::Secret => b"secret",
            Self::Pending => b"pending",
            Self::WebhookSecret => b"webhook_secret",
        }
    }
}
