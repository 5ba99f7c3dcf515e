//! The fleet-wide response cache's round trips (decisions D41) on the same connections and
//! routing as the shared state: each operation is one script on the node that holds the
//! cache scope's slot, its three keys sharing one hash tag.

use std::collections::HashMap;

use redis::aio::MultiplexedConnection;
use redis::{RedisResult, Script};

use super::RedisBackend;
use crate::cache::fleet::FleetKeys;
use crate::shared_state::fleet_cache::{self, CacheBackend, FleetEntry};

/// `script` with the scope's three keys (all on one slot; routed by the index key) and `args`,
/// run on `connection`.
async fn invoke_on_scope<T: redis::FromRedisValue>(
    script: &'static Script,
    keys: FleetKeys,
    args: Vec<Vec<u8>>,
    mut connection: MultiplexedConnection,
) -> RedisResult<T> {
    let mut invocation = script.prepare_invoke();
    invocation.key(keys.index).key(keys.meta).key(keys.values);
    for arg in args {
        invocation.arg(arg);
    }
    invocation.invoke_async(&mut connection).await
}

/// Script arguments as Redis reads them (numbers as their decimal text).
fn args(values: &[&dyn std::fmt::Display]) -> Vec<Vec<u8>> {
    values.iter().map(|v| v.to_string().into_bytes()).collect()
}

impl CacheBackend for RedisBackend {
    async fn cache_read(
        &self,
        keys: &FleetKeys,
        id: &str,
    ) -> Result<(u64, Option<String>), String> {
        let (generation, value): (u64, String) = self
            .on_node_of(&keys.index, |connection| {
                invoke_on_scope(
                    fleet_cache::read_script(),
                    keys.clone(),
                    args(&[&id]),
                    connection,
                )
            })
            .await?;
        Ok((generation, (!value.is_empty()).then_some(value)))
    }

    async fn cache_write(
        &self,
        keys: &FleetKeys,
        entry: FleetEntry<'_>,
    ) -> Result<Option<u64>, String> {
        let arguments = args(&[
            &entry.generation,
            &entry.id,
            &entry.value,
            &entry.description,
            &entry.ttl_ms,
            &entry.cap,
        ]);
        let evicted: i64 = self
            .on_node_of(&keys.index, |connection| {
                invoke_on_scope(
                    fleet_cache::write_script(),
                    keys.clone(),
                    arguments.clone(),
                    connection,
                )
            })
            .await?;
        Ok(u64::try_from(evicted).ok())
    }

    async fn cache_begin_invalidation(
        &self,
        keys: &FleetKeys,
        ttl_ms: u64,
    ) -> Result<Vec<(String, String)>, String> {
        let meta: HashMap<String, String> = self
            .on_node_of(&keys.index, |mut connection| {
                let meta_key = keys.meta.clone();
                async move {
                    let mut invocation = fleet_cache::begin_invalidation_script().prepare_invoke();
                    invocation.key(meta_key).arg(ttl_ms);
                    invocation.invoke_async(&mut connection).await
                }
            })
            .await?;
        Ok(meta.into_iter().collect())
    }

    async fn cache_drop(&self, keys: &FleetKeys, ids: Vec<String>) -> Result<(), String> {
        let arguments: Vec<Vec<u8>> = ids.into_iter().map(String::into_bytes).collect();
        let _: i64 = self
            .on_node_of(&keys.index, |connection| {
                invoke_on_scope(
                    fleet_cache::drop_script(),
                    keys.clone(),
                    arguments.clone(),
                    connection,
                )
            })
            .await?;
        Ok(())
    }
}
