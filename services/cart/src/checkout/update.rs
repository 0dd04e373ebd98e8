//! `PUT /checkout/{id}`: a state-setting change of an open session, its
//! shipping method; its totals and tax repriced at once (the machine's
//! Reprice). A method not offered to the session's address is a 422, and
//! nothing changes.

use storefront_platform::error::ServiceError;
use storefront_proto::cart::v1::CheckoutSession;

use super::machine::Event;
use super::runner::Ran;
use super::{Checkout, ids, view};

impl Checkout {
    pub async fn update(
        &self,
        customer_id: &str,
        session_id: &str,
        shipping_method_id: &str,
    ) -> Result<CheckoutSession, ServiceError> {
        let found = self.record(customer_id, session_id).await?;
        let (_, cart_id) = ids(&found.value);
        let cart = self.carts.get(customer_id, cart_id).await?;
        let mut priced = found.value.session.clone().unwrap_or_default();
        let address = priced.shipping_address.as_ref();
        let quote = self.quote(&cart, address, Some(shipping_method_id)).await?;
        quote.price(&mut priced, &cart);
        let reprice = Event::Reprice { priced: &priced };
        match self
            .drive(session_id, reprice, Some(found.into()), None)
            .await?
        {
            Ran::Done(seen) => Ok(view(seen.record)),
            Ran::Refused(_, refusal) => Err(refusal.error()),
        }
    }
}
