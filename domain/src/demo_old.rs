//! The demo inventory as Rust wrote it before demo.toml: kept for one commit to prove the file equal.
#![allow(unused_imports, dead_code)]

use crate::Timestamp;
use crate::ids::ItemId;
use crate::item::{
    Condition, Fault, Gone, GoneReason, Intent, Item, ItemName, ItemType, Measurement, MeasurementSource, NewItem,
    Severity, TestDone, TestResult,
};
use crate::units;
use chrono::TimeDelta;

use crate::demo::DemoItem;

/// An item being written, with the times its measurements and tests are dated at.
struct Draft {
    demo: DemoItem,
    /// When labels were read: when the item came in.
    labelled: Timestamp,
    /// When the owner measured or tested it.
    tested: Timestamp,
}

fn valid<T, E: std::fmt::Display>(what: &str, r: Result<T, E>) -> T {
    match r {
        Ok(v) => v,
        // The demo inventory is a constant of the program: an invalid entry is a bug caught by the unit tests.
        Err(e) => panic!("demo item {what}: {e}"),
    }
}

impl Draft {
    fn new(name: &str, item_type: &str, profile: &str, condition: Condition, at: Timestamp) -> Self {
        let item = NewItem::new(
            valid(name, ItemName::new(name)),
            valid(name, ItemType::new(item_type)),
            profile.to_owned(),
            condition,
            Intent::Keep,
        );
        Self {
            demo: DemoItem { item, components: Vec::new(), gone: None },
            labelled: at - TimeDelta::days(90),
            tested: at - TimeDelta::days(14),
        }
    }

    fn name(&self) -> String {
        self.demo.item.name.to_string()
    }

    fn intent(mut self, intent: Intent) -> Self {
        self.demo.item.intent = intent;
        self
    }

    fn at(mut self, location: &str) -> Self {
        self.demo.item.location = Some(location.to_owned());
        self
    }

    fn measure(mut self, key: &str, value: f64, unit: &str, source: MeasurementSource) -> Self {
        let at = if source == MeasurementSource::Test { self.tested } else { self.labelled };
        let m = valid(&self.name(), Measurement::new(key, value, unit, at, source));
        self.demo.item.measurements.push(m);
        self
    }

    /// A value read off the label or the box.
    fn label(self, key: &str, value: f64, unit: &str) -> Self {
        self.measure(key, value, unit, MeasurementSource::Label)
    }

    /// A value the owner typed in from the spec sheet or the manual.
    fn manual(self, key: &str, value: f64, unit: &str) -> Self {
        self.measure(key, value, unit, MeasurementSource::Manual)
    }

    /// A value measured by the owner; it is newer than the label's and becomes the current field.
    fn measured(self, key: &str, value: f64, unit: &str) -> Self {
        self.measure(key, value, unit, MeasurementSource::Test)
    }

    fn fault(mut self, text: &str, severity: Severity) -> Self {
        let f = valid(&self.name(), Fault::new(text, severity));
        self.demo.item.faults.push(f);
        self
    }

    fn test(mut self, name: &str, result: TestResult, value: Option<&str>, note: Option<&str>) -> Self {
        let value = value.map(|v| valid(&self.name(), units::parse(v)));
        let t = valid(&self.name(), TestDone::new(name, result, value, self.tested, note));
        self.demo.item.tests_done.push(t);
        self
    }

    fn with(mut self, accessories: &[&str]) -> Self {
        self.demo.item.accessories.extend(accessories.iter().map(|a| (*a).to_owned()));
        self
    }

    fn made_of(mut self, components: &[usize]) -> Self {
        self.demo.components.extend_from_slice(components);
        self
    }

    fn gone(mut self, reason: GoneReason, note: &str) -> Self {
        self.demo.gone = Some((reason, note.to_owned()));
        self
    }
}

/// The list being built.
struct Demo {
    at: Timestamp,
    items: Vec<DemoItem>,
}

impl Demo {
    fn item(&self, name: &str, item_type: &str, profile: &str, condition: Condition) -> Draft {
        Draft::new(name, item_type, profile, condition, self.at)
    }

    /// Adds an item and answers its index, for other items' components.
    fn push(&mut self, draft: Draft) -> usize {
        self.items.push(draft.demo);
        self.items.len() - 1
    }
}

/// The demo inventory, dated relative to `at` (labels read three months before, tests two weeks before).
///
/// ```
/// use chrono::{TimeZone, Utc};
/// let items = trove_domain::demo::inventory(Utc.with_ymd_and_hms(2026, 3, 1, 12, 0, 0).unwrap());
/// assert!((35..=50).contains(&items.len()));
/// ```
pub fn inventory(at: Timestamp) -> Vec<DemoItem> {
    use Condition::{Fair, Good, LikeNew, New, Poor};
    use Intent::{Give, Sell};
    use Severity::{Blocking, Major, Minor};
    use TestResult::{Fail, Pass};

    let mut d = Demo { at, items: Vec::new() };

    // Retro console kit.
    d.push(
        d.item(
            "Raspberry Pi 4 Model B 4GB",
            "single_board_computer",
            "Raspberry Pi 4 Model B, BCM2711, 4GB LPDDR4, dual micro-HDMI, USB-C power",
            Good,
        )
        .at("shelf B2")
        .label("ram", 4.0, "GB")
        .with(&["aluminium heatsinks", "micro-HDMI to HDMI cable"])
        .test("boots Raspberry Pi OS", Pass, None, None),
    );
    d.push(
        d.item("SanDisk Ultra 32GB microSD", "sd_card", "SanDisk Ultra microSDHC UHS-I A1, 32GB, class 10", LikeNew)
            .at("drawer 3")
            .label("capacity", 32.0, "GB")
            .with(&["SD adapter"]),
    );
    d.push(
        d.item(
            "Dell U2414H 24\" monitor",
            "monitor",
            "Dell UltraSharp U2414H, 24in IPS, 1920x1080, HDMI/DP, S/N CN-0F8DVN",
            Good,
        )
        .at("spare room")
        .label("screen_size", 24.0, "in")
        .fault("small scuff on the lower bezel", Minor)
        .with(&["stand", "DisplayPort cable", "power cord"])
        .test("dead pixel check", Pass, None, Some("no dead or stuck pixels")),
    );
    d.push(
        d.item(
            "8BitDo SN30 Pro gamepad",
            "gamepad",
            "8BitDo SN30 Pro, Bluetooth and USB-C, Switch/PC/Android",
            LikeNew,
        )
        .at("shelf B2")
        .with(&["USB-C cable"]),
    );
    d.push(
        d.item("Logitech F310 gamepad", "gamepad", "Logitech F310 wired USB gamepad, XInput/DirectInput switch", Good)
            .at("shelf B2"),
    );
    d.push(
        d.item(
            "Raspberry Pi 15W USB-C power supply",
            "power_adapter",
            "official Raspberry Pi USB-C PSU, 5.1 V 3 A, UK plug",
            New,
        )
        .at("drawer 3")
        .label("output_voltage", 5.1, "V")
        .label("output_current", 3.0, "A"),
    );

    // Home NAS kit.
    d.push(
        d.item(
            "Raspberry Pi 4 Model B 2GB",
            "single_board_computer",
            "Raspberry Pi 4 Model B, BCM2711, 2GB LPDDR4",
            Good,
        )
        .at("shelf B2")
        .label("ram", 2.0, "GB"),
    );
    d.push(
        d.item(
            "WD Red 4TB",
            "hard_drive",
            "Western Digital Red WD40EFRX, 3.5in SATA, 5400 rpm class, CMR, S/N WCC7K4XXXXXX",
            Good,
        )
        .at("shelf B1")
        .label("capacity", 4.0, "TB")
        .label("form_factor", 3.5, "in")
        .label("speed", 5400.0, "rpm")
        .test("SMART long test", Pass, None, Some("0 reallocated sectors")),
    );
    d.push(
        d.item(
            "Sabrent USB 3.0 SATA docking station",
            "drive_enclosure",
            "Sabrent EC-DFLT, 2.5in and 3.5in SATA, USB 3.0, UASP",
            Good,
        )
        .at("shelf B1")
        .with(&["12 V power adapter", "USB 3.0 cable"]),
    );

    // Backup box.
    d.push(
        d.item(
            "WD Blue 1TB 2.5\" laptop drive",
            "hard_drive",
            "Western Digital Blue WD10SPZX, 2.5in SATA, 5400 rpm",
            Good,
        )
        .at("shelf B1")
        .label("capacity", 1.0, "TB")
        .label("form_factor", 2.5, "in")
        .fault("4 reallocated sectors, stable for a year", Minor)
        .test("SMART long test", Pass, None, Some("4 reallocated sectors")),
    );
    d.push(
        d.item(
            "ORICO 2.5\" USB 3.0 drive enclosure",
            "drive_enclosure",
            "ORICO 2139U3, tool-free, 2.5in SATA, USB 3.0 micro-B",
            New,
        )
        .at("shelf B1")
        .with(&["USB 3.0 cable"]),
    );

    // Power bank kit, and a cell too weak for it.
    d.push(
        d.item("Samsung 25R 18650 cell", "lithium_cell", "Samsung INR18650-25R, 2500 mAh, 20 A, green wrap", Good)
            .at("battery box")
            .label("capacity", 2500.0, "mAh")
            .label("nominal_voltage", 3.6, "V")
            .measured("capacity", 2430.0, "mAh")
            .measured("internal_resistance", 22.0, "mohm")
            .test("capacity test at 1 A", Pass, Some("2430 mAh"), None),
    );
    d.push(
        d.item(
            "Samsung 25R 18650 cell (second)",
            "lithium_cell",
            "Samsung INR18650-25R, 2500 mAh, 20 A, same batch",
            Good,
        )
        .at("battery box")
        .label("capacity", 2500.0, "mAh")
        .label("nominal_voltage", 3.6, "V")
        .measured("capacity", 2410.0, "mAh")
        .measured("internal_resistance", 24.0, "mohm")
        .test("capacity test at 1 A", Pass, Some("2410 mAh"), None),
    );
    d.push(
        d.item("LG MJ1 18650 cell", "lithium_cell", "LG INR18650-MJ1, 3500 mAh, 10 A", Good)
            .at("battery box")
            .label("capacity", 3500.0, "mAh")
            .label("nominal_voltage", 3.6, "V"),
    );
    d.push(
        d.item(
            "Salvaged 18650 cell (laptop pull)",
            "lithium_cell",
            "unbranded 18650 from a Dell laptop pack, blue wrap",
            Fair,
        )
        .at("battery box")
        .measured("capacity", 1650.0, "mAh")
        .fault("wrap torn at the negative end", Minor)
        .test("capacity test at 1 A", Pass, Some("1650 mAh"), Some("well below a new cell")),
    );
    d.push(
        d.item(
            "TP4056 USB-C charger board with protection",
            "bms_board",
            "TP4056 + DW01A 1S Li-ion charger, 1 A, USB-C",
            New,
        )
        .at("drawer 2")
        .label("charge_current", 1.0, "A"),
    );
    d.push(
        d.item(
            "MT3608 boost converter",
            "boost_converter",
            "MT3608 adjustable step-up module, 2-24 V in, up to 28 V out",
            New,
        )
        .at("drawer 2")
        .label("max_output_current", 2.0, "A"),
    );

    // Bench power supply kit.
    d.push(
        d.item("Corsair CX450 ATX PSU", "atx_power_supply", "Corsair CX450, 450 W, 80 Plus Bronze, non-modular", Good)
            .at("shelf C1")
            .label("output_power", 450.0, "W")
            .with(&["power cord"])
            .test("12 V rail under 5 A load", Pass, Some("12.1 V"), None),
    );
    d.push(
        d.item(
            "ATX 24-pin breakout board",
            "breakout_board",
            "24-pin ATX breakout with 3.3/5/12 V binding posts and fuses",
            New,
        )
        .at("drawer 2"),
    );
    d.push(
        d.item("DROK panel volt/amp meter", "panel_meter", "DROK 0-100 V 10 A dual LED panel meter with shunt", New)
            .at("drawer 2"),
    );
    d.push(
        d.item(
            "LM2596 buck converter module",
            "buck_converter",
            "LM2596 adjustable step-down, 4-40 V in, 1.25-37 V out, 3 A",
            New,
        )
        .at("drawer 2")
        .label("max_input_voltage", 40.0, "V")
        .label("max_output_current", 3.0, "A"),
    );

    // Network ad-blocker kit.
    d.push(
        d.item(
            "Raspberry Pi Zero W",
            "single_board_computer",
            "Raspberry Pi Zero W v1.1, BCM2835, 512MB, Wi-Fi/Bluetooth",
            LikeNew,
        )
        .at("drawer 3")
        .label("ram", 512.0, "MB"),
    );
    d.push(
        d.item(
            "Kingston Canvas Select 16GB microSD",
            "sd_card",
            "Kingston Canvas Select Plus microSDHC, 16GB, A1",
            Good,
        )
        .at("drawer 3")
        .label("capacity", 16.0, "GB"),
    );
    d.push(
        d.item(
            "Micro-USB 5V 2.5A power adapter",
            "power_adapter",
            "CanaKit micro-USB supply, 5 V 2.5 A, with switch",
            Good,
        )
        .at("drawer 3")
        .label("output_voltage", 5.0, "V")
        .label("output_current", 2.5, "A"),
    );

    // 12 V LED strip lighting kit.
    d.push(
        d.item("12 V LED strip 5 m, warm white", "led_strip", "2835 SMD, 60 LEDs/m, 3000 K, 12 V, IP20, 5 m reel", New)
            .at("shelf C2")
            .label("voltage", 12.0, "V")
            .label("length", 5.0, "m")
            .label("power", 24.0, "W"),
    );
    d.push(
        d.item(
            "Mean Well LRS-50-12 power supply",
            "power_supply",
            "Mean Well LRS-50-12, 12 V 4.2 A, 50 W, enclosed",
            LikeNew,
        )
        .at("shelf C2")
        .label("output_voltage", 12.0, "V")
        .label("output_current", 4.2, "A")
        .label("output_power", 50.0, "W"),
    );
    d.push(
        d.item(
            "12 V LED dimmer with RF remote",
            "led_controller",
            "single-colour PWM dimmer, 12-24 V, 8 A, RF remote",
            New,
        )
        .at("shelf C2")
        .manual("max_current", 8.0, "A"),
    );

    // Laptop with its battery, its charger and an SSD: a home server or a kids' PC.
    let battery = d.push(
        d.item("ThinkPad X230 battery", "battery_pack", "Lenovo 45N1025 6-cell, 10.8 V, 57 Wh", Fair)
            .at("shelf A1")
            .label("capacity", 5600.0, "mAh")
            .label("voltage", 10.8, "V")
            .measured("health", 71.0, "%")
            .fault("holds about 70% of its design capacity", Minor)
            .test("battery health report", Pass, Some("71%"), None),
    );
    d.push(
        d.item(
            "Lenovo ThinkPad X230",
            "laptop",
            "Lenovo ThinkPad X230, i5-3320M, 8GB RAM, 12.5in 1366x768, S/N R9-0XXXXX",
            Good,
        )
        .at("shelf A1")
        .label("ram", 8.0, "GB")
        .label("storage", 320.0, "GB")
        .fault("worn palm rest", Minor)
        .with(&["docking station"])
        .test("memtest86 full pass", Pass, None, None)
        .made_of(&[battery]),
    );
    d.push(
        d.item("Lenovo 65W round-tip charger", "power_adapter", "Lenovo 65 W, 20 V 3.25 A, 7.9 mm round tip", Good)
            .at("shelf A1")
            .label("output_voltage", 20.0, "V")
            .label("output_current", 3.25, "A")
            .label("output_power", 65.0, "W"),
    );
    d.push(
        d.item("Crucial MX500 500GB SSD", "ssd", "Crucial MX500 CT500MX500SSD1, 2.5in SATA", LikeNew)
            .at("shelf B1")
            .label("capacity", 500.0, "GB")
            .label("form_factor", 2.5, "in")
            .measured("health", 98.0, "%")
            .test("SMART short test", Pass, None, None),
    );

    // Weather station kit.
    d.push(
        d.item("ESP32 DevKitC", "microcontroller", "Espressif ESP32-DevKitC V4, ESP32-WROOM-32, Wi-Fi/Bluetooth", New)
            .at("drawer 2"),
    );
    d.push(
        d.item(
            "BME280 sensor breakout",
            "environment_sensor",
            "Bosch BME280 temperature/humidity/pressure, I2C, 3.3 V",
            New,
        )
        .at("drawer 2"),
    );
    d.push(
        d.item(
            "Anker PowerPort 2 USB charger",
            "power_adapter",
            "Anker PowerPort 2, two USB-A, 5 V 2.4 A per port, 24 W",
            Good,
        )
        .at("drawer 3")
        .label("output_voltage", 5.0, "V")
        .label("output_current", 2.4, "A"),
    );

    // Parts of projects not complete yet: plant watering, internet radio, media centre.
    d.push(
        d.item(
            "Capacitive soil moisture sensor v1.2",
            "soil_moisture_sensor",
            "capacitive soil moisture sensor v1.2, 3.3-5.5 V, analogue out",
            New,
        )
        .at("drawer 2"),
    );
    d.push(
        d.item("Pair of Wharfedale bookshelf speakers", "speaker", "Wharfedale Diamond 8.1, passive, 6 ohm", Good)
            .at("loft")
            .label("impedance", 6.0, "ohm")
            .fault("dust cap dented on the left speaker", Minor),
    );
    d.push(
        d.item(
            "PAM8403 amplifier board",
            "amplifier_board",
            "PAM8403 class-D stereo, 2 x 3 W, 5 V, with volume knob",
            New,
        )
        .at("drawer 2")
        .label("power", 3.0, "W"),
    );
    d.push(
        d.item("Samsung UE32J4000 32\" TV", "tv", "Samsung UE32J4000, 32in, 1366x768, 2 x HDMI", Good)
            .at("loft")
            .label("screen_size", 32.0, "in")
            .with(&["remote control", "stand"]),
    );
    d.push(
        d.item("Raspberry Pi 3 Model B+", "single_board_computer", "Raspberry Pi 3 Model B+, BCM2837B0, 1GB", Fair)
            .at("shelf B2")
            .label("ram", 1.0, "GB")
            .fault("no power LED and no boot since a short on the GPIO header", Blocking)
            .test("boot from a known good card", Fail, None, Some("no activity LED")),
    );

    // For sale.
    d.push(
        d.item(
            "Apple iPad Air 2 64GB Wi-Fi",
            "tablet",
            "Apple iPad Air 2, A1566, 64GB, Wi-Fi, space grey, iPadOS 15",
            Good,
        )
        .intent(Sell)
        .at("desk drawer")
        .label("storage", 64.0, "GB")
        .measured("battery_health", 84.0, "%")
        .fault("light scratches on the back", Minor)
        .with(&["Lightning cable", "Smart Cover"])
        .test("touch screen grid test", Pass, None, None)
        .test("battery health", Pass, Some("84%"), None),
    );
    d.push(
        d.item("Nvidia GeForce GTX 1060 6GB", "graphics_card", "MSI GeForce GTX 1060 Gaming X 6G, 6GB GDDR5", Fair)
            .intent(Sell)
            .at("shelf C1")
            .label("memory", 6.0, "GB")
            .fault("one fan rattles above 60% speed", Major)
            .with(&["original box"])
            .test("FurMark 15 minutes", Pass, Some("72 C"), Some("stable, no artefacts")),
    );
    d.push(
        d.item("Samsung Galaxy S9 64GB", "phone", "Samsung Galaxy S9 SM-G960F, 64GB, unlocked, midnight black", Fair)
            .intent(Sell)
            .at("desk drawer")
            .label("storage", 64.0, "GB")
            .fault("cracked back glass", Major)
            .fault("battery lasts about half a day", Minor)
            .with(&["USB-C cable"])
            .test("factory reset", Pass, None, None)
            .test("cameras and speakers", Pass, None, None),
    );

    // To give away.
    d.push(
        d.item("Brother HL-2130 laser printer", "printer", "Brother HL-2130, mono laser, USB", Fair)
            .intent(Give)
            .at("garage")
            .fault("toner low: prints faint at the edges", Minor)
            .with(&["USB cable", "power cord"])
            .test("prints a test page", Pass, None, None),
    );
    d.push(
        d.item("Box of assorted USB cables", "cable", "about 15 cables: micro-USB, USB-C, mini-USB, USB-A to B", Good)
            .intent(Give)
            .at("garage"),
    );

    // Gone.
    d.push(
        d.item("Raspberry Pi 3 Model B", "single_board_computer", "Raspberry Pi 3 Model B, BCM2837, 1GB", Good)
            .label("ram", 1.0, "GB")
            .intent(Sell)
            .gone(GoneReason::Sold, "sold on eBay for 22 GBP"),
    );
    d.push(
        d.item(
            "APC UPS battery 12 V 7 Ah",
            "lead_acid_battery",
            "sealed lead-acid RBC2, 12 V 7 Ah, from an APC Back-UPS",
            Poor,
        )
        .label("capacity", 7.0, "Ah")
        .fault("does not hold charge", Blocking)
        .gone(GoneReason::Recycled, "taken to the household recycling centre"),
    );

    d.items
}
