//! Unary calls whose reply is kept as the bytes it arrived in: for a
//! caller that writes the reply out (the gateway's JSON from protobuf,
//! `transcode`) rather than reading it, so nothing is decoded into owned
//! strings and maps only to be written again.

use std::marker::PhantomData;

use bytes::{Buf, Bytes};
use http::uri::PathAndQuery;
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};
use tonic::{GrpcMethod, Status};

use super::Guarded;

/// Requests encoded by prost; replies as their bytes.
struct RawReply<M>(PhantomData<M>);

struct Encode<M>(PhantomData<M>);

struct KeepBytes;

impl<M: prost::Message + Send + 'static> Codec for RawReply<M> {
    type Encode = M;
    type Decode = Bytes;
    type Encoder = Encode<M>;
    type Decoder = KeepBytes;

    fn encoder(&mut self) -> Self::Encoder {
        Encode(PhantomData)
    }

    fn decoder(&mut self) -> Self::Decoder {
        KeepBytes
    }
}

impl<M: prost::Message> Encoder for Encode<M> {
    type Item = M;
    type Error = Status;

    fn encode(&mut self, item: M, buf: &mut EncodeBuf<'_>) -> Result<(), Status> {
        item.encode(buf)
            .map_err(|e| Status::internal(format!("encoding a request: {e}")))
    }
}

impl Decoder for KeepBytes {
    type Item = Bytes;
    type Error = Status;

    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<Bytes>, Status> {
        Ok(Some(src.copy_to_bytes(src.remaining())))
    }
}

/// Calls `method` of `service` (`package.Service`, `Method`) with
/// `request`, as a generated client would; the reply's message bytes,
/// undecoded.
pub async fn unary<M: prost::Message + Send + 'static>(
    channel: Guarded,
    mut request: tonic::Request<M>,
    (service, method, path): (&'static str, &'static str, &'static str),
) -> Result<tonic::Response<Bytes>, Status> {
    let mut grpc = tonic::client::Grpc::new(channel);
    grpc.ready()
        .await
        .map_err(|e| Status::unknown(format!("Service was not ready: {e}")))?;
    request
        .extensions_mut()
        .insert(GrpcMethod::new(service, method));
    grpc.unary(
        request,
        PathAndQuery::from_static(path),
        RawReply(PhantomData),
    )
    .await
}
