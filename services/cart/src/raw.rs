//! The cart service as served: its four cart writes answered with the
//! cart as it was encoded for the store (`storefront_platform::reply`),
//! so a write encodes the cart once and copies it nowhere; every other
//! method by the generated server. This is the only path of those four
//! (`service.rs` answers them UNIMPLEMENTED, never reached), and a test
//! holds each path here to a method of the generated service.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use storefront_platform::error::ServiceError;
use storefront_proto::cart::v1::cart_service_server::CartServiceServer;
use storefront_proto::cart::v1::{
    AddLineItemRequest, RemoveLineItemRequest, UpdateCartRequest, UpdateLineItemRequest,
};
use tonic::Status;
use tonic::server::NamedService;

use crate::carts::{Carts, EncodedCart};
use crate::service::CartApi;

type Answer = http::Response<tonic::body::Body>;

const ADD_LINE_ITEM: &str = "/storefront.cart.v1.CartService/AddLineItem";
const UPDATE_LINE_ITEM: &str = "/storefront.cart.v1.CartService/UpdateLineItem";
const REMOVE_LINE_ITEM: &str = "/storefront.cart.v1.CartService/RemoveLineItem";
const UPDATE_CART: &str = "/storefront.cart.v1.CartService/UpdateCart";
/// The methods answered here rather than by the generated server.
#[cfg(test)]
const SERVED_HERE: [&str; 4] = [
    ADD_LINE_ITEM,
    UPDATE_LINE_ITEM,
    REMOVE_LINE_ITEM,
    UPDATE_CART,
];

#[derive(Clone)]
pub struct CartServer {
    api: CartApi,
    generated: CartServiceServer<CartApi>,
}

impl CartServer {
    pub fn new(api: CartApi) -> Self {
        Self {
            generated: CartServiceServer::new(api.clone()),
            api,
        }
    }
}

impl NamedService for CartServer {
    const NAME: &'static str = <CartServiceServer<CartApi> as NamedService>::NAME;
}

type Answering = Pin<Box<dyn Future<Output = Result<Answer, Infallible>> + Send + 'static>>;

/// Answers `request` with the cart `write` made, as it was encoded.
fn answer<Req, B, F, Fut>(request: http::Request<B>, carts: Arc<Carts>, write: F) -> Answering
where
    Req: prost::Message + Default + Send + 'static,
    B: tonic::codegen::Body + Send + 'static,
    B::Error: Into<tonic::codegen::StdError> + Send + 'static,
    F: Fn(Arc<Carts>, Req) -> Fut + Send + 'static,
    Fut: Future<Output = Result<EncodedCart, ServiceError>> + Send + 'static,
{
    Box::pin(async move {
        let reply = storefront_platform::reply::unary(request, move |req: Req| {
            let written = write(carts.clone(), req);
            async move { Ok::<_, Status>(written.await?.0) }
        });
        Ok(reply.await)
    })
}

impl<B> tower::Service<http::Request<B>> for CartServer
where
    B: tonic::codegen::Body + Send + 'static,
    B::Error: Into<tonic::codegen::StdError> + Send + 'static,
{
    type Response = Answer;
    type Error = Infallible;
    type Future = Answering;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: http::Request<B>) -> Answering {
        let carts = self.api.carts.clone();
        match request.uri().path() {
            ADD_LINE_ITEM => answer(request, carts, |c, r: AddLineItemRequest| async move {
                c.add_line(r).await
            }),
            UPDATE_LINE_ITEM => answer(request, carts, |c, r: UpdateLineItemRequest| async move {
                c.set_quantity(r).await
            }),
            REMOVE_LINE_ITEM => answer(request, carts, |c, r: RemoveLineItemRequest| async move {
                c.remove_line(&r.customer_id, &r.cart_id, &r.line_item_id)
                    .await
            }),
            UPDATE_CART => answer(request, carts, |c, r: UpdateCartRequest| async move {
                c.update(r).await
            }),
            _ => self.generated.call(request),
        }
    }
}

#[cfg(test)]
mod tests {
    use prost::Message;

    use super::*;

    /// Each path served here is a method of the generated CartService:
    /// a misspelt one would fall through to the generated server, which
    /// answers UNIMPLEMENTED.
    #[test]
    fn every_path_served_here_is_a_method_of_the_service() {
        let set = prost_types::FileDescriptorSet::decode(storefront_proto::FILE_DESCRIPTOR_SET)
            .expect("the descriptor set");
        let service = set
            .file
            .iter()
            .filter(|f| f.package() == "storefront.cart.v1")
            .flat_map(|f| &f.service)
            .find(|s| s.name() == "CartService")
            .expect("CartService");
        let methods: Vec<String> = service
            .method
            .iter()
            .map(|m| format!("/{}/{}", CartServer::NAME, m.name()))
            .collect();
        for path in SERVED_HERE {
            assert!(methods.iter().any(|m| m == path), "{path} is not a method");
        }
    }
}
