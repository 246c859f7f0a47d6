//! Erasing a user (`docs/protocol.md` §19) on [`AdminClient`]: the admin
//! token only.

use super::{AdminClient, AdminError};

impl AdminClient {
    /// `DELETE /v1/users/{userId}`: erases the user (its messages deleted,
    /// reactions removed, memberships ended, everything else of it gone,
    /// its earlier tokens refused and its sessions closed) and returns once
    /// the server answers 204. A large erasure the server answers 202
    /// ("still erasing") is asked again until it is done. Idempotent; an
    /// unknown user is erased at once (there is nothing to erase).
    ///
    /// # Errors
    /// [`AdminError::Status`] 400 for a bad id, 403 for a user token, 503
    /// when the database is unavailable (retry: the erasure goes on, and a
    /// stopped server resumes it).
    pub async fn erase_user(&self, user_id: &str) -> Result<(), AdminError> {
        loop {
            let request = self.http.delete(format!("{}/v1/users/{user_id}", self.base));
            let response = self.call(request).await?;
            if response.status() != reqwest::StatusCode::ACCEPTED {
                return Ok(());
            }
        }
    }
}
