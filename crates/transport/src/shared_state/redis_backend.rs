//! The Redis side of shared state: one multiplexed connection per Redis node in the process
//! (every slot naming that URL shares it), opened on first use, dropped on an error or on
//! [`close_all`] and opened again by the next decision. It is dialled here, not by the Redis
//! client: `rediss://` goes through the transport's own TLS handshake and trust
//! ([`crate::trust`]), and the client then logs in (AUTH as the URL's user, SELECT its database).
//! Its driver is a task on the transport's Tokio runtime, not a handle of Node's event loop, so
//! it never keeps the process alive (D12). Every round trip runs [`executor::off_thread`]: the
//! Redis client starts tasks and timers of its own, which a thread that drives its own reactor
//! would not turn.
//!
//! A Redis Cluster needs nothing more: a scope is one key, on one slot (its hash tag), so a
//! node's `MOVED` answer names the node that holds the scope, which is asked at once and
//! remembered for that key. A connection error on that node forgets the route, and the same
//! decision asks the other nodes the process knows (the URL's first): after a failover, any
//! of them names the promoted replica. The nodes are learned from `MOVED` answers and, when a
//! connection opens, from `CLUSTER SLOTS` (in the background, best effort: a server that is no
//! cluster, or an ACL without the command, just teaches nothing), so a fleet whose URL names
//! the master that fails still finds its replica. Over `rediss://`, the nodes learned are
//! dialled with TLS and the same trust, and verified under the name [`certificate_name`] gives.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use redis::aio::MultiplexedConnection;
use redis::{
    ErrorKind, RedisConnectionInfo, RedisError, RedisResult, Script, ServerErrorKind, Value,
};
use tokio::io::{AsyncRead, AsyncWrite};

use super::cas::StateBackend;
use super::config::RedisTarget;
use crate::trust::{self, Trust};
use crate::{connector, executor};

mod cache;

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

/// One Redis server (or cluster) as this process reaches it.
pub struct RedisBackend {
    target: RedisTarget,
    /// What a `rediss://` server's certificate is verified with (the slots' environment, D38).
    trust: Arc<Trust>,
    login: RedisConnectionInfo,
    /// Open connections by node `host:port`: the URL's, and the cluster nodes routes lead to.
    connections: Mutex<HashMap<String, MultiplexedConnection>>,
    /// Key → the node that answered for it after a `MOVED` (a cluster only).
    routes: Mutex<HashMap<String, String>>,
    /// The cluster's other nodes as last learned (`CLUSTER SLOTS`, `MOVED`); empty for a
    /// single server. Asked when the node a key was routed to is unreachable.
    nodes: Arc<Mutex<Vec<String>>>,
    script: Script,
}

/// Why a query on one node did not answer.
enum Failure {
    /// A cluster node holding another slot: the node that holds the key's.
    MovedTo(String),
    /// The node could not be reached (refused, dropped, silent): another node may know where
    /// the key went. Described for the diagnostic, credentials masked.
    Unreachable(String),
    /// Described for the diagnostic, credentials masked.
    Other(String),
}

/// The backends by URL and trust: slots built under other TLS variables do not share one.
type Backends = HashMap<(String, Arc<Trust>), Arc<RedisBackend>>;

fn registry() -> &'static Mutex<Backends> {
    static BACKENDS: OnceLock<Mutex<Backends>> = OnceLock::new();
    BACKENDS.get_or_init(Mutex::default)
}

/// The backend of `target`, shared by every slot of the process that names the same URL with
/// the same trust. The option parser has already checked the URL with this client, so the
/// error is not expected.
pub fn backend_for(target: &RedisTarget, trust: &Arc<Trust>) -> Result<Arc<RedisBackend>, String> {
    let mut backends = lock(registry());
    let key = (target.url().to_string(), trust.clone());
    if let Some(backend) = backends.get(&key) {
        return Ok(backend.clone());
    }
    let info = target
        .connection_info()
        .map_err(|e| target.redact(&e.to_string()))?;
    let backend = Arc::new(RedisBackend {
        target: target.clone(),
        trust: trust.clone(),
        // The login is AUTH (and SELECT for a database other than 0), nothing else: the ACL a
        // managed Redis gives the package needs no CLIENT command (docs/fleet.md, "Managed Redis").
        login: info.redis_settings().clone().set_skip_set_lib_name(),
        connections: Mutex::default(),
        routes: Mutex::default(),
        nodes: Arc::default(),
        script: Script::new(WRITE_IF_UNCHANGED),
    });
    backends.insert(key, backend.clone());
    Ok(backend)
}

/// Close every Redis connection of the process (`destroyCachedAgents()`); the next decision
/// that needs one opens it again.
pub fn close_all() {
    for backend in lock(registry()).values() {
        lock(&backend.connections).clear();
        lock(&backend.routes).clear();
        lock(&backend.nodes).clear();
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

impl RedisBackend {
    /// `query` on the node that holds `key`: the URL's unless a cluster routed the key
    /// elsewhere; a `MOVED` answer is followed once, and the route kept. When the node is
    /// unreachable, the other known nodes are asked in turn (each names the key's holder).
    async fn on_node_of<T, Q, F>(&self, key: &str, query: Q) -> Result<T, String>
    where
        Q: Fn(MultiplexedConnection) -> F,
        F: Future<Output = RedisResult<T>> + Send + 'static,
        T: Send + 'static,
    {
        let seed = self.target.address();
        let routed = lock(&self.routes).get(key).cloned();
        let mut candidates = vec![routed.unwrap_or_else(|| seed.clone())];
        for node in std::iter::once(seed).chain(lock(&self.nodes).iter().cloned()) {
            if !candidates.contains(&node) {
                candidates.push(node);
            }
        }
        let mut unreachable: Vec<String> = Vec::new();
        let mut last_cause = String::new();
        for node in candidates {
            if unreachable.contains(&node) {
                continue;
            }
            let holder = match self.query_on(&node, &query).await {
                Ok(value) => return Ok(value),
                Err(Failure::Other(cause)) => return Err(cause),
                Err(Failure::Unreachable(cause)) => {
                    unreachable.push(node);
                    last_cause = cause;
                    continue;
                }
                Err(Failure::MovedTo(holder)) => holder,
            };
            if unreachable.contains(&holder) {
                // The cluster has not promoted a replica yet: nothing to ask until it does.
                return Err(format!(
                    "{last_cause}; the cluster still names {holder} for the scope"
                ));
            }
            lock(&self.routes).insert(key.to_string(), holder.clone());
            self.learn_node(&holder);
            match self.query_on(&holder, &query).await {
                Ok(value) => return Ok(value),
                Err(Failure::Other(cause)) => return Err(cause),
                Err(Failure::Unreachable(cause)) => {
                    unreachable.push(holder);
                    last_cause = cause;
                }
                Err(Failure::MovedTo(_)) => {
                    return Err(format!(
                        "the cluster moved the scope again, from {holder}; retrying on the next decision"
                    ))
                }
            }
        }
        Err(last_cause)
    }

    /// A node a `MOVED` answer named: asked too when the others are unreachable.
    fn learn_node(&self, node: &str) {
        let mut nodes = lock(&self.nodes);
        if !nodes.iter().any(|known| known == node) {
            nodes.push(node.to_string());
        }
    }

    async fn query_on<T, Q, F>(&self, node: &str, query: &Q) -> Result<T, Failure>
    where
        Q: Fn(MultiplexedConnection) -> F,
        F: Future<Output = RedisResult<T>> + Send + 'static,
        T: Send + 'static,
    {
        let connection = self.connection(node).await.map_err(Failure::Unreachable)?;
        executor::off_thread(query(connection))
            .await
            .map_err(|error| match error.redirect_node() {
                Some((holder, _slot))
                    if error.kind() == ErrorKind::Server(ServerErrorKind::Moved) =>
                {
                    Failure::MovedTo(holder.to_string())
                }
                _ if self.broken(node, &error) => {
                    Failure::Unreachable(self.target.redact(&error.to_string()))
                }
                _ => Failure::Other(self.target.redact(&error.to_string())),
            })
    }

    async fn connection(&self, node: &str) -> Result<MultiplexedConnection, String> {
        if let Some(connection) = lock(&self.connections).get(node).cloned() {
            return Ok(connection);
        }
        let opened = open(
            self.target.clone(),
            self.trust.clone(),
            self.login.clone(),
            node.to_string(),
        );
        let nodes = self.nodes.clone();
        let connection = executor::off_thread(async move {
            let connection = opened.await?;
            tokio::spawn(learn_cluster_nodes(connection.clone(), nodes));
            Ok::<_, String>(connection)
        })
        .await
        .inspect_err(|_| self.forget(node))?;
        lock(&self.connections).insert(node.to_string(), connection.clone());
        Ok(connection)
    }

    /// The connection to `node` and the routes to it: the next decision starts afresh.
    fn forget(&self, node: &str) {
        lock(&self.connections).remove(node);
        lock(&self.routes).retain(|_, routed| routed != node);
    }

    /// Whether `error` broke the connection to `node`: then it is dropped so the next try
    /// reconnects, and so is any route to its node.
    fn broken(&self, node: &str, error: &RedisError) -> bool {
        let broken = error.is_io_error() || error.is_connection_dropped() || error.is_timeout();
        if broken {
            self.forget(node);
        }
        broken
    }
}

/// Ask the node `connection` leads to for the cluster's nodes (`CLUSTER SLOTS`) and keep them
/// in `nodes`; any error (no cluster, a command the ACL refuses) leaves `nodes` as it was.
async fn learn_cluster_nodes(
    mut connection: MultiplexedConnection,
    nodes: Arc<Mutex<Vec<String>>>,
) {
    let slots: RedisResult<Value> = redis::cmd("CLUSTER")
        .arg("SLOTS")
        .query_async(&mut connection)
        .await;
    if let Ok(slots) = slots {
        let learned = cluster_nodes(&slots);
        if !learned.is_empty() {
            *lock(&nodes) = learned;
        }
    }
}

/// The `host:port` of every node (masters and replicas) in a `CLUSTER SLOTS` answer: an array
/// of slot ranges `[start, end, [host, port, id, …], …]`, the nodes after the bounds.
fn cluster_nodes(slots: &Value) -> Vec<String> {
    let mut nodes: Vec<String> = Vec::new();
    let Value::Array(ranges) = slots else {
        return nodes;
    };
    for range in ranges {
        let Value::Array(parts) = range else { continue };
        for node in parts.iter().skip(2) {
            let Value::Array(fields) = node else { continue };
            let host = match fields.first() {
                Some(Value::BulkString(bytes)) => String::from_utf8_lossy(bytes).into_owned(),
                Some(Value::SimpleString(text)) => text.clone(),
                _ => continue,
            };
            let Some(Value::Int(port)) = fields.get(1) else {
                continue;
            };
            let address = format!("{host}:{port}");
            if !host.is_empty() && !nodes.contains(&address) {
                nodes.push(address);
            }
        }
    }
    nodes
}

/// Dial `node` (`host:port`), TLS for `rediss://`, and log in as `target` says; the
/// connection's driver runs as a task of the runtime this is called on.
async fn open(
    target: RedisTarget,
    trust: Arc<Trust>,
    login: RedisConnectionInfo,
    node: String,
) -> Result<MultiplexedConnection, String> {
    let (host, port) = node
        .rsplit_once(':')
        .and_then(|(host, port)| Some((host, port.parse::<u16>().ok()?)))
        .ok_or_else(|| format!("{node} is not a host:port"))?;
    let tcp = connector::dial(host, port)
        .await
        .map_err(|e| format!("connect to {node} failed: {e}"))?;
    if target.tls() {
        let name = certificate_name(target.host_and_port().0, host);
        let tls = trust::handshake(trust.client_config_without_alpn(), name, tcp)
            .await
            .map_err(|e| {
                if name == host {
                    e
                } else {
                    format!("{node}: {e}")
                }
            })?;
        log_in(&target, &login, tls).await
    } else {
        log_in(&target, &login, tcp).await
    }
}

/// The name `node_host`'s certificate is verified against (and sent as SNI): its own, unless
/// a cluster announced the node by IP address while the URL names it by host name. Managed
/// clusters announce their nodes' IP addresses but certify the cluster's name, so a node the
/// cluster itself named (over a connection verified for the URL's host) must present a
/// certificate for that same name: the trust of the URL's node, extended to its cluster.
fn certificate_name<'a>(url_host: &'a str, node_host: &'a str) -> &'a str {
    let is_ip = |host: &str| {
        host.trim_start_matches('[')
            .trim_end_matches(']')
            .parse::<std::net::IpAddr>()
            .is_ok()
    };
    if is_ip(node_host) && !is_ip(url_host) {
        url_host
    } else {
        node_host
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
        let command = redis::cmd("HMGET").arg(key).arg("v").arg("s").clone();
        let (version, state): (Option<u64>, Option<Vec<u8>>) = self
            .on_node_of(key, |mut connection| {
                let command = command.clone();
                async move { command.query_async(&mut connection).await }
            })
            .await?;
        Ok((version.unwrap_or(0), state))
    }

    async fn write_if(
        &self,
        key: &str,
        version: u64,
        state: &[u8],
        ttl_ms: u64,
    ) -> Result<bool, String> {
        let written: i64 = self
            .on_node_of(key, |mut connection| {
                let (script, key, state) = (self.script.clone(), key.to_string(), state.to_vec());
                async move {
                    let mut invocation = script.key(key);
                    invocation.arg(version).arg(state).arg(ttl_ms);
                    invocation.invoke_async(&mut connection).await
                }
            })
            .await?;
        Ok(written == 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(value: &str) -> Value {
        Value::BulkString(value.as_bytes().to_vec())
    }

    fn node(host: &str, port: i64) -> Value {
        Value::Array(vec![text(host), Value::Int(port), text("0123abcd")])
    }

    #[test]
    fn cluster_slots_name_every_master_and_replica_once() {
        let slots = Value::Array(vec![
            Value::Array(vec![
                Value::Int(0),
                Value::Int(5460),
                node("10.0.0.1", 7000),
                node("10.0.0.4", 7003),
            ]),
            Value::Array(vec![
                Value::Int(5461),
                Value::Int(10922),
                node("10.0.0.2", 7001),
            ]),
            // A node serving two ranges is listed once.
            Value::Array(vec![
                Value::Int(10923),
                Value::Int(16383),
                node("10.0.0.1", 7000),
            ]),
        ]);
        assert_eq!(
            cluster_nodes(&slots),
            ["10.0.0.1:7000", "10.0.0.4:7003", "10.0.0.2:7001"]
        );
    }

    #[test]
    fn a_node_announced_by_address_is_verified_for_the_urls_host_name() {
        // A managed cluster: the URL names the cluster, the nodes are announced by address.
        assert_eq!(
            certificate_name("cache.example", "10.0.0.4"),
            "cache.example"
        );
        assert_eq!(
            certificate_name("cache.example", "[fd00::4]"),
            "cache.example"
        );
        // The URL's node itself, and a node announced by name, keep their own name.
        assert_eq!(
            certificate_name("cache.example", "cache.example"),
            "cache.example"
        );
        assert_eq!(
            certificate_name("cache.example", "node-2.cache.example"),
            "node-2.cache.example"
        );
        // A URL that names an address gives no name: each node is verified for its own.
        assert_eq!(certificate_name("10.0.0.1", "10.0.0.4"), "10.0.0.4");
        assert_eq!(certificate_name("[::1]", "127.0.0.1"), "127.0.0.1");
    }

    #[test]
    fn anything_but_cluster_slots_teaches_no_node() {
        assert!(cluster_nodes(&Value::Nil).is_empty());
        assert!(cluster_nodes(&Value::Array(vec![Value::Int(1)])).is_empty());
        // A node whose host is unknown to the server (an empty string) cannot be dialled.
        let unknown = Value::Array(vec![Value::Array(vec![
            Value::Int(0),
            Value::Int(16383),
            node("", 7000),
        ])]);
        assert!(cluster_nodes(&unknown).is_empty());
    }
}
