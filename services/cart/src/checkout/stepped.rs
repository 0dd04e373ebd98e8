//! What a step of the checkout's machine says besides its effects
//! (`machine::Stepped`): whether it changed the record. The runner writes
//! only a changed record, and knowing it spares the runner a copy of the
//! record to compare with (two a step, each with the session's lines,
//! prices and payment). Every write of a step goes through [`Changed`],
//! which writes only a value that differs; the machine's tests check each
//! step's word against the record itself.

use storefront_proto::cart::storage::v1::{CheckoutRecord, HoldState};
use storefront_proto::cart::v1::CheckoutSession;

/// Whether a step changed its record so far.
#[derive(Default)]
pub(super) struct Changed(bool);

impl Changed {
    pub fn changed(&self) -> bool {
        self.0
    }

    /// A write the step makes itself (a count, a value taken).
    pub fn mark(&mut self, changed: bool) {
        self.0 |= changed;
    }

    pub fn set<T: PartialEq>(&mut self, slot: &mut T, value: T) {
        if *slot != value {
            *slot = value;
            self.0 = true;
        }
    }

    /// As `set`, copying `value` only when it differs.
    pub fn copy<T: PartialEq + Clone>(&mut self, slot: &mut T, value: &T) {
        if slot != value {
            slot.clone_from(value);
            self.0 = true;
        }
    }

    pub fn hold(&mut self, record: &mut CheckoutRecord, to: HoldState) {
        if record.hold() != to {
            record.set_hold(to);
            self.0 = true;
        }
    }

    pub fn session<'r>(&mut self, record: &'r mut CheckoutRecord) -> &'r mut CheckoutSession {
        self.0 |= record.session.is_none();
        record.session.get_or_insert_default()
    }
}
