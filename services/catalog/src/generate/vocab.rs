//! The words the demo catalog is made of: a three-level category tree whose
//! leaves name a product type, brands, adjectives and materials, in English
//! (en-AU, en-NZ) and German (de-DE).

/// (key, en, de)
pub type Word = (&'static str, &'static str, &'static str);

pub struct Leaf {
    pub key: &'static str,
    pub name: (&'static str, &'static str),
    /// The singular product type: (en, de).
    pub product: (&'static str, &'static str),
    pub sizes: &'static [&'static str],
}

pub struct Branch {
    pub key: &'static str,
    pub name: (&'static str, &'static str),
    pub leaves: &'static [Leaf],
}

pub struct Root {
    pub key: &'static str,
    pub name: (&'static str, &'static str),
    pub branches: &'static [Branch],
    pub materials: &'static [Word],
}

const CLOTHES: &[&str] = &["XS", "S", "M", "L", "XL"];
const SHOES: &[&str] = &["6", "7", "8", "9", "10", "11"];
const ONE_SIZE: &[&str] = &["One Size"];

macro_rules! leaf {
    ($key:expr, $en:expr, $de:expr, $pen:expr, $pde:expr, $sizes:expr) => {
        Leaf {
            key: $key,
            name: ($en, $de),
            product: ($pen, $pde),
            sizes: $sizes,
        }
    };
}

const APPAREL: &[Word] = &[
    ("cotton", "Cotton", "Baumwoll"),
    ("linen", "Linen", "Leinen"),
    ("wool", "Wool", "Woll"),
    ("leather", "Leather", "Leder"),
    ("denim", "Denim", "Denim"),
    ("organic", "Organic", "Bio"),
];

const HOMEWARE: &[Word] = &[
    ("ceramic", "Ceramic", "Keramik"),
    ("stoneware", "Stoneware", "Steingut"),
    ("oak", "Oak", "Eichen"),
    ("linen", "Linen", "Leinen"),
    ("glass", "Glass", "Glas"),
];

pub const TREE: &[Root] = &[
    Root {
        key: "women",
        name: ("Women", "Damen"),
        materials: APPAREL,
        branches: &[
            Branch {
                key: "clothing",
                name: ("Clothing", "Bekleidung"),
                leaves: &[
                    leaf!("shirts", "Shirts", "Hemden", "Shirt", "Hemd", CLOTHES),
                    leaf!("dresses", "Dresses", "Kleider", "Dress", "Kleid", CLOTHES),
                    leaf!("jeans", "Jeans", "Jeans", "Jeans", "Jeans", CLOTHES),
                ],
            },
            Branch {
                key: "shoes",
                name: ("Shoes", "Schuhe"),
                leaves: &[
                    leaf!(
                        "sneakers", "Sneakers", "Sneaker", "Sneaker", "Sneaker", SHOES
                    ),
                    leaf!("boots", "Boots", "Stiefel", "Boot", "Stiefel", SHOES),
                    leaf!("sandals", "Sandals", "Sandalen", "Sandal", "Sandale", SHOES),
                ],
            },
            Branch {
                key: "accessories",
                name: ("Accessories", "Accessoires"),
                leaves: &[
                    leaf!("bags", "Bags", "Taschen", "Bag", "Tasche", ONE_SIZE),
                    leaf!("hats", "Hats", "Hüte", "Hat", "Hut", ONE_SIZE),
                    leaf!("scarves", "Scarves", "Schals", "Scarf", "Schal", ONE_SIZE),
                ],
            },
        ],
    },
    Root {
        key: "men",
        name: ("Men", "Herren"),
        materials: APPAREL,
        branches: &[
            Branch {
                key: "clothing",
                name: ("Clothing", "Bekleidung"),
                leaves: &[
                    leaf!("shirts", "Shirts", "Hemden", "Shirt", "Hemd", CLOTHES),
                    leaf!(
                        "t-shirts", "T-Shirts", "T-Shirts", "T-Shirt", "T-Shirt", CLOTHES
                    ),
                    leaf!("trousers", "Trousers", "Hosen", "Trousers", "Hose", CLOTHES),
                ],
            },
            Branch {
                key: "shoes",
                name: ("Shoes", "Schuhe"),
                leaves: &[
                    leaf!(
                        "sneakers", "Sneakers", "Sneaker", "Sneaker", "Sneaker", SHOES
                    ),
                    leaf!("boots", "Boots", "Stiefel", "Boot", "Stiefel", SHOES),
                    leaf!("loafers", "Loafers", "Slipper", "Loafer", "Slipper", SHOES),
                ],
            },
            Branch {
                key: "accessories",
                name: ("Accessories", "Accessoires"),
                leaves: &[
                    leaf!("belts", "Belts", "Gürtel", "Belt", "Gürtel", ONE_SIZE),
                    leaf!(
                        "wallets",
                        "Wallets",
                        "Geldbörsen",
                        "Wallet",
                        "Geldbörse",
                        ONE_SIZE
                    ),
                    leaf!("watches", "Watches", "Uhren", "Watch", "Uhr", ONE_SIZE),
                ],
            },
        ],
    },
    Root {
        key: "kids",
        name: ("Kids", "Kinder"),
        materials: APPAREL,
        branches: &[
            Branch {
                key: "clothing",
                name: ("Clothing", "Bekleidung"),
                leaves: &[
                    leaf!(
                        "t-shirts", "T-Shirts", "T-Shirts", "T-Shirt", "T-Shirt", CLOTHES
                    ),
                    leaf!("shorts", "Shorts", "Shorts", "Shorts", "Shorts", CLOTHES),
                    leaf!("jackets", "Jackets", "Jacken", "Jacket", "Jacke", CLOTHES),
                ],
            },
            Branch {
                key: "shoes",
                name: ("Shoes", "Schuhe"),
                leaves: &[
                    leaf!(
                        "sneakers", "Sneakers", "Sneaker", "Sneaker", "Sneaker", SHOES
                    ),
                    leaf!("sandals", "Sandals", "Sandalen", "Sandal", "Sandale", SHOES),
                    leaf!("boots", "Boots", "Stiefel", "Boot", "Stiefel", SHOES),
                ],
            },
            Branch {
                key: "toys",
                name: ("Toys", "Spielzeug"),
                leaves: &[
                    leaf!(
                        "puzzles", "Puzzles", "Puzzles", "Puzzle", "Puzzle", ONE_SIZE
                    ),
                    leaf!(
                        "plush",
                        "Plush Toys",
                        "Plüschtiere",
                        "Plush Toy",
                        "Plüschtier",
                        ONE_SIZE
                    ),
                    leaf!(
                        "blocks",
                        "Building Blocks",
                        "Bausteine",
                        "Block Set",
                        "Bausteinset",
                        ONE_SIZE
                    ),
                ],
            },
        ],
    },
    Root {
        key: "home",
        name: ("Home", "Wohnen"),
        materials: HOMEWARE,
        branches: &[
            Branch {
                key: "kitchen",
                name: ("Kitchen", "Küche"),
                leaves: &[
                    leaf!("mugs", "Mugs", "Becher", "Mug", "Becher", ONE_SIZE),
                    leaf!("plates", "Plates", "Teller", "Plate", "Teller", ONE_SIZE),
                    leaf!("bowls", "Bowls", "Schalen", "Bowl", "Schale", ONE_SIZE),
                ],
            },
            Branch {
                key: "bedding",
                name: ("Bedding", "Bettwaren"),
                leaves: &[
                    leaf!(
                        "sheets",
                        "Sheet Sets",
                        "Bettwäsche",
                        "Sheet Set",
                        "Bettwäsche-Set",
                        &["Single", "Double", "Queen", "King"]
                    ),
                    leaf!("pillows", "Pillows", "Kissen", "Pillow", "Kissen", ONE_SIZE),
                    leaf!("throws", "Throws", "Decken", "Throw", "Decke", ONE_SIZE),
                ],
            },
            Branch {
                key: "decor",
                name: ("Decor", "Deko"),
                leaves: &[
                    leaf!("candles", "Candles", "Kerzen", "Candle", "Kerze", ONE_SIZE),
                    leaf!("vases", "Vases", "Vasen", "Vase", "Vase", ONE_SIZE),
                    leaf!(
                        "frames",
                        "Frames",
                        "Bilderrahmen",
                        "Frame",
                        "Bilderrahmen",
                        ONE_SIZE
                    ),
                ],
            },
        ],
    },
];

pub const BRANDS: &[&str] = &[
    "Southern Cross",
    "Kiwi & Co",
    "Harbour Lane",
    "Outback Supply",
    "Tasman Threads",
    "Bondi Basics",
    "Aoraki",
    "Fern & Flint",
];

pub const ADJECTIVES: &[Word] = &[
    ("classic", "Classic", "Klassisch"),
    ("modern", "Modern", "Modern"),
    ("essential", "Essential", "Basic"),
    ("vintage", "Vintage", "Vintage"),
    ("relaxed", "Relaxed", "Locker"),
    ("premium", "Premium", "Premium"),
    ("everyday", "Everyday", "Alltags"),
    ("coastal", "Coastal", "Küsten"),
    ("urban", "Urban", "Urban"),
    ("heritage", "Heritage", "Heritage"),
];

pub const COLOURS: &[&str] = &["Black", "White", "Navy", "Olive", "Sand", "Rust"];

/// Each collection: (key, en name, de name, en description).
pub const COLLECTIONS: &[(&str, &str, &str, &str)] = &[
    (
        "new-arrivals",
        "New Arrivals",
        "Neuheiten",
        "The latest additions to the range.",
    ),
    (
        "best-sellers",
        "Best Sellers",
        "Bestseller",
        "What everyone is buying right now.",
    ),
    (
        "featured",
        "Featured",
        "Empfohlen",
        "Hand-picked by our merchandisers.",
    ),
    (
        "winter-edit",
        "The Winter Edit",
        "Winter-Edit",
        "Boots, scarves and jackets for cold days.",
    ),
    (
        "home-essentials",
        "Home Essentials",
        "Wohn-Essentials",
        "Everyday pieces for the home.",
    ),
    (
        "under-50",
        "Under $50",
        "Unter 50 $",
        "Great finds under fifty dollars.",
    ),
];
