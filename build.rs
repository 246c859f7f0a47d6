// Embedded migrations (`sqlx::migrate!`) are read at compile time: rebuild when they change.
//
// `chatd_build_info{git=…}`: `CHATD_GIT_COMMIT` from the environment (a
// build without a checkout, such as a Docker build, may pass it), else the
// commit `git` names, else nothing (the metric then says `unknown`). A
// missing `git` or a source tree without `.git` is not an error.
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8(out.stdout).ok()?;
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_owned())
}

fn main() {
    println!("cargo:rerun-if-changed=migrations");
    println!("cargo:rerun-if-env-changed=CHATD_GIT_COMMIT");
    if let Ok(commit) = std::env::var("CHATD_GIT_COMMIT") {
        println!("cargo:rustc-env=CHATD_GIT_COMMIT={commit}");
        return;
    }
    if let Some(commit) = git(&["rev-parse", "--short=12", "HEAD"]) {
        println!("cargo:rustc-env=CHATD_GIT_COMMIT={commit}");
        // Run again when HEAD moves (a commit, a checkout).
        for path in [
            git(&["rev-parse", "--git-path", "HEAD"]),
            git(&["rev-parse", "--symbolic-full-name", "HEAD"]),
        ]
        .into_iter()
        .flatten()
        {
            let path = if path.starts_with("refs/") {
                match git(&["rev-parse", "--git-path", &path]) {
                    Some(p) => p,
                    None => continue,
                }
            } else {
                path
            };
            // A path that does not exist would make Cargo run this every build.
            if std::path::Path::new(&path).exists() {
                println!("cargo:rerun-if-changed={path}");
            } else if let Some(packed) = git(&["rev-parse", "--git-path", "packed-refs"]) {
                if std::path::Path::new(&packed).exists() {
                    println!("cargo:rerun-if-changed={packed}");
                }
            }
        }
    }
}
