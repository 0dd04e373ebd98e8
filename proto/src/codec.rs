//! The codec of every generated client and server: prost's, with the
//! encode buffer grown once to the whole message before it is written.
//! tonic's buffer starts at 8 KiB and prost writes into it piece by piece,
//! so a listing's 45 KB reply was copied as the buffer doubled three times
//! (1.2% of a listing's CPU in the catalog, perf, `docs/performance.md`).

use std::marker::PhantomData;

use prost::Message;
use tonic::Status;
use tonic::codec::{Codec, EncodeBuf, Encoder};
use tonic_prost::ProstDecoder;

/// Prost messages both ways; `T` sent, `U` received.
#[derive(Debug, Clone, Copy)]
pub struct SizedCodec<T, U>(PhantomData<(T, U)>);

impl<T, U> Default for SizedCodec<T, U> {
    fn default() -> Self {
        SizedCodec(PhantomData)
    }
}

impl<T, U> Codec for SizedCodec<T, U>
where
    T: Message + Send + 'static,
    U: Message + Default + Send + 'static,
{
    type Encode = T;
    type Decode = U;
    type Encoder = SizedEncoder<T>;
    type Decoder = ProstDecoder<U>;

    fn encoder(&mut self) -> Self::Encoder {
        SizedEncoder(PhantomData)
    }

    fn decoder(&mut self) -> Self::Decoder {
        ProstDecoder::default()
    }
}

/// Encodes `T` into a buffer reserved for all of it.
#[derive(Debug, Clone, Copy)]
pub struct SizedEncoder<T>(PhantomData<T>);

impl<T: Message> Encoder for SizedEncoder<T> {
    type Item = T;
    type Error = Status;

    fn encode(&mut self, item: T, buf: &mut EncodeBuf<'_>) -> Result<(), Status> {
        // `encode` measures the message again to check the room it has;
        // `encode_raw` writes it into the room reserved here.
        buf.reserve(item.encoded_len());
        item.encode_raw(buf);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use bytes::BufMut;
    use http_body_util::{BodyExt, Full};
    use tonic::codec::{EncodeBody, Streaming};

    use super::*;
    use crate::catalog::v1::Product;
    use crate::common::v1::LocalizedString;

    fn product(key: &str, name_len: usize) -> Product {
        Product {
            key: key.into(),
            name: Some(LocalizedString {
                values: [("en".to_string(), "x".repeat(name_len))].into(),
            }),
            ..Default::default()
        }
    }

    /// Through tonic's own framing, as a call sends and reads them: each
    /// message is prost's bytes behind gRPC's five-byte prefix, a large one
    /// (past the 8 KiB tonic starts with) as a small one, and they decode
    /// back as sent.
    #[tokio::test]
    async fn messages_frame_as_prost_encodes_them_and_decode_back() {
        let sent = vec![product("large", 100_000), product("small", 10)];
        let mut codec = SizedCodec::<Product, Product>::default();
        let source = futures::stream::iter(sent.clone().into_iter().map(Ok));
        let body = EncodeBody::new_client(codec.encoder(), source, None, None);
        let framed = body.collect().await.unwrap().to_bytes();
        let mut expected = Vec::new();
        for message in &sent {
            let bytes = message.encode_to_vec();
            expected.put_u8(0);
            expected.put_u32(bytes.len() as u32);
            expected.extend_from_slice(&bytes);
        }
        assert_eq!(framed.as_ref(), expected.as_slice());

        let mut read = Streaming::new_request(codec.decoder(), Full::new(framed), None, None);
        let mut received = Vec::new();
        while let Some(message) = read.message().await.unwrap() {
            received.push(message);
        }
        assert_eq!(received, sent);
    }
}
