//! Where an image upload's bytes wait for their decode: an anonymous
//! temporary file, written as the body arrives (so an image upload holds no
//! more memory than another type's) and read once all are in.

use std::path::PathBuf;

/// An anonymous temporary file in `data_dir`, else (when `data_dir` cannot
/// hold one: missing, read-only) in the system's temporary directory. It is
/// never named in the file system (`O_TMPFILE` on Linux, unlinked at once
/// elsewhere), so it goes when closed, however the upload ends: an answer,
/// a dropped future, a panic, the process's death.
///
/// # Errors
/// Neither directory can hold a file.
pub async fn spool_file(data_dir: PathBuf) -> std::io::Result<tokio::fs::File> {
    let file = tokio::task::spawn_blocking(move || {
        tempfile::tempfile_in(&data_dir).or_else(|error| {
            tracing::debug!(%error, dir = %data_dir.display(), "spooling an image upload in the temporary directory");
            tempfile::tempfile()
        })
    })
    .await
    .map_err(std::io::Error::other)??;
    Ok(tokio::fs::File::from_std(file))
}
