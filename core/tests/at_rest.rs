//! What reaches the disk: no secret, in any encoding, and no secret key.

mod common;

use common::{Backend, Fixture, contact};
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
    for i in 0..20 {
        let c = contact();
        let s = if i % 2 == 0 { f.enabled(&c) } else { f.create(&c) };
        secrets.push(s);
    }
    let dir = f.store.dir.as_ref().unwrap().path().to_path_buf();
    let path = f.store.path.clone().unwrap();
    // Read while the connections are open (the WAL holds the latest writes) and after close.
    let mut snapshots = files_bytes(&dir);
    let names: Vec<_> = snapshots.iter().map(|(n, _)| n.clone()).collect();
    assert!(names.iter().any(|n| n.ends_with("-wal")), "{names:?}");
    drop(f.service);
    snapshots.extend(files_bytes(&dir));
    for s in &secrets {
        let b32 = s.to_base32();
        let hex_lower = data_encoding::HEXLOWER.encode(s.as_bytes());
        let needles: Vec<&[u8]> = vec![s.as_bytes(), b32.as_bytes(), hex_lower.as_bytes()];
        let hex_upper = hex_lower.to_uppercase();
        let b32_lower = b32.to_lowercase();
        for (name, bytes) in &snapshots {
            for n in needles.iter().chain([&hex_upper.as_bytes(), &b32_lower.as_bytes()]) {
                assert!(!contains(bytes, n), "a secret is readable in {name}");
            }
        }
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
    let ring = rampart_core::KeyRing::load_or_generate(&path).unwrap();
    let again = rampart_core::KeyRing::load_or_generate(&path).unwrap();
    let (p, c) = (rampart_core::PartnerId::random(), contact());
    let sealed = ring.seal(&p, &c, rampart_core::crypto::Field::Secret, b"x").unwrap();
    assert_eq!(&again.open(&p, &c, rampart_core::crypto::Field::Secret, &sealed).unwrap()[..], b"x");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(std::fs::metadata(&path).unwrap().permissions().mode() & 0o777, 0o600);
    }
}
