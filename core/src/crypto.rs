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
pub use crate::vocab::{Field, KEY_HEADER_LEN};

const VERSION: u8 = 1;
const NONCE_LEN: usize = 12;
const HEADER_LEN: usize = 1 + 4 + NONCE_LEN;

/// Fill `buf` from the OS CSPRNG.
pub(crate) fn fill_random(buf: &mut [u8]) -> Result<()> {
    getrandom::fill(buf).map_err(|e| Error::new(ErrorKind::Internal).with_cause(e.to_string()))
}

/// The master key ring. Prints only its key ids (and the file it came from).
#[derive(Clone)]
pub struct KeyRing {
    current: u32,
    ciphers: BTreeMap<u32, Aes256Gcm>,
    origin: Option<Origin>,
}

/// Where a ring read from a key file came from, so errors name the file and the line.
#[derive(Clone, Debug)]
struct Origin {
    path: Option<std::path::PathBuf>,
    /// Key id -> line number (1-based).
    lines: BTreeMap<u32, usize>,
}

/// Opening a sealed value failed (wrong key, tampered or moved ciphertext, unknown key id).
#[derive(Debug, thiserror::Error)]
#[error("sealed value does not open: {0}")]
pub struct OpenError(&'static str);

impl KeyRing {
    /// A ring with one key.
    pub fn new(key_id: u32, key: &[u8; 32]) -> Self {
        let mut ring = Self { current: key_id, ciphers: BTreeMap::new(), origin: None };
        ring.add(key_id, key);
        ring
    }

    /// A ring with no key: it seals and opens nothing, so every 2FA call that needs a secret
    /// fails closed (the operation's 500). For operator tools that only touch partners and
    /// contact flags and must not need, or invent, the master key.
    pub fn empty() -> Self {
        Self { current: 0, ciphers: BTreeMap::new(), origin: None }
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
    /// line meaning id 1. Blank lines and lines starting with `#` are ignored. A malformed
    /// line, or a key id given twice, is refused naming the line (never the key).
    pub fn from_key_file_text(text: &str) -> Result<Self> {
        let bad = |n: usize, rule: &str| Error::config(format!("line {n}: {rule}"));
        let mut ring: Option<Self> = None;
        let mut lines = BTreeMap::new();
        for (n, line) in text.lines().enumerate().map(|(i, l)| (i + 1, l.trim())) {
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let (id, hex) = match line.split_once(':') {
                Some((id, hex)) => {
                    let id = id.trim().parse::<u32>().map_err(|_| bad(n, "the key id must be a whole number"))?;
                    (id, hex.trim())
                }
                None => (1, line),
            };
            let mut bytes = Zeroizing::new(
                data_encoding::HEXLOWER_PERMISSIVE
                    .decode(hex.as_bytes())
                    .map_err(|_| bad(n, "must be ID:HEX with 64 hex digits"))?,
            );
            let key: &[u8; 32] =
                bytes.as_slice().try_into().map_err(|_| bad(n, "must be ID:HEX with 64 hex digits"))?;
            if let Some(first) = lines.insert(id, n) {
                return Err(bad(n, &format!("key id {id} is given twice (first on line {first})")));
            }
            match ring.as_mut() {
                Some(r) => r.add(id, key),
                None => ring = Some(Self::new(id, key)),
            }
            bytes.zeroize();
        }
        let mut ring = ring.ok_or_else(|| Error::config("holds no key: lines of ID:HEX with 64 hex digits"))?;
        ring.origin = Some(Origin { path: None, lines });
        Ok(ring)
    }

    /// Read a key file (see [`KeyRing::from_key_file_text`]). On Unix the file must be
    /// readable by its owner only, as ssh asks of a private key: a file with any group or
    /// other permission bit is refused, naming the file and its mode. Errors name the file.
    pub fn load(path: &Path) -> Result<Self> {
        let named = |what: String| Error::config(format!("master key file {}: {what}", path.display()));
        let mut file =
            std::fs::File::open(path).map_err(|e| named(format!("cannot be read ({})", e.kind())).with_cause(e))?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = file.metadata().map_err(|e| named("cannot be read".into()).with_cause(e))?.permissions().mode();
            if mode & 0o077 != 0 {
                return Err(named(format!(
                    "has mode {:04o}; it must be readable by its owner only (chmod 600 {})",
                    mode & 0o7777,
                    path.display()
                )));
            }
        }
        let mut text = Zeroizing::new(String::new());
        std::io::Read::read_to_string(&mut file, &mut text)
            .map_err(|e| named("cannot be read as text".into()).with_cause(e))?;
        let mut ring = Self::from_key_file_text(&text).map_err(|e| named(e.message().to_owned()))?;
        if let Some(origin) = ring.origin.as_mut() {
            origin.path = Some(path.to_path_buf());
        }
        Ok(ring)
    }

    /// A ring of one fresh key, written to a new key file (mode 0600) at `path`. Whether a
    /// new key is safe (the store holds no sealed secret) is the caller's question:
    /// [`KeyRing::load_or_generate`] asks it.
    pub(crate) fn generate_into(path: &Path) -> Result<Self> {
        let mut key = Zeroizing::new([0u8; 32]);
        fill_random(key.as_mut())?;
        let text = Zeroizing::new(format!("1:{}\n", data_encoding::HEXLOWER.encode(key.as_ref())));
        crate::fsutil::write_private(path, text.as_bytes())
            .map_err(|e| Error::config(format!("cannot create master key file {}", path.display())).with_cause(e))?;
        let mut ring = Self::new(1, &key);
        ring.origin = Some(Origin { path: Some(path.to_path_buf()), lines: BTreeMap::from([(1, 1)]) });
        Ok(ring)
    }

    /// Whether the ring holds no key.
    pub(crate) fn is_empty(&self) -> bool {
        self.ciphers.is_empty()
    }

    /// Why a key id that seals stored secrets is a problem for this ring: it is missing, or it
    /// opens none of them. Names the key file and the key's line when the ring came from a
    /// file; never a key.
    pub(crate) fn key_problem(&self, id: u32) -> String {
        let file = self.origin.as_ref().and_then(|o| o.path.as_ref());
        let prefix = file.map_or_else(|| "master key ring".to_owned(), |p| format!("master key file {}", p.display()));
        let line = self.origin.as_ref().and_then(|o| o.lines.get(&id));
        match (self.ciphers.contains_key(&id), line) {
            (false, _) => format!(
                "{prefix}: stored 2FA secrets are sealed under key id {id}, which it does not hold; \
                 put that key back"
            ),
            (true, Some(line)) => {
                format!("{prefix} line {line}: key id {id} opens none of the stored 2FA secrets sealed under it")
            }
            (true, None) => format!("{prefix}: key id {id} opens none of the stored 2FA secrets sealed under it"),
        }
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

/// Sealed values tried per key id by [`KeyRing::check_against`].
pub(crate) const SAMPLES_PER_KEY: usize = 4;

/// The key id named by a sealed value's header, if it has one of this format.
pub(crate) fn key_id_of(sealed: &[u8]) -> Option<u32> {
    match sealed {
        [VERSION, a, b, c, d, ..] => Some(u32::from_be_bytes([*a, *b, *c, *d])),
        _ => None,
    }
}

impl fmt::Debug for KeyRing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeyRing")
            .field("current", &self.current)
            .field("key_ids", &self.ciphers.keys().collect::<Vec<_>>())
            .field("file", &self.origin.as_ref().and_then(|o| o.path.as_ref()))
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

    fn config_message(r: Result<KeyRing>) -> String {
        let e = r.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Config);
        e.message().to_owned()
    }

    #[test]
    fn key_file_lines_are_named() {
        let (a, b) = ("07".repeat(32), "09".repeat(32));
        let twice = format!("# keys\n1:{a}\n\n1:{b}\n");
        let message = config_message(KeyRing::from_key_file_text(&twice));
        assert_eq!(message, "line 4: key id 1 is given twice (first on line 2)");
        assert!(!message.contains(&b[..8]));
        assert_eq!(
            config_message(KeyRing::from_key_file_text(&format!("2:{a}\nx:{b}"))),
            "line 2: the key id must be a whole number"
        );
        assert_eq!(config_message(KeyRing::from_key_file_text("1:abcd")), "line 1: must be ID:HEX with 64 hex digits");
        // A bare line is id 1, so a bare line and `1:` clash too.
        assert_eq!(
            config_message(KeyRing::from_key_file_text(&format!("{a}\n1:{b}"))),
            "line 2: key id 1 is given twice (first on line 1)"
        );
    }

    #[cfg(unix)]
    #[test]
    fn key_file_modes() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("k.key");
        std::fs::write(&path, format!("1:{}\n", "07".repeat(32))).unwrap();
        for mode in [0o644, 0o640, 0o604, 0o660, 0o601] {
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
            let message = config_message(KeyRing::load(&path));
            assert_eq!(
                message,
                format!(
                    "master key file {0}: has mode {mode:04o}; it must be readable by its owner only (chmod 600 {0})",
                    path.display()
                )
            );
        }
        for mode in [0o600, 0o400] {
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
            assert_eq!(KeyRing::load(&path).unwrap().current_key_id(), 1);
        }
        let missing = dir.path().join("missing.key");
        assert!(
            config_message(KeyRing::load(&missing))
                .starts_with(&format!("master key file {}: cannot be read", missing.display()))
        );
    }
}
