//! The catalogue as Rust wrote it before catalogue.toml: kept for one commit to prove the file equal.
#![allow(dead_code)]

use crate::item::Condition::{self, Fair, Good};
use crate::template::{FieldBound, NewTemplate, Requirement, TemplateError, requirement};

/// One requirement of a built-in template, in plain words, before validation.
struct Need {
    key: &'static str,
    label: &'static str,
    item_types: &'static [&'static str],
    min_condition: Option<Condition>,
    optional: bool,
    /// `(field key, min, max, unit)`.
    bounds: Vec<(&'static str, Option<f64>, Option<f64>, &'static str)>,
}

/// A non-optional requirement.
fn need(key: &'static str, label: &'static str, item_types: &'static [&'static str]) -> Need {
    Need { key, label, item_types, min_condition: None, optional: false, bounds: Vec::new() }
}

/// An optional requirement: used when the owner has it, never listed as missing.
fn extra(key: &'static str, label: &'static str, item_types: &'static [&'static str]) -> Need {
    Need { optional: true, ..need(key, label, item_types) }
}

impl Need {
    fn min(mut self, condition: Condition) -> Self {
        self.min_condition = Some(condition);
        self
    }

    fn at_least(mut self, field: &'static str, min: f64, unit: &'static str) -> Self {
        self.bounds.push((field, Some(min), None, unit));
        self
    }

    fn between(mut self, field: &'static str, min: f64, max: f64, unit: &'static str) -> Self {
        self.bounds.push((field, Some(min), Some(max), unit));
        self
    }

    /// A 5 V USB supply of at least `amps`.
    fn five_volt(self, amps: f64) -> Self {
        self.between("output_voltage", 4.75, 5.5, "V").at_least("output_current", amps, "A")
    }

    /// A 12 V supply of at least `amps`.
    fn twelve_volt(self, amps: f64) -> Self {
        self.between("output_voltage", 11.5, 12.5, "V").at_least("output_current", amps, "A")
    }

    fn build(self) -> Result<Requirement, TemplateError> {
        let fields = self
            .bounds
            .iter()
            .map(|(key, min, max, unit)| FieldBound::new(key, *min, *max, unit))
            .collect::<Result<Vec<_>, _>>()?;
        requirement(self.key, self.label, self.item_types, self.min_condition, self.optional, fields)
    }
}

fn template(
    label: &str,
    goal: &str,
    effort: &str,
    steps: &[&str],
    needs: Vec<Need>,
) -> Result<NewTemplate, TemplateError> {
    let steps: Vec<String> = steps.iter().map(|s| (*s).to_owned()).collect();
    let requirements = needs.into_iter().map(Need::build).collect::<Result<Vec<_>, _>>()?;
    NewTemplate::new(label, goal, effort, &steps, requirements)
}

/// Single-board computers and the 5 V supplies, cards and cases that go with them.
const SBC: &[&str] = &["single_board_computer"];
const USB_POWER: &[&str] = &["power_adapter"];
const BOOT_MEDIA: &[&str] = &["sd_card", "usb_flash_drive"];
const CASE: &[&str] = &["enclosure"];
const NETWORK_CABLE: &[&str] = &["cable"];
const DRIVES: &[&str] = &["hard_drive", "ssd"];

/// The built-in catalogue, in the order it is seeded (the store gives ids in this order).
///
/// Every template validates; [`try_builtin`] says which one does not, should an edit break one.
///
/// ```
/// let catalogue = trove_domain::catalogue::builtin();
/// assert!(catalogue.len() >= 20);
/// assert!(catalogue.iter().any(|t| t.label == "Retro game console"));
/// ```
pub fn builtin() -> Vec<NewTemplate> {
    match try_builtin() {
        Ok(templates) => templates,
        // The catalogue is a constant of the program: an invalid entry is a bug caught by the unit tests.
        Err(e) => panic!("the built-in catalogue is invalid: {e}"),
    }
}

/// The built-in catalogue, or the first template error.
///
/// # Errors
/// The first [`TemplateError`] of an entry that does not validate.
pub fn try_builtin() -> Result<Vec<NewTemplate>, TemplateError> {
    vec![
        template(
            "Retro game console",
            "Play classic console games on a TV or monitor with RetroPie running on a single-board computer.",
            "an afternoon",
            &[
                "Flash RetroPie onto the card with Raspberry Pi Imager.",
                "Fit the board in its case with heatsinks and connect the display over HDMI.",
                "Boot, set the Wi-Fi country and expand the filesystem.",
                "Pair or plug in the gamepads and map their buttons in EmulationStation.",
                "Copy the game files you own over the network share.",
                "Set the HDMI output to 720p if menus feel sluggish.",
            ],
            vec![
                need("controller", "a single-board computer with HDMI out and at least 1 GB RAM", SBC)
                    .min(Good)
                    .at_least("ram", 1.0, "GB"),
                need("storage", "a microSD card of at least 16 GB", &["sd_card"])
                    .min(Fair)
                    .at_least("capacity", 16.0, "GB"),
                need("display", "a monitor or TV with HDMI input", &["monitor", "tv"]).min(Fair),
                need("gamepad", "a USB or Bluetooth gamepad", &["gamepad"]).min(Fair),
                need("power", "a 5 V USB power supply of at least 2.5 A", USB_POWER).min(Fair).five_volt(2.5),
                extra("gamepad_2", "a second gamepad for two players", &["gamepad"]).min(Fair),
                extra("case", "a case for the board", CASE),
            ],
        ),
        template(
            "Home NAS",
            "Share files and back up the household's computers from a small, quiet, always-on file server.",
            "a weekend",
            &[
                "Install a minimal OS (Raspberry Pi OS Lite or Debian) on the host and enable SSH.",
                "Run a long SMART test on each drive before trusting it with data.",
                "Put the drive in the dock, format it ext4 and mount it by UUID in /etc/fstab.",
                "Install Samba, create one share per person and set passwords.",
                "Mirror the second drive nightly with rsync, if you have one.",
                "Set up SMART monitoring and e-mail alerts.",
                "Point each computer's backup tool at the share and test a restore.",
            ],
            vec![
                need(
                    "host",
                    "a single-board computer, mini PC or laptop with at least 2 GB RAM",
                    &["single_board_computer", "mini_pc", "laptop"],
                )
                .min(Good)
                .at_least("ram", 2.0, "GB"),
                need("drive", "a hard drive or SSD of at least 500 GB", DRIVES)
                    .min(Good)
                    .at_least("capacity", 500.0, "GB"),
                need("dock", "a USB 3 drive dock or enclosure", &["drive_enclosure"]).min(Fair),
                extra("drive_2", "a second drive of at least 500 GB for a mirror", DRIVES)
                    .min(Good)
                    .at_least("capacity", 500.0, "GB"),
                extra("power", "a 5 V USB power supply of at least 3 A for a single-board host", USB_POWER)
                    .min(Fair)
                    .five_volt(3.0),
                extra("network", "an Ethernet cable", NETWORK_CABLE),
            ],
        ),
        template(
            "Power bank from 18650 cells",
            "Build a rechargeable USB power bank from two matched 18650 cells.",
            "an afternoon",
            &[
                "Check each cell's voltage; only use cells within 0.1 V of each other and above 3.0 V.",
                "Connect the cells in parallel with nickel strip or a holder; never solder directly to a cell.",
                "Wire the charge and protection board to the pack (B+ and B-).",
                "Wire the boost converter to the board's output and set it to 5.1 V before connecting a load.",
                "Test charging from USB and discharging into a phone, checking nothing gets hot.",
                "Close everything in the case with the USB ports reachable.",
            ],
            vec![
                need("cell_1", "an 18650 lithium-ion cell of at least 2000 mAh", &["lithium_cell"])
                    .min(Good)
                    .at_least("capacity", 2000.0, "mAh"),
                need("cell_2", "a second 18650 cell of at least 2000 mAh, ideally the same model", &["lithium_cell"])
                    .min(Good)
                    .at_least("capacity", 2000.0, "mAh"),
                need("charger", "a 1S charge and protection board (TP4056 or similar)", &["bms_board"]).min(Good),
                need("boost", "a boost converter to 5 V (MT3608 or similar)", &["boost_converter"]).min(Good),
                extra("case", "a case or 2-cell 18650 holder", &["enclosure", "battery_holder"]),
            ],
        ),
        template(
            "Bench power supply from an ATX unit",
            "Turn a spare ATX computer supply into a 3.3, 5 and 12 V bench supply with an adjustable output.",
            "an evening",
            &[
                "Check the supply's label and that the fan spins; never open the high-voltage side.",
                "Plug the 24-pin connector into the breakout board.",
                "Switch on and measure each rail with no load, then with a small load.",
                "Wire the buck converter to the 12 V rail for an adjustable output, if you have one.",
                "Fit the panel meter on the adjustable output.",
                "Label every binding post with its voltage.",
            ],
            vec![
                need("psu", "an ATX computer power supply of at least 200 W", &["atx_power_supply"])
                    .min(Fair)
                    .at_least("output_power", 200.0, "W"),
                need("breakout", "an ATX 24-pin breakout board with binding posts", &["breakout_board"]).min(Fair),
                extra("regulator", "an adjustable buck converter for a variable output", &["buck_converter"]).min(Good),
                extra("meter", "a panel volt/amp meter", &["panel_meter"]).min(Fair),
                extra("case", "a box for the breakout and meter", CASE),
            ],
        ),
        template(
            "Weather station",
            "Log temperature, humidity and air pressure and show them on a web page or home dashboard.",
            "a weekend",
            &[
                "Flash ESPHome or Tasmota onto the microcontroller.",
                "Wire the sensor over I2C (3.3 V, GND, SDA, SCL).",
                "Add the sensor to the firmware's configuration and check the readings against a thermometer.",
                "Connect it to Wi-Fi and to Home Assistant or an MQTT broker.",
                "Mount it in a shaded, ventilated spot outdoors, away from walls that warm in the sun.",
            ],
            vec![
                need("controller", "a Wi-Fi microcontroller board (ESP32 or ESP8266)", &["microcontroller"]).min(Good),
                need(
                    "sensor",
                    "a temperature, humidity and pressure sensor (BME280 or similar)",
                    &["environment_sensor"],
                )
                .min(Good),
                need("power", "a 5 V USB power supply of at least 1 A", USB_POWER).min(Fair).five_volt(1.0),
                extra("display", "a small OLED or LCD display", &["display_module"]).min(Fair),
                extra("case", "a weatherproof box or radiation shield", CASE),
            ],
        ),
        template(
            "Smart mirror",
            "Show the time, weather and calendar behind a two-way mirror in the hallway.",
            "2 weekends",
            &[
                "Remove the monitor's stand and check the panel has no bright backlight bleed.",
                "Install MagicMirror² on the board and pick the modules (clock, weather, calendar).",
                "Rotate the display to portrait if the frame is tall.",
                "Build a frame that holds the mirror glass tight against the panel.",
                "Black out the unused mirror area with card so only the text shows.",
                "Route the power leads and mount it on the wall.",
            ],
            vec![
                need("display", "a monitor of at least 17 inches with HDMI input", &["monitor"]).min(Good).at_least(
                    "screen_size",
                    17.0,
                    "in",
                ),
                need("controller", "a single-board computer with at least 1 GB RAM", SBC)
                    .min(Good)
                    .at_least("ram", 1.0, "GB"),
                need("mirror", "a sheet of two-way mirror glass or acrylic", &["two_way_mirror"]).min(Good),
                need("power", "a 5 V USB power supply of at least 2.5 A", USB_POWER).min(Fair).five_volt(2.5),
                extra("frame", "timber or a deep picture frame", &["lumber", "picture_frame"]),
            ],
        ),
        template(
            "Network ad-blocker (Pi-hole)",
            "Block ads and trackers for every device in the house with a Pi-hole DNS server.",
            "an evening",
            &[
                "Flash Raspberry Pi OS Lite onto the card with SSH and Wi-Fi set in the imager.",
                "Give the board a fixed address in the router's DHCP settings.",
                "Install Pi-hole with its one-line installer and note the admin password.",
                "Set the router to hand out the Pi-hole as the DNS server.",
                "Check a few sites, then add allow-list entries for anything that breaks.",
            ],
            vec![
                need("controller", "any single-board computer with network (a Pi Zero W is plenty)", SBC).min(Fair),
                need("storage", "a microSD card or USB stick of at least 8 GB", BOOT_MEDIA)
                    .min(Fair)
                    .at_least("capacity", 8.0, "GB"),
                need("power", "a 5 V USB power supply of at least 1 A", USB_POWER).min(Fair).five_volt(1.0),
                extra("network", "an Ethernet cable", NETWORK_CABLE),
                extra("case", "a case for the board", CASE),
            ],
        ),
        template(
            "Media centre",
            "Play films, music and streams on the TV with Kodi on a single-board computer.",
            "an afternoon",
            &[
                "Flash LibreELEC onto the card.",
                "Connect the board to the TV over HDMI and enable HDMI-CEC so the TV remote works.",
                "Add the network shares or the USB drive as media sources.",
                "Let Kodi scrape the library and set up the add-ons you use.",
                "Check that 1080p files play smoothly; use wired network for large files.",
            ],
            vec![
                need("controller", "a single-board computer with at least 2 GB RAM and HDMI", SBC)
                    .min(Good)
                    .at_least("ram", 2.0, "GB"),
                need("display", "a TV or monitor with HDMI input", &["tv", "monitor"]).min(Fair),
                need("storage", "a microSD card of at least 16 GB", &["sd_card"])
                    .min(Fair)
                    .at_least("capacity", 16.0, "GB"),
                need("power", "a 5 V USB power supply of at least 2.5 A", USB_POWER).min(Fair).five_volt(2.5),
                extra("remote", "a remote control or wireless keyboard", &["remote_control", "keyboard"]),
                extra("media", "a drive for the media library", &["hard_drive", "ssd", "usb_flash_drive"]).min(Fair),
            ],
        ),
        template(
            "3D-printer enclosure light",
            "Light the inside of a 3D-printer enclosure so prints and the camera view are easy to see.",
            "an evening",
            &[
                "Measure the enclosure's inside edges and cut the strip at its marked cut points.",
                "Clean the mounting surface with isopropyl alcohol and stick the strip on.",
                "Set the buck converter to the strip's voltage before connecting it, if powering from the printer.",
                "Wire it through the switch, with a fuse on the supply side.",
                "Route the wires away from moving parts and the hot end.",
            ],
            vec![
                need("light", "an LED strip", &["led_strip"]).min(Fair),
                need(
                    "power",
                    "a supply for the strip, or a buck converter from the printer's 24 V",
                    &["power_supply", "power_adapter", "buck_converter"],
                )
                .min(Fair),
                extra("switch", "a rocker switch", &["switch"]),
                extra("wire", "some two-core wire", &["cable"]),
            ],
        ),
        template(
            "E-bike light",
            "Run a bright LED headlight from the e-bike's battery so it never needs charging on its own.",
            "an afternoon",
            &[
                "Measure the e-bike battery's full-charge voltage.",
                "Set the buck converter's output to the light's voltage with no load attached.",
                "Tap the battery's output after the fuse, or the controller's light output if it has one.",
                "Wire the converter, the switch and the light, and seal the joints with heat-shrink.",
                "Mount the light and aim it low enough not to dazzle others.",
            ],
            vec![
                need("light", "an LED light module or a torch head", &["led_module", "flashlight"]).min(Fair),
                need("converter", "a buck converter that takes at least 40 V in", &["buck_converter"])
                    .min(Good)
                    .at_least("max_input_voltage", 40.0, "V"),
                extra("switch", "a waterproof switch", &["switch"]),
                extra("mount", "a handlebar mount", &["mount"]),
            ],
        ),
        template(
            "Laptop to home server",
            "Give an old laptop a second life as a home server for containers, backups and a media library.",
            "a weekend",
            &[
                "Run a memory test and a SMART test before anything else.",
                "Fit the SSD and install a server OS (Debian or Ubuntu Server).",
                "Set the lid to do nothing when closed and the BIOS to power on after a power cut.",
                "Limit battery charging to about 60% if the BIOS allows it, to spare the battery.",
                "Install Docker and the services you want, with their data on the SSD.",
                "Set up off-site backups of the data.",
            ],
            vec![
                need("host", "a laptop with at least 4 GB RAM", &["laptop"]).min(Fair).at_least("ram", 4.0, "GB"),
                need("drive", "an SSD or hard drive of at least 120 GB", DRIVES)
                    .min(Good)
                    .at_least("capacity", 120.0, "GB"),
                need("charger", "the laptop's charger (15-21 V)", &["power_adapter"]).min(Fair).between(
                    "output_voltage",
                    15.0,
                    21.0,
                    "V",
                ),
                extra("network", "an Ethernet cable", NETWORK_CABLE),
            ],
        ),
        template(
            "Wall dashboard from an old tablet",
            "Mount an old tablet on the wall as a home dashboard, calendar or e-reader stand.",
            "an afternoon",
            &[
                "Factory-reset the tablet and install only a browser or the dashboard app.",
                "Set the screen to stay on while charging, with a night-time brightness schedule.",
                "Open the dashboard page (Home Assistant, a calendar) in kiosk mode.",
                "Route the charging cable and fix the mount to the wall.",
            ],
            vec![
                need("tablet", "a tablet that still turns on", &["tablet"]).min(Fair),
                need("charger", "a USB charger for the tablet", &["power_adapter"]).min(Fair),
                extra("mount", "a wall mount or frame", &["mount", "picture_frame"]),
                extra("cable", "a long USB cable", &["cable"]),
            ],
        ),
        template(
            "USB battery tester",
            "Measure the real capacity of 18650 cells and power banks by discharging them through a known load.",
            "a weekend",
            &[
                "Wire the current sensor between the cell and the load.",
                "Connect the sensor to the microcontroller over I2C.",
                "Write a sketch that samples current and voltage every second and stops at 3.0 V.",
                "Show the running mAh total on the display or over serial.",
                "Check it against a known cell before trusting it.",
            ],
            vec![
                need("controller", "a microcontroller board", &["microcontroller"]).min(Good),
                need("sensor", "a current and voltage sensor (INA219 or similar)", &["current_sensor"]).min(Good),
                need("load", "a power resistor or electronic load", &["load_resistor", "electronic_load"]).min(Fair),
                extra("display", "a small OLED or LCD display", &["display_module"]).min(Fair),
                extra("holder", "an 18650 holder", &["battery_holder"]),
            ],
        ),
        template(
            "LED desk lamp",
            "Build a bright, flicker-free desk lamp with a dimmer.",
            "an afternoon",
            &[
                "Design the arm and base from timber or a box; keep the LEDs on an aluminium strip for cooling.",
                "Stick the LEDs along the aluminium and wire them to the dimmer.",
                "Connect the dimmer to the power supply, checking the polarity.",
                "Check the lamp at full brightness for an hour: nothing should get too hot to touch.",
            ],
            vec![
                need("light", "an LED strip or LED module", &["led_strip", "led_module"]).min(Good),
                need("power", "a power supply matching the LEDs' voltage", &["power_adapter", "power_supply"])
                    .min(Fair),
                extra("dimmer", "a PWM dimmer", &["led_controller", "dimmer"]),
                extra("base", "timber or a box for the base", &["lumber", "enclosure"]),
            ],
        ),
        template(
            "Security camera",
            "Watch the front door or the garage with motionEye on a single-board computer and a camera.",
            "an afternoon",
            &[
                "Flash motionEyeOS onto the card.",
                "Connect the camera and check the image in the web interface.",
                "Set motion detection zones and where recordings go.",
                "Set a strong admin password; keep it off the public internet or behind a VPN.",
                "Mount it where it sees what matters, out of rain.",
            ],
            vec![
                need("controller", "a single-board computer with at least 1 GB RAM", SBC)
                    .min(Fair)
                    .at_least("ram", 1.0, "GB"),
                need("camera", "a camera module or USB webcam", &["camera_module", "webcam"]).min(Fair),
                need("storage", "a microSD card of at least 16 GB", &["sd_card"])
                    .min(Fair)
                    .at_least("capacity", 16.0, "GB"),
                need("power", "a 5 V USB power supply of at least 2.5 A", USB_POWER).min(Fair).five_volt(2.5),
                extra("case", "a weatherproof case", CASE),
            ],
        ),
        template(
            "Spare-drive backup box",
            "Turn a spare drive into a USB backup drive for a laptop or desktop.",
            "an hour",
            &[
                "Run a SMART test on the drive and check the reallocated sector count.",
                "Fit the drive in the enclosure.",
                "Format it for the computer that will use it (APFS, NTFS or ext4).",
                "Set up Time Machine, File History or a backup tool and run the first backup.",
                "Label the enclosure with what it backs up.",
            ],
            vec![
                // The enclosures people have spare are 2.5in ones; a 3.5in drive needs a powered dock instead.
                need("drive", "a 2.5in hard drive or SSD of at least 250 GB", DRIVES)
                    .min(Good)
                    .at_least("capacity", 250.0, "GB")
                    .between("form_factor", 1.0, 2.5, "in"),
                need("enclosure", "a 2.5in USB drive enclosure", &["drive_enclosure"]).min(Fair),
                extra("cable", "a USB cable", &["cable"]),
            ],
        ),
        template(
            "12 V LED strip lighting",
            "Light a shelf, kitchen cabinet or workbench with a 12 V LED strip on a proper supply.",
            "an afternoon",
            &[
                "Measure the run and cut the strip only at its marked cut points.",
                "Check the strip's wattage: the supply should have at least 20% headroom.",
                "Stick the strip in aluminium channel if it will be on for hours.",
                "Wire the supply through the dimmer to the strip, observing polarity.",
                "Keep the mains side of the supply enclosed; test before fixing everything in place.",
            ],
            vec![
                need("strip", "a 12 V LED strip", &["led_strip"]).min(Fair).between("voltage", 11.5, 12.5, "V"),
                need("power", "a 12 V power supply of at least 2 A", &["power_supply", "power_adapter"])
                    .min(Fair)
                    .twelve_volt(2.0),
                extra("dimmer", "an LED dimmer or controller", &["led_controller", "dimmer"]),
                extra("wire", "some two-core wire", &["cable"]),
            ],
        ),
        template(
            "Solar USB charger",
            "Charge phones and lights from a small solar panel on the balcony or while camping.",
            "an afternoon",
            &[
                "Measure the panel's open-circuit voltage in full sun.",
                "Set the converter's output to 5.1 V before connecting anything to it.",
                "Wire the panel to the converter with a diode against reverse current.",
                "Add the battery and its protection board, if you have them, to buffer clouds.",
                "Seal the electronics in a box with the USB port facing down.",
            ],
            vec![
                need("panel", "a solar panel of at least 5 W", &["solar_panel"]).min(Fair).at_least(
                    "output_power",
                    5.0,
                    "W",
                ),
                need(
                    "regulator",
                    "a buck converter or solar charge controller with USB out",
                    &["buck_converter", "charge_controller"],
                )
                .min(Good),
                extra("battery", "a battery pack or lithium cell as a buffer", &["battery_pack", "lithium_cell"])
                    .min(Good),
                extra("case", "a weatherproof box", CASE),
            ],
        ),
        template(
            "Portable Bluetooth speaker",
            "Build a rechargeable Bluetooth speaker from a spare speaker driver.",
            "a weekend",
            &[
                "Check the driver's impedance and pick the amplifier's output to match.",
                "Wire the Bluetooth receiver's audio out to the amplifier's input.",
                "Wire the cell through the charge board to the amplifier and receiver.",
                "Test at low volume before closing anything up.",
                "Build or adapt a sealed box for the driver; stuff it loosely with wadding.",
            ],
            vec![
                need("driver", "a speaker driver or small bookshelf speaker", &["speaker"]).min(Fair),
                need("amplifier", "a small class-D amplifier board (PAM8403 or similar)", &["amplifier_board"])
                    .min(Good),
                need("receiver", "a Bluetooth audio receiver module", &["bluetooth_module"]).min(Good),
                need("battery", "a lithium cell or pack of at least 1500 mAh", &["lithium_cell", "battery_pack"])
                    .min(Good)
                    .at_least("capacity", 1500.0, "mAh"),
                need("charger", "a charge and protection board for the cell", &["bms_board"]).min(Good),
                extra("case", "a box for the speaker", CASE),
            ],
        ),
        template(
            "Plant watering controller",
            "Water the plants automatically when the soil gets dry.",
            "a weekend",
            &[
                "Calibrate the soil sensor: note its reading in dry air and in a glass of water.",
                "Wire the pump through the relay board, with the pump on its own supply rail.",
                "Write or flash firmware that waters for a few seconds when the soil is dry, then waits.",
                "Run the tubing from the reservoir to each pot.",
                "Test for a week with a person checking, then leave it to run.",
            ],
            vec![
                need("controller", "a microcontroller board", &["microcontroller"]).min(Good),
                need("pump", "a small 5 or 12 V water pump", &["pump"]).min(Fair),
                need("switch", "a relay or MOSFET board to switch the pump", &["relay_board", "mosfet_board"])
                    .min(Good),
                need("sensor", "a capacitive soil moisture sensor", &["soil_moisture_sensor"]).min(Fair),
                need("power", "a power supply for the board and pump", &["power_adapter", "power_supply"]).min(Fair),
                extra("tubing", "silicone tubing", &["tubing"]),
                extra("reservoir", "a water container", &["container"]),
            ],
        ),
        template(
            "Old-laptop kids' PC",
            "Set up an old laptop as a safe, simple computer for the children.",
            "an afternoon",
            &[
                "Wipe the laptop and install a light, supported OS (Linux Mint or ChromeOS Flex).",
                "Create a child account without admin rights and turn on the parental controls.",
                "Install the learning and creative apps they use.",
                "Check the battery and charger; replace a swollen battery before handing it over.",
                "Add a mouse and keyboard if the built-in ones are worn.",
            ],
            vec![
                need("laptop", "a laptop with at least 2 GB RAM", &["laptop"]).min(Fair).at_least("ram", 2.0, "GB"),
                need("charger", "the laptop's charger (15-21 V)", &["power_adapter"]).min(Fair).between(
                    "output_voltage",
                    15.0,
                    21.0,
                    "V",
                ),
                extra("mouse", "a mouse", &["mouse"]).min(Fair),
                extra("keyboard", "a keyboard", &["keyboard"]).min(Fair),
            ],
        ),
        template(
            "Wi-Fi extender from an old router",
            "Extend the Wi-Fi to the garden or the loft with an old router as an access point.",
            "an evening",
            &[
                "Factory-reset the router and update its firmware (or flash OpenWrt if it is supported).",
                "Give it a fixed address on the main network and turn its DHCP server off.",
                "Use the same network name and password as the main router, on a different channel.",
                "Connect it to the main router by cable where possible.",
            ],
            vec![
                need("router", "a Wi-Fi router", &["router"]).min(Fair),
                need("power", "the router's power adapter", &["power_adapter"]).min(Fair),
                extra("cable", "an Ethernet cable", NETWORK_CABLE),
            ],
        ),
        template(
            "Second screen from a laptop panel",
            "Turn the screen of a broken laptop into a portable second monitor.",
            "a weekend",
            &[
                "Read the panel's part number from its back label.",
                "Check the driver board is made for that exact panel and connector.",
                "Connect the panel, driver board and supply, and test before building anything.",
                "Build a thin frame or stand that protects the panel's edges.",
            ],
            vec![
                need("panel", "a bare laptop LCD panel", &["lcd_panel"]).min(Fair),
                need("driver", "an HDMI driver board for that panel", &["display_driver_board"]).min(Good),
                need("power", "a 12 V power supply of at least 2 A", &["power_adapter", "power_supply"])
                    .min(Fair)
                    .twelve_volt(2.0),
                extra("frame", "timber or a frame for the panel", &["lumber", "picture_frame"]),
            ],
        ),
        template(
            "Internet radio",
            "Play internet radio and podcasts in the workshop or kitchen on a pair of spare speakers.",
            "an afternoon",
            &[
                "Flash moOde audio or Volumio onto the card.",
                "Wire the amplifier to the board's audio output and to the speakers.",
                "Add your stations and set a volume limit.",
                "Put the boards in a box with ventilation.",
            ],
            vec![
                need("controller", "a single-board computer", SBC).min(Fair),
                need("speaker", "a speaker or pair of speakers", &["speaker"]).min(Fair),
                need("amplifier", "a small amplifier board", &["amplifier_board"]).min(Fair),
                need("storage", "a microSD card of at least 8 GB", &["sd_card"])
                    .min(Fair)
                    .at_least("capacity", 8.0, "GB"),
                need("power", "a 5 V USB power supply of at least 2.5 A", USB_POWER).min(Fair).five_volt(2.5),
                extra("case", "a box for the boards", CASE),
            ],
        ),
        template(
            "Old phone as a security camera",
            "Use an old smartphone as a Wi-Fi camera watching the door, the pets or the 3D printer.",
            "an hour",
            &[
                "Factory-reset the phone and install an IP camera app.",
                "Turn off everything else: notifications, updates over mobile data, the SIM.",
                "Keep it on the charger with battery protection on if the phone offers it.",
                "Mount it and check the view and the stream from another device.",
            ],
            vec![
                need("phone", "a smartphone with a working camera", &["phone"]).min(Fair),
                need("charger", "a USB charger", &["power_adapter"]).min(Fair),
                extra("mount", "a phone mount or tripod", &["mount"]),
            ],
        ),
    ]
    .into_iter()
    .collect()
}
