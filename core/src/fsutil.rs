//! Files that hold secrets are created readable by their owner only.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::Path;

fn private_options() -> OpenOptions {
    let mut opts = OpenOptions::new();
    opts.write(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    opts
}

/// Create `path` (mode 0600 on Unix) with `contents`; fails if it already exists.
pub(crate) fn write_private(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    let mut file = private_options().create_new(true).open(path)?;
    file.write_all(contents)?;
    file.sync_all()
}

/// Create `path` empty with mode 0600 if it does not exist yet (so SQLite, and the `-wal` and
/// `-shm` files it derives from the database's mode, never start world-readable).
pub(crate) fn touch_private(path: &Path) -> std::io::Result<()> {
    match private_options().create_new(true).open(path) {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(e),
    }
}
