//! Generated photo-like scenes with known objects, for tests and the benchmark: a plain background under uneven
//! light (a gradient, vignetting), soft shadows, sensor noise, rectangles, ellipses and rounded rectangles (a
//! credit card) at any angle, some touching, some with a label of another colour or a darker rim; what people's
//! photos add around the items (dark bands along an edge, a steep fall of light into the corners, specks of dust);
//! and 12-megapixel trays of coins and of a few thousand small parts. Deterministic: a scene is the same image on
//! every machine.

use image::RgbImage;
use trove_domain::measure::{CARD_CORNER_RADIUS_MM, CARD_LONG_MM, CARD_SHORT_MM, Reference, Region};

/// The outline of an object.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Shape {
    Rect,
    Ellipse,
    /// A rectangle with corners of this radius in pixels.
    Rounded(f64),
}

/// One object laid on the background.
#[derive(Debug, Clone, PartialEq)]
pub struct Object {
    pub shape: Shape,
    /// Centre, in pixels.
    pub cx: f64,
    pub cy: f64,
    /// Size before turning, in pixels.
    pub w: f64,
    pub h: f64,
    /// Turn, in degrees.
    pub angle: f64,
    pub colour: [u8; 3],
    /// A label in the middle (half the size) of another colour.
    pub label: Option<[u8; 3]>,
    /// A rim of another colour along the outline, this many pixels wide (a box's shaded edge): where two such
    /// items touch, a seam shows between them.
    pub rim: Option<(f64, [u8; 3])>,
}

impl Object {
    pub fn rect(cx: f64, cy: f64, w: f64, h: f64, colour: [u8; 3]) -> Self {
        Object { shape: Shape::Rect, cx, cy, w, h, angle: 0.0, colour, label: None, rim: None }
    }

    pub fn ellipse(cx: f64, cy: f64, w: f64, h: f64, colour: [u8; 3]) -> Self {
        Object { shape: Shape::Ellipse, ..Object::rect(cx, cy, w, h, colour) }
    }

    /// A credit card at `px_per_mm`.
    pub fn card(cx: f64, cy: f64, px_per_mm: f64, colour: [u8; 3]) -> Self {
        Object {
            shape: Shape::Rounded(CARD_CORNER_RADIUS_MM * px_per_mm),
            ..Object::rect(cx, cy, CARD_LONG_MM * px_per_mm, CARD_SHORT_MM * px_per_mm, colour)
        }
    }

    pub fn turned(mut self, degrees: f64) -> Self {
        self.angle = degrees;
        self
    }

    pub fn labelled(mut self, colour: [u8; 3]) -> Self {
        self.label = Some(colour);
        self
    }

    pub fn rimmed(mut self, width: f64, colour: [u8; 3]) -> Self {
        self.rim = Some((width, colour));
        self
    }

    /// A signed distance (negative inside) from the outline, in pixels, at a point; `scale` shrinks the shape
    /// (0.5 for the label).
    fn distance(&self, px: f64, py: f64, scale: f64) -> f64 {
        let (s, c) = (-self.angle).to_radians().sin_cos();
        let (dx, dy) = (px - self.cx, py - self.cy);
        let (u, v) = (dx * c - dy * s, dx * s + dy * c);
        let (a, b) = (self.w * scale / 2.0, self.h * scale / 2.0);
        match self.shape {
            Shape::Rect => (u.abs() - a).max(v.abs() - b),
            Shape::Ellipse => ((u / a).hypot(v / b) - 1.0) * a.min(b),
            Shape::Rounded(r) => {
                let r = r * scale;
                let (qx, qy) = (u.abs() - a + r, v.abs() - b + r);
                qx.max(0.0).hypot(qy.max(0.0)) + qx.max(qy).min(0.0) - r
            }
        }
    }

    /// The bounding box in pixels: left, top, right, bottom.
    pub fn bounds(&self) -> (f64, f64, f64, f64) {
        let (s, c) = self.angle.to_radians().sin_cos();
        let (s, c) = (s.abs(), c.abs());
        let (a, b) = (self.w / 2.0, self.h / 2.0);
        let (hw, hh) = match self.shape {
            Shape::Rect => (a * c + b * s, a * s + b * c),
            Shape::Ellipse => ((a * c).hypot(b * s), (a * s).hypot(b * c)),
            Shape::Rounded(r) => ((a - r) * c + (b - r) * s + r, (a - r) * s + (b - r) * c + r),
        };
        (self.cx - hw, self.cy - hh, self.cx + hw, self.cy + hh)
    }

    /// The region the object should come out as (its box within the image).
    pub fn region(&self, width: u32, height: u32) -> Region {
        let (l, t, r, b) = self.bounds();
        let (l, t) = (l.max(0.0).round() as u32, t.max(0.0).round() as u32);
        let (r, b) = (r.min(f64::from(width)).round() as u32, b.min(f64::from(height)).round() as u32);
        let area = match self.shape {
            Shape::Rect => self.w * self.h,
            Shape::Ellipse => std::f64::consts::PI * self.w * self.h / 4.0,
            Shape::Rounded(r) => self.w * self.h - (4.0 - std::f64::consts::PI) * r * r,
        };
        Region { x: l, y: t, width: r - l, height: b - t, area_px: area.round() as u64, spread: None }
    }
}

/// A soft shadow cast by every object.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Shadow {
    /// Offset of the shadow, in pixels.
    pub dx: f64,
    pub dy: f64,
    /// Half-width of the penumbra, in pixels.
    pub blur: f64,
    /// Darkening at the core (0.3 darkens by 30 %).
    pub strength: f64,
}

/// A side of the photo.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Top,
    Bottom,
    Left,
    Right,
}

/// A dark band along part of a side (the shadow of the hand or the phone, the rim of a tray, a lens hood): its
/// inner edge is soft and wavy, and it fades out at its ends.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Band {
    pub side: Side,
    /// Where along the side it runs, as shares of the side's length (it fades over the first and last tenth).
    pub from: f64,
    pub to: f64,
    /// How far in it reaches, in pixels.
    pub depth: f64,
    /// Darkening at the edge (0.5 halves the light).
    pub strength: f64,
}

impl Band {
    /// The share of light the band takes at a point (0 outside it).
    fn darkening(&self, fx: f64, fy: f64, w: f64, h: f64) -> f64 {
        let (inward, along, length) = match self.side {
            Side::Top => (fy, fx, w),
            Side::Bottom => (h - fy, fx, w),
            Side::Left => (fx, fy, h),
            Side::Right => (w - fx, fy, h),
        };
        let t = along / length;
        let fade = ((t - self.from) / 0.1).min((self.to - t) / 0.1).clamp(0.0, 1.0);
        if fade == 0.0 {
            return 0.0;
        }
        let depth = self.depth * (1.0 + 0.25 * (along / 23.0).sin() + 0.15 * (along / 7.0).sin());
        let inside = ((depth - inward) / (0.3 * self.depth) + 0.5).clamp(0.0, 1.0);
        self.strength * fade * inside
    }
}

/// A photo to generate, with what it shows.
#[derive(Debug, Clone, PartialEq)]
pub struct Scene {
    pub name: &'static str,
    pub width: u32,
    pub height: u32,
    pub background: [u8; 3],
    /// Change of light across the photo: 0.4 goes from 120 % at the top left to 80 % at the bottom right.
    pub gradient: f64,
    /// Darkening in the corners (0.3 is 30 % darker there).
    pub vignette: f64,
    /// A steeper fall of light into the corners, as a wide-angle lens gives (the fourth power of the distance from
    /// the centre: 0.4 is 40 % darker in the corners, little in the middle).
    pub falloff: f64,
    /// Dark bands along the edges.
    pub bands: Vec<Band>,
    /// Specks of dust and crumbs: drawn as objects are, but not items (not in [`Scene::expected`]).
    pub specks: Vec<Object>,
    /// Sensor noise, standard deviation in grey levels.
    pub noise: f64,
    pub shadow: Option<Shadow>,
    pub objects: Vec<Object>,
    /// Which object is the reference, and what it is.
    pub reference: Option<(usize, Reference)>,
    /// The scale the objects were laid out at.
    pub px_per_mm: f64,
    pub seed: u64,
}

/// The objects and specks near each cell of a grid over the photo, so that a pixel looks only at those that may
/// cover or shade it (a tray holds thousands). Objects come before specks, each in their order, so they are drawn
/// in the same order everywhere.
struct Index {
    /// The side of a cell, in pixels.
    cell: u32,
    cols: u32,
    /// Per cell, the indices (objects first, then specks) of what reaches into it.
    near: Vec<Vec<usize>>,
    /// Every object's and speck's bounding box.
    boxes: Vec<(f64, f64, f64, f64)>,
    /// How far a shadow reaches beyond its object, in pixels.
    reach: f64,
}

impl Index {
    fn new(scene: &Scene) -> Self {
        let cell = 32;
        let (cols, rows) = (scene.width.div_ceil(cell), scene.height.div_ceil(cell));
        let reach = scene.shadow.map(|s| s.dx.abs().max(s.dy.abs()) + s.blur).unwrap_or(0.0) + 2.0;
        let boxes: Vec<(f64, f64, f64, f64)> = scene.objects.iter().chain(&scene.specks).map(Object::bounds).collect();
        let mut near = vec![Vec::new(); (cols * rows) as usize];
        let to_cell = |v: f64, n: u32| ((v.max(0.0) / f64::from(cell)) as u32).min(n - 1);
        for (i, b) in boxes.iter().enumerate() {
            let (l, t) = (to_cell(b.0 - reach - 1.0, cols), to_cell(b.1 - reach - 1.0, rows));
            let (r, bottom) = (to_cell(b.2 + reach + 1.0, cols), to_cell(b.3 + reach + 1.0, rows));
            for cy in t..=bottom {
                for cx in l..=r {
                    near[(cy * cols + cx) as usize].push(i);
                }
            }
        }
        Index { cell, cols, near, boxes, reach }
    }

    fn near(&self, x: u32, y: u32) -> &[usize] {
        &self.near[((y / self.cell) * self.cols + x / self.cell) as usize]
    }

    fn object<'a>(&self, scene: &'a Scene, i: usize) -> (&'a Object, (f64, f64, f64, f64)) {
        let object = scene.objects.get(i).unwrap_or_else(|| &scene.specks[i - scene.objects.len()]);
        (object, self.boxes[i])
    }
}

/// A counter-based random number in 0..1 (splitmix64 of the inputs), so pixels can be drawn in any order.
fn uniform(seed: u64, i: u64) -> f64 {
    let mut z = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ i.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 53) as f64
}

impl Scene {
    /// A scene with a plain, evenly lit, noiseless background and no objects.
    pub fn plain(name: &'static str, width: u32, height: u32, background: [u8; 3]) -> Self {
        Scene {
            name,
            width,
            height,
            background,
            gradient: 0.0,
            vignette: 0.0,
            falloff: 0.0,
            bands: Vec::new(),
            specks: Vec::new(),
            noise: 0.0,
            shadow: None,
            objects: Vec::new(),
            reference: None,
            px_per_mm: 2.0,
            seed: 1,
        }
    }

    /// The regions segmentation should find, one per object, in reading order.
    pub fn expected(&self) -> Vec<Region> {
        let mut regions: Vec<Region> = self.objects.iter().map(|o| o.region(self.width, self.height)).collect();
        trove_domain::measure::reading_order(&mut regions);
        regions
    }

    /// The photo, drawn in horizontal bands on every core.
    pub fn render(&self) -> RgbImage {
        let mut img = RgbImage::new(self.width, self.height);
        let index = Index::new(self);
        let stride = self.width as usize * 3;
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let rows_per_band = (self.height as usize).div_ceil(threads).max(1);
        std::thread::scope(|scope| {
            for (band, rows) in img.chunks_mut(rows_per_band * stride).enumerate() {
                let index = &index;
                scope.spawn(move || {
                    for (i, px) in rows.chunks_exact_mut(3).enumerate() {
                        let (x, y) = ((i % (stride / 3)) as u32, (band * rows_per_band + i / (stride / 3)) as u32);
                        px.copy_from_slice(&self.pixel(index, x, y));
                    }
                });
            }
        });
        img
    }

    /// One pixel of the photo.
    fn pixel(&self, index: &Index, x: u32, y: u32) -> [u8; 3] {
        let (w, h) = (f64::from(self.width), f64::from(self.height));
        let (fx, fy) = (f64::from(x) + 0.5, f64::from(y) + 0.5);
        let (nx, ny) = (fx / w, fy / h);
        let r2 = ((nx - 0.5).powi(2) + (ny - 0.5).powi(2)) * 2.0;
        let mut light = (1.0 + self.gradient * (0.5 - (0.6 * nx + 0.4 * ny))) * (1.0 - self.vignette * r2);
        if self.falloff != 0.0 {
            light *= 1.0 - self.falloff * r2 * r2;
        }
        for band in &self.bands {
            light *= 1.0 - band.darkening(fx, fy, w, h);
        }
        let near = index.near(x, y);
        let mut colour = self.background.map(f64::from);
        if let Some(s) = self.shadow {
            let mut shade = 0f64;
            for &i in near {
                let (o, b) = index.object(self, i);
                if fx < b.0 - index.reach || fx > b.2 + index.reach || fy < b.1 - index.reach || fy > b.3 + index.reach
                {
                    continue;
                }
                let d = o.distance(fx - s.dx, fy - s.dy, 1.0);
                shade = shade.max(((s.blur - d) / (2.0 * s.blur)).clamp(0.0, 1.0));
            }
            colour = colour.map(|c| c * (1.0 - s.strength * shade));
        }
        for &i in near {
            let (o, b) = index.object(self, i);
            if fx < b.0 - 1.0 || fx > b.2 + 1.0 || fy < b.1 - 1.0 || fy > b.3 + 1.0 {
                continue;
            }
            let outline = o.distance(fx, fy, 1.0);
            let cover = (0.5 - outline).clamp(0.0, 1.0);
            if cover == 0.0 {
                continue;
            }
            let mut own = o.colour.map(f64::from);
            if let Some((width, rim)) = o.rim {
                let on_rim = (outline + width + 0.5).clamp(0.0, 1.0);
                own = [0, 1, 2].map(|c| own[c] * (1.0 - on_rim) + f64::from(rim[c]) * on_rim);
            }
            if let Some(label) = o.label {
                let inner = (0.5 - o.distance(fx, fy, 0.5)).clamp(0.0, 1.0);
                own = [0, 1, 2].map(|c| own[c] * (1.0 - inner) + f64::from(label[c]) * inner);
            }
            colour = [0, 1, 2].map(|c| colour[c] * (1.0 - cover) + own[c] * cover);
        }
        let i = (u64::from(y) * u64::from(self.width) + u64::from(x)) * 3;
        [0, 1, 2].map(|c| {
            // The sum of four uniforms, centred: near enough to Gaussian noise of the given deviation.
            let n: f64 = (0..4).map(|k| uniform(self.seed, (i + c as u64) * 4 + k)).sum::<f64>() - 2.0;
            (colour[c] * light + n * self.noise * 3f64.sqrt()).round().clamp(0.0, 255.0) as u8
        })
    }

    /// The photo as PNG bytes.
    pub fn png(&self) -> Vec<u8> {
        let mut out = std::io::Cursor::new(Vec::new());
        self.render().write_to(&mut out, image::ImageFormat::Png).unwrap_or_default();
        out.into_inner()
    }

    /// The photo as JPEG bytes (quality 90).
    pub fn jpeg(&self) -> Vec<u8> {
        let mut out = Vec::new();
        let encoded = image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, 90).encode_image(&self.render());
        encoded.map(|()| out).unwrap_or_default()
    }
}

const PAPER: [u8; 3] = [225, 222, 215];
const GREY: [u8; 3] = [150, 150, 150];
const CLOTH: [u8; 3] = [40, 45, 60];
const BLACK: [u8; 3] = [25, 25, 25];
const DARK: [u8; 3] = [60, 55, 50];
const BLUE: [u8; 3] = [40, 70, 160];
const RED: [u8; 3] = [170, 40, 35];
const GREEN: [u8; 3] = [40, 130, 60];
const WOOD: [u8; 3] = [140, 100, 60];
const WHITE: [u8; 3] = [240, 240, 235];
const SILVER: [u8; 3] = [190, 195, 200];
const CARD_BLUE: [u8; 3] = [30, 60, 120];

/// The test set: scenes with known answers, from easy to hard.
pub fn catalogue() -> Vec<Scene> {
    let (w, h) = (640, 480);
    let three = vec![
        Object::rect(140.0, 150.0, 160.0, 90.0, DARK),
        Object::rect(440.0, 140.0, 120.0, 120.0, BLUE),
        Object::rect(300.0, 350.0, 220.0, 70.0, RED),
    ];
    let shadow = Shadow { dx: 6.0, dy: 8.0, blur: 8.0, strength: 0.3 };
    let mut scenes = vec![
        Scene { objects: three.clone(), ..Scene::plain("three boxes", w, h, PAPER) },
        Scene { objects: three.clone(), noise: 8.0, seed: 2, ..Scene::plain("sensor noise", w, h, PAPER) },
        Scene { objects: three.clone(), gradient: 0.6, ..Scene::plain("light gradient", w, h, PAPER) },
        Scene { objects: three.clone(), vignette: 0.35, noise: 4.0, ..Scene::plain("vignetting", w, h, PAPER) },
        Scene { objects: three.clone(), shadow: Some(shadow), noise: 4.0, ..Scene::plain("soft shadows", w, h, PAPER) },
        Scene {
            objects: vec![
                Object::ellipse(150.0, 140.0, 170.0, 110.0, GREEN),
                Object::rect(450.0, 150.0, 180.0, 60.0, BLACK).turned(30.0),
                Object::ellipse(320.0, 360.0, 90.0, 90.0, WOOD),
                Object::rect(520.0, 370.0, 80.0, 50.0, BLUE).turned(-60.0),
            ],
            noise: 5.0,
            ..Scene::plain("ellipses and turned boxes", w, h, PAPER)
        },
        Scene {
            objects: vec![
                Object::rect(160.0, 140.0, 150.0, 100.0, WHITE),
                Object::ellipse(450.0, 150.0, 140.0, 100.0, SILVER),
                Object::rect(320.0, 360.0, 200.0, 60.0, [200, 190, 150]).turned(10.0),
            ],
            shadow: Some(shadow),
            noise: 5.0,
            ..Scene::plain("light items on a dark cloth", w, h, CLOTH)
        },
        Scene {
            objects: vec![
                Object::rect(150.0, 130.0, 140.0, 90.0, BLACK),
                Object::rect(460.0, 140.0, 130.0, 110.0, WHITE),
                Object::ellipse(300.0, 350.0, 160.0, 100.0, [30, 30, 90]),
                Object::rect(540.0, 380.0, 70.0, 70.0, [235, 220, 120]),
            ],
            noise: 4.0,
            ..Scene::plain("dark and light items on grey", w, h, GREY)
        },
        Scene {
            objects: vec![
                Object::ellipse(220.0, 240.0, 160.0, 160.0, SILVER),
                Object::ellipse(380.0, 240.0, 160.0, 160.0, SILVER),
            ],
            noise: 4.0,
            ..Scene::plain("two coins touching", w, h, CLOTH)
        },
        Scene {
            objects: vec![
                Object::ellipse(160.0, 240.0, 140.0, 140.0, WOOD),
                Object::ellipse(290.0, 240.0, 120.0, 120.0, WOOD),
                Object::ellipse(400.0, 240.0, 100.0, 100.0, WOOD),
                Object::rect(540.0, 240.0, 90.0, 150.0, DARK),
            ],
            noise: 4.0,
            ..Scene::plain("a row of touching discs", w, h, PAPER)
        },
        Scene {
            objects: vec![
                Object::rect(230.0, 200.0, 160.0, 160.0, BLUE).turned(45.0),
                Object::rect(400.0, 260.0, 130.0, 100.0, RED).turned(20.0),
            ],
            noise: 4.0,
            ..Scene::plain("boxes touching at a corner", w, h, PAPER)
        },
        Scene {
            objects: vec![
                Object::rect(240.0, 240.0, 160.0, 120.0, BLUE),
                Object::rect(400.0, 240.0, 160.0, 120.0, RED),
            ],
            noise: 4.0,
            ..Scene::plain("boxes sharing a long edge", w, h, PAPER)
        },
        Scene {
            objects: vec![
                Object::rect(240.0, 240.0, 160.0, 120.0, WOOD).rimmed(3.0, [95, 65, 40]),
                Object::rect(400.0, 240.0, 160.0, 120.0, WOOD).rimmed(3.0, [95, 65, 40]),
            ],
            noise: 4.0,
            ..Scene::plain("like boxes sharing an edge with a seam", w, h, PAPER)
        },
        Scene {
            objects: vec![
                Object::rect(330.0, 170.0, 220.0, 110.0, DARK).turned(8.0),
                Object::ellipse(250.0, 340.0, 110.0, 110.0, [90, 115, 140]).rimmed(4.0, [60, 75, 95]),
                Object::ellipse(360.0, 340.0, 110.0, 110.0, [90, 115, 140]).rimmed(4.0, [60, 75, 95]),
            ],
            noise: 4.0,
            shadow: Some(shadow),
            ..Scene::plain("like tins side by side with a seam", w, h, PAPER)
        },
        Scene {
            objects: three.clone(),
            vignette: 0.2,
            falloff: 0.45,
            bands: vec![
                Band { side: Side::Left, from: 0.1, to: 0.55, depth: 28.0, strength: 0.55 },
                Band { side: Side::Bottom, from: 0.45, to: 0.85, depth: 22.0, strength: 0.5 },
                Band { side: Side::Top, from: 0.7, to: 1.1, depth: 16.0, strength: 0.45 },
            ],
            noise: 4.0,
            seed: 5,
            ..Scene::plain("dark bands and corners", w, h, PAPER)
        },
        Scene {
            objects: three.clone(),
            specks: specks(40, w, h, &three, 3.0, 11.0, 9),
            noise: 4.0,
            ..Scene::plain("specks of dust", w, h, PAPER)
        },
        Scene {
            objects: (0..10)
                .map(|i| {
                    let (col, row) = (f64::from(i % 5), f64::from(i / 5));
                    let size = 40.0 + 8.0 * col;
                    let colour = [BLACK, BLUE, RED, GREEN, WOOD][i as usize % 5];
                    Object::rect(70.0 + 125.0 * col, 140.0 + 200.0 * row, size, size * 1.4, colour)
                        .turned(15.0 * f64::from(i))
                })
                .collect(),
            noise: 5.0,
            gradient: 0.3,
            ..Scene::plain("ten small items", w, h, PAPER)
        },
        Scene {
            objects: vec![
                Object::rect(160.0, 150.0, 180.0, 120.0, BLACK).labelled(WHITE),
                Object::ellipse(450.0, 160.0, 160.0, 120.0, BLUE).labelled([250, 250, 120]),
                Object::rect(320.0, 370.0, 240.0, 60.0, DARK).labelled(SILVER),
            ],
            noise: 4.0,
            shadow: Some(shadow),
            ..Scene::plain("items with labels", w, h, PAPER)
        },
        Scene {
            objects: vec![
                Object::rect(200.0, 240.0, 160.0, 120.0, RED),
                Object::ellipse(450.0, 240.0, 150.0, 150.0, [60, 140, 60]),
            ],
            noise: 3.0,
            ..Scene::plain("colour on colour of like brightness", w, h, [95, 110, 100])
        },
        Scene {
            objects: vec![
                Object::rect(60.0, 200.0, 200.0, 120.0, DARK),
                Object::rect(420.0, 300.0, 160.0, 110.0, BLUE),
            ],
            noise: 4.0,
            ..Scene::plain("an item cut by the border", w, h, PAPER)
        },
        Scene {
            objects: three.clone(),
            gradient: 0.7,
            vignette: 0.3,
            noise: 7.0,
            shadow: Some(Shadow { dx: -7.0, dy: 9.0, blur: 12.0, strength: 0.25 }),
            seed: 7,
            ..Scene::plain("everything uneven", w, h, PAPER)
        },
    ];
    // Scenes with a reference, at 2 px per mm: a 40 mm square marker, and a credit card upright and turned.
    let ppm = 2.0;
    scenes.push(Scene {
        objects: vec![
            Object::rect(100.0, 100.0, 40.0 * ppm, 40.0 * ppm, BLACK),
            Object::rect(380.0, 150.0, 150.0 * ppm, 100.0 * ppm, BLUE),
            Object::ellipse(300.0, 360.0, 120.0 * ppm, 80.0 * ppm, RED),
        ],
        reference: Some((0, Reference::SquareMm(40.0))),
        gradient: 0.4,
        noise: 4.0,
        ..Scene::plain("a square marker", w, h, PAPER)
    });
    scenes.push(Scene {
        objects: vec![
            Object::card(130.0, 110.0, ppm, CARD_BLUE),
            Object::rect(430.0, 160.0, 220.0, 120.0, DARK),
            Object::ellipse(250.0, 360.0, 140.0, 100.0, GREEN),
        ],
        reference: Some((0, Reference::Card)),
        noise: 5.0,
        shadow: Some(shadow),
        ..Scene::plain("a card upright", w, h, PAPER)
    });
    scenes.push(Scene {
        objects: vec![
            Object::card(150.0, 150.0, ppm, CARD_BLUE).turned(25.0),
            Object::rect(440.0, 170.0, 200.0, 100.0, RED),
            Object::rect(330.0, 370.0, 260.0, 60.0, BLACK),
        ],
        reference: Some((0, Reference::Card)),
        noise: 5.0,
        vignette: 0.25,
        ..Scene::plain("a card turned", w, h, PAPER)
    });
    // A larger photo, worked on at half size.
    let ppm = 5.0;
    scenes.push(Scene {
        objects: vec![
            Object::card(300.0, 250.0, ppm, [200, 40, 40]).turned(-15.0),
            Object::rect(900.0, 300.0, 500.0, 250.0, DARK),
            Object::ellipse(400.0, 800.0, 400.0, 300.0, BLUE),
            Object::rect(1200.0, 850.0, 400.0, 200.0, BLACK).turned(35.0),
        ],
        reference: Some((0, Reference::Card)),
        gradient: 0.5,
        vignette: 0.2,
        noise: 6.0,
        shadow: Some(Shadow { dx: 10.0, dy: 14.0, blur: 16.0, strength: 0.25 }),
        px_per_mm: ppm,
        seed: 11,
        ..Scene::plain("a larger photo with a card", 1600, 1200, PAPER)
    });
    scenes
}

/// `count` specks of `min`..`max` pixels across, dark or light, kept clear of the objects.
fn specks(count: u32, w: u32, h: u32, objects: &[Object], min: f64, max: f64, seed: u64) -> Vec<Object> {
    let boxes: Vec<(f64, f64, f64, f64)> = objects.iter().map(Object::bounds).collect();
    let mut out = Vec::new();
    let mut i = 0u64;
    while out.len() < count as usize && i < 100 * u64::from(count) {
        let at = i;
        let r = |k: u64| uniform(seed, 8 * at + k);
        let (cx, cy) = (10.0 + r(0) * f64::from(w - 20), 10.0 + r(1) * f64::from(h - 20));
        let size = min + r(2) * (max - min);
        i += 1;
        if boxes.iter().any(|b| cx > b.0 - 15.0 && cx < b.2 + 15.0 && cy > b.1 - 15.0 && cy < b.3 + 15.0) {
            continue;
        }
        let colour = if r(3) < 0.7 { [70, 60, 55] } else { [250, 250, 248] };
        let speck = if r(4) < 0.5 {
            Object::ellipse(cx, cy, size, size * (0.6 + 0.4 * r(5)), colour)
        } else {
            Object::rect(cx, cy, size, size * (0.4 + 0.6 * r(5)), colour)
        };
        out.push(speck.turned(r(6) * 180.0));
    }
    out
}

/// A 12-megapixel (4000 x 3000) photo of a tray of 24 coins of 16 to 28 mm at 12 pixels per mm, on a dark cloth,
/// under uneven light.
pub fn coins_tray() -> Scene {
    let ppm = 12.0;
    let metals: [[u8; 3]; 3] = [SILVER, [190, 120, 70], [205, 170, 80]];
    let objects = (0..24u64)
        .map(|i| {
            let r = |k: u64| uniform(24, 8 * i + k);
            let (col, row) = ((i % 6) as f64, (i / 6) as f64);
            let diameter = (16.0 + 12.0 * r(0)) * ppm;
            let (cx, cy) = (450.0 + 620.0 * col + 60.0 * (r(1) - 0.5), 480.0 + 680.0 * row + 60.0 * (r(2) - 0.5));
            let metal = metals[(i % 3) as usize];
            // The embossed middle catches less light.
            Object::ellipse(cx, cy, diameter, diameter * 0.97, metal).labelled(metal.map(|c| c - 25))
        })
        .collect();
    Scene {
        objects,
        gradient: 0.3,
        vignette: 0.2,
        falloff: 0.3,
        noise: 5.0,
        shadow: Some(Shadow { dx: 10.0, dy: 14.0, blur: 18.0, strength: 0.3 }),
        px_per_mm: ppm,
        seed: 24,
        ..Scene::plain("a tray of coins", 4000, 3000, CLOTH)
    }
}

/// A 12-megapixel (4000 x 3000) photo of a tray tiled with 2,400 small parts (washers, nuts, screws, resistors;
/// 14 to 40 pixels across, about 1 to 3 mm at 12 pixels per mm: 4 to 10 pixels of the working copy), 60 to a row
/// in 40 rows at least 20 pixels apart, on a light plastic tray under uneven light.
pub fn parts_tray() -> Scene {
    let ppm = 12.0;
    let (cols, rows) = (60u64, 40u64);
    let (cell_w, cell_h) = (4000.0 / cols as f64, 3000.0 / rows as f64);
    let colours: [[u8; 3]; 5] = [BLACK, DARK, [120, 95, 60], BLUE, [130, 130, 135]];
    let objects: Vec<Object> = (0..cols * rows)
        .map(|i| {
            let r = |k: u64| uniform(2400, 8 * i + k);
            let (col, row) = ((i % cols) as f64, (i / cols) as f64);
            let (cx, cy) = (cell_w * (col + 0.5) + 6.0 * (r(0) - 0.5), cell_h * (row + 0.5) + 6.0 * (r(1) - 0.5));
            let colour = colours[(r(2) * 5.0) as usize % 5];
            let turn = r(3) * 180.0;
            match (r(4) * 4.0) as u32 {
                0 => Object::ellipse(cx, cy, 28.0 + 6.0 * r(5), 28.0 + 6.0 * r(5), colour).labelled([205, 200, 195]),
                1 => Object::rect(cx, cy, 24.0 + 4.0 * r(5), 24.0 + 4.0 * r(5), colour).turned(turn),
                2 => Object::rect(cx, cy, 36.0, 14.0 + 2.0 * r(5), colour).turned(turn),
                _ => Object::ellipse(cx, cy, 36.0, 20.0, colour).turned(turn),
            }
        })
        .collect();
    Scene {
        objects,
        gradient: 0.25,
        vignette: 0.15,
        falloff: 0.25,
        noise: 5.0,
        shadow: Some(Shadow { dx: 2.0, dy: 3.0, blur: 3.0, strength: 0.25 }),
        px_per_mm: ppm,
        seed: 2400,
        ..Scene::plain("a tray of small parts", 4000, 3000, [215, 213, 205])
    }
}

/// The benchmark's photo: 4000 x 3000 (12 megapixels), a card and eight items under uneven light.
pub fn twelve_megapixels() -> Scene {
    let ppm = 12.0;
    let mut objects = vec![Object::card(650.0, 550.0, ppm, CARD_BLUE).turned(10.0)];
    for i in 0..8 {
        let (col, row) = (f64::from(i % 4), f64::from(i / 4));
        let colour = [DARK, BLUE, RED, GREEN][i as usize % 4];
        let (cx, cy) = (700.0 + 900.0 * col, 1300.0 + 1100.0 * row);
        objects.push(if i % 2 == 0 {
            Object::rect(cx, cy, 500.0, 320.0, colour).turned(12.0 * f64::from(i))
        } else {
            Object::ellipse(cx, cy, 420.0, 300.0, colour)
        });
    }
    Scene {
        objects,
        reference: Some((0, Reference::Card)),
        gradient: 0.5,
        vignette: 0.25,
        noise: 6.0,
        shadow: Some(Shadow { dx: 20.0, dy: 28.0, blur: 30.0, strength: 0.25 }),
        px_per_mm: ppm,
        seed: 12,
        ..Scene::plain("twelve megapixels", 4000, 3000, PAPER)
    }
}
