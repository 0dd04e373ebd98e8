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
