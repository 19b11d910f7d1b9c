//! A JSON answer written straight to its bytes by a typed writer, documented exactly as poem-openapi's `Json<T>`
//! (see docs/decisions/0002-json-fast-path-for-item-answers.md).

use crate::error::ApiError;
use bytes::Bytes;
use poem::IntoResponse;
use poem_openapi::ApiResponse;
use poem_openapi::payload::{Json, Payload};
use poem_openapi::registry::{MetaResponses, MetaSchemaRef, Registry};
use poem_openapi::types::{ToJSON, Type};
use serde::Serialize;
use std::marker::PhantomData;

/// A JSON answer written straight to its bytes by a typed writer, and documented exactly as `Json<T>` (the same
/// content type and schema). The list and the read of items answer this way: building the DTO and then poem's
/// `serde_json::Value` of it cost more than finding the items (docs/perf/http.md).
pub struct JsonBytes<T> {
    /// The JSON text, as `Json<T>` would have written it.
    bytes: Bytes,
    /// The documented type; `fn() -> T` keeps the payload `Send` whatever `T` is.
    documented: PhantomData<fn() -> T>,
}

impl<T> JsonBytes<T> {
    /// The JSON text of `answer`, which must write what `T`'s `to_json` writes (tests compare the two).
    ///
    /// # Errors
    /// When `answer` cannot be written (a writer bug: every value written is plain data).
    pub fn new(answer: &impl Serialize) -> Result<Self, ApiError> {
        let bytes = serde_json::to_vec(answer).map_err(|e| ApiError::unexpected(format!("write the answer: {e}")))?;
        Ok(Self { bytes: bytes.into(), documented: PhantomData })
    }

    /// An answer written earlier by [`JsonBytes::new`] for the same `T` (kept by [`crate::answers::Answers`]).
    pub(crate) fn kept(bytes: Bytes) -> Self {
        Self { bytes, documented: PhantomData }
    }

    /// The JSON text.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The JSON text, shared (to keep it without a copy).
    pub(crate) fn shared(&self) -> Bytes {
        self.bytes.clone()
    }
}

impl<T: Type> Payload for JsonBytes<T> {
    const CONTENT_TYPE: &'static str = <Json<T> as Payload>::CONTENT_TYPE;

    fn schema_ref() -> MetaSchemaRef {
        T::schema_ref()
    }

    fn register(registry: &mut Registry) {
        T::register(registry);
    }
}

impl<T> IntoResponse for JsonBytes<T> {
    fn into_response(self) -> poem::Response {
        poem::Response::builder()
            .content_type("application/json; charset=utf-8")
            .body(poem::Body::from_bytes(self.bytes))
    }
}

impl<T: ToJSON> ApiResponse for JsonBytes<T> {
    fn meta() -> MetaResponses {
        <Json<T> as ApiResponse>::meta()
    }

    fn register(registry: &mut Registry) {
        <Json<T> as ApiResponse>::register(registry);
    }
}
