//! Identifiers in the partner's words: a partner, its contacts and their widget orders.

use std::fmt;
use std::str::FromStr;

use uuid::Uuid;

use crate::error::{Error, ErrorKind};

/// A partner's id (the description's superuser UUID; also the legacy widget `apiKey`).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PartnerId(Uuid);

/// An end user of a partner, identified by a UUID chosen by the partner.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ContactId(Uuid);

/// A widget order, identified by a random UUID.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct OrderId(Uuid);

/// Parse the hyphenated 8-4-4-4-12 form only (any case). `Uuid::try_parse` also takes the
/// simple, braced and URN forms, which the wire contract does not.
fn parse_hyphenated(s: &str) -> Option<Uuid> {
    let b = s.as_bytes();
    let hyphens_right = b.len() == 36
        && b.iter().enumerate().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => *c == b'-',
            _ => c.is_ascii_hexdigit(),
        });
    if hyphens_right { Uuid::try_parse(s).ok() } else { None }
}

macro_rules! uuid_id {
    ($ty:ident, $err:expr) => {
        impl $ty {
            /// Wrap a UUID.
            pub const fn from_uuid(uuid: Uuid) -> Self {
                Self(uuid)
            }

            /// The UUID.
            pub const fn as_uuid(&self) -> &Uuid {
                &self.0
            }

            /// The 16 bytes of the UUID.
            pub const fn as_bytes(&self) -> &[u8; 16] {
                self.0.as_bytes()
            }

            /// Parse a hyphenated UUID, any case.
            pub fn parse(s: &str) -> Result<Self, Error> {
                parse_hyphenated(s).map(Self).ok_or_else(|| $err)
            }
        }

        impl FromStr for $ty {
            type Err = Error;
            fn from_str(s: &str) -> Result<Self, Error> {
                Self::parse(s)
            }
        }

        impl fmt::Display for $ty {
            /// Lowercase hyphenated, as stored.
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                fmt::Display::fmt(&self.0.hyphenated(), f)
            }
        }

        impl fmt::Debug for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}({})", stringify!($ty), self.0.hyphenated())
            }
        }

        impl From<Uuid> for $ty {
            fn from(uuid: Uuid) -> Self {
                Self(uuid)
            }
        }
    };
}

uuid_id!(PartnerId, Error::invalid_input("partnerId", "must be a UUID"));
uuid_id!(ContactId, Error::new(ErrorKind::ContactIdInvalid));
uuid_id!(OrderId, Error::invalid_input("orderId", "must be a UUID"));

impl OrderId {
    /// A fresh random id.
    pub fn random() -> Self {
        Self(Uuid::new_v4())
    }
}

impl PartnerId {
    /// A fresh random id.
    pub fn random() -> Self {
        Self(Uuid::new_v4())
    }
}

impl ContactId {
    /// A fresh random id (a contact who signed in to the widget by email).
    pub fn random() -> Self {
        Self(Uuid::new_v4())
    }

    /// Parse an optional `contactId` the way the HTTP API does: absent or empty is
    /// "contactId is required", anything but a hyphenated UUID "contactId must be a UUID".
    pub fn parse_field(value: Option<&str>) -> Result<Self, Error> {
        match value {
            None | Some("") => Err(ErrorKind::ContactIdRequired.into()),
            Some(s) => Self::parse(s),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contact_ids() {
        let lower = "6f1c2a4e-93b1-4c55-8f1e-0b9b6a0d2c11";
        let c = ContactId::parse(&lower.to_uppercase()).unwrap();
        assert_eq!(c.to_string(), lower);
        for bad in [
            "",
            "6f1c2a4e93b14c558f1e0b9b6a0d2c11",
            "{6f1c2a4e-93b1-4c55-8f1e-0b9b6a0d2c11}",
            "urn:uuid:6f1c2a4e-93b1-4c55-8f1e-0b9b6a0d2c11",
            "6f1c2a4e-93b1-4c55-8f1e-0b9b6a0d2c1g",
            "6f1c2a4e-93b1-4c55-8f1e-0b9b6a0d2c111",
            " 6f1c2a4e-93b1-4c55-8f1e-0b9b6a0d2c11",
            "6f1c2a4e-93b1-4c55-8f1e\u{2010}0b9b6a0d2c11",
        ] {
            assert_eq!(ContactId::parse(bad).unwrap_err().kind(), ErrorKind::ContactIdInvalid, "{bad}");
        }
        assert_eq!(ContactId::parse_field(None).unwrap_err().kind(), ErrorKind::ContactIdRequired);
        assert_eq!(ContactId::parse_field(Some("")).unwrap_err().kind(), ErrorKind::ContactIdRequired);
    }
}
