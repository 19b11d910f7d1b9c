// @ts-check
// Turning whatever the browser records or the owner uploads (WebM/Opus, Ogg, MP3, M4A, WAV) into the 16-bit mono
// PCM WAV the transcription endpoint takes, in the browser, without a library.

/** The sample rate sent: the transcription endpoint takes 16 or 24 kHz. */
export const WAV_RATE = 16000;

/** Decodes any audio the browser can play and answers a 16-bit mono WAV Blob at 16 kHz. */
export async function toWav(blob) {
  const data = await blob.arrayBuffer();
  const Ctx = window.AudioContext || /** @type {any} */ (window).webkitAudioContext;
  const ctx = new Ctx();
  let decoded;
  try {
    decoded = await ctx.decodeAudioData(data);
  } finally {
    ctx.close();
  }
  const frames = Math.max(1, Math.ceil(decoded.duration * WAV_RATE));
  // An offline context with one channel downmixes and resamples in one render.
  const offline = new OfflineAudioContext(1, frames, WAV_RATE);
  const source = offline.createBufferSource();
  source.buffer = decoded;
  source.connect(offline.destination);
  source.start();
  const rendered = await offline.startRendering();
  return encodeWav(rendered.getChannelData(0), WAV_RATE);
}

/** Float samples in [-1, 1] as a 16-bit PCM mono WAV Blob. */
export function encodeWav(samples, rate) {
  const bytes = samples.length * 2;
  const buf = new ArrayBuffer(44 + bytes);
  const v = new DataView(buf);
  const text = (offset, s) => {
    for (let i = 0; i < s.length; i += 1) v.setUint8(offset + i, s.charCodeAt(i));
  };
  text(0, "RIFF");
  v.setUint32(4, 36 + bytes, true);
  text(8, "WAVE");
  text(12, "fmt ");
  v.setUint32(16, 16, true); // size of the fmt chunk
  v.setUint16(20, 1, true); // PCM
  v.setUint16(22, 1, true); // mono
  v.setUint32(24, rate, true);
  v.setUint32(28, rate * 2, true); // bytes per second
  v.setUint16(32, 2, true); // bytes per frame
  v.setUint16(34, 16, true); // bits per sample
  text(36, "data");
  v.setUint32(40, bytes, true);
  for (let i = 0; i < samples.length; i += 1) {
    const s = Math.max(-1, Math.min(1, samples[i]));
    v.setInt16(44 + i * 2, s < 0 ? s * 0x8000 : s * 0x7fff, true);
  }
  return new Blob([buf], { type: "audio/wav" });
}

/** Records from the microphone until `stop()` is called; answers the recording as a Blob. */
export async function startRecording() {
  const stream = await navigator.mediaDevices.getUserMedia({ audio: true });
  const recorder = new MediaRecorder(stream);
  const chunks = [];
  recorder.addEventListener("dataavailable", (e) => {
    if (e.data.size) chunks.push(e.data);
  });
  const done = new Promise((resolve) => {
    recorder.addEventListener("stop", () => {
      stream.getTracks().forEach((t) => t.stop());
      resolve(new Blob(chunks, { type: recorder.mimeType || "audio/webm" }));
    });
  });
  recorder.start();
  return {
    stop() {
      if (recorder.state !== "inactive") recorder.stop();
      return done;
    },
  };
}
