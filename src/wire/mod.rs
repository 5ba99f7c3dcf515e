//! Everything that crosses the boundary between the binding and the JavaScript facade, in one
//! place: the [`contract`] the facade reads when it loads, the [`failure`] descriptions, the
//! [`hook_message`]s of transport events and the transport-state [`snapshot`]s. The TypeScript
//! of these shapes is generated from their declarations here ([`typescript`]).

pub mod contract;
pub mod failure;
pub mod hook_message;
pub mod snapshot;
pub mod typescript;
