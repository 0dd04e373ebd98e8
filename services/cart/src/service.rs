//! The `storefront.cart.v1.CartService` gRPC implementation.

use std::sync::Arc;

use storefront_proto::cart::v1::cart_service_server::CartService;
use storefront_proto::cart::v1::*;
use storefront_proto::payments::v1::VerifyWebhookRequest;
use tonic::{Request, Response, Status};

use crate::carts::{Carts, now};
use crate::checkout::Checkout;

#[derive(Clone)]
pub struct CartApi {
    pub carts: Arc<Carts>,
    pub checkout: Arc<Checkout>,
    pub merge: crate::merge::Strategy,
    pub markets: crate::market_set::Markets,
}

type Reply<T> = Result<Response<T>, Status>;

fn ok<T>(value: T) -> Reply<T> {
    Ok(Response::new(value))
}

/// What the typed forms of the methods `raw::CartServer` serves answer.
fn served_raw() -> Status {
    Status::unimplemented("served by raw::CartServer")
}

#[tonic::async_trait]
impl CartService for CartApi {
    async fn create_cart(&self, request: Request<CreateCartRequest>) -> Reply<Cart> {
        let req = request.into_inner();
        let cart = self
            .carts
            .create(&req.customer_id, &req.currency_code)
            .await?;
        ok(self.carts.estimated(cart).await?)
    }

    async fn get_cart(&self, request: Request<GetCartRequest>) -> Reply<Cart> {
        let req = request.into_inner();
        let cart = self.carts.get(&req.customer_id, &req.cart_id).await?;
        ok(self.carts.estimated(cart).await?)
    }

    async fn delete_cart(&self, request: Request<DeleteCartRequest>) -> Reply<DeleteCartResponse> {
        let req = request.into_inner();
        self.carts.delete(&req.customer_id, &req.cart_id).await?;
        ok(DeleteCartResponse {})
    }

    // The four cart writes have one path: `raw::CartServer` answers them
    // from their encoding before the generated server is asked, so these
    // are never reached (a test ties its paths to these methods).
    async fn update_cart(&self, _: Request<UpdateCartRequest>) -> Reply<Cart> {
        Err(served_raw())
    }

    async fn add_line_item(&self, _: Request<AddLineItemRequest>) -> Reply<Cart> {
        Err(served_raw())
    }

    async fn update_line_item(&self, _: Request<UpdateLineItemRequest>) -> Reply<Cart> {
        Err(served_raw())
    }

    async fn remove_line_item(&self, _: Request<RemoveLineItemRequest>) -> Reply<Cart> {
        Err(served_raw())
    }

    async fn list_promotions(
        &self,
        _: Request<ListPromotionsRequest>,
    ) -> Reply<ListPromotionsResponse> {
        let catalogue = self
            .carts
            .promotions
            .read()
            .unwrap_or_else(|p| p.into_inner());
        ok(ListPromotionsResponse {
            promotions: catalogue.active_now(now().seconds),
        })
    }

    async fn set_promotions(
        &self,
        request: Request<SetPromotionsRequest>,
    ) -> Reply<SetPromotionsResponse> {
        let document = request.into_inner().document;
        let set = crate::promotion_set::parse(&document)?;
        crate::promotion_set::store(&self.carts.store, &document).await?;
        let count = set.len() as u32;
        *self
            .carts
            .promotions
            .write()
            .unwrap_or_else(|p| p.into_inner()) = crate::promotions::Catalogue::new(set);
        ok(SetPromotionsResponse { promotions: count })
    }

    async fn get_markets(&self, _: Request<GetMarketsRequest>) -> Reply<MarketsDocument> {
        ok(self.markets.current().document())
    }

    async fn set_markets(&self, request: Request<SetMarketsRequest>) -> Reply<MarketsDocument> {
        let document = request.into_inner().document;
        let set = self.markets.set(&self.carts.store, &document).await?;
        ok(set.document())
    }

    async fn create_checkout(
        &self,
        request: Request<CreateCheckoutRequest>,
    ) -> Reply<CheckoutSession> {
        let req = request.into_inner();
        ok(self
            .checkout
            .open(
                &req.customer_id,
                &req.cart_id,
                &req.client_network,
                req.shipping_address,
            )
            .await?)
    }

    async fn get_checkout(&self, request: Request<GetCheckoutRequest>) -> Reply<CheckoutSession> {
        let req = request.into_inner();
        if req.session_id.is_empty() && !req.cart_id.is_empty() {
            return ok(self
                .checkout
                .current(&req.customer_id, &req.cart_id)
                .await?);
        }
        ok(self.checkout.get(&req.customer_id, &req.session_id).await?)
    }

    async fn confirm_checkout(
        &self,
        request: Request<ConfirmCheckoutRequest>,
    ) -> Reply<ConfirmCheckoutReply> {
        let req = request.into_inner();
        let outcome = self
            .checkout
            .confirm(&req.customer_id, &req.session_id)
            .await?;
        ok(ConfirmCheckoutReply {
            outcome: Some(outcome),
        })
    }

    async fn merge_carts(&self, request: Request<MergeCartsRequest>) -> Reply<MergeReport> {
        let req = request.into_inner();
        // The guest's token ends with this login: what its checkouts hold
        // goes back first, so its lines merge with the units they held and
        // no unit stays held by a session nobody can use.
        if crate::hold_limits::is_guest(&req.guest_id) {
            self.checkout.release_all_of(&req.guest_id).await?;
        }
        ok(self
            .carts
            .merge(self.merge, &req.guest_id, &req.customer_id)
            .await?)
    }

    async fn update_checkout(
        &self,
        request: Request<UpdateCheckoutRequest>,
    ) -> Reply<CheckoutSession> {
        let req = request.into_inner();
        let checkout = &self.checkout;
        let (customer, session) = (&req.customer_id, &req.session_id);
        ok(checkout
            .update(customer, session, &req.shipping_method_id)
            .await?)
    }

    async fn extend_checkout(
        &self,
        request: Request<ExtendCheckoutRequest>,
    ) -> Reply<CheckoutSession> {
        let req = request.into_inner();
        ok(self
            .checkout
            .extend(&req.customer_id, &req.session_id)
            .await?)
    }

    async fn release_checkout(
        &self,
        request: Request<ReleaseCheckoutRequest>,
    ) -> Reply<CheckoutSession> {
        let req = request.into_inner();
        ok(self
            .checkout
            .release(&req.customer_id, &req.session_id)
            .await?)
    }

    async fn pay_checkout(&self, request: Request<PayCheckoutRequest>) -> Reply<PayCheckoutReply> {
        let req = request.into_inner();
        let (customer, session) = (&req.customer_id, &req.session_id);
        ok(self
            .checkout
            .pay(customer, session, &req.payment_method)
            .await?)
    }

    async fn payment_changed(
        &self,
        request: Request<PaymentChangedRequest>,
    ) -> Reply<PaymentChangedReply> {
        let req = request.into_inner();
        ok(self
            .checkout
            .payment_changed(&req.session_id, &req.payment_id, req.holds_money)
            .await?)
    }

    async fn payment_webhook(
        &self,
        request: Request<VerifyWebhookRequest>,
    ) -> Reply<PaymentWebhookReply> {
        ok(self.checkout.payment_webhook(request.into_inner()).await?)
    }
}
