//! A realistic generated inventory for the benchmarks: a maker's household of boards, cards, supplies, cells,
//! drives, screens and modules, with varied names, profiles and conditions and one to three measured fields each.
//!
//! Deterministic (a fixed seed), so every run measures the same items.

// Each benchmark uses only part of this module.
#![allow(dead_code)]

use chrono::{TimeZone, Utc};
use serde_json::{Map, Value, json};
use trove_domain::item::{Condition, Intent, Item, ItemName, ItemType, Measurement, MeasurementSource, NewItem};
use trove_domain::units::format_number;
use trove_domain::{ItemId, Timestamp};

/// A field a kind of item may carry: key, canonical unit, lowest value, highest value, step.
type FieldSpec = (&'static str, &'static str, f64, f64, f64);

/// One kind of item.
struct Kind {
    item_type: &'static str,
    names: &'static [&'static str],
    variants: &'static [&'static str],
    profiles: &'static [&'static str],
    fields: &'static [FieldSpec],
}

const KINDS: &[Kind] = &[
    Kind {
        item_type: "single_board_computer",
        names: &[
            "Raspberry Pi 4 Model B",
            "Raspberry Pi 3 Model B+",
            "Raspberry Pi Zero 2 W",
            "Orange Pi 5",
            "Rock Pi 4",
            "Odroid C4",
            "Raspberry Pi 5",
        ],
        variants: &["1GB", "2GB", "4GB", "8GB", ""],
        profiles: &[
            "BCM2711, USB-C power, dual micro HDMI",
            "quad-core ARM, gigabit Ethernet, HDMI",
            "with heatsinks, no case",
            "boots Raspberry Pi OS, Wi-Fi works",
        ],
        fields: &[
            ("ram", "GB", 1.0, 8.0, 1.0),
            ("clock", "MHz", 1000.0, 2400.0, 100.0),
            ("usb_ports", "pcs", 1.0, 4.0, 1.0),
        ],
    },
    Kind {
        item_type: "sd_card",
        names: &[
            "SanDisk Ultra microSD",
            "Samsung EVO Plus microSD",
            "Kingston Canvas Select microSD",
            "Lexar 633x microSD",
        ],
        variants: &["16GB", "32GB", "64GB", "128GB"],
        profiles: &[
            "microSDHC UHS-I A1, class 10",
            "microSDXC U3 V30 with adapter",
            "came with a camera",
            "reformatted, no errors",
        ],
        fields: &[("capacity", "GB", 16.0, 128.0, 16.0), ("read_speed_class", "pcs", 1.0, 3.0, 1.0)],
    },
    Kind {
        item_type: "power_adapter",
        names: &[
            "Official Raspberry Pi USB-C supply",
            "Anker PowerPort",
            "Lenovo round-tip charger",
            "Dell USB-C charger",
            "12 V wall wart",
            "Apple USB-C charger",
        ],
        variants: &["15W", "20W", "45W", "65W", ""],
        profiles: &[
            "5.1 V 3 A, USB-C, 1.5 m cable",
            "20 V 3.25 A, 7.9 mm round tip",
            "USB-C PD, 5/9/15/20 V",
            "barrel 5.5x2.1 mm, centre positive",
        ],
        fields: &[
            ("output_voltage", "V", 5.0, 20.0, 0.1),
            ("output_current", "mA", 1000.0, 5000.0, 250.0),
            ("power", "W", 10.0, 90.0, 5.0),
        ],
    },
    Kind {
        item_type: "lithium_cell",
        names: &[
            "Samsung 25R 18650 cell",
            "LG MJ1 18650 cell",
            "Sony VTC6 18650 cell",
            "Panasonic NCR18650B cell",
            "18650 cell from a laptop pack",
        ],
        variants: &[""],
        profiles: &[
            "INR18650, green wrap, 20 A",
            "harvested, rewrapped blue",
            "flat top, 10 A",
            "protected button top",
        ],
        fields: &[
            ("capacity", "mAh", 1500.0, 3500.0, 50.0),
            ("voltage", "V", 3.0, 4.2, 0.01),
            ("internal_resistance", "ohm", 0.02, 0.12, 0.005),
        ],
    },
    Kind {
        item_type: "hard_drive",
        names: &["WD Red", "Seagate Barracuda", "Toshiba P300", "WD Blue", "HGST Ultrastar"],
        variants: &["500GB", "1TB", "2TB", "4TB"],
        profiles: &["3.5 in SATA, 5400 rpm", "2.5 in SATA from a laptop", "SMART clean, 20k hours", "NAS drive, CMR"],
        fields: &[
            ("capacity", "GB", 500.0, 4000.0, 500.0),
            ("speed", "rpm", 5400.0, 7200.0, 1800.0),
            ("health", "%", 60.0, 100.0, 1.0),
        ],
    },
    Kind {
        item_type: "ssd",
        names: &["Samsung 870 EVO", "Crucial MX500", "Kingston A400", "WD Blue SN570 NVMe"],
        variants: &["240GB", "500GB", "1TB"],
        profiles: &["2.5 in SATA III", "M.2 2280 NVMe", "from an upgraded laptop", "TRIM works, 97% life left"],
        fields: &[("capacity", "GB", 240.0, 1000.0, 20.0), ("health", "%", 70.0, 100.0, 1.0)],
    },
    Kind {
        item_type: "monitor",
        names: &["Dell P2419H", "LG 24MK430H", "Samsung S24F350", "HP E223", "AOC 22B2H"],
        variants: &[""],
        profiles: &[
            "24 in IPS, 1080p, HDMI and DisplayPort",
            "22 in, VGA and HDMI, no stand",
            "1080p 75 Hz, VESA mount",
            "small dead pixel at the edge",
        ],
        fields: &[
            ("diagonal", "mm", 540.0, 690.0, 10.0),
            ("power", "W", 15.0, 35.0, 1.0),
            ("weight", "g", 2500.0, 5000.0, 100.0),
        ],
    },
    Kind {
        item_type: "gamepad",
        names: &["8BitDo SN30 Pro", "Xbox One controller", "DualShock 4", "Logitech F310", "USB SNES-style pad"],
        variants: &["", "black", "grey"],
        profiles: &["Bluetooth and USB-C", "wired USB, XInput", "with charging cable", "left stick drifts a little"],
        fields: &[("battery", "mAh", 400.0, 1000.0, 50.0), ("weight", "g", 120.0, 280.0, 5.0)],
    },
    Kind {
        item_type: "enclosure",
        names: &[
            "Flirc Raspberry Pi 4 case",
            "Argon ONE case",
            "Official Pi 4 case",
            "Hammond 1591 ABS box",
            "project box",
        ],
        variants: &["", "black", "red and white"],
        profiles: &["aluminium, passive cooling", "ABS, screw lid", "with fan header", "drilled for a DC jack"],
        fields: &[
            ("length", "mm", 60.0, 150.0, 5.0),
            ("width", "mm", 40.0, 100.0, 5.0),
            ("weight", "g", 30.0, 250.0, 5.0),
        ],
    },
    Kind {
        item_type: "cable",
        names: &[
            "Cat6 Ethernet cable",
            "USB-C to USB-C cable",
            "HDMI cable",
            "micro HDMI to HDMI cable",
            "USB-A to micro-USB cable",
        ],
        variants: &["0.5 m", "1 m", "2 m", "5 m"],
        profiles: &["flat, blue", "braided, 60 W rated", "high speed with Ethernet", "from a phone box"],
        fields: &[("length", "mm", 500.0, 5000.0, 500.0), ("rated_current", "mA", 500.0, 5000.0, 500.0)],
    },
    Kind {
        item_type: "laptop",
        names: &["ThinkPad T440", "ThinkPad X230", "Dell Latitude E7450", "MacBook Air 2015", "HP EliteBook 840 G3"],
        variants: &["i5", "i7", ""],
        profiles: &[
            "8 GB RAM, 256 GB SSD, 1080p screen",
            "keyboard worn, battery weak",
            "Linux installed, charger included",
            "hinge loose, screen fine",
        ],
        fields: &[
            ("ram", "GB", 4.0, 16.0, 4.0),
            ("storage", "GB", 128.0, 512.0, 128.0),
            ("battery_health", "%", 40.0, 95.0, 1.0),
        ],
    },
    Kind {
        item_type: "led_strip",
        names: &["WS2812B strip", "SK6812 RGBW strip", "12 V warm white strip", "5050 RGB strip"],
        variants: &["1 m", "2 m", "5 m"],
        profiles: &[
            "60 LEDs/m, IP30, adhesive back",
            "30 LEDs/m, IP65 silicone",
            "cut from a longer reel",
            "with JST connectors",
        ],
        fields: &[
            ("length", "mm", 1000.0, 5000.0, 500.0),
            ("leds", "pcs", 30.0, 300.0, 30.0),
            ("voltage", "V", 5.0, 24.0, 7.0),
        ],
    },
    Kind {
        item_type: "buck_converter",
        names: &["LM2596 buck module", "XL4015 buck module", "MP1584 mini buck", "DC-DC step-down with display"],
        variants: &[""],
        profiles: &["adjustable, 4-40 V in", "fixed 5 V out, USB port", "with voltmeter", "from a kit of five"],
        fields: &[("max_input_voltage", "V", 24.0, 40.0, 1.0), ("output_current", "mA", 2000.0, 5000.0, 500.0)],
    },
    Kind {
        item_type: "microcontroller",
        names: &[
            "ESP32 DevKitC",
            "Arduino Uno R3",
            "Arduino Nano clone",
            "Raspberry Pi Pico",
            "ESP8266 NodeMCU",
            "STM32 Blue Pill",
        ],
        variants: &["", "with headers"],
        profiles: &[
            "Wi-Fi and Bluetooth, USB-C",
            "CH340 USB, 5 V logic",
            "3.3 V logic, micro-USB",
            "flashed with MicroPython",
        ],
        fields: &[("clock", "MHz", 16.0, 240.0, 8.0), ("gpio", "pcs", 14.0, 36.0, 1.0)],
    },
    Kind {
        item_type: "atx_power_supply",
        names: &["Corsair CX450", "Seasonic S12II 520", "be quiet! Pure Power 10", "EVGA 500 W1"],
        variants: &[""],
        profiles: &[
            "80 Plus Bronze, non-modular",
            "from an old desktop, fan quiet",
            "24-pin and 4-pin, 2 SATA",
            "fan noisy at start",
        ],
        fields: &[("power", "W", 400.0, 650.0, 50.0), ("rail_12v_current", "mA", 20000.0, 45000.0, 1000.0)],
    },
    Kind {
        item_type: "mini_pc",
        names: &["Intel NUC7i5", "Lenovo ThinkCentre M710q", "Dell OptiPlex 3060 Micro", "HP EliteDesk 800 G3 Mini"],
        variants: &[""],
        profiles: &[
            "i5, 8 GB, 256 GB SSD, VESA bracket",
            "i3, 4 GB, no drive",
            "with 65 W power brick",
            "BIOS password cleared",
        ],
        fields: &[
            ("ram", "GB", 4.0, 32.0, 4.0),
            ("storage", "GB", 128.0, 512.0, 128.0),
            ("power", "W", 35.0, 90.0, 5.0),
        ],
    },
    Kind {
        item_type: "bms_board",
        names: &["TP4056 charge board", "1S 3.7 V protection board", "2S BMS 20 A"],
        variants: &["", "USB-C"],
        profiles: &["with DW01 protection", "1 A charge current", "from a five-pack"],
        fields: &[("charge_current", "mA", 500.0, 2000.0, 100.0)],
    },
    Kind {
        item_type: "speaker",
        names: &["Logitech Z200", "JBL Flip 4", "Creative Pebble", "3 W 4 ohm driver"],
        variants: &[""],
        profiles: &["3.5 mm jack, USB powered", "Bluetooth, splash proof", "bare driver with leads"],
        fields: &[("power", "W", 3.0, 20.0, 1.0), ("impedance", "ohm", 4.0, 8.0, 4.0)],
    },
];

/// The household's other things: kinds no template of the catalogue takes (tools, kitchen, books, outdoor and
/// sports gear, toys, furniture), for [`household_items`].
const HOUSEHOLD: &[Kind] = &[
    Kind {
        item_type: "power_tool",
        names: &[
            "Bosch cordless drill",
            "Makita impact driver",
            "DeWalt jigsaw",
            "Ryobi orbital sander",
            "Dremel 4000",
        ],
        variants: &["", "18 V", "with case"],
        profiles: &["two batteries and charger", "bare tool", "bought used, works", "chuck a little loose"],
        fields: &[("weight", "g", 900.0, 2500.0, 100.0), ("power", "W", 100.0, 800.0, 50.0)],
    },
    Kind {
        item_type: "hand_tool",
        names: &[
            "Wera screwdriver set",
            "Knipex pliers",
            "Stanley claw hammer",
            "Bahco adjustable wrench",
            "tape measure",
        ],
        variants: &["", "small", "large"],
        profiles: &["in the red toolbox", "from a grandparent", "slightly rusty", "magnetic tip"],
        fields: &[("weight", "g", 100.0, 900.0, 50.0)],
    },
    Kind {
        item_type: "kitchen_appliance",
        names: &[
            "KitchenAid stand mixer",
            "Philips air fryer",
            "Breville kettle",
            "Nespresso machine",
            "Kenwood blender",
        ],
        variants: &["", "white", "black"],
        profiles: &["used weekly", "in the cupboard above the fridge", "descaled last month", "missing one attachment"],
        fields: &[("power", "W", 800.0, 2400.0, 100.0), ("weight", "g", 1000.0, 9000.0, 500.0)],
    },
    Kind {
        item_type: "cookware",
        names: &["Le Creuset casserole", "IKEA frying pan", "Tefal saucepan", "cast iron skillet", "baking tray"],
        variants: &["", "24 cm", "28 cm"],
        profiles: &["induction ready", "non-stick worn", "dishwasher safe", "lid included"],
        fields: &[("diameter", "mm", 160.0, 300.0, 20.0)],
    },
    Kind {
        item_type: "book",
        names: &["The Art of Electronics", "Make: Electronics", "Dune", "The Joy of Cooking", "Atlas of the world"],
        variants: &["", "hardback", "paperback"],
        profiles: &["second edition", "signed copy", "cover torn", "on the living room shelf"],
        fields: &[("pages", "pcs", 150.0, 1200.0, 50.0)],
    },
    Kind {
        item_type: "camping_gear",
        names: &["MSR tent", "Therm-a-Rest mat", "Jetboil stove", "Osprey backpack", "sleeping bag"],
        variants: &["", "2 person", "winter"],
        profiles: &["used on two trips", "stuff sack included", "zip repaired", "stored in the loft"],
        fields: &[("weight", "g", 300.0, 3000.0, 100.0)],
    },
    Kind {
        item_type: "sports_equipment",
        names: &["road bike helmet", "tennis racket", "yoga mat", "football", "climbing harness"],
        variants: &["", "M", "L"],
        profiles: &["barely used", "child size", "grip replaced", "in the garage"],
        fields: &[("weight", "g", 200.0, 1500.0, 50.0)],
    },
    Kind {
        item_type: "toy",
        names: &["LEGO Technic set", "wooden train set", "Duplo box", "Nerf blaster", "jigsaw puzzle"],
        variants: &["", "complete", "1000 pieces"],
        profiles: &["all pieces counted", "box damaged", "for ages 6 and up", "in the kids' room"],
        fields: &[("pieces", "pcs", 10.0, 2000.0, 10.0)],
    },
    Kind {
        item_type: "furniture",
        names: &["IKEA Kallax shelf", "office chair", "folding table", "bedside cabinet", "bar stool"],
        variants: &["", "white", "oak"],
        profiles: &["assembled", "flat-packed in the garage", "one wobbly leg", "bought 2019"],
        fields: &[("width", "mm", 400.0, 1500.0, 50.0), ("weight", "g", 3000.0, 25000.0, 1000.0)],
    },
    Kind {
        item_type: "garden_tool",
        names: &["Fiskars spade", "hedge trimmer", "hose reel", "lawn mower", "pruning shears"],
        variants: &["", "electric", "cordless"],
        profiles: &["in the shed", "blade sharpened", "handle taped", "winter storage"],
        fields: &[("weight", "g", 300.0, 25000.0, 100.0)],
    },
];

/// `n` new items of a household that makes: half of its things are parts and gear of the kinds the catalogue
/// builds from, half are its other things ([`HOUSEHOLD`]), and like things come as several items (a pack of
/// cells, four mugs, two identical boards: entered one by one, as an import or a receipt does). A product's label
/// fields are the product's, so the units of one pack carry the same values; conditions vary between packs. All
/// meant to keep and available.
pub fn household_items(n: usize) -> Vec<NewItem> {
    let mut rng = Rng(0x686f_7573_6568);
    let conditions = [
        Condition::New,
        Condition::LikeNew,
        Condition::Good,
        Condition::Good,
        Condition::Good,
        Condition::Fair,
        Condition::Fair,
        Condition::Poor,
        Condition::ForParts,
    ];
    let packs = [1, 1, 1, 1, 2, 2, 3, 4, 5, 10];
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let kind = if rng.below(2) == 0 { rng.pick(KINDS) } else { rng.pick(HOUSEHOLD) };
        let variant = *rng.pick(kind.variants);
        let base = *rng.pick(kind.names);
        let name = if variant.is_empty() { base.to_owned() } else { format!("{base} {variant}") };
        let mut profile = (*rng.pick(kind.profiles)).to_owned();
        if rng.below(3) == 0 {
            profile.push_str(", ");
            let note: &&str = rng.pick(NOTES);
            profile.push_str(note);
        }
        // The product's fields: the same for every unit of this name, from a generator seeded by the name.
        let mut product =
            Rng(name.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)));
        let count = 1 + product.below(kind.fields.len().min(3));
        let skip = product.below(kind.fields.len() - count + 1);
        let fields: Vec<(&str, &str, f64)> = kind
            .fields
            .iter()
            .skip(skip)
            .take(count)
            .map(|&(key, unit, lo, hi, step)| {
                let steps = ((hi - lo) / step).round() as usize;
                let value = lo + step * product.below(steps + 1) as f64;
                (key, unit, (value * 1000.0).round() / 1000.0)
            })
            .collect();
        let condition = *rng.pick(&conditions);
        for _ in 0..*rng.pick(&packs) {
            if out.len() == n {
                break;
            }
            let mut item = NewItem::new(
                ItemName::new(&name).unwrap(),
                ItemType::new(kind.item_type).unwrap(),
                profile.clone(),
                condition,
                Intent::Keep,
            );
            for &(key, unit, value) in &fields {
                item.measurements
                    .push(Measurement::new(key, value, unit, labelled_at(), MeasurementSource::Label).unwrap());
            }
            out.push(item);
        }
    }
    out
}

/// Notes an owner adds to a profile now and then.
const NOTES: &[&str] =
    &["bought 2021", "from a kit", "slight scratch on top", "tested working", "label faded", "box kept"];

/// A small deterministic generator (SplitMix64): the same inventory on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }
}

/// When the labels of every generated item were read.
pub fn labelled_at() -> Timestamp {
    Utc.with_ymd_and_hms(2026, 1, 15, 10, 0, 0).unwrap()
}

/// `n` new items, all meant to keep and available (the caller changes intent where it wants non-buildable ones).
pub fn new_items(n: usize) -> Vec<NewItem> {
    let mut rng = Rng(0x0074_726f_7665);
    let conditions = [
        Condition::New,
        Condition::LikeNew,
        Condition::Good,
        Condition::Good,
        Condition::Good,
        Condition::Fair,
        Condition::Fair,
        Condition::Poor,
        Condition::ForParts,
    ];
    (0..n)
        .map(|_| {
            let kind = rng.pick(KINDS);
            let variant = *rng.pick(kind.variants);
            let base = *rng.pick(kind.names);
            let name = if variant.is_empty() { base.to_owned() } else { format!("{base} {variant}") };
            let mut profile = (*rng.pick(kind.profiles)).to_owned();
            if rng.below(3) == 0 {
                profile.push_str(", ");
                let note = *rng.pick(NOTES);
                profile.push_str(note);
            }
            let mut item = NewItem::new(
                ItemName::new(&name).unwrap(),
                ItemType::new(kind.item_type).unwrap(),
                profile,
                *rng.pick(&conditions),
                Intent::Keep,
            );
            // One to three fields, in the kind's order, never the same key twice.
            let count = 1 + rng.below(kind.fields.len().min(3));
            let skip = rng.below(kind.fields.len() - count + 1);
            for &(key, unit, lo, hi, step) in kind.fields.iter().skip(skip).take(count) {
                let steps = ((hi - lo) / step).round() as usize;
                let value = lo + step * rng.below(steps + 1) as f64;
                let value = (value * 1000.0).round() / 1000.0;
                item.measurements
                    .push(Measurement::new(key, value, unit, labelled_at(), MeasurementSource::Label).unwrap());
            }
            item
        })
        .collect()
}

/// The stored form of a new item, with an id, as the store would answer it.
pub fn stored(item: NewItem, id: i64) -> Item {
    item.stored(ItemId(id), labelled_at())
}

/// The items as plain `serde_json` objects, the baseline the compact tool output is measured against:
/// `[{"id","name","item_type","profile","condition","intent","availability","fields":{key:{"value","unit"}}}]`
/// without whitespace. Values are written as the compact output writes them (no needless ".0").
pub fn plain_json(items: &[Item]) -> String {
    let array: Vec<Value> = items
        .iter()
        .map(|item| {
            let fields: Map<String, Value> = item
                .current_fields()
                .iter()
                .map(|(k, m)| {
                    let q = m.quantity();
                    let value: Value = serde_json::from_str(&format_number(q.value)).unwrap_or(json!(q.value));
                    (k.to_string(), json!({"value": value, "unit": q.unit.symbol()}))
                })
                .collect();
            json!({
                "id": item.id.0,
                "name": item.name.as_str(),
                "item_type": item.item_type.as_str(),
                "profile": item.profile,
                "condition": item.condition.as_str(),
                "intent": item.intent.as_str(),
                "availability": item.availability.as_str(),
                "fields": fields,
            })
        })
        .collect();
    Value::Array(array).to_string()
}

/// The CSV file and its header.
pub fn sheet(dir: &std::path::Path, rows: usize) -> (std::path::PathBuf, Vec<String>) {
    let at = labelled_at();
    let items: Vec<_> = new_items(rows)
        .into_iter()
        .enumerate()
        .map(|(n, item)| {
            let mut item = stored(item, n as i64 + 1);
            item.place_path = trove_domain::testing::path(&format!("Room {} / Shelf {}", n % 10, (n / 10) % 10));
            item.updated_at = at;
            item
        })
        .collect();
    let bytes = trove_csv::write(&items).unwrap();
    let file = dir.join("items.csv");
    std::fs::write(&file, &bytes).unwrap();
    let header = String::from_utf8_lossy(&bytes[..bytes.iter().position(|b| *b == b'\n').unwrap()])
        .split(',')
        .map(str::to_owned)
        .collect();
    println!("{rows} rows, {:.1} MB of CSV", bytes.len() as f64 / 1e6);
    (file, header)
}

/// One family of a maker's or repairer's distinct parts: an item type, the axes its names are made of (one
/// entry of each, joined by spaces, empty entries left out), its profiles, and the fields it may carry.
struct Family {
    item_type: &'static str,
    /// How many items of this family per 100 of the store.
    weight: usize,
    axes: &'static [&'static [&'static str]],
    profiles: &'static [&'static str],
    fields: &'static [FieldSpec],
}

/// The resistors' values: the E12 series over seven decades, as they are written on a strip's label.
const E12: &[&str] = &["1.0", "1.2", "1.5", "1.8", "2.2", "2.7", "3.3", "3.9", "4.7", "5.6", "6.8", "8.2"];
const DECADES: &[(&str, f64)] =
    &[("", 1.0), ("0", 10.0), ("00", 100.0), ("k", 1e3), ("0k", 1e4), ("00k", 1e5), ("M", 1e6)];

/// The families of [`distinct_parts`]: passives, semiconductors, connectors, fasteners, wire, tools and spares
/// (of types no template takes), and the boards, modules, cables, supplies, cells, cases and sensors a build
/// takes (of the catalogue's types, under its conditions and bounds).
const FAMILIES: &[Family] = &[
    Family {
        item_type: "capacitor",
        weight: 7,
        axes: &[
            &[
                "10 pF", "22 pF", "100 pF", "1 nF", "10 nF", "100 nF", "220 nF", "1 uF", "4.7 uF", "10 uF", "47 uF",
                "100 uF", "220 uF", "470 uF", "1000 uF", "2200 uF",
            ],
            &["ceramic", "electrolytic", "film", "tantalum", "polymer"],
            &["capacitor"],
            &["6.3 V", "16 V", "25 V", "35 V", "50 V", "63 V", "100 V", "400 V"],
        ],
        profiles: &[
            "through-hole, 2.5 mm pitch",
            "0805 SMD on cut tape",
            "radial, 105 C",
            "bag from a kit",
            "salvaged from a PSU",
            "low ESR, Panasonic",
        ],
        fields: &[("voltage", "V", 6.3, 400.0, 0.1), ("pieces", "pcs", 5.0, 200.0, 5.0)],
    },
    Family {
        item_type: "ic",
        weight: 6,
        axes: &[
            &[
                "NE555 timer",
                "LM358 op-amp",
                "TL072 op-amp",
                "74HC595 shift register",
                "74HC14 Schmitt inverter",
                "CD4017 decade counter",
                "ATmega328P",
                "ATtiny85",
                "ULN2003 Darlington array",
                "L293D motor driver",
                "MAX7219 LED driver",
                "PCF8574 I/O expander",
                "MCP23017 I/O expander",
                "LM386 audio amplifier",
                "DS3231 RTC",
                "24LC256 EEPROM",
                "CH340G USB serial",
                "TP4056 charger IC",
                "LM317 regulator",
                "AMS1117-3.3 regulator",
                "7805 regulator",
                "MCP3008 ADC",
                "ADS1115 ADC",
                "DRV8825 driver IC",
            ],
            &["DIP", "SOIC", "TSSOP", "TO-220", "QFN"],
            &["", "tube of 10", "pair", "on breakout", "socketed"],
        ],
        profiles: &[
            "genuine TI",
            "from an AliExpress lot",
            "pulled from a dead board, tested",
            "new old stock",
            "antistatic bag, labelled",
            "datasheet printed in the drawer",
        ],
        fields: &[
            ("pins", "pcs", 3.0, 40.0, 1.0),
            ("supply_voltage", "V", 1.8, 36.0, 0.1),
            ("pieces", "pcs", 1.0, 50.0, 1.0),
        ],
    },
    Family {
        item_type: "semiconductor",
        weight: 5,
        axes: &[
            &[
                "1N4148",
                "1N4007",
                "1N5819 Schottky",
                "BZX55 5V1 Zener",
                "2N2222",
                "2N3904",
                "2N3906",
                "BC547",
                "BC557",
                "IRLZ44N MOSFET",
                "IRF520 MOSFET",
                "AO3400 MOSFET",
                "TIP120 Darlington",
                "BD139",
                "S8050",
                "BT136 triac",
                "MOC3021 optotriac",
                "PC817 optocoupler",
            ],
            &["diode", "transistor", ""],
            &["TO-92", "TO-220", "DO-41", "SOT-23", "DIP-4", ""],
        ],
        profiles: &["bag of 100", "strip of 25", "from a starter kit", "salvaged, legs trimmed", "reel offcut"],
        fields: &[("pieces", "pcs", 1.0, 200.0, 1.0), ("max_voltage", "V", 5.0, 600.0, 5.0)],
    },
    Family {
        item_type: "led",
        weight: 3,
        axes: &[
            &["3 mm", "5 mm", "10 mm", "0805", "1206", "5050"],
            &["red", "green", "blue", "yellow", "white", "warm white", "RGB", "UV", "infrared"],
            &["LED", "diffused LED", "clear LED", "flashing LED"],
        ],
        profiles: &["bag of 50", "2 V 20 mA", "from a kit", "high brightness", "common anode"],
        fields: &[("pieces", "pcs", 5.0, 500.0, 5.0), ("forward_voltage", "V", 1.6, 3.6, 0.1)],
    },
    Family {
        item_type: "connector",
        weight: 7,
        axes: &[
            &[
                "JST-XH",
                "JST-PH",
                "JST-SH",
                "Dupont",
                "Molex KK",
                "XT30",
                "XT60",
                "XT90",
                "Anderson Powerpole",
                "screw terminal",
                "barrel jack 5.5x2.1",
                "USB-C socket",
                "micro-USB socket",
                "RJ45 jack",
                "DB9",
                "IDC",
                "banana",
                "M12 aviation",
                "GX16 aviation",
                "Wago 221",
            ],
            &["2-pin", "3-pin", "4-pin", "5-pin", "6-pin", "8-pin", "10-pin", "16-pin", ""],
            &["male", "female", "pair", "housing", "PCB mount", "panel mount", "crimp contacts"],
        ],
        profiles: &[
            "bag of 20",
            "kit box, compartment 3",
            "with pre-crimped leads",
            "2.54 mm pitch",
            "2.0 mm pitch",
            "gold plated",
            "from a drone build",
        ],
        fields: &[("pieces", "pcs", 2.0, 200.0, 2.0), ("rated_current", "mA", 500.0, 60000.0, 500.0)],
    },
    Family {
        item_type: "fastener",
        weight: 7,
        axes: &[
            &["M2", "M2.5", "M3", "M4", "M5", "M6", "M8", "#4-40", "#6-32"],
            &["4 mm", "6 mm", "8 mm", "10 mm", "12 mm", "16 mm", "20 mm", "25 mm", "30 mm", "40 mm", ""],
            &[
                "socket cap screw",
                "pan head screw",
                "countersunk screw",
                "button head screw",
                "hex nut",
                "nyloc nut",
                "washer",
                "brass standoff",
                "nylon standoff",
                "heat-set insert",
                "grub screw",
                "wing nut",
            ],
            &["stainless", "zinc plated", "black oxide", "nylon", "brass", ""],
        ],
        profiles: &[
            "sorting box, row 2",
            "bag of 100",
            "bag of 50",
            "half used",
            "from an assortment kit",
            "labelled bin",
        ],
        fields: &[("pieces", "pcs", 5.0, 500.0, 5.0), ("length", "mm", 3.0, 50.0, 1.0)],
    },
    Family {
        item_type: "wire",
        weight: 3,
        axes: &[
            &["30 AWG", "26 AWG", "24 AWG", "22 AWG", "20 AWG", "18 AWG", "16 AWG", "14 AWG", "12 AWG"],
            &["silicone", "PVC", "solid core", "stranded", "enamelled", "ribbon"],
            &["red", "black", "white", "yellow", "green", "blue", "rainbow"],
            &["hookup wire", "spool", "wire"],
        ],
        profiles: &["10 m spool", "half a spool left", "offcuts", "tinned copper", "high temperature"],
        fields: &[("length", "mm", 500.0, 100000.0, 500.0), ("weight", "g", 10.0, 1000.0, 10.0)],
    },
    Family {
        item_type: "hand_tool",
        weight: 4,
        axes: &[
            &["Knipex", "Wera", "Wiha", "Bahco", "Engineer", "Hakko", "iFixit", "Stanley", "Proskit", "no-name"],
            &[
                "flush cutters",
                "needle-nose pliers",
                "crimping tool",
                "wire strippers",
                "precision screwdriver set",
                "spudger set",
                "tweezers",
                "hex key set",
                "torx driver",
                "nut driver set",
                "file set",
                "hot air station",
                "soldering iron",
                "desoldering pump",
                "third hand",
                "calipers",
                "multimeter",
                "heat gun",
                "bench vise",
                "hand drill",
            ],
            &["", "small", "large", "ESD", "insulated"],
        ],
        profiles: &[
            "on the pegboard",
            "in the red toolbox",
            "worn but works",
            "new in packaging",
            "lent out once",
            "tips replaced",
        ],
        fields: &[("weight", "g", 20.0, 3000.0, 10.0), ("power", "W", 5.0, 1500.0, 5.0)],
    },
    Family {
        item_type: "spare_part",
        weight: 5,
        axes: &[
            &[
                "ThinkPad T480",
                "ThinkPad X220",
                "MacBook Pro 2015",
                "Dell XPS 13",
                "iPhone 8",
                "Pixel 4a",
                "Galaxy S9",
                "Nintendo Switch",
                "PS4",
                "Xbox One",
                "Dyson V8",
                "Kindle Paperwhite",
                "iPad Air 2",
            ],
            &[
                "keyboard",
                "screen",
                "battery",
                "fan",
                "hinge",
                "charging port",
                "speaker",
                "button board",
                "trackpad",
                "camera",
                "back cover",
                "motherboard",
                "power button flex",
            ],
            &["", "OEM", "replacement", "used", "for parts"],
        ],
        profiles: &[
            "pulled from a donor",
            "new, aftermarket",
            "untested",
            "tested working",
            "cosmetic damage",
            "ordered for a repair that never happened",
        ],
        fields: &[("weight", "g", 5.0, 800.0, 5.0)],
    },
    Family {
        item_type: "motor",
        weight: 2,
        axes: &[
            &[
                "NEMA 17 stepper",
                "28BYJ-48 stepper",
                "SG90 servo",
                "MG996R servo",
                "N20 gear motor",
                "TT gear motor",
                "130 DC motor",
                "775 DC motor",
                "brushless outrunner",
                "vibration motor",
            ],
            &["3 V", "5 V", "6 V", "12 V", "24 V"],
            &["", "with driver", "with encoder", "pair"],
        ],
        profiles: &["from a 3D printer", "from a kit", "new", "salvaged from a toy", "leads extended"],
        fields: &[
            ("voltage", "V", 3.0, 24.0, 1.0),
            ("speed", "rpm", 10.0, 20000.0, 10.0),
            ("weight", "g", 5.0, 500.0, 5.0),
        ],
    },
    Family {
        item_type: "cable",
        weight: 7,
        axes: &[
            &[
                "Cat5e Ethernet",
                "Cat6 Ethernet",
                "USB-C to USB-C",
                "USB-A to USB-C",
                "USB-A to micro-USB",
                "USB-A to mini-USB",
                "HDMI",
                "micro HDMI to HDMI",
                "mini HDMI to HDMI",
                "DisplayPort",
                "3.5 mm audio",
                "DC barrel extension",
                "SATA data",
                "Dupont jumper",
                "FTDI serial",
                "IEC mains",
                "USB-C to Lightning",
            ],
            &["cable"],
            &["0.15 m", "0.3 m", "0.5 m", "1 m", "1.5 m", "2 m", "3 m", "5 m", "10 m"],
            &["", "black", "white", "blue", "red", "grey", "braided"],
        ],
        profiles: &[
            "from a phone box",
            "braided, 60 W rated",
            "flat",
            "high speed",
            "right-angle plug",
            "cable-tied in the cable bin",
            "works, connector loose",
        ],
        fields: &[("length", "mm", 150.0, 10000.0, 50.0), ("rated_current", "mA", 500.0, 5000.0, 500.0)],
    },
    Family {
        item_type: "power_adapter",
        weight: 5,
        axes: &[
            &[
                "Anker",
                "Ugreen",
                "Mean Well",
                "Lenovo",
                "Dell",
                "HP",
                "Apple",
                "Aukey",
                "Belkin",
                "Raspberry Pi",
                "no-name",
            ],
            &["USB-C PD charger", "USB wall charger", "barrel-jack adapter", "laptop charger", "wall wart"],
            &["5 V", "9 V", "12 V", "19 V", "20 V", "24 V"],
            &["10 W", "15 W", "18 W", "27 W", "30 W", "45 W", "65 W", "90 W"],
        ],
        profiles: &[
            "centre positive",
            "UK plug",
            "EU plug with adapter",
            "1.5 m cable",
            "from an old router",
            "label worn",
        ],
        fields: &[
            ("output_voltage", "V", 5.0, 24.0, 0.1),
            ("output_current", "mA", 500.0, 5000.0, 100.0),
            ("power", "W", 5.0, 90.0, 1.0),
        ],
    },
    Family {
        item_type: "single_board_computer",
        weight: 2,
        axes: &[
            &[
                "Raspberry Pi 4 Model B",
                "Raspberry Pi 3 Model B+",
                "Raspberry Pi 3 Model A+",
                "Raspberry Pi Zero W",
                "Raspberry Pi Zero 2 W",
                "Raspberry Pi 5",
                "Orange Pi 5",
                "Orange Pi Zero 3",
                "Rock Pi 4",
                "Odroid C4",
                "Odroid N2+",
                "Banana Pi M5",
                "Libre Le Potato",
                "BeagleBone Black",
                "NanoPi R4S",
            ],
            &["512MB", "1GB", "2GB", "4GB", "8GB"],
            &["", "with case", "with heatsinks", "headers soldered"],
        ],
        profiles: &[
            "boots Raspberry Pi OS",
            "ran Home Assistant",
            "SD slot worn",
            "from a kit",
            "Wi-Fi works",
            "GPIO pin 7 dead",
        ],
        fields: &[("ram", "GB", 0.5, 8.0, 0.5), ("clock", "MHz", 1000.0, 2400.0, 100.0)],
    },
    Family {
        item_type: "microcontroller",
        weight: 4,
        axes: &[
            &[
                "ESP32 DevKitC",
                "ESP32-S3 DevKit",
                "ESP32-C3 SuperMini",
                "ESP8266 NodeMCU",
                "Wemos D1 mini",
                "Arduino Uno R3",
                "Arduino Nano",
                "Arduino Pro Micro",
                "Arduino Mega 2560",
                "Raspberry Pi Pico",
                "Raspberry Pi Pico W",
                "STM32 Blue Pill",
                "STM32 Black Pill",
                "Teensy 4.0",
                "Seeed XIAO RP2040",
                "Digispark ATtiny85",
                "Adafruit Feather M4",
            ],
            &["", "clone", "genuine", "with headers", "USB-C"],
            &["", "v2", "v3", "rev B"],
        ],
        profiles: &[
            "flashed with MicroPython",
            "CH340 USB",
            "runs ESPHome",
            "from a kit",
            "bootloader burnt",
            "one pin bent",
        ],
        fields: &[("clock", "MHz", 8.0, 600.0, 8.0), ("gpio", "pcs", 6.0, 54.0, 1.0)],
    },
    Family {
        item_type: "sd_card",
        weight: 2,
        axes: &[
            &[
                "SanDisk Ultra",
                "SanDisk Extreme",
                "Samsung EVO Plus",
                "Samsung PRO Endurance",
                "Kingston Canvas",
                "Lexar",
                "Transcend",
                "no-name",
            ],
            &["microSD", "SD"],
            &["4GB", "8GB", "16GB", "32GB", "64GB", "128GB", "256GB"],
        ],
        profiles: &["with adapter", "from a dashcam", "reformatted", "holds an old Pi image", "class 10"],
        fields: &[("capacity", "GB", 4.0, 256.0, 4.0)],
    },
    Family {
        item_type: "enclosure",
        weight: 3,
        axes: &[
            &[
                "ABS project box",
                "Hammond 1591",
                "Hammond 1455 aluminium",
                "waterproof junction box",
                "DIN rail box",
                "Pi 4 case",
                "Pi Zero case",
                "3D-printed case",
                "acrylic case",
                "tin box",
            ],
            &["small", "medium", "large", "80x50x30 mm", "100x60x25 mm", "120x80x40 mm", "158x90x60 mm"],
            &["", "black", "grey", "clear", "white"],
        ],
        profiles: &["drilled for a DC jack", "unused", "lid cracked", "with cable glands", "IP65", "printed in PETG"],
        fields: &[
            ("length", "mm", 40.0, 200.0, 5.0),
            ("width", "mm", 30.0, 120.0, 5.0),
            ("height", "mm", 15.0, 80.0, 5.0),
        ],
    },
    Family {
        item_type: "display_module",
        weight: 2,
        axes: &[
            &[
                "SSD1306 OLED 0.96 in",
                "SH1106 OLED 1.3 in",
                "ILI9341 TFT 2.8 in",
                "ST7789 TFT 1.54 in",
                "ST7735 TFT 1.8 in",
                "e-paper 2.9 in",
                "HD44780 LCD 16x2",
                "HD44780 LCD 20x4",
                "MAX7219 8x8 matrix",
                "TM1637 4-digit display",
                "Nextion 3.5 in",
            ],
            &["I2C", "SPI", "parallel", ""],
            &["", "blue", "white", "yellow-blue", "with touch"],
        ],
        profiles: &["headers soldered", "from a kit", "ribbon cable included", "tested with a sketch", "one dead row"],
        fields: &[("diagonal", "mm", 20.0, 90.0, 1.0)],
    },
    Family {
        item_type: "environment_sensor",
        weight: 2,
        axes: &[
            &[
                "BME280", "BMP280", "BME680", "DHT22", "DHT11", "SHT31", "AHT20", "DS18B20", "SCD40", "CCS811",
                "SGP30", "MH-Z19B", "PMS5003",
            ],
            &["breakout", "module", "probe", "waterproof probe"],
            &["", "3.3 V", "5 V", "I2C", "pair"],
        ],
        profiles: &["tested on an ESP32", "from a weather station", "new in bag", "calibrated", "headers soldered"],
        fields: &[("supply_voltage", "V", 3.3, 5.0, 0.1)],
    },
    Family {
        item_type: "buck_converter",
        weight: 2,
        axes: &[
            &["LM2596", "XL4015", "MP1584", "XL4016", "LM2596S with display", "DC-DC step-down"],
            &["module", "board", "adjustable module"],
            &["", "3 A", "5 A", "8 A", "fixed 5 V", "fixed 12 V"],
        ],
        profiles: &["adjustable, 4-40 V in", "USB out", "with voltmeter", "from a five-pack", "potentiometer glued"],
        fields: &[("max_input_voltage", "V", 24.0, 60.0, 1.0), ("output_current", "mA", 1000.0, 8000.0, 500.0)],
    },
    Family {
        item_type: "switch",
        weight: 2,
        axes: &[
            &["rocker", "toggle", "tactile", "slide", "push-button", "reed", "micro", "rotary", "DIP"],
            &["switch"],
            &["SPST", "SPDT", "DPDT", "6x6 mm", "12x12 mm", "16 mm", "22 mm", "illuminated"],
            &["", "red", "black", "metal", "waterproof"],
        ],
        profiles: &["bag of 10", "panel mount", "PCB mount", "rated 10 A 250 V", "from an old appliance"],
        fields: &[("pieces", "pcs", 1.0, 100.0, 1.0), ("rated_current", "mA", 50.0, 16000.0, 50.0)],
    },
    Family {
        item_type: "lithium_cell",
        weight: 2,
        axes: &[
            &[
                "Samsung 25R",
                "Samsung 30Q",
                "LG MJ1",
                "LG HG2",
                "Sony VTC6",
                "Panasonic NCR18650B",
                "Molicel P42A",
                "laptop-pack",
                "vape",
                "no-name",
            ],
            &["18650", "21700", "14500", "26650", "LiPo 1S"],
            &["cell"],
        ],
        profiles: &[
            "harvested, rewrapped",
            "flat top",
            "button top",
            "protected",
            "tested on the charger",
            "sits at 3.7 V",
        ],
        fields: &[
            ("capacity", "mAh", 500.0, 5000.0, 50.0),
            ("voltage", "V", 3.0, 4.2, 0.01),
            ("internal_resistance", "ohm", 0.015, 0.2, 0.005),
        ],
    },
    Family {
        item_type: "relay_board",
        weight: 1,
        axes: &[
            &["1-channel", "2-channel", "4-channel", "8-channel", "16-channel", "solid-state 2-channel"],
            &["5 V", "12 V", "24 V"],
            &["relay board", "relay module", "optocoupled relay board"],
        ],
        profiles: &["Songle relays", "active low", "from a kit", "one channel stuck", "with jumpers"],
        fields: &[("channels", "pcs", 1.0, 16.0, 1.0), ("rated_current", "mA", 2000.0, 10000.0, 1000.0)],
    },
    Family {
        item_type: "led_strip",
        weight: 1,
        axes: &[
            &["WS2812B", "SK6812 RGBW", "WS2815", "APA102", "12 V warm white", "24 V COB", "5050 RGB", "2835 white"],
            &["strip"],
            &["0.5 m", "1 m", "2 m", "3 m", "5 m"],
            &["30 LEDs/m", "60 LEDs/m", "144 LEDs/m", ""],
        ],
        profiles: &["IP30, adhesive back", "IP65 silicone", "cut from a reel", "with JST connectors", "one dead pixel"],
        fields: &[("length", "mm", 500.0, 5000.0, 500.0), ("voltage", "V", 5.0, 24.0, 7.0)],
    },
    Family {
        item_type: "breakout_board",
        weight: 2,
        axes: &[
            &[
                "MPU6050",
                "ADXL345",
                "HMC5883L",
                "VL53L0X",
                "HC-SR04",
                "PCA9685",
                "TCA9548A",
                "MCP2515 CAN",
                "nRF24L01",
                "RC522 RFID",
                "DS3231 RTC",
                "SX1278 LoRa",
                "NEO-6M GPS",
                "MAX98357 I2S amp",
                "HX711",
            ],
            &["breakout", "module", "board"],
            &["", "3.3 V", "5 V", "with antenna", "pair"],
        ],
        profiles: &["from a sensor kit", "headers soldered", "new in bag", "tested", "library works"],
        fields: &[("supply_voltage", "V", 1.8, 5.0, 0.1)],
    },
    Family {
        item_type: "tubing",
        weight: 2,
        axes: &[
            &["heat shrink", "silicone tubing", "PVC tubing", "braided sleeving", "spiral wrap"],
            &["2 mm", "3 mm", "4 mm", "6 mm", "8 mm", "10 mm", "12 mm"],
            &["black", "red", "clear", "blue", "assorted"],
        ],
        profiles: &["2:1 shrink", "food grade", "offcuts", "1 m piece", "in the wiring drawer"],
        fields: &[("length", "mm", 100.0, 10000.0, 100.0), ("diameter", "mm", 1.0, 12.0, 0.5)],
    },
    Family {
        item_type: "battery_holder",
        weight: 1,
        axes: &[
            &["18650", "21700", "AA", "AAA", "CR2032", "9 V"],
            &["1-slot", "2-slot", "3-slot", "4-slot"],
            &["holder", "holder with switch", "holder with leads"],
        ],
        profiles: &["PCB mount", "with lid", "series wired", "parallel wired", "from a kit"],
        fields: &[("cells", "pcs", 1.0, 4.0, 1.0)],
    },
    Family {
        item_type: "speaker",
        weight: 1,
        axes: &[
            &["28 mm", "40 mm", "50 mm", "66 mm", "77 mm", "4 in"],
            &["4 ohm", "8 ohm"],
            &["0.5 W", "1 W", "2 W", "3 W", "5 W", "10 W"],
            &["speaker driver", "speaker", "full-range driver"],
        ],
        profiles: &["bare driver with leads", "from a dead Bluetooth speaker", "new", "grille included"],
        fields: &[("power", "W", 0.5, 10.0, 0.5), ("impedance", "ohm", 4.0, 8.0, 4.0)],
    },
    Family {
        item_type: "solar_panel",
        weight: 1,
        axes: &[
            &["5 V", "6 V", "12 V", "18 V"],
            &["1 W", "2 W", "5 W", "10 W", "20 W", "50 W"],
            &["solar panel", "mini solar panel"],
        ],
        profiles: &["monocrystalline", "polycrystalline", "with USB out", "glass cracked in a corner", "new"],
        fields: &[("power", "W", 1.0, 50.0, 1.0), ("voltage", "V", 5.0, 18.0, 1.0)],
    },
    Family {
        item_type: "hard_drive",
        weight: 1,
        axes: &[
            &["WD Red", "WD Blue", "Seagate Barracuda", "Seagate IronWolf", "Toshiba P300", "HGST Ultrastar"],
            &["320GB", "500GB", "1TB", "2TB", "3TB", "4TB", "8TB"],
            &["2.5 in", "3.5 in"],
        ],
        profiles: &["SMART clean", "from a laptop", "20k hours", "NAS drive", "a few reallocated sectors"],
        fields: &[("capacity", "GB", 320.0, 8000.0, 10.0), ("health", "%", 50.0, 100.0, 1.0)],
    },
];

/// `n` distinct parts of a maker's and repairer's store: resistors of every E12 value, capacitors, ICs,
/// semiconductors, LEDs, connectors, fasteners, wire, tools and repair spares, and the boards, modules, cables,
/// supplies, cells, cases, sensors and drives a build takes ([`FAMILIES`]). Each item's name is made of its
/// family's axes (a value, a size, a package, a colour), so names repeat rarely; no two items are alike (name,
/// profile, condition and fields); each is in one of a few hundred places. Conditions vary, all meant to keep
/// and available.
pub fn distinct_parts(n: usize) -> Vec<NewItem> {
    let mut rng = Rng(0x7061_7274_7321);
    let conditions = [
        Condition::New,
        Condition::New,
        Condition::LikeNew,
        Condition::Good,
        Condition::Good,
        Condition::Good,
        Condition::Fair,
        Condition::Poor,
        Condition::ForParts,
    ];
    let total: usize = FAMILIES.iter().map(|f| f.weight).sum::<usize>() + RESISTOR_WEIGHT;
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::with_capacity(n);
    while out.len() < n {
        let mut pick = rng.below(total);
        let family = FAMILIES.iter().find(|f| {
            if pick < f.weight {
                return true;
            }
            pick -= f.weight;
            false
        });
        let (item_type, name, mut profile, fields) = match family {
            None => resistor(&mut rng),
            Some(f) => {
                let name = f.axes.iter().map(|axis| *rng.pick(axis)).filter(|w| !w.is_empty()).collect::<Vec<_>>();
                let count = 1 + rng.below(f.fields.len().min(3));
                let skip = rng.below(f.fields.len() - count + 1);
                let fields = f
                    .fields
                    .iter()
                    .skip(skip)
                    .take(count)
                    .map(|&(key, unit, lo, hi, step)| {
                        let steps = ((hi - lo) / step).round() as usize;
                        (key, unit, ((lo + step * rng.below(steps + 1) as f64) * 1000.0).round() / 1000.0)
                    })
                    .collect();
                (f.item_type, name.join(" "), (*rng.pick(f.profiles)).to_owned(), fields)
            }
        };
        if rng.below(3) == 0 {
            let note = *rng.pick(NOTES);
            profile.push_str(", ");
            profile.push_str(note);
        }
        let condition = *rng.pick(&conditions);
        let key = format!("{item_type}|{name}|{profile}|{condition:?}|{fields:?}");
        if !seen.insert(key) {
            continue;
        }
        let mut item = NewItem::new(
            ItemName::new(&name).unwrap(),
            ItemType::new(item_type).unwrap(),
            profile,
            condition,
            Intent::Keep,
        );
        for (key, unit, value) in fields {
            item.measurements
                .push(Measurement::new(key, value, unit, labelled_at(), MeasurementSource::Label).unwrap());
        }
        let room = *rng.pick(&["Workshop", "Garage", "Spare room", "Cellar"]);
        let storage = *rng.pick(&["Cabinet", "Shelf", "Parts drawer", "Crate", "Pegboard"]);
        item.location = Some(format!("{room} / {storage} {} / Bin {}", 1 + rng.below(6), 1 + rng.below(24)));
        out.push(item);
    }
    out
}

/// Resistors' share of [`distinct_parts`], per 100 items.
const RESISTOR_WEIGHT: usize = 10;

/// A resistor: an E12 value in one of seven decades, a power rating, a tolerance and a package.
fn resistor(rng: &mut Rng) -> (&'static str, String, String, Vec<(&'static str, &'static str, f64)>) {
    let digits = *rng.pick(E12);
    let (suffix, scale) = *rng.pick(DECADES);
    let value = (digits.parse::<f64>().unwrap() * scale * 1000.0).round() / 1000.0;
    let written = match suffix {
        "" => format!("{digits} ohm"),
        "0" | "00" => format!("{} ohm", format_number(value)),
        "k" => format!("{digits}k"),
        "0k" | "00k" => format!("{}k", format_number(value / 1e3)),
        _ => format!("{digits}M"),
    };
    let watts =
        *rng.pick(&[("1/8 W", 0.125), ("1/4 W", 0.25), ("1/2 W", 0.5), ("1 W", 1.0), ("2 W", 2.0), ("5 W", 5.0)]);
    let kind = *rng.pick(&["metal film", "carbon film", "wirewound", "0805 SMD", "1206 SMD", "cement"]);
    let tolerance = *rng.pick(&["1%", "5%"]);
    let name = format!("{written} {} {kind} resistor", watts.0);
    let profile = format!(
        "{tolerance}, {}",
        rng.pick(&["strip of 20", "bag of 100", "cut tape", "loose in a drawer", "from an E12 kit"])
    );
    let pieces = 5.0 * (1 + rng.below(40)) as f64;
    ("resistor", name, profile, vec![("resistance", "ohm", value), ("power", "W", watts.1), ("pieces", "pcs", pieces)])
}
