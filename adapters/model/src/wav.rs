//! WAV audio as the Model API's `/asr/transcribe` takes it: mono 16-bit PCM at 16 or 24 kHz, at most ten minutes.
//! A voice note in another uncompressed WAV (stereo, 44.1 or 48 kHz, 8/24/32-bit PCM, float) is converted: mixed
//! down to mono and resampled to 16 kHz. A compressed or damaged WAV is refused, saying what to do, before
//! anything is sent.

use std::borrow::Cow;

/// The longest audio the transcription takes.
pub const MAX_DURATION_MS: u64 = 10 * 60 * 1000;
/// The sample rates the transcription takes as they are.
pub const ACCEPTED_RATES: [u32; 2] = [16_000, 24_000];
/// The sample rate audio at any other rate is converted to.
pub const TARGET_RATE: u32 = 16_000;
/// The sample rates read at all: what recorders write, and no more (a made-up rate would make a short file
/// expand into a huge sample buffer).
pub const READ_RATES: std::ops::RangeInclusive<u32> = 8_000..=192_000;

/// How the samples are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// Integer PCM of 8 (unsigned), 16, 24 or 32 bits.
    Pcm { bits: u16 },
    /// IEEE float of 32 or 64 bits.
    Float { bits: u16 },
}

/// Why a WAV cannot be transcribed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WavError {
    #[error("the audio is not a WAV file")]
    NotWav,
    #[error("the WAV file is damaged: {0}")]
    Malformed(&'static str),
    #[error("the WAV file is {0}; save the voice note as uncompressed PCM WAV")]
    Unsupported(String),
    #[error("the voice note holds no audio")]
    Empty,
    #[error("the voice note is {} long; at most {} minutes are transcribed", minutes_seconds(*ms), MAX_DURATION_MS / 60_000)]
    TooLong { ms: u64 },
}

fn minutes_seconds(ms: u64) -> String {
    format!("{}:{:02}", ms / 60_000, (ms / 1000) % 60)
}

/// A WAV file's format and samples, read without copying.
#[derive(Clone, PartialEq, Eq)]
pub struct Wav<'a> {
    pub channels: u16,
    pub sample_rate: u32,
    pub encoding: Encoding,
    /// The sample data, cut to whole frames.
    data: &'a [u8],
    /// A plain header (PCM tag, 16-byte format chunk) and a data size that matches the samples: such a file can
    /// be sent as it is.
    plain: bool,
}

impl std::fmt::Debug for Wav<'_> {
    /// The format and the length, not the samples.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Wav")
            .field("channels", &self.channels)
            .field("sample_rate", &self.sample_rate)
            .field("encoding", &self.encoding)
            .field("frames", &self.frames())
            .field("plain", &self.plain)
            .finish()
    }
}

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

impl<'a> Wav<'a> {
    /// Reads the `fmt ` and `data` chunks of a RIFF/WAVE file. A `data` size larger than the file (as streaming
    /// writers leave it) is read as "to the end".
    ///
    /// # Errors
    /// [`WavError::NotWav`], [`WavError::Malformed`] or [`WavError::Unsupported`] (compressed or odd formats).
    pub fn read(bytes: &'a [u8]) -> Result<Self, WavError> {
        if !trove_domain::reading::is_wav(bytes) {
            return Err(WavError::NotWav);
        }
        let mut at = 12;
        let mut format = None;
        while at + 8 <= bytes.len() {
            let id = &bytes[at..at + 4];
            let size = u32_at(bytes, at + 4).ok_or(WavError::Malformed("a chunk header is cut short"))? as usize;
            let body = at + 8;
            let end = body.saturating_add(size).min(bytes.len());
            match id {
                b"fmt " => format = Some((Self::format(&bytes[body..end])?, size == 16)),
                b"data" => {
                    let ((channels, sample_rate, encoding, tag), plain_format) =
                        format.ok_or(WavError::Malformed("the samples come before their format"))?;
                    let frame = usize::from(channels) * usize::from(bits(encoding) / 8);
                    let data = &bytes[body..end];
                    let whole = data.len() - data.len() % frame;
                    let plain = plain_format && tag == 1 && whole == size && body + size == bytes.len();
                    return Ok(Wav { channels, sample_rate, encoding, data: &data[..whole], plain });
                }
                _ => {}
            }
            // Chunks are padded to an even length.
            at = end + (size & 1);
        }
        Err(WavError::Malformed("it has no samples (no data chunk)"))
    }

    fn format(fmt: &[u8]) -> Result<(u16, u32, Encoding, u16), WavError> {
        let short = WavError::Malformed("its format chunk is cut short");
        let mut tag = u16_at(fmt, 0).ok_or(short.clone())?;
        let channels = u16_at(fmt, 2).ok_or(short.clone())?;
        let sample_rate = u32_at(fmt, 4).ok_or(short.clone())?;
        let bits = u16_at(fmt, 14).ok_or(short.clone())?;
        if tag == 0xFFFE {
            // WAVE_FORMAT_EXTENSIBLE: the real format is the first two bytes of the sub-format GUID.
            tag = u16_at(fmt, 24).ok_or(short)?;
        }
        if channels == 0 || sample_rate == 0 {
            return Err(WavError::Malformed("it has no channels or no sample rate"));
        }
        if !READ_RATES.contains(&sample_rate) {
            return Err(WavError::Unsupported(format!("recorded at {sample_rate} Hz")));
        }
        let encoding = match (tag, bits) {
            (1, 8 | 16 | 24 | 32) => Encoding::Pcm { bits },
            (3, 32 | 64) => Encoding::Float { bits },
            (1 | 3, _) => return Err(WavError::Unsupported(format!("{bits}-bit audio"))),
            (other, _) => return Err(WavError::Unsupported(format!("compressed (format 0x{other:04X})"))),
        };
        Ok((channels, sample_rate, encoding, tag))
    }

    /// Samples per channel.
    pub fn frames(&self) -> usize {
        self.data.len() / (usize::from(self.channels) * usize::from(bits(self.encoding) / 8))
    }

    /// How long the audio plays, in milliseconds.
    pub fn duration_ms(&self) -> u64 {
        self.frames() as u64 * 1000 / u64::from(self.sample_rate)
    }

    /// Whether the transcription takes its samples as they are.
    pub fn is_transcribable(&self) -> bool {
        self.channels == 1 && self.encoding == Encoding::Pcm { bits: 16 } && ACCEPTED_RATES.contains(&self.sample_rate)
    }

    /// Whether the file itself can be sent as it is: transcribable samples under a plain header, nothing after.
    pub fn is_sendable(&self) -> bool {
        self.plain && self.is_transcribable()
    }

    /// The samples mixed down to mono, from -1 to 1.
    fn mono(&self) -> Vec<f32> {
        let width = usize::from(bits(self.encoding) / 8);
        let channels = usize::from(self.channels);
        self.data
            .chunks_exact(width * channels)
            .map(|frame| {
                let sum: f32 = frame.chunks_exact(width).map(|s| sample(self.encoding, s)).sum();
                sum / channels as f32
            })
            .collect()
    }
}

fn bits(encoding: Encoding) -> u16 {
    match encoding {
        Encoding::Pcm { bits } | Encoding::Float { bits } => bits,
    }
}

/// One sample, from -1 to 1.
fn sample(encoding: Encoding, b: &[u8]) -> f32 {
    match (encoding, b) {
        (Encoding::Pcm { bits: 8 }, [v]) => (f32::from(*v) - 128.0) / 128.0,
        (Encoding::Pcm { bits: 16 }, [a, b]) => f32::from(i16::from_le_bytes([*a, *b])) / 32_768.0,
        (Encoding::Pcm { bits: 24 }, [a, b, c]) => (i32::from_le_bytes([0, *a, *b, *c]) >> 8) as f32 / 8_388_608.0,
        (Encoding::Pcm { bits: 32 }, [a, b, c, d]) => i32::from_le_bytes([*a, *b, *c, *d]) as f32 / 2_147_483_648.0,
        (Encoding::Float { bits: 32 }, [a, b, c, d]) => f32::from_le_bytes([*a, *b, *c, *d]),
        (Encoding::Float { bits: 64 }, b) if b.len() == 8 => f64::from_le_bytes(b.try_into().unwrap_or([0; 8])) as f32,
        _ => 0.0,
    }
}

/// `samples` at `from` Hz as `to` Hz. Going down, each output sample is the mean of the input samples it spans
/// (a box filter, so what is above the new Nyquist frequency is damped rather than folded into speech); going up,
/// a linear interpolation.
fn resample(samples: &[f32], from: u32, to: u32) -> Vec<f32> {
    if from == to || samples.is_empty() {
        return samples.to_vec();
    }
    let ratio = f64::from(from) / f64::from(to);
    let out_len = ((samples.len() as f64) / ratio).floor().max(1.0) as usize;
    (0..out_len)
        .map(|i| {
            let start = i as f64 * ratio;
            if ratio > 1.0 {
                let (lo, hi) =
                    (start as usize, (((i + 1) as f64 * ratio) as usize).clamp(start as usize + 1, samples.len()));
                let span = &samples[lo.min(samples.len() - 1)..hi];
                span.iter().sum::<f32>() / span.len() as f32
            } else {
                let lo = (start as usize).min(samples.len() - 1);
                let hi = (lo + 1).min(samples.len() - 1);
                let t = (start - lo as f64) as f32;
                samples[lo] * (1.0 - t) + samples[hi] * t
            }
        })
        .collect()
}

/// Mono 16-bit PCM samples as a WAV file.
fn write(samples: &[f32], rate: u32) -> Vec<u8> {
    let data_len = u32::try_from(samples.len() * 2).unwrap_or(u32::MAX);
    let mut out = Vec::with_capacity(44 + samples.len() * 2);
    out.extend_from_slice(b"RIFF");
    out.extend_from_slice(&(36 + data_len).to_le_bytes());
    out.extend_from_slice(b"WAVEfmt ");
    out.extend_from_slice(&16u32.to_le_bytes());
    out.extend_from_slice(&1u16.to_le_bytes()); // PCM
    out.extend_from_slice(&1u16.to_le_bytes()); // mono
    out.extend_from_slice(&rate.to_le_bytes());
    out.extend_from_slice(&(rate * 2).to_le_bytes()); // bytes per second
    out.extend_from_slice(&2u16.to_le_bytes()); // bytes per frame
    out.extend_from_slice(&16u16.to_le_bytes());
    out.extend_from_slice(b"data");
    out.extend_from_slice(&data_len.to_le_bytes());
    for s in samples {
        let v = (s.clamp(-1.0, 1.0) * 32_767.0).round() as i16;
        out.extend_from_slice(&v.to_le_bytes());
    }
    out
}

/// The voice note as the transcription takes it: the same bytes when they already are, else rewritten as mono
/// 16-bit PCM under a plain header (at 16 kHz unless the rate is already one the transcription takes).
///
/// # Errors
/// What [`Wav::read`] refuses; [`WavError::Empty`] for no samples; [`WavError::TooLong`] past ten minutes.
pub fn for_transcription(bytes: &[u8]) -> Result<Cow<'_, [u8]>, WavError> {
    let wav = Wav::read(bytes)?;
    if wav.frames() == 0 {
        return Err(WavError::Empty);
    }
    let ms = wav.duration_ms();
    if ms > MAX_DURATION_MS {
        return Err(WavError::TooLong { ms });
    }
    if wav.is_sendable() {
        return Ok(Cow::Borrowed(bytes));
    }
    let rate = if ACCEPTED_RATES.contains(&wav.sample_rate) { wav.sample_rate } else { TARGET_RATE };
    Ok(Cow::Owned(write(&resample(&wav.mono(), wav.sample_rate, rate), rate)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A WAV file of `frames` frames of a 440 Hz tone at half scale, every channel the same, written as
    /// `encoding` with `tag` as its format tag.
    fn tone(tag: u16, encoding: Encoding, channels: u16, rate: u32, frames: usize) -> Vec<u8> {
        let width = usize::from(bits(encoding) / 8);
        let mut data = Vec::new();
        for n in 0..frames {
            let v = 0.5 * (2.0 * std::f64::consts::PI * 440.0 * n as f64 / f64::from(rate)).sin();
            let one: Vec<u8> = match encoding {
                Encoding::Pcm { bits: 8 } => vec![(v * 127.0 + 128.0).round() as u8],
                Encoding::Pcm { bits: 16 } => ((v * 32_767.0).round() as i16).to_le_bytes().to_vec(),
                Encoding::Pcm { bits: 24 } => ((v * 8_388_607.0).round() as i32).to_le_bytes()[..3].to_vec(),
                Encoding::Pcm { .. } => ((v * 2_147_483_647.0).round() as i32).to_le_bytes().to_vec(),
                Encoding::Float { bits: 32 } => (v as f32).to_le_bytes().to_vec(),
                Encoding::Float { .. } => v.to_le_bytes().to_vec(),
            };
            for _ in 0..channels {
                data.extend_from_slice(&one);
            }
        }
        let mut out = Vec::new();
        out.extend_from_slice(b"RIFF");
        out.extend_from_slice(&(4 + 8 + 16 + 8 + 4 + 8 + data.len() as u32).to_le_bytes());
        out.extend_from_slice(b"WAVE");
        // A chunk before the format, odd-sized and padded, as some recorders write.
        out.extend_from_slice(b"LIST");
        out.extend_from_slice(&3u32.to_le_bytes());
        out.extend_from_slice(b"abc\0");
        out.extend_from_slice(b"fmt ");
        out.extend_from_slice(&16u32.to_le_bytes());
        out.extend_from_slice(&tag.to_le_bytes());
        out.extend_from_slice(&channels.to_le_bytes());
        out.extend_from_slice(&rate.to_le_bytes());
        out.extend_from_slice(&(rate * u32::from(channels) * width as u32).to_le_bytes());
        out.extend_from_slice(&(channels * width as u16).to_le_bytes());
        out.extend_from_slice(&bits(encoding).to_le_bytes());
        out.extend_from_slice(b"data");
        out.extend_from_slice(&(data.len() as u32).to_le_bytes());
        out.extend_from_slice(&data);
        out
    }

    fn peak(wav: &Wav<'_>) -> f32 {
        wav.mono().iter().fold(0.0f32, |m, s| m.max(s.abs()))
    }

    #[test]
    fn mono_16_bit_at_an_accepted_rate_goes_as_it_is() {
        for rate in ACCEPTED_RATES {
            let bytes = tone(1, Encoding::Pcm { bits: 16 }, 1, rate, rate as usize * 2);
            let out = for_transcription(&bytes).unwrap();
            assert!(matches!(out, Cow::Borrowed(_)), "{rate} Hz");
            assert_eq!(Wav::read(&bytes).unwrap().duration_ms(), 2000);
        }
    }

    #[test]
    fn other_wavs_become_mono_16_bit_at_16_khz_with_the_same_length_and_level() {
        let cases = [
            (1, Encoding::Pcm { bits: 16 }, 2, 48_000),
            (1, Encoding::Pcm { bits: 16 }, 2, 44_100),
            (1, Encoding::Pcm { bits: 8 }, 1, 8_000),
            (1, Encoding::Pcm { bits: 24 }, 2, 48_000),
            (1, Encoding::Pcm { bits: 32 }, 1, 32_000),
            (3, Encoding::Float { bits: 32 }, 2, 48_000),
            (3, Encoding::Float { bits: 64 }, 1, 22_050),
            (0xFFFE, Encoding::Pcm { bits: 16 }, 2, 44_100),
        ];
        for (tag, encoding, channels, rate) in cases {
            let mut bytes = tone(tag, encoding, channels, rate, rate as usize * 3 / 2);
            if tag == 0xFFFE {
                // An extensible format chunk: 40 bytes, the sub-format GUID starting with PCM's tag 1.
                let at = bytes.windows(4).position(|w| w == b"fmt ").unwrap();
                bytes[at + 4..at + 8].copy_from_slice(&40u32.to_le_bytes());
                let mut ext = vec![22, 0, 16, 0, 3, 0, 0, 0, 1, 0];
                ext.extend_from_slice(&[0, 0, 0, 0, 16, 0, 128, 0, 0, 170, 0, 56, 155, 113]);
                bytes.splice(at + 24..at + 24, ext);
                let riff = (bytes.len() - 8) as u32;
                bytes[4..8].copy_from_slice(&riff.to_le_bytes());
            }
            let what = format!("{encoding:?} x{channels} at {rate} Hz");
            let out = for_transcription(&bytes).unwrap_or_else(|e| panic!("{what}: {e}"));
            let wav = Wav::read(&out).unwrap();
            assert!(wav.is_transcribable(), "{what}: {wav:?}");
            assert_eq!(wav.sample_rate, TARGET_RATE, "{what}");
            assert!(wav.duration_ms().abs_diff(1500) <= 1, "{what}: {} ms", wav.duration_ms());
            let level = peak(&wav);
            assert!((0.45..=0.51).contains(&level), "{what}: a half-scale tone peaks at {level}");
        }
    }

    #[test]
    fn refusals_say_what_is_wrong() {
        assert_eq!(Wav::read(b"ID3\x03 not a wav"), Err(WavError::NotWav));
        let mut adpcm = tone(1, Encoding::Pcm { bits: 16 }, 1, 16_000, 10);
        let at = adpcm.windows(4).position(|w| w == b"fmt ").unwrap() + 8;
        adpcm[at..at + 2].copy_from_slice(&0x11u16.to_le_bytes());
        let e = for_transcription(&adpcm).unwrap_err();
        assert_eq!(
            e.to_string(),
            "the WAV file is compressed (format 0x0011); save the voice note as uncompressed PCM WAV"
        );
        let silent = tone(1, Encoding::Pcm { bits: 16 }, 1, 16_000, 0);
        assert_eq!(for_transcription(&silent), Err(WavError::Empty));
        let long = tone(1, Encoding::Pcm { bits: 8 }, 1, 8_000, 8_000 * 601);
        assert_eq!(
            for_transcription(&long).unwrap_err().to_string(),
            "the voice note is 10:01 long; at most 10 minutes are transcribed"
        );
        let mut fast = tone(1, Encoding::Pcm { bits: 8 }, 1, 16_000, 100);
        let at = fast.windows(4).position(|w| w == b"fmt ").unwrap() + 12;
        fast[at..at + 4].copy_from_slice(&4_000_000_000u32.to_le_bytes());
        assert_eq!(Wav::read(&fast), Err(WavError::Unsupported("recorded at 4000000000 Hz".into())));
        let header_only = &tone(1, Encoding::Pcm { bits: 16 }, 1, 16_000, 10)[..20];
        assert!(matches!(Wav::read(header_only), Err(WavError::Malformed(_))), "{:?}", Wav::read(header_only));
    }

    #[test]
    fn a_data_size_past_the_end_reads_to_the_end_and_is_rewritten() {
        let mut bytes = tone(1, Encoding::Pcm { bits: 16 }, 1, 16_000, 1600);
        let at = bytes.windows(4).position(|w| w == b"data").unwrap() + 4;
        bytes[at..at + 4].copy_from_slice(&u32::MAX.to_le_bytes());
        bytes.push(7); // half a frame: cut off
        let wav = Wav::read(&bytes).unwrap();
        assert_eq!((wav.frames(), wav.duration_ms()), (1600, 100));
        assert!(wav.is_transcribable() && !wav.is_sendable());
        let out = for_transcription(&bytes).unwrap();
        assert!(matches!(out, Cow::Owned(_)), "a sloppy header is not sent as it is");
        let clean = Wav::read(&out).unwrap();
        assert!(clean.is_sendable());
        assert_eq!(clean.data, wav.data, "the same samples");
    }
}
