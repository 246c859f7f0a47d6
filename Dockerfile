# syntax=docker/dockerfile:1
#
# chatd container image. Build: docker build -t chatd .
# Run:   docker run -p 8080:8080 -v chatd-data:/var/lib/chatd chatd
# With no secrets configured, chatd generates them into
# /var/lib/chatd/secrets.toml (mode 0600) on first start; set CHATD_JWT_SECRET
# and CHATD_ADMIN_TOKEN at run time to supply your own. No secret is baked in.

# --- build -------------------------------------------------------------------
FROM rust:1-bookworm AS builder
WORKDIR /src

# Everything the build needs: the manifest and lock file, build.rs, the sources,
# and migrations/ (sqlx::migrate! embeds them into the binary at compile time).
COPY . .

# Cache mounts keep the registry and the target directory between builds; the
# binary is copied out of the cached target directory.
RUN --mount=type=cache,target=/usr/local/cargo/registry \
    --mount=type=cache,target=/usr/local/cargo/git \
    --mount=type=cache,target=/src/target \
    cargo build --release --locked --bin chatd \
 && install -m 0755 target/release/chatd /usr/local/bin/chatd

# --- runtime -----------------------------------------------------------------
FROM debian:bookworm-slim

# ca-certificates for outbound TLS, curl for the HEALTHCHECK. Not pinned to
# versions (hadolint's DL3008): Debian replaces a version in bookworm with each
# security update and drops the old one, so a pinned build would break on the
# next update instead of getting the fix.
# hadolint ignore=DL3008
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates curl \
 && rm -rf /var/lib/apt/lists/*

# Unprivileged user owning the data directory (the embedded SQLite database and
# the generated secrets file), with a fixed numeric id (10001) that USER names,
# so a runtime that checks for a non-root user by id (Kubernetes'
# runAsNonRoot) can. Created before VOLUME so a new named volume inherits the
# ownership.
RUN groupadd --system --gid 10001 chatd \
 && useradd --system --uid 10001 --gid chatd --home-dir /var/lib/chatd --no-create-home --shell /usr/sbin/nologin chatd \
 && mkdir -p /var/lib/chatd \
 && chown chatd:chatd /var/lib/chatd \
 && chmod 0700 /var/lib/chatd

COPY --from=builder /usr/local/bin/chatd /usr/local/bin/chatd

# chatd reads config/chatd.toml relative to its working directory (defaults
# only); CHATD_* environment variables override it.
WORKDIR /opt/chatd
COPY config/ /opt/chatd/config/

ENV CHATD_LISTEN=0.0.0.0:8080 \
    CHATD_DATA_DIR=/var/lib/chatd

VOLUME ["/var/lib/chatd"]
EXPOSE 8080
USER 10001:10001

# Liveness: /healthz answers 200 while the process runs. The port follows
# CHATD_LISTEN (expanded by sh at check time).
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
    CMD ["sh", "-c", "curl -fsS \"http://127.0.0.1:${CHATD_LISTEN##*:}/healthz\" > /dev/null || exit 1"]

# SIGTERM (docker stop) shuts down gracefully: sessions close with 1001 within
# shutdown_grace (10 s by default).
STOPSIGNAL SIGTERM
ENTRYPOINT ["chatd"]
CMD ["serve"]
