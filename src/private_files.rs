//! Files and directories only the server's user can read: the data
//! directory (mode 0700) and the files written into it (mode 0600). A leaf:
//! it uses nothing of chatd, so settings, secrets and the store can all take
//! it.

use std::path::Path;

/// Creates `dir` and its missing parents with mode 0700 (on Unix); existing
/// directories are left as they are. Used for `data_dir`, which holds the
/// secrets and the SQLite database.
///
/// # Errors
/// The file system's error.
pub(crate) fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    if dir.as_os_str().is_empty() {
        return Ok(());
    }
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir)
}

/// Writes `text` to `path` with mode 0600 (created that way, never widened),
/// through a temporary file beside it (`<name>.tmp`) and a rename so a crash
/// leaves the old file whole. The directory is created with [`create_private_dir`] when missing.
///
/// # Errors
/// The file system's error.
pub(crate) fn write_private(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    if let Some(dir) = path.parent() {
        create_private_dir(dir)?;
    }
    let mut tmp_name = path.file_name().unwrap_or_default().to_os_string();
    tmp_name.push(".tmp");
    let tmp = path.with_file_name(tmp_name);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options.open(&tmp)?;
    file.write_all(text.as_bytes())?;
    file.sync_all()?;
    std::fs::rename(&tmp, path)
}
