//! What reaches the disk: no secret and no recovery code, in any encoding, and no secret key.

mod common;

use common::{Backend, Fixture, Needles, contact, secret_forms};
use rampart_core::totp::Secret;

fn files_bytes(dir: &std::path::Path) -> Vec<(String, Vec<u8>)> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), std::fs::read(&p).unwrap()))
        .collect()
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

#[test]
fn database_files_hold_no_secret_and_no_secret_key() {
    let f = Fixture::new(Backend::Sqlite);
    let creds = f.service.create_partner("Second", rampart_core::Environment::Sandbox).unwrap();
    let mut secrets: Vec<Secret> = Vec::new();
    let mut codes: Vec<String> = Vec::new();
    for i in 0..20 {
        let c = contact();
        let s = f.create(&c);
        if i % 2 == 0 {
            let issued = f.service.enable_2fa(&f.partner, &c, f.code(&s, 0).as_str()).unwrap();
            // One code used, so a used set is written too.
            let first = rampart_core::Factor::recovery_code(&issued.as_slice()[0]);
            assert!(f.service.verify_2fa(&f.partner, &c, first).unwrap().is_accepted());
            codes.extend(issued.as_slice().iter().cloned());
        }
        secrets.push(s);
    }
    f.clock.advance(30);
    let dir = f.store.dir.as_ref().unwrap().path().to_path_buf();
    let path = f.store.path.clone().unwrap();
    // Read while the connections are open (the WAL holds the latest writes) and after close.
    let mut snapshots = files_bytes(&dir);
    let names: Vec<_> = snapshots.iter().map(|(n, _)| n.clone()).collect();
    assert!(names.iter().any(|n| n.ends_with("-wal")), "{names:?}");
    drop(f.service);
    snapshots.extend(files_bytes(&dir));
    let mut needles: Vec<(String, Vec<u8>)> = secrets.iter().flat_map(|s| secret_forms("a secret", s)).collect();
    for code in &codes {
        let plain = code.replace('-', "");
        for form in [code.clone(), code.to_lowercase(), plain.clone(), plain.to_lowercase()] {
            needles.push(("a recovery code".to_owned(), form.into_bytes()));
        }
    }
    let needles = Needles::new(needles);
    for offset in 0..8 {
        let probe = [&vec![0; offset][..], secrets[0].as_bytes(), b"tail"].concat();
        assert_eq!(needles.found_in(&probe), ["a secret (raw bytes)"], "the scan finds a secret at offset {offset}");
    }
    for (name, bytes) in &snapshots {
        let found = needles.found_in(bytes);
        assert!(found.is_empty(), "{found:?} readable in {name}");
    }
    for (name, bytes) in &snapshots {
        assert!(!contains(bytes, creds.secret_key.expose().as_bytes()), "a secret key is readable in {name}");
        assert!(!contains(bytes, b"sk_sandbox_"), "a secret key prefix is readable in {name}");
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let p = entry.unwrap().path();
            let mode = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600, "{}", p.display());
        }
        assert!(path.exists());
    }
}

#[test]
fn key_file_is_private_and_reloads() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rampart.key");
    let store = rampart_core::MemoryStore::new();
    let ring = rampart_core::KeyRing::load_or_generate(&path, &store).unwrap();
    let again = rampart_core::KeyRing::load_or_generate(&path, &store).unwrap();
    let (p, c) = (rampart_core::PartnerId::random(), contact());
    let sealed = ring.seal(&p, &c, rampart_core::crypto::Field::Secret, b"x").unwrap();
    assert_eq!(&again.open(&p, &c, rampart_core::crypto::Field::Secret, &sealed).unwrap()[..], b"x");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
    }
}

/// A store with one enabled contact sealed under `keys` (SQLite at `db`).
fn enabled_contact(
    db: &std::path::Path,
    keys: rampart_core::KeyRing,
) -> (rampart_core::PartnerId, rampart_core::ContactId) {
    let clock = std::sync::Arc::new(rampart_core::ManualClock::new(1_700_000_000));
    let service = rampart_core::Service::builder(rampart_core::SqliteStore::open(db).unwrap())
        .master_keys(keys)
        .clock(clock)
        .build()
        .unwrap();
    let partner = service.create_partner("Acme", rampart_core::Environment::Sandbox).unwrap().partner_id;
    let c = contact();
    let setup = service.create_2fa(&partner, &c, None).unwrap();
    let secret = rampart_core::totp::Secret::from_base32(&setup.manual).unwrap();
    service.enable_2fa(&partner, &c, rampart_core::totp::code_at(&secret, 1_700_000_000).as_str()).unwrap();
    (partner, c)
}

fn start(db: &std::path::Path, keys: rampart_core::KeyRing) -> rampart_core::Result<rampart_core::Service> {
    rampart_core::Service::builder(rampart_core::SqliteStore::open(db).unwrap()).master_keys(keys).build()
}

#[test]
fn a_missing_key_file_is_never_replaced_over_sealed_secrets() {
    let dir = tempfile::tempdir().unwrap();
    let (db, key) = (dir.path().join("r.db"), dir.path().join("r.db.key"));
    let store = rampart_core::SqliteStore::open(&db).unwrap();
    let ring = rampart_core::KeyRing::load_or_generate(&key, &store).unwrap();
    enabled_contact(&db, ring);
    std::fs::remove_file(&key).unwrap();
    let e = rampart_core::KeyRing::load_or_generate(&key, &store).unwrap_err();
    assert_eq!(e.kind(), rampart_core::ErrorKind::Config);
    assert_eq!(
        e.message(),
        format!(
            "master key file {} is missing, but the database holds 2FA secrets sealed under it: restore the file \
             (a new key would lock out every contact with 2FA)",
            key.display()
        )
    );
    assert!(!key.exists(), "no new key was written");
}

#[test]
fn a_ring_that_opens_no_stored_secret_is_refused_at_start() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.db");
    enabled_contact(&db, rampart_core::KeyRing::new(1, &[7; 32]));
    // The same key starts; a ring that also holds a newer key starts.
    start(&db, rampart_core::KeyRing::new(1, &[7; 32])).unwrap();
    let key_file = dir.path().join("keys");
    let write_keys = |text: String| {
        std::fs::write(&key_file, text).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&key_file, std::fs::Permissions::from_mode(0o600)).unwrap();
        }
        rampart_core::KeyRing::load(&key_file).unwrap()
    };
    start(&db, write_keys(format!("1:{}\n2:{}\n", "07".repeat(32), "09".repeat(32)))).unwrap();
    // Key id 1 with another key: refused, naming the file and the line.
    let e = start(&db, write_keys(format!("# rotated\n2:{}\n1:{}\n", "09".repeat(32), "08".repeat(32)))).unwrap_err();
    assert_eq!(e.kind(), rampart_core::ErrorKind::Config);
    assert_eq!(
        e.message(),
        format!(
            "master key file {} line 3: key id 1 opens none of the stored 2FA secrets sealed under it",
            key_file.display()
        )
    );
    // Key id 1 gone: refused, naming the missing id.
    let e = start(&db, write_keys(format!("2:{}\n", "09".repeat(32)))).unwrap_err();
    assert_eq!(
        e.message(),
        format!(
            "master key file {}: stored 2FA secrets are sealed under key id 1, which it does not hold; put that key back",
            key_file.display()
        )
    );
    // A ring given in code names no file.
    let e = start(&db, rampart_core::KeyRing::new(1, &[8; 32])).unwrap_err();
    assert_eq!(e.message(), "master key ring: key id 1 opens none of the stored 2FA secrets sealed under it");
    // A ring with no key opens nothing and seals nothing: it starts, and 2FA calls fail closed.
    start(&db, rampart_core::KeyRing::empty()).unwrap();
}
