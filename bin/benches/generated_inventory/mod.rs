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
