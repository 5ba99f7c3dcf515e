//! Transport events as hook messages in the client's outbox.
//!
//! An event is queued and the transport goes on: the outbox keeps a call's messages in order,
//! so its hooks run in order and before its promise settles, and a slow hook never holds up
//! the network. Calls without hooks and not observed get no sink (`None`).

use anilink_transport::events::{Event, EventSink};
use anilink_transport::options::HookSet;

use crate::outbox::{Kind, Outbox, Payload};
use crate::wire::hook_message::HookMessage;

pub struct HookEvents {
    pub outbox: Outbox,
    pub call_id: u32,
    /// The call's hooks: an observed call also gets events no hook of it takes.
    pub hooks: HookSet,
}

impl EventSink for HookEvents {
    async fn emit(&self, event: Event) {
        let mut message = HookMessage::of(&event);
        if self.hooks.is_observed() {
            message.observe(&event, self.hooks);
        }
        self.outbox
            .send(self.call_id, Kind::Event, Payload::Event(&message));
    }
}
