//! Everything that crosses the boundary between the binding and the JavaScript facade, in one
//! place: the [`contract`] the facade reads when it loads (from `lib/contract.generated.json`),
//! the [`failure`] descriptions, the [`hook_message`]s of transport events, the [`diagnostic`]
//! records, the transport-state [`snapshot`]s and the payloads of the diagnostics [`channels`]
//! (built by the facade). The TypeScript of these shapes is described from their declarations
//! ([`typescript`]) and generated into `types/wire.generated.d.ts`, with the transport options'
//! typings and the contract file (`generated`).

pub mod channels;
pub mod contract;
pub mod diagnostic;
pub mod failure;
#[cfg(test)]
mod generated;
pub mod hook_message;
pub mod snapshot;
pub mod typescript;
