//! The Redis side of shared state: one multiplexed connection per Redis URL in the process
//! (every slot naming that URL shares it), opened on first use, dropped on an error or on
//! [`close_all`] and opened again by the next decision. It is dialled here, not by the Redis
//! client: `rediss://` goes through the transport's own TLS handshake and trust
//! ([`crate::trust`]), and the client then logs in (AUTH as the URL's user, SELECT its database). Its driver is a task on the transport's
//! Tokio runtime, not a handle of Node's event loop, so it never keeps the process alive (D12).
//! Every round trip runs [`executor::off_thread`]: the Redis client starts tasks and timers of
//! its own, which a thread that drives its own reactor would not turn.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use redis::aio::MultiplexedConnection;
use redis::{RedisConnectionInfo, Script};
use tokio::io::{AsyncRead, AsyncWrite};

use super::cas::StateBackend;
use super::config::RedisTarget;
use crate::{connector, executor, trust};

/// Compare-and-set of one scope: `KEYS[1]` is a hash `{ v: version, s: state }`; the state is
/// written as version `ARGV[1] + 1` with a `PX` of `ARGV[3]` only if the stored version (0 when
/// absent) is still `ARGV[1]`. Returns 1 when written, 0 on a conflict.
const WRITE_IF_UNCHANGED: &str = r"
local version = tonumber(redis.call('HGET', KEYS[1], 'v') or '0')
if version ~= tonumber(ARGV[1]) then return 0 end
redis.call('HSET', KEYS[1], 'v', version + 1, 's', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
";

/// One Redis server as this process reaches it.
pub struct RedisBackend {
    target: RedisTarget,
    login: RedisConnectionInfo,
    connection: Mutex<Option<MultiplexedConnection>>,
    script: Script,
}

fn registry() -> &'static Mutex<HashMap<String, Arc<RedisBackend>>> {
    static BACKENDS: OnceLock<Mutex<HashMap<String, Arc<RedisBackend>>>> = OnceLock::new();
    BACKENDS.get_or_init(Mutex::default)
}

/// The backend of `target`, shared by every slot of the process that names the same URL. The
/// option parser has already checked the URL with this client, so the error is not expected.
pub fn backend_for(target: &RedisTarget) -> Result<Arc<RedisBackend>, String> {
    let mut backends = registry().lock().unwrap_or_else(|e| e.into_inner());
    if let Some(backend) = backends.get(target.url()) {
        return Ok(backend.clone());
    }
    let info = target
        .connection_info()
        .map_err(|e| target.redact(&e.to_string()))?;
    let backend = Arc::new(RedisBackend {
        target: target.clone(),
        // The login is AUTH (and SELECT for a database other than 0), nothing else: the ACL a
        // managed Redis gives the package needs no CLIENT command (README, "Managed Redis").
        login: info.redis_settings().clone().set_skip_set_lib_name(),
        connection: Mutex::new(None),
        script: Script::new(WRITE_IF_UNCHANGED),
    });
    backends.insert(target.url().to_string(), backend.clone());
    Ok(backend)
}

/// Close every Redis connection of the process (`destroyCachedAgents()`); the next decision
/// that needs one opens it again.
pub fn close_all() {
    let backends = registry().lock().unwrap_or_else(|e| e.into_inner());
    for backend in backends.values() {
        backend.forget_connection();
    }
}

impl RedisBackend {
    async fn connection(&self) -> Result<MultiplexedConnection, String> {
        if let Some(connection) = self.lock().clone() {
            return Ok(connection);
        }
        let (target, login) = (self.target.clone(), self.login.clone());
        let connection = executor::off_thread(open(target, login)).await?;
        *self.lock() = Some(connection.clone());
        Ok(connection)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<MultiplexedConnection>> {
        self.connection.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn forget_connection(&self) {
        self.lock().take();
    }

    /// A failure as the diagnostic tells it; a broken connection is dropped so the next try
    /// reconnects.
    fn describe(&self, error: &redis::RedisError) -> String {
        if error.is_io_error() || error.is_connection_dropped() || error.is_timeout() {
            self.forget_connection();
        }
        self.target.redact(&error.to_string())
    }
}

/// Dial `target`, TLS for `rediss://`, and log in; the connection's driver runs as a task of
/// the runtime this is called on.
async fn open(
    target: RedisTarget,
    login: RedisConnectionInfo,
) -> Result<MultiplexedConnection, String> {
    let (host, port) = target.host_and_port();
    let tcp = connector::dial(host, port)
        .await
        .map_err(|e| format!("connect failed: {e}"))?;
    if target.tls() {
        let tls = trust::handshake(trust::client_config_without_alpn(), host, tcp).await?;
        log_in(&target, &login, tls).await
    } else {
        log_in(&target, &login, tcp).await
    }
}

async fn log_in<S>(
    target: &RedisTarget,
    login: &RedisConnectionInfo,
    stream: S,
) -> Result<MultiplexedConnection, String>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let config = redis::AsyncConnectionConfig::default();
    let (connection, driver) = MultiplexedConnection::new_with_config(login, stream, config)
        .await
        .map_err(|e| target.redact(&e.to_string()))?;
    tokio::spawn(driver);
    Ok(connection)
}

impl StateBackend for RedisBackend {
    async fn read(&self, key: &str) -> Result<(u64, Option<Vec<u8>>), String> {
        let mut connection = self.connection().await?;
        let command = redis::cmd("HMGET").arg(key).arg("v").arg("s").clone();
        let (version, state): (Option<u64>, Option<Vec<u8>>) =
            executor::off_thread(async move { command.query_async(&mut connection).await })
                .await
                .map_err(|e| self.describe(&e))?;
        Ok((version.unwrap_or(0), state))
    }

    async fn write_if(
        &self,
        key: &str,
        version: u64,
        state: &[u8],
        ttl_ms: u64,
    ) -> Result<bool, String> {
        let mut connection = self.connection().await?;
        let (script, key, state) = (self.script.clone(), key.to_string(), state.to_vec());
        let written: i64 = executor::off_thread(async move {
            let mut invocation = script.key(key);
            invocation.arg(version).arg(state).arg(ttl_ms);
            invocation.invoke_async(&mut connection).await
        })
        .await
        .map_err(|e| self.describe(&e))?;
        Ok(written == 1)
    }
}
