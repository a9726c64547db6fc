//! Secrets at rest: AES-256-GCM under a master key ring.
//!
//! A sealed value is `[version = 1][key id: u32 BE][nonce: 12 bytes][ciphertext + tag]`. The
//! nonce is fresh from the OS CSPRNG on every write. The associated data binds the partner id,
//! the contact id, the field name and the key id, so a ciphertext copied to another contact,
//! partner or field fails to open (the lifecycle then fails closed).
//!
//! Keys rotate by adding a key with a higher id: new writes use the highest id, old rows still
//! open under their own key id.

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

use aes_gcm::aead::{Aead, KeyInit, Payload};
use aes_gcm::{Aes256Gcm, Nonce};
use zeroize::{Zeroize, Zeroizing};

use crate::error::{Error, ErrorKind, Result};
use crate::ids::{ContactId, PartnerId};

const VERSION: u8 = 1;
const NONCE_LEN: usize = 12;
const HEADER_LEN: usize = 1 + 4 + NONCE_LEN;

/// Fill `buf` from the OS CSPRNG.
pub(crate) fn fill_random(buf: &mut [u8]) -> Result<()> {
    getrandom::fill(buf).map_err(|e| Error::new(ErrorKind::Internal).with_cause(e.to_string()))
}

/// Which secret of a contact a ciphertext holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// The enabled secret.
    Secret,
    /// A created secret not yet confirmed.
    Pending,
}

impl Field {
    fn name(self) -> &'static [u8] {
        match self {
            Self::Secret => b"secret",
            Self::Pending => b"pending",
        }
    }
}

/// The master key ring. Prints only its key ids.
#[derive(Clone)]
pub struct KeyRing {
    current: u32,
    ciphers: BTreeMap<u32, Aes256Gcm>,
}

/// Opening a sealed value failed (wrong key, tampered or moved ciphertext, unknown key id).
#[derive(Debug, thiserror::Error)]
#[error("sealed value does not open: {0}")]
pub struct OpenError(&'static str);

impl KeyRing {
    /// A ring with one key.
    pub fn new(key_id: u32, key: &[u8; 32]) -> Self {
        let mut ring = Self { current: key_id, ciphers: BTreeMap::new() };
        ring.add(key_id, key);
        ring
    }

    /// A ring with one fresh random key (id 1); for tests and ephemeral in-memory use.
    pub fn generate() -> Result<Self> {
        let mut key = Zeroizing::new([0u8; 32]);
        fill_random(key.as_mut())?;
        Ok(Self::new(1, &key))
    }

    /// Add a key; the highest id is the one new writes use.
    pub fn add(&mut self, key_id: u32, key: &[u8; 32]) {
        self.ciphers.insert(key_id, Aes256Gcm::new(key.into()));
        self.current = self.current.max(key_id);
    }

    /// The id new writes use.
    pub fn current_key_id(&self) -> u32 {
        self.current
    }

    /// Whether a sealed value names the current key (it may still fail to open: this reads
    /// only its header).
    pub fn is_current(&self, sealed: &[u8]) -> bool {
        sealed.len() >= HEADER_LEN
            && sealed[0] == VERSION
            && u32::from_be_bytes([sealed[1], sealed[2], sealed[3], sealed[4]]) == self.current
    }

    /// Parse a key file: one key per line, `ID:HEX` (64 hex digits), or a single bare `HEX`
    /// line meaning id 1. Blank lines and lines starting with `#` are ignored.
    pub fn from_key_file_text(text: &str) -> Result<Self> {
        let bad = || Error::config("master key file must hold lines of ID:HEX with 64 hex digits");
        let mut ring: Option<Self> = None;
        for line in text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')) {
            let (id, hex) = match line.split_once(':') {
                Some((id, hex)) => (id.trim().parse::<u32>().map_err(|_| bad())?, hex.trim()),
                None => (1, line),
            };
            let mut bytes =
                Zeroizing::new(data_encoding::HEXLOWER_PERMISSIVE.decode(hex.as_bytes()).map_err(|_| bad())?);
            let key: &[u8; 32] = bytes.as_slice().try_into().map_err(|_| bad())?;
            match ring.as_mut() {
                Some(r) => r.add(id, key),
                None => ring = Some(Self::new(id, key)),
            }
            bytes.zeroize();
        }
        ring.ok_or_else(bad)
    }

    /// Read a key file (see [`KeyRing::from_key_file_text`]).
    pub fn load(path: &Path) -> Result<Self> {
        let text = Zeroizing::new(
            std::fs::read_to_string(path)
                .map_err(|e| Error::config(format!("cannot read master key file {}", path.display())).with_cause(e))?,
        );
        Self::from_key_file_text(&text)
    }

    /// Read the key file, or create it (mode 0600) with one fresh key when it does not exist.
    pub fn load_or_generate(path: &Path) -> Result<Self> {
        if path.exists() {
            return Self::load(path);
        }
        let mut key = Zeroizing::new([0u8; 32]);
        fill_random(key.as_mut())?;
        let text = Zeroizing::new(format!("1:{}\n", data_encoding::HEXLOWER.encode(key.as_ref())));
        crate::fsutil::write_private(path, text.as_bytes())
            .map_err(|e| Error::config(format!("cannot create master key file {}", path.display())).with_cause(e))?;
        Ok(Self::new(1, &key))
    }

    fn aad(partner: &PartnerId, contact: &ContactId, field: Field, key_id: u32) -> Vec<u8> {
        let mut aad = Vec::with_capacity(64);
        aad.extend_from_slice(b"rampart/v1/");
        aad.extend_from_slice(partner.as_bytes());
        aad.extend_from_slice(contact.as_bytes());
        aad.extend_from_slice(field.name());
        aad.extend_from_slice(&key_id.to_be_bytes());
        aad
    }

    /// Encrypt `plaintext` for this partner, contact and field under the current key.
    pub fn seal(&self, partner: &PartnerId, contact: &ContactId, field: Field, plaintext: &[u8]) -> Result<Vec<u8>> {
        let internal = |what: &'static str| Error::new(ErrorKind::Internal).with_cause(what);
        let cipher = self.ciphers.get(&self.current).ok_or_else(|| internal("no current key"))?;
        let mut nonce = [0u8; NONCE_LEN];
        fill_random(&mut nonce)?;
        let aad = Self::aad(partner, contact, field, self.current);
        let ct = cipher
            .encrypt(Nonce::from_slice(&nonce), Payload { msg: plaintext, aad: &aad })
            .map_err(|_| internal("encryption failed"))?;
        let mut out = Vec::with_capacity(HEADER_LEN + ct.len());
        out.push(VERSION);
        out.extend_from_slice(&self.current.to_be_bytes());
        out.extend_from_slice(&nonce);
        out.extend_from_slice(&ct);
        Ok(out)
    }

    /// Decrypt a value sealed for this partner, contact and field.
    pub fn open(
        &self,
        partner: &PartnerId,
        contact: &ContactId,
        field: Field,
        sealed: &[u8],
    ) -> std::result::Result<Zeroizing<Vec<u8>>, OpenError> {
        if sealed.len() < HEADER_LEN + 16 || sealed[0] != VERSION {
            return Err(OpenError("unknown format"));
        }
        let key_id = u32::from_be_bytes([sealed[1], sealed[2], sealed[3], sealed[4]]);
        let cipher = self.ciphers.get(&key_id).ok_or(OpenError("unknown key id"))?;
        let aad = Self::aad(partner, contact, field, key_id);
        let nonce = Nonce::from_slice(&sealed[5..HEADER_LEN]);
        cipher
            .decrypt(nonce, Payload { msg: &sealed[HEADER_LEN..], aad: &aad })
            .map(Zeroizing::new)
            .map_err(|_| OpenError("authentication failed"))
    }
}

impl fmt::Debug for KeyRing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeyRing")
            .field("current", &self.current)
            .field("key_ids", &self.ciphers.keys().collect::<Vec<_>>())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seal_open_and_bindings() {
        let ring = KeyRing::generate().unwrap();
        let (p, c) = (PartnerId::random(), ContactId::from_uuid(uuid::Uuid::new_v4()));
        let other = ContactId::from_uuid(uuid::Uuid::new_v4());
        let sealed = ring.seal(&p, &c, Field::Secret, b"twenty bytes secret!").unwrap();
        assert_eq!(&ring.open(&p, &c, Field::Secret, &sealed).unwrap()[..], b"twenty bytes secret!");
        assert!(ring.open(&p, &other, Field::Secret, &sealed).is_err());
        assert!(ring.open(&p, &c, Field::Pending, &sealed).is_err());
        assert!(ring.open(&PartnerId::random(), &c, Field::Secret, &sealed).is_err());
        let mut tampered = sealed.clone();
        *tampered.last_mut().unwrap() ^= 1;
        assert!(ring.open(&p, &c, Field::Secret, &tampered).is_err());
        // Fresh nonce per write.
        assert_ne!(sealed, ring.seal(&p, &c, Field::Secret, b"twenty bytes secret!").unwrap());
        assert!(!format!("{ring:?}").contains("cipher"));
    }

    #[test]
    fn rotation() {
        let old = KeyRing::new(1, &[7; 32]);
        let (p, c) = (PartnerId::random(), ContactId::from_uuid(uuid::Uuid::new_v4()));
        let sealed = old.seal(&p, &c, Field::Secret, b"x").unwrap();
        let ring =
            KeyRing::from_key_file_text(&format!("# keys\n1:{}\n2:{}\n", "07".repeat(32), "09".repeat(32))).unwrap();
        assert_eq!(ring.current_key_id(), 2);
        assert_eq!(&ring.open(&p, &c, Field::Secret, &sealed).unwrap()[..], b"x");
        let resealed = ring.seal(&p, &c, Field::Secret, b"x").unwrap();
        assert_eq!(u32::from_be_bytes(resealed[1..5].try_into().unwrap()), 2);
        assert!(old.open(&p, &c, Field::Secret, &resealed).is_err());
        assert!(KeyRing::from_key_file_text("").is_err());
        assert!(KeyRing::from_key_file_text("1:abcd").is_err());
    }
}
