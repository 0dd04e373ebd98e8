//! What merging a guest's cart at login did (`mergeReport`).

use serde::Serialize;
use storefront_proto::cart::v1 as pb;
use utoipa::ToSchema;

/// A login with a guest's token in `X-BFF-Token`: the guest's cart merged
/// into the customer's (or kept as a new cart of theirs, by the shop's
/// `CART_MERGE_STRATEGY`), every line priced afresh and every code checked
/// again. Without `cartId`, the guest had no active cart.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MergeReport {
    /// The customer's cart that now holds the guest's lines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cart_id: Option<String>,
    pub lines_added: Vec<MergedLine>,
    /// Lines the customer's cart had, now with the guest's units added.
    pub quantities_changed: Vec<MergedLine>,
    /// Guest lines not carried over (out of stock, no longer for sale, not
    /// sold in the cart's currency, over the cart's caps), each with why.
    pub lines_dropped: Vec<DroppedLine>,
    pub codes_dropped: Vec<DroppedCode>,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct MergedLine {
    pub line_id: String,
    pub product_id: String,
    pub variant_id: u32,
    /// The line's quantity now.
    pub quantity: u32,
    /// Before the merge (0 for a line added).
    pub previous_quantity: u32,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DroppedLine {
    pub product_id: String,
    pub variant_id: u32,
    pub quantity: u32,
    pub reason: String,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct DroppedCode {
    pub code: String,
    pub reason: String,
}

fn merged(l: pb::MergedLine) -> MergedLine {
    MergedLine {
        line_id: l.line_id,
        product_id: l.product_id,
        variant_id: l.variant_id,
        quantity: l.quantity,
        previous_quantity: l.previous_quantity,
    }
}

impl From<pb::MergeReport> for MergeReport {
    fn from(r: pb::MergeReport) -> Self {
        Self {
            cart_id: Some(r.cart_id).filter(|id| !id.is_empty()),
            lines_added: r.lines_added.into_iter().map(merged).collect(),
            quantities_changed: r.quantities_changed.into_iter().map(merged).collect(),
            lines_dropped: r
                .lines_dropped
                .into_iter()
                .map(|d| DroppedLine {
                    product_id: d.product_id,
                    variant_id: d.variant_id,
                    quantity: d.quantity,
                    reason: d.reason,
                })
                .collect(),
            codes_dropped: r
                .codes_dropped
                .into_iter()
                .map(|d| DroppedCode {
                    code: d.code,
                    reason: d.reason,
                })
                .collect(),
        }
    }
}
