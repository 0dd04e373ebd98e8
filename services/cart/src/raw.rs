//! The cart service as served: its four cart writes answered with the
//! cart as it was encoded for the store (`storefront_platform::reply`),
//! so a write encodes the cart once and copies it nowhere; every other
//! method by the generated server.

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
            "/storefront.cart.v1.CartService/AddLineItem" => {
                answer(request, carts, |c, r: AddLineItemRequest| async move {
                    c.add_line(r).await
                })
            }
            "/storefront.cart.v1.CartService/UpdateLineItem" => {
                answer(request, carts, |c, r: UpdateLineItemRequest| async move {
                    c.set_quantity(r).await
                })
            }
            "/storefront.cart.v1.CartService/RemoveLineItem" => {
                answer(request, carts, |c, r: RemoveLineItemRequest| async move {
                    c.remove_line(&r.customer_id, &r.cart_id, &r.line_item_id)
                        .await
                })
            }
            "/storefront.cart.v1.CartService/UpdateCart" => {
                answer(request, carts, |c, r: UpdateCartRequest| async move {
                    c.update(r).await
                })
            }
            _ => self.generated.call(request),
        }
    }
}
