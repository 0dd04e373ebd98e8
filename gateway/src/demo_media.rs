//! Pictures for the demo catalog: the all-in-one mesh points the
//! generator's media here (`DEMO_MEDIA_BASE`), and each is an SVG drawn
//! from the product's key (its kind of thing, its name) and the file's
//! colour, so that a storefront built on the demo shows something that
//! looks like a product, never a broken link. Local and development only.

use axum::extract::{Path, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};

use crate::error::ApiError;
use crate::state::AppState;

/// Outlines by kind, in a 400 x 500 box.
const SHAPES: [(&[&str], &str); 4] = [
    (
        &[
            "shirt", "tee", "top", "dress", "jumper", "hoodie", "jacket", "coat",
        ],
        "M130 120 L170 95 Q200 120 230 95 L270 120 L320 180 L285 210 L265 190 L265 400 L135 400 L135 190 L115 210 L80 180 Z",
    ),
    (
        &[
            "shoe", "shoes", "boot", "boots", "sneaker", "sneakers", "sandal", "sandals",
        ],
        "M80 300 Q90 230 150 240 Q190 250 220 290 Q280 300 320 320 Q330 350 300 360 L90 360 Q75 340 80 300 Z",
    ),
    (
        &["mug", "cup", "bowl", "vase", "jug", "plate", "pot"],
        "M120 170 L260 170 L250 380 Q190 400 130 380 Z M260 210 Q320 215 310 270 Q300 320 252 320 L254 295 Q285 290 285 265 Q287 238 258 238 Z",
    ),
    (
        &["frame", "print", "poster", "mirror"],
        "M100 110 L300 110 L300 390 L100 390 Z M130 140 L130 360 L270 360 L270 140 Z",
    ),
];
/// Anything else: a parcel.
const PARCEL: &str = "M110 180 L200 130 L290 180 L290 330 L200 380 L110 330 Z M110 180 L200 230 L290 180 M200 230 L200 380";

const COLOURS: [(&str, &str); 10] = [
    ("navy", "#27365a"),
    ("black", "#2b2b2b"),
    ("white", "#f4f2ee"),
    ("grey", "#8c8f93"),
    ("red", "#b23a3a"),
    ("green", "#3f6b4f"),
    ("blue", "#3d6fa8"),
    ("sand", "#cdb891"),
    ("olive", "#707a45"),
    ("pink", "#d8a1aa"),
];

fn word_ok(s: &str, max: usize) -> bool {
    !s.is_empty()
        && s.len() <= max
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.')
}

/// The SVG for product `key`'s file `file` (`2-navy.jpg`).
fn picture(key: &str, file: &str) -> String {
    let words: Vec<&str> = key
        .split('-')
        .filter(|w| !w.bytes().all(|b| b.is_ascii_digit()))
        .collect();
    let kind = words.last().copied().unwrap_or_default();
    let shape = SHAPES
        .iter()
        .find(|(kinds, _)| kinds.contains(&kind))
        .map_or(PARCEL, |(_, path)| *path);
    let stem = file.split('.').next().unwrap_or_default();
    let named = COLOURS.iter().find(|(name, _)| stem.ends_with(name));
    let hash = key
        .bytes()
        .fold(7u32, |h, b| h.wrapping_mul(31).wrapping_add(u32::from(b)));
    let (_, fill) = named
        .copied()
        .unwrap_or(COLOURS[(hash as usize) % COLOURS.len()]);
    let hue = hash % 360;
    let title: Vec<String> = words
        .iter()
        .map(|w| w[..1].to_uppercase() + &w[1..])
        .collect();
    let title = title.join(" ");
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"400\" height=\"500\" viewBox=\"0 0 400 500\">\
         <rect width=\"400\" height=\"500\" fill=\"hsl({hue},30%,92%)\"/>\
         <ellipse cx=\"200\" cy=\"420\" rx=\"130\" ry=\"14\" fill=\"#000\" opacity=\".08\"/>\
         <path d=\"{shape}\" fill=\"{fill}\" fill-rule=\"evenodd\" stroke=\"#0003\" stroke-width=\"3\" stroke-linejoin=\"round\"/>\
         <text x=\"200\" y=\"470\" font-family=\"sans-serif\" font-size=\"20\" text-anchor=\"middle\" fill=\"#444\">{title}</text></svg>"
    )
}

/// A demo product's picture.
#[utoipa::path(get, path = "/media/demo/{key}/{file}", tag = "Products",
    params(
        ("key" = String, Path, description = "A demo product's key"),
        ("file" = String, Path, description = "The picture's file, as the demo catalog names it (`1.jpg`, `2-navy.jpg`)"),
    ),
    responses(
        (status = 200, description = "An SVG drawn for the demo catalog (local and development only)", content_type = "image/svg+xml"),
        (status = 404, description = "NOT_FOUND: not a demo picture, or production and staging", body = crate::error::ErrorBody),
    ))]
pub async fn demo_picture(
    State(state): State<AppState>,
    Path((key, file)): Path<(String, String)>,
) -> Response {
    if !state.local_pages || !word_ok(&key, 96) || !word_ok(&file, 40) {
        return ApiError::not_found("no such picture").into_response();
    }
    let headers = [
        (header::CONTENT_TYPE, "image/svg+xml"),
        (header::CACHE_CONTROL, "public, max-age=86400"),
    ];
    (headers, picture(&key, &file)).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_picture_shows_its_kind_colour_and_name() {
        let shirt = picture("classic-linen-shirt-000123", "2-navy.jpg");
        assert!(
            shirt.contains(SHAPES[0].1)
                && shirt.contains("#27365a")
                && shirt.contains("Classic Linen Shirt")
        );
        assert!(picture("classic-ceramic-frame-000657", "1.jpg").contains(SHAPES[3].1));
        assert!(picture("cosy-wool-blanket-000001", "1.jpg").contains(PARCEL));
        assert!(!word_ok("<script>", 96) && !word_ok("", 96) && !word_ok(&"a".repeat(97), 96));
    }
}
