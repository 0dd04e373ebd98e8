//! A unary method answered with a message the service holds encoded
//! already (a value just written to the store is encoded once, and that
//! encoding is the reply): the request is decoded by prost as a generated
//! server would, the reply's bytes are written as they are. The client
//! sees the method's declared reply type; nothing on the wire changes.

use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;

use bytes::{Buf, BufMut};
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};
use tonic::server::{Grpc, UnaryService};
use tonic::{Request, Response, Status};

/// Requests decoded by prost; replies as bytes already encoded.
pub struct EncodedReply<Req>(PhantomData<Req>);

impl<Req> Default for EncodedReply<Req> {
    fn default() -> Self {
        Self(PhantomData)
    }
}

pub struct WriteBytes;

pub struct DecodeRequest<Req>(PhantomData<Req>);

impl<Req: prost::Message + Default + Send + 'static> Codec for EncodedReply<Req> {
    type Encode = Vec<u8>;
    type Decode = Req;
    type Encoder = WriteBytes;
    type Decoder = DecodeRequest<Req>;

    fn encoder(&mut self) -> WriteBytes {
        WriteBytes
    }

    fn decoder(&mut self) -> DecodeRequest<Req> {
        DecodeRequest(PhantomData)
    }
}

impl Encoder for WriteBytes {
    type Item = Vec<u8>;
    type Error = Status;

    fn encode(&mut self, item: Vec<u8>, buf: &mut EncodeBuf<'_>) -> Result<(), Status> {
        buf.put_slice(&item);
        Ok(())
    }
}

impl<Req: prost::Message + Default> Decoder for DecodeRequest<Req> {
    type Item = Req;
    type Error = Status;

    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<Req>, Status> {
        let len = src.remaining();
        Req::decode(src.copy_to_bytes(len))
            .map(Some)
            .map_err(|e| Status::internal(e.to_string()))
    }
}

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send + 'static>>;

/// A method as a function of its request to its reply's encoding.
struct Method<F>(F);

impl<Req, F, Fut> UnaryService<Req> for Method<F>
where
    F: FnMut(Req) -> Fut,
    Fut: Future<Output = Result<Vec<u8>, Status>> + Send + 'static,
{
    type Response = Vec<u8>;
    type Future = BoxFuture<Result<Response<Vec<u8>>, Status>>;

    fn call(&mut self, request: Request<Req>) -> Self::Future {
        let answer = (self.0)(request.into_inner());
        Box::pin(async move { answer.await.map(Response::new) })
    }
}

/// Answers `request` (a unary call of a method taking `Req`) with what
/// `method` gives, written as it is.
pub async fn unary<Req, B, F, Fut>(
    request: http::Request<B>,
    method: F,
) -> http::Response<tonic::body::Body>
where
    Req: prost::Message + Default + Send + 'static,
    B: tonic::codegen::Body + Send + 'static,
    B::Error: Into<tonic::codegen::StdError> + Send + 'static,
    F: FnMut(Req) -> Fut,
    Fut: Future<Output = Result<Vec<u8>, Status>> + Send + 'static,
{
    Grpc::new(EncodedReply::<Req>::default())
        .unary(Method(method), request)
        .await
}
